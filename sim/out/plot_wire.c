/* SPDX-License-Identifier: MIT */
/*
 * plot_wire.c - bytes each rank sends per iteration (GB, 1e9 bytes, as
 * `collsim simulate`) against the rank count N (log2) per strategy, at the
 * middle model size of the grid; what does not fit is drawn hollow on a
 * dashed line, as in the other plots.
 */
#include "out/plot_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The points of series key st at P index p with bytes on the wire, by N. */
static int collect_n(const cs__grid *g, int p, int st, double *x, double *y, int *fits)
{
    int m = 0;
    for (int r = 0; r < g->nr; r++) {
        const cs_sweep_point *pt = cs__grid_at(g, r, p, st);
        if (!pt || !(isfinite(pt->wire_bytes) && pt->wire_bytes > 0)) continue;
        x[m] = g->ranks[r];
        y[m] = pt->wire_bytes / 1e9;
        fits[m] = pt->fits != 0;
        m++;
    }
    return m;
}

void cs__plot_wire(const cs__plot_ctx *cx, cs__dfile *df, const char *datafile, cs_buf *b,
                   const char *tmp_out)
{
    const cs__grid *g = cx->g;
    int pmid = (g->np - 1) / 2;
    cs__plot_begin(b, cx->png, 960, 520, tmp_out);
    char title[400], lab[32];
    cs__plot_fmt_params(lab, sizeof lab, g->params[pmid]);
    snprintf(title, sizeof title, "Bytes on the wire per rank, P = %s, %s", lab,
             cx->title_suffix);
    cs__plot_title(b, title);
    cs_buf_printf(b, "set xlabel 'number of GPUs N'\n"
                     "set ylabel 'bytes sent per rank per iteration (GB)'\n"
                     "set logscale x 2\nset logscale y\n");
    cs__plot_rank_tics(b, "x", g);
    double lo = g->ranks[0], hi = g->ranks[g->nr - 1];
    cs_buf_printf(b, "set xrange [%.9g:%.9g]\n", lo / (g->nr > 1 ? 1.2 : 1.5),
                  hi * (g->nr > 1 ? 1.2 : 1.5));
    double *x = cs_xmalloc((size_t)g->nr * sizeof *x), *y = cs_xmalloc((size_t)g->nr * sizeof *y);
    int *fits = cs_xmalloc((size_t)g->nr * sizeof *fits);
    cs_buf clauses = {0};
    int nclauses = 0, any_oom = 0;
    for (int st = 0; st < g->nkeys; st++) {
        if (!g->present[st]) continue;
        int m = collect_n(g, pmid, st, x, y, fits);
        int ifit, ioom;
        cs__plot_series(df, x, y, fits, m, &ifit, &ioom);
        cs__plot_series_clauses(&clauses, &nclauses, datafile, ifit, ioom, g, st);
        if (ioom >= 0) any_oom = 1;
    }
    if (nclauses && any_oom) cs__plot_oom_key(&clauses, &nclauses, "does not fit (hollow, dashed)");
    cs__plot_clauses_or_empty(b, &clauses, nclauses);
    cs_buf_free(&clauses);
    free(x);
    free(y);
    free(fits);
    cs__plot_end(b, 0);
}
