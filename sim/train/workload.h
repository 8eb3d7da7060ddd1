/* SPDX-License-Identifier: MIT */
/*
 * workload.h - model + strategy -> the task graph of one training
 * iteration (all micro-batches and the optimizer step) on one rank.
 *
 * Tasks are compute kernels (with FLOPs or bytes moved) and collectives
 * (op, size in nccl-tests convention, dtype, process group, algorithm and
 * protocol chosen by the core model), each on a stream, with explicit
 * dependencies and memory deltas. Streams follow PyTorch: one compute
 * stream; DDP's all-reduces on one communication stream; FSDP's
 * all-gathers on the "unshard" stream and reduce-scatters (and hybrid
 * all-reduces) on the "post-backward" stream (torch.distributed.fsdp
 * _runtime_utils); activation offloading's host copies on a stream of
 * their own (memopts.c). Each stream has a kind (compute, communication, copy)
 * that says how the executor (iteration.h) accounts for it. The graph is
 * built on a layout (layout.h: the mesh, its groups and their topologies)
 * and carries a copy of it. While the layout is data-parallel only, every
 * rank runs the same graph, so one rank's graph describes the iteration. What each strategy adds to the graph is its
 * row's hooks (strategy.h). The graph is what `collsim simulate
 * --emit-schedule` writes (out/schedule.h) and what collsim-hw replays.
 */
#ifndef CS_WORKLOAD_H
#define CS_WORKLOAD_H

#include <stddef.h>

#include "coll/collective.h"
#include "coll/topology.h"
#include "train/layout.h"
#include "train/memory.h"
#include "train/model.h"
#include "train/pricing.h"
#include "train/training.h"

typedef enum cs_task_kind { CS_TASK_COMPUTE, CS_TASK_MEMORY, CS_TASK_COLLECTIVE } cs_task_kind;

typedef enum cs_stream {
    CS_STREAM_COMPUTE,
    CS_STREAM_COMM,        /* DDP / ZeRO buckets, FSDP all-gathers */
    CS_STREAM_COMM_REDUCE, /* FSDP reduce-scatters and hybrid all-reduces */
    CS_STREAM_TP,          /* tensor parallelism's collectives (tensor.h): the tp
                            * group's own NCCL stream */
    CS_STREAM_OFFLOAD,     /* activation offloading's copies to and from the
                            * host (memopts.c: torchtune OffloadActivations'
                            * side stream s1) */
    CS_STREAM_COUNT
} cs_stream;

/* What a stream's tasks do, for the executor: compute kernels (slowed
 * while communication overlaps them), communication (exposed when no
 * compute runs), or copies on the DMA engines (neither: they run at their
 * own rate and show as copies only while nothing else runs; the offload
 * stream's host copies). */
typedef enum cs_stream_kind {
    CS_STREAM_KIND_COMPUTE,
    CS_STREAM_KIND_COMM,
    CS_STREAM_KIND_COPY,
    CS_STREAM_KIND_COUNT
} cs_stream_kind;

typedef struct cs_task {
    int id;
    cs_task_kind kind;
    cs_stream stream;
    char name[48];
    int micro;            /* micro-batch index, -1 for the optimizer phase */
    int layer;            /* unit / layer index, -1 if none */
    /* compute: FLOPs (GEMM-bound); memory: bytes moved (HBM-bound) */
    double flops;
    double mem_bytes;
    /* collective */
    cs_op op;
    double size_bytes;    /* nccl-tests convention */
    cs_dtype dtype;
    cs_group group;       /* an index into the layout's groups */
    cs_algo_id algo;
    cs_proto proto;
    double wire_bytes;    /* bytes this rank sends (busbw convention) */
    /* back-to-back runs of the same work this one task stands for (a
     * whole number >= 1): DDP's and ZeRO's buckets of equal size, full
     * once the same gradients are ready, are one task with a count, so the
     * graph's size does not grow with the parameters. duration_s,
     * wire_bytes, flops and mem_bytes are of all the runs together;
     * size_bytes is one run's. cs_workload_append takes 0 as 1. */
    double count;
    /* predicted duration running alone (every run, see count), and the
     * part of it that re-runs the forward (activation checkpointing) */
    double duration_s;
    double recompute_s;
    /* the earliest start: when the CPU thread, running ahead of the GPU,
     * has issued the task (the CPU time of the hooks before it in program
     * order, cs__wb_host); 0 = at once */
    double issue_s;
    /* memory: allocated when the task starts, released (negative) or
     * allocated when it ends */
    double mem_at_start;
    double mem_at_end;
    /* dependencies: indices of earlier tasks; on_start[i] = 1 means "once
     * that task has started" (e.g. FSDP BACKWARD_PRE prefetch), else "once
     * it has finished". Tasks on one stream also run in id order. */
    int ndeps;
    int deps[4];
    char on_start[4];
} cs_task;

typedef struct cs_workload cs_workload;

/* The version of the schedule JSON the graph is written as
 * (out/schedule.h), which every reader of it checks (collsim-hw replay,
 * the --schedule of calibrate / compare). */
#define CS_WORKLOAD_SCHEDULE_VERSION 2

/* Builds the graph, pricing collectives with t->collective_engine
 * (analytic: the closed form; des: the closed form's choice of algo and
 * proto, timed by the discrete-event run on the group's topology).
 * Returns 0, or CS_EINVAL/CS_ENOTSUP with d filled (e.g. a GPU without
 * peak FLOPs for the compute dtype), or a failed DES run's code. Caller
 * frees. */
int cs_workload_build(const cs_model *m, const cs_training *t, const cs_topology *topo,
                      cs_workload **out, cs_diag *d);
/* The same, looking collectives up in (and adding them to) cache; cache
 * may be NULL (= cs_workload_build). */
int cs_workload_build_cached(const cs_model *m, const cs_training *t, const cs_topology *topo,
                             cs_pricing_cache *cache, cs_workload **out, cs_diag *d);
/* What a build may share or leave out. */
typedef struct cs_workload_opts {
    cs_pricing_cache *cache; /* as for cs_workload_build_cached; NULL: none */
    /* tasks get empty names: for callers that read no name (sweeps; a
     * sweep point's names were about a sixth of its time). Traces,
     * schedules and the iteration's peak_task need names. */
    int unnamed;
    /* the memory estimate of the same configuration on the same layout
     * (cs_memory_estimate_layout, not model_states_only), copied as the
     * graph's static footprint; NULL: the build estimates it */
    const cs_memory *memory;
    /* the longest run of equal buckets kept as separate tasks (wbuild.h
     * CS_WB_RUN_MAX when 0): tests compare a graph with its runs folded
     * into counted tasks against one without */
    double bucket_run_max;
} cs_workload_opts;
int cs_workload_build_opts(const cs_model *m, const cs_training *t, const cs_topology *topo,
                           const cs_workload_opts *o, cs_workload **out, cs_diag *d);
/* The same on a layout already built (cs_layout_build of m, t and the
 * topology): the way evaluate.c builds, once per configuration. */
int cs_workload_build_layout(const cs_model *m, const cs_training *t, const cs_layout *l,
                             const cs_workload_opts *o, cs_workload **out, cs_diag *d);
void cs_workload_free(cs_workload *w);

/* A graph written by hand (tests of the executor, replays): no tasks, no
 * static memory, no tokens, the given peak FLOP/s. Caller frees. */
cs_workload *cs_workload_new(double peak_flops);
/* Appends a copy of t with id = its index (its dependencies must name
 * earlier tasks); returns the id. */
int cs_workload_append(cs_workload *w, const cs_task *t);

size_t cs_workload_count(const cs_workload *w);
const cs_task *cs_workload_task(const cs_workload *w, size_t i);
/* Ranks in each group (0 in a hand-written graph), and the layout the
 * graph was built on (a hand-written graph's: all zero, no mesh). */
int cs_workload_group_ranks(const cs_workload *w, cs_group g);
const cs_layout *cs_workload_layout(const cs_workload *w);
/* Tokens processed per iteration by all ranks, and model FLOPs per rank
 * per iteration (no recompute: the MFU numerator). */
double cs_workload_tokens(const cs_workload *w);
double cs_workload_model_flops_per_rank(const cs_workload *w);
double cs_workload_peak_flops(const cs_workload *w);
/* Hardware FLOPs per rank per iteration: model FLOPs + what activation
 * checkpointing recomputes, in the same convention (the HFU numerator). */
double cs_workload_hardware_flops_per_rank(const cs_workload *w);
/* Executed / (peak x time) over the compute tasks (the compute model's
 * kernels; 1 for a hand-written graph). */
double cs_workload_compute_efficiency(const cs_workload *w);

/* The share of the GPU's SMs one running collective takes from compute:
 * NCCL launches one CTA per channel (src/enqueue.cc ncclLaunchKernel:
 * grid = {nChannels}), so channels / SMs (0 without SMs). */
double cs_workload_comm_sm_share(const cs_workload *w);
/* The overlap slowdown in effect when t runs w: t's comm_compute_slowdown
 * if set, else that of the cluster w was built on
 * (cs_training_comm_compute_slowdown), < 0 when neither is set. */
double cs_workload_comm_compute_slowdown(const cs_workload *w, const cs_training *t);
/* 1: a process group runs its collectives one at a time in issue (task
 * id) order. ProcessGroupNCCL::collective issues every asynchronous
 * collective of a group on the group's one internal NCCL stream per
 * device (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp: ncclStream =
 * ncclStreams_.at(key)), which is how FSDP1 and DDP run; FSDP2 issues
 * synchronous collectives on its own all-gather and reduce-scatter
 * streams, so its gathers and reductions may overlap (0). Hand-written
 * graphs: 0. */
int cs_workload_serial_groups(const cs_workload *w);
void cs_workload_set_serial_groups(cs_workload *w, int serial);
/* Sets it on a hand-written graph (cs_workload_new: 0). */
void cs_workload_set_comm_sm_share(cs_workload *w, double share);
/* The static footprint lines the timeline starts from. */
const cs_memory *cs_workload_memory(const cs_workload *w);

const char *cs_stream_name(cs_stream s);
cs_stream_kind cs_stream_kind_of(cs_stream s);

#endif
