/* SPDX-License-Identifier: MIT */
/*
 * evaluate.h - one training configuration evaluated: model + training
 * settings on a topology (a cluster's first ranks) -> the analytic memory
 * estimate and, when asked, the simulated iteration (graph built, run,
 * metrics). The one way `collsim memory`, `simulate`, `plan` and the
 * sweeps of `crossover` evaluate a configuration, so they agree by
 * construction.
 */
#ifndef CS_EVALUATE_H
#define CS_EVALUATE_H

#include "base/error.h"
#include "coll/topology.h"
#include "train/iteration.h"
#include "train/memory.h"
#include "train/model.h"
#include "train/pricing.h"
#include "train/training.h"
#include "train/workload.h"

/* Micro-steps built whole; more are extrapolated from runs of this many
 * and one fewer (evaluate.c). A caller asking for the graph gets it whole,
 * up to CS_EVALUATE_MICRO_WHOLE_MAX micro-steps (CS_EINVAL above). */
#define CS_EVALUATE_MICRO_BUILT 16
#define CS_EVALUATE_MICRO_WHOLE_MAX 4096

typedef struct cs_evaluate_opts {
    int simulate;               /* 0: the memory estimate only */
    int model_states_only;      /* the estimate's ZeRO view (memory.h) */
    cs_pricing_cache *cache;    /* collective prices shared across calls; NULL: none */
    int unnamed;                /* the graph's tasks unnamed (cs_workload_opts): the
                                   iteration's peak_task is then empty */
    /* not NULL: receives the simulated graph (caller frees with
     * cs_workload_free), e.g. to write its schedule or trace */
    cs_workload **workload;
    /* not NULL: receives each pipeline stage's memory (P > 1; pipeline.h) */
    struct cs_pp_memory *stages;
    /* not NULL with P > 1: receives the pipeline's timeline (its stages'
     * passes and transfers, for a trace or a schedule: a pipeline has no
     * task graph, so workload must then be NULL); caller frees it with
     * cs_pp_timeline_free */
    struct cs_pp_timeline *timeline;
} cs_evaluate_opts;

typedef struct cs_evaluation {
    cs_memory memory;           /* the analytic estimate's lines; peak_bytes, fits and
                                 * peak_phase are the allocator replay's unless
                                 * model_states_only */
    int simulated;              /* iteration holds a run */
    cs_iteration iteration;     /* simulated: the run, owned (cs_evaluate_free) */
    int fits;                   /* the replay's peak is within the GPU's memory
                                   (model_states_only: the estimate's verdict) */
    double estimate_peak_bytes; /* the closed form's own peak (memory.c) */
    const char *note;           /* cs_training_note, or NULL */
    /* the layout's tensor parallelism: the tp group's ranks (1: none), the
     * nodes it spans (> 1: priced on the network path, flagged in the
     * report), sequence parallelism and async TP in effect */
    int tp_ranks, tp_nodes, tp_sequence_parallel, tp_async;
} cs_evaluation;

/* Evaluates t on topo: the layout first (its errors first: no
 * parameters, a hybrid group that does not divide the ranks), then the
 * memory estimate (micro_batch < 1), then the graph build on that layout
 * and estimate, and the run. One memory peak per
 * configuration: the allocator replay's (memory.h, memreplay.h: it sees
 * which gathered units, buffers and temporaries overlap and what the
 * caching allocator reserves), reported by memory, simulate and plan
 * alike; without o->simulate nothing is run (the evaluation holds no
 * iteration). o may be NULL (memory only). Returns 0,
 * or the first failure's code with d filled; on failure nothing is left
 * to free. */
int cs_evaluate_config(const cs_model *m, const cs_training *t, const cs_topology *topo,
                       const cs_evaluate_opts *o, cs_evaluation *out, cs_diag *d);
void cs_evaluate_free(cs_evaluation *e);

/* Largest micro-batch (>= 1) whose replayed peak fits, or 0 if even 1
 * does not: the analytic guess (cs_memory_max_micro_batch) corrected
 * by replays (the peak grows with the micro-batch), a few in all. cache as in cs_evaluate_opts (NULL: none). */
int cs_evaluate_max_micro_batch(const cs_model *m, const cs_training *t, const cs_topology *topo,
                                cs_pricing_cache *cache);

#endif
