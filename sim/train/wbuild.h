/* SPDX-License-Identifier: MIT */
/*
 * wbuild.h - internal to the train wing: the iteration graph (its
 * fields: workload.c owns the graph and its build, wbuild.c the calls
 * that add tasks), the graph while workload.c builds it, and the calls a
 * strategy's hooks (strategy.h) make to add their tasks. The build owns every array here; hooks read the
 * fields and append tasks through the cs__wb_* calls, in the order the
 * tasks are to be numbered (task ids are the graph's order, and streams
 * run their tasks in id order).
 */
#ifndef CS_WBUILD_H
#define CS_WBUILD_H

#include "train/compute.h"
#include "train/memory.h"
#include "train/pricing.h"
#include "train/strategy.h"
#include "train/workload.h"

/* Collective choices already made in this build: the per-unit collectives
 * of a model repeat a few (op, size, group) triples, and choosing one is
 * the costliest step of a build (every algorithm x protocol priced). The
 * choice is a pure function of the triple, so reusing it changes nothing. */
#define CHOICE_CACHE 16
typedef struct choice {
    cs_op op;
    cs_group group;
    double size_bytes;
    cs_algo_id algo;
    cs_proto proto;
    double duration_s;
} choice;

struct cs_workload {
    cs_task *tasks;
    size_t n, cap;
    int unnamed;      /* cs_workload_opts.unnamed: names left empty */
    cs_layout layout; /* the groups' sizes and topologies (a copy) */
    cs_memory mem;
    double tokens;
    double model_flops;
    double hw_flops;  /* model FLOPs + what checkpointing recomputes */
    double peak_flops;
    double eff;       /* < 0: from the tasks, when asked */
    cs_compute comp;  /* the priced layer and head */
    double sm_share;  /* cs_workload_comm_sm_share */
    double cluster_slowdown; /* the cluster's gpu.compute.comm_compute_slowdown (< 0: unset) */
    int serial_groups; /* cs_workload_serial_groups */
    const cs_cluster *cluster;
    choice cache[CHOICE_CACHE];
    int ncache, next_slot;
    /* during the build only */
    cs_engine_kind engine;
    cs_pricing_cache *xc;    /* NULL: none */
    int xslot[CS_GROUP_COUNT];
    int err;                 /* first failed collective's code, 0 none */
    double host_s;           /* the CPU thread's clock: issue_s of new tasks */
    double host_Bps;         /* the GPU's host link (activation offloading), 0: unused */
    cs_diag *d;
};

/* Appends a task named "<a>[ <b>][ <num>]" (num >= 0; unnamed builds
 * leave it empty) to w, issued at the CPU thread's clock; returns it. */
cs_task *cs__wb_add(cs_workload *w, cs_task_kind k, cs_stream s, int micro, int layer,
                    const char *a, const char *b, int num);
/* A compute task running the passes [p0, p1] of the compute model, named
 * "<what> <l>"; returns its id. */
int cs__wb_compute(cs_workload *w, int micro, int layer, cs_kpass p0, cs_kpass p1,
                   const char *what, int l);
/* Under amp, autocast's weight casts before a forward of `params`
 * parameters: a memory-bound pass on the compute stream whose copies stay
 * cached until the unit's backward ends. */
void cs__wb_autocast_cast(cs_wbuild *b, int layer, double params);

struct cs_wbuild {
    cs_workload *w;
    const cs_model *m;        /* as one tensor-parallel rank holds it
                               * (cs_tensor_rank_model): the model itself at T = 1 */
    const cs_training *t;
    const cs_layout *layout;  /* the graph's (groups, degrees, parameters per rank) */
    const cs_topology *topo;  /* the world's */
    const cs_strategy_row *row;
    int layers;               /* L */
    int micro;                /* the micro-batch being built; -1 after the step */
    int last_micro;           /* 1 in the last micro-batch (DDP communicates then) */
    cs_group shard;           /* the group of gathers and gradient reductions */
    int shard_ranks, replica_ranks; /* ranks of the shard and replica groups */
    int reshard;              /* cs_strategy_reshard_after_forward */
    int limit;                /* all-gathers in flight (the FSDP rate limiter) */
    double run_max;           /* runs of more equal buckets are one task (CS_WB_RUN_MAX) */
    double param_bytes[2];    /* [0] the root unit, [1] a layer unit, in param dtype */
    double grad_bytes[2];     /* the same in the gradients' wire dtype */
    double grad_size;         /* bytes of that dtype */
    /* the current micro-batch's tasks */
    int *fwd, *bwd;           /* each layer's forward / backward compute */
    int *d2h;                 /* activation offloading: each layer's copy to the host */
    double host_Bps;          /* its rate (memopts.h) */
    int root_step;            /* optimizer_in_backward: the root's step, the last */
    int tp_last;              /* the last TP collective, which the next compute
                               * task waits for (tensor.h); -1 */
    int root_task;            /* for a hook's own use (FSDP: the root's gather); -1 */
    int gather_ahead;         /* FSDP: the next unit's backward gather, built before this
                               * unit's reduce (its issue order): what it makes ready; -1 */
    int head_bwd;             /* the head's backward */
    double head_params;       /* an untied head's weight (its gradient is ready
                               * after head_bwd: first in ready_*), else 0 */
    /* gradients as backward completes them, in order (an untied head's,
     * layers L-1..0, then the rest of the root unit: embeddings, and a tied
     * head, complete with layer 0's backward): bytes (in grad_bytes' dtype)
     * and the task that completes them */
    int nready;
    double *ready_bytes;
    int *ready_task;
    int grads_done;           /* the task after which layer 0's (and the root's)
                               * gradients are complete: bwd[0] unless a hook
                               * works on them after it */
    /* work and memory, computed once per build */
    double act_full; /* a layer's activations while it runs (kept: checkpoint.h, per layer) */
    double logits;            /* logit elements (micro-batch tokens x vocab) */
    cs_model rank_model;      /* what m points to when T > 1 */
    const cs_model *whole;    /* the model itself (checkpoint.h's per-layer bytes) */
};

/* The layer's forward compute (activations kept: mem_at_start); returns
 * its id, also stored in b->fwd[layer]. */
int cs__wb_forward(cs_wbuild *b, int layer);
/* The layer's backward compute (+ recompute; the recomputed activations
 * live while it runs, the layer's activations are freed at its end);
 * records its gradients as ready; returns its id, also in b->bwd[layer]. */
int cs__wb_backward(cs_wbuild *b, int layer);
/* A memory-bound task on stream s moving `bytes` (read + written), priced
 * at the GPU's streaming efficiency, named "<what> <layer>"; returns its
 * id. */
int cs__wb_memory(cs_wbuild *b, cs_stream s, int layer, double bytes, const char *what);
/* A collective of `size` bytes (nccl-tests convention) on group g, named
 * "<op> <what>", priced by the build's engine; returns its id. */
int cs__wb_collective(cs_wbuild *b, cs_stream s, int micro, int layer, cs_op op, double size,
                      cs_dtype dt, cs_group g, const char *what);
/* Task `id` (just added, count 1) stands for `count` back-to-back runs
 * of itself (cs_task.count): its duration, wire bytes and work scale. */
void cs__wb_repeat(cs_wbuild *b, int id, double count);
/* The longest run of equal buckets (same size, ready after the same
 * task) a strategy adds as separate tasks, as torch issues them (one
 * slice each in a trace, one NCCL call each in a replay); a longer run is
 * one task with a count (cs__wb_repeat), which bounds the graph at
 * CS_WB_RUN_MAX + 2 bucket tasks per layer whatever the parameter count. */
#define CS_WB_RUN_MAX 64
/* How many whole pieces of `piece` bytes fit in `bytes`: floor(bytes /
 * piece), corrected so that it equals the count a loop subtracting piece
 * from bytes one at a time would reach (wherever that loop's differences
 * are exact: whole numbers below 2^53), so a run of equal buckets made in
 * one step cuts the bytes as the loop did. */
double cs__wb_whole(double bytes, double piece);
/* "<a> <first>-<last>" into dst (a run of buckets: "bucket 3-40"), or
 * cs__wb_name's "<a> <first>" when first == last; "" when unnamed. */
void cs__wb_name_range(const cs_wbuild *b, char *dst, size_t len, const char *a, double first,
                       double last);
/* The CPU thread spends `seconds` (hooks) before issuing the tasks added
 * after this call: their issue_s grows by it. */
void cs__wb_host(cs_wbuild *b, double seconds);
/* The last task added on stream s, or -1. */
int cs__wb_last(const cs_wbuild *b, cs_stream s);
/* Task `id` of the build, to set its memory deltas. */
cs_task *cs__wb_task(cs_wbuild *b, int id);
/* Task `task` waits for `on` (an earlier task; -1: nothing) to end, or to
 * start when on_start. */
void cs__wb_dep(cs_wbuild *b, int task, int on, int on_start);
/* "<a> <num>" into dst (task names: "bucket 3"); "" when the build is
 * unnamed (cs_workload_opts). */
void cs__wb_name(const cs_wbuild *b, char *dst, size_t len, const char *a, int num);

/* Hooks one family lends another (strategy_ddp.c): DDP's bucketed
 * gradient reduction in the last micro-batch, and its bucket memory;
 * ZeroRedundancyOptimizer runs under DDP (strategy_zero.c). */
void cs__ddp_reduce_buckets(cs_wbuild *b);
void cs__ddp_backward_unit(cs_wbuild *b, int layer);
void cs__ddp_bucket_memory(const cs_model *m, const cs_training *t, const cs_layout *l,
                           cs_strategy_mem *out);

#endif
