/* SPDX-License-Identifier: MIT */
/*
 * error.h - error codes, diagnostics and panics shared by every module.
 *
 * Functions return 0 or a negative CS_E* code from one X-macro table (the
 * libuv pattern) and, where input was at fault, fill a caller-owned cs_diag
 * with file, line, column and a human message. Out of memory and broken
 * invariants never return: they print file:line and abort.
 */
#ifndef CS_ERROR_H
#define CS_ERROR_H

#include <stddef.h>
#include <stdio.h>

/* X(name, value, message) */
#define CS_ERRNO_MAP(X)                                                   \
    X(EINVAL, -1, "invalid argument")                                    \
    X(ECONFIG, -2, "invalid configuration")                              \
    X(EIO, -3, "input/output error")                                     \
    X(ENOTSUP, -4, "operation not supported by this algorithm")          \
    X(ERANGE, -5, "value out of range")                                  \
    X(ENOENT, -6, "no such file or preset")

enum {
#define CS__ERR_ENUM(name, val, msg) CS_##name = (val),
    CS_ERRNO_MAP(CS__ERR_ENUM)
#undef CS__ERR_ENUM
};

/* One row of a program's exit-code table (collsim: cli/cli.h; collsim-hw:
 * hw/backend.h), and the table as every --help prints it: "Exit status:",
 * then "  N    text" per row, wrapped at 79 columns. */
typedef struct cs_exit_row {
    int code;
    const char *text;
} cs_exit_row;
void cs_exit_table_print(FILE *f, const cs_exit_row *rows, size_t n);

/* Human text for a CS_E* code (static storage, never NULL). */
const char *cs_strerror(int code);

/* A diagnostic about bad input. line/column are 1-based; 0 = unknown. */
typedef struct cs_diag {
    int code;
    char file[256];
    int line;
    int column;
    char message[512];
} cs_diag;

/* Clears a diagnostic to "no error". */
void cs_diag_clear(cs_diag *d);

/* Fills d (if not NULL) and returns code. file may be NULL. */
int cs_diag_set(cs_diag *d, int code, const char *file, int line, int column,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Writes "file:line:column: error: message" (parts omitted when unknown). */
void cs_diag_format(const cs_diag *d, char *buf, size_t len);

/* Never returns: prints "collsim: panic at file:line: message" and aborts. */
_Noreturn void cs__panic(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define CS_PANIC(...) cs__panic(__FILE__, __LINE__, __VA_ARGS__)
#define CS_ASSERT(cond)                                                   \
    do {                                                                  \
        if (!(cond)) CS_PANIC("assertion failed: %s", #cond);             \
    } while (0)

/* Allocation that aborts on out-of-memory (never returns NULL). */
void *cs_xmalloc(size_t n);
void *cs_xcalloc(size_t n, size_t size);
void *cs_xrealloc(void *p, size_t n);
char *cs_xstrdup(const char *s);

#endif
