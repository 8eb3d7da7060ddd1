/* SPDX-License-Identifier: MIT */
/*
 * plot_script.c - what every gnuplot script of the plots shares: quoted
 * strings, the terminal (SVG or PNG at an explicit size and font, white
 * background: the same input gives the same file), the opening and
 * closing of a plot, the clauses of a series (solid with filled points
 * where it fits, dashed with hollow points where it does not; one legend
 * entry per strategy), tics at the rank counts, an empty panel.
 */
#include "out/plot_impl.h"

#include <stdio.h>

/* A gnuplot single-quoted string ('' stands for '). */
void cs__plot_quote(cs_buf *b, const char *s)
{
    cs_buf_printf(b, "'");
    for (; *s; s++) cs_buf_printf(b, *s == '\'' ? "''" : "%c", *s);
    cs_buf_printf(b, "'");
}

void cs__plot_clause(cs_buf *b, int *nclauses)
{
    cs_buf_printf(b, "%s", (*nclauses)++ ? ", \\\n     " : "plot ");
}

void cs__plot_fmt_params(char *out, size_t len, double p)
{
    if (p >= 1e12) snprintf(out, len, "%.3gT", p / 1e12);
    else if (p >= 1e9) snprintf(out, len, "%.3gB", p / 1e9);
    else if (p >= 1e6) snprintf(out, len, "%.3gM", p / 1e6);
    else snprintf(out, len, "%.3g", p);
}

/* Point shapes of a strategy's layouts, in the lists' order: filled for
 * what fits (circle, square, triangle up, triangle down, diamond, pentagon)
 * and their hollow twins for what does not; the first layout's are the
 * shapes of a plot without layout lists. */
static const int fit_pt[] = {7, 5, 9, 11, 13, 15}, oom_pt[] = {6, 4, 8, 10, 12, 14};
#define NSHAPES (int)(sizeof fit_pt / sizeof *fit_pt)

/* Solid line with filled points for what fits, dashed with hollow points
 * for what does not; the series' legend entry goes on the first. */
void cs__plot_series_clauses(cs_buf *b, int *nclauses, const char *file, int ifit, int ioom,
                             const cs__grid *g, int k)
{
    const char *col = cs__grid_key_color(g, k);
    char name[96];
    cs__grid_key_name(g, k, name, sizeof name);
    int shape = cs__grid_key_layout(g, k) % NSHAPES;
    if (ifit >= 0) {
        cs__plot_clause(b, nclauses);
        cs__plot_quote(b, file);
        cs_buf_printf(b, " index %d using 1:2 with linespoints lw 2 pt %d ps 0.7 lc rgb '%s' title ",
                      ifit, fit_pt[shape], col);
        cs__plot_quote(b, name);
    }
    if (ioom >= 0) {
        cs__plot_clause(b, nclauses);
        cs__plot_quote(b, file);
        cs_buf_printf(b, " index %d using 1:2 with lines lw 1.5 dt 2 lc rgb '%s' ", ioom, col);
        if (ifit < 0) {
            cs_buf_printf(b, "title ");
            cs__plot_quote(b, name);
        } else {
            cs_buf_printf(b, "notitle");
        }
        cs__plot_clause(b, nclauses);
        cs__plot_quote(b, file);
        cs_buf_printf(b, " index %d using 1:($3 == 0 ? $2 : 1/0) with points pt %d ps 0.9 "
                         "lc rgb '%s' notitle", ioom, oom_pt[shape], col);
    }
}

void cs__plot_oom_key(cs_buf *b, int *nclauses, const char *what)
{
    cs__plot_clause(b, nclauses);
    cs_buf_printf(b, "NaN with linespoints lw 1.5 dt 2 pt 6 lc rgb '#555555' title ");
    cs__plot_quote(b, what);
}

/* An empty panel still needs something to plot. */
void cs__plot_empty_panel(cs_buf *b)
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

void cs__plot_begin(cs_buf *b, int png, int w, int h, const char *tmp_out)
{
    cs_buf_printf(b, "reset\n");
    terminal(b, png, w, h);
    cs_buf_printf(b, "set output ");
    cs__plot_quote(b, tmp_out);
    cs_buf_printf(b, "\nset grid lc rgb '#dddddd'\nset key outside right top spacing 1.1\n"
                     "set style fill transparent solid 0.35 noborder\n");
}

void cs__plot_end(cs_buf *b, int multi)
{
    if (multi) cs_buf_printf(b, "unset multiplot\n");
    cs_buf_printf(b, "set output\n");
}

void cs__plot_title(cs_buf *b, const char *title)
{
    cs_buf_printf(b, "set title ");
    cs__plot_quote(b, title);
    cs_buf_printf(b, " font ',14'\n");
}

void cs__plot_rank_tics(cs_buf *b, const char *axis, const cs__grid *g)
{
    if (g->nr > 24) return;
    cs_buf_printf(b, "set %stics (", axis);
    for (int r = 0; r < g->nr; r++) cs_buf_printf(b, "%s%d", r ? ", " : "", g->ranks[r]);
    cs_buf_printf(b, ")\n");
}

void cs__plot_clauses_or_empty(cs_buf *b, const cs_buf *clauses, int nclauses)
{
    if (nclauses) cs_buf_printf(b, "%.*s\n", (int)clauses->len, clauses->data);
    else cs__plot_empty_panel(b);
}
