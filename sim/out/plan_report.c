/* SPDX-License-Identifier: MIT */
/*
 * plan_report.c - the report of a plan (plan_report.h) on the table type
 * (out/table.h). The configurations shown (one per strategy x tp x pp,
 * study/plan.h's `shown`) are one table (cfg_cols: the JSON members of
 * "configs", "recommendation" and "runner_up") with a view for people
 * (cfg_view); the best of each other kind is the table "alternatives",
 * with a line for people on why each loses; the rule of thumb's sizes and
 * verdict are out/rule_report.c's. What a person reads besides (the
 * recommendation in words) is notes. Renders what study/plan computed;
 * decides nothing itself.
 */
#include "out/plan_report.h"

#include <stdio.h>
#include <string.h>

#include "out/rule_report.h"
#include "train/checkpoint.h"

#define N(a) (sizeof a / sizeof a[0])
#define GIB (1024.0 * 1024.0 * 1024.0)

/* ---- the configurations -------------------------------------------------------- */

static const cs_col cfg_cols[] = {
    CS_COL_STR("strategy"),
    CS_COL_INT("tp"),
    CS_COL_INT("pp"),
    CS_COL_INT("virtual_stages"),
    {.name = "pipeline_schedule", .kind = CS_CELL_STR, .flags = CS_COL_NULL}, /* null at pp 1 */
    {.name = "checkpointing", .kind = CS_CELL_STR, .flags = CS_COL_NULL},     /* null: pruned */
    {.name = "selective_ac", .kind = CS_CELL_STR, .flags = CS_COL_NULL},      /* null: not selective */
    CS_COL_INT("micro_batch"),
    CS_COL_INT("grad_accum"),
    CS_COL_BOOL("batch_kept"),
    CS_COL_BOOL("simulated"),
    /* simulated only */
    CS_COL_BOOL("fits"),
    CS_COL_NUM("peak_bytes", "%.0f"),
    CS_COL_NUM("capacity_bytes", "%.0f"),
    CS_COL_NUM("iteration_time_s", "%.6f"),
    CS_COL_NUM("tokens_per_s", "%.1f"),
    CS_COL_NUM("tflops_per_gpu", "%.3f"),
    CS_COL_NUM("mfu", "%.5f"),
    CS_COL_NUM("exposed_comm_s", "%.6f"),
    CS_COL_STR("note"),
    CS_COL_NUM("pipeline_bubble_s", "%.6f"), /* appended: simulated only, as the above */
    /* for the view */
    {.name = "peak_gib", .kind = CS_CELL_NUM, .fmt = "%.2f", .only = CS_FOR_PEOPLE},
    {.name = "fits_text", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},
    {.name = "mfu_pct", .kind = CS_CELL_NUM, .fmt = "%.1f", .only = CS_FOR_PEOPLE},
    {.name = "remark", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE}, /* mark, note */
};

static const cs_col cfg_view[] = {
    {.name = "strategy", .kind = CS_CELL_STR, .width = 20, .flags = CS_COL_LEFT},
    {.name = "tp", .kind = CS_CELL_INT, .width = 3},
    {.name = "pp", .kind = CS_CELL_INT, .width = 3},
    {.name = "v", .of = "virtual_stages", .kind = CS_CELL_INT, .width = 3},
    {.name = "schedule", .of = "pipeline_schedule", .kind = CS_CELL_STR, .width = 16, .sep = " ",
     .flags = CS_COL_LEFT},
    {.name = "ckpt", .of = "checkpointing", .kind = CS_CELL_STR, .width = 9, .flags = CS_COL_LEFT},
    {.name = "sac", .of = "selective_ac", .kind = CS_CELL_STR, .width = 9, .flags = CS_COL_LEFT},
    {.name = "micro", .of = "micro_batch", .kind = CS_CELL_INT, .width = 5},
    {.name = "accum", .of = "grad_accum", .kind = CS_CELL_INT, .width = 5},
    CS_VIEW_NUM("peak GiB", "peak_gib", "%.2f", 9, NULL),
    {.name = "fits", .of = "fits_text", .kind = CS_CELL_STR, .width = 5},
    CS_VIEW_NUM("iter s", "iteration_time_s", "%.4f", 10, NULL),
    CS_VIEW_NUM("tokens/s", "tokens_per_s", "%.0f", 12, NULL),
    CS_VIEW_NUM("MFU %", "mfu_pct", "%.1f", 6, NULL),
    CS_VIEW_NUM("exposed s", "exposed_comm_s", "%.4f", 10, NULL),
    CS_VIEW_NUM("bubble s", "pipeline_bubble_s", "%.4f", 9, NULL),
    {.name = "note", .of = "remark", .kind = CS_CELL_STR, .sep = "  ", .flags = CS_COL_LEFT},
};

/* c's layout cells (configs' and alternatives' columns alike): strategy,
 * tp, pp, virtual_stages, pipeline_schedule (null at pp 1). */
static void layout_cells(cs_table *t, const cs_plan_cfg *c)
{
    cs_table_str(t, cs_strategy_name(c->strategy));
    cs_table_int(t, c->tp);
    cs_table_int(t, c->pp);
    cs_table_int(t, c->virtual_stages);
    if (c->pp_schedule) cs_table_str(t, c->pp_schedule);
    else cs_table_skip(t);
}

/* c's policy cells: checkpointing, selective_ac (null unless selective),
 * micro_batch, grad_accum. */
static void policy_cells(cs_table *t, const cs_plan_cfg *c)
{
    char sac[32];
    cs_table_str(t, cs_ckpt_name(c->checkpointing));
    if (c->checkpointing == CS_CKPT_SELECTIVE)
        cs_table_str(t, cs_checkpoint_selective_name(c->selective_ac, sac, sizeof sac));
    else
        cs_table_skip(t);
    cs_table_int(t, c->micro_batch);
    cs_table_int(t, c->grad_accum);
}

/* Appends c as a row of t; mark ("" or "<- recommended") for people. */
static void cfg_row(cs_table *t, const cs_plan_cfg *c, const char *mark)
{
    cs_table_row(t);
    layout_cells(t, c);
    if (c->pruned)
        for (int i = 0; i < 4; i++) cs_table_skip(t); /* no policy, micro-batch */
    else
        policy_cells(t, c);
    cs_table_bool(t, c->batch_kept);
    cs_table_bool(t, c->ok);
    if (c->ok) {
        cs_table_bool(t, c->fits);
        cs_table_num(t, c->peak_bytes);
        cs_table_num(t, c->capacity_bytes);
        cs_table_num(t, c->iteration_time_s);
        cs_table_num(t, c->tokens_per_s);
        cs_table_num(t, c->tflops_per_gpu);
        cs_table_num(t, c->mfu);
        cs_table_num(t, c->exposed_comm_s);
    } else {
        for (int i = 0; i < 8; i++) cs_table_skip(t);
    }
    cs_table_str(t, c->note);
    if (!c->ok) {
        for (int i = 0; i < 4; i++) cs_table_skip(t);
        cs_table_str(t, c->note);
        return;
    }
    cs_table_num(t, c->pipeline_bubble_s);
    cs_table_num(t, c->peak_bytes / GIB);
    cs_table_str(t, c->fits ? "yes" : "OOM");
    cs_table_num(t, 100 * c->mfu);
    if (!*mark && !*c->note) return;
    char remark[640];
    snprintf(remark, sizeof remark, "%s%s%s", mark, *mark && *c->note ? " " : "", c->note);
    cs_table_str(t, remark);
}

static cs_table *cfg_table(cs_doc *doc, const char *name, unsigned flags)
{
    return cs_doc_table(doc, &(cs_table_spec){name, cfg_cols, N(cfg_cols), CS_FOR_TREE, flags});
}

/* ---- document members ------------------------------------------------------------ */

enum {
    F_TITLE, F_SCENARIO, F_CLUSTER, F_MODEL, F_PARAMS, F_RANKS, F_NODES, F_GLOBAL_BATCH,
    F_RUNNER_SLOWER, F_SIMULATED, F_PRUNED, F_COUNT
};
static const cs_col fields[F_COUNT] = {
    [F_TITLE] = CS_COL_STR("title"),
    [F_SCENARIO] = {.name = "scenario", .kind = CS_CELL_STR, .flags = CS_COL_NULL},
    [F_CLUSTER] = CS_COL_STR("cluster"),
    [F_MODEL] = CS_COL_STR("model"),
    [F_PARAMS] = CS_COL_NUM("params", "%.0f"),
    [F_RANKS] = CS_COL_INT("ranks"),
    [F_NODES] = CS_COL_INT("nodes"),
    [F_GLOBAL_BATCH] = CS_COL_INT("global_batch"),
    [F_RUNNER_SLOWER] = CS_COL_NUM("runner_up_slower_pct", "%.2f"),
    [F_SIMULATED] = CS_COL_INT("simulated"),
    [F_PRUNED] = CS_COL_INT("pruned"),
};

/* A member of the tree on its own line: a fields table of field k, its
 * row begun. */
static cs_table *member(cs_doc *doc, int k) { return cs_doc_field(doc, &fields[k]); }

static void member_str(cs_doc *doc, int k, const char *v) { cs_table_str(member(doc, k), v); }
static void member_int(cs_doc *doc, int k, long long v) { cs_table_int(member(doc, k), v); }

/* ---- notes for people ------------------------------------------------------------------- */

/* c's layout and policy in words: "fsdp_full_shard, tp 8, pp 4 x v 2
 * (interleaved_1f1b), micro_batch 1, grad_accum 16, checkpointing
 * selective (op)"; pp and the selective flavour only where they apply
 * (a plan without them reads as before them). */
static void cfg_text(char *out, size_t n, const cs_plan_cfg *c)
{
    char pp[96] = "", sac[32], ck[64];
    if (c->pp > 1 && c->virtual_stages > 1)
        snprintf(pp, sizeof pp, ", pp %d x v %d (%s)", c->pp, c->virtual_stages, c->pp_schedule);
    else if (c->pp > 1)
        snprintf(pp, sizeof pp, ", pp %d (%s)", c->pp, c->pp_schedule);
    if (c->checkpointing == CS_CKPT_SELECTIVE)
        snprintf(ck, sizeof ck, "selective (%s)",
                 cs_checkpoint_selective_name(c->selective_ac, sac, sizeof sac));
    else
        snprintf(ck, sizeof ck, "%s", cs_ckpt_name(c->checkpointing));
    if (c->pruned)
        snprintf(out, n, "%s, tp %d%s", cs_strategy_name(c->strategy), c->tp, pp);
    else
        snprintf(out, n, "%s, tp %d%s, micro_batch %d, grad_accum %d, checkpointing %s",
                 cs_strategy_name(c->strategy), c->tp, pp, c->micro_batch, c->grad_accum, ck);
}

static void recommendation_notes(cs_doc *doc, const cs_plan *p)
{
    const cs_plan_cfg *c = p->best, *r = p->runner;
    char text[256];
    if (!c && p->nsimulated == 0 && p->npruned == 0) {
        cs_doc_note(doc, "recommended: none: no configuration applies (the notes say why)\n");
        return;
    }
    if (!c) {
        cs_doc_note(doc, "recommended: none: no strategy fits with micro-batch 1 while keeping the "
                         "global batch; use more GPUs, activation checkpointing or a smaller "
                         "model\n");
        return;
    }
    cfg_text(text, sizeof text, c);
    cs_doc_note(doc, "recommended: %s\n", text);
    cs_doc_note(doc, "  tokens/s              %.0f (all GPUs), %.1f model TFLOPS per GPU\n",
                c->tokens_per_s, c->tflops_per_gpu);
    cs_doc_note(doc, "  MFU                   %.1f %%\n", 100 * c->mfu);
    cs_doc_note(doc, "  exposed communication %.4f s (%.1f %% of the %.4f s iteration)\n",
                c->exposed_comm_s,
                c->iteration_time_s > 0 ? 100 * c->exposed_comm_s / c->iteration_time_s : 0,
                c->iteration_time_s);
    if (c->pp > 1) /* idle, not communication (iteration.h) */
        cs_doc_note(doc, "  pipeline bubble       %.4f s (%.1f %% of the iteration)\n",
                    c->pipeline_bubble_s,
                    c->iteration_time_s > 0 ? 100 * c->pipeline_bubble_s / c->iteration_time_s : 0);
    cs_doc_note(doc, "  peak memory           %.2f GiB of %.2f GiB (%.0f %%)\n",
                c->peak_bytes / GIB, c->capacity_bytes / GIB,
                100 * c->peak_bytes / c->capacity_bytes);
    if (r) {
        cfg_text(text, sizeof text, r);
        cs_doc_note(doc, "  runner-up             %s: %.0f tokens/s, %.2f %% slower%s\n", text,
                    r->tokens_per_s, p->runner_slower_pct,
                    p->runner_as_fast ? " (as fast: the recommendation needs less memory)" : "");
    } else {
        cs_doc_note(doc, "  runner-up             none: no other strategy fits\n");
    }
}

/* ---- the best of each other kind -------------------------------------------------------- */

static const cs_col alt_cols[] = {
    CS_COL_STR("kind"),
    CS_COL_STR("loses"),
    {.name = "slower_pct", .kind = CS_CELL_NUM, .fmt = "%.2f", .flags = CS_COL_NULL},
    {.name = "least_bytes", .kind = CS_CELL_NUM, .fmt = "%.0f", .flags = CS_COL_NULL},
    {.name = "least_is_floor", .kind = CS_CELL_BOOL, .flags = CS_COL_NULL},
    {.name = "strategy", .kind = CS_CELL_STR, .flags = CS_COL_NULL},
    {.name = "tp", .kind = CS_CELL_INT, .flags = CS_COL_NULL},
    {.name = "pp", .kind = CS_CELL_INT, .flags = CS_COL_NULL},
    {.name = "virtual_stages", .kind = CS_CELL_INT, .flags = CS_COL_NULL},
    {.name = "pipeline_schedule", .kind = CS_CELL_STR, .flags = CS_COL_NULL},
    {.name = "checkpointing", .kind = CS_CELL_STR, .flags = CS_COL_NULL},
    {.name = "selective_ac", .kind = CS_CELL_STR, .flags = CS_COL_NULL},
    {.name = "micro_batch", .kind = CS_CELL_INT, .flags = CS_COL_NULL},
    {.name = "grad_accum", .kind = CS_CELL_INT, .flags = CS_COL_NULL},
    {.name = "tokens_per_s", .kind = CS_CELL_NUM, .fmt = "%.1f", .flags = CS_COL_NULL},
    {.name = "peak_bytes", .kind = CS_CELL_NUM, .fmt = "%.0f", .flags = CS_COL_NULL},
};

/* One alternative as a row of t: its best (or least) configuration. */
static void alt_row(cs_table *t, const cs_plan_alt *a)
{
    const cs_plan_cfg *c = a->cfg ? a->cfg : a->least;
    cs_table_row(t);
    cs_table_str(t, a->kind);
    cs_table_str(t, a->loses);
    if (a->cfg) cs_table_num(t, a->slower_pct);
    else cs_table_skip(t);
    if (!a->cfg && c) {
        cs_table_num(t, c->pruned ? c->floor_bytes : c->peak_bytes);
        cs_table_bool(t, c->pruned);
    } else {
        cs_table_skip(t);
        cs_table_skip(t);
    }
    if (!c) return;
    layout_cells(t, c);
    if (c->pruned) return;
    policy_cells(t, c);
    if (!c->ok) return;
    cs_table_num(t, c->tokens_per_s);
    cs_table_num(t, c->peak_bytes);
}

/* The alternatives: the JSON table "alternatives", and for people one
 * line each saying why it loses. */
static void alternatives(cs_doc *doc, const cs_plan *p)
{
    cs_table *t = cs_doc_table(doc, &(cs_table_spec){"alternatives", alt_cols, N(alt_cols),
                                                      CS_FOR_TREE, 0});
    if (p->nalts) cs_doc_note(doc, "\nThe best of each other kind, and why it loses:\n");
    char text[256];
    for (int i = 0; i < p->nalts; i++) {
        const cs_plan_alt *a = &p->alts[i];
        alt_row(t, a);
        cs_doc_note(doc, "  %-34s ", a->kind);
        if (a->cfg) {
            cfg_text(text, sizeof text, a->cfg);
            cs_doc_note(doc, "throughput: %s: %.0f tokens/s, %.2f %% slower\n", text,
                        a->cfg->tokens_per_s, a->slower_pct);
        } else if (a->least && !strcmp(a->loses, "memory")) {
            const cs_plan_cfg *c = a->least;
            cfg_text(text, sizeof text, c);
            cs_doc_note(doc, "memory: nothing fits; the least, %s, needs %s%.2f GiB of %.2f GiB%s\n",
                        text, c->pruned ? "over " : "",
                        (c->pruned ? c->floor_bytes : c->peak_bytes) / GIB, c->capacity_bytes / GIB,
                        c->pruned ? " (parameters and optimizer states alone)" : "");
        } else if (!strcmp(a->loses, "batch")) {
            cs_doc_note(doc, "batch: what fits changes the global batch\n");
        } else {
            cs_doc_note(doc, "n/a: no configuration of the kind applies\n");
        }
    }
}

/* ---- the report ---------------------------------------------------------------------------- */

/* The title, the inputs and the configurations, with their notes. */
static void head(cs_doc *doc, const char *scenario, const cs_plan *p)
{
    const cs_topology *topo = p->topo;
    char title[512];
    snprintf(title, sizeof title, "collsim plan: %s (%.3g params) on %s, %d ranks on %d nodes",
             p->model->name, p->model->params, topo->cluster.name, topo->ranks, topo->nodes);
    cs_doc_note(doc, "# %s\n# global batch %d sequences = micro_batch %d x grad_accum %d x %d ranks "
                     "(%s%s)\n\n",
                title, (int)p->global_batch, p->training->micro_batch,
                p->training->grad_accum, p->dp_ranks, scenario ? "scenario " : "no scenario",
                scenario ? scenario : "");
    member_str(doc, F_TITLE, title);
    if (scenario) member_str(doc, F_SCENARIO, scenario);
    else member(doc, F_SCENARIO); /* null */
    member_str(doc, F_CLUSTER, topo->cluster.name);
    member_str(doc, F_MODEL, p->model->name);
    cs_table_num(member(doc, F_PARAMS), p->model->params);
    member_int(doc, F_RANKS, topo->ranks);
    member_int(doc, F_NODES, topo->nodes);
    member_int(doc, F_GLOBAL_BATCH, p->global_batch);
    member_int(doc, F_SIMULATED, (long long)p->nsimulated);
    member_int(doc, F_PRUNED, (long long)p->npruned);
    cs_table *t = cfg_table(doc, "configs", 0);
    for (size_t i = 0; i < p->nshown; i++) {
        const cs_plan_cfg *c = p->shown[i];
        cfg_row(t, c, c == p->best ? "<- recommended" : c == p->runner ? "<- runner-up" : "");
    }
    cs_doc_view(doc, t, &(cs_table_spec){NULL, cfg_view, N(cfg_view), CS_FOR_PEOPLE, 0});
    cs_doc_note(doc, "\nEach row: the best of one strategy x tp x pp over its pipelines, "
                     "checkpointing and micro-batches (the alternatives below: the best of each "
                     "other kind). %zu configurations simulated; %zu layouts pruned unsimulated "
                     "(their parameters and optimizer states alone exceed the GPU).\n",
                p->nsimulated, p->npruned);
}

void cs_plan_report(cs_buf *b, cs_format f, const char *scenario, const cs_plan *p)
{
    cs_doc *doc = cs_doc_new_as("plan");
    head(doc, scenario, p);
    cs_doc_note(doc, "\n");
    recommendation_notes(doc, p);
    cs_table *best = cfg_table(doc, "recommendation", CS_TABLE_OBJECT);
    if (p->best) cfg_row(best, p->best, "");
    cs_table *runner = cfg_table(doc, "runner_up", CS_TABLE_OBJECT);
    if (p->runner) {
        cfg_row(runner, p->runner, "");
        cs_table_num(member(doc, F_RUNNER_SLOWER), p->runner_slower_pct);
    }
    alternatives(doc, p);
    const cs_training *t = p->training;
    cs_doc_note(doc, "\nRule of thumb: \"%s\"\n", cs_plan_rule_text());
    cs_doc_note(doc, "checked on %s, %d ranks, generic models (sequence %d, vocabulary %d), "
                     "micro_batch %d x grad_accum %d:\n\n",
                p->topo->cluster.name, p->topo->ranks, p->model->seq_len, p->model->vocab,
                t->micro_batch, t->grad_accum);
    cs_rule_columns rc; /* outlives doc: written below */
    cs_rule_report_columns(&rc, 0);
    cs_rule_report_plan(doc, &p->rule, &rc);
    cs_doc_write(b, doc, f);
    cs_doc_free(doc);
}
