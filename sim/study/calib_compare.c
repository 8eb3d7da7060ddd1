/* SPDX-License-Identifier: MIT */
/*
 * calib_compare.c - predictions of measured rows and their scores.
 *
 * Every row is priced by the closed form on the cluster, with its ranks
 * placed on the nodes the input names (else filling the cluster's nodes in
 * order), the algorithm / protocol the run forced, else chosen as NCCL's
 * tuner would (cs_collective_choose). The bound of a row is the same
 * choice on the cluster at line rate (every efficiency 1, no latency):
 * busbw above the best bound of its (op, ranks, nodes) group means
 * something collsim does not model ran (CollNet / SHARP), or the
 * cluster's line rate is too low. Scores are absolute percentage errors:
 * median, nearest-rank p90, max, for sizes >= 1 MiB and for all.
 * Cost: O(rows) predictions, O(rows^2) for the group bounds (a dataset is
 * a few dozen rows).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/calib_phases.h"

#define MIB 1048576.0

/* ---- prediction ------------------------------------------------------------ */

int cs__calib_place(const cs_cluster *c, const cs_meas_set *m, size_t i, cs_topology *t,
                    cs_diag *d)
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

/* busbw of row r's best choice on the line-rate cluster lr (NaN if none). */
static double bound_busbw(const cs_cluster *lr, const cs_meas_row *r, const cs_topology *t)
{
    cs_topology tl;
    CS_ASSERT(cs_topology_build(lr, t->ranks, t->trays, &tl, NULL) == 0);
    cs_algo_id la;
    cs_proto lp;
    double lt;
    if (cs_collective_choose(&tl, r->op, r->size_bytes, CS_CHOICE_AUTO, CS_CHOICE_AUTO, &la, &lp,
                             NULL) == 0 &&
        cs_collective_time(&tl, r->op, r->size_bytes, la, lp, &lt) == 0 && lt > 0)
        return r->size_bytes / lt * cs_op_busbw_factor(r->op, r->ranks) / 1e9;
    return NAN;
}

int cs__calib_predict_on(const cs_cluster *c, const cs_cluster *lr, const cs_meas_set *m, size_t i,
                         cs_calib_pred *out, cs_diag *d)
{
    const cs_meas_row *r = &m->rows[i];
    memset(out, 0, sizeof *out);
    out->time_us = NAN;
    out->bound_busbw_GBps = NAN;
    cs_topology t;
    int rc = cs__calib_place(c, m, i, &t, d);
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
    if (lr) out->bound_busbw_GBps = bound_busbw(lr, r, &t);
    return 0;
}

int cs_calib_predict(const cs_cluster *c, const cs_meas_set *m, size_t i, cs_calib_pred *out,
                     cs_diag *d)
{
    cs_cluster lr;
    line_rate(c, &lr);
    return cs__calib_predict_on(c, &lr, m, i, out, d);
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

double cs__calib_median_abs(const double *v, size_t n)
{
    double *a = cs_xmalloc((n ? n : 1) * sizeof *a);
    for (size_t i = 0; i < n; i++) a[i] = fabs(v[i]);
    qsort(a, n, sizeof *a, cmp_double);
    double m = n ? (n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2])) : 0;
    free(a);
    return m;
}

/* ---- comparison -------------------------------------------------------------- */

/* Row i's group = rows of one (op, ranks, nodes): its best measured busbw
 * and the best ring/tree/NVLS reach at line rate over its sizes (at mid
 * sizes NCCL's tree correction lowers the model's bound, so rows are not
 * compared one by one). */
static void group_busbw(const cs_meas_set *m, const cs_calib_compare *cmp, size_t i, double *gbw,
                        double *gbound)
{
    const cs_meas_row *r = &m->rows[i];
    *gbw = *gbound = 0;
    for (size_t j = 0; j < m->n; j++) {
        const cs_meas_row *q = &m->rows[j];
        if (q->dataset != r->dataset || q->op != r->op || q->ranks != r->ranks ||
            cmp->pred[j].nodes != cmp->pred[i].nodes || q->algo == CS_MEAS_ALGO_OTHER)
            continue;
        *gbw = fmax(*gbw, cs_meas_busbw_GBps(q, q->time_us));
        if (isfinite(cmp->pred[j].bound_busbw_GBps))
            *gbound = fmax(*gbound, cmp->pred[j].bound_busbw_GBps);
    }
}

/* Row i against its group's bound, into the dataset's score s. */
static void bound_check(const cs_cluster *c, const cs_meas_set *m, const cs_calib_compare *cmp,
                        size_t i, cs_calib_ds_score *s)
{
    double gbw, gbound;
    group_busbw(m, cmp, i, &gbw, &gbound);
    /* NVLS (one node) and NVLSTree (2+ nodes) are modelled (and in the
     * bound) unless the YAML turns them off on hardware that has them;
     * CollNet / SHARP need a network. Elsewhere busbw above the bound means the cluster's
     * line rate is too low (noted, not excluded). */
    int flag_off = 0; /* an algorithm the hardware has, turned off (NVLS) */
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        flag_off |= cs_algo_hw_allows((cs_algo_id)a, c) && !c->coll.algo_enabled[a];
    int other = flag_off || cmp->pred[i].nodes > 1;
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

/* The score of dataset k; big / all are scratch of m->n entries. */
static void score_dataset(const cs_cluster *c, const cs_meas_set *m, cs_calib_compare *cmp,
                          size_t k, double *big, double *all)
{
    cs_calib_ds_score *s = &cmp->ds[k];
    int nb = 0, na = 0;
    s->max_busbw_GBps = s->bound_busbw_GBps = NAN;
    for (size_t i = 0; i < m->n; i++) {
        const cs_meas_row *r = &m->rows[i];
        if (r->dataset != (int)k) continue;
        s->rows++;
        if (r->algo != CS_MEAS_ALGO_OTHER) bound_check(c, m, cmp, i, s);
        if (cmp->pred[i].status) {
            s->unmodelled++;
            continue;
        }
        double e = fabs(cmp->err_pct[i]);
        all[na++] = e;
        if (r->size_bytes >= MIB) big[nb++] = e;
    }
    cs_calib_stats_of(big, nb, &s->big);
    cs_calib_stats_of(all, na, &s->all);
}

int cs_calib_compare_run(const cs_cluster *c, const cs_meas_set *m, cs_calib_compare *out,
                         cs_diag *d)
{
    memset(out, 0, sizeof *out);
    out->nrows = m->n;
    out->ndatasets = m->ndatasets;
    size_t n1 = m->n ? m->n : 1;
    out->pred = cs_xcalloc(n1, sizeof *out->pred);
    out->err_pct = cs_xcalloc(n1, sizeof *out->err_pct);
    out->ds = cs_xcalloc(m->ndatasets ? m->ndatasets : 1, sizeof *out->ds);
    cs_cluster lr;
    line_rate(c, &lr);
    for (size_t i = 0; i < m->n; i++) {
        int rc = cs__calib_predict_on(c, &lr, m, i, &out->pred[i], d);
        if (rc) {
            cs_calib_compare_free(out);
            return rc;
        }
        const cs_calib_pred *p = &out->pred[i];
        double meas = m->rows[i].time_us;
        out->err_pct[i] = p->status ? NAN : 100.0 * (p->time_us - meas) / meas;
    }
    double *big = cs_xmalloc(n1 * sizeof *big), *all = cs_xmalloc(n1 * sizeof *all);
    for (size_t k = 0; k < m->ndatasets; k++) score_dataset(c, m, out, k, big, all);
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
