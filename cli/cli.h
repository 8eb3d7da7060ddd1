/* SPDX-License-Identifier: MIT */
/*
 * cli.h - internal to the collsim executable: the commands (one file
 * each, dispatched by main.c) and the few helpers they share: messages,
 * exit codes and number parsing (opts.c; the option parser is opts.h).
 */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <stdio.h>

#include "base/error.h"

/* The exit codes of every command: one table, printed by every --help
 * (cs_cli_exit_help) and copied in README.md. X(name, value, meaning) */
#define CS_EXIT_MAP(X)                                                                             \
    X(OK, 0, "success")                                                                            \
    X(IO, 1, "a file could not be read or written (missing, a directory, no permission, a full "  \
             "disk)")                                                                              \
    X(USAGE, 2, "bad usage, bad input (the message names file:line:column and what was "          \
                "expected) or an unsupported request")                                             \
    X(UNFIT, 3, "calibrate: the measurements determine no parameter, or the fit leaves an RMS "  \
                "error of 100% or more (the report is written, OUT.yaml is not)")

enum {
#define CS__EXIT_ENUM(name, val, text) CS_EXIT_##name = (val),
    CS_EXIT_MAP(CS__EXIT_ENUM)
#undef CS__EXIT_ENUM
};

/* Prints the exit-code table ("Exit status:" and one line per code) and
 * the note that outputs are written whole or not at all (main.c). */
void cs_cli_exit_help(FILE *f);

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
