/* SPDX-License-Identifier: MIT */
/*
 * session.c - the set-up and tear-down every collsim-hw command shares
 * (see session.h): the shared option rows, the backend chosen by name and
 * checked before any device work, the CSV created before the backend
 * starts (so an unwritable file costs no device time, and a backend that
 * turns out unavailable leaves no file behind), the backend's init under
 * a generous watchdog (a rank that never joins hangs MPI_Init or
 * ncclCommInitRank), and the end.
 */
#include "session.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "watchdog.h"

/* The shared option rows s takes (cmd->common); returns how many. */
static size_t common_rows(cs_hw_session *s, cs_hw_opt *o)
{
    const struct {
        unsigned bit;
        cs_hw_opt row;
    } all[] = {
        {CS_HW_COMMON_BACKEND, {"backend", 0, CS_HW_ARG_STRING, &s->backend_name, 0, 0, NULL}},
        {CS_HW_COMMON_ITERS, {"iters", 0, CS_HW_ARG_INT, &s->iters, 1, s->cmd->iters_max, NULL}},
        {CS_HW_COMMON_ITERS, {"warmup", 0, CS_HW_ARG_INT, &s->warmup, 0, s->cmd->iters_max, NULL}},
        {CS_HW_COMMON_CHOICE, {"algo", 0, CS_HW_ARG_AUTO, &s->cfg.algo, 0, 0, NULL}},
        {CS_HW_COMMON_CHOICE, {"proto", 0, CS_HW_ARG_AUTO, &s->cfg.proto, 0, 0, NULL}},
        {CS_HW_COMMON_TIMEOUT, {"timeout", 0, CS_HW_ARG_DOUBLE, &s->cfg.timeout_s, 0.001, 1e6, NULL}},
        {CS_HW_COMMON_QUIET, {"quiet", 0, CS_HW_ARG_FLAG, &s->cfg.quiet, 0, 0, NULL}},
        {CS_HW_COMMON_GPUS, {"gpus", 'g', CS_HW_ARG_INT, &s->cfg.gpus, 1, 1024, NULL}},
        {CS_HW_COMMON_OUTPUT, {"output", 'o', CS_HW_ARG_STRING, &s->output, 0, 0, NULL}},
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (s->cmd->common & all[i].bit) o[n++] = all[i].row;
    return n;
}

/* The operand rule of cmd->operand: 0, or an exit code after a message. */
static int check_operands(cs_hw_session *s, int argc, char **argv, int first)
{
    const char *cmd = s->cmd->name;
    if (!s->cmd->operand) {
        if (first < argc) return cs_hw_usage(cmd, "unexpected argument '%s'", argv[first]);
        return 0;
    }
    if (first >= argc) return cs_hw_usage(cmd, "%s is required", s->cmd->operand);
    if (first + 1 < argc) return cs_hw_usage(cmd, "unexpected argument '%s'", argv[first + 1]);
    s->operand = argv[first];
    return 0;
}

int cs_hw_session_args(cs_hw_session *s, const cs_hw_command *cmd, int argc, char **argv,
                       const cs_hw_opt *extra, size_t n)
{
    memset(s, 0, sizeof *s);
    s->cmd = cmd;
    s->backend_name = cmd->backend;
    s->output = cmd->output;
    s->iters = cmd->iters;
    s->warmup = cmd->warmup;
    s->cfg = (cs_hw_config){.gpus = 1, .algo_op = -1, .timeout_s = 300};
    cs_hw_opt rows[CS_HW_OPTS_MAX];
    size_t nrows = common_rows(s, rows);
    CS_ASSERT(nrows + n <= CS_HW_OPTS_MAX);
    memcpy(rows + nrows, extra, n * sizeof *extra);
    int first = 0;
    s->exit = cs_hw_opts_parse(cmd->name, cmd->help, rows, nrows + n, argc, argv, &first);
    if (s->exit >= 0) return 1;
    s->exit = check_operands(s, argc, argv, first);
    if (!s->exit && !s->backend_name)
        s->exit = cs_hw_usage(cmd->name, "%s", "--backend is required (nccl or mpi)");
    return s->exit != 0;
}

/* The backends by name; get answers NULL when this build lacks one. */
static const struct backend_row {
    const char *name;
    const cs_hw_backend *(*get)(void);
    const char *missing; /* what configure did not find, for the message */
} backends[] = {
    {"mpi", cs_hw_backend_mpi, "MPI was"},
    {"nccl", cs_hw_backend_nccl, "the CUDA runtime or NCCL was"},
};

/* The backend named s: 0, or an exit code after a message (2 unknown
 * name, 77 not built into this binary). */
static int backend_named(const char *cmd, const char *s, const cs_hw_backend **out)
{
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        if (strcmp(s, backends[i].name)) continue;
        *out = backends[i].get();
        if (*out) return 0;
        cs_hw_say("the %s backend is not built into this collsim-hw (%s not found when it was "
                  "configured; see hw/README.md)", s, backends[i].missing);
        return CS_HW_EXIT_SKIP;
    }
    return cs_hw_usage(cmd, "unknown --backend '%s' (expected nccl or mpi)", s);
}

int cs_hw_session_pick(cs_hw_session *s)
{
    const char *cmd = s->cmd->name;
    int rc = backend_named(cmd, s->backend_name, &s->b);
    if (rc) return rc;
    if (s->cfg.gpus > 1 && !s->b->multi_gpu)
        return cs_hw_usage(cmd, "%s", "-g is for the nccl backend (the mpi backend runs one rank "
                                      "per process)");
    char msg[512];
    if (s->b->check_choice(s->cfg.algo, s->cfg.proto, s->cfg.algo_op, msg, sizeof msg))
        return cs_hw_usage(cmd, "%s", msg);
    return 0;
}

/* Starts the backend under the watchdog: 0, or an exit code after a
 * message (77 when unavailable: no GPU, ...). */
static int start_backend(cs_hw_session *s)
{
    const cs_hw_backend *b = s->b;
    char msg[512] = "";
    s->ctx = NULL;
    /* init can hang (a rank that never joins): a generous backstop */
    cs_hw_watchdog_arm(s->cfg.timeout_s + 120, cs_hw_launch_rank(), "backend initialization",
                       NULL);
    int rc = b->init(&s->cfg, &s->ctx, &s->info, msg, sizeof msg);
    cs_hw_watchdog_disarm();
    if (rc == CS_HW_EUNAVAIL) {
        cs_hw_say("%s backend unavailable: %s", b->name, msg[0] ? msg : "unknown reason");
        return CS_HW_EXIT_SKIP;
    }
    if (rc) {
        if (msg[0]) fprintf(stderr, "collsim-hw: %s\n", msg);
        if (s->ctx) b->finalize(s->ctx, cs_hw_exit_code(rc));
        s->ctx = NULL;
        return cs_hw_exit_code(rc);
    }
    return 0;
}

int cs_hw_session_start(cs_hw_session *s, const char *csv_header)
{
    s->rows_path = csv_header ? s->output : NULL;
    if (s->rows_path && cs_hw_launch_rank() == 0) {
        cs_diag d;
        cs_diag_clear(&d);
        if (cs_hw_rowfile_open(&s->rows, s->rows_path, csv_header, &d)) {
            char m[800];
            cs_diag_format(&d, m, sizeof m);
            fprintf(stderr, "collsim-hw: %s\n", m);
            return CS_HW_EXIT_IO;
        }
    }
    int rc = start_backend(s);
    if (rc && s->rows.f) {
        cs_hw_rowfile_close(&s->rows);
        remove(s->rows_path); /* nothing was measured */
    }
    return rc;
}

void cs_hw_session_guard(const cs_hw_session *s, const char *what)
{
    double t = s->cfg.timeout_s;
    cs_hw_watchdog_arm(s->b->polls_timeout ? 2 * t + 30 : t, s->info.proc, what, s->rows_path);
}

void cs_hw_session_stopped(const cs_hw_session *s, const char *why)
{
    fprintf(stderr, "collsim-hw: rank %d: %s stopped%s%s%s\n", s->info.proc, s->cmd->name,
            s->rows_path ? "; rows measured so far are kept in " : "",
            s->rows_path ? s->rows_path : "", why);
}

int cs_hw_session_end(cs_hw_session *s, int code)
{
    cs_hw_rowfile_close(&s->rows);
    s->b->finalize(s->ctx, code);
    s->ctx = NULL;
    return code;
}
