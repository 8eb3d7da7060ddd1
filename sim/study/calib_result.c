/* SPDX-License-Identifier: MIT */
/*
 * calib_result.c - the result of a calibration: fitted values with 95%
 * intervals, parameters held at a limit, kept ones with their reasons,
 * the rows' residuals before and after; and the calibrated cluster as
 * YAML.
 *
 * Confidence intervals: 95%, from the covariance (J^T W J)^-1 at the
 * solution scaled by the residual variance chi^2 / (n - p), with Student's
 * t quantile; mapped through the parameter's transform (so log-space
 * intervals are asymmetric).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "config/cluster_yaml.h"
#include "study/calib_phases.h"

/* The fit's summary: status line, weighted RMS after, degrees of freedom;
 * the fitted cluster and every used row's weight and residual. Returns
 * the weighted chi^2. */
static double summary(cs__calib_run *st, const cs_meas_set *m, const cs__calib_vals *fitted,
                    cs_calib_result *res)
{
    int nfrozen = 0;
    for (int j = 0; j < P_COUNT; j++) nfrozen += st->frozen[j];
    res->converged = st->np == 0 || st->status == GSL_SUCCESS;
    snprintf(res->status, sizeof res->status, "%s",
             st->np == 0 ? (nfrozen ? "converged" : "nothing to fit")
                         : st->status == GSL_SUCCESS ? "converged" : gsl_strerror(st->status));
    if (st->np == 0)
        for (size_t k = 0; k < st->n; k++) st->w[k] = 1.0;
    cs__calib_residuals(&st->fc, fitted, st->f);
    double chi2 = 0, ssw = 0;
    for (size_t k = 0; k < st->n; k++) {
        chi2 += st->w[k] * st->f[k] * st->f[k];
        ssw += st->w[k];
        res->downweighted += st->w[k] < 0.999;
    }
    res->rms_after_pct = 100 * sqrt(chi2 / ssw);
    res->dof = (int)st->n - st->np;
    cs__calib_apply(st->fc.base, fitted, &res->cluster);
    for (size_t k = 0; k < st->n; k++) {
        cs_calib_rowfit *rf = &res->rows[st->rows[k]];
        rf->weight = st->w[k];
        rf->after_us = m->rows[st->rows[k]].time_us * (1 + st->f[k]);
        rf->resid_pct = 100 * st->f[k];
    }
    return chi2;
}

/* Every parameter: value, input, and why it was kept or held. */
static void param_rows(const cs__calib_run *st, const cs__calib_vals *fitted,
                       cs_calib_result *res)
{
    res->nparams = P_COUNT;
    for (int j = 0; j < P_COUNT; j++) {
        const cs__calib_pdef *pd = &cs__calib_pdefs[j];
        cs_calib_param *p = &res->params[j];
        snprintf(p->name, sizeof p->name, "%s", pd->name);
        snprintf(p->yaml, sizeof p->yaml, "%s", pd->yaml);
        snprintf(p->unit, sizeof p->unit, "%s", pd->unit);
        p->initial = st->orig.v[j] * pd->scale;
        p->value = fitted->v[j] * pd->scale;
        p->ci_lo = p->ci_hi = NAN;
        p->fitted = st->frozen[j];
        snprintf(p->why, sizeof p->why, "%.199s",
                 st->why[j][0] || st->frozen[j] ? st->why[j] : st->sel[j]);
    }
}

/* The fitted ones: intervals in fitting coordinates, mapped through the
 * transform, and what determined them. */
static void intervals(const cs__calib_run *st, double chi2, cs_calib_result *res)
{
    double s2 = res->dof > 0 ? chi2 / res->dof : NAN, tq = cs__calib_t_quantile(res->dof);
    for (int a = 0; a < st->np; a++) {
        int j = st->which[a];
        const cs__calib_pdef *pd = &cs__calib_pdefs[j];
        cs_calib_param *p = &res->params[j];
        p->fitted = 1;
        double h = tq * sqrt(s2 * st->covar[a * st->np + a]), xa = st->x[a] - X_OFFSET;
        double v0 = st->fc.start.v[j], fl = st->fc.launch_floor_s;
        p->ci_lo = cs__calib_to_value(j, v0, xa - h, fl) * pd->scale;
        p->ci_hi = cs__calib_to_value(j, v0, xa + h, fl) * pd->scale;
        snprintf(p->why, sizeof p->why, "from %s", pd->what);
    }
}

void cs__calib_results(cs__calib_run *st, const cs_meas_set *m, cs_calib_result *res)
{
    cs__calib_vals fitted;
    cs__calib_x_to_vals(&st->fc, st->x, &fitted);
    double chi2 = summary(st, m, &fitted, res);
    param_rows(st, &fitted, res);
    intervals(st, chi2, res);
}

void cs_calib_result_free(cs_calib_result *r)
{
    if (!r) return;
    free(r->rows);
    free(r->ds_why);
    free(r);
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
    cs_buf_printf(b, "\n  ll128: %s\n  nvls: %s\n  chunk: {", c->coll.ll128_enabled ? "true" : "false",
                  c->coll.nvls_enabled ? "true" : "false");
    for (int p = 0; p < CS_PROTO_COUNT; p++)
        cs_buf_printf(b, "%s%s: %.0f", p ? ", " : "", cs_proto_name((cs_proto)p),
                      c->coll.chunk_bytes[p]);
    cs_buf_printf(b, "}\n");
    /* latencies: only entries that differ from NCCL's defaults */
    int any = 0;
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            any |= differs(c->coll.base_latency_s[a][p],
                           cs_ncclmodel_base_latency_s((cs_algo_id)a, (cs_proto)p));
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
                               cs_ncclmodel_hw_latency_s((cs_hw)h, (cs_algo_id)a, (cs_proto)p));
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
    cs_buf_printf(b, "  efficiency: {ring: %.9g, tree: %.9g, nvls: %.9g}%s\n",
                  c->coll.algo_efficiency[CS_ALGO_RING], c->coll.algo_efficiency[CS_ALGO_TREE],
                  c->coll.algo_efficiency[CS_ALGO_NVLS],
                  fitted && (fitted[P_RING_EFF] || fitted[P_TREE_EFF]) ? "   # fitted" : "");
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
    cs_config_write_cluster(b, c, NULL);
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
