/* SPDX-License-Identifier: MIT */
/*
 * memreplay.c - one rank's allocation timeline of an iteration, in the
 * order the CPU issues it (the caching allocator sees requests in program
 * order: the frees of stream-ordered tensors are immediate), replayed
 * through allocator.c: the model states, the passes around the blocks
 * (a block's own tensors are memreplay_block.c's), FSDP's gathers and
 * reductions, the loss, gradients, the optimizer, and the driver that
 * reports the peaks (memreplay_impl.h holds what the two files share).
 * Streams as torch allocates on them (blocks are cached per stream):
 * compute 0, FSDP's all-gather stream 1, its reduce-scatter stream 2.
 * Two iterations are replayed, the second on the first's cache, as a run
 * of many steps settles.
 *
 * Per iteration, per micro-step:
 *   forward    per block, its op outputs (memreplay_block.c: the op table,
 *              what each checkpoint policy keeps, autocast's weight copies,
 *              activation offloading).
 *   loss       loss.c's held bytes per logit as two tensors (the logits in
 *              the compute dtype, the rest), its backward bytes as one.
 *   backward   per block in reverse, its backward (memreplay_block.c:
 *              a recomputing block's re-run, the gradient of each op's
 *              output), then the block's weight gradient.
 *   FSDP       (the strategy's row shards parameters over a group > 1)
 *              per unit of fsdp_unit_layers blocks, the root (embedding
 *              and head) gathered for the whole pass:
 *              FSDP1 (torch/distributed/fsdp/_flat_param.py): on the
 *              unshard stream _use_low_precision_shard allocates the
 *              low-precision shard, _alloc_padded_unsharded_flat_param the
 *              unsharded flat parameter, _free_low_precision_sharded_param
 *              frees the shard after the all-gather; _free_unsharded_flat_
 *              param calls _no_dispatch_record_stream before freeing, so the
 *              block returns to the cache only when the compute stream has
 *              used it: modelled as freed one unit later.
 *              _runtime_utils.py _post_backward_hook casts the gradient to
 *              reduce_dtype on the post-backward stream and
 *              _get_reduce_scatter_tensors allocates the new sharded
 *              gradient there (torch.empty_like(chunks[0])), which becomes
 *              the unit's sharded gradient.
 *              FSDP2 (torch/distributed/_composable/fsdp/_fsdp_collectives.py
 *              foreach_all_gather: the all-gather input and output on the
 *              all-gather streams; _fsdp_param_group.py
 *              FSDPParamGroup.wait_for_unshard copies out into the
 *              unsharded parameters, allocated on the compute stream and
 *              freed by reshard, then drops the output
 *              (self._all_gather_result = None; torch 2.3, the version of
 *              torchtitan PR #165; later versions keep it in
 *              comm_ctx.all_gather_state until the next all-gather);
 *              foreach_reduce allocates the reduce-scatter input and output
 *              on the reduce-scatter stream, the sharded gradients being
 *              views of the output). Backward prefetch (BACKWARD_PRE)
 *              gathers unit u - 1 before unit u's backward runs.
 *   other      DDP and ZeRO-1/2: per-layer gradients allocated in backward
 *              (zero_grad(set_to_none=True), torch 2.x's default, frees
 *              them after the step); the gradient buckets from the start;
 *              a gathered copy (shard_grad_op) held from forward to
 *              backward as one tensor.
 *   options    optimizer_in_backward (torchtune optimizer_in_bwd,
 *              recipes' _register_optim_in_bwd_hooks: a post-accumulate-
 *              grad hook per parameter runs its optimizer step and
 *              zero_grad): each block's gradients are stepped and freed in
 *              backward, with its states (lazily) and that step's
 *              intermediates; no step after backward.
 *              activation_offloading: memreplay_block.c. Their time is
 *              the iteration graph's (memopts.c).
 *   step       optimizer states per parameter tensor, allocated lazily at
 *              the first step (torch/optim/adam.py _init_group: exp_avg,
 *              exp_avg_sq zeros_like), then the foreach intermediates
 *              (memory.c's step temp) allocated as one list and freed.
 * Parameters are three tensors per block (FSDP2, DDP: per-parameter
 * tensors, grouped) or one flat tensor per unit (FSDP1's FlatParameter).
 * What it cannot see (and a block's own blind spots: memreplay_block.c):
 * cross-stream reuse timing beyond FSDP1's one-unit delay, CUDA graphs,
 * torch.compile's buffer reuse, and expandable_segments. Pipeline stages
 * do not replay (pipeline.c).
 */
#include "train/memreplay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "train/allocator.h"
#include "train/checkpoint.h"
#include "train/loss.h"
#include "train/memreplay_impl.h"
#include "train/strategy.h"
#include "train/tensor.h"

#ifndef CS_MR_ITERS
#define CS_MR_ITERS 2
#endif

/* The recorder (memreplay_impl.h). */
int cs__mr_take(cs__mr_rec *r, double bytes, int stream)
{
    if (bytes <= 0) return -1;
    int id = cs_allocator_alloc(r->a, bytes, stream);
    double res = cs_allocator_reserved(r->a);
    if (res > r->peak_res) {
        r->peak_res = res;
        r->peak_phase = r->phase;
        r->peak_layer = r->layer;
    }
    return id;
}

void cs__mr_give(cs__mr_rec *r, int *id)
{
    if (*id >= 0) cs_allocator_release(r->a, *id);
    *id = -1;
}

static void plan_init(cs__mr_plan *p, const cs_model *full, const cs_model *rank,
                      const cs_training *t, const cs_layout *l, const cs_memory *mem)
{
    memset(p, 0, sizeof *p);
    *p = (cs__mr_plan){.full = full, .rank = rank, .t = t, .mem = mem, .L = rank->layers};
    cs__mr_plan_ops(p);
    const cs_strategy_row *row = cs_strategy_row_of(t->strategy);
    double psi = l->params_per_rank > 0 ? l->params_per_rank : 1;
    double share = p->share = rank->layer_params / psi;
    p->param_layer = mem->params_bytes * share;
    p->grad_layer = mem->grads_bytes * share;
    p->opt_layer = mem->optimizer_bytes * share;
    p->root_share = rank->embedding_params / psi;
    double state = cs_training_master_copy(t) ? 4.0 : cs_dtype_size(cs_training_stored_dtype(t));
    p->opt_states = (int)(cs_training_optimizer_bytes_per_param(t) / state + 0.5);
    int n = l->params_degree;
    p->gathers = row->shards_params && n > 1;
    p->fsdp1 = t->fsdp_version == 1;
    p->reshard = p->gathers && cs_strategy_reshard_after_forward(t);
    p->unit_layers = t->fsdp_unit_layers <= 0 || t->fsdp_unit_layers > p->L ? p->L : t->fsdp_unit_layers;
    if (p->unit_layers < 1) p->unit_layers = 1;
    p->units = (p->L + p->unit_layers - 1) / p->unit_layers;
    p->nparams = p->fsdp1 && p->gathers ? (size_t)p->units : (size_t)p->L * CS__MR_NMATS;
    double ps = cs_dtype_size(t->param_dtype);
    p->unsharded_unit = p->unit_layers * rank->layer_params * ps;
    p->shard_unit = p->unsharded_unit / n;
    p->reduce_unit = p->unit_layers * rank->layer_params * cs_dtype_size(t->grad_reduce_dtype);
    p->running = cs_checkpoint_running_bytes(full, t);
    p->logits = (double)t->micro_batch * rank->seq_len * rank->vocab;
    p->cast_layer = cs_memory_autocast_copy_bytes(t, rank->layer_params);
}

static int *ids(size_t n)
{
    int *v = cs_xmalloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = -1;
    return v;
}

/* ---- FSDP's gathers and reductions (the file header) ---- */

static int unit_size(const cs__mr_plan *p, int u)
{
    int rest = p->L - u * p->unit_layers;
    return rest < p->unit_layers ? rest : p->unit_layers;
}

static void unshard(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v, int u)
{
    if (v->gathered[u] >= 0) return;
    double full = p->unsharded_unit / p->unit_layers * unit_size(p, u), shard = full * p->shard_unit / p->unsharded_unit;
    if (p->fsdp1) {
        int mp = cs_dtype_size(p->t->param_dtype) != cs_dtype_size(cs_training_stored_dtype(p->t))
                     ? cs__mr_take(r, shard, CS__MR_GATHER) : -1; /* _use_low_precision_shard */
        /* _alloc_padded_unsharded_flat_param */
        v->gathered[u] = cs__mr_take(r, full, CS__MR_GATHER);
        cs__mr_give(r, &mp);                                 /* _free_low_precision_sharded_param */
        return;
    }
    int in = cs__mr_take(r, shard, CS__MR_GATHER);
    int ag_out = cs__mr_take(r, full, CS__MR_GATHER);
    cs__mr_give(r, &in);
    v->gathered[u] = cs__mr_take(r, full, CS__MR_COMPUTE); /* wait_for_unshard's copy-out */
    cs__mr_give(r, &ag_out);                          /* then _all_gather_result = None */
}

static void reshard(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v, int u)
{
    if (!p->fsdp1) {
        cs__mr_give(r, &v->gathered[u]);
        return;
    }
    /* record_stream: cached once the compute stream is past it */
    cs__mr_give(r, &v->fsdp1_pending);
    v->fsdp1_pending = v->gathered[u];
    v->gathered[u] = -1;
}

/* The unit's unsharded gradient reduce-scattered into its sharded one.
 * The first output stays as the unit's sharded gradient, sized as
 * memory.c's gradient line has it (ZeRO's accounting: with FSDP's mixed
 * precision the fp32 gradient and fp32 parameter shard are counted as a
 * 16-bit gradient and parameter plus the master copy in the optimizer
 * line, the same 16 bytes per parameter); later ones are accumulated into
 * it and freed. */
static void reduce(cs__mr_rec *r, const cs__mr_plan *p, int *grad, double in, double out,
                   double keep, int *ugrad)
{
    const char *was = r->phase;
    r->phase = "backward (reduce-scatter)";
    int x = -1;
    if (!p->fsdp1 || cs_dtype_size(p->t->grad_reduce_dtype) != cs_dtype_size(p->t->param_dtype))
        /* FSDP1: the reduce_dtype cast; FSDP2: foreach_reduce's input */
        x = cs__mr_take(r, in, CS__MR_REDUCE);
    cs__mr_give(r, ugrad);
    /* FSDP1 new_sharded_grad; FSDP2 reduce_output */
    int o = cs__mr_take(r, *grad < 0 ? keep : out, CS__MR_REDUCE);
    cs__mr_give(r, &x);
    if (*grad < 0) *grad = o;
    else cs__mr_give(r, &o);
    r->phase = was;
}

/* ---- the optimizer ---- */

/* The optimizer states of parameter tensors k0..k1-1, where absent
 * (torch/optim/adam.py _init_group allocates them lazily, zeros_like). */
static void states_for(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v, size_t k0, size_t k1)
{
    size_t nparams = p->nparams + 1; /* the blocks' and the root's */
    double per = p->mem->optimizer_bytes / (p->opt_states > 0 ? p->opt_states : 1) /
                 (p->mem->params_bytes > 0 ? p->mem->params_bytes : 1);
    for (int s = 0; s < p->opt_states; s++)
        for (size_t k = k0; k < k1; k++) {
            int *o = &v->opt[s * nparams + k];
            if (*o < 0)
                *o = cs__mr_take(r, cs_allocator_block_bytes(r->a, v->params[k]) * per,
                                 CS__MR_COMPUTE);
        }
}

/* optimizer_in_backward: parameters k0..k1-1 stepped as their gradients
 * are made (torchtune's optimizer_in_bwd: a post-accumulate-grad hook
 * steps one parameter's optimizer and sets its grad to None): their
 * states, the step's intermediates over them, then their gradients
 * freed. */
static void step_now(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v, size_t k0, size_t k1,
                     double share, int *grads, int ngrads)
{
    const char *was = r->phase;
    r->phase = "optimizer step in backward";
    states_for(r, p, v, k0, k1);
    int x = cs__mr_take(r, p->mem->step_temp_bytes * share, CS__MR_COMPUTE);
    cs__mr_give(r, &x);
    for (int g = 0; g < ngrads; g++) cs__mr_give(r, &grads[g]);
    r->phase = was;
}

/* ---- one pass ---- */

static void forward(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v)
{
    r->phase = "forward";
    r->layer = -1;
    if (p->gathers && v->root < 0)
        v->root = cs__mr_take(r, p->rank->embedding_params * cs_dtype_size(p->t->param_dtype),
                              CS__MR_GATHER);
    else if (!p->gathers && p->mem->unsharded_bytes > 0 && v->copy < 0)
        v->copy = cs__mr_take(r, p->mem->unsharded_bytes, CS__MR_GATHER);
    for (int i = 0; i < p->L; i++) {
        int u = i / p->unit_layers;
        if (p->gathers && i % p->unit_layers == 0) unshard(r, p, v, u);
        cs__mr_forward_block(r, p, v, i);
        if (p->reshard && (i + 1 == p->L || (i + 1) % p->unit_layers == 0)) reshard(r, p, v, u);
    }
    /* the loss (loss.c's row): the head's output, its upcast; the input the
     * loss or its caller keeps, then what the loss saves */
    r->phase = "loss";
    cs_loss_steps ls = cs_loss_steps_of(p->t);
    int in = cs__mr_take(r, p->logits * cs_dtype_size(p->t->param_dtype), CS__MR_COMPUTE);
    if (ls.upcast_bytes > 0) {
        int up = cs__mr_take(r, p->logits * ls.upcast_bytes, CS__MR_COMPUTE);
        cs__mr_give(r, &in);
        in = up;
    }
    cs__mr_give(r, &v->loss[0]); /* the caller's previous logits, replaced */
    v->loss[1] = cs__mr_take(r, p->logits * (cs_loss_held_bytes(p->t) - ls.input_bytes),
                             CS__MR_COMPUTE);
    if (ls.input_bytes > 0) v->loss[0] = in;
    else cs__mr_give(r, &in);
}

static void layer_grads(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v, int i)
{
    for (int k = 0; k < CS__MR_NMATS; k++) {
        int *g = &v->grads[(size_t)i * CS__MR_NMATS + k];
        if (*g < 0) *g = cs__mr_take(r, p->grad_layer * p->mat[k] / p->matsum, CS__MR_COMPUTE);
    }
}

static void backward(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v)
{
    const cs_training *t = p->t;
    int ugrad = -1, root_ugrad = -1;
    r->phase = "loss backward";
    r->layer = -1;
    v->loss[2] = cs__mr_take(r, p->logits * cs_loss_backward_bytes(t), CS__MR_COMPUTE);
    if (!t->hold_logits) cs__mr_give(r, &v->loss[0]); /* else replaced by the next forward's */
    cs__mr_give(r, &v->loss[1]);
    /* naive: the upcast's backward makes the e-byte gradient once nll_loss's
     * fp32 one is freed, from that freed block (the large pool splits a
     * cached block): the backward's block stands for both until the head's
     * backward, one allocation fewer per micro-step (tools/bench-main.sh) */
    double ps = cs_dtype_size(t->param_dtype), n = p->unsharded_unit / p->shard_unit;
    double root_grad = p->mem->grads_bytes * p->root_share;
    if (p->gathers)
        root_ugrad = cs__mr_take(r, p->rank->embedding_params * ps, CS__MR_COMPUTE);
    else if (v->root_grad < 0)
        v->root_grad = cs__mr_take(r, root_grad, CS__MR_COMPUTE);
    v->carry = cs__mr_take(r, p->logits / p->rank->vocab * p->rank->hidden * ps, CS__MR_COMPUTE);
    cs__mr_give(r, &v->loss[2]);
    for (int i = p->L - 1; i >= 0; i--) {
        int u = i / p->unit_layers;
        if (p->gathers && (i + 1 == p->L || (i + 1) % p->unit_layers == 0)) {
            r->phase = "backward (all-gather)";
            r->layer = i;
            unshard(r, p, v, u);
            if (u > 0 && t->backward_prefetch != CS_PREFETCH_NONE) unshard(r, p, v, u - 1);
            ugrad = cs__mr_take(r, p->unsharded_unit / p->unit_layers * unit_size(p, u),
                                CS__MR_COMPUTE);
        }
        cs__mr_backward_block(r, p, v, i);
        if (!p->gathers) {
            layer_grads(r, p, v, i);
            if (t->optimizer_in_backward)
                step_now(r, p, v, (size_t)i * CS__MR_NMATS, (size_t)(i + 1) * CS__MR_NMATS,
                         p->share, &v->grads[(size_t)i * CS__MR_NMATS], CS__MR_NMATS);
        }
        if (p->gathers && i % p->unit_layers == 0) {
            double in = p->reduce_unit / p->unit_layers * unit_size(p, u);
            reshard(r, p, v, u);
            reduce(r, p, &v->grads[u], in, in / n, p->grad_layer * unit_size(p, u), &ugrad);
            if (t->optimizer_in_backward) {
                size_t k0 = p->fsdp1 ? (size_t)u : (size_t)i * CS__MR_NMATS;
                size_t k1 = p->fsdp1 ? (size_t)u + 1 : (size_t)(i + unit_size(p, u)) * CS__MR_NMATS;
                step_now(r, p, v, k0, k1, p->share * unit_size(p, u), &v->grads[u], 1);
            }
        }
    }
    cs__mr_give(r, &v->carry);
    if (p->gathers) {
        double in = p->rank->embedding_params * cs_dtype_size(t->grad_reduce_dtype);
        reduce(r, p, &v->root_grad, in, in / n, root_grad, &root_ugrad);
        cs__mr_give(r, &v->root);
        cs__mr_give(r, &v->fsdp1_pending);
    }
    cs__mr_give(r, &v->copy);
    if (t->optimizer_in_backward) /* the root's (embedding, head) last: tied, it accumulates twice */
        step_now(r, p, v, p->nparams, p->nparams + 1, p->root_share, &v->root_grad, 1);
}

/* ---- states, the step, the driver ---- */

static void states(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v)
{
    r->phase = "model states";
    r->layer = -1;
    if (p->fsdp1 && p->gathers)
        for (int u = 0; u < p->units; u++)
            v->params[u] = cs__mr_take(r, p->param_layer * unit_size(p, u), CS__MR_COMPUTE);
    else
        for (int i = 0; i < p->L; i++)
            for (int k = 0; k < CS__MR_NMATS; k++)
                v->params[(size_t)i * CS__MR_NMATS + k] =
                    cs__mr_take(r, p->param_layer * p->mat[k] / p->matsum, CS__MR_COMPUTE);
    v->root = -1;
    v->params[p->nparams] = cs__mr_take(r, p->mem->params_bytes * p->root_share, CS__MR_COMPUTE);
    double b = p->mem->buckets_bytes, cap = p->t->bucket_cap_bytes > 0 ? p->t->bucket_cap_bytes : b;
    int nb = cap > 0 ? (int)(b / cap + 0.999999) : 0;
    if (nb > (int)(sizeof v->buckets / sizeof v->buckets[0])) nb = sizeof v->buckets / sizeof v->buckets[0];
    for (int k = 0; k < nb; k++) v->buckets[v->nbuckets++] = cs__mr_take(r, b / nb, CS__MR_COMPUTE);
}

/* The optimizer step: the states at the first, the foreach intermediates
 * as one list; then zero_grad(set_to_none=True). With
 * optimizer_in_backward all of it ran in backward. */
static void step(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v)
{
    r->phase = "optimizer step";
    r->layer = -1;
    if (p->t->optimizer_in_backward) return;
    states_for(r, p, v, 0, p->nparams + 1);
    double temp = p->mem->step_temp_bytes;
    if (temp > 0) {
        int *x = ids((size_t)p->L + 1);
        for (int i = 0; i < p->L; i++) x[i] = cs__mr_take(r, temp * p->share, CS__MR_COMPUTE);
        x[p->L] = cs__mr_take(r, temp * p->root_share, CS__MR_COMPUTE);
        for (int i = 0; i <= p->L; i++) cs__mr_give(r, &x[i]);
        free(x);
    }
    for (size_t k = 0; k < (size_t)p->L * CS__MR_NMATS; k++) cs__mr_give(r, &v->grads[k]);
    cs__mr_give(r, &v->root_grad);
}

void cs_memreplay_run(const cs_model *m, const cs_training *t, const cs_layout *l,
                      const cs_memory *mem, double capacity_bytes, cs_memreplay *out)
{
    cs_model buf;
    const cs_model *rank = cs_tensor_rank_model(m, t, &buf);
    cs__mr_plan p;
    plan_init(&p, m, rank, t, l, mem);
    cs__mr_plan_blocks(&p);
    cs__mr_rec r = {.a = cs_allocator_new(capacity_bytes), .phase = "model states", .layer = -1};
    size_t nparams = p.nparams + 1;
    cs__mr_live v = {.kept = ids((size_t)p.L * CS__MR_NOPS), .params = ids(nparams),
              .grads = ids((size_t)p.L * CS__MR_NMATS),
              .opt = ids(nparams * (size_t)(p.opt_states + 1)),
              .gathered = ids((size_t)p.units), .cast = ids((size_t)p.L),
              .root = -1, .root_grad = -1, .fsdp1_pending = -1, .carry = -1, .copy = -1,
              .loss = {-1, -1, -1}};
    states(&r, &p, &v);
    int micro = t->grad_accum > 1 ? 2 : 1;
    for (int it = 0; it < CS_MR_ITERS; it++) {
        for (int k = 0; k < micro; k++) {
            forward(&r, &p, &v);
            backward(&r, &p, &v);
        }
        step(&r, &p, &v);
    }
    out->peak_allocated_bytes = cs_allocator_peak_allocated(r.a);
    out->peak_reserved_bytes = cs_allocator_peak_reserved(r.a);
    out->out_of_memory = cs_allocator_out_of_memory(r.a);
    if (r.peak_layer >= 0)
        snprintf(out->peak_phase, sizeof out->peak_phase, "%s, layer %d", r.peak_phase, r.peak_layer);
    else
        snprintf(out->peak_phase, sizeof out->peak_phase, "%s", r.peak_phase ? r.peak_phase : "none");
    cs_allocator_delete(r.a);
    free(v.kept);
    free(v.params);
    free(v.grads);
    free(v.opt);
    free(v.gathered);
    free(v.cast);
}
