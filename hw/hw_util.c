/* SPDX-License-Identifier: MIT */
/*
 * hw_util.c - small helpers shared by collsim-hw's commands and backends:
 * the monotonic clock, the launcher's rank before MPI_Init, statistics of
 * repeated timings, GEMM shapes for a FLOP count, CSV-safe strings, and
 * the mapping of backend errors to exit codes.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "backend.h"
#include "base/error.h"
#include "base/units.h"

void cs_hw_exit_help(FILE *f)
{
    static const cs_exit_row rows[] = {
#define CS__HW_EXIT_ROW(name, val, text) {val, text},
        CS_HW_EXIT_MAP(CS__HW_EXIT_ROW)
#undef CS__HW_EXIT_ROW
    };
    cs_exit_table_print(f, rows, sizeof rows / sizeof rows[0]);
}

int cs_hw_exit_code(int err)
{
    switch (err) {
    case 0: return CS_HW_EXIT_OK;
    case CS_HW_ETIMEOUT: return CS_HW_EXIT_TIMEOUT;
    case CS_HW_EUNAVAIL: return CS_HW_EXIT_SKIP;
    case CS_EIO:
    case CS_ENOENT: return CS_HW_EXIT_IO;
    case CS_EINVAL:
    case CS_ECONFIG:
    case CS_ENOTSUP: return CS_HW_EXIT_USAGE;
    default: return CS_HW_EXIT_BACKEND;
    }
}

double cs_hw_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The variables mpirun (Open MPI), PMIx, Hydra/PMI and srun set. */
static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                        "SLURM_PROCID"};

int cs_hw_launch_rank(void)
{
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++) {
        const char *v = getenv(rank_vars[i]);
        long long r;
        if (v && *v) return cs_units_parse_int(v, strlen(v), 0, INT_MAX, &r) ? 0 : (int)r;
    }
    return 0;
}

int cs_hw_launched(void)
{
    for (size_t i = 0; i < sizeof rank_vars / sizeof rank_vars[0]; i++)
        if (getenv(rank_vars[i])) return 1;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void cs_hw_stats(const double *v, int n, double *min, double *median, double *max)
{
    CS_ASSERT(n > 0);
    double *s = cs_xmalloc((size_t)n * sizeof *s);
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    *min = s[0];
    *max = s[n - 1];
    *median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
}

int cs_hw_gemm_shape(double flops, int nmax, int kmax, int *m, int *n, int *k)
{
    double half = flops > 2 ? flops / 2 : 1;
    double side = cbrt(half);
    if (side <= nmax) {
        int s = (int)lround(side);
        if (s < 1) s = 1;
        *m = *n = *k = s;
        return 1;
    }
    /* m = n = nmax; k carries the rest, split into repetitions of <= kmax */
    double kk = half / ((double)nmax * nmax);
    double reps = ceil(kk / kmax);
    *m = *n = nmax;
    *k = (int)lround(kk / reps);
    if (*k < 1) *k = 1;
    return reps > 1e9 ? 1000000000 : (int)reps;
}

void cs_hw_csv_safe(char *buf, size_t len, const char *s)
{
    snprintf(buf, len, "%s", s);
    for (char *p = buf; *p; p++)
        if (*p == ',' || *p == '\n' || *p == '\r' || *p == '"') *p = ' ';
}

