/* SPDX-License-Identifier: MIT */
/*
 * rule_report.c - the report of the rule-of-thumb check (rule_report.h)
 * on the table type (out/table.h), for plan (one rank count) and
 * crossover (several). The rule's sizes are one table (rule_cols, inside
 * the JSON group "rule_of_thumb" for plan, the table "rule_of_thumb" with
 * a "ranks" column for crossover; its tokens/s keys are named after the
 * rule's strategies) with a view for people (rule_view, wider where each
 * strategy's chosen micro-batch and checkpointing are shown); the verdict
 * (the sizes that agree, why the others miss, the runs of each winner,
 * the DDP-vs-FULL_SHARD claim) is notes. Renders what study/plan.c
 * computed (cs_plan_rule); decides nothing itself.
 */
#include "out/rule_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define N(a) (sizeof a / sizeof a[0])

#define RULE_TOKENS 5 /* the first of the rule strategies' tokens/s columns */
static const cs_col rule_cols[] = {
    CS_COL_NUM("params", "%.0f"),
    CS_COL_STR("rule"),
    {.name = "winner", .kind = CS_CELL_STR, .flags = CS_COL_NULL},
    CS_COL_BOOL("agrees"),
    CS_COL_BOOL("tie"),
    /* [RULE_TOKENS + i]: "<strategy i>_tokens_per_s", named when rendered */
    CS_COL_NUM(NULL, "%.1f"),
    CS_COL_NUM(NULL, "%.1f"),
    CS_COL_NUM(NULL, "%.1f"),
    CS_COL_NUM("ddp_vs_full_shard_pct", "%.2f"),
    /* for the view */
    {.name = "params_text", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},
    {.name = "winner_text", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},
    {.name = "agrees_text", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},
    {.name = "tokens_0", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},
    {.name = "tokens_1", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},
    {.name = "tokens_2", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},
    {.name = "claim_text", .kind = CS_CELL_STR, .only = CS_FOR_PEOPLE},
};
_Static_assert(CS_PLAN_RULE_STRATEGIES == 3, "rule_cols holds three tokens/s columns");

/* The rule's view; TOK: the width of the tokens/s columns (wider where
 * they carry each strategy's chosen configuration: "117648 (mb 2)"). */
#define RULE_VIEW(TOK)                                                                             \
    {                                                                                              \
        {.name = "params", .of = "params_text", .kind = CS_CELL_STR, .width = 7},                  \
        {.name = "rule says", .of = "rule", .kind = CS_CELL_STR, .width = 19, .sep = "  ",         \
         .flags = CS_COL_LEFT},                                                                    \
        {.name = "simulated winner", .of = "winner_text", .kind = CS_CELL_STR, .width = 19,        \
         .flags = CS_COL_LEFT},                                                                    \
        {.name = "agrees", .of = "agrees_text", .kind = CS_CELL_STR, .width = 7,                   \
         .flags = CS_COL_LEFT},                                                                    \
        {.name = "ddp tok/s", .of = "tokens_0", .kind = CS_CELL_STR, .width = (TOK)},             \
        {.name = "sgo tok/s", .of = "tokens_1", .kind = CS_CELL_STR, .width = (TOK)},             \
        {.name = "full tok/s", .of = "tokens_2", .kind = CS_CELL_STR, .width = (TOK)},            \
        {.name = "DDP vs FULL_SHARD (claim +20-30 %)", .of = "claim_text", .kind = CS_CELL_STR,   \
         .sep = "  ", .flags = CS_COL_LEFT},                                                       \
    }
static const cs_col rule_view[] = RULE_VIEW(11);
static const cs_col rule_view_searched[] = RULE_VIEW(20);
#undef RULE_VIEW

_Static_assert(N(rule_cols) + 1 == CS_RULE_COLS_MAX, "cs_rule_columns holds rule_cols and ranks");

void cs_rule_report_columns(cs_rule_columns *rc, int with_ranks)
{
    size_t o = with_ranks ? 1 : 0;
    if (with_ranks) rc->cols[0] = (cs_col)CS_COL_INT("ranks");
    memcpy(rc->cols + o, rule_cols, sizeof rule_cols);
    rc->ncols = N(rule_cols) + o;
    rc->with_ranks = with_ranks;
    for (int i = 0; i < CS_PLAN_RULE_STRATEGIES; i++) {
        snprintf(rc->names[i], sizeof rc->names[i], "%s_tokens_per_s",
                 cs_strategy_name(cs_plan_rule_strategy(i)));
        rc->cols[o + RULE_TOKENS + i].name = rc->names[i];
    }
}

/* 7B, 350M */
static void fmt_params(char *out, size_t len, double p)
{
    if (p >= 1e9) snprintf(out, len, "%gB", p / 1e9);
    else snprintf(out, len, "%gM", p / 1e6);
}

static const char *rule_pick(const cs_plan_rule_row *r)
{
    return cs_strategy_name(cs_plan_rule_strategy(r->rule));
}

static const char *winner_name(const cs_plan_rule_row *r)
{
    return r->winner < 0 ? NULL : cs_strategy_name(cs_plan_rule_strategy(r->winner));
}

/* A searched configuration's tokens/s with its choice: "117648 (mb 2)",
 * "89748 (mb 32, full)". */
static void tokens_text(char *text, size_t len, const cs_plan_cfg *c, int searched)
{
    if (!searched) {
        snprintf(text, len, "%.0f", c->tokens_per_s);
        return;
    }
    snprintf(text, len, "%.0f (mb %d%s%s)", c->tokens_per_s, c->micro_batch,
             c->checkpointing == CS_CKPT_NONE ? "" : ", ",
             c->checkpointing == CS_CKPT_NONE ? "" : cs_ckpt_name(c->checkpointing));
}

static void rule_row(cs_table *t, const cs_rule_columns *rc, const cs_plan_rule *rule,
                     const cs_plan_rule_row *r)
{
    cs_table_row(t);
    if (rc->with_ranks) cs_table_int(t, rule->ranks);
    cs_table_num(t, r->params);
    cs_table_str(t, rule_pick(r));
    if (r->winner < 0) cs_table_skip(t);
    else cs_table_str(t, winner_name(r));
    cs_table_bool(t, r->agrees);
    cs_table_bool(t, r->agrees == 1);
    for (int i = 0; i < CS_PLAN_RULE_STRATEGIES; i++)
        cs_table_num(t, r->c[i].ok && r->c[i].fits ? r->c[i].tokens_per_s : NAN);
    cs_table_num(t, r->claim_checked ? r->ddp_vs_fs_pct : NAN);
    char text[64];
    fmt_params(text, sizeof text, r->params);
    cs_table_str(t, text);
    cs_table_str(t, r->winner < 0 ? "none fits" : winner_name(r));
    cs_table_str(t, r->agrees == 2 ? "yes" : r->agrees ? "tie" : "no");
    for (int i = 0; i < CS_PLAN_RULE_STRATEGIES; i++) {
        const cs_plan_cfg *c = &r->c[i];
        tokens_text(text, sizeof text, c, rule->searched);
        cs_table_str(t, !c->ok ? "n/a" : !c->fits ? "OOM" : text);
    }
    if (r->claim_checked) {
        snprintf(text, sizeof text, "%+.1f %% (%s)", r->ddp_vs_fs_pct,
                 r->claim_holds ? "holds" : "does not hold");
        cs_table_str(t, text);
    } else if (r->in_claim) {
        cs_table_str(t, "n/a (one of them does not fit)");
    }
}

/* The rows of rule into t. */
static void rule_rows(cs_table *t, const cs_rule_columns *rc, const cs_plan_rule *rule)
{
    for (int k = 0; k < rule->nsizes; k++) rule_row(t, rc, rule, &rule->rows[k]);
}

/* The group's members besides its rows, each on its own line. */
enum { F_TEXT, F_MICRO_BATCH, F_GRAD_ACCUM, F_AGREES, F_SIZES, F_COUNT };
static const cs_col fields[F_COUNT] = {
    [F_TEXT] = CS_COL_STR("text"),
    [F_MICRO_BATCH] = CS_COL_INT("micro_batch"),
    [F_GRAD_ACCUM] = CS_COL_INT("grad_accum"),
    [F_AGREES] = CS_COL_INT("agrees"),
    [F_SIZES] = CS_COL_INT("sizes"),
};

/* The group "rule_of_thumb" for the tree; returns its rows table. */
static const cs_table *rule_group(cs_doc *doc, const cs_plan_rule *r, const cs_rule_columns *rc)
{
    cs_doc *g = cs_doc_group(doc, "rule_of_thumb");
    cs_table_str(cs_doc_field(g, &fields[F_TEXT]), cs_plan_rule_text());
    cs_table_int(cs_doc_field(g, &fields[F_MICRO_BATCH]), r->micro_batch);
    cs_table_int(cs_doc_field(g, &fields[F_GRAD_ACCUM]), r->grad_accum);
    cs_table_int(cs_doc_field(g, &fields[F_AGREES]), r->agrees);
    cs_table_int(cs_doc_field(g, &fields[F_SIZES]), r->nsizes);
    cs_table *t = cs_doc_table(g, &(cs_table_spec){"rows", rc->cols, rc->ncols, CS_FOR_TREE, 0});
    rule_rows(t, rc, r);
    return t;
}

/* Where the rule's pick is not the winner, why. */
static void rule_misses(cs_doc *doc, const cs_plan_rule *rule)
{
    for (int k = 0; k < rule->nsizes; k++) {
        const cs_plan_rule_row *r = &rule->rows[k];
        if (r->agrees == 2) continue;
        char s[16];
        fmt_params(s, sizeof s, r->params);
        const cs_plan_cfg *pick = &r->c[r->rule];
        if (r->winner < 0 && rule->searched)
            cs_doc_note(doc, "  %s: nothing fits, even micro_batch 1 with the most recomputation\n",
                        s);
        else if (r->winner < 0)
            cs_doc_note(doc, "  %s: nothing fits at micro_batch %d\n", s, rule->micro_batch);
        else if (!pick->ok || !pick->fits)
            cs_doc_note(doc, "  %s: the rule's %s does not fit; %s is fastest\n", s, rule_pick(r),
                        winner_name(r));
        else if (r->pick_slower_pct < 0.005)
            cs_doc_note(doc, "  %s: the rule's %s is as fast as %s, which needs less memory\n", s,
                        rule_pick(r), winner_name(r));
        else
            cs_doc_note(doc, "  %s: %s is fastest; the rule's %s is %.2f %% slower%s\n", s,
                        winner_name(r), rule_pick(r), r->pick_slower_pct,
                        r->agrees ? " (a tie: counted as agreeing)" : "");
    }
}

/* The verdict: the sizes that agree, the misses, the runs of the simulated
 * winner over the sizes, the DDP claim. */
static void rule_verdict(cs_doc *doc, const cs_plan_rule *rule)
{
    const cs_plan_rule_row *rows = rule->rows;
    const int n = rule->nsizes;
    cs_doc_note(doc, "\nOn %s with %d GPUs the rule's pick is the fastest (or within %.0f %% of it) "
                     "at %d of %d sizes",
                rule->cluster, rule->ranks, 100 * CS_PLAN_TIE_FRACTION,
                rule->agrees, n);
    const char *sep = " (";
    char s[16], hi[16];
    for (int k = 0; k < n; k++) {
        if (!rows[k].agrees) continue;
        fmt_params(s, sizeof s, rows[k].params);
        cs_doc_note(doc, "%s%s", sep, s);
        sep = ", ";
    }
    cs_doc_note(doc, "%s.\n", *sep == ',' ? ")" : "");
    rule_misses(doc, rule);
    cs_doc_note(doc, "Simulated winners: ");
    for (int k = 0, j; k < n; k = j + 1) {
        int w = rows[k].winner;
        for (j = k; j + 1 < n && rows[j + 1].winner == w;) j++;
        fmt_params(s, sizeof s, rows[k].params);
        fmt_params(hi, sizeof hi, rows[j].params);
        cs_doc_note(doc, "%s%s %s%s%s", k ? ", " : "", w < 0 ? "none fits" : winner_name(&rows[k]),
                    s, j > k ? "-" : "", j > k ? hi : "");
    }
    cs_doc_note(doc, ".\n");
    if (rule->claim_checked)
        cs_doc_note(doc, "\"DDP 20-30%% faster than FSDP below 3B\": DDP vs FULL_SHARD is within "
                         "+20-30 %% at %d of the %d sizes below 3B where both fit.\n",
                    rule->claim_holds, rule->claim_checked);
    else
        cs_doc_note(doc, "\"DDP 20-30%% faster than FSDP below 3B\": not checkable here (DDP or "
                         "FULL_SHARD does not fit below 3B).\n");
}

/* For people: the rule's sizes (rows first .. first + n - 1 of src) and
 * its verdict. */
static void rule_text(cs_doc *doc, const cs_table *src, size_t first, const cs_plan_rule *rule)
{
    const cs_col *view = rule->searched ? rule_view_searched : rule_view;
    size_t nview = rule->searched ? N(rule_view_searched) : N(rule_view);
    cs_doc_view_rows(doc, src, &(cs_table_spec){NULL, view, nview, CS_FOR_PEOPLE, 0}, first,
                     (size_t)rule->nsizes);
    rule_verdict(doc, rule);
}

void cs_rule_report_plan(cs_doc *doc, const cs_plan_rule *rule, const cs_rule_columns *rc)
{
    rule_text(doc, rule_group(doc, rule, rc), 0, rule);
}

void cs_rule_report_ranks(cs_doc *doc, const cs_plan_rule *rules, size_t n)
{
    static cs_rule_columns columns; /* outlives every doc; the same bytes each time */
    cs_rule_columns *rc = &columns;
    cs_rule_report_columns(rc, 1);
    cs_table *t = cs_doc_table(doc, &(cs_table_spec){"rule_of_thumb", rc->cols, rc->ncols,
                                                      CS_FOR_TREE, 0});
    for (size_t i = 0; i < n; i++) rule_rows(t, rc, &rules[i]);
    cs_doc_note(doc, "\nRule of thumb: \"%s\"\n", cs_plan_rule_text());
    for (size_t i = 0, first = 0; i < n; first += (size_t)rules[i++].nsizes) {
        cs_doc_note(doc, "\n%d GPUs, generic models (sequence %d, vocabulary %d), each strategy at "
                         "its fastest micro-batch and checkpointing that fit:\n\n",
                    rules[i].ranks, rules[i].seq_len, rules[i].vocab);
        rule_text(doc, t, first, &rules[i]);
    }
}

