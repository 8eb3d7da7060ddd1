/* SPDX-License-Identifier: MIT */
/*
 * calib_result.c - the result of a calibration: fitted values with 95%
 * intervals, parameters held at a limit, kept ones with their reasons,
 * the rows' residuals before and after.
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
    res->nparams = cs__calib_nparams();
    for (int j = 0; j < res->nparams; j++) {
        cs__calib_pdef pd = cs__calib_param(j);
        cs_calib_param *p = &res->params[j];
        snprintf(p->name, sizeof p->name, "%s", pd.name);
        snprintf(p->yaml, sizeof p->yaml, "%s", pd.yaml);
        snprintf(p->unit, sizeof p->unit, "%s", pd.unit);
        p->initial = st->orig.v[j] * pd.scale;
        p->value = fitted->v[j] * pd.scale;
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
        cs__calib_pdef pd = cs__calib_param(j);
        cs_calib_param *p = &res->params[j];
        p->fitted = 1;
        double h = tq * sqrt(s2 * st->covar[a * st->np + a]), xa = st->x[a] - X_OFFSET;
        double v0 = st->fc.start.v[j], fl = st->fc.launch_floor_s;
        p->ci_lo = cs__calib_to_value(j, v0, xa - h, fl) * pd.scale;
        p->ci_hi = cs__calib_to_value(j, v0, xa + h, fl) * pd.scale;
        snprintf(p->why, sizeof p->why, "from %s", pd.what);
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

int cs__calib_verdict(int fitted, double before_pct, double after_pct, const char *nothing,
                      const char *rms, const char *what, char *msg, size_t len)
{
    char buf[320];
    int q = 0;
    if (!fitted) {
        q = 2;
        snprintf(buf, sizeof buf, "%s", nothing);
    } else if (!(after_pct < CS_CALIB_RMS_UNUSABLE_PCT)) { /* NaN and inf too */
        q = 2;
        snprintf(buf, sizeof buf, "%s of %.2f%% (was %.2f%%): predictions are off by as much as "
                 "what they predict; nothing usable was fitted", rms, after_pct, before_pct);
    } else if (!(after_pct < CS_CALIB_RMS_POOR_PCT)) {
        q = 1;
        snprintf(buf, sizeof buf, "%s of %.2f%% (was %.2f%%): the model does not describe %s "
                 "well; see the residuals before trusting the calibrated cluster", rms, after_pct,
                 before_pct, what);
    } else
        buf[0] = '\0';
    if (msg && len) snprintf(msg, len, "%s", buf);
    return q;
}

int cs_calib_quality(const cs_calib_result *r, char *msg, size_t len)
{
    int fitted = 0;
    for (int j = 0; j < r->nparams; j++) fitted += r->params[j].fitted;
    return cs__calib_verdict(fitted, r->rms_before_pct, r->rms_after_pct,
                             "the measurements determine no parameter (every one was kept: the "
                             "report says why); nothing usable was fitted",
                             "the fit leaves a weighted RMS relative error", "these measurements",
                             msg, len);
}
