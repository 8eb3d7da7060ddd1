/* SPDX-License-Identifier: MIT */
/*
 * tensor.h - tensor parallelism (Megatron-LM's column / row split of a
 * transformer layer, Shoeybi et al. 2019) and sequence parallelism
 * (Korthikanti et al. 2022) on the tp dimension of the layout
 * (layout.h): the settings in effect, the model as one tensor-parallel
 * rank holds it, its activations, and the collectives the split puts on
 * the critical path of the iteration graph. The kernels' split is the
 * compute model's `split` column (compute_rows.c); tensor.c states the model,
 * its sources and departures.
 *
 * With T = 1 every function here is the identity: no collective, the
 * model as given, cs_model_activation_bytes_per_layer's figure.
 */
#ifndef CS_TENSOR_H
#define CS_TENSOR_H

#include "base/error.h"
#include "train/model.h"
#include "train/training.h"

/* T, the tensor-parallel degree (>= 1). */
int cs_tensor_degree(const cs_training *t);
/* 1 when sequence parallelism is on: t->sequence_parallel, or (-1) T > 1. */
int cs_tensor_sequence_parallel(const cs_training *t);
/* 1 when the TP collectives overlap the GEMMs (async_tp with T > 1). */
int cs_tensor_async(const cs_training *t);

/* 0, or CS_EINVAL with d filled: T must divide the attention heads, the
 * MLP width (each expert's) and, for a shaped model, be at most the
 * heads; async TP needs sequence parallelism (torch's micro-pipelined TP
 * and Megatron's --tp-comm-overlap both decompose the SP all-gather and
 * reduce-scatter). O(1). */
int cs_tensor_check(const cs_model *m, const cs_training *t, cs_diag *d);

/* The model as one tensor-parallel rank stores it, for the data-parallel
 * strategy and the memory terms that count parameters and logits:
 * params, layer_params, embedding_params and active_params / T, vocab
 * ceil(vocab / T) (the vocab-parallel embedding, output layer and loss);
 * every other field is m's. Returns m itself when T = 1, else buf filled. */
const cs_model *cs_tensor_rank_model(const cs_model *m, const cs_training *t, cs_model *buf);

/* Activation bytes one rank keeps per layer (Korthikanti Table 2's
 * general rows, tensor.c) for a micro-batch of b sequences under mode. */
double cs_tensor_activation_bytes_per_layer(const cs_model *m, const cs_training *t, int b,
                                            cs_ckpt mode);

/* Model FLOPs per rank are the model's / T (the split leaves no FLOP
 * replicated but the norms and the attention's elementwise work, which
 * the model-FLOPs convention does not count). */
double cs_tensor_flops_share(const cs_training *t);

/* ---- the collectives per block ---- */
/* One kind of TP collective a block issues: `count` runs of op on the tp
 * group, size_bytes each, in dtype; `what` labels the graph's tasks. */
typedef struct cs_tensor_coll {
    cs_op op;
    double size_bytes;
    cs_dtype dtype;
    int count;
    const char *what;
} cs_tensor_coll;
#define CS_TENSOR_COLLS_MAX 3
/* The TP collectives of one transformer layer's forward or backward (with
 * the forward's again when full checkpointing recomputes it), in issue
 * order, for a micro-batch on whole model m: fills out and returns how
 * many rows (0 when T = 1). The graph (cs__tensor_layer) and the pipeline
 * executor (pipeline.c) both read this list. O(1). */
int cs_tensor_layer_collectives(const cs_model *m, const cs_training *t, int backward,
                                cs_tensor_coll out[CS_TENSOR_COLLS_MAX]);
/* The same for the head (embedding, output layer, vocab-parallel loss). */
int cs_tensor_head_collectives(const cs_model *m, const cs_training *t, int backward,
                               cs_tensor_coll out[CS_TENSOR_COLLS_MAX]);

/* ---- the graph (train-internal: wbuild.h) ---- */
struct cs_wbuild;
/* The TP collectives of layer l's forward (compute task f) or backward
 * (+ recompute), on the tp stream after f (async: from f's start); returns
 * the last one's id, which the next compute task waits for, or -1 (T = 1). */
int cs__tensor_layer(struct cs_wbuild *b, int l, int f, int backward);
/* The same for the head (embedding, output layer, vocab-parallel loss):
 * after its forward or backward compute task f. */
int cs__tensor_head(struct cs_wbuild *b, int f, int backward);

#endif
