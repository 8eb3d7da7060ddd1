/* SPDX-License-Identifier: MIT */
/*
 * main.c - the `collsim-hw` command line: dispatch and the option helpers
 * the commands share; the measurements live in cmd_*.c and the backends.
 *
 * Exit codes (also in --help and hw/README.md):
 *   0  success            3  --check found wrong results
 *   1  file not written / not readable   4  an MPI/CUDA/NCCL/cuBLAS call failed
 *   2  bad usage or a bad schedule       5  timeout (--timeout), rows so far kept
 *  77  backend unavailable (no GPU, built without NCCL or MPI): "skipped"
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "hwcli.h"
#include "base/units.h"
#include "watchdog.h"

#ifndef CS_VERSION
#define CS_VERSION "0.0.0"
#endif

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

int cs_hw_opt_int(const char *cmd, const char *opt, const char *s, int lo, int hi, int *v)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (!*s || *end || x < lo || x > hi) {
        cs_hw_usage(cmd, "%s expects an integer in %d..%d, got '%s'", opt, lo, hi, s);
        return -1;
    }
    *v = (int)x;
    return 0;
}

int cs_hw_opt_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                     double *v)
{
    char *end;
    double x = strtod(s, &end);
    if (!*s || *end || !isfinite(x) || x < lo || x > hi) {
        cs_hw_usage(cmd, "%s expects a number in [%g, %g], got '%s'", opt, lo, hi, s);
        return -1;
    }
    *v = x;
    return 0;
}

int cs_hw_opt_size(const char *cmd, const char *opt, const char *s, double *bytes)
{
    char err[256];
    if (cs_units_parse_size(s, bytes, err, sizeof err)) {
        cs_hw_usage(cmd, "%s: %s", opt, err);
        return -1;
    }
    return 0;
}

int cs_hw_opt_backend(const char *cmd, const char *s, const cs_hw_backend **out)
{
    if (!strcmp(s, "mpi")) *out = cs_hw_backend_mpi();
    else if (!strcmp(s, "nccl")) *out = cs_hw_backend_nccl();
    else return cs_hw_usage(cmd, "unknown --backend '%s' (expected nccl or mpi)", s);
    if (!*out) {
        cs_hw_say("the %s backend is not built into this collsim-hw (%s not found when it was "
                  "configured; see hw/README.md)", s,
                  !strcmp(s, "mpi") ? "MPI was" : "the CUDA runtime or NCCL was");
        return CS_HW_EXIT_SKIP;
    }
    return 0;
}

void cs_hw_guard(const cs_hw_backend *b, double timeout_s, int rank, const char *what,
                 const char *kept)
{
    cs_hw_watchdog_arm(b->polls_timeout ? 2 * timeout_s + 30 : timeout_s, rank, what, kept);
}

int cs_hw_start(const cs_hw_backend *b, const cs_hw_config *cfg, cs_hw_ctx **ctx,
                cs_hw_info *info)
{
    char msg[512] = "";
    *ctx = NULL;
    /* init can hang (a rank that never joins): a generous backstop */
    cs_hw_watchdog_arm(cfg->timeout_s + 120, cs_hw_launch_rank(), "backend initialization", NULL);
    int rc = b->init(cfg, ctx, info, msg, sizeof msg);
    cs_hw_watchdog_disarm();
    if (rc == CS_HW_EUNAVAIL) {
        cs_hw_say("%s backend unavailable: %s", b->name, msg[0] ? msg : "unknown reason");
        return CS_HW_EXIT_SKIP;
    }
    if (rc) {
        if (msg[0]) fprintf(stderr, "collsim-hw: %s\n", msg);
        if (*ctx) b->finalize(*ctx, cs_hw_exit_code(rc));
        *ctx = NULL;
        return cs_hw_exit_code(rc);
    }
    return 0;
}

static const struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"bench", "time collectives per size, like nccl-tests (NCCL on GPUs, MPI on CPUs)",
     cs_hw_cmd_bench},
    {"compute", "GEMM throughput vs size and memory-copy bandwidth", cs_hw_cmd_compute},
    {"replay", "execute a `collsim simulate --emit-schedule` iteration and time every task",
     cs_hw_cmd_replay},
};

static void main_help(FILE *f)
{
    fprintf(f,
            "Usage: collsim-hw COMMAND [options]\n       collsim-hw --help | --version\n\n"
            "Measures on real hardware what collsim predicts, in the simulator's CSV schema.\n"
            "Backends: nccl (CUDA + NCCL: -g GPUS in one process, or one process per GPU under\n"
            "mpirun/srun) and mpi (CPU ranks on host memory, under mpirun).\n\nCommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nBuilt-in backends: mpi %s, nccl %s.\n", cs_hw_backend_mpi() ? "yes" : "no",
            cs_hw_backend_nccl() ? "yes" : "no");
    fprintf(f, "'collsim-hw COMMAND --help' describes each command.\n"
               "Exit status: 0 ok, 1 file not written/readable, 2 bad usage or schedule,\n"
               "3 --check found wrong results, 4 MPI/CUDA/NCCL failure, 5 timeout (rows so far\n"
               "kept), 77 backend unavailable (no GPU; not built with NCCL/MPI).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        if (cs_hw_launch_rank() == 0) main_help(stderr);
        return CS_HW_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        main_help(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("collsim-hw %s\n", CS_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    if (cs_hw_launch_rank() == 0)
        fprintf(stderr, "collsim-hw: unknown command '%s' (expected bench, compute or replay)\n"
                        "Try 'collsim-hw --help'.\n", argv[1]);
    return CS_HW_EXIT_USAGE;
}
