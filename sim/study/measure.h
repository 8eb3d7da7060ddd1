/* SPDX-License-Identifier: MIT */
/*
 * measure.h - measured collective timings read from files: raw nccl-tests
 * logs, collsim-hw CSV, and the reference CSVs of shared/data/nccl-tests.
 *
 * A cs_meas_set is a growable list of rows (one per measured size) grouped
 * into datasets (one per file, or per table of a log holding several).
 * Each row carries what the model needs to predict it: the operation, the
 * rank count, the node count when the input says (0 = unknown: callers
 * place ranks on the cluster's nodes in order), the nccl-tests size, the
 * measured time, and the algorithm / protocol when the input forced or
 * named one. Sizes and busbw follow nccl-tests (see collective.h).
 *
 * Readers append to a set and either succeed or leave it as it was; on
 * error the cs_diag names file:line:column and what was expected. The
 * caller owns the set and frees it with cs_meas_free.
 */
#ifndef CS_MEASURE_H
#define CS_MEASURE_H

#include <stddef.h>

#include "coll/collective.h"
#include "base/error.h"

/* Row algorithm that collsim does not model (NVLSTree, CollNet, PAT, ...):
 * such rows are read and reported but never predicted or fitted. */
#define CS_MEAS_ALGO_OTHER (-2)

typedef struct cs_meas_row {
    cs_op op;
    int ranks;
    int nodes;          /* 0 = unknown */
    double size_bytes;  /* nccl-tests size (total over ranks for AG / RS) */
    double time_us;     /* out-of-place time; the median for collsim-hw rows */
    int algo;           /* cs_algo_id, CS_CHOICE_AUTO (library's choice) or CS_MEAS_ALGO_OTHER */
    int proto;          /* cs_proto or CS_CHOICE_AUTO */
    char algo_name[24]; /* as written in the input ("NVLS"), "" when not named */
    int dataset;        /* index into cs_meas_set.datasets */
    int line;           /* 1-based line of the row in its file */
} cs_meas_row;

/* The largest rank count a reader accepts (rank numbers are 0..this - 1). */
#define CS_MEAS_RANKS_MAX 100000000
/* How many skipped line numbers a dataset keeps for the warning. */
#define CS_MEAS_SKIPPED_KEPT 8

typedef struct cs_meas_dataset {
    char name[128];     /* file name without directory and extension ("#2" for a second table) */
    char source[256];   /* the path as given */
    char kind[16];      /* "nccl-tests", "csv" (shared/data layout), "collsim-hw" */
    char hardware[256]; /* "# hardware:" header, or the GPU name and hosts of a log; "" */
    int gpus_per_process; /* nccl-tests -g (several GPUs driven by one process); 0 = unknown */
    /* Table-like lines inside a table that were not read as rows (an nccl-tests
     * line starting with a number that is not a result row): how many, and
     * the first CS_MEAS_SKIPPED_KEPT line numbers. Callers warn about them. */
    int nskipped;
    int skipped_lines[CS_MEAS_SKIPPED_KEPT];
} cs_meas_dataset;

typedef struct cs_meas_set {
    cs_meas_row *rows;
    size_t n, cap;
    cs_meas_dataset *datasets;
    size_t ndatasets, dcap;
} cs_meas_set;

/* Raw nccl-tests stdout (any *_perf binary, with or without the redop and
 * root columns, "#wrong" or "error", lines prefixed by srun / mpirun
 * labels); takes the out-of-place columns. The op comes from "Collective
 * test starting: X_perf", else a "X_perf" command in the text, else the
 * file name; ranks from the "#  Rank N ... on HOST device" lines (nodes =
 * distinct hosts), else from busbw / algbw. NCCL_ALGO= / NCCL_PROTO= in
 * the text force the row algorithm / protocol. Returns 0, CS_ECONFIG (bad
 * content), CS_ENOENT or CS_EIO. */
int cs_meas_read_nccl_tests(cs_meas_set *s, const char *path, cs_diag *d);
int cs_meas_read_nccl_tests_string(cs_meas_set *s, const char *origin, const char *text,
                                   size_t len, cs_diag *d);

/* CSV with a header row naming its columns (any order; unknown columns are
 * ignored): size_bytes and time_us (or time_median_us, preferred, or
 * busbw_GBps to derive the time) are required; op (or collective), ranks,
 * nodes, algo, proto optional per row, else from "# collective:",
 * "# ranks:", "# nodes:" header lines. Lines starting with '#' are comments
 * (the first "# hardware:" is kept). A header with time_median_us or
 * backend marks the dataset "collsim-hw". */
int cs_meas_read_csv(cs_meas_set *s, const char *path, cs_diag *d);
int cs_meas_read_csv_string(cs_meas_set *s, const char *origin, const char *text, size_t len,
                            cs_diag *d);

/* Releases the rows and datasets; the set is empty afterwards. */
void cs_meas_free(cs_meas_set *s);

/* Bus bandwidth in GB/s of row r's collective had it taken time_us
 * (nccl-tests' busbw: algbw x the op's factor). */
double cs_meas_busbw_GBps(const cs_meas_row *r, double time_us);

#endif
