/* SPDX-License-Identifier: MIT */
/*
 * checkpoint.h - activation checkpointing policies as the frameworks define
 * them: which transformer blocks re-run their forward in backward, what each
 * block holds from its forward to its backward, and what a recompute holds
 * while it runs (checkpoint.c cites each). The policy is
 * (cs_training.checkpointing, cs_training.selective_ac):
 *   none                      everything autograd saves is kept;
 *   full                      every block keeps its input, re-runs whole;
 *   selective, attention      Megatron's --recompute-granularity selective
 *                             (the unfused attention core; nothing with
 *                             fused attention);
 *   selective, op             torchtitan's per-op policy;
 *   selective, N >= 1         every N-th block fully checkpointed.
 */
#ifndef CS_CHECKPOINT_H
#define CS_CHECKPOINT_H

#include <stddef.h>

#include "train/model.h"
#include "train/training.h"

/* cs_training.selective_ac: CS_SAC_ATTENTION (0, the default), CS_SAC_OP,
 * or N >= 1 (every N-th block). */
#define CS_SAC_ATTENTION 0
#define CS_SAC_OP (-1)
#define CS_SAC_MAX_EVERY 1000000

/* "attention", "op" or a decimal N in 1..CS_SAC_MAX_EVERY into *out;
 * 0, or -1 for anything else. */
int cs_checkpoint_parse_selective(const char *s, int *out);
/* The name of a selective_ac value into buf ("attention", "op", "2"). */
const char *cs_checkpoint_selective_name(int sac, char *buf, size_t n);

/* Whether block `layer` (0-based) re-runs forward kernels in its backward. */
int cs_checkpoint_layer_recomputes(const cs_training *t, int layer);
/* Blocks of m that recompute. */
int cs_checkpoint_recomputing_layers(const cs_model *m, const cs_training *t);
/* Whether a recomputing block re-runs its whole forward (full, every N-th)
 * rather than some kernels (op, attention). */
int cs_checkpoint_recomputes_whole(const cs_training *t);
/* Bytes block `layer` holds from its forward to its backward, micro-batch
 * t->micro_batch (16-bit activations). */
double cs_checkpoint_kept_bytes(const cs_model *m, const cs_training *t, int layer);
/* Bytes a block holds while it runs (forward, or backward after its
 * recompute): what autograd saves without checkpointing. */
double cs_checkpoint_running_bytes(const cs_model *m, const cs_training *t);
/* Activation bytes at the start of backward's peak: every block's kept
 * bytes plus, while the last recomputing block is recomputed, its running
 * bytes (the analytic estimate of memory.c). */
double cs_checkpoint_peak_bytes(const cs_model *m, const cs_training *t);

#endif
