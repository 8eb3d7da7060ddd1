/* SPDX-License-Identifier: MIT */
/*
 * calib_report.c - the reports of `collsim compare` (predicted vs measured
 * rows, per-dataset error summary) and `collsim calibrate` (fitted and
 * kept parameters with their 95% intervals, excluded datasets, residuals
 * per row), as table, CSV or JSON. Renders what study/calibrate computed;
 * computes nothing itself.
 */
#include "out/calib_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

static void num(cs_buf *b, cs_format f, const char *fmt, double v)
{
    if (isfinite(v)) {
        cs_buf_printf(b, fmt, v);
        return;
    }
    if (f != CS_FORMAT_TABLE) {
        cs_buf_printf(b, "%s", f == CS_FORMAT_JSON ? "null" : "");
        return;
    }
    int width = fmt[0] == '%' ? atoi(fmt + 1) : 0;
    cs_buf_printf(b, "%*s", width, "-");
}

static const char *row_algo(const cs_meas_row *r, const cs_calib_pred *p)
{
    if (p->status) return r->algo_name[0] ? r->algo_name : "-";
    return cs_algo_name(p->algo);
}

static void ds_notes(char *buf, size_t n, const cs_meas_dataset *ds, const cs_calib_ds_score *s)
{
    size_t k = 0;
    buf[0] = 0;
    if (s->beyond_bound)
        k += (size_t)snprintf(buf + k, n - k,
                              "busbw %.0f GB/s above the ring/tree/NVLS line-rate bound %.0f "
                              "GB/s (NVLSTree or SHARP); ", s->max_busbw_GBps, s->bound_busbw_GBps);
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

void cs_calib_compare_report(cs_buf *b, cs_format f, int summary_only, const char *cluster_name,
                             const cs_meas_set *m, const cs_calib_compare *cmp)
{
    char note[512];
    if (f == CS_FORMAT_JSON) {
        cs_buf_printf(b, "{\n  \"cluster\": ");
        cs_buf_json_string(b, cluster_name);
        cs_buf_printf(b, ",\n  \"rows\": [");
        for (size_t i = 0; i < m->n; i++) {
            const cs_meas_row *r = &m->rows[i];
            const cs_calib_pred *p = &cmp->pred[i];
            cs_buf_printf(b, "%s\n    {\"dataset\": ", i ? "," : "");
            cs_buf_json_string(b, m->datasets[r->dataset].name);
            cs_buf_printf(b, ", \"op\": \"%s\", \"ranks\": %d, \"nodes\": %d, \"size_bytes\": %.0f, "
                             "\"measured_us\": %.4f, \"predicted_us\": ",
                          cs_op_name(r->op), r->ranks, p->nodes, r->size_bytes, r->time_us);
            num(b, f, "%.4f", p->time_us);
            cs_buf_printf(b, ", \"error_pct\": ");
            num(b, f, "%.3f", cmp->err_pct[i]);
            cs_buf_printf(b, ", \"measured_busbw_GBps\": %.4f, \"predicted_busbw_GBps\": ",
                          cs_meas_busbw_GBps(r, r->time_us));
            num(b, f, "%.4f", p->status ? NAN : cs_meas_busbw_GBps(r, p->time_us));
            cs_buf_printf(b, ", \"bound_busbw_GBps\": ");
            num(b, f, "%.4f", p->bound_busbw_GBps);
            cs_buf_printf(b, ", \"algo\": ");
            cs_buf_json_string(b, row_algo(r, p));
            cs_buf_printf(b, ", \"proto\": \"%s\", \"status\": ",
                          p->status ? "-" : cs_proto_name(p->proto));
            cs_buf_json_string(b, p->status ? p->why : "ok");
            cs_buf_printf(b, "}");
        }
        cs_buf_printf(b, "\n  ],\n  \"datasets\": [");
        for (size_t k = 0; k < m->ndatasets; k++) {
            const cs_calib_ds_score *s = &cmp->ds[k];
            cs_buf_printf(b, "%s\n    {\"name\": ", k ? "," : "");
            cs_buf_json_string(b, m->datasets[k].name);
            cs_buf_printf(b, ", \"source\": ");
            cs_buf_json_string(b, m->datasets[k].source);
            cs_buf_printf(b, ", \"rows\": %d, \"unmodelled\": %d, \"beyond_bound\": %s, "
                             "\"max_busbw_GBps\": ",
                          s->rows, s->unmodelled, s->beyond_bound ? "true" : "false");
            num(b, f, "%.3f", s->max_busbw_GBps);
            cs_buf_printf(b, ", \"bound_busbw_GBps\": ");
            num(b, f, "%.3f", s->bound_busbw_GBps);
            const cs_calib_stats *st[2] = {&s->big, &s->all};
            const char *nm[2] = {"big", "all"};
            for (int j = 0; j < 2; j++) {
                cs_buf_printf(b, ", \"n_%s\": %d, \"median_%s_pct\": ", nm[j], st[j]->n, nm[j]);
                num(b, f, "%.3f", st[j]->median);
                cs_buf_printf(b, ", \"p90_%s_pct\": ", nm[j]);
                num(b, f, "%.3f", st[j]->p90);
                cs_buf_printf(b, ", \"max_%s_pct\": ", nm[j]);
                num(b, f, "%.3f", st[j]->max);
            }
            ds_notes(note, sizeof note, &m->datasets[k], s);
            cs_buf_printf(b, ", \"notes\": ");
            cs_buf_json_string(b, note);
            cs_buf_printf(b, "}");
        }
        cs_buf_printf(b, "\n  ]\n}\n");
        return;
    }
    if (f == CS_FORMAT_CSV && !summary_only) {
        cs_buf_printf(b, "dataset,op,ranks,nodes,size_bytes,measured_us,predicted_us,error_pct,"
                         "measured_busbw_GBps,predicted_busbw_GBps,algo,proto,status\n");
        for (size_t i = 0; i < m->n; i++) {
            const cs_meas_row *r = &m->rows[i];
            const cs_calib_pred *p = &cmp->pred[i];
            cs_buf_printf(b, "%s,%s,%d,%d,%.0f,%.4f,", m->datasets[r->dataset].name,
                          cs_op_name(r->op), r->ranks, p->nodes, r->size_bytes, r->time_us);
            num(b, f, "%.4f", p->time_us);
            cs_buf_printf(b, ",");
            num(b, f, "%.3f", cmp->err_pct[i]);
            cs_buf_printf(b, ",%.4f,", cs_meas_busbw_GBps(r, r->time_us));
            num(b, f, "%.4f", p->status ? NAN : cs_meas_busbw_GBps(r, p->time_us));
            cs_buf_printf(b, ",%s,%s,%s\n", row_algo(r, p), p->status ? "-" : cs_proto_name(p->proto),
                          p->status ? "not_modelled" : "ok");
        }
        return;
    }
    if (f == CS_FORMAT_CSV) {
        cs_buf_printf(b, "dataset,rows,unmodelled,beyond_bound,max_busbw_GBps,bound_busbw_GBps,"
                         "n_big,median_big_pct,p90_big_pct,max_big_pct,"
                         "n_all,median_all_pct,p90_all_pct,max_all_pct\n");
        for (size_t k = 0; k < m->ndatasets; k++) {
            const cs_calib_ds_score *s = &cmp->ds[k];
            cs_buf_printf(b, "%s,%d,%d,%d,", m->datasets[k].name, s->rows, s->unmodelled,
                          s->beyond_bound);
            num(b, f, "%.3f", s->max_busbw_GBps);
            cs_buf_printf(b, ",");
            num(b, f, "%.3f", s->bound_busbw_GBps);
            const cs_calib_stats *st[2] = {&s->big, &s->all};
            for (int j = 0; j < 2; j++) {
                cs_buf_printf(b, ",%d,", st[j]->n);
                num(b, f, "%.3f", st[j]->median);
                cs_buf_printf(b, ",");
                num(b, f, "%.3f", st[j]->p90);
                cs_buf_printf(b, ",");
                num(b, f, "%.3f", st[j]->max);
            }
            cs_buf_printf(b, "\n");
        }
        return;
    }
    cs_buf_printf(b, "# collsim compare: cluster %s, %zu rows in %zu datasets\n", cluster_name,
                  m->n, m->ndatasets);
    if (!summary_only) {
        cs_buf_printf(b, "#\n# %-40s %-14s %5s %5s %12s %10s %10s %7s %-6s %-6s\n", "dataset", "op",
                      "ranks", "nodes", "size", "measured", "predicted", "error", "algo", "proto");
        cs_buf_printf(b, "# %-40s %-14s %5s %5s %12s %10s %10s %7s\n", "", "", "", "", "(B)",
                      "(us)", "(us)", "(%)");
        for (size_t i = 0; i < m->n; i++) {
            const cs_meas_row *r = &m->rows[i];
            const cs_calib_pred *p = &cmp->pred[i];
            cs_buf_printf(b, "  %-40.40s %-14s %5d %5d %12.0f %10.2f ", m->datasets[r->dataset].name,
                          cs_op_name(r->op), r->ranks, p->nodes, r->size_bytes, r->time_us);
            num(b, f, "%10.2f", p->time_us);
            cs_buf_printf(b, " ");
            num(b, f, "%7.1f", cmp->err_pct[i]);
            cs_buf_printf(b, " %-6s %-6s\n", row_algo(r, p), p->status ? "-" : cs_proto_name(p->proto));
        }
    }
    cs_buf_printf(b, "#\n# absolute error per dataset, %% (median / p90 / max)\n");
    cs_buf_printf(b, "# %-40s %4s | %-3s %6s %6s %6s | %-3s %6s %6s %6s | notes\n", "dataset",
                  "rows", "n", ">=1MiB", "p90", "max", "n", "all", "p90", "max");
    for (size_t k = 0; k < m->ndatasets; k++) {
        const cs_calib_ds_score *s = &cmp->ds[k];
        cs_buf_printf(b, "  %-40.40s %4d | %3d ", m->datasets[k].name, s->rows, s->big.n);
        num(b, f, "%6.1f", s->big.median);
        cs_buf_printf(b, " ");
        num(b, f, "%6.1f", s->big.p90);
        cs_buf_printf(b, " ");
        num(b, f, "%6.1f", s->big.max);
        cs_buf_printf(b, " | %3d ", s->all.n);
        num(b, f, "%6.1f", s->all.median);
        cs_buf_printf(b, " ");
        num(b, f, "%6.1f", s->all.p90);
        cs_buf_printf(b, " ");
        num(b, f, "%6.1f", s->all.max);
        ds_notes(note, sizeof note, &m->datasets[k], s);
        cs_buf_printf(b, " | %s\n", note);
    }
}

/* ---- reports ------------------------------------------------------------------- */

void cs_calib_report(cs_buf *b, cs_format f, const cs_calib_result *r, const cs_meas_set *m)
{
    if (f == CS_FORMAT_JSON) {
        cs_buf_printf(b, "{\n  \"status\": ");
        cs_buf_json_string(b, r->status);
        cs_buf_printf(b, ",\n  \"used_rows\": %d, \"downweighted\": %d, \"dof\": %d, "
                         "\"iterations\": %d, \"rms_before_pct\": ",
                      r->used_rows, r->downweighted, r->dof, r->iterations);
        num(b, f, "%.4f", r->rms_before_pct);
        cs_buf_printf(b, ", \"rms_after_pct\": ");
        num(b, f, "%.4f", r->rms_after_pct);
        cs_buf_printf(b, ",\n  \"params\": [");
        for (int j = 0; j < r->nparams; j++) {
            const cs_calib_param *p = &r->params[j];
            cs_buf_printf(b, "%s\n    {\"name\": \"%s\", \"unit\": \"%s\", \"fitted\": %s, "
                             "\"initial\": ",
                          j ? "," : "", p->name, p->unit, p->fitted ? "true" : "false");
            num(b, f, "%.9g", p->initial);
            cs_buf_printf(b, ", \"value\": ");
            num(b, f, "%.9g", p->value);
            cs_buf_printf(b, ", \"ci_lo\": ");
            num(b, f, "%.9g", p->ci_lo);
            cs_buf_printf(b, ", \"ci_hi\": ");
            num(b, f, "%.9g", p->ci_hi);
            cs_buf_printf(b, ", \"why\": ");
            cs_buf_json_string(b, p->why);
            cs_buf_printf(b, "}");
        }
        cs_buf_printf(b, "\n  ],\n  \"datasets\": [");
        for (size_t k = 0; k < m->ndatasets; k++) {
            cs_buf_printf(b, "%s\n    {\"name\": ", k ? "," : "");
            cs_buf_json_string(b, m->datasets[k].name);
            cs_buf_printf(b, ", \"used\": %s, \"why\": ", r->ds_why[k][0] ? "false" : "true");
            cs_buf_json_string(b, r->ds_why[k]);
            cs_buf_printf(b, "}");
        }
        cs_buf_printf(b, "\n  ],\n  \"rows\": [");
        for (size_t i = 0; i < m->n; i++) {
            const cs_meas_row *mr = &m->rows[i];
            const cs_calib_rowfit *rf = &r->rows[i];
            cs_buf_printf(b, "%s\n    {\"dataset\": ", i ? "," : "");
            cs_buf_json_string(b, m->datasets[mr->dataset].name);
            cs_buf_printf(b, ", \"op\": \"%s\", \"size_bytes\": %.0f, \"measured_us\": %.4f, "
                             "\"before_us\": ",
                          cs_op_name(mr->op), mr->size_bytes, mr->time_us);
            num(b, f, "%.4f", rf->before_us);
            cs_buf_printf(b, ", \"after_us\": ");
            num(b, f, "%.4f", rf->after_us);
            cs_buf_printf(b, ", \"residual_pct\": ");
            num(b, f, "%.3f", rf->resid_pct);
            cs_buf_printf(b, ", \"weight\": %.4f, \"used\": %s, \"why\": ", rf->weight,
                          rf->used ? "true" : "false");
            cs_buf_json_string(b, rf->why);
            cs_buf_printf(b, "}");
        }
        cs_buf_printf(b, "\n  ]\n}\n");
        return;
    }
    if (f == CS_FORMAT_CSV) {
        cs_buf_printf(b, "param,unit,fitted,initial,value,ci_lo,ci_hi,why\n");
        for (int j = 0; j < r->nparams; j++) {
            const cs_calib_param *p = &r->params[j];
            cs_buf_printf(b, "%s,%s,%d,", p->name, p->unit, p->fitted);
            num(b, f, "%.9g", p->initial);
            cs_buf_printf(b, ",");
            num(b, f, "%.9g", p->value);
            cs_buf_printf(b, ",");
            num(b, f, "%.9g", p->ci_lo);
            cs_buf_printf(b, ",");
            num(b, f, "%.9g", p->ci_hi);
            cs_buf_printf(b, ",\"%s\"\n", p->why);
        }
        return;
    }
    cs_buf_printf(b, "# collsim calibrate: %s after %d iterations; %d rows used (%d down-weighted "
                     "as outliers), %d degrees of freedom\n",
                  r->status, r->iterations, r->used_rows, r->downweighted, r->dof);
    cs_buf_printf(b, "# weighted RMS relative error: %.2f%% before, %.2f%% after\n#\n",
                  r->rms_before_pct, r->rms_after_pct);
    cs_buf_printf(b, "# %-18s %-6s %12s %12s   %-27s %s\n", "parameter", "", "input", "fitted",
                  "95% confidence interval", "");
    for (int j = 0; j < r->nparams; j++) {
        const cs_calib_param *p = &r->params[j];
        if (p->fitted && isfinite(p->ci_lo))
            cs_buf_printf(b, "  %-18s %-6s %12.6g %12.6g   [%11.6g, %11.6g]   fitted %s\n",
                          p->name, p->unit, p->initial, p->value, p->ci_lo, p->ci_hi, p->why);
        else if (p->fitted)
            cs_buf_printf(b, "  %-18s %-6s %12.6g %12.6g   %-27s   %s\n", p->name, p->unit,
                          p->initial, p->value, "(no interval)", p->why);
        else if (isfinite(p->initial))
            cs_buf_printf(b, "  %-18s %-6s %12.6g %12s   %-27s   kept: %s\n", p->name, p->unit,
                          p->initial, "(kept)", "", p->why);
        else
            cs_buf_printf(b, "  %-18s %-6s %12s %12s   %-27s   kept: %s\n", p->name, p->unit,
                          "NCCL's", "(kept)", "", p->why);
    }
    int any = 0;
    for (size_t k = 0; k < m->ndatasets; k++)
        if (r->ds_why[k][0]) {
            if (!any++) cs_buf_printf(b, "#\n# excluded datasets\n");
            cs_buf_printf(b, "  %s: %s\n", m->datasets[k].name, r->ds_why[k]);
        }
    cs_buf_printf(b, "#\n# %-40s %-14s %12s %10s %10s %10s %8s %6s\n", "dataset", "op", "size",
                  "measured", "before", "after", "resid", "weight");
    cs_buf_printf(b, "# %-40s %-14s %12s %10s %10s %10s %8s\n", "", "", "(B)", "(us)", "(us)",
                  "(us)", "(%)");
    for (size_t i = 0; i < m->n; i++) {
        const cs_meas_row *mr = &m->rows[i];
        const cs_calib_rowfit *rf = &r->rows[i];
        cs_buf_printf(b, "  %-40.40s %-14s %12.0f %10.2f ", m->datasets[mr->dataset].name,
                      cs_op_name(mr->op), mr->size_bytes, mr->time_us);
        num(b, f, "%10.2f", rf->before_us);
        cs_buf_printf(b, " ");
        num(b, f, "%10.2f", rf->after_us);
        cs_buf_printf(b, " ");
        num(b, f, "%8.2f", rf->resid_pct);
        if (rf->used) cs_buf_printf(b, " %6.3f\n", rf->weight);
        else cs_buf_printf(b, "      - (%s)\n", rf->why);
    }
}

