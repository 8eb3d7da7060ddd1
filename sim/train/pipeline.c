/* SPDX-License-Identifier: MIT */
/*
 * pipeline.c - pipeline parallelism (pipeline.h): stages, the executor of
 * a schedule row, each stage's closing synchronisation and its memory.
 *
 * Stages. Megatron-LM's split (megatron/core/transformer/
 * transformer_block.py get_num_layers_to_build): L / (P x V) layers per
 * virtual stage, virtual stage v = chunk x P + stage holding the v-th run
 * of them; the embedding on the first stage and the output layer and loss
 * on the last, counted as no layer (Megatron's default; its
 * account_for_embedding/loss_in_pipeline_split and torchtitan's
 * input_weight / output_weight count them as layers, not done here).
 * Megatron asserts that P x V divides L; an uneven count is split as
 * torchtitan splits layers (torchtitan/distributed/pipeline_parallel.py
 * generate_llm_fqn_per_model_part): the first L mod PV virtual stages one
 * layer more.
 *
 * Passes. A chunk's forward of one micro-batch is its layers' forward
 * kernels (compute.c, on the tensor-parallel rank's model) and the TP
 * collectives tensor.c puts after each (cs__tensor_layer's counts); its
 * backward the backward and recompute kernels and their collectives; the
 * last virtual stage adds the head (the compute model prices embedding,
 * final norm, logits and loss as one head: all on the last stage here, a
 * departure: the embedding lookup is on the first in Megatron and costs
 * little). Under a split row W is the wgrad GEMMs (compute.h kernels
 * named *.wgrad), B the rest. Kernels and collectives of a pass run back to
 * back (the per-rank executor's order without async TP; the overlap
 * slowdown is not applied inside a pass).
 *
 * Transfers. Each forward sends its output (b x s x h in the compute
 * dtype) to the next virtual stage, each backward the input gradient to
 * the previous; priced as NCCL's send_recv ring shift on the pp group's
 * topology (coll/algo_p2p.c, the layout's placement: NVLink when the
 * stages share a node, the NIC path across nodes, shared by the sibling
 * pipelines on a node), every stage sending to its neighbour at once.
 * With T > 1 each rank sends 1/T and the stage all-gathers it over the
 * tp group (Narayanan et al. 2021 Sec 4.1, scatter/gather). The sender is
 * held for the transfer (Megatron's p2p_communication._communicate waits
 * on its requests before the next pass) and the receiver starts no
 * earlier than its end.
 *
 * Executor. Each stage runs its order (the schedule row) one pass at a
 * time; a pass starts when the stage is free and its input has arrived.
 * The bubble is whatever idle time results: nothing is added on top.
 * Then each stage synchronises its gradients over the data-parallel
 * group: DDP / ZeRO-1 one all-reduce of its gradients after the flush
 * (Megatron's local DDP: finalize_model_grads after the last backward);
 * sharded strategies gather the stage's parameters once before the first
 * pass and reduce-scatter after the last, keeping them unsharded across
 * micro-batches (torchtitan's apply_fsdp: reshard_after_forward false
 * under PP in its "default" policy); then the optimizer step over the
 * stage's shard (HBM-bound, as workload.c prices it). The iteration is
 * the slowest stage's.
 *
 * Memory. Stage s holds its layers' parameters, gradients and optimizer
 * states (sharded as the layout says), the activations of the (micro-batch,
 * chunk) pairs the run held at once (held_max: 1F1B's P - s, interleaving
 * more, GPipe all m; Korthikanti et al. 2022 Sec 4.2.3 / Eq. 5), the
 * running layer's recompute, and, on the last stage only, the loss's
 * logits buffers; the other terms as memory.c counts them.
 */
#include "train/pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "train/checkpoint.h"
#include "train/compute.h"
#include "train/strategy.h"
#include "train/tensor.h"

int cs_pipeline_degree(const cs_training *t)
{
    return t->pipeline_parallel > 1 ? t->pipeline_parallel : 1;
}

int cs_pipeline_chunks(const cs_training *t) { return t->virtual_stages > 1 ? t->virtual_stages : 1; }

const cs_pp_schedule_row *cs_pipeline_schedule(const cs_training *t)
{
    if (t->pipeline_schedule >= 0) return cs_pp_schedule_row_at(t->pipeline_schedule);
    return cs_pp_schedule_find(cs_pipeline_chunks(t) > 1 ? "interleaved_1f1b" : "1f1b");
}

int cs_pipeline_check(const cs_model *m, const cs_training *t, cs_diag *d)
{
    int P = cs_pipeline_degree(t), V = cs_pipeline_chunks(t);
    if (P == 1) return 0;
    if ((long)P * V > m->layers)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "pipeline_parallel %d x virtual_stages %d exceeds the model's %d layers",
                           P, V, m->layers);
    const cs_pp_schedule_row *r = cs_pipeline_schedule(t);
    return r->check(P, V, t->grad_accum, d);
}

int cs_pipeline_chunk_layers(int L, int P, int V, int stage, int chunk, int *first)
{
    int n = P * V, v = chunk * P + stage, base = L / n, extra = L % n;
    if (first) *first = v * base + (v < extra ? v : extra);
    return base + (v < extra);
}

/* The parameters stage s holds: its layers' and the embedding's share
 * (file header: the input embedding on the first stage, a tied output
 * layer's copy on the last), as stage_memory and cs_pipeline_run count
 * them. Exported for the planner's memory floor (study/plan_space.c). */
double cs_pipeline_stage_params(const cs_model *m, int P, int V, int s)
{
    int layers = 0;
    for (int ch = 0; ch < V; ch++) layers += cs_pipeline_chunk_layers(m->layers, P, V, s, ch, NULL);
    double emb = s == 0 ? m->embedding_params : 0;
    if (s == P - 1 && m->tied_embeddings) emb += (double)m->vocab * m->hidden;
    return layers * m->layer_params + emb;
}

/* ---- the executor ---- */

void cs_pp_run_free(cs_pp_run *r)
{
    free(r->end_s);
    free(r->busy_s);
    free(r->held_max);
    free(r->held_peak);
    memset(r, 0, sizeof *r);
}

void cs_pipeline_simulate(const cs_pp_schedule_row *row, int P, int V, int m, const double *f,
                          const double *b, const double *w, double p2p_s, double w_frac,
                          cs_pp_run *out)
{
    cs_pipeline_simulate_record(row, P, V, m, f, b, w, p2p_s, w_frac, out, NULL, NULL);
}

void cs_pipeline_simulate_record(const cs_pp_schedule_row *row, int P, int V, int m,
                                 const double *f, const double *b, const double *w, double p2p_s,
                                 double w_frac, cs_pp_run *out, cs_pp_slice *rec, int *nrec)
{
    int nv = P * V, cap = 3 * m * V;
    out->P = P;
    out->time_s = 0;
    out->end_s = cs_xcalloc((size_t)P, sizeof *out->end_s);
    out->busy_s = cs_xcalloc((size_t)P, sizeof *out->busy_s);
    out->held_max = cs_xcalloc((size_t)P, sizeof *out->held_max);
    out->held_peak = cs_xcalloc((size_t)P, sizeof *out->held_peak);
    int *pend = cs_xcalloc((size_t)P, sizeof *pend); /* B run, W not yet */
    cs_pp_op **order = cs_xmalloc(sizeof *order * (size_t)P);
    int *n = cs_xmalloc(sizeof *n * (size_t)P), *next = cs_xcalloc((size_t)P, sizeof *next);
    int *held = cs_xcalloc((size_t)P, sizeof *held);
    double *free_s = cs_xcalloc((size_t)P, sizeof *free_s);
    /* when virtual stage v's F / B of micro-batch i ended (< 0: not yet) */
    double *fend = cs_xmalloc(sizeof *fend * (size_t)nv * m);
    double *bend = cs_xmalloc(sizeof *bend * (size_t)nv * m);
    for (long i = 0; i < (long)nv * m; i++) fend[i] = bend[i] = -1;
    long left = 0;
    for (int s = 0; s < P; s++) {
        order[s] = cs_xmalloc(sizeof **order * (size_t)cap);
        n[s] = row->order(P, V, m, s, order[s]);
        CS_ASSERT(n[s] <= cap);
        left += n[s];
    }
    while (left > 0) {
        long progress = 0;
        for (int s = 0; s < P; s++) {
            while (next[s] < n[s]) {
                cs_pp_op o = order[s][next[s]];
                int v = o.chunk * P + s, k = s * V + o.chunk, from = -1, to = -1;
                double ready = free_s[s], dur, arrived = 0;
                if (o.pass == CS_PP_F) {
                    if (v > 0) {
                        double e = fend[(long)(v - 1) * m + o.micro];
                        if (e < 0) break;
                        if (e + p2p_s > ready) ready = e + p2p_s;
                        arrived = e + p2p_s, from = (v - 1) % P;
                    }
                    if (v < nv - 1) to = (v + 1) % P;
                    dur = f[k];
                } else if (o.pass == CS_PP_B) {
                    double e = v < nv - 1 ? bend[(long)(v + 1) * m + o.micro]
                                          : fend[(long)v * m + o.micro];
                    if (e < 0) break;
                    if (v < nv - 1 && e + p2p_s > ready) ready = e + p2p_s;
                    if (v < nv - 1) arrived = e + p2p_s, from = (v + 1) % P;
                    if (v > 0) to = (v - 1) % P;
                    dur = row->split_backward ? b[k] : b[k] + w[k];
                } else {
                    dur = w[k];
                }
                double end = ready + dur;
                if (rec) { /* the pass as it ran, and its transfers (pipeline.h tags) */
                    int dir = o.pass == CS_PP_B;
                    cs_pp_slice *r = &rec[(long)s * cap + next[s]];
                    *r = (cs_pp_slice){.stage = s, .chunk = o.chunk, .micro = o.micro,
                                       .pass = o.pass, .start_s = ready, .end_s = end,
                                       .ready_s = arrived, .send_s = to >= 0 ? p2p_s : 0,
                                       .from_stage = from, .to_stage = to, .tag = -1,
                                       .recv_tag = -1};
                    if (to >= 0) r->tag = (o.micro * nv + v) * 2 + dir;
                    if (from >= 0) r->recv_tag = (o.micro * nv + (dir ? v + 1 : v - 1)) * 2 + dir;
                    nrec[s] = next[s] + 1;
                }
                out->busy_s[s] += dur;
                free_s[s] = end;
                if (o.pass == CS_PP_F) {
                    fend[(long)v * m + o.micro] = end;
                    if (++held[s] > out->held_max[s]) out->held_max[s] = held[s];
                    if (v < nv - 1) free_s[s] += p2p_s; /* the sender waits for its send */
                } else if (o.pass == CS_PP_B) {
                    bend[(long)v * m + o.micro] = end;
                    if (!row->split_backward) held[s]--;
                    else pend[s]++;
                    if (v > 0) free_s[s] += p2p_s;
                } else {
                    held[s]--;
                    pend[s]--;
                }
                double h = held[s] - pend[s] + w_frac * pend[s];
                if (h > out->held_peak[s]) out->held_peak[s] = h;
                out->end_s[s] = end;
                next[s]++;
                left--;
                progress++;
            }
        }
        CS_ASSERT(progress > 0); /* a schedule row whose order deadlocks */
    }
    for (int s = 0; s < P; s++) {
        if (out->end_s[s] > out->time_s) out->time_s = out->end_s[s];
        free(order[s]);
    }
    free(order), free(n), free(next), free(held), free(pend), free(free_s), free(fend), free(bend);
}

/* ---- one configuration ---- */

/* The duration of op x size on group g (0 for a group of one rank). */
static int price(cs_pricing_cache *cache, const cs_layout *l, cs_group g, cs_op op, double size,
                 cs_engine_kind e, double *out_s, cs_diag *d)
{
    *out_s = 0;
    const cs_layout_group *x = &l->group[g];
    if (x->size <= 1 || size <= 0) return 0;
    cs_algo_id a;
    cs_proto p;
    int slot = cache ? cs_pricing_cache_slot(cache, &x->topo) : -1;
    return cs_pricing_price(cache, slot, &x->topo, op, size, e, &a, &p, out_s, d);
}

/* The TP collectives of one layer's forward or backward, as
 * tensor.c cs__tensor_layer issues them: their summed time. */
static int tp_layer_s(cs_pricing_cache *cache, const cs_layout *l, const cs_training *t,
                      double act_bytes, int backward, double *out_s, cs_diag *d)
{
    *out_s = 0;
    if (cs_tensor_degree(t) == 1) return 0;
    double again = backward && t->checkpointing == CS_CKPT_FULL ? 1 : 0, ar, ag, rs;
    int rc;
    if (!cs_tensor_sequence_parallel(t)) {
        if ((rc = price(cache, l, CS_GROUP_TP, CS_OP_ALL_REDUCE, act_bytes, t->collective_engine, &ar, d)))
            return rc;
        *out_s = (2 + 2 * again) * ar;
        return 0;
    }
    if ((rc = price(cache, l, CS_GROUP_TP, CS_OP_ALL_GATHER, act_bytes, t->collective_engine, &ag, d)) ||
        (rc = price(cache, l, CS_GROUP_TP, CS_OP_REDUCE_SCATTER, act_bytes, t->collective_engine, &rs, d)))
        return rc;
    *out_s = ((backward ? 4 : 2) + 2 * again) * ag + (2 + 2 * again) * rs;
    return 0;
}

/* The head's TP collectives (tensor.c cs__tensor_head). */
static int tp_head_s(cs_pricing_cache *cache, const cs_layout *l, const cs_training *t,
                     const cs_model *m, double act_bytes, int backward, double *out_s, cs_diag *d)
{
    *out_s = 0;
    if (cs_tensor_degree(t) == 1) return 0;
    int sp = cs_tensor_sequence_parallel(t), rc;
    double a, g = 0, loss = 0;
    cs_engine_kind e = t->collective_engine;
    if ((rc = price(cache, l, CS_GROUP_TP, sp ? CS_OP_REDUCE_SCATTER : CS_OP_ALL_REDUCE, act_bytes, e, &a, d)))
        return rc;
    if (sp && (rc = price(cache, l, CS_GROUP_TP, CS_OP_ALL_GATHER, act_bytes, e, &g, d))) return rc;
    if (!backward &&
        (rc = price(cache, l, CS_GROUP_TP, CS_OP_ALL_REDUCE,
                    4.0 * t->micro_batch * m->seq_len, e, &loss, d)))
        return rc;
    *out_s = a + g + 3 * loss;
    return 0;
}

/* Seconds of the wgrad kernels of one layer's backward; their FLOPs into
 * *flops. */
static double wgrad_s(const cs_model *m, const cs_training *t, const cs_cluster *c, double *flops)
{
    size_t n = cs_compute_kernels(m, t, c, NULL, 0);
    cs_kernel *k = cs_xmalloc(sizeof *k * (n ? n : 1));
    cs_compute_kernels(m, t, c, k, n);
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(k[i].name);
        if (k[i].pass == CS_KPASS_BACKWARD && len > 6 && !strcmp(k[i].name + len - 6, ".wgrad"))
            s += k[i].time_s, *flops += k[i].flops;
    }
    free(k);
    return s;
}

/* Stage s's memory (file header): memory.c's lines on the stage's share
 * of the model, with `held` (micro-batch, chunk) activations of chunks of
 * `chunk_layers` layers. */
static int stage_memory(const cs_model *m, const cs_training *t, const cs_layout *l, int s,
                        int stage_layers, int chunk_layers, double held, cs_memory *out, cs_diag *d)
{
    int P = cs_pipeline_degree(t);
    cs_model sm = *m; /* the stage's share of the model */
    sm.layers = chunk_layers;
    double emb = m->embedding_params;
    /* tied embeddings: the first stage's lookup and the last stage's output
     * layer each hold a copy (Megatron keeps both, synchronised) */
    double stage_emb = s == 0 ? emb : 0;
    if (s == P - 1) stage_emb += m->tied_embeddings ? (double)m->vocab * m->hidden : 0;
    /* the stage's parameters: what DDP's buckets and FSDP's unsharded
     * units and gradients are sized by (strategy_ddp.c, strategy_fsdp.c),
     * not the whole model's */
    sm.params = stage_layers * m->layer_params + stage_emb;
    cs_layout sl = *l;
    sl.params_per_rank = sm.params / cs_tensor_degree(t);
    int rc = cs_memory_estimate_layout(&sm, t, &sl, 0, out, d);
    if (rc) return rc;
    double kept = 0;
    for (int i = 0; i < chunk_layers; i++) kept += cs_checkpoint_kept_bytes(&sm, t, i);
    double act = out->activations_bytes + (held > 1 ? held - 1 : 0) * kept;
    double temp = s == P - 1 ? out->temp_bytes : 0;
    double allocated = out->model_states_bytes + out->buckets_bytes;
    double backward = act + out->unsharded_bytes + temp;
    allocated += out->step_temp_bytes > backward ? out->step_temp_bytes : backward;
    out->activations_bytes = act;
    out->temp_bytes = temp;
    out->fragmentation_bytes = t->fragmentation * allocated;
    out->overhead_bytes = out->cuda_context_bytes + out->nccl_bytes + out->fragmentation_bytes;
    out->peak_bytes = allocated + out->overhead_bytes;
    out->fits = out->peak_bytes <= out->capacity_bytes;
    return 0;
}

void cs_pp_timeline_free(cs_pp_timeline *tl)
{
    free(tl->slice), free(tl->first), free(tl->nslices);
    free(tl->f_flops), free(tl->b_flops), free(tl->w_flops);
    free(tl->gather_s), free(tl->sync_s), free(tl->sync_bytes), free(tl->optimizer_s);
    free(tl->gather_bytes), free(tl->optimizer_bytes), free(tl->layers), free(tl->layout);
    memset(tl, 0, sizeof *tl);
}

int cs_pipeline_run(const cs_model *whole, const cs_training *t, const cs_layout *l,
                    cs_pricing_cache *cache, cs_iteration *it, cs_pp_memory *mem, cs_diag *d)
{
    return cs_pipeline_run_timeline(whole, t, l, cache, it, mem, NULL, d);
}

/* tl's arrays for P stages of V chunks, m micro-batches (the slices' room:
 * cs_pipeline_simulate_record's). */
static void timeline_alloc(cs_pp_timeline *tl, int P, int V, int m, const char *schedule)
{
    memset(tl, 0, sizeof *tl);
    tl->P = P, tl->V = V, tl->m = m, tl->schedule = schedule;
    size_t cap = (size_t)3 * m * V, nk = (size_t)P * V;
    tl->slice = cs_xcalloc((size_t)P * cap, sizeof *tl->slice);
    tl->first = cs_xcalloc((size_t)P, sizeof *tl->first);
    tl->nslices = cs_xcalloc((size_t)P, sizeof *tl->nslices);
    for (int s = 0; s < P; s++) tl->first[s] = (int)(s * cap);
    tl->f_flops = cs_xcalloc(nk, sizeof(double));
    tl->b_flops = cs_xcalloc(nk, sizeof(double));
    tl->w_flops = cs_xcalloc(nk, sizeof(double));
    tl->gather_s = cs_xcalloc((size_t)P, sizeof(double));
    tl->sync_s = cs_xcalloc((size_t)P, sizeof(double));
    tl->sync_bytes = cs_xcalloc((size_t)P, sizeof(double));
    tl->optimizer_s = cs_xcalloc((size_t)P, sizeof(double));
    tl->gather_bytes = cs_xcalloc((size_t)P, sizeof(double));
    tl->optimizer_bytes = cs_xcalloc((size_t)P, sizeof(double));
    tl->layers = cs_xcalloc((size_t)P, sizeof(int));
}

int cs_pipeline_run_timeline(const cs_model *whole, const cs_training *t, const cs_layout *l,
                             cs_pricing_cache *cache, cs_iteration *it, cs_pp_memory *mem,
                             cs_pp_timeline *tl, cs_diag *d)
{
    memset(it, 0, sizeof *it);
    if (tl) memset(tl, 0, sizeof *tl);
    int rc = cs_pipeline_check(whole, t, d);
    if (rc) return rc;
    const int P = cs_pipeline_degree(t), V = cs_pipeline_chunks(t), M = t->grad_accum;
    const cs_pp_schedule_row *row = cs_pipeline_schedule(t);
    const cs_cluster *c = &l->group[CS_GROUP_WORLD].topo.cluster;
    cs_model rbuf;
    const cs_model *m = cs_tensor_rank_model(whole, t, &rbuf);
    cs_compute comp;
    if ((rc = cs_compute_price(whole, t, c, &comp, d))) return rc;
    double act = (double)t->micro_batch * whole->seq_len * whole->hidden * cs_dtype_size(t->param_dtype);
    double tpf, tpb, hf, hb;
    if ((rc = tp_layer_s(cache, l, t, act, 0, &tpf, d)) || (rc = tp_layer_s(cache, l, t, act, 1, &tpb, d)) ||
        (rc = tp_head_s(cache, l, t, whole, act, 0, &hf, d)) ||
        (rc = tp_head_s(cache, l, t, whole, act, 1, &hb, d)))
        return rc;
    double wgf = 0, wg = row->split_backward ? wgrad_s(m, t, c, &wgf) : 0;
    if (tl) {
        timeline_alloc(tl, P, V, M, row->name);
        tl->layout = cs_xmalloc(sizeof *tl->layout);
        *tl->layout = *l;
    }
    double lf = comp.pass[CS_KPASS_FORWARD].time_s + tpf;
    double lb = comp.pass[CS_KPASS_BACKWARD].time_s + tpb - wg;
    double lr = comp.pass[CS_KPASS_RECOMPUTE].time_s;
    int nk = P * V;
    double *f = cs_xcalloc((size_t)nk, sizeof *f), *b = cs_xcalloc((size_t)nk, sizeof *b);
    double *w = cs_xcalloc((size_t)nk, sizeof *w);
    for (int s = 0; s < P; s++)
        for (int ch = 0; ch < V; ch++) {
            int first, n = cs_pipeline_chunk_layers(whole->layers, P, V, s, ch, &first), k = s * V + ch;
            for (int i = first; i < first + n; i++) {
                int again = cs_checkpoint_layer_recomputes(t, i);
                f[k] += lf;
                b[k] += lb + (again ? lr : 0);
                w[k] += wg;
                if (tl) {
                    tl->f_flops[k] += comp.pass[CS_KPASS_FORWARD].flops;
                    tl->b_flops[k] += comp.pass[CS_KPASS_BACKWARD].flops - wgf +
                                      (again ? comp.pass[CS_KPASS_RECOMPUTE].flops : 0);
                    tl->w_flops[k] += wgf;
                }
            }
            if (ch * P + s == nk - 1) {
                f[k] += comp.pass[CS_KPASS_HEAD_FORWARD].time_s + hf;
                b[k] += comp.pass[CS_KPASS_HEAD_BACKWARD].time_s + hb;
                if (tl) {
                    tl->f_flops[k] += comp.pass[CS_KPASS_HEAD_FORWARD].flops;
                    tl->b_flops[k] += comp.pass[CS_KPASS_HEAD_BACKWARD].flops;
                }
            }
        }
    /* one transfer between neighbouring stages (the file header) */
    double p2p = 0, gather = 0;
    int T = cs_tensor_degree(t);
    if ((rc = price(cache, l, CS_GROUP_PP, CS_OP_SEND_RECV, act / T, t->collective_engine, &p2p, d)) ||
        (T > 1 && (rc = price(cache, l, CS_GROUP_TP, CS_OP_ALL_GATHER, act, t->collective_engine, &gather, d))))
        goto out;
    p2p += gather;
    /* what W keeps of a micro-batch's activations: the weight GEMMs' inputs
     * and output gradients, 32 s b h bytes a layer in 16 bits against
     * F's 34 s b h + 5 a s^2 b (Qi et al. 2024 Table 1; sail-sg's
     * zero-bubble code: mem_w = -32 h, mem_f = 34 h + 5 a s), over T */
    double w_frac = 1;
    if (row->split_backward) {
        double kept = cs_checkpoint_kept_bytes(m, t, 0);
        double wk = 16.0 * t->micro_batch * whole->seq_len * whole->hidden *
                    cs_dtype_size(t->param_dtype) / T;
        w_frac = kept > 0 && wk < kept ? wk / kept : 1;
    }
    cs_pp_run run;
    if (tl) {
        cs_pipeline_simulate_record(row, P, V, M, f, b, w, p2p, w_frac, &run, tl->slice, tl->nslices);
        tl->p2p_bytes = act / T;
        tl->p2p_dtype = t->param_dtype;
    } else {
        cs_pipeline_simulate(row, P, V, M, f, b, w, p2p, w_frac, &run);
    }

    /* each stage's gradient synchronisation and optimizer step */
    const cs_strategy_row *sr = cs_strategy_row_of(t->strategy);
    int sharded = sr->shards_params || sr->shards_grads;
    cs_dtype wire = sharded ? t->grad_reduce_dtype : cs_training_bucket_wire_dtype(t);
    double worst = 0, busiest = 0, opt_worst = 0, sync_worst = 0;
    if (mem) {
        memset(mem, 0, sizeof *mem);
        mem->P = P;
        mem->V = V;
        mem->schedule = row->name;
    }
    for (int s = 0; s < P && !rc; s++) {
        int layers = 0;
        for (int ch = 0; ch < V; ch++) layers += cs_pipeline_chunk_layers(whole->layers, P, V, s, ch, NULL);
        double emb = s == 0 ? whole->embedding_params : 0;
        if (s == P - 1 && whole->tied_embeddings) emb += (double)whole->vocab * whole->hidden;
        double params = (layers * whole->layer_params + emb) / T;
        double sync = 0, gather0 = 0;
        if (sharded) {
            rc = price(cache, l, l->shard, CS_OP_REDUCE_SCATTER, params * cs_dtype_size(wire),
                       t->collective_engine, &sync, d);
            if (!rc && sr->shards_params)
                rc = price(cache, l, l->shard, CS_OP_ALL_GATHER,
                           params * cs_dtype_size(t->param_dtype), t->collective_engine, &gather0, d);
        } else {
            rc = price(cache, l, l->shard, CS_OP_ALL_REDUCE, params * cs_dtype_size(wire),
                       t->collective_engine, &sync, d);
        }
        if (rc) break;
        double shard = params / l->optimizer_degree;
        double bytes = shard * cs_training_optimizer_traffic_per_param(t);
        double eff = cs_compute_hbm_efficiency(c, bytes);
        double opt = bytes > 0 && eff > 0 ? bytes / (c->gpu.hbm_Bps * eff) : 0;
        double end = gather0 + run.end_s[s] + sync + opt;
        if (tl) {
            tl->sync_op = sharded ? CS_OP_REDUCE_SCATTER : CS_OP_ALL_REDUCE;
            tl->sync_group = l->shard;
            tl->gather_s[s] = gather0, tl->sync_s[s] = sync, tl->optimizer_s[s] = opt;
            tl->sync_bytes[s] = params * cs_dtype_size(wire);
            tl->gather_bytes[s] = sr->shards_params ? params * cs_dtype_size(t->param_dtype) : 0;
            tl->optimizer_bytes[s] = bytes;
            tl->layers[s] = layers;
        }
        if (end > worst) {
            worst = end;
            opt_worst = opt;
            sync_worst = sync + gather0;
            busiest = run.busy_s[s];
        }
        if (mem && s < CS_PIPELINE_STAGES_MAX) {
            int chunk_layers = cs_pipeline_chunk_layers(whole->layers, P, V, s, 0, NULL);
            mem->layers[s] = layers;
            mem->held[s] = run.held_max[s];
            rc = stage_memory(whole, t, l, s, layers, chunk_layers, run.held_peak[s], &mem->stage[s], d);
            if (!rc && mem->stage[s].peak_bytes > mem->stage[mem->peak_stage].peak_bytes)
                mem->peak_stage = s;
        }
    }
    if (!rc) {
        double ranks = l->group[CS_GROUP_WORLD].size;
        double tokens = l->tokens_per_step;
        double mflops = cs_model_flops_per_token(whole) * tokens / ranks;
        double recompute = cs_checkpoint_recomputes_whole(t)
                               ? cs_model_layer_forward_flops(whole, tokens) *
                                     cs_checkpoint_recomputing_layers(whole, t) / ranks
                               : 0;
        double peak = c->gpu.peak_flops[t->param_dtype];
        it->iteration_time_s = worst;
        it->compute_s = busiest + opt_worst;
        it->optimizer_s = opt_worst;
        it->recompute_s = 0;
        it->exposed_comm_s = worst - busiest - opt_worst; /* the bubble, transfers, sync */
        it->exposed_by_op_s[sharded ? CS_OP_REDUCE_SCATTER : CS_OP_ALL_REDUCE] = sync_worst;
        it->exposed_by_op_s[CS_OP_SEND_RECV] = it->exposed_comm_s - sync_worst;
        it->tokens_per_s = tokens / worst;
        it->tflops_per_gpu = mflops / worst / 1e12;
        it->mfu = peak > 0 ? mflops / worst / peak : 0;
        it->hfu = peak > 0 ? (mflops + recompute) / worst / peak : 0;
        if (mem) {
            const cs_memory *pk = &mem->stage[mem->peak_stage];
            it->peak_bytes = pk->peak_bytes;
        }
    }
    cs_pp_run_free(&run);
out:
    free(f), free(b), free(w);
    if (rc && tl) cs_pp_timeline_free(tl);
    return rc;
}
