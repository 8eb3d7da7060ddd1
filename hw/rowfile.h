/* SPDX-License-Identifier: MIT */
/*
 * rowfile.h - CSV output that survives a crash: the header is written when
 * the file is opened and every row is flushed and fsync'ed as soon as it is
 * measured, so a timeout or an abort loses nothing already measured. (The
 * simulator writes whole files atomically instead; a measurement run may
 * die halfway and its rows are still wanted.)
 */
#ifndef CS_HW_ROWFILE_H
#define CS_HW_ROWFILE_H

#include <stdio.h>

#include "base/error.h"

typedef struct cs_hw_rowfile {
    FILE *f;
    char path[512];
} cs_hw_rowfile;

/* Creates (truncates) path and writes header + "\n". path NULL or "" opens
 * nothing (rows are then dropped). 0 or CS_EIO with d filled. */
int cs_hw_rowfile_open(cs_hw_rowfile *r, const char *path, const char *header, cs_diag *d);
/* Appends one formatted row (the caller supplies the newline) and makes it
 * durable (fflush + fsync). 0 or CS_EIO. */
int cs_hw_rowfile_row(cs_hw_rowfile *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Closes; 0 or CS_EIO. Safe on a never-opened rowfile. */
int cs_hw_rowfile_close(cs_hw_rowfile *r);

#endif
