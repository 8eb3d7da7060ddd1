/* SPDX-License-Identifier: MIT */
/*
 * report.h - output: a growable text buffer written atomically, and the
 * table / CSV / JSON renderings of collective results.
 *
 * Output is assembled in memory and written with cs_buf_write_file, which
 * writes a temporary file and renames it, so a failed run never leaves a
 * half-written output file. Number formats are fixed, so the same input
 * gives the same bytes.
 */
#ifndef CS_REPORT_H
#define CS_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "collective.h"
#include "dtype.h"
#include "error.h"

typedef struct cs_buf {
    char *data;
    size_t len, cap;
} cs_buf;

/* Appends formatted text (the buffer grows; aborts on out-of-memory). */
void cs_buf_printf(cs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cs_buf_free(cs_buf *b);
/* Writes b to path atomically (path.tmp + rename), or to stdout if path is
 * NULL or "-"; an existing non-regular path (a device, FIFO, /dev/stdout)
 * is written in place. Returns 0 or CS_EIO with d naming the path and the reason. */
int cs_buf_write(const cs_buf *b, const char *path, cs_diag *d);

typedef enum cs_format { CS_FORMAT_TABLE, CS_FORMAT_CSV, CS_FORMAT_JSON } cs_format;
int cs_format_parse(const char *s, cs_format *out);

/* One measured or predicted collective (the CSV contract columns). */
typedef struct cs_coll_row {
    cs_op op;
    cs_algo_id algo;
    cs_proto proto;
    cs_engine_kind engine;
    int ranks;
    double size_bytes; /* nccl-tests convention: total for all_gather/reduce_scatter */
    double count;      /* elements per rank buffer, as nccl-tests */
    cs_dtype dtype;
    double time_us;
    double algbw_GBps;
    double busbw_GBps;
} cs_coll_row;

/* Appends s as a JSON string literal (quoted, escaped). */
void cs_report_json_string(cs_buf *b, const char *s);

/* The CSV header line (without newline): the column contract. */
const char *cs_report_collective_csv_header(void);

/* Renders rows. `title` is printed as a comment in table format and as a
 * "title" field in JSON; CSV has no preamble. */
void cs_report_collective(cs_buf *b, cs_format f, const char *title, const cs_coll_row *rows,
                          size_t n);

#endif
