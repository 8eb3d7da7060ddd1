/* SPDX-License-Identifier: MIT */
/*
 * plot_params.c - the two plots against model size P (log-log, one panel
 * per rank count N, a series per strategy): training throughput and peak
 * memory per GPU. They differ in one row each (params_plot): labels, the
 * legend's corner, and their marks: the throughput plot shades each
 * strategy's OOM range in a thin band at the bottom of the panel and marks
 * the crossings (throughput crossovers as labelled black dots, OOM
 * crossings as dotted vertical lines); the memory plot draws the GPU
 * capacity. A band starts halfway, on a log scale, between the last point
 * that fits and the first that does not, or at the OOM crossing when the
 * sweep found one there.
 */
#include "out/plot_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef double (*value_fn)(const cs_sweep_point *);
static double v_tokens(const cs_sweep_point *p) { return p->tokens_per_s; }
static double v_peak_gib(const cs_sweep_point *p) { return p->peak_bytes / CS__GIB; }

typedef struct params_plot {
    const char *title, *key_corner, *ylabel, *yformat;
    value_fn value;
    const char *oom_key; /* the legend entry of what does not fit */
    int marks_oom;       /* OOM bands and crossing marks (throughput) */
    int capacity;        /* the GPU capacity line (memory) */
} params_plot;

/* curves fall to the right (throughput) or rise to it (memory): the legend
 * goes in the emptier top corner */
static const params_plot throughput = {
    "Training throughput", "right", "'throughput (tokens/s, all GPUs)'", "%.0s%c", v_tokens,
    "does not fit (hollow, dashed, band)", 1, 0,
};
static const params_plot memory = {
    "Peak memory per GPU", "left", "'peak memory per GPU (GiB)'", "%g", v_peak_gib,
    "does not fit (hollow, dashed)", 0, 1,
};

/* Scratch for one series: x, y and fits of up to np points. */
typedef struct series {
    double *x, *y;
    int *fits;
} series;

/* Points of (ranks r, series key st) with a positive value, sorted by P. */
static int collect_p(const cs__grid *g, int r, int st, value_fn f, series *s)
{
    int m = 0;
    for (int p = 0; p < g->np; p++) {
        const cs_sweep_point *pt = cs__grid_at(g, r, p, st);
        if (!pt) continue;
        double v = f(pt);
        if (!(isfinite(v) && v > 0)) continue;
        s->x[m] = g->params[p] / 1e9;
        s->y[m] = v;
        s->fits[m] = pt->fits != 0;
        m++;
    }
    return m;
}

/* log-log interpolation of the series at x; NaN outside it. */
static double interp(const double *x, const double *y, int m, double at_x)
{
    for (int k = 0; k + 1 < m; k++)
        if (x[k] <= at_x && at_x <= x[k + 1]) {
            if (x[k + 1] == x[k]) return y[k];
            double t = log(at_x / x[k]) / log(x[k + 1] / x[k]);
            return exp(log(y[k]) + t * (log(y[k + 1]) - log(y[k])));
        }
    if (m == 1 && x[0] == at_x) return y[0];
    return NAN;
}

static void layout(int panels, int *rows, int *cols)
{
    int c = 1;
    while (c * c < panels) c++;
    *cols = c;
    *rows = (panels + c - 1) / c;
}

/* x range over the grid's model sizes (billions), a little wider. */
static void params_xrange(cs_buf *b, const cs__grid *g)
{
    double lo = g->params[0] / 1e9, hi = g->params[g->np - 1] / 1e9;
    double pad = g->np > 1 ? 1.15 : 1.5;
    cs_buf_printf(b, "set xrange [%.9g:%.9g]\n", lo / pad, hi * pad);
}

/* The OOM bands of series key st in panel r, the ord-th series drawn, from
 * the grid, not the drawn points, so a series whose OOM points have no
 * throughput still shows. Returns whether it drew one. */
static int oom_bands(const cs__plot_ctx *cx, int r, int st, int ord, cs_buf *b)
{
    const cs__grid *g = cx->g;
    int prev = -1, any = 0;
    for (int p = 0; p < g->np; p++) {
        const cs_sweep_point *pt = cs__grid_at(g, r, p, st);
        if (!pt) continue;
        if (!pt->fits && (prev < 0 || cs__grid_at(g, r, prev, st)->fits)) {
            /* a run of OOM points starts at p */
            int last = p, next = -1;
            for (int q = p + 1; q < g->np; q++) {
                const cs_sweep_point *qt = cs__grid_at(g, r, q, st);
                if (!qt) continue;
                if (qt->fits) {
                    next = q;
                    break;
                }
                last = q;
            }
            double lo = prev < 0 ? g->params[p] / 1.15 : sqrt(g->params[prev] * g->params[p]);
            double hi = next < 0 ? g->params[last] * 1.15 : sqrt(g->params[last] * g->params[next]);
            for (size_t k = 0; k < cx->nc; k++) {
                const cs_crossing *c = &cx->c[k];
                if (c->kind == CS_CROSS_OOM && c->ranks == g->ranks[r] &&
                    cs__grid_key(g, c->a, c->tp_a, c->pp_a) == st && prev >= 0 &&
                    c->params > g->params[prev] && c->params < g->params[p])
                    lo = c->params;
            }
            cs_buf_printf(b,
                          "set object rect from %.9g, graph %.3f to %.9g, graph %.3f "
                          "fc rgb '%s' fs transparent solid 0.45 noborder behind\n",
                          lo / 1e9, 0.005 + 0.03 * ord, hi / 1e9, 0.03 + 0.03 * ord,
                          cs__grid_key_color(g, st));
            any = 1;
        }
        prev = p;
    }
    return any;
}

/* The crossings of panel r: OOM crossings as arrows in the script,
 * throughput crossovers as a labelled block of points. */
static void crossing_marks(const cs__plot_ctx *cx, int r, cs__dfile *df, const char *datafile,
                           cs_buf *b, cs_buf *clauses, int *nclauses, series *s)
{
    const cs__grid *g = cx->g;
    cs__blk k = {0};
    for (size_t i = 0; i < cx->nc; i++) {
        const cs_crossing *c = &cx->c[i];
        if (c->ranks != g->ranks[r] || !(c->params > 0)) continue;
        double px = c->params / 1e9;
        int ka = cs__grid_key(g, c->a, c->tp_a, c->pp_a);
        if (c->kind == CS_CROSS_OOM) {
            if (ka >= 0 && px >= g->params[0] / 1e9 / 1.15 &&
                px <= g->params[g->np - 1] / 1e9 * 1.15)
                cs_buf_printf(b, "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead "
                                 "dt 3 lw 1.2 lc rgb '%s'\n", px, px, cs__grid_key_color(g, ka));
            continue;
        }
        if (ka < 0) continue;
        int m = collect_p(g, r, ka, v_tokens, s);
        double py = interp(s->x, s->y, m, px);
        if (!isfinite(py)) continue;
        char lab[32];
        cs__plot_fmt_params(lab, sizeof lab, c->params);
        cs__blk_start_row(&k);
        cs_buf_printf(&k.b, "%.9g %.9g \"%s\"\n", px, py, lab);
    }
    int ic = cs__blk_end(df, &k);
    if (ic < 0) return;
    cs__plot_clause(clauses, nclauses);
    cs__plot_quote(clauses, datafile);
    cs_buf_printf(clauses, " index %d using 1:2 with points pt 7 ps 1.4 lc rgb 'black' "
                           "title 'throughput crossover (P)'", ic);
    cs__plot_clause(clauses, nclauses);
    cs__plot_quote(clauses, datafile);
    cs_buf_printf(clauses, " index %d using 1:2:3 with labels offset 0,1.1 font ',9' notitle", ic);
}

/* One panel: the points of rank count r. */
static void panel(const cs__plot_ctx *cx, const params_plot *pp, int r, cs__dfile *df,
                  const char *datafile, cs_buf *b, series *s, double cap_gib)
{
    const cs__grid *g = cx->g;
    cs_buf_printf(b, "unset object\nunset arrow\nunset label\nset autoscale y\n");
    cs_buf_printf(b, "set title 'N = %d GPUs'\n", g->ranks[r]);
    cs_buf_printf(b, "set xlabel 'model size P (billions of parameters)'\n");
    cs_buf_printf(b, "set ylabel %s\n", pp->ylabel);
    cs_buf_printf(b, "set logscale xy\nset format y '%s'\n", pp->yformat);
    params_xrange(b, g);
    cs_buf clauses = {0};
    int nclauses = 0, any_oom = 0, ord = 0;
    for (int st = 0; st < g->nkeys; st++) {
        if (!g->present[st]) continue;
        int m = collect_p(g, r, st, pp->value, s);
        int ifit, ioom;
        cs__plot_series(df, s->x, s->y, s->fits, m, &ifit, &ioom);
        cs__plot_series_clauses(&clauses, &nclauses, datafile, ifit, ioom, g, st);
        if (ioom >= 0) any_oom = 1;
        if (pp->marks_oom && oom_bands(cx, r, st, ord, b)) any_oom = 1;
        ord++;
    }
    if (nclauses && any_oom) cs__plot_oom_key(&clauses, &nclauses, pp->oom_key);
    if (pp->capacity && nclauses) {
        char cap[96];
        snprintf(cap, sizeof cap, "GPU capacity (%.1f GiB)", cap_gib);
        cs__plot_clause(&clauses, &nclauses);
        cs_buf_printf(&clauses, "%.9g with lines lw 1.5 dt 4 lc rgb 'black' title ", cap_gib);
        cs__plot_quote(&clauses, cap);
    }
    if (pp->marks_oom && nclauses) crossing_marks(cx, r, df, datafile, b, &clauses, &nclauses, s);
    cs__plot_clauses_or_empty(b, &clauses, nclauses);
    cs_buf_free(&clauses);
}

/* The GPU capacity in GiB: the first point's, else the cluster's. */
static double capacity_gib(const cs__plot_ctx *cx)
{
    const cs__grid *g = cx->g;
    for (size_t i = 0; i < (size_t)g->nr * g->np * (size_t)g->nkeys; i++)
        if (g->cell[i] >= 0 && g->pts[g->cell[i]].capacity_bytes > 0)
            return g->pts[g->cell[i]].capacity_bytes / CS__GIB;
    return cx->s ? cx->s->cluster.gpu.memory_bytes / CS__GIB : 0;
}

static void plot_vs_params(const cs__plot_ctx *cx, const params_plot *pp, cs__dfile *df,
                           const char *datafile, cs_buf *b, const char *tmp_out)
{
    const cs__grid *g = cx->g;
    int rows, cols;
    layout(g->nr, &rows, &cols);
    cs__plot_begin(b, cx->png, 760 * cols, 460 * rows, tmp_out);
    char title[320];
    snprintf(title, sizeof title, "%s vs model size %s", pp->title, cx->title_suffix);
    cs_buf_printf(b, "set multiplot layout %d,%d title ", rows, cols);
    cs__plot_quote(b, title);
    cs_buf_printf(b, " font ',14'\n");
    cs_buf_printf(b, "set key inside top %s opaque box lc rgb '#cccccc' font ',9' spacing 1\n",
                  pp->key_corner);
    series s = {cs_xmalloc((size_t)g->np * sizeof *s.x), cs_xmalloc((size_t)g->np * sizeof *s.y),
                cs_xmalloc((size_t)g->np * sizeof *s.fits)};
    double cap_gib = capacity_gib(cx);
    for (int r = 0; r < g->nr; r++) panel(cx, pp, r, df, datafile, b, &s, cap_gib);
    free(s.x);
    free(s.y);
    free(s.fits);
    cs__plot_end(b, 1);
}

void cs__plot_throughput(const cs__plot_ctx *cx, cs__dfile *df, const char *datafile, cs_buf *b,
                         const char *tmp_out)
{
    plot_vs_params(cx, &throughput, df, datafile, b, tmp_out);
}

void cs__plot_memory(const cs__plot_ctx *cx, cs__dfile *df, const char *datafile, cs_buf *b,
                     const char *tmp_out)
{
    plot_vs_params(cx, &memory, df, datafile, b, tmp_out);
}
