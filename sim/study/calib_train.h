/* SPDX-License-Identifier: MIT */
/*
 * calib_train.h - measured training runs (training_runs.h) predicted on a
 * cluster, scored, and the fit of the cluster's compute model
 * (gpu.compute, train/compute.h) to them.
 *
 * Prediction: each row is one simulated iteration (cs_evaluate_config,
 * the path of `collsim simulate`) of its model and training on the
 * cluster's first `gpus` ranks; tokens/s per GPU = the iteration's
 * tokens/s / gpus. Error = (predicted - measured) / measured x 100.
 *
 * The fit: GSL nonlinear least squares on log(predicted / measured) of
 * every row, over the gpu.compute parameters the rows determine, with the
 * identifiability rules of the collective fit (calib_params.c): a
 * parameter the rows do not exercise, on which no prediction depends, or
 * whose effect is a combination of those fitted before it keeps its input
 * value and the result says why; calib_train.c lists the parameters and
 * their rules.
 */
#ifndef CS_CALIB_TRAIN_H
#define CS_CALIB_TRAIN_H

#include <stddef.h>

#include "coll/cluster.h"
#include "study/calibrate.h"
#include "study/training_runs.h"

/* ---- predictions and scores ------------------------------------------------ */

/* Row i of s on c: tokens/s per GPU and MFU (%). CS_ECONFIG naming the
 * row's file:line when it does not fit the cluster or does not simulate. */
int cs_calib_train_predict(const cs_cluster *c, const cs_trun_set *s, size_t i,
                           double *tps_per_gpu, double *mfu_pct, cs_diag *d);

/* The compute model's time (us) of a timed kernel on c: the roofline of
 * compute.c for one GEMM of its dtype's elements (peak, GEMM and HBM
 * efficiencies, kernel floor), or a copy moving 2 x bytes; k->reps of
 * them, plus, for a replayed task that collectives overlapped for
 * overlap_us, overlap_us x s / (1 + s) with s cs_calib_train_slowdown
 * (calib_train_compare.c derives it from the simulator's rates). */
double cs_calib_train_kernel_us(const cs_cluster *c, const cs_kmeas_row *k);
/* The overlap slowdown c's compute runs at beside one collective: its
 * gpu.compute.comm_compute_slowdown, or unset (< 0) the SM-share model's
 * equivalent (0 on a machine without SMs). */
double cs_calib_train_slowdown(const cs_cluster *c);

typedef struct cs_calib_train_compare {
    size_t n, nfiles;
    double *pred_tps;       /* per row: predicted tokens/s per GPU */
    double *pred_mfu_pct;   /* per row */
    double *err_pct;        /* per row: signed (pred - meas) / meas x 100 */
    size_t nk;
    double *pred_kernel_us; /* per kernel timing: the compute model's time */
    double *kernel_err_pct; /* per kernel timing: signed (pred - meas) / meas x 100 */
    cs_calib_stats *file;   /* per file: absolute error (of tokens/s or kernel time),
                             * median / p90 / max */
} cs_calib_train_compare;

/* Predicts and scores every row; caller frees with
 * cs_calib_train_compare_free. Returns 0 or CS_ECONFIG. */
int cs_calib_train_compare_run(const cs_cluster *c, const cs_trun_set *s,
                               cs_calib_train_compare *out, cs_diag *d);
void cs_calib_train_compare_free(cs_calib_train_compare *cmp);

/* ---- the fit ------------------------------------------------------------------ */

#define CS_CALIB_TRAIN_PARAMS 12

typedef struct cs_calib_train_result {
    cs_cluster input;       /* the cluster fitted */
    cs_cluster cluster;     /* the input with the fitted values substituted */
    int nparams;
    cs_calib_param params[CS_CALIB_TRAIN_PARAMS]; /* in priority order */
    int input_unset[CS_CALIB_TRAIN_PARAMS];       /* the input left it unset (< 0) */
    size_t nrows;
    double *before_pct, *after_pct; /* per row: signed error on input / fitted */
    int iterations, dof, converged;
    double rms_before_pct, rms_after_pct; /* RMS of log error, as % */
    char status[128];
} cs_calib_train_result;

/* Fits c's compute model to s. Returns 0 with *out allocated (free with
 * cs_calib_train_result_free), or CS_ECONFIG (a row does not simulate on
 * c; fewer than 2 rows). */
int cs_calib_train(const cs_cluster *c, const cs_trun_set *s, cs_calib_train_result **out,
                   cs_diag *d);
void cs_calib_train_result_free(cs_calib_train_result *r);
/* The collective fit's verdict (cs_calib_quality), for the compute fit:
 * 0 usable, 1 poor (RMS after >= CS_CALIB_RMS_POOR_PCT: a warning), 2
 * unusable (no parameter fitted, or RMS after >= CS_CALIB_RMS_UNUSABLE_PCT,
 * inf or NaN: `calibrate` writes the report, no YAML, and exits 3); why
 * into msg[len] ("" when 0). */
int cs_calib_train_quality(const cs_calib_train_result *r, char *msg, size_t len);

/* What the YAML says (calib_train_yaml.c): the comment of a cluster YAML
 * key the fit changed (a cs_cluster_yaml_note; ud is the result), or NULL. */
const char *cs_calib_train_note(void *ud, const char *path, char *buf, size_t len);
/* The header lines ("# ...") naming the rows and every parameter. */
void cs_calib_train_header(cs_buf *b, const cs_calib_train_result *r, const cs_trun_set *s);

#endif
