/* SPDX-License-Identifier: MIT */
/*
 * test-hw-core.c - the parts of collsim-hw that need neither MPI nor a GPU:
 * the JSON reader (values, escapes, positions of errors), the schedule
 * reader (a real `collsim simulate --emit-schedule` output round-trips,
 * bad schedules are rejected at FILE:LINE:COLUMN), the predicted timeline
 * and exposed communication against hand-computed values, the reduced-
 * precision conversions and the check pattern (a corrupted element must be
 * caught), the CPU GEMM against a naive reference (and a deliberately
 * wrong result must differ), GEMM shapes, statistics, durable rows, and
 * what a replay plan needs of a backend (groups, buffer sizes). A
 * pipeline's schedule: test-hw-pipeline.c.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "config/config.h"
#include "cpugemm.h"
#include "json.h"
#include "train/model.h"
#include "pattern.h"
#include "config/presets.h"
#include "out/report.h"
#include "rowfile.h"
#include "rplan.h"
#include "schedule.h"
#include "train/training.h"
#include "train/workload.h"
#include "out/schedule.h"
#include "testutil.h"

/* ---- json ---------------------------------------------------------------- */

static cs_json *parse_ok(const char *s)
{
    cs_json *v = NULL;
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_json_parse(s, strlen(s), "t.json", &v, &d), &d, "%s", s);
    return v;
}

static void parse_bad(const char *s, int line, int col, const char *needle)
{
    cs_json *v = NULL;
    cs_diag d;
    cs_diag_clear(&d);
    int rc = cs_json_parse(s, strlen(s), "t.json", &v, &d);
    cs_test_diag_error(rc, &d, "t.json", line, col, needle, "%s", s);
    ck_assert_ptr_null(v);
}

START_TEST(json_values)
{
    cs_json *v = parse_ok(" {\"a\": [1, -2.5e3, true, false, null], \"b\": {\"c\": \"x\\u00e9\\n\"},"
                          " \"e\": \"\\ud83d\\ude00\"} ");
    ck_assert_int_eq(v->type, CS_JSON_OBJECT);
    ck_assert_uint_eq(v->n, 3);
    const cs_json *a = cs_json_get(v, "a");
    ck_assert_int_eq(a->type, CS_JSON_ARRAY);
    ck_assert_uint_eq(a->n, 5);
    ck_assert_double_eq(a->items[0]->number, 1);
    ck_assert_double_eq(a->items[1]->number, -2500);
    ck_assert_int_eq(a->items[2]->boolean, 1);
    ck_assert_int_eq(a->items[3]->type, CS_JSON_BOOL);
    ck_assert_int_eq(a->items[4]->type, CS_JSON_NULL);
    ck_assert_str_eq(cs_json_get(cs_json_get(v, "b"), "c")->string, "x\xc3\xa9\n");
    ck_assert_str_eq(cs_json_get(v, "e")->string, "\xf0\x9f\x98\x80");
    ck_assert_int_eq(a->line, 1);
    ck_assert_int_eq(a->column, 8);
    ck_assert_ptr_null(cs_json_get(v, "zz"));
    ck_assert_ptr_null(cs_json_get(a, "a"));
    cs_json_free(v);
    cs_json_free(parse_ok("[]"));
    cs_json_free(parse_ok("{}"));
    cs_json_free(parse_ok("0"));
}
END_TEST

START_TEST(json_errors)
{
    parse_bad("", 1, 1, "end of input");
    parse_bad("{\"a\": 1,}", 1, 9, "member name");
    parse_bad("[1 2]", 1, 4, "expected ',' or ']'");
    parse_bad("{\"a\": 1, \"a\": 2}", 1, 10, "duplicate member 'a'");
    parse_bad("{\n  \"a\": tru}", 2, 8, "expected a value");
    parse_bad("[01]", 1, 3, "expected ',' or ']'");
    parse_bad("[1.]", 1, 4, "digit after '.'");
    parse_bad("\"abc", 1, 5, "unterminated");
    parse_bad("\"a\\x\"", 1, 4, "invalid escape");
    parse_bad("\"\\ud800x\"", 1, 8, "surrogate");
    parse_bad("\"\\u0000\"", 1, 8, "\\u0000");
    parse_bad("[1] 2", 1, 5, "after the JSON value");
    char deep[200];
    memset(deep, '[', 100);
    deep[100] = 0;
    parse_bad(deep, 1, 66, "deeper than 64");
}
END_TEST

/* ---- schedule -------------------------------------------------------------- */

static const char *const mini =
    "{\"format\": \"collsim-schedule\", \"version\": 1,\n"
    " \"groups\": {\"world\": 2, \"shard\": 2, \"replica\": 1},\n"
    " \"tasks\": [\n"
    "  {\"id\": 10, \"kind\": \"compute\", \"stream\": \"compute\", \"name\": \"f\", \"flops\": 1e9,"
    " \"mem_bytes\": 0, \"predicted_s\": 2, \"deps\": []},\n"
    "  {\"id\": 11, \"kind\": \"collective\", \"stream\": \"comm\", \"name\": \"ar\", \"op\": "
    "\"all_reduce\", \"size_bytes\": 4096, \"dtype\": \"bf16\", \"group\": \"world\", \"algo\": "
    "\"ring\", \"proto\": \"simple\", \"predicted_s\": 3, \"deps\": [{\"task\": 10, \"when\": "
    "\"end\"}]},\n"
    "  {\"id\": 12, \"kind\": \"compute\", \"stream\": \"compute\", \"name\": \"g\", \"flops\": 1e9,"
    " \"predicted_s\": 1, \"deps\": []},\n"
    "  {\"id\": 13, \"kind\": \"memory\", \"stream\": \"compute\", \"name\": \"opt\", \"mem_bytes\": "
    "1e6, \"predicted_s\": 0.5, \"deps\": [{\"task\": 11, \"when\": \"end\"}, {\"task\": 12, "
    "\"when\": \"start\"}]}\n"
    " ]}\n";

START_TEST(schedule_mini)
{
    cs_hw_schedule s;
    cs_diag d;
    cs_diag_clear(&d);
    ck_assert_int_eq(cs_hw_schedule_parse(mini, strlen(mini), "m.json", &s, &d), 0);
    ck_assert_uint_eq(s.n, 4);
    ck_assert_int_eq(s.group_ranks[CS_GROUP_WORLD], 2);
    ck_assert_int_eq(s.tasks[1].kind, CS_TASK_COLLECTIVE);
    ck_assert_int_eq(s.tasks[1].op, CS_OP_ALL_REDUCE);
    ck_assert_int_eq(s.tasks[1].dtype, CS_DTYPE_BF16);
    ck_assert_str_eq(s.tasks[1].algo, "ring");
    ck_assert_int_eq(s.tasks[3].ndeps, 2);
    ck_assert_int_eq(s.tasks[3].deps[0], 1); /* id 11 -> index 1 */
    ck_assert_int_eq(s.tasks[3].on_start[1], 1);
    /* timeline by hand: f [0,2], ar [2,5] on comm, g [2,3], opt waits for
     * ar's end and g's start: [5,5.5] */
    double st[4], en[4];
    ck_assert_double_eq_tol(cs_hw_schedule_predict(&s, st, en), 5.5, 1e-12);
    ck_assert_double_eq_tol(st[1], 2, 1e-12);
    ck_assert_double_eq_tol(st[2], 2, 1e-12);
    ck_assert_double_eq_tol(st[3], 5, 1e-12);
    /* the collective [2,5] overlaps compute g [2,3]: exposed 2 s */
    ck_assert_double_eq_tol(cs_hw_exposed_comm_s(&s, st, en), 2, 1e-12);
    /* a deliberately wrong timeline (g moved away) must change the answer */
    st[2] = 6;
    en[2] = 7;
    ck_assert_double_eq_tol(cs_hw_exposed_comm_s(&s, st, en), 3, 1e-12);
    cs_hw_schedule_free(&s);
}
END_TEST

/* text with `from` replaced by `to` must fail to parse at `line`, naming needle. */
static void sched_bad_in(const char *text, const char *from, const char *to, int line,
                         const char *needle)
{
    char *buf = cs_test_replace(text, from, to);
    cs_hw_schedule s;
    cs_diag d;
    cs_diag_clear(&d);
    ck_assert_int_eq(cs_hw_schedule_parse(buf, strlen(buf), "m.json", &s, &d), CS_ECONFIG);
    ck_assert_msg(d.line == line && strstr(d.message, needle), "%s -> %s: %d: %s", from, to, d.line,
                  d.message);
    ck_assert_uint_eq(s.n, 0);
    free(buf);
}

static void sched_bad(const char *from, const char *to, int line, const char *needle)
{
    sched_bad_in(mini, from, to, line, needle);
}

START_TEST(schedule_errors)
{
    sched_bad("\"collsim-schedule\"", "\"other\"", 1, "'format'");
    sched_bad("\"version\": 1", "\"version\": 3", 1, "version");
    sched_bad("\"version\": 1", "\"version\": 2", 1, "missing member 'mesh'");
    sched_bad("\"world\": 2", "\"world\": 3", 2, "shard x replica");
    sched_bad("\"kind\": \"memory\"", "\"kind\": \"mem\"", 7, "compute, memory, collective");
    sched_bad("\"op\": \"all_reduce\"", "\"op\": \"allreduce\"", 5, "'op'");
    sched_bad("\"group\": \"world\"", "\"group\": \"dp\"", 5, "world, shard, replica");
    sched_bad("{\"task\": 10, \"when\": \"end\"}", "{\"task\": 13, \"when\": \"end\"}", 5,
              "not an earlier task");
    sched_bad("\"when\": \"start\"", "\"when\": \"begin\"", 7, "start, end");
    sched_bad("\"id\": 12", "\"id\": 10", 6, "duplicate task id 10");
    sched_bad("\"predicted_s\": 1,", "\"predicted_s\": -1,", 6, ">= 0");
    sched_bad("\"name\": \"g\", ", "", 6, "missing member 'name'");
    sched_bad("\"size_bytes\": 4096", "\"size_bytes\": \"4K\"", 5, "must be a number");
}
END_TEST

/* mini as version 2: a mesh of 2 ranks, groups by the layout's names. */
static const char v2_head[] =
    "{\"format\": \"collsim-schedule\", \"version\": 2,\n"
    " \"mesh\": [{\"name\": \"tp\", \"size\": 1}, {\"name\": \"dp_shard\", \"size\": 2}], "
    "\"groups\": {\"world\": {\"ranks\": 2, \"dims\": [\"tp\", \"dp_shard\"]}, "
    "\"dp_shard\": {\"ranks\": 2, \"dims\": [\"dp_shard\"]}},\n";

static char *mini_v2(void)
{
    const char *tasks = strstr(mini, " \"tasks\"");
    ck_assert_ptr_nonnull(tasks);
    char *buf = malloc(sizeof v2_head + strlen(tasks));
    ck_assert_ptr_nonnull(buf); /* and GCC's -Warray-bounds knows it is not NULL */
    memcpy(buf, v2_head, sizeof v2_head - 1);
    memcpy(buf + sizeof v2_head - 1, tasks, strlen(tasks) + 1);
    return buf;
}

static void sched_bad_v2(const char *from, const char *to, int line, const char *needle)
{
    char *v2 = mini_v2();
    sched_bad_in(v2, from, to, line, needle);
    free(v2);
}

/* Version 1 and version 2 of one schedule read alike: the same tasks, the
 * same mesh sizes and colours; v2's errors name the member at fault. */
START_TEST(schedule_v1_and_v2_alike)
{
    char *v2 = mini_v2();
    cs_hw_schedule a, b;
    cs_diag d;
    ck_assert_int_eq(cs_hw_schedule_parse(mini, strlen(mini), "v1.json", &a, &d), 0);
    ck_assert_msg(cs_hw_schedule_parse(v2, strlen(v2), "v2.json", &b, &d) == 0, "%s", d.message);
    ck_assert_int_eq(a.version, 1);
    ck_assert_int_eq(b.version, 2);
    ck_assert_uint_eq(a.n, b.n);
    ck_assert_int_eq(a.tasks[1].group, b.tasks[1].group);
    ck_assert_int_eq(a.mesh.ranks, b.mesh.ranks);
    for (int g = 0; g < 2; g++)
        for (int r = 0; r < 2; r++)
            ck_assert_int_eq(cs_mesh_group_colour(&a.mesh, a.group_dims[g], r),
                             cs_mesh_group_colour(&b.mesh, b.group_dims[g], r));
    ck_assert_int_eq(a.group_ranks[CS_GROUP_DP_SHARD], b.group_ranks[CS_GROUP_DP_SHARD]);
    cs_hw_schedule_free(&a);
    cs_hw_schedule_free(&b);
    free(v2);
    sched_bad_v2("\"dims\": [\"dp_shard\"]", "\"dims\": [\"dp\"]", 2, "not in the mesh");
    sched_bad_v2("\"dp_shard\": {\"ranks\": 2", "\"dp_shard\": {\"ranks\": 4", 2,
                 "product of its dimensions");
    sched_bad_v2("\"dp_shard\": {", "\"shard\": {", 2, "unknown group 'shard'");
    sched_bad_v2("\"dims\": [\"tp\", \"dp_shard\"]", "\"dims\": [\"tp\"]", 2, "world");
    sched_bad_v2("\"group\": \"world\"", "\"group\": \"dp_replicate\"", 5,
                 "the schedule's groups");
}
END_TEST

/* The simulator's own schedule reads back with the same tasks. */
START_TEST(schedule_from_simulator)
{
    cs_diag d;
    cs_diag_clear(&d);
    cs_model m;
    ck_assert_int_eq(cs_model_load("gpt2-124m", &m, &d), 0);
    cs_cluster cl;
    ck_assert_int_eq(cs_config_cluster("dgx-h100", &cl, &d), 0);
    cs_topology topo;
    ck_assert_int_eq(cs_topology_build(&cl, 16, 0, &topo, &d), 0);
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_FSDP_HYBRID_SHARD);
    t.shard_group = 8;
    cs_workload *w = NULL;
    int rc = cs_workload_build(&m, &t, &topo, &w, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    cs_buf b = {0};
    cs_schedule_write(w, &b);
    cs_hw_schedule s;
    ck_assert_int_eq(cs_hw_schedule_parse(b.data, b.len, "sim.json", &s, &d), 0);
    ck_assert_uint_eq(s.n, cs_workload_count(w));
    for (size_t i = 0; i < s.n; i++) {
        const cs_task *x = cs_workload_task(w, i);
        ck_assert_int_eq(s.tasks[i].id, x->id);
        ck_assert_int_eq(s.tasks[i].kind, x->kind);
        ck_assert_int_eq(s.tasks[i].stream, x->stream);
        ck_assert_str_eq(s.tasks[i].name, x->name);
        ck_assert_int_eq(s.tasks[i].ndeps, x->ndeps);
        ck_assert_double_eq_tol(s.tasks[i].predicted_s, x->duration_s, 1e-8 * x->duration_s);
        if (x->kind == CS_TASK_COLLECTIVE) {
            ck_assert_int_eq(s.tasks[i].op, x->op);
            ck_assert_int_eq(s.tasks[i].group, x->group);
            ck_assert_double_eq(s.tasks[i].size_bytes, x->size_bytes);
        }
    }
    /* the mesh travels: every group's colours are the simulator's */
    const cs_layout *l = cs_workload_layout(w);
    ck_assert_int_eq(s.version, 2);
    ck_assert_int_eq(s.mesh.ranks, 16);
    for (int g = 0; g < CS_GROUP_COUNT; g++) {
        ck_assert_int_eq(s.group_ranks[g], cs_workload_group_ranks(w, (cs_group)g));
        for (int r = 0; r < 16; r++)
            ck_assert_int_eq(cs_mesh_group_colour(&s.mesh, s.group_dims[g], r),
                             cs_mesh_group_colour(&l->mesh, l->group[g].dims, r));
    }
    ck_assert_int_eq(s.group_ranks[CS_GROUP_DP_SHARD], 8);
    ck_assert_int_eq(s.group_ranks[CS_GROUP_DP_REPLICATE], 2);
    cs_hw_schedule_free(&s);
    cs_buf_free(&b);
    cs_workload_free(w);
}
END_TEST

/* ---- conversions and check pattern ------------------------------------- */

START_TEST(float_conversions)
{
    /* every fp16 and bf16 value round-trips through float */
    for (unsigned h = 0; h < 65536; h++) {
        float f = cs_hw_fp16_to_float((uint16_t)h);
        if (!isnan(f)) ck_assert_uint_eq(cs_hw_float_to_fp16(f), h);
        float g = cs_hw_bf16_to_float((uint16_t)h);
        if (!isnan(g)) ck_assert_uint_eq(cs_hw_float_to_bf16(g), h);
    }
    for (unsigned c = 0; c < 256; c++) {
        float f = cs_hw_fp8_to_float((uint8_t)c);
        if (!isnan(f) && !(f == 0 && c == 0x80)) ck_assert_uint_eq(cs_hw_float_to_fp8(f), c);
    }
    ck_assert_float_eq(cs_hw_fp8_to_float(0x7e), 448.0f);
    ck_assert_float_eq(cs_hw_fp8_to_float(0x01), ldexpf(1, -9));
    ck_assert_uint_eq(cs_hw_float_to_fp8(1000.0f), 0x7e); /* saturates */
    ck_assert_uint_eq(cs_hw_float_to_fp16(1e6f), 0x7c00);
    /* round to nearest even: 1 + 2^-11 is halfway between fp16 1 and 1+2^-10 */
    ck_assert_uint_eq(cs_hw_float_to_fp16(1.0f + ldexpf(1, -11)), 0x3c00);
    ck_assert_uint_eq(cs_hw_float_to_fp16(1.0f + 3 * ldexpf(1, -11)), 0x3c02);
    ck_assert_uint_eq(cs_hw_float_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80);
    ck_assert_float_eq(cs_hw_fp8_to_float(cs_hw_float_to_fp8(17.0f)), 16.0f); /* tie to even */
}
END_TEST

/* Simulates each op on host buffers (the reference) and checks it; then
 * one wrong element must be counted. */
START_TEST(pattern_checks)
{
    const cs_dtype types[] = {CS_DTYPE_FP32, CS_DTYPE_BF16, CS_DTYPE_FP16, CS_DTYPE_FP8,
                              CS_DTYPE_FP64};
    const int n = 4;
    const size_t count = 37;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        cs_dtype t = types[ti];
        size_t ts = (size_t)cs_dtype_size(t);
        for (int op = 0; op < CS_OP_COUNT; op++) {
            size_t sc = cs_hw_send_count((cs_op)op, count, n), rc = cs_hw_recv_count((cs_op)op, count, n);
            char *send[4], *recv = malloc(rc * ts);
            for (int r = 0; r < n; r++) {
                send[r] = malloc(sc * ts);
                cs_hw_pattern_fill(send[r], t, (cs_op)op, count, r, n);
            }
            for (int r = 0; r < n; r++) {
                for (size_t i = 0; i < rc; i++) {
                    double v = 0;
                    switch (op) {
                    case CS_OP_ALL_REDUCE:
                    case CS_OP_REDUCE:
                        for (int q = 0; q < n; q++) v = v + cs_hw_elem_get(send[q], t, i);
                        break;
                    case CS_OP_REDUCE_SCATTER:
                        for (int q = 0; q < n; q++) v = v + cs_hw_elem_get(send[q], t, r * count + i);
                        break;
                    case CS_OP_ALL_GATHER: v = cs_hw_elem_get(send[i / count], t, i % count); break;
                    case CS_OP_ALL_TO_ALL:
                        v = cs_hw_elem_get(send[i / count], t, r * count + i % count);
                        break;
                    case CS_OP_SEND_RECV: v = cs_hw_elem_get(send[(r + n - 1) % n], t, i); break;
                    default: v = cs_hw_elem_get(send[0], t, i);
                    }
                    cs_hw_elem_set(recv, t, i, v);
                }
                ck_assert_int_eq(cs_hw_pattern_check(recv, t, (cs_op)op, count, r, n), 0);
                cs_hw_elem_set(recv, t, rc - 1, -3);
                ck_assert_int_eq(cs_hw_pattern_check(recv, t, (cs_op)op, count, r, n),
                                 op == CS_OP_REDUCE && r != 0 ? 0 : 1);
            }
            for (int r = 0; r < n; r++) free(send[r]);
            free(recv);
        }
    }
}
END_TEST

/* ---- GEMM, shapes, stats, rows ------------------------------------------ */

static int progress_calls;
static void count_progress(void *arg)
{
    (void)arg;
    progress_calls++;
}

START_TEST(cpu_gemm_matches_reference)
{
    const int m = 70, n = 33, k = 300;
    float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * k * n);
    float *c = malloc(sizeof(float) * m * n);
    for (int i = 0; i < m * k; i++) a[i] = (float)((i * 7) % 11) - 5;
    for (int i = 0; i < k * n; i++) b[i] = (float)((i * 5) % 13) - 6;
    progress_calls = 0;
    cs_hw_cpu_sgemm(m, n, k, a, b, c, count_progress, NULL);
    ck_assert_int_eq(progress_calls, 2 * 2); /* 2 row blocks x 2 k blocks */
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double want = 0;
            for (int p = 0; p < k; p++) want += (double)a[i * k + p] * b[p * n + j];
            ck_assert_double_eq_tol(c[i * n + j], want, 1e-3);
        }
    /* a deliberately wrong reference (transposed B) must disagree */
    double wrong = 0;
    for (int p = 0; p < n && p < k; p++) wrong += (double)a[p] * b[p];
    ck_assert(fabs(c[0] - wrong) > 1);
    free(a);
    free(b);
    free(c);
}
END_TEST

START_TEST(gemm_shapes)
{
    int m, n, k;
    ck_assert_int_eq(cs_hw_gemm_shape(2.0 * 100 * 100 * 100, 512, 2048, &m, &n, &k), 1);
    ck_assert_int_eq(m, 100);
    ck_assert_int_eq(k, 100);
    ck_assert_int_eq(cs_hw_gemm_shape(0, 512, 2048, &m, &n, &k), 1);
    ck_assert_int_eq(m, 1);
    double flops = 1e12;
    int reps = cs_hw_gemm_shape(flops, 512, 2048, &m, &n, &k);
    ck_assert_int_eq(m, 512);
    ck_assert_int_le(k, 2048);
    ck_assert_double_eq_tol(2.0 * m * n * k * reps, flops, 0.001 * flops);
}
END_TEST

START_TEST(stats_and_rows)
{
    double v[] = {5, 1, 4, 2, 3}, lo, med, hi;
    cs_hw_stats(v, 5, &lo, &med, &hi);
    ck_assert_double_eq(lo, 1);
    ck_assert_double_eq(med, 3);
    ck_assert_double_eq(hi, 5);
    cs_hw_stats(v, 4, &lo, &med, &hi);
    ck_assert_double_eq(med, 3);
    char buf[32];
    cs_hw_csv_safe(buf, sizeof buf, "a,b\n\"c\"");
    ck_assert_str_eq(buf, "a b  c ");

    char path[] = "/tmp/collsim-hw-rows.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    cs_hw_rowfile r;
    cs_diag d;
    ck_assert_int_eq(cs_hw_rowfile_open(&r, path, "x,y", &d), 0);
    ck_assert_int_eq(cs_hw_rowfile_row(&r, "%d,%d\n", 1, 2), 0);
    /* the row is on disk before close: read it back now */
    FILE *f = fopen(path, "r");
    char line[64] = "";
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "x,y\n");
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "1,2\n");
    fclose(f);
    ck_assert_int_eq(cs_hw_rowfile_close(&r), 0);
    remove(path);
    ck_assert_int_eq(cs_hw_rowfile_open(&r, "/nonexistent-dir/x.csv", "x", &d), CS_EIO);
    CS_ASSERT_CONTAINS(d.message, "cannot create");
    ck_assert_int_eq(cs_hw_exit_code(CS_HW_ETIMEOUT), 5);
    ck_assert_int_eq(cs_hw_exit_code(CS_HW_EUNAVAIL), 77);
}
END_TEST

START_TEST(replay_needs)
{
    /* 4 ranks, shards of 2: world 4, shard 2, replica 2 */
    const cs_hw_rtask tasks[] = {
        {.kind = CS_TASK_COLLECTIVE, .stream = CS_STREAM_COMM, .op = CS_OP_ALL_GATHER,
         .dtype = CS_DTYPE_BF16, .count = 1000, .group = CS_GROUP_DP_SHARD},
        {.kind = CS_TASK_COLLECTIVE, .stream = CS_STREAM_COMM_REDUCE, .op = CS_OP_ALL_REDUCE,
         .dtype = CS_DTYPE_FP32, .count = 500, .group = CS_GROUP_DP_REPLICATE},
        {.kind = CS_TASK_COLLECTIVE, .stream = CS_STREAM_COMM, .op = CS_OP_REDUCE_SCATTER,
         .dtype = CS_DTYPE_FP32, .count = 100, .group = CS_GROUP_WORLD},
        {.kind = CS_TASK_COMPUTE, .stream = CS_STREAM_COMPUTE, .flops = 2.0 * 64 * 64 * 64,
         .m = 64, .n = 64, .k = 64, .reps = 1},
        {.kind = CS_TASK_MEMORY, .stream = CS_STREAM_COMPUTE, .copy_bytes = 10u << 20},
    };
    /* the groups of a version-1 schedule for those ranks */
    static const char v1[] = "{\"format\": \"collsim-schedule\", \"version\": 1, \"groups\": "
                             "{\"world\": 4, \"shard\": 2, \"replica\": 2}, \"tasks\": []}";
    cs_hw_schedule sc;
    cs_diag d;
    ck_assert_int_eq(cs_hw_schedule_parse(v1, strlen(v1), "v1.json", &sc, &d), 0);
    cs_hw_rplan p = {.n = sizeof tasks / sizeof tasks[0], .tasks = tasks};
    cs_hw_rplan_set_groups(&p, &sc, 4, 1);
    cs_hw_schedule_free(&sc);
    ck_assert_int_eq(cs_hw_rplan_group_size(&p, 4, CS_GROUP_WORLD), 4);
    ck_assert_int_eq(cs_hw_rplan_group_size(&p, 4, CS_GROUP_DP_SHARD), 2);
    ck_assert_int_eq(cs_hw_rplan_group_size(&p, 4, CS_GROUP_DP_REPLICATE), 2);
    /* shards are blocks {0,1} {2,3}; replicas stride 2: {0,2} {1,3} */
    int shard[4], replica[4];
    for (int r = 0; r < 4; r++) {
        ck_assert_int_eq(cs_hw_rplan_group_color(&p, CS_GROUP_WORLD, r), 0);
        shard[r] = cs_hw_rplan_group_color(&p, CS_GROUP_DP_SHARD, r);
        replica[r] = cs_hw_rplan_group_color(&p, CS_GROUP_DP_REPLICATE, r);
    }
    ck_assert(shard[0] == shard[1] && shard[2] == shard[3] && shard[0] != shard[2]);
    ck_assert(replica[0] == replica[2] && replica[1] == replica[3] && replica[0] != replica[1]);

    cs_hw_rneeds need;
    cs_hw_rplan_needs(&p, 4, 1u << 20, &need);
    ck_assert_int_eq(need.used[CS_GROUP_DP_SHARD][CS_STREAM_COMM], 1);
    ck_assert_int_eq(need.used[CS_GROUP_WORLD][CS_STREAM_COMM], 1);
    ck_assert_int_eq(need.used[CS_GROUP_DP_REPLICATE][CS_STREAM_COMM_REDUCE], 1);
    ck_assert_int_eq(need.used[CS_GROUP_WORLD][CS_STREAM_COMM_REDUCE], 0);
    ck_assert_int_eq(need.used[CS_GROUP_WORLD][CS_STREAM_COMPUTE], 0);
    /* comm: all_gather sends 1000 x 2 B, receives 2 x that; reduce_scatter
     * sends 4 x 100 x 4 B */
    ck_assert_uint_eq(need.send_bytes[CS_STREAM_COMM], 2000);
    ck_assert_uint_eq(need.recv_bytes[CS_STREAM_COMM], 4000);
    ck_assert_uint_eq(need.send_bytes[CS_STREAM_COMM_REDUCE], 2000);
    ck_assert_uint_eq(need.recv_bytes[CS_STREAM_COMM_REDUCE], 2000);
    ck_assert_uint_eq(need.send_bytes[CS_STREAM_COMPUTE], 0);
    ck_assert_uint_eq(need.gemm_a, 64 * 64);
    ck_assert_uint_eq(need.gemm_c, 64 * 64);
    ck_assert_uint_eq(need.copy_bytes, 1u << 20); /* one chunk */
    cs_hw_rplan none = {.n = 0, .tasks = tasks};
    cs_hw_rplan_set_groups(&none, NULL, 1, 0);
    cs_hw_rplan_needs(&none, 1, 1u << 20, &need);
    ck_assert_uint_eq(need.gemm_b, 1);
    ck_assert_uint_eq(need.copy_bytes, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hw-core");
    TCase *tj = tcase_create("json");
    tcase_add_test(tj, json_values);
    tcase_add_test(tj, json_errors);
    suite_add_tcase(s, tj);
    TCase *ts = tcase_create("schedule");
    tcase_add_test(ts, schedule_mini);
    tcase_add_test(ts, schedule_errors);
    tcase_add_test(ts, schedule_v1_and_v2_alike);
    tcase_add_test(ts, schedule_from_simulator);
    suite_add_tcase(s, ts);
    TCase *tp = tcase_create("pattern");
    tcase_add_test(tp, float_conversions);
    tcase_add_test(tp, pattern_checks);
    suite_add_tcase(s, tp);
    TCase *tg = tcase_create("util");
    tcase_add_test(tg, cpu_gemm_matches_reference);
    tcase_add_test(tg, gemm_shapes);
    tcase_add_test(tg, stats_and_rows);
    tcase_add_test(tg, replay_needs);
    suite_add_tcase(s, tg);
    return cs_test_run(s);
}
