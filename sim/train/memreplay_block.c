/* SPDX-License-Identifier: MIT */
/*
 * memreplay_block.c - one transformer block's tensors in the allocation
 * replay: the op table (what a block's ops output, per token), its
 * parameters as three matrices, what each checkpoint policy keeps and at
 * what size, and the block's forward and backward allocations on the
 * compute stream (memreplay_impl.h; memreplay.c runs the iteration around
 * them).
 *
 *   forward    the op outputs of a transformer block (the op table below:
 *              norms, q/k/v, rotary, attention, output projection,
 *              residuals, the MLP's GEMMs and activation); what autograd
 *              saves stays, the rest is freed once its consumer ran. Sizes
 *              follow the table's per-token widths, scaled so that what a
 *              block keeps is exactly checkpoint.c's kept bytes (the
 *              analytic line) and what it holds while running its running
 *              bytes. Whole-block checkpointing keeps one tensor (the
 *              input) and frees every op output once its consumer ran; the
 *              per-op policy keeps the outputs checkpoint.c's header lists
 *              (input, wq, wv, attention, w1, w2 / fc1) and frees the rest;
 *              under compile a block that does not recompute whole keeps
 *              what Inductor's partition saves (checkpoint.c; the op
 *              table's c column), and its backward re-allocates nothing
 *              (the recompute is fused).
 *   backward   a recomputing block first re-allocates what its policy
 *              dropped; then per op in reverse the gradient of its output
 *              (the size of the output), freeing the saved tensor and the
 *              gradient before it. amp's autocast weight copies
 *              (cached_cast, kept for backward) are freed as their block's
 *              backward ends.
 *   offload    activation_offloading (torchtune OffloadActivations, a
 *              saved_tensors_hooks pair): what a block saves goes to the
 *              host after its forward (its device blocks back to the cache)
 *              and is fetched back before its backward. The host copies'
 *              time is the iteration graph's (memopts.c).
 * What it cannot see: the autograd engine's own temporaries inside an
 * op's backward (matmul workspaces, the grad of a view), the exact order
 * within a block's backward (a transpose's saved copy, grad accumulation
 * of the residual branch).
 */
#include "train/memreplay_impl.h"

#include "train/checkpoint.h"

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
_Static_assert(sizeof ops / sizeof ops[0] == CS__MR_NOPS, "CS__MR_NOPS is the op table's rows");

/* A block's parameters as three tensors, in h x (h, kv, f) units: the
 * attention's projections (wq, wk, wv, wo), the MLP's two matrices, the
 * gated MLP's third (w3); the norms' weights ride with them. Coarser than
 * torch's one tensor per matrix (a bound on the replay's cost). */
static const block_op mats[] = {{2, 2, 0, 0, 0, 0, 0}, {0, 0, 2, 0, 0, 0, 0}, {0, 0, 1, 0, 0, 1, 0}};
_Static_assert(sizeof mats / sizeof mats[0] == CS__MR_NMATS,
               "CS__MR_NMATS is the matrix table's rows");

static double width(const block_op *o, const cs_model *m)
{
    double kv = (double)m->hidden / m->heads * m->kv_heads;
    return o->h * m->hidden + o->kv * kv + o->f * m->ffn_hidden;
}

void cs__mr_plan_ops(cs__mr_plan *p)
{
    const cs_model *m = p->rank;
    for (int k = 0; k < CS__MR_NOPS; k++) {
        int skip = (ops[k].mlp == 1 && !m->gated_mlp) || (ops[k].mlp == 2 && m->gated_mlp);
        p->w[k] = skip ? 0 : width(&ops[k], m);
        if (ops[k].saved) p->wsaved += p->w[k];
        if (ops[k].op) p->wop += p->w[k];
        p->wc += p->w[k] * ops[k].c;
    }
    for (int k = 0; k < CS__MR_NMATS; k++) {
        p->mat[k] = mats[k].mlp == 1 && !m->gated_mlp ? 0 : width(&mats[k], m) * m->hidden;
        p->matsum += p->mat[k];
    }
}

/* Which op outputs block `layer` keeps, and scaled to what. */
static double kept_scale(const cs__mr_plan *p, int layer, int *mode)
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
static double kept_size(const cs__mr_plan *p, int kind, int k)
{
    return p->w[k] * (p->mode[kind] == 3 ? ops[k].c : 1) * p->sk[kind];
}

/* Whether a block's backward re-runs forward ops its policy dropped before
 * their gradients (whole-block and per-op checkpointing; Inductor's own
 * recompute is fused into the backward's kernels). */
static int rematerializes(int mode) { return mode == 1 || mode == 2; }

/* The two kinds of block (checkpoint.c: a block's kept bytes depend only
 * on whether it recomputes), computed once per replay. */
void cs__mr_plan_blocks(cs__mr_plan *p)
{
    int seen[2] = {0, 0};
    for (int i = 0; i < p->L && !(seen[0] && seen[1]); i++) {
        int k = cs_checkpoint_layer_recomputes(p->t, i) != 0;
        if (!seen[k]) p->sk[k] = kept_scale(p, i, &p->mode[k]), seen[k] = 1;
    }
}

static int block_kind(const cs__mr_plan *p, int layer)
{
    return cs_checkpoint_layer_recomputes(p->t, layer) != 0;
}

void cs__mr_forward_block(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v, int layer)
{
    int kind = block_kind(p, layer), mode = p->mode[kind];
    double sr = p->running / p->wsaved;
    int *kept = v->kept + (size_t)layer * CS__MR_NOPS, prev = -1;
    r->phase = "forward";
    r->layer = layer;
    if (p->cast_layer > 0) v->cast[layer] = cs__mr_take(r, p->cast_layer, CS__MR_COMPUTE);
    for (int k = 0; k < CS__MR_NOPS; k++) {
        if (p->w[k] <= 0) continue;
        if (keeps(mode, k)) {
            kept[k] = cs__mr_take(r, kept_size(p, kind, k), CS__MR_COMPUTE);
            continue;
        }
        /* consumed by the next op, then freed */
        int x = cs__mr_take(r, p->w[k] * sr, CS__MR_COMPUTE);
        cs__mr_give(r, &prev);
        prev = x;
    }
    cs__mr_give(r, &prev);
    if (p->t->activation_offloading) /* copied to the host: the device blocks go back to the cache */
        for (int k = 0; k < CS__MR_NOPS; k++) cs__mr_give(r, &kept[k]);
}

void cs__mr_backward_block(cs__mr_rec *r, const cs__mr_plan *p, cs__mr_live *v, int layer)
{
    int kind = block_kind(p, layer), mode = p->mode[kind];
    double sr = p->running / p->wsaved;
    int *kept = v->kept + (size_t)layer * CS__MR_NOPS, re[CS__MR_NOPS];
    r->layer = layer;
    if (p->t->activation_offloading) { /* fetched back from the host for this block */
        r->phase = "backward (fetch offloaded)";
        for (int k = 0; k < CS__MR_NOPS; k++)
            if (p->w[k] > 0 && keeps(mode, k))
                kept[k] = cs__mr_take(r, kept_size(p, kind, k), CS__MR_COMPUTE);
    }
    r->phase = "backward (recompute)";
    for (int k = 0; k < CS__MR_NOPS; k++) /* what the policy dropped, re-run */
        re[k] = rematerializes(mode) && ops[k].saved && !keeps(mode, k) && p->w[k] > 0
                    ? cs__mr_take(r, p->w[k] * sr, CS__MR_COMPUTE) : -1;
    r->phase = "backward";
    for (int k = CS__MR_NOPS - 1; k >= 0; k--) {
        if (p->w[k] <= 0) continue;
        int g = cs__mr_take(r, p->w[k] * sr, CS__MR_COMPUTE); /* the gradient of the op's input */
        cs__mr_give(r, &v->carry);
        v->carry = g;
        cs__mr_give(r, &kept[k]);
        cs__mr_give(r, &re[k]);
    }
    if (p->cast_layer > 0) cs__mr_give(r, &v->cast[layer]);
}
