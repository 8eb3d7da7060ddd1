/* SPDX-License-Identifier: MIT */
/*
 * calib_train_report.c - the reports of `collsim compare --training-runs`
 * (each run's measured and predicted tokens/s per GPU, the per-file
 * absolute error median / p90 / max) and of the training fit of
 * `collsim calibrate --training-runs` (parameters with 95% intervals or
 * why kept, residuals per run), on the table type (out/table.h). Renders
 * what study/calib_train computed; computes nothing itself.
 */
#include "out/calib_train_report.h"

#include <math.h>
#include <stdio.h>

#include "out/calib_report.h"
#include "out/table.h"

#define N(a) (sizeof a / sizeof a[0])

static cs_table *table(cs_doc *doc, const char *name, const cs_col *cols, size_t n,
                       unsigned audience)
{
    return cs_doc_table(doc, &(cs_table_spec){name, cols, n, audience, 0});
}

static void view(cs_doc *doc, const cs_table *src, const cs_col *cols, size_t n)
{
    cs_doc_view(doc, src, &(cs_table_spec){NULL, cols, n, CS_FOR_PEOPLE, CS_TABLE_HASH});
}

/* ---- the runs ------------------------------------------------------------------ */

static const cs_col run_cols[] = {
    CS_COL_STR("file"),
    CS_COL_INT("line"),
    CS_COL_STR("table"),
    CS_COL_STR("model"),
    CS_COL_INT("gpus"),
    CS_COL_INT("seq_len"),
    CS_COL_INT("micro_batch"),
    CS_COL_INT("grad_accum"),
    CS_COL_STR("checkpointing"),
    CS_COL_NUM("measured_tokens_per_s_per_gpu", "%.1f"),
    CS_COL_NUM("predicted_tokens_per_s_per_gpu", "%.1f"),
    CS_COL_NUM("error_pct", "%.3f"),
    CS_COL_NUM("measured_mfu_pct", "%.2f"),
    CS_COL_NUM("predicted_mfu_pct", "%.2f"),
};

static const cs_col run_view[] = {
    {.name = "table", .kind = CS_CELL_STR, .width = 12, .unit = "", .flags = CS_COL_LEFT | CS_COL_CLIP},
    {.name = "model", .kind = CS_CELL_STR, .width = 10, .unit = "", .flags = CS_COL_LEFT | CS_COL_CLIP},
    {.name = "gpus", .kind = CS_CELL_INT, .width = 4, .unit = ""},
    {.name = "seq", .of = "seq_len", .kind = CS_CELL_INT, .width = 6, .unit = ""},
    {.name = "micro", .of = "micro_batch", .kind = CS_CELL_INT, .width = 5, .unit = ""},
    {.name = "accum", .of = "grad_accum", .kind = CS_CELL_INT, .width = 5, .unit = ""},
    {.name = "ckpt", .of = "checkpointing", .kind = CS_CELL_STR, .width = 5, .unit = "",
     .flags = CS_COL_LEFT},
    CS_VIEW_NUM("measured", "measured_tokens_per_s_per_gpu", "%.0f", 9, "(tok/s/GPU)"),
    CS_VIEW_NUM("predicted", "predicted_tokens_per_s_per_gpu", "%.0f", 11, "(tok/s/GPU)"),
    CS_VIEW_NUM("error", "error_pct", "%.1f", 7, "(%)"),
};

/* Run i's cells up to error_pct given (pred, err); MFU last. */
static void run_cells(cs_table *t, const cs_trun_set *s, size_t i, double pred, double err,
                      double pred_mfu)
{
    const cs_trun_row *r = &s->rows[i];
    cs_table_row(t);
    cs_table_str(t, s->files[r->file]);
    cs_table_int(t, r->line);
    cs_table_str(t, r->table);
    cs_table_str(t, r->model.name);
    cs_table_int(t, r->gpus);
    cs_table_int(t, r->model.seq_len);
    cs_table_int(t, r->training.micro_batch);
    cs_table_int(t, r->training.grad_accum);
    cs_table_str(t, cs_ckpt_name(r->training.checkpointing));
    cs_table_num(t, r->measured_tps_per_gpu);
    cs_table_num(t, pred);
    cs_table_num(t, err);
    cs_table_num(t, r->measured_mfu_pct);
    cs_table_num(t, pred_mfu);
}

static const cs_col file_cols[] = {
    CS_COL_STR("file"),
    CS_COL_INT("runs"),
    CS_COL_NUM("median_pct", "%.3f"),
    CS_COL_NUM("p90_pct", "%.3f"),
    CS_COL_NUM("max_pct", "%.3f"),
};
static const cs_col file_view[] = {
    {.name = "file", .kind = CS_CELL_STR, .width = 48, .unit = "", .flags = CS_COL_LEFT | CS_COL_CLIP},
    {.name = "runs", .kind = CS_CELL_INT, .width = 5, .unit = ""},
    CS_VIEW_NUM("median", "median_pct", "%.2f", 8, "(%)"),
    CS_VIEW_NUM("p90", "p90_pct", "%.2f", 8, "(%)"),
    CS_VIEW_NUM("max", "max_pct", "%.2f", 8, "(%)"),
};

static const cs_col kmeas_cols[] = {
    CS_COL_STR("file"),
    CS_COL_INT("line"),
    CS_COL_STR("kind"),
    CS_COL_STR("dtype"),
    CS_COL_NUM("m", "%.0f"),
    CS_COL_NUM("n", "%.0f"),
    CS_COL_NUM("k", "%.0f"),
    CS_COL_NUM("bytes", "%.0f"),
    CS_COL_STR("kernel"),
    CS_COL_NUM("measured_us", "%.4f"),
    CS_COL_NUM("predicted_us", "%.4f"),
    CS_COL_NUM("error_pct", "%.3f"),
};
static const cs_col kmeas_view[] = {
    {.name = "kind", .kind = CS_CELL_STR, .width = 5, .unit = "", .flags = CS_COL_LEFT},
    {.name = "dtype", .kind = CS_CELL_STR, .width = 6, .unit = "", .flags = CS_COL_LEFT},
    CS_VIEW_NUM("m", "m", "%.0f", 6, ""),
    CS_VIEW_NUM("n", "n", "%.0f", 6, ""),
    CS_VIEW_NUM("k", "k", "%.0f", 6, ""),
    CS_VIEW_NUM("bytes", "bytes", "%.0f", 12, "(B)"),
    CS_VIEW_NUM("measured", "measured_us", "%.2f", 11, "(us)"),
    CS_VIEW_NUM("predicted", "predicted_us", "%.2f", 11, "(us)"),
    CS_VIEW_NUM("error", "error_pct", "%.1f", 7, "(%)"),
};

/* The kernel timings' table (CSV's flat table when there is no run). */
static void kernel_rows(cs_doc *doc, const cs_trun_set *s, const cs_calib_train_compare *cmp)
{
    cs_table *t = table(doc, "kernels", kmeas_cols, N(kmeas_cols),
                        CS_FOR_TREE | (s->n ? 0 : CS_FOR_FLAT));
    for (size_t q = 0; q < s->nk; q++) {
        const cs_kmeas_row *k = &s->kernels[q];
        cs_table_row(t);
        cs_table_str(t, s->files[k->file]);
        cs_table_int(t, k->line);
        cs_table_str(t, k->gemm ? "gemm" : "copy");
        cs_table_str(t, k->gemm ? cs_dtype_name(k->dtype) : "bytes");
        cs_table_num(t, k->m);
        cs_table_num(t, k->n);
        cs_table_num(t, k->k);
        cs_table_num(t, k->bytes);
        cs_table_str(t, k->kernel);
        cs_table_num(t, k->time_us);
        cs_table_num(t, cmp->pred_kernel_us[q]);
        cs_table_num(t, cmp->kernel_err_pct[q]);
    }
    if (!s->nk) return;
    cs_doc_note(doc, "#\n");
    view(doc, t, kmeas_view, N(kmeas_view));
}

void cs_calib_train_compare_report(cs_buf *b, cs_format f, const char *cluster_name,
                                   const cs_trun_set *s, const cs_calib_train_compare *cmp)
{
    cs_doc *doc = cs_doc_new_as("compare-training");
    cs_doc_note(doc, "# collsim compare: cluster %s, %zu training runs and %zu kernel timings in "
                     "%zu files\n", cluster_name, s->n, s->nk, s->nfiles);
    cs_table *rows = table(doc, "runs", run_cols, N(run_cols),
                           CS_FOR_TREE | (s->n || !s->nk ? CS_FOR_FLAT : 0));
    for (size_t i = 0; i < s->n; i++)
        run_cells(rows, s, i, cmp->pred_tps[i], cmp->err_pct[i], cmp->pred_mfu_pct[i]);
    if (s->n) {
        cs_doc_note(doc, "#\n");
        view(doc, rows, run_view, N(run_view));
    }
    kernel_rows(doc, s, cmp);
    cs_doc_note(doc, "#\n# absolute error per file (tokens/s per GPU; kernel time), %% (median / "
                     "p90 / max)\n");
    cs_table *ft = table(doc, "files", file_cols, N(file_cols), CS_FOR_TREE);
    for (size_t k = 0; k < s->nfiles; k++) {
        cs_table_row(ft);
        cs_table_str(ft, s->files[k]);
        cs_table_int(ft, cmp->file[k].n);
        cs_table_num(ft, cmp->file[k].median);
        cs_table_num(ft, cmp->file[k].p90);
        cs_table_num(ft, cmp->file[k].max);
    }
    view(doc, ft, file_view, N(file_view));
    cs_doc_write(b, doc, f);
    cs_doc_free(doc);
}

/* ---- the fit ------------------------------------------------------------------- */

static const cs_col resid_cols[] = {
    CS_COL_STR("model"),
    CS_COL_INT("gpus"),
    CS_COL_INT("seq_len"),
    CS_COL_NUM("measured_tokens_per_s_per_gpu", "%.1f"),
    CS_COL_NUM("before_pct", "%.3f"),
    CS_COL_NUM("after_pct", "%.3f"),
};

static const cs_col fit_cols[] = {
    CS_COL_STR("status"),
    CS_COL_BOOL("converged"),
    CS_COL_INT("iterations"),
    CS_COL_INT("dof"),
    CS_COL_NUM("rms_before_pct", "%.4f"),
    CS_COL_NUM("rms_after_pct", "%.4f"),
};

static const cs_col kernel_cols[] = {
    CS_COL_STR("kind"),
    CS_COL_NUM("m", "%.0f"),
    CS_COL_NUM("n", "%.0f"),
    CS_COL_NUM("k", "%.0f"),
    CS_COL_NUM("bytes", "%.0f"),
    CS_COL_NUM("time_us", "%.4f"),
    CS_COL_NUM("before_pct", "%.3f"),
    CS_COL_NUM("after_pct", "%.3f"),
};

void cs_calib_train_report(cs_buf *b, cs_format f, const cs_calib_train_result *r,
                           const cs_trun_set *s)
{
    cs_doc *doc = cs_doc_new_as("calibrate-training");
    cs_doc_note(doc,
                "# collsim calibrate (training runs): %s after %d iterations; %zu runs and "
                "kernel timings, %d degrees of freedom\n# RMS relative error of tokens/s per GPU: %.2f%% before, "
                "%.2f%% after\n#\n",
                r->status, r->iterations, r->nrows, r->dof, r->rms_before_pct, r->rms_after_pct);
    cs_table *ft = cs_doc_table(doc, &(cs_table_spec){NULL, fit_cols, N(fit_cols), CS_FOR_TREE,
                                                       CS_TABLE_FIELDS});
    cs_table_row(ft);
    cs_table_str(ft, r->status);
    cs_table_bool(ft, r->converged);
    cs_table_int(ft, r->iterations);
    cs_table_int(ft, r->dof);
    cs_table_num(ft, r->rms_before_pct);
    cs_table_num(ft, r->rms_after_pct);
    cs_calib_report_params(doc, r->params, r->nparams);
    if (s->n) cs_doc_note(doc, "#\n# residuals, %% (predicted - measured) / measured\n");
    cs_table *t = table(doc, "residuals", resid_cols, N(resid_cols), CS_FOR_TREE);
    for (size_t i = 0; i < s->n; i++) {
        const cs_trun_row *w = &s->rows[i];
        cs_table_row(t);
        cs_table_str(t, w->model.name);
        cs_table_int(t, w->gpus);
        cs_table_int(t, w->model.seq_len);
        cs_table_num(t, w->measured_tps_per_gpu);
        cs_table_num(t, r->before_pct[i]);
        cs_table_num(t, r->after_pct[i]);
        cs_doc_note(doc, "  %-10s %4d GPUs  seq %6d  %9.0f tok/s/GPU  %+7.2f%% -> %+7.2f%%\n",
                    w->model.name, w->gpus, w->model.seq_len, w->measured_tps_per_gpu,
                    r->before_pct[i], r->after_pct[i]);
    }
    if (s->nk) cs_doc_note(doc, "#\n# kernel timings, %% speed error (measured / predicted time - 1)\n");
    cs_table *kt = table(doc, "kernels", kernel_cols, N(kernel_cols), CS_FOR_TREE);
    for (size_t q = 0; q < s->nk; q++) {
        const cs_kmeas_row *k = &s->kernels[q];
        double b = r->before_pct[s->n + q], a = r->after_pct[s->n + q];
        cs_table_row(kt);
        cs_table_str(kt, k->gemm ? "gemm" : "copy");
        cs_table_num(kt, k->m);
        cs_table_num(kt, k->n);
        cs_table_num(kt, k->k);
        cs_table_num(kt, k->bytes);
        cs_table_num(kt, k->time_us);
        cs_table_num(kt, b);
        cs_table_num(kt, a);
        if (k->gemm)
            cs_doc_note(doc, "  gemm %6.0f x %6.0f x %6.0f %-6s %10.2f us  %+7.2f%% -> %+7.2f%%\n",
                        k->m, k->n, k->k, cs_dtype_name(k->dtype), k->time_us, b, a);
        else
            cs_doc_note(doc, "  copy %14.0f B             %10.2f us  %+7.2f%% -> %+7.2f%%\n",
                        k->bytes, k->time_us, b, a);
    }
    cs_doc_write(b, doc, f);
    cs_doc_free(doc);
}
