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
/* Writes b to path atomically (path.tmp + rename), or to stdout if path is
 * NULL or "-"; an existing non-regular path (a device, FIFO, /dev/stdout)
 * is written in place. Returns 0 or CS_EIO with d naming the path and the reason. */
int cs_buf_write(const cs_buf *b, const char *path, cs_diag *d);
/* Appends s as a JSON string literal (quoted, escaped). */
void cs_buf_json_string(cs_buf *b, const char *s);

#endif
