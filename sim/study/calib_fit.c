/* SPDX-License-Identifier: MIT */
/*
 * calib_fit.c - one fit round: the chosen parameters fitted to the used
 * rows.
 *
 * GSL's trust-region nonlinear least squares (gsl_multifit_nlinear,
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
 * settle (3 rounds at most); a last fit at the settled weights gives the
 * covariance (J^T W J)^-1 (gsl_multifit_nlinear_covar).
 * The fit chooses algorithm / protocol with the parameters being fitted
 * (the written cluster then prices rows exactly as the fit did).
 * Departure: the caller switches GSL's error handler off around the fit
 * (process-global state, so the fit is not thread-safe).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "study/calib_phases.h"

void cs__calib_x_to_vals(const cs__calib_fit *fc, const double *y, cs__calib_vals *pv)
{
    *pv = fc->start;
    for (int j = 0; j < fc->np; j++) {
        int k = fc->which[j];
        pv->v[k] = cs__calib_to_value(k, fc->start.v[k], y[j] - X_OFFSET, fc->launch_floor_s);
        pv->use[k] = 1;
    }
}

void cs__calib_residuals(const cs__calib_fit *fc, const cs__calib_vals *pv, double *f)
{
    cs_cluster c;
    cs__calib_apply(fc->base, pv, &c);
    for (size_t k = 0; k < fc->n; k++) {
        cs_calib_pred p;
        size_t i = fc->rows[k];
        int rc = cs__calib_predict_on(&c, NULL, fc->m, i, &p, NULL);
        CS_ASSERT(rc == 0); /* placed before the fit */
        /* a trial step can make every time non-finite (an infinite
         * latency): no choice then, and the step is rejected (gsl_f) */
        f[k] = p.status ? INFINITY
                        : (p.time_us - fc->m->rows[i].time_us) / fc->m->rows[i].time_us;
    }
}

/* GSL's finite-difference Jacobian passes column views of J as f: both
 * vectors may have a stride, so they are copied through plain arrays. */
static int gsl_f(const gsl_vector *x, void *params, gsl_vector *f)
{
    const cs__calib_fit *fc = params;
    double y[P_COUNT];
    for (int j = 0; j < fc->np; j++) y[j] = gsl_vector_get(x, (size_t)j);
    cs__calib_vals pv;
    cs__calib_x_to_vals(fc, y, &pv);
    double *r = cs_xmalloc(fc->n * sizeof *r);
    cs__calib_residuals(fc, &pv, r);
    int status = GSL_SUCCESS;
    for (size_t k = 0; k < fc->n; k++) {
        if (!isfinite(r[k])) status = GSL_EDOM;
        gsl_vector_set(f, k, r[k]);
    }
    free(r);
    return status;
}

void cs__calib_jacobian(const cs__calib_fit *fc, const cs__calib_vals *at, double *J)
{
    double *fp = cs_xmalloc(fc->n * sizeof *fp), *fm = cs_xmalloc(fc->n * sizeof *fm);
    const double h = 1e-4;
    for (int j = 0; j < P_COUNT; j++) {
        cs__calib_vals a = *at, b = *at;
        if (j >= cs__calib_nparams() || !isfinite(at->v[j]) || !isfinite(fc->start.v[j]) ||
            (cs__calib_param(j).tr == T_LOG && !(fc->start.v[j] > 0))) {
            for (size_t k = 0; k < fc->n; k++) J[k * P_COUNT + (size_t)j] = 0;
            continue;
        }
        /* the coordinate of `at`, stepped by +-h */
        double x0 = cs__calib_to_coord(j, fc->start.v[j], at->v[j], fc->launch_floor_s);
        a.v[j] = cs__calib_to_value(j, fc->start.v[j], x0 + h, fc->launch_floor_s);
        b.v[j] = cs__calib_to_value(j, fc->start.v[j], x0 - h, fc->launch_floor_s);
        a.use[j] = b.use[j] = 1;
        cs__calib_residuals(fc, &a, fp);
        cs__calib_residuals(fc, &b, fm);
        for (size_t k = 0; k < fc->n; k++) J[k * P_COUNT + (size_t)j] = (fp[k] - fm[k]) / (2 * h);
    }
    free(fp);
    free(fm);
}

double cs__calib_t_quantile(int dof)
{
    return dof > 0 ? gsl_cdf_tdist_Pinv(0.975, dof) : NAN;
}

/* Runs the GSL driver from x (in/out) with weights w; returns its status.
 * covar (may be NULL): the np x np covariance at the solution. */
static int run_fit(cs__calib_fit *fc, double *x, const double *w, int *iters, double *covar)
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

/* Huber weights of the residuals f into w; returns the largest change. */
static double huber_weights(const double *f, double *w, size_t n)
{
    double sc = fmax(0.01, 1.4826 * cs__calib_median_abs(f, n));
    double change = 0;
    for (size_t k = 0; k < n; k++) {
        double nw = fabs(f[k]) > 2.0 * sc ? 2.0 * sc / fabs(f[k]) : 1.0;
        change = fmax(change, fabs(nw - w[k]));
        w[k] = nw;
    }
    return change;
}

void cs__calib_fit_round(cs__calib_run *st, int *iterations)
{
    for (int j = 0; j < st->np; j++) st->x[j] = X_OFFSET;
    for (size_t k = 0; k < st->n; k++) st->w[k] = 1.0;
    for (int rw = 0; rw < 3; rw++) {
        st->status = run_fit(&st->fc, st->x, st->w, iterations, NULL);
        cs__calib_vals pv;
        cs__calib_x_to_vals(&st->fc, st->x, &pv);
        cs__calib_residuals(&st->fc, &pv, st->f);
        if (huber_weights(st->f, st->w, st->n) < 0.01) break;
    }
    st->status = run_fit(&st->fc, st->x, st->w, iterations, st->covar);
}
