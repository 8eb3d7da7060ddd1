/* SPDX-License-Identifier: MIT */
/*
 * memory.h - per-rank memory footprint of a training strategy: static model
 * states (ZeRO, Rajbhandari et al. 2020 Sec 3.1 and 5: params, gradients,
 * optimizer states, each divided by the sharding degree where the strategy
 * shards it), dynamic terms (activations, FSDP unsharded units, DDP
 * buckets, temporary buffers) and the overheads a real GPU has (CUDA
 * context, NCCL buffers, allocator fragmentation), each a separate line.
 * The analytic peak here and the peak of the simulated memory timeline
 * (workload/iteration) use the same accounting and are tested to agree.
 */
#ifndef CS_MEMORY_H
#define CS_MEMORY_H

#include "coll/topology.h"
#include "train/model.h"
#include "train/training.h"

typedef struct cs_memory {
    double params_bytes;        /* resident parameter shard (+ unsharded if kept) */
    double grads_bytes;
    double optimizer_bytes;
    double model_states_bytes;  /* params + grads + optimizer */
    double activations_bytes;   /* kept for backward at the peak */
    double unsharded_bytes;     /* FSDP: gathered units resident at the peak */
    double buckets_bytes;       /* DDP / ZeRO gradient buckets in flight */
    double temp_bytes;          /* logits and other transient buffers */
    double cuda_context_bytes;
    double nccl_bytes;
    double fragmentation_bytes;
    double overhead_bytes;      /* context + NCCL + fragmentation */
    double peak_bytes;
    double capacity_bytes;
    int fits;
    char peak_phase[64];        /* where the peak happens, e.g. "start of backward" */
} cs_memory;

/* Sharding degrees and process groups are the strategy table's
 * (strategy.h: cs_strategy_degrees, cs_strategy_groups_of). */

/* NCCL buffer bytes per rank derived from the cluster (used when
 * t->nccl_buffer_bytes < 0): see memory.c for the formula. */
double cs_memory_nccl_buffer_bytes(const cs_training *t, const cs_topology *topo);

/* Footprint per rank. model_states_only: params + grads + optimizer only
 * (the ZeRO paper's view; everything else 0 and peak = model states).
 * Returns 0, or CS_EINVAL with d filled (no parameters, micro_batch < 1,
 * a hybrid shard group that does not divide the ranks). */
int cs_memory_estimate(const cs_model *m, const cs_training *t, const cs_topology *topo,
                       int model_states_only, cs_memory *out, cs_diag *d);

/* Largest micro-batch (>= 1) that fits, or 0 if even 1 does not. */
int cs_memory_max_micro_batch(const cs_model *m, const cs_training *t, const cs_topology *topo);

#endif
