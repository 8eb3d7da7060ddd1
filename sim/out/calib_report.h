/* SPDX-License-Identifier: MIT */
/*
 * calib_report.h - renderings of a comparison and of a calibration fit.
 * Both append to a caller-owned buffer; nothing is allocated that the
 * caller must free.
 */
#ifndef CS_CALIB_REPORT_H
#define CS_CALIB_REPORT_H

#include "out/report.h"
#include "study/calibrate.h"

/* Renders a comparison: table (rows, then the per-dataset summary), CSV
 * (rows; or with summary_only the summary) or JSON (both). */
void cs_calib_compare_report(cs_buf *b, cs_format f, int summary_only, const char *cluster_name,
                             const cs_meas_set *m, const cs_calib_compare *cmp);

/* The report of a fit: parameters with CIs, kept ones with reasons,
 * excluded datasets, residuals per row. */
void cs_calib_report(cs_buf *b, cs_format f, const cs_calib_result *r, const cs_meas_set *m);

/* The parameter lines (people) and table "params" (data) of a fit, into
 * doc: shared by the collective and the training fit's reports. */
#include "out/table.h"
void cs_calib_report_params(cs_doc *doc, const cs_calib_param *params, int n);

#endif
