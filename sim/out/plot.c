/* SPDX-License-Identifier: MIT */
/*
 * plot.c - the four crossover plots (plot.h), drawn by gnuplot.
 *
 * The points of a sweep are put on a grid (rank count x model size x
 * strategy; duplicates: the first point wins) and turned into gnuplot data
 * files, one per plot, with one `index` block per drawn series, and one
 * script; all three live in a private mkdtemp directory that is removed
 * afterwards. gnuplot (found on PATH; run with posix_spawn, its stderr kept
 * for the error message) writes each plot to a temporary name next to its
 * final name; only when gnuplot exits 0 are the four renamed, so a failed
 * run leaves no partial plot behind. Numbers are printed with fixed
 * formats and the terminals are given explicit sizes and fonts, so the same
 * points give the same files (gnuplot's SVG carries no date).
 *
 * Conventions the plots share: model size in billions of parameters,
 * memory in GiB (2^30 bytes, as `collsim memory`), bytes on the wire in GB
 * (1e9, as `collsim simulate`), rank counts on a log2 axis, one fixed
 * colour per strategy (Okabe & Ito's colour-blind-safe palette) in every
 * plot. A point that does not fit in GPU memory is drawn hollow on a
 * dashed line; the throughput plot also shades each strategy's OOM range
 * in a thin band at the bottom of the panel (a band starts halfway, on a
 * log scale, between the last point that fits and the first that does not,
 * or at the OOM crossing when the sweep found one there).
 */
#include "out/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "out/report.h"

extern char **environ;

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Okabe & Ito (2008), "Color Universal Design", indexed by cs_strategy:
 * sized by its entries, so a strategy added without a colour fails here. */
static const char *const strategy_color[] = {
    [CS_STRAT_DDP] = "#0072B2",
    [CS_STRAT_ZERO1] = "#56B4E9",
    [CS_STRAT_FSDP_NO_SHARD] = "#009E73",
    [CS_STRAT_FSDP_SHARD_GRAD_OP] = "#E69F00",
    [CS_STRAT_FSDP_FULL_SHARD] = "#D55E00",
    [CS_STRAT_FSDP_HYBRID_SHARD] = "#CC79A7",
};
_Static_assert(sizeof strategy_color / sizeof *strategy_color == CS_STRAT_COUNT,
               "one colour per strategy");
#define NONE_COLOR "#BBBBBB"

static const char *const plot_kinds[4] = {"throughput", "memory", "winner", "wire"};

/* ---- the grid of points -------------------------------------------------- */

typedef struct grid {
    const cs_sweep_point *pts;
    int nr, np;
    int *ranks;        /* sorted, distinct */
    double *params;    /* sorted, distinct (relative tolerance 1e-9) */
    long *cell;        /* [r][p][strategy] -> index into pts, -1 if none */
    int present[CS_STRAT_COUNT];
} grid;

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

static int find_params(const grid *g, double p)
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

static int find_ranks(const grid *g, int r)
{
    const int *hit = bsearch(&r, g->ranks, (size_t)g->nr, sizeof *g->ranks, cmp_int);
    return hit ? (int)(hit - g->ranks) : -1;
}

static long *cellp(const grid *g, int r, int p, int st)
{
    return &g->cell[((size_t)r * (size_t)g->np + (size_t)p) * CS_STRAT_COUNT + (size_t)st];
}

static const cs_sweep_point *at(const grid *g, int r, int p, int st)
{
    long i = *cellp(g, r, p, st);
    return i < 0 ? NULL : &g->pts[i];
}

static int usable(const cs_sweep_point *pt)
{
    return (int)pt->strategy >= 0 && (int)pt->strategy < CS_STRAT_COUNT && pt->ranks > 0 &&
           isfinite(pt->params) && pt->params > 0;
}

static void grid_build(grid *g, const cs_sweep_point *pts, size_t n)
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

static void grid_free(grid *g)
{
    free(g->ranks);
    free(g->params);
    free(g->cell);
}

/* ---- data files: one index block per series ------------------------------ */

typedef struct dfile {
    cs_buf b;
    int blocks;
} dfile;

typedef struct blk {
    cs_buf b;
    int rows, gap;
} blk;

/* A break in the line (one blank line) before the next row, if any. */
static void blk_gap(blk *k)
{
    if (k->rows) k->gap = 1;
}

static void blk_start_row(blk *k)
{
    if (k->gap) cs_buf_printf(&k->b, "\n");
    k->gap = 0;
    k->rows++;
}

static void blk_row(blk *k, double x, double y, int fits)
{
    blk_start_row(k);
    cs_buf_printf(&k->b, "%.9g %.9g %d\n", x, y, fits);
}

/* Appends the block to f (two blank lines end an index block); returns its
 * index, or -1 if it had no rows (gnuplot refuses empty data sets). */
static int blk_end(dfile *f, blk *k)
{
    int idx = -1;
    if (k->rows) {
        cs_buf_printf(&f->b, "%.*s\n\n", (int)k->b.len, k->b.data);
        idx = f->blocks++;
    }
    cs_buf_free(&k->b);
    memset(k, 0, sizeof *k);
    return idx;
}

/* A series of m points sorted by x: the points that fit (lines broken where
 * one does not) and the points that do not, each with its neighbours so the
 * dashed line joins the solid one. */
static void write_series(dfile *f, const double *x, const double *y, const int *fits, int m,
                         int *ifit, int *ioom)
{
    blk a = {0}, o = {0};
    for (int k = 0; k < m; k++) {
        if (fits[k]) blk_row(&a, x[k], y[k], 1);
        else blk_gap(&a);
        if (!fits[k] || (k + 1 < m && !fits[k + 1]) || (k > 0 && !fits[k - 1]))
            blk_row(&o, x[k], y[k], fits[k]);
        else blk_gap(&o);
    }
    *ifit = blk_end(f, &a);
    *ioom = blk_end(f, &o);
}

/* ---- script helpers ------------------------------------------------------ */

/* A gnuplot single-quoted string ('' stands for '). */
static void gq(cs_buf *b, const char *s)
{
    cs_buf_printf(b, "'");
    for (; *s; s++) cs_buf_printf(b, *s == '\'' ? "''" : "%c", *s);
    cs_buf_printf(b, "'");
}

static void clause_sep(cs_buf *b, int *nclauses)
{
    cs_buf_printf(b, "%s", (*nclauses)++ ? ", \\\n     " : "plot ");
}

static void fmt_params(char *out, size_t len, double p)
{
    if (p >= 1e12) snprintf(out, len, "%.3gT", p / 1e12);
    else if (p >= 1e9) snprintf(out, len, "%.3gB", p / 1e9);
    else if (p >= 1e6) snprintf(out, len, "%.3gM", p / 1e6);
    else snprintf(out, len, "%.3g", p);
}

/* Solid line with filled points for what fits, dashed with hollow points
 * for what does not; the strategy's legend entry goes on the first. */
static void series_clauses(cs_buf *b, int *nclauses, const char *file, int ifit, int ioom,
                           cs_strategy st)
{
    const char *col = strategy_color[st];
    if (ifit >= 0) {
        clause_sep(b, nclauses);
        gq(b, file);
        cs_buf_printf(b, " index %d using 1:2 with linespoints lw 2 pt 7 ps 0.7 lc rgb '%s' title ",
                      ifit, col);
        gq(b, cs_strategy_name(st));
    }
    if (ioom >= 0) {
        clause_sep(b, nclauses);
        gq(b, file);
        cs_buf_printf(b, " index %d using 1:2 with lines lw 1.5 dt 2 lc rgb '%s' ", ioom, col);
        if (ifit < 0) {
            cs_buf_printf(b, "title ");
            gq(b, cs_strategy_name(st));
        } else {
            cs_buf_printf(b, "notitle");
        }
        clause_sep(b, nclauses);
        gq(b, file);
        cs_buf_printf(b, " index %d using 1:($3 == 0 ? $2 : 1/0) with points pt 6 ps 0.9 "
                         "lc rgb '%s' notitle", ioom, col);
    }
}

static void oom_key_clause(cs_buf *b, int *nclauses, const char *what)
{
    clause_sep(b, nclauses);
    cs_buf_printf(b, "NaN with linespoints lw 1.5 dt 2 pt 6 lc rgb '#555555' title ");
    gq(b, what);
}

/* An empty panel still needs something to plot. */
static void empty_panel(cs_buf *b)
{
    cs_buf_printf(b, "set label 'no data' at graph 0.5, 0.5 center\n"
                     "set xrange [1:10]\nset yrange [1:10]\nplot 1/0 notitle\n");
}

static void terminal(cs_buf *b, int png, int w, int h)
{
    if (png)
        cs_buf_printf(b,
                      "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                      "  set terminal pngcairo size %d,%d noenhanced font 'Sans,10' background '#ffffff'\n"
                      "} else {\n"
                      "  set terminal png size %d,%d noenhanced background '#ffffff'\n"
                      "}\n",
                      w, h, w, h);
    else
        cs_buf_printf(b, "set terminal svg size %d,%d fixed noenhanced font 'Sans,12' "
                         "background '#ffffff'\n", w, h);
}

static void begin_plot(cs_buf *b, int png, int w, int h, const char *tmp_out)
{
    cs_buf_printf(b, "reset\n");
    terminal(b, png, w, h);
    cs_buf_printf(b, "set output ");
    gq(b, tmp_out);
    cs_buf_printf(b, "\nset grid lc rgb '#dddddd'\nset key outside right top spacing 1.1\n"
                     "set style fill transparent solid 0.35 noborder\n");
}

static void end_plot(cs_buf *b, int multi)
{
    if (multi) cs_buf_printf(b, "unset multiplot\n");
    cs_buf_printf(b, "set output\n");
}

static void layout(int panels, int *rows, int *cols)
{
    int c = 1;
    while (c * c < panels) c++;
    *cols = c;
    *rows = (panels + c - 1) / c;
}

/* x range over the grid's model sizes (billions), a little wider. */
static void params_xrange(cs_buf *b, const grid *g)
{
    double lo = g->params[0] / 1e9, hi = g->params[g->np - 1] / 1e9;
    double pad = g->np > 1 ? 1.15 : 1.5;
    cs_buf_printf(b, "set xrange [%.9g:%.9g]\n", lo / pad, hi * pad);
}

/* ---- the four plots ------------------------------------------------------ */

typedef struct ctx {
    const cs_sweep_spec *s;
    const grid *g;
    const cs_crossing *c;
    size_t nc;
    int png;
    char title_suffix[192]; /* "on <cluster> (<GPU>)" */
} ctx;

/* Points of (ranks r, strategy st) with a positive value, sorted by P. */
typedef double (*value_fn)(const cs_sweep_point *);
static double v_tokens(const cs_sweep_point *p) { return p->tokens_per_s; }
static double v_peak_gib(const cs_sweep_point *p) { return p->peak_bytes / GIB; }
static double v_wire_gb(const cs_sweep_point *p) { return p->wire_bytes / 1e9; }

static int collect_p(const grid *g, int r, cs_strategy st, value_fn f, double *x, double *y,
                     int *fits)
{
    int m = 0;
    for (int p = 0; p < g->np; p++) {
        const cs_sweep_point *pt = at(g, r, p, st);
        if (!pt) continue;
        double v = f(pt);
        if (!(isfinite(v) && v > 0)) continue;
        x[m] = g->params[p] / 1e9;
        y[m] = v;
        fits[m] = pt->fits != 0;
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

/* Throughput (what = 0) or peak memory (what = 1) vs P, a panel per N. */
static void plot_vs_params(const ctx *cx, int what, dfile *df, const char *datafile, cs_buf *b,
                           const char *tmp_out)
{
    const grid *g = cx->g;
    int rows, cols;
    layout(g->nr, &rows, &cols);
    begin_plot(b, cx->png, 760 * cols, 460 * rows, tmp_out);
    char title[320];
    snprintf(title, sizeof title, "%s vs model size %s",
             what ? "Peak memory per GPU" : "Training throughput", cx->title_suffix);
    cs_buf_printf(b, "set multiplot layout %d,%d title ", rows, cols);
    gq(b, title);
    cs_buf_printf(b, " font ',14'\n");
    /* curves fall to the right (throughput) or rise to it (memory): the
     * legend goes in the emptier top corner */
    cs_buf_printf(b, "set key inside top %s opaque box lc rgb '#cccccc' font ',9' spacing 1\n",
                  what ? "left" : "right");
    double *x = cs_xmalloc((size_t)g->np * sizeof *x), *y = cs_xmalloc((size_t)g->np * sizeof *y);
    int *fits = cs_xmalloc((size_t)g->np * sizeof *fits);
    double cap_gib = 0;
    for (size_t i = 0; i < (size_t)g->nr * g->np * CS_STRAT_COUNT; i++)
        if (g->cell[i] >= 0 && g->pts[g->cell[i]].capacity_bytes > 0) {
            cap_gib = g->pts[g->cell[i]].capacity_bytes / GIB;
            break;
        }
    if (cap_gib <= 0 && cx->s) cap_gib = cx->s->cluster.gpu.memory_bytes / GIB;
    for (int r = 0; r < g->nr; r++) {
        cs_buf_printf(b, "unset object\nunset arrow\nunset label\nset autoscale y\n");
        cs_buf_printf(b, "set title 'N = %d GPUs'\n", g->ranks[r]);
        cs_buf_printf(b, "set xlabel 'model size P (billions of parameters)'\n");
        cs_buf_printf(b, "set ylabel %s\n",
                      what ? "'peak memory per GPU (GiB)'" : "'throughput (tokens/s, all GPUs)'");
        cs_buf_printf(b, "set logscale xy\nset format y '%s'\n", what ? "%g" : "%.0s%c");
        params_xrange(b, g);
        cs_buf clauses = {0};
        int nclauses = 0, any_oom = 0, ord = 0;
        for (int st = 0; st < CS_STRAT_COUNT; st++) {
            if (!g->present[st]) continue;
            int m = collect_p(g, r, (cs_strategy)st, what ? v_peak_gib : v_tokens, x, y, fits);
            int ifit, ioom;
            write_series(df, x, y, fits, m, &ifit, &ioom);
            series_clauses(&clauses, &nclauses, datafile, ifit, ioom, (cs_strategy)st);
            if (ioom >= 0) any_oom = 1;
            /* OOM bands (throughput): from the grid, not the drawn points, so
             * a strategy whose OOM points have no throughput still shows */
            if (!what) {
                int prev = -1;
                for (int p = 0; p < g->np; p++) {
                    const cs_sweep_point *pt = at(g, r, p, (cs_strategy)st);
                    if (!pt) continue;
                    if (!pt->fits && (prev < 0 || at(g, r, prev, (cs_strategy)st)->fits)) {
                        /* a run of OOM points starts at p */
                        int last = p, next = -1;
                        for (int q = p + 1; q < g->np; q++) {
                            const cs_sweep_point *qt = at(g, r, q, (cs_strategy)st);
                            if (!qt) continue;
                            if (qt->fits) {
                                next = q;
                                break;
                            }
                            last = q;
                        }
                        double lo = prev < 0 ? g->params[p] / 1.15
                                             : sqrt(g->params[prev] * g->params[p]);
                        double hi = next < 0 ? g->params[last] * 1.15
                                             : sqrt(g->params[last] * g->params[next]);
                        for (size_t k = 0; k < cx->nc; k++) {
                            const cs_crossing *c = &cx->c[k];
                            if (c->kind == CS_CROSS_OOM && c->ranks == g->ranks[r] &&
                                c->a == (cs_strategy)st && prev >= 0 &&
                                c->params > g->params[prev] && c->params < g->params[p])
                                lo = c->params;
                        }
                        cs_buf_printf(b,
                                      "set object rect from %.9g, graph %.3f to %.9g, graph %.3f "
                                      "fc rgb '%s' fs transparent solid 0.45 noborder behind\n",
                                      lo / 1e9, 0.005 + 0.03 * ord, hi / 1e9, 0.03 + 0.03 * ord,
                                      strategy_color[st]);
                        any_oom = 1;
                    }
                    prev = p;
                }
            }
            ord++;
        }
        if (nclauses && any_oom)
            oom_key_clause(&clauses, &nclauses,
                           what ? "does not fit (hollow, dashed)"
                                : "does not fit (hollow, dashed, band)");
        if (what && nclauses) {
            char cap[96];
            snprintf(cap, sizeof cap, "GPU capacity (%.1f GiB)", cap_gib);
            clause_sep(&clauses, &nclauses);
            cs_buf_printf(&clauses, "%.9g with lines lw 1.5 dt 4 lc rgb 'black' title ", cap_gib);
            gq(&clauses, cap);
        }
        if (!what && nclauses) {
            /* crossings of this panel: throughput points, OOM lines */
            blk k = {0};
            for (size_t i = 0; i < cx->nc; i++) {
                const cs_crossing *c = &cx->c[i];
                if (c->ranks != g->ranks[r] || !(c->params > 0)) continue;
                double px = c->params / 1e9;
                if (c->kind == CS_CROSS_OOM) {
                    if ((int)c->a >= 0 && (int)c->a < CS_STRAT_COUNT && px >= g->params[0] / 1e9 / 1.15 &&
                        px <= g->params[g->np - 1] / 1e9 * 1.15)
                        cs_buf_printf(b, "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead "
                                         "dt 3 lw 1.2 lc rgb '%s'\n", px, px, strategy_color[c->a]);
                    continue;
                }
                if ((int)c->a < 0 || (int)c->a >= CS_STRAT_COUNT) continue;
                int m = collect_p(g, r, c->a, v_tokens, x, y, fits);
                double py = interp(x, y, m, px);
                if (!isfinite(py)) continue;
                char lab[32];
                fmt_params(lab, sizeof lab, c->params);
                blk_start_row(&k);
                cs_buf_printf(&k.b, "%.9g %.9g \"%s\"\n", px, py, lab);
            }
            int ic = blk_end(df, &k);
            if (ic >= 0) {
                clause_sep(&clauses, &nclauses);
                gq(&clauses, datafile);
                cs_buf_printf(&clauses, " index %d using 1:2 with points pt 7 ps 1.4 lc rgb 'black' "
                                        "title 'throughput crossover (P)'", ic);
                clause_sep(&clauses, &nclauses);
                gq(&clauses, datafile);
                cs_buf_printf(&clauses, " index %d using 1:2:3 with labels offset 0,1.1 "
                                        "font ',9' notitle", ic);
            }
        }
        if (nclauses) cs_buf_printf(b, "%.*s\n", (int)clauses.len, clauses.data);
        else empty_panel(b);
        cs_buf_free(&clauses);
    }
    free(x);
    free(y);
    free(fits);
    end_plot(b, 1);
}

/* Cell edges on a log axis: halfway (geometrically) between neighbours. */
static void log_edges(const double *v, int n, int k, double *lo, double *hi)
{
    double f = 1.5;
    *lo = k > 0 ? sqrt(v[k - 1] * v[k]) : (n > 1 ? v[0] * v[0] / sqrt(v[0] * v[1]) : v[0] / f);
    *hi = k + 1 < n ? sqrt(v[k] * v[k + 1])
                    : (n > 1 ? v[n - 1] * v[n - 1] / sqrt(v[n - 2] * v[n - 1]) : v[0] * f);
}

static void plot_winner(const ctx *cx, dfile *df, const char *datafile, cs_buf *b,
                        const char *tmp_out)
{
    const grid *g = cx->g;
    int h = 220 + 48 * g->nr;
    if (h < 460) h = 460;
    if (h > 1400) h = 1400;
    begin_plot(b, cx->png, 960, h, tmp_out);
    char title[320];
    snprintf(title, sizeof title, "Fastest strategy that fits %s", cx->title_suffix);
    cs_buf_printf(b, "set title ");
    gq(b, title);
    cs_buf_printf(b, " font ',14'\nset xlabel 'model size P (billions of parameters)'\n"
                     "set ylabel 'number of GPUs N'\nset logscale x\nset logscale y 2\n"
                     "set grid front lc rgb '#ffffff'\nset style fill solid 0.9 border lc rgb '#ffffff'\n");
    double *pv = cs_xmalloc((size_t)g->np * sizeof *pv), *rv = cs_xmalloc((size_t)g->nr * sizeof *rv);
    for (int p = 0; p < g->np; p++) pv[p] = g->params[p] / 1e9;
    for (int r = 0; r < g->nr; r++) rv[r] = g->ranks[r];
    double xlo, xhi, ylo, yhi, t;
    log_edges(pv, g->np, 0, &xlo, &t);
    log_edges(pv, g->np, g->np - 1, &t, &xhi);
    log_edges(rv, g->nr, 0, &ylo, &t);
    log_edges(rv, g->nr, g->nr - 1, &t, &yhi);
    cs_buf_printf(b, "set xrange [%.9g:%.9g]\nset yrange [%.9g:%.9g]\n", xlo, xhi, ylo, yhi);
    if (g->nr <= 24) {
        cs_buf_printf(b, "set ytics (");
        for (int r = 0; r < g->nr; r++) cs_buf_printf(b, "%s%d", r ? ", " : "", g->ranks[r]);
        cs_buf_printf(b, ")\n");
    }
    /* winner per cell: CS_STRAT_COUNT = none fits, -1 = no points */
    int *win = cs_xmalloc((size_t)g->nr * (size_t)g->np * sizeof *win);
    for (int r = 0; r < g->nr; r++)
        for (int p = 0; p < g->np; p++) {
            int best = -1;
            double best_tps = 0;
            for (int st = 0; st < CS_STRAT_COUNT; st++) {
                const cs_sweep_point *pt = at(g, r, p, (cs_strategy)st);
                if (!pt) continue;
                if (best < 0) best = CS_STRAT_COUNT;
                if (pt->fits && isfinite(pt->tokens_per_s) && pt->tokens_per_s > best_tps) {
                    best = st;
                    best_tps = pt->tokens_per_s;
                }
            }
            win[r * g->np + p] = best;
        }
    cs_buf clauses = {0};
    int nclauses = 0;
    for (int k = 0; k <= CS_STRAT_COUNT; k++) {
        blk bl = {0};
        for (int r = 0; r < g->nr; r++)
            for (int p = 0; p < g->np; p++) {
                if (win[r * g->np + p] != k) continue;
                double x0, x1, y0, y1;
                log_edges(pv, g->np, p, &x0, &x1);
                log_edges(rv, g->nr, r, &y0, &y1);
                blk_start_row(&bl);
                cs_buf_printf(&bl.b, "%.9g %d %.9g %.9g %.9g %.9g\n", pv[p], g->ranks[r], x0, x1,
                              y0, y1);
            }
        int idx = blk_end(df, &bl);
        if (idx < 0) continue;
        clause_sep(&clauses, &nclauses);
        gq(&clauses, datafile);
        cs_buf_printf(&clauses, " index %d using 1:2:3:4:5:6 with boxxyerror lc rgb '%s' title ", idx,
                      k < CS_STRAT_COUNT ? strategy_color[k] : NONE_COLOR);
        gq(&clauses, k < CS_STRAT_COUNT ? cs_strategy_name((cs_strategy)k) : "none fits");
    }
    if (nclauses) cs_buf_printf(b, "%.*s\n", (int)clauses.len, clauses.data);
    else empty_panel(b);
    cs_buf_free(&clauses);
    free(win);
    free(pv);
    free(rv);
    end_plot(b, 0);
}

static void plot_wire(const ctx *cx, dfile *df, const char *datafile, cs_buf *b,
                      const char *tmp_out)
{
    const grid *g = cx->g;
    int pmid = (g->np - 1) / 2;
    begin_plot(b, cx->png, 960, 520, tmp_out);
    char title[400], lab[32];
    fmt_params(lab, sizeof lab, g->params[pmid]);
    snprintf(title, sizeof title, "Bytes on the wire per rank, P = %s, %s", lab,
             cx->title_suffix);
    cs_buf_printf(b, "set title ");
    gq(b, title);
    cs_buf_printf(b, " font ',14'\nset xlabel 'number of GPUs N'\n"
                     "set ylabel 'bytes sent per rank per iteration (GB)'\n"
                     "set logscale x 2\nset logscale y\n");
    if (g->nr <= 24) {
        cs_buf_printf(b, "set xtics (");
        for (int r = 0; r < g->nr; r++) cs_buf_printf(b, "%s%d", r ? ", " : "", g->ranks[r]);
        cs_buf_printf(b, ")\n");
    }
    double lo = g->ranks[0], hi = g->ranks[g->nr - 1];
    cs_buf_printf(b, "set xrange [%.9g:%.9g]\n", lo / (g->nr > 1 ? 1.2 : 1.5),
                  hi * (g->nr > 1 ? 1.2 : 1.5));
    double *x = cs_xmalloc((size_t)g->nr * sizeof *x), *y = cs_xmalloc((size_t)g->nr * sizeof *y);
    int *fits = cs_xmalloc((size_t)g->nr * sizeof *fits);
    cs_buf clauses = {0};
    int nclauses = 0, any_oom = 0;
    for (int st = 0; st < CS_STRAT_COUNT; st++) {
        if (!g->present[st]) continue;
        int m = 0;
        for (int r = 0; r < g->nr; r++) {
            const cs_sweep_point *pt = at(g, r, pmid, (cs_strategy)st);
            if (!pt || !(isfinite(pt->wire_bytes) && pt->wire_bytes > 0)) continue;
            x[m] = g->ranks[r];
            y[m] = v_wire_gb(pt);
            fits[m] = pt->fits != 0;
            m++;
        }
        int ifit, ioom;
        write_series(df, x, y, fits, m, &ifit, &ioom);
        series_clauses(&clauses, &nclauses, datafile, ifit, ioom, (cs_strategy)st);
        if (ioom >= 0) any_oom = 1;
    }
    if (nclauses && any_oom) oom_key_clause(&clauses, &nclauses, "does not fit (hollow, dashed)");
    if (nclauses) cs_buf_printf(b, "%.*s\n", (int)clauses.len, clauses.data);
    else empty_panel(b);
    cs_buf_free(&clauses);
    free(x);
    free(y);
    free(fits);
    end_plot(b, 0);
}

/* ---- running gnuplot ----------------------------------------------------- */

/* The gnuplot executable on PATH (as execvp would search it), or NULL.
 * Caller frees. */
static char *find_gnuplot(void)
{
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    const char *p = path;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char *cand = cs_xmalloc(len + 16);
        if (len == 0) snprintf(cand, len + 16, "./gnuplot");
        else snprintf(cand, len + 16, "%.*s/gnuplot", (int)len, p);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) return cand;
        free(cand);
        if (!end) return NULL;
        p = end + 1;
    }
}

/* gnuplot's error line ('"plots.gp" line N: message', not a warning), else
 * the last line it printed. */
static void first_error_line(const char *errfile, char *out, size_t len)
{
    snprintf(out, len, "no message");
    FILE *f = fopen(errfile, "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        size_t l = strspn(line, " \t^");
        if (!line[l]) continue;
        l = strlen(line);
        if (l >= len) l = len - 1;
        memcpy(out, line, l);
        out[l] = 0;
        if (strstr(line, "\" line ") && !strstr(line, "warning:")) break;
    }
    fclose(f);
}

static int run_gnuplot(const char *exe, const char *script, const char *errfile, char *msg,
                       size_t len)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {(char *)"gnuplot", (char *)script, NULL};
    pid_t pid;
    int e = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e) {
        snprintf(msg, len, "cannot run %s: %s", exe, strerror(e));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(msg, len, "waiting for gnuplot: %s", strerror(errno));
            return -1;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    char line[400];
    first_error_line(errfile, line, sizeof line);
    if (WIFEXITED(status))
        snprintf(msg, len, "gnuplot failed (exit %d): %s", WEXITSTATUS(status), line);
    else
        snprintf(msg, len, "gnuplot killed by signal %d: %s", WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                 line);
    return -1;
}

/* ---- entry point --------------------------------------------------------- */

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = cs_xmalloc(n);
    snprintf(s, n, "%s/%s", a, b);
    return s;
}

int cs_plot_crossover(const cs_sweep_spec *s, const cs_sweep_point *pts, size_t n,
                      const cs_crossing *c, size_t nc, const char *path, cs_diag *d)
{
    if (!path || strchr(path, '\n'))
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "plot file name missing or invalid");
    size_t plen = strlen(path);
    int png;
    if (plen > 4 && !strcmp(path + plen - 4, ".svg")) png = 0;
    else if (plen > 4 && !strcmp(path + plen - 4, ".png")) png = 1;
    else
        return cs_diag_set(d, CS_EINVAL, path, 0, 0,
                           "plot file must end in .svg or .png (the extension picks the format)");
    if (!c) nc = 0;
    grid g;
    grid_build(&g, pts, n);
    if (g.nr == 0 || g.np == 0) {
        grid_free(&g);
        return cs_diag_set(d, CS_EINVAL, path, 0, 0, "nothing to plot: no sweep points");
    }
    char *exe = find_gnuplot();
    if (!exe) {
        grid_free(&g);
        return cs_diag_set(d, CS_EIO, NULL, 0, 0,
                           "gnuplot not found: install gnuplot-nox (tools/install-deps.sh)");
    }

    int rc = 0;
    const char *ext = png ? "png" : "svg";
    char *finals[4] = {0}, *tmps[4] = {0}, *datas[4] = {0};
    char *script = NULL, *errfile = NULL, *dir = NULL;
    int created[4] = {0};
    const char *tmpbase = getenv("TMPDIR");
    if (!tmpbase || !*tmpbase) tmpbase = "/tmp";
    dir = join(tmpbase, "collsim-plot-XXXXXX");
    if (!mkdtemp(dir)) {
        rc = cs_diag_set(d, CS_EIO, tmpbase, 0, 0, "cannot create a temporary directory: %s",
                         strerror(errno));
        free(dir);
        dir = NULL;
        goto out;
    }
    script = join(dir, "plots.gp");
    errfile = join(dir, "gnuplot.err");
    for (int k = 0; k < 4; k++) {
        size_t len = plen + 64;
        finals[k] = cs_xmalloc(len);
        snprintf(finals[k], len, "%.*s-%s.%s", (int)(plen - 4), path, plot_kinds[k], ext);
        tmps[k] = cs_xmalloc(len + 32);
        snprintf(tmps[k], len + 32, "%s.tmp%ld", finals[k], (long)getpid());
        char name[32];
        snprintf(name, sizeof name, "%s.dat", plot_kinds[k]);
        datas[k] = join(dir, name);
        /* create the output now: a missing directory is reported by name */
        FILE *f = fopen(tmps[k], "wb");
        if (!f || fclose(f)) {
            rc = cs_diag_set(d, CS_EIO, finals[k], 0, 0, "cannot create output file: %s",
                             strerror(errno));
            goto out;
        }
        created[k] = 1;
    }

    ctx cx = {.s = s, .g = &g, .c = c, .nc = nc, .png = png};
    if (s && s->cluster.gpu.model[0])
        snprintf(cx.title_suffix, sizeof cx.title_suffix, "on %s (%s)", s->cluster.name,
                 s->cluster.gpu.model);
    else
        snprintf(cx.title_suffix, sizeof cx.title_suffix, "on %s", s ? s->cluster.name : "?");
    cs_buf sc = {0};
    dfile df[4] = {{{0}, 0}};
    plot_vs_params(&cx, 0, &df[0], datas[0], &sc, tmps[0]);
    plot_vs_params(&cx, 1, &df[1], datas[1], &sc, tmps[1]);
    plot_winner(&cx, &df[2], datas[2], &sc, tmps[2]);
    plot_wire(&cx, &df[3], datas[3], &sc, tmps[3]);
    for (int k = 0; k < 4 && rc == 0; k++) rc = cs_buf_write(&df[k].b, datas[k], d);
    if (rc == 0) rc = cs_buf_write(&sc, script, d);
    for (int k = 0; k < 4; k++) cs_buf_free(&df[k].b);
    cs_buf_free(&sc);
    if (rc) goto out;

    char msg[512];
    if (run_gnuplot(exe, script, errfile, msg, sizeof msg)) {
        rc = cs_diag_set(d, CS_EIO, NULL, 0, 0, "%s", msg);
        goto out;
    }
    for (int k = 0; k < 4; k++) {
        if (rename(tmps[k], finals[k]) != 0) {
            rc = cs_diag_set(d, CS_EIO, finals[k], 0, 0, "cannot write output file: %s",
                             strerror(errno));
            goto out;
        }
        created[k] = 0;
    }

out:
    for (int k = 0; k < 4; k++) {
        if (created[k]) remove(tmps[k]);
        if (datas[k]) remove(datas[k]);
        free(finals[k]);
        free(tmps[k]);
        free(datas[k]);
    }
    if (script) remove(script);
    if (errfile) remove(errfile);
    if (dir) rmdir(dir);
    free(script);
    free(errfile);
    free(dir);
    free(exe);
    grid_free(&g);
    return rc;
}
