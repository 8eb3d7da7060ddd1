/* SPDX-License-Identifier: MIT */
/*
 * memory.h - per-rank memory footprint of a training strategy: static model
 * states (ZeRO, Rajbhandari et al. 2020 Sec 3.1 and 5: params, gradients,
 * optimizer states, each divided by the sharding degree where the strategy
 * shards it), dynamic terms (activations, FSDP unsharded units, DDP
 * buckets, temporary buffers) and the overheads a real GPU has (CUDA
 * context, NCCL buffers, the caching allocator's cache), each a separate
 * line. The peak and the verdict are the allocation timeline's replayed
 * through the caching allocator (memreplay.h): fits = peak reserved +
 * CUDA context + NCCL buffers <= the GPU's memory.
 */
#ifndef CS_MEMORY_H
#define CS_MEMORY_H

#include "coll/topology.h"
#include "train/layout.h"
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
    double temp_bytes;          /* at the start of backward: the loss's logits
                                 * buffers and autocast's cached weight copies */
    double step_temp_bytes;     /* during the optimizer step: the foreach
                                 * implementation's intermediates */
    double cuda_context_bytes;
    double nccl_bytes;
    double fragmentation_bytes; /* the allocator's cache at its peak: peak
                                 * reserved - peak allocated */
    double overhead_bytes;      /* context + NCCL + fragmentation */
    double peak_allocated_bytes; /* the replayed timeline's (memreplay.h) */
    double peak_reserved_bytes;
    double peak_bytes;          /* peak reserved + context + NCCL */
    double capacity_bytes;
    int fits;
    char peak_phase[64];        /* where the peak happens, e.g. "start of backward" */
} cs_memory;

/* Sharding degrees and process groups are the layout's (layout.h). */

/* NCCL buffer bytes per rank derived from the cluster and the layout's
 * groups (used when t->nccl_buffer_bytes < 0): see memory.c for the
 * formula. */
double cs_memory_nccl_buffer_bytes(const cs_training *t, const cs_layout *l);

/* Footprint per rank of t on layout l. model_states_only: params + grads
 * + optimizer only (the ZeRO paper's view; everything else 0 and peak =
 * model states). Returns 0, or CS_EINVAL with d filled (micro_batch < 1). */
int cs_memory_estimate_layout(const cs_model *m, const cs_training *t, const cs_layout *l,
                              int model_states_only, cs_memory *out, cs_diag *d);
/* The lines alone: the peak their sum with the flat fraction, no replay
 * (pipeline.c prices each stage this way, as a guess for searches). */
int cs_memory_lines_layout(const cs_model *m, const cs_training *t, const cs_layout *l,
                           cs_memory *out, cs_diag *d);
/* The same on topo, building the layout first (its errors first: no
 * parameters, a hybrid shard group that does not divide the ranks). */
int cs_memory_estimate(const cs_model *m, const cs_training *t, const cs_topology *topo,
                       int model_states_only, cs_memory *out, cs_diag *d);

/* The terms memory.c and the iteration graph (workload.c) share, so that
 * the estimate and the simulated timeline agree (memory.c cites each):
 * bytes per logit the loss holds from the head's forward (bf16 logits and
 * their fp32 copy) and the gradient its backward adds; autocast's cached
 * low-precision copies of the weights of `params` parameters; the
 * optimizer step's foreach intermediates over `params` parameters. */
double cs_memory_logit_forward_bytes(const cs_training *t);
double cs_memory_logit_backward_bytes(const cs_training *t);
double cs_memory_autocast_copy_bytes(const cs_training *t, double params);
double cs_memory_optimizer_temp_bytes(const cs_training *t, double params);

/* Largest micro-batch (>= 1) that fits by the lines' sum with the flat
 * fraction (cs_training_flat_fragmentation), or 0 if even 1 does not: a
 * guess, without the replay; cs_evaluate_max_micro_batch corrects it. */
int cs_memory_max_micro_batch(const cs_model *m, const cs_training *t, const cs_topology *topo);

#endif
