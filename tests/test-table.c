/* SPDX-License-Identifier: MIT */
/*
 * test-table.c - the table type (out/table.h) and each writer: the format
 * names; CSV quoting (commas, quotes, line breaks, always-quoted columns),
 * empty fields for absent cells and NaN, bools as 1/0; JSON escaping,
 * null for NaN, absent members left out, inline fields, several arrays;
 * aligned text (widths, alignment, separators, clipping, the units line,
 * trailing absent cells); number formats; an empty table in every format;
 * parts and columns kept to their audience; views over a table's rows;
 * groups (nested JSON objects), object tables (one row or null) and null
 * for an absent cell of a CS_COL_NULL column, which the other writers
 * leave as they were;
 * the collective report's CSV header literal against its column table;
 * the sweep report (views of row ranges, per-audience crossing columns).
 * Every expectation is a whole rendering compared byte for byte, and one
 * deliberately wrong expectation must be caught by that comparison.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out/report.h"
#include "out/sweep_report.h"
#include "out/table.h"
#include "testutil.h"

#define N(a) (sizeof a / sizeof a[0])
#define TABLE(doc, name, cols, audience, flags)                                                    \
    cs_doc_table(doc, &(cs_table_spec){name, cols, N(cols), audience, flags})

static char *render(const cs_doc *doc, cs_format f)
{
    cs_buf b = {0};
    cs_doc_write(&b, doc, f);
    cs_buf_printf(&b, "%s", ""); /* a string even when nothing was written */
    return b.data;
}

/* Whether doc renders in f as exactly want; with loud, prints both when
 * not. */
static int same_bytes(const cs_doc *doc, cs_format f, const char *want, int loud)
{
    char *got = render(doc, f);
    int same = !strcmp(got, want);
    if (!same && loud)
        fprintf(stderr, "--- want (%s)\n%s--- got\n%s---\n", cs_format_name(f), want, got);
    free(got);
    return same;
}

static int renders(const cs_doc *doc, cs_format f, const char *want)
{
    return same_bytes(doc, f, want, 1);
}

START_TEST(format_names)
{
    const char *names[] = {"table", "csv", "json"};
    ck_assert_int_eq(CS_FORMAT_COUNT, 3);
    for (int i = 0; i < CS_FORMAT_COUNT; i++) {
        cs_format f;
        ck_assert_str_eq(cs_format_name((cs_format)i), names[i]);
        ck_assert_int_eq(cs_format_parse(names[i], &f), 0);
        ck_assert_int_eq(f, i);
    }
    cs_format f = CS_FORMAT_CSV;
    ck_assert_int_eq(cs_format_parse("JSON", &f), 0);
    ck_assert_int_eq(f, CS_FORMAT_JSON);
    ck_assert_int_eq(cs_format_parse("yaml", &f), CS_EINVAL);
    ck_assert_int_eq(cs_format_parse("", &f), CS_EINVAL);
    ck_assert_int_eq(f, CS_FORMAT_JSON); /* untouched on error */
}
END_TEST

/* A data table: a string, a number, an integer, a bool, free text. */
static const cs_col data_cols[] = {
    {.name = "name", .kind = CS_CELL_STR},
    {.name = "time_us", .kind = CS_CELL_NUM, .fmt = "%.4f"},
    {.name = "ranks", .kind = CS_CELL_INT},
    {.name = "fits", .kind = CS_CELL_BOOL},
    {.name = "why", .kind = CS_CELL_STR, .flags = CS_COL_QUOTE},
};

static cs_doc *data_doc(void)
{
    cs_doc *doc = cs_doc_new();
    cs_table *t = TABLE(doc, "rows", data_cols, CS_FOR_DATA, 0);
    cs_table_row(t);
    cs_table_str(t, "plain");
    cs_table_num(t, 1.23456);
    cs_table_int(t, 8);
    cs_table_bool(t, 1);
    cs_table_str(t, "ok");
    cs_table_row(t);
    cs_table_str(t, "a,b");
    cs_table_num(t, NAN);
    cs_table_int(t, -3);
    cs_table_bool(t, 0);
    cs_table_str(t, "say \"hi\"");
    cs_table_row(t);
    cs_table_str(t, "two\nlines \"q\"");
    cs_table_skip(t);
    cs_table_int(t, 1LL << 40);
    cs_table_skip(t);
    cs_table_skip(t);
    return doc;
}

START_TEST(csv_quoting)
{
    cs_doc *doc = data_doc();
    ck_assert(renders(doc, CS_FORMAT_CSV,
                      "name,time_us,ranks,fits,why\n"
                      "plain,1.2346,8,1,\"ok\"\n"
                      "\"a,b\",,-3,0,\"say \"\"hi\"\"\"\n"
                      "\"two\nlines \"\"q\"\"\",,1099511627776,,\n"));
    /* the deliberately wrong expectation: fields left unquoted */
    ck_assert(!same_bytes(doc, CS_FORMAT_CSV,
                          "name,time_us,ranks,fits,why\n"
                          "plain,1.2346,8,1,ok\n"
                          "a,b,,-3,0,say \"hi\"\n"
                          "two\nlines \"q\",,1099511627776,,\n",
                          0));
    cs_doc_free(doc);
}
END_TEST

START_TEST(json_escaping)
{
    static const cs_col head[] = {{.name = "title", .kind = CS_CELL_STR},
                                  {.name = "n", .kind = CS_CELL_INT}};
    cs_doc *doc = data_doc();
    cs_table *h = TABLE(doc, NULL, head, CS_FOR_TREE, CS_TABLE_FIELDS);
    cs_table_row(h);
    cs_table_str(h, "tab\there \\ \"q\" \x01");
    cs_table_skip(h);
    cs_table *t = TABLE(doc, "more", head, CS_FOR_TREE, 0);
    cs_table_row(t);
    cs_table_skip(t);
    cs_table_int(t, 7);
    ck_assert(renders(doc, CS_FORMAT_JSON,
                      "{\n  \"rows\": [\n"
                      "    {\"name\": \"plain\", \"time_us\": 1.2346, \"ranks\": 8, "
                      "\"fits\": true, \"why\": \"ok\"},\n"
                      "    {\"name\": \"a,b\", \"time_us\": null, \"ranks\": -3, \"fits\": false, "
                      "\"why\": \"say \\\"hi\\\"\"},\n"
                      "    {\"name\": \"two\\u000alines \\\"q\\\"\", \"ranks\": 1099511627776}\n"
                      "  ],\n"
                      "  \"title\": \"tab\\u0009here \\\\ \\\"q\\\" \\u0001\",\n"
                      "  \"more\": [\n    {\"n\": 7}\n  ]\n}\n"));
    cs_doc_free(doc);
}
END_TEST

START_TEST(number_formats)
{
    static const cs_col cols[] = {
        {.name = "a", .kind = CS_CELL_NUM, .fmt = "%.0f"},
        {.name = "b", .kind = CS_CELL_NUM, .fmt = "%.9g"},
        {.name = "c", .kind = CS_CELL_NUM, .fmt = "%.3e"},
        {.name = "d", .kind = CS_CELL_NUM, .fmt = "%.2f"},
    };
    cs_doc *doc = cs_doc_new();
    cs_table *t = TABLE(doc, "r", cols, CS_FOR_DATA, 0);
    cs_table_row(t);
    cs_table_num(t, 8589934592.0);
    cs_table_num(t, 0.1);
    cs_table_num(t, 12345.678);
    cs_table_num(t, INFINITY);
    ck_assert(renders(doc, CS_FORMAT_CSV, "a,b,c,d\n8589934592,0.1,1.235e+04,\n"));
    ck_assert(renders(doc, CS_FORMAT_JSON,
                      "{\n  \"r\": [\n    {\"a\": 8589934592, \"b\": 0.1, \"c\": 1.235e+04, "
                      "\"d\": null}\n  ]\n}\n"));
    cs_doc_free(doc);
}
END_TEST

/* A view: right and left alignment, a wide separator, clipping, units on
 * some columns, a heading left-aligned over right-aligned values. */
static const cs_col view_cols[] = {
    {.name = "name", .kind = CS_CELL_STR, .width = 6, .unit = "",
     .flags = CS_COL_LEFT | CS_COL_CLIP},
    {.name = "t", .kind = CS_CELL_NUM, .fmt = "%.1f", .width = 7, .unit = "(us)"},
    {.name = "n", .kind = CS_CELL_INT, .width = 3, .sep = " | ", .flags = CS_COL_HEAD_LEFT},
    {.name = "ok", .kind = CS_CELL_BOOL, .width = 5},
    {.name = "note", .kind = CS_CELL_STR, .sep = "  "},
};

START_TEST(text_layout)
{
    cs_doc *doc = cs_doc_new();
    cs_doc_note(doc, "# title %d\n", 1);
    cs_doc_note(doc, "#\n");
    cs_table *t = TABLE(doc, "v", view_cols, CS_FOR_PEOPLE, CS_TABLE_HASH);
    cs_table_row(t);
    cs_table_str(t, "abcdefghij");
    cs_table_num(t, 3.14159);
    cs_table_int(t, 42);
    cs_table_bool(t, 1);
    cs_table_str(t, "");
    cs_table_row(t);
    cs_table_str(t, "x");
    cs_table_num(t, NAN);
    cs_table_skip(t);
    cs_table_bool(t, 0);
    cs_table_skip(t); /* trailing absent: no separator, no blanks */
    cs_doc_note(doc, "end\n");
    ck_assert(renders(doc, CS_FORMAT_TABLE,
                      "# title 1\n#\n"
                      "# name         t | n      ok  note\n"
                      "#           (us)\n"
                      "  abcdef     3.1 |  42  true  \n"
                      "  x            - |   - false\n"
                      "end\n"));
    /* people's parts are not data */
    ck_assert(renders(doc, CS_FORMAT_JSON, "{\n  \n}\n"));
    cs_doc_free(doc);
}
END_TEST

START_TEST(plain_text)
{
    static const cs_col cols[] = {
        {.name = "model", .kind = CS_CELL_STR, .width = 5, .flags = CS_COL_LEFT},
        {.name = "MFU %", .kind = CS_CELL_NUM, .fmt = "%.1f", .width = 7},
    };
    cs_doc *doc = cs_doc_new();
    cs_table *t = TABLE(doc, "v", cols, CS_FOR_PEOPLE, 0);
    cs_table_row(t);
    cs_table_str(t, "gpt2");
    cs_table_num(t, 41.25);
    ck_assert(renders(doc, CS_FORMAT_TABLE, "model   MFU %\ngpt2     41.2\n"));
    cs_doc_free(doc);
}
END_TEST

START_TEST(empty_table)
{
    cs_doc *doc = cs_doc_new();
    TABLE(doc, "rows", view_cols, CS_FOR_PEOPLE | CS_FOR_DATA, CS_TABLE_HASH);
    ck_assert(renders(doc, CS_FORMAT_TABLE,
                      "# name         t | n      ok  note\n"
                      "#           (us)\n"));
    ck_assert(renders(doc, CS_FORMAT_CSV, "name,t,n,ok,note\n"));
    ck_assert(renders(doc, CS_FORMAT_JSON, "{\n  \"rows\": [\n  ]\n}\n"));
    cs_doc_free(doc);
}
END_TEST

START_TEST(audiences)
{
    static const cs_col cols[] = {
        {.name = "dataset", .kind = CS_CELL_STR, .only = CS_FOR_FLAT},
        {.name = "name", .kind = CS_CELL_STR, .only = CS_FOR_TREE},
        {.name = "rows", .kind = CS_CELL_INT},
    };
    cs_doc *doc = cs_doc_new();
    cs_doc_note(doc, "for people only\n");
    cs_table *t = TABLE(doc, "ds", cols, CS_FOR_DATA, 0);
    cs_table_row(t);
    cs_table_str(t, "a");
    cs_table_str(t, "a");
    cs_table_int(t, 3);
    /* a tree-only table is not the CSV's */
    cs_table *u = TABLE(doc, "extra", cols, CS_FOR_TREE, 0);
    cs_table_row(u);
    ck_assert_uint_eq(cs_table_rows(t), 1);
    ck_assert(renders(doc, CS_FORMAT_CSV, "dataset,rows\na,3\n"));
    ck_assert(renders(doc, CS_FORMAT_JSON,
                      "{\n  \"ds\": [\n    {\"name\": \"a\", \"rows\": 3}\n  ],\n"
                      "  \"extra\": [\n    {}\n  ]\n}\n"));
    ck_assert(renders(doc, CS_FORMAT_TABLE, "for people only\n"));
    cs_doc_free(doc);
}
END_TEST

/* A view shows its source's rows, also those added after it was made,
 * through its own columns: another order, a subset, another precision, a
 * column the source keeps from its own audiences. */
START_TEST(views)
{
    static const cs_col src_cols[] = {
        CS_COL_STR("op"),
        CS_COL_NUM("time_us", "%.4f"),
        {.name = "label", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},
    };
    static const cs_col v_cols[] = {
        {.name = "label", .kind = CS_CELL_STR, .width = 5, .flags = CS_COL_LEFT},
        CS_VIEW_NUM("time", "time_us", "%.1f", 6, NULL),
    };
    cs_doc *doc = cs_doc_new();
    cs_table *t = TABLE(doc, "rows", src_cols, CS_FOR_DATA, 0);
    cs_table *v = cs_doc_view(doc, t, &(cs_table_spec){NULL, v_cols, N(v_cols), CS_FOR_PEOPLE, 0});
    for (int i = 0; i < 2; i++) {
        cs_table_row(t);
        cs_table_str(t, i ? "ag" : "ar");
        cs_table_num(t, 10.25 * (i + 1));
        cs_table_str(t, i ? "two" : "one");
    }
    ck_assert_uint_eq(cs_table_rows(v), 2);
    ck_assert(renders(doc, CS_FORMAT_TABLE, "label   time\none     10.2\ntwo     20.5\n"));
    ck_assert(renders(doc, CS_FORMAT_CSV, "op,time_us\nar,10.2500\nag,20.5000\n"));
    cs_doc_free(doc);
}
END_TEST

/* A group nests its tree parts one level deeper; an object table is one
 * row or null; a CS_COL_NULL column's absent cell is a null member. People
 * and CSV see none of the group, and a note after it starts afresh. */
START_TEST(groups)
{
    static const cs_col cols[] = {
        CS_COL_INT("n"),
        {.name = "who", .kind = CS_CELL_STR, .flags = CS_COL_NULL},
        CS_COL_STR("gone"),
    };
    static const cs_col title[] = {CS_COL_STR("title")};
    cs_doc *doc = cs_doc_new();
    cs_table *f = TABLE(doc, NULL, title, CS_FOR_TREE, CS_TABLE_FIELDS);
    cs_table_row(f);
    cs_table_str(f, "t");
    cs_table *best = TABLE(doc, "best", cols, CS_FOR_DATA, CS_TABLE_OBJECT);
    cs_table_row(best);
    cs_table_int(best, 1);
    TABLE(doc, "none", cols, CS_FOR_TREE, CS_TABLE_OBJECT);
    cs_doc_note(doc, "before\n");
    cs_doc *g = cs_doc_group(doc, "inner");
    cs_doc_note(doc, "after\n");
    cs_table_str(cs_doc_field(g, title), "u"); /* the same, in one call */
    cs_doc_note(g, "unseen\n");
    cs_table *rows = TABLE(g, "rows", cols, CS_FOR_PEOPLE | CS_FOR_TREE, 0);
    for (int i = 0; i < 2; i++) {
        cs_table_row(rows);
        cs_table_int(rows, i);
        if (i) cs_table_str(rows, "b");
    }
    static const char want[] = "{\n  \"title\": \"t\",\n"
                               "  \"best\": {\"n\": 1, \"who\": null},\n"
                               "  \"none\": null,\n"
                               "  \"inner\": {\n"
                               "    \"title\": \"u\",\n"
                               "    \"rows\": [\n"
                               "      {\"n\": 0, \"who\": null},\n"
                               "      {\"n\": 1, \"who\": \"b\"}\n"
                               "    ]\n"
                               "  }\n}\n";
    ck_assert(renders(doc, CS_FORMAT_JSON, want));
    ck_assert(renders(doc, CS_FORMAT_TABLE, "before\nafter\n"));
    ck_assert(renders(doc, CS_FORMAT_CSV, "n,who,gone\n1,,\n"));
    /* the deliberately wrong expectation: the group's parts at the outer
     * depth (two blanks fewer after each line break deeper than that) */
    char flat[sizeof want];
    size_t k = 0;
    for (const char *c = want; *c; c++) {
        flat[k++] = *c;
        if (*c == '\n' && !strncmp(c + 1, "    ", 4)) c += 2;
    }
    flat[k] = 0;
    ck_assert_str_ne(flat, want);
    ck_assert(!same_bytes(doc, CS_FORMAT_JSON, flat, 0));
    cs_doc_free(doc);
}
END_TEST

START_TEST(collective_header)
{
    cs_buf b = {0};
    cs_report_collective(&b, CS_FORMAT_CSV, "t", NULL, NULL, 0);
    const char *h = cs_report_collective_csv_header();
    ck_assert_str_eq(h, "op,algo,proto,engine,ranks,size_bytes,count,dtype,time_us,algbw_GBps,"
                        "busbw_GBps");
    ck_assert_uint_eq(b.len, strlen(h) + 1);
    ck_assert(!strncmp(b.data, h, strlen(h)) && b.data[b.len - 1] == '\n');
    cs_buf_free(&b);
    cs_report_collective(&b, CS_FORMAT_JSON, "a \"t\"", NULL, NULL, 0);
    cs_buf_printf(&b, "%s", "");
    ck_assert_str_eq(b.data, "{\n  \"format\": \"collsim-collective\", \"version\": 1,\n"
                             "  \"title\": \"a \\\"t\\\"\",\n  \"rows\": [\n  ]\n}\n");
    cs_buf_free(&b);
}
END_TEST

/* The sweep report from two hand-made points in two rank groups and two
 * crossings, one of each kind. */
START_TEST(sweep_report)
{
    static cs_sweep_spec spec; /* large: not on the stack */
    snprintf(spec.cluster.name, sizeof spec.cluster.name, "c1");
    snprintf(spec.cluster.gpu.model, sizeof spec.cluster.gpu.model, "G");
    spec.cluster.gpu.memory_bytes = 80.0 * (1 << 30);
    spec.params_min = 1e9;
    spec.params_max = 1e10;
    spec.params_points = 2;
    spec.training.micro_batch = 1;
    spec.training.grad_accum = 1;
    const cs_sweep_point pts[] = {
        {.strategy = CS_STRAT_DDP, .ranks = 8, .params = 1e9, .model = "m,1", .fits = 1,
         .iteration_time_s = 0.5, .tokens_per_s = 1000, .tflops_per_gpu = 100, .mfu = 0.4,
         .peak_bytes = 1 << 30, .exposed_comm_s = 0.01, .capacity_bytes = 2.0 * (1 << 30),
         .micro_batch = 1, .grad_accum = 1, .batch_kept = 1},
        {.strategy = CS_STRAT_DDP, .ranks = 16, .params = 1e9, .model = "m,1", .fits = 0,
         .micro_batch = 1, .grad_accum = 1, .checkpointing = CS_CKPT_FULL, .batch_kept = 1},
    };
    const cs_crossing c[] = {
        {.ranks = 8, .a = CS_STRAT_DDP, .b = CS_STRAT_FSDP_FULL_SHARD, .kind = CS_CROSS_THROUGHPUT,
         .params = 3e9, .margin = 0.25, .fits_below = 1, .margin_params = 2e9, .lead_max = 0.5,
         .lead_max_params = 1e9},
        {.ranks = 16, .a = CS_STRAT_DDP, .b = CS_STRAT_DDP, .kind = CS_CROSS_OOM, .params = 5e9,
         .fits_below = 1, .micro_batch_a = 1, .micro_batch_b = 1, .ckpt_a = CS_CKPT_FULL,
         .ckpt_b = CS_CKPT_FULL},
    };
    cs_buf b = {0};
    cs_sweep_report_crossings(&b, &spec, c, 2);
    cs_buf_printf(&b, "%s", "");
    ck_assert_str_eq(b.data, "ranks,strategy_a,strategy_b,kind,params,margin\n"
                             "8,ddp,fsdp_full_shard,throughput,3000000000,0.250000\n"
                             "16,ddp,ddp,oom,5000000000,\n");
    cs_buf_free(&b);
    cs_sweep_report(&b, CS_FORMAT_TABLE, &spec, pts, 2, c, 2, NULL);
    cs_buf_printf(&b, "%s", "");
    ck_assert_str_eq(
        b.data,
        "# collsim crossover: c1 (G, 80 GiB), P 1B..10B (2 points, log), micro-batch 1, "
        "grad-accum 1, fp32\n"
        "\n8 GPUs\n"
        "model            strategy             fits   iteration_s       tokens/s  TFLOPS/GPU   MFU %"
        "   peak GiB   exposed_s  micro  accum  ckpt\n"
        "m,1              ddp                  yes         0.5000           1000       100.0    40.0"
        "       1.00      0.0100      1      1  none\n"
        "\n16 GPUs\n"
        "model            strategy             fits   iteration_s       tokens/s  TFLOPS/GPU   MFU %"
        "   peak GiB   exposed_s  micro  accum  ckpt\n"
        "m,1              ddp                  OOM         0.0000              0         0.0     0.0"
        "       0.00      0.0000      1      1  full\n"
        "\nCrossings (throughput: Brent on log10 P, both strategies fit there; OOM: bisection; "
        "both to 1e-4):\n"
        "  on c1 with 8 GPUs, ddp beats fsdp_full_shard below 3B params by 25.0% (at 2B; up to "
        "50% at 1B); fsdp_full_shard is faster above\n"
        "  on c1 with 16 GPUs, ddp OOMs above 5B params\n");
    cs_buf_free(&b);
    /* searched at a global batch: the title says so, each side its choice,
     * the OOM boundary what no longer fits */
    spec.global_batch = 1024;
    spec.search_micro_batch = spec.search_ckpt = 1;
    cs_sweep_report(&b, CS_FORMAT_TABLE, &spec, pts, 1, c + 1, 1, NULL);
    cs_buf_printf(&b, "%s", "");
    ck_assert_msg(strstr(b.data, "P 1B..10B (2 points, log), global batch 1024, best micro-batch "
                                 "and checkpointing, fp32\n"), "%s", b.data);
    ck_assert_msg(strstr(b.data, "  on c1 with 16 GPUs, ddp OOMs above 5B params (where not even "
                                 "micro-batch 1 with full recomputation fits)\n"), "%s", b.data);
    spec.global_batch = 0;
    spec.search_micro_batch = spec.search_ckpt = 0;
    cs_buf_free(&b);
    cs_sweep_report(&b, CS_FORMAT_CSV, &spec, pts, 1, c, 0, NULL);
    cs_buf_printf(&b, "%s", "");
    ck_assert_str_eq(b.data, "strategy,ranks,params,fits,iteration_time_s,tokens_per_s,"
                             "tflops_per_gpu,mfu,peak_bytes,exposed_comm_s,model,capacity_bytes,"
                             "wire_bytes,kernels_s,recompute_s,copies_s,optimizer_s,"
                             "exposed_all_reduce_s,exposed_all_gather_s,exposed_reduce_scatter_s,"
                             "cpu_wait_s,micro_batch,grad_accum,activation_checkpointing,"
                             "exposed_send_recv_s,pipeline_bubble_s\n"
                             "ddp,8,1000000000,1,0.500000,1000.0,100.000,0.40000,1073741824,"
                             "0.010000,\"m,1\",2147483648,0,0.000000,0.000000,0.000000,0.000000,"
                             "0.000000,0.000000,0.000000,0.000000,1,1,none,0.000000,0.000000\n");
    cs_buf_free(&b);
    cs_sweep_report(&b, CS_FORMAT_JSON, &spec, pts, 0, c + 1, 1, NULL);
    cs_buf_printf(&b, "%s", "");
    ck_assert_str_eq(b.data, "{\n  \"format\": \"collsim-crossover\", \"version\": 2,\n"
                             "  \"title\": \"collsim crossover: c1 (G, 80 GiB), P 1B..10B (2 "
                             "points, log), micro-batch 1, grad-accum 1, fp32\",\n"
                             "  \"cluster\": \"c1\",\n  \"points\": [\n  ],\n"
                             "  \"crossings\": [\n    {\"ranks\": 16, \"strategy_a\": \"ddp\", "
                             "\"strategy_b\": \"ddp\", \"kind\": \"oom\", \"params\": 5000000000, "
                             "\"fits_below\": 1, \"micro_batch_a\": 1, "
                             "\"activation_checkpointing_a\": \"full\", \"micro_batch_b\": 1, "
                             "\"activation_checkpointing_b\": \"full\"}\n  ]\n}\n");
    cs_buf_free(&b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("table");
    TCase *tc = tcase_create("writers");
    tcase_add_test(tc, format_names);
    tcase_add_test(tc, csv_quoting);
    tcase_add_test(tc, json_escaping);
    tcase_add_test(tc, number_formats);
    tcase_add_test(tc, text_layout);
    tcase_add_test(tc, plain_text);
    tcase_add_test(tc, empty_table);
    tcase_add_test(tc, audiences);
    tcase_add_test(tc, views);
    tcase_add_test(tc, groups);
    tcase_add_test(tc, collective_header);
    tcase_add_test(tc, sweep_report);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return cs_test_run(suite());
}
