/* SPDX-License-Identifier: MIT */
/*
 * calib_phases.h - the phases of a calibration fit, one module each
 * (internal to sim/study; the interface is calibrate.h):
 *
 *   calib_compare.c  predictions of measured rows, their scores
 *   calib_params.c   the fitted parameters (definitions, transforms, the
 *                    cluster they give), which of them the data exercises,
 *                    and the choice among those (sensitivity, Gram-Schmidt
 *                    collinearity screen)
 *   calib_fit.c      one fit round: GSL trust-region least squares, Huber
 *                    reweighting, the covariance
 *   calib_recheck.c  the fitted parameters checked again at the solution
 *                    (back to input, held at a limit, dropped) and the
 *                    warm start of the next round
 *   calib_result.c   the result: values, intervals, reasons, residuals
 *   calib_yaml.c     the calibrated cluster as YAML
 *   calibrate.c      cs_calibrate: the driver of those phases
 *
 * A fit's working state is one cs__calib_run, owned by cs_calibrate; the
 * phases read and update it in place.
 */
#ifndef CS_CALIB_PHASES_H
#define CS_CALIB_PHASES_H

#include <stddef.h>

#include "study/calibrate.h"
#include "coll/topology.h"

/* ---- predictions (calib_compare.c) ----------------------------------------------- */

/* Places row i of m on c (topology for its ranks and nodes); CS_ECONFIG
 * naming the row's file:line when it does not fit (d may be NULL). */
int cs__calib_place(const cs_cluster *c, const cs_meas_set *m, size_t i, cs_topology *t,
                    cs_diag *d);
/* cs_calib_predict with the line-rate cluster lr given (NULL: no bound). */
int cs__calib_predict_on(const cs_cluster *c, const cs_cluster *lr, const cs_meas_set *m, size_t i,
                         cs_calib_pred *out, cs_diag *d);
/* Median of |v[i]| (0 for n = 0). */
double cs__calib_median_abs(const double *v, size_t n);

/* ---- parameters (calib_params.c) ------------------------------------------------- */

/* In priority order (a later one that the data cannot tell apart from an
 * earlier one is kept at its input value). */
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
    P_COUNT = P_ALGO_EFF + CS_ALGO_COUNT /* slots; cs__calib_nparams() are in use */
};
_Static_assert(P_COUNT <= CS_CALIB_MAX_PARAMS, "cs_calib_result.params holds every parameter");

/* Parameters in use: the fixed ones and one per fitted algorithm (the
 * slots after them have no value and are never fitted). */
int cs__calib_nparams(void);

typedef enum { T_LOG, T_LAUNCH, T_BOUNDED } cs__calib_transform;

typedef struct cs__calib_pdef {
    const char *name, *yaml, *unit;
    const char *key;        /* the YAML key its value lands in (cluster_yaml.h paths) */
    cs__calib_transform tr; /* see cs__calib_to_value */
    double scale;           /* reported value = natural value x scale (s -> us) */
    int latency;            /* reaches a floor (held there), not a cap (dropped) */
    int proto;              /* the protocol it prices (hop.*, bw_factor.*), else -1 */
    int algo;               /* the algorithm it prices (bw_factor.*, efficiency.*), else -1 */
    char what[128];         /* fitted: "from <what>" */
} cs__calib_pdef;

/* The definition of parameter j < cs__calib_nparams(): a fixed one, or an
 * algorithm's efficiency as its row names it (cs_algo_calib_param). */
cs__calib_pdef cs__calib_param(int j);

/* The per-algorithm efficiencies (collectives.efficiency.<algo>): the
 * parameter of algorithm a, or -1 when its row fits none. */
int cs__calib_algo_eff_param(cs_algo_id a);

/* Natural values of every parameter; use[] marks bw_factor overrides in
 * force (the others always are). */
typedef struct cs__calib_vals {
    double v[P_COUNT];
    int use[P_COUNT];
} cs__calib_vals;

/* The values c has (the start of a fit). */
void cs__calib_initial_values(const cs_cluster *c, cs__calib_vals *pv);
/* base with the values pv substituted. */
void cs__calib_apply(const cs_cluster *base, const cs__calib_vals *pv, cs_cluster *out);
/* Natural value of parameter k at fitting coordinate x (0 = its start
 * value v0), and the inverse; floor_s: see calib_params.c. */
double cs__calib_to_value(int k, double v0, double x, double floor_s);
double cs__calib_to_coord(int k, double v0, double v, double floor_s);

/* ---- one fit (calib_fit.c) ------------------------------------------------------- */

/* What the residuals are computed over: the used rows, the parameters
 * fitted (which[0..np)), their values at coordinate 0. */
typedef struct cs__calib_fit {
    const cs_cluster *base;
    const cs_meas_set *m;
    const size_t *rows;    /* used rows */
    size_t n;
    int np;
    const int *which;      /* fitted parameter ids */
    cs__calib_vals start;  /* natural values at coordinate 0 */
    double launch_floor_s; /* see cs__calib_to_value */
} cs__calib_fit;

/* GSL's trust region starts with a radius proportional to |D x0|, which
 * is 0 at x0 = 0: the solver sees y = x + 1 (X_OFFSET), so it starts at 1. */
#define X_OFFSET 1.0

/* Natural values at solver coordinates y[0..np). */
void cs__calib_x_to_vals(const cs__calib_fit *fc, const double *y, cs__calib_vals *pv);
/* Relative residuals (predicted - measured) / measured of the used rows. */
void cs__calib_residuals(const cs__calib_fit *fc, const cs__calib_vals *pv, double *f);
/* Central-difference Jacobian of every parameter at natural values `at`,
 * in fitting coordinates (J[k * P_COUNT + j]; 0 for parameters without a
 * value). */
void cs__calib_jacobian(const cs__calib_fit *fc, const cs__calib_vals *at, double *J);
/* Student's t 97.5% quantile (NaN for dof <= 0). */
double cs__calib_t_quantile(int dof);

/* ---- the run ------------------------------------------------------------------------- */

/* The working state of one cs_calibrate. Arrays: J, q n x P_COUNT; f, w, r
 * n; covar np x np (P_COUNT^2 allocated). */
typedef struct cs__calib_run {
    cs__calib_fit fc;
    cs__calib_vals orig;     /* the input's values (with factors set from the data) */
    size_t *rows;            /* used rows, n of them */
    size_t n;
    int eligible[P_COUNT];   /* the data exercises it and no re-check removed it */
    int frozen[P_COUNT];     /* held at a limit */
    int second_chances;      /* priced out / past the cap once: restart, not drop */
    int second[P_COUNT];     /* was once priced out or past its cap (and restarted) */
    int restart[P_COUNT];    /* the next round starts it from its input */
    char why[P_COUNT][200];  /* why not eligible, or why frozen */
    char sel[P_COUNT][200];  /* why not chosen this round */
    int which[P_COUNT], np;  /* chosen this round */
    double x[P_COUNT];       /* solver coordinates of the chosen */
    double *J, *f, *w, *covar, *q, *r;
    int status;              /* GSL status of the last fit */
} cs__calib_run;

/* calib_params.c: from the rows used (cmp: their predictions on the
 * input), which parameters the data exercises (eligible / why), the start
 * of the ring bw_factors and the launch latency's floor. */
void cs__calib_exercised(cs__calib_run *st, const cs_cluster *c, const cs_meas_set *m,
                         const cs_calib_compare *cmp, const cs_calib_result *res);
/* calib_params.c: the fit moves the algorithm / protocol choices, so a
 * parameter the input's choices left unexercised (fewer than 2 rows ran
 * its protocol or algorithm) may price rows at the fitted values
 * (st->fc.start): those become eligible again. Returns how many. */
int cs__calib_reexamine(cs__calib_run *st, const cs_cluster *c, const cs_meas_set *m,
                        const cs_calib_result *res);
/* calib_params.c: the parameters fitted this round (which / np; sel says
 * why the others were not); those not chosen return to their inputs. */
void cs__calib_choose(cs__calib_run *st);

/* calib_fit.c: fits the chosen parameters from their start (Huber
 * reweighting, then the covariance); updates x, w, covar, status. */
void cs__calib_fit_round(cs__calib_run *st, int *iterations);

/* calib_recheck.c: checks the fitted parameters at the solution; returns
 * 1 when one left the fit or was frozen (another round follows: the start
 * is warm-started), 0 when the fit stands. */
int cs__calib_recheck(cs__calib_run *st);

/* calib_result.c: the result of a finished run into res. */
void cs__calib_results(cs__calib_run *st, const cs_meas_set *m, cs_calib_result *res);

#endif
