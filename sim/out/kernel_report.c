/* SPDX-License-Identifier: MIT */
/*
 * kernel_report.c - the compute model's kernel list as a document: one
 * data table of every kernel, and for people the totals per pass (what a
 * layer's forward, backward and recompute, and the head, cost per
 * micro-batch). The numbers are cs_compute_kernels' and cs_compute_price's
 * as they are; nothing is recomputed here.
 */
#include "out/kernel_report.h"

#include <stdlib.h>

static const char *const class_names[] = {
    [CS_KCLASS_GEMM] = "gemm", [CS_KCLASS_ATTENTION] = "attention", [CS_KCLASS_MEMORY] = "memory"};

static const cs_col cols[] = {
    CS_COL_STR("pass"),          CS_COL_STR("kernel"),         CS_COL_STR("class"),
    CS_COL_NUM("m", "%.0f"),     CS_COL_NUM("n", "%.0f"),      CS_COL_NUM("k", "%.0f"),
    CS_COL_NUM("batch", "%.0f"), CS_COL_NUM("flops", "%.6g"),  CS_COL_NUM("bytes", "%.6g"),
    CS_COL_NUM("efficiency", "%.4f"), CS_COL_NUM("time_us", "%.3f"),
};
static const cs_col total_cols[] = {
    {.name = "pass", .kind = CS_CELL_STR, .width = 14, .flags = CS_COL_LEFT},
    {.name = "kernels", .kind = CS_CELL_INT, .width = 8},
    {.name = "time_us", .kind = CS_CELL_NUM, .fmt = "%.1f", .width = 12},
    {.name = "TFLOP", .kind = CS_CELL_NUM, .fmt = "%.4f", .width = 10},
};
#define N(a) (sizeof(a) / sizeof *(a))

void cs_kernel_report(cs_buf *b, cs_format f, const cs_model *m, const cs_training *t,
                      const cs_cluster *c)
{
    size_t n = cs_compute_kernels(m, t, c, NULL, 0);
    cs_kernel *k = cs_xmalloc((n ? n : 1) * sizeof *k);
    cs_compute_kernels(m, t, c, k, n);
    cs_doc *doc = cs_doc_new();
    cs_doc_note(doc, "# collsim kernels: %s, micro-batch %d x %d tokens, %s on %s (one layer and "
                     "the head, per micro-batch)\n",
                m->name, t->micro_batch, m->seq_len, cs_dtype_name(t->param_dtype), c->gpu.model);
    cs_table *tb = cs_doc_table(
        doc, &(cs_table_spec){"kernels", cols, N(cols), CS_FOR_PEOPLE | CS_FOR_DATA, 0});
    for (size_t i = 0; i < n; i++) {
        cs_table_row(tb);
        cs_table_str(tb, cs_kpass_name(k[i].pass));
        cs_table_str(tb, k[i].name);
        cs_table_str(tb, class_names[k[i].cls]);
        const double v[] = {k[i].m,     k[i].n,          k[i].k,          k[i].batch,
                            k[i].flops, k[i].bytes,      k[i].efficiency, k[i].time_s * 1e6};
        for (size_t j = 0; j < N(v); j++) cs_table_num(tb, v[j]);
    }
    cs_compute sum;
    cs_diag d;
    if (cs_compute_price(m, t, c, &sum, &d) == 0) {
        cs_doc_note(doc, "\nper pass:\n");
        cs_table *tt = cs_doc_table(
            doc, &(cs_table_spec){NULL, total_cols, N(total_cols), CS_FOR_PEOPLE, 0});
        for (int p = 0; p < CS_KPASS_COUNT; p++) {
            cs_table_row(tt);
            cs_table_str(tt, cs_kpass_name((cs_kpass)p));
            cs_table_int(tt, sum.pass[p].kernels);
            cs_table_num(tt, sum.pass[p].time_s * 1e6);
            cs_table_num(tt, sum.pass[p].flops / 1e12);
        }
    }
    cs_doc_write(b, doc, f);
    cs_doc_free(doc);
    free(k);
}
