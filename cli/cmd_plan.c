/* SPDX-License-Identifier: MIT */
/*
 * cmd_plan.c - `collsim plan SCENARIO.yaml`: which data-parallel strategy
 * and micro-batch to train the scenario with, and how the seed's rule of
 * thumb fares on its cluster. Argument parsing, the search and output only;
 * every number comes from train/evaluate.h, exactly as `collsim simulate`
 * computes it.
 *
 * The search: every strategy x micro-batch 1, 2, 4, ... up to the largest
 * that fits by the memory estimate (and the scenario's own micro-batch),
 * with grad_accum chosen so that micro_batch x grad_accum (sequences per
 * rank per optimizer step) stays the scenario's: the global batch is kept.
 * Where no whole grad_accum >= 1 keeps it, the nearest is taken and the
 * changed batch is noted; such configurations are listed but never
 * recommended. A configuration fits when the simulated iteration's peak
 * memory is within the GPU capacity. The recommendation is the fastest
 * (tokens/s) that fits and keeps the batch (ties: strategy order, then the
 * smaller micro-batch); its runner-up is the fastest of another strategy.
 *
 * The rule of thumb checked ("DDP below 3B params; SHARD_GRAD_OP 3-7B;
 * FULL_SHARD above 7B; DDP 20-30% faster than FSDP below 3B") is the seed
 * request's; it is evaluated on generic models (model.h: GPT-3-like
 * shapes with the scenario's sequence length and vocabulary) at fixed
 * sizes, with the scenario's cluster, ranks and training settings.
 * Cost: (6 strategies x ~log2(max micro-batch) + 10 sizes x 3) simulated
 * iterations, each O(tasks log tasks).
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
#include "out/report.h"
#include "train/training.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MAX_MB (1 << 12) /* search cap on the micro-batch */

static const char *const rule_text =
    "DDP below 3B params; SHARD_GRAD_OP 3-7B; FULL_SHARD above 7B; DDP 20-30% faster than "
    "FSDP below 3B";
static const double rule_sizes[] = {1e9, 2e9, 3e9, 5e9, 7e9, 10e9, 13e9, 20e9, 30e9, 70e9};
#define NSIZES (int)(sizeof rule_sizes / sizeof rule_sizes[0])
static const cs_strategy rule_strats[3] = {CS_STRAT_DDP, CS_STRAT_FSDP_SHARD_GRAD_OP,
                                           CS_STRAT_FSDP_FULL_SHARD};

/* One simulated configuration. */
typedef struct cfg {
    cs_strategy strategy;
    int micro_batch, grad_accum;
    int batch_kept;            /* micro_batch x grad_accum = the scenario's */
    int ok;                    /* simulated; else `note` says why not */
    int fits;
    double peak_bytes, capacity_bytes;
    double iteration_time_s, tokens_per_s, tflops_per_gpu, mfu, exposed_comm_s;
    char note[600];
} cfg;

/* Simulates one iteration of m under t; fills c (c->ok = 0 with the reason
 * when the configuration does not apply, e.g. a hybrid group that does not
 * divide the ranks). */
static void simulate(const cs_model *m, const cs_training *t, const cs_topology *topo, cfg *c)
{
    cs_diag d;
    cs_diag_clear(&d);
    c->strategy = t->strategy;
    c->micro_batch = t->micro_batch;
    c->grad_accum = t->grad_accum;
    cs_evaluate_opts o = {.simulate = 1};
    cs_evaluation ev;
    if (cs_evaluate_config(m, t, topo, &o, &ev, &d)) {
        snprintf(c->note, sizeof c->note, "n/a: %s", d.message);
        return;
    }
    const cs_iteration *it = &ev.iteration;
    c->ok = 1;
    c->peak_bytes = it->peak_bytes;
    c->capacity_bytes = ev.memory.capacity_bytes;
    c->fits = ev.fits;
    c->iteration_time_s = it->iteration_time_s;
    c->tokens_per_s = it->tokens_per_s;
    c->tflops_per_gpu = it->tflops_per_gpu;
    c->mfu = it->mfu;
    c->exposed_comm_s = it->exposed_comm_s;
    cs_evaluate_free(&ev);
}

static int eligible(const cfg *c) { return c->ok && c->fits && c->batch_kept; }

/* Is a better than b? Faster; at equal speed (1e-9 relative: strategies
 * whose communication is fully hidden run exactly as fast) the one with
 * the lower peak memory; else the earlier. */
static int better(const cfg *a, const cfg *b)
{
    if (!b) return 1;
    double tol = 1e-9 * fmax(a->tokens_per_s, b->tokens_per_s);
    if (fabs(a->tokens_per_s - b->tokens_per_s) > tol) return a->tokens_per_s > b->tokens_per_s;
    return a->peak_bytes < b->peak_bytes;
}

/* The rule's pick "agrees" when it is the fastest or within this fraction
 * of it: closer than the simulator's accuracy (README: collectives within
 * a few percent of nccl-tests), so a difference this small decides nothing. */
#define TIE_FRACTION 0.01

static const char *rule_pick(double p)
{
    return cs_strategy_name(p < 3e9 ? CS_STRAT_DDP
                                    : p <= 7e9 ? CS_STRAT_FSDP_SHARD_GRAD_OP
                                               : CS_STRAT_FSDP_FULL_SHARD);
}

typedef struct rule_row {
    double params;
    cfg c[3];          /* ddp, shard_grad_op, full_shard */
    int winner;        /* index into c, -1 = none fits */
    int rule;          /* index the rule picks */
    int agrees;        /* 2: the rule's pick is the winner, 1: within TIE_FRACTION, 0: no */
    double pick_slower_pct; /* the rule's pick vs the winner (both fit) */
    int ddp_vs_fs_ok;  /* both fit (P < 3B only) */
    double ddp_vs_fs_pct;
} rule_row;

typedef struct plan {
    const char *scenario;
    cs_scenario sc;
    cs_topology topo;
    int seqs_per_rank;         /* scenario micro_batch x grad_accum */
    cfg *cfgs;
    int ncfgs;
    const cfg *best, *runner;
    rule_row rows[NSIZES];
    int ok_sizes;
} plan;

static void fmt_params(char *out, size_t len, double p)
{
    if (p >= 1e9) snprintf(out, len, "%gB", p / 1e9);
    else snprintf(out, len, "%gM", p / 1e6);
}

/* ---- the search ------------------------------------------------------ */

static void search(plan *pl)
{
    const cs_scenario *sc = &pl->sc;
    int cap = 0;
    pl->cfgs = NULL;
    pl->ncfgs = 0;
    for (int s = 0; s < CS_STRAT_COUNT; s++) {
        cs_training t = sc->training;
        t.strategy = (cs_strategy)s;
        t.micro_batch = 1;
        t.grad_accum = pl->seqs_per_rank;
        /* the largest micro-batch by the estimate (0: even 1 does not fit;
         * then micro-batch 1 is simulated to show by how much) */
        cs_memory mem;
        cs_diag d;
        int limit = 1;
        if (cs_memory_estimate(&sc->model, &t, &pl->topo, 0, &mem, &d) == 0) {
            limit = cs_memory_max_micro_batch(&sc->model, &t, &pl->topo);
            if (limit < 1) limit = 1;
            if (limit > MAX_MB) limit = MAX_MB;
        }
        int mbs[32], nmb = 0;
        for (int mb = 1; mb <= limit && nmb < 31; mb *= 2) mbs[nmb++] = mb;
        int own = sc->training.micro_batch;
        if (own <= limit && (own & (own - 1))) { /* the scenario's, if not a power of 2 */
            int k = nmb++;
            while (k > 0 && mbs[k - 1] > own) mbs[k] = mbs[k - 1], k--;
            mbs[k] = own;
        }
        for (int i = 0; i < nmb; i++) {
            int mb = mbs[i], S = pl->seqs_per_rank;
            int ga = S % mb == 0 ? S / mb : (int)lround((double)S / mb);
            if (ga < 1) ga = 1;
            t.micro_batch = mb;
            t.grad_accum = ga;
            if (pl->ncfgs == cap) pl->cfgs = cs_xrealloc(pl->cfgs, (cap = cap ? 2 * cap : 32) * sizeof *pl->cfgs);
            cfg *c = &pl->cfgs[pl->ncfgs++];
            memset(c, 0, sizeof *c);
            c->batch_kept = mb * ga == S;
            simulate(&sc->model, &t, &pl->topo, c);
            if (c->ok && !c->batch_kept)
                snprintf(c->note, sizeof c->note, "global batch %d, not %d: not recommended",
                         mb * ga * pl->topo.ranks, S * pl->topo.ranks);
            /* a larger micro-batch than one that does not fit will not fit */
            if (c->ok && !c->fits) break;
            if (!c->ok) break;
        }
    }
    pl->best = pl->runner = NULL;
    for (int i = 0; i < pl->ncfgs; i++)
        if (eligible(&pl->cfgs[i]) && better(&pl->cfgs[i], pl->best)) pl->best = &pl->cfgs[i];
    for (int i = 0; pl->best && i < pl->ncfgs; i++)
        if (eligible(&pl->cfgs[i]) && pl->cfgs[i].strategy != pl->best->strategy &&
            better(&pl->cfgs[i], pl->runner))
            pl->runner = &pl->cfgs[i];
}

static int rule_index(double p) { return p < 3e9 ? 0 : p <= 7e9 ? 1 : 2; }

static int check_rule(plan *pl, cs_diag *d)
{
    const cs_scenario *sc = &pl->sc;
    pl->ok_sizes = 0;
    for (int k = 0; k < NSIZES; k++) {
        rule_row *r = &pl->rows[k];
        memset(r, 0, sizeof *r);
        r->params = rule_sizes[k];
        cs_model m;
        int rc = cs_model_generic_shape(r->params, sc->model.seq_len, sc->model.vocab, &m, d);
        if (rc) return rc;
        r->winner = -1;
        r->rule = rule_index(r->params);
        for (int i = 0; i < 3; i++) {
            cs_training t = sc->training;
            t.strategy = rule_strats[i];
            r->c[i].batch_kept = 1;
            simulate(&m, &t, &pl->topo, &r->c[i]);
            if (r->c[i].ok && r->c[i].fits && better(&r->c[i], r->winner < 0 ? NULL : &r->c[r->winner]))
                r->winner = i;
        }
        const cfg *pick = &r->c[r->rule];
        if (r->winner == r->rule) r->agrees = 2;
        else if (r->winner >= 0 && pick->ok && pick->fits) {
            r->pick_slower_pct = 100 * (1 - pick->tokens_per_s / r->c[r->winner].tokens_per_s);
            r->agrees = r->pick_slower_pct <= 100 * TIE_FRACTION;
        }
        if (r->agrees) pl->ok_sizes++;
        const cfg *ddp = &r->c[0], *fs = &r->c[2];
        if (r->params < 3e9 && ddp->ok && ddp->fits && fs->ok && fs->fits && fs->tokens_per_s > 0) {
            r->ddp_vs_fs_ok = 1;
            r->ddp_vs_fs_pct = 100 * (ddp->tokens_per_s / fs->tokens_per_s - 1);
        }
    }
    return 0;
}

/* ---- output ---------------------------------------------------------- */

static void title_of(const plan *pl, char *out, size_t len)
{
    snprintf(out, len, "collsim plan: %s (%.3g params) on %s, %d ranks on %d nodes",
             pl->sc.model.name, pl->sc.model.params, pl->sc.cluster.name, pl->topo.ranks,
             pl->topo.nodes);
}

static void reason(cs_buf *b, const cfg *c, const char *indent)
{
    cs_buf_printf(b, "%stokens/s              %.0f (all GPUs), %.1f model TFLOPS per GPU\n", indent,
                  c->tokens_per_s, c->tflops_per_gpu);
    cs_buf_printf(b, "%sMFU                   %.1f %%\n", indent, 100 * c->mfu);
    cs_buf_printf(b, "%sexposed communication %.4f s (%.1f %% of the %.4f s iteration)\n", indent,
                  c->exposed_comm_s,
                  c->iteration_time_s > 0 ? 100 * c->exposed_comm_s / c->iteration_time_s : 0,
                  c->iteration_time_s);
    cs_buf_printf(b, "%speak memory           %.2f GiB of %.2f GiB (%.0f %%)\n", indent,
                  c->peak_bytes / GIB, c->capacity_bytes / GIB,
                  100 * c->peak_bytes / c->capacity_bytes);
}

/* Contiguous runs of the simulated winner over the sizes. */
static void winner_runs(cs_buf *b, const plan *pl)
{
    int k = 0;
    while (k < NSIZES) {
        int w = pl->rows[k].winner, j = k;
        while (j + 1 < NSIZES && pl->rows[j + 1].winner == w) j++;
        char lo[16], hi[16];
        fmt_params(lo, sizeof lo, rule_sizes[k]);
        fmt_params(hi, sizeof hi, rule_sizes[j]);
        cs_buf_printf(b, "%s%s %s%s%s", k ? ", " : "", w < 0 ? "none fits" : cs_strategy_name(rule_strats[w]),
                      lo, j > k ? "-" : "", j > k ? hi : "");
        k = j + 1;
    }
}

static void render_table(cs_buf *b, const plan *pl)
{
    char title[512];
    title_of(pl, title, sizeof title);
    const cs_training *t = &pl->sc.training;
    cs_buf_printf(b, "# %s\n# global batch %d sequences = micro_batch %d x grad_accum %d x %d ranks "
                     "(scenario %s)\n\n",
                  title, pl->seqs_per_rank * pl->topo.ranks, t->micro_batch, t->grad_accum,
                  pl->topo.ranks, pl->scenario);
    cs_buf_printf(b, "%-20s %5s %5s %9s %5s %10s %12s %6s %10s  %s\n", "strategy", "micro", "accum",
                  "peak GiB", "fits", "iter s", "tokens/s", "MFU %", "exposed s", "note");
    for (int i = 0; i < pl->ncfgs; i++) {
        const cfg *c = &pl->cfgs[i];
        if (!c->ok) {
            cs_buf_printf(b, "%-20s %5d %5d %9s %5s %10s %12s %6s %10s  %s\n",
                          cs_strategy_name(c->strategy), c->micro_batch, c->grad_accum, "-", "-",
                          "-", "-", "-", "-", c->note);
            continue;
        }
        const char *mark = c == pl->best ? "<- recommended" : c == pl->runner ? "<- runner-up" : "";
        cs_buf_printf(b, "%-20s %5d %5d %9.2f %5s %10.4f %12.0f %6.1f %10.4f%s%s%s%s\n",
                      cs_strategy_name(c->strategy), c->micro_batch, c->grad_accum,
                      c->peak_bytes / GIB, c->fits ? "yes" : "OOM", c->iteration_time_s,
                      c->tokens_per_s, 100 * c->mfu, c->exposed_comm_s, *mark || *c->note ? "  " : "",
                      mark, *mark && *c->note ? " " : "", c->note);
    }
    cs_buf_printf(b, "\n");
    if (!pl->best) {
        cs_buf_printf(b, "recommended: none: no strategy fits with micro-batch 1 while keeping the "
                         "global batch; use more GPUs, activation checkpointing or a smaller "
                         "model\n");
    } else {
        const cfg *c = pl->best;
        cs_buf_printf(b, "recommended: %s, micro_batch %d, grad_accum %d\n",
                      cs_strategy_name(c->strategy), c->micro_batch, c->grad_accum);
        reason(b, c, "  ");
        if (pl->runner)
            cs_buf_printf(b, "  runner-up             %s, micro_batch %d, grad_accum %d: "
                             "%.0f tokens/s, %.2f %% slower%s\n",
                          cs_strategy_name(pl->runner->strategy), pl->runner->micro_batch,
                          pl->runner->grad_accum, pl->runner->tokens_per_s,
                          100 * (1 - pl->runner->tokens_per_s / c->tokens_per_s),
                          pl->runner->tokens_per_s >= c->tokens_per_s * (1 - 1e-9)
                              ? " (as fast: the recommendation needs less memory)"
                              : "");
        else
            cs_buf_printf(b, "  runner-up             none: no other strategy fits\n");
    }

    cs_buf_printf(b, "\nRule of thumb: \"%s\"\n", rule_text);
    cs_buf_printf(b, "checked on %s, %d ranks, generic models (sequence %d, vocabulary %d), "
                     "micro_batch %d x grad_accum %d:\n\n",
                  pl->sc.cluster.name, pl->topo.ranks, pl->sc.model.seq_len, pl->sc.model.vocab,
                  t->micro_batch, t->grad_accum);
    cs_buf_printf(b, "%7s  %-19s %-19s %-7s %11s %11s %11s  %s\n", "params", "rule says",
                  "simulated winner", "agrees", "ddp tok/s", "sgo tok/s", "full tok/s",
                  "DDP vs FULL_SHARD (claim +20-30 %)");
    for (int k = 0; k < NSIZES; k++) {
        const rule_row *r = &pl->rows[k];
        char p[16];
        fmt_params(p, sizeof p, r->params);
        cs_buf_printf(b, "%7s  %-19s %-19s %-7s", p, rule_pick(r->params),
                      r->winner < 0 ? "none fits" : cs_strategy_name(rule_strats[r->winner]),
                      r->agrees == 2 ? "yes" : r->agrees ? "tie" : "no");
        for (int i = 0; i < 3; i++) {
            const cfg *c = &r->c[i];
            if (!c->ok) cs_buf_printf(b, " %11s", "n/a");
            else if (!c->fits) cs_buf_printf(b, " %11s", "OOM");
            else cs_buf_printf(b, " %11.0f", c->tokens_per_s);
        }
        if (r->ddp_vs_fs_ok)
            cs_buf_printf(b, "  %+.1f %% (%s)", r->ddp_vs_fs_pct,
                          r->ddp_vs_fs_pct >= 20 && r->ddp_vs_fs_pct <= 30 ? "holds" : "does not hold");
        else if (r->params < 3e9)
            cs_buf_printf(b, "  n/a (one of them does not fit)");
        cs_buf_printf(b, "\n");
    }
    /* the verdict in words */
    cs_buf_printf(b, "\nOn %s with %d GPUs the rule's pick is the fastest (or within %.0f %% of it) "
                     "at %d of %d sizes",
                  pl->sc.cluster.name, pl->topo.ranks, 100 * TIE_FRACTION, pl->ok_sizes, NSIZES);
    int first = 1;
    for (int k = 0; k < NSIZES; k++) {
        const rule_row *r = &pl->rows[k];
        if (!r->agrees) continue;
        char p[16];
        fmt_params(p, sizeof p, r->params);
        cs_buf_printf(b, "%s%s", first ? " (" : ", ", p);
        first = 0;
    }
    cs_buf_printf(b, "%s.\n", first ? "" : ")");
    for (int k = 0; k < NSIZES; k++) {
        const rule_row *r = &pl->rows[k];
        if (r->agrees == 2) continue;
        char p[16];
        fmt_params(p, sizeof p, r->params);
        const cfg *pick = &r->c[r->rule];
        if (r->winner < 0)
            cs_buf_printf(b, "  %s: nothing fits at micro_batch %d\n", p, t->micro_batch);
        else if (!pick->ok || !pick->fits)
            cs_buf_printf(b, "  %s: the rule's %s does not fit; %s is fastest\n", p,
                          rule_pick(r->params), cs_strategy_name(rule_strats[r->winner]));
        else if (r->pick_slower_pct < 0.005)
            cs_buf_printf(b, "  %s: the rule's %s is as fast as %s, which needs less memory\n", p,
                          rule_pick(r->params), cs_strategy_name(rule_strats[r->winner]));
        else
            cs_buf_printf(b, "  %s: %s is fastest; the rule's %s is %.2f %% slower%s\n", p,
                          cs_strategy_name(rule_strats[r->winner]), rule_pick(r->params),
                          r->pick_slower_pct, r->agrees ? " (a tie: counted as agreeing)" : "");
    }
    cs_buf_printf(b, "Simulated winners: ");
    winner_runs(b, pl);
    cs_buf_printf(b, ".\n");
    int n = 0, hold = 0;
    for (int k = 0; k < NSIZES; k++)
        if (pl->rows[k].ddp_vs_fs_ok) {
            n++;
            hold += pl->rows[k].ddp_vs_fs_pct >= 20 && pl->rows[k].ddp_vs_fs_pct <= 30;
        }
    if (n)
        cs_buf_printf(b, "\"DDP 20-30%% faster than FSDP below 3B\": DDP vs FULL_SHARD is within "
                         "+20-30 %% at %d of the %d sizes below 3B where both fit.\n", hold, n);
    else
        cs_buf_printf(b, "\"DDP 20-30%% faster than FSDP below 3B\": not checkable here (DDP or "
                         "FULL_SHARD does not fit below 3B).\n");
}

static void json_cfg(cs_buf *b, const cfg *c)
{
    cs_buf_printf(b, "{\"strategy\": \"%s\", \"micro_batch\": %d, \"grad_accum\": %d, "
                     "\"batch_kept\": %s, \"simulated\": %s",
                  cs_strategy_name(c->strategy), c->micro_batch, c->grad_accum,
                  c->batch_kept ? "true" : "false", c->ok ? "true" : "false");
    if (c->ok)
        cs_buf_printf(b, ", \"fits\": %s, \"peak_bytes\": %.0f, \"capacity_bytes\": %.0f, "
                         "\"iteration_time_s\": %.6f, \"tokens_per_s\": %.1f, "
                         "\"tflops_per_gpu\": %.3f, \"mfu\": %.5f, \"exposed_comm_s\": %.6f",
                      c->fits ? "true" : "false", c->peak_bytes, c->capacity_bytes,
                      c->iteration_time_s, c->tokens_per_s, c->tflops_per_gpu, c->mfu,
                      c->exposed_comm_s);
    cs_buf_printf(b, ", \"note\": ");
    cs_buf_json_string(b, c->note);
    cs_buf_printf(b, "}");
}

static void render_json(cs_buf *b, const plan *pl)
{
    char title[512];
    title_of(pl, title, sizeof title);
    cs_buf_printf(b, "{\n  \"title\": ");
    cs_buf_json_string(b, title);
    cs_buf_printf(b, ",\n  \"scenario\": ");
    cs_buf_json_string(b, pl->scenario);
    cs_buf_printf(b, ",\n  \"cluster\": ");
    cs_buf_json_string(b, pl->sc.cluster.name);
    cs_buf_printf(b, ",\n  \"model\": ");
    cs_buf_json_string(b, pl->sc.model.name);
    cs_buf_printf(b, ",\n  \"params\": %.0f,\n  \"ranks\": %d,\n  \"nodes\": %d,\n"
                     "  \"global_batch\": %d,\n  \"configs\": [",
                  pl->sc.model.params, pl->topo.ranks, pl->topo.nodes,
                  pl->seqs_per_rank * pl->topo.ranks);
    for (int i = 0; i < pl->ncfgs; i++) {
        cs_buf_printf(b, "%s\n    ", i ? "," : "");
        json_cfg(b, &pl->cfgs[i]);
    }
    cs_buf_printf(b, "\n  ],\n  \"recommendation\": ");
    if (pl->best) json_cfg(b, pl->best);
    else cs_buf_printf(b, "null");
    cs_buf_printf(b, ",\n  \"runner_up\": ");
    if (pl->runner) {
        json_cfg(b, pl->runner);
        cs_buf_printf(b, ",\n  \"runner_up_slower_pct\": %.2f",
                      100 * (1 - pl->runner->tokens_per_s / pl->best->tokens_per_s));
    } else {
        cs_buf_printf(b, "null");
    }
    cs_buf_printf(b, ",\n  \"rule_of_thumb\": {\n    \"text\": ");
    cs_buf_json_string(b, rule_text);
    cs_buf_printf(b, ",\n    \"micro_batch\": %d,\n    \"grad_accum\": %d,\n"
                     "    \"agrees\": %d,\n    \"sizes\": %d,\n    \"rows\": [",
                  pl->sc.training.micro_batch, pl->sc.training.grad_accum, pl->ok_sizes, NSIZES);
    for (int k = 0; k < NSIZES; k++) {
        const rule_row *r = &pl->rows[k];
        cs_buf_printf(b, "%s\n      {\"params\": %.0f, \"rule\": \"%s\", \"winner\": ", k ? "," : "",
                      r->params, rule_pick(r->params));
        if (r->winner < 0) cs_buf_printf(b, "null");
        else cs_buf_printf(b, "\"%s\"", cs_strategy_name(rule_strats[r->winner]));
        cs_buf_printf(b, ", \"agrees\": %s, \"tie\": %s", r->agrees ? "true" : "false",
                      r->agrees == 1 ? "true" : "false");
        for (int i = 0; i < 3; i++) {
            const cfg *c = &r->c[i];
            cs_buf_printf(b, ", \"%s_tokens_per_s\": ", cs_strategy_name(rule_strats[i]));
            if (c->ok && c->fits) cs_buf_printf(b, "%.1f", c->tokens_per_s);
            else cs_buf_printf(b, "null");
        }
        cs_buf_printf(b, ", \"ddp_vs_full_shard_pct\": ");
        if (r->ddp_vs_fs_ok) cs_buf_printf(b, "%.2f", r->ddp_vs_fs_pct);
        else cs_buf_printf(b, "null");
        cs_buf_printf(b, "}");
    }
    cs_buf_printf(b, "\n    ]\n  }\n}\n");
}

/* ---- command --------------------------------------------------------- */

static void plan_help(FILE *f)
{
    fprintf(f,
            "Usage: collsim plan SCENARIO.yaml [--ranks N] [--engine analytic|des]\n"
            "         [--format table|json] [-o FILE]\n"
            "\n"
            "Recommends how to train the scenario: every strategy (ddp, zero1, fsdp_no_shard,\n"
            "fsdp_shard_grad_op, fsdp_full_shard, fsdp_hybrid_shard) x micro-batch 1, 2, 4, ...\n"
            "up to the largest that fits (and the scenario's own), with grad_accum keeping the\n"
            "scenario's global batch (micro_batch x grad_accum x ranks; where no whole\n"
            "grad_accum >= 1 keeps it, the nearest is simulated and the change noted, never\n"
            "recommended). One iteration is simulated per configuration, as `collsim simulate`\n"
            "does; it fits when the simulated peak is within GPU memory. The recommendation is\n"
            "the fastest (tokens/s) that fits, with its tokens/s, MFU, exposed communication\n"
            "and peak memory vs capacity, and how much slower the best other strategy is.\n"
            "\n"
            "Then checks the rule of thumb\n  \"%s\"\n"
            "on this cluster and rank count: generic models of 1B-70B parameters (the\n"
            "scenario's sequence length, vocabulary, micro-batch and training settings), the\n"
            "fastest of ddp / fsdp_shard_grad_op / fsdp_full_shard that fits at each, whether\n"
            "it is the rule's pick, and DDP's speed over FULL_SHARD below 3B. A pick within\n"
            "1 %% of the fastest counts as agreeing (a tie: closer than the simulator's\n"
            "accuracy). Equally fast configurations rank by lower peak memory.\n"
            "\n"
            "  SCENARIO.yaml  cluster, model, training and ranks (configs/scenarios/README.md)\n"
            "  --ranks N      N ranks filling the cluster's nodes in order (replaces the\n"
            "                 scenario's ranks and nodes)\n"
            "  --engine E     how collectives are timed, as for `collsim simulate`: analytic\n"
            "                 (default, or the scenario's collective_engine) or des\n"
            "  --format F     table (default) or json\n"
            "  -o FILE        write to FILE (whole or not at all); default stdout\n"
            "\n"
            "Exit status: 0 ok, 1 output not written or scenario unreadable, 2 bad usage or\n"
            "bad scenario (the message names file:line:column).\n",
            rule_text);
}

int cs_cmd_plan(int argc, char **argv)
{
    const char *cmd = "plan";
    enum { O_RANKS = 256, O_FORMAT, O_ENGINE };
    static const struct option opts[] = {
        {"ranks", required_argument, 0, O_RANKS}, {"format", required_argument, 0, O_FORMAT},
        {"engine", required_argument, 0, O_ENGINE},
        {"output", required_argument, 0, 'o'},    {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    int ranks = 0, engine = -1;
    const char *out_path = NULL;
    cs_format fmt = CS_FORMAT_TABLE;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (ch) {
        case O_RANKS:
            if (cs_cli_int(cmd, "--ranks", optarg, 1, 100000000, &ranks)) return CS_EXIT_USAGE;
            break;
        case O_FORMAT:
            if (cs_format_parse(optarg, &fmt) || fmt == CS_FORMAT_CSV)
                return cs_cli_usage(cmd, "unknown --format '%s' (expected table or json)", optarg);
            break;
        case O_ENGINE:
            if (!strcmp(optarg, "analytic")) engine = CS_ENGINE_ANALYTIC;
            else if (!strcmp(optarg, "des")) engine = CS_ENGINE_DES;
            else return cs_cli_usage(cmd, "--engine expects analytic or des, got '%s'", optarg);
            break;
        case 'o': out_path = optarg; break;
        case 'h': plan_help(stdout); return CS_EXIT_OK;
        case ':': return cs_cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return cs_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return cs_cli_usage(cmd, "%s", "a SCENARIO.yaml is required");
    if (optind + 1 < argc) return cs_cli_usage(cmd, "unexpected argument '%s'", argv[optind + 1]);

    plan *pl = cs_xcalloc(1, sizeof *pl);
    pl->scenario = argv[optind];
    cs_diag d;
    cs_diag_clear(&d);
    int rc = cs_scenario_load_file(pl->scenario, &pl->sc, &d);
    if (rc == 0 && engine >= 0) pl->sc.training.collective_engine = (cs_engine_kind)engine;
    if (rc == 0 && ranks) {
        pl->sc.ranks = ranks;
        pl->sc.nodes = 0;
    }
    if (rc == 0) rc = cs_topology_build(&pl->sc.cluster, pl->sc.ranks, pl->sc.nodes, &pl->topo, &d);
    if (rc == 0) {
        pl->seqs_per_rank = pl->sc.training.micro_batch * pl->sc.training.grad_accum;
        search(pl);
        rc = check_rule(pl, &d);
    }
    if (rc == 0) {
        cs_buf out = {0};
        if (fmt == CS_FORMAT_JSON) render_json(&out, pl);
        else render_table(&out, pl);
        rc = cs_buf_write(&out, out_path, &d);
        cs_buf_free(&out);
    }
    free(pl->cfgs);
    free(pl);
    return rc ? cs_cli_fail(&d) : CS_EXIT_OK;
}
