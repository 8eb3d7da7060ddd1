/* SPDX-License-Identifier: MIT */
/*
 * cli.h - internal to the collsim executable: the commands (one file
 * each, dispatched by main.c) and the few helpers they share: messages,
 * exit codes and number parsing (opts.c; the option parser is opts.h).
 */
#ifndef CS_CLI_H
#define CS_CLI_H

#include "base/error.h"

enum { CS_EXIT_OK = 0, CS_EXIT_IO = 1, CS_EXIT_USAGE = 2 };

/* Prints a diagnostic as "collsim: file:line:col: error: ..." and returns
 * the exit code for it. */
int cs_cli_fail(const cs_diag *d);
/* Prints "collsim CMD: <message>" plus a --help hint; returns 2. */
int cs_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An integer option in lo..hi; prints and returns -1 on error. */
int cs_cli_int(const char *cmd, const char *opt, const char *s, int lo, int hi, int *v);
/* A parameter count > 0: plain (13e9) or with a decimal suffix K, M, B or
 * G, T (7B, 350M, 1.5T). Returns 0, or -1 (no message) if s is not one. */
int cs_cli_params(const char *s, double *v);

/* The commands: argc/argv from the command name on; return the exit code. */
int cs_cmd_collective(int argc, char **argv);
int cs_cmd_memory(int argc, char **argv);
int cs_cmd_simulate(int argc, char **argv);
int cs_cmd_plan(int argc, char **argv);
int cs_cmd_calibrate(int argc, char **argv);
int cs_cmd_compare(int argc, char **argv);
int cs_cmd_crossover(int argc, char **argv);

#endif
