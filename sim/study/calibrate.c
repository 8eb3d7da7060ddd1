/* SPDX-License-Identifier: MIT */
/*
 * calibrate.c - the least-squares fit of a cluster's cost-model parameters
 * to measurements: the driver of its phases (calib_phases.h).
 *
 * 1. The rows: every measured row is predicted on the input cluster
 *    (calib_compare.c); rows collsim does not model, and datasets whose
 *    busbw exceeds what ring, tree, NVLS or NVLSTree reach at line rate
 *    (CollNet / SHARP ran), are not fitted. The fit moves the tuner's
 *    choices, so step 2 is judged once more at the fitted values and the
 *    rounds run again if that adds a parameter (cs__calib_reexamine).
 * 2. The parameters the used rows exercise (calib_params.c), in priority
 *    order; the rest keep the --cluster value and the output says why.
 * 3. Rounds, until nothing changes (twice: without and with second
 *    chances, the lower weighted RMS kept): choose among the exercised parameters
 *    at the current point (sensitivity, Gram-Schmidt collinearity screen:
 *    calib_params.c); fit them (GSL trust region, Huber reweighting:
 *    calib_fit.c); check each fitted one again at the solution (priced
 *    out or an interval over x10: back to its input, lowest priority
 *    first; a latency at its floor: held there; a bandwidth term past
 *    NCCL's cap: dropped), warm-starting the rest (calib_recheck.c).
 * 4. The result: values with 95% intervals, reasons, residuals
 *    (calib_result.c).
 * Departure: the GSL error handler is switched off during the fit and
 * restored after (process-global state, so the fit is not thread-safe).
 */
#include "study/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "study/calib_phases.h"

/* Which rows enter the fit: every modelled row of a dataset within the
 * line-rate bound. Fills res->ds_why and res->rows, st->rows / n; cmp is
 * the comparison on the input (the caller frees it on success). */
static int select_rows(const cs_cluster *c, const cs_meas_set *m, cs_calib_result *res,
                       cs__calib_run *st, cs_calib_compare *cmp, cs_diag *d)
{
    int rc = cs_calib_compare_run(c, m, cmp, d);
    if (rc) return rc;
    for (size_t k = 0; k < m->ndatasets; k++)
        if (cmp->ds[k].beyond_bound)
            snprintf(res->ds_why[k], sizeof res->ds_why[k],
                     "busbw %.0f GB/s exceeds what ring, tree, NVLS or NVLSTree reach at line "
                     "rate here (%.0f GB/s): CollNet / SHARP or NVLS / NVLSTree (if off) ran",
                     cmp->ds[k].max_busbw_GBps, cmp->ds[k].bound_busbw_GBps);
    st->n = 0;
    for (size_t i = 0; i < m->n; i++) {
        cs_calib_rowfit *rf = &res->rows[i];
        rf->before_us = cmp->pred[i].time_us;
        rf->after_us = NAN;
        rf->resid_pct = NAN;
        if (cmp->pred[i].status) snprintf(rf->why, sizeof rf->why, "%s", cmp->pred[i].why);
        else if (res->ds_why[m->rows[i].dataset][0])
            snprintf(rf->why, sizeof rf->why, "dataset excluded (NVLS / SHARP)");
        else {
            rf->used = 1;
            rf->weight = 1.0;
            st->rows[st->n++] = i;
        }
    }
    if (st->n == 0) {
        cs_calib_compare_free(cmp);
        return cs_diag_set(d, CS_ECONFIG, NULL, 0, 0,
                           "no measured row can be fitted (every row ran an algorithm collsim "
                           "does not model, or exceeds what ring/tree can reach)");
    }
    res->used_rows = (int)st->n;
    return 0;
}

static cs_calib_result *result_new(const cs_cluster *c, const cs_meas_set *m)
{
    cs_calib_result *res = cs_xcalloc(1, sizeof *res);
    res->nrows = m->n;
    res->ndatasets = m->ndatasets;
    res->rows = cs_xcalloc(m->n ? m->n : 1, sizeof *res->rows);
    res->ds_why = cs_xcalloc(m->ndatasets ? m->ndatasets : 1, sizeof *res->ds_why);
    res->input = res->cluster = *c;
    return res;
}

static void run_alloc(cs__calib_run *st)
{
    size_t n = st->n;
    st->J = cs_xmalloc(n * P_COUNT * sizeof *st->J);
    st->q = cs_xmalloc(n * P_COUNT * sizeof *st->q);
    st->f = cs_xmalloc(n * sizeof *st->f);
    st->w = cs_xmalloc(n * sizeof *st->w);
    st->r = cs_xmalloc(n * sizeof *st->r);
    st->covar = cs_xmalloc(P_COUNT * P_COUNT * sizeof *st->covar);
}

static void run_free(cs__calib_run *st)
{
    free(st->J);
    free(st->q);
    free(st->f);
    free(st->w);
    free(st->r);
    free(st->covar);
    free(st->rows);
}

/* Weighted RMS relative error of the used rows at the start. */
static double rms_at_start(cs__calib_run *st)
{
    cs__calib_residuals(&st->fc, &st->fc.start, st->f);
    double ss0 = 0;
    for (size_t k = 0; k < st->n; k++) ss0 += st->f[k] * st->f[k];
    return 100 * sqrt(ss0 / (double)st->n);
}

/* The rounds of one pass, until nothing changes; iterations counted. */
static void rounds(cs__calib_run *st, int *iterations)
{
    st->status = GSL_SUCCESS;
    /* each round removes, freezes or restarts (once each) a parameter */
    for (int round = 0; round <= 2 * cs__calib_nparams(); round++) {
        cs__calib_choose(st);
        if (st->np == 0) break;
        cs__calib_fit_round(st, iterations);
        if (!cs__calib_recheck(st)) break;
    }
}

/* One pass: the rounds, then once more if the fit's own choices now run
 * a protocol or algorithm enough rows to fit its parameter that none ran
 * at the start (cs__calib_reexamine). */
static void fit_pass(cs__calib_run *st, const cs_cluster *c, const cs_meas_set *m,
                     const cs_calib_result *res, int *iterations)
{
    rounds(st, iterations);
    if (cs__calib_reexamine(st, c, m, res)) rounds(st, iterations);
}

/* The weighted RMS relative error a finished pass leaves (as reported). */
static double rms_after(cs__calib_run *st)
{
    cs__calib_vals pv;
    cs__calib_x_to_vals(&st->fc, st->x, &pv);
    cs__calib_residuals(&st->fc, &pv, st->f);
    double chi2 = 0, ssw = 0;
    for (size_t k = 0; k < st->n; k++) {
        double w = st->np == 0 ? 1.0 : st->w[k];
        chi2 += w * st->f[k] * st->f[k];
        ssw += w;
    }
    return sqrt(chi2 / ssw);
}

int cs_calibrate(const cs_cluster *c, const cs_meas_set *m, cs_calib_result **out, cs_diag *d)
{
    cs_calib_result *res = result_new(c, m);
    cs__calib_run st = {.rows = cs_xmalloc((m->n ? m->n : 1) * sizeof *st.rows)};
    cs_calib_compare cmp;
    int rc = select_rows(c, m, res, &st, &cmp, d);
    if (rc) {
        run_free(&st);
        cs_calib_result_free(res);
        return rc;
    }
    st.fc = (cs__calib_fit){.base = c, .m = m, .rows = st.rows, .n = st.n};
    cs__calib_initial_values(c, &st.fc.start);
    cs__calib_exercised(&st, c, m, &cmp, res);
    cs_calib_compare_free(&cmp);
    run_alloc(&st);
    res->rms_before_pct = rms_at_start(&st);
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    /* two passes from the same start, the better one kept: without and
     * with second chances (calib_recheck.c); the choice of protocol moves
     * with the parameters, so neither path is always the better */
    const cs__calib_run start = st;
    int iters[2] = {0, 0}, best = 0;
    double rms[2];
    for (int pass = 0; pass < 2; pass++) {
        st = start;
        st.second_chances = pass;
        fit_pass(&st, c, m, res, &iters[pass]);
        rms[pass] = rms_after(&st);
    }
    if (!(rms[1] < rms[0])) {
        st = start; /* again, to leave the first pass's state for the result */
        iters[0] = 0;
        fit_pass(&st, c, m, res, &iters[0]);
    } else
        best = 1;
    res->iterations = iters[best];
    gsl_set_error_handler(old);
    cs__calib_results(&st, m, res);
    run_free(&st);
    *out = res;
    return 0;
}
