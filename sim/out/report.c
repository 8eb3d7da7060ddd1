/* SPDX-License-Identifier: MIT */
/*
 * report.c - the collective report on the table type (out/table.h): for
 * people, nccl-tests' table exactly as *_perf prints it (notes: the
 * "# Using devices" rank lines, the out-of-place and in-place groups,
 * #wrong, the "Avg bus bandwidth" footer), so a parser of nccl-tests logs
 * reads it (ranks and nodes included), with collsim's
 * algorithm/protocol choices as comment lines after it; for data (CSV,
 * JSON) the columns of COLL_COLUMNS, which are also the CSV header
 * collsim-hw measurements start with.
 */
#include "out/report.h"

#include <stdio.h>
#include <string.h>

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
};

const char *cs_report_collective_csv_header(void)
{
    return COLL_COLUMNS(COL_HEADER) + 1; /* past the first comma */
}

static const cs_col title_col[] = {CS_COL_STR("title")};

#define N(a) (sizeof a / sizeof a[0])

static const char *redop(cs_op op)
{
    return (op == CS_OP_ALL_REDUCE || op == CS_OP_REDUCE_SCATTER || op == CS_OP_REDUCE) ? "sum"
                                                                                         : "none";
}

/* ---- nccl-tests' text, byte for byte -------------------------------------------
 * The formats of nccl-tests src/util.cu (NVIDIA/nccl-tests a0b82b2):
 * writeResultHeader, writeBenchmarkLinePreamble, writeBenchmarkLineBody
 * with getFloatStr (a value in its width with 2 decimals, else 1, else 0,
 * else an exponent), writeResultFooter. The simulator has one time per
 * size: in-place moves the same bytes as out-of-place in NCCL's kernels,
 * so both column groups carry it, and "#wrong" is "N/A" as nccl-tests
 * prints it without -c. Averaging busbw over both groups, as nccl-tests
 * does, gives the mean over sizes. */

static void float_str(double v, int width, char *out)
{
    char buf[64];
    static const char *const fmts[] = {"%*.2f", "%*.1f", "%*.0f"};
    for (size_t i = 0; i < N(fmts); i++) {
        snprintf(buf, sizeof buf, fmts[i], width, v);
        if ((int)strlen(buf) <= width) {
            memcpy(out, buf, strlen(buf) + 1);
            return;
        }
    }
    snprintf(buf, sizeof buf, width >= 7 ? "%*.1e" : "%*.0e", width, v);
    snprintf(out, (size_t)width + 1, "%s", buf);
}

/* nccl-tests' writeDeviceReport lines, one per rank (PID and PCI address
 * zero: nothing ran), or a count above CS_REPORT_RANK_LINES. */
static void nccl_tests_devices(cs_doc *doc, const cs_topology *t)
{
    cs_doc_note(doc, "#\n# Using devices\n");
    if (t->ranks > CS_REPORT_RANK_LINES) {
        cs_doc_note(doc, "#  (%d ranks on %d nodes, %d per node: not listed one by one)\n",
                    t->ranks, t->nodes, t->ppn_max);
        return;
    }
    for (int r = 0; r < t->ranks; r++) {
        char host[32];
        snprintf(host, sizeof host, "node%d", cs_topology_node_of(t, r));
        cs_doc_note(doc, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", r,
                    0, 0, host, cs_topology_local_of(t, r), 0, 0, 0, t->cluster.gpu.model);
    }
}

static void nccl_tests_header(cs_doc *doc)
{
    cs_doc_note(doc, "#\n# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
                     "in-place          \n",
                "", "", "", "", "");
    cs_doc_note(doc, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                "time", "algbw", "busbw", "#wrong", 0, "");
    cs_doc_note(doc, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n",
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
                "(GB/s)", "", 0, "");
}

static void nccl_tests_row(cs_doc *doc, const cs_coll_row *r)
{
    char t[16], alg[16], bus[16], root[16];
    float_str(r->time_us, 7, t);
    float_str(r->algbw_GBps, 6, alg);
    float_str(r->busbw_GBps, 6, bus);
    snprintf(root, sizeof root, "%6i", r->op == CS_OP_BROADCAST || r->op == CS_OP_REDUCE ? 0 : -1);
    cs_doc_note(doc, "%12.0f  %12.0f  %8s  %6s  %6s  %7s  %6s  %6s    N/A  %7s  %6s  %6s    N/A\n",
                r->size_bytes, r->count, cs_dtype_nccl_name(r->dtype), redop(r->op), root, t, alg,
                bus, t, alg, bus);
}

/* The footer, then what nccl-tests cannot say: each run of sizes with
 * the algorithm and protocol collsim chose (NCCL_ALGO / NCCL_PROTO
 * spelled otherwise, so a reader does not take them as forced). */
static void nccl_tests_footer(cs_doc *doc, const cs_coll_row *rows, size_t n)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += rows[i].busbw_GBps;
    cs_doc_note(doc, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
    cs_doc_note(doc, "# %-20s : %g %s\n", "Avg bus bandwidth", n ? sum / (double)n : 0.0, "");
    if (n)
        cs_doc_note(doc, "#\n# Collective test concluded: %s_perf\n",
                    cs_op_nccl_tests_name(rows[0].op));
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && rows[j + 1].algo == rows[i].algo && rows[j + 1].proto == rows[i].proto)
            j++;
        cs_doc_note(doc, "# collsim chose %s/%s for %.0f..%.0f B\n", cs_algo_name(rows[i].algo),
                    cs_proto_name(rows[i].proto), rows[i].size_bytes, rows[j].size_bytes);
        i = j + 1;
    }
}

void cs_report_collective(cs_buf *b, cs_format f, const char *title, const cs_topology *topo,
                          const cs_coll_row *rows, size_t n)
{
    cs_doc *doc = cs_doc_new_as("collective");
    cs_doc_note(doc, "# %s\n", title); /* nccl-tests' program: alltoall_perf, not all_to_all */
    if (n)
        cs_doc_note(doc, "# Collective test starting: %s_perf\n",
                    cs_op_nccl_tests_name(rows[0].op));
    if (topo) nccl_tests_devices(doc, topo);
    nccl_tests_header(doc);
    cs_table *head = cs_doc_table(
        doc, &(cs_table_spec){NULL, title_col, N(title_col), CS_FOR_TREE, CS_TABLE_FIELDS});
    cs_table_row(head);
    cs_table_str(head, title);
    cs_table *data =
        cs_doc_table(doc, &(cs_table_spec){"rows", data_cols, N(data_cols), CS_FOR_DATA, 0});
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
        nccl_tests_row(doc, r);
    }
    nccl_tests_footer(doc, rows, n);
    cs_doc_write(b, doc, f);
    cs_doc_free(doc);
}
