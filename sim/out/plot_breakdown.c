/* SPDX-License-Identifier: MIT */
/*
 * plot_breakdown.c - why one strategy is faster: each strategy's iteration
 * at the middle model size and the largest rank count of the grid as one
 * stacked bar of the parts of cs_breakdown (train/iteration.h: compute
 * kernels, recompute, copies and casts, optimizer step, exposed time per
 * primitive, waiting for the CPU), in seconds. The bar's height is the
 * iteration time; a strategy that does not fit there is labelled so.
 */
#include "out/plot_impl.h"

#include <stdio.h>

/* The parts, bottom to top, with their fixed colours (a grey ramp for
 * compute, warm tones for exposed communication). */
static const struct {
    const char *label, *color;
} parts[] = {
    {"compute kernels", "#4D4D4D"},     {"recompute", "#8C8C8C"},
    {"copies and casts", "#BDBDBD"},    {"optimizer step", "#56B4E9"},
    {"exposed all_reduce", "#0072B2"},  {"exposed all_gather", "#E69F00"},
    {"exposed reduce_scatter", "#D55E00"}, {"waiting for the CPU", "#CC79A7"},
};
#define NPARTS (int)(sizeof parts / sizeof *parts)

static void values(const cs_breakdown *b, double v[NPARTS])
{
    const double x[NPARTS] = {b->kernels_s,
                              b->recompute_s,
                              b->copies_s,
                              b->optimizer_s,
                              b->exposed_s[CS_OP_ALL_REDUCE],
                              b->exposed_s[CS_OP_ALL_GATHER],
                              b->exposed_s[CS_OP_REDUCE_SCATTER],
                              b->cpu_wait_s};
    for (int i = 0; i < NPARTS; i++) v[i] = x[i];
}

void cs__plot_breakdown(const cs__plot_ctx *cx, cs__dfile *df, const char *datafile, cs_buf *b,
                        const char *tmp_out)
{
    const cs__grid *g = cx->g;
    int pmid = (g->np - 1) / 2, rlast = g->nr - 1;
    cs__plot_begin(b, cx->png, 960, 520, tmp_out);
    char title[400], lab[32];
    cs__plot_fmt_params(lab, sizeof lab, g->params[pmid]);
    snprintf(title, sizeof title, "Where the iteration goes, P = %s, N = %d, %s", lab,
             g->ranks[rlast], cx->title_suffix);
    cs__plot_title(b, title);
    cs_buf_printf(b, "set ylabel 'seconds per iteration'\n"
                     "set style data histograms\nset style histogram rowstacked\n"
                     "set style fill solid 0.9 border -1\nset boxwidth 0.6\n"
                     "set key outside right\nset yrange [0:*]\n");
    cs__blk k = {0};
    for (int st = 0; st < g->nkeys; st++) {
        const cs_sweep_point *pt = cs__grid_at(g, rlast, pmid, st);
        if (!g->present[st] || !pt) continue;
        double v[NPARTS];
        values(&pt->time, v);
        char name[96];
        cs__grid_key_name(g, st, name, sizeof name);
        cs__blk_start_row(&k);
        cs_buf_printf(&k.b, "\"%s%s\"", name, pt->fits ? "" : " (OOM)");
        for (int i = 0; i < NPARTS; i++) cs_buf_printf(&k.b, " %.9g", v[i]);
        cs_buf_printf(&k.b, "\n");
    }
    int blk = cs__blk_end(df, &k);
    if (blk < 0) {
        cs__plot_empty_panel(b);
    } else {
        cs_buf clauses = {0};
        int n = 0;
        for (int i = 0; i < NPARTS; i++) {
            cs__plot_clause(&clauses, &n);
            if (i == 0) cs__plot_quote(&clauses, datafile);
            else cs_buf_printf(&clauses, "''");
            cs_buf_printf(&clauses, " index %d using %d%s title ", blk, i + 2,
                          i == 0 ? ":xtic(1)" : "");
            cs__plot_quote(&clauses, parts[i].label);
            cs_buf_printf(&clauses, " lc rgb '%s'", parts[i].color);
        }
        cs_buf_printf(b, "%s\n", clauses.data);
        cs_buf_free(&clauses);
    }
    cs__plot_end(b, 0);
}
