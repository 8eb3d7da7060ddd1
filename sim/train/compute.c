/* SPDX-License-Identifier: MIT */
/*
 * compute.c - prices the kernels of one transformer layer (the rows of
 * compute_rows.c), the output head and the loss on one GPU, each a
 * roofline from its shape (compute.h).
 *
 * Kernels. A layer's forward runs the rows of compute_rows.c in order,
 * its recompute the share of each that the checkpointing policy re-runs,
 * its backward the rows' backwards in reverse (compute_rows.c: which
 * rows a model has, their dimensions and traffic, eager and compiled,
 * the mixture of experts). Each class has its backward rule:
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
 *   memory-bound kernels and the unfused attention core: the traffic and
 *     dimensions of their rows (compute_rows.c).
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

#include <math.h>
#include <string.h>

#include "train/checkpoint.h"
#include "train/compute_impl.h"

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

static double head_dim_factor(const cs__shape *s)
{
    double r = head64_ratio[s->kernel];
    if (s->d >= 128) return 1;
    if (s->d <= 64) return r;
    return r + (1 - r) * (s->d - 64) / 64;
}

/* The fused kernel's curve: fraction of peak at long sequences (for d =
 * 128, the curve's measurements) times the head-dimension factor, and the
 * sequence length at half of it. */
static double attention_efficiency(const cs_cluster *c, const cs__shape *s)
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

static void attention(sink *k, const cs__shape *s, cs_kpass pass, int backward)
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
static double row_tokens(const cs__shape *s, const cs__krow *r)
{
    return r->expert ? s->Te : r->split == CS__SPLIT_SEQ ? s->Ts : s->T;
}
static double row_launches(const cs__shape *s, const cs__krow *r) { return r->expert ? s->E : 1; }

/* A row's forward kernel into `pass` (forward or recompute). */
static void forward(sink *k, const cs__shape *s, const cs__krow *r, cs_kpass pass)
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

static void backward(sink *k, const cs__shape *s, const cs__krow *r, cs_kpass pass)
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
static void head(sink *k, const cs__shape *s)
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
    memory(k, "final_norm.backward", CS_KPASS_HEAD_BACKWARD,
           e * s->Ts * cs__compute_layernorm_bwd_elems(s) * h, 1);
    if (s->learned) memory(k, "position_embedding.backward", CS_KPASS_HEAD_BACKWARD, e * (T + 2 * s->s) * h, 1);
    memory(k, "embedding.backward", CS_KPASS_HEAD_BACKWARD, e * T * h + 2 * e * V * h, 1);
    if (s->acc > 0) memory(k, "embedding.grad_accumulate", CS_KPASS_HEAD_BACKWARD, s->acc * s->ep, 1);
}

/* What a layer's backward re-runs of row r under t's policy (checkpoint.h):
 * 0 (nothing) .. 1 (its whole forward). Whether a given block recomputes
 * at all is the workload's (cs_checkpoint_layer_recomputes). */
static double recompute_share(const cs_training *t, const cs__shape *s, const cs__krow *r)
{
    if (cs_checkpoint_recomputes_whole(t)) return 1;
    if (t->checkpointing != CS_CKPT_SELECTIVE) return 0;
    if (t->selective_ac == CS_SAC_OP) return cs__compute_op_recompute_share(s, r);
    return r->core && !s->flash; /* attention: Korthikanti Sec 4.2 */
}

/* Row r's forward re-run in the recompute pass, a GEMM over `share` of its
 * output columns. */
static void recompute(sink *k, const cs__shape *s, const cs__krow *r, double share)
{
    if (share >= 1 || r->cls != CS_KCLASS_GEMM) {
        forward(k, s, r, CS_KPASS_RECOMPUTE);
        return;
    }
    double d[4];
    r->dims(s, d);
    gemm(k, s->e, r->name, CS_KPASS_RECOMPUTE, d[0], d[1] * share, d[2], d[3], row_launches(s, r));
}

static void layer(sink *k, const cs__shape *s, const cs_training *t)
{
    for (size_t i = 0; i < cs__compute_nrows; i++)
        if (cs__compute_rows[i].present(s)) forward(k, s, &cs__compute_rows[i], CS_KPASS_FORWARD);
    for (size_t i = 0; i < cs__compute_nrows; i++) {
        const cs__krow *r = &cs__compute_rows[i];
        if (!r->present(s)) continue;
        double share = recompute_share(t, s, r);
        if (share > 0) recompute(k, s, r, share);
    }
    for (size_t i = cs__compute_nrows; i-- > 0;)
        if (cs__compute_rows[i].present(s)) backward(k, s, &cs__compute_rows[i], CS_KPASS_BACKWARD);
    if (s->acc > 0) memory(k, "grad_accumulate", CS_KPASS_BACKWARD, s->acc * s->lp, 1);
}

static void run(sink *k, const cs_model *m, const cs_training *t)
{
    cs__shape s = cs__compute_shape(m, t);
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
