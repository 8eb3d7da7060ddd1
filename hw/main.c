/* SPDX-License-Identifier: MIT */
/*
 * main.c - the `collsim-hw` command line: dispatch only. What the commands
 * share (options, backend set-up, the end) is session.c; the measurements
 * live in cmd_*.c and the backends.
 *
 * Exit codes (also in --help and hw/README.md):
 *   0  success            3  --check found wrong results
 *   1  file not written / not readable   4  an MPI/CUDA/NCCL/cuBLAS call failed
 *   2  bad usage or a bad schedule       5  timeout (--timeout), rows so far kept
 *  77  backend unavailable (no GPU, built without NCCL or MPI): "skipped"
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "hwcli.h"

#ifndef CS_VERSION
#define CS_VERSION "0.0.0"
#endif

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
    fprintf(f, "'collsim-hw COMMAND --help' describes each command; hw/README.md (installed\n"
               "as share/doc/collsim/hw/README.md) the CSV columns, launchers and exit codes.\n");
    cs_hw_exit_help(f);
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
