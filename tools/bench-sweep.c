/* SPDX-License-Identifier: MIT */
/*
 * bench-sweep.c - wall time of a 10,000-point crossover sweep on one core,
 * with closed-form collectives (issue 4's target: under 1 s) and with DES
 * collectives (issue 16's target: under 5 s; not met, see the README):
 * 250 generic models (1e8..1e11 parameters, log) x 8 rank counts (8, 16,
 * ..., 1024) x 5 strategies (ddp, zero1, fsdp_no_shard, fsdp_shard_grad_op,
 * fsdp_full_shard) on dgx-h100,
 * then the crossing search on those points. Median of RUNS runs (default
 * 5) closed-form, DES_RUNS runs (default 1; 0 skips) with DES collectives;
 * prints points per second, the crossings found, and for DES the largest
 * difference in tokens/s from the closed-form grid.
 * Usage: build/tools/bench-sweep [RUNS [DES_RUNS]]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config/config.h"
#include "study/sweep.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median grid and crossing-search times of `runs` runs of s into pts. */
static int bench(cs_sweep_spec *s, int runs, cs_sweep_point *pts, size_t *nc, double *grid_med,
                 double *grid_min, double *grid_max, double *cross_med)
{
    size_t n = cs_sweep_size(s);
    cs_diag d;
    cs_diag_clear(&d);
    double *grid_s = calloc((size_t)runs, sizeof(double)), *cross_s = calloc((size_t)runs, sizeof(double));
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        if (cs_sweep_run(s, 0, 1, pts, NULL, NULL, NULL, &d)) {
            fprintf(stderr, "bench-sweep: %s\n", d.message);
            return 2;
        }
        double t1 = now_s();
        cs_crossing *c;
        if (cs_sweep_crossings(s, pts, n, &c, nc, &d)) return 2;
        double t2 = now_s();
        free(c);
        grid_s[r] = t1 - t0;
        cross_s[r] = t2 - t1;
    }
    qsort(grid_s, (size_t)runs, sizeof(double), cmp);
    qsort(cross_s, (size_t)runs, sizeof(double), cmp);
    *grid_med = grid_s[runs / 2];
    *grid_min = grid_s[0];
    *grid_max = grid_s[runs - 1];
    *cross_med = cross_s[runs / 2];
    free(grid_s);
    free(cross_s);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (runs < 1 || runs > 101) runs = 5;
    int des_runs = argc > 2 ? atoi(argv[2]) : 1;
    if (des_runs < 0 || des_runs > 101) des_runs = 1;
    static cs_sweep_spec s;
    cs_diag d;
    cs_diag_clear(&d);
    if (cs_config_cluster("dgx-h100", &s.cluster, &d)) return 2;
    cs_training_defaults(&s.training, CS_STRAT_DDP);
    s.nranks = 8;
    for (int i = 0; i < s.nranks; i++) s.ranks[i] = 8 << i;
    const cs_strategy st[] = {CS_STRAT_DDP, CS_STRAT_ZERO1, CS_STRAT_FSDP_NO_SHARD,
                              CS_STRAT_FSDP_SHARD_GRAD_OP, CS_STRAT_FSDP_FULL_SHARD};
    s.nstrategies = 5;
    for (int i = 0; i < 5; i++) s.strategies[i] = st[i];
    s.params_min = 1e8;
    s.params_max = 1e11;
    s.params_points = 250;
    size_t n = cs_sweep_size(&s), nc = 0;
    cs_sweep_point *pts = calloc(n, sizeof *pts), *des = calloc(n, sizeof *des);
    double g, gmin, gmax, cr;
    if (bench(&s, runs, pts, &nc, &g, &gmin, &gmax, &cr)) return 2;
    printf("sweep of %zu points (250 P x 8 N x 5 strategies, closed-form collectives), one core: "
           "median %.3f s (min %.3f, max %.3f) = %.1f us/point, %.0f points/s; "
           "crossing search (%zu crossings): median %.3f s\n",
           n, g, gmin, gmax, 1e6 * g / (double)n, (double)n / g, nc, cr);
    if (des_runs > 0) {
        s.training.collective_engine = CS_ENGINE_DES;
        if (bench(&s, des_runs, des, &nc, &g, &gmin, &gmax, &cr)) return 2;
        double worst = 0;
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            double rel = fabs(des[i].tokens_per_s / pts[i].tokens_per_s - 1);
            if (rel > worst) {
                worst = rel;
                at = i;
            }
        }
        printf("the same sweep with DES collectives, one core: median of %d %.3f s (min %.3f, "
               "max %.3f) = %.1f us/point, %.0f points/s; crossing search (%zu crossings): "
               "median %.3f s; tokens/s vs closed form: up to %.1f%% (%s, %d ranks, %.3g params)\n",
               des_runs, g, gmin, gmax, 1e6 * g / (double)n, (double)n / g, nc, cr, 100 * worst,
               cs_strategy_name(des[at].strategy), des[at].ranks, des[at].params);
    }
    free(pts);
    free(des);
    return 0;
}
