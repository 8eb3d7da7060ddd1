/* SPDX-License-Identifier: MIT */
/*
 * compute_rows.c - the table of the kernels one transformer layer runs and
 * the shape its rows read: which kernels a model and its training settings
 * have, each GEMM's dimensions and each memory-bound kernel's traffic per
 * token, on one tensor-parallel rank (compute_impl.h; compute.c prices them).
 *
 * Rows. One row per forward kernel of a pre-norm decoder layer in the
 * order PyTorch runs it (norm, QKV projection, rotary, attention core,
 * output projection, dropout, residual add, norm, MLP up, activation, MLP
 * down, dropout, residual add); a row exists only for the shapes that have
 * it (rotary without learned positions, dropout when p > 0, the unfused
 * attention core without fused attention). Each row carries its backward;
 * compute.c's file header gives the rule of each class (a GEMM's dgrad and
 * wgrad, the fused attention kernel's FLOPs and traffic). The rows' own:
 *   unfused attention: the QK^T and AV batched GEMMs over b x heads
 *     (the full s x s square: the mask is applied after), softmax over the
 *     16-bit scores (Korthikanti et al. 2022 Sec 4.1's 2as^2b bytes);
 *   memory-bound kernels: bytes read + written per token as counted in
 *     each row (e.g. LayerNorm forward reads x and writes y: 2h elements,
 *     backward reads x and dy, writes dx, then reads both again for the
 *     weight and bias: 5h; GeLU forward 2f, backward
 *     3f; a residual add reads two and writes one).
 * Eager and compiled. PyTorch eager launches one kernel per op. GPT-style
 * models (biases) normalise with F.layer_norm, one fused kernel, and GeLU
 * is one kernel; the Llama family (no biases: RMSNorm, rotary, SwiGLU) is
 * written op by op in the stacks people run (transformers
 * modeling_llama.py LlamaRMSNorm.forward, rotate_half /
 * apply_rotary_pos_emb, LlamaMLP act_fn(gate_proj(x)) * up_proj(x); fms'
 * LayerNormParameterized and torchtitan's RMSNorm the same way), each op
 * a pass over HBM, so those rows count every op's reads and writes (the
 * row functions below). `compile: true` (torch.compile; Inductor fuses
 * pointwise ops and reductions into one generated kernel,
 * torch/_inductor/scheduler.py can_fuse) prices every such chain as one
 * kernel: the fused counts, and the residual add fused into the norm
 * after it. Compile's other effects (CUDA graphs, the logits' fp32 cast,
 * memory) are not modelled.
 *
 * A mixture of experts (model.h: E experts, top-k) runs its MLP as HF
 * transformers' MixtralSparseMoeBlock.forward does (modeling_mixtral.py):
 * the router GEMM, softmax, top-k and the one-hot expert mask, then for
 * each expert in turn: index the tokens routed to it,
 * run its MLP, multiply by the routing weights and index_add_ into the
 * output. Routing is assumed uniform: each expert gets T k / E of the T
 * tokens (cs_model_expert_tokens; all tokens routed, as in HF: no capacity
 * factor, no dropped tokens), so its GEMMs have M = T k / E and the tile
 * quantisation and ramp of the efficiency curve apply to that smaller
 * shape, once per expert (the kernel's `launches`). The router GEMM
 * (M = T, N = E, K = h) is a memory-bound row: with N = E a fraction of a
 * tile it is a skinny matrix-vector product that streams the T x h input
 * (forward reads h and writes E per token; dgrad reads E, writes h; wgrad
 * reads h and E), where the GEMM curve, whose ramp is a function of the
 * work, would price it as a small square GEMM (for Mixtral at T = 4096 on
 * H100 7x its memory time); its 2hE FLOPs per token, 0.3% of Mixtral's
 * layer, stay in the model's FLOPs (model.c) and out of the kernel
 * list's. The gather and the combine are memory-bound rows per routed
 * token: gather 2h forward
 * (read, write); its backward is autograd's index backward, a T x h zero
 * tensor per expert, an accumulating index_put_ (3h per routed token) and
 * the sum of the experts' T x h input gradients (3h per token per expert):
 * 3h + 4h E / k per routed token; the combine reads the expert output and
 * the weight and writes the product (2h), index_add_ reads it and updates
 * the output (3h): 5h forward, 6h backward (index_select of the output's
 * gradient, the product's two gradients). The router's elementwise
 * kernels (fp32 softmax, top-k, renormalisation, the int64 one-hot mask
 * and its per-expert scans, the zeroed output) are one memory-bound row.
 * Departures: HF's loop syncs with the host over the experts hit (not
 * priced); w1 and w3 are two GEMMs where the row runs one of N = 2f, as
 * for a dense SwiGLU MLP; imbalanced routing (the slowest expert sets the
 * pace only with expert parallelism; here each rank runs all E in turn,
 * so imbalance moves work between GEMMs of one stream) is not modelled.
 *
 * Recompute. Which share of each row torchtitan's per-op checkpointing
 * policy re-runs is the row's too (cs__compute_op_recompute_share); the
 * share under each policy is compute.c's.
 */
#include "train/compute_impl.h"

#include <math.h>
#include <string.h>

#include "train/strategy.h"
#include "train/tensor.h"

static int always(const cs__shape *s) { (void)s; return 1; }
static int has_rotary(const cs__shape *s) { return !s->learned; }
static int has_dropout(const cs__shape *s) { return s->dropout; }
static int fused_attention(const cs__shape *s) { return s->flash; }
static int unfused_attention(const cs__shape *s) { return !s->flash; }
static int unfused_dropout(const cs__shape *s) { return !s->flash && s->dropout; }
static int has_experts(const cs__shape *s) { return s->E > 1; }

static void dims_qkv(const cs__shape *s, double d[4]) { d[0] = s->T, d[1] = s->hq + 2 * s->kvw, d[2] = s->h, d[3] = 1; }
static void dims_proj(const cs__shape *s, double d[4]) { d[0] = s->T, d[1] = s->h, d[2] = s->hq, d[3] = 1; }
static void dims_up(const cs__shape *s, double d[4]) { d[0] = s->Te, d[1] = (s->gated ? 2 : 1) * s->f, d[2] = s->h, d[3] = 1; }
static void dims_down(const cs__shape *s, double d[4]) { d[0] = s->Te, d[1] = s->h, d[2] = s->f, d[3] = 1; }
static void dims_scores(const cs__shape *s, double d[4]) { d[0] = s->s, d[1] = s->s, d[2] = s->d, d[3] = s->b * s->heads; }
static void dims_context(const cs__shape *s, double d[4]) { d[0] = s->s, d[1] = s->d, d[2] = s->s, d[3] = s->b * s->heads; }

/* Elements per token. A fused kernel (LayerNorm's, a compiled chain)
 * reads its inputs and writes its outputs once; the eager RMSNorm, rotary
 * and SwiGLU of the Llama family run op by op (the file header):
 *   RMSNorm forward, 16-bit element units (an fp32 element is 2): cast
 *     to fp32 (1 + 2), pow (2 + 2), mean (2), times rsqrt (2 + 2), cast
 *     back (2 + 1), times the weight (1 + 1): 18; backward, autograd's
 *     kernels for the same ops: weight (1 + 1 and the reduction's 2), cast
 *     (1 + 2), the two product gradients (4, 4), mean's expand (2), pow's
 *     (2 + 2 + 2), the sum of x's two gradients (6), cast back (2 + 1): 32;
 *   rotary (rotate_half: slice, neg, cat; q cos + rotate_half(q) sin, the
 *     same for k), per rotated element: cos product (2), rotate_half (4),
 *     sin product (2), add (3): 11, backward the same kernels: 11;
 *   SwiGLU silu(gate) * up: silu (2f) and the product (3f): 5f forward;
 *     backward the product's two gradients (3f each) and silu's (3f): 9f.
 * Compiled, the residual add fuses into the norm that reads its sum (one
 * read of the sum saved: 2h for the add).
 * F.layer_norm's backward (the GPT family, eager) is two kernels: torch's
 * LayerNormBackwardKernelImplInternal (aten/src/ATen/native/cuda/
 * layer_norm_kernel.cu) runs layer_norm_grad_input_kernel (reads dY and X,
 * writes dX: 3h) and then, for the weight and bias, GammaBetaBackwardCUDA
 * Kernel, which reads dY and X again (2h): 5h. The compiled count stays 3h
 * (Inductor's kernels for it not read here). */
static double norm_fwd(const cs__shape *s) { return (s->eager && !s->biases ? 18 : 2) * s->h; }
static double norm_bwd(const cs__shape *s) { return (s->eager ? (s->biases ? 5 : 32) : 3) * s->h; }
double cs__compute_layernorm_bwd_elems(const cs__shape *s) { return s->eager && s->biases ? 5 : 3; }
static double rotary_elems(const cs__shape *s) { return (s->eager ? 11 : 2) * (s->hq + s->kvw); }
static double dropout_elems(const cs__shape *s) { return 2.5 * s->h; }
static double residual_fwd(const cs__shape *s) { return (s->eager ? 3 : 2) * s->h; }
static double residual_bwd(const cs__shape *s) { return 3 * s->h; }
static double act_fwd(const cs__shape *s) { return (s->gated ? (s->eager ? 5 : 3) : 2) * s->f; }
static double act_bwd(const cs__shape *s) { return (s->gated ? (s->eager ? 9 : 5) : 3) * s->f; }
/* softmax over b x heads x s x s scores: per token heads x s elements
 * read and written (forward), three tensors backward */
static double softmax_fwd(const cs__shape *s) { return 2 * s->heads * s->s; }
static double softmax_bwd(const cs__shape *s) { return 3 * s->heads * s->s; }
static double probs_dropout(const cs__shape *s) { return 2.5 * s->heads * s->s; }
/* The router GEMM as streamed: forward x in, logits out; backward dgrad
 * and wgrad (the file header). */
static double router_fwd(const cs__shape *s) { return s->h + s->E; }
static double router_bwd(const cs__shape *s) { return 2 * (s->h + s->E); }
/* The router's elementwise kernels per token, 16-bit elements: read the
 * logits (E), fp32 softmax (2E), top-k reads it and writes k fp32 weights
 * and k int64 indices (2E + 6k), renormalise and cast (5k), the int64
 * one-hot mask written and read by each expert's scan (8kE), the zeroed
 * output (h); backward: softmax's (read output and gradient, write the
 * logits' gradient: 5E) and top-k's scatter into E zeros (2E + 2k). */
static double topk_fwd(const cs__shape *s) { return 5 * s->E + 11 * s->topk + 8 * s->topk * s->E + s->h; }
static double topk_bwd(const cs__shape *s) { return 7 * s->E + 2 * s->topk; }
/* Per routed token (expert rows): see the file header. */
static double gather_fwd(const cs__shape *s) { return 2 * s->h; }
static double gather_bwd(const cs__shape *s) { return 3 * s->h + 4 * s->h * s->E / s->topk; }
static double combine_fwd(const cs__shape *s) { return 5 * s->h; }
static double combine_bwd(const cs__shape *s) { return 6 * s->h; }

#define GEMM(n, fn, sp) {.name = n, .dgrad = n ".dgrad", .wgrad = n ".wgrad", \
                         .bias_grad = n ".bias_grad", .cls = CS_KCLASS_GEMM, .present = always, \
                         .dims = fn, .split = sp}
#define MEM(n, pres, f, b, sp) {.name = n, .backward = n ".backward", .cls = CS_KCLASS_MEMORY, \
                                .present = pres, .fwd_elems = f, .bwd_elems = b, .split = sp}
/* The same, once per expert on its tokens. */
#define EXPERT_GEMM(n, fn, sp) {.name = n, .dgrad = n ".dgrad", .wgrad = n ".wgrad", \
                                .bias_grad = n ".bias_grad", .cls = CS_KCLASS_GEMM, \
                                .present = always, .dims = fn, .expert = 1, .split = sp}
#define EXPERT_MEM(n, pres, f, b, sp) {.name = n, .backward = n ".backward", \
                                       .cls = CS_KCLASS_MEMORY, .present = pres, .fwd_elems = f, \
                                       .bwd_elems = b, .expert = 1, .split = sp}

/* One layer's forward, in order. Batched attention GEMMs have no bias;
 * their "wgrad" is the second operand's gradient (dK from dS, dV from P). */
const cs__krow cs__compute_rows[] = {
    MEM("norm_1", always, norm_fwd, norm_bwd, CS__SPLIT_SEQ),
    GEMM("qkv", dims_qkv, CS__SPLIT_COLUMN),
    MEM("rotary", has_rotary, rotary_elems, rotary_elems, CS__SPLIT_HEADS),
    {.name = "attention", .backward = "attention.backward", .cls = CS_KCLASS_ATTENTION,
     .present = fused_attention, .core = 1, .split = CS__SPLIT_HEADS},
    {.name = "scores", .dgrad = "scores.dgrad", .wgrad = "scores.wgrad", .cls = CS_KCLASS_GEMM,
     .present = unfused_attention, .dims = dims_scores, .core = 1, .split = CS__SPLIT_HEADS},
    {.name = "softmax", .backward = "softmax.backward", .cls = CS_KCLASS_MEMORY,
     .present = unfused_attention, .fwd_elems = softmax_fwd, .bwd_elems = softmax_bwd, .core = 1,
     .split = CS__SPLIT_HEADS},
    {.name = "probs_dropout", .backward = "probs_dropout.backward", .cls = CS_KCLASS_MEMORY,
     .present = unfused_dropout, .fwd_elems = probs_dropout, .bwd_elems = probs_dropout,
     .core = 1, .split = CS__SPLIT_HEADS},
    {.name = "context", .dgrad = "context.dgrad", .wgrad = "context.wgrad", .cls = CS_KCLASS_GEMM,
     .present = unfused_attention, .dims = dims_context, .core = 1, .split = CS__SPLIT_HEADS},
    GEMM("attention_out", dims_proj, CS__SPLIT_ROW),
    MEM("dropout_1", has_dropout, dropout_elems, dropout_elems, CS__SPLIT_SEQ),
    MEM("residual_1", always, residual_fwd, residual_bwd, CS__SPLIT_SEQ),
    MEM("norm_2", always, norm_fwd, norm_bwd, CS__SPLIT_SEQ),
    MEM("router", has_experts, router_fwd, router_bwd, CS__SPLIT_SEQ),
    MEM("router_topk", has_experts, topk_fwd, topk_bwd, CS__SPLIT_SEQ),
    EXPERT_MEM("expert_gather", has_experts, gather_fwd, gather_bwd, CS__SPLIT_SEQ),
    EXPERT_GEMM("mlp_up", dims_up, CS__SPLIT_COLUMN),
    EXPERT_MEM("activation", always, act_fwd, act_bwd, CS__SPLIT_INNER),
    EXPERT_GEMM("mlp_down", dims_down, CS__SPLIT_ROW),
    EXPERT_MEM("expert_combine", has_experts, combine_fwd, combine_bwd, CS__SPLIT_SEQ),
    MEM("dropout_2", has_dropout, dropout_elems, dropout_elems, CS__SPLIT_SEQ),
    MEM("residual_2", always, residual_fwd, residual_bwd, CS__SPLIT_SEQ),
};
const size_t cs__compute_nrows = sizeof cs__compute_rows / sizeof *cs__compute_rows;

cs__shape cs__compute_shape(const cs_model *m, const cs_training *t)
{
    cs__shape s = {.b = t->micro_batch, .s = m->seq_len, .h = m->hidden, .heads = m->heads,
                   .f = m->ffn_hidden, .V = m->vocab, .e = cs_dtype_size(t->param_dtype),
                   .gated = m->gated_mlp, .biases = m->biases, .learned = m->learned_positions,
                   .flash = t->flash_attention, .dropout = m->dropout > 0,
                   .tied = m->tied_embeddings, .kernel = t->attention_kernel, .eager = !t->compile,
                   .loss = {cs_loss_kernel_of(t, 0), cs_loss_kernel_of(t, 1)},
                   .metrics = cs_loss_metrics_kernel(t)};
    s.T = s.b * s.s;
    s.E = m->experts > 1 ? m->experts : 1;
    s.topk = m->experts > 1 ? m->experts_per_token : 1;
    s.Te = cs_model_expert_tokens(m, s.T);
    s.he = s.h;
    s.d = s.h / s.heads;
    s.kvw = s.d * m->kv_heads;
    if (m->generic) {
        /* a generic layer is layer_params of matrices: the GPT-3 layer of
         * that size, 12 h^2 with f = 4h and 128-wide heads (model.h); the
         * embedding and the head keep the model's own width */
        s.h = sqrt(m->layer_params / 12.0);
        s.d = s.h < 128 ? s.h : 128;
        s.heads = s.kvw = 0;
        s.heads = s.h / s.d;
        s.kvw = s.h;
        s.f = 4 * s.h;
        s.gated = 0;
    }
    /* one tensor-parallel rank's share (tensor.h, the split column) */
    s.tp = cs_tensor_degree(t);
    s.hq = s.h / s.tp;
    s.Ts = cs_tensor_sequence_parallel(t) ? s.T / s.tp : s.T;
    /* gradient accumulation (compute.c's file header); the replicated norms' and
     * row-parallel biases' share of a layer is counted split too */
    if (cs_strategy_row_of(t->strategy)->accumulates_grads && t->grad_accum > 1)
        s.acc = 3 * cs_dtype_size(cs_training_stored_dtype(t));
    s.lp = m->layer_params / s.tp;
    s.ep = m->embedding_params / s.tp;
    if (s.tp > 1) {
        double kv = s.kvw / s.d; /* kv heads: one per rank when fewer than tp */
        s.kvw = kv < s.tp && !m->generic ? s.d : s.kvw / s.tp;
        s.heads /= s.tp;
        s.f /= s.tp;
        s.V /= s.tp;
    }
    return s;
}

/* The share of a row's forward that torchtitan's per-op policy re-runs
 * (checkpoint.c: saved are the outputs of wq, wv, w1, w2 (GeLU: fc1) and
 * of the attention kernels; recomputed are wk, wo, w3 (GeLU: fc2) and
 * every memory-bound kernel). The fused qkv row re-runs wk's columns, the
 * fused gated up row w3's half. */
double cs__compute_op_recompute_share(const cs__shape *s, const cs__krow *r)
{
    if (r->cls == CS_KCLASS_ATTENTION) return 0;
    if (r->cls == CS_KCLASS_MEMORY) return 1;
    if (!strcmp(r->name, "qkv")) return s->kvw / (s->h + 2 * s->kvw);
    if (!strcmp(r->name, "attention_out")) return 1;
    if (!strcmp(r->name, "mlp_up")) return s->gated ? 0.5 : 0;
    if (!strcmp(r->name, "mlp_down")) return s->gated ? 0 : 1;
    return 0; /* the unfused core's bmms: saved */
}
