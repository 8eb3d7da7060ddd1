/* SPDX-License-Identifier: MIT */
/*
 * calib_report.c - the reports of `collsim compare` (predicted vs measured
 * rows, per-dataset error summary) and `collsim calibrate` (fitted and
 * kept parameters with their 95% intervals, excluded datasets, residuals
 * per row), on the table type (out/table.h). Renders what study/calibrate
 * computed; computes nothing itself.
 *
 * Each report is one document: for people, notes and aligned views; for
 * data, tables whose columns CSV and JSON share, with a few columns kept
 * to one of them where their contracts differ (CSV "dataset" is JSON's
 * "name"; CSV's status is not_modelled/ok, JSON's the reason). The
 * calibration's parameter lines are written as notes: their layout (an
 * interval, "(no interval)", "(kept)") is no column grid.
 */
#include "out/calib_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "out/table.h"

#define N(a) (sizeof a / sizeof a[0])

/* The text columns of a dataset name (cut to 40 characters) and an op. */
#define DATASET_VIEW                                                                               \
    {.name = "dataset", .kind = CS_CELL_STR, .width = 40, .unit = "",                              \
     .flags = CS_COL_LEFT | CS_COL_CLIP}
#define OP_VIEW {.name = "op", .kind = CS_CELL_STR, .width = 14, .unit = "", .flags = CS_COL_LEFT}

static cs_table *table(cs_doc *doc, const char *name, const cs_col *cols, size_t n,
                       unsigned audience, unsigned flags)
{
    return cs_doc_table(doc, &(cs_table_spec){name, cols, n, audience, flags});
}

/* A view for people, in the nccl-tests look ("# " headings). */
static void view(cs_doc *doc, const cs_table *src, const cs_col *cols, size_t n)
{
    cs_doc_view(doc, src, &(cs_table_spec){NULL, cols, n, CS_FOR_PEOPLE, CS_TABLE_HASH});
}

/* One document field (a JSON member on its own line): a string. */
static void str_field(cs_doc *doc, const cs_col *col, const char *v)
{
    cs_table_str(cs_doc_field(doc, col), v);
}

/* ---- compare: rows ------------------------------------------------------- */

static const cs_col cluster_col[] = {CS_COL_STR("cluster")};

static const cs_col cmp_row_cols[] = {
    CS_COL_STR("dataset"),
    CS_COL_STR("op"),
    CS_COL_INT("ranks"),
    CS_COL_INT("nodes"),
    CS_COL_NUM("size_bytes", "%.0f"),
    CS_COL_NUM("measured_us", "%.4f"),
    CS_COL_NUM("predicted_us", "%.4f"),
    CS_COL_NUM("error_pct", "%.3f"),
    CS_COL_NUM("measured_busbw_GBps", "%.4f"),
    CS_COL_NUM("predicted_busbw_GBps", "%.4f"),
    {.name = "bound_busbw_GBps", .kind = CS_CELL_NUM, .fmt = "%.4f", .only = CS_FOR_TREE},
    CS_COL_STR("algo"),
    CS_COL_STR("proto"),
    {.name = "status", .kind = CS_CELL_STR, .only = CS_FOR_FLAT},
    {.name = "status", .kind = CS_CELL_STR, .only = CS_FOR_TREE},
};

static const cs_col cmp_row_view[] = {
    DATASET_VIEW,
    OP_VIEW,
    {.name = "ranks", .kind = CS_CELL_INT, .width = 5, .unit = ""},
    {.name = "nodes", .kind = CS_CELL_INT, .width = 5, .unit = ""},
    CS_VIEW_NUM("size", "size_bytes", "%.0f", 12, "(B)"),
    CS_VIEW_NUM("measured", "measured_us", "%.2f", 10, "(us)"),
    CS_VIEW_NUM("predicted", "predicted_us", "%.2f", 10, "(us)"),
    CS_VIEW_NUM("error", "error_pct", "%.1f", 7, "(%)"),
    {.name = "algo", .kind = CS_CELL_STR, .width = 6, .flags = CS_COL_LEFT},
    {.name = "proto", .kind = CS_CELL_STR, .width = 6, .flags = CS_COL_LEFT},
};

static const char *row_algo(const cs_meas_row *r, const cs_calib_pred *p)
{
    if (p->status) return r->algo_name[0] ? r->algo_name : "-";
    return cs_algo_name(p->algo);
}

static void compare_rows(cs_table *t, const cs_meas_set *m, const cs_calib_compare *cmp)
{
    for (size_t i = 0; i < m->n; i++) {
        const cs_meas_row *r = &m->rows[i];
        const cs_calib_pred *p = &cmp->pred[i];
        cs_table_row(t);
        cs_table_str(t, m->datasets[r->dataset].name);
        cs_table_str(t, cs_op_name(r->op));
        cs_table_int(t, r->ranks);
        cs_table_int(t, p->nodes);
        cs_table_num(t, r->size_bytes);
        cs_table_num(t, r->time_us);
        cs_table_num(t, p->time_us);
        cs_table_num(t, cmp->err_pct[i]);
        cs_table_num(t, cs_meas_busbw_GBps(r, r->time_us));
        cs_table_num(t, p->status ? NAN : cs_meas_busbw_GBps(r, p->time_us));
        cs_table_num(t, p->bound_busbw_GBps);
        cs_table_str(t, row_algo(r, p));
        cs_table_str(t, p->status ? "-" : cs_proto_name(p->proto));
        cs_table_str(t, p->status ? "not_modelled" : "ok");
        cs_table_str(t, p->status ? p->why : "ok");
    }
}

/* ---- compare: the per-dataset summary ------------------------------------- */

#define STATS_COLS(which)                                                                          \
    CS_COL_INT("n_" which), CS_COL_NUM("median_" which "_pct", "%.3f"),                            \
        CS_COL_NUM("p90_" which "_pct", "%.3f"), CS_COL_NUM("max_" which "_pct", "%.3f")

static const cs_col cmp_ds_cols[] = {
    {.name = "dataset", .kind = CS_CELL_STR, .only = CS_FOR_FLAT},
    {.name = "name", .kind = CS_CELL_STR, .only = CS_FOR_TREE},
    {.name = "source", .kind = CS_CELL_STR, .only = CS_FOR_TREE},
    CS_COL_INT("rows"),
    CS_COL_INT("unmodelled"),
    CS_COL_BOOL("beyond_bound"),
    CS_COL_NUM("max_busbw_GBps", "%.3f"),
    CS_COL_NUM("bound_busbw_GBps", "%.3f"),
    STATS_COLS("big"),
    STATS_COLS("all"),
    {.name = "notes", .kind = CS_CELL_STR, .only = CS_FOR_TREE},
};

#define STATS_VIEW(head, which)                                                                    \
    {.name = "n", .of = "n_" which, .kind = CS_CELL_INT, .width = 3, .sep = " | ",                 \
     .flags = CS_COL_HEAD_LEFT},                                                                   \
        CS_VIEW_NUM(head, "median_" which "_pct", "%.1f", 6, NULL),                               \
        CS_VIEW_NUM("p90", "p90_" which "_pct", "%.1f", 6, NULL),                                 \
        CS_VIEW_NUM("max", "max_" which "_pct", "%.1f", 6, NULL)

static const cs_col cmp_ds_view[] = {
    {.name = "dataset", .kind = CS_CELL_STR, .width = 40, .flags = CS_COL_LEFT | CS_COL_CLIP},
    {.name = "rows", .kind = CS_CELL_INT, .width = 4},
    STATS_VIEW(">=1MiB", "big"),
    STATS_VIEW("all", "all"),
    {.name = "notes", .kind = CS_CELL_STR, .sep = " | "},
};

static void ds_notes(char *buf, size_t n, const cs_meas_dataset *ds, const cs_calib_ds_score *s)
{
    size_t k = 0;
    buf[0] = 0;
    if (s->beyond_bound)
        k += (size_t)snprintf(buf + k, n - k,
                              "busbw %.0f GB/s above the ring/tree/NVLS/NVLSTree line-rate bound "
                              "%.0f GB/s (SHARP); ", s->max_busbw_GBps, s->bound_busbw_GBps);
    if (s->above_line_rate && k < n)
        k += (size_t)snprintf(buf + k, n - k,
                              "busbw above what the cluster's line rate allows: its bandwidth is "
                              "too low; ");
    if (s->unmodelled && k < n)
        k += (size_t)snprintf(buf + k, n - k, "%d rows not modelled; ", s->unmodelled);
    if (ds->gpus_per_process > 1 && k < n)
        k += (size_t)snprintf(buf + k, n - k, "one process drives %d GPUs (-g %d); ",
                              ds->gpus_per_process, ds->gpus_per_process);
    if (k >= 2 && k < n) buf[k - 2] = 0;
}

static void stats_cells(cs_table *t, const cs_calib_stats *st)
{
    cs_table_int(t, st->n);
    cs_table_num(t, st->median);
    cs_table_num(t, st->p90);
    cs_table_num(t, st->max);
}

static void compare_datasets(cs_table *t, const cs_meas_set *m, const cs_calib_compare *cmp)
{
    char note[512];
    for (size_t k = 0; k < m->ndatasets; k++) {
        const cs_calib_ds_score *s = &cmp->ds[k];
        const cs_meas_dataset *ds = &m->datasets[k];
        ds_notes(note, sizeof note, ds, s);
        cs_table_row(t);
        cs_table_str(t, ds->name);
        cs_table_str(t, ds->name);
        cs_table_str(t, ds->source);
        cs_table_int(t, s->rows);
        cs_table_int(t, s->unmodelled);
        cs_table_bool(t, s->beyond_bound);
        cs_table_num(t, s->max_busbw_GBps);
        cs_table_num(t, s->bound_busbw_GBps);
        stats_cells(t, &s->big);
        stats_cells(t, &s->all);
        cs_table_str(t, note);
    }
}

void cs_calib_compare_report(cs_buf *b, cs_format f, int summary_only, const char *cluster_name,
                             const cs_meas_set *m, const cs_calib_compare *cmp)
{
    cs_doc *doc = cs_doc_new_as("compare");
    cs_doc_note(doc, "# collsim compare: cluster %s, %zu rows in %zu datasets\n", cluster_name,
                m->n, m->ndatasets);
    str_field(doc, cluster_col, cluster_name);
    /* CSV holds the rows, or with summary_only the summary; JSON both */
    cs_table *rows = table(doc, "rows", cmp_row_cols, N(cmp_row_cols),
                           CS_FOR_TREE | (summary_only ? 0 : CS_FOR_FLAT), 0);
    compare_rows(rows, m, cmp);
    if (!summary_only) {
        cs_doc_note(doc, "#\n");
        view(doc, rows, cmp_row_view, N(cmp_row_view));
    }
    cs_doc_note(doc, "#\n# absolute error per dataset, %% (median / p90 / max)\n");
    cs_table *ds = table(doc, "datasets", cmp_ds_cols, N(cmp_ds_cols),
                         CS_FOR_TREE | (summary_only ? CS_FOR_FLAT : 0), 0);
    compare_datasets(ds, m, cmp);
    view(doc, ds, cmp_ds_view, N(cmp_ds_view));
    cs_doc_write(b, doc, f);
    cs_doc_free(doc);
}

/* ---- calibrate ------------------------------------------------------------ */

static const cs_col status_col[] = {CS_COL_STR("status")};
static const cs_col fit_cols[] = {
    CS_COL_INT("used_rows"),
    CS_COL_INT("downweighted"),
    CS_COL_INT("dof"),
    CS_COL_INT("iterations"),
    CS_COL_NUM("rms_before_pct", "%.4f"),
    CS_COL_NUM("rms_after_pct", "%.4f"),
};

/* The fit's outcome: two notes for people, two lines of JSON fields. */
static void fit_summary(cs_doc *doc, const cs_calib_result *r)
{
    cs_doc_note(doc,
                "# collsim calibrate: %s after %d iterations; %d rows used (%d down-weighted "
                "as outliers), %d degrees of freedom\n",
                r->status, r->iterations, r->used_rows, r->downweighted, r->dof);
    cs_doc_note(doc, "# weighted RMS relative error: %.2f%% before, %.2f%% after\n#\n",
                r->rms_before_pct, r->rms_after_pct);
    str_field(doc, status_col, r->status);
    cs_table *t = table(doc, NULL, fit_cols, N(fit_cols), CS_FOR_TREE, CS_TABLE_FIELDS);
    cs_table_row(t);
    cs_table_int(t, r->used_rows);
    cs_table_int(t, r->downweighted);
    cs_table_int(t, r->dof);
    cs_table_int(t, r->iterations);
    cs_table_num(t, r->rms_before_pct);
    cs_table_num(t, r->rms_after_pct);
}

static const cs_col param_cols[] = {
    {.name = "param", .kind = CS_CELL_STR, .only = CS_FOR_FLAT},
    {.name = "name", .kind = CS_CELL_STR, .only = CS_FOR_TREE},
    CS_COL_STR("unit"),
    CS_COL_BOOL("fitted"),
    CS_COL_NUM("initial", "%.9g"),
    CS_COL_NUM("value", "%.9g"),
    CS_COL_NUM("ci_lo", "%.9g"),
    CS_COL_NUM("ci_hi", "%.9g"),
    {.name = "why", .kind = CS_CELL_STR, .flags = CS_COL_QUOTE},
};

/* One parameter line for people: fitted with or without an interval, or
 * kept (from the input, or NCCL's default when the input had none). */
static void param_line(cs_doc *doc, const cs_calib_param *p)
{
    if (p->fitted && isfinite(p->ci_lo))
        cs_doc_note(doc, "  %-18s %-6s %12.6g %12.6g   [%11.6g, %11.6g]   fitted %s\n", p->name,
                    p->unit, p->initial, p->value, p->ci_lo, p->ci_hi, p->why);
    else if (p->fitted)
        cs_doc_note(doc, "  %-18s %-6s %12.6g %12.6g   %-27s   %s\n", p->name, p->unit, p->initial,
                    p->value, "(no interval)", p->why);
    else if (isfinite(p->initial))
        cs_doc_note(doc, "  %-18s %-6s %12.6g %12s   %-27s   kept: %s\n", p->name, p->unit,
                    p->initial, "(kept)", "", p->why);
    else
        cs_doc_note(doc, "  %-18s %-6s %12s %12s   %-27s   kept: %s\n", p->name, p->unit, "NCCL's",
                    "(kept)", "", p->why);
}

void cs_calib_report_params(cs_doc *doc, const cs_calib_param *params, int n)
{
    cs_doc_note(doc, "# %-18s %-6s %12s %12s   %-27s %s\n", "parameter", "", "input", "fitted",
                "95% confidence interval", "");
    cs_table *t = table(doc, "params", param_cols, N(param_cols), CS_FOR_DATA, 0);
    for (int j = 0; j < n; j++) {
        const cs_calib_param *p = &params[j];
        param_line(doc, p);
        cs_table_row(t);
        cs_table_str(t, p->name);
        cs_table_str(t, p->name);
        cs_table_str(t, p->unit);
        cs_table_bool(t, p->fitted);
        cs_table_num(t, p->initial);
        cs_table_num(t, p->value);
        cs_table_num(t, p->ci_lo);
        cs_table_num(t, p->ci_hi);
        cs_table_str(t, p->why);
    }
}

static const cs_col fit_ds_cols[] = {
    CS_COL_STR("name"),
    CS_COL_BOOL("used"),
    CS_COL_STR("why"),
};

static void fit_datasets(cs_doc *doc, const cs_calib_result *r, const cs_meas_set *m)
{
    cs_table *t = table(doc, "datasets", fit_ds_cols, N(fit_ds_cols), CS_FOR_TREE, 0);
    int any = 0;
    for (size_t k = 0; k < m->ndatasets; k++) {
        cs_table_row(t);
        cs_table_str(t, m->datasets[k].name);
        cs_table_bool(t, !r->ds_why[k][0]);
        cs_table_str(t, r->ds_why[k]);
        if (!r->ds_why[k][0]) continue;
        if (!any++) cs_doc_note(doc, "#\n# excluded datasets\n");
        cs_doc_note(doc, "  %s: %s\n", m->datasets[k].name, r->ds_why[k]);
    }
}

static const cs_col fit_row_cols[] = {
    CS_COL_STR("dataset"),
    CS_COL_STR("op"),
    CS_COL_NUM("size_bytes", "%.0f"),
    CS_COL_NUM("measured_us", "%.4f"),
    CS_COL_NUM("before_us", "%.4f"),
    CS_COL_NUM("after_us", "%.4f"),
    CS_COL_NUM("residual_pct", "%.3f"),
    CS_COL_NUM("weight", "%.4f"),
    CS_COL_BOOL("used"),
    CS_COL_STR("why"),
    /* for people: the weight of a row left out reads "-", then why */
    {.name = "used_weight", .kind = CS_CELL_NUM, .fmt = "%.4f", .only = CS_FOR_PEOPLE},
    {.name = "why_left_out", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},
};

static const cs_col fit_row_view[] = {
    DATASET_VIEW,
    OP_VIEW,
    CS_VIEW_NUM("size", "size_bytes", "%.0f", 12, "(B)"),
    CS_VIEW_NUM("measured", "measured_us", "%.2f", 10, "(us)"),
    CS_VIEW_NUM("before", "before_us", "%.2f", 10, "(us)"),
    CS_VIEW_NUM("after", "after_us", "%.2f", 10, "(us)"),
    CS_VIEW_NUM("resid", "residual_pct", "%.2f", 8, "(%)"),
    CS_VIEW_NUM("weight", "used_weight", "%.3f", 6, NULL),
    {.name = NULL, .of = "why_left_out", .kind = CS_CELL_STR},
};

static void fit_rows(cs_doc *doc, const cs_calib_result *r, const cs_meas_set *m)
{
    cs_table *t = table(doc, "rows", fit_row_cols, N(fit_row_cols), CS_FOR_TREE, 0);
    cs_doc_note(doc, "#\n");
    view(doc, t, fit_row_view, N(fit_row_view));
    char why[128];
    for (size_t i = 0; i < m->n; i++) {
        const cs_meas_row *mr = &m->rows[i];
        const cs_calib_rowfit *rf = &r->rows[i];
        cs_table_row(t);
        cs_table_str(t, m->datasets[mr->dataset].name);
        cs_table_str(t, cs_op_name(mr->op));
        cs_table_num(t, mr->size_bytes);
        cs_table_num(t, mr->time_us);
        cs_table_num(t, rf->before_us);
        cs_table_num(t, rf->after_us);
        cs_table_num(t, rf->resid_pct);
        cs_table_num(t, rf->weight);
        cs_table_bool(t, rf->used);
        cs_table_str(t, rf->why);
        if (rf->used) {
            cs_table_num(t, rf->weight);
            continue;
        }
        cs_table_skip(t);
        snprintf(why, sizeof why, "(%s)", rf->why);
        cs_table_str(t, why);
    }
}

void cs_calib_report(cs_buf *b, cs_format f, const cs_calib_result *r, const cs_meas_set *m)
{
    cs_doc *doc = cs_doc_new_as("calibrate");
    fit_summary(doc, r);
    cs_calib_report_params(doc, r->params, r->nparams);
    fit_datasets(doc, r, m);
    fit_rows(doc, r, m);
    cs_doc_write(b, doc, f);
    cs_doc_free(doc);
}
