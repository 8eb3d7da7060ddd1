/* SPDX-License-Identifier: MIT */
/*
 * calib_train.c - the fit of a cluster's compute model (gpu.compute) to
 * measured training runs and kernel timings (calib_train.h).
 *
 * Parameters, in priority order (a later one the rows cannot tell apart
 * from an earlier one keeps its input value):
 *   gemm          the GEMMs' achievable fraction of peak (a scale on every
 *                 GEMM's efficiency): every row determines it;
 *   flash1/2      the fused attention kernel's fraction of peak at long
 *                 sequence, for the kernel the rows run: needs 2 rows with
 *                 that kernel at 2 sequence lengths, and attention 5% of a
 *                 row's compute time at least (rows all at short sequence
 *                 cannot determine it);
 *   hbm           memory-bound kernels' fraction of HBM bandwidth: needs
 *                 them at 5% of a row's compute time at least;
 *   gemm_half     the GEMM work at which a GEMM reaches half of gemm (how
 *                 efficiency grows with width): needs rows of 2 model
 *                 widths (rows of one model size cannot determine a
 *                 width-dependent term);
 *   kernel_floor  the shortest kernel: screened by sensitivity alone;
 *   comm_compute_slowdown  compute and collectives both slowed by this
 *                 while they overlap (iteration.c): needs runs on 2 GPUs at
 *                 least (a collective to overlap), or 2 replayed compute-
 *                 stream tasks (replay_runs.h) that collectives overlapped
 *                 for OVERLAP_MIN (10%) of their time at least, each timed
 *                 as A + O s / (1 + s) (cs_calib_train_kernel_us: A its
 *                 time alone, O the overlap; the simulator's rates);
 *   fsdp1_hook_cpu / fsdp2_hook_cpu  the CPU time of FSDP's hooks per
 *                 block per pass, for the version the rows run: needs rows
 *                 of that FSDP version (it binds only where the CPU thread
 *                 falls behind the GPU: small blocks).
 * The last three are the GPU's software stack (NCCL's kernels sharing SMs
 * and HBM with compute; PyTorch's hooks on the host CPU) and land in the
 * cluster's gpu.compute, optional keys a training reads as its default
 * where its scenario leaves them out (training.h). Unset in the input (the
 * SM-share overlap model; the version's cited hook cost), the solver
 * starts from a seed (seed_of) and a parameter kept stays unset.
 * Then, as the collective fit does (calib_params.c), every round: a
 * parameter on which no row's prediction depends by 0.1% per unit step is
 * kept; one whose Jacobian column has under 30% of its norm orthogonal to
 * the columns accepted before it (Gram-Schmidt) is kept; at least one
 * degree of freedom is left. The fit is GSL's trust-region least squares
 * (Levenberg-Marquardt) on r_i = log(predicted_i / measured_i), every
 * parameter in log space (fractions capped at the schema's 1); the
 * covariance (J^T J)^-1 s^2 gives 95% intervals (Student t); a parameter
 * whose interval spans more than a factor of 10 leaves and the rest are
 * refitted (one per round, the last in priority order, so that what it
 * compensated for is refitted without it); so does one the fit pushes to
 * the bound of its range (no slope there, no interval).
 * Departure: hbm may exceed 1 in the fit (a CPU's memcpy beats the
 * hbm_bandwidth given); the cluster written then carries hbm_bandwidth x
 * hbm and hbm 1, which prices every kernel the same.
 * Predictions and the comparison are calib_train_compare.c; what the rows
 * exercise, for the rules, calib_train_usage.c.
 * Cost: every residual evaluation simulates every row (one iteration each).
 * Departure: GSL's error handler is off during the fit (process-global).
 */
#include "study/calib_train.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "study/calib_phases.h"
#include "study/calib_train_usage.h"
#include "train/training.h"

/* ---- the parameters ------------------------------------------------------------ */

/* What the rows exercise (calib_train_usage.c), for the rules. */
typedef cs__train_usage usage;
#define OVERLAP_MIN CS__TRAIN_OVERLAP_MIN

typedef const char *(*rule_fn)(const usage *u, char *buf, size_t len);

static const char *rule_attention(const usage *u, cs_attn_kernel k, char *buf, size_t len)
{
    const char *kn = cs_attn_kernel_names[k];
    if (u->rows_kernel[k] < 2)
        snprintf(buf, len, "fewer than 2 rows run the %s attention kernel", kn);
    else if (u->seqs_kernel[k] < 2)
        snprintf(buf, len, "the rows running %s are all at one sequence length (%d): attention "
                           "cannot be told from the GEMMs", kn, u->max_seq[k]);
    else if (u->attn_share[k] < 0.05)
        snprintf(buf, len, "the rows are all at short sequence (at most %d): attention is at most "
                           "%.1f%% of a row's kernel time, too little to determine it",
                 u->max_seq[k], 100 * u->attn_share[k]);
    else
        return NULL;
    return buf;
}
static const char *rule_flash1(const usage *u, char *b, size_t n)
{
    return rule_attention(u, CS_ATTN_FLASH1, b, n);
}
static const char *rule_flash2(const usage *u, char *b, size_t n)
{
    return rule_attention(u, CS_ATTN_FLASH2, b, n);
}
static const char *rule_hbm(const usage *u, char *buf, size_t len)
{
    if (u->mem_share >= 0.05 || u->copy_sizes >= 1) return NULL;
    snprintf(buf, len, "memory-bound kernels are at most %.1f%% of a row's kernel time, too little "
                       "to determine it, and no copy was timed", 100 * u->mem_share);
    return buf;
}
static const char *rule_hbm_half(const usage *u, char *buf, size_t len)
{
    if (u->copy_sizes >= 2) return NULL;
    snprintf(buf, len, "needs copies timed at 2 sizes at least (collsim-hw compute, "
                       "--compute-measurements)");
    return buf;
}
static const char *rule_width(const usage *u, char *buf, size_t len)
{
    if (u->widths >= 2 || u->gemm_sizes >= 2) return NULL;
    if (u->widths)
        snprintf(buf, len, "the rows are all of one model width (hidden %d): a width-dependent "
                           "term cannot be determined", u->width);
    else
        snprintf(buf, len, "GEMMs of one size only: a size-dependent term cannot be determined");
    return buf;
}

static const char *rule_overlap(const usage *u, char *buf, size_t len)
{
    if (u->multi_gpu || u->overlapped >= 2) return NULL;
    if (!u->replayed)
        snprintf(buf, len, "no run on 2 GPUs or more: no collective overlaps compute");
    else
        snprintf(buf, len, "no run on 2 GPUs or more, and %d of the %d replayed tasks ran beside "
                           "collectives for %.0f%% of their time at least (2 needed): too little "
                           "overlap to determine it", u->overlapped, u->replayed, 100 * OVERLAP_MIN);
    return buf;
}
static const char *rule_fsdp(const usage *u, int v, char *buf, size_t len)
{
    if (u->fsdp_rows[v]) return NULL;
    snprintf(buf, len, "no row runs FSDP%d", v);
    return buf;
}
static const char *rule_fsdp1(const usage *u, char *b, size_t n) { return rule_fsdp(u, 1, b, n); }
static const char *rule_fsdp2(const usage *u, char *b, size_t n) { return rule_fsdp(u, 2, b, n); }

/* A parameter's solver origin when the input leaves it unset (< 0). */
typedef double (*seed_fn)(const cs_cluster *c);
/* The SM-share model's slowdown of compute under one collective
 * (cs_calib_train_slowdown of c with it unset), a start for the solver
 * only; 0.05 on a machine without SMs (a CPU). */
static double seed_slowdown(const cs_cluster *c)
{
    cs_cluster u = *c;
    u.gpu.compute.comm_compute_slowdown = -1;
    double s = cs_calib_train_slowdown(&u);
    return s > 0 ? s : 0.05;
}
/* The versions' cited defaults (training.c cs_training_fsdp_hook_cpu_s). */
static double seed_hook(const cs_cluster *c, int v)
{
    cs_training t = {.fsdp_version = v, .fsdp_hook_cpu_s = -1};
    cs_cluster u = *c;
    u.gpu.compute.fsdp1_hook_cpu_s = u.gpu.compute.fsdp2_hook_cpu_s = -1;
    return cs_training_fsdp_hook_cpu_s(&t, &u);
}
static double seed_hook1(const cs_cluster *c) { return seed_hook(c, 1); }
static double seed_hook2(const cs_cluster *c) { return seed_hook(c, 2); }

typedef struct tparam {
    const char *name, *key, *unit; /* key: the cluster YAML key it lands in */
    size_t off;                    /* the double in cs_cluster */
    double lo, hi;                 /* the fit's range (hi 0: none); the schema's where it has one */
    int rate;                      /* 1: hbm, whose excess over 1 is a higher rate */
    double scale;                  /* reported value = natural x scale */
    rule_fn rule;                  /* NULL: sensitivity alone decides */
    const char *what;              /* fitted: what determines it */
    seed_fn seed;                  /* NULL: the input is always set */
} tparam;

#define OFF(f) offsetof(cs_cluster, gpu.compute.f)
static const tparam tparams[] = {
    {"gemm", "gpu.compute.gemm", "", OFF(gemm), 1e-3, 1, 0, 1, NULL, "every row's GEMM time", NULL},
    {"flash1", "gpu.compute.flash1", "", OFF(flash1), 1e-3, 1, 0, 1, rule_flash1,
     "rows running flash1 at several sequence lengths", NULL},
    {"flash2", "gpu.compute.flash2", "", OFF(flash2), 1e-3, 1, 0, 1, rule_flash2,
     "rows running flash2 at several sequence lengths", NULL},
    {"hbm", "gpu.compute.hbm", "", OFF(hbm), 1e-3, 0, 1, 1, rule_hbm, "memory-bound kernels' time", NULL},
    {"gemm_half", "gpu.compute.gemm_half", "GFLOP", OFF(gemm_half_flops), 0, 0, 0, 1e-9,
     rule_width, "rows of several model widths", NULL},
    {"hbm_half", "gpu.compute.hbm_half", "MiB", OFF(hbm_half_bytes), 0, 0, 0, 1.0 / 1048576,
     rule_hbm_half, "copies timed at several sizes", NULL},
    {"kernel_floor", "gpu.compute.kernel_floor", "us", OFF(kernel_floor_s), 0, 0, 0, 1e6, NULL,
     "the shortest kernels", NULL},
    {"comm_compute_slowdown", "gpu.compute.comm_compute_slowdown", "", OFF(comm_compute_slowdown),
     1e-4, 10, 0, 1, rule_overlap, "runs or replayed tasks whose collectives overlap compute",
     seed_slowdown},
    {"fsdp1_hook_cpu", "gpu.compute.fsdp1_hook_cpu", "ms", OFF(fsdp1_hook_cpu_s), 0, 0, 0, 1e3,
     rule_fsdp1, "FSDP1 runs whose CPU thread binds", seed_hook1},
    {"fsdp2_hook_cpu", "gpu.compute.fsdp2_hook_cpu", "ms", OFF(fsdp2_hook_cpu_s), 0, 0, 0, 1e3,
     rule_fsdp2, "FSDP2 runs whose CPU thread binds", seed_hook2},
};
#undef OFF
#define NP ((int)(sizeof tparams / sizeof *tparams))
_Static_assert(sizeof tparams / sizeof *tparams <= CS_CALIB_TRAIN_PARAMS, "result holds them");

static double *field(cs_cluster *c, int j) { return (double *)((char *)c + tparams[j].off); }

/* Natural value at coordinate x from v0 (x = 0): log space, within the
 * parameter's range (a fraction capped at the schema's 1). A trial step
 * far out prices nothing sensibly (an efficiency of 0, an infinite
 * floor): values stay within e^+-12 and the range. */
static double to_value(int j, double v0, double x)
{
    x = fmax(-12, fmin(12, x));
    double v = fmax(tparams[j].lo, v0 * exp(x));
    return tparams[j].hi > 0 ? fmin(tparams[j].hi, v) : v;
}

/* ---- the fit ------------------------------------------------------------------ */

typedef struct fit {
    const cs_cluster *base;
    const cs_trun_set *s;
    size_t n;                           /* residuals: the runs, then the kernel timings */
    double start[CS_CALIB_TRAIN_PARAMS]; /* the input's values (< 0: unset, where seeded) */
    double origin[CS_CALIB_TRAIN_PARAMS]; /* natural values at coordinate 0 */
    int which[CS_CALIB_TRAIN_PARAMS], np;
    int eligible[CS_CALIB_TRAIN_PARAMS];
    char why[CS_CALIB_TRAIN_PARAMS][200];
    double *f, *J, *q, *r;              /* n; n x NP; n x NP; n */
    int evals;
} fit;

/* The cluster at solver coordinates y (y = X_OFFSET: the start). */
static void cluster_at(const fit *ft, const double *y, cs_cluster *c)
{
    *c = *ft->base;
    for (int j = 0; j < NP; j++) *field(c, j) = ft->start[j];
    for (int a = 0; a < ft->np; a++) {
        int j = ft->which[a];
        *field(c, j) = to_value(j, ft->origin[j], y[a] - X_OFFSET);
    }
}

static void residuals(fit *ft, const cs_cluster *c, double *f)
{
    ft->evals++;
    const cs_trun_set *s = ft->s;
    for (size_t i = 0; i < s->n; i++) {
        double tps;
        f[i] = cs_calib_train_predict(c, s, i, &tps, NULL, NULL) || !(tps > 0)
                   ? INFINITY
                   : log(tps / s->rows[i].measured_tps_per_gpu);
    }
    /* a kernel's speed is 1 / time: log(meas / pred) has the sign of tokens/s */
    for (size_t q = 0; q < s->nk; q++) {
        double t = cs_calib_train_kernel_us(c, &s->kernels[q]);
        f[s->n + q] = t > 0 && isfinite(t) ? log(s->kernels[q].time_us / t) : INFINITY;
    }
}

static int gsl_f(const gsl_vector *x, void *params, gsl_vector *f)
{
    fit *ft = params;
    double y[CS_CALIB_TRAIN_PARAMS];
    for (int a = 0; a < ft->np; a++) y[a] = gsl_vector_get(x, (size_t)a);
    cs_cluster c;
    cluster_at(ft, y, &c);
    double *r = cs_xmalloc(ft->n * sizeof *r);
    residuals(ft, &c, r);
    int status = GSL_SUCCESS;
    for (size_t k = 0; k < ft->n; k++) {
        if (!isfinite(r[k])) status = GSL_EDOM;
        gsl_vector_set(f, k, r[k]);
    }
    free(r);
    return status;
}

/* Central-difference Jacobian of every parameter at the start. */
static void jacobian(fit *ft)
{
    size_t n = ft->n;
    double *fp = cs_xmalloc(n * sizeof *fp), *fm = cs_xmalloc(n * sizeof *fm);
    const double h = 1e-3;
    for (int j = 0; j < NP; j++) {
        cs_cluster a = *ft->base, b = *ft->base;
        for (int k = 0; k < NP; k++) *field(&a, k) = *field(&b, k) = ft->start[k];
        *field(&a, j) = to_value(j, ft->origin[j], h);
        *field(&b, j) = to_value(j, ft->origin[j], -h);
        residuals(ft, &a, fp);
        residuals(ft, &b, fm);
        for (size_t k = 0; k < n; k++) ft->J[k * NP + (size_t)j] = (fp[k] - fm[k]) / (2 * h);
    }
    free(fp);
    free(fm);
}

/* Accepts parameter j for this round unless no row depends on it or its
 * column is nearly a combination of those accepted (calib_params.c's
 * rules); sel says why not. */
static void consider(fit *ft, int j, char *sel, size_t len)
{
    size_t n = ft->n;
    double vmax = 0, norm2 = 0;
    for (size_t k = 0; k < n; k++) {
        double v = ft->J[k * NP + (size_t)j];
        vmax = fmax(vmax, fabs(v));
        norm2 += v * v;
        ft->r[k] = v;
    }
    if (vmax < 1e-3) {
        snprintf(sel, len, "no row's prediction depends on it (at most %.2g%% per unit step)",
                 100 * vmax);
        return;
    }
    for (int a = 0; a < ft->np; a++) {
        double dot = 0;
        for (size_t k = 0; k < n; k++) dot += ft->q[k * NP + (size_t)a] * ft->r[k];
        for (size_t k = 0; k < n; k++) ft->r[k] -= dot * ft->q[k * NP + (size_t)a];
    }
    double rn = 0;
    for (size_t k = 0; k < n; k++) rn += ft->r[k] * ft->r[k];
    if (rn < 0.09 * norm2) {
        snprintf(sel, len, "indistinguishable on these rows from %s (its effect is a combination "
                           "of the parameters fitted before it)", tparams[ft->which[0]].name);
        return;
    }
    if ((size_t)ft->np + 1 >= n) {
        snprintf(sel, len, "not enough rows (%zu) to fit it as well", n);
        return;
    }
    for (size_t k = 0; k < n; k++) ft->q[k * NP + (size_t)ft->np] = ft->r[k] / sqrt(rn);
    ft->which[ft->np++] = j;
}

/* Runs GSL from x (in/out); covar: np x np at the solution. */
static int run_gsl(fit *ft, double *x, double *covar, int *iters)
{
    size_t n = ft->n, p = (size_t)ft->np;
    gsl_multifit_nlinear_fdf fdf = {.f = gsl_f, .n = n, .p = p, .params = ft};
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    par.trs = gsl_multifit_nlinear_trs_lm;
    par.scale = gsl_multifit_nlinear_scale_more;
    par.h_df = 1e-4;
    par.fdtype = GSL_MULTIFIT_NLINEAR_CTRDIFF; /* a fraction at its cap has a one-sided slope */
    gsl_multifit_nlinear_workspace *ws =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, n, p);
    if (!ws) CS_PANIC("out of memory (gsl_multifit_nlinear_alloc)");
    gsl_vector_view xv = gsl_vector_view_array(x, p);
    int info = 0, status = gsl_multifit_nlinear_init(&xv.vector, &fdf, ws);
    if (status == GSL_SUCCESS)
        status = gsl_multifit_nlinear_driver(100, 1e-8, 1e-8, 1e-10, NULL, NULL, &info, ws);
    if (status == GSL_EMAXITER && gsl_multifit_nlinear_niter(ws) <= 1) status = GSL_SUCCESS;
    memcpy(x, gsl_multifit_nlinear_position(ws)->data, p * sizeof *x);
    *iters += (int)gsl_multifit_nlinear_niter(ws);
    gsl_matrix_view cv = gsl_matrix_view_array(covar, p, p);
    if (gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(ws), 0.0, &cv.matrix))
        for (size_t j = 0; j < p * p; j++) covar[j] = NAN;
    gsl_multifit_nlinear_free(ws);
    return status;
}

static double rms_pct(const double *f, size_t n)
{
    double ss = 0;
    for (size_t k = 0; k < n; k++) ss += f[k] * f[k];
    return 100 * sqrt(ss / (double)n);
}

/* The rows' rules: eligible[] and why[]. */
static void apply_rules(fit *ft, const cs_cluster *c)
{
    usage u;
    cs__calib_train_usage_tally(c, ft->s, &u);
    for (int j = 0; j < NP; j++) {
        ft->eligible[j] = 1;
        ft->why[j][0] = 0;
        if (tparams[j].rule && tparams[j].rule(&u, ft->why[j], sizeof ft->why[j]))
            ft->eligible[j] = 0;
    }
}

/* One round: choose, fit; returns 1 when a parameter left (refit). */
static int round_fit(fit *ft, cs_calib_train_result *res, double *x, double *covar,
                     double *hw)
{
    jacobian(ft);
    ft->np = 0;
    for (int j = 0; j < NP; j++)
        if (ft->eligible[j]) consider(ft, j, ft->why[j], sizeof ft->why[j]);
    if (ft->np == 0) return 0;
    for (int a = 0; a < ft->np; a++) x[a] = X_OFFSET;
    int status = run_gsl(ft, x, covar, &res->iterations);
    res->converged = status == GSL_SUCCESS;
    snprintf(res->status, sizeof res->status, "%s (GSL: %s)",
             res->converged ? "converged" : "not converged", gsl_strerror(status));
    cs_cluster c;
    cluster_at(ft, x, &c);
    residuals(ft, &c, ft->f);
    size_t n = ft->n;
    res->dof = (int)n - ft->np;
    double ss = 0;
    for (size_t k = 0; k < n; k++) ss += ft->f[k] * ft->f[k];
    double s2 = res->dof > 0 ? ss / res->dof : NAN, tq = cs__calib_t_quantile(res->dof);
    for (int a = 0; a < ft->np; a++) hw[a] = tq * sqrt(s2 * covar[a * ft->np + a]);
    /* one leaves per round, the last in priority order: what it was
     * compensating for is refitted without it */
    for (int a = ft->np - 1; a >= 0; a--) {
        int j = ft->which[a];
        double lo = to_value(j, ft->origin[j], x[a] - X_OFFSET - hw[a]);
        double hi = to_value(j, ft->origin[j], x[a] - X_OFFSET + hw[a]);
        double v = to_value(j, ft->origin[j], x[a] - X_OFFSET);
        double bound = tparams[j].lo > 0 && v <= tparams[j].lo * (1 + 1e-9)   ? tparams[j].lo
                       : tparams[j].hi > 0 && v >= tparams[j].hi * (1 - 1e-9) ? tparams[j].hi
                                                                              : NAN;
        if (isfinite(bound)) /* pinned: no slope there, and no interval */
            snprintf(ft->why[j], sizeof ft->why[j],
                     "the rows push it to the bound of its range (%g): they do not determine it",
                     bound * tparams[j].scale);
        else if (isfinite(hw[a]) && hi > 10 * lo)
            snprintf(ft->why[j], sizeof ft->why[j],
                     "the rows leave it open: its 95%% interval spans more than a factor of 10");
        else
            continue;
        ft->eligible[j] = 0;
        return 1;
    }
    return 0;
}

static void result_params(const fit *ft, cs_calib_train_result *res, const double *x,
                          const double *hw)
{
    res->nparams = NP;
    for (int j = 0; j < NP; j++) {
        cs_calib_param *p = &res->params[j];
        const tparam *t = &tparams[j];
        snprintf(p->name, sizeof p->name, "%s", t->name);
        snprintf(p->yaml, sizeof p->yaml, "%s", t->key);
        snprintf(p->unit, sizeof p->unit, "%s", t->unit);
        /* an unset input shows its seed, and the why says it was unset */
        int unset = ft->start[j] < 0;
        res->input_unset[j] = unset;
        p->initial = ft->origin[j] * t->scale;
        p->value = p->initial;
        p->ci_lo = p->ci_hi = NAN;
        p->fitted = 0;
        snprintf(p->why, sizeof p->why, "%s%s", ft->why[j],
                 unset ? "; stays unset (the input's default)" : "");
        for (int a = 0; a < ft->np; a++)
            if (ft->which[a] == j) {
                p->fitted = 1;
                p->value = to_value(j, ft->origin[j], x[a] - X_OFFSET) * t->scale;
                p->ci_lo = to_value(j, ft->origin[j], x[a] - X_OFFSET - hw[a]) * t->scale;
                p->ci_hi = to_value(j, ft->origin[j], x[a] - X_OFFSET + hw[a]) * t->scale;
                snprintf(p->why, sizeof p->why, "from %s%s", t->what,
                         unset ? " (input unset: started from its default's equivalent)" : "");
            }
    }
}

int cs_calib_train(const cs_cluster *c, const cs_trun_set *s, cs_calib_train_result **out,
                   cs_diag *d)
{
    size_t n = s->n + s->nk;
    if (n < 2)
        return cs_diag_set(d, CS_ECONFIG, s->nfiles ? s->files[0] : NULL, 0, 0,
                           "a compute fit needs 2 runs or kernel timings at least, got %zu", n);
    for (size_t q = 0; q < s->nk; q++)
        if (s->kernels[q].gemm && !(c->gpu.peak_flops[s->kernels[q].dtype] > 0))
            return cs_diag_set(d, CS_ECONFIG, s->files[s->kernels[q].file], s->kernels[q].line, 1,
                               "cluster '%s' has no %s peak for this GEMM", c->name,
                               cs_dtype_name(s->kernels[q].dtype));
    cs_calib_train_compare cmp;
    int rc = cs_calib_train_compare_run(c, s, &cmp, d);
    if (rc) return rc;
    cs_calib_train_result *res = cs_xcalloc(1, sizeof *res);
    res->input = res->cluster = *c;
    res->nrows = n;
    res->before_pct = cs_xmalloc(n * sizeof *res->before_pct);
    res->after_pct = cs_xmalloc(n * sizeof *res->after_pct);
    memcpy(res->before_pct, cmp.err_pct, s->n * sizeof *res->before_pct);
    cs_calib_train_compare_free(&cmp);
    fit ft = {.base = c, .s = s, .n = n};
    for (int j = 0; j < NP; j++) {
        ft.start[j] = *field((cs_cluster *)c, j);
        ft.origin[j] = ft.start[j] < 0 && tparams[j].seed ? tparams[j].seed(c) : ft.start[j];
    }
    ft.f = cs_xmalloc(n * sizeof *ft.f);
    ft.r = cs_xmalloc(n * sizeof *ft.r);
    ft.J = cs_xmalloc(n * NP * sizeof *ft.J);
    ft.q = cs_xmalloc(n * NP * sizeof *ft.q);
    apply_rules(&ft, c);
    residuals(&ft, c, ft.f);
    for (size_t q = s->n; q < n; q++) res->before_pct[q] = 100 * expm1(ft.f[q]);
    res->rms_before_pct = rms_pct(ft.f, n);
    snprintf(res->status, sizeof res->status, "nothing to fit: every parameter is kept");
    double x[CS_CALIB_TRAIN_PARAMS], hw[CS_CALIB_TRAIN_PARAMS],
        covar[CS_CALIB_TRAIN_PARAMS * CS_CALIB_TRAIN_PARAMS];
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    for (int round = 0; round <= NP && round_fit(&ft, res, x, covar, hw); round++) {}
    gsl_set_error_handler(old);
    cluster_at(&ft, x, &res->cluster);
    residuals(&ft, &res->cluster, ft.f);
    /* hbm above 1: the achievable bandwidth is above the hbm_bandwidth
     * given, written as that rate (the schema caps the fraction at 1; the
     * same predictions) */
    if (res->cluster.gpu.compute.hbm > 1) {
        res->cluster.gpu.hbm_Bps *= res->cluster.gpu.compute.hbm;
        res->cluster.gpu.compute.hbm = 1;
    }
    res->rms_after_pct = rms_pct(ft.f, n);
    for (size_t i = 0; i < n; i++) res->after_pct[i] = 100 * expm1(ft.f[i]);
    result_params(&ft, res, x, hw);
    free(ft.f);
    free(ft.r);
    free(ft.J);
    free(ft.q);
    *out = res;
    return 0;
}

int cs_calib_train_quality(const cs_calib_train_result *r, char *msg, size_t len)
{
    int fitted = 0;
    for (int j = 0; j < r->nparams; j++) fitted += r->params[j].fitted;
    return cs__calib_verdict(fitted, r->rms_before_pct, r->rms_after_pct,
                             "the training runs / kernel timings determine no compute parameter "
                             "(the report says why); nothing usable was fitted",
                             "the compute fit leaves an RMS error", "these runs", msg, len);
}

void cs_calib_train_result_free(cs_calib_train_result *r)
{
    if (!r) return;
    free(r->before_pct);
    free(r->after_pct);
    free(r);
}
