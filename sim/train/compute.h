/* SPDX-License-Identifier: MIT */
/*
 * compute.h - the compute model: every kernel of a transformer layer's
 * forward and backward (and of the embedding, the output head and the
 * loss) priced from its shape on one GPU.
 *
 * A kernel is a GEMM (M, N, K, batch), a fused attention pass, or a
 * memory-bound elementwise / reduction kernel. Its time is a roofline:
 *   max(flops / (peak x eff_gemm(shape)), bytes / (hbm x eff_hbm(bytes)),
 *       kernel floor)
 * with the efficiencies of the GPU's `gpu.compute` section of the cluster
 * YAML (cluster.h; values and sources in configs/clusters/NAME.yaml). Which
 * kernels exist follows the model's shape (biases, gated MLP, rotary or
 * learned positions, dropout, tied embeddings) and the training settings
 * (fused attention, activation checkpointing). compute.c (the pricing) and
 * compute_rows.c (the layer's kernel table) state the model, its sources
 * and departures.
 *
 * Everything is a pure function of (model, training, GPU); nothing
 * allocates. cs_compute_layer is what the task-graph builder uses;
 * cs_compute_kernels lists the kernels one by one for reports and tests.
 */
#ifndef CS_COMPUTE_H
#define CS_COMPUTE_H

#include <stddef.h>

#include "coll/cluster.h"
#include "train/model.h"
#include "train/training.h"

typedef enum cs_kclass { CS_KCLASS_GEMM, CS_KCLASS_ATTENTION, CS_KCLASS_MEMORY } cs_kclass;

/* Where a kernel runs: a layer's forward, its backward, the recompute of
 * its forward inside the backward (activation checkpointing), the head
 * (final norm, logits, loss, embedding) forward and backward. */
typedef enum cs_kpass {
    CS_KPASS_FORWARD,
    CS_KPASS_BACKWARD,
    CS_KPASS_RECOMPUTE,
    CS_KPASS_HEAD_FORWARD,
    CS_KPASS_HEAD_BACKWARD,
    CS_KPASS_COUNT
} cs_kpass;

typedef struct cs_kernel {
    const char *name;   /* static storage, e.g. "mlp_up.dgrad" */
    cs_kclass cls;
    cs_kpass pass;
    double m, n, k, batch; /* GEMMs, one launch; 0 otherwise */
    double launches;    /* runs of this shape one after another: the experts of a
                         * mixture-of-experts row, 1 otherwise */
    double flops;       /* executed FLOPs (causal attention: the half it runs), all launches */
    double bytes;       /* HBM bytes read + written, all launches */
    double efficiency;  /* of the bound that limits one launch (FLOP/s or bytes/s) */
    double time_s;      /* the roofline time, floor included, of each launch, summed */
} cs_kernel;

/* Totals per pass, for one layer (the three layer passes) or the head. */
typedef struct cs_compute_pass {
    double time_s;
    double flops;       /* executed: hardware FLOPs */
    int kernels;        /* launches */
} cs_compute_pass;

typedef struct cs_compute {
    cs_compute_pass pass[CS_KPASS_COUNT];
} cs_compute;

/* Prices one layer and the head for a micro-batch of t->micro_batch
 * sequences on c's GPU in t->param_dtype. Returns 0, or CS_EINVAL with d
 * filled when the GPU has no peak for the dtype. */
int cs_compute_price(const cs_model *m, const cs_training *t, const cs_cluster *c,
                     cs_compute *out, cs_diag *d);

/* Writes up to cap kernels of one layer and the head into out (NULL with
 * cap 0 counts them) and returns how many there are; the same kernels
 * cs_compute_price sums. */
size_t cs_compute_kernels(const cs_model *m, const cs_training *t, const cs_cluster *c,
                          cs_kernel *out, size_t cap);

/* The efficiency the model gives a GEMM of that shape (tests, reports). */
/* The dense peak of dtype d the kernels run at: the quoted peak x
 * sustained / peak clock where the cluster gives both (compute.c's file
 * header), else the quoted peak. MFU is reported against the quoted one. */
double cs_compute_peak_flops(const cs_cluster *c, cs_dtype d);
double cs_compute_gemm_efficiency(const cs_cluster *c, double m, double n, double k, double batch);
/* The efficiency of a memory-bound kernel moving `bytes`. */
double cs_compute_hbm_efficiency(const cs_cluster *c, double bytes);

const char *cs_kpass_name(cs_kpass p);

#endif
