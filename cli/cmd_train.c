/* SPDX-License-Identifier: MIT */
/*
 * cmd_train.c - `collsim memory` and `collsim simulate`: argument parsing
 * (opts.h) and writing only. Each row is one train/evaluate.h
 * configuration; the report is out/train_report.c's, the trace and the
 * schedule out/trace.c's and out/schedule.c's.
 *
 * Both take a scenario YAML (optional) and CLI overrides of its parts; a
 * comma-separated --strategy gives one row per strategy. The two commands
 * share every option but --engine, which memory refuses (it times no
 * collectives). Both accept --trace, --emit-schedule and
 * --model-states-only; memory has no iteration, so its trace and schedule
 * files are written empty.
 */
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "opts.h"
#include "outputs.h"
#include "out/schedule.h"
#include "out/trace.h"
#include "out/train_report.h"
#include "train/evaluate.h"
#include "train/scenario.h"

#define N(a) (sizeof a / sizeof a[0])

typedef struct targs {
    const char *cmd;
    const char *scenario, *cluster, *model, *out, *trace, *schedule;
    double params;
    int ranks, nodes;
    cs_cli_strategies strategies;
    cs_cli_knobs knobs; /* engine: simulate only */
    int model_states_only;
    int fmt;
} targs;

/* memory prices no collectives: an engine there would be a silent no-op */
static int refuse_engine(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    (void)o, (void)arg, (void)dst;
    return cs_cli_usage(cmd, "%s",
                        "--engine applies to `collsim simulate` (memory times no collectives)");
}

#define AT(f) CS_ARG_AT(targs, f)
#define TRAIN_OPTS                                                                                 \
    CS_ARG_CLUSTER(targs, cluster), CS_ARG_NODES(targs, nodes), CS_ARG_RANKS(targs, ranks),        \
        {"model", .parse = cs_opt_string, AT(model)},                                              \
        {"params", .parse = cs_opt_params, AT(params)},                                            \
        {"strategy", .parse = cs_opt_strategies, AT(strategies)},                                  \
        CS_ARG_TRAINING_DTYPE(targs, knobs.dtype), CS_ARG_MICRO_BATCH(targs, knobs.micro_batch),   \
        CS_ARG_GRAD_ACCUM(targs, knobs.grad_accum), CS_ARG_CKPT(targs, knobs.ckpt),                \
        CS_ARG_ATTENTION(targs, knobs.attention), CS_ARG_FORMAT(targs, fmt),                       \
        {"model-states-only", .flag = 1, .parse = cs_opt_set, AT(model_states_only)},              \
        {"trace", .parse = cs_opt_string, AT(trace)},                                              \
        {"emit-schedule", .parse = cs_opt_string, AT(schedule)}, CS_ARG_OUTPUT(targs, out)
static const cs_opt memory_opts[] = {TRAIN_OPTS, {"engine", .parse = refuse_engine}};
static const cs_opt simulate_opts[] = {TRAIN_OPTS,
                                       CS_ARG_ENGINE(targs, knobs.engine, CS_SAYS_EXPECTS)};
#undef AT

static void common_help(FILE *f)
{
    fprintf(f,
            "  SCENARIO.yaml          optional: cluster, model, training and ranks in one file\n"
            "                         (configs/scenarios/); options below override it.\n"
            "  --cluster FILE|PRESET  cluster YAML or preset (default %s)\n"
            "  --ranks N / --nodes K  as for `collsim collective` (default: the cluster's size)\n"
            "  --model FILE|PRESET    model YAML or preset (gpt2-124m ... llama3-70b)\n"
            "  --params P             a generic model of P parameters (13e9, 7B, 70B)\n"
            "  --strategy S[,S...]    ",
            CS_DEFAULT_CLUSTER);
    char list[256], text[320];
    cs_opts_list(list, sizeof list, &cs_choice_strategy);
    snprintf(text, sizeof text, "%s (default %s)", list, cs_strategy_name(CS_STRAT_DDP));
    cs_opts_wrap(f, text, 25, 25, 80);
    fprintf(f,
            "  --dtype T              fp32|bf16|fp16: one dtype for params, gradients and every\n"
            "                         collective (pure low-precision training, no fp32 master\n"
            "                         weights); mixed precision is set in the scenario YAML\n"
            "  --micro-batch B        sequences per GPU per micro-step (default 1)\n"
            "  --grad-accum G         micro-steps per optimizer step (default 1)\n"
            "  --checkpointing C      activation checkpointing: none | selective | full\n"
            "  --attention A          flash (default: fused attention, no stored s x s scores,\n"
            "                         as PyTorch SDPA) or standard (Korthikanti Table 2 as is)\n"
            "  --format F             table (default), csv or json;  -o FILE  output file\n");
}

static void memory_help(FILE *f)
{
    fprintf(f, "Usage: collsim memory [SCENARIO.yaml] [options] [--model-states-only]\n\n"
               "Per-GPU memory of a data-parallel strategy: parameters, gradients, optimizer\n"
               "states (each divided by its sharding degree), activations, FSDP unsharded units,\n"
               "DDP buckets, temporary buffers, CUDA context, NCCL buffers, fragmentation; the\n"
               "peak, the OOM verdict and the largest micro-batch that fits.\n\n");
    common_help(f);
    fprintf(f, "  --model-states-only    parameters + gradients + optimizer states only (the ZeRO\n"
               "                         paper's view, Rajbhandari et al. 2020 Table 1)\n\n"
               "Memory times no collectives: --engine is refused here, and a scenario's\n"
               "collective_engine is ignored.\n"
               "CSV columns: %s\n",
            cs_train_report_columns(0));
    cs_cli_exit_help(f);
}

static void simulate_help(FILE *f)
{
    fprintf(f, "Usage: collsim simulate [SCENARIO.yaml] [options] [--trace FILE] [--emit-schedule FILE]\n\n"
               "Simulates one training iteration (all micro-batches and the optimizer step) as\n"
               "PyTorch runs it: DDP buckets overlapping backward, FSDP all-gathers with prefetch\n"
               "and reduce-scatters, ZeRO-1; compute and communication on their own streams.\n\n");
    common_help(f);
    fprintf(f, "  --engine E             how collectives are timed: analytic (default: NCCL's\n"
               "                         closed form) or des (the algorithm and protocol the closed\n"
               "                         form picks, as NCCL's tuner does, timed by the\n"
               "                         discrete-event run on the process group's topology;\n"
               "                         slower); the scenario key is training.collective_engine\n"
               "  --trace FILE           Chrome/Perfetto trace JSON (open in ui.perfetto.dev)\n"
               "  --emit-schedule FILE   the iteration's task graph as JSON (for collsim-hw replay)\n\n"
               "CSV columns: %s\nBytes columns are bytes sent per rank per iteration.\n",
            cs_train_report_columns(1));
    cs_cli_exit_help(f);
}

/* Parses argv; returns -1 to continue, else an exit code. */
static int parse(int argc, char **argv, targs *a, const cs_opt *opts, size_t n,
                 void (*help)(FILE *))
{
    int next, rc = cs_opts_parse(a->cmd, opts, n, argc, argv, a, help, &next);
    if (rc >= 0) return rc;
    if (next < argc) a->scenario = argv[next++];
    if (next < argc) return cs_cli_usage(a->cmd, "unexpected argument '%s'", argv[next]);
    if (a->model && a->params > 0)
        return cs_cli_usage(a->cmd, "%s", "--model and --params are alternatives: give one");
    return -1;
}

/* Resolves scenario + overrides into the parts one row needs. */
static int resolve(const targs *a, cs_scenario *sc, cs_diag *d)
{
    memset(sc, 0, sizeof *sc);
    int rc;
    if (a->scenario) {
        rc = cs_scenario_load_file(a->scenario, sc, d);
        if (rc) return rc;
    } else {
        rc = cs_config_cluster(CS_DEFAULT_CLUSTER, &sc->cluster, d);
        if (rc) return rc;
        cs_training_defaults(&sc->training, CS_STRAT_DDP);
        rc = cs_model_load("llama2-7b", &sc->model, d);
        if (rc) return rc;
    }
    if (a->cluster && (rc = cs_config_cluster(a->cluster, &sc->cluster, d))) return rc;
    if (a->model && (rc = cs_model_load(a->model, &sc->model, d))) return rc;
    if (a->params > 0 && (rc = cs_model_generic(a->params, &sc->model, d))) return rc;
    if (a->ranks) sc->ranks = a->ranks;
    if (a->nodes) sc->nodes = a->nodes;
    return 0;
}

/* What the rows were evaluated from, and what they give besides the report. */
typedef struct batch {
    const targs *a;
    int simulated;
    const cs_scenario *sc;
    const cs_topology *topo;
    cs_evaluation evs[CS_STRAT_COUNT];
    cs_train_row rows[CS_STRAT_COUNT];
    int n, des;
    cs_buf trace, sched;
} batch;

/* Evaluates the strategy of row b->n (the scenario's training, or the
 * defaults of that strategy, with the options' overrides). */
static int evaluate_row(batch *b, cs_strategy s, cs_diag *d)
{
    const targs *a = b->a;
    cs_training t = b->sc->training;
    if (!a->scenario) cs_training_defaults(&t, s);
    t.strategy = s;
    cs_cli_knobs_apply(&a->knobs, &t);
    b->des = t.collective_engine == CS_ENGINE_DES;
    cs_workload *w = NULL;
    cs_evaluate_opts o = {.simulate = b->simulated, .model_states_only = a->model_states_only,
                          .workload = a->trace || a->schedule ? &w : NULL};
    cs_evaluation *ev = &b->evs[b->n];
    int rc = cs_evaluate_config(&b->sc->model, &t, b->topo, &o, ev, d);
    if (rc) return rc;
    b->rows[b->n++] = (cs_train_row){
        .strategy = s,
        .ev = ev,
        .max_micro_batch =
            a->model_states_only ? 0 : cs_memory_max_micro_batch(&b->sc->model, &t, b->topo),
    };
    if (w && a->trace) cs_trace_write(w, &ev->iteration, &b->trace);
    if (w && a->schedule) cs_schedule_write(w, &b->sched);
    cs_workload_free(w);
    return 0;
}

/* The report, then the trace and the schedule when asked. */
static int write_outputs(const batch *b, cs_diag *d)
{
    const targs *a = b->a;
    cs_train_report_head h = {.simulated = b->simulated, .model = &b->sc->model, .topo = b->topo,
                              .des = b->simulated && b->n > 0 && b->des};
    cs_buf out = {0};
    cs_train_report(&out, (cs_format)a->fmt, &h, b->rows, (size_t)b->n);
    const cs_buf *bufs[3] = {&out};
    const char *paths[3] = {a->out};
    size_t n = 1;
    if (a->trace) bufs[n] = &b->trace, paths[n++] = a->trace;
    if (a->schedule) bufs[n] = &b->sched, paths[n++] = a->schedule;
    int rc = cs_cli_outputs_write(bufs, paths, n, d);
    cs_buf_free(&out);
    return rc;
}

static int run(int argc, char **argv, int simulated)
{
    targs a = {.cmd = simulated ? "simulate" : "memory", .knobs = CS_CLI_KNOBS_UNSET,
               .fmt = CS_FORMAT_TABLE};
    int rc = simulated ? parse(argc, argv, &a, simulate_opts, N(simulate_opts), simulate_help)
                       : parse(argc, argv, &a, memory_opts, N(memory_opts), memory_help);
    if (rc >= 0) return rc;
    const char *paths[] = {a.out, a.trace, a.schedule};
    if ((rc = cs_cli_outputs_check(a.cmd, paths, N(paths))) >= 0) return rc;
    cs_diag d;
    cs_diag_clear(&d);
    cs_scenario sc;
    if (resolve(&a, &sc, &d)) return cs_cli_fail(&d);
    cs_topology topo;
    if (cs_topology_build(&sc.cluster, sc.ranks, sc.nodes, &topo, &d)) return cs_cli_fail(&d);
    if (a.strategies.n == 0)
        a.strategies = (cs_cli_strategies){1, {a.scenario ? sc.training.strategy : CS_STRAT_DDP}};
    if (simulated && (a.trace || a.schedule) && a.strategies.n > 1)
        return cs_cli_usage(a.cmd, "%s", "--trace and --emit-schedule need a single --strategy");
    batch b = {.a = &a, .simulated = simulated, .sc = &sc, .topo = &topo};
    rc = 0;
    for (int i = 0; i < a.strategies.n && rc == 0; i++)
        rc = evaluate_row(&b, a.strategies.v[i], &d);
    if (rc == 0) rc = write_outputs(&b, &d);
    for (int i = 0; i < b.n; i++) cs_evaluate_free(&b.evs[i]);
    cs_buf_free(&b.trace);
    cs_buf_free(&b.sched);
    return rc ? cs_cli_fail(&d) : CS_EXIT_OK;
}

int cs_cmd_memory(int argc, char **argv) { return run(argc, argv, 0); }
int cs_cmd_simulate(int argc, char **argv) { return run(argc, argv, 1); }
