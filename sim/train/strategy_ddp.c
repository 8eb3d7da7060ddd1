/* SPDX-License-Identifier: MIT */
/*
 * strategy_ddp.c - the DDP family's row: torch.nn.parallel.
 * DistributedDataParallel, and its gradient buckets, which ZeRO-1 runs
 * under (strategy_zero.c).
 *
 * Model (Li et al. 2020, "PyTorch Distributed", VLDB 13(12), Sec 3.2):
 * every rank holds the whole model, gradients and optimizer states (ZeRO's
 * baseline, 16 Psi with mixed-precision Adam). Gradients fill buckets in
 * reverse registration order (first bucket first_bucket_mb, then
 * bucket_cap_mb); a bucket's all_reduce starts when its last gradient is
 * ready and overlaps the rest of backward; with gradient accumulation only
 * the last micro-batch communicates (no_sync). Memory: torch's Reducer
 * allocates bucket buffers covering every gradient at construction; with
 * gradient_as_bucket_view False (the default) param.grad is a second copy,
 * so the buckets add one gradient-sized buffer (pytorch PR #41954: turning
 * views on saved ~1 GB of peak on a ~1 GB model); with views on they add
 * nothing. bucket_cap only sets how the same bytes are cut.
 * Copies (torch/csrc/distributed/c10d/reducer.cpp): when a gradient is
 * ready, mark_variable_ready_dense writes it into its bucket divided by
 * the world size (at::mul_out(bucket_view, grad, 1 / div_factor): read +
 * write, on the stream that produced it, the compute stream); after the
 * all-reduces, finalize_backward waits for every bucket and
 * finalize_bucket_dense copies each back into param.grad (grad.copy_
 * (bucket_view)) unless gradient_as_bucket_view makes .grad the bucket
 * itself. Both run only when the reducer runs: the last micro-batch (the
 * others are no_sync).
 * Departure: buckets are cut by bytes alone, so one layer's gradients may
 * straddle two buckets (torch never splits a tensor); a bucket is ready
 * when the backward of the layer that fills it ends.
 */
#include <math.h>
#include <stdlib.h>

#include "train/strategy.h"
#include "train/wbuild.h"

/* Cuts the gradients, in the order backward completes them, into
 * buckets: sizes[k], ready[k] = the task after which bucket k is full,
 * and counts[k] = how many buckets of that size and ready task follow one
 * another (a run of more than b->run_max whole buckets inside one group's
 * gradients is one entry, so there are at most run_max + 2 entries per
 * group whatever the model's size). grad_bytes are on-the-wire bytes; the
 * caps count bucket bytes, `scale` = wire / bucket bytes per element (a
 * compress hook's 2 / 4). Returns the number of entries; caller frees the
 * three arrays. */
static int make_buckets(const cs_wbuild *b, const cs_training *t, const double *grad_bytes,
                        const int *ready_task, int ngroups, double scale, double **sizes,
                        int **ready, double **counts)
{
    int cap = 16, nb = 0;
    double *sz = cs_xmalloc((size_t)cap * sizeof *sz);
    int *rd = cs_xmalloc((size_t)cap * sizeof *rd);
    double *ct = cs_xmalloc((size_t)cap * sizeof *ct);
    double limit = t->first_bucket_bytes * scale, fill = 0;
    for (int i = 0; i < ngroups; i++) {
        double left = grad_bytes[i];
        while (left > 0) {
            double n = nb > 0 && fill == 0 ? cs__wb_whole(left, limit) : 0;
            if (n > b->run_max) { /* whole buckets, as one entry */
                fill = limit;
                left -= n * limit;
            } else {
                n = 1;
                double take = fmin(left, limit - fill);
                fill += take;
                left -= take;
            }
            if (fill >= limit || (i == ngroups - 1 && left <= 0)) {
                if (nb == cap) {
                    cap *= 2;
                    sz = cs_xrealloc(sz, (size_t)cap * sizeof *sz);
                    rd = cs_xrealloc(rd, (size_t)cap * sizeof *rd);
                    ct = cs_xrealloc(ct, (size_t)cap * sizeof *ct);
                }
                sz[nb] = fill;
                rd[nb] = ready_task[i];
                ct[nb] = n;
                nb++;
                fill = 0;
                limit = t->bucket_cap_bytes * scale;
            }
        }
    }
    *sizes = sz;
    *ready = rd;
    *counts = ct;
    return nb;
}

/* Bytes moved per parameter when its gradient enters its bucket:
 * mark_variable_ready_dense's copy (read + write in the bucket dtype, the
 * stored one), then with a compress hook the hook's cast of the bucket
 * (bucket.buffer().to(bf16): read 4, write 2) and its div_ (read + write
 * 2); default_hooks.py _compress_hook. The hook runs per bucket when the
 * bucket is full; here it is priced with the copy of each gradient. */
static double copy_in_per_param(const cs_training *t)
{
    double s = cs_dtype_size(cs_training_stored_dtype(t));
    if (t->ddp_comm_hook == CS_HOOK_NONE) return 2 * s;
    double w = cs_dtype_size(cs_training_bucket_wire_dtype(t));
    return 2 * s + (s + w) + 2 * w;
}

/* The gradients of `params` parameters written into their buckets, after
 * task `after`; they are ready once the copy is done (ready_task[k]). */
static int copy_in(cs_wbuild *b, int layer, double params, int after, int k)
{
    int copy = cs__wb_memory(b, CS_STREAM_COMPUTE, layer, params * copy_in_per_param(b->t),
                             "bucket copy-in");
    cs__wb_dep(b, copy, after, 0);
    b->ready_task[k] = copy;
    return copy;
}

/* The layer's backward, then (in the last micro-batch) its gradients
 * written into their buckets: the buckets are ready after the copy.
 * Layer 0's copy carries the root unit's gradients too. An untied head's
 * gradient is ready first (its autograd hook fires as the head's backward
 * ends: reducer.cpp autograd_hook -> mark_variable_ready), so its copy
 * runs before the last layer's backward, and it fills the first bucket:
 * buckets follow the order gradients become ready (DDP rebuilds them in
 * that order after the first iteration: reducer.cpp rebuild_buckets,
 * rebuilt_params_ computed from the ready order; distributed.py
 * _compute_bucket_assignment_by_size takes the params reversed, lm_head
 * first, even before). */
void cs__ddp_backward_unit(cs_wbuild *b, int l)
{
    if (b->last_micro && l == b->layers - 1 && b->head_params > 0)
        copy_in(b, -1, b->head_params, b->head_bwd, 0); /* the head's ready entry is 0 */
    int id = cs__wb_backward(b, l);
    if (!b->last_micro) return;
    const cs_model *m = b->m;
    double params = m->layer_params + (l == 0 ? m->embedding_params - b->head_params : 0);
    int copy = copy_in(b, l, params, id, b->nready - 1);
    if (l == 0) b->grads_done = copy;
}

void cs__ddp_reduce_buckets(cs_wbuild *b)
{
    if (!b->last_micro) return;
    const cs_training *t = b->t;
    int last = -1;
    double *sizes;
    int *ready;
    double scale = b->grad_size / cs_dtype_size(cs_training_stored_dtype(t));
    double *counts, first = 0; /* the first bucket's number in the entry */
    int nb = make_buckets(b, t, b->ready_bytes, b->ready_task, b->nready, scale, &sizes, &ready,
                          &counts);
    for (int k = 0; k < nb; k++) {
        char what[40];
        cs__wb_name_range(b, what, sizeof what, "bucket", first, first + counts[k] - 1);
        first += counts[k];
        /* bucket tensors are static (cs_memory.buckets_bytes) */
        int r = cs__wb_collective(b, CS_STREAM_COMM, b->micro, -1, b->row->grad_op, sizes[k],
                                  cs_training_bucket_wire_dtype(t), b->shard, what);
        if (counts[k] > 1) cs__wb_repeat(b, r, counts[k]);
        cs__wb_dep(b, r, ready[k], 0);
        last = r;
    }
    free(sizes);
    free(ready);
    free(counts);
    /* finalize_bucket_dense: the buckets back into .grad, once all are
     * reduced (one stream runs the buckets in order: the last suffices);
     * a compress hook's decompress (copy_ of the reduced 16-bit bucket
     * into the bucket: read w, write s) runs first, priced here too */
    double s = cs_dtype_size(cs_training_stored_dtype(t)), w = b->grad_size;
    double per = (t->gradient_as_bucket_view ? 0 : 2 * s) +
                 (t->ddp_comm_hook != CS_HOOK_NONE ? w + s : 0);
    if (per > 0) {
        int out = cs__wb_memory(b, CS_STREAM_COMPUTE, -1, per * b->m->params, "bucket copy-out");
        cs__wb_dep(b, out, last, 0);
    }
}

void cs__ddp_bucket_memory(const cs_model *m, const cs_training *t, const cs_layout *l,
                           cs_strategy_mem *out)
{
    (void)l;
    /* the buckets take the gradients' dtype (reducer.cpp
     * initialize_buckets: at::empty of the first param's options) */
    if (!t->gradient_as_bucket_view)
        out->buckets_bytes = m->params * cs_dtype_size(cs_training_stored_dtype(t));
}

/* DeepSpeed's ZeRO stage 0 ("disabled": plain data parallel,
 * deepspeed/runtime/zero/config.py) is DDP. */
const cs_strategy_row cs__strategy_ddp = {
    .aliases = (const char *const[]){"zero0", NULL},
    .color = "#0072B2", /* blue */
    .knobs = CS_KNOBS_BUCKETS,
    .autocast = 1,
    .grad_op = CS_OP_ALL_REDUCE,
    .accumulates_grads = 1, /* no_sync: param.grad accumulates (compute.c) */
    .memory_terms = cs__ddp_bucket_memory,
    .backward_unit = cs__ddp_backward_unit,
    .post_backward = cs__ddp_reduce_buckets,
};
