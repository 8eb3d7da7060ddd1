/* SPDX-License-Identifier: MIT */
/*
 * calib_train_compare.c - training runs predicted and scored on a cluster
 * (calib_train.h): each run is one simulated iteration through
 * cs_evaluate_config, the path of `collsim simulate`, so a run's
 * prediction is simulate's tokens/s of the same scenario over its GPUs;
 * per file, the absolute % errors' median / nearest-rank p90 / max
 * (cs_calib_stats_of, as the collective comparison). Cost: O(runs)
 * simulated iterations.
 */
#include "study/calib_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/compute.h"
#include "train/evaluate.h"

double cs_calib_train_slowdown(const cs_cluster *c)
{
    double s = c->gpu.compute.comm_compute_slowdown;
    if (s >= 0) return s;
    /* unset: the SM-share model under one collective (workload.c: share =
     * channels / sms, at most 1; iteration.c overlap_rates: compute at
     * 1 - min(0.5, share)) as the equivalent slowdown */
    double share = c->gpu.compute.sms > 0 ? fmin(1.0, c->coll.channels / c->gpu.compute.sms) : 0;
    return 1 / (1 - fmin(0.5, share)) - 1;
}

/* The compute model's time of a timed kernel: the roofline of compute.c
 * (emit) for one GEMM of e-byte elements, or a copy moving 2 x bytes;
 * reps of them; a replayed task overlapped by collectives for O = overlap_us
 * takes A + O s / (1 + s) (A: alone; s: cs_calib_train_slowdown), the
 * simulator's rate model (iteration.c overlap_rates: a kernel runs at
 * 1 / (1 + s) while a collective does, so A = (D - O) + O / (1 + s) of
 * its duration D). */
double cs_calib_train_kernel_us(const cs_cluster *c, const cs_kmeas_row *k)
{
    double bytes = k->gemm ? cs_dtype_size(k->dtype) * (k->m * k->k + k->k * k->n + k->m * k->n)
                           : 2 * k->bytes;
    double t = bytes / (c->gpu.hbm_Bps * cs_compute_hbm_efficiency(c, bytes));
    if (k->gemm)
        t = fmax(t, 2 * k->m * k->n * k->k /
                        (cs_compute_peak_flops(c, k->dtype) *
                         cs_compute_gemm_efficiency(c, k->m, k->n, k->k, 1)));
    double alone_us = 1e6 * fmax(t, c->gpu.compute.kernel_floor_s) * (k->reps > 1 ? k->reps : 1);
    if (!(k->overlap_us > 0)) return alone_us;
    double s = cs_calib_train_slowdown(c);
    return alone_us + k->overlap_us * s / (1 + s);
}

int cs_calib_train_predict(const cs_cluster *c, const cs_trun_set *s, size_t i,
                           double *tps_per_gpu, double *mfu_pct, cs_diag *d)
{
    const cs_trun_row *r = &s->rows[i];
    cs_topology topo;
    cs_diag td;
    cs_diag_clear(&td);
    int rc = cs_topology_build(c, r->gpus, 0, &topo, &td);
    cs_evaluate_opts o = {.simulate = 1, .unnamed = 1};
    cs_evaluation ev;
    if (!rc) rc = cs_evaluate_config(&r->model, &r->training, &topo, &o, &ev, &td);
    if (rc)
        return cs_diag_set(d, CS_ECONFIG, s->files[r->file], r->line, 1,
                           "this run (%s, %d GPUs) cannot be simulated on cluster '%s': %s",
                           r->model.name, r->gpus, c->name, td.message);
    *tps_per_gpu = ev.iteration.tokens_per_s / r->gpus;
    if (mfu_pct) *mfu_pct = 100.0 * ev.iteration.mfu;
    cs_evaluate_free(&ev);
    return 0;
}

int cs_calib_train_compare_run(const cs_cluster *c, const cs_trun_set *s,
                               cs_calib_train_compare *out, cs_diag *d)
{
    memset(out, 0, sizeof *out);
    out->n = s->n;
    out->nfiles = s->nfiles;
    size_t n1 = s->n ? s->n : 1;
    out->pred_tps = cs_xcalloc(n1, sizeof *out->pred_tps);
    out->pred_mfu_pct = cs_xcalloc(n1, sizeof *out->pred_mfu_pct);
    out->err_pct = cs_xcalloc(n1, sizeof *out->err_pct);
    out->file = cs_xcalloc(s->nfiles ? s->nfiles : 1, sizeof *out->file);
    for (size_t i = 0; i < s->n; i++) {
        int rc = cs_calib_train_predict(c, s, i, &out->pred_tps[i], &out->pred_mfu_pct[i], d);
        if (rc) {
            cs_calib_train_compare_free(out);
            return rc;
        }
        double meas = s->rows[i].measured_tps_per_gpu;
        out->err_pct[i] = 100.0 * (out->pred_tps[i] - meas) / meas;
    }
    out->nk = s->nk;
    out->pred_kernel_us = cs_xcalloc(s->nk ? s->nk : 1, sizeof *out->pred_kernel_us);
    out->kernel_err_pct = cs_xcalloc(s->nk ? s->nk : 1, sizeof *out->kernel_err_pct);
    for (size_t q = 0; q < s->nk; q++) {
        out->pred_kernel_us[q] = cs_calib_train_kernel_us(c, &s->kernels[q]);
        out->kernel_err_pct[q] = 100.0 * (out->pred_kernel_us[q] - s->kernels[q].time_us) /
                                 s->kernels[q].time_us;
    }
    double *abs_err = cs_xmalloc((s->n + s->nk + 1) * sizeof *abs_err);
    for (size_t f = 0; f < s->nfiles; f++) {
        int k = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->rows[i].file == (int)f) abs_err[k++] = fabs(out->err_pct[i]);
        for (size_t q = 0; q < s->nk; q++)
            if (s->kernels[q].file == (int)f) abs_err[k++] = fabs(out->kernel_err_pct[q]);
        cs_calib_stats_of(abs_err, k, &out->file[f]);
    }
    free(abs_err);
    return 0;
}

void cs_calib_train_compare_free(cs_calib_train_compare *cmp)
{
    free(cmp->pred_tps);
    free(cmp->pred_mfu_pct);
    free(cmp->err_pct);
    free(cmp->file);
    free(cmp->pred_kernel_us);
    free(cmp->kernel_err_pct);
    memset(cmp, 0, sizeof *cmp);
}

