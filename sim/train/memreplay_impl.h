/* SPDX-License-Identifier: MIT */
/*
 * memreplay_impl.h - internal to the allocation replay (memreplay.h): the
 * replay's recorder, what it derives once, and the ids of what is live,
 * shared by its two files.
 *   memreplay_block.c  one transformer block's tensors: the op table and
 *                      the parameter matrices, what each checkpoint policy
 *                      keeps and at what size, a block's forward and
 *                      backward allocations
 *   memreplay.c        the iteration around the blocks: model states, FSDP's
 *                      gathers and reductions, the loss, gradients, the
 *                      optimizer, the driver and the peak it reports
 * Invariants: every allocation goes through cs__mr_take, which records
 * where reserved bytes peaked; an id is -1 when nothing is held, and
 * cs__mr_give leaves it -1.
 */
#ifndef CS_MEMREPLAY_IMPL_H
#define CS_MEMREPLAY_IMPL_H

#include <stddef.h>

#include "train/allocator.h"
#include "train/memory.h"
#include "train/model.h"
#include "train/training.h"

/* The streams torch allocates on (blocks are cached per stream): compute,
 * FSDP's all-gather stream, its reduce-scatter stream. */
enum { CS__MR_COMPUTE, CS__MR_GATHER, CS__MR_REDUCE };

/* Rows of memreplay_block.c's op table and parameter-matrix table (each
 * checked against its table there). */
#define CS__MR_NOPS 15
#define CS__MR_NMATS 3

/* The replay's recorder: the allocator, and where it is (the phase and
 * layer a peak is reported at). */
typedef struct cs__mr_rec {
    cs_allocator *a;
    const char *phase;
    int layer;
    double peak_res;
    const char *peak_phase;
    int peak_layer;
} cs__mr_rec;

/* Everything the replay derives once. */
typedef struct cs__mr_plan {
    const cs_model *full, *rank;
    const cs_training *t;
    const cs_memory *mem;
    int L, gathers, fsdp1, reshard, unit_layers, units, opt_states;
    size_t nparams;            /* parameter tensors of the blocks (the root's is one more) */
    double w[CS__MR_NOPS];     /* per-token width of each op's output (0: not in this block) */
    double wsaved, wop, wc;    /* widths saved without checkpointing / by the per-op
                                * policy / by Inductor's partition */
    double running;            /* checkpoint.c's running bytes of a block */
    double share;              /* one block's share of the rank's states */
    double param_layer, grad_layer, opt_layer, mat[CS__MR_NMATS], matsum;
    double unsharded_unit, shard_unit, reduce_unit, root_share;
    double logits, cast_layer;
    double sk[2];              /* kept_scale of a block that does not / does recompute */
    int mode[2];
} cs__mr_plan;

/* The state of one replay: the ids of what is live. */
typedef struct cs__mr_live {
    int *kept;     /* L x CS__MR_NOPS saved tensors of each block */
    int *params;   /* L x CS__MR_NMATS (FSDP1: units, one each) */
    int *grads;    /* L x CS__MR_NMATS, or units for FSDP */
    int *opt;      /* L x CS__MR_NMATS x opt_states */
    int *gathered; /* per unit: its unsharded parameters (FSDP2: compute stream) */
    int *cast;     /* per layer: autocast's weight copy */
    int root, root_grad, fsdp1_pending, carry, buckets[64], nbuckets, copy;
    int loss[3];
} cs__mr_live;

/* The recorder (memreplay.c): allocate bytes on stream (the id, or -1
 * for bytes <= 0), noting the phase where reserved bytes peak; release
 * *id if held and set it to -1. */
int cs__mr_take(cs__mr_rec *r, double bytes, int stream);
void cs__mr_give(cs__mr_rec *r, int *id);

/* The block's widths (memreplay_block.c): p->w, wsaved, wop, wc, mat and
 * matsum from p->rank. Call on a zeroed plan before cs__mr_plan_blocks. */
void cs__mr_plan_ops(cs__mr_plan *p);

/* The two kinds of block (recomputing or not): p->mode and p->sk, once
 * per replay, after the rest of the plan. */
void cs__mr_plan_blocks(cs__mr_plan *p);

/* Block `layer`'s forward and backward allocations; the backward hands
 * the gradient of the block's input on in v->carry. */
void cs__mr_forward_block(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v, int layer);
void cs__mr_backward_block(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v, int layer);

#endif
