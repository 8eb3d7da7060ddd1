/* SPDX-License-Identifier: MIT */
/*
 * plot_grid.c - a sweep's points on the grid the plots read: distinct rank
 * counts and model sizes, sorted (sizes equal within a relative 1e-9 are
 * one), and per (rank count, size, series key) the index of its point, or
 * -1. Points without a valid strategy, rank count, size or listed layout,
 * and those whose layout does not apply, are left out; of duplicates the first wins. Lookups are binary searches,
 * O(log n).
 */
#include "out/plot_impl.h"

#include <math.h>
#include <stdio.h>
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

static long *cellp(const cs__grid *g, int r, int p, int k)
{
    return &g->cell[((size_t)r * (size_t)g->np + (size_t)p) * (size_t)g->nkeys + (size_t)k];
}

const cs_sweep_point *cs__grid_at(const cs__grid *g, int r, int p, int k)
{
    long i = *cellp(g, r, p, k);
    return i < 0 ? NULL : &g->pts[i];
}

int cs__grid_key(const cs__grid *g, cs_strategy st, int tp, int pp)
{
    if ((int)st < 0 || (int)st >= CS_STRAT_COUNT) return -1;
    int li = g->s ? cs_sweep_layout_index(g->s, tp, pp) : 0;
    return li < 0 ? -1 : (int)st * g->nlayouts + li;
}

cs_strategy cs__grid_key_strategy(const cs__grid *g, int k) { return (cs_strategy)(k / g->nlayouts); }

int cs__grid_key_layout(const cs__grid *g, int k) { return k % g->nlayouts; }

const char *cs__grid_key_name(const cs__grid *g, int k, char *buf, size_t n)
{
    cs_strategy st = cs__grid_key_strategy(g, k);
    if (!g->s || !cs_sweep_has_layouts(g->s)) {
        snprintf(buf, n, "%s", cs_strategy_name(st));
        return buf;
    }
    /* the layout's degrees: a series of that strategy at index k's layout */
    cs_sweep_series se = cs_sweep_series_at(g->s, cs__grid_key_layout(g, k));
    return cs_sweep_series_name(g->s, st, se.tp, se.pp, buf, n);
}

const char *cs__grid_key_color(const cs__grid *g, int k)
{
    return cs__plot_color(k >= g->nkeys ? CS_STRAT_COUNT : (int)cs__grid_key_strategy(g, k));
}

/* A point of a listed series that ran (one whose layout does not apply
 * is no point of the plots: no line, band or box). */
static int usable(const cs__grid *g, const cs_sweep_point *pt)
{
    if (g->s && cs_sweep_has_layouts(g->s) && !pt->applies) return 0;
    return cs__grid_key(g, pt->strategy, pt->tp, pt->pp) >= 0 && pt->ranks > 0 &&
           isfinite(pt->params) && pt->params > 0;
}

void cs__grid_build(cs__grid *g, const cs_sweep_spec *s, const cs_sweep_point *pts, size_t n)
{
    memset(g, 0, sizeof *g);
    g->pts = pts;
    g->s = s;
    g->nlayouts = s ? cs_sweep_nlayouts(s) : 1;
    g->nkeys = CS_STRAT_COUNT * g->nlayouts;
    g->present = cs_xcalloc((size_t)g->nkeys, sizeof *g->present);
    g->ranks = cs_xmalloc((n ? n : 1) * sizeof *g->ranks);
    g->params = cs_xmalloc((n ? n : 1) * sizeof *g->params);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (usable(g, &pts[i])) {
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
    size_t cells = (size_t)g->nr * (size_t)g->np * (size_t)g->nkeys;
    g->cell = cs_xmalloc((cells ? cells : 1) * sizeof *g->cell);
    for (size_t i = 0; i < cells; i++) g->cell[i] = -1;
    for (size_t i = 0; i < n; i++) {
        if (!usable(g, &pts[i])) continue;
        int k = cs__grid_key(g, pts[i].strategy, pts[i].tp, pts[i].pp);
        long *c = cellp(g, find_ranks(g, pts[i].ranks), find_params(g, pts[i].params), k);
        if (*c < 0) *c = (long)i;
        g->present[k] = 1;
    }
}

void cs__grid_free(cs__grid *g)
{
    free(g->present);
    free(g->ranks);
    free(g->params);
    free(g->cell);
}
