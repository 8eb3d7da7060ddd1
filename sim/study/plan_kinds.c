/* SPDX-License-Identifier: MIT */
/*
 * plan_kinds.c - the next best of each other kind (plan_kinds.h): for
 * each kind of configuration the recommendation is not of, its fastest
 * eligible configuration, or why none is.
 *
 * Kinds are rows of one table (a dimension of the layout or policy, how
 * many kinds it has, a kind's name and membership). A kind loses on
 * throughput (how much slower its best is), on memory (nothing of it
 * fits: the least it needs, a pruned layout by its floor) or on the batch
 * (what fits changes the global batch). Adding a kind = a row.
 */
#include "study/plan_kinds.h"

#include <stdio.h>
#include <string.h>

#include "train/pipeline_sched.h"

typedef struct kind_row {
    int (*count)(void);
    void (*name)(int i, char *out, size_t n);
    int (*member)(const cs_plan_cfg *c, int i);
} kind_row;

static int two(void) { return 2; }
static int strategies(void) { return CS_STRAT_COUNT; }
static int ckpts(void) { return CS_CKPT_COUNT; }

static void pp_name(int i, char *out, size_t n)
{
    snprintf(out, n, "%s pipeline parallelism", i ? "with" : "without");
}
static int pp_member(const cs_plan_cfg *c, int i) { return (c->pp > 1) == i; }

static void tp_name(int i, char *out, size_t n)
{
    snprintf(out, n, "%s tensor parallelism", i ? "with" : "without");
}
static int tp_member(const cs_plan_cfg *c, int i) { return (c->tp > 1) == i; }

static void strategy_name(int i, char *out, size_t n)
{
    snprintf(out, n, "strategy %s", cs_strategy_name((cs_strategy)i));
}
static int strategy_member(const cs_plan_cfg *c, int i) { return (int)c->strategy == i; }

static void schedule_name(int i, char *out, size_t n)
{
    snprintf(out, n, "schedule %s", cs_pp_schedule_row_at(i)->name);
}
static int schedule_member(const cs_plan_cfg *c, int i)
{
    return c->pp > 1 && c->pp_schedule && !strcmp(c->pp_schedule, cs_pp_schedule_row_at(i)->name);
}

static void ckpt_name(int i, char *out, size_t n)
{
    snprintf(out, n, "checkpointing %s", cs_ckpt_name((cs_ckpt)i));
}
/* a pruned layout has no policy: of every checkpointing kind */
static int ckpt_member(const cs_plan_cfg *c, int i) { return c->pruned || (int)c->checkpointing == i; }

static const kind_row kinds[] = {
    {two, pp_name, pp_member},
    {two, tp_name, tp_member},
    {strategies, strategy_name, strategy_member},
    {cs_pp_schedule_count, schedule_name, schedule_member},
    {ckpts, ckpt_name, ckpt_member},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

/* The least memory c needs: its simulated peak, or a pruned layout's
 * floor; < 0 when it does not apply. */
static double need_bytes(const cs_plan_cfg *c)
{
    return c->pruned ? c->floor_bytes : c->ok ? c->peak_bytes : -1;
}

/* The best of kind (row, i) into a; returns how many configurations
 * are of the kind. */
static int best_of(const cs_plan *p, const kind_row *row, int i, cs_plan_alt *a)
{
    int fit = 0, members = 0;
    for (size_t j = 0; j < p->ncfgs; j++) {
        const cs_plan_cfg *c = &p->cfgs[j];
        if (!row->member(c, i)) continue;
        members++;
        if (cs__plan_eligible(c) && cs__plan_better(c, a->cfg)) a->cfg = c;
        fit += c->ok && c->fits;
        double need = need_bytes(c);
        if (need >= 0 && (!a->least || need < need_bytes(a->least))) a->least = c;
    }
    if (a->cfg) {
        a->loses = "throughput";
        a->slower_pct = 100 * (1 - a->cfg->tokens_per_s / p->best->tokens_per_s);
        a->least = NULL;
    } else {
        a->loses = fit ? "batch" : a->least ? "memory" : "n/a";
    }
    return members;
}

void cs__plan_kinds(cs_plan *p)
{
    p->nalts = 0;
    if (!p->best) return;
    for (size_t k = 0; k < NKINDS; k++)
        for (int i = 0; i < kinds[k].count(); i++) {
            if (kinds[k].member(p->best, i) || p->nalts == CS_PLAN_MAX_ALTS) continue;
            cs_plan_alt *a = &p->alts[p->nalts];
            memset(a, 0, sizeof *a);
            kinds[k].name(i, a->kind, sizeof a->kind);
            /* a kind nothing was searched of (a pinned dimension) is left out */
            if (best_of(p, &kinds[k], i, a)) p->nalts++;
        }
}
