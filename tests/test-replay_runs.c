/* SPDX-License-Identifier: MIT */
/*
 * test-replay_runs.c - `collsim-hw replay` CSVs joined with their
 * schedules (study/replay_runs.h) and fitted (study/calib_train.h).
 *
 * Reading: a hand-written replay's tasks become timings alone, beside
 * collectives (the overlap is the union of two collectives' intervals,
 * computed by hand), or are left out; a byte order mark and upper-case
 * names are read, and a name longer than replay keeps joins on what it
 * keeps; every kind of bad input is refused at file:line:column
 * of the CSV or of the schedule, and leaves the set as it was. Fitting: a
 * synthetic replay "measured" on a cluster whose gemm, hbm and overlap
 * slowdown were altered (each overlapped task taking A + O s / (1 + s))
 * gives all three back from cpu-local within 3%, with intervals that
 * hold them; the same replay with no overlap, or with one task
 * overlapped, keeps the slowdown and says why.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/calib_train.h"
#include "study/replay_runs.h"
#include "testutil.h"

#define CSV_HEAD                                                                                   \
    "id,name,stream,kind,predicted_s,measured_s,start_s,end_s,scale,predicted_scaled_s,work,m,n," \
    "k,reps,dtype,executed_flops,executed_bytes\n"

/* Five tasks: a GEMM alone (0), a GEMM beside two collectives on two
 * streams (1; they overlap it over [0.012, 0.016] and [0.014, 0.0205]:
 * 0.008 s of its 0.010), a copy on the comm stream beside a collective
 * (3: left out), and the collectives. */
static const char sched[] =
    "{\n"
    "  \"format\": \"collsim-schedule\", \"version\": 1,\n"
    "  \"groups\": {\"world\": 2, \"shard\": 2, \"replica\": 1},\n"
    "  \"tasks\": [\n"
    "    {\"id\": 0, \"kind\": \"compute\", \"stream\": \"compute\", \"name\": \"forward 0\", "
    "\"flops\": 2.0e+06, \"mem_bytes\": 0, \"predicted_s\": 1e-3, \"deps\": []},\n"
    "    {\"id\": 1, \"kind\": \"compute\", \"stream\": \"compute\", \"name\": \"backward, 0\", "
    "\"flops\": 4.0e+06, \"mem_bytes\": 0, \"predicted_s\": 2e-3, \"deps\": []},\n"
    "    {\"id\": 2, \"kind\": \"collective\", \"stream\": \"comm\", \"name\": \"all_gather\", "
    "\"op\": \"all_gather\", \"size_bytes\": 1000000, \"dtype\": \"bf16\", \"group\": \"world\", "
    "\"predicted_s\": 1e-3, \"deps\": []},\n"
    "    {\"id\": 3, \"kind\": \"memory\", \"stream\": \"comm\", \"name\": \"copy-in\", "
    "\"flops\": 0, \"mem_bytes\": 2000000, \"predicted_s\": 1e-4, \"deps\": []},\n"
    "    {\"id\": 4, \"kind\": \"collective\", \"stream\": \"comm_reduce\", \"name\": \"rs\", "
    "\"op\": \"reduce_scatter\", \"size_bytes\": 1000000, \"dtype\": \"fp32\", \"group\": "
    "\"world\", \"predicted_s\": 1e-3, \"deps\": []}\n"
    "  ]\n"
    "}\n";

static const char csv[] =
    CSV_HEAD
    "0,forward 0,compute,compute,1e-3,0.005,0,0.005,1,1e-3,gemm,100,100,100,1,fp32,2e+06,120000\n"
    "1,backward  0,compute,compute,2e-3,0.010,0.010,0.020,1,2e-3,gemm,100,100,50,4,fp32,4e+06,"
    "320000\n"
    "2,all_gather,comm,collective,1e-3,0.004,0.012,0.016,1,1e-3,collective,,,,1,bf16,0,1e6\n"
    "3,copy-in,comm,memory,1e-4,0.001,0.0200,0.0210,1,1e-4,copy,,,,1,,0,2e6\n"
    "4,rs,comm_reduce,collective,1e-3,0.0065,0.014,0.0205,1,1e-3,collective,,,,1,fp32,0,1e6\n";

static int read(cs_trun_set *s, const char *sc, const char *cv, cs_replay_counts *n, cs_diag *d)
{
    cs_diag_clear(d);
    return cs_replay_runs_read_string(s, "s.json", sc, strlen(sc), "r.csv", cv, strlen(cv), n, d);
}

START_TEST(joins_and_classifies)
{
    cs_trun_set s = {0};
    cs_replay_counts n;
    cs_diag d;
    cs_test_diag_ok(read(&s, sched, csv, &n, &d), &d, "replay");
    ck_assert_int_eq(n.tasks, 5);
    ck_assert_int_eq(n.alone, 1);
    ck_assert_int_eq(n.overlapped, 1);
    ck_assert_int_eq(n.left_out, 1); /* the copy beside the all-gather, off the compute stream */
    ck_assert_uint_eq(s.nk, 2);
    ck_assert_uint_eq(s.nfiles, 1);
    ck_assert_str_eq(s.files[0], "r.csv");
    const cs_kmeas_row *a = &s.kernels[0], *b = &s.kernels[1];
    ck_assert(a->gemm && a->replayed && a->m == 100 && a->k == 100 && a->reps == 1);
    ck_assert_int_eq(a->dtype, CS_DTYPE_FP32);
    ck_assert_int_eq(a->line, 2);
    ck_assert_double_eq_tol(a->time_us, 5000, 1e-6);
    ck_assert_double_eq(a->overlap_us, 0);
    ck_assert_str_eq(a->kernel, "task 0: forward 0");
    ck_assert(b->k == 50 && b->reps == 4);
    ck_assert_str_eq(b->kernel, "task 1: backward  0"); /* the comma blanked, as replay does */
    /* the union of [0.012, 0.016] and [0.014, 0.0205] within [0.010, 0.020] */
    ck_assert_double_eq_tol(b->overlap_us, 8000, 1e-6);
    /* priced: 4 x the one GEMM's roofline, plus 8 ms x s / (1 + s) */
    cs_cluster c = cs_test_cluster("cpu-local");
    c.gpu.compute.comm_compute_slowdown = 0.5;
    cs_kmeas_row alone = *b;
    alone.overlap_us = 0;
    ck_assert_double_eq_tol(cs_calib_train_kernel_us(&c, b),
                            cs_calib_train_kernel_us(&c, &alone) + 8000 * 0.5 / 1.5, 1e-6);
    alone.reps = 1;
    ck_assert_double_eq_tol(cs_calib_train_kernel_us(&c, &(cs_kmeas_row){.gemm = 1, .m = 100,
                                                                        .n = 100, .k = 50,
                                                                        .dtype = CS_DTYPE_FP32}),
                            cs_calib_train_kernel_us(&c, &alone), 1e-9);
    ck_assert_double_eq_tol(cs_calib_train_kernel_us(&c, b) - 8000 / 3.0,
                            4 * cs_calib_train_kernel_us(&c, &alone), 1e-6);
    cs_training_runs_free(&s);
}
END_TEST

/* A byte order mark, CRLF line ends and upper-case column names. */
START_TEST(bom_and_case)
{
    char *t = cs_test_replace(csv, "id,name,stream,kind", "\xef\xbb\xbfID,NAME,Stream,kind");
    char *u = cs_test_replace(t, "fp32,2e+06,120000\n", "fp32,2e+06,120000\r\n");
    cs_trun_set s = {0};
    cs_diag d;
    cs_test_diag_ok(read(&s, sched, u, NULL, &d), &d, "bom");
    ck_assert_uint_eq(s.nk, 2);
    free(t);
    free(u);
    cs_training_runs_free(&s);
}
END_TEST

/* A name longer than replay keeps (hw/schedule.h: 47 bytes) joins on its
 * first 47. */
START_TEST(long_name)
{
    const char *longer = "forward 0 of a block whose name runs on past 47 bytes";
    char named[96], row[96];
    snprintf(named, sizeof named, "\"%s\"", longer);
    snprintf(row, sizeof row, "0,%.47s,", longer);
    char *u = cs_test_replace(sched, "\"forward 0\"", named);
    char *t = cs_test_replace(csv, "0,forward 0,", row);
    cs_trun_set s = {0};
    cs_diag d;
    cs_test_diag_ok(read(&s, u, t, NULL, &d), &d, "long name");
    ck_assert_str_eq(s.kernels[0].kernel, "task 0: forward 0 of a block whose name runs on");
    free(t);
    free(u);
    cs_training_runs_free(&s);
}
END_TEST

/* Bad input, one change each: (CSV change or schedule change) -> where, what. */
typedef struct bad_case {
    int in_schedule;
    const char *from, *to;
    const char *file;
    int line, column;
    const char *text;
} bad_case;

static const bad_case bad_cases[] = {
    {0, "0,0.005,1,1e-3", "0,0.0x5,1,1e-3", "r.csv", 2, 42,
     "column 'end_s': expected a number >= 0, got '0.0x5'"},
    {0, "executed_flops", "m", "r.csv", 1, 105, "column 'm' given twice (first at column 88)"},
    {0, ",work,m,n,k,reps,dtype,executed_flops,executed_bytes\n", "\n", "r.csv", 1, 1,
     "the header has no 'work' column"},
    {0, "2,all_gather,", "9,all_gather,", "r.csv", 4, 1, "task 9 is not in the schedule s.json"},
    {0, "4,rs,", "2,rs,", "r.csv", 6, 1, "task 2 given twice (first at line 4)"},
    {0, "0,forward 0,", "0,forward 1,", "r.csv", 2, 3,
     "task 0's name is 'forward 0' in the schedule (s.json:5:5), 'forward 1' here"},
    {0, "1e-4,copy,", "1e-4,gemm,", "r.csv", 5, 55, "expected copy for a memory task, got 'gemm'"},
    /* replay runs a compute task with FLOPs as a GEMM, never a copy */
    {0, "1,2e-3,gemm,100,100,50,4,fp32,4e+06,", "1,2e-3,copy,,,,4,,0,", "r.csv", 3, 61,
     "column 'work': expected gemm (copy without FLOPs) for a compute task, got 'copy'"},
    {0, "fp32,2e+06,", "fp32,3e+06,", "r.csv", 2, 79,
     "column 'executed_flops': expected 2 m n k x reps = 2.000000000e+06, got '3e+06'"},
    {0, "0.010,0.010,0.020", "0.010,0.030,0.020", "r.csv", 3, 48,
     "column 'end_s': expected a time >= start_s"},
    {0, "compute,1e-3,0.005,0,", "compute,1e-3,0.004,0,", "r.csv", 2, 34,
     "column 'measured_s': expected end_s - start_s"},
    {0, "gemm,100,100,100,1,", "gemm,100,100,100,0,", "r.csv", 2, 72,
     "column 'reps': expected an integer >= 1, got '0'"},
    {1, "\"id\": 3,", "\"id\": 1,", "s.json", 8, 5, "task id 1 given twice (first at line 6)"},
    {1, "\"collsim-schedule\"", "\"other\"", "s.json", 2, 13,
     "expected \"format\": \"collsim-schedule\""},
    /* issue 27: a schedule of another version was read as version 1 */
    {1, "\"version\": 1,", "\"version\": 99,", "s.json", 2, 44,
     "unsupported schedule version '99' (this reader knows versions 1 and 2"},
    {1, "\"version\": 1,", "\"versio\": 1,", "s.json", 1, 1,
     "unsupported schedule version (none given)"},
    {1, "\"stream\": \"comm_reduce\"", "\"stream\": \"side\"", "s.json", 9, 47,
     "'stream' must be compute, comm, comm_reduce, tp or offload"},
    {1, "\"flops\": 2.0e+06", "\"flops\": \"2\"", "s.json", 5, 85, "'flops' must be a number"},
    /* issue 27: a negative FLOP count is the schedule's error, named there */
    {1, "\"flops\": 2.0e+06", "\"flops\": -2.0e+06", "s.json", 5, 85,
     "'flops' must be a number >= 0"},
    {1, "\"tasks\": [\n", "\"tasks\": [{,\n", "s.json", 4, 14, "did not find expected node"},
};

START_TEST(bad_input)
{
    const bad_case *b = &bad_cases[_i];
    char *t = cs_test_replace(b->in_schedule ? sched : csv, b->from, b->to);
    cs_trun_set s = {0};
    cs_diag d;
    int rc = read(&s, b->in_schedule ? t : sched, b->in_schedule ? csv : t, NULL, &d);
    cs_test_diag_error(rc, &d, b->file, b->line, b->column, b->text, "case %d", _i);
    ck_assert_uint_eq(s.nk, 0);
    ck_assert_uint_eq(s.nfiles, 0);
    free(t);
    cs_training_runs_free(&s);
}
END_TEST

/* ---- the fit -------------------------------------------------------------------------- */

/* A replay of GEMMs (n^3 fp32, reps) and copies, each overlapped for a
 * share `ov` of its time by an all-reduce on the comm stream, as timed on
 * cluster truth; the schedule and CSV texts into sc and cv. */
typedef struct spec {
    int n, reps;
    double copy_bytes, ov;
} spec;

static void synthesize(const cs_cluster *truth, const spec *sp, int count, cs_buf *sc, cs_buf *cv)
{
    cs_buf_printf(sc, "{\"format\": \"collsim-schedule\", \"version\": 1, \"tasks\": [\n");
    cs_buf_printf(cv, CSV_HEAD);
    double t = 0;
    double s = cs_calib_train_slowdown(truth);
    for (int i = 0; i < count; i++) {
        int gemm = sp[i].n > 0;
        double n = sp[i].n;
        cs_kmeas_row k = {.gemm = gemm, .dtype = CS_DTYPE_FP32, .m = n, .n = n, .k = n,
                          .bytes = sp[i].copy_bytes, .reps = sp[i].reps};
        /* D = A + O s / (1 + s), O = ov D; a deterministic +-1% on top */
        double a_us = cs_calib_train_kernel_us(truth, &k);
        double d_s = 1e-6 * a_us / (1 - sp[i].ov * s / (1 + s)) * (1 + 0.01 * (i % 3 - 1));
        double flops = gemm ? 2 * n * n * n * sp[i].reps : 0;
        cs_buf_printf(sc, "%s {\"id\": %d, \"kind\": \"%s\", \"stream\": \"compute\", \"name\": "
                          "\"t%d\", \"flops\": %.9e},\n",
                      i ? "," : "", 2 * i, gemm ? "compute" : "memory", i, flops);
        cs_buf_printf(sc, " {\"id\": %d, \"kind\": \"collective\", \"stream\": \"comm\", "
                          "\"name\": \"ar%d\"}\n", 2 * i + 1, i);
        if (gemm)
            cs_buf_printf(cv, "%d,t%d,compute,compute,1,%.9e,%.9e,%.9e,1,1,gemm,%d,%d,%d,%d,fp32,"
                              "%.9e,%.9e\n", 2 * i, i, d_s, t, t + d_s, sp[i].n, sp[i].n, sp[i].n,
                          sp[i].reps, flops, 4 * 3 * n * n * sp[i].reps);
        else
            cs_buf_printf(cv, "%d,t%d,compute,memory,1,%.9e,%.9e,%.9e,1,1,copy,,,,%d,,0,%.9e\n",
                          2 * i, i, d_s, t, t + d_s, sp[i].reps, 2 * sp[i].copy_bytes * sp[i].reps);
        /* the all-reduce: the last ov of the task, or after it */
        double c0 = sp[i].ov > 0 ? t + d_s * (1 - sp[i].ov) : t + d_s, c1 = t + d_s + 1e-3;
        if (sp[i].ov > 0) c1 = t + d_s;
        cs_buf_printf(cv, "%d,ar%d,comm,collective,1,%.9e,%.9e,%.9e,1,1,collective,,,,1,fp32,0,"
                          "1e6\n", 2 * i + 1, i, c1 - c0, c0, c1);
        t = c1 + 1e-4;
    }
    cs_buf_printf(sc, "]}\n");
}

/* GEMMs of 4 sizes, copies of 3; ov per task from ovs (cycled). */
static cs_calib_train_result *fit_synthetic(const cs_cluster *from, const cs_cluster *truth,
                                            const double *ovs, int nov, cs_replay_counts *cnt)
{
    spec sp[24];
    int n = 0;
    for (int rep = 0; rep < 2; rep++)
        for (int q = 0; q < 12; q++, n++)
            sp[n] = q < 8 ? (spec){.n = 64 << (q % 4), .reps = 1 + rep}
                          : (spec){.copy_bytes = (double)(1 << 20) * (1 << (2 * (q - 8))), .reps = 1};
    for (int i = 0; i < n; i++) sp[i].ov = sp[i].n > 0 ? ovs[i % nov] : 0;
    cs_buf sc = {0}, cv = {0};
    synthesize(truth, sp, n, &sc, &cv);
    cs_trun_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_replay_runs_read_string(&s, "s.json", sc.data, sc.len, "r.csv", cv.data,
                                               cv.len, cnt, &d),
                    &d, "synthetic replay");
    cs_calib_train_result *r;
    cs_test_diag_ok(cs_calib_train(from, &s, &r, &d), &d, "fit");
    cs_buf_free(&sc);
    cs_buf_free(&cv);
    cs_training_runs_free(&s);
    return r;
}

static const cs_calib_param *param(const cs_calib_train_result *r, const char *name)
{
    for (int j = 0; j < r->nparams; j++)
        if (!strcmp(r->params[j].name, name)) return &r->params[j];
    ck_abort_msg("no parameter %s", name);
    return NULL;
}

static cs_cluster altered(const cs_cluster *c)
{
    cs_cluster t = *c;
    t.gpu.compute.gemm = 0.3;
    t.gpu.compute.hbm = 0.5;
    t.gpu.compute.comm_compute_slowdown = 0.4;
    return t;
}

START_TEST(slowdown_recovered)
{
    cs_cluster c = cs_test_cluster("cpu-local"), truth = altered(&c);
    ck_assert(c.gpu.compute.comm_compute_slowdown < 0); /* unset: the fit starts from a seed */
    const double ovs[] = {0, 0.3, 0, 0.6, 0.9};
    cs_replay_counts n;
    cs_calib_train_result *r = fit_synthetic(&c, &truth, ovs, 5, &n);
    ck_assert_int_eq(n.overlapped, 9);
    ck_assert_int_eq(n.alone, 15);
    ck_assert(r->rms_before_pct > 10);
    ck_assert(r->rms_after_pct < 2);
    const char *names[] = {"gemm", "hbm", "comm_compute_slowdown"};
    double want[] = {0.3, 0.5, 0.4};
    for (int i = 0; i < 3; i++) {
        const cs_calib_param *p = param(r, names[i]);
        ck_assert_msg(p->fitted, "%s: %s", names[i], p->why);
        ck_assert_msg(fabs(p->value - want[i]) < 0.03 * want[i], "%s %g, want %g", names[i],
                      p->value, want[i]);
        ck_assert_msg(p->ci_lo <= want[i] && want[i] <= p->ci_hi, "%s: %g not in [%g, %g]",
                      names[i], want[i], p->ci_lo, p->ci_hi);
    }
    CS_ASSERT_CONTAINS(param(r, "comm_compute_slowdown")->why, "replayed tasks");
    ck_assert_double_eq_tol(r->cluster.gpu.compute.comm_compute_slowdown,
                            param(r, "comm_compute_slowdown")->value, 1e-12);
    cs_calib_train_result_free(r);
}
END_TEST

/* The same replay with no overlap, then with one GEMM overlapped: the
 * slowdown is kept (unset), and the reason counts the overlapped tasks. */
START_TEST(too_little_overlap_keeps_slowdown)
{
    cs_cluster c = cs_test_cluster("cpu-local"), truth = altered(&c);
    const double none[] = {0};
    const double one[] = {0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const struct {
        const double *ovs;
        int nov;
        const char *why;
    } cases[] = {{none, 1, "0 of the 24 replayed tasks ran beside collectives for 10% of their "
                           "time at least (2 needed)"},
                 {one, 24, "1 of the 24 replayed tasks ran beside collectives"}};
    for (int k = 0; k < 2; k++) {
        cs_replay_counts n;
        cs_calib_train_result *r = fit_synthetic(&c, &truth, cases[k].ovs, cases[k].nov, &n);
        const cs_calib_param *p = param(r, "comm_compute_slowdown");
        ck_assert_msg(!p->fitted, "case %d: fitted %g", k, p->value);
        CS_ASSERT_CONTAINS(p->why, cases[k].why);
        CS_ASSERT_CONTAINS(p->why, "stays unset");
        ck_assert(r->cluster.gpu.compute.comm_compute_slowdown < 0);
        ck_assert(param(r, "gemm")->fitted); /* the alone GEMMs still fit it */
        cs_calib_train_result_free(r);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("replay_runs");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, joins_and_classifies);
    tcase_add_test(tc, bom_and_case);
    tcase_add_test(tc, long_name);
    tcase_add_loop_test(tc, bad_input, 0, (int)(sizeof bad_cases / sizeof *bad_cases));
    suite_add_tcase(s, tc);
    TCase *tf = tcase_create("fit");
    tcase_add_test(tf, slowdown_recovered);
    tcase_add_test(tf, too_little_overlap_keeps_slowdown);
    suite_add_tcase(s, tf);
    return cs_test_run(s);
}
