/* SPDX-License-Identifier: MIT */
/*
 * hwcli.h - internal to the collsim-hw executable: the commands and the
 * option handling they share. Messages before the backend starts are
 * printed by the launcher's rank 0 only (every rank parses the same
 * arguments and would print the same words).
 */
#ifndef CS_HW_HWCLI_H
#define CS_HW_HWCLI_H

#include <stdio.h>

#include "backend.h"

/* Prints "collsim-hw CMD: MESSAGE" and a --help hint (rank 0); returns 2. */
int cs_hw_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "collsim-hw: MESSAGE" on rank 0 (of the launcher, before init). */
void cs_hw_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Option values: print and return -1 when out of range. */
int cs_hw_opt_int(const char *cmd, const char *opt, const char *s, int lo, int hi, int *v);
int cs_hw_opt_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                     double *v);
int cs_hw_opt_size(const char *cmd, const char *opt, const char *s, double *bytes);
/* The backend named s: 0, or an exit code after a message (2 unknown
 * name, 77 not built into this binary). */
int cs_hw_opt_backend(const char *cmd, const char *s, const cs_hw_backend **out);
/* Starts a backend under the watchdog; returns 0 or an exit code after a
 * message (77 when unavailable: no GPU, ...). */
int cs_hw_start(const cs_hw_backend *b, const cs_hw_config *cfg, cs_hw_ctx **ctx,
                cs_hw_info *info);
/* Arms the watchdog for one measurement (see watchdog.h): at timeout_s for
 * backends that cannot poll, later (a backstop) for those that do. */
void cs_hw_guard(const cs_hw_backend *b, double timeout_s, int rank, const char *what,
                 const char *kept);

int cs_hw_cmd_bench(int argc, char **argv);
int cs_hw_cmd_compute(int argc, char **argv);
int cs_hw_cmd_replay(int argc, char **argv);

#endif
