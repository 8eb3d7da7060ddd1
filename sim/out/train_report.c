/* SPDX-License-Identifier: MIT */
/*
 * train_report.c - the report of `collsim memory` and `collsim simulate`
 * on the table type (out/table.h). One list of columns per command part
 * (MEMORY_COLUMNS, then SIMULATE_COLUMNS for simulate): name, kind, data
 * format and the value, from which come the CSV header (also in --help),
 * the cells of every row (CSV rows, JSON members) and the values the
 * block for people shows. That block is a two-column table per row: its
 * lines (label, column shown, unit) are the card lists below, in their own
 * order, plus the verdict, the largest micro-batch and one line per
 * collective op that ran. Renders what train/evaluate computed; computes
 * nothing itself.
 */
#include "out/train_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "coll/collective.h"
#include "out/stage_report.h"
#include "train/strategy.h"

#define N(a) (sizeof a / sizeof a[0])
#define GIB (1024.0 * 1024 * 1024)

/* name, kind, data format, value: an expression of r (the row), m (its
 * memory estimate), it (its iteration, zero for memory) and peak (the
 * allocator replay's, memory.h). */
#define MEMORY_COLUMNS(X)                                                                          \
    X(strategy, STR, NULL, cs_strategy_name(r->strategy))                                          \
    X(ranks, INT, NULL, h->topo->ranks)                                                            \
    X(params, NUM, "%.0f", h->model->params)                                                       \
    X(params_bytes, NUM, "%.0f", m->params_bytes)                                                  \
    X(grads_bytes, NUM, "%.0f", m->grads_bytes)                                                    \
    X(optimizer_bytes, NUM, "%.0f", m->optimizer_bytes)                                            \
    X(model_states_bytes, NUM, "%.0f", m->model_states_bytes)                                      \
    X(activations_bytes, NUM, "%.0f", m->activations_bytes)                                        \
    X(overhead_bytes, NUM, "%.0f", m->overhead_bytes)                                              \
    X(peak_bytes, NUM, "%.0f", peak)                                                               \
    X(capacity_bytes, NUM, "%.0f", m->capacity_bytes)                                              \
    X(fits, INT, NULL, peak <= m->capacity_bytes)                                                  \
    X(unsharded_bytes, NUM, "%.0f", m->unsharded_bytes)                                            \
    X(buckets_bytes, NUM, "%.0f", m->buckets_bytes)                                                \
    X(temp_bytes, NUM, "%.0f", m->temp_bytes)                                                      \
    X(cuda_context_bytes, NUM, "%.0f", m->cuda_context_bytes)                                      \
    X(nccl_bytes, NUM, "%.0f", m->nccl_bytes)                                                      \
    X(fragmentation_bytes, NUM, "%.0f", m->fragmentation_bytes)                                    \
    X(max_micro_batch, INT, NULL, r->max_micro_batch)
#define SIMULATE_COLUMNS(X)                                                                        \
    X(iteration_time_s, NUM, "%.6f", it->iteration_time_s)                                         \
    X(tokens_per_s, NUM, "%.1f", it->tokens_per_s)                                                 \
    X(tflops_per_gpu, NUM, "%.3f", it->tflops_per_gpu)                                             \
    X(mfu, NUM, "%.5f", it->mfu)                                                                   \
    X(exposed_comm_s, NUM, "%.6f", it->exposed_comm_s)                                             \
    X(all_reduce_bytes, NUM, "%.0f", it->wire_bytes_by_op[CS_OP_ALL_REDUCE])                       \
    X(all_gather_bytes, NUM, "%.0f", it->wire_bytes_by_op[CS_OP_ALL_GATHER])                       \
    X(reduce_scatter_bytes, NUM, "%.0f", it->wire_bytes_by_op[CS_OP_REDUCE_SCATTER])               \
    X(compute_s, NUM, "%.6f", it->compute_s)                                                       \
    X(optimizer_s, NUM, "%.6f", it->optimizer_s)                                                   \
    X(exposed_all_reduce_s, NUM, "%.6f", it->exposed_by_op_s[CS_OP_ALL_REDUCE])                    \
    X(exposed_all_gather_s, NUM, "%.6f", it->exposed_by_op_s[CS_OP_ALL_GATHER])                    \
    X(exposed_reduce_scatter_s, NUM, "%.6f", it->exposed_by_op_s[CS_OP_REDUCE_SCATTER])            \
    X(peak_time_s, NUM, "%.6f", it->peak_time_s)                                                   \
    X(hfu, NUM, "%.5f", it->hfu)                                                                   \
    X(copies_s, NUM, "%.6f", it->copies_s)                                                         \
    X(recompute_s, NUM, "%.6f", it->recompute_s)                                                   \
    X(cpu_wait_s, NUM, "%.6f", it->cpu_wait_s)
/* The layout's tensor parallelism, last in both commands (appended, so the
 * columns before keep their places): the tp group's ranks, the nodes it
 * spans and the flag that it spans more than one (priced on the network
 * path; the block for people says so too). */
#define LAYOUT_COLUMNS(X)                                                                          \
    X(tp, INT, NULL, r->ev->tp_ranks)                                                              \
    X(tp_nodes, INT, NULL, r->ev->tp_nodes)                                                        \
    X(tp_spans_nodes, INT, NULL, r->ev->tp_nodes > 1)

/* The caching allocator's peaks (issue 23; names fixed), after the
 * layout's for the same reason: the replay's peak allocated and peak
 * reserved (memory.h, memreplay.h), without the CUDA context and NCCL. */
#define ALLOCATOR_COLUMNS(X)                                                                       \
    X(peak_allocated_bytes, NUM, "%.0f", m->peak_allocated_bytes)                                  \
    X(peak_reserved_bytes, NUM, "%.0f", m->peak_reserved_bytes)

/* Simulate's columns appended after those (issue: a pipeline's idle time
 * was shown as exposed send_recv): the pipeline bubble (iteration.h), 0
 * without pipeline parallelism. */
#define PIPELINE_COLUMNS(X) X(pipeline_bubble_s, NUM, "%.6f", it->pipeline_bubble_s)

#define COL_ID(col, type, format, value) COL_##col,
enum {
    MEMORY_COLUMNS(COL_ID) SIMULATE_COLUMNS(COL_ID) LAYOUT_COLUMNS(COL_ID) ALLOCATOR_COLUMNS(COL_ID)
        PIPELINE_COLUMNS(COL_ID) NCOLS
};
#define COL_COUNT(col, type, format, value) +1
enum {
    NMEMORY = 0 MEMORY_COLUMNS(COL_COUNT),
    NSIMULATE = 0 SIMULATE_COLUMNS(COL_COUNT),
    NPIPELINE = 0 PIPELINE_COLUMNS(COL_COUNT)
};

#define COL_ROW(col, type, format, value) {.name = #col, .kind = CS_CELL_##type, .fmt = format},
static const cs_col cols[NCOLS] = {MEMORY_COLUMNS(COL_ROW) SIMULATE_COLUMNS(COL_ROW)
                                       LAYOUT_COLUMNS(COL_ROW) ALLOCATOR_COLUMNS(COL_ROW)
                                           PIPELINE_COLUMNS(COL_ROW)};
/* memory's: without the simulation's */
static const cs_col memory_cols[NCOLS - NSIMULATE - NPIPELINE] = {
    MEMORY_COLUMNS(COL_ROW) LAYOUT_COLUMNS(COL_ROW) ALLOCATOR_COLUMNS(COL_ROW)};

/* Is column c one of simulate's alone? */
static int simulate_only(size_t c)
{
    return (c >= NMEMORY && c < NMEMORY + NSIMULATE) || c >= NCOLS - NPIPELINE;
}

#define COL_HEADER(col, type, format, value) "," #col

const char *cs_train_report_columns(int simulated)
{
    static const char memory[] =
        MEMORY_COLUMNS(COL_HEADER) LAYOUT_COLUMNS(COL_HEADER) ALLOCATOR_COLUMNS(COL_HEADER);
    static const char simulate[] = MEMORY_COLUMNS(COL_HEADER) SIMULATE_COLUMNS(COL_HEADER)
        LAYOUT_COLUMNS(COL_HEADER) ALLOCATOR_COLUMNS(COL_HEADER) PIPELINE_COLUMNS(COL_HEADER);
    return (simulated ? simulate : memory) + 1;
}

/* A row's values by column: a number (INT too) or a string. */
typedef struct value {
    double num;
    const char *str;
} value;
#define VALUE_NUM(v) {.num = (v)}
#define VALUE_INT(v) {.num = (v)}
#define VALUE_STR(v) {.str = (v)}
#define COL_VALUE(col, type, format, v) [COL_##col] = VALUE_##type(v),

static void values(const cs_train_report_head *h, const cs_train_row *r, value out[NCOLS])
{
    const cs_memory *m = &r->ev->memory;
    const cs_iteration *it = &r->ev->iteration;
    double peak = m->peak_bytes; /* the replay's, in both commands (evaluate.c) */
    const value v[NCOLS] = {MEMORY_COLUMNS(COL_VALUE) SIMULATE_COLUMNS(COL_VALUE)
                                LAYOUT_COLUMNS(COL_VALUE) ALLOCATOR_COLUMNS(COL_VALUE)
                                    PIPELINE_COLUMNS(COL_VALUE)};
    memcpy(out, v, sizeof v);
}

static void data_row(cs_table *t, const value *v, int simulated)
{
    cs_table_row(t);
    for (size_t c = 0; c < NCOLS; c++) {
        if (!simulated && simulate_only(c)) continue;
        if (cols[c].kind == CS_CELL_STR) cs_table_str(t, v[c].str);
        else if (cols[c].kind == CS_CELL_INT) cs_table_int(t, (long long)v[c].num);
        else cs_table_num(t, v[c].num);
    }
}

/* ---- the block for people --------------------------------------------------- */

/* How a line shows its column: format of value * mul / div. */
typedef struct unit {
    const char *fmt;
    double mul, div;
} unit;

static const unit in_gib = {"%10.2f GiB", 1, GIB}, in_s = {"%10.4f s", 1, 1},
                  whole = {"%10.0f", 1, 1}, tenths = {"%10.1f", 1, 1},
                  in_pct = {"%10.1f %%", 100, 1};

typedef struct card_line {
    const char *label;
    const char *sim_label; /* simulate's label, if another */
    int col;
    const unit *unit;
} card_line;

static const card_line memory_card[] = {
    {"parameters", NULL, COL_params_bytes, &in_gib},
    {"gradients", NULL, COL_grads_bytes, &in_gib},
    {"optimizer states", NULL, COL_optimizer_bytes, &in_gib},
    {"= model states", NULL, COL_model_states_bytes, &in_gib},
    {"activations", NULL, COL_activations_bytes, &in_gib},
    {"FSDP unsharded units", NULL, COL_unsharded_bytes, &in_gib},
    {"gradient buckets", NULL, COL_buckets_bytes, &in_gib},
    {"temporary buffers (loss, casts)", NULL, COL_temp_bytes, &in_gib},
    {"CUDA context", NULL, COL_cuda_context_bytes, &in_gib},
    {"NCCL buffers", NULL, COL_nccl_bytes, &in_gib},
    {"peak allocated", NULL, COL_peak_allocated_bytes, &in_gib},
    {"peak reserved (caching allocator)", NULL, COL_peak_reserved_bytes, &in_gib},
    {"  cached beyond the tensors", NULL, COL_fragmentation_bytes, &in_gib},
    {"peak (reserved + context + NCCL)", NULL, COL_peak_bytes, &in_gib},
    {"GPU capacity", NULL, COL_capacity_bytes, &in_gib},
};
/* then the verdict and the largest micro-batch; simulate goes on with */
static const card_line time_card[] = {
    {"iteration time", NULL, COL_iteration_time_s, &in_s},
    {"  compute (incl. optimizer)", NULL, COL_compute_s, &in_s},
    {"  recompute (checkpointing)", NULL, COL_recompute_s, &in_s},
    {"  copies and casts", NULL, COL_copies_s, &in_s},
    {"  optimizer step", NULL, COL_optimizer_s, &in_s},
    {"  waiting for the CPU (hooks)", NULL, COL_cpu_wait_s, &in_s},
};
/* under pipeline parallelism, beside the CPU's wait (idle, not
 * communication); then always */
static const card_line bubble_card[] = {
    {"  pipeline bubble (idle)", NULL, COL_pipeline_bubble_s, &in_s},
};
static const card_line comm_card[] = {
    {"  exposed communication", NULL, COL_exposed_comm_s, &in_s},
};
/* then a line per collective op that ran, and */
static const card_line rate_card[] = {
    {"tokens/s (all GPUs)", NULL, COL_tokens_per_s, &whole},
    {"model TFLOPS per GPU", NULL, COL_tflops_per_gpu, &tenths},
    {"MFU (model FLOPs, no recompute)", NULL, COL_mfu, &in_pct},
    {"HFU (hardware FLOPs, + recompute)", NULL, COL_hfu, &in_pct},
};

static const cs_col card_cols[] = {
    {.kind = CS_CELL_STR, .width = 34, .flags = CS_COL_LEFT},
    {.kind = CS_CELL_STR},
};

static void card_line_printf(cs_table *t, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void card_line_printf(cs_table *t, const char *label, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    cs_table_row(t);
    cs_table_str(t, label);
    cs_table_str(t, text);
}

static void card_lines(cs_table *t, const card_line *l, size_t n, const value *v, int simulated)
{
    for (size_t i = 0; i < n; i++) {
        const char *label = simulated && l[i].sim_label ? l[i].sim_label : l[i].label;
        card_line_printf(t, label, l[i].unit->fmt, v[l[i].col].num * l[i].unit->mul / l[i].unit->div);
    }
}

static void card(cs_doc *doc, const cs_train_report_head *h, const cs_train_row *r, const value *v)
{
    const cs_model *m = h->model;
    if (m->active_params < m->params) /* a mixture of experts: what a token runs, too */
        cs_doc_note(doc, "\n%s on %d ranks, %.3g parameters (%.3g active per token)\n",
                    v[COL_strategy].str, h->topo->ranks, m->params, m->active_params);
    else
        cs_doc_note(doc, "\n%s on %d ranks, %.3g parameters\n", v[COL_strategy].str,
                    h->topo->ranks, m->params);
    cs_table *t = cs_doc_table(
        doc, &(cs_table_spec){NULL, card_cols, N(card_cols), CS_FOR_PEOPLE, CS_TABLE_HASH});
    const cs_iteration *it = &r->ev->iteration;
    card_lines(t, memory_card, N(memory_card), v, h->simulated);
    card_line_printf(t, "verdict", "%s (peak at %s)", v[COL_fits].num ? "fits" : "OUT OF MEMORY",
                     h->simulated ? it->peak_task : r->ev->memory.peak_phase);
    card_line_printf(t, "largest micro-batch that fits", "%d", r->max_micro_batch);
    if (r->ev->note) card_line_printf(t, "note", "%s", r->ev->note);
    if (r->ev->tp_ranks > 1) { /* the tp group and where it runs */
        char where[96];
        if (r->ev->tp_nodes > 1)
            snprintf(where, sizeof where, "SPANS %d NODES: priced on the network path",
                     r->ev->tp_nodes);
        else
            snprintf(where, sizeof where, "inside one node");
        card_line_printf(t, "tensor parallel", "%d ranks%s%s, %s", r->ev->tp_ranks,
                         r->ev->tp_sequence_parallel ? " + sequence parallel" : "",
                         r->ev->tp_async ? " (async)" : "", where);
    }
    if (r->stages) cs_stage_report_card(t, r->stages);
    if (!h->simulated) return;
    if (it->nclasses > 0) { /* des: stragglers (iteration.h): the slowest class's run below */
        const cs_rank_class *sl = &it->classes[it->slowest].ranks;
        card_line_printf(t, "ranks differ (des:)", "%d timelines; below the slowest: %s (%gx)",
                         it->nclasses, sl->label, sl->slowdown);
    }
    card_lines(t, time_card, N(time_card), v, 1);
    if (r->stages) card_lines(t, bubble_card, N(bubble_card), v, 1);
    card_lines(t, comm_card, N(comm_card), v, 1);
    for (int op = 0; op < CS_OP_COUNT; op++) {
        if (!(it->exposed_by_op_s[op] > 0 || it->wire_bytes_by_op[op] > 0)) continue;
        char label[64];
        snprintf(label, sizeof label, "  %s", cs_op_name((cs_op)op));
        card_line_printf(t, label, "%10.4f s exposed, %10.3f GB sent per rank",
                         it->exposed_by_op_s[op], it->wire_bytes_by_op[op] / 1e9);
    }
    card_lines(t, rate_card, N(rate_card), v, 1);
}

void cs_train_report(cs_buf *b, cs_format f, const cs_train_report_head *h, const cs_train_row *rows,
                     size_t n)
{
    static const cs_col title_col[] = {CS_COL_STR("title")};
    char title[512];
    snprintf(title, sizeof title, "collsim %s: %s (%.3g params) on %s, %d ranks on %d nodes%s",
             h->simulated ? "simulate" : "memory", h->model->name, h->model->params,
             h->topo->cluster.name, h->topo->ranks, h->topo->nodes,
             h->des ? ", DES collectives" : "");
    cs_doc *doc = cs_doc_new_as(h->simulated ? "simulate" : "memory");
    cs_doc_note(doc, "# %s\n", title);
    cs_table *ft = cs_doc_table(doc, &(cs_table_spec){NULL, title_col, 1, CS_FOR_TREE,
                                                      CS_TABLE_FIELDS});
    cs_table_row(ft);
    cs_table_str(ft, title);
    cs_table *t = cs_doc_table(doc, &(cs_table_spec){"rows", h->simulated ? cols : memory_cols,
                                                      h->simulated ? NCOLS : NCOLS - NSIMULATE - NPIPELINE,
                                                      CS_FOR_DATA, 0});
    for (size_t i = 0; i < n; i++) {
        value v[NCOLS];
        values(h, &rows[i], v);
        data_row(t, v, h->simulated);
        card(doc, h, &rows[i], v);
    }
    cs_table *st = NULL; /* a pipeline's stages, after the rows */
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].stages) continue;
        if (!st) st = cs_stage_report_table(doc);
        cs_stage_report_rows(st, cs_strategy_name(rows[i].strategy), rows[i].stages);
    }
    cs_doc_write(b, doc, f);
    cs_doc_free(doc);
}
