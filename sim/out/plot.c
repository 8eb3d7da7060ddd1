/* SPDX-License-Identifier: MIT */
/*
 * plot.c - the five crossover plots (plot.h), drawn by gnuplot: the
 * driver, the table of plot kinds, and the colour lookup. The parts
 * are in plot_*.c (plot_impl.h says which file owns what).
 *
 * The points of a sweep are put on a grid (rank count x model size x
 * strategy; duplicates: the first point wins) and turned into gnuplot data
 * files, one per plot, with one `index` block per drawn series, and one
 * script; all three live in a private mkdtemp directory that is removed
 * afterwards. gnuplot (found on PATH; run with posix_spawn, its stderr kept
 * for the error message) writes each plot to a temporary name next to its
 * final name; only when gnuplot exits 0 are the five renamed, so a failed
 * run leaves no partial plot behind. Numbers are printed with fixed
 * formats and the terminals are given explicit sizes and fonts, so the same
 * points give the same files (gnuplot's SVG carries no date).
 *
 * Conventions the plots share: model size in billions of parameters,
 * memory in GiB (2^30 bytes, as `collsim memory`), bytes on the wire in GB
 * (1e9, as `collsim simulate`), rank counts on a log2 axis, one fixed
 * colour per strategy (its row's: Okabe & Ito's colour-blind-safe palette)
 * in every plot. A point that does not fit in GPU memory is drawn hollow on a
 * dashed line; the throughput plot also shades each strategy's OOM range
 * in a thin band at the bottom of the panel (a band starts halfway, on a
 * log scale, between the last point that fits and the first that does not,
 * or at the OOM crossing when the sweep found one there).
 */
#include "out/plot_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train/strategy.h"

/* A strategy's colour is its row's (cs_strategy_color); "no strategy"
 * (the winner plot's cells where none fits) is grey. */
#define NONE_COLOR "#BBBBBB"

const char *cs__plot_color(int k)
{
    CS_ASSERT(k >= 0 && k <= CS_STRAT_COUNT);
    return k < CS_STRAT_COUNT ? cs_strategy_color((cs_strategy)k) : NONE_COLOR;
}

/* The plots, in the order they are drawn: the file suffix and the writer. */
static const struct plot_kind {
    const char *name;
    cs__plot_fn draw;
} kinds[] = {
    {"throughput", cs__plot_throughput},
    {"memory", cs__plot_memory},
    {"winner", cs__plot_winner},
    {"wire", cs__plot_wire},
    {"breakdown", cs__plot_breakdown},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* ---- the files of one run ------------------------------------------------- */

/* A private directory with the script, gnuplot's stderr and one data file
 * per plot; per plot its final name and the temporary one gnuplot writes. */
typedef struct run_files {
    char *dir, *script, *errfile;
    char *finals[NKINDS], *tmps[NKINDS], *datas[NKINDS];
    int created[NKINDS];
} run_files;

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *s = cs_xmalloc(n);
    snprintf(s, n, "%s/%s", a, b);
    return s;
}

/* Makes the directory and the names, and creates each temporary output
 * now, so a missing output directory is reported by name. */
static int files_make(run_files *f, const char *path, cs_diag *d)
{
    const char *tmpbase = getenv("TMPDIR");
    if (!tmpbase || !*tmpbase) tmpbase = "/tmp";
    f->dir = join(tmpbase, "collsim-plot-XXXXXX");
    if (!mkdtemp(f->dir)) {
        int rc = cs_diag_set(d, CS_EIO, tmpbase, 0, 0, "cannot create a temporary directory: %s",
                             strerror(errno));
        free(f->dir);
        f->dir = NULL;
        return rc;
    }
    f->script = join(f->dir, "plots.gp");
    f->errfile = join(f->dir, "gnuplot.err");
    for (size_t k = 0; k < NKINDS; k++) {
        f->finals[k] = cs_plot_file_name(path, k);
        f->tmps[k] = cs_buf_temp_name(f->finals[k]);
        char name[32];
        snprintf(name, sizeof name, "%s.dat", kinds[k].name);
        f->datas[k] = join(f->dir, name);
        FILE *out = fopen(f->tmps[k], "wb");
        if (!out || fclose(out))
            return cs_diag_set(d, CS_EIO, f->finals[k], 0, 0, "cannot create output file: %s",
                               strerror(errno));
        f->created[k] = 1;
    }
    return 0;
}

/* Removes what is left of a run: temporary outputs not renamed, the data
 * files, the script, the directory. */
static void files_free(run_files *f)
{
    for (size_t k = 0; k < NKINDS; k++) {
        if (f->created[k]) remove(f->tmps[k]);
        if (f->datas[k]) remove(f->datas[k]);
        free(f->finals[k]);
        free(f->tmps[k]);
        free(f->datas[k]);
    }
    if (f->script) remove(f->script);
    if (f->errfile) remove(f->errfile);
    if (f->dir) rmdir(f->dir);
    free(f->script);
    free(f->errfile);
    free(f->dir);
}

/* ---- drawing ---------------------------------------------------------------- */

/* Writes every plot's data file and the one script. */
static int write_inputs(const cs__plot_ctx *cx, const run_files *f, cs_diag *d)
{
    cs_buf sc = {0};
    cs__dfile df[NKINDS] = {{{0}, 0}};
    for (size_t k = 0; k < NKINDS; k++) kinds[k].draw(cx, &df[k], f->datas[k], &sc, f->tmps[k]);
    int rc = 0;
    for (size_t k = 0; k < NKINDS && rc == 0; k++) rc = cs_buf_write(&df[k].b, f->datas[k], d);
    if (rc == 0) rc = cs_buf_write(&sc, f->script, d);
    for (size_t k = 0; k < NKINDS; k++) cs_buf_free(&df[k].b);
    cs_buf_free(&sc);
    return rc;
}

/* Runs gnuplot, then renames each plot to its final name. */
static int draw(const char *exe, run_files *f, cs_diag *d)
{
    char msg[512];
    if (cs__gnuplot_run(exe, f->script, f->errfile, msg, sizeof msg))
        return cs_diag_set(d, CS_EIO, NULL, 0, 0, "%s", msg);
    for (size_t k = 0; k < NKINDS; k++) {
        if (rename(f->tmps[k], f->finals[k]) != 0)
            return cs_diag_set(d, CS_EIO, f->finals[k], 0, 0, "cannot write output file: %s",
                               strerror(errno));
        f->created[k] = 0;
    }
    return 0;
}

/* Whether path names an SVG (0) or a PNG (1); -1: neither. */
static int png_path(const char *path)
{
    size_t plen = strlen(path);
    if (plen > 4 && !strcmp(path + plen - 4, ".svg")) return 0;
    if (plen > 4 && !strcmp(path + plen - 4, ".png")) return 1;
    return -1;
}

size_t cs_plot_file_count(void) { return NKINDS; }

char *cs_plot_file_name(const char *path, size_t k)
{
    CS_ASSERT(k < NKINDS && png_path(path) >= 0);
    size_t plen = strlen(path), len = plen + 64;
    char *s = cs_xmalloc(len);
    snprintf(s, len, "%.*s-%s.%s", (int)(plen - 4), path, kinds[k].name,
             png_path(path) ? "png" : "svg");
    return s;
}

int cs_plot_check(const char *path, cs_diag *d)
{
    if (!path || strchr(path, '\n'))
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "plot file name missing or invalid");
    if (png_path(path) < 0)
        return cs_diag_set(d, CS_EINVAL, path, 0, 0,
                           "plot file must end in .svg or .png (the extension picks the format)");
    for (size_t k = 0; k < NKINDS; k++) {
        char *f = cs_plot_file_name(path, k);
        int rc = cs_buf_check_path(f, d);
        free(f);
        if (rc) return rc;
    }
    char *exe = cs__gnuplot_find();
    if (!exe)
        return cs_diag_set(d, CS_EIO, NULL, 0, 0,
                           "gnuplot not found: install gnuplot-nox (tools/install-deps.sh)");
    free(exe);
    return 0;
}

int cs_plot_crossover(const cs_sweep_spec *s, const cs_sweep_point *pts, size_t n,
                      const cs_crossing *c, size_t nc, const char *path, cs_diag *d)
{
    int rc = cs_plot_check(path, d);
    if (rc) return rc;
    int png = png_path(path);
    cs__grid g;
    cs__grid_build(&g, s, pts, n);
    if (g.nr == 0 || g.np == 0) {
        cs__grid_free(&g);
        return cs_diag_set(d, CS_EINVAL, path, 0, 0, "nothing to plot: no sweep points");
    }
    char *exe = cs__gnuplot_find();
    if (!exe) {
        cs__grid_free(&g);
        return cs_diag_set(d, CS_EIO, NULL, 0, 0,
                           "gnuplot not found: install gnuplot-nox (tools/install-deps.sh)");
    }
    cs__plot_ctx cx = {.s = s, .g = &g, .c = c, .nc = c ? nc : 0, .png = png};
    if (s && s->cluster.gpu.model[0])
        snprintf(cx.title_suffix, sizeof cx.title_suffix, "on %s (%s)", s->cluster.name,
                 s->cluster.gpu.model);
    else
        snprintf(cx.title_suffix, sizeof cx.title_suffix, "on %s", s ? s->cluster.name : "?");
    run_files f = {0};
    rc = files_make(&f, path, d);
    if (rc == 0) rc = write_inputs(&cx, &f, d);
    if (rc == 0) rc = draw(exe, &f, d);
    files_free(&f);
    free(exe);
    cs__grid_free(&g);
    return rc;
}
