/* SPDX-License-Identifier: MIT */
/*
 * memreplay.c - one rank's allocation timeline of an iteration, in the
 * order the CPU issues it (the caching allocator sees requests in program
 * order: the frees of stream-ordered tensors are immediate), replayed
 * through allocator.c. Streams as torch allocates on them (blocks are
 * cached per stream): compute 0, FSDP's all-gather stream 1, its
 * reduce-scatter stream 2. Two iterations are replayed, the second on
 * the first's cache, as a run of many steps settles.
 *
 * Per iteration, per micro-step:
 *   forward    per block, the op outputs of a transformer block (the op
 *              table below: norms, q/k/v, rotary, attention, output
 *              projection, residuals, the MLP's GEMMs and activation);
 *              what autograd saves stays, the rest is freed once its
 *              consumer ran. Sizes follow the table's per-token widths,
 *              scaled so that what a block keeps is exactly checkpoint.c's
 *              kept bytes (the analytic line) and what it holds while
 *              running its running bytes. Whole-block checkpointing keeps
 *              one tensor (the input) and frees every op output once its
 *              consumer ran; the per-op policy keeps the outputs
 *              checkpoint.c's header lists (input, wq, wv, attention, w1,
 *              w2 / fc1) and frees the rest; under compile a block that does
 *              not recompute whole keeps what Inductor's partition saves
 *              (checkpoint.c; the op table's c column), and its backward
 *              re-allocates nothing (the recompute is fused).
 *   loss       loss.c's held bytes per logit as two tensors (the logits in
 *              the compute dtype, the rest), its backward bytes as one.
 *   backward   per block in reverse: a recomputing block first re-allocates
 *              what its policy dropped; then per op in reverse the gradient
 *              of its output (the size of the output), freeing the
 *              saved tensor and the gradient before it; the block's weight
 *              gradient. amp's autocast weight copies (cached_cast, kept
 *              for backward) are freed as their block's backward ends.
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
 *              activation_offloading (torchtune OffloadActivations, a
 *              saved_tensors_hooks pair): what a block saves goes to the host
 *              after its forward (its device blocks back to the cache) and
 *              is fetched back before its backward. Neither one's time
 *              (host copies, overlapped on their own stream) is modelled.
 *   step       optimizer states per parameter tensor, allocated lazily at
 *              the first step (torch/optim/adam.py _init_group: exp_avg,
 *              exp_avg_sq zeros_like), then the foreach intermediates
 *              (memory.c's step temp) allocated as one list and freed.
 * Parameters are three tensors per block (FSDP2, DDP: per-parameter
 * tensors, grouped) or one flat tensor per unit (FSDP1's FlatParameter).
 * What it cannot see: the autograd engine's own temporaries inside an
 * op's backward (matmul workspaces, the grad of a view), the exact order
 * within a block's backward (a transpose's saved copy, grad
 * accumulation of the residual branch), cross-stream reuse timing beyond
 * FSDP1's one-unit delay, CUDA graphs, torch.compile's buffer reuse, and
 * expandable_segments. Pipeline stages do not replay (pipeline.c).
 */
#include "train/memreplay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "train/allocator.h"
#include "train/checkpoint.h"
#include "train/loss.h"
#include "train/strategy.h"
#include "train/tensor.h"

enum { S_COMPUTE, S_GATHER, S_REDUCE };
#ifndef CS_MR_ITERS
#define CS_MR_ITERS 2
#endif

/* One op's output in a block: per-token width in hidden (h), key/value
 * (kv) and MLP (f) units; saved: autograd saves it without checkpointing
 * (or a later op saves it as its input); op: torchtitan's per-op policy
 * saves it; mlp: 0 any block, 1 gated (SwiGLU) only, 2 GeLU only; c: the
 * share of the output Inductor's partition saves under compile
 * (checkpoint.c's header: the input, rotary q, k, v, the attention, the
 * residual stream but not the second norm, w1 / fc1, w3 but not the
 * activation or the gate product). */
typedef struct block_op {
    double h, kv, f;
    unsigned char saved, op, mlp;
    double c;
} block_op;

static const block_op ops[] = {
    {1, 0, 0, 1, 1, 0, 1},       /* the block's input (held by a checkpoint) */
    {1, 0, 0, 1, 0, 0, 0},       /* attention norm */
    {1, 0, 0, 1, 1, 0, 0},       /* wq */
    {0, 1, 0, 1, 0, 0, 0},       /* wk */
    {0, 1, 0, 1, 1, 0, 1},       /* wv */
    {1, 1, 0, 1, 0, 0, 1},       /* rotary q, k */
    {1, 0, 0, 1, 1, 0, 1},       /* attention (+ its logsumexp) */
    {1, 0, 0, 0, 0, 0, 0},       /* wo */
    {2, 0, 0, 1, 0, 0, 0.5},     /* residual add, ffn norm */
    {0, 0, 1, 1, 1, 0, 1},       /* w1 / fc1 */
    {0, 0, 3, 1, 0, 1, 1.0 / 3}, /* w3, activation, gate product */
    {0, 0, 1, 1, 0, 2, 0},       /* activation */
    {1, 0, 0, 0, 1, 1, 0},       /* w2 (SwiGLU: saved by the per-op policy) */
    {1, 0, 0, 0, 0, 2, 0},       /* fc2 */
    {1, 0, 0, 0, 0, 0, 0},       /* residual add: the block's output */
};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

/* A block's parameters as three tensors, in h x (h, kv, f) units: the
 * attention's projections (wq, wk, wv, wo), the MLP's two matrices, the
 * gated MLP's third (w3); the norms' weights ride with them. Coarser than
 * torch's one tensor per matrix (a bound on the replay's cost). */
static const block_op mats[] = {{2, 2, 0, 0, 0, 0, 0}, {0, 0, 2, 0, 0, 0, 0}, {0, 0, 1, 0, 0, 1, 0}};
#define NMATS ((int)(sizeof mats / sizeof mats[0]))

typedef struct rp {
    cs_allocator *a;
    const char *phase;
    int layer;
    double peak_res;
    const char *peak_phase;
    int peak_layer;
} rp;

static int take(rp *r, double bytes, int stream)
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

static void give(rp *r, int *id)
{
    if (*id >= 0) cs_allocator_release(r->a, *id);
    *id = -1;
}

/* Everything the replay derives once. */
typedef struct plan {
    const cs_model *full, *rank;
    const cs_training *t;
    const cs_memory *mem;
    int L, gathers, fsdp1, reshard, unit_layers, units, opt_states;
    size_t nparams;       /* parameter tensors of the blocks (the root's is one more) */
    double w[NOPS];       /* per-token width of each op's output (0: not in this block) */
    double wsaved, wop, wc; /* widths saved without checkpointing / by the per-op
                             * policy / by Inductor's partition */
    double running;       /* checkpoint.c's running bytes of a block */
    double share;         /* one block's share of the rank's states */
    double param_layer, grad_layer, opt_layer, mat[NMATS], matsum;
    double unsharded_unit, shard_unit, reduce_unit, root_share;
    double logits, cast_layer;
    double sk[2];         /* kept_scale of a block that does not / does recompute */
    int mode[2];
} plan;

static double width(const block_op *o, const cs_model *m)
{
    double kv = (double)m->hidden / m->heads * m->kv_heads;
    return o->h * m->hidden + o->kv * kv + o->f * m->ffn_hidden;
}

static void plan_ops(plan *p)
{
    const cs_model *m = p->rank;
    for (int k = 0; k < NOPS; k++) {
        int skip = (ops[k].mlp == 1 && !m->gated_mlp) || (ops[k].mlp == 2 && m->gated_mlp);
        p->w[k] = skip ? 0 : width(&ops[k], m);
        if (ops[k].saved) p->wsaved += p->w[k];
        if (ops[k].op) p->wop += p->w[k];
        p->wc += p->w[k] * ops[k].c;
    }
    for (int k = 0; k < NMATS; k++) {
        p->mat[k] = mats[k].mlp == 1 && !m->gated_mlp ? 0 : width(&mats[k], m) * m->hidden;
        p->matsum += p->mat[k];
    }
}

static void plan_init(plan *p, const cs_model *full, const cs_model *rank, const cs_training *t,
                      const cs_layout *l, const cs_memory *mem)
{
    memset(p, 0, sizeof *p);
    *p = (plan){.full = full, .rank = rank, .t = t, .mem = mem, .L = rank->layers};
    plan_ops(p);
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
    p->nparams = p->fsdp1 && p->gathers ? (size_t)p->units : (size_t)p->L * NMATS;
    double ps = cs_dtype_size(t->param_dtype);
    p->unsharded_unit = p->unit_layers * rank->layer_params * ps;
    p->shard_unit = p->unsharded_unit / n;
    p->reduce_unit = p->unit_layers * rank->layer_params * cs_dtype_size(t->grad_reduce_dtype);
    p->running = cs_checkpoint_running_bytes(full, t);
    p->logits = (double)t->micro_batch * rank->seq_len * rank->vocab;
    p->cast_layer = cs_memory_autocast_copy_bytes(t, rank->layer_params);
}

/* The state of one replay: the ids of what is live. */
typedef struct live {
    int *kept;     /* L x NOPS saved tensors of each block */
    int *params;   /* L x NMATS (FSDP1: units, one each) */
    int *grads;    /* L x NMATS, or units for FSDP */
    int *opt;      /* L x NMATS x opt_states */
    int *gathered; /* per unit: its unsharded parameters (FSDP2: compute stream) */
    int *cast;     /* per layer: autocast's weight copy */
    int root, root_grad, fsdp1_pending, carry, buckets[64], nbuckets, copy;
    int loss[3];
} live;

static int *ids(size_t n)
{
    int *v = cs_xmalloc((n ? n : 1) * sizeof *v);
    for (size_t i = 0; i < n; i++) v[i] = -1;
    return v;
}

/* Which op outputs block `layer` keeps, and scaled to what. */
static double kept_scale(const plan *p, int layer, int *mode)
{
    const cs_training *t = p->t;
    double kept = cs_checkpoint_kept_bytes(p->full, t, layer);
    if (cs_checkpoint_layer_recomputes(t, layer) && cs_checkpoint_recomputes_whole(t)) {
        *mode = 2; /* the input alone */
        return kept / p->w[0];
    }
    if (t->checkpointing == CS_CKPT_SELECTIVE && t->selective_ac == CS_SAC_OP) {
        *mode = 1;
        return kept / p->wop;
    }
    if (t->compile) {
        *mode = 3; /* Inductor's partition (checkpoint.c) */
        return kept / p->wc;
    }
    *mode = 0;
    return kept / p->wsaved;
}

static int keeps(int mode, int k)
{
    return mode == 3 ? ops[k].c > 0 : mode == 2 ? k == 0 : mode == 1 ? ops[k].op : ops[k].saved;
}

/* The bytes op k's kept output takes in a block of the given kind. */
static double kept_size(const plan *p, int kind, int k)
{
    return p->w[k] * (p->mode[kind] == 3 ? ops[k].c : 1) * p->sk[kind];
}

/* Whether a block's backward re-runs forward ops its policy dropped before
 * their gradients (whole-block and per-op checkpointing; Inductor's own
 * recompute is fused into the backward's kernels). */
static int rematerializes(int mode) { return mode == 1 || mode == 2; }

/* The two kinds of block (checkpoint.c: a block's kept bytes depend only
 * on whether it recomputes), computed once per replay. */
static void plan_blocks(plan *p)
{
    int seen[2] = {0, 0};
    for (int i = 0; i < p->L && !(seen[0] && seen[1]); i++) {
        int k = cs_checkpoint_layer_recomputes(p->t, i) != 0;
        if (!seen[k]) p->sk[k] = kept_scale(p, i, &p->mode[k]), seen[k] = 1;
    }
}

static int block_kind(const plan *p, int layer) { return cs_checkpoint_layer_recomputes(p->t, layer) != 0; }

static void forward_block(rp *r, const plan *p, live *v, int layer)
{
    int kind = block_kind(p, layer), mode = p->mode[kind];
    double sr = p->running / p->wsaved;
    int *kept = v->kept + (size_t)layer * NOPS, prev = -1;
    r->phase = "forward";
    r->layer = layer;
    if (p->cast_layer > 0) v->cast[layer] = take(r, p->cast_layer, S_COMPUTE);
    for (int k = 0; k < NOPS; k++) {
        if (p->w[k] <= 0) continue;
        if (keeps(mode, k)) {
            kept[k] = take(r, kept_size(p, kind, k), S_COMPUTE);
            continue;
        }
        int x = take(r, p->w[k] * sr, S_COMPUTE); /* consumed by the next op, then freed */
        give(r, &prev);
        prev = x;
    }
    give(r, &prev);
    if (p->t->activation_offloading) /* copied to the host: the device blocks go back to the cache */
        for (int k = 0; k < NOPS; k++) give(r, &kept[k]);
}

static void backward_block(rp *r, const plan *p, live *v, int layer)
{
    int kind = block_kind(p, layer), mode = p->mode[kind];
    double sr = p->running / p->wsaved;
    int *kept = v->kept + (size_t)layer * NOPS, re[NOPS];
    r->layer = layer;
    if (p->t->activation_offloading) { /* fetched back from the host for this block */
        r->phase = "backward (fetch offloaded)";
        for (int k = 0; k < NOPS; k++)
            if (p->w[k] > 0 && keeps(mode, k)) kept[k] = take(r, kept_size(p, kind, k), S_COMPUTE);
    }
    r->phase = "backward (recompute)";
    for (int k = 0; k < NOPS; k++) /* what the policy dropped, re-run */
        re[k] = rematerializes(mode) && ops[k].saved && !keeps(mode, k) && p->w[k] > 0
                    ? take(r, p->w[k] * sr, S_COMPUTE) : -1;
    r->phase = "backward";
    for (int k = NOPS - 1; k >= 0; k--) {
        if (p->w[k] <= 0) continue;
        int g = take(r, p->w[k] * sr, S_COMPUTE); /* the gradient of the op's input */
        give(r, &v->carry);
        v->carry = g;
        give(r, &kept[k]);
        give(r, &re[k]);
    }
    if (p->cast_layer > 0) give(r, &v->cast[layer]);
}

/* ---- FSDP's gathers and reductions (the file header) ---- */

static int unit_size(const plan *p, int u)
{
    int rest = p->L - u * p->unit_layers;
    return rest < p->unit_layers ? rest : p->unit_layers;
}

static void unshard(rp *r, const plan *p, live *v, int u)
{
    if (v->gathered[u] >= 0) return;
    double full = p->unsharded_unit / p->unit_layers * unit_size(p, u), shard = full * p->shard_unit / p->unsharded_unit;
    if (p->fsdp1) {
        int mp = cs_dtype_size(p->t->param_dtype) != cs_dtype_size(cs_training_stored_dtype(p->t))
                     ? take(r, shard, S_GATHER) : -1; /* _use_low_precision_shard */
        v->gathered[u] = take(r, full, S_GATHER);     /* _alloc_padded_unsharded_flat_param */
        give(r, &mp);                                 /* _free_low_precision_sharded_param */
        return;
    }
    int in = take(r, shard, S_GATHER);
    int ag_out = take(r, full, S_GATHER);
    give(r, &in);
    v->gathered[u] = take(r, full, S_COMPUTE); /* wait_for_unshard's copy-out */
    give(r, &ag_out);                          /* then _all_gather_result = None */
}

static void reshard(rp *r, const plan *p, live *v, int u)
{
    if (!p->fsdp1) {
        give(r, &v->gathered[u]);
        return;
    }
    give(r, &v->fsdp1_pending); /* record_stream: cached once the compute stream is past it */
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
static void reduce(rp *r, const plan *p, int *grad, double in, double out, double keep, int *ugrad)
{
    const char *was = r->phase;
    r->phase = "backward (reduce-scatter)";
    int x = -1;
    if (!p->fsdp1 || cs_dtype_size(p->t->grad_reduce_dtype) != cs_dtype_size(p->t->param_dtype))
        x = take(r, in, S_REDUCE); /* FSDP1: the reduce_dtype cast; FSDP2: foreach_reduce's input */
    give(r, ugrad);
    int o = take(r, *grad < 0 ? keep : out, S_REDUCE); /* FSDP1 new_sharded_grad; FSDP2 reduce_output */
    give(r, &x);
    if (*grad < 0) *grad = o;
    else give(r, &o);
    r->phase = was;
}

/* ---- the optimizer ---- */

/* The optimizer states of parameter tensors k0..k1-1, where absent
 * (torch/optim/adam.py _init_group allocates them lazily, zeros_like). */
static void states_for(rp *r, const plan *p, live *v, size_t k0, size_t k1)
{
    size_t nparams = p->nparams + 1; /* the blocks' and the root's */
    double per = p->mem->optimizer_bytes / (p->opt_states > 0 ? p->opt_states : 1) /
                 (p->mem->params_bytes > 0 ? p->mem->params_bytes : 1);
    for (int s = 0; s < p->opt_states; s++)
        for (size_t k = k0; k < k1; k++) {
            int *o = &v->opt[s * nparams + k];
            if (*o < 0) *o = take(r, cs_allocator_block_bytes(r->a, v->params[k]) * per, S_COMPUTE);
        }
}

/* optimizer_in_backward: parameters k0..k1-1 stepped as their gradients
 * are made (torchtune's optimizer_in_bwd: a post-accumulate-grad hook
 * steps one parameter's optimizer and sets its grad to None): their
 * states, the step's intermediates over them, then their gradients
 * freed. */
static void step_now(rp *r, const plan *p, live *v, size_t k0, size_t k1, double share, int *grads,
                     int ngrads)
{
    const char *was = r->phase;
    r->phase = "optimizer step in backward";
    states_for(r, p, v, k0, k1);
    int x = take(r, p->mem->step_temp_bytes * share, S_COMPUTE);
    give(r, &x);
    for (int g = 0; g < ngrads; g++) give(r, &grads[g]);
    r->phase = was;
}

/* ---- one pass ---- */

static void forward(rp *r, const plan *p, live *v)
{
    r->phase = "forward";
    r->layer = -1;
    if (p->gathers && v->root < 0)
        v->root = take(r, p->rank->embedding_params * cs_dtype_size(p->t->param_dtype), S_GATHER);
    else if (!p->gathers && p->mem->unsharded_bytes > 0 && v->copy < 0)
        v->copy = take(r, p->mem->unsharded_bytes, S_GATHER);
    for (int i = 0; i < p->L; i++) {
        int u = i / p->unit_layers;
        if (p->gathers && i % p->unit_layers == 0) unshard(r, p, v, u);
        forward_block(r, p, v, i);
        if (p->reshard && (i + 1 == p->L || (i + 1) % p->unit_layers == 0)) reshard(r, p, v, u);
    }
    /* the loss (loss.c's row): the head's output, its upcast; the input the
     * loss or its caller keeps, then what the loss saves */
    r->phase = "loss";
    cs_loss_steps ls = cs_loss_steps_of(p->t);
    int in = take(r, p->logits * cs_dtype_size(p->t->param_dtype), S_COMPUTE);
    if (ls.upcast_bytes > 0) {
        int up = take(r, p->logits * ls.upcast_bytes, S_COMPUTE);
        give(r, &in);
        in = up;
    }
    give(r, &v->loss[0]); /* the caller's previous logits, replaced */
    v->loss[1] = take(r, p->logits * (cs_loss_held_bytes(p->t) - ls.input_bytes), S_COMPUTE);
    if (ls.input_bytes > 0) v->loss[0] = in;
    else give(r, &in);
}

static void layer_grads(rp *r, const plan *p, live *v, int i)
{
    for (int k = 0; k < NMATS; k++) {
        int *g = &v->grads[(size_t)i * NMATS + k];
        if (*g < 0) *g = take(r, p->grad_layer * p->mat[k] / p->matsum, S_COMPUTE);
    }
}

static void backward(rp *r, const plan *p, live *v)
{
    const cs_training *t = p->t;
    int ugrad = -1, root_ugrad = -1;
    r->phase = "loss backward";
    r->layer = -1;
    v->loss[2] = take(r, p->logits * cs_loss_backward_bytes(t), S_COMPUTE);
    if (!t->hold_logits) give(r, &v->loss[0]); /* else replaced by the next forward's */
    give(r, &v->loss[1]);
    /* naive: the upcast's backward makes the e-byte gradient once nll_loss's
     * fp32 one is freed, from that freed block (the large pool splits a
     * cached block): the backward's block stands for both until the head's
     * backward, one allocation fewer per micro-step (tools/bench-main.sh) */
    double ps = cs_dtype_size(t->param_dtype), n = p->unsharded_unit / p->shard_unit;
    double root_grad = p->mem->grads_bytes * p->root_share;
    if (p->gathers)
        root_ugrad = take(r, p->rank->embedding_params * ps, S_COMPUTE);
    else if (v->root_grad < 0)
        v->root_grad = take(r, root_grad, S_COMPUTE);
    v->carry = take(r, p->logits / p->rank->vocab * p->rank->hidden * ps, S_COMPUTE);
    give(r, &v->loss[2]);
    for (int i = p->L - 1; i >= 0; i--) {
        int u = i / p->unit_layers;
        if (p->gathers && (i + 1 == p->L || (i + 1) % p->unit_layers == 0)) {
            r->phase = "backward (all-gather)";
            r->layer = i;
            unshard(r, p, v, u);
            if (u > 0 && t->backward_prefetch != CS_PREFETCH_NONE) unshard(r, p, v, u - 1);
            ugrad = take(r, p->unsharded_unit / p->unit_layers * unit_size(p, u), S_COMPUTE);
        }
        backward_block(r, p, v, i);
        if (!p->gathers) {
            layer_grads(r, p, v, i);
            if (t->optimizer_in_backward)
                step_now(r, p, v, (size_t)i * NMATS, (size_t)(i + 1) * NMATS, p->share,
                         &v->grads[(size_t)i * NMATS], NMATS);
        }
        if (p->gathers && i % p->unit_layers == 0) {
            double in = p->reduce_unit / p->unit_layers * unit_size(p, u);
            reshard(r, p, v, u);
            reduce(r, p, &v->grads[u], in, in / n, p->grad_layer * unit_size(p, u), &ugrad);
            if (t->optimizer_in_backward) {
                size_t k0 = p->fsdp1 ? (size_t)u : (size_t)i * NMATS;
                size_t k1 = p->fsdp1 ? (size_t)u + 1 : (size_t)(i + unit_size(p, u)) * NMATS;
                step_now(r, p, v, k0, k1, p->share * unit_size(p, u), &v->grads[u], 1);
            }
        }
    }
    give(r, &v->carry);
    if (p->gathers) {
        double in = p->rank->embedding_params * cs_dtype_size(t->grad_reduce_dtype);
        reduce(r, p, &v->root_grad, in, in / n, root_grad, &root_ugrad);
        give(r, &v->root);
        give(r, &v->fsdp1_pending);
    }
    give(r, &v->copy);
    if (t->optimizer_in_backward) /* the root's (embedding, head) last: tied, it accumulates twice */
        step_now(r, p, v, p->nparams, p->nparams + 1, p->root_share, &v->root_grad, 1);
}

/* ---- states, the step, the driver ---- */

static void states(rp *r, const plan *p, live *v)
{
    r->phase = "model states";
    r->layer = -1;
    if (p->fsdp1 && p->gathers)
        for (int u = 0; u < p->units; u++)
            v->params[u] = take(r, p->param_layer * unit_size(p, u), S_COMPUTE);
    else
        for (int i = 0; i < p->L; i++)
            for (int k = 0; k < NMATS; k++)
                v->params[(size_t)i * NMATS + k] = take(r, p->param_layer * p->mat[k] / p->matsum, S_COMPUTE);
    v->root = -1;
    v->params[p->nparams] = take(r, p->mem->params_bytes * p->root_share, S_COMPUTE);
    double b = p->mem->buckets_bytes, cap = p->t->bucket_cap_bytes > 0 ? p->t->bucket_cap_bytes : b;
    int nb = cap > 0 ? (int)(b / cap + 0.999999) : 0;
    if (nb > (int)(sizeof v->buckets / sizeof v->buckets[0])) nb = sizeof v->buckets / sizeof v->buckets[0];
    for (int k = 0; k < nb; k++) v->buckets[v->nbuckets++] = take(r, b / nb, S_COMPUTE);
}

/* The optimizer step: the states at the first, the foreach intermediates
 * as one list; then zero_grad(set_to_none=True). With
 * optimizer_in_backward all of it ran in backward. */
static void step(rp *r, const plan *p, live *v)
{
    r->phase = "optimizer step";
    r->layer = -1;
    if (p->t->optimizer_in_backward) return;
    states_for(r, p, v, 0, p->nparams + 1);
    double temp = p->mem->step_temp_bytes;
    if (temp > 0) {
        int *x = ids((size_t)p->L + 1);
        for (int i = 0; i < p->L; i++) x[i] = take(r, temp * p->share, S_COMPUTE);
        x[p->L] = take(r, temp * p->root_share, S_COMPUTE);
        for (int i = 0; i <= p->L; i++) give(r, &x[i]);
        free(x);
    }
    for (size_t k = 0; k < (size_t)p->L * NMATS; k++) give(r, &v->grads[k]);
    give(r, &v->root_grad);
}

void cs_memreplay_run(const cs_model *m, const cs_training *t, const cs_layout *l,
                      const cs_memory *mem, double capacity_bytes, cs_memreplay *out)
{
    cs_model buf;
    const cs_model *rank = cs_tensor_rank_model(m, t, &buf);
    plan p;
    plan_init(&p, m, rank, t, l, mem);
    plan_blocks(&p);
    rp r = {.a = cs_allocator_new(capacity_bytes), .phase = "model states", .layer = -1};
    size_t nparams = p.nparams + 1;
    live v = {.kept = ids((size_t)p.L * NOPS), .params = ids(nparams),
              .grads = ids((size_t)p.L * NMATS), .opt = ids(nparams * (size_t)(p.opt_states + 1)),
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
