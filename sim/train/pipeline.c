/* SPDX-License-Identifier: MIT */
/*
 * pipeline.c - pipeline parallelism (pipeline.h): stages, the passes'
 * times a configuration gives the executor (pipeline_exec.c), each
 * stage's closing synchronisation and its memory.
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
 * kernels (compute.c, which splits the whole model over the tp ranks;
 * under a split row W's wgrad kernels too) and the TP
 * collectives tensor.c puts after each (cs_tensor_layer_collectives: the
 * rows the graph issues too); its backward the backward and recompute
 * kernels and their collectives; the
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
 * Executor (pipeline_exec.c): each stage runs its order one pass at a
 * time; the iteration's idle time (the bubble) is whatever results.
 * Then each stage synchronises its gradients over the data-parallel
 * group: DDP / ZeRO-1 one all-reduce of its gradients after the flush
 * (Megatron's local DDP: finalize_model_grads after the last backward);
 * sharded strategies gather the stage's parameters once before the first
 * pass and reduce-scatter after the last, keeping them unsharded across
 * micro-batches (torchtitan's apply_fsdp: reshard_after_forward false
 * under PP in its "default" policy); then the optimizer step over the
 * stage's shard (HBM-bound, as workload.c prices it). The iteration is
 * the slowest stage's (the first of the slowest): its time, its parts and
 * the bytes its rank sends (by op: its transfers as send_recv, its TP
 * collectives, its closing gather and sync). Its idle time splits into
 * exposed send_recv (held for its sends, waiting on an input while it is
 * sent: pipeline_exec.c) and the pipeline bubble (waiting for the
 * neighbours' passes), which is no communication (iteration.h
 * pipeline_bubble_s).
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
    if (P > CS_PIPELINE_STAGES_MAX) /* a planner's P, not read through the limits table */
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "pipeline_parallel %d exceeds %d", P,
                           CS_PIPELINE_STAGES_MAX);
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

/* The summed time of a block's TP collectives (tensor.h's rows for one
 * layer's or the head's forward or backward, as the graph issues them). */
static int tp_block_s(cs_pricing_cache *cache, const cs_layout *l, const cs_training *t,
                      const cs_tensor_coll *row, int n, double *out_s, cs_diag *d)
{
    *out_s = 0;
    for (int r = 0; r < n; r++) {
        double one;
        int rc = price(cache, l, CS_GROUP_TP, row[r].op, row[r].size_bytes, t->collective_engine,
                       &one, d);
        if (rc) return rc;
        *out_s += row[r].count * one;
    }
    return 0;
}

/* The TP collectives' time of one layer's (head = 0) or the head's
 * forward or backward on the whole model. */
static int tp_s(cs_pricing_cache *cache, const cs_layout *l, const cs_training *t,
                const cs_model *whole, int head, int backward, double *out_s, cs_diag *d)
{
    cs_tensor_coll row[CS_TENSOR_COLLS_MAX];
    int n = head ? cs_tensor_head_collectives(whole, t, backward, row)
                 : cs_tensor_layer_collectives(whole, t, backward, row);
    return tp_block_s(cache, l, t, row, n, out_s, d);
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
 * of the model, with `held` (micro-batch, chunk) activations of its chunks
 * (the first `chunk_layers` layers). */
static int stage_memory(const cs_model *m, const cs_training *t, const cs_layout *l, int s,
                        int chunk_layers, double held, cs_memory *out, cs_diag *d)
{
    int P = cs_pipeline_degree(t);
    cs_model sm = *m; /* the stage's share of the model */
    sm.layers = chunk_layers;
    /* the stage's parameters: what DDP's buckets and FSDP's unsharded
     * units and gradients are sized by (strategy_ddp.c, strategy_fsdp.c),
     * not the whole model's; with tied embeddings the first stage's lookup
     * and the last stage's output layer each hold a copy (Megatron keeps
     * both, synchronised) */
    sm.params = cs_pipeline_stage_params(m, P, cs_pipeline_chunks(t), s);
    cs_layout sl = *l;
    sl.params_per_rank = sm.params / cs_tensor_degree(t);
    /* the lines only: a stage's peak is priced below with the flat
     * fraction, so the whole model's allocator replay would be thrown away */
    int rc = cs_memory_lines_layout(&sm, t, &sl, out, d);
    if (rc) return rc;
    /* a held (micro-batch, chunk)'s activations: its layers' by their
     * global index, as chunk_passes times them (every-N checkpointing picks
     * layers by it, review finding 5); the mean over the stage's chunks */
    int V = cs_pipeline_chunks(t);
    double kept = 0;
    for (int ch = 0; ch < V; ch++) {
        int first, n = cs_pipeline_chunk_layers(m->layers, P, V, s, ch, &first);
        for (int i = first; i < first + n; i++) kept += cs_checkpoint_kept_bytes(&sm, t, i) / V;
    }
    double act = out->activations_bytes + (held > 1 ? held - 1 : 0) * kept;
    double temp = s == P - 1 ? out->temp_bytes : 0;
    double allocated = out->model_states_bytes + out->buckets_bytes;
    double backward = act + out->unsharded_bytes + temp;
    allocated += out->step_temp_bytes > backward ? out->step_temp_bytes : backward;
    out->activations_bytes = act;
    out->temp_bytes = temp;
    out->fragmentation_bytes = cs_training_flat_fragmentation(t) * allocated;
    out->peak_allocated_bytes = allocated; /* no replay of stages yet */
    out->peak_reserved_bytes = allocated + out->fragmentation_bytes;
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

/* One layer's and the head's passes on one rank (the rank's kernels and
 * tensor.h's TP collectives), priced once for every chunk. */
typedef struct pass_prices {
    cs_compute comp;
    double lf, lb, lr;  /* a layer's forward, backward (less W), recompute */
    double wg, wgf;     /* a layer's W: seconds, FLOPs (0 unless split) */
    double hf, hb;      /* the head's TP collectives, forward and backward */
} pass_prices;

static int price_passes(const cs_model *whole, const cs_training *t,
                        const cs_layout *l, const cs_cluster *c, const cs_pp_schedule_row *row,
                        cs_pricing_cache *cache, pass_prices *pp, cs_diag *d)
{
    memset(pp, 0, sizeof *pp);
    double tpf, tpb;
    int rc;
    /* the whole model: compute.c splits over the tp ranks itself */
    if ((rc = cs_compute_price(whole, t, c, &pp->comp, d))) return rc;
    if ((rc = tp_s(cache, l, t, whole, 0, 0, &tpf, d)) ||
        (rc = tp_s(cache, l, t, whole, 0, 1, &tpb, d)) ||
        (rc = tp_s(cache, l, t, whole, 1, 0, &pp->hf, d)) ||
        (rc = tp_s(cache, l, t, whole, 1, 1, &pp->hb, d)))
        return rc;
    /* W on the whole model too: compute.c's kernels are the rank's (on
     * the tp rank's model a generic model's layer_params were split twice,
     * review finding 4) */
    pp->wg = row->split_backward ? wgrad_s(whole, t, c, &pp->wgf) : 0;
    pp->lf = pp->comp.pass[CS_KPASS_FORWARD].time_s + tpf;
    pp->lb = pp->comp.pass[CS_KPASS_BACKWARD].time_s + tpb - pp->wg;
    pp->lr = pp->comp.pass[CS_KPASS_RECOMPUTE].time_s;
    return 0;
}

/* Each chunk's F, B, W for one micro-batch: its layers' passes (a
 * recomputing layer's backward adds its forward again), the head on the
 * last virtual stage; their FLOPs into tl when given. */
static void chunk_passes(const cs_model *whole, const cs_training *t, int P, int V,
                         const pass_prices *pp, double *f, double *b, double *w, cs_pp_timeline *tl)
{
    const cs_compute_pass *cp = pp->comp.pass;
    int nk = P * V;
    for (int s = 0; s < P; s++)
        for (int ch = 0; ch < V; ch++) {
            int first, n = cs_pipeline_chunk_layers(whole->layers, P, V, s, ch, &first), k = s * V + ch;
            for (int i = first; i < first + n; i++) {
                int again = cs_checkpoint_layer_recomputes(t, i);
                f[k] += pp->lf;
                b[k] += pp->lb + (again ? pp->lr : 0);
                w[k] += pp->wg;
                if (tl) {
                    tl->f_flops[k] += cp[CS_KPASS_FORWARD].flops;
                    tl->b_flops[k] += cp[CS_KPASS_BACKWARD].flops - pp->wgf +
                                      (again ? cp[CS_KPASS_RECOMPUTE].flops : 0);
                    tl->w_flops[k] += pp->wgf;
                }
            }
            if (ch * P + s == nk - 1) {
                f[k] += cp[CS_KPASS_HEAD_FORWARD].time_s + pp->hf;
                b[k] += cp[CS_KPASS_HEAD_BACKWARD].time_s + pp->hb;
                if (tl) {
                    tl->f_flops[k] += cp[CS_KPASS_HEAD_FORWARD].flops;
                    tl->b_flops[k] += cp[CS_KPASS_HEAD_BACKWARD].flops;
                }
            }
        }
}

/* What W keeps of a micro-batch's activations, as a fraction of what F
 * kept: the weight GEMMs' inputs and output gradients, 32 s b h bytes a
 * layer in 16 bits against F's 34 s b h + 5 a s^2 b (Qi et al. 2024
 * Table 1; sail-sg's zero-bubble code: mem_w = -32 h, mem_f = 34 h + 5 a
 * s), over T. 1 for rows that do not split the backward. */
static double w_fraction(const cs_pp_schedule_row *row, const cs_model *whole,
                         const cs_training *t, int T)
{
    if (!row->split_backward) return 1;
    double kept = cs_checkpoint_kept_bytes(whole, t, 0); /* the rank's, as stage_memory's */
    double wk = 16.0 * t->micro_batch * whole->seq_len * whole->hidden *
                cs_dtype_size(t->param_dtype) / T;
    return kept > 0 && wk < kept ? wk / kept : 1;
}

/* Stage s's closing synchronisation (the file header): the sharded
 * strategies' gather before the first pass, the gradients' reduction
 * after the flush, the optimizer step over the stage's shard. */
typedef struct stage_close {
    int layers;
    double gather_s, sync_s, opt_s;
    double gather_bytes, sync_bytes, opt_bytes;
    cs_dtype wire; /* sync_bytes' dtype */
} stage_close;

static int close_stage(const cs_model *whole, const cs_training *t, const cs_layout *l,
                       const cs_strategy_row *sr, cs_pricing_cache *cache, int s, stage_close *sc,
                       cs_diag *d)
{
    const int P = cs_pipeline_degree(t), V = cs_pipeline_chunks(t), T = cs_tensor_degree(t);
    const cs_cluster *c = &l->group[CS_GROUP_WORLD].topo.cluster;
    int sharded = sr->shards_params || sr->shards_grads, rc;
    cs_dtype wire = sharded ? t->grad_reduce_dtype : cs_training_bucket_wire_dtype(t);
    memset(sc, 0, sizeof *sc);
    for (int ch = 0; ch < V; ch++)
        sc->layers += cs_pipeline_chunk_layers(whole->layers, P, V, s, ch, NULL);
    double params = cs_pipeline_stage_params(whole, P, V, s) / T;
    sc->wire = wire;
    sc->sync_bytes = params * cs_dtype_size(wire);
    sc->gather_bytes = sr->shards_params ? params * cs_dtype_size(t->param_dtype) : 0;
    rc = price(cache, l, l->shard, sharded ? CS_OP_REDUCE_SCATTER : CS_OP_ALL_REDUCE,
               sc->sync_bytes, t->collective_engine, &sc->sync_s, d);
    if (!rc && sr->shards_params)
        rc = price(cache, l, l->shard, CS_OP_ALL_GATHER, sc->gather_bytes, t->collective_engine,
                   &sc->gather_s, d);
    if (rc) return rc;
    double shard = params / l->optimizer_degree;
    sc->opt_bytes = shard * cs_training_optimizer_traffic_per_param(t);
    double eff = cs_compute_hbm_efficiency(c, sc->opt_bytes);
    sc->opt_s = sc->opt_bytes > 0 && eff > 0 ? sc->opt_bytes / (c->gpu.hbm_Bps * eff) : 0;
    return 0;
}

/* The slowest stage's times (close_stages): its index, end, passes,
 * idle time on transfers (cs_pp_run.p2p_wait_s), closing collectives and
 * their sizes per rank. */
typedef struct stage_worst {
    int stage;
    double end, busy, p2p_wait, opt, sync, gather, recompute;
    double sync_bytes, gather_bytes;
} stage_worst;

/* Stage s's recomputed forwards over the m micro-batches: its layers
 * that recompute (by global index, as chunk_passes times them) x lr. */
static double stage_recompute_s(const cs_model *whole, const cs_training *t, int s, double lr)
{
    const int P = cs_pipeline_degree(t), V = cs_pipeline_chunks(t);
    int n = 0;
    for (int ch = 0; ch < V; ch++) {
        int first, k = cs_pipeline_chunk_layers(whole->layers, P, V, s, ch, &first);
        for (int i = first; i < first + k; i++) n += cs_checkpoint_layer_recomputes(t, i);
    }
    return (double)t->grad_accum * n * lr;
}

/* The bytes stage s's rank sends per iteration, by op, into it (as
 * iteration.c counts a graph's collectives: size x cs_op_busbw_factor on
 * the group's ranks, x how often): every transfer it sends (m x per
 * chunk: a forward's output unless the last virtual stage, a backward's
 * input gradient unless the first; act_bytes each, 1/T of it under TP)
 * and, under TP, the all-gather of every transfer it receives (as many)
 * over the tp group; its layers' and the head's TP collectives in each
 * micro-batch's forward and backward (tensor.h's rows, as tp_s prices
 * them: the recompute adds none); its closing gather and gradient sync
 * on the shard group. */
static void stage_wire_bytes(const cs_model *whole, const cs_training *t, const cs_layout *l,
                             cs_op sync_op, const stage_worst *w, double act_bytes,
                             cs_iteration *it)
{
    const int P = cs_pipeline_degree(t), V = cs_pipeline_chunks(t), T = cs_tensor_degree(t);
    const int s = w->stage, nv = P * V, m = t->grad_accum;
    const int tp = l->group[CS_GROUP_TP].size, shard = l->group[l->shard].size;
    double *out = it->wire_bytes_by_op;
    int transfers = 0, layers = 0, head = 0;
    for (int ch = 0; ch < V; ch++) {
        int v = ch * P + s;
        transfers += (v < nv - 1) + (v > 0);
        layers += cs_pipeline_chunk_layers(whole->layers, P, V, s, ch, NULL);
        head |= v == nv - 1;
    }
    out[CS_OP_SEND_RECV] += (double)m * transfers * act_bytes / T *
                            cs_op_busbw_factor(CS_OP_SEND_RECV, l->group[CS_GROUP_PP].size);
    if (T > 1) {
        out[CS_OP_ALL_GATHER] +=
            (double)m * transfers * act_bytes * cs_op_busbw_factor(CS_OP_ALL_GATHER, tp);
        for (int backward = 0; backward < 2; backward++) {
            cs_tensor_coll row[CS_TENSOR_COLLS_MAX];
            int n = cs_tensor_layer_collectives(whole, t, backward, row);
            for (int r = 0; r < n; r++)
                out[row[r].op] += (double)m * layers * row[r].count * row[r].size_bytes *
                                  cs_op_busbw_factor(row[r].op, tp);
            n = head ? cs_tensor_head_collectives(whole, t, backward, row) : 0;
            for (int r = 0; r < n; r++)
                out[row[r].op] += (double)m * row[r].count * row[r].size_bytes *
                                  cs_op_busbw_factor(row[r].op, tp);
        }
    }
    out[CS_OP_ALL_GATHER] += w->gather_bytes * cs_op_busbw_factor(CS_OP_ALL_GATHER, shard);
    out[sync_op] += w->sync_bytes * cs_op_busbw_factor(sync_op, shard);
}

/* The iteration's metrics from the slowest stage (w): its end, its
 * passes, its optimizer step, its synchronisation (sync_op: the
 * gradients' reduction) and parameters' all-gather, its recompute. The
 * stage's idle time (its end less its passes and its close) is its
 * transfers' (cs_pp_run.p2p_wait_s: held for a send, waiting on an
 * input while it is sent; under TP the transfer's price holds the tp
 * all-gather of its input too), exposed send_recv, and the pipeline bubble
 * (waiting for the neighbours' passes), which is no communication: as
 * without PP, exposed_comm_s is the time a collective or transfer runs
 * while no compute does, and the parts add up: iteration = compute +
 * exposed communication + bubble (cpu_wait_s, side_copies_s 0). */
static void fill_iteration(const cs_model *whole, const cs_training *t, const cs_layout *l,
                           cs_op sync_op, const stage_worst *w, cs_iteration *it)
{
    double worst = w->end, busiest = w->busy, opt_worst = w->opt;
    const cs_cluster *c = &l->group[CS_GROUP_WORLD].topo.cluster;
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
    it->recompute_s = w->recompute; /* review finding 6: was 0 */
    it->exposed_by_op_s[sync_op] = w->sync;
    it->exposed_by_op_s[CS_OP_ALL_GATHER] = w->gather; /* not in the sync's (finding 6) */
    it->exposed_by_op_s[CS_OP_SEND_RECV] = w->p2p_wait;
    it->exposed_comm_s = w->sync + w->gather + w->p2p_wait;
    it->pipeline_bubble_s = worst - busiest - opt_worst - it->exposed_comm_s;
    it->tokens_per_s = tokens / worst;
    it->tflops_per_gpu = mflops / worst / 1e12;
    it->mfu = peak > 0 ? mflops / worst / peak : 0;
    it->hfu = peak > 0 ? (mflops + recompute) / worst / peak : 0;
}

/* Each stage's close after the run, into tl and mem when given; the
 * slowest stage's metrics into it. */
static int close_stages(const cs_model *whole, const cs_training *t, const cs_layout *l,
                        cs_pricing_cache *cache, const cs_pp_run *run, double lr, double act_bytes,
                        cs_iteration *it, cs_pp_memory *mem, cs_pp_timeline *tl, cs_diag *d)
{
    const int P = cs_pipeline_degree(t), V = cs_pipeline_chunks(t);
    const cs_strategy_row *sr = cs_strategy_row_of(t->strategy);
    int sharded = sr->shards_params || sr->shards_grads;
    cs_op sync_op = sharded ? CS_OP_REDUCE_SCATTER : CS_OP_ALL_REDUCE;
    int rc = 0;
    stage_worst w = {0};
    for (int s = 0; s < P && !rc; s++) {
        stage_close sc;
        if ((rc = close_stage(whole, t, l, sr, cache, s, &sc, d))) break;
        double end = sc.gather_s + run->end_s[s] + sc.sync_s + sc.opt_s;
        if (tl) {
            tl->sync_op = sync_op;
            tl->sync_group = l->shard;
            tl->sync_dtype = sc.wire;
            tl->gather_s[s] = sc.gather_s, tl->sync_s[s] = sc.sync_s, tl->optimizer_s[s] = sc.opt_s;
            tl->sync_bytes[s] = sc.sync_bytes;
            tl->gather_bytes[s] = sc.gather_bytes;
            tl->optimizer_bytes[s] = sc.opt_bytes;
            tl->layers[s] = sc.layers;
        }
        if (end > w.end) {
            w = (stage_worst){.stage = s, .end = end, .busy = run->busy_s[s],
                              .p2p_wait = run->p2p_wait_s[s], .opt = sc.opt_s,
                              .sync = sc.sync_s, .gather = sc.gather_s,
                              .recompute = stage_recompute_s(whole, t, s, lr),
                              .sync_bytes = sc.sync_bytes, .gather_bytes = sc.gather_bytes};
        }
        if (mem && s < CS_PIPELINE_STAGES_MAX) {
            int chunk_layers = cs_pipeline_chunk_layers(whole->layers, P, V, s, 0, NULL);
            mem->layers[s] = sc.layers;
            mem->held[s] = run->held_max[s];
            rc = stage_memory(whole, t, l, s, chunk_layers, run->held_peak[s], &mem->stage[s], d);
            if (!rc && mem->stage[s].peak_bytes > mem->stage[mem->peak_stage].peak_bytes)
                mem->peak_stage = s;
        }
    }
    if (rc) return rc;
    fill_iteration(whole, t, l, sync_op, &w, it);
    stage_wire_bytes(whole, t, l, sync_op, &w, act_bytes, it);
    if (mem) it->peak_bytes = mem->stage[mem->peak_stage].peak_bytes;
    return 0;
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
    const int T = cs_tensor_degree(t), nk = P * V;
    const cs_pp_schedule_row *row = cs_pipeline_schedule(t);
    const cs_cluster *c = &l->group[CS_GROUP_WORLD].topo.cluster;
    pass_prices pp;
    if ((rc = price_passes(whole, t, l, c, row, cache, &pp, d))) return rc;
    if (tl) {
        timeline_alloc(tl, P, V, M, row->name);
        tl->layout = cs_xmalloc(sizeof *tl->layout);
        *tl->layout = *l;
    }
    double *f = cs_xcalloc((size_t)nk, sizeof *f), *b = cs_xcalloc((size_t)nk, sizeof *b);
    double *w = cs_xcalloc((size_t)nk, sizeof *w);
    chunk_passes(whole, t, P, V, &pp, f, b, w, tl);
    /* one transfer between neighbouring stages (the file header) */
    double act = (double)t->micro_batch * whole->seq_len * whole->hidden * cs_dtype_size(t->param_dtype);
    double p2p = 0, gather = 0;
    if ((rc = price(cache, l, CS_GROUP_PP, CS_OP_SEND_RECV, act / T, t->collective_engine, &p2p, d)) ||
        (T > 1 && (rc = price(cache, l, CS_GROUP_TP, CS_OP_ALL_GATHER, act, t->collective_engine, &gather, d))))
        goto out;
    p2p += gather;
    double w_frac = w_fraction(row, whole, t, T);
    cs_pp_run run;
    if (tl) {
        cs_pipeline_simulate_record(row, P, V, M, f, b, w, p2p, w_frac, &run, tl->slice, tl->nslices);
        tl->p2p_bytes = act / T;
        tl->p2p_dtype = t->param_dtype;
    } else {
        cs_pipeline_simulate(row, P, V, M, f, b, w, p2p, w_frac, &run);
    }
    if (mem) {
        memset(mem, 0, sizeof *mem);
        mem->P = P;
        mem->V = V;
        mem->schedule = row->name;
    }
    rc = close_stages(whole, t, l, cache, &run, pp.lr, act, it, mem, tl, d);
    cs_pp_run_free(&run);
out:
    free(f), free(b), free(w);
    if (rc && tl) cs_pp_timeline_free(tl);
    return rc;
}
