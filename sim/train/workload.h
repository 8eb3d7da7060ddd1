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
 * _runtime_utils). Every rank runs the same graph (data parallelism is
 * symmetric), so one rank's graph describes the iteration.
 * The graph is what `collsim simulate --emit-schedule` writes and what
 * collsim-hw replays.
 */
#ifndef CS_WORKLOAD_H
#define CS_WORKLOAD_H

#include <stddef.h>

#include "coll/collective.h"
#include "train/memory.h"
#include "train/model.h"
#include "base/buf.h"
#include "coll/topology.h"
#include "train/training.h"

typedef enum cs_task_kind { CS_TASK_COMPUTE, CS_TASK_MEMORY, CS_TASK_COLLECTIVE } cs_task_kind;

typedef enum cs_stream {
    CS_STREAM_COMPUTE,
    CS_STREAM_COMM,        /* DDP / ZeRO buckets, FSDP all-gathers */
    CS_STREAM_COMM_REDUCE, /* FSDP reduce-scatters and hybrid all-reduces */
    CS_STREAM_COUNT
} cs_stream;

/* Process groups a collective runs on. */
typedef enum cs_group { CS_GROUP_WORLD, CS_GROUP_SHARD, CS_GROUP_REPLICA, CS_GROUP_COUNT } cs_group;

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
    cs_group group;
    cs_algo_id algo;
    cs_proto proto;
    double wire_bytes;    /* bytes this rank sends (busbw convention) */
    /* predicted duration running alone */
    double duration_s;
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

/* Collective prices shared across builds (a sweep's points): keyed by the
 * process group's topology (compared byte for byte), op, engine and size;
 * each entry holds the chosen (algo, proto) and the duration. Entries are
 * pure functions of their keys, so a build gives the same graph with or
 * without a cache. Meant for DES collectives (a run costs micro- to
 * milliseconds); unbounded: one entry (40 bytes) per distinct collective
 * and one topology copy per distinct group. Not thread-safe. Caller frees
 * with cs_workload_cache_free. */
typedef struct cs_workload_cache cs_workload_cache;
cs_workload_cache *cs_workload_cache_new(void);
void cs_workload_cache_free(cs_workload_cache *c);
/* Distinct collectives held, and lookups answered / not answered. */
void cs_workload_cache_stats(const cs_workload_cache *c, size_t *entries,
                             unsigned long long *hits, unsigned long long *misses);

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
                             cs_workload_cache *cache, cs_workload **out, cs_diag *d);
void cs_workload_free(cs_workload *w);

size_t cs_workload_count(const cs_workload *w);
const cs_task *cs_workload_task(const cs_workload *w, size_t i);
/* Ranks in each group, and the group's topology. */
int cs_workload_group_ranks(const cs_workload *w, cs_group g);
/* Static per-rank bytes under the timeline (model states + overheads). */
double cs_workload_static_bytes(const cs_workload *w);
/* Tokens processed per iteration by all ranks, and model FLOPs per rank
 * per iteration (no recompute: the MFU numerator). */
double cs_workload_tokens(const cs_workload *w);
double cs_workload_model_flops_per_rank(const cs_workload *w);
double cs_workload_peak_flops(const cs_workload *w);

/* Writes the graph as JSON (format documented in docs of the CLI). */
void cs_workload_write_schedule(const cs_workload *w, cs_buf *b);
/* The static footprint lines the timeline starts from. */
const cs_memory *cs_workload_memory(const cs_workload *w);

const char *cs_stream_name(cs_stream s);
const char *cs_group_name(cs_group g);

#endif
