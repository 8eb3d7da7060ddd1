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
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "trainargs.h"
#include "out/kernel_report.h"
#include "outputs.h"
#include "out/schedule.h"
#include "out/trace.h"
#include "out/train_report.h"
#include "train/evaluate.h"
#include "train/pipeline.h"
#include "train/scenario.h"

#define N(a) (sizeof a / sizeof a[0])

typedef struct targs {
    const char *cmd;
    cs_cli_train t; /* engine: simulate only */
    const char *out, *trace, *schedule, *kernels;
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
    CS_ARG_TRAIN(targs, t), CS_ARG_FORMAT(targs, fmt),                                             \
        {"model-states-only", .flag = 1, .parse = cs_opt_set, AT(model_states_only)},              \
        {"trace", .parse = cs_opt_string, AT(trace)},                                              \
        {"emit-schedule", .parse = cs_opt_string, AT(schedule)},                                   \
        {"kernels", .parse = cs_opt_string, AT(kernels)}, CS_ARG_OUTPUT(targs, out)
static const cs_opt memory_opts[] = {TRAIN_OPTS, {"engine", .parse = refuse_engine}};
static const cs_opt simulate_opts[] = {TRAIN_OPTS,
                                       CS_ARG_ENGINE(targs, t.knobs.engine, CS_SAYS_EXPECTS)};
#undef AT

static void common_help(FILE *f)
{
    cs_cli_train_help(f);
    fprintf(f, "  --format F             table (default), csv or json;  -o FILE  output file\n");
}

static void memory_help(FILE *f)
{
    fprintf(f, "Usage: collsim memory [SCENARIO] [options] [--model-states-only]\n\n"
               "Per-GPU memory of a data-parallel strategy: parameters, gradients, optimizer\n"
               "states (each divided by its sharding degree), activations, FSDP unsharded units,\n"
               "DDP buckets, temporary buffers, CUDA context, NCCL buffers; then one rank's\n"
               "iteration replayed through PyTorch's caching allocator: peak allocated, peak\n"
               "reserved (what the cache holds beyond the tensors), the peak (reserved + CUDA\n"
               "context + NCCL buffers), the OOM verdict on it and the largest micro-batch that\n"
               "fits.\n\n");
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
    fprintf(f, "Usage: collsim simulate [SCENARIO] [options] [--trace FILE] [--emit-schedule FILE]\n\n"
               "Simulates one training iteration (all micro-batches and the optimizer step) as\n"
               "PyTorch runs it: DDP buckets overlapping backward, FSDP all-gathers with prefetch\n"
               "and reduce-scatters, ZeRO-1; compute and communication on their own streams.\n\n");
    common_help(f);
    fprintf(f, "  --engine E             how collectives are timed: analytic (default: NCCL's\n"
               "                         closed form) or des (the algorithm and protocol the closed\n"
               "                         form picks, as NCCL's tuner does, timed by the\n"
               "                         discrete-event run on the process group's topology;\n"
               "                         slower); the scenario key is training.collective_engine\n"
               "  --trace FILE           Chrome/Perfetto trace JSON (open in ui.perfetto.dev): a\n"
               "                         process per strategy, a track per stream\n"
               "  --emit-schedule FILE   the iteration's task graph as JSON (for collsim-hw replay)\n"
               "  --kernels FILE         the compute model's kernels of one layer and the head, CSV\n"
               "                         (pass, kernel, class, m, n, k, batch, flops, bytes,\n"
               "                         efficiency, time_us): where compute time goes, and the\n"
               "                         shapes `collsim-hw compute --shapes FILE` measures\n\n"
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
    return cs_cli_train_positional(a->cmd, &a->t, argc, argv, next);
}

/* What the rows were evaluated from, and what they give besides the report. */
typedef struct batch {
    const targs *a;
    int simulated;
    const cs_scenario *sc;
    const cs_topology *topo;
    cs_evaluation evs[CS_STRAT_COUNT];
    cs_train_row rows[CS_STRAT_COUNT];
    cs_pp_memory *stages[CS_STRAT_COUNT]; /* a pipeline's, else NULL */
    int n, des;
    cs_buf trace, sched, kernels;
} batch;

/* Evaluates the strategy of row b->n (the scenario's training, or the
 * defaults of that strategy, with the options' overrides). Returns 0, a
 * negative CS_E* code with d filled, or an exit code (message printed). */
static int evaluate_row(batch *b, cs_strategy s, cs_diag *d)
{
    const targs *a = b->a;
    cs_training t;
    int rc = cs_cli_train_training(a->cmd, &a->t, b->sc, s, b->topo->ranks, &t);
    if (rc) return rc;
    b->des = t.collective_engine == CS_ENGINE_DES;
    if (b->simulated && b->n == 0) cs_cli_warn_des(a->cmd, &b->sc->cluster, t.collective_engine);
    cs_workload *w = NULL;
    cs_pp_timeline tl = {0}; /* a pipeline's, in place of the graph (simulate only, as the
                              * graph: memory writes its trace and schedule empty) */
    int pp = cs_pipeline_degree(&t) > 1, graph = a->trace || a->schedule;
    cs_evaluate_opts o = {.simulate = b->simulated, .model_states_only = a->model_states_only,
                          .workload = graph && !pp ? &w : NULL,
                          .timeline = graph && pp && b->simulated ? &tl : NULL};
    cs_evaluation *ev = &b->evs[b->n];
    cs_pp_memory *stages = NULL;
    if (cs_pipeline_degree(&t) > 1) o.stages = b->stages[b->n] = stages = cs_xmalloc(sizeof *stages);
    rc = cs_evaluate_config(&b->sc->model, &t, b->topo, &o, ev, d);
    if (rc) return rc;
    b->rows[b->n++] = (cs_train_row){
        .stages = stages,
        .strategy = s,
        .ev = ev,
        .max_micro_batch =
            a->model_states_only ? 0
                                 : cs_evaluate_max_micro_batch(&b->sc->model, &t, b->topo, NULL),
    };
    if (a->kernels && b->n == 1) /* the first row's training: kernels do not depend on strategy */
        cs_kernel_report(&b->kernels, CS_FORMAT_CSV, &b->sc->model, &t, &b->sc->cluster);
    if (w && a->trace) { /* a process per strategy */
        char name[128];
        if (ev->iteration.nclasses > 0) /* ranks differ: a track set per rank class */
            snprintf(name, sizeof name, "%s: %d ranks", cs_strategy_name(s), b->topo->ranks);
        else
            snprintf(name, sizeof name, "%s: rank 0 of %d", cs_strategy_name(s), b->topo->ranks);
        cs_trace_add(&b->trace, b->n - 1, name, w, &ev->iteration);
    }
    if (w && a->schedule) cs_schedule_write(w, &b->sched);
    if (tl.P && a->trace) {
        char name[128];
        snprintf(name, sizeof name, "%s: %d pipeline stages of %d ranks", cs_strategy_name(s),
                 tl.P, b->topo->ranks);
        cs_trace_add_pipeline(&b->trace, b->n - 1, name, &tl);
    }
    if (tl.P && a->schedule) cs_schedule_write_pipeline(&tl, &b->sched);
    cs_pp_timeline_free(&tl);
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
    const cs_buf *bufs[4] = {&out};
    const char *paths[4] = {a->out};
    size_t n = 1;
    if (a->trace) bufs[n] = &b->trace, paths[n++] = a->trace;
    if (a->schedule) bufs[n] = &b->sched, paths[n++] = a->schedule;
    if (a->kernels) bufs[n] = &b->kernels, paths[n++] = a->kernels;
    int rc = cs_cli_outputs_write(bufs, paths, n, d);
    cs_buf_free(&out);
    return rc;
}

static int run(int argc, char **argv, int simulated)
{
    targs a = {.cmd = simulated ? "simulate" : "memory", .t = CS_CLI_TRAIN_UNSET,
               .fmt = CS_FORMAT_TABLE};
    int rc = simulated ? parse(argc, argv, &a, simulate_opts, N(simulate_opts), simulate_help)
                       : parse(argc, argv, &a, memory_opts, N(memory_opts), memory_help);
    if (rc >= 0) return rc;
    const char *paths[] = {a.out, a.trace, a.schedule, a.kernels};
    if ((rc = cs_cli_outputs_check(a.cmd, paths, N(paths))) >= 0) return rc;
    cs_diag d;
    cs_diag_clear(&d);
    cs_scenario sc;
    if (cs_cli_train_resolve(&a.t, &sc, &d)) return cs_cli_fail(&d);
    cs_topology topo;
    if (cs_topology_build(&sc.cluster, sc.ranks, sc.nodes, &topo, &d)) return cs_cli_fail(&d);
    cs_cli_strategies *ss = &a.t.strategies;
    if (ss->n == 0) *ss = (cs_cli_strategies){1, {a.t.scenario ? sc.training.strategy : CS_STRAT_DDP}};
    if (simulated && a.schedule && ss->n > 1)
        return cs_cli_usage(a.cmd, "%s", "--emit-schedule needs a single --strategy");
    batch b = {.a = &a, .simulated = simulated, .sc = &sc, .topo = &topo};
    if (simulated && a.trace) cs_trace_begin(&b.trace);
    rc = 0;
    for (int i = 0; i < ss->n && rc == 0; i++) rc = evaluate_row(&b, ss->v[i], &d);
    if (simulated && a.trace) cs_trace_end(&b.trace);
    if (rc == 0) rc = write_outputs(&b, &d);
    for (int i = 0; i < b.n; i++) cs_evaluate_free(&b.evs[i]);
    for (int i = 0; i < CS_STRAT_COUNT; i++) free(b.stages[i]);
    cs_buf_free(&b.trace);
    cs_buf_free(&b.sched);
    cs_buf_free(&b.kernels);
    if (rc > 0) return rc; /* a usage error, already printed */
    return rc ? cs_cli_fail(&d) : CS_EXIT_OK;
}

int cs_cmd_memory(int argc, char **argv) { return run(argc, argv, 0); }
int cs_cmd_simulate(int argc, char **argv) { return run(argc, argv, 1); }
