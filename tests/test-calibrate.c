/* SPDX-License-Identifier: MIT */
/*
 * test-calibrate.c - the measure and calibrate modules.
 *
 * Readers: two nccl-tests layouts (tests/data/: >= 2.10 with redop, root
 * and srun prefixes; the old layout without root, ranks from busbw/algbw),
 * mpirun --tag-output prefixes, the reference CSVs (validation/nccl-tests),
 * a collsim-hw CSV (the median is used), a busbw-only summary table, and
 * garbage that must fail with file:line:column.
 * Fit: a synthetic round trip (measurements generated from a cluster whose
 * efficiency / launch latency / network efficiency were altered, 0.5%
 * deterministic noise; calibrating from the unaltered preset recovers the
 * altered values within 2%, with 95% intervals that contain them), a
 * parameter single-node data cannot determine (kept and reported), NVLS
 * data excluded, the written YAML loading back to the same predictions,
 * and a deliberate fault: the uncalibrated preset must score badly on the
 * altered data, or the round trip proves nothing.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/calibrate.h"
#include "config/config.h"
#include "study/measure.h"

#define DATA "tests/data/"

static const cs_calib_param *param(const cs_calib_result *r, const char *name)
{
    for (int j = 0; j < r->nparams; j++)
        if (!strcmp(r->params[j].name, name)) return &r->params[j];
    ck_abort_msg("no parameter %s", name);
    return NULL;
}

/* ---- readers -------------------------------------------------------------------- */

START_TEST(nccl_tests_new_layout_srun)
{
    cs_meas_set s = {0};
    cs_diag d;
    int rc = cs_meas_read_nccl_tests(&s, DATA "nccl-tests-allreduce-2node-srun.log", &d);
    ck_assert_msg(rc == 0, "%s:%d: %s", d.file, d.line, d.message);
    ck_assert_int_eq((int)s.ndatasets, 1);
    ck_assert_int_eq((int)s.n, 8); /* the size-0 row is skipped */
    ck_assert_str_eq(s.datasets[0].name, "nccl-tests-allreduce-2node-srun");
    ck_assert_str_eq(s.datasets[0].kind, "nccl-tests");
    ck_assert_ptr_nonnull(strstr(s.datasets[0].hardware, "H100"));
    for (size_t i = 0; i < s.n; i++) {
        ck_assert_int_eq(s.rows[i].op, CS_OP_ALL_REDUCE); /* from the file name */
        ck_assert_int_eq(s.rows[i].ranks, 16);
        ck_assert_int_eq(s.rows[i].nodes, 2);
        ck_assert_int_eq(s.rows[i].algo, CS_CHOICE_AUTO);
    }
    /* out-of-place column, not in-place */
    ck_assert_double_eq_tol(s.rows[0].size_bytes, 8, 1e-9);
    ck_assert_double_eq_tol(s.rows[0].time_us, 69.12, 1e-9);
    ck_assert_double_eq_tol(s.rows[7].size_bytes, 1024, 1e-9);
    ck_assert_double_eq_tol(s.rows[7].time_us, 69.24, 1e-9);
    ck_assert_int_eq(s.rows[0].line, 30);
    cs_meas_free(&s);
}
END_TEST

START_TEST(nccl_tests_old_layout)
{
    cs_meas_set s = {0};
    cs_diag d;
    int rc = cs_meas_read_nccl_tests(&s, DATA "nccl-tests-allgather-old-layout.log", &d);
    ck_assert_msg(rc == 0, "%s:%d: %s", d.file, d.line, d.message);
    ck_assert_int_eq((int)s.n, 4);
    for (size_t i = 0; i < s.n; i++) {
        ck_assert_int_eq(s.rows[i].op, CS_OP_ALL_GATHER); /* the all_gather_perf command */
        ck_assert_int_eq(s.rows[i].ranks, 8);             /* busbw / algbw = 7/8 */
        ck_assert_int_eq(s.rows[i].nodes, 0);             /* no device list: unknown */
        ck_assert_int_eq(s.rows[i].algo, CS_ALGO_RING);   /* NCCL_ALGO=Ring */
    }
    ck_assert_double_eq_tol(s.rows[3].time_us, 21001.0, 1e-9);
    cs_meas_free(&s);
}
END_TEST

START_TEST(nccl_tests_mpirun_prefix_and_tables)
{
    /* mpirun --tag-output prefixes, "Collective test starting", two runs
     * in one log (a new device list starts a new table) */
    const char *log =
        "[1,0]<stdout>:# Collective test starting: reduce_scatter_perf\n"
        "[1,0]<stdout>:#  Rank  0 Group  0 Pid 11 on a device  0 [0x01] NVIDIA A100-SXM4-80GB\n"
        "[1,0]<stdout>:#  Rank  1 Group  0 Pid 12 on a device  1 [0x02] NVIDIA A100-SXM4-80GB\n"
        "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "[1,0]<stdout>:     1048576        131072     float     sum      -1    20.00   52.43   26.21      0    20.00   52.43   26.21      0\n"
        "[1,0]<stdout>:     2097152        262144     float     sum      -1    30.00   69.91   34.95    N/A    30.00   69.91   34.95    N/A\n"
        "[1,0]<stdout>:# Collective test starting: all_gather_perf\n"
        "[1,0]<stdout>:#  Rank  0 Group  0 Pid 11 on a device  0 [0x01] NVIDIA A100-SXM4-80GB\n"
        "[1,0]<stdout>:#  Rank  1 Group  0 Pid 12 on a device  1 [0x02] NVIDIA A100-SXM4-80GB\n"
        "[1,0]<stdout>:#  Rank  2 Group  0 Pid 13 on b device  0 [0x01] NVIDIA A100-SXM4-80GB\n"
        "[1,0]<stdout>:#  Rank  3 Group  0 Pid 14 on b device  1 [0x02] NVIDIA A100-SXM4-80GB\n"
        "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "[1,0]<stdout>:     1048576         65536     float    none      -1    40.00   26.21   19.66      0    40.00   26.21   19.66      0\n";
    cs_meas_set s = {0};
    cs_diag d;
    int rc = cs_meas_read_nccl_tests_string(&s, "runs.log", log, strlen(log), &d);
    ck_assert_msg(rc == 0, "%s:%d: %s", d.file, d.line, d.message);
    ck_assert_int_eq((int)s.ndatasets, 2);
    ck_assert_int_eq((int)s.n, 3);
    ck_assert_str_eq(s.datasets[1].name, "runs#2");
    ck_assert_int_eq(s.rows[0].op, CS_OP_REDUCE_SCATTER);
    ck_assert_int_eq(s.rows[0].ranks, 2);
    ck_assert_int_eq(s.rows[0].nodes, 1);
    ck_assert_int_eq(s.rows[2].op, CS_OP_ALL_GATHER);
    ck_assert_int_eq(s.rows[2].ranks, 4);
    ck_assert_int_eq(s.rows[2].nodes, 2);
    ck_assert_int_eq(s.rows[2].dataset, 1);
    cs_meas_free(&s);
}
END_TEST

START_TEST(reference_csv)
{
    cs_meas_set s = {0};
    cs_diag d;
    int rc = cs_meas_read_csv(&s, "validation/nccl-tests/h100_8gpu_allreduce_together_ringcfg.csv", &d);
    ck_assert_msg(rc == 0, "%s:%d: %s", d.file, d.line, d.message);
    ck_assert_int_eq((int)s.n, 31);
    ck_assert_str_eq(s.datasets[0].kind, "csv");
    ck_assert_int_eq(s.datasets[0].gpus_per_process, 8); /* "-g 8" in the command header */
    ck_assert_int_eq(s.rows[0].op, CS_OP_ALL_REDUCE);
    ck_assert_int_eq(s.rows[0].ranks, 8);
    ck_assert_int_eq(s.rows[0].algo, CS_ALGO_RING); /* NCCL_ALGO=RING in the header */
    ck_assert_double_eq_tol(s.rows[30].time_us, 40838.9, 1e-9);
    /* a second file appends a second dataset */
    rc = cs_meas_read_csv(&s, "validation/nccl-tests/h100_8gpu_allgather_together_ringcfg.csv", &d);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq((int)s.ndatasets, 2);
    ck_assert_int_eq(s.rows[s.n - 1].dataset, 1);
    ck_assert_int_eq(s.rows[s.n - 1].op, CS_OP_ALL_GATHER);
    cs_meas_free(&s);
}
END_TEST

START_TEST(collsim_hw_csv)
{
    const char *csv =
        "op,algo,proto,engine,ranks,size_bytes,count,dtype,time_us,algbw_GBps,busbw_GBps,"
        "time_min_us,time_median_us,time_max_us,iters,host,backend,library_version\n"
        "all_reduce,ring,simple,mpi,2,1048576,262144,float,130.0,8.07,8.07,110.0,120.0,300.0,20,h,mpi,Open MPI v4.1.4\n"
        "all_reduce,auto,auto,mpi,2,2097152,524288,float,250.0,8.39,8.39,230.0,240.0,400.0,20,h,mpi,Open MPI v4.1.4\n";
    cs_meas_set s = {0};
    cs_diag d;
    int rc = cs_meas_read_csv_string(&s, "hw.csv", csv, strlen(csv), &d);
    ck_assert_msg(rc == 0, "%s:%d: %s", d.file, d.line, d.message);
    ck_assert_str_eq(s.datasets[0].kind, "collsim-hw");
    ck_assert_int_eq((int)s.n, 2);
    ck_assert_double_eq_tol(s.rows[0].time_us, 120.0, 1e-9); /* the median, not time_us */
    ck_assert_int_eq(s.rows[0].algo, CS_ALGO_RING);
    ck_assert_int_eq(s.rows[0].proto, CS_PROTO_SIMPLE);
    ck_assert_int_eq(s.rows[1].algo, CS_CHOICE_AUTO);
    ck_assert_int_eq(s.rows[1].proto, CS_CHOICE_AUTO);
    ck_assert_int_eq(s.rows[1].ranks, 2);
    cs_meas_free(&s);
}
END_TEST

START_TEST(summary_csv)
{
    cs_meas_set s = {0};
    cs_diag d;
    int rc = cs_meas_read_csv(
        &s, "validation/nccl-tests/b200_allreduce_allgather_algo_vs_nodes_summary_together.csv", &d);
    ck_assert_msg(rc == 0, "%s:%d: %s", d.file, d.line, d.message);
    ck_assert_int_eq((int)s.n, 52);
    /* "1,8,all_reduce,Ring,17179869184,679.0": time from busbw */
    ck_assert_int_eq(s.rows[0].algo, CS_ALGO_RING);
    ck_assert_int_eq(s.rows[0].nodes, 1);
    ck_assert_double_eq_tol(s.rows[0].time_us, 17179869184.0 * 1.75 / 679.0e9 * 1e6, 1e-6);
    ck_assert_int_eq(s.rows[1].algo, CS_ALGO_NVLS); /* modelled since NVLS is a table row */
    ck_assert_str_eq(s.rows[1].algo_name, "NVLS");
    ck_assert_int_eq(s.rows[4].algo, CS_MEAS_ALGO_OTHER); /* "2,16,all_reduce,NVLSTree,..." */
    ck_assert_str_eq(s.rows[4].algo_name, "NVLSTree");
    cs_meas_free(&s);
}
END_TEST

/* garbage: each must fail with the right line (and leave the set as it was) */
START_TEST(garbage_errors)
{
    static const struct {
        int csv;
        const char *text;
        int line, column;
        const char *needle;
    } cases[] = {
        {0,
         "# all_reduce_perf\n"
         "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n"
         "   1024    256  float  sum     -1  abc   0.01   0.01   0      1.0  0.01  0.01  0\n",
         3, 36, "out-of-place time"},
        {0, "just some text\nno table here\n", 1, 1, "no nccl-tests result table"},
        {0,
         "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n"
         "   1024    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n",
         1, 1, "which collective"},
        {0,
         "# all_reduce_perf\n"
         "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n"
         "   1024    256  float  sum\n",
         3, 24, "columns"},
        {1, "# collective: all_reduce\n# ranks: 8\nsize_bytes,time_us\n8,1.0\n16\n", 5, 1,
         "fields"},
        {1, "# collective: allreduce_x\nsize_bytes,time_us\n", 1, 15, "unknown collective"},
        {1, "# ranks: 8\nsize_bytes,time_us\n8,1.0\n", 3, 1, "which collective"},
        {1, "# collective: all_reduce\n# ranks: 8\nsize_bytes,time_us\n8,-3\n", 4, 3, "time_us"},
        {1, "hello,world\n1,2\n", 1, 1, "header row"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cs_meas_set s = {0};
        cs_diag d;
        cs_diag_clear(&d);
        /* one good dataset first: a failed read must not disturb it */
        const char *good = "# collective: all_reduce\n# ranks: 2\nsize_bytes,time_us\n8,10\n";
        ck_assert_int_eq(cs_meas_read_csv_string(&s, "good.csv", good, strlen(good), &d), 0);
        int rc = cases[k].csv
                     ? cs_meas_read_csv_string(&s, "bad.csv", cases[k].text, strlen(cases[k].text), &d)
                     : cs_meas_read_nccl_tests_string(&s, "bad.log", cases[k].text,
                                                      strlen(cases[k].text), &d);
        ck_assert_msg(rc == CS_ECONFIG, "case %zu: rc %d", k, rc);
        ck_assert_str_eq(d.file, cases[k].csv ? "bad.csv" : "bad.log");
        ck_assert_msg(d.line == cases[k].line, "case %zu: line %d, want %d (%s)", k, d.line,
                      cases[k].line, d.message);
        ck_assert_msg(d.column == cases[k].column, "case %zu: column %d, want %d (%s)", k,
                      d.column, cases[k].column, d.message);
        ck_assert_msg(strstr(d.message, cases[k].needle), "case %zu: '%s' lacks '%s'", k,
                      d.message, cases[k].needle);
        ck_assert_int_eq((int)s.n, 1);
        ck_assert_int_eq((int)s.ndatasets, 1);
        cs_meas_free(&s);
    }
    /* a file that does not exist */
    cs_meas_set s = {0};
    cs_diag d;
    ck_assert_int_eq(cs_meas_read_nccl_tests(&s, DATA "no-such.log", &d), CS_ENOENT);
    ck_assert_int_eq(cs_meas_read_csv(&s, "tests", &d), CS_EIO);
    cs_meas_free(&s);
}
END_TEST

/* ---- the fit -------------------------------------------------------------------- */

/* Deterministic noise in [-1, 1] (a 64-bit LCG, Knuth MMIX constants). */
static double noise(unsigned long long *st)
{
    *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*st >> 11) / (double)(1ULL << 53) * 2.0 - 1.0;
}

/* Measurements of `truth` as a CSV (op,ranks,nodes,size_bytes,time_us),
 * every op in ops on ranks/nodes, 8 B .. 8 GiB, relative noise amp. */
static void synth(cs_meas_set *s, const cs_cluster *truth, const cs_op *ops, int nops, int ranks,
                  int nodes, double amp, unsigned long long seed)
{
    char *csv = cs_xmalloc(1 << 16);
    size_t len = (size_t)snprintf(csv, 1 << 16, "op,ranks,nodes,size_bytes,time_us\n");
    cs_meas_set q = {0};
    cs_diag d;
    /* predictions of the truth, row by row, through the same predictor */
    for (int o = 0; o < nops; o++)
        for (double b = 64; b <= 8.0 * (1 << 30); b *= 4) {
            char line[128];
            snprintf(line, sizeof line, "op,ranks,nodes,size_bytes,time_us\n%s,%d,%d,%.0f,1\n",
                     cs_op_name(ops[o]), ranks, nodes, b);
            ck_assert_int_eq(cs_meas_read_csv_string(&q, "q", line, strlen(line), &d), 0);
        }
    for (size_t i = 0; i < q.n; i++) {
        cs_calib_pred p;
        ck_assert_int_eq(cs_calib_predict(truth, &q, i, &p, &d), 0);
        ck_assert_int_eq(p.status, 0);
        double t = p.time_us * (1 + amp * noise(&seed));
        len += (size_t)snprintf(csv + len, (1 << 16) - len, "%s,%d,%d,%.0f,%.6f\n",
                                cs_op_name(q.rows[i].op), ranks, nodes, q.rows[i].size_bytes, t);
    }
    ck_assert_int_eq(cs_meas_read_csv_string(s, "synthetic.csv", csv, len, &d), 0);
    cs_meas_free(&q);
    free(csv);
}

static void expect_recovered(const cs_calib_result *r, const char *name, double truth)
{
    const cs_calib_param *p = param(r, name);
    ck_assert_msg(p->fitted, "%s not fitted: %s", name, p->why);
    ck_assert_msg(fabs(p->value - truth) <= 0.02 * fabs(truth),
                  "%s = %g, truth %g (more than 2%% off)", name, p->value, truth);
    ck_assert_msg(p->ci_lo <= truth && truth <= p->ci_hi, "%s: 95%% CI [%g, %g] misses %g", name,
                  p->ci_lo, p->ci_hi, truth);
}

START_TEST(round_trip_single_node)
{
    cs_cluster preset, truth;
    cs_diag d;
    ck_assert_int_eq(cs_config_cluster("dgx-h100", &preset, &d), 0);
    truth = preset;
    truth.intra.efficiency = 0.75;              /* from 0.824 */
    for (int a = 0; a < CS_ALGO_COUNT; a++)     /* an 8 us launch latency */
        for (int p = 0; p < CS_PROTO_COUNT; p++) truth.coll.base_latency_s[a][p] += 8e-6;
    cs_meas_set s = {0};
    const cs_op ops[] = {CS_OP_ALL_REDUCE, CS_OP_ALL_GATHER};
    synth(&s, &truth, ops, 2, 8, 1, 0.005, 42);

    /* the deliberate fault: the preset itself must be visibly wrong here */
    cs_calib_compare cmp;
    ck_assert_int_eq(cs_calib_compare_run(&preset, &s, &cmp, &d), 0);
    ck_assert_msg(cmp.ds[0].all.median > 5.0, "uncalibrated median %.1f%%: the check is blind",
                  cmp.ds[0].all.median);
    cs_calib_compare_free(&cmp);

    cs_calib_result *r;
    int rc = cs_calibrate(&preset, &s, &r, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_msg(r->converged, "%s", r->status);
    expect_recovered(r, "intra.efficiency", 0.75);
    expect_recovered(r, "latency.launch", 8.0);
    /* predictions now match the data to the noise */
    ck_assert_double_le(r->rms_after_pct, 1.0);
    /* the unidentifiable: no multi-node rows, so the network is kept */
    const cs_calib_param *ie = param(r, "inter.efficiency");
    ck_assert(!ie->fitted);
    ck_assert_double_eq_tol(ie->value, preset.inter.efficiency, 1e-12);
    ck_assert_ptr_nonnull(strstr(ie->why, "single-node"));
    ck_assert_double_eq_tol(r->cluster.inter.efficiency, preset.inter.efficiency, 1e-12);
    ck_assert(!param(r, "hop.net")->fitted);

    /* the YAML loads back and prices every row as the fit did */
    cs_buf b = {0};
    cs_calib_write_yaml(&b, r, &s, "dgx-h100");
    ck_assert_ptr_nonnull(strstr(b.data, "# kept   inter.efficiency"));
    ck_assert_ptr_nonnull(strstr(b.data, "# fitted intra.efficiency"));
    cs_cluster back;
    rc = cs_config_load_cluster_string("out.yaml", b.data, b.len, &back, &d);
    ck_assert_msg(rc == 0, "%d:%d %s\n%s", d.line, d.column, d.message, b.data);
    for (size_t i = 0; i < s.n; i++) {
        cs_calib_pred p1, p2;
        ck_assert_int_eq(cs_calib_predict(&r->cluster, &s, i, &p1, &d), 0);
        ck_assert_int_eq(cs_calib_predict(&back, &s, i, &p2, &d), 0);
        ck_assert_double_eq_tol(p1.time_us, p2.time_us, 1e-9 * p1.time_us);
        if (r->rows[i].used)
            ck_assert_double_eq_tol(p1.time_us, r->rows[i].after_us, 1e-9 * p1.time_us);
    }
    cs_buf_free(&b);
    cs_calib_result_free(r);
    cs_meas_free(&s);
}
END_TEST

START_TEST(round_trip_multi_node)
{
    cs_cluster preset, truth;
    cs_diag d;
    ck_assert_int_eq(cs_config_cluster("dgx-a100", &preset, &d), 0);
    truth = preset;
    truth.inter.efficiency = 0.8; /* from 0.96 */
    cs_meas_set s = {0};
    const cs_op ops[] = {CS_OP_ALL_REDUCE, CS_OP_ALL_GATHER};
    synth(&s, &truth, ops, 2, 32, 4, 0.005, 7);
    synth(&s, &truth, ops, 2, 8, 1, 0.005, 8);
    cs_calib_result *r;
    int rc = cs_calibrate(&preset, &s, &r, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    expect_recovered(r, "inter.efficiency", 0.8);
    /* the altered value is the only change: intra stays where it was */
    const cs_calib_param *ia = param(r, "intra.efficiency");
    if (ia->fitted) ck_assert_double_eq_tol(ia->value, preset.intra.efficiency, 0.02 * 0.8);
    cs_calib_result_free(r);
    cs_meas_free(&s);
}
END_TEST

START_TEST(nvls_excluded)
{
    cs_cluster c;
    cs_diag d;
    ck_assert_int_eq(cs_config_cluster("dgx-h100", &c, &d), 0);
    cs_meas_set s = {0};
    ck_assert_int_eq(cs_meas_read_csv(&s, "validation/nccl-tests/h100_8gpu_allreduce_together_ringcfg.csv", &d), 0);
    ck_assert_int_eq(cs_meas_read_csv(&s, "validation/nccl-tests/h100_8gpu_allreduce_aws_p5_nvls.csv", &d), 0);
    cs_calib_compare cmp;
    /* NVLS on (the preset's default): the 483 GB/s run is within what the
     * model's NVLS reaches at line rate, predicted with NVLS and fittable */
    ck_assert_int_eq(c.coll.algo_enabled[CS_ALGO_NVLS], 1);
    ck_assert_int_eq(cs_calib_compare_run(&c, &s, &cmp, &d), 0);
    ck_assert_int_eq(cmp.ds[0].beyond_bound, 0);
    ck_assert_int_eq(cmp.ds[1].beyond_bound, 0);
    size_t last = s.n - 1; /* 16 GiB of the NVLS run */
    ck_assert_int_eq(s.rows[last].dataset, 1);
    ck_assert_int_eq(cmp.pred[last].algo, CS_ALGO_NVLS);
    ck_assert_double_lt(fabs(cmp.err_pct[last]), 10.0);
    cs_calib_compare_free(&cmp);
    /* NVLS turned off in the YAML: the run exceeds every modelled algorithm
     * and is flagged and excluded, as before NVLS was modelled */
    c.coll.algo_enabled[CS_ALGO_NVLS] = 0;
    ck_assert_int_eq(cs_calib_compare_run(&c, &s, &cmp, &d), 0);
    ck_assert_int_eq(cmp.ds[0].beyond_bound, 0); /* ring: 368 GB/s < 450 */
    ck_assert_int_eq(cmp.ds[1].beyond_bound, 1); /* 483 GB/s: NVLS */
    cs_calib_compare_free(&cmp);
    cs_calib_result *r;
    ck_assert_int_eq(cs_calibrate(&c, &s, &r, &d), 0);
    ck_assert_str_eq(r->ds_why[0], "");
    ck_assert_ptr_nonnull(strstr(r->ds_why[1], "NVLS"));
    for (size_t i = 0; i < s.n; i++) ck_assert_int_eq(r->rows[i].used, s.rows[i].dataset == 0);
    cs_calib_result_free(r);
    cs_meas_free(&s);
}
END_TEST

START_TEST(rows_must_fit_cluster)
{
    cs_cluster c;
    cs_diag d;
    ck_assert_int_eq(cs_config_cluster("pcie-l40s", &c, &d), 0); /* one node, no network */
    cs_meas_set s = {0};
    ck_assert_int_eq(cs_meas_read_csv(&s, "validation/nccl-tests/h100_16gpu_2node_allreduce_bitdeer.csv", &d), 0);
    cs_calib_compare cmp;
    ck_assert_int_eq(cs_calib_compare_run(&c, &s, &cmp, &d), CS_ECONFIG);
    ck_assert_str_eq(d.file, "validation/nccl-tests/h100_16gpu_2node_allreduce_bitdeer.csv");
    ck_assert_int_eq(d.line, 10);
    cs_calib_result *r;
    ck_assert_int_eq(cs_calibrate(&c, &s, &r, &d), CS_ECONFIG);
    cs_meas_free(&s);
}
END_TEST

START_TEST(stats)
{
    double v[] = {5, 1, 4, 2, 3, 10, 6, 7, 8, 9};
    cs_calib_stats st;
    cs_calib_stats_of(v, 10, &st);
    ck_assert_double_eq_tol(st.median, 5.5, 1e-12);
    ck_assert_double_eq_tol(st.p90, 9, 1e-12); /* nearest rank: the 9th of 10 */
    ck_assert_double_eq_tol(st.max, 10, 1e-12);
    cs_calib_stats_of(v, 0, &st);
    ck_assert(isnan(st.median));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("calibrate");
    TCase *tr = tcase_create("readers");
    tcase_add_test(tr, nccl_tests_new_layout_srun);
    tcase_add_test(tr, nccl_tests_old_layout);
    tcase_add_test(tr, nccl_tests_mpirun_prefix_and_tables);
    tcase_add_test(tr, reference_csv);
    tcase_add_test(tr, collsim_hw_csv);
    tcase_add_test(tr, summary_csv);
    tcase_add_test(tr, garbage_errors);
    suite_add_tcase(s, tr);
    TCase *tf = tcase_create("fit");
    tcase_add_test(tf, round_trip_single_node);
    tcase_add_test(tf, round_trip_multi_node);
    tcase_add_test(tf, nvls_excluded);
    tcase_add_test(tf, rows_must_fit_cluster);
    tcase_add_test(tf, stats);
    suite_add_tcase(s, tf);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
