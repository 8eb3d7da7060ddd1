/* SPDX-License-Identifier: MIT */
/*
 * test-plot.c - the crossover plots (plot.c) from a hand-made sweep: 2 rank
 * counts x 5 model sizes x 3 strategies, with points that do not fit, a
 * grid point where nothing fits, one throughput and one OOM crossing; no
 * simulator involved. Checks the four files exist and are SVG naming the
 * cluster, their axes and the OOM / crossover marks; the same input gives
 * the same bytes; .png gives PNG; nothing temporary is left behind (output
 * directory and $TMPDIR); a missing gnuplot (PATH emptied), a bad
 * extension, no points and an unwritable directory are errors. The SVG
 * check itself is shown to reject a PNG. Exits 77 (skipped) when gnuplot
 * is not installed; CI installs it.
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "out/plot.h"
#include "study/sweep.h"
#include "testutil.h"


static cs_sweep_spec spec;
static cs_sweep_point pts[64];
static size_t npts;
static const cs_crossing crossings[] = {
    {.ranks = 8, .a = CS_STRAT_DDP, .b = CS_STRAT_FSDP_FULL_SHARD, .kind = CS_CROSS_THROUGHPUT,
     .params = 5e9, .margin = 0.12},
    {.ranks = 8, .a = CS_STRAT_DDP, .b = CS_STRAT_DDP, .kind = CS_CROSS_OOM, .params = 4.2e9},
};

/* Plausible shapes, not the simulator: throughput falls as 1/P, DDP is
 * fastest at small P and loses ground as P grows; memory = 16 bytes per
 * parameter divided by the sharding degree, + 10 GiB. */
static void make_points(void)
{
    memset(&spec, 0, sizeof spec);
    spec.cluster = cs_test_cluster("dgx-h100");
    const int ranks[] = {8, 64};
    const double params[] = {1e9, 3e9, 10e9, 30e9, 70e9};
    const cs_strategy st[] = {CS_STRAT_DDP, CS_STRAT_FSDP_SHARD_GRAD_OP, CS_STRAT_FSDP_FULL_SHARD};
    npts = 0;
    for (int r = 0; r < 2; r++)
        for (int p = 0; p < 5; p++)
            for (int s = 0; s < 3; s++) {
                cs_sweep_point *pt = &pts[npts++];
                memset(pt, 0, sizeof *pt);
                double pb = params[p] / 1e9, n = ranks[r];
                pt->strategy = st[s];
                pt->ranks = ranks[r];
                pt->params = params[p];
                snprintf(pt->model, sizeof pt->model, "generic-%gB", pb);
                double speed = s == 0 ? 1.25 - 0.05 * pb : s == 1 ? 1.1 - 0.01 * pb : 1.0;
                pt->tokens_per_s = n * 2e4 / pb * fmax(speed, 0.2);
                pt->iteration_time_s = 1.0 / speed;
                double shard = s == 0 ? 1 : n;
                double states = s == 1 ? (4 + 12 / shard) * params[p] : 16 * params[p] / shard;
                pt->peak_bytes = states + 10 * GiB;
                pt->capacity_bytes = 80e9;
                pt->fits = pt->peak_bytes <= pt->capacity_bytes;
                pt->wire_bytes = (s == 0 ? 2.0 : 3.0) * 2 * params[p] * (n - 1) / n;
                pt->exposed_comm_s = 0.01 * pb;
            }
}

/* Non-empty SVG: an XML declaration or <svg first, and </svg> at the end. */
static int is_svg(const char *s, size_t len)
{
    return len > 0 && (!strncmp(s, "<?xml", 5) || !strncmp(s, "<svg", 4)) &&
           strstr(s, "</svg>") != NULL && strlen(s) == len;
}

static int count_entries(const char *dir)
{
    DIR *dp = opendir(dir);
    ck_assert_ptr_nonnull(dp);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(dp);
    return n;
}

#define NKINDS 5
static const char *const kinds[NKINDS] = {"throughput", "memory", "winner", "wire", "breakdown"};

static char *out_file(const char *dir, const char *kind, const char *ext)
{
    char *p = malloc(1024);
    snprintf(p, 1024, "%s/cross-%s.%s", dir, kind, ext);
    return p;
}

static void assert_contains(const char *file, const char *text, const char *needle)
{
    ck_assert_msg(strstr(text, needle) != NULL, "%s does not contain '%s'", file, needle);
}

START_TEST(svg_four_files)
{
    make_points();
    char *dir = cs_test_tmpdir(), *tmp = cs_test_tmpdir();
    setenv("TMPDIR", tmp, 1);
    char path[512];
    snprintf(path, sizeof path, "%s/cross.svg", dir);
    cs_diag d;
    cs_diag_clear(&d);
    int rc = cs_plot_crossover(&spec, pts, npts, crossings, 2, path, &d);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, d.message);
    /* exactly the five plots (no temporaries, `path` itself not created) */
    ck_assert_int_eq(count_entries(dir), NKINDS);
    ck_assert_int_eq(count_entries(tmp), 0);
    /* what each must say */
    const char *need[NKINDS][4] = {
        {"tokens/s", "model size P (billions of parameters)", "does not fit", "throughput crossover"},
        {"peak memory per GPU (GiB)", "GPU capacity", "model size P", "fsdp_full_shard"},
        {"number of GPUs N", "none fits", "ddp", "Fastest strategy that fits"},
        {"bytes sent per rank per iteration (GB)", "number of GPUs N", "P = 10B", "ddp"},
        {"seconds per iteration", "Where the iteration goes", "optimizer step", "exposed all_gather"},
    };
    for (int k = 0; k < NKINDS; k++) {
        char *f = out_file(dir, kinds[k], "svg");
        size_t len = 0;
        char *s = cs_test_slurp(f, &len);
        ck_assert_msg(s != NULL, "%s missing", f);
        ck_assert_msg(is_svg(s, len), "%s is not SVG", f);
        assert_contains(f, s, "dgx-h100");
        assert_contains(f, s, "H100-SXM5-80GB");
        for (int i = 0; i < 4; i++) assert_contains(f, s, need[k][i]);
        free(s);
        free(f);
    }
    /* the crossing's label and a panel per rank count */
    char *f = out_file(dir, "throughput", "svg");
    char *s = cs_test_slurp(f, NULL);
    assert_contains(f, s, "5B");
    assert_contains(f, s, "N = 8 GPUs");
    assert_contains(f, s, "N = 64 GPUs");
    free(s);
    free(f);
    cs_test_rmdir(dir);
    cs_test_rmdir(tmp);
    free(dir);
    free(tmp);
}
END_TEST

/* Where the sweep searched the micro-batch, the winner map labels each box
 * with its winner's choice ("16", "4f" for full recomputation); a sweep
 * at a pinned configuration has no labels. */
static char *winner_svg(int searched)
{
    make_points();
    spec.search_micro_batch = spec.search_ckpt = searched;
    for (size_t i = 0; i < npts; i++) {
        pts[i].micro_batch = pts[i].params < 10e9 ? 16 : 4;
        pts[i].checkpointing = pts[i].params < 10e9 ? CS_CKPT_NONE : CS_CKPT_FULL;
    }
    char *dir = cs_test_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/cross.svg", dir);
    cs_diag d;
    ck_assert_int_eq(cs_plot_crossover(&spec, pts, npts, crossings, 2, path, &d), 0);
    char *f = out_file(dir, "winner", "svg");
    char *svg = cs_test_slurp(f, NULL);
    ck_assert_ptr_nonnull(svg);
    free(f);
    cs_test_rmdir(dir);
    free(dir);
    return svg;
}

START_TEST(winner_labels_the_choice)
{
    char *svg = winner_svg(1);
    assert_contains("winner (searched)", svg, "micro-batch of the winner (f: full recomputation)");
    assert_contains("winner (searched)", svg, ">16<");
    assert_contains("winner (searched)", svg, ">4f<");
    free(svg);
    svg = winner_svg(0);
    ck_assert_ptr_null(strstr(svg, "micro-batch of the winner"));
    ck_assert_ptr_null(strstr(svg, ">4f<"));
    free(svg);
    spec.search_micro_batch = spec.search_ckpt = 0;
}
END_TEST

START_TEST(deterministic)
{
    make_points();
    char *a = cs_test_tmpdir(), *b = cs_test_tmpdir();
    char pa[512], pb[512];
    snprintf(pa, sizeof pa, "%s/cross.svg", a);
    snprintf(pb, sizeof pb, "%s/cross.svg", b);
    cs_diag d;
    ck_assert_int_eq(cs_plot_crossover(&spec, pts, npts, crossings, 2, pa, &d), 0);
    /* any order of the points gives the same plots */
    for (size_t i = 0; i < npts / 2; i++) {
        cs_sweep_point t = pts[i];
        pts[i] = pts[npts - 1 - i];
        pts[npts - 1 - i] = t;
    }
    ck_assert_int_eq(cs_plot_crossover(&spec, pts, npts, crossings, 2, pb, &d), 0);
    for (int k = 0; k < NKINDS; k++) {
        char *fa = out_file(a, kinds[k], "svg"), *fb = out_file(b, kinds[k], "svg");
        size_t la, lb;
        char *sa = cs_test_slurp(fa, &la), *sb = cs_test_slurp(fb, &lb);
        ck_assert_msg(la == lb && !memcmp(sa, sb, la), "%s and %s differ", fa, fb);
        free(sa);
        free(sb);
        free(fa);
        free(fb);
    }
    cs_test_rmdir(a);
    cs_test_rmdir(b);
    free(a);
    free(b);
}
END_TEST

START_TEST(png_files)
{
    make_points();
    char *dir = cs_test_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/cross.png", dir);
    cs_diag d;
    int rc = cs_plot_crossover(&spec, pts, npts, crossings, 2, path, &d);
    ck_assert_msg(rc == 0, "rc %d: %s", rc, d.message);
    ck_assert_int_eq(count_entries(dir), NKINDS);
    if (getenv("TEST_PLOT_KEEP")) printf("test-plot: PNGs kept in %s\n", dir);
    for (int k = 0; k < NKINDS; k++) {
        char *f = out_file(dir, kinds[k], "png");
        size_t len = 0;
        char *s = cs_test_slurp(f, &len);
        ck_assert_msg(s && len > 8 && !memcmp(s, "\x89PNG\r\n\x1a\n", 8), "%s is not PNG", f);
        /* the SVG check must reject it */
        ck_assert(!is_svg(s, len));
        free(s);
        free(f);
    }
    if (!getenv("TEST_PLOT_KEEP")) cs_test_rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(gnuplot_missing)
{
    make_points();
    char *dir = cs_test_tmpdir(), *empty = cs_test_tmpdir();
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("PATH", empty, 1);
    char path[512];
    snprintf(path, sizeof path, "%s/cross.svg", dir);
    cs_diag d;
    cs_diag_clear(&d);
    int rc = cs_plot_crossover(&spec, pts, npts, crossings, 2, path, &d);
    if (saved) setenv("PATH", saved, 1);
    else unsetenv("PATH");
    free(saved);
    ck_assert_int_eq(rc, CS_EIO);
    ck_assert_int_eq(d.code, CS_EIO);
    ck_assert_str_eq(d.message, "gnuplot not found: install gnuplot-nox (tools/install-deps.sh)");
    ck_assert_int_eq(count_entries(dir), 0);
    /* PATH is back: it works again */
    ck_assert_int_eq(cs_plot_crossover(&spec, pts, npts, crossings, 2, path, &d), 0);
    ck_assert_int_eq(count_entries(dir), NKINDS);
    cs_test_rmdir(dir);
    cs_test_rmdir(empty);
    free(dir);
    free(empty);
}
END_TEST

START_TEST(bad_requests)
{
    make_points();
    char *dir = cs_test_tmpdir();
    char path[512];
    cs_diag d;
    /* the extension picks the format: anything else is refused */
    snprintf(path, sizeof path, "%s/cross.pdf", dir);
    ck_assert_int_eq(cs_plot_crossover(&spec, pts, npts, NULL, 0, path, &d), CS_EINVAL);
    CS_ASSERT_CONTAINS(d.message, ".svg or .png");
    snprintf(path, sizeof path, "%s/cross", dir);
    ck_assert_int_eq(cs_plot_crossover(&spec, pts, npts, NULL, 0, path, &d), CS_EINVAL);
    /* no points */
    snprintf(path, sizeof path, "%s/cross.svg", dir);
    ck_assert_int_eq(cs_plot_crossover(&spec, pts, 0, NULL, 0, path, &d), CS_EINVAL);
    ck_assert_int_eq(count_entries(dir), 0);
    /* a directory that does not exist: CS_EIO naming the file */
    snprintf(path, sizeof path, "%s/no/such/dir/cross.svg", dir);
    ck_assert_int_eq(cs_plot_crossover(&spec, pts, npts, NULL, 0, path, &d), CS_EIO);
    CS_ASSERT_CONTAINS(d.file, "cross-throughput.svg");
    ck_assert_int_eq(count_entries(dir), 0);
    /* one strategy, one point, no crossings: still four plots */
    snprintf(path, sizeof path, "%s/one.svg", dir);
    ck_assert_int_eq(cs_plot_crossover(&spec, pts, 1, NULL, 0, path, &d), 0);
    ck_assert_int_eq(count_entries(dir), NKINDS);
    cs_test_rmdir(dir);
    free(dir);
}
END_TEST

static int have_gnuplot(void)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    char *copy = strdup(path), *save = NULL;
    int found = 0;
    for (char *p = strtok_r(copy, ":", &save); p && !found; p = strtok_r(NULL, ":", &save)) {
        char f[1024];
        snprintf(f, sizeof f, "%s/gnuplot", p);
        found = access(f, X_OK) == 0;
    }
    free(copy);
    return found;
}

static Suite *suite(void)
{
    Suite *s = suite_create("plot");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, svg_four_files);
    tcase_add_test(tc, deterministic);
    tcase_add_test(tc, winner_labels_the_choice);
    tcase_add_test(tc, png_files);
    tcase_add_test(tc, gnuplot_missing);
    tcase_add_test(tc, bad_requests);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (!have_gnuplot()) {
        fprintf(stderr, "test-plot: gnuplot not installed, skipped (tools/install-deps.sh)\n");
        return 77;
    }
    return cs_test_run(suite());
}
