/* SPDX-License-Identifier: MIT */
/*
 * options.h - the command line of a collsim-hw command as one table: each
 * option is a row (long name, optional letter, how its value is read,
 * where it goes), parsed with getopt_long in the order the user wrote
 * them. Abbreviations are getopt_long's (a unique prefix of a long name).
 * -h / --help is always there.
 *
 * Messages before the backend starts are printed by the launcher's rank 0
 * only: every rank parses the same arguments and would print the same
 * words.
 */
#ifndef CS_HW_OPTIONS_H
#define CS_HW_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

/* How a row's value is read, and what `value` points to. */
typedef enum cs_hw_arg {
    CS_HW_ARG_FLAG,   /* no value; int: set to 1 */
    CS_HW_ARG_INT,    /* int in [lo, hi] */
    CS_HW_ARG_DOUBLE, /* double in [lo, hi], finite */
    CS_HW_ARG_SIZE,   /* double: bytes, with units (4K = 4096, 1M, ...) */
    CS_HW_ARG_STRING, /* const char *: the text itself */
    CS_HW_ARG_AUTO,   /* const char *: the text, or NULL for "auto" (any case) */
    CS_HW_ARG_CUSTOM  /* parse(cmd, text, value) */
} cs_hw_arg;

typedef struct cs_hw_opt {
    const char *name;  /* long name without "--" */
    char letter;       /* short name, or 0; messages then call the option "-L" */
    cs_hw_arg arg;
    void *value;       /* where the value goes (not owned) */
    double lo, hi;     /* CS_HW_ARG_INT / CS_HW_ARG_DOUBLE range */
    /* CS_HW_ARG_CUSTOM: 0, or an exit code after a message (cs_hw_usage) */
    int (*parse)(const char *cmd, const char *text, void *value);
} cs_hw_opt;

/* The most rows one command may have. */
#define CS_HW_OPTS_MAX 32

/* Parses argv[1..argc) against opts[0..n). Returns -1 when the command
 * goes on, with *operand = the index of the first operand in argv (getopt
 * moves operands behind the options); else the exit code to return now:
 * 0 after --help (help(stdout)), 2 after a usage message. */
int cs_hw_opts_parse(const char *cmd, void (*help)(FILE *f), const cs_hw_opt *opts, size_t n,
                     int argc, char **argv, int *operand);

/* Prints "collsim-hw CMD: MESSAGE" and a --help hint (rank 0); returns 2. */
int cs_hw_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "collsim-hw: MESSAGE" on rank 0 (of the launcher, before init). */
void cs_hw_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
