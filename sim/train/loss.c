/* SPDX-License-Identifier: MIT */
/*
 * loss.c - the loss implementations' rows (loss.h): what each holds per
 * logit element (e = bytes of the compute dtype, cs_training.param_dtype)
 * and the memory-bound kernels it runs. The logits GEMM and its backward
 * are the head's (compute.c) and the same for every row.
 *
 * naive      F.cross_entropy over upcast logits: HF LlamaForCausalLM.forward
 *            (logits.float()) and torchtitan's train.py (model.py
 *            Transformer.forward returns self.output(h).float(), then
 *            F.cross_entropy). torch/nn/functional.py cross_entropy calls
 *            torch._C._nn.cross_entropy_loss, which for class targets is
 *            nll_loss_nd(log_softmax(input)) (aten LossNLL.cpp
 *            cross_entropy_loss_label_smoothing's plain branch). Forward:
 *            the head's e-byte output, its fp32 copy (.float(); the e-byte
 *            output is then unreferenced: ToCopyBackward saves nothing),
 *            log_softmax's fp32 result, which autograd saves
 *            (tools/autograd/derivatives.yaml _log_softmax: result); its
 *            fp32 input is saved by nothing and lives only while the
 *            caller holds it: t->hold_logits (torchtitan train.py at PR
 *            #165, e28832e: `pred = model(input_ids)`, loss of it,
 *            backward, no del: pred lives until the next step reassigns
 *            it), 4 more bytes. Backward (derivatives.yaml): nll_loss's
 *            is nll_loss_backward, a full fp32 grad_input (zeros, then the
 *            target's column); log_softmax's is _log_softmax_backward_
 *            data, a second fp32 tensor made while the first is alive
 *            (the engine frees an input buffer after the function
 *            returns): 8 bytes at once; then the saved result and the
 *            first gradient go and _to_copy's backward makes the e-byte
 *            gradient the head's backward consumes. Kernels: the cast,
 *            log_softmax and nll_loss forward (e + 4 + 4 + 4 bytes), their
 *            backwards (5 x 4 + e).
 * fused      flash-attn's xentropy (flash_attn/losses/cross_entropy.py
 *            SoftmaxCrossEntropyLossFn, csrc/xentropy/xentropy_kernel.cu,
 *            v1.0.9: the version llm-foundry's `.[gpu]` extra installs,
 *            setup.py extra_deps['gpu'] xentropy-cuda-lib@...v1.0.9).
 *            Forward reads the e-byte logits as they are (no upcast: the
 *            kernel accumulates in fp32) and saves them with one fp32
 *            log-sum-exp per row (ctx.save_for_backward(logits, lse,
 *            labels)): e bytes held (the per-row lse and losses, 8 bytes
 *            per token, are left out: 8 / vocab per logit). Backward
 *            writes the gradient in the logits' dtype: a new tensor unless
 *            inplace_backward (host_softmax_xentropy_backward: gI = inplace
 *            ? logits_ : at::empty_like(logits_)); llm-foundry builds it as
 *            FusedCrossEntropyLoss(ignore_index=-100) (llmfoundry/models/
 *            mpt/modeling_mpt.py ComposerMPTCausalLM.__init__, loss_fn
 *            default 'fused_crossentropy'), so inplace_backward=False: e
 *            more bytes. Kernels: cunn_SoftMaxXEntropyForward reads each row
 *            twice (ilpReduce for the max, again for the sum of exp): 2e;
 *            cunn_SoftMaxXEntropyBackward reads it and writes the gradient:
 *            2e.
 * chunked    torchtune's CEWithChunkedOutputLoss (torchtune/modules/loss/
 *            ce_chunked_output_loss.py; num_output_chunks 8): the output
 *            projection runs per chunk of tokens and compute_cross_entropy
 *            upcasts one chunk at a time. Eager, each chunk's log_softmax
 *            still saves its fp32 output for backward, so the forward holds
 *            e + 4 bytes (the upcast copy is transient); the backward adds
 *            one chunk's fp32 gradient and its cast, (4 + e) / 8. With
 *            compile: true (the recipes' apply_compile_strategy compiles
 *            compute_cross_entropy, as its docstring asks), Inductor's
 *            partition (torch/_functorch/partitioners.py
 *            min_cut_rematerialization_partition) saves the e-byte chunk
 *            and per-row statistics and recomputes the cheap cast and exp:
 *            e held, e / 8 in backward; kernels as the fused row's, 8
 *            launches each. Eager kernels are the naive row's, 8 launches.
 * Not modelled: Liger's fused linear cross-entropy (it never holds the
 * full logits: the head GEMM runs chunk by chunk inside the loss), the
 * 8 smaller logits GEMMs of the chunked head (priced as one), label
 * smoothing, z-loss.
 */
#include "train/loss.h"

#include "base/dtype.h"
#include "base/error.h"

#define TORCHTUNE_CHUNKS 8 /* CEWithChunkedOutputLoss num_output_chunks default */

const char *const cs_loss_impl_names[CS_LOSS_COUNT + 1] = {
    [CS_LOSS_NAIVE] = "naive", [CS_LOSS_FUSED] = "fused", [CS_LOSS_CHUNKED] = "chunked", NULL};

typedef struct loss_row {
    /* bytes per logit element: the loss's input kept to the end of its
     * backward (hold: the caller keeps the logits), its fp32 copy made
     * before it, held from forward (input included), added in backward,
     * moved by the forward and backward
     * kernels; e the compute dtype's size, compiled 1 under torch.compile */
    double (*input)(double e, int hold);
    double (*upcast)(double e);
    double (*held)(double e, int compiled, int hold);
    double (*backward)(double e, int compiled);
    double (*fwd_traffic)(double e, int compiled);
    double (*bwd_traffic)(double e, int compiled);
    const char *fwd_name, *bwd_name;
    int launches;
} loss_row;

static double naive_input(double e, int hold) { return (void)e, hold ? 4.0 : 0; } /* the fp32 logits */
static double naive_upcast(double e) { return e < 4 ? 4.0 : 0; } /* fp32: .float() is the same tensor */
static double naive_held(double e, int c, int hold) { return (void)c, 4.0 + naive_input(e, hold); }
static double naive_bwd(double e, int c) { return (void)e, (void)c, 4.0 + 4.0; }
static double no_upcast(double e) { return (void)e, 0; }
static double saved_input(double e, int hold) { return (void)hold, e; } /* the loss saves its input */
static double naive_fwd_traffic(double e, int c) { return (void)c, e + 4 + 4 + 4; }
static double naive_bwd_traffic(double e, int c) { return (void)c, 4 + 4 + 4 + 4 + 4 + e; }

static double fused_held(double e, int c, int hold) { return (void)c, (void)hold, e; }
static double fused_bwd(double e, int c) { return (void)c, e; }
static double fused_traffic(double e, int c) { return (void)c, 2 * e; }

static double chunked_held(double e, int c, int hold) { return (void)hold, c ? e : e + 4.0; }
static double chunked_bwd(double e, int c) { return (c ? e : 4.0 + e) / TORCHTUNE_CHUNKS; }
static double chunked_fwd_traffic(double e, int c) { return c ? 2 * e : naive_fwd_traffic(e, c); }
static double chunked_bwd_traffic(double e, int c) { return c ? 2 * e : naive_bwd_traffic(e, c); }

static const loss_row rows[CS_LOSS_COUNT] = {
    [CS_LOSS_NAIVE] = {naive_input, naive_upcast, naive_held, naive_bwd, naive_fwd_traffic, naive_bwd_traffic, "cross_entropy",
                       "cross_entropy.backward", 1},
    [CS_LOSS_FUSED] = {saved_input, no_upcast, fused_held, fused_bwd, fused_traffic,
                       fused_traffic, "xentropy", "xentropy.backward", 1},
    [CS_LOSS_CHUNKED] = {saved_input, no_upcast, chunked_held, chunked_bwd, chunked_fwd_traffic, chunked_bwd_traffic, "chunked_cross_entropy",
                         "chunked_cross_entropy.backward", TORCHTUNE_CHUNKS},
};

static const loss_row *row_of(const cs_training *t)
{
    CS_ASSERT(t->loss_impl >= 0 && t->loss_impl < CS_LOSS_COUNT);
    return &rows[t->loss_impl];
}

const char *cs_loss_name(const cs_training *t)
{
    (void)row_of(t);
    return cs_loss_impl_names[t->loss_impl];
}

double cs_loss_held_bytes(const cs_training *t)
{
    return row_of(t)->held(cs_dtype_size(t->param_dtype), t->compile, t->hold_logits);
}

cs_loss_steps cs_loss_steps_of(const cs_training *t)
{
    const loss_row *r = row_of(t);
    double e = cs_dtype_size(t->param_dtype);
    return (cs_loss_steps){.input_bytes = r->input(e, t->hold_logits), .upcast_bytes = r->upcast(e)};
}

double cs_loss_backward_bytes(const cs_training *t)
{
    return row_of(t)->backward(cs_dtype_size(t->param_dtype), t->compile);
}

cs_loss_kernel cs_loss_metrics_kernel(const cs_training *t)
{
    double e = cs_dtype_size(t->param_dtype);
    return (cs_loss_kernel){.name = "train_metrics", .bytes_per_logit = naive_fwd_traffic(e, 0),
                            .launches = t->train_metrics};
}

cs_loss_kernel cs_loss_kernel_of(const cs_training *t, int backward)
{
    const loss_row *r = row_of(t);
    double e = cs_dtype_size(t->param_dtype);
    return (cs_loss_kernel){.name = backward ? r->bwd_name : r->fwd_name,
                            .bytes_per_logit = (backward ? r->bwd_traffic : r->fwd_traffic)(e, t->compile),
                            .launches = r->launches};
}
