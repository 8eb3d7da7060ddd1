/* SPDX-License-Identifier: MIT */
/*
 * trainargs.h - internal to the collsim executable: the options that
 * describe one training configuration, shared by `memory`, `simulate` and
 * `plan` so the three accept the same spellings: a scenario (a YAML file
 * or a built-in scenario name), --cluster / --nodes / --ranks, --model or
 * --params, --seq-len, --strategy or --zero, the training knobs
 * (opts.h's cs_cli_knobs: dtype, micro-batch, grad-accum, global batch,
 * optimizer, checkpointing, attention).
 *
 * Built-in scenarios are configs/scenarios/NAME.yaml embedded at build
 * time (tools/embed-presets.py), like cluster and model presets.
 */
#ifndef CS_TRAINARGS_H
#define CS_TRAINARGS_H

#include <stdio.h>

#include "opts.h"
#include "train/scenario.h"

typedef struct cs_cli_train {
    const char *scenario; /* the positional argument, or NULL */
    const char *cluster, *model;
    double params;
    int ranks, nodes, seq_len;
    cs_cli_strategies strategies;
    cs_cli_knobs knobs; /* engine: only where the command has --engine */
} cs_cli_train;

#define CS_CLI_TRAIN_UNSET {.knobs = CS_CLI_KNOBS_UNSET}

/* The rows, for an argument struct T whose field f is a cs_cli_train
 * (no --engine, --format or -o: each command has its own). */
#define CS_ARG_TRAIN(T, f)                                                                         \
    CS_ARG_CLUSTER(T, f.cluster), CS_ARG_NODES(T, f.nodes), CS_ARG_RANKS(T, f.ranks),              \
        {"model", .parse = cs_opt_string, CS_ARG_AT(T, f.model)},                                  \
        {"params", .parse = cs_opt_params, CS_ARG_AT(T, f.params)},                                \
        {"seq-len", .parse = cs_opt_int, CS_ARG_AT(T, f.seq_len), .lo = 1, .hi = 1 << 24},         \
        {"strategy", .parse = cs_opt_strategies, CS_ARG_AT(T, f.strategies)},                      \
        {"zero", .parse = cs_opt_zero, CS_ARG_AT(T, f.strategies)},                                \
        CS_ARG_TRAINING_DTYPE(T, f.knobs.dtype), CS_ARG_MICRO_BATCH(T, f.knobs.micro_batch),       \
        CS_ARG_GRAD_ACCUM(T, f.knobs.grad_accum), CS_ARG_GLOBAL_BATCH(T, f.knobs.global_batch),    \
        CS_ARG_OPTIMIZER(T, f.knobs.optimizer), CS_ARG_CKPT(T, f.knobs.ckpt),                      \
        CS_ARG_SELECTIVE_AC(T, f.knobs.sac), CS_ARG_ATTENTION(T, f.knobs.attention),              \
        CS_ARG_COMPILE(T, f.knobs.compile), CS_ARG_TP(T, f.knobs.tp),                            \
        CS_ARG_OPTIMIZER_IN_BACKWARD(T, f.knobs.optimizer_in_backward),                          \
        CS_ARG_ACTIVATION_OFFLOADING(T, f.knobs.activation_offloading),                          \
        CS_ARG_LOSS(T, f.knobs.loss), CS_ARG_PP(T, f.knobs.pp),                                  \
        CS_ARG_PP_SCHEDULE(T, f.knobs.pp_schedule)

/* The rows' help text (the scenario and every CS_ARG_TRAIN row). */
void cs_cli_train_help(FILE *f);

/* Takes the positional arguments from argv[next]: at most one scenario.
 * Checks --model vs --params. Returns -1 to go on, else an exit code. */
int cs_cli_train_positional(const char *cmd, cs_cli_train *a, int argc, char **argv, int next);

/* The scenario (a file, a built-in name, or the defaults: dgx-h100,
 * llama2-7b, ddp) with the options' cluster, model, params, seq_len,
 * ranks and nodes applied. Errors fill d. */
int cs_cli_train_resolve(const cs_cli_train *a, cs_scenario *sc, cs_diag *d);

/* The training of strategy s for a run on `ranks` ranks: the scenario's
 * (or, without a scenario, the defaults of s), with the knobs and a
 * global batch applied. Returns 0 or an exit code (message printed). */
int cs_cli_train_training(const char *cmd, const cs_cli_train *a, const cs_scenario *sc,
                          cs_strategy s, int ranks, cs_training *t);

/* Loads spec: a built-in scenario's name (no '/', no .yaml/.yml ending;
 * an unknown one gets a did-you-mean), else a scenario file. */
int cs_cli_scenario_load(const char *spec, cs_scenario *sc, cs_diag *d);

#endif
