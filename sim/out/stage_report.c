/* SPDX-License-Identifier: MIT */
/*
 * stage_report.c - each pipeline stage's memory in the reports of
 * `collsim memory` and `simulate` (stage_report.h). What it shows is
 * train/pipeline.c's (cs_pipeline_run: the stage's layers, the
 * micro-batches' activations the schedule held at once on it, its
 * memory.c lines); the peak of the row is the largest stage's, and the
 * card and the rows say which stage holds it. Korthikanti et al. 2022
 * Sec 4.2.3 / Eq. 5: under 1F1B the first stage holds P micro-batches'
 * activations, stage s P - s (tests/test-pipeline.c checks the report's
 * figures against it). The CSV stays the one flat table of strategy rows
 * (its header is the command's contract): the per-stage figures are in
 * the text card and the JSON "stages" rows.
 */
#include "out/stage_report.h"

#include <stdio.h>

#define GIB (1024.0 * 1024 * 1024)

static void line(cs_table *t, const char *label, const char *text)
{
    cs_table_row(t);
    cs_table_str(t, label);
    cs_table_str(t, text);
}

void cs_stage_report_card(cs_table *t, const cs_pp_memory *mem)
{
    char label[64], text[160];
    snprintf(text, sizeof text, "%d stages x %d chunks, %s; peak on stage %d", mem->P, mem->V,
             mem->schedule, mem->peak_stage);
    line(t, "pipeline", text);
    int n = mem->P < CS_PIPELINE_STAGES_MAX ? mem->P : CS_PIPELINE_STAGES_MAX;
    for (int s = 0; s < n; s++) {
        const cs_memory *m = &mem->stage[s];
        snprintf(label, sizeof label, "  stage %d (%d layers)", s, mem->layers[s]);
        snprintf(text, sizeof text, "%10.2f GiB peak, %10.2f GiB activations of %d held%s",
                 m->peak_bytes / GIB, m->activations_bytes / GIB, mem->held[s],
                 s == mem->peak_stage ? "  <- peak" : "");
        line(t, label, text);
    }
    /* pipeline.c prices a stage's reserved memory as allocated plus the
     * flat fraction (training.h): say so where the card shows it */
    const cs_memory *pk = &mem->stage[mem->peak_stage];
    if (pk->peak_allocated_bytes > 0) {
        snprintf(text, sizeof text, "allocated + %.0f%% (stages are not replayed through the allocator)",
                 100 * pk->fragmentation_bytes / pk->peak_allocated_bytes);
        line(t, "  reserved", text);
    }
}

static const cs_col stage_cols[] = {
    CS_COL_STR("strategy"),
    CS_COL_INT("stage"),
    CS_COL_INT("layers"),
    CS_COL_INT("held_micro_batches"),
    CS_COL_NUM("params_bytes", "%.0f"),
    CS_COL_NUM("grads_bytes", "%.0f"),
    CS_COL_NUM("optimizer_bytes", "%.0f"),
    CS_COL_NUM("model_states_bytes", "%.0f"),
    CS_COL_NUM("activations_bytes", "%.0f"),
    CS_COL_NUM("temp_bytes", "%.0f"),
    CS_COL_NUM("peak_bytes", "%.0f"),
    CS_COL_BOOL("fits"),
    CS_COL_BOOL("peak_stage"),
};

cs_table *cs_stage_report_table(cs_doc *doc)
{
    return cs_doc_table(doc, &(cs_table_spec){"stages", stage_cols,
                                              sizeof stage_cols / sizeof stage_cols[0],
                                              CS_FOR_TREE, 0});
}

void cs_stage_report_rows(cs_table *t, const char *strategy, const cs_pp_memory *mem)
{
    int n = mem->P < CS_PIPELINE_STAGES_MAX ? mem->P : CS_PIPELINE_STAGES_MAX;
    for (int s = 0; s < n; s++) {
        const cs_memory *m = &mem->stage[s];
        cs_table_row(t);
        cs_table_str(t, strategy);
        cs_table_int(t, s);
        cs_table_int(t, mem->layers[s]);
        cs_table_int(t, mem->held[s]);
        cs_table_num(t, m->params_bytes);
        cs_table_num(t, m->grads_bytes);
        cs_table_num(t, m->optimizer_bytes);
        cs_table_num(t, m->model_states_bytes);
        cs_table_num(t, m->activations_bytes);
        cs_table_num(t, m->temp_bytes);
        cs_table_num(t, m->peak_bytes);
        cs_table_bool(t, m->fits);
        cs_table_bool(t, s == mem->peak_stage);
    }
}
