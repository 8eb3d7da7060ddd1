/* SPDX-License-Identifier: MIT */
/*
 * buf.c - the growable output buffer, its atomic write (temporary file and
 * rename; devices and FIFOs in place) and JSON string escaping.
 */
#include "base/buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cs_buf_vprintf(cs_buf *b, const char *fmt, va_list ap)
{
    for (;;) {
        size_t avail = b->cap - b->len;
        va_list aq;
        va_copy(aq, ap);
        int n = vsnprintf(b->data ? b->data + b->len : NULL, avail, fmt, aq);
        va_end(aq);
        CS_ASSERT(n >= 0);
        if ((size_t)n < avail) {
            b->len += (size_t)n;
            return;
        }
        size_t need = b->len + (size_t)n + 1;
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < need) cap *= 2;
        b->data = cs_xrealloc(b->data, cap);
        b->cap = cap;
    }
}

void cs_buf_printf(cs_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cs_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void cs_buf_free(cs_buf *b)
{
    free(b->data);
    *b = (cs_buf){0};
}

int cs_buf_write(const cs_buf *b, const char *path, cs_diag *d)
{
    if (!path || !strcmp(path, "-")) {
        if (b->len && fwrite(b->data, 1, b->len, stdout) != b->len)
            return cs_diag_set(d, CS_EIO, NULL, 0, 0, "cannot write to standard output");
        fflush(stdout);
        return 0;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* a device, FIFO or /dev/stdout: write in place (no rename) */
        FILE *f = fopen(path, "wb");
        int ok = f && (b->len == 0 || fwrite(b->data, 1, b->len, f) == b->len);
        if (f) ok = (fclose(f) == 0) && ok;
        if (!ok)
            return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output: %s", strerror(errno));
        return 0;
    }
    size_t n = strlen(path) + 16;
    char *tmp = cs_xmalloc(n);
    snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int e = errno;
        free(tmp);
        return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot create output file: %s", strerror(e));
    }
    int ok = (b->len == 0 || fwrite(b->data, 1, b->len, f) == b->len);
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        free(tmp);
        return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output file: %s", strerror(e));
    }
    free(tmp);
    return 0;
}

void cs_buf_json_string(cs_buf *b, const char *s)
{
    cs_buf_printf(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            cs_buf_printf(b, "\\%c", c);
        else if (c < 0x20)
            cs_buf_printf(b, "\\u%04x", c);
        else
            cs_buf_printf(b, "%c", c);
    }
    cs_buf_printf(b, "\"");
}
