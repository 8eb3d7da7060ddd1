/* SPDX-License-Identifier: MIT */
/*
 * checkpoint.c - activation checkpointing policies (checkpoint.h): which
 * blocks recompute, what each block keeps, what a recompute holds.
 *
 * Sources, per policy:
 *   full      torch.utils.checkpoint around each block (torchtitan
 *             torchtitan/distributed/activation_checkpoint.py FullAC;
 *             Composer's activation_checkpointing; Megatron
 *             --recompute-granularity full): the block keeps its input
 *             (Korthikanti et al. 2022 Table 2's 2sbh) and re-runs its
 *             forward at the start of its backward.
 *   attention Korthikanti et al. 2022 Sec 4.2 (Megatron's selective): the
 *             attention core's s x s tensors are dropped and recomputed;
 *             a fused kernel stores none, so nothing changes.
 *   N         torchtitan of 2024-03 (torchtrain/parallelisms/
 *             parallelize_llama.py checkpoint_wrapper, selective_ac_option
 *             a digit: a counter over the blocks, `_count % every_x_layer
 *             == 0` wraps the block in a full checkpoint, so blocks N, 2N,
 *             ... counted from 1); today's torchtitan keeps the same rule
 *             (apply_ac / _apply_layer_sac); Megatron's
 *             --recompute-method uniform --recompute-num-layers is the
 *             same memory for one layer per group.
 *   op        torchtitan's per-op policy (activation_checkpoint.py
 *             SelectiveAC._wrap_block, in 2024-03 parallelize_llama.py
 *             _custom_policy with no_recompute_list), run through
 *             torch.utils.checkpoint.create_selective_checkpoint_contexts:
 *             every block is checkpointed; the outputs of the ops in the
 *             save list (mm / linear, the SDPA flash / efficient kernels,
 *             reduce_scatter; today also get_default_op_list's
 *             compute_intensive_ops, which include bmm) are saved, except
 *             every second mm of the block (the counter `mm_count % 2 ==
 *             0` is recomputed; it restarts in each block); everything
 *             else (norms, rotary, activations, residual adds, dropout)
 *             is recomputed. A Llama block runs its mms as wq, wk, wv, wo,
 *             w1, w3, w2 (torchtitan models/llama model.py Attention and
 *             FeedForward.forward: w2(silu(w1(x)) * w3(x))), so wq, wv,
 *             w1 and w2 are saved, wk, wo and w3 recomputed; a GeLU MLP
 *             (fc1, fc2) saves fc1 and recomputes fc2. The flash kernel's
 *             outputs are saved (out and its fp32 logsumexp, s x heads per
 *             sequence; flash-attn's _flash_attn_forward returns both).
 *             With unfused attention the QK^T bmm's scores are saved.
 * The block input is an input of the checkpointed function and is held by
 * the checkpoint in every policy that checkpoints the block. While a block
 * recomputes, it holds what it would hold without checkpointing (its
 * running bytes); memory.c adds that on top of the kept bytes, the
 * convention of its full-recompute term (Korthikanti's 2sbh of the last
 * block counted twice, < 1% of a block).
 * Departures: mixture-of-experts blocks under op scale the MLP's saved
 * outputs by the experts per token and keep no router outputs (torchtitan
 * force-recomputes the router gate's mm); activations are 16-bit as
 * Korthikanti assumes (fp32 compute would double them).
 */
#include "train/checkpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/tensor.h"

int cs_checkpoint_parse_selective(const char *s, int *out)
{
    if (!s || !*s) return -1;
    if (!strcmp(s, "attention")) return *out = CS_SAC_ATTENTION, 0;
    if (!strcmp(s, "op")) return *out = CS_SAC_OP, 0;
    long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
        if (v > CS_SAC_MAX_EVERY) return -1;
    }
    if (v < 1) return -1;
    *out = (int)v;
    return 0;
}

const char *cs_checkpoint_selective_name(int sac, char *buf, size_t n)
{
    if (sac == CS_SAC_ATTENTION) snprintf(buf, n, "attention");
    else if (sac == CS_SAC_OP) snprintf(buf, n, "op");
    else snprintf(buf, n, "%d", sac);
    return buf;
}

static int every_n(const cs_training *t)
{
    return t->checkpointing == CS_CKPT_SELECTIVE && t->selective_ac >= 1 ? t->selective_ac : 0;
}

int cs_checkpoint_layer_recomputes(const cs_training *t, int layer)
{
    switch (t->checkpointing) {
    case CS_CKPT_NONE:
        return 0;
    case CS_CKPT_FULL:
        return 1;
    case CS_CKPT_SELECTIVE:
        if (t->selective_ac == CS_SAC_OP) return 1;
        if (t->selective_ac == CS_SAC_ATTENTION) return !t->flash_attention;
        return (layer + 1) % t->selective_ac == 0; /* torchtitan: _count % N == 0, from 1 */
    default:
        CS_PANIC("cs_checkpoint_layer_recomputes: bad checkpoint mode %d", (int)t->checkpointing);
    }
}

int cs_checkpoint_recomputing_layers(const cs_model *m, const cs_training *t)
{
    int n = every_n(t);
    if (n) return m->layers / n;
    return cs_checkpoint_layer_recomputes(t, 0) ? m->layers : 0;
}

int cs_checkpoint_recomputes_whole(const cs_training *t)
{
    return t->checkpointing == CS_CKPT_FULL || every_n(t) > 0;
}

double cs_checkpoint_running_bytes(const cs_model *m, const cs_training *t)
{
    return cs_tensor_activation_bytes_per_layer(m, t, t->micro_batch,
                                               cs_training_running_activations(t));
}

/* The per-op policy's saved bytes of one block (the file header). */
static double op_saved_bytes(const cs_model *m, const cs_training *t)
{
    double s = m->seq_len, b = t->micro_batch, h = m->hidden, f = m->ffn_hidden;
    double kvw = (double)m->hidden / m->heads * m->kv_heads;
    double topk = m->experts > 1 ? m->experts_per_token : 1;
    double mlp = m->gated_mlp ? 2 * f + 2 * h : 2 * f; /* w1 and w2 outputs; or fc1's */
    double per_token = 2 * h      /* the block's input, held by the checkpoint */
                       + 2 * h    /* wq's output */
                       + 2 * kvw  /* wv's output */
                       + 2 * h    /* the attention kernel's output */
                       + 4.0 * m->heads /* its fp32 logsumexp */
                       + topk * mlp;
    double bytes = s * b * per_token;
    if (!t->flash_attention) bytes += 2.0 * m->heads * s * s * b; /* the QK^T bmm's scores */
    return bytes;
}

double cs_checkpoint_kept_bytes(const cs_model *m, const cs_training *t, int layer)
{
    if (t->checkpointing == CS_CKPT_SELECTIVE && t->selective_ac == CS_SAC_OP)
        return op_saved_bytes(m, t);
    if (every_n(t))
        return cs_tensor_activation_bytes_per_layer(m, t, t->micro_batch,
            cs_checkpoint_layer_recomputes(t, layer) ? CS_CKPT_FULL
                                                     : cs_training_running_activations(t));
    return cs_tensor_activation_bytes_per_layer(m, t, t->micro_batch, cs_training_kept_activations(t));
}

double cs_checkpoint_peak_bytes(const cs_model *m, const cs_training *t)
{
    double kept = 0, extra = 0;
    int n = every_n(t);
    if (n) { /* two kinds of block */
        int ck = m->layers / n;
        kept = ck * cs_checkpoint_kept_bytes(m, t, n - 1) +
               (m->layers - ck) * cs_checkpoint_kept_bytes(m, t, 0); /* block 1 is kept unless n = 1 (then none is) */
    } else {
        kept = m->layers * cs_checkpoint_kept_bytes(m, t, 0);
    }
    if (cs_checkpoint_recomputes_whole(t) && cs_checkpoint_recomputing_layers(m, t) > 0)
        extra = cs_checkpoint_running_bytes(m, t);
    else if (t->checkpointing == CS_CKPT_SELECTIVE && t->selective_ac == CS_SAC_OP)
        extra = cs_checkpoint_running_bytes(m, t) - op_saved_bytes(m, t) +
                cs_tensor_activation_bytes_per_layer(m, t, t->micro_batch, CS_CKPT_FULL);
    return kept + extra;
}
