/* SPDX-License-Identifier: MIT */
/*
 * bench-sweep.c - wall time of a 10,000-point crossover sweep with
 * closed-form collectives on one core (issue 4's target: under 1 s):
 * 250 generic models (1e8..1e11 parameters, log) x 8 rank counts (8, 16,
 * ..., 1024) x 5 strategies (ddp, zero1, fsdp_no_shard, fsdp_shard_grad_op,
 * fsdp_full_shard) on dgx-h100, then the crossing search on those points.
 * Median of 5 runs; prints points per second and the crossings found.
 * Usage: build/tools/bench-sweep [RUNS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config.h"
#include "sweep.h"

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

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5;
    if (runs < 1 || runs > 101) runs = 5;
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
    size_t n = cs_sweep_size(&s);
    cs_sweep_point *pts = calloc(n, sizeof *pts);
    double *grid_s = calloc((size_t)runs, sizeof(double)), *cross_s = calloc((size_t)runs, sizeof(double));
    size_t nc = 0;
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        if (cs_sweep_run(&s, 0, 1, pts, NULL, NULL, NULL, &d)) {
            fprintf(stderr, "bench-sweep: %s\n", d.message);
            return 2;
        }
        double t1 = now_s();
        cs_crossing *c;
        if (cs_sweep_crossings(&s, pts, n, &c, &nc, &d)) return 2;
        double t2 = now_s();
        free(c);
        grid_s[r] = t1 - t0;
        cross_s[r] = t2 - t1;
    }
    qsort(grid_s, (size_t)runs, sizeof(double), cmp);
    qsort(cross_s, (size_t)runs, sizeof(double), cmp);
    double g = grid_s[runs / 2];
    printf("sweep of %zu points (250 P x 8 N x 5 strategies, closed-form collectives), one core: "
           "median %.3f s (min %.3f, max %.3f) = %.1f us/point, %.0f points/s; "
           "crossing search (%zu crossings): median %.3f s\n",
           n, g, grid_s[0], grid_s[runs - 1], 1e6 * g / (double)n, (double)n / g, nc,
           cross_s[runs / 2]);
    free(pts);
    free(grid_s);
    free(cross_s);
    return 0;
}
