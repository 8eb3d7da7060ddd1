/* SPDX-License-Identifier: MIT */
/*
 * calibrate.c - predicted vs measured collectives, and the least-squares
 * fit of a cluster's cost-model parameters to measurements.
 *
 * Fit: GSL's trust-region nonlinear least squares (gsl_multifit_nlinear,
 * Levenberg-Marquardt steps, More scaling, finite-difference Jacobian) on
 * the relative error r_i = (predicted_i - measured_i) / measured_i of every
 * usable row. Relative error gives every size the same voice whatever its
 * time, and nccl-tests sweeps are log-spaced, so each octave of message
 * size weighs the same: latency-bound sizes determine the latency terms,
 * bandwidth-bound ones the efficiencies. Outliers (a run that hiccuped at
 * one size, the 512 KiB spike of a single-process -g 8 run) are then
 * down-weighted by Huber's rule (Huber 1964; iteratively reweighted least
 * squares): weight min(1, k s / |r_i|) with k = 2 and s = 1.4826 x the
 * median absolute residual (at least 1%), refitted until the weights
 * settle (3 rounds at most).
 *
 * Parameters, in priority order (a later one that the data cannot tell
 * apart from an earlier one is kept at its input value):
 *   intra.efficiency     achievable fraction of the intra-node line rate
 *   inter.efficiency     same for the NICs (multi-node rows only)
 *   latency.launch       added to every base latency (NCCL baseLat): the
 *                        per-call cost launches and the host add; bounded
 *                        below by the base latencies the rows run with
 *   hop.ll/ll128/simple  scale on NCCL's intra-node hwLat for a protocol
 *   intra.latency        additive per-hop latency (only when the input
 *                        has one: cpu-local)
 *   hop.net              scale on NCCL's network hwLat (multi-node rows)
 *   bw_factor.ring.*     ring protocol bandwidth factors, written as
 *                        collectives.bw_factor overrides, which replace
 *                        NCCL's value in every situation: fitted only
 *                        when the rows share one NCCL value (LL is 1/4 for
 *                        all_reduce and 1/3 for single-node all_gather)
 *   efficiency.tree/ring per-algorithm bandwidth efficiency
 * Efficiencies, scales and latencies are fitted in log space (positive,
 * relative steps); factors and algorithm efficiencies through a logistic
 * that keeps the schema's (0, 1.5]; see to_value.
 * A parameter enters the fit only if (1) the data exercises it (rows
 * with two ranks on a node; rows crossing nodes; rows whose chosen
 * protocol / algorithm it prices), (2) the predictions depend on it (some
 * row moves by >= 0.1% per unit step) and (3) its Jacobian column is not
 * nearly a combination of the columns already accepted: Gram-Schmidt in
 * priority order, rejecting a column whose part orthogonal to the
 * accepted ones is under 30% of its norm (a variance inflation factor
 * above ~11, the usual threshold: its value would be decided by noise).
 * After a fit every fitted parameter is checked again at the solution: if
 * its protocol / algorithm no longer runs (it priced itself out), or its
 * interval is wider than x10, it returns to its input value; a latency
 * driven to its floor is held there; a bandwidth term pushed past NCCL's
 * per-channel cap is dropped. The rest are warm-started and chosen again
 * (a parameter set aside as redundant may enter once another left), until
 * nothing changes. Everything not fitted keeps the --cluster value and
 * the output says why.
 * Confidence intervals: 95%, from the covariance (J^T W J)^-1 at the
 * solution (gsl_multifit_nlinear_covar) scaled by the residual variance
 * chi^2 / (n - p), with Student's t quantile; mapped through the
 * parameter's transform (so log-space intervals are asymmetric).
 * The fit chooses algorithm / protocol with the parameters being fitted
 * (the written cluster then prices rows exactly as the fit did).
 * Departure: the GSL error handler is switched off during the fit and
 * restored after (process-global state, so the fit is not thread-safe).
 */
#include "study/calibrate.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "config/config.h"
#include "coll/topology.h"

#define MIB 1048576.0

/* ---- prediction ------------------------------------------------------------ */

static int place(const cs_cluster *c, const cs_meas_set *m, size_t i, cs_topology *t, cs_diag *d)
{
    const cs_meas_row *r = &m->rows[i];
    int nodes = r->nodes;
    if (nodes <= 0) nodes = (r->ranks + c->gpus_per_node - 1) / c->gpus_per_node;
    cs_diag td;
    cs_diag_clear(&td);
    if (cs_topology_build(c, r->ranks, nodes, t, &td)) {
        const cs_meas_dataset *ds = &m->datasets[r->dataset];
        return cs_diag_set(d, CS_ECONFIG, ds->source, r->line, 1,
                           "this row (%d ranks%s) does not fit cluster '%s': %s", r->ranks,
                           r->nodes > 0 ? " on the nodes the input names" : "", c->name,
                           td.message);
    }
    return 0;
}

/* The cluster at line rate: no efficiency loss and no latency. */
static void line_rate(const cs_cluster *c, cs_cluster *out)
{
    *out = *c;
    out->intra.efficiency = 1.0;
    out->inter.efficiency = 1.0;
    out->intra.latency_s = out->inter.latency_s = 0;
    out->coll.net_overhead_s = 0;
    for (int a = 0; a < CS_ALGO_COUNT; a++) {
        out->coll.algo_efficiency[a] = 1.0;
        for (int p = 0; p < CS_PROTO_COUNT; p++) {
            out->coll.base_latency_s[a][p] = 0;
            for (int h = 0; h < CS_HW_COUNT; h++) out->coll.hw_latency_s[h][a][p] = 0;
        }
    }
}

static int predict_on(const cs_cluster *c, const cs_cluster *lr, const cs_meas_set *m, size_t i,
                      cs_calib_pred *out, cs_diag *d)
{
    const cs_meas_row *r = &m->rows[i];
    memset(out, 0, sizeof *out);
    out->time_us = NAN;
    out->bound_busbw_GBps = NAN;
    cs_topology t;
    int rc = place(c, m, i, &t, d);
    if (rc) return rc;
    out->nodes = t.nodes;
    if (r->algo == CS_MEAS_ALGO_OTHER) {
        out->status = CS_ENOTSUP;
        snprintf(out->why, sizeof out->why, "algorithm %s is not modelled", r->algo_name);
        return 0;
    }
    cs_algo_id a;
    cs_proto p;
    if (cs_collective_choose(&t, r->op, r->size_bytes, r->algo, r->proto, &a, &p, NULL)) {
        out->status = CS_ENOTSUP;
        snprintf(out->why, sizeof out->why, "%s%s%s does not implement %s here",
                 r->algo >= 0 ? cs_algo_name((cs_algo_id)r->algo) : "no algorithm",
                 r->proto >= 0 ? "/" : "", r->proto >= 0 ? cs_proto_name((cs_proto)r->proto) : "",
                 cs_op_name(r->op));
        return 0;
    }
    double time_s;
    CS_ASSERT(cs_collective_time(&t, r->op, r->size_bytes, a, p, &time_s) == 0);
    out->algo = a;
    out->proto = p;
    out->time_us = time_s * 1e6;
    if (lr) {
        cs_topology tl;
        CS_ASSERT(cs_topology_build(lr, t.ranks, t.nodes, &tl, NULL) == 0);
        cs_algo_id la;
        cs_proto lp;
        double lt;
        if (cs_collective_choose(&tl, r->op, r->size_bytes, CS_CHOICE_AUTO, CS_CHOICE_AUTO, &la,
                                 &lp, NULL) == 0 &&
            cs_collective_time(&tl, r->op, r->size_bytes, la, lp, &lt) == 0 && lt > 0)
            out->bound_busbw_GBps =
                r->size_bytes / lt * cs_op_busbw_factor(r->op, r->ranks) / 1e9;
    }
    return 0;
}

int cs_calib_predict(const cs_cluster *c, const cs_meas_set *m, size_t i, cs_calib_pred *out,
                     cs_diag *d)
{
    cs_cluster lr;
    line_rate(c, &lr);
    return predict_on(c, &lr, m, i, out, d);
}

/* ---- statistics -------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cs_calib_stats_of(const double *abs_err_pct, int n, cs_calib_stats *out)
{
    out->n = n;
    out->median = out->p90 = out->max = NAN;
    if (n <= 0) return;
    double *v = cs_xmalloc((size_t)n * sizeof *v);
    memcpy(v, abs_err_pct, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    out->median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    int k = (int)ceil(0.9 * n) - 1;
    out->p90 = v[k < 0 ? 0 : k];
    out->max = v[n - 1];
    free(v);
}

/* ---- comparison -------------------------------------------------------------- */

int cs_calib_compare_run(const cs_cluster *c, const cs_meas_set *m, cs_calib_compare *out,
                         cs_diag *d)
{
    memset(out, 0, sizeof *out);
    out->nrows = m->n;
    out->ndatasets = m->ndatasets;
    out->pred = cs_xcalloc(m->n ? m->n : 1, sizeof *out->pred);
    out->err_pct = cs_xcalloc(m->n ? m->n : 1, sizeof *out->err_pct);
    out->ds = cs_xcalloc(m->ndatasets ? m->ndatasets : 1, sizeof *out->ds);
    cs_cluster lr;
    line_rate(c, &lr);
    double *big = cs_xmalloc((m->n ? m->n : 1) * sizeof *big);
    double *all = cs_xmalloc((m->n ? m->n : 1) * sizeof *all);
    for (size_t i = 0; i < m->n; i++) {
        int rc = predict_on(c, &lr, m, i, &out->pred[i], d);
        if (rc) {
            free(big);
            free(all);
            cs_calib_compare_free(out);
            return rc;
        }
        const cs_calib_pred *p = &out->pred[i];
        out->err_pct[i] = p->status ? NAN
                                    : 100.0 * (p->time_us - m->rows[i].time_us) / m->rows[i].time_us;
    }
    for (size_t k = 0; k < m->ndatasets; k++) {
        cs_calib_ds_score *s = &out->ds[k];
        int nb = 0, na = 0;
        s->max_busbw_GBps = s->bound_busbw_GBps = NAN;
        for (size_t i = 0; i < m->n; i++) {
            const cs_meas_row *r = &m->rows[i];
            if (r->dataset != (int)k) continue;
            s->rows++;
            if (r->algo != CS_MEAS_ALGO_OTHER) {
                /* a group = rows of one (op, ranks, nodes): its best measured
                 * busbw against the best ring/tree reaches at line rate over
                 * its sizes (at mid sizes NCCL's tree correction lowers the
                 * model's bound, so rows are not compared one by one) */
                double gbw = 0, gbound = 0;
                for (size_t j = 0; j < m->n; j++) {
                    const cs_meas_row *q = &m->rows[j];
                    if (q->dataset != r->dataset || q->op != r->op || q->ranks != r->ranks ||
                        out->pred[j].nodes != out->pred[i].nodes || q->algo == CS_MEAS_ALGO_OTHER)
                        continue;
                    gbw = fmax(gbw, cs_meas_busbw_GBps(q, q->time_us));
                    if (isfinite(out->pred[j].bound_busbw_GBps))
                        gbound = fmax(gbound, out->pred[j].bound_busbw_GBps);
                }
                /* Single-node NVLS is modelled (and in the bound) unless
                 * the YAML turns it off on hardware that has it; NVLSTree,
                 * CollNet / SHARP need a network. Elsewhere busbw above
                 * the bound means the cluster's line rate is too low
                 * (noted, not excluded). */
                int flag_off = 0; /* an algorithm the hardware has, turned off (NVLS) */
                for (int a = 0; a < CS_ALGO_COUNT; a++)
                    flag_off |= cs_algo_hw_allows(a, c) && !c->coll.algo_enabled[a];
                int other = flag_off || out->pred[i].nodes > 1;
                if (gbound > 0 && gbw > gbound && !other) s->above_line_rate = 1;
                if (gbound > 0 && gbw > gbound && other && !s->beyond_bound) {
                    s->beyond_bound = 1;
                    s->max_busbw_GBps = gbw;
                    s->bound_busbw_GBps = gbound;
                }
                if (!s->beyond_bound && !(gbw <= s->max_busbw_GBps)) {
                    s->max_busbw_GBps = gbw;
                    s->bound_busbw_GBps = gbound;
                }
            }
            if (out->pred[i].status) {
                s->unmodelled++;
                continue;
            }
            double e = fabs(out->err_pct[i]);
            all[na++] = e;
            if (r->size_bytes >= MIB) big[nb++] = e;
        }
        cs_calib_stats_of(big, nb, &s->big);
        cs_calib_stats_of(all, na, &s->all);
    }
    free(big);
    free(all);
    return 0;
}

void cs_calib_compare_free(cs_calib_compare *cmp)
{
    free(cmp->pred);
    free(cmp->err_pct);
    free(cmp->ds);
    memset(cmp, 0, sizeof *cmp);
}

/* A number or an empty / null / "-" cell ("-" as wide as fmt's width). */
/* ---- the fit ------------------------------------------------------------------- */

enum {
    P_INTRA_EFF,
    P_INTER_EFF,
    P_LAUNCH,
    P_HOP_LL,
    P_HOP_LL128,
    P_HOP_SIMPLE,
    P_INTRA_LAT,
    P_HOP_NET,
    P_BW_LL,
    P_BW_LL128,
    P_BW_SIMPLE,
    P_ALGO_EFF, /* + k: collectives.efficiency of cs_algo_calib_at(k) */
    P_COUNT = P_ALGO_EFF + CS_ALGO_COUNT /* slots; n_params() are in use */
};
_Static_assert(P_COUNT <= CS_CALIB_MAX_PARAMS, "cs_calib_result.params holds every parameter");

/* Parameters in use: the fixed ones and one per fitted algorithm. */
static int n_params(void) { return P_ALGO_EFF + cs_algo_calib_count(); }

#define LAUNCH_UNIT_S 1e-5 /* the launch latency is fitted in units of 10 us */
#define COLLINEAR 0.3      /* orthogonal part below which a column is redundant */
#define SCHEMA_MAX 1.5     /* upper bound of collectives.bw_factor / efficiency */

typedef enum { T_LOG, T_LAUNCH, T_BOUNDED } ptransform;

static const struct pdef {
    const char *name, *yaml, *unit;
    ptransform tr; /* see to_value */
} pdefs[P_ALGO_EFF] = {
    [P_INTRA_EFF] = {"intra.efficiency", "intra.efficiency", "", T_LOG},
    [P_INTER_EFF] = {"inter.efficiency", "inter.efficiency", "", T_LOG},
    [P_LAUNCH] = {"latency.launch", "collectives.base_latency (added to every entry)", "us",
                  T_LAUNCH},
    [P_HOP_LL] = {"hop.ll", "collectives.hw_latency.<intra>.*.ll (scale)", "x", T_LOG},
    [P_HOP_LL128] = {"hop.ll128", "collectives.hw_latency.<intra>.*.ll128 (scale)", "x", T_LOG},
    [P_HOP_SIMPLE] = {"hop.simple", "collectives.hw_latency.<intra>.*.simple (scale)", "x", T_LOG},
    [P_INTRA_LAT] = {"intra.latency", "intra.latency", "us", T_LOG},
    [P_HOP_NET] = {"hop.net", "collectives.hw_latency.net (scale)", "x", T_LOG},
    [P_BW_LL] = {"bw_factor.ring.ll", "collectives.bw_factor.ring.ll", "", T_BOUNDED},
    [P_BW_LL128] = {"bw_factor.ring.ll128", "collectives.bw_factor.ring.ll128", "", T_BOUNDED},
    [P_BW_SIMPLE] = {"bw_factor.ring.simple", "collectives.bw_factor.ring.simple", "", T_BOUNDED},
};

/* The definition of parameter k: a fixed one, or an algorithm's
 * efficiency as its row names it. */
static struct pdef pdef(int k)
{
    if (k < P_ALGO_EFF) return pdefs[k];
    cs_algo_id a = cs_algo_calib_at(k - P_ALGO_EFF);
    return (struct pdef){cs_algo_calib_param(a), cs_algo_calib_yaml(a), "", T_BOUNDED};
}

/* Natural value (efficiency, seconds, scale, factor) of a parameter at
 * fitting coordinate x (0 = its start value v0):
 *   LOG      v0 e^x (positive);
 *   BOUNDED  logistic in (0, SCHEMA_MAX), the schema's range;
 *   LAUNCH   -F + (v0 + F) e^x when the base latencies the rows use have a
 *            floor F > 0 (the additive latency may remove them, never go
 *            below: a clamped entry would flatten the fit), else linear in
 *            units of 10 us. */
static double to_value(int k, double v0, double x, double floor_s)
{
    switch (pdef(k).tr) {
    case T_LOG: return v0 * exp(x);
    case T_LAUNCH:
        if (floor_s > 0) return -floor_s + (v0 + floor_s) * exp(x);
        return v0 + x * LAUNCH_UNIT_S;
    default: {
        double q = v0 / SCHEMA_MAX;
        double z = log(q / (1 - q)) + x;
        return SCHEMA_MAX / (1 + exp(-z));
    }
    }
}

/* The coordinate of value v (inverse of to_value). */
static double to_coord(int k, double v0, double v, double floor_s)
{
    switch (pdef(k).tr) {
    case T_LOG: return log(v / v0);
    case T_LAUNCH:
        if (floor_s > 0) return log((v + floor_s) / (v0 + floor_s));
        return (v - v0) / LAUNCH_UNIT_S;
    default: {
        double q0 = v0 / SCHEMA_MAX, q = v / SCHEMA_MAX;
        return log(q / (1 - q)) - log(q0 / (1 - q0));
    }
    }
}

/* Natural values of every parameter; use[] marks bw_factor overrides in
 * force (the others always are). */
typedef struct pvals {
    double v[P_COUNT];
    int use[P_COUNT];
} pvals;

static void initial_values(const cs_cluster *c, pvals *pv)
{
    memset(pv, 0, sizeof *pv);
    pv->v[P_INTRA_EFF] = c->intra.efficiency;
    pv->v[P_INTER_EFF] = c->inter.efficiency;
    pv->v[P_LAUNCH] = 0;
    pv->v[P_HOP_LL] = pv->v[P_HOP_LL128] = pv->v[P_HOP_SIMPLE] = pv->v[P_HOP_NET] = 1.0;
    pv->v[P_INTRA_LAT] = c->intra.latency_s;
    for (int p = 0; p < CS_PROTO_COUNT; p++) {
        double f = c->coll.proto_bw_factor[CS_ALGO_RING][p];
        pv->use[P_BW_LL + p] = f > 0;
        pv->v[P_BW_LL + p] = f > 0 ? f : NAN; /* set from the data in cs_calibrate */
    }
    for (int j = P_ALGO_EFF; j < P_COUNT; j++) /* slots not in use have no value */
        pv->v[j] = j < n_params() ? c->coll.algo_efficiency[cs_algo_calib_at(j - P_ALGO_EFF)] : NAN;
}

static void apply(const cs_cluster *base, const pvals *pv, cs_cluster *out)
{
    *out = *base;
    out->intra.efficiency = pv->v[P_INTRA_EFF];
    out->inter.efficiency = pv->v[P_INTER_EFF];
    out->intra.latency_s = pv->v[P_INTRA_LAT];
    cs_hw intra = base->intra.kind == CS_FABRIC_PCIE ? CS_HW_PCI : CS_HW_NVLINK;
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++) {
            double bl = base->coll.base_latency_s[a][p] + pv->v[P_LAUNCH];
            out->coll.base_latency_s[a][p] = bl > 0 ? bl : 0;
            out->coll.hw_latency_s[intra][a][p] =
                base->coll.hw_latency_s[intra][a][p] * pv->v[P_HOP_LL + p];
            out->coll.hw_latency_s[CS_HW_NET][a][p] =
                base->coll.hw_latency_s[CS_HW_NET][a][p] * pv->v[P_HOP_NET];
        }
    for (int p = 0; p < CS_PROTO_COUNT; p++)
        if (pv->use[P_BW_LL + p])
            out->coll.proto_bw_factor[CS_ALGO_RING][p] = pv->v[P_BW_LL + p];
    for (int j = P_ALGO_EFF; j < n_params(); j++)
        out->coll.algo_efficiency[cs_algo_calib_at(j - P_ALGO_EFF)] = pv->v[j];
}

/* Latency parameters can reach a floor (0 contribution), where they are
 * held; bandwidth parameters can only pass a cap, where they are dropped. */
static int is_latency(int k)
{
    return k == P_LAUNCH || (k >= P_HOP_LL && k <= P_HOP_NET);
}

typedef struct fit_ctx {
    const cs_cluster *base;
    const cs_meas_set *m;
    const size_t *rows;   /* used rows */
    size_t n;
    int np;
    const int *which;     /* fitted parameter ids */
    pvals start;          /* natural values at coordinate 0 */
    double launch_floor_s; /* see to_value */
} fit_ctx;

/* GSL's trust region starts with a radius proportional to |D x0|, which
 * is 0 at x0 = 0: the solver sees y = x + 1 (X_OFFSET), so it starts at 1. */
#define X_OFFSET 1.0

static void x_to_vals(const fit_ctx *fc, const double *y, pvals *pv)
{
    *pv = fc->start;
    for (int j = 0; j < fc->np; j++) {
        int k = fc->which[j];
        pv->v[k] = to_value(k, fc->start.v[k], y[j] - X_OFFSET, fc->launch_floor_s);
        pv->use[k] = 1;
    }
}

/* Relative residuals of the used rows at natural values pv. */
static void residuals(const fit_ctx *fc, const pvals *pv, double *f)
{
    cs_cluster c;
    apply(fc->base, pv, &c);
    for (size_t k = 0; k < fc->n; k++) {
        cs_calib_pred p;
        size_t i = fc->rows[k];
        int rc = predict_on(&c, NULL, fc->m, i, &p, NULL);
        CS_ASSERT(rc == 0 && p.status == 0); /* checked before the fit */
        f[k] = (p.time_us - fc->m->rows[i].time_us) / fc->m->rows[i].time_us;
    }
}

/* GSL's finite-difference Jacobian passes column views of J as f: both
 * vectors may have a stride, so they are copied through plain arrays. */
static int gsl_f(const gsl_vector *x, void *params, gsl_vector *f)
{
    const fit_ctx *fc = params;
    double y[P_COUNT];
    for (int j = 0; j < fc->np; j++) y[j] = gsl_vector_get(x, (size_t)j);
    pvals pv;
    x_to_vals(fc, y, &pv);
    double *r = cs_xmalloc(fc->n * sizeof *r);
    residuals(fc, &pv, r);
    int status = GSL_SUCCESS;
    for (size_t k = 0; k < fc->n; k++) {
        if (!isfinite(r[k])) status = GSL_EDOM;
        gsl_vector_set(f, k, r[k]);
    }
    free(r);
    return status;
}

/* Central-difference Jacobian of every parameter at natural values `at`
 * (the start, or a fitted point), in the fitting coordinates
 * (J[k * P_COUNT + j]; 0 for parameters without a value). */
static void jacobian_at(const fit_ctx *fc, const pvals *at, double *J)
{
    double *fp = cs_xmalloc(fc->n * sizeof *fp), *fm = cs_xmalloc(fc->n * sizeof *fm);
    const double h = 1e-4;
    for (int j = 0; j < P_COUNT; j++) {
        pvals a = *at, b = *at;
        if (!isfinite(at->v[j]) || !isfinite(fc->start.v[j]) ||
            (pdef(j).tr == T_LOG && !(fc->start.v[j] > 0))) {
            for (size_t k = 0; k < fc->n; k++) J[k * P_COUNT + (size_t)j] = 0;
            continue;
        }
        /* the coordinate of `at`, stepped by +-h */
        double x0 = to_coord(j, fc->start.v[j], at->v[j], fc->launch_floor_s);
        a.v[j] = to_value(j, fc->start.v[j], x0 + h, fc->launch_floor_s);
        b.v[j] = to_value(j, fc->start.v[j], x0 - h, fc->launch_floor_s);
        a.use[j] = b.use[j] = 1;
        residuals(fc, &a, fp);
        residuals(fc, &b, fm);
        for (size_t k = 0; k < fc->n; k++) J[k * P_COUNT + (size_t)j] = (fp[k] - fm[k]) / (2 * h);
    }
    free(fp);
    free(fm);
}

static double t_quantile(int dof)
{
    return dof > 0 ? gsl_cdf_tdist_Pinv(0.975, dof) : NAN;
}

static double median_abs(const double *v, size_t n)
{
    double *a = cs_xmalloc((n ? n : 1) * sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = fabs(v[i]);
    qsort(a, n, sizeof *a, cmp_double);
    double m = n ? (n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2])) : 0;
    free(a);
    return m;
}

void cs_calib_result_free(cs_calib_result *r)
{
    if (!r) return;
    free(r->rows);
    free(r->ds_why);
    free(r);
}

/* Runs the GSL driver from x (in/out) with weights w; returns its status. */
static int run_fit(fit_ctx *fc, double *x, const double *w, int *iters, double *covar)
{
    gsl_multifit_nlinear_fdf fdf = {.f = gsl_f, .df = NULL, .fvv = NULL, .n = fc->n,
                                    .p = (size_t)fc->np, .params = fc};
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    par.trs = gsl_multifit_nlinear_trs_lm;
    par.scale = gsl_multifit_nlinear_scale_more;
    par.h_df = 1e-6;
    gsl_multifit_nlinear_workspace *ws =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, fc->n, (size_t)fc->np);
    if (!ws) CS_PANIC("out of memory (gsl_multifit_nlinear_alloc)");
    gsl_vector_view xv = gsl_vector_view_array(x, (size_t)fc->np);
    gsl_vector_const_view wv = gsl_vector_const_view_array(w, fc->n);
    int status = gsl_multifit_nlinear_winit(&xv.vector, &wv.vector, &fdf, ws);
    int info = 0;
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-12, NULL, NULL, &info, ws);
    /* GSL reports EMAXITER when its first iteration finds no step that
     * lowers the cost, after shrinking the trust region to nothing: the
     * start is already a minimum (a refit from a solution, data the input
     * fits exactly) */
    if (status == GSL_EMAXITER && gsl_multifit_nlinear_niter(ws) <= 1) status = GSL_SUCCESS;
    memcpy(x, gsl_multifit_nlinear_position(ws)->data, (size_t)fc->np * sizeof *x);
    *iters += (int)gsl_multifit_nlinear_niter(ws);
    if (covar) {
        gsl_matrix_view cv = gsl_matrix_view_array(covar, (size_t)fc->np, (size_t)fc->np);
        if (gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(ws), 0.0, &cv.matrix))
            for (int j = 0; j < fc->np * fc->np; j++) covar[j] = NAN;
    }
    gsl_multifit_nlinear_free(ws);
    return status;
}

int cs_calibrate(const cs_cluster *c, const cs_meas_set *m, cs_calib_result **out, cs_diag *d)
{
    cs_calib_result *res = cs_xcalloc(1, sizeof *res);
    res->nrows = m->n;
    res->ndatasets = m->ndatasets;
    res->rows = cs_xcalloc(m->n ? m->n : 1, sizeof *res->rows);
    res->ds_why = cs_xcalloc(m->ndatasets ? m->ndatasets : 1, sizeof *res->ds_why);
    res->cluster = *c;
    size_t *rows = cs_xmalloc((m->n ? m->n : 1) * sizeof *rows);
    double *J = NULL, *f = NULL, *w = NULL, *covar = NULL;
    int rc = 0;

    /* which rows can be fitted */
    cs_calib_compare cmp;
    if ((rc = cs_calib_compare_run(c, m, &cmp, d))) goto fail;
    for (size_t k = 0; k < m->ndatasets; k++)
        if (cmp.ds[k].beyond_bound)
            snprintf(res->ds_why[k], sizeof res->ds_why[k],
                     "busbw %.0f GB/s exceeds what ring, tree or NVLS reach at line rate here "
                     "(%.0f GB/s): NVLSTree, CollNet / SHARP or NVLS (if off) ran",
                     cmp.ds[k].max_busbw_GBps, cmp.ds[k].bound_busbw_GBps);
    size_t n = 0;
    for (size_t i = 0; i < m->n; i++) {
        cs_calib_rowfit *rf = &res->rows[i];
        rf->before_us = cmp.pred[i].time_us;
        rf->after_us = NAN;
        rf->resid_pct = NAN;
        if (cmp.pred[i].status) snprintf(rf->why, sizeof rf->why, "%s", cmp.pred[i].why);
        else if (res->ds_why[m->rows[i].dataset][0])
            snprintf(rf->why, sizeof rf->why, "dataset excluded (NVLS / SHARP)");
        else {
            rf->used = 1;
            rf->weight = 1.0;
            rows[n++] = i;
        }
    }
    if (n == 0) {
        cs_calib_compare_free(&cmp);
        rc = cs_diag_set(d, CS_ECONFIG, NULL, 0, 0,
                         "no measured row can be fitted (every row ran an algorithm collsim "
                         "does not model, or exceeds what ring/tree can reach)");
        goto fail;
    }
    res->used_rows = (int)n;
    fit_ctx fc = {.base = c, .m = m, .rows = rows, .n = n};
    initial_values(c, &fc.start);

    /* (1) structural rules: what the used rows exercise */
    int ppn2 = 0, multi = 0, by_proto[CS_PROTO_COUNT] = {0}, by_algo[CS_ALGO_COUNT] = {0};
    int ring_proto[CS_PROTO_COUNT] = {0}, excluded_multi = 0;
    int run0[CS_ALGO_COUNT][CS_PROTO_COUNT] = {{0}}; /* (algo, proto) the rows run at the start */
    /* NCCL's ring factors met by the rows (LL: 1/4 or 1/3 by situation) */
    double fac_val[CS_PROTO_COUNT][4];
    int fac_cnt[CS_PROTO_COUNT][4] = {{0}}, nfac[CS_PROTO_COUNT] = {0};
    for (size_t i = 0; i < m->n; i++) {
        int nodes = cmp.pred[i].nodes;
        if (!res->rows[i].used) {
            excluded_multi += nodes > 1;
            continue;
        }
        ppn2 += m->rows[i].ranks > nodes;
        multi += nodes > 1;
        cs_proto p = cmp.pred[i].proto;
        by_proto[p]++;
        by_algo[cmp.pred[i].algo]++;
        run0[cmp.pred[i].algo][p]++;
        if (cmp.pred[i].algo != CS_ALGO_RING) continue;
        ring_proto[p]++;
        cs_topology t;
        CS_ASSERT(place(c, m, i, &t, NULL) == 0);
        double fv = cs_collective_nccl_bw_factor(&t, m->rows[i].op, CS_ALGO_RING, p);
        int k = 0;
        while (k < nfac[p] && fabs(fac_val[p][k] - fv) > 1e-12) k++;
        if (k == nfac[p] && k < 4) fac_val[p][nfac[p]++] = fv;
        if (k < 4) fac_cnt[p][k]++;
    }
    cs_calib_compare_free(&cmp);
    /* The YAML override replaces NCCL's factor in every situation, so a
     * factor is fitted only from rows that share one NCCL value (LL: 1/4
     * for all_reduce and across nodes, 1/3 for single-node all_gather ...);
     * otherwise one number would have to stand for several. */
    for (int p = 0; p < CS_PROTO_COUNT; p++)
        if (!fc.start.use[P_BW_LL + p] && nfac[p] == 1) fc.start.v[P_BW_LL + p] = fac_val[p][0];
    int eligible[P_COUNT];
    char why[P_COUNT][200];
    for (int j = 0; j < P_COUNT; j++) {
        eligible[j] = 1;
        why[j][0] = 0;
    }
#define KEEP(j, ...)                                        \
    do {                                                    \
        eligible[j] = 0;                                    \
        snprintf(why[j], sizeof why[j], __VA_ARGS__);      \
    } while (0)
    if (ppn2 < 2) KEEP(P_INTRA_EFF, "fewer than 2 usable rows have two ranks on one node");
    const char *nomulti =
        excluded_multi ? "the multi-node rows are excluded (see datasets), so no usable row "
                         "crosses the network"
                       : "all usable rows are single-node: the network is never crossed";
    if (multi < 2 || c->inter.nics_per_node < 1) {
        KEEP(P_INTER_EFF, "%s", nomulti);
        KEEP(P_HOP_NET, "%s", nomulti);
    }
    for (int p = 0; p < CS_PROTO_COUNT; p++)
        if (by_proto[p] < 2)
            KEEP(P_HOP_LL + p, "fewer than 2 usable rows run %s (the sizes do not cover its "
                               "regime, or it is disabled)", cs_proto_name((cs_proto)p));
    for (int p = 0; p < CS_PROTO_COUNT; p++)
        if (ring_proto[p] < 2)
            KEEP(P_BW_LL + p, "fewer than 2 usable rows run ring with %s",
                 cs_proto_name((cs_proto)p));
        else if (!isfinite(fc.start.v[P_BW_LL + p]))
            KEEP(P_BW_LL + p, "the rows running ring/%s have different NCCL factors (%.3g and "
                              "%.3g: different ops or node counts) and one bw_factor would replace "
                              "both", cs_proto_name((cs_proto)p), fac_val[p][0], fac_val[p][1]);
    for (int j = P_ALGO_EFF; j < P_COUNT; j++)
        if (j >= n_params())
            KEEP(j, "not in use");
        else if (by_algo[cs_algo_calib_at(j - P_ALGO_EFF)] < 2)
            KEEP(j, "fewer than 2 usable rows run %s", cs_algo_name(cs_algo_calib_at(j - P_ALGO_EFF)));
    if (!(c->intra.latency_s > 0))
        KEEP(P_INTRA_LAT, "the input's intra.latency is 0: NCCL's hwLat carries the per-hop "
                          "latency, scaled by hop.*");

    /* the launch latency may remove the base latencies the rows run with,
     * never more (see to_value) */
    fc.launch_floor_s = INFINITY;
    for (int al = 0; al < CS_ALGO_COUNT; al++)
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            if (run0[al][p]) fc.launch_floor_s = fmin(fc.launch_floor_s, c->coll.base_latency_s[al][p]);
    if (!isfinite(fc.launch_floor_s)) fc.launch_floor_s = 0;
    const pvals orig = fc.start;

    /* Rounds: (2)+(3) choose the parameters at the current point; fit;
     * check the fitted ones again at the solution. A parameter whose
     * protocol / algorithm no longer runs, or whose interval is wider than
     * x10, returns to its input value and leaves the fit; one that reached
     * a limit (a cap binds, a latency at its floor) stays there, fixed.
     * The others are warm-started and the choice is made again, so a
     * parameter set aside as redundant may enter once another left. */
    J = cs_xmalloc(n * P_COUNT * sizeof *J);
    f = cs_xmalloc(n * sizeof *f);
    w = cs_xmalloc(n * sizeof *w);
    covar = cs_xmalloc(P_COUNT * P_COUNT * sizeof *covar);
    double *q = cs_xmalloc(n * P_COUNT * sizeof *q);
    double *r = cs_xmalloc(n * sizeof *r);
    int which[P_COUNT], np = 0, frozen[P_COUNT] = {0};
    char sel[P_COUNT][200];
    double x[P_COUNT];
    residuals(&fc, &fc.start, f);
    double ss0 = 0;
    for (size_t k = 0; k < n; k++) ss0 += f[k] * f[k];
    res->rms_before_pct = 100 * sqrt(ss0 / (double)n);
    int status = GSL_SUCCESS;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    for (int round = 0; round <= n_params(); round++) {
        /* (2) sensitivity and (3) collinearity, in priority order */
        jacobian_at(&fc, &fc.start, J);
        np = 0;
        for (int j = 0; j < P_COUNT; j++) {
            sel[j][0] = 0;
            if (!eligible[j] || frozen[j]) continue;
            double vmax = 0, norm2 = 0;
            for (size_t k = 0; k < n; k++) {
                double v = J[k * P_COUNT + (size_t)j];
                vmax = fmax(vmax, fabs(v));
                norm2 += v * v;
            }
            if (vmax < 1e-3) {
                snprintf(sel[j], sizeof sel[j],
                         "no usable row's prediction depends on it (at most %.2g%% per %s step)",
                         100 * vmax, pdef(j).tr == T_LAUNCH ? "10 us" : "unit");
                continue;
            }
            for (size_t k = 0; k < n; k++) r[k] = J[k * P_COUNT + (size_t)j];
            for (int a = 0; a < np; a++) {
                double dot = 0;
                for (size_t k = 0; k < n; k++) dot += q[k * P_COUNT + (size_t)a] * r[k];
                for (size_t k = 0; k < n; k++) r[k] -= dot * q[k * P_COUNT + (size_t)a];
            }
            double rn = 0;
            for (size_t k = 0; k < n; k++) rn += r[k] * r[k];
            if (rn < COLLINEAR * COLLINEAR * norm2) {
                int best = -1; /* the accepted parameter it resembles most */
                double bc = -1;
                for (int a = 0; a < np; a++) {
                    double dot = 0, na = 0;
                    for (size_t k = 0; k < n; k++) {
                        double u = J[k * P_COUNT + (size_t)which[a]];
                        dot += u * J[k * P_COUNT + (size_t)j];
                        na += u * u;
                    }
                    double cc = fabs(dot) / sqrt(na * norm2);
                    if (cc > bc) bc = cc, best = which[a];
                }
                snprintf(sel[j], sizeof sel[j],
                         "indistinguishable on this data from %s%s (its effect is a combination "
                         "of parameters already fitted)",
                         best >= 0 ? pdef(best).name : "the parameters fitted before it",
                         np > 1 ? " and the others" : "");
                continue;
            }
            rn = sqrt(rn);
            for (size_t k = 0; k < n; k++) q[k * P_COUNT + (size_t)np] = r[k] / rn;
            which[np++] = j;
        }
        while (np > 0 && (size_t)np >= n) { /* keep at least one degree of freedom */
            np--;
            snprintf(sel[which[np]], sizeof sel[which[np]],
                     "not enough usable rows (%zu) to fit it as well", n);
        }
        /* parameters not chosen this round go back to their inputs */
        for (int j = 0; j < P_COUNT; j++) {
            int chosen = frozen[j];
            for (int a = 0; a < np; a++) chosen |= which[a] == j;
            if (!chosen) {
                fc.start.v[j] = orig.v[j];
                fc.start.use[j] = orig.use[j];
            }
        }
        fc.which = which;
        fc.np = np;
        if (np == 0) break;

        /* the fit: Huber-reweighted trust-region least squares */
        for (int j = 0; j < np; j++) x[j] = X_OFFSET;
        for (size_t k = 0; k < n; k++) w[k] = 1.0;
        for (int rw = 0; rw < 3; rw++) {
            status = run_fit(&fc, x, w, &res->iterations, NULL);
            pvals pv;
            x_to_vals(&fc, x, &pv);
            residuals(&fc, &pv, f);
            double sc = fmax(0.01, 1.4826 * median_abs(f, n));
            double change = 0;
            for (size_t k = 0; k < n; k++) {
                double nw = fabs(f[k]) > 2.0 * sc ? 2.0 * sc / fabs(f[k]) : 1.0;
                change = fmax(change, fabs(nw - w[k]));
                w[k] = nw;
            }
            if (change < 0.01) break;
        }
        status = run_fit(&fc, x, w, &res->iterations, covar);

        /* the check at the solution */
        pvals pv;
        x_to_vals(&fc, x, &pv);
        cs_cluster cf;
        apply(c, &pv, &cf);
        int runs[CS_ALGO_COUNT][CS_PROTO_COUNT] = {{0}};
        for (size_t k = 0; k < n; k++) {
            cs_calib_pred pr;
            CS_ASSERT(predict_on(&cf, NULL, m, rows[k], &pr, NULL) == 0 && pr.status == 0);
            runs[pr.algo][pr.proto]++;
        }
        jacobian_at(&fc, &pv, J);
        residuals(&fc, &pv, f);
        double chi2p = 0;
        for (size_t k = 0; k < n; k++) chi2p += w[k] * f[k] * f[k];
        int dofp = (int)n - np;
        double s2p = dofp > 0 ? chi2p / dofp : NAN, tqp = t_quantile(dofp);
        /* a parameter at a limit leaves J^T J singular, so intervals are
         * judged only in a round where none is */
        int at_limit = 0;
        for (int a = 0; a < np; a++) {
            double vmax = 0;
            for (size_t k = 0; k < n; k++)
                vmax = fmax(vmax, fabs(J[k * P_COUNT + (size_t)which[a]]));
            at_limit |= vmax < 1e-3;
        }
        /* Wide intervals usually come in pairs (two parameters that nearly
         * trade off): only the lowest-priority open one leaves per round. */
        int last_open = -1;
        if (!at_limit)
            for (int a = 0; a < np; a++) {
                double hw = tqp * sqrt(s2p * covar[a * np + a]);
                if (pdef(which[a]).tr != T_LAUNCH && isfinite(hw) && 2 * hw > log(10.0))
                    last_open = a;
            }
        int changed = 0;
        for (int a = 0; a < np; a++) {
            int j = which[a], used = 2;
            double vmax = 0;
            for (size_t k = 0; k < n; k++) vmax = fmax(vmax, fabs(J[k * P_COUNT + (size_t)j]));
            if (j >= P_HOP_LL && j <= P_HOP_SIMPLE) {
                used = 0;
                for (int al = 0; al < CS_ALGO_COUNT; al++) used += runs[al][j - P_HOP_LL];
            } else if (j >= P_BW_LL && j <= P_BW_SIMPLE) {
                used = runs[CS_ALGO_RING][j - P_BW_LL];
            } else if (j >= P_ALGO_EFF) {
                used = 0;
                for (int p = 0; p < CS_PROTO_COUNT; p++)
                    used += runs[cs_algo_calib_at(j - P_ALGO_EFF)][p];
            }
            /* a 95% interval wider than a factor of 10 leaves the value open */
            double hw = tqp * sqrt(s2p * covar[a * np + a]);
            int open = a == last_open;
            if (used < 2) {
                eligible[j] = 0;
                snprintf(why[j], sizeof why[j],
                         "fitting it priced its protocol / algorithm out of the data (fewer than "
                         "2 rows still run it), so the data does not determine it");
            } else if (vmax < 1e-3 && !is_latency(j)) {
                /* a bandwidth term past a per-channel cap: any value beyond
                 * the cap fits equally, so none is supported */
                eligible[j] = 0;
                snprintf(why[j], sizeof why[j],
                         "the fit pushed it past NCCL's per-channel cap, where no prediction "
                         "depends on it: the data asks for more bandwidth than the cap allows");
            } else if (vmax < 1e-3) {
                frozen[j] = 1;
                fc.start.v[j] = pv.v[j];
                fc.start.use[j] = 1;
                snprintf(why[j], sizeof why[j],
                         "held at its floor: the fit removed this latency entirely (no "
                         "prediction depends on it any more); the data asks for less latency "
                         "than the model can give");
            } else if (open) {
                eligible[j] = 0;
                snprintf(why[j], sizeof why[j],
                         "the data leaves it open: its 95%% interval spans more than a factor "
                         "of 10 (x%.2g .. x%.2g)", exp(-hw), exp(hw));
            } else
                continue;
            changed = 1;
        }
        if (!changed) break;
        /* warm start: the kept parameters at their fitted values, the
         * dropped ones back at their inputs */
        for (int a = 0; a < np; a++) {
            int j = which[a];
            if (frozen[j]) continue;
            if (eligible[j]) {
                fc.start.v[j] = pv.v[j];
                fc.start.use[j] = 1;
            } else {
                fc.start.v[j] = orig.v[j];
                fc.start.use[j] = orig.use[j];
            }
        }
        np = fc.np = 0;
    }
    gsl_set_error_handler(old);
    free(q);
    free(r);
#undef KEEP
    res->converged = np == 0 || status == GSL_SUCCESS;
    int nfrozen = 0;
    for (int j = 0; j < P_COUNT; j++) nfrozen += frozen[j];
    snprintf(res->status, sizeof res->status, "%s",
             np == 0 ? (nfrozen ? "converged" : "nothing to fit")
                     : status == GSL_SUCCESS ? "converged" : gsl_strerror(status));
    if (np == 0)
        for (size_t k = 0; k < n; k++) w[k] = 1.0;
    pvals fitted;
    x_to_vals(&fc, x, &fitted);
    residuals(&fc, &fitted, f);
    double chi2 = 0, ssw = 0;
    for (size_t k = 0; k < n; k++) {
        chi2 += w[k] * f[k] * f[k];
        ssw += w[k];
        res->downweighted += w[k] < 0.999;
    }
    res->rms_after_pct = 100 * sqrt(chi2 / ssw);
    res->dof = (int)n - np;
    double s2 = res->dof > 0 ? chi2 / res->dof : NAN, tq = t_quantile(res->dof);
    apply(c, &fitted, &res->cluster);
    for (size_t k = 0; k < n; k++) {
        cs_calib_rowfit *rf = &res->rows[rows[k]];
        rf->weight = w[k];
        rf->after_us = m->rows[rows[k]].time_us * (1 + f[k]);
        rf->resid_pct = 100 * f[k];
    }
    /* parameters: fitted with CIs, held at a limit, kept with reasons */
    res->nparams = n_params();
    for (int j = 0; j < res->nparams; j++) {
        cs_calib_param *p = &res->params[j];
        snprintf(p->name, sizeof p->name, "%s", pdef(j).name);
        snprintf(p->yaml, sizeof p->yaml, "%s", pdef(j).yaml);
        snprintf(p->unit, sizeof p->unit, "%s", pdef(j).unit);
        double scale = j == P_LAUNCH || j == P_INTRA_LAT ? 1e6 : 1.0;
        p->initial = orig.v[j] * scale;
        p->value = fitted.v[j] * scale;
        p->ci_lo = p->ci_hi = NAN;
        p->fitted = frozen[j];
        snprintf(p->why, sizeof p->why, "%.199s", why[j][0] || frozen[j] ? why[j] : sel[j]);
    }
    for (int a = 0; a < np; a++) {
        int j = which[a];
        cs_calib_param *p = &res->params[j];
        p->fitted = 1;
        /* the interval in fitting coordinates, mapped through the transform */
        double h = tq * sqrt(s2 * covar[a * np + a]), xa = x[a] - X_OFFSET;
        double scale = j == P_LAUNCH || j == P_INTRA_LAT ? 1e6 : 1.0;
        p->ci_lo = to_value(j, fc.start.v[j], xa - h, fc.launch_floor_s) * scale;
        p->ci_hi = to_value(j, fc.start.v[j], xa + h, fc.launch_floor_s) * scale;
        const char *what[P_ALGO_EFF] = {
            [P_INTRA_EFF] = "bandwidth-bound rows with ranks sharing a node",
            [P_INTER_EFF] = "bandwidth-bound multi-node rows",
            [P_LAUNCH] = "latency-bound (small) sizes",
            [P_HOP_LL] = "rows run with LL",
            [P_HOP_LL128] = "rows run with LL128",
            [P_HOP_SIMPLE] = "rows run with Simple",
            [P_INTRA_LAT] = "latency of rows with ranks sharing a node",
            [P_HOP_NET] = "latency of multi-node rows",
            [P_BW_LL] = "rows run with ring/LL",
            [P_BW_LL128] = "rows run with ring/LL128",
            [P_BW_SIMPLE] = "rows run with ring/Simple",
        };
        snprintf(p->why, sizeof p->why, "from %s%s%s",
                 j < P_ALGO_EFF ? what[j] : "rows run with ",
                 j < P_ALGO_EFF ? "" : cs_algo_name(cs_algo_calib_at(j - P_ALGO_EFF)),
                 j >= P_BW_LL && j <= P_BW_SIMPLE
                     ? " (the override replaces NCCL's value for every op and node count)"
                     : "");
    }
    free(J);
    free(f);
    free(w);
    free(covar);
    free(rows);
    *out = res;
    return 0;
fail:
    free(J);
    free(f);
    free(w);
    free(covar);
    free(rows);
    cs_calib_result_free(res);
    return rc;
}

/* ---- YAML -------------------------------------------------------------------- */

static void yrate(cs_buf *b, double Bps) { cs_buf_printf(b, "%.12gGB/s", Bps / 1e9); }
static void ytime(cs_buf *b, double s) { cs_buf_printf(b, "%.12gus", s * 1e6); }

static int differs(double a, double b) { return fabs(a - b) > 1e-12 * fmax(fabs(a), fabs(b)); }

/* Writes c; fitted[] (may be NULL) adds "# fitted" comments. */
static void write_cluster(cs_buf *b, const cs_cluster *c, const int *fitted)
{
    static const char *const fabric[] = {"nvswitch", "nvlink", "pcie"};
    static const char *const topo[] = {"rail-optimized", "fat-tree"};
#define FIT(j) (fitted && fitted[j] ? "   # fitted" : "")
    cs_buf_printf(b, "name: %s\nnodes: %d\ngpus_per_node: %d\n\ngpu:\n  model: %s\n", c->name,
                  c->nodes, c->gpus_per_node, c->gpu.model);
    cs_buf_printf(b, "  memory: %.0f\n  compute_capability: %d\n  tflops:\n", c->gpu.memory_bytes,
                  c->gpu.compute_capability);
    for (int t = 0; t < CS_DTYPE_COUNT; t++)
        if (c->gpu.peak_flops[t] > 0)
            cs_buf_printf(b, "    %s: %.12g\n", cs_dtype_name((cs_dtype)t),
                          c->gpu.peak_flops[t] / 1e12);
    cs_buf_printf(b, "  hbm_bandwidth: ");
    yrate(b, c->gpu.hbm_Bps);
    double ibw = c->intra.bw_Bps, ieff = c->intra.efficiency;
    int iraise = ieff > 1.0;
    if (iraise) ibw *= ieff, ieff = 1.0;
    cs_buf_printf(b, "\n\nintra:\n  fabric: %s\n  bandwidth: ", fabric[c->intra.kind]);
    yrate(b, ibw);
    cs_buf_printf(b, "%s\n  efficiency: %.9g%s\n  latency: ",
                  iraise ? "   # fitted: achievable rate above the line rate given" : "", ieff,
                  FIT(P_INTRA_EFF));
    ytime(b, c->intra.latency_s);
    cs_buf_printf(b, "\n");
    if (c->inter.nics_per_node > 0) {
        double nbw = c->inter.nic_bw_Bps, neff = c->inter.efficiency;
        int nraise = neff > 1.0;
        if (nraise) nbw *= neff, neff = 1.0;
        cs_buf_printf(b, "\ninter:\n  nics_per_node: %d\n  nic_bandwidth: ", c->inter.nics_per_node);
        yrate(b, nbw);
        cs_buf_printf(b, "%s\n  efficiency: %.9g%s\n  latency: ",
                      nraise ? "   # fitted: achievable rate above the line rate given" : "",
                      neff, FIT(P_INTER_EFF));
        ytime(b, c->inter.latency_s);
        cs_buf_printf(b, "\n  topology: %s\n  oversubscription: %.9g\n", topo[c->inter.topology],
                      c->inter.oversubscription);
    }
    cs_buf_printf(b, "\ncollectives:\n  channels: %d\n  net_overhead: ", c->coll.channels);
    ytime(b, c->coll.net_overhead_s);
    cs_buf_printf(b, "\n  ll128: %s", c->coll.ll128_enabled ? "true" : "false");
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        if (cs_algo_flag_key(a))
            cs_buf_printf(b, "\n  %s: %s", cs_algo_flag_key(a), c->coll.algo_enabled[a] ? "true" : "false");
    cs_buf_printf(b, "\n  chunk: {");
    for (int p = 0; p < CS_PROTO_COUNT; p++)
        cs_buf_printf(b, "%s%s: %.0f", p ? ", " : "", cs_proto_name((cs_proto)p),
                      c->coll.chunk_bytes[p]);
    cs_buf_printf(b, "}\n");
    /* latencies: only entries that differ from NCCL's defaults */
    int any = 0;
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            any |= differs(c->coll.base_latency_s[a][p],
                           cs_algo_base_latency_s((cs_algo_id)a, (cs_proto)p));
    if (any) {
        cs_buf_printf(b, "  base_latency:%s\n", FIT(P_LAUNCH));
        for (int a = 0; a < CS_ALGO_COUNT; a++) {
            cs_buf_printf(b, "    %s: {", cs_algo_name((cs_algo_id)a));
            for (int p = 0; p < CS_PROTO_COUNT; p++) {
                cs_buf_printf(b, "%s%s: ", p ? ", " : "", cs_proto_name((cs_proto)p));
                ytime(b, c->coll.base_latency_s[a][p]);
            }
            cs_buf_printf(b, "}\n");
        }
    }
    any = 0;
    for (int h = 0; h < CS_HW_COUNT; h++)
        for (int a = 0; a < CS_ALGO_COUNT; a++)
            for (int p = 0; p < CS_PROTO_COUNT; p++)
                any |= differs(c->coll.hw_latency_s[h][a][p],
                               cs_algo_hw_latency_s((cs_hw)h, (cs_algo_id)a, (cs_proto)p));
    if (any) {
        cs_buf_printf(b, "  hw_latency:%s\n",
                      fitted && (fitted[P_HOP_LL] || fitted[P_HOP_LL128] || fitted[P_HOP_SIMPLE] ||
                                 fitted[P_HOP_NET])
                          ? "   # fitted (scales on NCCL's hwLat)"
                          : "");
        for (int h = 0; h < CS_HW_COUNT; h++) {
            cs_buf_printf(b, "    %s:\n", cs_hw_name((cs_hw)h));
            for (int a = 0; a < CS_ALGO_COUNT; a++) {
                cs_buf_printf(b, "      %s: {", cs_algo_name((cs_algo_id)a));
                for (int p = 0; p < CS_PROTO_COUNT; p++) {
                    cs_buf_printf(b, "%s%s: ", p ? ", " : "", cs_proto_name((cs_proto)p));
                    ytime(b, c->coll.hw_latency_s[h][a][p]);
                }
                cs_buf_printf(b, "}\n");
            }
        }
    }
    any = 0;
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++) any |= c->coll.proto_bw_factor[a][p] > 0;
    if (any) {
        cs_buf_printf(b, "  bw_factor:%s\n",
                      fitted && (fitted[P_BW_LL] || fitted[P_BW_LL128] || fitted[P_BW_SIMPLE])
                          ? "   # fitted (one value for every op and node count)"
                          : "");
        for (int a = 0; a < CS_ALGO_COUNT; a++) {
            int k = 0;
            for (int p = 0; p < CS_PROTO_COUNT; p++) {
                if (!(c->coll.proto_bw_factor[a][p] > 0)) continue;
                if (!k++) cs_buf_printf(b, "    %s: {", cs_algo_name((cs_algo_id)a));
                else cs_buf_printf(b, ", ");
                cs_buf_printf(b, "%s: %.9g", cs_proto_name((cs_proto)p),
                              c->coll.proto_bw_factor[a][p]);
            }
            if (k) cs_buf_printf(b, "}\n");
        }
    }
    int eff_fitted = 0;
    for (int j = P_ALGO_EFF; fitted && j < n_params(); j++) eff_fitted |= fitted[j];
    cs_buf_printf(b, "  efficiency: {");
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        cs_buf_printf(b, "%s%s: %.9g", a ? ", " : "", cs_algo_name((cs_algo_id)a),
                      c->coll.algo_efficiency[a]);
    cs_buf_printf(b, "}%s\n", eff_fitted ? "   # fitted" : "");
    if (c->n_overrides || c->n_stragglers) {
        cs_buf_printf(b, "\ndes:\n");
        if (c->n_overrides) {
            cs_buf_printf(b, "  links:\n");
            for (int i = 0; i < c->n_overrides; i++) {
                const cs_link_override *o = &c->overrides[i];
                cs_buf_printf(b, "    - {node: %d, %s: %d, bandwidth: ", o->node,
                              o->is_nic ? "nic" : "gpu", o->gpu);
                yrate(b, o->bw_Bps);
                cs_buf_printf(b, "}\n");
            }
        }
        if (c->n_stragglers) {
            cs_buf_printf(b, "  stragglers:\n");
            for (int i = 0; i < c->n_stragglers; i++) {
                const cs_straggler *s = &c->stragglers[i];
                cs_buf_printf(b, "    - {rank: %d, slowdown: %.9g, delay: ", s->rank, s->slowdown);
                ytime(b, s->delay_s);
                cs_buf_printf(b, "}\n");
            }
        }
    }
#undef FIT
}

void cs_calib_cluster_yaml(cs_buf *b, const cs_cluster *c)
{
    cs_buf_printf(b, "# cluster '%s' written by collsim\n", c->name);
    write_cluster(b, c, NULL);
}

void cs_calib_write_yaml(cs_buf *b, const cs_calib_result *r, const cs_meas_set *m,
                         const char *origin)
{
    cs_buf_printf(b, "# Calibrated by `collsim calibrate` from cluster %s and %zu measured rows "
                     "(%d used) in:\n", origin, m->n, r->used_rows);
    for (size_t k = 0; k < m->ndatasets; k++)
        cs_buf_printf(b, "#   %s (%s)%s%s\n", m->datasets[k].source, m->datasets[k].kind,
                      r->ds_why[k][0] ? " - excluded: " : "", r->ds_why[k]);
    cs_buf_printf(b, "# Fit: %s; weighted RMS relative error %.2f%% -> %.2f%%.\n", r->status,
                  r->rms_before_pct, r->rms_after_pct);
    int fitted[P_COUNT] = {0};
    for (int j = 0; j < r->nparams && j < P_COUNT; j++) {
        const cs_calib_param *p = &r->params[j];
        fitted[j] = p->fitted;
        if (p->fitted && isfinite(p->ci_lo))
            cs_buf_printf(b, "# fitted %s = %.6g%s (95%% CI %.6g .. %.6g; input %.6g) -> %s, %s\n",
                          p->name, p->value, p->unit, p->ci_lo, p->ci_hi, p->initial, p->yaml,
                          p->why);
        else if (p->fitted)
            cs_buf_printf(b, "# fitted %s = %.6g%s (input %.6g) -> %s, %s\n", p->name, p->value,
                          p->unit, p->initial, p->yaml, p->why);
        else if (isfinite(p->value))
            cs_buf_printf(b, "# kept   %s = %.6g%s: %s\n", p->name, p->value, p->unit, p->why);
        else
            cs_buf_printf(b, "# kept   %s = NCCL's: %s\n", p->name, p->why);
    }
    cs_buf_printf(b, "# Schema: configs/clusters/README.md. Values are in plain units "
                     "(GB/s = 1e9 B/s, us, bytes).\n");
    cs_cluster c = r->cluster;
    write_cluster(b, &c, fitted);
}
