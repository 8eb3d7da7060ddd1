/* SPDX-License-Identifier: MIT */
/*
 * report.c - the collective report on the table type (out/table.h): for
 * people, nccl-tests' table (size, count, type, redop, time, algbw, busbw)
 * with the chosen algorithm and protocol appended, a view of the data
 * columns; for data (CSV, JSON) the columns of COLL_COLUMNS, which are also
 * the CSV header collsim-hw measurements start with.
 */
#include "out/report.h"

/* The data columns: name, kind, number format. One list gives both the
 * column table and the CSV header literal. */
#define COLL_COLUMNS(X)                                                                            \
    X(op, STR, NULL) X(algo, STR, NULL) X(proto, STR, NULL) X(engine, STR, NULL)                   \
    X(ranks, INT, NULL) X(size_bytes, NUM, "%.0f") X(count, NUM, "%.0f") X(dtype, STR, NULL)       \
    X(time_us, NUM, "%.4f") X(algbw_GBps, NUM, "%.4f") X(busbw_GBps, NUM, "%.4f")

#define COL_ROW(col, type, format) {.name = #col, .kind = CS_CELL_##type, .fmt = format},
#define COL_HEADER(col, type, format) "," #col

static const cs_col data_cols[] = {
    COLL_COLUMNS(COL_ROW)
    {.name = "redop", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE}, /* for the view */
};

const char *cs_report_collective_csv_header(void)
{
    return COLL_COLUMNS(COL_HEADER) + 1; /* past the first comma */
}

/* nccl-tests' table, as *_perf prints it: a view of the data columns. */
static const cs_col view_cols[] = {
    CS_VIEW_NUM("size", "size_bytes", "%.0f", 12, "(B)"),
    CS_VIEW_NUM("count", "count", "%.0f", 12, "(elements)"),
    {.name = "type", .of = "dtype", .kind = CS_CELL_STR, .width = 9, .unit = ""},
    {.name = "redop", .kind = CS_CELL_STR, .width = 6, .unit = ""},
    CS_VIEW_NUM("time", "time_us", "%.2f", 11, "(us)"),
    CS_VIEW_NUM("algbw", "algbw_GBps", "%.2f", 8, "(GB/s)"),
    CS_VIEW_NUM("busbw", "busbw_GBps", "%.2f", 8, "(GB/s)"),
    {.name = "algo", .kind = CS_CELL_STR, .width = 5, .sep = "  ", .flags = CS_COL_LEFT},
    {.name = "proto", .kind = CS_CELL_STR, .width = 6, .flags = CS_COL_LEFT},
};

static const cs_col title_col[] = {CS_COL_STR("title")};

#define N(a) (sizeof a / sizeof a[0])

static const char *redop(cs_op op)
{
    return (op == CS_OP_ALL_REDUCE || op == CS_OP_REDUCE_SCATTER || op == CS_OP_REDUCE) ? "sum"
                                                                                         : "none";
}

void cs_report_collective(cs_buf *b, cs_format f, const char *title, const cs_coll_row *rows,
                          size_t n)
{
    cs_doc *doc = cs_doc_new();
    cs_doc_note(doc, "# %s\n#\n", title);
    cs_table *head = cs_doc_table(
        doc, &(cs_table_spec){NULL, title_col, N(title_col), CS_FOR_TREE, CS_TABLE_FIELDS});
    cs_table_row(head);
    cs_table_str(head, title);
    cs_table *data =
        cs_doc_table(doc, &(cs_table_spec){"rows", data_cols, N(data_cols), CS_FOR_DATA, 0});
    cs_doc_view(doc, data,
                &(cs_table_spec){NULL, view_cols, N(view_cols), CS_FOR_PEOPLE, CS_TABLE_HASH});
    for (size_t i = 0; i < n; i++) {
        const cs_coll_row *r = &rows[i];
        cs_table_row(data);
        cs_table_str(data, cs_op_name(r->op));
        cs_table_str(data, cs_algo_name(r->algo));
        cs_table_str(data, cs_proto_name(r->proto));
        cs_table_str(data, cs_engine_name(r->engine));
        cs_table_int(data, r->ranks);
        cs_table_num(data, r->size_bytes);
        cs_table_num(data, r->count);
        cs_table_str(data, cs_dtype_nccl_name(r->dtype));
        cs_table_num(data, r->time_us);
        cs_table_num(data, r->algbw_GBps);
        cs_table_num(data, r->busbw_GBps);
        cs_table_str(data, redop(r->op));
    }
    cs_doc_write(b, doc, f);
    cs_doc_free(doc);
}
