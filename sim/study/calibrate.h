/* SPDX-License-Identifier: MIT */
/*
 * calibrate.h - predictions for measured rows, their scores, and the fit
 * of a cluster's cost-model parameters to measurements (GSL nonlinear
 * least squares).
 *
 * Prediction: every row is priced by the closed form on the cluster, with
 * its ranks placed on `nodes` nodes (or, when the input does not say,
 * filling the cluster's nodes in order), the algorithm / protocol the run
 * forced, else chosen as NCCL's tuner would (cs_collective_choose). Rows
 * that ran an algorithm collsim does not model (NVLSTree, CollNet, ...) are
 * not predicted. A dataset whose busbw exceeds what ring, tree or NVLS reach
 * on the cluster at line rate (every efficiency 1, no latency) ran
 * something else (NVLSTree, CollNet / SHARP): it is flagged,
 * scored, and never fitted.
 *
 * The fitted parameters, and the rules that decide whether the data can
 * determine each one, are listed in calib_params.c and in the output.
 */
#ifndef CS_CALIBRATE_H
#define CS_CALIBRATE_H

#include <stddef.h>

#include "coll/cluster.h"
#include "study/measure.h"
#include "base/buf.h"

/* ---- predictions and scores ------------------------------------------------ */

typedef struct cs_calib_pred {
    int status;         /* 0 predicted; CS_ENOTSUP: not modelled (why says) */
    double time_us;
    double bound_busbw_GBps; /* ring/tree at line rate, no latency */
    cs_algo_id algo;
    cs_proto proto;
    int nodes;          /* nodes the ranks were placed on */
    char why[96];
} cs_calib_pred;

/* Predicts row i of m on c. Returns 0 (see out->status for unmodelled
 * rows) or CS_ECONFIG when the row cannot be placed on the cluster (d names
 * the row's file:line). */
int cs_calib_predict(const cs_cluster *c, const cs_meas_set *m, size_t i, cs_calib_pred *out,
                     cs_diag *d);

/* Absolute percentage errors summarised; n = 0 leaves the numbers NaN.
 * p90 is the nearest-rank 90th percentile. */
typedef struct cs_calib_stats {
    int n;
    double median, p90, max;
} cs_calib_stats;
void cs_calib_stats_of(const double *abs_err_pct, int n, cs_calib_stats *out);

typedef struct cs_calib_ds_score {
    cs_calib_stats big;     /* sizes >= 1 MiB */
    cs_calib_stats all;
    int rows, unmodelled;   /* rows in the dataset, rows not predicted */
    int beyond_bound;       /* busbw above the ring/tree/NVLS line-rate bound where
                             * NVLSTree or CollNet / SHARP (several nodes), or NVLS
                             * turned off in the cluster, could have run */
    int above_line_rate;    /* the same where neither could: the cluster's line
                             * rate is too low (not excluded from fitting) */
    double max_busbw_GBps, bound_busbw_GBps; /* at the row of largest busbw */
} cs_calib_ds_score;

typedef struct cs_calib_compare {
    size_t nrows, ndatasets;
    cs_calib_pred *pred;        /* per row of the set */
    double *err_pct;            /* signed (pred - meas) / meas x 100, NaN if not predicted */
    cs_calib_ds_score *ds;      /* per dataset */
} cs_calib_compare;

/* Predicts and scores every row; caller frees with cs_calib_compare_free.
 * Returns 0 or CS_ECONFIG (a row does not fit the cluster). */
int cs_calib_compare_run(const cs_cluster *c, const cs_meas_set *m, cs_calib_compare *out,
                         cs_diag *d);
void cs_calib_compare_free(cs_calib_compare *cmp);


/* ---- the fit ------------------------------------------------------------------ */

#define CS_CALIB_MAX_PARAMS 24

typedef struct cs_calib_param {
    char name[40];       /* "intra.efficiency", "latency.launch", ... */
    char yaml[96];       /* where it lands in the cluster YAML */
    char unit[8];        /* "", "us", "x" */
    double initial, value, ci_lo, ci_hi; /* in unit; CI is 95% */
    int fitted;
    char why[200];       /* fitted: what determines it; kept: why not */
} cs_calib_param;

typedef struct cs_calib_rowfit {
    int used;            /* entered the fit */
    double weight;       /* final weight (after robust down-weighting) */
    double before_us, after_us; /* prediction with the input and the fitted cluster */
    double resid_pct;    /* (after - measured) / measured x 100 */
    char why[96];        /* why not used */
} cs_calib_rowfit;

typedef struct cs_calib_result {
    cs_cluster input;    /* the cluster fitted */
    cs_cluster cluster;  /* the input with fitted values substituted */
    int nparams;
    cs_calib_param params[CS_CALIB_MAX_PARAMS];
    size_t nrows, ndatasets;
    cs_calib_rowfit *rows;  /* per row of the set */
    char (*ds_why)[200];    /* per dataset: "" used, else why excluded */
    int used_rows, downweighted, iterations, dof;
    double rms_before_pct, rms_after_pct; /* weighted RMS relative error of used rows */
    int converged;
    char status[128];
} cs_calib_result;

/* Fits c to m. Returns 0 with *out allocated (free with
 * cs_calib_result_free), or CS_ECONFIG with d set (a row does not fit the
 * cluster, or no row is usable). */
int cs_calibrate(const cs_cluster *c, const cs_meas_set *m, cs_calib_result **out, cs_diag *d);
void cs_calib_result_free(cs_calib_result *r);

/* How usable a fit is: 0 fine; 1 poor (the weighted RMS relative error
 * after is CS_CALIB_RMS_POOR_PCT or more: the model does not describe
 * these measurements well); 2 unusable (no parameter was fitted, or the
 * RMS after is CS_CALIB_RMS_UNUSABLE_PCT or more: predictions off by as
 * much as what they predict). msg (may be NULL) says which and why. */
#define CS_CALIB_RMS_POOR_PCT 50.0
#define CS_CALIB_RMS_UNUSABLE_PCT 100.0
int cs_calib_quality(const cs_calib_result *r, char *msg, size_t len);
/* The verdict both fits share (internal): nothing fitted or an RMS at or
 * past CS_CALIB_RMS_UNUSABLE_PCT is 2 with `nothing` or "<rms> of A% (was
 * B%): ..."; past CS_CALIB_RMS_POOR_PCT 1, naming `what` the model does
 * not describe. */
int cs__calib_verdict(int fitted, double before_pct, double after_pct, const char *nothing,
                      const char *rms, const char *what, char *msg, size_t len);


/* The fitted cluster as YAML in the schema of configs/clusters/README.md
 * (written through the schema tables that read it: config/cluster_yaml.h),
 * after a header naming the inputs and every parameter. `origin` names the
 * input cluster (preset or path); src_text (may be NULL), the YAML it was
 * read from, whose comments are kept for the keys the fit did not change;
 * changed keys get "# fitted ...". Loading it back gives the fitted
 * cluster (an efficiency above 1 written as a higher rate). */
void cs_calib_write_yaml(cs_buf *b, const cs_calib_result *r, const cs_meas_set *m,
                         const char *origin, const char *src_text, size_t src_len);
/* The same with more: a training fit's header lines, the cluster it
 * changed, its notes, the files it read (for the date). r may be NULL
 * (no collective inputs): x->input and x->cluster are then required. */
typedef struct cs_calib_yaml_extra {
    const char *header;          /* "# ..." lines after the collective header, or NULL */
    const cs_cluster *input;     /* the input cluster (used when r is NULL) */
    const cs_cluster *cluster;   /* written instead of r->cluster, or NULL */
    const char *(*note)(void *ud, const char *path, char *buf, size_t len); /* or NULL */
    void *ud;
    const char (*files)[256];    /* more inputs that date the fit */
    size_t nfiles;
} cs_calib_yaml_extra;
void cs_calib_write_yaml_ext(cs_buf *b, const cs_calib_result *r, const cs_meas_set *m,
                             const cs_calib_yaml_extra *x, const char *origin,
                             const char *src_text, size_t src_len);
/* Any cluster as YAML (no comments beyond a title line); loading it back
 * gives the same cluster. */
void cs_calib_cluster_yaml(cs_buf *b, const cs_cluster *c);

#endif
