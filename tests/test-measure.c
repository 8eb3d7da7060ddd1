/* SPDX-License-Identifier: MIT */
/*
 * test-measure.c - the measurement readers and the set.
 *
 * nccl-tests logs: the >= 2.10 layout with redop, root and srun prefixes
 * and the old layout without root (tests/data/), mpirun --tag-output
 * prefixes and two runs in one log, a repeated header, the op from the
 * "Collective test starting" line, a *_perf command or the file name,
 * ranks and nodes from the device list or busbw / algbw, GPUs per
 * process. CSV: the reference layout with '#' header lines
 * (validation/nccl-tests), collsim-hw output (the median is used), a
 * busbw-only summary table, columns in any order and case, aliases.
 * NCCL_ALGO / NCCL_PROTO in every form a log or header writes them, and
 * a column overriding the header. Garbage of every kind, each failing
 * with its file:line:column and message and leaving the set as it was.
 * Deliberately wrong: the busbw of every row of a reference CSV, from its
 * time and the op and ranks its header states, must match the file's busbw
 * column, and the same check with a wrong rank count must fail, or it
 * proves nothing.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/measure.h"
#include "testutil.h"

#define DATA "tests/data/"

static void read_ok(int csv, cs_meas_set *s, const char *origin, const char *text)
{
    cs_diag d;
    cs_diag_clear(&d);
    int rc = csv ? cs_meas_read_csv_string(s, origin, text, strlen(text), &d)
                 : cs_meas_read_nccl_tests_string(s, origin, text, strlen(text), &d);
    cs_test_diag_ok(rc, &d, "%s", origin);
}

/* ---- nccl-tests logs ------------------------------------------------------------ */

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
    CS_ASSERT_CONTAINS(s.datasets[0].hardware, "H100");
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


/* One log table (2.10+ layout, two ranks on one host) with `pre` lines
 * before it and `post` after. Caller frees. */
static char *log_with(const char *pre, const char *post)
{
    static const char table[] =
        "#  Rank  0 Group  0 Pid 11 on a device  0 [0x01] NVIDIA H100 80GB HBM3\n"
        "#  Rank  1 Group  0 Pid 12 on a device  1 [0x02] NVIDIA H100 80GB HBM3\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "     1048576        262144     float     sum      -1    20.00   52.43   91.76      0    20.00   52.43   91.76      0\n"
        "     2097152        524288     float     sum      -1    30.00   69.91  122.34      0    30.00   69.91  122.34      0\n";
    size_t n = strlen(pre) + strlen(table) + strlen(post) + 1;
    char *s = malloc(n);
    ck_assert_ptr_nonnull(s);
    snprintf(s, n, "%s%s%s", pre, table, post);
    return s;
}

START_TEST(nccl_tests_op_sources)
{
    /* the op: "Collective test starting" beats the file name, which beats a
     * *_perf command later in the text */
    static const struct {
        const char *origin, *pre, *post;
        cs_op op;
    } cases[] = {
        {"x.log", "# Collective test starting: broadcast_perf\n", "", CS_OP_BROADCAST},
        {"logs/all-gather.log", "", "# all_reduce_perf was here\n", CS_OP_ALL_GATHER},
        {"x.log", "", "$ ./build/reduce_perf -b 8\n", CS_OP_REDUCE},
        {"x.log", "$ mpirun ./all_reduce_perf -g 1\n", "", CS_OP_ALL_REDUCE},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *log = log_with(cases[k].pre, cases[k].post);
        cs_meas_set s = {0};
        read_ok(0, &s, cases[k].origin, log);
        ck_assert_int_eq((int)s.n, 2);
        ck_assert_msg(s.rows[0].op == cases[k].op, "case %zu: op %s", k, cs_op_name(s.rows[0].op));
        ck_assert_int_eq(s.rows[0].ranks, 2);
        ck_assert_int_eq(s.rows[0].nodes, 1);
        cs_meas_free(&s);
        free(log);
    }
}
END_TEST

START_TEST(nccl_tests_repeated_header_and_gpus_per_process)
{
    /* a header repeated before any row keeps one table; 4 ranks on 2 pids:
     * 2 GPUs per process */
    const char *log =
        "#  Rank  0 Group  0 Pid 11 on a device  0 [0x01] NVIDIA H100 80GB HBM3\n"
        "#  Rank  1 Group  0 Pid 11 on a device  1 [0x02] NVIDIA H100 80GB HBM3\n"
        "#  Rank  2 Group  0 Pid 12 on a device  2 [0x03] NVIDIA H100 80GB HBM3\n"
        "#  Rank  3 Group  0 Pid 12 on a device  3 [0x04] NVIDIA H100 80GB HBM3\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "           0             0     float     sum      -1     0.10    0.00    0.00      0     0.10    0.00    0.00      0\n"
        "        1024           256     float     sum      -1    10.00    0.10    0.15      0    11.00    0.09    0.14      0\n";
    cs_meas_set s = {0};
    read_ok(0, &s, "all_reduce.log", log);
    ck_assert_int_eq((int)s.ndatasets, 1);
    ck_assert_int_eq((int)s.n, 1); /* size 0 skipped */
    ck_assert_int_eq(s.rows[0].line, 8);
    ck_assert_int_eq(s.rows[0].ranks, 4);
    ck_assert_int_eq(s.rows[0].nodes, 1);
    ck_assert_int_eq(s.datasets[0].gpus_per_process, 2);
    ck_assert_str_eq(s.datasets[0].hardware, "4 x NVIDIA H100 80GB HBM3 on 1 host");
    cs_meas_free(&s);
    /* the "nThread N nGpus G" line says it outright */
    char with_line[2048];
    snprintf(with_line, sizeof with_line, "# nThread 2 nGpus 4 minBytes 8 maxBytes 8\n%s", log);
    read_ok(0, &s, "all_reduce.log", with_line);
    ck_assert_int_eq(s.datasets[0].gpus_per_process, 8);
    cs_meas_free(&s);
}
END_TEST

/* ---- NCCL_ALGO / NCCL_PROTO ------------------------------------------------------- */

START_TEST(forced_algorithm_and_protocol)
{
    static const struct {
        const char *pre;
        int algo, proto;
        const char *name;
    } cases[] = {
        {"NCCL_ALGO=Tree NCCL_PROTO=LL128 mpirun ./all_reduce_perf\n", CS_ALGO_TREE,
         CS_PROTO_LL128, "Tree"},
        {"host:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n"
         "host:1:1 [0] NCCL INFO NCCL_PROTO set by environment to Simple\n",
         CS_ALGO_RING, CS_PROTO_SIMPLE, "Ring"},
        {"NCCL_ALGO=Ring,Tree NCCL_PROTO=^LL128\n", CS_CHOICE_AUTO, CS_CHOICE_AUTO, ""},
        {"NCCL_ALGO=^NVLS\n", CS_CHOICE_AUTO, CS_CHOICE_AUTO, ""},
        {"NCCL_ALGO=CollNetDirect\n", CS_MEAS_ALGO_OTHER, CS_CHOICE_AUTO, "CollNetDirect"},
        {"NCCL_ALGO=NVLS NCCL_PROTO=bogus\n", CS_ALGO_NVLS, CS_CHOICE_AUTO, "NVLS"},
        {"no environment at all\n", CS_CHOICE_AUTO, CS_CHOICE_AUTO, ""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *log = log_with(cases[k].pre, "");
        cs_meas_set s = {0};
        read_ok(0, &s, "all_reduce.log", log);
        ck_assert_msg(s.rows[1].algo == cases[k].algo, "case %zu: algo %d", k, s.rows[1].algo);
        ck_assert_msg(s.rows[1].proto == cases[k].proto, "case %zu: proto %d", k, s.rows[1].proto);
        ck_assert_str_eq(s.rows[1].algo_name, cases[k].name);
        cs_meas_free(&s);
        free(log);
        /* the same in CSV header comments */
        char csv[512] = "";
        size_t n = 0;
        for (const char *p = cases[k].pre; *p; p = strchr(p, '\n') + 1)
            n += (size_t)snprintf(csv + n, sizeof csv - n, "# %.*s\n",
                                  (int)(strchr(p, '\n') - p), p);
        snprintf(csv + n, sizeof csv - n,
                 "# collective: all_reduce\n# ranks: 8\nsize_bytes,time_us\n1024,10\n");
        read_ok(1, &s, "forced.csv", csv);
        ck_assert_msg(s.rows[0].algo == cases[k].algo, "csv case %zu: algo %d", k, s.rows[0].algo);
        ck_assert_int_eq(s.rows[0].proto, cases[k].proto);
        cs_meas_free(&s);
    }
    /* a column wins over the header, per row */
    const char *csv = "# NCCL_ALGO=Tree NCCL_PROTO=LL\nop,ranks,size_bytes,time_us,algo\n"
                      "all_reduce,8,1024,10,ring\nall_reduce,8,2048,11,\n";
    cs_meas_set s = {0};
    read_ok(1, &s, "cols.csv", csv);
    ck_assert_int_eq(s.rows[0].algo, CS_ALGO_RING);
    ck_assert_int_eq(s.rows[1].algo, CS_CHOICE_AUTO); /* an empty cell: the library's choice */
    ck_assert_int_eq(s.rows[0].proto, CS_PROTO_LL);   /* no proto column: the header's */
    cs_meas_free(&s);
}
END_TEST

/* ---- CSV -------------------------------------------------------------------------- */

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
    ck_assert_int_eq(s.rows[4].algo, CS_ALGO_NVLSTREE); /* "2,16,all_reduce,NVLSTree,...": a row */
    ck_assert_str_eq(s.rows[4].algo_name, "NVLSTree");
    ck_assert_int_eq(s.rows[6].algo, CS_MEAS_ALGO_OTHER); /* "2,16,all_reduce,CollNet_SHARP,..." */
    ck_assert_str_eq(s.rows[6].algo_name, "CollNet_SHARP");
    cs_meas_free(&s);
}
END_TEST


START_TEST(csv_header_lines_and_columns)
{
    /* columns in any order and case, aliases, blanks around cells, CRLF,
     * header lines anywhere before the rows, only the first hardware kept */
    const char *csv = "# hardware: 2x box A\r\n"
                      "# hardware: ignored\r\n"
                      "#   nodes: 2\r\n"
                      "# command: all_gather_perf -b 8 -g 2\r\n"
                      "\r\n"
                      " Time_US , Collective, RANKS, Size_Bytes, protocol , extra\r\n"
                      "  12.5 , all_gather , 4 , 4096 , LL , x\r\n"
                      "  13.5 , reduce_scatter , 4 , 8192 , Simple , y\r\n";
    cs_meas_set s = {0};
    read_ok(1, &s, "dir/some.name.csv", csv);
    ck_assert_str_eq(s.datasets[0].name, "some.name");
    ck_assert_str_eq(s.datasets[0].source, "dir/some.name.csv");
    ck_assert_str_eq(s.datasets[0].kind, "csv");
    ck_assert_str_eq(s.datasets[0].hardware, "2x box A");
    ck_assert_int_eq(s.datasets[0].gpus_per_process, 2);
    ck_assert_int_eq((int)s.n, 2);
    ck_assert_int_eq(s.rows[0].op, CS_OP_ALL_GATHER);
    ck_assert_int_eq(s.rows[1].op, CS_OP_REDUCE_SCATTER);
    ck_assert_int_eq(s.rows[0].ranks, 4);
    ck_assert_int_eq(s.rows[0].nodes, 2); /* from '# nodes:' */
    ck_assert_int_eq(s.rows[0].proto, CS_PROTO_LL);
    ck_assert_int_eq(s.rows[1].proto, CS_PROTO_SIMPLE);
    ck_assert_double_eq_tol(s.rows[1].time_us, 13.5, 1e-12);
    ck_assert_double_eq_tol(s.rows[1].size_bytes, 8192, 1e-12);
    ck_assert_int_eq(s.rows[1].line, 8);
    ck_assert_int_eq(s.rows[1].dataset, 0);
    cs_meas_free(&s);
}
END_TEST

/* The largest relative gap, over rows >= 1 MiB, between the busbw column
 * of a reference CSV and the busbw cs_meas_busbw_GBps gives for the row
 * as read (op and ranks from the '#' header lines), with `ranks` ranks
 * instead when > 0. */
static double busbw_gap(const char *path, int ranks)
{
    cs_meas_set s = {0};
    cs_diag d;
    ck_assert_int_eq(cs_meas_read_csv(&s, path, &d), 0);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    double gap = 0;
    size_t i = 0;
    while (fgets(line, sizeof line, f)) {
        double size, time, algbw, busbw;
        if (sscanf(line, "%lf,%*d,%*[^,],%*[^,],%lf,%lf,%lf", &size, &time, &algbw, &busbw) != 4)
            continue;
        cs_meas_row r = s.rows[i++];
        ck_assert_double_eq(r.size_bytes, size);
        if (ranks > 0) r.ranks = ranks;
        if (size >= 1048576)
            gap = fmax(gap, fabs(cs_meas_busbw_GBps(&r, r.time_us) - busbw) / busbw);
    }
    fclose(f);
    ck_assert_int_eq((int)i, (int)s.n);
    cs_meas_free(&s);
    return gap;
}

START_TEST(busbw_agrees_and_a_wrong_rank_count_is_caught)
{
    const char *path = "validation/nccl-tests/h100_8gpu_allreduce_together_ringcfg.csv";
    /* busbw carries 2 decimals: within 0.5% at >= 1 MiB */
    double gap = busbw_gap(path, 0);
    ck_assert_msg(gap < 0.005, "times and busbw disagree by %.3g", gap);
    /* deliberately wrong: 4 ranks give factor 1.5 instead of 1.75 */
    gap = busbw_gap(path, 4);
    ck_assert_msg(gap > 0.1, "a wrong rank count went unnoticed (gap %.3g)", gap);
    /* and a busbw-only row gets the time that busbw implies */
    const char *csv = "# collective: all_reduce\n# ranks: 8\nsize_bytes,busbw_GBps\n1000000000,1.75\n";
    cs_meas_set s = {0};
    read_ok(1, &s, "bw.csv", csv);
    ck_assert_double_eq_tol(s.rows[0].time_us, 1e6, 1e-6);
    cs_meas_free(&s);
}
END_TEST

/* A UTF-8 byte order mark (what spreadsheets write as "CSV UTF-8") is
 * skipped, in CSV and logs alike; columns count from after it. */
START_TEST(utf8_bom_is_skipped)
{
    cs_meas_set s = {0};
    read_ok(1, &s, "bom.csv", "\xEF\xBB\xBFsize_bytes,time_us,op,ranks\n8,1.5,all_reduce,2\n");
    ck_assert_int_eq((int)s.n, 1);
    ck_assert_double_eq(s.rows[0].time_us, 1.5);
    cs_meas_free(&s);
    read_ok(1, &s, "bom.csv", "\xEF\xBB\xBF# collective: all_reduce\n# ranks: 4\nsize_bytes,time_us\n8,2\n");
    ck_assert_int_eq(s.rows[0].ranks, 4);
    cs_meas_free(&s);
    cs_diag d;
    const char *bad = "\xEF\xBB\xBFhello\n";
    ck_assert_int_eq(cs_meas_read_csv_string(&s, "b.csv", bad, strlen(bad), &d), CS_ECONFIG);
    ck_assert_int_eq(d.column, 1);
    ck_assert_msg(strstr(d.message, "header row"), "%s", d.message);
}
END_TEST

/* Lines of a table that start with a number but are no result row (a size
 * written 1K, a negative size, 401 digits) are skipped, counted and their
 * line numbers kept for the warning; noise lines are not counted. */
START_TEST(nccl_tests_skipped_lines_are_counted)
{
    char big[512];
    memset(big, '9', 401);
    snprintf(big + 401, sizeof big - 401, " 256 float sum -1 9.0 0.1 0.2 0 9.0 0.1 0.2 0\n");
    char log[2048];
    snprintf(log, sizeof log,
             "# all_reduce_perf\n#  Rank  0 Group 0 Pid 1 on h device 0 [0x07] GPU\n"
             "#  Rank  1 Group 0 Pid 2 on h device 1 [0x08] GPU\n"
             "%s%s" /* lines 4, 5 */
             "     1K    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n"
             "  -2048    512  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n"
             "%s" /* line 8 */
             "h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n"
             "# Out of bounds values : 0 OK\n",
             "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n",
             "   1024    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n", big);
    cs_meas_set s = {0};
    read_ok(0, &s, "skip.log", log);
    ck_assert_int_eq((int)s.n, 1);
    ck_assert_int_eq(s.rows[0].ranks, 2);
    ck_assert_int_eq(s.datasets[0].nskipped, 3);
    ck_assert_int_eq(s.datasets[0].skipped_lines[0], 6);
    ck_assert_int_eq(s.datasets[0].skipped_lines[1], 7);
    ck_assert_int_eq(s.datasets[0].skipped_lines[2], 8);
    cs_meas_free(&s);
}
END_TEST

/* ---- garbage ---------------------------------------------------------------------- */

/* garbage: each must fail with the right line (and leave the set as it
 * was); csv picks the reader (0: nccl-tests log, 1: CSV). */
static const struct {
    int csv;
    const char *text;
    int line, column;
    const char *needle;
} GARBAGE[] = {
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
    {0, "#  size  count  type redop root time algbw busbw #wrong time algbw busbw #wrong\n", 1,
     1, "without result rows"},
    {0,
     "# all_reduce_perf\n"
     "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n"
     "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n",
     3, 1, "without result rows"}, /* a repeated header renews the table's line */
    {0,
     "# scatter_perf\n"
     "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n"
     "   1024    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n",
     2, 1, "does not model"},
    {0,
     "# all_reduce_perf\n"
     "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n"
     "   1024    256  float  sum     -1  9.0   0.11   0.11   0      9.0  0.11  0.11  0\n",
     2, 1, "rank count"},
    {0,
     "# all_reduce_perf\n"
     "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n"
     "   1024    256  float  sum     -1  9.0   0.11   x.y   0      9.0  0.11  0.21  0\n",
     3, 49, "busbw"},
    {1, "# ranks: many\n", 1, 10, "an integer in 1.."},
    {1, "# nodes: 0\n", 1, 10, "an integer in 1.."},
    {1, "size_bytes,time_us,op,ranks\n8,1,foo,8\n", 2, 5, "unknown op 'foo'"},
    {1, "size_bytes,time_us,op\n8,1,all_reduce\n", 2, 1, "how many ranks"},
    {1, "size_bytes,time_us,op,ranks\n8,1,all_reduce,0.5\n", 2, 16, "ranks must be"},
    {1, "size_bytes,time_us,op,ranks,nodes\n8,1,all_reduce,4,x\n", 2, 18, "nodes must be"},
    {1, "size_bytes,time_us,op,ranks,nodes\n8,1,all_reduce,4,8\n", 2, 1,
     "4 ranks cannot fill 8 nodes"},
    {1, "size_bytes,time_us,op,ranks\n-8,1,all_reduce,4\n", 2, 1, "size_bytes must be"},
    {1, "size_bytes,time_median_us,op,ranks\n8,0,all_reduce,4\n", 2, 3, "time_median_us"},
    {1, "size_bytes,busbw_GBps,op,ranks\n8,-1,all_reduce,4\n", 2, 3, "busbw_GBps must be"},
    {1, "size_bytes,time_us,op,ranks\n0,1,all_reduce,4\n", 1, 1, "no measurement rows"},
    {1, "", 1, 1, "no header row"},
    {1, "a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,a,"
        "a,a,a,a,a,a,a\n", 1, 1, "more than 48 columns"},
    /* integers are range-checked, never wrapped (a rank of 2^31-1 made
     * max_rank + 1 overflow; 2^32 made atoi return 0) */
    {0, "# all_reduce_perf\n" "#  Rank 2147483647 Group  0 Pid 1 on host device  0 [0x07] GPU\n" "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n" "   1024    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n", 2, 9, "'2147483647' out of range"},
    {0, "# all_reduce_perf\n" "#  Rank 4294967296 Group  0 Pid 1 on host device  0 [0x07] GPU\n" "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n" "   1024    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n", 2, 9, "'4294967296' out of range"},
    {0, "# all_reduce_perf\n" "#  Rank 99999999999 Group  0 Pid 1 on host device  0 [0x07] GPU\n" "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n" "   1024    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n", 2, 9, "'99999999999' out of range"},
    /* CSV: a known column named twice (or with its alias) is refused */
    {1, "size_bytes,time_us,time_us\n1,2,3\n", 1, 20, "'time_us' given twice (first at column 12)"},
    {1, "op,size_bytes,collective,time_us\n", 1, 15, "'collective' given twice"},
    {1, "# ranks: 4294967297\n", 1, 10, "1..100000000"},
    {1, "# nodes: 99999999999\n", 1, 10, "1..100000000"},
    {1, "# nccl-tests -g 4294967296\n", 1, 17, "-g expects"},
    /* a log cut off in a row is an error, not a silently shorter table */
    {0, "# all_reduce_perf\n" "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n" "   1024    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n" "   2048    512\n", 4, 12, "incomplete result row: 2 of the 13"},
    {0, "# all_reduce_perf\n" "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n" "   1024    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n" "   2048", 4, 4, "incomplete result row: 1 of"},
    {0, "# all_reduce_perf\n" "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n" "   1024    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n" "0: 2048 512\n", 4, 9, "incomplete"},
    {0, "# all_reduce_perf\n" "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n" "   1024    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n" "   2048    512  float  sum     -1  9.0   0.11   0.21   0      9.0", 4, 63, "last result row is cut off"},
    {0, "# all_reduce_perf\n" "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n" "99999999999999999999 256 float sum -1 9.0 0.1 0.2 0 9.0 0.1 0.2 0\n", 3, 1, "size out of range"},
    {0, "# nThread 1 nGpus 99999999999\n# all_reduce_perf\n" "#  size  count  type  redop  root  time  algbw  busbw #wrong  time algbw busbw #wrong\n" "   1024    256  float  sum     -1  9.0   0.11   0.21   0      9.0  0.11  0.21  0\n", 1, 19, "nGpus as an integer in 1..1024"},
};

START_TEST(garbage_errors)
{
    for (size_t k = 0; k < sizeof GARBAGE / sizeof GARBAGE[0]; k++) {
        cs_meas_set s = {0};
        cs_diag d;
        cs_diag_clear(&d);
        const char *text = GARBAGE[k].text;
        /* one good dataset first: a failed read must not disturb it */
        const char *good = "# collective: all_reduce\n# ranks: 2\nsize_bytes,time_us\n8,10\n";
        ck_assert_int_eq(cs_meas_read_csv_string(&s, "good.csv", good, strlen(good), &d), 0);
        int rc = GARBAGE[k].csv
                     ? cs_meas_read_csv_string(&s, "bad.csv", text, strlen(text), &d)
                     : cs_meas_read_nccl_tests_string(&s, "bad.log", text, strlen(text), &d);
        ck_assert_msg(rc == CS_ECONFIG, "case %zu: rc %d", k, rc);
        ck_assert_str_eq(d.file, GARBAGE[k].csv ? "bad.csv" : "bad.log");
        ck_assert_msg(d.line == GARBAGE[k].line, "case %zu: line %d, want %d (%s)", k, d.line,
                      GARBAGE[k].line, d.message);
        ck_assert_msg(d.column == GARBAGE[k].column, "case %zu: column %d, want %d (%s)", k,
                      d.column, GARBAGE[k].column, d.message);
        ck_assert_msg(strstr(d.message, GARBAGE[k].needle), "case %zu: '%s' lacks '%s'", k,
                      d.message, GARBAGE[k].needle);
        ck_assert_int_eq((int)s.n, 1);
        ck_assert_int_eq((int)s.ndatasets, 1);
        cs_meas_free(&s);
    }
}
END_TEST

/* a file that does not exist, and a directory */
START_TEST(missing_files)
{
    cs_meas_set s = {0};
    cs_diag d;
    ck_assert_int_eq(cs_meas_read_nccl_tests(&s, DATA "no-such.log", &d), CS_ENOENT);
    ck_assert_int_eq(cs_meas_read_csv(&s, "tests", &d), CS_EIO);
    cs_meas_free(&s);
}
END_TEST


static Suite *suite(void)
{
    Suite *s = suite_create("measure");
    TCase *tl = tcase_create("nccl-tests");
    tcase_add_test(tl, nccl_tests_new_layout_srun);
    tcase_add_test(tl, nccl_tests_old_layout);
    tcase_add_test(tl, nccl_tests_mpirun_prefix_and_tables);
    tcase_add_test(tl, nccl_tests_op_sources);
    tcase_add_test(tl, nccl_tests_repeated_header_and_gpus_per_process);
    tcase_add_test(tl, forced_algorithm_and_protocol);
    tcase_add_test(tl, nccl_tests_skipped_lines_are_counted);
    suite_add_tcase(s, tl);
    TCase *tc = tcase_create("csv");
    tcase_add_test(tc, reference_csv);
    tcase_add_test(tc, utf8_bom_is_skipped);
    tcase_add_test(tc, collsim_hw_csv);
    tcase_add_test(tc, summary_csv);
    tcase_add_test(tc, csv_header_lines_and_columns);
    tcase_add_test(tc, busbw_agrees_and_a_wrong_rank_count_is_caught);
    suite_add_tcase(s, tc);
    TCase *tg = tcase_create("garbage");
    tcase_add_test(tg, garbage_errors);
    tcase_add_test(tg, missing_files);
    suite_add_tcase(s, tg);
    return s;
}

int main(void)
{
    return cs_test_run(suite());
}
