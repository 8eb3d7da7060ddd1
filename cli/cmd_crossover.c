/* SPDX-License-Identifier: MIT */
/*
 * cmd_crossover.c - `collsim crossover`: argument parsing, the sweep's
 * split over MPI ranks, and output. The grid, the simulation of each point
 * and the crossing search live in sweep.c; the report in
 * out/sweep_report.c, the plots in out/plot.c; the MPI glue in parallel.c.
 *
 * Under `mpirun -np K` point i is evaluated by rank i % K, the points are
 * gathered on rank 0, which alone refines the crossings and writes every
 * output: the bytes are those of a serial run. Ranks other than 0 print
 * nothing (their stdout and stderr are closed to /dev/null).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "opts.h"
#include "outputs.h"
#include "trainargs.h"
#include "out/plot.h"
#include "out/sweep_report.h"
#include "parallel.h"
#include "study/sweep.h"
#include "base/limit.h"
#include "train/scenario.h"
#include "train/training.h"

#define CMD "crossover"
#define N(a) (sizeof a / sizeof a[0])
#define DEFAULT_RANKS 64
/* 10 points per decade from 10M to 100B: on the default cluster DDP's lead
 * lies below 0.1B and FSDP FULL_SHARD runs out of memory near 85B on 64
 * GPUs, so the default range shows both. */
#define DEFAULT_PARAMS_MIN 1e7
#define DEFAULT_PARAMS_MAX 1e11
#define DEFAULT_PARAMS_POINTS 41
#define MAX_POINTS 1000000

static const char *const default_strategies = "ddp,fsdp_shard_grad_op,fsdp_full_shard";
/* The default global batch, in tokens: 2^21 = 1024 sequences of 2048.
 * GPT-3 (Brown et al. 2020, Table 2.1) trains its 6.7B and 13B models at
 * 2M tokens per step (1.3B-2.7B at 1M, 175B at 3.2M); Llama 2 (Touvron et
 * al. 2023, Sec 2.2) at 4M. */
#define DEFAULT_BATCH_TOKENS (1L << 21)


/* The lists are parsed once the scenario is read (build_spec). */
typedef struct xargs {
    const char *scenario, *cluster, *out, *plot, *crossings;
    const char *ranks, *params, *models, *strategies, *tps, *pps;
    cs_cli_knobs knobs; /* engine -1: the scenario's (default analytic) */
    int seq_len;        /* 0: the models' own */
    int fmt;
} xargs;

#define AT(f) CS_ARG_AT(xargs, f)
static const cs_opt opts[] = {
    CS_ARG_CLUSTER(xargs, cluster),
    {"ranks", .parse = cs_opt_string, AT(ranks)},
    {"params", .parse = cs_opt_string, AT(params)},
    {"models", .parse = cs_opt_string, AT(models)},
    {"strategies", .parse = cs_opt_string, AT(strategies)},
    {"tp", .parse = cs_opt_string, AT(tps)},
    {"pp", .parse = cs_opt_string, AT(pps)},
    CS_ARG_GLOBAL_BATCH(xargs, knobs.global_batch),
    {"seq-len", .parse = cs_opt_int, AT(seq_len), .lo = 1, .hi = 1 << 24},
    CS_ARG_MICRO_BATCH(xargs, knobs.micro_batch),
    CS_ARG_GRAD_ACCUM(xargs, knobs.grad_accum),
    CS_ARG_CKPT(xargs, knobs.ckpt),
    CS_ARG_TRAINING_DTYPE(xargs, knobs.dtype),
    CS_ARG_OPTIMIZER(xargs, knobs.optimizer),
    CS_ARG_ENGINE(xargs, knobs.engine, CS_SAYS_EXPECTS),
    CS_ARG_FORMAT(xargs, fmt),
    {"crossings", .parse = cs_opt_string, AT(crossings)},
    {"plot", .parse = cs_opt_string, AT(plot)},
    CS_ARG_OUTPUT(xargs, out),
};
#undef AT

static void help(FILE *f)
{
    fprintf(f,
            "Usage: collsim crossover [SCENARIO.yaml] [--cluster FILE|PRESET] [--ranks N[,N...]]\n"
            "         [--params MIN:MAX:POINTS | --models a,b,...] [--strategies s1,s2,...]\n"
            "         [--tp T[,T...]] [--pp P[,P...]]\n"
            "         [--global-batch N] [--seq-len S] [--micro-batch B [--grad-accum G]]\n"
            "         [--checkpointing C] [--dtype T]\n"
            "         [--optimizer O] [--engine analytic|des]\n"
            "         [--format table|csv|json] [-o FILE] [--plot FILE] [--crossings FILE]\n"
            "\n"
            "Sweeps model size P x ranks N x strategies at one global batch, running each\n"
            "strategy at every point at its fastest micro-batch and activation checkpointing\n"
            "that fit (the search of `collsim plan`; grad-accum = global batch / (ranks x\n"
            "micro-batch)), one simulated training iteration each (closed-form collectives\n"
            "unless --engine des), and finds where one strategy's best overtakes another's on\n"
            "a continuous P axis (GSL Brent root finding on log10 P, to 1e-4; only where both\n"
            "fit) and where no configuration of a strategy fits any more (micro-batch 1 with\n"
            "full recomputation; bisection, 1e-4). Then checks the rule of thumb \"DDP below\n"
            "3B; SHARD_GRAD_OP 3-7B; FULL_SHARD above 7B; DDP 20-30%% faster below 3B\" at 1,\n"
            "3, 7, 13, 30 and 70B on each rank count, as `collsim plan` does for one.\n"
            "\n"
            "  SCENARIO.yaml          optional: cluster, training and ranks (its model is not\n"
            "                         used: P is swept); the options below override it.\n"
            "  --cluster FILE|PRESET  cluster YAML or preset (default %s)\n"
            "  --ranks N[,N...]       rank counts (default: the scenario's, else %d)\n"
            "  --params MIN:MAX:POINTS  generic models (GPT-3-like shapes) at POINTS values of P\n"
            "                         spaced evenly on a log scale from MIN to MAX, both\n"
            "                         included (13e9, 7B, 350M, 1.5T; default %gM:%gB:%d)\n"
            "  --models a,b,...       instead, a list of model presets, YAML files or counts\n"
            "                         (no crossings: a list has no continuous P axis)\n"
            "  --strategies S[,S...]  default %s\n"
            "  --tp T[,T...], --pp P[,P...]  layouts: every strategy runs at every\n"
            "                         tensor-parallel degree x pipeline-parallel degree of\n"
            "                         the lists (one not given: the scenario's), each a\n"
            "                         series \"fsdp_full_shard tp4 pp2\" in the grid, the\n"
            "                         crossings and the plots (CSV and JSON: columns tp, pp\n"
            "                         after strategy, tp_a, pp_a, tp_b, pp_b in crossings;\n"
            "                         JSON version 3); a layout that does not apply at a\n"
            "                         point (TP over the heads, more stages than layers, tp x\n"
            "                         pp not dividing the ranks) leaves it empty (n/a)\n"
            "  --global-batch N       sequences per optimizer step over all ranks (default:\n"
            "                         the scenario's micro-batch x grad-accum x ranks, else\n"
            "                         %ld tokens: %ld sequences of %d, GPT-3's 2M-token batch);\n"
            "                         where N is no whole multiple of ranks x micro-batch the\n"
            "                         nearest whole grad-accum runs, and the output says so\n"
            "  --seq-len S            sequence length of the models (default %d)\n"
            "  --micro-batch B        pin the micro-batch (default: searched, 1, 2, 4, ...)\n"
            "  --checkpointing none|selective|full  pin activation checkpointing (default:\n"
            "                         searched: none and full; selective too without fused\n"
            "                         attention)\n"
            "  --grad-accum G         with --micro-batch and no --global-batch: the fixed\n"
            "                         configuration of earlier versions, B x G sequences per\n"
            "                         rank at every rank count, checkpointing pinned too\n"
            "  --dtype fp32|bf16|fp16, --optimizer adam|adamw|sgd_momentum|sgd as for\n"
            "                         `collsim simulate`; --strategies takes its aliases too\n"
            "  --engine analytic|des  how collectives are timed, as for `collsim simulate`\n"
            "                         (default analytic; des: each distinct collective is one\n"
            "                         discrete-event run, shared across points; ~100x slower)\n"
            "  --format F             table (default: the grid, one sentence per crossing, the\n"
            "                         rule of thumb), csv (the grid) or json (grid,\n"
            "                         crossings and rule_of_thumb)\n"
            "  -o FILE                output file (written whole or not at all); default stdout\n"
            "  --plot FILE            draw the plots with gnuplot (FILE ends in .svg or .png):\n"
            "                         BASE-throughput, BASE-memory, BASE-winner, BASE-wire\n"
            "                         and BASE-breakdown, next to FILE (BASE = FILE without\n"
            "                         its extension)\n"
            "  --crossings FILE       the crossings as CSV: %s\n"
            "                         kind throughput: strategy_a is faster below params, by\n"
            "                         margin (a fraction, at the last grid point below);\n"
            "                         kind oom: strategy_a's fits verdict flips at params\n"
            "                         (margin empty)\n"
            "\n"
            "Grid CSV columns: %s\n"
            "Points are in the order ranks, then P, then strategy; each reports the\n"
            "micro_batch, grad_accum and activation_checkpointing it ran. A point where\n"
            "nothing fits (fits 0) gets the time of its least-memory configuration, so\n"
            "curves go on through the OOM region. At most %d points.\n"
            "A progress bar is drawn on stderr when it is a terminal.\n"
            "Under `mpirun -np K` the grid is split across K processes and gathered on rank 0,\n"
            "which writes the same bytes as a serial run.\n",
            CS_DEFAULT_CLUSTER, DEFAULT_RANKS, DEFAULT_PARAMS_MIN / 1e6, DEFAULT_PARAMS_MAX / 1e9,
            DEFAULT_PARAMS_POINTS, default_strategies, DEFAULT_BATCH_TOKENS,
            DEFAULT_BATCH_TOKENS / CS_MODEL_GENERIC_SEQ_LEN, CS_MODEL_GENERIC_SEQ_LEN,
            CS_MODEL_GENERIC_SEQ_LEN, cs_sweep_report_crossing_columns(),
            cs_sweep_report_columns(), MAX_POINTS);
    cs_cli_exit_help(f);
}

/* Parses argv; returns -1 to continue, else an exit code. */
static int parse(int argc, char **argv, xargs *a)
{
    int next, rc = cs_opts_parse(CMD, opts, N(opts), argc, argv, a, help, &next);
    if (rc >= 0) return rc;
    if (next < argc) a->scenario = argv[next++];
    if (next < argc) return cs_cli_usage(CMD, "unexpected argument '%s'", argv[next]);
    if (a->params && a->models)
        return cs_cli_usage(CMD, "%s", "--params and --models are alternatives: give one");
    if (a->knobs.grad_accum && a->knobs.global_batch)
        return cs_cli_usage(CMD, "%s",
                            "--grad-accum and --global-batch are alternatives: give one (with "
                            "--global-batch grad-accum is derived)");
    if (a->knobs.grad_accum && !a->knobs.micro_batch)
        return cs_cli_usage(CMD, "%s",
                            "--grad-accum needs --micro-batch (else the micro-batch is searched "
                            "and grad-accum derived from --global-batch)");
    return -1;
}

/* Every output checked before the sweep (rank 0 speaks): the plot's
 * extension, directory and gnuplot too. Returns -1 or the exit code. */
static int check_outputs(const xargs *a, cs_diag *d)
{
    const char *paths[CS_CLI_MAX_OUTPUTS] = {a->out, a->crossings};
    size_t n = 2;
    char *plots[CS_CLI_MAX_OUTPUTS] = {0};
    size_t np = a->plot ? cs_plot_file_count() : 0;
    CS_ASSERT(n + np <= CS_CLI_MAX_OUTPUTS);
    if (a->plot && cs_plot_check(a->plot, d)) return cs_cli_fail(d);
    for (size_t k = 0; k < np; k++) paths[n++] = plots[k] = cs_plot_file_name(a->plot, k);
    int rc = cs_cli_outputs_check(CMD, paths, n);
    for (size_t k = 0; k < np; k++) free(plots[k]);
    return rc;
}

/* The outputs of rank 0: -o and --crossings to their temporaries, then the
 * plots (renamed by cs_plot_crossover once gnuplot succeeded; their
 * temporaries known to the signal handler meanwhile), then the renames. */
static int write_outputs(const xargs *a, const cs_sweep_spec *s, const cs_sweep_point *pts,
                         size_t n, const cs_crossing *cross, size_t nc, const cs_plan_rule *rules,
                         cs_diag *d)
{
    cs_buf out = {0}, cb = {0};
    cs_sweep_report(&out, (cs_format)a->fmt, s, pts, n, cross, nc, rules);
    if (a->crossings) cs_sweep_report_crossings(&cb, s, cross, nc);
    cs_cli_outputs set = {0};
    int rc = cs_cli_outputs_add(&set, &out, a->out, d);
    if (rc == 0 && a->crossings) rc = cs_cli_outputs_add(&set, &cb, a->crossings, d);
    if (rc == 0 && a->plot) {
        char *tmps[CS_CLI_MAX_OUTPUTS] = {0};
        size_t np = cs_plot_file_count();
        for (size_t k = 0; k < np; k++) {
            char *f = cs_plot_file_name(a->plot, k);
            cs_cli_temp_register(tmps[k] = cs_buf_temp_name(f));
            free(f);
        }
        rc = cs_plot_crossover(s, pts, n, cross, nc, a->plot, d);
        for (size_t k = 0; k < np; k++) {
            cs_cli_temp_forget(tmps[k]);
            free(tmps[k]);
        }
    }
    if (rc == 0) rc = cs_cli_outputs_commit(&set, d);
    else cs_cli_outputs_abort(&set);
    cs_buf_free(&out);
    cs_buf_free(&cb);
    return rc;
}

/* A list option's items into the spec (cs_opts_each). */
typedef struct list_ctx {
    cs_sweep_spec *s;
    const char *list;
    cs_diag *d;
} list_ctx;

static int rank_item(void *ctx, const char *tok)
{
    static const cs_opt ranks = CS_ARG_RANKS(cs_sweep_spec, ranks);
    list_ctx *c = ctx;
    cs_sweep_spec *s = c->s;
    if (s->nranks == (int)(sizeof s->ranks / sizeof s->ranks[0]))
        return cs_cli_usage(CMD, "--ranks: at most 64 values, got '%s'", c->list);
    int rc = cs_opt_int(CMD, &ranks, tok, &s->ranks[s->nranks]);
    if (rc == 0) s->nranks++;
    return rc;
}

static int strategy_item(void *ctx, const char *tok)
{
    cs_sweep_spec *s = ((list_ctx *)ctx)->s;
    int st;
    int rc = cs_opts_choose(CMD, &cs_strategy_item, tok, &st);
    if (rc) return rc;
    for (int i = 0; i < s->nstrategies; i++)
        if ((int)s->strategies[i] == st)
            return cs_cli_usage(CMD, "--strategies: '%s' given twice", tok);
    s->strategies[s->nstrategies++] = (cs_strategy)st;
    return 0;
}

/* An item of --tp or --pp into its list (limit.h's range). */
static int layout_item(list_ctx *c, const char *opt, cs_limit_id lim, const char *tok, int *v,
                       int *n)
{
    const cs_limit *l = cs_limit_of(lim);
    if (*n == CS_SWEEP_MAX_LAYOUT)
        return cs_cli_usage(CMD, "%s: at most %d values, got '%s'", opt, CS_SWEEP_MAX_LAYOUT,
                            c->list);
    int x;
    if (cs_cli_int(CMD, opt, tok, (int)l->lo, (int)l->hi, &x)) return CS_EXIT_USAGE;
    for (int i = 0; i < *n; i++)
        if (v[i] == x) return cs_cli_usage(CMD, "%s: %d given twice", opt, x);
    v[(*n)++] = x;
    return 0;
}

static int tp_item(void *ctx, const char *tok)
{
    list_ctx *c = ctx;
    return layout_item(c, "--tp", CS_LIMIT_TENSOR_PARALLEL, tok, c->s->tps, &c->s->ntps);
}

static int pp_item(void *ctx, const char *tok)
{
    list_ctx *c = ctx;
    return layout_item(c, "--pp", CS_LIMIT_PIPELINE_PARALLEL, tok, c->s->pps, &c->s->npps);
}

static int model_item(void *ctx, const char *tok)
{
    list_ctx *c = ctx;
    cs_sweep_spec *s = c->s;
    if (s->nmodels == (int)(sizeof s->models / sizeof s->models[0]))
        return cs_cli_usage(CMD, "--models: at most 64 models, got '%s'", c->list);
    cs_model *m = &s->models[s->nmodels];
    if (cs_model_load(tok, m, c->d)) return cs_cli_fail(c->d);
    if (s->seq_len > 0) m->seq_len = s->seq_len; /* as --seq-len in `collsim simulate` */
    s->nmodels++;
    return 0;
}

/* The lists: -1 to continue, else an exit code (message printed). */
static int parse_lists(const xargs *a, cs_sweep_spec *s, cs_diag *d)
{
    int rc;
    if (a->ranks) {
        list_ctx c = {s, a->ranks, d};
        if ((rc = cs_opts_each(CMD, "--ranks", a->ranks, 1024, rank_item, &c))) return rc;
        if (s->nranks == 0)
            return cs_cli_usage(CMD, "--ranks expects N[,N...], got '%s'", a->ranks);
    }
    const char *st = a->strategies ? a->strategies : default_strategies;
    list_ctx c = {s, st, d};
    if ((rc = cs_opts_each(CMD, "--strategies", st, 512, strategy_item, &c))) return rc;
    if (s->nstrategies == 0)
        return cs_cli_usage(CMD, "--strategies expects S[,S...], got '%s'", st);
    if (a->tps) {
        c = (list_ctx){s, a->tps, d};
        if ((rc = cs_opts_each(CMD, "--tp", a->tps, 512, tp_item, &c))) return rc;
    }
    if (a->pps) {
        c = (list_ctx){s, a->pps, d};
        if ((rc = cs_opts_each(CMD, "--pp", a->pps, 512, pp_item, &c))) return rc;
    }
    if (a->models) {
        c = (list_ctx){s, a->models, d};
        if ((rc = cs_opts_each(CMD, "--models", a->models, 4096, model_item, &c))) return rc;
        if (s->nmodels == 0)
            return cs_cli_usage(CMD, "--models expects a,b,..., got '%s'", a->models);
    }
    return -1;
}

static int parse_grid(const char *spec, cs_sweep_spec *s)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *c1 = strchr(buf, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2 || strlen(spec) >= sizeof buf)
        return cs_cli_usage(CMD, "--params expects MIN:MAX:POINTS (e.g. 1e8:1e11:31), got '%s'", spec);
    *c1 = *c2 = 0;
    if (cs_cli_params(buf, &s->params_min) || cs_cli_params(c1 + 1, &s->params_max))
        return cs_cli_usage(CMD, "--params: MIN and MAX are counts > 0 such as 13e9 or 7B, got '%s'", spec);
    if (cs_cli_int(CMD, "--params POINTS", c2 + 1, 1, MAX_POINTS, &s->params_points)) return CS_EXIT_USAGE;
    if (s->params_min > s->params_max || (s->params_points > 1 && s->params_min == s->params_max))
        return cs_cli_usage(CMD, "--params: MIN must be below MAX (or POINTS 1), got '%s'", spec);
    return -1;
}

/* The batch: --micro-batch with --grad-accum, the configuration of
 * earlier versions (that many sequences per rank at every rank count);
 * else a global batch (--global-batch, the scenario's, or the default
 * tokens) with what is not pinned searched. */
static void set_batch(const xargs *a, cs_sweep_spec *s, int scen_ranks)
{
    s->seq_len = a->seq_len;
    s->search_micro_batch = !a->knobs.micro_batch;
    s->search_ckpt = a->knobs.ckpt < 0;
    if (a->knobs.grad_accum) { /* earlier versions' fixed configuration, checkpointing too */
        s->global_batch = 0;
        s->search_ckpt = 0;
    } else if (a->knobs.global_batch) {
        s->global_batch = a->knobs.global_batch;
    } else if (scen_ranks > 0) {
        s->global_batch = (long)s->training.micro_batch * s->training.grad_accum * scen_ranks;
    } else {
        long seq = a->seq_len ? a->seq_len : CS_MODEL_GENERIC_SEQ_LEN;
        s->global_batch = DEFAULT_BATCH_TOKENS / seq > 0 ? DEFAULT_BATCH_TOKENS / seq : 1;
    }
}

/* Builds the spec from the scenario, the cluster and the options; returns
 * -1 to continue, else an exit code (message printed). */
static int build_spec(const xargs *a, cs_sweep_spec *s, cs_diag *d)
{
    memset(s, 0, sizeof *s);
    int scen_ranks = 0;
    if (a->scenario) {
        cs_scenario sc;
        if (cs_cli_scenario_load(a->scenario, &sc, d)) return cs_cli_fail(d);
        s->cluster = sc.cluster;
        s->training = sc.training;
        scen_ranks = sc.ranks > 0 ? sc.ranks : sc.nodes > 0 ? sc.nodes * sc.cluster.gpus_per_node : 0;
    } else {
        if (cs_config_cluster(CS_DEFAULT_CLUSTER, &s->cluster, d)) return cs_cli_fail(d);
        cs_training_defaults(&s->training, CS_STRAT_DDP);
    }
    if (a->cluster && cs_config_cluster(a->cluster, &s->cluster, d)) return cs_cli_fail(d);
    cs_cli_knobs_apply(&a->knobs, &s->training);
    set_batch(a, s, a->scenario ? scen_ranks : 0);
    cs_cli_warn_des(CMD, &s->cluster, s->training.collective_engine);
    if (!a->ranks) {
        s->nranks = 1;
        s->ranks[0] = scen_ranks > 0 ? scen_ranks : DEFAULT_RANKS;
    }
    int rc;
    if ((rc = parse_lists(a, s, d)) >= 0) return rc;
    if (a->params) {
        if ((rc = parse_grid(a->params, s)) >= 0) return rc;
    } else if (!a->models) {
        s->params_min = DEFAULT_PARAMS_MIN;
        s->params_max = DEFAULT_PARAMS_MAX;
        s->params_points = DEFAULT_PARAMS_POINTS;
    }
    if (!a->models) {
        /* the ends are the extreme models: fail early with their message */
        cs_model m;
        int seq = s->seq_len ? s->seq_len : CS_MODEL_GENERIC_SEQ_LEN;
        if (cs_model_generic_shape(s->params_min, seq, CS_MODEL_GENERIC_VOCAB, &m, d) ||
            cs_model_generic_shape(s->params_max, seq, CS_MODEL_GENERIC_VOCAB, &m, d))
            return cs_cli_fail(d);
    }
    if ((double)cs_sweep_size(s) > MAX_POINTS) {
        char n[64];
        snprintf(n, sizeof n, "%zu", cs_sweep_size(s));
        fprintf(stderr, "collsim %s: the grid has %s points; at most %d are allowed\n", CMD, n,
                MAX_POINTS);
        return CS_EXIT_USAGE;
    }
    return -1;
}

/* ---- progress bar -------------------------------------------------------- */

typedef struct progress {
    int width;
    int shown; /* last filled width drawn, -1 none */
    size_t last_done;
} progress;

static void progress_draw(void *ctx, size_t done, size_t total)
{
    progress *p = ctx;
    int fill = total ? (int)((double)done / (double)total * p->width) : p->width;
    /* redraw when the bar grows or every 1% of points */
    if (fill == p->shown && done != total && (done - p->last_done) * 100 < total) return;
    p->shown = fill;
    p->last_done = done;
    char bar[128];
    for (int i = 0; i < p->width; i++) bar[i] = i < fill ? '=' : ' ';
    bar[p->width] = 0;
    fprintf(stderr, "\r[%s] %zu/%zu points", bar, done, total);
    fflush(stderr);
}

static void progress_clear(const progress *p)
{
    if (p->shown < 0) return;
    fprintf(stderr, "\r%*s\r", p->width + 40, "");
    fflush(stderr);
}

static int crossover(int argc, char **argv)
{
    xargs a = {.knobs = CS_CLI_KNOBS_UNSET, .fmt = CS_FORMAT_TABLE};
    int rc = parse(argc, argv, &a);
    if (rc >= 0) return rc;
    cs_diag d;
    cs_diag_clear(&d);
    if ((rc = check_outputs(&a, &d)) >= 0) return rc;
    cs_sweep_spec *s = cs_xmalloc(sizeof *s);
    cs_sweep_point *pts = NULL;
    cs_crossing *cross = NULL;
    cs_plan_rule *rules = NULL;
    size_t nc = 0;
    if ((rc = build_spec(&a, s, &d)) >= 0) goto done;
    rc = CS_EXIT_OK;
    int me = cs_parallel_rank(), k = cs_parallel_size();
    size_t n = cs_sweep_size(s), failed = 0;
    pts = cs_xcalloc(n, sizeof *pts);
    progress bar = {.width = 30, .shown = -1};
    int tty = me == 0 && isatty(2);
    int erc = cs_sweep_run(s, (size_t)me, (size_t)k, pts, tty ? progress_draw : NULL, &bar,
                           &failed, &d);
    if (tty) progress_clear(&bar);
    /* the first failing point over all processes is the one a serial run
     * stops at; rank 0 re-evaluates it for the message if it was not its */
    unsigned long long first = cs_parallel_min(erc ? (unsigned long long)failed : ULLONG_MAX);
    if (first != ULLONG_MAX) {
        if (me == 0) {
            if (!erc || failed != first) {
                int r, model;
                double p;
                cs_strategy st;
                cs_sweep_coords(s, (size_t)first, &r, &p, &model, &st);
                cs_sweep_series se = cs_sweep_series_at(s, cs_sweep_series_of(s, (size_t)first));
                cs_sweep_point tmp;
                erc = cs_sweep_series_eval(s, &se, r, p, model, &tmp, &d);
                CS_ASSERT(erc != 0);
            }
            rc = cs_cli_fail(&d);
        }
        goto done;
    }
    cs_parallel_gather_strided(pts, sizeof *pts, n);
    if (me != 0) goto done;
    if (cs_sweep_crossings(s, pts, n, &cross, &nc, &d)) {
        rc = cs_cli_fail(&d);
        goto done;
    }
    /* the rule of thumb: for people and JSON, on a P axis */
    if (a.fmt != CS_FORMAT_CSV && s->nmodels == 0) {
        rules = cs_xcalloc((size_t)s->nranks, sizeof *rules);
        if (cs_sweep_rules(s, rules, &d)) {
            rc = cs_cli_fail(&d);
            goto done;
        }
    }
    if (write_outputs(&a, s, pts, n, cross, nc, rules, &d)) rc = cs_cli_fail(&d);
done:
    free(rules);
    free(cross);
    free(pts);
    free(s);
    return rc;
}

int cs_cmd_crossover(int argc, char **argv)
{
    cs_parallel_init(&argc, &argv);
    if (cs_parallel_rank() != 0) {
        /* one voice: rank 0 speaks for all */
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) {
            /* nothing sensible to report, and nowhere to report it */
        }
    }
    int rc = crossover(argc, argv);
    cs_parallel_finalize();
    return rc;
}
