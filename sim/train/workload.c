/* SPDX-License-Identifier: MIT */
/*
 * workload.c - builds one iteration's task graph for DDP, ZeRO-1 and every
 * FSDP sharding strategy, as PyTorch runs them.
 *
 * DDP (Li et al. 2020, "PyTorch Distributed", VLDB 13(12), Sec 3.2):
 *   gradients fill buckets in reverse registration order (first bucket
 *   1 MiB, then bucket_cap); a bucket's all_reduce starts when its last
 *   gradient is ready and overlaps the rest of backward; with gradient
 *   accumulation only the last micro-batch communicates (no_sync).
 * ZeRO-1 (Rajbhandari et al. 2020, Sec 5.1; DeepSpeed stage 1):
 *   bucketed reduce_scatter of gradients in the last micro-batch, the
 *   optimizer updates its shard, then an all_gather of updated parameters.
 * FSDP (Zhao et al. 2023, "PyTorch FSDP", VLDB 16(12), Sec 3-4):
 *   one unit per transformer layer plus the root (embeddings, head). In
 *   forward each unit is all-gathered before it runs and resharded after
 *   (FULL_SHARD / HYBRID_SHARD); the rate limiter allows
 *   limit_all_gathers units unsharded at once. In backward the unit is
 *   gathered again (not for SHARD_GRAD_OP, which keeps it from forward),
 *   prefetched per backward_prefetch (PRE: issued when the previous unit's
 *   backward starts; POST/NONE: when it ends), then its gradients are
 *   reduce-scattered; HYBRID_SHARD adds an all_reduce across replicas of
 *   the sharded gradient. NO_SHARD all-reduces each unit's gradients.
 *   Gradients are reduced every micro-batch (no no_sync).
 * Compute time is FLOPs / (peak x efficiency) for GEMM work (backward =
 * 2 x forward, + recompute) and bytes / HBM bandwidth for the optimizer
 * step (a memory-bound elementwise update; roofline, Williams et al. 2009).
 * Collective times come from the core closed-form model on the group's
 * topology, with the dtype sizes of what each collective moves; with
 * training.collective_engine = des the (algorithm, protocol) is still
 * chosen by the closed form, as NCCL's tuner does, and timed by the
 * discrete-event run (cs_collective_run, engine DES) on that topology.
 * A DES run costs far more than a closed form (O(events log events);
 * multi-node tree all_reduce is O(ranks x chunks)), so builds that repeat
 * collectives (sweeps) can share a cs_workload_cache: results keyed by
 * (group topology, op, engine, bytes). Every entry is a pure function of
 * its key, so a cache changes no result, only the time to get it.
 */
#include "train/workload.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Cross-build cache: distinct group topologies (compared byte for byte:
 * equal bytes are equal topologies; a topology copied with different
 * padding only misses), and an open-addressing table of (topology slot,
 * op, engine, bytes) -> (algo, proto, duration), grown at half load. */
typedef struct xentry {
    double size_bytes;
    double duration_s;
    int slot;          /* topology slot + 1; 0 = empty */
    unsigned char op, engine, algo, proto;
} xentry;

struct cs_workload_cache {
    cs_topology *topos;
    int ntopos, captopos;
    xentry *tab;
    size_t cap, n;
    unsigned long long hits, misses;
};

struct cs_workload {
    cs_task *tasks;
    size_t n, cap;
    cs_topology topo[CS_GROUP_COUNT];
    int group_ranks[CS_GROUP_COUNT];
    cs_memory mem;
    double static_bytes;
    double tokens;
    double model_flops;
    double peak_flops;
    double eff;
    double hbm_Bps;
    choice cache[CHOICE_CACHE];
    int ncache, next_slot;
    /* during the build only */
    cs_engine_kind engine;
    cs_workload_cache *xc;   /* NULL: none */
    int xslot[CS_GROUP_COUNT];
    int err;                 /* first failed collective's code, 0 none */
    cs_diag *d;
};

static const char *const stream_names[CS_STREAM_COUNT] = {"compute", "comm", "comm_reduce"};
static const char *const group_names[CS_GROUP_COUNT] = {"world", "shard", "replica"};

const char *cs_stream_name(cs_stream s) { return stream_names[s]; }
const char *cs_group_name(cs_group g) { return group_names[g]; }
size_t cs_workload_count(const cs_workload *w) { return w->n; }
const cs_task *cs_workload_task(const cs_workload *w, size_t i)
{
    CS_ASSERT(i < w->n);
    return &w->tasks[i];
}
int cs_workload_group_ranks(const cs_workload *w, cs_group g) { return w->group_ranks[g]; }
double cs_workload_static_bytes(const cs_workload *w) { return w->static_bytes; }
double cs_workload_tokens(const cs_workload *w) { return w->tokens; }
double cs_workload_model_flops_per_rank(const cs_workload *w) { return w->model_flops; }
double cs_workload_peak_flops(const cs_workload *w) { return w->peak_flops; }
const cs_memory *cs_workload_memory(const cs_workload *w) { return &w->mem; }

void cs_workload_free(cs_workload *w)
{
    if (!w) return;
    free(w->tasks);
    free(w);
}

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

/* Appends a task named "<a>[ <b>][ <num>]" (see set_name). */
static cs_task *add(cs_workload *w, cs_task_kind k, cs_stream s, int micro, int layer,
                    const char *a, const char *b, int num)
{
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 256;
        w->tasks = cs_xrealloc(w->tasks, w->cap * sizeof *w->tasks);
    }
    cs_task *t = &w->tasks[w->n];
    *t = (cs_task){.id = (int)w->n, .kind = k, .stream = s, .micro = micro, .layer = layer};
    set_name(t->name, sizeof t->name, a, b, num);
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

static int compute(cs_workload *w, int micro, int layer, double flops, const char *what, int l)
{
    CS_ASSERT(l >= 0);
    cs_task *t = add(w, CS_TASK_COMPUTE, CS_STREAM_COMPUTE, micro, layer, what, NULL, l);
    t->flops = flops;
    t->duration_s = flops / (w->peak_flops * w->eff);
    return t->id;
}

/* ---- cross-build cache ---- */

cs_workload_cache *cs_workload_cache_new(void) { return cs_xcalloc(1, sizeof(cs_workload_cache)); }

void cs_workload_cache_free(cs_workload_cache *c)
{
    if (!c) return;
    free(c->topos);
    free(c->tab);
    free(c);
}

void cs_workload_cache_stats(const cs_workload_cache *c, size_t *entries,
                             unsigned long long *hits, unsigned long long *misses)
{
    if (entries) *entries = c->n;
    if (hits) *hits = c->hits;
    if (misses) *misses = c->misses;
}

/* The slot of topology t, added if new. The scalars after the embedded
 * cluster differ first (ranks, nodes), so they are compared first. */
static int xc_slot(cs_workload_cache *c, const cs_topology *t)
{
    const size_t off = offsetof(cs_topology, ranks);
    for (int i = 0; i < c->ntopos; i++) {
        const cs_topology *u = &c->topos[i];
        if (!memcmp((const char *)u + off, (const char *)t + off, sizeof *t - off) &&
            !memcmp(u, t, off))
            return i;
    }
    if (c->ntopos == c->captopos) {
        c->captopos = c->captopos ? 2 * c->captopos : 8;
        c->topos = cs_xrealloc(c->topos, (size_t)c->captopos * sizeof *c->topos);
    }
    memcpy(&c->topos[c->ntopos], t, sizeof *t);
    return c->ntopos++;
}

static size_t xc_hash(int slot, cs_op op, cs_engine_kind e, double size)
{
    unsigned long long bits;
    memcpy(&bits, &size, sizeof bits);
    unsigned long long h = bits ^ ((unsigned long long)slot << 40) ^
                           ((unsigned long long)op << 56) ^ ((unsigned long long)e << 60);
    h ^= h >> 33; /* splitmix64 finaliser */
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (size_t)h;
}

/* The entry for the key, or the empty place where it belongs (NULL while
 * the table is unallocated). */
static xentry *xc_find(cs_workload_cache *c, int slot, cs_op op, cs_engine_kind e, double size)
{
    if (!c->cap) return NULL;
    size_t mask = c->cap - 1;
    for (size_t i = xc_hash(slot, op, e, size) & mask;; i = (i + 1) & mask) {
        xentry *x = &c->tab[i];
        if (!x->slot || (x->slot == slot + 1 && x->op == op && x->engine == e &&
                         x->size_bytes == size))
            return x;
    }
}

static void xc_put(cs_workload_cache *c, int slot, cs_op op, cs_engine_kind e, double size,
                   cs_algo_id a, cs_proto p, double duration_s)
{
    if (2 * (c->n + 1) > c->cap) {
        size_t oldcap = c->cap;
        xentry *old = c->tab;
        c->cap = oldcap ? 2 * oldcap : 1024;
        c->tab = cs_xcalloc(c->cap, sizeof *c->tab);
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].slot) {
                const xentry *o = &old[i];
                *xc_find(c, o->slot - 1, (cs_op)o->op, (cs_engine_kind)o->engine,
                         o->size_bytes) = *o;
            }
        free(old);
    }
    xentry *x = xc_find(c, slot, op, e, size);
    CS_ASSERT(!x->slot);
    *x = (xentry){.size_bytes = size, .duration_s = duration_s, .slot = slot + 1,
                  .op = (unsigned char)op, .engine = (unsigned char)e,
                  .algo = (unsigned char)a, .proto = (unsigned char)p};
    c->n++;
}

/* Chooses (algo, proto) by the closed form, as NCCL's tuner does, and
 * times it with the build's engine. Returns 0 or the engine's error. */
static int price(cs_workload *w, const cs_topology *topo, cs_op op, double size, cs_algo_id *a,
                 cs_proto *p, double *duration_s)
{
    int rc = cs_collective_choose(topo, op, size, CS_CHOICE_AUTO, CS_CHOICE_AUTO, a, p, NULL);
    CS_ASSERT(rc == 0);
    if (w->engine == CS_ENGINE_DES) {
        cs_coll_request req = {.op = op, .bytes = size, .algo = (int)*a, .proto = (int)*p,
                               .engine = CS_ENGINE_DES};
        cs_coll_result res;
        rc = cs_collective_run(topo, &req, &res, w->d);
        if (rc) return rc;
        CS_ASSERT(res.algo == *a && res.proto == *p);
        *duration_s = res.time_s;
        return 0;
    }
    rc = cs_collective_time(topo, op, size, *a, *p, duration_s);
    CS_ASSERT(rc == 0);
    return 0;
}

static int collective(cs_workload *w, cs_stream s, int micro, int layer, cs_op op, double size,
                      cs_dtype dt, cs_group g, const char *what)
{
    const cs_topology *topo = &w->topo[g];
    int n = w->group_ranks[g];
    cs_task *t = add(w, CS_TASK_COLLECTIVE, s, micro, layer, cs_op_name(op), what, -1);
    t->op = op;
    t->size_bytes = size;
    t->dtype = dt;
    t->group = g;
    t->wire_bytes = size * cs_op_busbw_factor(op, n);
    if (n > 1) {
        for (int i = 0; i < w->ncache; i++) {
            const choice *c = &w->cache[i];
            if (c->op == op && c->group == g && c->size_bytes == size) {
                t->algo = c->algo;
                t->proto = c->proto;
                t->duration_s = c->duration_s;
                return t->id;
            }
        }
        cs_algo_id a = CS_ALGO_RING;
        cs_proto p = CS_PROTO_SIMPLE;
        double dur = 0;
        xentry *x = NULL;
        if (w->xc) {
            x = xc_find(w->xc, w->xslot[g], op, w->engine, size);
            if (x && x->slot) w->xc->hits++;
        }
        if (x && x->slot) {
            a = (cs_algo_id)x->algo;
            p = (cs_proto)x->proto;
            dur = x->duration_s;
        } else {
            int rc = price(w, topo, op, size, &a, &p, &dur);
            if (rc) {
                if (!w->err) w->err = rc;
                return t->id; /* the build fails at its end */
            }
            if (w->xc) {
                w->xc->misses++;
                xc_put(w->xc, w->xslot[g], op, w->engine, size, a, p, dur);
            }
        }
        t->algo = a;
        t->proto = p;
        t->duration_s = dur;
        int slot = w->ncache < CHOICE_CACHE ? w->ncache++ : w->next_slot++ % CHOICE_CACHE;
        w->cache[slot] = (choice){op, g, size, a, p, t->duration_s};
    }
    return t->id;
}

/* Process-group topologies: the shard group holds consecutive ranks (one
 * node by default); replicas are one rank per shard group, so g replica
 * groups run at once and split each node's network g ways. */
static int build_groups(cs_workload *w, const cs_training *t, const cs_topology *world, cs_diag *d)
{
    const cs_cluster *c = &world->cluster;
    int n = world->ranks;
    w->topo[CS_GROUP_WORLD] = *world;
    w->group_ranks[CS_GROUP_WORLD] = n;
    int g = n;
    if (t->strategy == CS_STRAT_FSDP_HYBRID_SHARD) {
        g = t->shard_group > 0 ? t->shard_group : world->ppn_max;
        if (g > n) g = n;
        if (n % g)
            return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                               "hybrid_shard group of %d ranks does not divide %d ranks", g, n);
    }
    int gn = (g + c->gpus_per_node - 1) / c->gpus_per_node;
    int rc = cs_topology_build(c, g, gn, &w->topo[CS_GROUP_SHARD], d);
    if (rc) return rc;
    w->group_ranks[CS_GROUP_SHARD] = g;
    int r = n / g;
    cs_cluster rep = *c;
    int share = g < c->gpus_per_node ? g : c->gpus_per_node;
    rep.inter.nic_bw_Bps /= share;
    rep.n_overrides = rep.n_stragglers = 0;
    if (r > 1) {
        rc = cs_topology_build(&rep, r, r, &w->topo[CS_GROUP_REPLICA], d);
        if (rc) return rc;
    } else {
        w->topo[CS_GROUP_REPLICA] = w->topo[CS_GROUP_SHARD];
    }
    w->group_ranks[CS_GROUP_REPLICA] = r;
    return 0;
}

/* Bytes the optimizer step moves per parameter it updates (read gradient,
 * read+write master weights and states, write the low-precision copy). */
static double optimizer_traffic_per_param(const cs_training *t)
{
    double g = cs_dtype_size(t->param_dtype), master = t->master_weights_fp32 ? 4 : 0;
    double p = cs_dtype_size(t->param_dtype);
    double states = cs_training_optimizer_bytes_per_param(t) - master; /* m, v, momentum */
    return g + 2 * master + 2 * states + (master > 0 ? p : 2 * p);
}

typedef struct group_sizes {
    double bytes;  /* bytes in param dtype */
} group_sizes;

/* DDP / ZeRO-1 gradient buckets over the backward order (head, layers
 * L-1..0, embeddings); ready[k] = backward task after which bucket k is
 * full. Returns the number of buckets. */
static int make_buckets(const cs_training *t, const double *grad_bytes, const int *ready_task,
                        int ngroups, double **sizes, int **ready)
{
    int cap = 16, nb = 0;
    double *sz = cs_xmalloc((size_t)cap * sizeof *sz);
    int *rd = cs_xmalloc((size_t)cap * sizeof *rd);
    double limit = t->first_bucket_bytes, fill = 0;
    for (int i = 0; i < ngroups; i++) {
        double left = grad_bytes[i];
        while (left > 0) {
            double take = fmin(left, limit - fill);
            fill += take;
            left -= take;
            if (fill >= limit || (i == ngroups - 1 && left <= 0)) {
                if (nb == cap) {
                    cap *= 2;
                    sz = cs_xrealloc(sz, (size_t)cap * sizeof *sz);
                    rd = cs_xrealloc(rd, (size_t)cap * sizeof *rd);
                }
                sz[nb] = fill;
                rd[nb] = ready_task[i];
                nb++;
                fill = 0;
                limit = t->bucket_cap_bytes;
            }
        }
    }
    *sizes = sz;
    *ready = rd;
    return nb;
}

int cs_workload_build(const cs_model *m, const cs_training *t, const cs_topology *topo,
                      cs_workload **out, cs_diag *d)
{
    return cs_workload_build_cached(m, t, topo, NULL, out, d);
}

int cs_workload_build_cached(const cs_model *m, const cs_training *t, const cs_topology *topo,
                             cs_workload_cache *cache, cs_workload **out, cs_diag *d)
{
    const cs_cluster *c = &topo->cluster;
    cs_dtype cdt = t->param_dtype;
    double peak = c->gpu.peak_flops[cdt];
    if (!(peak > 0))
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "GPU '%s' has no peak %s TFLOPS in the cluster description",
                           c->gpu.model, cs_dtype_name(cdt));
    if (t->micro_batch < 1 || t->grad_accum < 1)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "micro_batch and grad_accum must be >= 1");
    cs_workload *w = cs_xcalloc(1, sizeof *w);
    int rc = build_groups(w, t, topo, d);
    if (rc == 0) rc = cs_memory_estimate(m, t, topo, 0, &w->mem, d);
    if (rc) {
        cs_workload_free(w);
        return rc;
    }
    w->engine = t->collective_engine;
    w->d = d;
    w->xc = cache;
    if (cache)
        for (int g = 0; g < CS_GROUP_COUNT; g++)
            w->xslot[g] = w->group_ranks[g] > 1 ? xc_slot(cache, &w->topo[g]) : -1;
    w->peak_flops = peak;
    w->eff = t->compute_efficiency;
    w->hbm_Bps = c->gpu.hbm_Bps;
    w->static_bytes = w->mem.params_bytes + w->mem.grads_bytes + w->mem.optimizer_bytes +
                      w->mem.buckets_bytes +
                      w->mem.cuda_context_bytes + w->mem.nccl_bytes;

    const int L = m->layers, M = t->grad_accum;
    const double tokens = (double)t->micro_batch * m->seq_len;
    const double psz = cs_dtype_size(t->param_dtype), gsz = cs_dtype_size(t->grad_reduce_dtype);
    const double f_layer = cs_model_layer_forward_flops(m, tokens);
    const double f_head = cs_model_head_forward_flops(m, tokens);
    /* recompute in backward: full = the layer's forward again; selective =
     * the attention core (QK^T and AV: 4 s h FLOPs per token) */
    double recompute = t->checkpointing == CS_CKPT_FULL        ? f_layer
                       : t->checkpointing == CS_CKPT_SELECTIVE ? 4.0 * m->seq_len * m->hidden * tokens
                                                               : 0;
    double act_kept = cs_model_activation_bytes_per_layer(m, t->micro_batch,
                                                          cs_training_kept_activations(t));
    double act_full = cs_model_activation_bytes_per_layer(m, t->micro_batch,
                                                          cs_training_running_activations(t));
    double logits = tokens * m->vocab * 4.0; /* fp32 logits for the loss */
    w->tokens = tokens * M * topo->ranks;
    w->model_flops = cs_model_flops_per_token(m) * tokens * M;

    cs_strategy st = t->strategy;
    int fsdp = st >= CS_STRAT_FSDP_NO_SHARD;
    int shards = st == CS_STRAT_FSDP_FULL_SHARD || st == CS_STRAT_FSDP_HYBRID_SHARD ||
                 st == CS_STRAT_FSDP_SHARD_GRAD_OP;
    int reshard = t->reshard_after_forward >= 0 ? t->reshard_after_forward
                                                : (st == CS_STRAT_FSDP_FULL_SHARD ||
                                                   st == CS_STRAT_FSDP_HYBRID_SHARD);
    if (st == CS_STRAT_FSDP_SHARD_GRAD_OP && t->reshard_after_forward < 0) reshard = 0;
    cs_group sg = st == CS_STRAT_FSDP_HYBRID_SHARD ? CS_GROUP_SHARD : CS_GROUP_WORLD;
    /* SHARD_GRAD_OP keeps every unit unsharded from forward to backward:
     * memory.c counts those parameters whole and static (ZeRO's P_os+g), so
     * its gathers add nothing to the timeline */
    double gathered = st == CS_STRAT_FSDP_SHARD_GRAD_OP ? 0.0 : 1.0;
    int limit = t->limit_all_gathers > 0 ? t->limit_all_gathers : 1 << 30;
    double unit_p[1 + 1]; /* [0] root unit, [1] a layer unit: parameters */
    unit_p[0] = m->embedding_params;
    unit_p[1] = m->layer_params;

    int *fwd = cs_xmalloc((size_t)L * sizeof(int)), *bwd = cs_xmalloc((size_t)L * sizeof(int));
    int *ag_f = cs_xmalloc((size_t)L * sizeof(int));
    int last_comm = -1;
    for (int mi = 0; mi < M; mi++) {
        int last_micro = mi == M - 1;
        /* ---- forward ---- */
        int root_ag = -1;
        if (shards) {
            root_ag = collective(w, CS_STREAM_COMM, mi, -1, CS_OP_ALL_GATHER, unit_p[0] * psz, cdt,
                                 sg, "root");
            w->tasks[root_ag].mem_at_start = gathered * unit_p[0] * psz;
        }
        for (int l = 0; l < L; l++) {
            if (shards) {
                ag_f[l] = collective(w, CS_STREAM_COMM, mi, l, CS_OP_ALL_GATHER, unit_p[1] * psz,
                                     cdt, sg, "fwd");
                w->tasks[ag_f[l]].mem_at_start = gathered * unit_p[1] * psz;
                /* rate limiter: unit l - limit must have been freed */
                if (reshard && l >= limit) dep(&w->tasks[ag_f[l]], fwd[l - limit], 0);
            }
            fwd[l] = compute(w, mi, l, f_layer, "forward", l);
            cs_task *f = &w->tasks[fwd[l]];
            f->mem_at_start = act_kept;
            if (shards) {
                dep(f, ag_f[l], 0);
                if (l == 0) dep(f, root_ag, 0);
                if (reshard) f->mem_at_end = -unit_p[1] * psz;
            }
        }
        int head_f = compute(w, mi, -1, f_head, "head forward", 0);
        w->tasks[head_f].mem_at_start = logits;
        /* ---- backward ---- */
        int head_b = compute(w, mi, -1, 2 * f_head, "head backward", 0);
        w->tasks[head_b].mem_at_end = -logits;
        /* DDP/ZeRO: which backward task completes each gradient group */
        int ngroups = L + 1;
        double *gbytes = cs_xmalloc((size_t)ngroups * sizeof(double));
        int *gready = cs_xmalloc((size_t)ngroups * sizeof(int));
        int prev_b = head_b;
        for (int l = L - 1; l >= 0; l--) {
            int ag_b = -1;
            if (shards && reshard) {
                ag_b = collective(w, CS_STREAM_COMM, mi, l, CS_OP_ALL_GATHER, unit_p[1] * psz, cdt,
                                  sg, "bwd");
                cs_task *a = &w->tasks[ag_b];
                a->mem_at_start = unit_p[1] * psz;
                dep(a, prev_b, t->backward_prefetch == CS_PREFETCH_PRE);
                if (l + limit < L) dep(a, bwd[l + limit], 0); /* rate limiter */
            }
            bwd[l] = compute(w, mi, l, 2 * f_layer + recompute, "backward", l);
            cs_task *b = &w->tasks[bwd[l]];
            /* recomputed activations live during the layer's backward, and
             * FSDP allocates the unit's unsharded gradient */
            b->mem_at_start = (act_full - act_kept) + (fsdp && st != CS_STRAT_FSDP_NO_SHARD ? unit_p[1] * psz : 0);
            b->mem_at_end = -act_full - (shards ? gathered * unit_p[1] * psz : 0);
            if (ag_b >= 0) dep(b, ag_b, 0);
            if (fsdp) {
                cs_op op = st == CS_STRAT_FSDP_NO_SHARD ? CS_OP_ALL_REDUCE : CS_OP_REDUCE_SCATTER;
                int r = collective(w, CS_STREAM_COMM_REDUCE, mi, l, op, unit_p[1] * gsz,
                                   t->grad_reduce_dtype, sg, "grads");
                dep(&w->tasks[r], bwd[l], 0);
                /* the unit's unsharded gradient (allocated by its backward)
                 * lives until its reduce-scatter is done */
                if (st != CS_STRAT_FSDP_NO_SHARD) w->tasks[r].mem_at_end = -unit_p[1] * psz;
                if (st == CS_STRAT_FSDP_HYBRID_SHARD && w->group_ranks[CS_GROUP_REPLICA] > 1)
                    collective(w, CS_STREAM_COMM_REDUCE, mi, l, CS_OP_ALL_REDUCE,
                               unit_p[1] * gsz / w->group_ranks[CS_GROUP_SHARD],
                               t->grad_reduce_dtype, CS_GROUP_REPLICA, "replicas");
            }
            gbytes[L - 1 - l] = unit_p[1] * gsz;
            gready[L - 1 - l] = bwd[l];
            prev_b = bwd[l];
        }
        /* embeddings / root unit finish last */
        gbytes[L] = unit_p[0] * gsz;
        gready[L] = bwd[0];
        if (fsdp) {
            cs_op op = st == CS_STRAT_FSDP_NO_SHARD ? CS_OP_ALL_REDUCE : CS_OP_REDUCE_SCATTER;
            int r = collective(w, CS_STREAM_COMM_REDUCE, mi, -1, op, unit_p[0] * gsz,
                               t->grad_reduce_dtype, sg, "root grads");
            dep(&w->tasks[r], bwd[0], 0);
            if (shards) w->tasks[r].mem_at_end = -gathered * unit_p[0] * psz; /* root resharded */
            if (st == CS_STRAT_FSDP_HYBRID_SHARD && w->group_ranks[CS_GROUP_REPLICA] > 1)
                collective(w, CS_STREAM_COMM_REDUCE, mi, -1, CS_OP_ALL_REDUCE,
                           unit_p[0] * gsz / w->group_ranks[CS_GROUP_SHARD], t->grad_reduce_dtype,
                           CS_GROUP_REPLICA, "root replicas");
        } else if (last_micro) {
            /* DDP all-reduces / ZeRO-1 reduce-scatters gradient buckets */
            double *bs;
            int *br;
            int nb = make_buckets(t, gbytes, gready, ngroups, &bs, &br);
            cs_op op = st == CS_STRAT_ZERO1 ? CS_OP_REDUCE_SCATTER : CS_OP_ALL_REDUCE;
            for (int k = 0; k < nb; k++) {
                char what[24];
                set_name(what, sizeof what, "bucket", NULL, k);
                int r = collective(w, CS_STREAM_COMM, mi, -1, op, bs[k], t->grad_reduce_dtype,
                                   CS_GROUP_WORLD, what);
                dep(&w->tasks[r], br[k], 0);
                last_comm = r; /* bucket tensors are static (cs_memory.buckets_bytes) */
            }
            free(bs);
            free(br);
        }
        free(gbytes);
        free(gready);
    }
    /* ---- optimizer step on this rank's shard ---- */
    int deg_p, deg_g, deg_o;
    cs_memory_shard_degrees(t, topo, &deg_p, &deg_g, &deg_o);
    cs_task *opt = add(w, CS_TASK_MEMORY, CS_STREAM_COMPUTE, -1, -1, "optimizer step", NULL, -1);
    opt->mem_bytes = m->params / deg_o * optimizer_traffic_per_param(t);
    opt->duration_s = opt->mem_bytes / w->hbm_Bps;
    int opt_id = opt->id;
    /* after every gradient reduction: the last task of each comm stream */
    for (int s = CS_STREAM_COMM; s < CS_STREAM_COUNT; s++)
        for (size_t i = w->n - 1; i-- > 0;)
            if (w->tasks[i].stream == (cs_stream)s) {
                dep(&w->tasks[opt_id], (int)i, 0);
                break;
            }
    (void)last_comm;
    if (st == CS_STRAT_ZERO1 && topo->ranks > 1) {
        /* updated parameter shards gathered back, bucket by bucket */
        double total = m->params * psz, cap = t->bucket_cap_bytes;
        int k = 0;
        for (double left = total; left > 0; left -= cap, k++) {
            char what[24];
            set_name(what, sizeof what, "params", NULL, k);
            int a = collective(w, CS_STREAM_COMM, -1, -1, CS_OP_ALL_GATHER, fmin(cap, left), cdt,
                               CS_GROUP_WORLD, what);
            dep(&w->tasks[a], opt_id, 0);
        }
    }
    free(fwd);
    free(bwd);
    free(ag_f);
    w->xc = NULL;
    w->d = NULL;
    if (w->err) {
        int rc = w->err;
        cs_workload_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void cs_workload_write_schedule(const cs_workload *w, cs_buf *b)
{
    cs_buf_printf(b, "{\n  \"format\": \"collsim-schedule\",\n  \"version\": 1,\n");
    cs_buf_printf(b, "  \"groups\": {\"world\": %d, \"shard\": %d, \"replica\": %d},\n",
                  w->group_ranks[0], w->group_ranks[1], w->group_ranks[2]);
    cs_buf_printf(b, "  \"peak_flops\": %.6e,\n  \"compute_efficiency\": %.6g,\n", w->peak_flops,
                  w->eff);
    cs_buf_printf(b, "  \"tasks\": [");
    for (size_t i = 0; i < w->n; i++) {
        const cs_task *t = &w->tasks[i];
        cs_buf_printf(b, "%s\n    {\"id\": %d, \"kind\": \"%s\", \"stream\": \"%s\", \"name\": \"%s\", "
                      "\"micro\": %d, \"layer\": %d, ",
                      i ? "," : "", t->id,
                      t->kind == CS_TASK_COMPUTE ? "compute"
                      : t->kind == CS_TASK_MEMORY ? "memory"
                                                  : "collective",
                      cs_stream_name(t->stream), t->name, t->micro, t->layer);
        if (t->kind == CS_TASK_COLLECTIVE)
            cs_buf_printf(b, "\"op\": \"%s\", \"size_bytes\": %.0f, \"dtype\": \"%s\", \"group\": \"%s\", "
                          "\"algo\": \"%s\", \"proto\": \"%s\", \"wire_bytes\": %.0f, ",
                          cs_op_name(t->op), t->size_bytes, cs_dtype_name(t->dtype),
                          cs_group_name(t->group), cs_algo_name(t->algo), cs_proto_name(t->proto),
                          t->wire_bytes);
        else
            cs_buf_printf(b, "\"flops\": %.6e, \"mem_bytes\": %.0f, ", t->flops, t->mem_bytes);
        cs_buf_printf(b, "\"predicted_s\": %.9e, \"mem_at_start\": %.0f, \"mem_at_end\": %.0f, \"deps\": [",
                      t->duration_s, t->mem_at_start, t->mem_at_end);
        for (int k = 0; k < t->ndeps; k++)
            cs_buf_printf(b, "%s{\"task\": %d, \"when\": \"%s\"}", k ? ", " : "", t->deps[k],
                          t->on_start[k] ? "start" : "end");
        cs_buf_printf(b, "]}");
    }
    cs_buf_printf(b, "\n  ]\n}\n");
}
