/* SPDX-License-Identifier: MIT */
/*
 * textfile.c - whole-file reads and origin names for the input loaders.
 * Reads grow a buffer by doubling: O(n) for an n-byte file.
 */
#include "base/textfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cs_textfile_read(const char *path, const char *what, char **text, size_t *len, cs_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return cs_diag_set(d, e == ENOENT ? CS_ENOENT : CS_EIO, path, 0, 0,
                           "cannot open %s: %s", what, strerror(e));
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot read %s: it is a directory", what);
    }
    size_t cap = 4096, n = 0;
    char *buf = cs_xmalloc(cap);
    int too_big = 0;
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n + 1 < cap) break; /* short read: EOF or error */
        /* a device such as /dev/zero never ends */
        if (cap >= CS_TEXTFILE_MAX_BYTES) {
            too_big = 1;
            break;
        }
        cap *= 2;
        buf = cs_xrealloc(buf, cap);
    }
    int failed = ferror(f), e = errno;
    fclose(f);
    if (failed || too_big) {
        free(buf);
        if (too_big)
            return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot read %s: larger than %d MiB",
                               what, CS_TEXTFILE_MAX_BYTES >> 20);
        return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot read %s: %s", what, strerror(e));
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}

void cs_textfile_origin_name(const char *origin, const char *fallback, char *buf, size_t len)
{
    if (!origin || !*origin) {
        snprintf(buf, len, "%s", fallback);
        return;
    }
    const char *base = strrchr(origin, '/');
    base = base ? base + 1 : origin;
    if (!strncmp(base, "preset:", 7)) base += 7;
    size_t n = strlen(base);
    if (n > 5 && !strcmp(base + n - 5, ".yaml"))
        n -= 5;
    else if (n > 4 && !strcmp(base + n - 4, ".yml"))
        n -= 4;
    if (n >= len) n = len - 1;
    memcpy(buf, base, n);
    buf[n] = '\0';
}

int cs_textfile_is_path(const char *spec)
{
    size_t n = strlen(spec);
    return strchr(spec, '/') != NULL || (n >= 5 && !strcmp(spec + n - 5, ".yaml")) ||
           (n >= 4 && !strcmp(spec + n - 4, ".yml"));
}
