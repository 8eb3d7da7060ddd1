/* SPDX-License-Identifier: MIT */
/*
 * compute_impl.h - internal to the compute model (compute.h): the shape a
 * layer's kernel rows read and the table of those rows (compute_rows.c),
 * which compute.c prices as rooflines.
 *   compute_rows.c  the rows: which kernels exist, GEMM dimensions and
 *                   memory-bound traffic per token, the shape they read
 *   compute.c       the roofline and its efficiencies, a layer's passes,
 *                   the head and the loss, the public entry points
 * Invariants: cs__compute_rows lists one layer's forward kernels in the
 * order PyTorch runs them; a row's `present` decides whether a shape has
 * it; the shape holds one tensor-parallel rank's widths.
 */
#ifndef CS_COMPUTE_IMPL_H
#define CS_COMPUTE_IMPL_H

#include <stddef.h>

#include "train/compute.h"
#include "train/loss.h"

/* The shape the rows read: tokens in the micro-batch and the model's
 * widths, all as doubles, on one tensor-parallel rank. */
typedef struct cs__shape {
    double T, b, s, h, heads, kvw, d, f, V;
    /* tensor parallelism (train/tensor.h): the degree, and one rank's
     * query width (h / tp) and tokens of the sequence-split rows (T / tp
     * under sequence parallelism, else T); heads, kvw, f and V above are
     * one rank's too */
    double tp, hq, Ts;
    double E, topk, Te; /* experts (1: dense), per token, tokens per expert (= T dense) */
    double he;       /* the embedding and head width (= h but for generic models) */
    double e;        /* bytes per activation element (the compute dtype) */
    /* gradient accumulation (compute.c's file header): bytes the add moves
     * per parameter, averaged over the step's micro-batches (0: none), and
     * one rank's parameters of a layer and of the embedding */
    double acc, lp, ep;
    int gated, biases, learned, flash, dropout, tied;
    int eager;       /* 1: PyTorch eager, 0: torch.compile (compute_rows.c) */
    cs_attn_kernel kernel;
    cs_loss_kernel loss[2]; /* the loss's forward and backward kernels (loss.c) */
    cs_loss_kernel metrics; /* the trainer's no-grad metric passes (loss.h) */
} cs__shape;

/* How a row splits over the tp ranks (Megatron-LM's layers.py; torch's
 * ColwiseParallel / RowwiseParallel / SequenceParallel): the split
 * column of the table. SEQ rows (norms, dropouts, residual adds, the
 * router) are replicated, or run on T / tp tokens under sequence
 * parallelism; COLUMN GEMMs have N / tp (the QKV projection: its heads'
 * columns), ROW GEMMs K / tp; HEADS rows run the rank's heads / tp
 * (kv heads: tensor.c); INNER rows are elementwise on the split MLP
 * width. The shape (cs__compute_shape) holds one rank's widths, so GEMM,
 * HEADS and INNER rows read them as they are; SEQ rows take their tokens
 * here. */
typedef enum cs__split {
    CS__SPLIT_SEQ,
    CS__SPLIT_COLUMN,
    CS__SPLIT_ROW,
    CS__SPLIT_HEADS,
    CS__SPLIT_INNER
} cs__split;

/* A forward kernel's row: its class, its dimensions or traffic, and the
 * traffic of its backward (memory-bound rows), per token, in elements. */
typedef struct cs__krow {
    const char *name, *dgrad, *wgrad, *bias_grad, *backward;
    cs_kclass cls;
    int (*present)(const cs__shape *s);
    /* GEMM: M, N, K, batch */
    void (*dims)(const cs__shape *s, double dim[4]);
    /* memory-bound: elements moved per token forward and backward (the
     * dropout mask's byte is counted as half a 16-bit element) */
    double (*fwd_elems)(const cs__shape *s);
    double (*bwd_elems)(const cs__shape *s);
    cs__split split; /* over the tp ranks (above) */
    int core;   /* the attention core: what selective recompute re-runs */
    int expert; /* runs once per expert on its Te tokens (elements per routed token) */
} cs__krow;

/* The rows of one layer's forward, in order, and how many there are. */
extern const cs__krow cs__compute_rows[];
extern const size_t cs__compute_nrows;

/* The shape of m's layer under t: a micro-batch's tokens and one
 * tensor-parallel rank's widths (generic models: the GPT-3 layer of their
 * size). */
cs__shape cs__compute_shape(const cs_model *m, const cs_training *t);

/* Elements per token and unit of width that the head's final norm reads
 * and writes in its backward: 5 for eager F.layer_norm (two kernels, dX
 * and the weight and bias), else 3 (compute_rows.c). */
double cs__compute_layernorm_bwd_elems(const cs__shape *s);

/* The share of row r's forward that torchtitan's per-op checkpointing
 * policy (CS_SAC_OP) re-runs: 0 .. 1. */
double cs__compute_op_recompute_share(const cs__shape *s, const cs__krow *r);

#endif
