/* SPDX-License-Identifier: MIT */
/*
 * cmd_plan.c - `collsim plan SCENARIO.yaml`: which data-parallel strategy
 * and micro-batch to train the scenario with, and how the seed's rule of
 * thumb fares on its cluster. Argument parsing (opts.h) and writing only:
 * the search and the rule check are study/plan.c's, the report
 * out/plan_report.c's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "outputs.h"
#include "out/plan_report.h"
#include "study/plan.h"
#include "trainargs.h"

#define CMD "plan"
#define N(a) (sizeof a / sizeof a[0])

typedef struct pargs {
    cs_cli_train t;
    int fmt;
    const char *out;
} pargs;

static const int plan_formats[] = {CS_FORMAT_TABLE, CS_FORMAT_JSON, CS_OPT_END};

#define AT(f) CS_ARG_AT(pargs, f)
static const cs_opt opts[] = {
    CS_ARG_TRAIN(pargs, t),
    {"format", .parse = cs_opt_choice, AT(fmt), .choice = &cs_choice_format,
     .only = plan_formats},
    CS_ARG_ENGINE(pargs, t.knobs.engine, CS_SAYS_EXPECTS),
    CS_ARG_OUTPUT(pargs, out),
};
#undef AT

static void help(FILE *f)
{
    char list[256], text[2600];
    cs_opts_list(list, sizeof list, &cs_choice_strategy);
    snprintf(text, sizeof text,
             "Recommends how to train the scenario: every parallel layout (strategy: %s, "
             "--strategy or --zero restrict it; x tensor-parallel degree 1, 2, 4, ... up to the "
             "GPUs per node, those that divide the ranks and the model's heads and MLP width, "
             "--tp fixes it; x pipeline-parallel degree 1, 2, 4, ... up to the layers, dividing "
             "the ranks left, --pp fixes it; x pipeline schedule, gpipe, 1f1b, zero_bubble and "
             "interleaved_1f1b at every virtual-stage count V whose P x V divides the layers, "
             "--pp-schedule fixes it) x activation checkpointing (none, selective op and every "
             "2nd block, selective attention too with --attention standard, and full; "
             "--checkpointing and --selective-ac fix it) x micro-batch 1, 2, 4, ... up to the "
             "largest that fits (and the scenario's own), with grad_accum keeping the "
             "scenario's global batch (micro_batch x grad_accum x data-parallel ranks, ranks / "
             "(tp x pp); where no whole grad_accum >= 1 keeps it, the nearest is simulated and "
             "the change noted, never recommended). A layout whose parameters and optimizer "
             "states alone exceed the GPU is pruned: listed, never simulated. One iteration is "
             "simulated per configuration, as `collsim simulate` does; it fits when the "
             "simulated peak is within GPU memory. The recommendation is the fastest "
             "(tokens/s) that fits, with its tokens/s, MFU, exposed communication and peak "
             "memory vs capacity, how much slower the best other strategy is, and the best of "
             "each other kind (without or with PP, without or with TP, each other strategy, "
             "each schedule, each checkpointing mode) with why it loses: throughput, memory or "
             "batch.",
             list);
    fprintf(f, "Usage: collsim plan [SCENARIO] [options as for `collsim simulate`]\n"
               "         [--engine analytic|des] [--format table|json] [-o FILE]\n"
               "\n");
    cs_opts_wrap(f, text, 0, 0, 82);
    fprintf(f,
            "\n"
            "Then checks the rule of thumb\n  \"%s\"\n"
            "on this cluster and rank count: generic models of 1B-70B parameters (the\n"
            "scenario's sequence length, vocabulary, micro-batch and training settings), the\n"
            "fastest of ddp / fsdp_shard_grad_op / fsdp_full_shard that fits at each, whether\n"
            "it is the rule's pick, and DDP's speed over FULL_SHARD below 3B. A pick within\n"
            "1 %% of the fastest counts as agreeing (a tie: closer than the simulator's\n"
            "accuracy). Equally fast configurations rank by lower peak memory.\n"
            "\n",
            cs_plan_rule_text());
    cs_cli_train_help(f);
    fprintf(f,
            "                         (for plan --ranks N alone replaces the scenario's ranks\n"
            "                         and nodes: N ranks filling the cluster's nodes in order)\n"
            "  --engine E             how collectives are timed, as for `collsim simulate`:\n"
            "                         analytic (default, or the scenario's collective_engine)\n"
            "                         or des\n"
            "  --format F             table (default) or json\n"
            "  -o FILE                write to FILE (whole or not at all); default stdout\n"
            "\n");
    cs_cli_exit_help(f);
}

/* The search space the options give (cs_plan_space). */
static cs_plan_space space_of(const cs_cli_train *t)
{
    cs_plan_space sp = {0};
    for (int i = 0; i < t->strategies.n; i++) sp.strategies |= 1u << t->strategies.v[i];
    if (t->knobs.ckpt >= 0) sp.ckpts = 1u << t->knobs.ckpt;
    sp.tp = t->knobs.tp; /* 0: searched */
    sp.pp = t->knobs.pp;
    if (t->knobs.pp_schedule_set) sp.schedules = 1u << t->knobs.pp_schedule;
    sp.sac_set = t->knobs.sac_set;
    sp.sac = t->knobs.sac;
    return sp;
}

int cs_cmd_plan(int argc, char **argv)
{
    pargs a = {.t = CS_CLI_TRAIN_UNSET, .fmt = CS_FORMAT_TABLE};
    int next, rc = cs_opts_parse(CMD, opts, N(opts), argc, argv, &a, help, &next);
    if (rc >= 0) return rc;
    if ((rc = cs_cli_train_positional(CMD, &a.t, argc, argv, next)) >= 0) return rc;
    if ((rc = cs_cli_outputs_check(CMD, &a.out, 1)) >= 0) return rc;
    cs_scenario *sc = cs_xcalloc(1, sizeof *sc);
    cs_topology *topo = cs_xcalloc(1, sizeof *topo);
    cs_training t;
    cs_plan p = {0};
    cs_diag d;
    cs_diag_clear(&d);
    rc = cs_cli_train_resolve(&a.t, sc, &d);
    if (rc == 0 && a.t.ranks && !a.t.nodes) sc->nodes = 0;
    if (rc == 0) rc = cs_topology_build(&sc->cluster, sc->ranks, sc->nodes, topo, &d);
    int usage = 0;
    if (rc == 0)
        usage = cs_cli_train_training(CMD, &a.t, sc, sc->training.strategy, topo->ranks, &t);
    if (rc == 0 && !usage) cs_cli_warn_des(CMD, &sc->cluster, t.collective_engine);
    cs_plan_space sp = space_of(&a.t);
    if (rc == 0 && !usage) rc = cs_plan_run(&sc->model, &t, topo, &sp, &p, &d);
    if (rc == 0 && !usage) {
        cs_buf out = {0};
        cs_plan_report(&out, (cs_format)a.fmt, a.t.scenario, &p);
        const cs_buf *bufs[] = {&out};
        rc = cs_cli_outputs_write(bufs, &a.out, 1, &d);
        cs_buf_free(&out);
    }
    cs_plan_free(&p);
    free(topo);
    free(sc);
    if (usage) return usage;
    return rc ? cs_cli_fail(&d) : CS_EXIT_OK;
}
