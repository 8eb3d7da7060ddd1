/* SPDX-License-Identifier: MIT */
/*
 * workload.c - builds one iteration's task graph: every micro-batch's
 * forward and backward over the layers, then the optimizer step, with what
 * the strategy adds (gathers, gradient reductions, buckets, parameter
 * gathers after the step) from its row's hooks (strategy.h; the models
 * they follow are stated in strategy_ddp.c, strategy_zero.c and
 * strategy_fsdp.c). The build owns the graph under construction
 * (wbuild.h) and hands hooks the calls to extend it.
 *
 * Compute times come from the compute model (compute.h): a layer's
 * forward, its backward (with what activation checkpointing recomputes)
 * and the head's two passes are each the sum of their kernels' roofline
 * times; a task's FLOPs are the hardware FLOPs its kernels execute. The
 * optimizer step is one memory-bound pass over the shard (bytes / HBM
 * bandwidth at the compute model's streaming efficiency; roofline,
 * Williams et al. 2009). Collective times come from pricing.c on the group's topology,
 * with the dtype sizes of what each collective moves. Memory deltas on the
 * tasks follow memory.c's accounting: activations kept per layer from its
 * forward to its backward, the recomputed layer's activations during its
 * backward, the loss's logits buffers from the head's forward to its
 * backward (and the logits' gradient during it), under amp autocast's
 * weight copies from each unit's cast to its backward, and the foreach
 * optimizer's intermediates during the step.
 * Invariants: task ids are the order of the tasks; every dependency names
 * an earlier task; every allocation on the timeline is released by the
 * end of the iteration (tests/test-workload.c).
 */
#include "train/workload.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/checkpoint.h"
#include "train/compute.h"
#include "train/strategy.h"
#include "train/tensor.h"
#include "train/wbuild.h"

/* Collective choices already made in this build: the per-unit collectives
 * of a model repeat a few (op, size, group) triples, and choosing one is
 * the costliest step of a build (every algorithm x protocol priced). The
 * choice is a pure function of the triple, so reusing it changes nothing. */
#define CHOICE_CACHE 16
typedef struct choice {
    cs_op op;
    cs_group group;
    double size_bytes;
    cs_algo_id algo;
    cs_proto proto;
    double duration_s;
} choice;

struct cs_workload {
    cs_task *tasks;
    size_t n, cap;
    int unnamed;      /* cs_workload_opts.unnamed: names left empty */
    cs_layout layout; /* the groups' sizes and topologies (a copy) */
    cs_memory mem;
    double tokens;
    double model_flops;
    double hw_flops;  /* model FLOPs + what checkpointing recomputes */
    double peak_flops;
    double eff;       /* < 0: from the tasks, when asked */
    cs_compute comp;  /* the priced layer and head */
    double sm_share;  /* cs_workload_comm_sm_share */
    double cluster_slowdown; /* the cluster's gpu.compute.comm_compute_slowdown (< 0: unset) */
    int serial_groups; /* cs_workload_serial_groups */
    const cs_cluster *cluster;
    choice cache[CHOICE_CACHE];
    int ncache, next_slot;
    /* during the build only */
    cs_engine_kind engine;
    cs_pricing_cache *xc;    /* NULL: none */
    int xslot[CS_GROUP_COUNT];
    int err;                 /* first failed collective's code, 0 none */
    double host_s;           /* the CPU thread's clock: issue_s of new tasks */
    cs_diag *d;
};

/* The streams: names as the schedule and trace write them, and kinds. */
static const struct {
    const char *name;
    cs_stream_kind kind;
} streams[CS_STREAM_COUNT] = {
    [CS_STREAM_COMPUTE] = {"compute", CS_STREAM_KIND_COMPUTE},
    [CS_STREAM_COMM] = {"comm", CS_STREAM_KIND_COMM},
    [CS_STREAM_COMM_REDUCE] = {"comm_reduce", CS_STREAM_KIND_COMM},
    [CS_STREAM_TP] = {"tp", CS_STREAM_KIND_COMM},
};

const char *cs_stream_name(cs_stream s) { return streams[s].name; }
cs_stream_kind cs_stream_kind_of(cs_stream s) { return streams[s].kind; }
size_t cs_workload_count(const cs_workload *w) { return w->n; }
const cs_task *cs_workload_task(const cs_workload *w, size_t i)
{
    CS_ASSERT(i < w->n);
    return &w->tasks[i];
}
int cs_workload_group_ranks(const cs_workload *w, cs_group g) { return w->layout.group[g].size; }
const cs_layout *cs_workload_layout(const cs_workload *w) { return &w->layout; }
double cs_workload_tokens(const cs_workload *w) { return w->tokens; }
double cs_workload_model_flops_per_rank(const cs_workload *w) { return w->model_flops; }
double cs_workload_peak_flops(const cs_workload *w) { return w->peak_flops; }
double cs_workload_hardware_flops_per_rank(const cs_workload *w) { return w->hw_flops; }
static double effective_efficiency(const cs_workload *w);
double cs_workload_compute_efficiency(const cs_workload *w)
{
    return w->eff >= 0 ? w->eff : effective_efficiency(w);
}
const cs_memory *cs_workload_memory(const cs_workload *w) { return &w->mem; }
double cs_workload_comm_sm_share(const cs_workload *w) { return w->sm_share; }
double cs_workload_comm_compute_slowdown(const cs_workload *w, const cs_training *t)
{
    return t->comm_compute_slowdown >= 0 ? t->comm_compute_slowdown : w->cluster_slowdown;
}
int cs_workload_serial_groups(const cs_workload *w) { return w->serial_groups; }
void cs_workload_set_serial_groups(cs_workload *w, int serial) { w->serial_groups = serial != 0; }
void cs_workload_set_comm_sm_share(cs_workload *w, double share)
{
    CS_ASSERT(share >= 0 && share <= 1);
    w->sm_share = share;
}

void cs_workload_free(cs_workload *w)
{
    if (!w) return;
    free(w->tasks);
    free(w);
}

/* ---- tasks ---- */

/* Appends n bytes of src at dst[o], keeping room for the NUL. */
static size_t put(char *dst, size_t o, size_t len, const char *src, size_t n)
{
    if (o + n > len - 1) n = len - 1 - o;
    memcpy(dst + o, src, n);
    return o + n;
}

/* Writes "<a>[ <b>][ <num>]" (num >= 0) into a task name, truncated as
 * snprintf would: task names are built for every task of every sweep
 * point, and printf's machinery was a quarter of a build. */
static void set_name(char *dst, size_t len, const char *a, const char *b, int num)
{
    size_t o = put(dst, 0, len, a, strlen(a));
    if (b) {
        o = put(dst, o, len, " ", 1);
        o = put(dst, o, len, b, strlen(b));
    }
    if (num >= 0) {
        char out[12]; /* " " and up to 10 digits, filled from the end */
        size_t i = sizeof out;
        do {
            out[--i] = (char)('0' + num % 10);
            num /= 10;
        } while (num > 0);
        out[--i] = ' ';
        o = put(dst, o, len, out + i, sizeof out - i);
    }
    dst[o] = 0;
}

void cs__wb_name(const cs_wbuild *b, char *dst, size_t len, const char *a, int num)
{
    if (b->w->unnamed)
        dst[0] = 0;
    else
        set_name(dst, len, a, NULL, num);
}

void cs__wb_name_range(const cs_wbuild *b, char *dst, size_t len, const char *a, double first,
                       double last)
{
    if (first == last && first <= INT_MAX)
        cs__wb_name(b, dst, len, a, (int)first);
    else if (b->w->unnamed)
        dst[0] = 0;
    else
        snprintf(dst, len, "%s %.0f-%.0f", a, first, last);
}

/* Room for one more task. */
static cs_task *grow(cs_workload *w)
{
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 256;
        w->tasks = cs_xrealloc(w->tasks, w->cap * sizeof *w->tasks);
    }
    return &w->tasks[w->n];
}

/* Appends a task named "<a>[ <b>][ <num>]" (see set_name). */
static cs_task *add(cs_workload *w, cs_task_kind k, cs_stream s, int micro, int layer,
                    const char *a, const char *b, int num)
{
    cs_task *t = grow(w);
    *t = (cs_task){.id = (int)w->n, .kind = k, .stream = s, .micro = micro, .layer = layer,
                   .count = 1, .issue_s = w->host_s};
    if (!w->unnamed) set_name(t->name, sizeof t->name, a, b, num);
    w->n++;
    return t;
}

static void dep(cs_task *t, int on, int on_start)
{
    if (on < 0) return;
    CS_ASSERT(on < t->id);
    for (int i = 0; i < t->ndeps; i++)
        if (t->deps[i] == on && t->on_start[i] == on_start) return;
    CS_ASSERT(t->ndeps < 4);
    t->on_start[t->ndeps] = (char)on_start;
    t->deps[t->ndeps++] = on;
}

cs_task *cs__wb_task(cs_wbuild *b, int id)
{
    CS_ASSERT(id >= 0 && (size_t)id < b->w->n);
    return &b->w->tasks[id];
}

void cs__wb_dep(cs_wbuild *b, int task, int on, int on_start)
{
    dep(cs__wb_task(b, task), on, on_start);
}

void cs__wb_host(cs_wbuild *b, double seconds)
{
    CS_ASSERT(seconds >= 0);
    b->w->host_s += seconds;
}

int cs__wb_last(const cs_wbuild *b, cs_stream s)
{
    for (size_t i = b->w->n; i-- > 0;)
        if (b->w->tasks[i].stream == s) return (int)i;
    return -1;
}

cs_workload *cs_workload_new(double peak_flops)
{
    cs_workload *w = cs_xcalloc(1, sizeof *w);
    w->peak_flops = peak_flops;
    w->eff = 1.0;
    w->cluster_slowdown = -1; /* no cluster: unset */
    return w;
}

int cs_workload_append(cs_workload *w, const cs_task *t)
{
    CS_ASSERT(t->ndeps >= 0 && t->ndeps <= 4);
    for (int i = 0; i < t->ndeps; i++) CS_ASSERT(t->deps[i] >= 0 && (size_t)t->deps[i] < w->n);
    CS_ASSERT(t->stream >= 0 && t->stream < CS_STREAM_COUNT);
    cs_task *x = grow(w);
    *x = *t;
    if (!(x->count >= 1)) x->count = 1;
    x->id = (int)w->n++;
    return x->id;
}

/* A compute task running the passes [p0, p1] of the compute model. */
static int compute(cs_workload *w, int micro, int layer, cs_kpass p0, cs_kpass p1,
                   const char *what, int l)
{
    CS_ASSERT(l >= 0);
    cs_task *t = add(w, CS_TASK_COMPUTE, CS_STREAM_COMPUTE, micro, layer, what, NULL, l);
    for (int p = p0; p <= (int)p1; p++) {
        t->flops += w->comp.pass[p].flops;
        t->duration_s += w->comp.pass[p].time_s;
    }
    if (p0 <= CS_KPASS_RECOMPUTE && CS_KPASS_RECOMPUTE <= p1)
        t->recompute_s = w->comp.pass[CS_KPASS_RECOMPUTE].time_s;
    return t->id;
}

/* Under amp, autocast's weight casts before a forward of `params`
 * parameters (training.h: cs_training_autocast_cast_bytes_per_param): a
 * memory-bound pass on the compute stream whose copies stay cached, and
 * saved for backward, until the unit's backward ends (cast_release). */
static void autocast_cast(cs_wbuild *b, int layer, double params)
{
    double per = cs_training_autocast_cast_bytes_per_param(b->t);
    if (per <= 0 || params <= 0) return;
    int c = cs__wb_memory(b, CS_STREAM_COMPUTE, layer, per * params, "autocast cast");
    b->w->tasks[c].mem_at_start = cs_memory_autocast_copy_bytes(b->t, params);
}

static double cast_release(const cs_wbuild *b, double params)
{
    return cs_memory_autocast_copy_bytes(b->t, params);
}

int cs__wb_forward(cs_wbuild *b, int l)
{
    autocast_cast(b, l, b->m->layer_params);
    int id = compute(b->w, b->micro, l, CS_KPASS_FORWARD, CS_KPASS_FORWARD, "forward", l);
    b->w->tasks[id].mem_at_start = cs_checkpoint_kept_bytes(b->whole, b->t, l);
    dep(&b->w->tasks[id], b->tp_last, 0);
    b->tp_last = cs__tensor_layer(b, l, id, 0);
    return b->fwd[l] = id;
}

int cs__wb_memory(cs_wbuild *b, cs_stream s, int layer, double bytes, const char *what)
{
    cs_workload *w = b->w;
    cs_task *t = add(w, CS_TASK_MEMORY, s, b->micro, layer, what, NULL, layer);
    t->mem_bytes = bytes;
    t->duration_s = bytes / (w->cluster->gpu.hbm_Bps * cs_compute_hbm_efficiency(w->cluster, bytes));
    return t->id;
}

int cs__wb_backward(cs_wbuild *b, int l)
{
    /* the recompute pass only in the blocks the policy checkpoints (checkpoint.h) */
    cs_kpass last = cs_checkpoint_layer_recomputes(b->t, l) ? CS_KPASS_RECOMPUTE : CS_KPASS_BACKWARD;
    int id = compute(b->w, b->micro, l, CS_KPASS_BACKWARD, last, "backward", l);
    dep(&b->w->tasks[id], b->tp_last, 0);
    b->tp_last = cs__tensor_layer(b, l, id, 1);
    cs_task *t = &b->w->tasks[id];
    /* recomputed activations live during the layer's backward */
    t->mem_at_start = b->act_full - cs_checkpoint_kept_bytes(b->whole, b->t, l);
    t->mem_at_end = -b->act_full - cast_release(b, b->m->layer_params);
    b->ready_bytes[b->nready] = b->grad_bytes[1];
    b->ready_task[b->nready++] = id;
    return b->bwd[l] = id;
}

/* ---- collectives ---- */

/* The choice already made in this build for (op, group, size), or NULL. */
static const choice *chosen(const cs_workload *w, cs_op op, cs_group g, double size)
{
    for (int i = 0; i < w->ncache; i++) {
        const choice *c = &w->cache[i];
        if (c->op == op && c->group == g && c->size_bytes == size) return c;
    }
    return NULL;
}

int cs__wb_collective(cs_wbuild *b, cs_stream s, int micro, int layer, cs_op op, double size,
                      cs_dtype dt, cs_group g, const char *what)
{
    cs_workload *w = b->w;
    int n = w->layout.group[g].size;
    cs_task *t = add(w, CS_TASK_COLLECTIVE, s, micro, layer, cs_op_name(op), what, -1);
    t->op = op;
    t->size_bytes = size;
    t->dtype = dt;
    t->group = g;
    t->wire_bytes = size * cs_op_busbw_factor(op, n);
    if (n <= 1) return t->id;
    const choice *c = chosen(w, op, g, size);
    if (c) {
        t->algo = c->algo;
        t->proto = c->proto;
        t->duration_s = c->duration_s;
        return t->id;
    }
    cs_algo_id a = CS_ALGO_RING;
    cs_proto p = CS_PROTO_SIMPLE;
    double dur = 0;
    int rc = cs_pricing_price(w->xc, w->xslot[g], &w->layout.group[g].topo, op, size, w->engine, &a, &p, &dur,
                              w->d);
    if (rc) {
        if (!w->err) w->err = rc;
        return t->id; /* the build fails at its end */
    }
    t->algo = a;
    t->proto = p;
    t->duration_s = dur;
    int slot = w->ncache < CHOICE_CACHE ? w->ncache++ : w->next_slot++ % CHOICE_CACHE;
    w->cache[slot] = (choice){op, g, size, a, p, t->duration_s};
    return t->id;
}

double cs__wb_whole(double bytes, double piece)
{
    CS_ASSERT(piece > 0);
    double n = floor(bytes / piece);
    if (n < 0x1p53) { /* beyond, n +- 1 is n: the quotient is as close as it gets */
        while (n > 0 && n * piece > bytes) n--;
        while ((n + 1) * piece <= bytes) n++;
    }
    return n;
}

void cs__wb_repeat(cs_wbuild *b, int id, double count)
{
    cs_task *t = cs__wb_task(b, id);
    CS_ASSERT(count >= 1 && t->count == 1);
    t->count = count;
    t->duration_s *= count;
    t->wire_bytes *= count;
    t->flops *= count;
    t->mem_bytes *= count;
}

/* ---- the build ---- */

/* Checks the settings, takes the layout, the static memory (estimated
 * unless given) and the rates: a graph with no tasks yet. */
static int begin(const cs_model *m, const cs_training *t, const cs_layout *l,
                 const cs_workload_opts *o, cs_workload **out, cs_diag *d)
{
    const cs_cluster *c = &l->group[CS_GROUP_WORLD].topo.cluster;
    if (t->micro_batch < 1 || t->grad_accum < 1)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "micro_batch and grad_accum must be >= 1");
    cs_workload *w = cs_xcalloc(1, sizeof *w);
    int rc = cs_compute_price(m, t, c, &w->comp, d);
    w->layout = *l;
    if (rc == 0 && o->memory) w->mem = *o->memory;
    else if (rc == 0) rc = cs_memory_estimate_layout(m, t, l, 0, &w->mem, d);
    if (rc) {
        cs_workload_free(w);
        return rc;
    }
    w->engine = t->collective_engine;
    w->d = d;
    w->xc = o->cache;
    if (o->cache)
        for (int g = 0; g < CS_GROUP_COUNT; g++)
            w->xslot[g] = l->group[g].size > 1 ? cs_pricing_cache_slot(o->cache, &l->group[g].topo)
                                               : -1;
    w->peak_flops = c->gpu.peak_flops[t->param_dtype];
    w->cluster = c;
    w->cluster_slowdown = c->gpu.compute.comm_compute_slowdown;
    w->sm_share = c->gpu.compute.sms > 0 ? fmin(1.0, c->coll.channels / c->gpu.compute.sms) : 0;
    w->serial_groups = t->fsdp_version == 1 || cs_strategy_row_of(t->strategy)->autocast;
    double tokens = (double)t->micro_batch * m->seq_len;
    w->tokens = l->tokens_per_step;
    w->model_flops = cs_model_flops_per_token(m) * tokens * t->grad_accum * cs_tensor_flops_share(t);
    *out = w;
    return 0;
}

/* The per-build numbers every micro-batch uses; arrays for the tasks. */
static void start(cs_wbuild *b, cs_workload *w, const cs_model *m, const cs_training *t)
{
    memset(b, 0, sizeof *b);
    b->w = w;
    b->m = m;
    b->t = t;
    b->layout = &w->layout;
    b->topo = &w->layout.group[CS_GROUP_WORLD].topo;
    b->row = cs_strategy_row_of(t->strategy);
    b->layers = m->layers;
    const double tokens = (double)t->micro_batch * m->seq_len;
    /* parameters as stored (amp: fp32), gradients as reduced (DDP: its
     * hook's dtype, if any) */
    const double psz = cs_dtype_size(cs_training_stored_dtype(t));
    const double gsz = cs_dtype_size(cs_training_bucket_wire_dtype(t));
    /* hardware FLOPs in the model-FLOPs convention (Korthikanti et al.
     * 2022 Sec 6): + the layer's forward again under full recompute, + the
     * attention core (QK^T and AV: 4 s h per token) under selective
     * recompute, which fused attention makes a no-op */
    double f_layer = cs_model_layer_forward_flops(m, tokens);
    double recompute = cs_checkpoint_recomputes_whole(t) ? f_layer
                       : t->checkpointing == CS_CKPT_SELECTIVE && t->selective_ac == CS_SAC_OP
                           ? w->comp.pass[CS_KPASS_RECOMPUTE].flops /* the kernels it re-runs */
                       : t->checkpointing == CS_CKPT_SELECTIVE && !t->flash_attention
                           ? 4.0 * m->seq_len * m->hidden * tokens
                           : 0;
    w->hw_flops = w->model_flops + recompute * cs_checkpoint_recomputing_layers(m, t) *
                                       t->grad_accum * cs_tensor_flops_share(t);
    b->act_full = cs_checkpoint_running_bytes(m, t);
    b->whole = m; /* checkpoint.h's per-layer bytes are of the whole model */
    /* from here on, the model as this rank holds it (tensor.h) */
    m = b->m = cs_tensor_rank_model(m, t, &b->rank_model);
    b->logits = tokens * m->vocab; /* elements; bytes: memory.h's logit terms */
    b->shard = w->layout.shard;
    b->shard_ranks = w->layout.group[CS_GROUP_DP_SHARD].size;
    b->replica_ranks = w->layout.group[CS_GROUP_DP_REPLICATE].size;
    b->reshard = cs_strategy_reshard_after_forward(t);
    b->limit = t->limit_all_gathers > 0 ? t->limit_all_gathers : 1 << 30;
    b->param_bytes[0] = m->embedding_params * psz;
    b->param_bytes[1] = m->layer_params * psz;
    b->grad_bytes[0] = m->embedding_params * gsz;
    b->grad_bytes[1] = m->layer_params * gsz;
    b->grad_size = gsz;
    /* an untied output head's weight gets its gradient in the head's
     * backward; a tied one only when the embedding's backward adds to it */
    b->head_params = m->tied_embeddings ? 0 : (double)m->vocab * m->hidden;
    size_t L = (size_t)m->layers;
    b->fwd = cs_xmalloc(L * sizeof(int));
    b->bwd = cs_xmalloc(L * sizeof(int));
    b->ready_bytes = cs_xmalloc((L + 2) * sizeof(double));
    b->ready_task = cs_xmalloc((L + 2) * sizeof(int));
    b->root_task = -1;
    b->tp_last = -1;
}

static void finish(cs_wbuild *b)
{
    free(b->fwd);
    free(b->bwd);
    free(b->ready_bytes);
    free(b->ready_task);
}

/* One micro-batch: forward over the layers and the head, backward back,
 * with the strategy's hooks around each unit. */
static void build_micro(cs_wbuild *b, int mi)
{
    const cs_strategy_row *r = b->row;
    b->micro = mi;
    b->last_micro = mi == b->t->grad_accum - 1;
    b->nready = 0;
    if (r->pre_forward) r->pre_forward(b);
    b->grads_done = -1;
    for (int l = 0; l < b->layers; l++) {
        if (r->forward_unit) r->forward_unit(b, l);
        else cs__wb_forward(b, l);
    }
    double vh = (double)b->m->vocab * b->m->hidden; /* the head's weight, cast by autocast */
    autocast_cast(b, -1, vh);
    int head_f =
        compute(b->w, mi, -1, CS_KPASS_HEAD_FORWARD, CS_KPASS_HEAD_FORWARD, "head forward", 0);
    double lf = b->logits * cs_memory_logit_forward_bytes(b->t);
    double lb = b->logits * cs_memory_logit_backward_bytes(b->t);
    b->w->tasks[head_f].mem_at_start = lf;
    dep(&b->w->tasks[head_f], b->tp_last, 0);
    b->tp_last = cs__tensor_head(b, head_f, 0);
    b->head_bwd =
        compute(b->w, mi, -1, CS_KPASS_HEAD_BACKWARD, CS_KPASS_HEAD_BACKWARD, "head backward", 0);
    dep(&b->w->tasks[b->head_bwd], b->tp_last, 0);
    b->tp_last = cs__tensor_head(b, b->head_bwd, 1);
    b->w->tasks[b->head_bwd].mem_at_start = lb;
    b->w->tasks[b->head_bwd].mem_at_end = -lf - lb - cast_release(b, vh);
    if (b->head_params > 0) { /* ready first: before any layer's */
        b->ready_bytes[b->nready] = b->head_params * b->grad_size;
        b->ready_task[b->nready++] = b->head_bwd;
    }
    for (int l = b->layers - 1; l >= 0; l--) {
        if (r->backward_unit) r->backward_unit(b, l);
        else cs__wb_backward(b, l);
    }
    if (b->grads_done < 0) b->grads_done = b->bwd[0];
    /* the root unit's gradients (embeddings, head) are complete last */
    b->ready_bytes[b->nready] = b->grad_bytes[0] - b->head_params * b->grad_size;
    b->ready_task[b->nready++] = b->grads_done;
    if (r->post_backward) r->post_backward(b);
}

/* The optimizer step on this rank's shard, once every gradient reduction
 * is done, and what the strategy does after it. */
static void build_step(cs_wbuild *b)
{
    cs_workload *w = b->w;
    const double shard = b->layout->params_per_rank / b->layout->optimizer_degree;
    cs_task *opt = add(w, CS_TASK_MEMORY, CS_STREAM_COMPUTE, -1, -1, "optimizer step", NULL, -1);
    opt->mem_bytes = shard * cs_training_optimizer_traffic_per_param(b->t);
    opt->duration_s = opt->mem_bytes / (w->cluster->gpu.hbm_Bps *
                                         cs_compute_hbm_efficiency(w->cluster, opt->mem_bytes));
    /* the foreach intermediates live while the step runs (memory.c) */
    opt->mem_at_start = cs_memory_optimizer_temp_bytes(b->t, shard);
    opt->mem_at_end = -opt->mem_at_start;
    /* after the last task of each communication stream */
    for (int s = 0; s < CS_STREAM_COUNT; s++)
        if (streams[s].kind == CS_STREAM_KIND_COMM) {
            int last = cs__wb_last(b, (cs_stream)s);
            if (last >= 0 && last != opt->id) dep(opt, last, 0);
        }
    b->micro = -1;
    if (b->row->after_step) b->row->after_step(b, opt->id);
}

/* Executed FLOPs over peak x time of the compute kernels: what the
 * schedule reports as the efficiency its compute tasks ran at. */
static double effective_efficiency(const cs_workload *w)
{
    double flops = 0, busy = 0;
    for (size_t i = 0; i < w->n; i++)
        if (w->tasks[i].kind == CS_TASK_COMPUTE) {
            flops += w->tasks[i].flops;
            busy += w->tasks[i].duration_s;
        }
    return busy > 0 ? flops / (busy * w->peak_flops) : 0;
}

int cs_workload_build(const cs_model *m, const cs_training *t, const cs_topology *topo,
                      cs_workload **out, cs_diag *d)
{
    return cs_workload_build_cached(m, t, topo, NULL, out, d);
}

int cs_workload_build_cached(const cs_model *m, const cs_training *t, const cs_topology *topo,
                             cs_pricing_cache *cache, cs_workload **out, cs_diag *d)
{
    cs_workload_opts o = {.cache = cache};
    return cs_workload_build_opts(m, t, topo, &o, out, d);
}

int cs_workload_build_opts(const cs_model *m, const cs_training *t, const cs_topology *topo,
                           const cs_workload_opts *o, cs_workload **out, cs_diag *d)
{
    cs_layout *l = cs_xmalloc(sizeof *l);
    int rc = cs_layout_build(m, t, topo, l, d);
    if (rc == 0) rc = cs_workload_build_layout(m, t, l, o, out, d);
    free(l);
    return rc;
}

int cs_workload_build_layout(const cs_model *m, const cs_training *t, const cs_layout *l,
                             const cs_workload_opts *o, cs_workload **out, cs_diag *d)
{
    cs_workload *w = NULL;
    int rc = begin(m, t, l, o, &w, d);
    if (rc) return rc;
    w->unnamed = o->unnamed;
    cs_wbuild b;
    start(&b, w, m, t);
    b.run_max = o->bucket_run_max > 0 ? o->bucket_run_max : CS_WB_RUN_MAX;
    for (int mi = 0; mi < t->grad_accum; mi++) build_micro(&b, mi);
    build_step(&b);
    finish(&b);
    w->eff = -1; /* computed when asked (the schedule): not on a sweep's path */
    w->cluster = NULL;
    w->xc = NULL;
    w->d = NULL;
    if (w->err) {
        rc = w->err;
        cs_workload_free(w);
        return rc;
    }
    *out = w;
    return 0;
}
