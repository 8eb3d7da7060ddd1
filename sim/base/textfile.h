/* SPDX-License-Identifier: MIT */
/*
 * textfile.h - reading a whole input file (YAML, nccl-tests logs, CSV) and
 * naming a configuration after its file, shared by the loaders.
 */
#ifndef CS_TEXTFILE_H
#define CS_TEXTFILE_H

#include <stddef.h>

#include "base/error.h"

/* The largest input read (a device like /dev/zero would never end). */
#define CS_TEXTFILE_MAX_BYTES (64 << 20)

/* Reads path into a NUL-terminated buffer (caller frees *text); len
 * excludes the NUL. Errors: CS_ENOENT (no such file) or CS_EIO (a
 * directory, a read error, more than CS_TEXTFILE_MAX_BYTES), with d saying
 * "cannot open <what>: ..." / "cannot read <what>: ...". */
int cs_textfile_read(const char *path, const char *what, char **text, size_t *len, cs_diag *d);

/* The basename of origin without .yaml/.yml (or what follows "preset:"),
 * or `fallback` for an empty origin, into buf. */
void cs_textfile_origin_name(const char *origin, const char *fallback, char *buf, size_t len);

/* 1 if spec names a file rather than a preset: it holds a '/' or ends in
 * .yaml / .yml. */
int cs_textfile_is_path(const char *spec);

#endif
