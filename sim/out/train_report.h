/* SPDX-License-Identifier: MIT */
/*
 * train_report.h - the report of `collsim memory` and `collsim simulate`:
 * one row per evaluated strategy (train/evaluate.h), in every format of
 * out/table.h. Appends to a caller-owned buffer; reads the rows, keeps
 * nothing.
 */
#ifndef CS_TRAIN_REPORT_H
#define CS_TRAIN_REPORT_H

#include <stddef.h>

#include "base/buf.h"
#include "out/table.h"
#include "train/evaluate.h"
#include "train/pipeline.h"

/* What the rows share: the command (simulate: each row holds a simulated
 * iteration; else memory only), the model and the ranks they ran on, and
 * whether collectives were DES-timed. */
typedef struct cs_train_report_head {
    int simulated;
    const cs_model *model;
    const cs_topology *topo;
    int des;
} cs_train_report_head;

/* One evaluated strategy (the evaluation is the caller's). */
typedef struct cs_train_row {
    cs_strategy strategy;
    const cs_evaluation *ev;
    int max_micro_batch; /* the largest that fits by the estimate */
    const cs_pp_memory *stages; /* a pipeline's stages (P > 1), else NULL */
} cs_train_row;

/* The CSV header line (without newline): memory's, or simulate's (the
 * memory columns, then the iteration's). */
const char *cs_train_report_columns(int simulated);

/* For people: a title line, then per row a block of labelled lines
 * (with a pipeline, one per stage: out/stage_report.h); CSV: the rows;
 * JSON: the title and the rows, and with a pipeline "stages". */
void cs_train_report(cs_buf *b, cs_format f, const cs_train_report_head *h, const cs_train_row *rows,
                     size_t n);

#endif
