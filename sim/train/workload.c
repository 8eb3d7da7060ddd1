/* SPDX-License-Identifier: MIT */
/*
 * workload.c - builds one iteration's task graph: every micro-batch's
 * forward and backward over the layers, then the optimizer step, with what
 * the strategy adds (gathers, gradient reductions, buckets, parameter
 * gathers after the step) from its row's hooks (strategy.h; the models
 * they follow are stated in strategy_ddp.c, strategy_zero.c and
 * strategy_fsdp.c). The build owns the graph under construction
 * (wbuild.h) and hands hooks the calls to extend it; those calls (named
 * tasks, a layer's compute, memory-bound tasks, priced collectives) are
 * wbuild.c's, and this file keeps the graph, its accessors and what an
 * iteration is made of.
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
#include "train/memopts.h"
#include "train/strategy.h"
#include "train/tensor.h"
#include "train/wbuild.h"

/* The streams: names as the schedule and trace write them, and kinds. */
static const struct {
    const char *name;
    cs_stream_kind kind;
} streams[CS_STREAM_COUNT] = {
    [CS_STREAM_COMPUTE] = {"compute", CS_STREAM_KIND_COMPUTE},
    [CS_STREAM_COMM] = {"comm", CS_STREAM_KIND_COMM},
    [CS_STREAM_COMM_REDUCE] = {"comm_reduce", CS_STREAM_KIND_COMM},
    [CS_STREAM_TP] = {"tp", CS_STREAM_KIND_COMM},
    [CS_STREAM_OFFLOAD] = {"offload", CS_STREAM_KIND_COPY},
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

/* ---- the build ---- */

/* Checks the settings, takes the layout, the static memory (estimated
 * unless given) and the rates: a graph with no tasks yet. */
static int begin(const cs_model *m, const cs_training *t, const cs_layout *l,
                 const cs_workload_opts *o, cs_workload **out, cs_diag *d)
{
    const cs_cluster *c = &l->group[CS_GROUP_WORLD].topo.cluster;
    if (t->micro_batch < 1 || t->grad_accum < 1)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "micro_batch and grad_accum must be >= 1");
    if (t->optimizer_in_backward && t->grad_accum > 1) /* each gradient is stepped as it is made */
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "optimizer_in_backward needs grad_accum 1, got %d",
                           t->grad_accum);
    cs_workload *w = cs_xcalloc(1, sizeof *w);
    int rc = cs_compute_price(m, t, c, &w->comp, d);
    w->layout = *l;
    if (rc == 0 && o->memory) w->mem = *o->memory;
    else if (rc == 0) rc = cs_memory_estimate_layout(m, t, l, 0, &w->mem, d);
    if (rc == 0 && t->activation_offloading) rc = cs__memopts_host_link_Bps(c, &w->host_Bps, d);
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
    b->d2h = cs_xmalloc(L * sizeof(int));
    b->host_Bps = w->host_Bps;
    b->bwd = cs_xmalloc(L * sizeof(int));
    b->ready_bytes = cs_xmalloc((L + 2) * sizeof(double));
    b->ready_task = cs_xmalloc((L + 2) * sizeof(int));
    b->root_task = -1;
    b->root_step = -1;
    b->gather_ahead = -1;
    b->tp_last = -1;
}

static void finish(cs_wbuild *b)
{
    free(b->fwd);
    free(b->d2h);
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
    cs__wb_autocast_cast(b, -1, vh);
    int head_f =
        cs__wb_compute(b->w, mi, -1, CS_KPASS_HEAD_FORWARD, CS_KPASS_HEAD_FORWARD, "head forward", 0);
    double lf = b->logits * cs_memory_logit_forward_bytes(b->t);
    double lb = b->logits * cs_memory_logit_backward_bytes(b->t);
    b->w->tasks[head_f].mem_at_start = lf;
    cs__wb_dep(b, head_f, b->tp_last, 0);
    b->tp_last = cs__tensor_head(b, head_f, 0);
    b->head_bwd =
        cs__wb_compute(b->w, mi, -1, CS_KPASS_HEAD_BACKWARD, CS_KPASS_HEAD_BACKWARD, "head backward", 0);
    cs__wb_dep(b, b->head_bwd, b->tp_last, 0);
    b->tp_last = cs__tensor_head(b, b->head_bwd, 1);
    b->w->tasks[b->head_bwd].mem_at_start = lb;
    b->w->tasks[b->head_bwd].mem_at_end = -lf - lb - cs_memory_autocast_copy_bytes(b->t, vh);
    if (b->head_params > 0) { /* ready first: before any layer's */
        b->ready_bytes[b->nready] = b->head_params * b->grad_size;
        b->ready_task[b->nready++] = b->head_bwd;
    }
    /* optimizer_in_backward: each block's step once its gradients are this
     * rank's (memopts.c), the rank's parameters split as the model's */
    const int oib = b->t->optimizer_in_backward;
    const double all = b->layout->params_per_rank;
    const double share = all / (b->layers * b->m->layer_params + b->m->embedding_params);
    double stepped = 0, pending = 0;
    if (oib && b->head_params > 0 && cs__memopts_reduction(b, b->head_bwd) == b->head_bwd) {
        cs__memopts_step(b, -1, share * b->head_params, "head", b->head_bwd);
        stepped += share * b->head_params;
    }
    for (int l = b->layers - 1; l >= 0; l--) {
        if (r->backward_unit) r->backward_unit(b, l);
        else cs__wb_backward(b, l);
        if (!oib) continue;
        pending += share * b->m->layer_params;
        int after = cs__memopts_reduction(b, b->bwd[l]);
        if (after < 0) continue; /* the unit's reduction comes with a lower block */
        cs__memopts_step(b, l, pending, NULL, after);
        stepped += pending;
        pending = 0;
    }
    if (b->grads_done < 0) b->grads_done = b->bwd[0];
    /* the root unit's gradients (embeddings, head) are complete last */
    b->ready_bytes[b->nready] = b->grad_bytes[0] - b->head_params * b->grad_size;
    b->ready_task[b->nready++] = b->grads_done;
    if (r->post_backward) r->post_backward(b);
    if (oib) { /* the root's, and any blocks still pending: what is left */
        int after = cs__memopts_reduction(b, b->grads_done);
        b->root_step = cs__memopts_step(b, -1, all - stepped, "root", after >= 0 ? after : b->grads_done);
    }
}

/* The optimizer step on this rank's shard, once every gradient reduction
 * is done, and what the strategy does after it. */
static void build_step(cs_wbuild *b)
{
    cs_workload *w = b->w;
    if (b->t->optimizer_in_backward) { /* stepped in backward (build_micro): no step here */
        b->micro = -1;
        if (b->row->after_step) b->row->after_step(b, b->root_step);
        return;
    }
    const double shard = b->layout->params_per_rank / b->layout->optimizer_degree;
    cs_task *opt = cs__wb_add(w, CS_TASK_MEMORY, CS_STREAM_COMPUTE, -1, -1, "optimizer step", NULL, -1);
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
            if (last >= 0 && last != opt->id) cs__wb_dep(b, opt->id, last, 0);
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
