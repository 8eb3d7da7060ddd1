/* SPDX-License-Identifier: MIT */
/*
 * options.c - a command's option table read with getopt_long (see
 * options.h), and the usage messages every command prints the same way.
 * Rows become `struct option`s whose val is the row's letter, or 256 + its
 * index; a value is converted and range-checked by the row's kind.
 */
#include "options.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend.h"
#include "base/error.h"
#include "base/units.h"

int cs_hw_usage(const char *cmd, const char *fmt, ...)
{
    if (cs_hw_launch_rank() != 0) return CS_HW_EXIT_USAGE;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "collsim-hw %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'collsim-hw %s --help'.\n", cmd);
    return CS_HW_EXIT_USAGE;
}

void cs_hw_say(const char *fmt, ...)
{
    if (cs_hw_launch_rank() != 0) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "collsim-hw: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static int read_int(const char *cmd, const char *label, const cs_hw_opt *o, const char *s)
{
    char *end;
    long x = strtol(s, &end, 10);
    int lo = (int)o->lo, hi = (int)o->hi;
    if (!*s || *end || x < lo || x > hi)
        return cs_hw_usage(cmd, "%s expects an integer in %d..%d, got '%s'", label, lo, hi, s);
    *(int *)o->value = (int)x;
    return 0;
}

static int read_double(const char *cmd, const char *label, const cs_hw_opt *o, const char *s)
{
    char *end;
    double x = strtod(s, &end);
    if (!*s || *end || !isfinite(x) || x < o->lo || x > o->hi)
        return cs_hw_usage(cmd, "%s expects a number in [%g, %g], got '%s'", label, o->lo, o->hi,
                           s);
    *(double *)o->value = x;
    return 0;
}

static int read_size(const char *cmd, const char *label, const cs_hw_opt *o, const char *s)
{
    char err[256];
    if (cs_units_parse_size(s, o->value, err, sizeof err))
        return cs_hw_usage(cmd, "%s: %s", label, err);
    return 0;
}

/* 0, or an exit code after a message. */
static int read_value(const char *cmd, const cs_hw_opt *o, const char *text)
{
    char label[64];
    if (o->letter) snprintf(label, sizeof label, "-%c", o->letter);
    else snprintf(label, sizeof label, "--%s", o->name);
    switch (o->arg) {
    case CS_HW_ARG_FLAG: *(int *)o->value = 1; return 0;
    case CS_HW_ARG_INT: return read_int(cmd, label, o, text);
    case CS_HW_ARG_DOUBLE: return read_double(cmd, label, o, text);
    case CS_HW_ARG_SIZE: return read_size(cmd, label, o, text);
    case CS_HW_ARG_STRING: *(const char **)o->value = text; return 0;
    case CS_HW_ARG_AUTO: *(const char **)o->value = strcasecmp(text, "auto") ? text : NULL; return 0;
    case CS_HW_ARG_CUSTOM: return o->parse(cmd, text, o->value);
    }
    CS_PANIC("bad option kind %d", (int)o->arg);
}

/* The row getopt_long answered with ch, or NULL ('?': not an option). */
static const cs_hw_opt *row_of(const cs_hw_opt *opts, size_t n, int ch)
{
    if (ch >= 256 && (size_t)(ch - 256) < n) return &opts[ch - 256];
    for (size_t i = 0; i < n; i++)
        if (opts[i].letter && opts[i].letter == ch) return &opts[i];
    return NULL;
}

int cs_hw_opts_parse(const char *cmd, void (*help)(FILE *f), const cs_hw_opt *opts, size_t n,
                     int argc, char **argv, int *operand)
{
    CS_ASSERT(n <= CS_HW_OPTS_MAX);
    struct option longs[CS_HW_OPTS_MAX + 2];
    char shorts[2 * CS_HW_OPTS_MAX + 4] = ":"; /* ':' first: a missing value answers ':' */
    size_t ns = 1;
    for (size_t i = 0; i < n; i++) {
        int has = opts[i].arg == CS_HW_ARG_FLAG ? no_argument : required_argument;
        longs[i] = (struct option){opts[i].name, has, NULL,
                                   opts[i].letter ? opts[i].letter : 256 + (int)i};
        if (!opts[i].letter) continue;
        shorts[ns++] = opts[i].letter;
        if (has == required_argument) shorts[ns++] = ':';
    }
    longs[n] = (struct option){"help", no_argument, NULL, 'h'};
    longs[n + 1] = (struct option){NULL, 0, NULL, 0};
    shorts[ns++] = 'h';
    shorts[ns] = 0;

    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (ch == 'h') {
            help(stdout);
            return CS_HW_EXIT_OK;
        }
        if (ch == ':') return cs_hw_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
        const cs_hw_opt *o = row_of(opts, n, ch);
        if (!o) return cs_hw_usage(cmd, "unknown option '%s'", argv[optind - 1]);
        int rc = read_value(cmd, o, optarg);
        if (rc) return rc;
    }
    *operand = optind;
    return -1;
}
