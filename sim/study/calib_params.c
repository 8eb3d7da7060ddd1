/* SPDX-License-Identifier: MIT */
/*
 * calib_params.c - the parameters a calibration fits: their definitions,
 * the fitting coordinates, the cluster a set of values gives, which of them
 * the data exercises, and the choice among those each round.
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
 *   efficiency.<algo>    per-algorithm bandwidth efficiency, one for each
 *                        row of the algorithm table that names one
 *                        (cs_algo_calib_param), in the rows' priority
 *                        order (tree before ring)
 * Efficiencies, scales and latencies are fitted in log space (positive,
 * relative steps); factors and algorithm efficiencies through a logistic
 * that keeps the schema's (0, 1.5]; see cs__calib_to_value.
 * A parameter enters the fit only if (1) the data exercises it (rows
 * with two ranks on a node; rows crossing nodes; rows whose chosen
 * protocol / algorithm it prices: cs__calib_exercised), (2) the
 * predictions depend on it (some row moves by >= 0.1% per unit step) and
 * (3) its Jacobian column is not nearly a combination of the columns
 * already accepted: Gram-Schmidt in priority order, rejecting a column
 * whose part orthogonal to the accepted ones is under 30% of its norm (a
 * variance inflation factor above ~11, the usual threshold: its value
 * would be decided by noise). (2) and (3) are cs__calib_choose, made again
 * every round at the round's start values. (1) is judged on the input's
 * algorithm / protocol choices and once more at the fitted values
 * (cs__calib_reexamine): the fit moves the choices, and a protocol no row
 * ran at the start may run rows then; calibrate.c fits once more if so.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "study/calib_phases.h"

#define LAUNCH_UNIT_S 1e-5 /* the launch latency is fitted in units of 10 us */
#define COLLINEAR 0.3      /* orthogonal part below which a column is redundant */
#define SCHEMA_MAX 1.5     /* upper bound of collectives.bw_factor / efficiency */

#define OVERRIDE " (the override replaces NCCL's value for every op and node count)"

/* name, yaml (where it lands, for reports), unit, key (the YAML key it
 * changes), transform, scale, latency, protocol, algorithm, what */
static const cs__calib_pdef pdefs[P_ALGO_EFF] = {
    [P_INTRA_EFF] = {"intra.efficiency", "intra.efficiency", "", "intra.efficiency", T_LOG, 1, 0,
                     -1, -1, "bandwidth-bound rows with ranks sharing a node"},
    [P_INTER_EFF] = {"inter.efficiency", "inter.efficiency", "", "inter.efficiency", T_LOG, 1, 0,
                     -1, -1, "bandwidth-bound multi-node rows"},
    [P_LAUNCH] = {"latency.launch", "collectives.base_latency (added to every entry)", "us",
                  "collectives.base_latency", T_LAUNCH, 1e6, 1, -1, -1,
                  "latency-bound (small) sizes"},
    [P_HOP_LL] = {"hop.ll", "collectives.hw_latency.<intra>.*.ll (scale)", "x",
                  "collectives.hw_latency", T_LOG, 1, 1, CS_PROTO_LL, -1, "rows run with LL"},
    [P_HOP_LL128] = {"hop.ll128", "collectives.hw_latency.<intra>.*.ll128 (scale)", "x",
                     "collectives.hw_latency", T_LOG, 1, 1, CS_PROTO_LL128, -1,
                     "rows run with LL128"},
    [P_HOP_SIMPLE] = {"hop.simple", "collectives.hw_latency.<intra>.*.simple (scale)", "x",
                      "collectives.hw_latency", T_LOG, 1, 1, CS_PROTO_SIMPLE, -1,
                      "rows run with Simple"},
    [P_INTRA_LAT] = {"intra.latency", "intra.latency", "us", "intra.latency", T_LOG, 1e6, 1, -1,
                     -1, "latency of rows with ranks sharing a node"},
    [P_HOP_NET] = {"hop.net", "collectives.hw_latency.net (scale)", "x", "collectives.hw_latency",
                   T_LOG, 1, 1, -1, -1, "latency of multi-node rows"},
    [P_BW_LL] = {"bw_factor.ring.ll", "collectives.bw_factor.ring.ll", "", "collectives.bw_factor",
                 T_BOUNDED, 1, 0, CS_PROTO_LL, CS_ALGO_RING, "rows run with ring/LL" OVERRIDE},
    [P_BW_LL128] = {"bw_factor.ring.ll128", "collectives.bw_factor.ring.ll128", "",
                    "collectives.bw_factor", T_BOUNDED, 1, 0, CS_PROTO_LL128, CS_ALGO_RING,
                    "rows run with ring/LL128" OVERRIDE},
    [P_BW_SIMPLE] = {"bw_factor.ring.simple", "collectives.bw_factor.ring.simple", "",
                     "collectives.bw_factor", T_BOUNDED, 1, 0, CS_PROTO_SIMPLE, CS_ALGO_RING,
                     "rows run with ring/Simple" OVERRIDE},
};

/* What every algorithm's efficiency shares; its row gives the names. */
static const cs__calib_pdef algo_eff = {NULL, NULL, "", "collectives.efficiency", T_BOUNDED, 1, 0,
                                        -1, -1, ""};

int cs__calib_nparams(void) { return P_ALGO_EFF + cs_algo_calib_count(); }

cs__calib_pdef cs__calib_param(int j)
{
    CS_ASSERT(j >= 0 && j < cs__calib_nparams());
    if (j < P_ALGO_EFF) return pdefs[j];
    cs_algo_id a = cs_algo_calib_at(j - P_ALGO_EFF);
    cs__calib_pdef pd = algo_eff;
    pd.name = cs_algo_calib_param(a);
    pd.yaml = cs_algo_calib_yaml(a);
    pd.algo = (int)a;
    snprintf(pd.what, sizeof pd.what, "rows run with %s", cs_algo_name(a));
    return pd;
}

/* The transform of parameter (or slot) k. */
static cs__calib_transform transform(int k) { return (k < P_ALGO_EFF ? &pdefs[k] : &algo_eff)->tr; }

int cs__calib_algo_eff_param(cs_algo_id a)
{
    for (int k = 0; k < cs_algo_calib_count(); k++)
        if (cs_algo_calib_at(k) == a) return P_ALGO_EFF + k;
    return -1;
}

/* The fixed parameter that prices (proto, algo) (-1: any), or -1. */
static int param_of(int proto, int algo)
{
    for (int j = 0; j < P_ALGO_EFF; j++)
        if (pdefs[j].proto == proto && pdefs[j].algo == algo) return j;
    return -1;
}

/* The ring bandwidth factor of protocol p (collectives.bw_factor.ring.p). */
static int bw_param(int p) { return param_of(p, CS_ALGO_RING); }
/* The intra-node hop scale of protocol p. */
static int hop_param(int p) { return param_of(p, -1); }

/* ---- coordinates ------------------------------------------------------------- */

/* Natural value (efficiency, seconds, scale, factor) of a parameter at
 * fitting coordinate x (0 = its start value v0):
 *   LOG      v0 e^x (positive);
 *   BOUNDED  logistic in (0, SCHEMA_MAX), the schema's range;
 *   LAUNCH   -F + (v0 + F) e^x when the base latencies the rows use have a
 *            floor F > 0 (the additive latency may remove them, never go
 *            below: a clamped entry would flatten the fit), else linear in
 *            units of 10 us. */
double cs__calib_to_value(int k, double v0, double x, double floor_s)
{
    switch (transform(k)) {
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

double cs__calib_to_coord(int k, double v0, double v, double floor_s)
{
    switch (transform(k)) {
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

/* ---- values and the cluster they give ----------------------------------------- */

void cs__calib_initial_values(const cs_cluster *c, cs__calib_vals *pv)
{
    memset(pv, 0, sizeof *pv);
    pv->v[P_INTRA_EFF] = c->intra.efficiency;
    pv->v[P_INTER_EFF] = c->inter.efficiency;
    pv->v[P_LAUNCH] = 0;
    pv->v[P_HOP_NET] = 1.0;
    pv->v[P_INTRA_LAT] = c->intra.latency_s;
    for (int p = 0; p < CS_PROTO_COUNT; p++) {
        double f = c->coll.proto_bw_factor[CS_ALGO_RING][p];
        pv->v[hop_param(p)] = 1.0;
        pv->use[bw_param(p)] = f > 0;
        pv->v[bw_param(p)] = f > 0 ? f : NAN; /* set from the data: cs__calib_exercised */
    }
    for (int j = P_ALGO_EFF; j < P_COUNT; j++) /* slots not in use have no value */
        pv->v[j] = j < cs__calib_nparams()
                       ? c->coll.algo_efficiency[cs_algo_calib_at(j - P_ALGO_EFF)]
                       : NAN;
}

void cs__calib_apply(const cs_cluster *base, const cs__calib_vals *pv, cs_cluster *out)
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
                base->coll.hw_latency_s[intra][a][p] * pv->v[hop_param(p)];
            out->coll.hw_latency_s[CS_HW_NET][a][p] =
                base->coll.hw_latency_s[CS_HW_NET][a][p] * pv->v[P_HOP_NET];
        }
    for (int p = 0; p < CS_PROTO_COUNT; p++)
        if (pv->use[bw_param(p)]) out->coll.proto_bw_factor[CS_ALGO_RING][p] = pv->v[bw_param(p)];
    for (int j = P_ALGO_EFF; j < cs__calib_nparams(); j++)
        out->coll.algo_efficiency[cs_algo_calib_at(j - P_ALGO_EFF)] = pv->v[j];
}

/* ---- (1) what the data exercises -------------------------------------------------- */

/* What the used rows run and where, at the start. */
typedef struct row_usage {
    int ppn2, multi, excluded_multi; /* rows with 2 ranks on a node; crossing nodes */
    int by_proto[CS_PROTO_COUNT], by_algo[CS_ALGO_COUNT], ring_proto[CS_PROTO_COUNT];
    int run0[CS_ALGO_COUNT][CS_PROTO_COUNT]; /* (algo, proto) the rows run */
    /* NCCL's ring factors met by the rows (LL: 1/4 or 1/3 by situation) */
    double fac_val[CS_PROTO_COUNT][4];
    int nfac[CS_PROTO_COUNT];
} row_usage;

static void count_usage(const cs_cluster *c, const cs_meas_set *m, const cs_calib_compare *cmp,
                        const cs_calib_result *res, row_usage *u)
{
    memset(u, 0, sizeof *u);
    for (size_t i = 0; i < m->n; i++) {
        int nodes = cmp->pred[i].nodes;
        if (!res->rows[i].used) {
            u->excluded_multi += nodes > 1;
            continue;
        }
        u->ppn2 += m->rows[i].ranks > nodes;
        u->multi += nodes > 1;
        cs_proto p = cmp->pred[i].proto;
        u->by_proto[p]++;
        u->by_algo[cmp->pred[i].algo]++;
        u->run0[cmp->pred[i].algo][p]++;
        if (cmp->pred[i].algo != CS_ALGO_RING) continue;
        u->ring_proto[p]++;
        cs_topology t;
        CS_ASSERT(cs__calib_place(c, m, i, &t, NULL) == 0);
        double fv = cs_collective_nccl_bw_factor(&t, m->rows[i].op, CS_ALGO_RING, p);
        int k = 0;
        while (k < u->nfac[p] && fabs(u->fac_val[p][k] - fv) > 1e-12) k++;
        if (k == u->nfac[p] && k < 4) u->fac_val[p][u->nfac[p]++] = fv;
    }
}

static void keep(cs__calib_run *st, int j, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void keep(cs__calib_run *st, int j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    st->eligible[j] = 0;
    vsnprintf(st->why[j], sizeof st->why[j], fmt, ap);
    va_end(ap);
}

/* The rules: a parameter the rows do not exercise is kept, with why. */
static void keep_unexercised(cs__calib_run *st, const cs_cluster *c, const row_usage *u)
{
    if (u->ppn2 < 2) keep(st, P_INTRA_EFF, "fewer than 2 usable rows have two ranks on one node");
    const char *nomulti =
        u->excluded_multi ? "the multi-node rows are excluded (see datasets), so no usable row "
                            "crosses the network"
        : u->multi == 1   ? "only one usable row crosses the network: fewer than 2 to fit it"
                          : "all usable rows are single-node: the network is never crossed";
    if (u->multi < 2 || c->inter.nics_per_node < 1) {
        keep(st, P_INTER_EFF, "%s", nomulti);
        keep(st, P_HOP_NET, "%s", nomulti);
    }
    for (int p = 0; p < CS_PROTO_COUNT; p++)
        if (u->by_proto[p] < 2)
            keep(st, hop_param(p), "fewer than 2 usable rows run %s (the sizes do not cover its "
                                   "regime, or it is disabled)", cs_proto_name((cs_proto)p));
    for (int p = 0; p < CS_PROTO_COUNT; p++)
        if (u->ring_proto[p] < 2)
            keep(st, bw_param(p), "fewer than 2 usable rows run ring with %s",
                 cs_proto_name((cs_proto)p));
        else if (!isfinite(st->fc.start.v[bw_param(p)]))
            keep(st, bw_param(p), "the rows running ring/%s have different NCCL factors (%.3g and "
                                  "%.3g: different ops or node counts) and one bw_factor would "
                                  "replace both", cs_proto_name((cs_proto)p), u->fac_val[p][0],
                 u->fac_val[p][1]);
    for (int j = P_ALGO_EFF; j < P_COUNT; j++)
        if (j >= cs__calib_nparams())
            keep(st, j, "not in use");
        else if (u->by_algo[cs_algo_calib_at(j - P_ALGO_EFF)] < 2)
            keep(st, j, "fewer than 2 usable rows run %s",
                 cs_algo_name(cs_algo_calib_at(j - P_ALGO_EFF)));
    if (!(c->intra.latency_s > 0))
        keep(st, P_INTRA_LAT, "the input's intra.latency is 0: NCCL's hwLat carries the per-hop "
                              "latency, scaled by hop.*");
}

void cs__calib_exercised(cs__calib_run *st, const cs_cluster *c, const cs_meas_set *m,
                         const cs_calib_compare *cmp, const cs_calib_result *res)
{
    row_usage u;
    count_usage(c, m, cmp, res, &u);
    /* The YAML override replaces NCCL's factor in every situation, so a
     * factor is fitted only from rows that share one NCCL value (LL: 1/4
     * for all_reduce and across nodes, 1/3 for single-node all_gather ...);
     * otherwise one number would have to stand for several. */
    for (int p = 0; p < CS_PROTO_COUNT; p++)
        if (!st->fc.start.use[bw_param(p)] && u.nfac[p] == 1)
            st->fc.start.v[bw_param(p)] = u.fac_val[p][0];
    for (int j = 0; j < P_COUNT; j++) {
        st->eligible[j] = 1;
        st->why[j][0] = 0;
    }
    keep_unexercised(st, c, &u);
    /* the launch latency may remove the base latencies the rows run with,
     * never more (see cs__calib_to_value) */
    double floor_s = INFINITY;
    for (int al = 0; al < CS_ALGO_COUNT; al++)
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            if (u.run0[al][p]) floor_s = fmin(floor_s, c->coll.base_latency_s[al][p]);
    st->fc.launch_floor_s = isfinite(floor_s) ? floor_s : 0;
    st->orig = st->fc.start;
}

int cs__calib_reexamine(cs__calib_run *st, const cs_cluster *c, const cs_meas_set *m,
                        const cs_calib_result *res)
{
    cs_cluster fit;
    cs_calib_compare cmp;
    cs_diag d;
    cs__calib_apply(c, &st->fc.start, &fit);
    if (cs_calib_compare_run(&fit, m, &cmp, &d)) return 0;
    row_usage u;
    count_usage(&fit, m, &cmp, res, &u);
    cs_calib_compare_free(&cmp);
    int again = 0;
    for (int p = 0; p < CS_PROTO_COUNT; p++) {
        int j = hop_param(p);
        if (!st->eligible[j] && u.by_proto[p] >= 2 && strstr(st->why[j], "fewer than 2")) {
            st->eligible[j] = 1;
            st->why[j][0] = 0;
            again++;
        }
    }
    for (int j = P_ALGO_EFF; j < cs__calib_nparams(); j++)
        if (!st->eligible[j] && u.by_algo[cs_algo_calib_at(j - P_ALGO_EFF)] >= 2 &&
            strstr(st->why[j], "fewer than 2")) {
            st->eligible[j] = 1;
            st->why[j][0] = 0;
            again++;
        }
    return again;
}

/* ---- (2) sensitivity and (3) collinearity ------------------------------------------ */

/* Largest |J| and the squared norm of column j. */
static void column_size(const cs__calib_run *st, int j, double *vmax, double *norm2)
{
    *vmax = *norm2 = 0;
    for (size_t k = 0; k < st->n; k++) {
        double v = st->J[k * P_COUNT + (size_t)j];
        *vmax = fmax(*vmax, fabs(v));
        *norm2 += v * v;
    }
}

/* Column j less its projection on the accepted columns (q), into r;
 * returns its squared norm. */
static double orthogonal_part(cs__calib_run *st, int j)
{
    size_t n = st->n;
    for (size_t k = 0; k < n; k++) st->r[k] = st->J[k * P_COUNT + (size_t)j];
    for (int a = 0; a < st->np; a++) {
        double dot = 0;
        for (size_t k = 0; k < n; k++) dot += st->q[k * P_COUNT + (size_t)a] * st->r[k];
        for (size_t k = 0; k < n; k++) st->r[k] -= dot * st->q[k * P_COUNT + (size_t)a];
    }
    double rn = 0;
    for (size_t k = 0; k < n; k++) rn += st->r[k] * st->r[k];
    return rn;
}

/* The accepted parameter whose column is most parallel to column j. */
static int most_alike(const cs__calib_run *st, int j, double norm2)
{
    int best = -1;
    double bc = -1;
    for (int a = 0; a < st->np; a++) {
        double dot = 0, na = 0;
        for (size_t k = 0; k < st->n; k++) {
            double u = st->J[k * P_COUNT + (size_t)st->which[a]];
            dot += u * st->J[k * P_COUNT + (size_t)j];
            na += u * u;
        }
        double cc = fabs(dot) / sqrt(na * norm2);
        if (cc > bc) bc = cc, best = st->which[a];
    }
    return best;
}

/* Accepts parameter j if it passes (2) and (3); else says why in sel. */
static void consider(cs__calib_run *st, int j)
{
    double vmax, norm2;
    column_size(st, j, &vmax, &norm2);
    if (vmax < 1e-3) {
        snprintf(st->sel[j], sizeof st->sel[j],
                 "no usable row's prediction depends on it (at most %.2g%% per %s step)",
                 100 * vmax, transform(j) == T_LAUNCH ? "10 us" : "unit");
        return;
    }
    double rn = orthogonal_part(st, j);
    if (rn < COLLINEAR * COLLINEAR * norm2) {
        int best = most_alike(st, j, norm2);
        snprintf(st->sel[j], sizeof st->sel[j],
                 "indistinguishable on this data from %s%s (its effect is a combination "
                 "of parameters already fitted)",
                 best >= 0 ? cs__calib_param(best).name : "the parameters fitted before it",
                 st->np > 1 ? " and the others" : "");
        return;
    }
    rn = sqrt(rn);
    for (size_t k = 0; k < st->n; k++) st->q[k * P_COUNT + (size_t)st->np] = st->r[k] / rn;
    st->which[st->np++] = j;
}

void cs__calib_choose(cs__calib_run *st)
{
    cs__calib_jacobian(&st->fc, &st->fc.start, st->J);
    st->np = 0;
    for (int j = 0; j < P_COUNT; j++) {
        st->sel[j][0] = 0;
        if (st->eligible[j] && !st->frozen[j]) consider(st, j);
    }
    while (st->np > 0 && (size_t)st->np >= st->n) { /* keep at least one degree of freedom */
        int j = st->which[--st->np];
        snprintf(st->sel[j], sizeof st->sel[j], "not enough usable rows (%zu) to fit it as well",
                 st->n);
    }
    /* parameters not chosen this round go back to their inputs */
    for (int j = 0; j < P_COUNT; j++) {
        int chosen = st->frozen[j];
        for (int a = 0; a < st->np; a++) chosen |= st->which[a] == j;
        if (!chosen) {
            st->fc.start.v[j] = st->orig.v[j];
            st->fc.start.use[j] = st->orig.use[j];
        }
    }
    st->fc.which = st->which;
    st->fc.np = st->np;
}
