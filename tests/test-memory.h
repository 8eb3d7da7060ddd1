/* SPDX-License-Identifier: MIT */
/*
 * test-memory.h - what the two halves of the memory suite
 * (test-memory.c, test-memory-zero.c) share: a bare parameter count as a
 * model, the estimate of a case (a failing estimate fails the test), and
 * a strategy's default training settings.
 */
#ifndef CS_TEST_MEMORY_H
#define CS_TEST_MEMORY_H

#include <stdio.h>
#include <string.h>

#include "coll/topology.h"
#include "train/memory.h"
#include "train/model.h"
#include "train/strategy.h"
#include "train/training.h"
#include "testutil.h"


/* A bare parameter count: all the model-states view reads. */
static inline cs_model bare_model(double psi)
{
    cs_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "bare");
    m.params = psi;
    return m;
}

static inline cs_memory estimate(const cs_model *m, const cs_training *t, const cs_topology *topo,
                          int states_only)
{
    cs_memory mem;
    cs_diag d;
    int rc = cs_memory_estimate(m, t, topo, states_only, &mem, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    return mem;
}

static inline cs_training training(cs_strategy s)
{
    cs_training t;
    cs_training_defaults(&t, s);
    return t;
}

/* ZeRO's mixed precision (Rajbhandari et al. Sec 3.1: 16-bit parameters
 * and gradients, an fp32 master copy in the optimizer: DeepSpeed's), for
 * any strategy: what fsdp_param_dtype computes. DDP's own default is amp
 * (fp32 parameters and gradients, no master copy). */
static inline cs_training zero_training(cs_strategy s)
{
    cs_training t = training(s);
    t.mixed_precision = CS_MP_FSDP_PARAM_DTYPE;
    t.grad_reduce_dtype = CS_DTYPE_BF16;
    cs_training_resolve_precision(&t);
    return t;
}

#endif
