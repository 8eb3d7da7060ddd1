/* SPDX-License-Identifier: MIT */
/*
 * stage_report.h - the per-stage memory of a pipeline (train/pipeline.h
 * cs_pp_memory) in the report of `collsim memory` and `collsim simulate`
 * (out/train_report.c): lines of a row's card for people, and the
 * "stages" rows of the JSON document (docs/json-output.md). Reads the
 * stages, keeps nothing.
 */
#ifndef CS_OUT_STAGE_REPORT_H
#define CS_OUT_STAGE_REPORT_H

#include "out/table.h"
#include "train/pipeline.h"

/* Appends to t (a card: two string columns, label and text) a line naming
 * the stage of the peak, then one line per stage (the first
 * CS_PIPELINE_STAGES_MAX). */
void cs_stage_report_card(cs_table *t, const cs_pp_memory *mem);

/* The JSON table "stages" of doc (created by cs_stage_report_table, seen
 * by the tree alone), and one row per stage of a strategy's pipeline. */
cs_table *cs_stage_report_table(cs_doc *doc);
void cs_stage_report_rows(cs_table *t, const char *strategy, const cs_pp_memory *mem);

#endif
