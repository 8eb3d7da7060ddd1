/* SPDX-License-Identifier: MIT */
/*
 * model.h - a model to train: either a generic parameter count (uniform
 * layers) or a transformer shape, from which parameters per layer, FLOPs
 * per token and activation bytes per layer are derived.
 *
 * Formulas: parameters and FLOPs per Narayanan et al. 2021 (SC21, "Efficient
 * Large-Scale Language Model Training on GPU Clusters", Sec 5.1 / App.) and
 * Korthikanti et al. 2022 (arXiv:2205.05198); activations per layer from
 * Korthikanti Table 2 (no tensor/sequence parallelism, t = 1):
 *   none      sbh(34 + 5as/h)
 *   selective sbh * 34          (attention scores recomputed)
 *   full      sbh * 2           (only the layer input is kept)
 * A generic model of P parameters gets a GPT-3-like shape (hidden = 128 x
 * layers, the aspect ratio of GPT-3 Table 2.1's large models).
 * A sparse mixture of experts (Mixtral; HF modeling_mixtral.py
 * MixtralSparseMoeBlock) has `experts` MLPs per layer and a router, and
 * runs `experts_per_token` of them per token: parameters (and so memory
 * and every gradient and gather) count all experts, FLOPs and activations
 * the top-k.
 * cs_model is a value type. The formulas, their sources and departures are
 * spelled out in model.c and configs/models/README.md.
 */
#ifndef CS_MODEL_H
#define CS_MODEL_H

#include "base/error.h"

typedef enum cs_ckpt { CS_CKPT_NONE, CS_CKPT_SELECTIVE, CS_CKPT_FULL, CS_CKPT_COUNT } cs_ckpt;

typedef struct cs_model {
    char name[64];
    int generic;        /* 1: built from a parameter count alone */
    int layers;
    int hidden;
    int heads;
    int kv_heads;       /* grouped-query attention; = heads for MHA */
    int ffn_hidden;
    int gated_mlp;      /* SwiGLU (3 matrices) as LLaMA; 0: GeLU (2) */
    int seq_len;
    int vocab;
    int tied_embeddings;
    int biases;            /* GPT-2/3: linear biases and LayerNorm (2h per norm);
                            * 0: no biases, RMSNorm (h per norm) as LLaMA */
    int learned_positions; /* GPT-2/3: a seq_len x hidden table; 0: rotary */
    double dropout;        /* residual / attention dropout probability while
                            * training; 0 (LLaMA, MPT): no dropout kernels */
    int experts;           /* MLPs per layer (HF num_local_experts) with a router
                            * (h x experts, no bias); 0 or 1: dense, no router */
    int experts_per_token; /* top-k (HF num_experts_per_tok), 1..experts; 0 or 1
                            * when dense. cs_model_derive sets both to 1 when dense */
    /* derived (cs_model_derive) */
    double layer_params;     /* one transformer layer */
    double embedding_params; /* token (+ position) embeddings, + untied head */
    double params;           /* total */
    double active_params;    /* what one token runs: the top-k experts' MLPs of every
                              * layer, attention, router, embeddings; = params when dense */
} cs_model;

/* Fills the derived fields from the shape; CS_EINVAL if the shape is
 * inconsistent (heads not dividing hidden, kv_heads not dividing heads,
 * experts_per_token outside 1..experts...).
 * A generic model keeps its layer_params and recomputes the embedding
 * (vocab x hidden) and the total. */
int cs_model_derive(cs_model *m, cs_diag *d);

#define CS_MODEL_GENERIC_SEQ_LEN 2048 /* Brown et al. 2020 Sec 2.1: n_ctx = 2048 */
#define CS_MODEL_GENERIC_VOCAB 50257  /* GPT-2's BPE vocabulary, reused by GPT-3 */
/* A generic model of `params` parameters (> 0) with uniform layers,
 * seq_len 2048 and vocab 50257 (GPT-3). params is met exactly; CS_EINVAL
 * below 1e5 parameters (the embedding alone would not fit). */
int cs_model_generic(double params, cs_model *out, cs_diag *d);
/* The same with a given sequence length and vocabulary (both >= 1). */
int cs_model_generic_shape(double params, int seq_len, int vocab, cs_model *out, cs_diag *d);

/* `spec` is a preset name (gpt2-124m ... llama3-70b), a YAML file path
 * (a name with '/' or ending in .yaml/.yml; otherwise presets come first),
 * a Hugging Face config ("hf:PATH" or a path named config.json: hfconfig.h),
 * or a parameter count ("7e9", "1.3B", "350M": cs_model_generic). Unknown
 * names get a did-you-mean (CS_ENOENT); YAML errors are CS_ECONFIG with
 * file:line:column. The schema: configs/models/README.md. */
int cs_model_load(const char *spec, cs_model *out, cs_diag *d);
int cs_model_load_string(const char *origin, const char *yaml, size_t len, cs_model *out,
                         cs_diag *d);

/* For the scenario loader (internal, yamlnode.h types): a `model:` value
 * that is a preset name (or file path) scalar or an inline mapping with
 * the schema of a model file. Errors are CS_ECONFIG at the node (an
 * unknown preset gets a did-you-mean there); a file's own errors keep its
 * file:line:column. */
struct cs_yctx;
struct cs_ynode;
int cs__model_from_node(const struct cs_yctx *c, const struct cs_ynode *v, cs_model *out);

/* Preset names (sorted) for help texts. */
size_t cs_model_preset_count(void);
const char *cs_model_preset_name(size_t i);

/* Tokens each expert's MLP runs on when a layer sees `tokens`: tokens x
 * experts_per_token / experts, routing assumed uniform (every expert gets
 * the same share; no capacity limit drops any, as in Mixtral's HF code).
 * `tokens` for a dense model. */
double cs_model_expert_tokens(const cs_model *m, double tokens);

/* Forward FLOPs of one layer for `tokens` tokens in a sequence of the
 * model's length (matmuls and attention scores: 2 FLOPs per MAC; with
 * experts, the router and the top-k experts' MLPs per token). */
double cs_model_layer_forward_flops(const cs_model *m, double tokens);
/* Forward FLOPs of the output head (logits) for `tokens` tokens. */
double cs_model_head_forward_flops(const cs_model *m, double tokens);
/* Model FLOPs per token, forward + backward (3x forward), no recompute:
 * the MFU numerator (Korthikanti Sec 6 / PaLM App. B convention). */
double cs_model_flops_per_token(const cs_model *m);

/* Activation bytes kept per layer for a micro-batch of b sequences, with
 * 16-bit activations (Korthikanti Table 2 assumptions). Exactly Table 2
 * for a 4h GeLU MLP with multi-head attention; the MLP and K/V terms of
 * the paper's Sec 4.1 breakdown are scaled for ffn_hidden != 4h, SwiGLU
 * and grouped-query attention (model.c); with experts, the MLP terms of
 * the top-k experts per token and the router's output (model.c). */
double cs_model_activation_bytes_per_layer(const cs_model *m, int micro_batch, cs_ckpt mode);

#endif
