/* SPDX-License-Identifier: MIT */
/*
 * rowfile.c - row-by-row durable CSV output (see rowfile.h).
 */
#include "rowfile.h"

#include <stdio.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

int cs_hw_rowfile_open(cs_hw_rowfile *r, const char *path, const char *header, cs_diag *d)
{
    memset(r, 0, sizeof *r);
    if (!path || !*path) return 0;
    snprintf(r->path, sizeof r->path, "%s", path);
    r->f = fopen(path, "w");
    if (!r->f)
        return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot create output file: %s", strerror(errno));
    if (cs_hw_rowfile_row(r, "%s\n", header))
        return cs_diag_set(d, CS_EIO, path, 0, 0, "cannot write output file: %s", strerror(errno));
    return 0;
}

int cs_hw_rowfile_row(cs_hw_rowfile *r, const char *fmt, ...)
{
    if (!r->f) return 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(r->f, fmt, ap);
    va_end(ap);
    if (n < 0 || fflush(r->f) != 0) return CS_EIO;
    /* fsync fails with EINVAL on pipes and character devices: not an error */
    if (fsync(fileno(r->f)) != 0 && errno != EINVAL && errno != EROFS) return CS_EIO;
    return 0;
}

int cs_hw_rowfile_close(cs_hw_rowfile *r)
{
    if (!r->f) return 0;
    int rc = fclose(r->f) == 0 ? 0 : CS_EIO;
    r->f = NULL;
    return rc;
}
