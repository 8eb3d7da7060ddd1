/* SPDX-License-Identifier: MIT */
/*
 * sweep.c - grids over model size P x ranks N x strategies and the
 * crossovers between strategies.
 *
 * A point is one evaluated configuration (train/evaluate.h: the memory
 * estimate and one simulated training iteration; collectives priced per
 * training.collective_engine: closed form by default, or discrete-event
 * runs) of a generic model of P parameters
 * (cs_model_generic: GPT-3-like shape) or of a listed model, on the first
 * N ranks of the cluster (cs_topology_build(cluster, N, 0)). Its memory
 * verdict is the simulated timeline's peak against the GPU's capacity, as
 * in `collsim simulate`; a point that does not fit still gets its
 * iteration time (fits = 0), so curves can be drawn through OOM regions.
 *
 * Series: a strategy, or with layout lists (crossover --tp / --pp) each
 * strategy x tp x pp, in that order; everything below that says
 * "strategy" means series. A series' layout that does not apply at a
 * point (a TP degree over the generic model's heads, more stages than
 * layers, tp x pp not dividing the ranks) leaves the point empty
 * (applies 0, counted as not fitting); crossings are searched only
 * between points where both series apply.
 *
 * Crossings (generic-model grids only; a list of models has no continuous
 * axis):
 *  - throughput: for each ranks value and each pair of strategies (a, b)
 *    in the order given, the sign of tokens_per_s(a) - tokens_per_s(b) is
 *    read at every grid point; where it flips between grid points the
 *    crossing is refined with GSL's Brent solver (Brent 1973, "Algorithms
 *    for Minimization without Derivatives", ch. 4; gsl_root_fsolver_brent)
 *    on x = log10 P, evaluating points on demand, until the bracket is
 *    narrower than 1e-4 relative in P. Differences within 1e-9 relative
 *    are ties (strategies that run the same schedule, e.g. SHARD_GRAD_OP
 *    and FULL_SHARD when every gather hides): a flip across tied grid
 *    points is bracketed from the last untied point on either side. A
 *    crossing counts only if both strategies fit at the refined P (a
 *    throughput lead of a strategy that cannot run is no lead). The crossing
 *    is oriented so that `a` is the winner just below it, and `margin` is
 *    a's relative advantage tokens_per_s(a) / tokens_per_s(b) - 1 at the
 *    last untied grid point below the crossing; `lead_max` is the largest
 *    such advantage over the grid points of a's run below the crossing
 *    (since the pair's previous flip, or the grid's start) where both fit.
 *    Throughput is only piecewise continuous in P: a generic model's layer
 *    count is rounded (cs_model_generic), and the collective algorithm /
 *    protocol choice switches at size thresholds. Brent converges on a
 *    bracket whatever the function does inside it, so a sign change that
 *    happens at a jump is reported at the jump (to 1e-4) like any other.
 *  - oom: for each ranks value and strategy, where the fits verdict differs
 *    between adjacent grid points, the boundary is bisected on log10 P to
 *    1e-4 relative and reported at the bracket's geometric midpoint
 *    (a = b = the strategy; fits_below says which side fits).
 * Per ranks value, crossings are listed by increasing P (ties keep the
 * order: throughput pairs, then OOM by strategy). Everything is
 * deterministic: the same spec and points give the same crossings.
 *
 * Cost: one point is one graph build and one event-driven run, O(tasks log
 * tasks) with tasks ~ 4 x layers x grad_accum; a refinement takes about
 * 2 x 20 extra points. With DES collectives each distinct collective of a
 * point is one discrete-event run; cs_sweep_run and cs_sweep_crossings
 * then keep a cs_pricing_cache for the call, so a collective met again at
 * another point (the same group topology, op and size: DDP's full
 * buckets, the layers shared by two FSDP strategies) is simulated once.
 * The cache changes no result (pricing.h).
 */
#include "study/sweep.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>

#include "coll/topology.h"
#include "train/evaluate.h"
#include "train/layout.h"
#include "train/pipeline.h"
#include "train/tensor.h"

/* Relative tolerance in P of refined crossings: the bracket's width in
 * log10 P is below log10(1 + 1e-4). */
#define CS_SWEEP_REL_TOL 1e-4
/* Relative throughput differences below this are ties. */
#define CS_SWEEP_TIE 1e-9
#define CS_SWEEP_MAX_ITER 200

cs_plan_batch cs_sweep_batch(const cs_sweep_spec *s, int ranks)
{
    const cs_training *t = &s->training;
    cs_plan_batch b = {
        .global_batch = s->global_batch > 0 ? s->global_batch
                                            : (long)t->micro_batch * t->grad_accum * ranks,
        .micro_batch = s->search_micro_batch ? 0 : t->micro_batch,
        .ckpt = s->search_ckpt ? -1 : (int)t->checkpointing};
    return b;
}

/* The model of a point: spec->models[model] when model >= 0, else the
 * generic model of params at the spec's sequence length. */
static int point_model(const cs_sweep_spec *s, double params, int model, cs_model *m, cs_diag *d)
{
    if (model >= 0) {
        CS_ASSERT(model < s->nmodels);
        *m = s->models[model];
        return 0;
    }
    if (s->seq_len > 0) return cs_model_generic_shape(params, s->seq_len, CS_MODEL_GENERIC_VOCAB, m, d);
    return cs_model_generic(params, m, d);
}

/* What a point runs: the fastest configuration (cs_plan_best), the one
 * needing the least memory (LEAST), or the better of given ones (PICK). */
typedef enum point_how { FASTEST, LEAST, PICK } point_how;

/* The configurations PICK chooses from: micro-batch and checkpointing. */
typedef struct picks {
    int n;
    int micro_batch[2];
    cs_ckpt ckpt[2];
} picks;

static void point_fill(const cs_model *m, const cs_plan_cfg *c, int ranks, cs_sweep_point *out)
{
    out->strategy = c->strategy;
    out->tp = c->tp;
    out->pp = c->pp;
    out->applies = 1;
    out->ranks = ranks;
    out->params = m->params;
    snprintf(out->model, sizeof out->model, "%s", m->name);
    out->micro_batch = c->micro_batch;
    out->grad_accum = c->grad_accum;
    out->checkpointing = c->checkpointing;
    out->batch_kept = c->batch_kept;
    out->capacity_bytes = c->capacity_bytes;
    out->peak_bytes = c->peak_bytes;
    out->fits = c->fits;
    out->iteration_time_s = c->iteration_time_s;
    out->tokens_per_s = c->tokens_per_s;
    out->tflops_per_gpu = c->tflops_per_gpu;
    out->mfu = c->mfu;
    out->exposed_comm_s = c->exposed_comm_s;
    out->wire_bytes = c->wire_bytes;
    out->time = c->time;
}

/* Whether series t (its layout set) applies to m on topo: 0, or
 * CS_EINVAL with d filled (layout.c's, tensor.c's, pipeline.c's checks). */
static int layout_applies(const cs_model *m, const cs_training *t, const cs_topology *topo,
                          cs_diag *d)
{
    cs_mesh mesh;
    int rc = cs_layout_mesh(t, topo, &mesh, d);
    if (!rc) rc = cs_tensor_check(m, t, d);
    if (!rc) rc = cs_pipeline_check(m, t, d);
    return rc;
}

/* cs_sweep_series_eval with a collective cache (NULL: none), run as how
 * says (pk: PICK's choices). */
static int point_eval(const cs_sweep_spec *s, const cs_sweep_series *se, int ranks, double params,
                      int model, cs_pricing_cache *cache, point_how how, const picks *pk,
                      cs_sweep_point *out, cs_diag *d)
{
    memset(out, 0, sizeof *out);
    cs_model m;
    int rc;
    if ((rc = point_model(s, params, model, &m, d))) return rc;
    cs_topology topo;
    if ((rc = cs_topology_build(&s->cluster, ranks, 0, &topo, d))) return rc;
    cs_training t = s->training;
    cs_training_set_strategy(&t, se->strategy);
    if (se->tp > 0) t.tensor_parallel = se->tp;
    if (se->pp > 0) t.pipeline_parallel = se->pp;
    if (cs_sweep_has_layouts(s)) {
        cs_diag own;
        if (layout_applies(&m, &t, &topo, &own)) { /* an empty point, not an error */
            out->strategy = se->strategy;
            out->tp = cs_tensor_degree(&t);
            out->pp = cs_pipeline_degree(&t);
            out->ranks = topo.ranks;
            out->params = m.params;
            snprintf(out->model, sizeof out->model, "%s", m.name);
            out->capacity_bytes = s->cluster.gpu.memory_bytes;
            return 0;
        }
    }
    cs_plan_batch b = cs_sweep_batch(s, topo.ranks);
    cs_plan_cfg c, ci;
    if (how == FASTEST) {
        rc = cs_plan_best(&m, &t, &topo, &b, cache, &c, d);
    } else if (how == LEAST) {
        rc = cs_plan_least(&m, &t, &topo, &b, cache, &c, d);
    } else {
        CS_ASSERT(pk && pk->n >= 1 && pk->n <= 2);
        for (int i = 0; i < pk->n && rc == 0; i++) {
            if (i == 1 && pk->micro_batch[1] == pk->micro_batch[0] && pk->ckpt[1] == pk->ckpt[0])
                break;
            cs_plan_batch bi = b;
            bi.micro_batch = pk->micro_batch[i];
            bi.ckpt = (int)pk->ckpt[i];
            if ((rc = cs_plan_best(&m, &t, &topo, &bi, cache, &ci, d)) == 0 &&
                (i == 0 || cs_plan_cfg_preferred(&ci, &c)))
                c = ci;
        }
    }
    if (rc) return rc;
    point_fill(&m, &c, topo.ranks, out);
    return 0;
}

int cs_sweep_point_eval(const cs_sweep_spec *s, cs_strategy st, int ranks, double params,
                        int model, cs_sweep_point *out, cs_diag *d)
{
    cs_sweep_series se = {st, 0, 0};
    return point_eval(s, &se, ranks, params, model, NULL, FASTEST, NULL, out, d);
}

int cs_sweep_series_eval(const cs_sweep_spec *s, const cs_sweep_series *se, int ranks,
                         double params, int model, cs_sweep_point *out, cs_diag *d)
{
    return point_eval(s, se, ranks, params, model, NULL, FASTEST, NULL, out, d);
}

/* A cache for one call when collectives run on the DES; NULL otherwise
 * (closed forms cost less than the lookups). */
static cs_pricing_cache *call_cache(const cs_sweep_spec *s)
{
    return s->training.collective_engine == CS_ENGINE_DES ? cs_pricing_cache_new() : NULL;
}

static size_t npoints_p(const cs_sweep_spec *s)
{
    return s->nmodels > 0 ? (size_t)s->nmodels : (size_t)(s->params_points > 0 ? s->params_points : 0);
}

size_t cs_sweep_size(const cs_sweep_spec *s)
{
    return (size_t)s->nranks * npoints_p(s) * (size_t)cs_sweep_nseries(s);
}

double cs_sweep_grid_params(const cs_sweep_spec *s, int k)
{
    CS_ASSERT(k >= 0 && k < s->params_points);
    if (k == 0 || s->params_points == 1) return s->params_min;
    if (k == s->params_points - 1) return s->params_max;
    double lo = log10(s->params_min), hi = log10(s->params_max);
    return pow(10.0, lo + (hi - lo) * k / (s->params_points - 1));
}

void cs_sweep_coords(const cs_sweep_spec *s, size_t i, int *ranks, double *params, int *model,
                     cs_strategy *st)
{
    size_t ns = (size_t)cs_sweep_nseries(s), np = npoints_p(s);
    CS_ASSERT(i < cs_sweep_size(s));
    size_t si = i % ns, pi = (i / ns) % np, ri = i / ns / np;
    *ranks = s->ranks[ri];
    *st = cs_sweep_series_at(s, (int)si).strategy;
    if (s->nmodels > 0) {
        *model = (int)pi;
        *params = s->models[pi].params;
    } else {
        *model = -1;
        *params = cs_sweep_grid_params(s, (int)pi);
    }
}

int cs_sweep_series_of(const cs_sweep_spec *s, size_t i)
{
    CS_ASSERT(i < cs_sweep_size(s));
    return (int)(i % (size_t)cs_sweep_nseries(s));
}

int cs_sweep_run(const cs_sweep_spec *s, size_t first, size_t stride, cs_sweep_point *pts,
                 cs_sweep_progress_fn progress, void *ctx, size_t *failed, cs_diag *d)
{
    CS_ASSERT(stride >= 1);
    size_t n = cs_sweep_size(s), total = first < n ? (n - first + stride - 1) / stride : 0;
    size_t done = 0;
    cs_pricing_cache *cache = call_cache(s);
    int rc = 0;
    for (size_t i = first; i < n; i += stride) {
        int r, model;
        double p;
        cs_strategy st;
        cs_sweep_coords(s, i, &r, &p, &model, &st);
        cs_sweep_series se = cs_sweep_series_at(s, cs_sweep_series_of(s, i));
        rc = point_eval(s, &se, r, p, model, cache, FASTEST, NULL, &pts[i], d);
        if (rc) {
            if (failed) *failed = i;
            break;
        }
        if (progress) progress(ctx, ++done, total);
    }
    cs_pricing_cache_free(cache);
    return rc;
}

/* ---- crossings ----------------------------------------------------------- */

typedef struct refine_ctx {
    const cs_sweep_spec *s;
    int ranks;
    cs_sweep_series a, b;
    picks pa, pb; /* inside a bracket: what a and b chose at its two grid ends */
    int rc;
    cs_diag *d;
    cs_pricing_cache *cache;
} refine_ctx;

/* The point of series se at P = 10^x, run as how says. */
static int eval_at(refine_ctx *c, const cs_sweep_series *se, double x, point_how how,
                   const picks *pk, cs_sweep_point *p)
{
    int rc = point_eval(c->s, se, c->ranks, pow(10.0, x), -1, c->cache, how, pk, p, c->d);
    if (rc && c->rc == 0) c->rc = rc;
    return rc;
}

/* The choices of grid points p and q (the ends of a bracket). */
static picks picks_of(const cs_sweep_point *p, const cs_sweep_point *q)
{
    picks pk = {2, {p->micro_batch, q->micro_batch}, {p->checkpointing, q->checkpointing}};
    return pk;
}

/* tokens_per_s(a) - tokens_per_s(b) at P = 10^x, each at the better of
 * the configurations it chose at the bracket's ends; 0 after an error (so
 * the solver stops on a finite value; the caller checks c->rc). */
static double tput_diff(double x, void *vc)
{
    refine_ctx *c = vc;
    cs_sweep_point pa, pb;
    if (c->rc || eval_at(c, &c->a, x, PICK, &c->pa, &pa) ||
        eval_at(c, &c->b, x, PICK, &c->pb, &pb))
        return 0;
    double diff = pa.tokens_per_s - pb.tokens_per_s;
    return isfinite(diff) ? diff : 0;
}

static double log_tol(void) { return log10(1.0 + CS_SWEEP_REL_TOL); }

/* Brent on [x_lo, x_hi] where the difference changes sign. The grid's
 * values are reproduced (evaluation is deterministic; 10^log10(P) may
 * differ from P in the last bit), so the ends straddle zero; if rounding
 * ever lands an end on a root, that end is the root. */
static int refine_tput(refine_ctx *c, double x_lo, double x_hi, double *root)
{
    double f_lo = tput_diff(x_lo, c), f_hi = tput_diff(x_hi, c);
    if (c->rc) return c->rc;
    if (f_lo == 0 || f_hi == 0 || (f_lo > 0) == (f_hi > 0)) {
        *root = f_lo == 0 ? x_lo : f_hi == 0 ? x_hi : 0.5 * (x_lo + x_hi);
        return 0;
    }
    gsl_function F = {tput_diff, c};
    gsl_root_fsolver *sol = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (!sol) CS_PANIC("out of memory (gsl_root_fsolver_alloc)");
    gsl_root_fsolver_set(sol, &F, x_lo, x_hi);
    double lo = x_lo, hi = x_hi;
    for (int it = 0; it < CS_SWEEP_MAX_ITER && c->rc == 0; it++) {
        gsl_root_fsolver_iterate(sol);
        lo = gsl_root_fsolver_x_lower(sol);
        hi = gsl_root_fsolver_x_upper(sol);
        if (gsl_root_test_interval(lo, hi, log_tol(), 0) == GSL_SUCCESS) break;
    }
    *root = gsl_root_fsolver_root(sol);
    gsl_root_fsolver_free(sol);
    return c->rc;
}

/* Bisection of the fits verdict of st's least-memory configuration on
 * [x_lo, x_hi] (it differs at the ends). */
static int refine_oom(refine_ctx *c, const cs_sweep_series *st, double x_lo, double x_hi,
                      int fits_lo, double *boundary)
{
    while (x_hi - x_lo > log_tol()) {
        double mid = 0.5 * (x_lo + x_hi);
        cs_sweep_point p;
        if (eval_at(c, st, mid, LEAST, NULL, &p)) return c->rc;
        if (p.fits == fits_lo) x_lo = mid;
        else x_hi = mid;
    }
    *boundary = pow(10.0, 0.5 * (x_lo + x_hi));
    return 0;
}

typedef struct clist {
    cs_crossing *v;
    size_t n, cap;
} clist;

static void push(clist *l, const cs_crossing *c)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = cs_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = *c;
}

static int sign_of(double a, double b)
{
    double diff = a - b, scale = fmax(fabs(a), fabs(b));
    if (fabs(diff) <= CS_SWEEP_TIE * scale) return 0;
    return diff > 0 ? 1 : -1;
}

/* Stable insertion sort of l->v[from..] by params (a few crossings). */
static void sort_by_params(clist *l, size_t from)
{
    for (size_t i = from + 1; i < l->n; i++) {
        cs_crossing x = l->v[i];
        size_t j = i;
        while (j > from && l->v[j - 1].params > x.params) {
            l->v[j] = l->v[j - 1];
            j--;
        }
        l->v[j] = x;
    }
}

/* The grid's points of one rank count: point (k, si) of a generic grid. */
typedef struct grid {
    const cs_sweep_point *pts;
    int np, ns, ri;
} grid;

static const cs_sweep_point *at(const grid *g, int k, int si)
{
    return &g->pts[((size_t)g->ri * g->np + (size_t)k) * g->ns + (size_t)si];
}

/* The crossing of win over lose between grid points last (win ahead) and
 * k, refined; pushed when both fit there. run: where win's lead began. */
static int tput_crossing(refine_ctx *c, const grid *g, int win, int lose, int run, int last,
                         int k, clist *l)
{
    c->a = cs_sweep_series_at(c->s, win);
    c->b = cs_sweep_series_at(c->s, lose);
    c->pa = picks_of(at(g, last, win), at(g, k, win));
    c->pb = picks_of(at(g, last, lose), at(g, k, lose));
    double x;
    if (refine_tput(c, log10(at(g, last, win)->params), log10(at(g, k, win)->params), &x))
        return c->rc;
    cs_sweep_point pa, pb;
    if (eval_at(c, &c->a, x, PICK, &c->pa, &pa) || eval_at(c, &c->b, x, PICK, &c->pb, &pb))
        return c->rc;
    if (!pa.fits || !pb.fits) return 0;
    const cs_sweep_point *w = at(g, last, win), *o = at(g, last, lose);
    cs_crossing cr = {.ranks = c->ranks, .a = c->a.strategy, .b = c->b.strategy,
                      .tp_a = w->tp, .pp_a = w->pp, .tp_b = o->tp, .pp_b = o->pp,
                      .kind = CS_CROSS_THROUGHPUT,
                      .params = pow(10.0, x), .margin = w->tokens_per_s / o->tokens_per_s - 1,
                      .fits_below = 1, .margin_params = w->params,
                      .micro_batch_a = pa.micro_batch, .micro_batch_b = pb.micro_batch,
                      .ckpt_a = pa.checkpointing, .ckpt_b = pb.checkpointing};
    cr.lead_max = cr.margin;
    cr.lead_max_params = w->params;
    for (int j = run; j < last; j++) {
        const cs_sweep_point *wj = at(g, j, win), *oj = at(g, j, lose);
        double lead = wj->tokens_per_s / oj->tokens_per_s - 1;
        if (wj->fits && oj->fits && lead > cr.lead_max) {
            cr.lead_max = lead;
            cr.lead_max_params = wj->params;
        }
    }
    push(l, &cr);
    return 0;
}

/* The throughput crossings of strategies ia < ib on one rank count: where
 * the sign of their difference flips between untied grid points. */
static int tput_crossings(refine_ctx *c, const grid *g, int ia, int ib, clist *l)
{
    int last = -1, last_sign = 0; /* last untied grid point */
    int run = 0;                  /* where the current winner's run began */
    for (int k = 0; k < g->np; k++) {
        if (!at(g, k, ia)->applies || !at(g, k, ib)->applies) continue; /* file header */
        int sg = sign_of(at(g, k, ia)->tokens_per_s, at(g, k, ib)->tokens_per_s);
        if (sg == 0) continue;
        if (last >= 0 && sg != last_sign) {
            /* a wins below when last_sign > 0 */
            int win = last_sign > 0 ? ia : ib, lose = last_sign > 0 ? ib : ia;
            if (tput_crossing(c, g, win, lose, run, last, k, l)) return c->rc;
            run = k;
        }
        if (last < 0) run = k;
        last = k;
        last_sign = sg;
    }
    return 0;
}

/* The OOM boundaries of strategy si on one rank count: where the fits
 * verdict differs between adjacent grid points. */
static int oom_crossings(refine_ctx *c, const grid *g, int si, clist *l)
{
    cs_sweep_series st = cs_sweep_series_at(c->s, si);
    for (int k = 0; k + 1 < g->np; k++) {
        int f0 = at(g, k, si)->fits, f1 = at(g, k + 1, si)->fits;
        if (f0 == f1 || !at(g, k, si)->applies || !at(g, k + 1, si)->applies) continue;
        double p = 0;
        if (refine_oom(c, &st, log10(at(g, k, si)->params), log10(at(g, k + 1, si)->params), f0,
                       &p))
            return c->rc;
        cs_sweep_point least;
        if (eval_at(c, &st, log10(p), LEAST, NULL, &least)) return c->rc;
        cs_crossing cr = {.ranks = c->ranks, .a = st.strategy, .b = st.strategy,
                          .tp_a = at(g, k, si)->tp, .pp_a = at(g, k, si)->pp,
                          .tp_b = at(g, k, si)->tp, .pp_b = at(g, k, si)->pp,
                          .kind = CS_CROSS_OOM, .params = p,
                          .margin = 0, .fits_below = f0, .micro_batch_a = least.micro_batch,
                          .micro_batch_b = least.micro_batch, .ckpt_a = least.checkpointing,
                          .ckpt_b = least.checkpointing};
        push(l, &cr);
    }
    return 0;
}

int cs_sweep_crossings(const cs_sweep_spec *s, const cs_sweep_point *pts, size_t n,
                       cs_crossing **out, size_t *nout, cs_diag *d)
{
    *out = NULL;
    *nout = 0;
    CS_ASSERT(n == cs_sweep_size(s));
    if (s->nmodels > 0 || s->params_points < 2) return 0;
    clist l = {0};
    refine_ctx c = {.s = s, .d = d, .cache = call_cache(s)};
    for (int ri = 0; ri < s->nranks && c.rc == 0; ri++) {
        grid g = {pts, s->params_points, cs_sweep_nseries(s), ri};
        size_t first = l.n;
        c.ranks = s->ranks[ri];
        for (int ia = 0; ia < g.ns && c.rc == 0; ia++)
            for (int ib = ia + 1; ib < g.ns && c.rc == 0; ib++) tput_crossings(&c, &g, ia, ib, &l);
        for (int si = 0; si < g.ns && c.rc == 0; si++) oom_crossings(&c, &g, si, &l);
        sort_by_params(&l, first);
    }
    cs_pricing_cache_free(c.cache);
    if (c.rc) {
        free(l.v);
        return c.rc;
    }
    *out = l.v;
    *nout = l.n;
    return 0;
}

/* 1, 3, 7, 13, 30, 70B: the rule's bands' edges and the sizes people
 * train (Llama 2's 7/13/70B, GPT-3's 13B), two on each side of 3B and 7B. */
static const double rule_sizes[CS_SWEEP_RULE_SIZES] = {1e9, 3e9, 7e9, 13e9, 30e9, 70e9};

int cs_sweep_rules(const cs_sweep_spec *s, cs_plan_rule *out, cs_diag *d)
{
    cs_model shape;
    int rc = point_model(s, 1e9, -1, &shape, d);
    cs_pricing_cache *cache = call_cache(s);
    for (int ri = 0; rc == 0 && ri < s->nranks; ri++) {
        cs_topology topo;
        if ((rc = cs_topology_build(&s->cluster, s->ranks[ri], 0, &topo, d))) break;
        cs_plan_batch b = cs_sweep_batch(s, topo.ranks);
        rc = cs_plan_rule_check(&shape, &s->training, &topo, rule_sizes, CS_SWEEP_RULE_SIZES, &b,
                                cache, &out[ri], d);
    }
    cs_pricing_cache_free(cache);
    return rc;
}
