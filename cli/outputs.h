/* SPDX-License-Identifier: MIT */
/*
 * outputs.h - a command's output files written as one: every path checked
 * before the work, every file written to its temporary (base/buf.h:
 * "NAME.collsim-tmp.PID"), all renamed only once all were written; the
 * temporaries are removed on failure and on SIGINT / SIGTERM / SIGHUP.
 * Internal to the collsim executable (the signal handler is process
 * state, which the library keeps none of).
 */
#ifndef CS_CLI_OUTPUTS_H
#define CS_CLI_OUTPUTS_H

#include <stddef.h>

#include "base/buf.h"
#include "base/error.h"

#define CS_CLI_MAX_OUTPUTS 8

/* One command's outputs: a value the caller owns (start with {0}); the
 * buffers added must live until commit or abort. */
typedef struct cs_cli_outputs {
    int n;
    struct {
        const char *path;   /* NULL or "-": standard output */
        char *tmp;          /* the temporary while not renamed, else NULL */
        const cs_buf *b;    /* in place: written at commit */
        int in_place;
    } o[CS_CLI_MAX_OUTPUTS];
} cs_cli_outputs;

/* Checks the n output paths (NULL entries are skipped; NULL is stdout
 * and needs no check) before any work: cs_buf_check_path, and two outputs
 * naming the same file are refused. Returns -1 if all are fine, else
 * prints the message and returns the exit code. */
int cs_cli_outputs_check(const char *cmd, const char *const *paths, size_t n);
/* Adds b for path: a regular file is written to its temporary now (which
 * the signal handler knows from here on); stdout and devices are written
 * at commit. Returns 0 or CS_EIO with d set. */
int cs_cli_outputs_add(cs_cli_outputs *s, const cs_buf *b, const char *path, cs_diag *d);
/* Renames every temporary to its name, then writes the in-place outputs.
 * Returns 0 or CS_EIO with d set (what was not renamed is removed). */
int cs_cli_outputs_commit(cs_cli_outputs *s, cs_diag *d);
/* Removes every temporary not yet renamed (after a failure). */
void cs_cli_outputs_abort(cs_cli_outputs *s);
/* The n buffers to their paths (NULL: stdout) as one: add each, then
 * commit; on a failure abort. Returns 0 or CS_EIO with d set. */
int cs_cli_outputs_write(const cs_buf *const *bufs, const char *const *paths, size_t n,
                         cs_diag *d);

/* A temporary someone else writes (gnuplot's plots): removed on a signal
 * until forgotten. */
void cs_cli_temp_register(const char *tmp);
void cs_cli_temp_forget(const char *tmp);

#endif
