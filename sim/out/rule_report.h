/* SPDX-License-Identifier: MIT */
/*
 * rule_report.h - the report of the rule-of-thumb check (study/plan.h's
 * cs_plan_rule): each size's rule pick, simulated winner and each rule
 * strategy's tokens/s, and the verdict in words, appended to a caller's
 * doc (out/table.h) for plan (one rank count) and crossover (several).
 */
#ifndef CS_RULE_REPORT_H
#define CS_RULE_REPORT_H

#include "out/table.h"
#include "study/plan.h"

/* The rule's columns, the tokens/s ones named after the rule's strategies,
 * after a "ranks" column when with_ranks. Caller-owned; it must outlive
 * every doc it is used in. */
#define CS_RULE_COLS_MAX 17
typedef struct cs_rule_columns {
    char names[CS_PLAN_RULE_STRATEGIES][64];
    cs_col cols[CS_RULE_COLS_MAX];
    size_t ncols;
    int with_ranks;
} cs_rule_columns;
void cs_rule_report_columns(cs_rule_columns *rc, int with_ranks);

/* plan's rule appended to doc: JSON the group "rule_of_thumb" (text,
 * micro_batch, grad_accum, agrees, sizes, rows in rc's columns, made
 * without ranks); for people the sizes and the verdict. */
void cs_rule_report_plan(cs_doc *doc, const cs_plan_rule *rule, const cs_rule_columns *rc);

/* The rule checked at n rank counts (crossover's), appended to doc: for
 * people, per rank count the sizes (each strategy's tokens/s with the
 * micro-batch and checkpointing it chose) and the verdict, as plan words
 * them; JSON: one table "rule_of_thumb", plan's rule rows after a "ranks"
 * column. rules must outlive doc. */
void cs_rule_report_ranks(cs_doc *doc, const cs_plan_rule *rules, size_t n);

#endif
