/* SPDX-License-Identifier: MIT */
/*
 * tensor.c - tensor parallelism over the tp dimension of the layout
 * (tensor.h): what one of T ranks stores, keeps and communicates.
 *
 * The split (Shoeybi et al. 2019, arXiv:1909.08053 Sec 3; Megatron-LM
 * megatron/core/tensor_parallel/layers.py ColumnParallelLinear and
 * RowParallelLinear; torch.distributed.tensor.parallel's ColwiseParallel
 * and RowwiseParallel as torchtitan's apply_tp applies them,
 * torchtitan/models/llama3/infra/parallelize.py): in each layer the QKV
 * projection and the MLP's first GEMM(s) are split by columns (output
 * features / T), the attention output projection and the MLP's last GEMM
 * by rows (input features / T); each rank runs heads / T attention heads
 * (grouped-query attention: kv_heads / T key-value heads, or one head
 * replicated on T / kv_heads ranks when kv_heads < T, as Megatron's
 * get_query_key_value_tensors does); the token embedding is split by
 * vocabulary rows (VocabParallelEmbedding / torchtitan's RowwiseParallel
 * tok_embeddings), the output layer by vocabulary columns, and the loss
 * is the vocab-parallel cross entropy (Megatron's
 * vocab_parallel_cross_entropy, torch's loss_parallel: three all-reduces
 * of one fp32 value per token: the max, the sum of exponentials, the
 * target logit). Which kernel splits how is the compute model's `split`
 * column (compute_rows.c).
 *
 * Communication on the critical path, per layer, on the tp group, in
 * activations of b x s x h elements of the compute dtype:
 *   without sequence parallelism (Megatron's f and g operators): forward
 *     one all-reduce after each block's row-parallel GEMM (2 per layer);
 *     backward one all-reduce of the column-parallel GEMM's input
 *     gradient per block (2);
 *   with sequence parallelism (Korthikanti et al. 2022, arXiv:2205.05198
 *     Sec 4.2.2; torch's SequenceParallel on the norms): the norms,
 *     dropouts and residual adds run on s / T tokens; forward an
 *     all-gather before each column-parallel GEMM and a reduce-scatter
 *     after each row-parallel GEMM (2 + 2); backward the mirror
 *     (all-gather of the output gradient, reduce-scatter of the input
 *     gradient) plus the all-gather of the saved sequence shard that the
 *     column-parallel weight gradient needs (Megatron's
 *     LinearWithGradAccumulationAndAsyncCommunication.backward re-gathers
 *     `total_input`): 4 all-gathers + 2 reduce-scatters;
 *   under full activation recomputation the backward re-runs the
 *     forward's collectives first.
 * The head: the vocab-parallel embedding's all-reduce (no SP) or
 * reduce-scatter (SP), SP's all-gather before the output layer, the
 * loss's three all-reduces; backward, the output layer's input gradient
 * all-reduced (no SP) or reduce-scattered (SP) and, with SP, the
 * embedding's all-gather.
 *
 * Async TP (torch's micro-pipelined TP, _micro_pipeline_tp with
 * symmetric memory; Megatron's --tp-comm-overlap) decomposes each
 * all-gather + GEMM and GEMM + reduce-scatter into T chunks so that a
 * chunk's transfer runs under the previous chunk's GEMM. Here the
 * layer's collectives start with its compute (on the tp stream, waiting
 * for the compute task's start) and the next compute waits for them:
 * communication shows only where it outlasts the layer's GEMMs, and the
 * compute is slowed by the SMs the collectives take (iteration.c).
 * Departure: the one chunk a decomposition cannot hide (the first
 * gather's, or the last reduction's, 1/T) is not priced.
 *
 * Memory (Korthikanti Table 2's general rows): of the per-layer
 * activations, sbh x 10 bytes are not split without SP (both norms'
 * inputs 4sbh, the QKV and MLP-up inputs 2sbh each, the two dropout masks
 * 2sbh); the rest is split T ways (24 sbh / T + 5 a s^2 b / T for GPT);
 * with SP all of it is. Full recomputation keeps the layer input, 2sbh,
 * split only by SP. With GQA and kv_heads < T the K and V activations
 * (4 s b x kv width) are those of one head per rank. Parameters,
 * gradients and optimizer states are the model's / T before the data-
 * parallel strategy shards them (cs_tensor_rank_model). Departures: the
 * norms' weights (and a row-parallel GEMM's bias) are replicated, not
 * split (under 0.1% of a layer); Megatron pads the vocabulary to a
 * multiple of 128 x T, here ceil(vocab / T) per rank; the SP all-gather's
 * full-sequence output, alive while the GEMM runs, is not added to the
 * memory timeline.
 */
#include "train/tensor.h"

#include <math.h>

#include "train/wbuild.h"

int cs_tensor_degree(const cs_training *t) { return t->tensor_parallel > 1 ? t->tensor_parallel : 1; }

int cs_tensor_sequence_parallel(const cs_training *t)
{
    return t->sequence_parallel >= 0 ? t->sequence_parallel != 0 : cs_tensor_degree(t) > 1;
}

int cs_tensor_async(const cs_training *t) { return t->async_tp && cs_tensor_degree(t) > 1; }

int cs_tensor_check(const cs_model *m, const cs_training *t, cs_diag *d)
{
    int T = cs_tensor_degree(t);
    if (T == 1) return 0;
    if (t->async_tp && !cs_tensor_sequence_parallel(t))
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "async_tp overlaps the sequence-parallel all-gathers and "
                           "reduce-scatters with the GEMMs: it needs sequence_parallel");
    if (m->generic) return 0; /* a generic layer has no heads to split */
    if (m->heads % T)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "tensor_parallel %d does not divide the %d attention heads of '%s'", T,
                           m->heads, m->name);
    if (m->ffn_hidden % T)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "tensor_parallel %d does not divide the MLP width %d of '%s'", T,
                           m->ffn_hidden, m->name);
    if (m->kv_heads < T && T % m->kv_heads)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "tensor_parallel %d is no multiple of the %d key-value heads of '%s' "
                           "(each head is replicated on T / kv_heads ranks)",
                           T, m->kv_heads, m->name);
    if (m->kv_heads >= T && m->kv_heads % T)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "tensor_parallel %d does not divide the %d key-value heads of '%s'", T,
                           m->kv_heads, m->name);
    return 0;
}

const cs_model *cs_tensor_rank_model(const cs_model *m, const cs_training *t, cs_model *buf)
{
    int T = cs_tensor_degree(t);
    if (T == 1) return m;
    *buf = *m;
    buf->params /= T;
    buf->layer_params /= T;
    buf->embedding_params /= T;
    buf->active_params /= T;
    buf->vocab = (m->vocab + T - 1) / T;
    return buf;
}

double cs_tensor_flops_share(const cs_training *t) { return 1.0 / cs_tensor_degree(t); }

double cs_tensor_activation_bytes_per_layer(const cs_model *m, const cs_training *t, int b,
                                            cs_ckpt mode)
{
    double whole = cs_model_activation_bytes_per_layer(m, b, mode);
    int T = cs_tensor_degree(t);
    if (T == 1) return whole;
    if (cs_tensor_sequence_parallel(t)) return whole / T;
    double sb = (double)m->seq_len * b, h = m->hidden;
    if (mode == CS_CKPT_FULL) return whole; /* the layer input, replicated */
    double replicated = 10 * sb * h;
    double split = whole - replicated;
    /* GQA with fewer kv heads than ranks: one kv head's K and V per rank */
    double kvw = h / m->heads * m->kv_heads, head = h / m->heads;
    double kv_rank = m->kv_heads < T ? 4 * sb * head : 4 * sb * kvw / T;
    if (m->generic) kv_rank = 4 * sb * kvw / T;
    return replicated + (split - 4 * sb * kvw) / T + kv_rank;
}

/* ---- the collectives per block ---- */

/* Activation bytes of the micro-batch: b x s x h in the compute dtype. */
static double activation_size(const cs_model *m, const cs_training *t)
{
    return (double)t->micro_batch * m->seq_len * m->hidden * cs_dtype_size(t->param_dtype);
}

int cs_tensor_layer_collectives(const cs_model *m, const cs_training *t, int backward,
                                cs_tensor_coll out[CS_TENSOR_COLLS_MAX])
{
    if (cs_tensor_degree(t) == 1) return 0;
    double size = activation_size(m, t);
    cs_dtype dt = t->param_dtype;
    /* the forward's collectives again when the backward recomputes it */
    int again = backward && t->checkpointing == CS_CKPT_FULL ? 1 : 0;
    const char *what = backward ? "tp bwd" : "tp fwd";
    if (!cs_tensor_sequence_parallel(t)) {
        out[0] = (cs_tensor_coll){CS_OP_ALL_REDUCE, size, dt, 2 + 2 * again, what};
        return 1;
    }
    out[0] = (cs_tensor_coll){CS_OP_ALL_GATHER, size, dt, (backward ? 4 : 2) + 2 * again, what};
    out[1] = (cs_tensor_coll){CS_OP_REDUCE_SCATTER, size, dt, 2 + 2 * again, what};
    return 2;
}

int cs_tensor_head_collectives(const cs_model *m, const cs_training *t, int backward,
                               cs_tensor_coll out[CS_TENSOR_COLLS_MAX])
{
    if (cs_tensor_degree(t) == 1) return 0;
    double size = activation_size(m, t);
    double tokens = (double)t->micro_batch * m->seq_len;
    cs_dtype dt = t->param_dtype;
    int sp = cs_tensor_sequence_parallel(t), n = 0;
    cs_op reduce = sp ? CS_OP_REDUCE_SCATTER : CS_OP_ALL_REDUCE;
    if (backward) {
        out[n++] = (cs_tensor_coll){reduce, size, dt, 1, "tp head bwd"};
        if (sp) out[n++] = (cs_tensor_coll){CS_OP_ALL_GATHER, size, dt, 1, "tp embedding bwd"};
        return n;
    }
    /* the embedding's reduction (its lookup is priced with the head) */
    out[n++] = (cs_tensor_coll){reduce, size, dt, 1, "tp embedding"};
    if (sp) out[n++] = (cs_tensor_coll){CS_OP_ALL_GATHER, size, dt, 1, "tp head"};
    out[n++] = (cs_tensor_coll){CS_OP_ALL_REDUCE, 4 * tokens, CS_DTYPE_FP32, 3, "tp loss"};
    return n;
}

/* ---- the graph ---- */

/* The rows' collectives on the tp group after task `after` (its start
 * under async TP), one task per run (as the framework issues them, and as
 * collsim-hw replays them); returns the last, or -1 when there is none. */
static int tp_collectives(cs_wbuild *b, int after, const cs_tensor_coll *row, int n, int layer)
{
    int c = -1;
    for (int r = 0; r < n; r++)
        for (int i = 0; i < row[r].count; i++) {
            c = cs__wb_collective(b, CS_STREAM_TP, b->micro, layer, row[r].op, row[r].size_bytes,
                                  row[r].dtype, CS_GROUP_TP, row[r].what);
            cs__wb_dep(b, c, after, cs_tensor_async(b->t));
        }
    return c;
}

int cs__tensor_layer(cs_wbuild *b, int l, int f, int backward)
{
    cs_tensor_coll row[CS_TENSOR_COLLS_MAX];
    int n = cs_tensor_layer_collectives(b->m, b->t, backward, row);
    return n ? tp_collectives(b, f, row, n, l) : -1;
}

int cs__tensor_head(cs_wbuild *b, int f, int backward)
{
    cs_tensor_coll row[CS_TENSOR_COLLS_MAX];
    int n = cs_tensor_head_collectives(b->m, b->t, backward, row);
    return n ? tp_collectives(b, f, row, n, -1) : -1;
}
