/* SPDX-License-Identifier: MIT */
/*
 * plot_impl.h - internal to the crossover plots (plot.h): the pieces the
 * driver (plot.c) puts together, one idea per file:
 *   plot_grid.c    the sweep's points on a (ranks x P x strategy) grid
 *   plot_data.c    gnuplot data files, one `index` block per series
 *   plot_script.c  what every gnuplot script shares: quoting, terminals,
 *                  layouts, a series' plot clauses
 *   plot_params.c  throughput and peak memory vs P (a panel per N)
 *   plot_winner.c  the fastest strategy that fits per (P, N)
 *   plot_wire.c    bytes on the wire vs N at the middle P
 *   plot_breakdown.c  where each strategy's iteration goes (stacked parts)
 *   plot_gnuplot.c finding and running gnuplot
 * A plot kind is one row of plot.c's table: its name (the file's suffix)
 * and the function that writes its data file and script.
 */
#ifndef CS_PLOT_IMPL_H
#define CS_PLOT_IMPL_H

#include "base/buf.h"
#include "out/plot.h"

#define CS__GIB (1024.0 * 1024.0 * 1024.0)

/* The colour of strategy k in every plot; k = CS_STRAT_COUNT: "none fits". */
const char *cs__plot_color(int k);

/* ---- the grid of points (plot_grid.c) -------------------------------------- */

/* A series is a key: strategy x layouts + the layout's index (study/sweep.h:
 * with layout lists each strategy x tp x pp is a series; without, the key
 * is the strategy, and every plot is what it was). Keys run in strategy
 * order, then the lists' order; nkeys stands for "none fits". */
typedef struct cs__grid {
    const cs_sweep_point *pts;
    const cs_sweep_spec *s; /* the layouts (NULL: none) */
    int nr, np;
    int nlayouts, nkeys; /* layouts per strategy (1 without lists), CS_STRAT_COUNT x it */
    int *ranks;     /* sorted, distinct */
    double *params; /* sorted, distinct (relative tolerance 1e-9) */
    long *cell;     /* [r][p][key] -> index into pts, -1 if none */
    int *present;   /* [key] */
} cs__grid;

/* Puts the usable points of pts on g (duplicates: the first wins; s: the
 * layouts, may be NULL); free with cs__grid_free. */
void cs__grid_build(cs__grid *g, const cs_sweep_spec *s, const cs_sweep_point *pts, size_t n);
void cs__grid_free(cs__grid *g);
/* The point at (rank index r, P index p, key k), or NULL. */
const cs_sweep_point *cs__grid_at(const cs__grid *g, int r, int p, int k);
/* The key of strategy st at layout (tp, pp) (-1: not a series of g). */
int cs__grid_key(const cs__grid *g, cs_strategy st, int tp, int pp);
/* Key k's strategy, its layout's index (0 without lists), its name
 * ("fsdp_full_shard", "fsdp_full_shard tp4 pp2") into buf (returned), its
 * colour (the strategy's; k = nkeys: "none fits"'s). */
cs_strategy cs__grid_key_strategy(const cs__grid *g, int k);
int cs__grid_key_layout(const cs__grid *g, int k);
const char *cs__grid_key_name(const cs__grid *g, int k, char *buf, size_t n);
const char *cs__grid_key_color(const cs__grid *g, int k);

/* ---- data files (plot_data.c) ---------------------------------------------- */

typedef struct cs__dfile {
    cs_buf b;
    int blocks;
} cs__dfile;

/* One index block being written. */
typedef struct cs__blk {
    cs_buf b;
    int rows, gap;
} cs__blk;

/* A break in the line (one blank line) before the next row, if any. */
void cs__blk_gap(cs__blk *k);
/* Starts a row (the caller prints it into k->b). */
void cs__blk_start_row(cs__blk *k);
/* Appends the block to f; returns its index, or -1 if it had no rows
 * (gnuplot refuses empty data sets). k is emptied. */
int cs__blk_end(cs__dfile *f, cs__blk *k);
/* A series of m points sorted by x as two blocks: the points that fit
 * (*ifit) and those that do not with their neighbours (*ioom). */
void cs__plot_series(cs__dfile *f, const double *x, const double *y, const int *fits, int m,
                     int *ifit, int *ioom);

/* ---- script helpers (plot_script.c) ------------------------------------------ */

/* What a plot kind draws from. */
typedef struct cs__plot_ctx {
    const cs_sweep_spec *s;
    const cs__grid *g;
    const cs_crossing *c;
    size_t nc;
    int png;
    char title_suffix[192]; /* "on <cluster> (<GPU>)" */
} cs__plot_ctx;

/* Writes one plot's data into df (written to datafile) and its script
 * into b, drawing to tmp_out. */
typedef void (*cs__plot_fn)(const cs__plot_ctx *cx, cs__dfile *df, const char *datafile,
                            cs_buf *b, const char *tmp_out);

void cs__plot_quote(cs_buf *b, const char *s);       /* a gnuplot '...' string */
void cs__plot_clause(cs_buf *b, int *nclauses);      /* "plot " or ", \" */
void cs__plot_fmt_params(char *out, size_t len, double p); /* 1.5B, 350M */
/* The clauses of series key k of g written by cs__plot_series (the
 * strategy's colour; a layout after the first: its own point shape). */
void cs__plot_series_clauses(cs_buf *b, int *nclauses, const char *file, int ifit, int ioom,
                             const cs__grid *g, int k);
/* The legend entry of the hollow, dashed "does not fit" style. */
void cs__plot_oom_key(cs_buf *b, int *nclauses, const char *what);
void cs__plot_empty_panel(cs_buf *b);
void cs__plot_begin(cs_buf *b, int png, int w, int h, const char *tmp_out);
void cs__plot_end(cs_buf *b, int multi);
/* The title line: "set title '...' font ',14'" plus a newline. */
void cs__plot_title(cs_buf *b, const char *title);
/* Explicit tics for up to 24 rank counts on axis ("x" or "y"). */
void cs__plot_rank_tics(cs_buf *b, const char *axis, const cs__grid *g);
/* Prints the clauses, or an empty panel when there are none. */
void cs__plot_clauses_or_empty(cs_buf *b, const cs_buf *clauses, int nclauses);

/* ---- the plot kinds ------------------------------------------------------------ */

void cs__plot_throughput(const cs__plot_ctx *cx, cs__dfile *df, const char *datafile, cs_buf *b,
                         const char *tmp_out);
void cs__plot_memory(const cs__plot_ctx *cx, cs__dfile *df, const char *datafile, cs_buf *b,
                     const char *tmp_out);
void cs__plot_winner(const cs__plot_ctx *cx, cs__dfile *df, const char *datafile, cs_buf *b,
                     const char *tmp_out);
void cs__plot_wire(const cs__plot_ctx *cx, cs__dfile *df, const char *datafile, cs_buf *b,
                   const char *tmp_out);
void cs__plot_breakdown(const cs__plot_ctx *cx, cs__dfile *df, const char *datafile, cs_buf *b,
                        const char *tmp_out);

/* ---- gnuplot (plot_gnuplot.c) ---------------------------------------------------- */

/* The gnuplot executable on PATH (as execvp would search it), or NULL.
 * Caller frees. */
char *cs__gnuplot_find(void);
/* Runs exe on script, its stderr to errfile; returns 0, or -1 with the
 * reason (gnuplot's error line) in msg. */
int cs__gnuplot_run(const char *exe, const char *script, const char *errfile, char *msg,
                    size_t len);

#endif
