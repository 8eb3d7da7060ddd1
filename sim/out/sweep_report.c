/* SPDX-License-Identifier: MIT */
/*
 * sweep_report.c - the report of a sweep on the table type (out/table.h):
 * the grid's data columns (GRID_COLUMNS, also the CSV header), a view of
 * them per rank count for people, and the crossings: a table whose first
 * columns (CROSSING_COLUMNS) are the --crossings CSV and whose others
 * (lead, which side fits) only JSON carries; for people, one sentence per
 * crossing. With layout lists (crossover --tp / --pp) the series are
 * strategy x layout: the grid gains the columns tp and pp after strategy
 * (GRID_LAYOUT), the crossings tp_a, pp_a after strategy_a and tp_b, pp_b
 * after strategy_b (CROSSING_LAYOUT_COLUMNS), people read each series by
 * its name ("fsdp_full_shard tp4 pp2"), and the JSON is version 3; without
 * them every byte is what it was (version 2). Renders what study/sweep
 * computed; computes nothing itself.
 */
#include "out/sweep_report.h"

#include "out/rule_report.h"

#include <stdio.h>

#define N(a) (sizeof a / sizeof a[0])
#define GIB (1024.0 * 1024 * 1024)

#define GRID_COLUMNS(X) GRID_HEAD(X) GRID_REST(X)
#define GRID_HEAD(X) X(strategy, STR, NULL)
#define GRID_LAYOUT(X) X(tp, INT, NULL) X(pp, INT, NULL)
#define GRID_REST(X)                                                                               \
    X(ranks, INT, NULL) X(params, NUM, "%.0f") X(fits, INT, NULL)                                  \
    X(iteration_time_s, NUM, "%.6f") X(tokens_per_s, NUM, "%.1f") X(tflops_per_gpu, NUM, "%.3f")   \
    X(mfu, NUM, "%.5f") X(peak_bytes, NUM, "%.0f") X(exposed_comm_s, NUM, "%.6f")                  \
    X(model, STR, NULL) X(capacity_bytes, NUM, "%.0f") X(wire_bytes, NUM, "%.0f")                 \
    X(kernels_s, NUM, "%.6f") X(recompute_s, NUM, "%.6f") X(copies_s, NUM, "%.6f")               \
    X(optimizer_s, NUM, "%.6f") X(exposed_all_reduce_s, NUM, "%.6f")                              \
    X(exposed_all_gather_s, NUM, "%.6f") X(exposed_reduce_scatter_s, NUM, "%.6f")                 \
    X(cpu_wait_s, NUM, "%.6f") X(micro_batch, INT, NULL) X(grad_accum, INT, NULL)                 \
    X(activation_checkpointing, STR, NULL) X(exposed_send_recv_s, NUM, "%.6f")                     \
    X(pipeline_bubble_s, NUM, "%.6f")
#define CROSSING_COLUMNS(X)                                                                        \
    X(ranks, INT, NULL) X(strategy_a, STR, NULL) X(strategy_b, STR, NULL) CROSSING_TAIL(X)
#define CROSSING_LAYOUT_COLUMNS(X)                                                                 \
    X(ranks, INT, NULL) X(strategy_a, STR, NULL) X(tp_a, INT, NULL) X(pp_a, INT, NULL)             \
    X(strategy_b, STR, NULL) X(tp_b, INT, NULL) X(pp_b, INT, NULL) CROSSING_TAIL(X)
#define CROSSING_TAIL(X) X(kind, STR, NULL) X(params, NUM, "%.0f") X(margin, NUM, "%.6f")

#define COL_ROW(col, type, format) {.name = #col, .kind = CS_CELL_##type, .fmt = format},
#define COL_HEADER(col, type, format) "," #col

const char *cs_sweep_report_columns(void) { return GRID_COLUMNS(COL_HEADER) + 1; }
const char *cs_sweep_report_crossing_columns(void) { return CROSSING_COLUMNS(COL_HEADER) + 1; }

/* for the view */
#define GRID_PEOPLE                                                                                \
    {.name = "fits_text", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},                             \
    {.name = "mfu_pct", .kind = CS_CELL_NUM, .fmt = "%.1f", .only = CS_FOR_PEOPLE},                \
    {.name = "peak_gib", .kind = CS_CELL_NUM, .fmt = "%.2f", .only = CS_FOR_PEOPLE}
static const cs_col grid_cols[] = {GRID_COLUMNS(COL_ROW) GRID_PEOPLE};
static const cs_col grid_cols_layout[] = {
    GRID_HEAD(COL_ROW) GRID_LAYOUT(COL_ROW) GRID_REST(COL_ROW) GRID_PEOPLE,
    {.name = "series", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},
};

#define GRID_VIEW_TAIL                                                                             \
    {.name = "fits", .of = "fits_text", .kind = CS_CELL_STR, .width = 5, .flags = CS_COL_LEFT},   \
        CS_VIEW_NUM("iteration_s", "iteration_time_s", "%.4f", 12, NULL),                          \
        CS_VIEW_NUM("tokens/s", "tokens_per_s", "%.0f", 14, NULL),                                 \
        CS_VIEW_NUM("TFLOPS/GPU", "tflops_per_gpu", "%.1f", 11, NULL),                             \
        CS_VIEW_NUM("MFU %", "mfu_pct", "%.1f", 7, NULL),                                          \
        CS_VIEW_NUM("peak GiB", "peak_gib", "%.2f", 10, NULL),                                     \
        CS_VIEW_NUM("exposed_s", "exposed_comm_s", "%.4f", 11, NULL),                              \
        {.name = "micro", .of = "micro_batch", .kind = CS_CELL_INT, .width = 6},                   \
        {.name = "accum", .of = "grad_accum", .kind = CS_CELL_INT, .width = 6},                    \
        {.name = "ckpt", .of = "activation_checkpointing", .kind = CS_CELL_STR, .sep = "  ",       \
         .flags = CS_COL_LEFT}

static const cs_col grid_view[] = {
    {.name = "model", .kind = CS_CELL_STR, .width = 16, .flags = CS_COL_LEFT},
    {.name = "strategy", .kind = CS_CELL_STR, .width = 20, .flags = CS_COL_LEFT},
    GRID_VIEW_TAIL,
};
static const cs_col grid_view_layout[] = {
    {.name = "model", .kind = CS_CELL_STR, .width = 16, .flags = CS_COL_LEFT},
    {.name = "series", .kind = CS_CELL_STR, .width = 30, .flags = CS_COL_LEFT},
    GRID_VIEW_TAIL,
};
#undef GRID_VIEW_TAIL

#define CROSSING_TREE                                                                              \
    {.name = "lead_max", .kind = CS_CELL_NUM, .fmt = "%.6f", .only = CS_FOR_TREE},                 \
        {.name = "lead_max_params", .kind = CS_CELL_NUM, .fmt = "%.0f", .only = CS_FOR_TREE},      \
        {.name = "fits_below", .kind = CS_CELL_INT, .only = CS_FOR_TREE},                          \
        {.name = "micro_batch_a", .kind = CS_CELL_INT, .only = CS_FOR_TREE},                       \
        {.name = "activation_checkpointing_a", .kind = CS_CELL_STR, .only = CS_FOR_TREE},          \
        {.name = "micro_batch_b", .kind = CS_CELL_INT, .only = CS_FOR_TREE},                       \
        {.name = "activation_checkpointing_b", .kind = CS_CELL_STR, .only = CS_FOR_TREE}
static const cs_col crossing_cols[] = {CROSSING_COLUMNS(COL_ROW) CROSSING_TREE};
static const cs_col crossing_cols_layout[] = {CROSSING_LAYOUT_COLUMNS(COL_ROW) CROSSING_TREE};
#undef CROSSING_TREE

static const cs_col title_col[] = {CS_COL_STR("title")};
static const cs_col cluster_col[] = {CS_COL_STR("cluster")};

/* 1.23B, 350M, 1.5T, 124K */
static void human_params(double p, char *buf, size_t len)
{
    if (p >= 1e12) snprintf(buf, len, "%.3gT", p / 1e12);
    else if (p >= 1e9) snprintf(buf, len, "%.3gB", p / 1e9);
    else if (p >= 1e6) snprintf(buf, len, "%.3gM", p / 1e6);
    else snprintf(buf, len, "%.3gK", p / 1e3);
}

static void make_title(char *buf, size_t len, const cs_sweep_spec *s)
{
    int o = snprintf(buf, len, "collsim crossover: %s (%s, %.0f GiB), ", s->cluster.name,
                     s->cluster.gpu.model, s->cluster.gpu.memory_bytes / GIB);
    if (o < 0 || (size_t)o >= len) return;
    if (s->nmodels > 0) {
        o += snprintf(buf + o, len - (size_t)o, "%d models", s->nmodels);
    } else {
        char lo[32], hi[32];
        human_params(s->params_min, lo, sizeof lo);
        human_params(s->params_max, hi, sizeof hi);
        o += snprintf(buf + o, len - (size_t)o, "P %s..%s (%d points, log)", lo, hi,
                      s->params_points);
    }
    if ((size_t)o >= len) return;
    const cs_training *t = &s->training;
    if (s->global_batch <= 0)
        o += snprintf(buf + o, len - (size_t)o, ", micro-batch %d, grad-accum %d", t->micro_batch,
                      t->grad_accum);
    else
        o += snprintf(buf + o, len - (size_t)o, ", global batch %ld", s->global_batch);
    if ((size_t)o >= len) return;
    if (s->global_batch > 0 && s->search_micro_batch)
        o += snprintf(buf + o, len - (size_t)o, ", best micro-batch");
    else if (s->global_batch > 0)
        o += snprintf(buf + o, len - (size_t)o, ", micro-batch %d", t->micro_batch);
    if ((size_t)o >= len) return;
    if (s->search_ckpt)
        o += snprintf(buf + o, len - (size_t)o, " and checkpointing");
    else if (s->global_batch > 0 || t->checkpointing != CS_CKPT_NONE)
        o += snprintf(buf + o, len - (size_t)o, ", %s checkpointing", cs_ckpt_name(t->checkpointing));
    if ((size_t)o >= len) return;
    snprintf(buf + o, len - (size_t)o, ", %s%s", cs_dtype_name(t->param_dtype),
             t->collective_engine == CS_ENGINE_DES ? ", DES collectives" : "");
}

/* The grid point of strategy st at layout (tp, pp) at (ranks, params), or
 * NULL. */
static const cs_sweep_point *point_at(const cs_sweep_point *pts, size_t n, cs_strategy st, int tp,
                                      int pp, int ranks, double params)
{
    for (size_t i = 0; i < n; i++)
        if (pts[i].strategy == st && pts[i].tp == tp && pts[i].pp == pp &&
            pts[i].ranks == ranks && pts[i].params == params)
            return &pts[i];
    return NULL;
}

/* The names of a crossing's sides (cs_sweep_series_name). */
typedef struct sides {
    char a[96], b[96];
} sides;

static sides sides_of(const cs_sweep_spec *s, const cs_crossing *c)
{
    sides x;
    cs_sweep_series_name(s, c->a, c->tp_a, c->pp_a, x.a, sizeof x.a);
    cs_sweep_series_name(s, c->b, c->tp_b, c->pp_b, x.b, sizeof x.b);
    return x;
}

/* Why A leads at its margin point: the part of the iteration where it
 * saves the most over B, and where it loses the most ("; there ddp saves
 * on exposed all_gather (0.0000 vs 0.0031 s) and loses on the optimizer
 * step (0.0310 vs 0.0040 s)"). */
static void why(cs_doc *doc, const cs_crossing *c, const char *name_a, const cs_sweep_point *pts,
                size_t n)
{
    const cs_sweep_point *a =
        point_at(pts, n, c->a, c->tp_a, c->pp_a, c->ranks, c->margin_params);
    const cs_sweep_point *b =
        point_at(pts, n, c->b, c->tp_b, c->pp_b, c->ranks, c->margin_params);
    if (!a || !b) return;
    char gain[48], loss[48];
    double ga, gb, la, lb;
    cs_breakdown_largest_gain(&a->time, &b->time, gain, sizeof gain, &ga, &gb);
    cs_breakdown_largest_gain(&b->time, &a->time, loss, sizeof loss, &lb, &la);
    cs_doc_note(doc, "; there %s saves most on %s (%.4f vs %.4f s)", name_a, gain, ga, gb);
    if (la > lb)
        cs_doc_note(doc, " and loses most on %s (%.4f vs %.4f s)", loss, la, lb);
    else
        cs_doc_note(doc, " and loses on no part");
}

/* What a side runs at a crossing, when the sweep searched it: " (micro-batch
 * 4, full checkpointing)". */
static const char *ckpt_words(cs_ckpt ck)
{
    return ck == CS_CKPT_NONE ? "no checkpointing"
           : ck == CS_CKPT_FULL ? "full recomputation"
                                : "selective recomputation";
}

static void choice(cs_doc *doc, const cs_sweep_spec *s, int mb, cs_ckpt ck)
{
    if (!s->search_micro_batch && !s->search_ckpt) return;
    cs_doc_note(doc, " (micro-batch %d, %s)", mb, ckpt_words(ck));
}

/* "on <cluster> with N GPUs, A (its choice) beats B (its choice) below X
 * params by Y% (at P; up to Z% at Q); B is faster above; the largest
 * difference there: ..." / "A OOMs above X params" */
static void sentence(cs_doc *doc, const cs_sweep_spec *s, const cs_crossing *c,
                     const cs_sweep_point *pts, size_t n)
{
    char p[32];
    human_params(c->params, p, sizeof p);
    sides x = sides_of(s, c);
    cs_doc_note(doc, "  on %s with %d GPUs, ", s->cluster.name, c->ranks);
    if (c->kind == CS_CROSS_THROUGHPUT) {
        char below[32], lead[32];
        human_params(c->margin_params, below, sizeof below);
        human_params(c->lead_max_params, lead, sizeof lead);
        cs_doc_note(doc, "%s", x.a);
        choice(doc, s, c->micro_batch_a, c->ckpt_a);
        cs_doc_note(doc, " beats %s", x.b);
        choice(doc, s, c->micro_batch_b, c->ckpt_b);
        cs_doc_note(doc, " below %s params by %.1f%% (at %s", p, 100 * c->margin, below);
        if (c->lead_max > c->margin)
            cs_doc_note(doc, "; up to %.0f%% at %s", 100 * c->lead_max, lead);
        cs_doc_note(doc, "); %s is faster above", x.b);
        if (c->lead_max < CS_PLAN_TIE_FRACTION)
            cs_doc_note(doc, " (%s leads by under %.0f%%: a tie at the simulator's accuracy)", x.a,
                        100 * CS_PLAN_TIE_FRACTION);
        why(doc, c, x.a, pts, n);
        cs_doc_note(doc, "\n");
        return;
    }
    cs_doc_note(doc, c->fits_below ? "%s OOMs above %s params" : "%s fits only above %s params",
                x.a, p);
    if (s->search_micro_batch || s->search_ckpt)
        cs_doc_note(doc, " (where not even micro-batch %d with %s fits)", c->micro_batch_a,
                    ckpt_words(c->ckpt_a));
    cs_doc_note(doc, "\n");
}

static cs_table *crossings_table(cs_doc *doc, unsigned audience, int layouts, const cs_crossing *c,
                                 size_t nc)
{
    cs_table *t = cs_doc_table(
        doc, layouts ? &(cs_table_spec){"crossings", crossing_cols_layout,
                                        N(crossing_cols_layout), audience, 0}
                     : &(cs_table_spec){"crossings", crossing_cols, N(crossing_cols), audience, 0});
    for (size_t i = 0; i < nc; i++) {
        int through = c[i].kind == CS_CROSS_THROUGHPUT;
        cs_table_row(t);
        cs_table_int(t, c[i].ranks);
        cs_table_str(t, cs_strategy_name(c[i].a));
        if (layouts) {
            cs_table_int(t, c[i].tp_a);
            cs_table_int(t, c[i].pp_a);
        }
        cs_table_str(t, cs_strategy_name(c[i].b));
        if (layouts) {
            cs_table_int(t, c[i].tp_b);
            cs_table_int(t, c[i].pp_b);
        }
        cs_table_str(t, through ? "throughput" : "oom");
        cs_table_num(t, c[i].params);
        if (through) {
            cs_table_num(t, c[i].margin);
            cs_table_num(t, c[i].lead_max);
            cs_table_num(t, c[i].lead_max_params);
            cs_table_skip(t);
        } else {
            cs_table_skip(t);
            cs_table_skip(t);
            cs_table_skip(t);
            cs_table_int(t, c[i].fits_below);
        }
        cs_table_int(t, c[i].micro_batch_a);
        cs_table_str(t, cs_ckpt_name(c[i].ckpt_a));
        cs_table_int(t, c[i].micro_batch_b);
        cs_table_str(t, cs_ckpt_name(c[i].ckpt_b));
    }
    return t;
}

/* An empty point (its layout does not apply): fits 0, no numbers, its
 * model and the capacity; "n/a" for people. */
static void empty_row(cs_table *t, const cs_sweep_point *p, const char *series)
{
    cs_table_int(t, 0);
    for (int k = 0; k < 6; k++) cs_table_skip(t);
    cs_table_str(t, p->model);
    cs_table_num(t, p->capacity_bytes);
    for (int k = 0; k < 14; k++) cs_table_skip(t); /* wire, the breakdown, the choice, the pipeline's */
    cs_table_str(t, "n/a");
    cs_table_skip(t);
    cs_table_skip(t);
    cs_table_str(t, series);
}

static cs_table *grid_table(cs_doc *doc, const cs_sweep_spec *s, const cs_sweep_point *pts,
                            size_t n)
{
    int layouts = cs_sweep_has_layouts(s);
    cs_table *t = cs_doc_table(
        doc, layouts ? &(cs_table_spec){"points", grid_cols_layout, N(grid_cols_layout),
                                        CS_FOR_DATA, 0}
                     : &(cs_table_spec){"points", grid_cols, N(grid_cols), CS_FOR_DATA, 0});
    for (size_t i = 0; i < n; i++) {
        const cs_sweep_point *p = &pts[i];
        char series[96];
        cs_sweep_series_name(s, p->strategy, p->tp, p->pp, series, sizeof series);
        cs_table_row(t);
        cs_table_str(t, cs_strategy_name(p->strategy));
        if (layouts) {
            cs_table_int(t, p->tp);
            cs_table_int(t, p->pp);
        }
        cs_table_int(t, p->ranks);
        cs_table_num(t, p->params);
        if (layouts && !p->applies) {
            empty_row(t, p, series);
            continue;
        }
        cs_table_int(t, p->fits);
        cs_table_num(t, p->iteration_time_s);
        cs_table_num(t, p->tokens_per_s);
        cs_table_num(t, p->tflops_per_gpu);
        cs_table_num(t, p->mfu);
        cs_table_num(t, p->peak_bytes);
        cs_table_num(t, p->exposed_comm_s);
        cs_table_str(t, p->model);
        cs_table_num(t, p->capacity_bytes);
        cs_table_num(t, p->wire_bytes);
        const cs_breakdown *bd = &p->time;
        const double parts[] = {bd->kernels_s, bd->recompute_s, bd->copies_s, bd->optimizer_s,
                                bd->exposed_s[CS_OP_ALL_REDUCE], bd->exposed_s[CS_OP_ALL_GATHER],
                                bd->exposed_s[CS_OP_REDUCE_SCATTER], bd->cpu_wait_s};
        for (size_t k = 0; k < N(parts); k++) cs_table_num(t, parts[k]);
        cs_table_int(t, p->micro_batch);
        cs_table_int(t, p->grad_accum);
        cs_table_str(t, cs_ckpt_name(p->checkpointing));
        cs_table_num(t, bd->exposed_s[CS_OP_SEND_RECV]); /* appended: a pipeline's */
        cs_table_num(t, bd->pipeline_bubble_s);
        cs_table_str(t, p->fits ? "yes" : "OOM");
        cs_table_num(t, 100 * p->mfu);
        cs_table_num(t, p->peak_bytes / GIB);
        if (layouts) cs_table_str(t, series);
    }
    return t;
}

/* Where points of one rank count could not keep the global batch (no
 * whole grad-accum), what they ran instead. */
static void batch_note(cs_doc *doc, const cs_sweep_spec *s, const cs_sweep_point *pts, size_t n)
{
    if (s->global_batch <= 0) return;
    size_t off = 0;
    long lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].batch_kept || (cs_sweep_has_layouts(s) && !pts[i].applies)) continue;
        long g = (long)pts[i].micro_batch * pts[i].grad_accum * pts[i].ranks;
        if (off++ == 0 || g < lo) lo = g;
        if (off == 1 || g > hi) hi = g;
    }
    if (!off) return;
    cs_doc_note(doc, "note: the global batch of %ld sequences is no whole multiple of %d ranks x "
                     "micro-batch at %zu point%s; the nearest whole grad-accum runs ",
                s->global_batch, pts[0].ranks, off, off == 1 ? "" : "s");
    if (lo == hi) cs_doc_note(doc, "%ld sequences there\n", lo);
    else cs_doc_note(doc, "%ld-%ld sequences there\n", lo, hi);
}

/* For people: the grid in one view per run of points with the same rank
 * count, each under its own heading. */
static void grid_views(cs_doc *doc, const cs_sweep_spec *s, const cs_table *grid,
                       const cs_sweep_point *pts, size_t n)
{
    for (size_t i = 0, end; i < n; i = end) {
        for (end = i + 1; end < n && pts[end].ranks == pts[i].ranks; end++) continue;
        cs_doc_note(doc, "\n%d GPUs\n", pts[i].ranks);
        batch_note(doc, s, pts + i, end - i);
        if (cs_sweep_has_layouts(s))
            cs_doc_view_rows(doc, grid,
                             &(cs_table_spec){NULL, grid_view_layout, N(grid_view_layout),
                                              CS_FOR_PEOPLE, 0},
                             i, end - i);
        else
            cs_doc_view_rows(doc, grid,
                             &(cs_table_spec){NULL, grid_view, N(grid_view), CS_FOR_PEOPLE, 0}, i,
                             end - i);
    }
}

static void field(cs_doc *doc, const cs_col *col, const char *v)
{
    cs_table_str(cs_doc_field(doc, col), v);
}

void cs_sweep_report(cs_buf *b, cs_format f, const cs_sweep_spec *s, const cs_sweep_point *pts,
                     size_t n, const cs_crossing *c, size_t nc, const cs_plan_rule *rules)
{
    char title[512];
    make_title(title, sizeof title, s);
    int layouts = cs_sweep_has_layouts(s);
    cs_doc *doc = cs_doc_new_versioned(
        "crossover", layouts ? CS_SWEEP_JSON_VERSION : CS_SWEEP_JSON_VERSION_STRATEGIES);
    cs_doc_note(doc, "# %s\n", title);
    field(doc, title_col, title);
    field(doc, cluster_col, s->cluster.name);
    grid_views(doc, s, grid_table(doc, s, pts, n), pts, n);
    crossings_table(doc, CS_FOR_TREE, layouts, c, nc);
    cs_doc_note(doc, "\nCrossings (throughput: Brent on log10 P, both strategies fit there; OOM: "
                     "bisection; both to 1e-4):\n");
    if (s->nmodels > 0)
        cs_doc_note(doc, "  none computed: a list of models has no continuous P axis\n");
    else if (nc == 0)
        cs_doc_note(doc, "  none in this range\n");
    for (size_t i = 0; i < nc; i++) sentence(doc, s, &c[i], pts, n);
    if (rules) cs_rule_report_ranks(doc, rules, (size_t)s->nranks);
    cs_doc_write(b, doc, f);
    cs_doc_free(doc);
}

void cs_sweep_report_crossings(cs_buf *b, const cs_sweep_spec *s, const cs_crossing *c, size_t nc)
{
    cs_doc *doc = cs_doc_new_as("crossings");
    crossings_table(doc, CS_FOR_FLAT, cs_sweep_has_layouts(s), c, nc);
    cs_doc_write(b, doc, CS_FORMAT_CSV);
    cs_doc_free(doc);
}
