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
 *   compile   torch.compile (Inductor) partitions each compiled block's
 *             joint graph with torch/_functorch/partitioners.py
 *             min_cut_rematerialization_partition (torch 2.3, PR #165's):
 *             ban_recomputation bans what is not in its recomputable ops
 *             (pointwise ops, reductions such as mean / var_mean, the dtype
 *             casts aten._to_copy / prims.convert_element_type, views) and
 *             the compute_intensive_ops (aten.mm, addmm, bmm, the SDPA
 *             flash / efficient kernels); random_ops (native_dropout,
 *             rand_like) are fusible but not recomputable. The min cut then
 *             saves, per block: its input (the RMSNorm / LayerNorm is
 *             recomputed from it, with its fp32 per-row rstd, and mean for
 *             LayerNorm: 8 bytes per token, left out), the rotary q and k
 *             and v (SDPA's inputs; rotary's fp32 complex product is
 *             recomputed from wq / wk's outputs only if those were saved:
 *             the cut takes the one 16-bit tensor), the attention output
 *             with its fp32 logsumexp, the residual stream after attention
 *             (the second norm is recomputed from it), the MLP's GEMM
 *             outputs w1 and w3 (fc1 for GeLU; silu, gelu and the gate
 *             product are pointwise, recomputed into w2's / fc2's
 *             backward), a 1-byte mask per residual dropout (the cut's
 *             smallest tensor downstream of rand_like), and with unfused
 *             attention the QK^T bmm's scores (softmax recomputed; a 1-byte
 *             mask if attention dropout). Eager, autograd also saves the
 *             fp32 norm intermediates (torchtitan RMSNorm: x.float() and
 *             the normalised x), silu's input and output, the gate
 *             product and rotary's fp32 copies: Korthikanti's figure. A
 *             block checkpointed whole is traced as a checkpoint region
 *             whose nodes must be recomputed (the partitioner's
 *             must_recompute): it keeps its input as eager does, and its
 *             recompute holds the compiled saved set. The per-op policy's
 *             tags are honoured the same way, so op saves what it saves
 *             eager.
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

/* What Inductor's partition saves of one block, unsplit (the file header);
 * scores: the unfused attention's s x s terms count (they are dropped by
 * Megatron's selective policy). */
static double compiled_whole_bytes(const cs_model *m, const cs_training *t, int scores)
{
    double s = m->seq_len, b = t->micro_batch, h = m->hidden, f = m->ffn_hidden;
    double kvw = (double)m->hidden / m->heads * m->kv_heads;
    double topk = m->experts > 1 ? m->experts_per_token : 1;
    double drop = m->dropout > 0;
    double per_token = 2 * h             /* the block's input */
                       + 2 * (h + kvw)   /* rotary q and k */
                       + 2 * kvw         /* v */
                       + 2 * h           /* the attention output */
                       + 4.0 * m->heads  /* its fp32 logsumexp */
                       + 2 * h           /* the residual stream after attention */
                       + topk * (m->gated_mlp ? 4 * f : 2 * f) /* w1, w3 / fc1 */
                       + 2 * h * drop;   /* two residual dropout masks */
    double bytes = s * b * per_token;
    if (!t->flash_attention && scores) bytes += (2.0 + drop) * m->heads * s * s * b;
    return bytes;
}

/* The compiled saved bytes under t's tensor parallelism: the unsplit
 * figure scaled as tensor.c splits the eager one. */
static double compiled_bytes(const cs_model *m, const cs_training *t, cs_ckpt mode)
{
    double eager = cs_model_activation_bytes_per_layer(m, t->micro_batch, mode);
    double split = cs_tensor_activation_bytes_per_layer(m, t, t->micro_batch, mode);
    double whole = compiled_whole_bytes(m, t, mode == CS_CKPT_NONE);
    return eager > 0 ? whole * split / eager : 0;
}

double cs_checkpoint_running_bytes(const cs_model *m, const cs_training *t)
{
    cs_ckpt mode = cs_training_running_activations(t);
    if (t->compile) return compiled_bytes(m, t, mode);
    return cs_tensor_activation_bytes_per_layer(m, t, t->micro_batch, mode);
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
    cs_ckpt mode = every_n(t) ? (cs_checkpoint_layer_recomputes(t, layer) ? CS_CKPT_FULL
                                                                         : cs_training_running_activations(t))
                              : cs_training_kept_activations(t);
    if (t->compile && mode != CS_CKPT_FULL) return compiled_bytes(m, t, mode);
    return cs_tensor_activation_bytes_per_layer(m, t, t->micro_batch, mode);
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
