/* SPDX-License-Identifier: MIT */
/*
 * error.c - the CS_E* message table, diagnostics and the panic path.
 * Owns no state: every diagnostic lives in a caller-provided cs_diag.
 */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cs_strerror(int code)
{
    switch (code) {
    case 0:
        return "success";
#define CS__ERR_CASE(name, val, msg) \
    case val:                        \
        return msg;
        CS_ERRNO_MAP(CS__ERR_CASE)
#undef CS__ERR_CASE
    default:
        return "unknown error";
    }
}

void cs_diag_clear(cs_diag *d)
{
    if (d) memset(d, 0, sizeof *d);
}

int cs_diag_set(cs_diag *d, int code, const char *file, int line, int column,
                const char *fmt, ...)
{
    if (!d) return code;
    d->code = code;
    snprintf(d->file, sizeof d->file, "%s", file ? file : "");
    d->line = line;
    d->column = column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->message, sizeof d->message, fmt, ap);
    va_end(ap);
    return code;
}

void cs_diag_format(const cs_diag *d, char *buf, size_t len)
{
    if (d->file[0] && d->line > 0)
        snprintf(buf, len, "%s:%d:%d: error: %s", d->file, d->line, d->column,
                 d->message);
    else if (d->file[0])
        snprintf(buf, len, "%s: error: %s", d->file, d->message);
    else
        snprintf(buf, len, "error: %s", d->message);
}

_Noreturn void cs__panic(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "collsim: panic at %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

void *cs_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) CS_PANIC("out of memory (%zu bytes)", n);
    return p;
}

void *cs_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) CS_PANIC("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

void *cs_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) CS_PANIC("out of memory (%zu bytes)", n);
    return q;
}

char *cs_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = cs_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

void cs_exit_table_print(FILE *f, const cs_exit_row *rows, size_t n)
{
    enum { INDENT = 7, WIDTH = 79 };
    fprintf(f, "Exit status:\n");
    for (size_t i = 0; i < n; i++) {
        int col = fprintf(f, "  %-4d ", rows[i].code);
        for (const char *w = rows[i].text; *w;) {
            size_t len = strcspn(w, " ");
            if (col > INDENT && col + 1 + (int)len > WIDTH) col = fprintf(f, "\n%*s", INDENT, "") - 1;
            else if (col > INDENT) col += fprintf(f, " ");
            col += fprintf(f, "%.*s", (int)len, w);
            w += len;
            while (*w == ' ') w++;
        }
        fputc('\n', f);
    }
}
