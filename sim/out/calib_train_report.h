/* SPDX-License-Identifier: MIT */
/*
 * calib_train_report.h - renderings of a training-run comparison and of
 * a training fit. Both append to a caller-owned buffer.
 */
#ifndef CS_CALIB_TRAIN_REPORT_H
#define CS_CALIB_TRAIN_REPORT_H

#include "out/report.h"
#include "study/calib_train.h"

/* Table: runs, then the per-file summary; CSV: the runs (file, line,
 * table, model, gpus, seq_len, micro_batch, grad_accum, checkpointing,
 * measured_tokens_per_s_per_gpu, predicted_tokens_per_s_per_gpu,
 * error_pct, measured_mfu_pct, predicted_mfu_pct); JSON: runs and files. */
void cs_calib_train_compare_report(cs_buf *b, cs_format f, const char *cluster_name,
                                   const cs_trun_set *s, const cs_calib_train_compare *cmp);

/* The training fit: parameters with CIs or why kept, residuals per run. */
void cs_calib_train_report(cs_buf *b, cs_format f, const cs_calib_train_result *r,
                           const cs_trun_set *s);

#endif
