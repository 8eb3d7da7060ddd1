/* SPDX-License-Identifier: MIT */
/*
 * plan_space.h - the space `collsim plan` searches (study/plan.h) besides
 * the micro-batch: the parallel layouts (tensor-parallel degree x
 * pipeline-parallel degree x virtual stages x pipeline schedule, for each
 * data-parallel strategy), the activation-checkpointing policies (mode and
 * selective_ac), and each layout's memory floor: the bytes a rank holds
 * whatever the micro-batch, checkpointing or schedule, an exact lower
 * bound on the simulated peak, by which a layout is pruned before any
 * simulation. Nothing here simulates.
 */
#ifndef CS_PLAN_SPACE_H
#define CS_PLAN_SPACE_H

#include "base/error.h"
#include "coll/topology.h"
#include "train/model.h"
#include "train/training.h"

/* The most of each dimension one search lists (far above any cluster's
 * GPUs per node, any model's layers). */
#define CS_PLAN_MAX_DEGREES 32
#define CS_PLAN_MAX_PIPES 256
#define CS_PLAN_MAX_POLICIES 8

/* What the search varies besides the micro-batch; zero everywhere: the
 * defaults (everything searched). strategies: a bit per cs_strategy (0:
 * all). ckpts: a bit per cs_ckpt (0: the training's own, none, full, and
 * selective: cs_plan_space_policies). tp: the tensor-parallel degree,
 * pinned (> 0), or 0: searched over 1, 2, 4, ... up to the GPUs per node
 * (TP stays inside a node's NVLink domain, Megatron's and torchtitan's
 * placement), the degrees that divide the ranks and that the model allows
 * (cs_tensor_check: heads, MLP width). pp: the pipeline-parallel degree,
 * pinned (> 0), or 0: searched over 1, 2, 4, ... up to the layers, the
 * degrees that divide the ranks / tp. schedules: a bit per pipeline
 * schedule row (pipeline_sched.h; 0: all). sac_set: selective_ac pinned to
 * sac (else searched). The global batch is kept at every layout: each
 * runs global / (ranks / (tp x pp)) sequences per data-parallel rank (the
 * nearest whole count, noted and never recommended, where that is no
 * whole number). */
typedef struct cs_plan_space {
    unsigned strategies, ckpts;
    int tp, pp;
    unsigned schedules;
    int sac_set, sac;
} cs_plan_space;

/* A pipeline of one layout: V chunks per stage under schedule row
 * `schedule` (its index in pipeline_sched.h's table; -1 at P = 1). */
typedef struct cs_plan_pipe {
    int virtual_stages;
    int schedule;
} cs_plan_pipe;

/* An activation-checkpointing policy (checkpoint.h). */
typedef struct cs_plan_policy {
    cs_ckpt ckpt;
    int sac; /* under selective: CS_SAC_ATTENTION, CS_SAC_OP or every N-th block */
} cs_plan_policy;

/* The TP degrees sp asks for into tps, ascending; returns the count
 * (>= 1: T = 1 always applies, its errors are the configurations'). */
int cs_plan_space_tps(const cs_model *m, const cs_training *t, const cs_topology *topo,
                      const cs_plan_space *sp, int tps[CS_PLAN_MAX_DEGREES]);
/* The PP degrees at TP degree T into pps, ascending (1 first); returns
 * the count (>= 1). */
int cs_plan_space_pps(const cs_model *m, const cs_topology *topo, int T, const cs_plan_space *sp,
                      int pps[CS_PLAN_MAX_DEGREES]);
/* The pipelines at P stages into out, in schedule table order, V
 * ascending: P = 1: one (V 1, no schedule); else each schedule row sp
 * allows, V = 1 for a row that runs one chunk per stage, V = 2, 3, ...
 * where P x V divides the layers (Megatron asserts it of interleaving)
 * for an interleaved row. Returns the count (<= CS_PLAN_MAX_PIPES). */
int cs_plan_space_pipes(const cs_model *m, int P, const cs_plan_space *sp,
                        cs_plan_pipe out[CS_PLAN_MAX_PIPES]);
/* The checkpointing policies, by (roughly) increasing recomputation:
 * none; selective attention (Megatron's; only without fused attention:
 * with it, selective attention keeps what none keeps and only adds
 * recompute, so it never wins), selective op (torchtitan's per-op
 * policy) and selective every 2nd block (torchtitan's default
 * selective_ac_option "2"), or the pinned sac alone; full; and t's own
 * where not among them. ckpts as in cs_plan_space. Returns the count. */
int cs_plan_space_policies(const cs_training *t, const cs_plan_space *sp,
                           cs_plan_policy out[CS_PLAN_MAX_POLICIES]);

/* The layout of t (its strategy, tensor_parallel, pipeline_parallel,
 * virtual_stages) on topo: the largest over its pipeline stages of the
 * parameter and optimizer-state bytes a rank holds (memory.h's lines,
 * sharded as the layout shards them) into *floor_bytes, the GPU's
 * capacity into *capacity_bytes. Those bytes are resident from the first
 * kernel to the optimizer step at every micro-batch, checkpointing policy
 * and schedule, so no configuration of the layout peaks below them
 * (tests/test-plan.c checks it against simulated peaks): a floor above
 * the capacity prunes the layout unsimulated. Returns 0, or the layout's
 * error (CS_EINVAL, d filled). O(P + layout build). */
int cs_plan_memory_floor(const cs_model *m, const cs_training *t, const cs_topology *topo,
                         double *floor_bytes, double *capacity_bytes, cs_diag *d);

#endif
