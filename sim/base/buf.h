/* SPDX-License-Identifier: MIT */
/*
 * buf.h - a growable text buffer written atomically, and JSON string
 * escaping: where every byte collsim writes is assembled.
 *
 * Output is assembled in memory and written with cs_buf_write, which
 * writes a temporary file and renames it, so a failed run never leaves a
 * half-written output file. The buffer knows nothing of what it holds.
 */
#ifndef CS_BUF_H
#define CS_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "base/error.h"

typedef struct cs_buf {
    char *data;
    size_t len, cap;
} cs_buf;

/* Appends formatted text (the buffer grows; aborts on out-of-memory). */
void cs_buf_printf(cs_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with a va_list (ap is copied, not consumed: the caller still va_ends it). */
void cs_buf_vprintf(cs_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Frees the buffer's text and leaves it empty (reusable). */
void cs_buf_free(cs_buf *b);
/* Writes b to path atomically (its temporary, then a rename), or to stdout
 * if path is NULL or "-"; an existing non-regular path (a device, FIFO,
 * /dev/stdout) is written in place. Returns 0 or CS_EIO with d naming the
 * path and the reason. */
int cs_buf_write(const cs_buf *b, const char *path, cs_diag *d);

/* The parts of cs_buf_write, for a caller that writes several outputs as
 * one (cli/outputs.c):
 * the tag of every temporary, so a left-over one is recognisable */
#define CS_BUF_TEMP_TAG ".collsim-tmp."
/* 1 if path is written in place (NULL, "-", an existing non-directory
 * that is not a regular file), 0 if through a temporary and a rename. */
int cs_buf_in_place(const char *path);
/* Whether an output can be written to path, checked before any work: a
 * directory, a missing or unwritable directory, an unwritable device are
 * CS_EIO with d naming path and the reason, an empty name CS_EINVAL; NULL
 * and "-" are fine. */
int cs_buf_check_path(const char *path, cs_diag *d);
/* path's temporary, "path.collsim-tmp.PID" (caller frees). */
char *cs_buf_temp_name(const char *path);
/* Writes b to tmp (removed again on failure; d names path). */
int cs_buf_write_temp(const cs_buf *b, const char *tmp, const char *path, cs_diag *d);
/* Writes b to stdout (path NULL or "-") or into path as it is. */
int cs_buf_write_in_place(const cs_buf *b, const char *path, cs_diag *d);
/* Appends s as a JSON string literal (quoted, escaped). */
void cs_buf_json_string(cs_buf *b, const char *s);

#endif
