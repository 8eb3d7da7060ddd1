/* SPDX-License-Identifier: MIT */
/*
 * cli.h - internal to the collsim executable: the commands and the few
 * helpers they share (messages, exit codes, option parsing).
 */
#ifndef CS_CLI_H
#define CS_CLI_H

#include "base/error.h"

enum { CS_EXIT_OK = 0, CS_EXIT_IO = 1, CS_EXIT_USAGE = 2 };

/* Prints a diagnostic as "collsim: file:line:col: error: ..." and returns
 * the exit code for it. */
int cs_cli_fail(const cs_diag *d);
/* Prints "collsim CMD: <fmt with arg>" plus a --help hint; returns 2. */
int cs_cli_usage(const char *cmd, const char *fmt, const char *arg);
/* Integer / size options with range checks; print and return -1 on error. */
int cs_cli_int(const char *cmd, const char *opt, const char *s, int lo, int hi, int *v);
int cs_cli_number(const char *cmd, const char *opt, const char *s, double lo, double *v);
/* A parameter count > 0: plain (13e9) or with a decimal suffix K, M, B or
 * G, T (7B, 350M, 1.5T). Returns 0, or -1 (no message) if s is not one. */
int cs_cli_params(const char *s, double *v);

int cs_cmd_memory(int argc, char **argv);
int cs_cmd_simulate(int argc, char **argv);
int cs_cmd_plan(int argc, char **argv);
int cs_cmd_calibrate(int argc, char **argv);
int cs_cmd_compare(int argc, char **argv);
int cs_cmd_crossover(int argc, char **argv);

#endif
