/* SPDX-License-Identifier: MIT */
/*
 * session.h - the life of one collsim-hw command, the same for bench,
 * compute and replay: the options they share, the backend they name, the
 * CSV of rows created before any device work, the backend started under
 * the watchdog, each measurement guarded by it, and the end (rows closed,
 * backend finalized or aborted with the exit code).
 *
 *   cs_hw_session s;
 *   if (cs_hw_session_args(&s, &command, argc, argv, opts, n)) return s.exit;
 *   ... checks of the command's own options ...
 *   if ((rc = cs_hw_session_pick(&s))) return rc;      backend, -g, --algo/--proto
 *   if ((rc = cs_hw_session_start(&s, header))) return rc;  CSV, then backend init
 *   cs_hw_session_guard(&s, "what"); s.b->...(s.ctx, ...); cs_hw_watchdog_disarm();
 *   return cs_hw_session_end(&s, code);
 *
 * Exit codes and messages are those of hw/README.md: nothing is printed
 * twice, messages before the backend starts come from the launcher's
 * rank 0 only. The session is the caller's (on its stack); its strings
 * point into argv or the command's table.
 */
#ifndef CS_HW_SESSION_H
#define CS_HW_SESSION_H

#include "backend.h"
#include "options.h"
#include "rowfile.h"

/* The shared options, one bit each in cs_hw_command.common. */
enum {
    CS_HW_COMMON_BACKEND = 1 << 0, /* --backend B */
    CS_HW_COMMON_ITERS = 1 << 1,   /* --iters N, --warmup N */
    CS_HW_COMMON_CHOICE = 1 << 2,  /* --algo A, --proto P */
    CS_HW_COMMON_TIMEOUT = 1 << 3, /* --timeout S */
    CS_HW_COMMON_QUIET = 1 << 4,   /* --quiet */
    CS_HW_COMMON_GPUS = 1 << 5,    /* -g / --gpus G */
    CS_HW_COMMON_OUTPUT = 1 << 6,  /* -o / --output FILE */
    CS_HW_COMMON_ALL = (1 << 7) - 1
};

/* A command's fixed description (a static table row in cmd_*.c). */
typedef struct cs_hw_command {
    const char *name;      /* "bench": messages say "collsim-hw bench: ..." */
    void (*help)(FILE *f);
    unsigned common;       /* CS_HW_COMMON_* bits */
    int iters_max;         /* upper bound of --iters and --warmup */
    const char *operand;   /* "a SCHEDULE.json file": exactly one required; NULL: none */
    /* defaults */
    const char *backend;   /* NULL: --backend is required */
    int iters, warmup;     /* iters 0: the command picks one for the backend */
    const char *output;    /* -o */
} cs_hw_command;

typedef struct cs_hw_session {
    const cs_hw_command *cmd;
    int exit;                  /* what cs_hw_session_args asks the command to return */
    /* the shared options */
    const char *backend_name;
    const char *output;        /* -o as given (a CSV path, or replay's PREFIX) */
    const char *operand;       /* the operand, when cmd->operand */
    int iters, warmup;
    cs_hw_config cfg;          /* algo_op: set it before cs_hw_session_pick */
    /* after cs_hw_session_pick */
    const cs_hw_backend *b;
    /* after cs_hw_session_start */
    cs_hw_ctx *ctx;
    cs_hw_info info;
    cs_hw_rowfile rows;        /* open on the launcher's rank 0 when there is a CSV */
    const char *rows_path;     /* the CSV rows are kept in (every rank), or NULL */
} cs_hw_session;

/* Sets s to cmd's defaults and parses argv: the shared options cmd->common
 * names, then extra[0..n) (the command's own). Returns 0 to go on, or 1
 * when the command must return s->exit now (0 after --help, 2 after a
 * usage message): unknown options, bad values, a missing or unexpected
 * operand, and a missing --backend are all reported here. */
int cs_hw_session_args(cs_hw_session *s, const cs_hw_command *cmd, int argc, char **argv,
                       const cs_hw_opt *extra, size_t n);

/* Looks the backend up and checks what depends on it (-g, --algo for
 * s->cfg.algo_op, --proto) before any device work. 0, or an exit code
 * after a message (2 bad usage, 77 backend not built in). */
int cs_hw_session_pick(cs_hw_session *s);

/* With csv_header, creates the CSV at s->output (when given, on the
 * launcher's rank 0) and writes the header; then starts the backend under
 * the watchdog. 0, or an exit code after a message (1 CSV not writable,
 * 77 backend unavailable: the CSV is then removed, nothing was measured). */
int cs_hw_session_start(cs_hw_session *s, const char *csv_header);

/* Arms the watchdog for one measurement called `what` (watchdog.h): at
 * --timeout for backends that cannot poll, as a backstop for those that
 * do. The message names the CSV rows are kept in. Disarm with
 * cs_hw_watchdog_disarm. */
void cs_hw_session_guard(const cs_hw_session *s, const char *what);

/* Prints "collsim-hw: rank R: CMD stopped[; rows measured so far are kept
 * in CSV]WHY" on stderr. */
void cs_hw_session_stopped(const cs_hw_session *s, const char *why);

/* Closes the CSV and finalizes the backend: code != 0 aborts it (under
 * MPI every rank ends with code). Returns code. */
int cs_hw_session_end(cs_hw_session *s, int code);

#endif
