/* SPDX-License-Identifier: MIT */
/*
 * plot_grid.c - a sweep's points on the grid the plots read: distinct rank
 * counts and model sizes, sorted (sizes equal within a relative 1e-9 are
 * one), and per (rank count, size, strategy) the index of its point, or -1.
 * Points without a valid strategy, rank count or size are left out; of
 * duplicates the first wins. Lookups are binary searches, O(log n).
 */
#include "out/plot_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int same_params(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)); }

static int find_params(const cs__grid *g, double p)
{
    int lo = 0, hi = g->np - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (same_params(g->params[mid], p)) return mid;
        if (g->params[mid] < p) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static int find_ranks(const cs__grid *g, int r)
{
    const int *hit = bsearch(&r, g->ranks, (size_t)g->nr, sizeof *g->ranks, cmp_int);
    return hit ? (int)(hit - g->ranks) : -1;
}

static long *cellp(const cs__grid *g, int r, int p, int st)
{
    return &g->cell[((size_t)r * (size_t)g->np + (size_t)p) * CS_STRAT_COUNT + (size_t)st];
}

const cs_sweep_point *cs__grid_at(const cs__grid *g, int r, int p, int st)
{
    long i = *cellp(g, r, p, st);
    return i < 0 ? NULL : &g->pts[i];
}

static int usable(const cs_sweep_point *pt)
{
    return (int)pt->strategy >= 0 && (int)pt->strategy < CS_STRAT_COUNT && pt->ranks > 0 &&
           isfinite(pt->params) && pt->params > 0;
}

void cs__grid_build(cs__grid *g, const cs_sweep_point *pts, size_t n)
{
    memset(g, 0, sizeof *g);
    g->pts = pts;
    g->ranks = cs_xmalloc((n ? n : 1) * sizeof *g->ranks);
    g->params = cs_xmalloc((n ? n : 1) * sizeof *g->params);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (usable(&pts[i])) {
            g->ranks[m] = pts[i].ranks;
            g->params[m] = pts[i].params;
            m++;
        }
    qsort(g->ranks, m, sizeof *g->ranks, cmp_int);
    qsort(g->params, m, sizeof *g->params, cmp_double);
    for (size_t i = 0; i < m; i++) {
        if (i == 0 || g->ranks[i] != g->ranks[g->nr - 1]) g->ranks[g->nr++] = g->ranks[i];
        if (i == 0 || !same_params(g->params[i], g->params[g->np - 1]))
            g->params[g->np++] = g->params[i];
    }
    size_t cells = (size_t)g->nr * (size_t)g->np * CS_STRAT_COUNT;
    g->cell = cs_xmalloc((cells ? cells : 1) * sizeof *g->cell);
    for (size_t i = 0; i < cells; i++) g->cell[i] = -1;
    for (size_t i = 0; i < n; i++) {
        if (!usable(&pts[i])) continue;
        long *c = cellp(g, find_ranks(g, pts[i].ranks), find_params(g, pts[i].params),
                        pts[i].strategy);
        if (*c < 0) *c = (long)i;
        g->present[pts[i].strategy] = 1;
    }
}

void cs__grid_free(cs__grid *g)
{
    free(g->ranks);
    free(g->params);
    free(g->cell);
}
