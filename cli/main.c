/* SPDX-License-Identifier: MIT */
/*
 * main.c - the `collsim` command line: dispatch only. One row per command
 * (name, the one line `collsim --help` shows, entry point); each command
 * lives in its own file (cmd_*.c) and parses its options with opts.h; all
 * modelling lives in the library.
 *
 * The exit codes are one table (CS_EXIT_MAP in cli.h), printed here for
 * every command's --help and copied in README.md.
 */
#include <stdio.h>
#include <string.h>

#include "base/units.h"
#include "cli.h"

#ifndef CS_VERSION
#define CS_VERSION "0.0.0"
#endif

static const struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"collective", "time one collective per size (ring/tree/nvls, LL/LL128/Simple), nccl-tests style",
     cs_cmd_collective},
    {"memory", "per-GPU memory of DDP / ZeRO-1 / FSDP x TP x PP (per stage), peak and OOM verdict",
     cs_cmd_memory},
    {"simulate", "one training iteration: overlap, exposed communication, tokens/s, MFU",
     cs_cmd_simulate},
    {"plan", "recommend strategy x tp x pp, checkpointing and micro-batch; check the rule of thumb",
     cs_cmd_plan},
    {"calibrate", "fit the cluster's cost model to nccl-tests / collsim-hw measurements",
     cs_cmd_calibrate},
    {"compare", "predicted vs measured collectives: per-row and per-dataset % errors",
     cs_cmd_compare},
    {"crossover", "sweep P x N x strategies (x tp x pp): where one overtakes another, OOM limits",
     cs_cmd_crossover},
};

void cs_cli_exit_help(FILE *f)
{
    static const cs_exit_row rows[] = {
#define CS__EXIT_ROW(name, val, text) {val, text},
        CS_EXIT_MAP(CS__EXIT_ROW)
#undef CS__EXIT_ROW
    };
    cs_exit_table_print(f, rows, sizeof rows / sizeof rows[0]);
    fprintf(f, "Outputs are written whole or not at all: every output path is checked before\n"
               "the work, outputs go to temporaries (NAME.collsim-tmp.PID) renamed when all are\n"
               "written, and SIGINT / SIGTERM remove the temporaries.\n");
}

static void main_help(FILE *f)
{
    fprintf(f, "Usage: collsim COMMAND [options]\n       collsim --help | --version\n\n"
               "Simulates collective communication and distributed training (data-parallel\n"
               "DDP / ZeRO-1 / FSDP, with tensor and pipeline parallelism) on a cluster\n"
               "described in YAML.\n\nCommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'collsim COMMAND --help' describes each command; `man collsim-COMMAND` too.\n"
               "Presets, example scenarios and the schema READMEs: share/collsim/ under the\n"
               "install prefix (configs/ in the source tree); JSON layouts: docs/json-output.md\n"
               "(share/doc/collsim/).\n%s",
            cs_units_help());
    cs_cli_exit_help(f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        main_help(stderr);
        return CS_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        main_help(stdout);
        return CS_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("collsim %s\n", CS_VERSION);
        return CS_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "collsim: unknown command '%s'\nTry 'collsim --help'.\n", argv[1]);
    return CS_EXIT_USAGE;
}
