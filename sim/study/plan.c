/* SPDX-License-Identifier: MIT */
/*
 * plan.c - the planner (plan.h): the search over layouts x checkpointing
 * policies (plan_space.h) x micro-batches with the global batch kept,
 * layouts pruned by their memory floor first, the recommendation, its
 * runner-up and the best of each other kind (a table of kinds), and the
 * rule-of-thumb check on generic models. Each configuration is one
 * cs_evaluate_config simulated iteration; nothing here models anything.
 *
 * The rule ("DDP below 3B params; SHARD_GRAD_OP 3-7B; FULL_SHARD above 7B;
 * DDP 20-30% faster than FSDP below 3B") is the seed request's; its bands
 * include 3B and 7B in the middle one.
 */
#include "study/plan.h"
#include "study/plan_kinds.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/checkpoint.h"
#include "train/evaluate.h"
#include "train/memory.h"
#include "train/pipeline.h"
#include "train/tensor.h"

#define MAX_MB (1 << 12) /* search cap on the micro-batch */

static const char *const rule_text =
    "DDP below 3B params; SHARD_GRAD_OP 3-7B; FULL_SHARD above 7B; DDP 20-30% faster than "
    "FSDP below 3B";
static const double rule_sizes[CS_PLAN_RULE_SIZES] = {1e9,  2e9,  3e9,  5e9,  7e9,
                                                      10e9, 13e9, 20e9, 30e9, 70e9};
static const cs_strategy rule_strats[CS_PLAN_RULE_STRATEGIES] = {
    CS_STRAT_DDP, CS_STRAT_FSDP_SHARD_GRAD_OP, CS_STRAT_FSDP_FULL_SHARD};
enum { RULE_DDP = 0, RULE_FULL_SHARD = 2 }; /* the claim's pair, in rule_strats */
#define CLAIM_BELOW 3e9

const char *cs_plan_rule_text(void) { return rule_text; }

cs_strategy cs_plan_rule_strategy(int i)
{
    CS_ASSERT(i >= 0 && i < CS_PLAN_RULE_STRATEGIES);
    return rule_strats[i];
}

/* The rule's pick for p parameters, an index into rule_strats. */
static int rule_index(double p) { return p < 3e9 ? 0 : p <= 7e9 ? 1 : 2; }

/* Simulates one iteration of m under t; fills c (c->ok = 0 with the reason
 * when the configuration does not apply, e.g. a hybrid group that does not
 * divide the ranks). Returns 0 or that evaluation's error (d filled when
 * not NULL). */
static int simulate(const cs_model *m, const cs_training *t, const cs_topology *topo,
                    cs_pricing_cache *cache, cs_plan_cfg *c, cs_diag *d)
{
    cs_diag own;
    if (!d) d = &own;
    cs_diag_clear(d);
    c->strategy = t->strategy;
    c->tp = cs_tensor_degree(t);
    c->pp = cs_pipeline_degree(t);
    c->virtual_stages = cs_pipeline_chunks(t);
    c->pp_schedule = c->pp > 1 ? cs_pipeline_schedule(t)->name : NULL;
    c->checkpointing = t->checkpointing;
    c->selective_ac = t->checkpointing == CS_CKPT_SELECTIVE ? t->selective_ac : 0;
    c->micro_batch = t->micro_batch;
    c->grad_accum = t->grad_accum;
    if (t->optimizer_in_backward && t->grad_accum > 1) { /* steps with each gradient: no accumulation */
        snprintf(c->note, sizeof c->note, "n/a: optimizer_in_backward needs grad_accum 1");
        return 0; /* not ok: never recommended */
    }
    cs_evaluate_opts o = {.simulate = 1, .cache = cache, .unnamed = 1};
    cs_evaluation ev;
    int rc = cs_evaluate_config(m, t, topo, &o, &ev, d);
    if (rc) {
        snprintf(c->note, sizeof c->note, "n/a: %s", d->message);
        return rc;
    }
    const cs_iteration *it = &ev.iteration;
    c->ok = 1;
    c->peak_bytes = it->peak_bytes;
    c->capacity_bytes = ev.memory.capacity_bytes;
    c->fits = ev.fits;
    c->iteration_time_s = it->iteration_time_s;
    c->tokens_per_s = it->tokens_per_s;
    c->tflops_per_gpu = it->tflops_per_gpu;
    c->mfu = it->mfu;
    c->exposed_comm_s = it->exposed_comm_s;
    c->pipeline_bubble_s = it->pipeline_bubble_s;
    for (int op = 0; op < CS_OP_COUNT; op++) c->wire_bytes += it->wire_bytes_by_op[op];
    cs_iteration_breakdown(it, &c->time);
    cs_evaluate_free(&ev);
    return 0;
}

static int fits(const cs_plan_cfg *c) { return c->ok && c->fits; }
static int eligible(const cs_plan_cfg *c) { return fits(c) && c->batch_kept; }
int cs__plan_eligible(const cs_plan_cfg *c) { return eligible(c); }

/* Is a better than b (NULL: nothing yet)? Faster; at equal speed (1e-9
 * relative: strategies whose communication is fully hidden run exactly as
 * fast) the one with the lower peak memory; else the earlier. */
static int better(const cs_plan_cfg *a, const cs_plan_cfg *b)
{
    if (!b) return 1;
    double tol = 1e-9 * fmax(a->tokens_per_s, b->tokens_per_s);
    if (fabs(a->tokens_per_s - b->tokens_per_s) > tol) return a->tokens_per_s > b->tokens_per_s;
    return a->peak_bytes < b->peak_bytes;
}
int cs__plan_better(const cs_plan_cfg *a, const cs_plan_cfg *b) { return better(a, b); }

/* ---- the search ------------------------------------------------------------- */

/* The micro-batches tried under t (its micro_batch 1, grad_accum the whole
 * batch): 1, 2, 4, ... up to the largest that fits by the timeline (1 when
 * even 1 does not, to show by how much; at most MAX_MB), with `own` in its
 * place when it is no power of 2 and within. Under PP the sequences per
 * data-parallel rank (grad_accum) bound it instead (the search stops at
 * the first that does not fit; a larger one would leave the pipeline less
 * than one micro-batch), and it starts at the first leaving at most
 * CS_PLAN_PP_MICRO_MAX micro-batches. Returns the count. */
static int micro_batches(const cs_model *m, const cs_training *t, const cs_topology *topo,
                         int own, int mbs[32])
{
    cs_memory mem;
    cs_diag d;
    int limit = 1;
    if (cs_pipeline_degree(t) > 1) {
        limit = t->grad_accum > MAX_MB ? MAX_MB : t->grad_accum;
        int lo = 1; /* at most CS_PLAN_PP_MICRO_MAX micro-batches in the pipeline */
        while (lo < limit && (t->grad_accum + lo - 1) / lo > CS_PLAN_PP_MICRO_MAX) lo *= 2;
        int n = 0;
        for (int mb = lo; mb <= limit && n < 31; mb *= 2) mbs[n++] = mb;
        return n;
    } else if (cs_memory_estimate(m, t, topo, 0, &mem, &d) == 0) {
        limit = cs_evaluate_max_micro_batch(m, t, topo, NULL);
        if (limit < 1) limit = 1;
        if (limit > MAX_MB) limit = MAX_MB;
    }
    int n = 0;
    for (int mb = 1; mb <= limit && n < 31; mb *= 2) mbs[n++] = mb;
    if (own <= limit && (own & (own - 1))) {
        int k = n++;
        while (k > 0 && mbs[k - 1] > own) mbs[k] = mbs[k - 1], k--;
        mbs[k] = own;
    }
    return n;
}

static cs_plan_cfg *add_cfg(cs_plan *p, size_t *cap)
{
    if (p->ncfgs == *cap) {
        *cap = *cap ? 2 * *cap : 32;
        p->cfgs = cs_xrealloc(p->cfgs, *cap * sizeof *p->cfgs);
    }
    cs_plan_cfg *c = &p->cfgs[p->ncfgs++];
    memset(c, 0, sizeof *c);
    return c;
}

/* The configurations of layout and policy t (its micro-batch and
 * grad_accum set here), smaller micro-batches first, up to the first that
 * does not fit or does not apply (a larger one would not either). The
 * global batch is split over the ranks / (tp x pp) data-parallel ranks: S
 * sequences each, the nearest whole count >= 1 where that is none (then
 * no configuration keeps the batch). */
static void search_layout(cs_plan *p, const cs_training *lt, size_t *cap)
{
    int ranks = p->topo->ranks / (cs_tensor_degree(lt) * cs_pipeline_degree(lt));
    if (ranks < 1) ranks = 1;
    long G = p->global_batch;
    int S = G % ranks == 0 ? (int)(G / ranks) : (int)lround((double)G / ranks);
    if (S < 1) S = 1;
    cs_training t = *lt;
    t.micro_batch = 1;
    t.grad_accum = S;
    int mbs[32];
    int nmb = micro_batches(p->model, &t, p->topo, p->training->micro_batch, mbs);
    for (int i = 0; i < nmb; i++) {
        int mb = mbs[i];
        int ga = S % mb == 0 ? S / mb : (int)lround((double)S / mb);
        if (ga < 1) ga = 1;
        t.micro_batch = mb;
        t.grad_accum = ga;
        cs_plan_cfg *c = add_cfg(p, cap);
        c->batch_kept = (long)mb * ga * ranks == G;
        simulate(p->model, &t, p->topo, NULL, c, NULL);
        p->nsimulated += c->ok;
        if (c->ok && !c->batch_kept)
            snprintf(c->note, sizeof c->note, "global batch %ld, not %ld: not recommended",
                     (long)mb * ga * ranks, G);
        if (!fits(c)) break;
    }
}

/* Layout t (strategy, tp, pp, V, schedule) pruned when its memory floor
 * exceeds the GPU: one row saying so, and 1. A layout whose floor cannot
 * be computed (it does not apply) is searched, to list why. */
static int pruned(cs_plan *p, const cs_training *t, size_t *cap)
{
    double floor, capacity;
    cs_diag d;
    if (cs_plan_memory_floor(p->model, t, p->topo, &floor, &capacity, &d) || floor <= capacity)
        return 0;
    cs_plan_cfg *c = add_cfg(p, cap);
    c->strategy = t->strategy;
    c->tp = cs_tensor_degree(t);
    c->pp = cs_pipeline_degree(t);
    c->virtual_stages = cs_pipeline_chunks(t);
    c->pp_schedule = c->pp > 1 ? cs_pipeline_schedule(t)->name : NULL;
    c->pruned = 1;
    c->floor_bytes = floor;
    c->capacity_bytes = capacity;
    snprintf(c->note, sizeof c->note,
             "pruned: parameters and optimizer states alone need %.2f GiB of %.2f GiB",
             floor / (1024.0 * 1024.0 * 1024.0), capacity / (1024.0 * 1024.0 * 1024.0));
    p->npruned++;
    return 1;
}

/* Every pipeline and policy of strategy s at TP degree T and PP degree P. */
static void search_degrees(cs_plan *p, const cs_plan_space *sp, cs_strategy s, int T, int P,
                           size_t *cap)
{
    cs_plan_pipe pipes[CS_PLAN_MAX_PIPES];
    cs_plan_policy pol[CS_PLAN_MAX_POLICIES];
    int npipes = cs_plan_space_pipes(p->model, P, sp, pipes);
    int npol = cs_plan_space_policies(p->training, sp, pol);
    cs_training t = *p->training;
    cs_training_set_strategy(&t, s);
    t.tensor_parallel = T;
    t.pipeline_parallel = P;
    for (int i = 0; i < npipes; i++) {
        t.virtual_stages = pipes[i].virtual_stages;
        t.pipeline_schedule = pipes[i].schedule;
        if (pruned(p, &t, cap)) continue;
        for (int k = 0; k < npol; k++) {
            t.checkpointing = pol[k].ckpt;
            t.selective_ac = pol[k].ckpt == CS_CKPT_SELECTIVE ? pol[k].sac : p->training->selective_ac;
            search_layout(p, &t, cap);
        }
    }
}

/* The recommendation: the best eligible; the runner-up: the best eligible
 * of another strategy. */
static void recommend(cs_plan *p)
{
    p->best = p->runner = NULL;
    for (size_t i = 0; i < p->ncfgs; i++)
        if (eligible(&p->cfgs[i]) && better(&p->cfgs[i], p->best)) p->best = &p->cfgs[i];
    for (size_t i = 0; p->best && i < p->ncfgs; i++)
        if (eligible(&p->cfgs[i]) && p->cfgs[i].strategy != p->best->strategy &&
            better(&p->cfgs[i], p->runner))
            p->runner = &p->cfgs[i];
    if (!p->runner) return;
    p->runner_slower_pct = 100 * (1 - p->runner->tokens_per_s / p->best->tokens_per_s);
    p->runner_as_fast = p->runner->tokens_per_s >= p->best->tokens_per_s * (1 - 1e-9);
}

/* Is a shown before b of one (strategy, TP, PP) (NULL: nothing yet)? Of
 * those simulated the preferred that fits (ties: the earlier), else the
 * one needing the least memory (how far from fitting); then the pruned by
 * the lesser floor; then the first. */
static int shown_before(const cs_plan_cfg *a, const cs_plan_cfg *b)
{
    if (!b) return 1;
    if (a->ok != b->ok) return a->ok;
    if (a->ok && a->fits != b->fits) return a->fits;
    if (a->ok && !a->fits) return a->peak_bytes < b->peak_bytes;
    if (a->ok) return cs_plan_cfg_preferred(a, b) && !cs_plan_cfg_preferred(b, a);
    if (a->pruned != b->pruned) return a->pruned;
    return a->pruned && a->floor_bytes < b->floor_bytes;
}

/* p->shown: one configuration per run of cfgs of one (strategy, TP, PP). */
static void choose_shown(cs_plan *p)
{
    p->shown = cs_xmalloc((p->ncfgs ? p->ncfgs : 1) * sizeof *p->shown);
    p->nshown = 0;
    for (size_t i = 0, j; i < p->ncfgs; i = j) {
        const cs_plan_cfg *a = &p->cfgs[i], *pick = NULL;
        for (j = i; j < p->ncfgs && p->cfgs[j].strategy == a->strategy && p->cfgs[j].tp == a->tp &&
                    p->cfgs[j].pp == a->pp;
             j++)
            if (shown_before(&p->cfgs[j], pick)) pick = &p->cfgs[j];
        p->shown[p->nshown++] = pick;
    }
}

/* ---- the fastest configuration of one strategy ---------------------------------- */

#define BEST_TRIED 64 /* configurations one search may simulate (a few per mode) */

typedef struct search {
    const cs_model *m;
    cs_training t;
    const cs_topology *topo;
    const cs_plan_batch *b;
    cs_pricing_cache *cache;
    cs_diag *d;
    int cap; /* the largest micro-batch tried */
    int dp;  /* the data-parallel ranks the global batch is split over */
    cs_plan_cfg tried[BEST_TRIED];
    int ntried;
} search;

/* Is a preferred to b (NULL: nothing yet)? A kept batch first, then
 * better(). */
static int preferred(const cs_plan_cfg *a, const cs_plan_cfg *b)
{
    if (!b) return 1;
    if (a->batch_kept != b->batch_kept) return a->batch_kept;
    return better(a, b);
}

int cs_plan_cfg_preferred(const cs_plan_cfg *a, const cs_plan_cfg *b)
{
    if (!b) return 1;
    if (fits(a) != fits(b)) return fits(a);
    return preferred(a, b);
}

/* The grad_accum that keeps b's global batch at micro-batch mb on ranks,
 * or the nearest whole one >= 1; *kept says whether it keeps it. */
static int grad_accum_for(const cs_plan_batch *b, int ranks, int mb, int *kept)
{
    long per_step = (long)ranks * mb;
    long ga = b->global_batch % per_step == 0 ? b->global_batch / per_step
                                              : lround((double)b->global_batch / per_step);
    if (ga < 1) ga = 1;
    if (ga > INT_MAX) ga = INT_MAX;
    *kept = ga * per_step == b->global_batch;
    return (int)ga;
}

/* Configuration (ck, mb) of the search, simulated once; NULL after an
 * error (d filled). */
static const cs_plan_cfg *tried_at(search *s, cs_ckpt ck, int mb, int *rc)
{
    for (int i = 0; i < s->ntried; i++)
        if (s->tried[i].checkpointing == ck && s->tried[i].micro_batch == mb) return &s->tried[i];
    CS_ASSERT(s->ntried < BEST_TRIED);
    cs_plan_cfg *c = &s->tried[s->ntried++];
    memset(c, 0, sizeof *c);
    cs_training t = s->t;
    t.checkpointing = ck;
    t.micro_batch = mb;
    t.grad_accum = grad_accum_for(s->b, s->dp, mb, &c->batch_kept);
    if ((*rc = simulate(s->m, &t, s->topo, s->cache, c, s->d))) return NULL;
    if (!c->batch_kept)
        snprintf(c->note, sizeof c->note, "global batch %ld, not %ld (the nearest whole grad_accum)",
                 (long)mb * c->grad_accum * s->dp, s->b->global_batch);
    return c;
}

static int floor_pow2(int v)
{
    int p = 1;
    while (p <= v / 2) p *= 2;
    return p;
}

/* Mode ck: the largest micro-batch (a power of 2 <= cap, or the pinned)
 * that fits into *top (0: none), then smaller ones while faster. */
static int search_mode(search *s, cs_ckpt ck, int *top)
{
    int rc = 0;
    const cs_plan_cfg *c;
    *top = 0;
    if (s->b->micro_batch > 0) {
        if (!(c = tried_at(s, ck, s->b->micro_batch, &rc))) return rc;
        *top = fits(c) ? s->b->micro_batch : 0;
        return 0;
    }
    cs_training t = s->t;
    t.checkpointing = ck;
    t.micro_batch = 1;
    t.grad_accum = 1;
    int guess = cs_memory_max_micro_batch(s->m, &t, s->topo);
    int mb = floor_pow2(guess < 1 ? 1 : guess > s->cap ? s->cap : guess);
    if (!(c = tried_at(s, ck, mb, &rc))) return rc;
    if (fits(c)) {
        while (mb <= s->cap / 2) {
            if (!(c = tried_at(s, ck, 2 * mb, &rc))) return rc;
            if (!fits(c)) break;
            mb *= 2;
        }
    } else {
        while (mb > 1 && !fits(c)) {
            mb /= 2;
            if (!(c = tried_at(s, ck, mb, &rc))) return rc;
        }
        if (!fits(c)) return 0;
    }
    *top = mb;
    const cs_plan_cfg *cur = tried_at(s, ck, mb, &rc);
    while (mb > 1) {
        if (!(c = tried_at(s, ck, mb / 2, &rc))) return rc;
        if (!preferred(c, cur)) break;
        cur = c;
        mb /= 2;
    }
    return 0;
}

/* The modes b allows, by increasing recomputation (less memory); returns
 * the count. */
static int modes_of(const cs_training *t, const cs_plan_batch *b, cs_ckpt modes[CS_CKPT_COUNT])
{
    if (b->ckpt >= 0) {
        CS_ASSERT(b->ckpt < CS_CKPT_COUNT);
        modes[0] = (cs_ckpt)b->ckpt;
        return 1;
    }
    int n = 0;
    modes[n++] = CS_CKPT_NONE;
    if (!t->flash_attention) modes[n++] = CS_CKPT_SELECTIVE; /* see cs_plan_space_policies */
    modes[n++] = CS_CKPT_FULL;
    return n;
}

static void search_init(search *s, const cs_model *m, const cs_training *t,
                        const cs_topology *topo, const cs_plan_batch *b, cs_pricing_cache *cache,
                        cs_diag *d)
{
    CS_ASSERT(b->global_batch >= 1);
    s->m = m;
    s->t = *t;
    s->topo = topo;
    s->b = b;
    s->cache = cache;
    s->d = d;
    /* a batch is split over the DP ranks */
    s->dp = topo->ranks / (cs_tensor_degree(t) * cs_pipeline_degree(t));
    if (s->dp < 1) s->dp = 1;
    long per_rank = b->global_batch / s->dp;
    s->cap = per_rank < 1 ? 1 : per_rank > MAX_MB ? MAX_MB : (int)per_rank;
    s->ntried = 0;
}

int cs_plan_least(const cs_model *m, const cs_training *t, const cs_topology *topo,
                  const cs_plan_batch *b, cs_pricing_cache *cache, cs_plan_cfg *out, cs_diag *d)
{
    search *s = cs_xmalloc(sizeof *s);
    search_init(s, m, t, topo, b, cache, d);
    cs_ckpt modes[CS_CKPT_COUNT];
    int n = modes_of(t, b, modes), rc = 0;
    const cs_plan_cfg *c = tried_at(s, modes[n - 1], b->micro_batch > 0 ? b->micro_batch : 1, &rc);
    if (c) *out = *c;
    free(s);
    return rc;
}

int cs_plan_best(const cs_model *m, const cs_training *t, const cs_topology *topo,
                 const cs_plan_batch *b, cs_pricing_cache *cache, cs_plan_cfg *out, cs_diag *d)
{
    search *s = cs_xmalloc(sizeof *s);
    search_init(s, m, t, topo, b, cache, d);
    cs_ckpt modes[CS_CKPT_COUNT];
    int n = modes_of(t, b, modes), rc = 0, top = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        /* more recomputation at a micro-batch no larger: slower */
        if (i > 0 && top >= (b->micro_batch > 0 ? b->micro_batch : s->cap)) break;
        int tm;
        if ((rc = search_mode(s, modes[i], &tm)) == 0 && tm > top) top = tm;
    }
    const cs_plan_cfg *best = NULL;
    for (int i = 0; rc == 0 && i < s->ntried; i++)
        if (fits(&s->tried[i]) && preferred(&s->tried[i], best)) best = &s->tried[i];
    if (rc == 0 && !best)
        best = tried_at(s, modes[n - 1], b->micro_batch > 0 ? b->micro_batch : 1, &rc);
    if (rc == 0) *out = *best;
    free(s);
    return rc;
}

/* ---- the rule of thumb -------------------------------------------------------- */

/* Which of r's strategies wins, whether the rule's pick agrees, and DDP
 * vs FULL_SHARD below 3B. */
static void judge(cs_plan_rule_row *r)
{
    r->winner = -1;
    for (int i = 0; i < CS_PLAN_RULE_STRATEGIES; i++)
        if (fits(&r->c[i]) && better(&r->c[i], r->winner < 0 ? NULL : &r->c[r->winner]))
            r->winner = i;
    r->rule = rule_index(r->params);
    const cs_plan_cfg *pick = &r->c[r->rule];
    if (r->winner == r->rule) {
        r->agrees = 2;
    } else if (r->winner >= 0 && fits(pick)) {
        r->pick_slower_pct = 100 * (1 - pick->tokens_per_s / r->c[r->winner].tokens_per_s);
        r->agrees = r->pick_slower_pct <= 100 * CS_PLAN_TIE_FRACTION;
    }
    const cs_plan_cfg *ddp = &r->c[RULE_DDP], *fs = &r->c[RULE_FULL_SHARD];
    r->in_claim = r->params < CLAIM_BELOW;
    if (r->in_claim && fits(ddp) && fits(fs) && fs->tokens_per_s > 0) {
        r->claim_checked = 1;
        r->ddp_vs_fs_pct = 100 * (ddp->tokens_per_s / fs->tokens_per_s - 1);
        r->claim_holds = r->ddp_vs_fs_pct >= 20 && r->ddp_vs_fs_pct <= 30;
    }
}

int cs_plan_rule_check(const cs_model *shape, const cs_training *t, const cs_topology *topo,
                       const double *sizes, int nsizes, const cs_plan_batch *b,
                       cs_pricing_cache *cache, cs_plan_rule *out, cs_diag *d)
{
    CS_ASSERT(nsizes >= 0 && nsizes <= CS_PLAN_RULE_MAX_SIZES);
    memset(out, 0, sizeof *out);
    snprintf(out->cluster, sizeof out->cluster, "%s", topo->cluster.name);
    out->ranks = topo->ranks;
    out->seq_len = shape->seq_len;
    out->vocab = shape->vocab;
    out->micro_batch = t->micro_batch;
    out->grad_accum = t->grad_accum;
    out->searched = b != NULL;
    out->nsizes = nsizes;
    for (int k = 0; k < nsizes; k++) {
        cs_plan_rule_row *r = &out->rows[k];
        r->params = sizes[k];
        cs_model m;
        int rc = cs_model_generic_shape(r->params, shape->seq_len, shape->vocab, &m, d);
        if (rc) return rc;
        for (int i = 0; i < CS_PLAN_RULE_STRATEGIES; i++) {
            cs_training ti = *t;
            cs_training_set_strategy(&ti, rule_strats[i]);
            if (b) {
                if ((rc = cs_plan_best(&m, &ti, topo, b, cache, &r->c[i], d))) return rc;
            } else {
                r->c[i].batch_kept = 1;
                simulate(&m, &ti, topo, cache, &r->c[i], NULL);
            }
        }
        judge(r);
        out->agrees += r->agrees > 0;
        out->claim_checked += r->claim_checked;
        out->claim_holds += r->claim_holds;
    }
    return 0;
}

int cs_plan_run(const cs_model *m, const cs_training *t, const cs_topology *topo,
                const cs_plan_space *sp, cs_plan *out, cs_diag *d)
{
    memset(out, 0, sizeof *out);
    out->model = m;
    out->training = t;
    out->topo = topo;
    out->seqs_per_rank = t->micro_batch * t->grad_accum;
    out->dp_ranks = topo->ranks / (cs_tensor_degree(t) * cs_pipeline_degree(t));
    if (out->dp_ranks < 1) out->dp_ranks = 1;
    out->global_batch = (long)out->seqs_per_rank * out->dp_ranks;
    size_t cap = 0;
    unsigned strats = sp && sp->strategies ? sp->strategies : ~0u;
    int tps[CS_PLAN_MAX_DEGREES], ntp = cs_plan_space_tps(m, t, topo, sp, tps);
    for (int s = 0; s < CS_STRAT_COUNT; s++)
        for (int j = 0; j < ntp && (strats >> s & 1); j++) {
            int pps[CS_PLAN_MAX_DEGREES], npp = cs_plan_space_pps(m, topo, tps[j], sp, pps);
            for (int k = 0; k < npp; k++) search_degrees(out, sp, (cs_strategy)s, tps[j], pps[k], &cap);
        }
    recommend(out);
    cs__plan_kinds(out);
    choose_shown(out);
    return cs_plan_rule_check(m, t, topo, rule_sizes, CS_PLAN_RULE_SIZES, NULL, NULL, &out->rule,
                              d);
}

void cs_plan_free(cs_plan *p)
{
    free(p->shown);
    p->shown = NULL;
    p->nshown = 0;
    free(p->cfgs);
    p->cfgs = NULL;
    p->ncfgs = 0;
    p->best = p->runner = NULL;
}
