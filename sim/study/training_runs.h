/* SPDX-License-Identifier: MIT */
/*
 * training_runs.h - measured training runs: a CSV of configurations and
 * the tokens/s per GPU each reached, in the column layout of
 * shared/data/training/ (docs/training-runs.md documents it as a public
 * input format). Every row carries its model shape and training
 * configuration; the hardware is not read from the row (the `cluster`,
 * `gpu` and `interconnect` columns are informational): the caller prices
 * every row on the cluster it is given.
 *
 * A row becomes the model and cs_training that validation/training/
 * throughput.py writes into a scenario for the same row (precision,
 * checkpointing, backward prefetch, limit_all_gathers, the attention
 * kernel: see training_runs.c), so `collsim compare --training-runs` and
 * `collsim simulate` of that scenario agree by construction.
 */
#ifndef CS_TRAINING_RUNS_H
#define CS_TRAINING_RUNS_H

#include <stddef.h>

#include "base/error.h"
#include "train/model.h"
#include "train/training.h"

typedef struct cs_trun_row {
    int file;                 /* index into cs_trun_set.files */
    int line;                 /* 1-based line of the row in its file */
    char table[48];           /* the source_table column ("" when absent) */
    cs_model model;           /* shape from the row, derived */
    cs_training training;
    int gpus;                 /* ranks */
    double measured_tps_per_gpu;
    double measured_mfu_pct;  /* NaN when the file has no mfu_pct */
} cs_trun_row;

/* A kernel timed by `collsim-hw compute` (hw/cmd_compute.c's CSV): a
 * GEMM of m x n x k in dtype, or a device copy of `bytes` (moving 2 x
 * bytes: read + write); or a task of a `collsim-hw replay`
 * (study/replay_runs.h): reps such kernels back to back, overlapped by
 * collectives on other streams for overlap_us of its time. */
typedef struct cs_kmeas_row {
    int file, line;
    int gemm;                 /* 1 GEMM, 0 copy */
    cs_dtype dtype;           /* GEMMs */
    double m, n, k, bytes;
    double time_us;           /* time_median_us; a replayed task's measured time */
    char kernel[48];          /* --shapes: the model kernel it stands for; a replayed
                               * task: "task ID: NAME"; else "" */
    int replayed;             /* 1: a replayed task (replay_runs.h) */
    int reps;                 /* kernels in time_us (0 or 1: one) */
    double overlap_us;        /* wall time a collective ran beside it (0: alone) */
} cs_kmeas_row;

typedef struct cs_trun_set {
    size_t n, nfiles;
    cs_trun_row *rows;        /* owned */
    size_t nk;
    cs_kmeas_row *kernels;    /* owned: kernel timings, after the runs in a fit */
    size_t cap, kcap;         /* allocated rows and kernels (n <= cap, nk <= kcap) */
    char (*files)[256];       /* path of each file read, in reading order */
} cs_trun_set;

/* Appends the rows of the CSV at path (a zeroed set starts empty).
 * Errors: CS_ENOENT / CS_EIO (unreadable), CS_ECONFIG at file:line:column
 * (a missing column, a bad value, a shape collsim rejects, a parameter
 * count that differs from the row's `params`); on error the set is left
 * as it was. */
int cs_training_runs_read(cs_trun_set *s, const char *path, cs_diag *d);
/* The same from text; origin names it in errors and in files[]. */
int cs_training_runs_read_string(cs_trun_set *s, const char *origin, const char *text, size_t len,
                                 cs_diag *d);
/* Appends the rows of a `collsim-hw compute` CSV (columns kind, dtype,
 * m, n, k, bytes, time_median_us; kernel optional; others skipped), with
 * the same errors and roll-back. */
int cs_training_runs_read_compute(cs_trun_set *s, const char *path, cs_diag *d);
int cs_training_runs_read_compute_string(cs_trun_set *s, const char *origin, const char *text,
                                         size_t len, cs_diag *d);
void cs_training_runs_free(cs_trun_set *s);

#endif
