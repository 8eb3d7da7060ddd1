/* SPDX-License-Identifier: MIT */
/*
 * plot_winner.c - the map of the fastest strategy that fits at each (P, N)
 * grid point: one box per grid point, coloured by its winner ("none fits"
 * in grey where every strategy runs out of memory), on a log P axis and a
 * log2 N axis; a box reaches halfway (geometrically) to its neighbours.
 * Where the sweep searched the micro-batch or checkpointing, each box is
 * labelled with what its winner runs: the micro-batch, "f" after it for
 * full recomputation, "s" for selective. With layout lists a winner is a
 * series (strategy x tp x pp): its strategy's colour, a lighter shade per
 * layout, and every box labelled with its layout ("tp8 pp4: 2f").
 */
#include "out/plot_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Cell edges on a log axis: halfway (geometrically) between neighbours. */
static void log_edges(const double *v, int n, int k, double *lo, double *hi)
{
    double f = 1.5;
    *lo = k > 0 ? sqrt(v[k - 1] * v[k]) : (n > 1 ? v[0] * v[0] / sqrt(v[0] * v[1]) : v[0] / f);
    *hi = k + 1 < n ? sqrt(v[k] * v[k + 1])
                    : (n > 1 ? v[n - 1] * v[n - 1] / sqrt(v[n - 2] * v[n - 1]) : v[0] * f);
}

/* The winner of grid point (r, p): a series key, g->nkeys when none
 * fits, -1 when it has no points. */
static int winner(const cs__grid *g, int r, int p)
{
    int best = -1;
    double best_tps = 0;
    for (int st = 0; st < g->nkeys; st++) {
        const cs_sweep_point *pt = cs__grid_at(g, r, p, st);
        if (!pt) continue;
        if (best < 0) best = g->nkeys;
        if (pt->fits && isfinite(pt->tokens_per_s) && pt->tokens_per_s > best_tps) {
            best = st;
            best_tps = pt->tokens_per_s;
        }
    }
    return best;
}

static int layouts_of(const cs__grid *g) { return g->s && cs_sweep_has_layouts(g->s); }

/* "16", "4f" (with layout lists "tp8 pp4: 4f"; searched 0: "tp8 pp4"):
 * the label of what point pt runs. */
static void choice_label(char *buf, size_t len, const cs__grid *g, const cs_sweep_point *pt,
                         int searched)
{
    char lay[48] = "";
    if (layouts_of(g)) snprintf(lay, sizeof lay, "tp%d pp%d%s", pt->tp, pt->pp, searched ? ": " : "");
    if (!searched) {
        snprintf(buf, len, "%s", lay);
        return;
    }
    snprintf(buf, len, "%s%d%s", lay, pt->micro_batch,
             pt->checkpointing == CS_CKPT_FULL ? "f"
             : pt->checkpointing == CS_CKPT_SELECTIVE ? "s"
                                                       : "");
}

/* The winners' choices as labels (one block: x, y, text). */
static void choice_labels(cs__dfile *df, const char *datafile, const cs__grid *g, const int *win,
                          const double *pv, int searched, cs_buf *clauses, int *nclauses)
{
    cs__blk bl = {0};
    for (int r = 0; r < g->nr; r++)
        for (int p = 0; p < g->np; p++) {
            int k = win[r * g->np + p];
            if (k < 0 || k >= g->nkeys) continue;
            char text[80];
            choice_label(text, sizeof text, g, cs__grid_at(g, r, p, k), searched);
            cs__blk_start_row(&bl);
            cs_buf_printf(&bl.b, "%.9g %d \"%s\"\n", pv[p], g->ranks[r], text);
        }
    int idx = cs__blk_end(df, &bl);
    if (idx < 0) return;
    cs__plot_clause(clauses, nclauses);
    cs__plot_quote(clauses, datafile);
    cs_buf_printf(clauses, " index %d using 1:2:3 with labels font ',8' tc rgb '#000000' "
                           "notitle", idx);
}

/* Axes: labels, log scales and the ranges over every box. */
static void axes(cs_buf *b, const cs__grid *g, const double *pv, const double *rv)
{
    cs_buf_printf(b, "set xlabel 'model size P (billions of parameters)'\n"
                     "set ylabel 'number of GPUs N'\nset logscale x\nset logscale y 2\n"
                     "set grid front lc rgb '#ffffff'\n"
                     "set style fill solid 0.9 border lc rgb '#ffffff'\n");
    double xlo, xhi, ylo, yhi, t;
    log_edges(pv, g->np, 0, &xlo, &t);
    log_edges(pv, g->np, g->np - 1, &t, &xhi);
    log_edges(rv, g->nr, 0, &ylo, &t);
    log_edges(rv, g->nr, g->nr - 1, &t, &yhi);
    cs_buf_printf(b, "set xrange [%.9g:%.9g]\nset yrange [%.9g:%.9g]\n", xlo, xhi, ylo, yhi);
    cs__plot_rank_tics(b, "y", g);
}

void cs__plot_winner(const cs__plot_ctx *cx, cs__dfile *df, const char *datafile, cs_buf *b,
                     const char *tmp_out)
{
    const cs__grid *g = cx->g;
    int h = 220 + 48 * g->nr;
    if (h < 460) h = 460;
    if (h > 1400) h = 1400;
    cs__plot_begin(b, cx->png, 960, h, tmp_out);
    char title[320];
    int searched = cx->s && (cx->s->search_micro_batch || cx->s->search_ckpt);
    snprintf(title, sizeof title, "Fastest strategy that fits %s", cx->title_suffix);
    cs__plot_title(b, title);
    double *pv = cs_xmalloc((size_t)g->np * sizeof *pv);
    double *rv = cs_xmalloc((size_t)g->nr * sizeof *rv);
    for (int p = 0; p < g->np; p++) pv[p] = g->params[p] / 1e9;
    for (int r = 0; r < g->nr; r++) rv[r] = g->ranks[r];
    axes(b, g, pv, rv);
    if (searched)
        cs_buf_printf(b, "set xlabel 'model size P (billions of parameters); in each box the "
                         "micro-batch of the winner (f: full recomputation)'\n");
    int *win = cs_xmalloc((size_t)g->nr * (size_t)g->np * sizeof *win);
    for (int r = 0; r < g->nr; r++)
        for (int p = 0; p < g->np; p++) win[r * g->np + p] = winner(g, r, p);
    cs_buf clauses = {0};
    int nclauses = 0;
    for (int k = 0; k <= g->nkeys; k++) {
        cs__blk bl = {0};
        for (int r = 0; r < g->nr; r++)
            for (int p = 0; p < g->np; p++) {
                if (win[r * g->np + p] != k) continue;
                double x0, x1, y0, y1;
                log_edges(pv, g->np, p, &x0, &x1);
                log_edges(rv, g->nr, r, &y0, &y1);
                cs__blk_start_row(&bl);
                cs_buf_printf(&bl.b, "%.9g %d %.9g %.9g %.9g %.9g\n", pv[p], g->ranks[r], x0, x1,
                              y0, y1);
            }
        int idx = cs__blk_end(df, &bl);
        if (idx < 0) continue;
        cs__plot_clause(&clauses, &nclauses);
        cs__plot_quote(&clauses, datafile);
        cs_buf_printf(&clauses, " index %d using 1:2:3:4:5:6 with boxxyerror lc rgb '%s' ", idx,
                      cs__grid_key_color(g, k));
        if (layouts_of(g) && k < g->nkeys) /* a lighter shade per layout */
            cs_buf_printf(&clauses, "fs solid %.2f border lc rgb '#ffffff' ",
                          0.9 - 0.2 * (cs__grid_key_layout(g, k) % 4));
        cs_buf_printf(&clauses, "title ");
        char name[96];
        cs__plot_quote(&clauses, k < g->nkeys ? cs__grid_key_name(g, k, name, sizeof name)
                                              : "none fits");
    }
    if ((searched || layouts_of(g)) && nclauses > 0)
        choice_labels(df, datafile, g, win, pv, searched, &clauses, &nclauses);
    cs__plot_clauses_or_empty(b, &clauses, nclauses);
    cs_buf_free(&clauses);
    free(win);
    free(pv);
    free(rv);
    cs__plot_end(b, 0);
}
