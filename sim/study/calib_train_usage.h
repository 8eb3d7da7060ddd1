/* SPDX-License-Identifier: MIT */
/*
 * calib_train_usage.h - internal to sim/study (calib_train.c): what the
 * runs and kernel timings of a compute fit exercise, the facts its
 * identifiability rules read (calib_train.c lists the rules).
 */
#ifndef CS_CALIB_TRAIN_USAGE_H
#define CS_CALIB_TRAIN_USAGE_H

#include "coll/cluster.h"
#include "study/training_runs.h"
#include "train/compute.h"

/* The share of a replayed task's time collectives must overlap for it
 * to count towards the overlap slowdown's rule (a task that collectives
 * barely touch says little about it). */
#define CS__TRAIN_OVERLAP_MIN 0.1

typedef struct cs__train_usage {
    int rows_kernel[CS_ATTN_COUNT]; /* rows running each attention kernel */
    int seqs_kernel[CS_ATTN_COUNT]; /* distinct sequence lengths among them */
    int max_seq[CS_ATTN_COUNT];
    double attn_share[CS_ATTN_COUNT]; /* largest attention share of a row's kernel time */
    double mem_share;               /* largest memory-bound share */
    int widths, width;              /* distinct hidden sizes; one of them */
    int multi_gpu;                  /* runs on 2 GPUs or more */
    int fsdp_rows[3];               /* runs of FSDP version 1, 2 */
    int gemm_sizes, copy_sizes;     /* distinct GEMM works / copy sizes timed */
    int replayed, overlapped;       /* replayed tasks timed; those collectives overlapped for
                                     * CS__TRAIN_OVERLAP_MIN of their time at least */
} cs__train_usage;

/* What s exercises on c (its kernels priced on c for the shares). */
void cs__calib_train_usage_tally(const cs_cluster *c, const cs_trun_set *s, cs__train_usage *u);

#endif
