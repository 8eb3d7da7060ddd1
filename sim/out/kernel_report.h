/* SPDX-License-Identifier: MIT */
/*
 * kernel_report.h - the compute model's kernels of one layer and the head
 * (train/compute.h) as a table: `collsim simulate --kernels FILE`, what
 * `collsim-hw compute --shapes FILE` measures, and a user's view of where
 * a layer's time goes.
 *
 * Columns (a contract, in this order): pass, kernel, class (gemm |
 * attention | memory), m, n, k, batch (GEMMs; 0 otherwise), flops, bytes,
 * efficiency (of the bound that limits the kernel), time_us (one kernel,
 * one micro-batch). CSV and JSON carry every row; the table adds the
 * per-pass totals.
 */
#ifndef CS_OUT_KERNEL_REPORT_H
#define CS_OUT_KERNEL_REPORT_H

#include "base/buf.h"
#include "out/table.h"
#include "train/compute.h"

/* Appends the kernels of m trained as t on c's GPU to b in format f. */
void cs_kernel_report(cs_buf *b, cs_format f, const cs_model *m, const cs_training *t,
                      const cs_cluster *c);

#endif
