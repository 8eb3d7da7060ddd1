/* SPDX-License-Identifier: MIT */
/*
 * loss.h - the language-model loss as the stacks run it: what each
 * implementation holds over the micro-batch's logits (bytes per logit
 * element, micro_batch x seq x vocab of them), from the head's forward to
 * its backward and during the backward, and the memory-bound kernels it
 * launches (bytes moved per logit element). One row per implementation
 * (loss.c cites each):
 *   naive     F.cross_entropy over upcast logits (HF Trainer, torchtitan);
 *   fused     flash-attn's xentropy kernel (flash_attn/losses/
 *             cross_entropy.py CrossEntropyLoss, csrc/xentropy), as
 *             llm-foundry's MPT builds it;
 *   chunked   torchtune's CEWithChunkedOutputLoss (8 chunks).
 * cs_training.loss_impl holds the row's index (naive, the default, is 0).
 */
#ifndef CS_LOSS_H
#define CS_LOSS_H

#include "train/training.h"

typedef enum cs_loss_impl { CS_LOSS_NAIVE, CS_LOSS_FUSED, CS_LOSS_CHUNKED, CS_LOSS_COUNT } cs_loss_impl;

/* "naive", "fused", "chunked", NULL-terminated (scenario and CSV enum). */
extern const char *const cs_loss_impl_names[CS_LOSS_COUNT + 1];
/* The name of t's loss_impl. */
const char *cs_loss_name(const cs_training *t);

/* Bytes per logit element held from the head's forward until its backward
 * ends (the logits the loss or its caller keeps, t->hold_logits, and what
 * the loss saves for backward). */
double cs_loss_held_bytes(const cs_training *t);
/* Bytes per logit element the loss's backward has alive at once (naive:
 * nll_loss's and log_softmax's fp32 gradients; the logits' gradient, or
 * one chunk's). */
double cs_loss_backward_bytes(const cs_training *t);

/* How the loss's bytes come and go (bytes per logit element), for the
 * allocation timeline: the head's e-byte output, then its fp32 copy when
 * the row upcasts (upcast_bytes; the e-byte output is freed); of the
 * loss's input, what stays to the end of its backward (input_bytes,
 * included in cs_loss_held_bytes; the rest of the held bytes is what the
 * loss saves). */
typedef struct cs_loss_steps {
    double input_bytes, upcast_bytes;
} cs_loss_steps;
cs_loss_steps cs_loss_steps_of(const cs_training *t);

/* The loss's memory-bound kernels: name, bytes moved per logit element,
 * launches; pass 0 forward, 1 backward. Strings are static. */
typedef struct cs_loss_kernel {
    const char *name;
    double bytes_per_logit;
    int launches;
} cs_loss_kernel;
cs_loss_kernel cs_loss_kernel_of(const cs_training *t, int backward);

/* The trainer's train metrics over the logits (t->train_metrics passes,
 * launches 0 when none): each a no-grad F.cross_entropy over the 16-bit
 * logits, the naive row's forward kernels (cast to fp32, log_softmax,
 * nll_loss). Composer's trainer (composer/trainer/trainer.py v0.16
 * _train_microbatch -> _eval_train_metrics, after each micro-batch's
 * backward, under the autocast context) updates every train metric with
 * the cached logits; llm-foundry's ComposerMPTCausalLM has two
 * (modeling_mpt.py use_train_metrics default True: LanguageCrossEntropy,
 * LanguagePerplexity), each running torch.nn.CrossEntropyLoss(reduction=
 * 'sum') (composer/metrics/nlp.py LanguageCrossEntropy.update; the
 * perplexity subclass runs the same update). Transient (no grad): no bytes
 * held. */
cs_loss_kernel cs_loss_metrics_kernel(const cs_training *t);

#endif
