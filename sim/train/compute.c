/* SPDX-License-Identifier: MIT */
/*
 * compute.c - the kernels of one transformer layer, the output head and
 * the loss, each priced from its shape as a roofline (compute.h).
 *
 * Kernels. One row per forward kernel of a pre-norm decoder layer in the
 * order PyTorch runs it (norm, QKV projection, rotary, attention core,
 * output projection, dropout, residual add, norm, MLP up, activation, MLP
 * down, dropout, residual add); a row exists only for the shapes that have
 * it (rotary without learned positions, dropout when p > 0, the unfused
 * attention core without fused attention). Each row carries its backward:
 *   GEMM Y[M,N] = X[M,K] W[K,N]: dgrad dX = dY W^T (M, K, N) and wgrad
 *     dW = X^T dY (K, N, M), each 2MNK FLOPs (the backward = 2 x forward
 *     rule of Narayanan et al. 2021 App. A, op by op); with biases the
 *     forward adds the bias in the GEMM epilogue (cuBLASLt) and the
 *     backward reduces dY over tokens (a memory-bound kernel reading dY);
 *   fused attention (FlashAttention-2, Dao 2023, arXiv:2307.08691 Sec 3):
 *     forward 4 s h FLOPs per token, halved by the causal mask (the kernel
 *     skips the masked blocks), backward 2.5 x forward (5 matmuls to the
 *     forward's 2, Sec 3.1.2), reading Q, K, V, O and writing O forward,
 *     reading those and dO, writing dQ, dK, dV backward;
 *   unfused attention: the QK^T and AV batched GEMMs over b x heads
 *     (the full s x s square: the mask is applied after), softmax over the
 *     16-bit scores (Korthikanti et al. 2022 Sec 4.1's 2as^2b bytes);
 *   memory-bound kernels: bytes read + written per token as counted in
 *     each row (e.g. LayerNorm forward reads x and writes y: 2h elements,
 *     backward reads x and dy, writes dx: 3h; GeLU forward 2f, backward
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
 * The head: final norm, the logits GEMM (M = tokens, N = vocab, K = h) and
 * cross-entropy, which PyTorch runs in fp32 under autocast (torch/csrc/
 * autograd ... autocast_mode.cpp lists cross_entropy among fp32 ops):
 * the 16-bit logits are cast to fp32, log_softmax writes fp32 and
 * nll_loss gathers; backward writes the fp32 gradient, log_softmax's
 * backward reads it and its output, and the cast back writes 16 bits
 * (loss_impl naive; fused and chunked run their own kernels: loss.c).
 * A trainer's train metrics (train_metrics passes, loss.h: Composer's
 * LanguageCrossEntropy and LanguagePerplexity) each run the naive
 * forward's kernels over the logits without grad once the micro-batch's
 * backward is done; priced in the head's backward pass (one stream: the
 * place within the micro-step moves only what overlaps them).
 * The token embedding is a gather (forward) and an index-add into a
 * vocab x h gradient (backward); learned positions add one more lookup.
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
 * Roofline. A kernel's time is
 *     max(flops / (peak x eff), bytes / (hbm x eff_hbm), kernel_floor)
 * - the max of the compute and memory bounds: Williams et al. 2009's
 * roofline, llm-analysis (analysis.py get_latency_fwd_per_layer_attn:
 * "the max of the compute latency and the memory latency") and Calculon's
 * `roofline` mode (system.py get_processing_time; its shipped A100/H100
 * files choose `no_overlap`, the sum). A GEMM or a streaming kernel
 * loads its operands while it computes, so the max is what one kernel
 * does; for the memory-bound kernels here the FLOPs are negligible and
 * the two agree.
 *   GEMM efficiency = gemm x quant(M) x quant(N) x W / (W + gemm_half):
 *   gemm is the GPU's maximum achievable matmul fraction of peak
 *   (measured, configs/clusters/NAME.yaml), quant(x) = x / (tile x
 *   ceil(x / tile)) the tile quantisation of NVIDIA's Matrix
 *   Multiplication Background guide (work in partial tiles is wasted), and
 *   W / (W + gemm_half) the ramp of small GEMMs whose W FLOPs cannot fill
 *   the GPU (gemm_half: the work at which a GEMM reaches half of gemm).
 *   Attention efficiency = flashN x s / (s + flashN_half_seq) for the
 *   kernel the training names (FlashAttention-2 or -1): the curve through
 *   Dao 2023's measured forward + backward TFLOPS (causal, d = 128) on
 *   the GPU; forward and backward take the one fraction (the figures
 *   time them together).
 *   Memory-bound efficiency = hbm x B / (B + hbm_half) for a kernel moving
 *   B bytes (a kernel's fixed start-up cost expressed as the size at which
 *   it reaches half the streaming bandwidth).
 *   peak is the GPU's dense peak for the dtype at the clock the cluster
 *   says it holds (cs_compute_peak_flops): tensor throughput is SMs x
 *   FLOPs per SM per clock x SM clock (the NVIDIA H100 whitepaper's peak
 *   table: 132 SMs x 4096 dense bf16 FLOPs per clock x 1830 MHz = 989.4
 *   TFLOPS SXM5; the PCIe card's 114 SMs x 4096 x 1620 MHz = 756), so a
 *   GPU held at a lower clock by its power limit runs every kernel's
 *   compute bound at peak x gpu.sustained_clock_mhz / gpu.peak_clock_mhz.
 *   The datasheets show the same die derated with its power: H100 NVL,
 *   132 SMs at 350-400 W, 835 dense TFLOPS (1545 MHz equivalent) against
 *   the SXM's 989 at 700 W. HBM bandwidth is the memory clock's and is
 *   not scaled.
 *   At head dimension 64 the curve is scaled by the kernel's measured
 *   ratio to 128 (head_dim_factor: FlashAttention-2 0.89; v1's measured
 *   1.13 is held at 1, head64_ratio says why).
 * Gradient accumulation. Where the strategy keeps whole gradients in
 * param.grad across the micro-batches of a step (its row's
 * accumulates_grads: DDP under no_sync, which Megatron-LM 2021's
 * schedules.py forward_backward_no_pipelining uses; Megatron's local DDP
 * without contiguous buffers, model/distributed.py, SC21's
 * examples/sc21 scripts), autograd's AccumulateGrad
 * (torch/csrc/autograd/functions/accumulate_grad.h accumulateGrad:
 * `variable_grad += new_grad` once a gradient exists) adds each later
 * micro-batch's gradient into it: a memory-bound pass reading both and
 * writing one, 3 x the gradient's bytes per parameter, G - 1 times in a
 * step of G micro-batches. One row per layer's backward ("grad_accumulate")
 * and one with the head's for the embedding, the whole pass in every
 * micro-batch when G > 1: the kernel list is the same for each micro-batch
 * (and the evaluator's extrapolation over micro-steps needs a period that
 * does not depend on G), so a step is priced G adds where torch runs G - 1
 * (the first micro-batch's gradient is taken, not added: one pass too many
 * per step, 1 / G of the term); Megatron's contiguous buffers
 * (model/distributed.py _make_param_hook: main_grad.add_ every micro-batch,
 * the default from August 2021, Korthikanti et al.'s runs) run exactly G.
 * FSDP's sharded accumulation is not priced.
 * Departures: grouped-query attention prices the kernel by its query heads
 * (FLOPs) and its K, V traffic by the kv heads, at the MHA curve (Dao
 * 2023's figures are all MHA; no public measurement of the kernel under
 * GQA in training shapes was used); the host's launch cost is not a term
 * (kernel_floor bounds a kernel from below; FSDP's hooks are the
 * executor's): it binds only when the host spends more per kernel than the
 * GPU runs it, and the given tables' smallest mean GPU time per kernel is
 * 418 us (llm-foundry MPT-1B, seq 1024, micro-batch 18 on H100: 684
 * kernels per micro-step), far above an eager op's host cost; wave quantisation is not modelled (cuBLAS on sm_80+ splits
 * K or streams tiles when the tile count is below a wave); fused epilogues
 * beyond the bias (e.g. bias + GeLU) are not assumed; the optimizer step
 * is priced by the task-graph builder (one memory-bound pass over the
 * shard) with cs_compute_hbm_efficiency.
 */
#include "train/compute.h"
#include "train/tensor.h"

#include <math.h>
#include <string.h>

#include "train/checkpoint.h"
#include "train/loss.h"
#include "train/strategy.h"

/* The shape the rows read: tokens in the micro-batch and the model's
 * widths, all as doubles. */
typedef struct shape {
    double T, b, s, h, heads, kvw, d, f, V;
    /* tensor parallelism (train/tensor.h): the degree, and one rank's
     * query width (h / tp) and tokens of the sequence-split rows (T / tp
     * under sequence parallelism, else T); heads, kvw, f and V above are
     * one rank's too */
    double tp, hq, Ts;
    double E, topk, Te; /* experts (1: dense), per token, tokens per expert (= T dense) */
    double he;       /* the embedding and head width (= h but for generic models) */
    double e;        /* bytes per activation element (the compute dtype) */
    /* gradient accumulation (the file header): bytes the add moves per
     * parameter, averaged over the step's micro-batches (0: none), and one
     * rank's parameters of a layer and of the embedding */
    double acc, lp, ep;
    int gated, biases, learned, flash, dropout, tied;
    int eager;       /* 1: PyTorch eager, 0: torch.compile (the file header) */
    cs_attn_kernel kernel;
    cs_loss_kernel loss[2]; /* the loss's forward and backward kernels (loss.c) */
    cs_loss_kernel metrics; /* the trainer's no-grad metric passes (loss.h) */
} shape;

/* How a row splits over the tp ranks (Megatron-LM's layers.py; torch's
 * ColwiseParallel / RowwiseParallel / SequenceParallel): the split
 * column of the table. SEQ rows (norms, dropouts, residual adds, the
 * router) are replicated, or run on T / tp tokens under sequence
 * parallelism; COLUMN GEMMs have N / tp (the QKV projection: its heads'
 * columns), ROW GEMMs K / tp; HEADS rows run the rank's heads / tp
 * (kv heads: tensor.c); INNER rows are elementwise on the split MLP
 * width. The shape (shape_of) holds one rank's widths, so GEMM, HEADS and
 * INNER rows read them as they are; SEQ rows take their tokens here. */
typedef enum split { SPLIT_SEQ, SPLIT_COLUMN, SPLIT_ROW, SPLIT_HEADS, SPLIT_INNER } split;

/* A forward kernel's row: its class, its dimensions or traffic, and the
 * traffic of its backward (memory-bound rows), per token, in elements. */
typedef struct krow {
    const char *name, *dgrad, *wgrad, *bias_grad, *backward;
    cs_kclass cls;
    int (*present)(const shape *s);
    /* GEMM: M, N, K, batch */
    void (*dims)(const shape *s, double dim[4]);
    /* memory-bound: elements moved per token forward and backward (the
     * dropout mask's byte is counted as half a 16-bit element) */
    double (*fwd_elems)(const shape *s);
    double (*bwd_elems)(const shape *s);
    split split; /* over the tp ranks (above) */
    int core;   /* the attention core: what selective recompute re-runs */
    int expert; /* runs once per expert on its Te tokens (elements per routed token) */
} krow;

static int always(const shape *s) { (void)s; return 1; }
static int has_rotary(const shape *s) { return !s->learned; }
static int has_dropout(const shape *s) { return s->dropout; }
static int fused_attention(const shape *s) { return s->flash; }
static int unfused_attention(const shape *s) { return !s->flash; }
static int unfused_dropout(const shape *s) { return !s->flash && s->dropout; }
static int has_experts(const shape *s) { return s->E > 1; }

static void dims_qkv(const shape *s, double d[4]) { d[0] = s->T, d[1] = s->hq + 2 * s->kvw, d[2] = s->h, d[3] = 1; }
static void dims_proj(const shape *s, double d[4]) { d[0] = s->T, d[1] = s->h, d[2] = s->hq, d[3] = 1; }
static void dims_up(const shape *s, double d[4]) { d[0] = s->Te, d[1] = (s->gated ? 2 : 1) * s->f, d[2] = s->h, d[3] = 1; }
static void dims_down(const shape *s, double d[4]) { d[0] = s->Te, d[1] = s->h, d[2] = s->f, d[3] = 1; }
static void dims_scores(const shape *s, double d[4]) { d[0] = s->s, d[1] = s->s, d[2] = s->d, d[3] = s->b * s->heads; }
static void dims_context(const shape *s, double d[4]) { d[0] = s->s, d[1] = s->d, d[2] = s->s, d[3] = s->b * s->heads; }

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
 * read of the sum saved: 2h for the add). */
static double norm_fwd(const shape *s) { return (s->eager && !s->biases ? 18 : 2) * s->h; }
static double norm_bwd(const shape *s) { return (s->eager && !s->biases ? 32 : 3) * s->h; }
static double rotary_elems(const shape *s) { return (s->eager ? 11 : 2) * (s->hq + s->kvw); }
static double dropout_elems(const shape *s) { return 2.5 * s->h; }
static double residual_fwd(const shape *s) { return (s->eager ? 3 : 2) * s->h; }
static double residual_bwd(const shape *s) { return 3 * s->h; }
static double act_fwd(const shape *s) { return (s->gated ? (s->eager ? 5 : 3) : 2) * s->f; }
static double act_bwd(const shape *s) { return (s->gated ? (s->eager ? 9 : 5) : 3) * s->f; }
/* softmax over b x heads x s x s scores: per token heads x s elements
 * read and written (forward), three tensors backward */
static double softmax_fwd(const shape *s) { return 2 * s->heads * s->s; }
static double softmax_bwd(const shape *s) { return 3 * s->heads * s->s; }
static double probs_dropout(const shape *s) { return 2.5 * s->heads * s->s; }
/* The router GEMM as streamed: forward x in, logits out; backward dgrad
 * and wgrad (the file header). */
static double router_fwd(const shape *s) { return s->h + s->E; }
static double router_bwd(const shape *s) { return 2 * (s->h + s->E); }
/* The router's elementwise kernels per token, 16-bit elements: read the
 * logits (E), fp32 softmax (2E), top-k reads it and writes k fp32 weights
 * and k int64 indices (2E + 6k), renormalise and cast (5k), the int64
 * one-hot mask written and read by each expert's scan (8kE), the zeroed
 * output (h); backward: softmax's (read output and gradient, write the
 * logits' gradient: 5E) and top-k's scatter into E zeros (2E + 2k). */
static double topk_fwd(const shape *s) { return 5 * s->E + 11 * s->topk + 8 * s->topk * s->E + s->h; }
static double topk_bwd(const shape *s) { return 7 * s->E + 2 * s->topk; }
/* Per routed token (expert rows): see the file header. */
static double gather_fwd(const shape *s) { return 2 * s->h; }
static double gather_bwd(const shape *s) { return 3 * s->h + 4 * s->h * s->E / s->topk; }
static double combine_fwd(const shape *s) { return 5 * s->h; }
static double combine_bwd(const shape *s) { return 6 * s->h; }

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
static const krow layer_rows[] = {
    MEM("norm_1", always, norm_fwd, norm_bwd, SPLIT_SEQ),
    GEMM("qkv", dims_qkv, SPLIT_COLUMN),
    MEM("rotary", has_rotary, rotary_elems, rotary_elems, SPLIT_HEADS),
    {.name = "attention", .backward = "attention.backward", .cls = CS_KCLASS_ATTENTION,
     .present = fused_attention, .core = 1, .split = SPLIT_HEADS},
    {.name = "scores", .dgrad = "scores.dgrad", .wgrad = "scores.wgrad", .cls = CS_KCLASS_GEMM,
     .present = unfused_attention, .dims = dims_scores, .core = 1, .split = SPLIT_HEADS},
    {.name = "softmax", .backward = "softmax.backward", .cls = CS_KCLASS_MEMORY,
     .present = unfused_attention, .fwd_elems = softmax_fwd, .bwd_elems = softmax_bwd, .core = 1,
     .split = SPLIT_HEADS},
    {.name = "probs_dropout", .backward = "probs_dropout.backward", .cls = CS_KCLASS_MEMORY,
     .present = unfused_dropout, .fwd_elems = probs_dropout, .bwd_elems = probs_dropout,
     .core = 1, .split = SPLIT_HEADS},
    {.name = "context", .dgrad = "context.dgrad", .wgrad = "context.wgrad", .cls = CS_KCLASS_GEMM,
     .present = unfused_attention, .dims = dims_context, .core = 1, .split = SPLIT_HEADS},
    GEMM("attention_out", dims_proj, SPLIT_ROW),
    MEM("dropout_1", has_dropout, dropout_elems, dropout_elems, SPLIT_SEQ),
    MEM("residual_1", always, residual_fwd, residual_bwd, SPLIT_SEQ),
    MEM("norm_2", always, norm_fwd, norm_bwd, SPLIT_SEQ),
    MEM("router", has_experts, router_fwd, router_bwd, SPLIT_SEQ),
    MEM("router_topk", has_experts, topk_fwd, topk_bwd, SPLIT_SEQ),
    EXPERT_MEM("expert_gather", has_experts, gather_fwd, gather_bwd, SPLIT_SEQ),
    EXPERT_GEMM("mlp_up", dims_up, SPLIT_COLUMN),
    EXPERT_MEM("activation", always, act_fwd, act_bwd, SPLIT_INNER),
    EXPERT_GEMM("mlp_down", dims_down, SPLIT_ROW),
    EXPERT_MEM("expert_combine", has_experts, combine_fwd, combine_bwd, SPLIT_SEQ),
    MEM("dropout_2", has_dropout, dropout_elems, dropout_elems, SPLIT_SEQ),
    MEM("residual_2", always, residual_fwd, residual_bwd, SPLIT_SEQ),
};
#define NROWS (sizeof layer_rows / sizeof *layer_rows)

static const char *const pass_names[CS_KPASS_COUNT] = {"forward", "backward", "recompute",
                                                        "head_forward", "head_backward"};
const char *cs_kpass_name(cs_kpass p) { return pass_names[p]; }

/* ---- efficiencies ---- */

static double quant(double x, double tile)
{
    if (tile <= 1) return 1.0;
    return x / (tile * ceil(x / tile));
}

double cs_compute_peak_flops(const cs_cluster *c, cs_dtype d)
{
    double peak = c->gpu.peak_flops[d];
    if (c->gpu.sustained_clock_mhz > 0 && c->gpu.peak_clock_mhz > 0)
        peak *= c->gpu.sustained_clock_mhz / c->gpu.peak_clock_mhz;
    return peak;
}

double cs_compute_gemm_efficiency(const cs_cluster *c, double m, double n, double k, double batch)
{
    const double work = 2 * m * n * k * batch;
    const double t = c->gpu.compute.tile;
    return c->gpu.compute.gemm * quant(m, t) * quant(n, t) * work /
           (work + c->gpu.compute.gemm_half_flops);
}

double cs_compute_hbm_efficiency(const cs_cluster *c, double bytes)
{
    return c->gpu.compute.hbm * bytes / (bytes + c->gpu.compute.hbm_half_bytes);
}

/* The fused kernels at head dimension 64, as a fraction of their speed at
 * 128 (causal, forward + backward): Dao 2023 (arXiv:2307.08691) Fig. 4
 * (c) against (d) on A100 and the repo's assets/flash2_h100_fwd_bwd_
 * benchmark.png (c) against (d) on H100, TFLOPS at s = 512..16k:
 *   FlashAttention-2  A100 88/99 119/133 140/155 156/173 165/182 171/189,
 *                     H100 141/163 192/221 232/265 257/294 273/308 284/328;
 *   FlashAttention    A100 58/55 70/62 77/69 87/76 92/80 97/83,
 *                     H100 104/98 123/109 136/108 138/126 149/135 156/137;
 * FlashAttention-2's factor is the median of its 12 ratios (0.865..0.907,
 * no trend with s or GPU beyond that spread): 0.8876. FlashAttention's
 * (v1 class) measured median, 1.1287 (1.055..1.259), is NOT applied: the
 * only rows of the given data at d = 64 are llm-foundry's MPT-125M/350M
 * on A100 (the v1 class: attn_impl triton), and with it their table moves
 * away from the measurements (signed median +0.4 -> +4.7%, p90 17.9 ->
 * 20.7%, calibrated 3.46 -> 4.57%): their residual at short sequence is a
 * per-token cost the model lacks, not the kernel, so the factor cannot be
 * checked there; it stays 1 until a run that isolates it. Between 64 and
 * 128 the factor is interpolated linearly; below 64 and above 128
 * (unmeasured there) it is held at its end. */
static const double head64_ratio[CS_ATTN_COUNT] = {[CS_ATTN_FLASH2] = 0.8876,
                                                   [CS_ATTN_FLASH1] = 1};

static double head_dim_factor(const shape *s)
{
    double r = head64_ratio[s->kernel];
    if (s->d >= 128) return 1;
    if (s->d <= 64) return r;
    return r + (1 - r) * (s->d - 64) / 64;
}

/* The fused kernel's curve: fraction of peak at long sequences (for d =
 * 128, the curve's measurements) times the head-dimension factor, and the
 * sequence length at half of it. */
static double attention_efficiency(const cs_cluster *c, const shape *s)
{
    const double curve[CS_ATTN_COUNT][2] = {
        [CS_ATTN_FLASH2] = {c->gpu.compute.flash2, c->gpu.compute.flash2_half_seq},
        [CS_ATTN_FLASH1] = {c->gpu.compute.flash1, c->gpu.compute.flash1_half_seq},
    };
    const double *k = curve[s->kernel];
    return k[0] * head_dim_factor(s) * s->s / (s->s + k[1]);
}

/* ---- building the kernel list ---- */

typedef struct sink {
    const cs_cluster *c;
    double peak;
    double flat;     /* > 0: every GEMM and attention kernel at this efficiency */
    cs_kernel *out;
    size_t n, cap;
    cs_compute *sum; /* NULL: listing only */
} sink;

static void emit(sink *k, cs_kernel x)
{
    const cs_cluster *c = k->c;
    double t_mem = x.bytes > 0 ? x.bytes / (c->gpu.hbm_Bps * cs_compute_hbm_efficiency(c, x.bytes)) : 0;
    double t_flop = 0;
    if (x.cls == CS_KCLASS_MEMORY) {
        x.efficiency = cs_compute_hbm_efficiency(c, x.bytes);
    } else {
        if (k->flat > 0) x.efficiency = k->flat;
        t_flop = x.flops / (k->peak * x.efficiency);
    }
    if (x.cls != CS_KCLASS_MEMORY && t_mem > t_flop) /* memory-bound: report that bound */
        x.efficiency = cs_compute_hbm_efficiency(c, x.bytes);
    x.time_s = fmax(fmax(t_flop, t_mem), c->gpu.compute.kernel_floor_s);
    if (x.launches > 1) { /* the same kernel once per expert: totals */
        x.flops *= x.launches;
        x.bytes *= x.launches;
        x.time_s *= x.launches;
    }
    if (k->sum) {
        cs_compute_pass *p = &k->sum->pass[x.pass];
        p->time_s += x.time_s;
        p->flops += x.flops;
        p->kernels += (int)x.launches;
    }
    if (k->n < k->cap) k->out[k->n] = x;
    k->n++;
}

/* A GEMM of e-byte elements, run `launches` times. */
static void gemm(sink *k, double e, const char *name, cs_kpass pass, double m, double n,
                 double kk, double batch, double launches)
{
    cs_kernel x = {.name = name, .cls = CS_KCLASS_GEMM, .pass = pass, .m = m, .n = n, .k = kk,
                   .batch = batch, .launches = launches};
    x.flops = 2 * m * n * kk * batch;
    x.bytes = e * batch * (m * kk + kk * n + m * n);
    x.efficiency = cs_compute_gemm_efficiency(k->c, m, n, kk, batch);
    emit(k, x);
}

static void memory(sink *k, const char *name, cs_kpass pass, double bytes, double launches)
{
    emit(k, (cs_kernel){.name = name, .cls = CS_KCLASS_MEMORY, .pass = pass, .bytes = bytes,
                        .launches = launches});
}

static void attention(sink *k, const shape *s, cs_kpass pass, int backward)
{
    /* 4 s h per token, causal half; Q, K, V, O (+ dO, dQ, dK, dV) */
    double fwd = 0.5 * 4 * s->s * s->hq * s->T;
    double io = s->e * s->T * (2 * s->hq + 2 * s->kvw);
    cs_kernel x = {.name = backward ? "attention.backward" : "attention",
                   .cls = CS_KCLASS_ATTENTION, .pass = pass,
                   .flops = backward ? 2.5 * fwd : fwd, .bytes = backward ? 2 * io : io,
                   .efficiency = attention_efficiency(k->c, s), .launches = 1};
    emit(k, x);
}

/* A row's tokens per launch and launches: an expert row runs once per
 * expert on its share, any other once on the micro-batch. */
static double row_tokens(const shape *s, const krow *r)
{
    return r->expert ? s->Te : r->split == SPLIT_SEQ ? s->Ts : s->T;
}
static double row_launches(const shape *s, const krow *r) { return r->expert ? s->E : 1; }

/* A row's forward kernel into `pass` (forward or recompute). */
static void forward(sink *k, const shape *s, const krow *r, cs_kpass pass)
{
    double d[4], n = row_launches(s, r);
    switch (r->cls) {
    case CS_KCLASS_GEMM:
        r->dims(s, d);
        gemm(k, s->e, r->name, pass, d[0], d[1], d[2], d[3], n);
        break;
    case CS_KCLASS_ATTENTION:
        attention(k, s, pass, 0);
        break;
    case CS_KCLASS_MEMORY:
        memory(k, r->name, pass, s->e * row_tokens(s, r) * r->fwd_elems(s), n);
        break;
    }
}

static void backward(sink *k, const shape *s, const krow *r, cs_kpass pass)
{
    double d[4], n = row_launches(s, r);
    switch (r->cls) {
    case CS_KCLASS_GEMM:
        r->dims(s, d);
        if (s->biases && r->bias_grad)
            memory(k, r->bias_grad, pass, s->e * d[0] * d[1] * d[3], n);
        gemm(k, s->e, r->dgrad, pass, d[0], d[2], d[1], d[3], n);
        gemm(k, s->e, r->wgrad, pass, d[2], d[1], d[0], d[3], n);
        break;
    case CS_KCLASS_ATTENTION:
        attention(k, s, pass, 1);
        break;
    case CS_KCLASS_MEMORY:
        memory(k, r->backward, pass, s->e * row_tokens(s, r) * r->bwd_elems(s), n);
        break;
    }
}

/* The head and the loss (and the embedding lookups, which run first in
 * the forward and last in the backward; priced with the head). */
static void head(sink *k, const shape *s)
{
    const double e = s->e, T = s->T, h = s->he, V = s->V;
    memory(k, "embedding", CS_KPASS_HEAD_FORWARD, 2 * e * T * h, 1);
    if (s->learned) memory(k, "position_embedding", CS_KPASS_HEAD_FORWARD, 4 * e * T * h, 1);
    memory(k, "final_norm", CS_KPASS_HEAD_FORWARD, e * s->Ts * 2 * h, 1);
    gemm(k, e, "logits", CS_KPASS_HEAD_FORWARD, T, V, h, 1, 1);
    memory(k, s->loss[0].name, CS_KPASS_HEAD_FORWARD, T * V * s->loss[0].bytes_per_logit,
           s->loss[0].launches);
    memory(k, s->loss[1].name, CS_KPASS_HEAD_BACKWARD, T * V * s->loss[1].bytes_per_logit,
           s->loss[1].launches);
    if (s->metrics.launches > 0) /* after the backward in the trainer; priced with the head's */
        memory(k, s->metrics.name, CS_KPASS_HEAD_BACKWARD, T * V * s->metrics.bytes_per_logit,
               s->metrics.launches);
    gemm(k, e, "logits.dgrad", CS_KPASS_HEAD_BACKWARD, T, h, V, 1, 1);
    gemm(k, e, "logits.wgrad", CS_KPASS_HEAD_BACKWARD, h, V, T, 1, 1);
    memory(k, "final_norm.backward", CS_KPASS_HEAD_BACKWARD, e * s->Ts * 3 * h, 1);
    if (s->learned) memory(k, "position_embedding.backward", CS_KPASS_HEAD_BACKWARD, e * (T + 2 * s->s) * h, 1);
    memory(k, "embedding.backward", CS_KPASS_HEAD_BACKWARD, e * T * h + 2 * e * V * h, 1);
    if (s->acc > 0) memory(k, "embedding.grad_accumulate", CS_KPASS_HEAD_BACKWARD, s->acc * s->ep, 1);
}

static shape shape_of(const cs_model *m, const cs_training *t)
{
    shape s = {.b = t->micro_batch, .s = m->seq_len, .h = m->hidden, .heads = m->heads,
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
    /* gradient accumulation (file header); the replicated norms' and
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
static double op_recompute_share(const shape *s, const krow *r)
{
    if (r->cls == CS_KCLASS_ATTENTION) return 0;
    if (r->cls == CS_KCLASS_MEMORY) return 1;
    if (!strcmp(r->name, "qkv")) return s->kvw / (s->h + 2 * s->kvw);
    if (!strcmp(r->name, "attention_out")) return 1;
    if (!strcmp(r->name, "mlp_up")) return s->gated ? 0.5 : 0;
    if (!strcmp(r->name, "mlp_down")) return s->gated ? 0 : 1;
    return 0; /* the unfused core's bmms: saved */
}

/* What a layer's backward re-runs of row r under t's policy (checkpoint.h):
 * 0 (nothing) .. 1 (its whole forward). Whether a given block recomputes
 * at all is the workload's (cs_checkpoint_layer_recomputes). */
static double recompute_share(const cs_training *t, const shape *s, const krow *r)
{
    if (cs_checkpoint_recomputes_whole(t)) return 1;
    if (t->checkpointing != CS_CKPT_SELECTIVE) return 0;
    if (t->selective_ac == CS_SAC_OP) return op_recompute_share(s, r);
    return r->core && !s->flash; /* attention: Korthikanti Sec 4.2 */
}

/* Row r's forward re-run in the recompute pass, a GEMM over `share` of its
 * output columns. */
static void recompute(sink *k, const shape *s, const krow *r, double share)
{
    if (share >= 1 || r->cls != CS_KCLASS_GEMM) {
        forward(k, s, r, CS_KPASS_RECOMPUTE);
        return;
    }
    double d[4];
    r->dims(s, d);
    gemm(k, s->e, r->name, CS_KPASS_RECOMPUTE, d[0], d[1] * share, d[2], d[3], row_launches(s, r));
}

static void layer(sink *k, const shape *s, const cs_training *t)
{
    for (size_t i = 0; i < NROWS; i++)
        if (layer_rows[i].present(s)) forward(k, s, &layer_rows[i], CS_KPASS_FORWARD);
    for (size_t i = 0; i < NROWS; i++) {
        const krow *r = &layer_rows[i];
        if (!r->present(s)) continue;
        double share = recompute_share(t, s, r);
        if (share > 0) recompute(k, s, r, share);
    }
    for (size_t i = NROWS; i-- > 0;)
        if (layer_rows[i].present(s)) backward(k, s, &layer_rows[i], CS_KPASS_BACKWARD);
    if (s->acc > 0) memory(k, "grad_accumulate", CS_KPASS_BACKWARD, s->acc * s->lp, 1);
}

static void run(sink *k, const cs_model *m, const cs_training *t)
{
    shape s = shape_of(m, t);
    layer(k, &s, t);
    head(k, &s);
}

int cs_compute_price(const cs_model *m, const cs_training *t, const cs_cluster *c,
                     cs_compute *out, cs_diag *d)
{
    double peak = cs_compute_peak_flops(c, t->param_dtype);
    if (!(peak > 0))
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "GPU '%s' has no peak %s TFLOPS in the cluster description",
                           c->gpu.model, cs_dtype_name(t->param_dtype));
    memset(out, 0, sizeof *out);
    sink k = {.c = c, .peak = peak, .flat = t->compute_efficiency, .sum = out};
    run(&k, m, t);
    return 0;
}

size_t cs_compute_kernels(const cs_model *m, const cs_training *t, const cs_cluster *c,
                          cs_kernel *out, size_t cap)
{
    double peak = cs_compute_peak_flops(c, t->param_dtype);
    sink k = {.c = c, .peak = peak > 0 ? peak : 1, .flat = t->compute_efficiency, .out = out,
              .cap = out ? cap : 0};
    run(&k, m, t);
    return k.n;
}
