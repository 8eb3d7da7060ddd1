/* SPDX-License-Identifier: MIT */
/*
 * measure_parse.h - what the measurement readers share (internal to
 * sim/study: measure.c, measure_nccltests.c, measure_csv.c): appending to
 * a set, walking a text line by line, whole-token numbers, and the
 * NCCL_ALGO= / NCCL_PROTO= a text forces.
 */
#ifndef CS_MEASURE_PARSE_H
#define CS_MEASURE_PARSE_H

#include <stddef.h>

#include "study/measure.h"

/* Appends a row (zeroed, algorithm and protocol CS_CHOICE_AUTO) and
 * returns it; the pointer lives until the next append. */
cs_meas_row *cs__meas_add_row(cs_meas_set *s);
/* Appends a dataset named after origin's file stem ("stem#N" for table
 * N > 1 of one file) and returns its index. */
int cs__meas_add_dataset(cs_meas_set *s, const char *origin, const char *kind, int table);
/* Drops everything appended since the set had n0 rows and nd0 datasets:
 * a reader's roll-back on error. */
void cs__meas_truncate(cs_meas_set *s, size_t n0, size_t nd0);

/* Reads the file at path and hands its text to read (a reader's _string
 * form). Returns read's result, or CS_ENOENT / CS_EIO. */
typedef int (*cs__meas_reader)(cs_meas_set *s, const char *origin, const char *text, size_t len,
                               cs_diag *d);
int cs__meas_read_file(cs_meas_set *s, const char *path, cs__meas_reader read, cs_diag *d);

/* Calls fn for each line of text (without its '\n' and a trailing '\r';
 * a leading UTF-8 byte order mark is skipped),
 * with its 1-based number, until fn returns non-zero; returns that, or 0.
 * *lines is the number of the last line handed to fn (0 for no line). */
typedef int (*cs__meas_line_fn)(void *ud, int lineno, const char *line, size_t ll);
int cs__meas_each_line(const char *text, size_t len, cs__meas_line_fn fn, void *ud, int *lines);

/* A CSV line split at commas, blanks trimmed: field i is s[i][0, len[i])
 * at 1-based column col[i]. */
#define CS__MEAS_MAX_COLS 48
typedef struct cs__meas_fields {
    int n;
    const char *s[CS__MEAS_MAX_COLS];
    int len[CS__MEAS_MAX_COLS];
    int col[CS__MEAS_MAX_COLS];
} cs__meas_fields;
/* Splits line[0, len) into f; -1 when it has more than CS__MEAS_MAX_COLS. */
int cs__meas_split_csv(const char *line, size_t len, cs__meas_fields *f);

/* A finite number filling the whole of s[0, len) (no NUL byte in it): 0
 * and *v, else -1. */
int cs__meas_parse_num(const char *s, size_t len, double *v);
/* memmem (not POSIX). */
const char *cs__meas_find_sub(const char *hay, size_t n, const char *needle, size_t m);

/* The algorithm / protocol a text forces ("NCCL_ALGO=Ring", "NCCL_ALGO set
 * by environment to Ring"); lists and exclusions leave CS_CHOICE_AUTO. */
typedef struct cs__meas_forced {
    int algo, proto;   /* as cs_meas_row.algo / .proto */
    char algo_name[24];
} cs__meas_forced;
void cs__meas_forced_in(const char *text, size_t len, cs__meas_forced *out);

#endif
