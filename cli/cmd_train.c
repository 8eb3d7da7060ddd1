/* SPDX-License-Identifier: MIT */
/*
 * cmd_train.c - `collsim memory` and `collsim simulate`: argument parsing
 * and output only; each row is one train/evaluate.h configuration.
 *
 * Both take a scenario YAML (optional) and CLI overrides of its parts; a
 * comma-separated --strategy gives one row per strategy.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config/config.h"
#include "train/evaluate.h"
#include "train/scenario.h"
#include "train/strategy.h"
#include "config/presets.h"
#include "out/report.h"
#include "out/schedule.h"
#include "out/trace.h"
#include "train/training.h"
#include "base/units.h"

#define MAX_STRATEGIES CS_STRAT_COUNT

typedef struct train_args {
    const char *cmd;
    const char *scenario;
    const char *cluster, *model, *out, *trace, *schedule;
    double params;
    int ranks, nodes;
    int strategies[MAX_STRATEGIES], nstrategies;
    int dtype; /* -1 = from scenario */
    int micro_batch, grad_accum, ckpt, attention;
    int engine; /* -1 = from scenario */
    int model_states_only;
    cs_format fmt;
} train_args;

static const char *const ckpt_names[] = {"none", "selective", "full"};

static void common_help(FILE *f)
{
    fprintf(f,
            "  SCENARIO.yaml          optional: cluster, model, training and ranks in one file\n"
            "                         (configs/scenarios/); options below override it.\n"
            "  --cluster FILE|PRESET  cluster YAML or preset (default %s)\n"
            "  --ranks N / --nodes K  as for `collsim collective` (default: the cluster's size)\n"
            "  --model FILE|PRESET    model YAML or preset (gpt2-124m ... llama3-70b)\n"
            "  --params P             a generic model of P parameters (13e9, 7B, 70B)\n"
            "  --strategy S[,S...]    ddp, zero1, fsdp_no_shard, fsdp_shard_grad_op,\n"
            "                         fsdp_full_shard, fsdp_hybrid_shard (default ddp)\n"
            "  --dtype T              fp32|bf16|fp16: one dtype for params, gradients and every\n"
            "                         collective (pure low-precision training, no fp32 master\n"
            "                         weights); mixed precision is set in the scenario YAML\n"
            "  --micro-batch B        sequences per GPU per micro-step (default 1)\n"
            "  --grad-accum G         micro-steps per optimizer step (default 1)\n"
            "  --checkpointing C      activation checkpointing: none | selective | full\n"
            "  --attention A          flash (default: fused attention, no stored s x s scores,\n"
            "                         as PyTorch SDPA) or standard (Korthikanti Table 2 as is)\n"
            "  --format F             table (default), csv or json;  -o FILE  output file\n",
            CS_DEFAULT_CLUSTER);
}

/* Parses argv; returns -1 on success-continue, else an exit code. */
static int parse(int argc, char **argv, train_args *a, void (*help)(FILE *))
{
    enum { O_CLUSTER = 256, O_NODES, O_RANKS, O_MODEL, O_PARAMS, O_STRATEGY, O_DTYPE, O_MB,
           O_GA, O_CKPT, O_FORMAT, O_MSO, O_TRACE, O_SCHED, O_ATTN, O_ENGINE };
    static const struct option opts[] = {
        {"cluster", required_argument, 0, O_CLUSTER}, {"nodes", required_argument, 0, O_NODES},
        {"ranks", required_argument, 0, O_RANKS},     {"model", required_argument, 0, O_MODEL},
        {"params", required_argument, 0, O_PARAMS},   {"strategy", required_argument, 0, O_STRATEGY},
        {"dtype", required_argument, 0, O_DTYPE},     {"micro-batch", required_argument, 0, O_MB},
        {"grad-accum", required_argument, 0, O_GA},   {"checkpointing", required_argument, 0, O_CKPT},
        {"format", required_argument, 0, O_FORMAT},   {"model-states-only", no_argument, 0, O_MSO},
        {"trace", required_argument, 0, O_TRACE},     {"emit-schedule", required_argument, 0, O_SCHED},
        {"attention", required_argument, 0, O_ATTN},  {"engine", required_argument, 0, O_ENGINE},
        {"output", required_argument, 0, 'o'},        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int ch;
    const char *cmd = a->cmd;
    while ((ch = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (ch) {
        case O_CLUSTER: a->cluster = optarg; break;
        case O_NODES:
            if (cs_cli_int(cmd, "--nodes", optarg, 1, 1000000, &a->nodes)) return CS_EXIT_USAGE;
            break;
        case O_RANKS:
            if (cs_cli_int(cmd, "--ranks", optarg, 1, 100000000, &a->ranks)) return CS_EXIT_USAGE;
            break;
        case O_MODEL: a->model = optarg; break;
        case O_PARAMS:
            if (cs_cli_params(optarg, &a->params))
                return cs_cli_usage(cmd, "--params expects a count > 0 such as 13e9 or 7B, got '%s'", optarg);
            break;
        case O_STRATEGY: {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", optarg);
            a->nstrategies = 0;
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                cs_strategy s;
                if (cs_strategy_parse(tok, &s)) {
                    char msg[640];
                    cs_strategy_unknown(tok, msg, sizeof msg);
                    return cs_cli_usage(cmd, "%s", msg);
                }
                if (a->nstrategies < MAX_STRATEGIES) a->strategies[a->nstrategies++] = s;
            }
            break;
        }
        case O_DTYPE: {
            cs_dtype t;
            if (cs_dtype_parse(optarg, &t) ||
                (t != CS_DTYPE_FP32 && t != CS_DTYPE_BF16 && t != CS_DTYPE_FP16))
                return cs_cli_usage(cmd, "--dtype expects fp32, bf16 or fp16, got '%s'", optarg);
            a->dtype = t;
            break;
        }
        case O_MB:
            if (cs_cli_int(cmd, "--micro-batch", optarg, 1, 1 << 20, &a->micro_batch)) return CS_EXIT_USAGE;
            break;
        case O_GA:
            if (cs_cli_int(cmd, "--grad-accum", optarg, 1, 1 << 20, &a->grad_accum)) return CS_EXIT_USAGE;
            break;
        case O_CKPT: {
            int k = -1;
            for (int i = 0; i < 3; i++)
                if (!strcmp(optarg, ckpt_names[i])) k = i;
            if (k < 0) return cs_cli_usage(cmd, "--checkpointing expects none, selective or full, got '%s'", optarg);
            a->ckpt = k;
            break;
        }
        case O_ATTN:
            if (!strcmp(optarg, "flash")) a->attention = 1;
            else if (!strcmp(optarg, "standard")) a->attention = 0;
            else return cs_cli_usage(cmd, "--attention expects flash or standard, got '%s'", optarg);
            break;
        case O_ENGINE:
            /* memory prices no collectives: an engine there would be a
             * silent no-op, so it is refused */
            if (strcmp(cmd, "simulate"))
                return cs_cli_usage(cmd, "%s", "--engine applies to `collsim simulate` (memory "
                                               "times no collectives)");
            if (!strcmp(optarg, "analytic")) a->engine = CS_ENGINE_ANALYTIC;
            else if (!strcmp(optarg, "des")) a->engine = CS_ENGINE_DES;
            else return cs_cli_usage(cmd, "--engine expects analytic or des, got '%s'", optarg);
            break;
        case O_FORMAT:
            if (cs_format_parse(optarg, &a->fmt))
                return cs_cli_usage(cmd, "unknown --format '%s' (expected table, csv or json)", optarg);
            break;
        case O_MSO: a->model_states_only = 1; break;
        case O_TRACE: a->trace = optarg; break;
        case O_SCHED: a->schedule = optarg; break;
        case 'o': a->out = optarg; break;
        case 'h': help(stdout); return CS_EXIT_OK;
        case ':': return cs_cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return cs_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) a->scenario = argv[optind++];
    if (optind < argc) return cs_cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (a->model && a->params > 0)
        return cs_cli_usage(cmd, "%s", "--model and --params are alternatives: give one");
    return -1;
}

/* Resolves scenario + overrides into the parts one row needs. */
static int resolve(const train_args *a, cs_scenario *sc, cs_diag *d)
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

static void apply_overrides(const train_args *a, cs_training *t, cs_strategy s, int from_scenario)
{
    if (!from_scenario) cs_training_defaults(t, s);
    t->strategy = s;
    if (a->dtype >= 0) {
        t->param_dtype = t->grad_reduce_dtype = (cs_dtype)a->dtype;
        t->master_weights_fp32 = 0;
    }
    if (a->micro_batch) t->micro_batch = a->micro_batch;
    if (a->grad_accum) t->grad_accum = a->grad_accum;
    if (a->ckpt >= 0) t->checkpointing = (cs_ckpt)a->ckpt;
    if (a->attention >= 0) t->flash_attention = a->attention;
    if (a->engine >= 0) t->collective_engine = (cs_engine_kind)a->engine;
}

typedef struct row {
    cs_strategy strategy;
    int ranks;
    double params;
    cs_memory mem;
    int max_mb;
    int simulated;
    cs_iteration it;
} row;

static void gib(cs_buf *b, const char *label, double bytes)
{
    cs_buf_printf(b, "  %-34s %10.2f GiB\n", label, bytes / (1024.0 * 1024 * 1024));
}

static const char *const mem_cols =
    "strategy,ranks,params,params_bytes,grads_bytes,optimizer_bytes,model_states_bytes,"
    "activations_bytes,overhead_bytes,peak_bytes,capacity_bytes,fits,unsharded_bytes,"
    "buckets_bytes,temp_bytes,cuda_context_bytes,nccl_bytes,fragmentation_bytes,max_micro_batch";
static const char *const sim_cols =
    ",iteration_time_s,tokens_per_s,tflops_per_gpu,mfu,exposed_comm_s,all_reduce_bytes,"
    "all_gather_bytes,reduce_scatter_bytes,compute_s,optimizer_s,exposed_all_reduce_s,"
    "exposed_all_gather_s,exposed_reduce_scatter_s,peak_time_s";

static void render(cs_buf *b, cs_format f, const char *title, const row *rows, int n, int sim)
{
    if (f == CS_FORMAT_CSV) {
        cs_buf_printf(b, "%s%s\n", mem_cols, sim ? sim_cols : "");
    } else if (f == CS_FORMAT_JSON) {
        cs_buf_printf(b, "{\n  \"title\": ");
        cs_buf_json_string(b, title);
        cs_buf_printf(b, ",\n  \"rows\": [");
    } else {
        cs_buf_printf(b, "# %s\n", title);
    }
    for (int i = 0; i < n; i++) {
        const row *r = &rows[i];
        const cs_memory *m = &r->mem;
        double peak = sim ? r->it.peak_bytes : m->peak_bytes;
        int fits = peak <= m->capacity_bytes;
        if (f == CS_FORMAT_TABLE) {
            cs_buf_printf(b, "\n%s on %d ranks, %.3g parameters\n", cs_strategy_name(r->strategy),
                          r->ranks, r->params);
            gib(b, "parameters", m->params_bytes);
            gib(b, "gradients", m->grads_bytes);
            gib(b, "optimizer states", m->optimizer_bytes);
            gib(b, "= model states", m->model_states_bytes);
            gib(b, "activations", m->activations_bytes);
            gib(b, "FSDP unsharded units", m->unsharded_bytes);
            gib(b, "gradient buckets", m->buckets_bytes);
            gib(b, "temporary buffers (logits)", m->temp_bytes);
            gib(b, "CUDA context", m->cuda_context_bytes);
            gib(b, "NCCL buffers", m->nccl_bytes);
            gib(b, "allocator fragmentation", m->fragmentation_bytes);
            gib(b, sim ? "peak (simulated timeline)" : "peak", peak);
            gib(b, "GPU capacity", m->capacity_bytes);
            cs_buf_printf(b, "  %-34s %s (peak at %s)\n", "verdict", fits ? "fits" : "OUT OF MEMORY",
                          sim ? r->it.peak_task : m->peak_phase);
            cs_buf_printf(b, "  %-34s %d\n", "largest micro-batch that fits", r->max_mb);
            if (sim) {
                const cs_iteration *it = &r->it;
                cs_buf_printf(b, "  %-34s %10.4f s\n", "iteration time", it->iteration_time_s);
                cs_buf_printf(b, "  %-34s %10.4f s\n", "  compute (incl. optimizer)", it->compute_s);
                cs_buf_printf(b, "  %-34s %10.4f s\n", "  optimizer step", it->optimizer_s);
                cs_buf_printf(b, "  %-34s %10.4f s\n", "  exposed communication", it->exposed_comm_s);
                for (int op = 0; op < CS_OP_COUNT; op++)
                    if (it->exposed_by_op_s[op] > 0 || it->wire_bytes_by_op[op] > 0)
                        cs_buf_printf(b, "    %-32s %10.4f s exposed, %10.3f GB sent per rank\n",
                                      cs_op_name((cs_op)op), it->exposed_by_op_s[op],
                                      it->wire_bytes_by_op[op] / 1e9);
                cs_buf_printf(b, "  %-34s %10.0f\n", "tokens/s (all GPUs)", it->tokens_per_s);
                cs_buf_printf(b, "  %-34s %10.1f\n", "model TFLOPS per GPU", it->tflops_per_gpu);
                cs_buf_printf(b, "  %-34s %10.1f %%\n", "MFU", 100 * it->mfu);
            }
            continue;
        }
        if (f == CS_FORMAT_JSON) cs_buf_printf(b, "%s\n    {", i ? "," : "");
        const char *sep = f == CS_FORMAT_CSV ? "," : ", ";
#define FIELD(name, fmt, val)                                                 \
    do {                                                                      \
        if (f == CS_FORMAT_JSON) cs_buf_printf(b, "%s\"%s\": " fmt, first ? "" : sep, name, val); \
        else cs_buf_printf(b, "%s" fmt, first ? "" : sep, val);               \
        first = 0;                                                            \
    } while (0)
        int first = 1;
        if (f == CS_FORMAT_JSON) {
            cs_buf_printf(b, "\"strategy\": \"%s\"", cs_strategy_name(r->strategy));
            first = 0;
        } else {
            FIELD("strategy", "%s", cs_strategy_name(r->strategy));
        }
        FIELD("ranks", "%d", r->ranks);
        FIELD("params", "%.0f", r->params);
        FIELD("params_bytes", "%.0f", m->params_bytes);
        FIELD("grads_bytes", "%.0f", m->grads_bytes);
        FIELD("optimizer_bytes", "%.0f", m->optimizer_bytes);
        FIELD("model_states_bytes", "%.0f", m->model_states_bytes);
        FIELD("activations_bytes", "%.0f", m->activations_bytes);
        FIELD("overhead_bytes", "%.0f", m->overhead_bytes);
        FIELD("peak_bytes", "%.0f", peak);
        FIELD("capacity_bytes", "%.0f", m->capacity_bytes);
        FIELD("fits", "%d", fits);
        FIELD("unsharded_bytes", "%.0f", m->unsharded_bytes);
        FIELD("buckets_bytes", "%.0f", m->buckets_bytes);
        FIELD("temp_bytes", "%.0f", m->temp_bytes);
        FIELD("cuda_context_bytes", "%.0f", m->cuda_context_bytes);
        FIELD("nccl_bytes", "%.0f", m->nccl_bytes);
        FIELD("fragmentation_bytes", "%.0f", m->fragmentation_bytes);
        FIELD("max_micro_batch", "%d", r->max_mb);
        if (sim) {
            const cs_iteration *it = &r->it;
            FIELD("iteration_time_s", "%.6f", it->iteration_time_s);
            FIELD("tokens_per_s", "%.1f", it->tokens_per_s);
            FIELD("tflops_per_gpu", "%.3f", it->tflops_per_gpu);
            FIELD("mfu", "%.5f", it->mfu);
            FIELD("exposed_comm_s", "%.6f", it->exposed_comm_s);
            FIELD("all_reduce_bytes", "%.0f", it->wire_bytes_by_op[CS_OP_ALL_REDUCE]);
            FIELD("all_gather_bytes", "%.0f", it->wire_bytes_by_op[CS_OP_ALL_GATHER]);
            FIELD("reduce_scatter_bytes", "%.0f", it->wire_bytes_by_op[CS_OP_REDUCE_SCATTER]);
            FIELD("compute_s", "%.6f", it->compute_s);
            FIELD("optimizer_s", "%.6f", it->optimizer_s);
            FIELD("exposed_all_reduce_s", "%.6f", it->exposed_by_op_s[CS_OP_ALL_REDUCE]);
            FIELD("exposed_all_gather_s", "%.6f", it->exposed_by_op_s[CS_OP_ALL_GATHER]);
            FIELD("exposed_reduce_scatter_s", "%.6f", it->exposed_by_op_s[CS_OP_REDUCE_SCATTER]);
            FIELD("peak_time_s", "%.6f", it->peak_time_s);
        }
#undef FIELD
        cs_buf_printf(b, f == CS_FORMAT_JSON ? "}" : "\n");
    }
    if (f == CS_FORMAT_JSON) cs_buf_printf(b, "\n  ]\n}\n");
}

static int run(int argc, char **argv, int sim, void (*help)(FILE *))
{
    train_args a = {.cmd = sim ? "simulate" : "memory", .dtype = -1, .ckpt = -1, .attention = -1,
                    .engine = -1, .fmt = CS_FORMAT_TABLE};
    int rc = parse(argc, argv, &a, help);
    if (rc >= 0) return rc;
    cs_diag d;
    cs_diag_clear(&d);
    cs_scenario sc;
    if (resolve(&a, &sc, &d)) return cs_cli_fail(&d);
    cs_topology topo;
    if (cs_topology_build(&sc.cluster, sc.ranks, sc.nodes, &topo, &d)) return cs_cli_fail(&d);
    if (a.nstrategies == 0) {
        a.strategies[0] = a.scenario ? (int)sc.training.strategy : CS_STRAT_DDP;
        a.nstrategies = 1;
    }
    if (sim && (a.trace || a.schedule) && a.nstrategies > 1)
        return cs_cli_usage(a.cmd, "%s", "--trace and --emit-schedule need a single --strategy");
    row rows[MAX_STRATEGIES];
    memset(rows, 0, sizeof rows);
    cs_buf trace = {0}, sched = {0};
    int n = 0, rows_des = 0;
    for (int i = 0; i < a.nstrategies; i++) {
        row *r = &rows[n];
        cs_training t = sc.training;
        apply_overrides(&a, &t, (cs_strategy)a.strategies[i], a.scenario != NULL);
        rows_des = t.collective_engine == CS_ENGINE_DES;
        r->strategy = t.strategy;
        r->ranks = topo.ranks;
        r->params = sc.model.params;
        cs_workload *w = NULL;
        cs_evaluate_opts o = {.simulate = sim, .model_states_only = a.model_states_only,
                              .workload = a.trace || a.schedule ? &w : NULL};
        cs_evaluation ev;
        if ((rc = cs_evaluate_config(&sc.model, &t, &topo, &o, &ev, &d))) goto fail;
        r->mem = ev.memory;
        r->simulated = ev.simulated;
        r->it = ev.iteration; /* freed with the rows */
        r->max_mb = a.model_states_only ? 0 : cs_memory_max_micro_batch(&sc.model, &t, &topo);
        n++;
        if (w && a.trace) cs_trace_write(w, &r->it, &trace);
        if (w && a.schedule) cs_schedule_write(w, &sched);
        cs_workload_free(w);
    }
    char title[512];
    int des = sim && n > 0 && rows_des;
    snprintf(title, sizeof title, "collsim %s: %s (%.3g params) on %s, %d ranks on %d nodes%s",
             a.cmd, sc.model.name, sc.model.params, sc.cluster.name, topo.ranks, topo.nodes,
             des ? ", DES collectives" : "");
    cs_buf out = {0};
    render(&out, a.fmt, title, rows, n, sim);
    rc = cs_buf_write(&out, a.out, &d);
    if (rc == 0 && a.trace) rc = cs_buf_write(&trace, a.trace, &d);
    if (rc == 0 && a.schedule) rc = cs_buf_write(&sched, a.schedule, &d);
    cs_buf_free(&out);
fail:
    for (int i = 0; i < n; i++)
        if (rows[i].simulated) cs_iteration_free(&rows[i].it);
    cs_buf_free(&trace);
    cs_buf_free(&sched);
    return rc ? cs_cli_fail(&d) : CS_EXIT_OK;
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
               "CSV columns: %s\nExit status: 0 ok, 1 output not written, 2 bad usage/config.\n",
            mem_cols);
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
               "CSV columns: %s%s\nBytes columns are bytes sent per rank per iteration.\n"
               "Exit status: 0 ok, 1 output not written, 2 bad usage/config.\n",
            mem_cols, sim_cols);
}

int cs_cmd_memory(int argc, char **argv) { return run(argc, argv, 0, memory_help); }
int cs_cmd_simulate(int argc, char **argv) { return run(argc, argv, 1, simulate_help); }
