/* SPDX-License-Identifier: MIT */
/*
 * plot_data.c - gnuplot data files: one `index` block per drawn series
 * (rows "x y fits"; one blank line breaks a line, two end a block), and a
 * series split into what fits (solid) and what does not (dashed, with the
 * neighbouring points that fit, so the two lines join). Numbers are
 * printed with %.9g: the same points give the same bytes.
 */
#include "out/plot_impl.h"

#include <string.h>

void cs__blk_gap(cs__blk *k)
{
    if (k->rows) k->gap = 1;
}

void cs__blk_start_row(cs__blk *k)
{
    if (k->gap) cs_buf_printf(&k->b, "\n");
    k->gap = 0;
    k->rows++;
}

static void blk_row(cs__blk *k, double x, double y, int fits)
{
    cs__blk_start_row(k);
    cs_buf_printf(&k->b, "%.9g %.9g %d\n", x, y, fits);
}

int cs__blk_end(cs__dfile *f, cs__blk *k)
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

void cs__plot_series(cs__dfile *f, const double *x, const double *y, const int *fits, int m,
                     int *ifit, int *ioom)
{
    cs__blk a = {0}, o = {0};
    for (int k = 0; k < m; k++) {
        if (fits[k]) blk_row(&a, x[k], y[k], 1);
        else cs__blk_gap(&a);
        if (!fits[k] || (k + 1 < m && !fits[k + 1]) || (k > 0 && !fits[k - 1]))
            blk_row(&o, x[k], y[k], fits[k]);
        else cs__blk_gap(&o);
    }
    *ifit = cs__blk_end(f, &a);
    *ioom = cs__blk_end(f, &o);
}
