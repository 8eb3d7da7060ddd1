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

/* Whether path is written in place: standard output, or an existing
 * non-regular file (a device, a FIFO, /dev/stdout). */
int cs_buf_in_place(const char *path)
{
    struct stat st;
    return !path || !strcmp(path, "-") || (stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
                                           !S_ISDIR(st.st_mode));
}

char *cs_buf_temp_name(const char *path)
{
    size_t n = strlen(path) + sizeof CS_BUF_TEMP_TAG + 24;
    char *tmp = cs_xmalloc(n);
    snprintf(tmp, n, "%s" CS_BUF_TEMP_TAG "%ld", path, (long)getpid());
    return tmp;
}

int cs_buf_check_path(const char *path, cs_diag *d)
{
    if (!path || !strcmp(path, "-")) return 0;
    if (!*path) return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "an output file name is empty");
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output: it is a directory");
        if (!S_ISREG(st.st_mode))
            return access(path, W_OK) == 0
                       ? 0
                       : cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output: %s",
                                     strerror(errno));
    }
    /* a regular file is replaced by a rename in its directory */
    const char *slash = strrchr(path, '/');
    size_t dl = slash ? (size_t)(slash - path) : 0;
    char *dir = cs_xmalloc(dl + 2);
    if (!slash) strcpy(dir, ".");
    else if (dl == 0) strcpy(dir, "/");
    else memcpy(dir, path, dl), dir[dl] = '\0';
    int rc = 0;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        rc = cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output: directory '%s' does not exist",
                         dir);
    else if (access(dir, W_OK | X_OK) != 0)
        rc = cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output: directory '%s' is not "
                         "writable: %s", dir, strerror(errno));
    free(dir);
    return rc;
}

int cs_buf_write_temp(const cs_buf *b, const char *tmp, const char *path, cs_diag *d)
{
    FILE *f = fopen(tmp, "wb");
    if (!f) return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot create output file: %s", strerror(errno));
    int ok = (b->len == 0 || fwrite(b->data, 1, b->len, f) == b->len);
    int e = errno;
    if (fclose(f) != 0 && ok) ok = 0, e = errno;
    if (!ok) {
        remove(tmp);
        return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output file: %s", strerror(e));
    }
    return 0;
}

int cs_buf_write_in_place(const cs_buf *b, const char *path, cs_diag *d)
{
    if (!path || !strcmp(path, "-")) {
        if (b->len && fwrite(b->data, 1, b->len, stdout) != b->len)
            return cs_diag_set(d, CS_EIO, NULL, 0, 0, "cannot write to standard output");
        if (fflush(stdout) != 0)
            return cs_diag_set(d, CS_EIO, NULL, 0, 0, "cannot write to standard output");
        return 0;
    }
    FILE *f = fopen(path, "wb");
    int ok = f && (b->len == 0 || fwrite(b->data, 1, b->len, f) == b->len);
    if (f) ok = (fclose(f) == 0) && ok;
    if (!ok) return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output: %s", strerror(errno));
    return 0;
}

int cs_buf_write(const cs_buf *b, const char *path, cs_diag *d)
{
    if (cs_buf_in_place(path)) return cs_buf_write_in_place(b, path, d);
    char *tmp = cs_buf_temp_name(path);
    int rc = cs_buf_write_temp(b, tmp, path, d);
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output file: %s", strerror(errno));
        remove(tmp);
    }
    free(tmp);
    return rc;
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
