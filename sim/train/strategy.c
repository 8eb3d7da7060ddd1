/* SPDX-License-Identifier: MIT */
/*
 * strategy.c - the strategy table: rows indexed by cs_strategy (generated
 * from training.h's CS_STRATEGIES, so the list and the table cannot
 * disagree), the names and aliases, the plot colours, which knobs apply,
 * the reshard rule. The rows themselves are defined by the family files
 * (strategy_ddp.c, strategy_zero.c, strategy_fsdp.c). The process groups
 * a row's `hybrid` implies, and the sharding degrees, are the layout's
 * (layout.c).
 */
#include "train/strategy.h"

#include <stdio.h>
#include <string.h>

#define CS__STRAT_EXTERN(id, name) extern const cs_strategy_row cs__strategy_##name;
CS_STRATEGIES(CS__STRAT_EXTERN)
#undef CS__STRAT_EXTERN

#define CS__STRAT_ROW(id, name) [CS_STRAT_##id] = &cs__strategy_##name,
static const cs_strategy_row *const rows[CS_STRAT_COUNT] = {CS_STRATEGIES(CS__STRAT_ROW)};
#undef CS__STRAT_ROW

#define CS__STRAT_NAME(id, name) [CS_STRAT_##id] = #name,
const char *const cs_strategy_names[CS_STRAT_COUNT + 1] = {CS_STRATEGIES(CS__STRAT_NAME) NULL};
#undef CS__STRAT_NAME

/* Keys, by cs_knob, and how messages name the strategies a key applies
 * to: `which` when set (a family's name), else the list of those
 * strategies; then `note`. */
static const struct {
    const char *key, *which, *note;
} knobs[CS_KNOB_COUNT] = {
    [CS_KNOB_BUCKET_CAP] = {"bucket_cap_mb", NULL, " (DDP's gradient buckets)"},
    [CS_KNOB_FIRST_BUCKET] = {"first_bucket_mb", NULL, " (DDP's gradient buckets)"},
    [CS_KNOB_BUCKET_VIEW] = {"gradient_as_bucket_view", NULL, " (DDP's gradient buckets)"},
    [CS_KNOB_COMM_HOOK] = {"ddp_comm_hook", NULL, " (DDP's gradient buckets)"},
    [CS_KNOB_BACKWARD_PREFETCH] = {"backward_prefetch", "the fsdp_* strategies", ""},
    [CS_KNOB_FORWARD_PREFETCH] = {"forward_prefetch", "the fsdp_* strategies", ""},
    [CS_KNOB_LIMIT_ALL_GATHERS] = {"limit_all_gathers", "the fsdp_* strategies", ""},
    [CS_KNOB_RESHARD] = {"reshard_after_forward", NULL, ""},
    [CS_KNOB_SHARD_GROUP] = {"shard_group", NULL, ""},
    [CS_KNOB_FSDP_VERSION] = {"fsdp_version", "the fsdp_* strategies", ""},
    [CS_KNOB_FSDP_UNIT_LAYERS] = {"fsdp_unit_layers", "the fsdp_* strategies", ""},
    [CS_KNOB_FSDP_HOOK_CPU] = {"fsdp_hook_cpu_ms", "the fsdp_* strategies", ""},
};

const cs_strategy_row *cs_strategy_row_of(cs_strategy s)
{
    CS_ASSERT(s >= 0 && s < CS_STRAT_COUNT);
    return rows[s];
}

const char *cs_strategy_name(cs_strategy s)
{
    CS_ASSERT(s >= 0 && s < CS_STRAT_COUNT);
    return cs_strategy_names[s];
}

int cs_strategy_parse(const char *s, cs_strategy *out)
{
    for (int i = 0; i < CS_STRAT_COUNT; i++)
        if (!strcmp(s, cs_strategy_names[i])) {
            *out = (cs_strategy)i;
            return 0;
        }
    return CS_EINVAL;
}

const char *cs_strategy_alias(int k, cs_strategy *s)
{
    CS_ASSERT(k >= 0);
    for (int i = 0; i < CS_STRAT_COUNT; i++)
        for (const char *const *a = rows[i]->aliases; *a; a++)
            if (k-- == 0) {
                *s = (cs_strategy)i;
                return *a;
            }
    return NULL;
}

int cs_strategy_find(const char *s, cs_strategy *out)
{
    if (cs_strategy_parse(s, out) == 0) return 0;
    cs_strategy x;
    const char *a;
    for (int k = 0; (a = cs_strategy_alias(k, &x)); k++)
        if (!strcmp(a, s)) {
            *out = x;
            return 0;
        }
    return CS_EINVAL;
}

const char *cs_strategy_color(cs_strategy s) { return cs_strategy_row_of(s)->color; }

/* The names of the strategies in `set` (bits by cs_strategy), ", "
 * between them and " <last> " before the final one; what does not fit in
 * len is left out whole. */
static void join(char *buf, size_t len, unsigned set, const char *last)
{
    int total = 0, k = 0;
    for (int i = 0; i < CS_STRAT_COUNT; i++) total += (set >> i) & 1;
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < CS_STRAT_COUNT; i++) {
        if (!((set >> i) & 1)) continue;
        int n;
        if (k == 0) n = snprintf(buf + o, len - o, "%s", cs_strategy_names[i]);
        else if (k < total - 1) n = snprintf(buf + o, len - o, ", %s", cs_strategy_names[i]);
        else n = snprintf(buf + o, len - o, " %s %s", last, cs_strategy_names[i]);
        if (n < 0 || (size_t)n >= len - o) { /* full: no name cut short */
            buf[o] = '\0';
            return;
        }
        o += (size_t)n;
        k++;
    }
}

const char *cs_strategy_knob_key(cs_knob k)
{
    CS_ASSERT(k >= 0 && k < CS_KNOB_COUNT);
    return knobs[k].key;
}

int cs_strategy_knob_applies(cs_strategy s, cs_knob k)
{
    return (cs_strategy_row_of(s)->knobs & CS_KNOB_BIT(k)) != 0;
}

void cs_strategy_knob_scope(cs_knob k, char *buf, size_t len)
{
    CS_ASSERT(k >= 0 && k < CS_KNOB_COUNT);
    char list[512];
    if (knobs[k].which) {
        snprintf(list, sizeof list, "%s", knobs[k].which);
    } else {
        unsigned set = 0;
        for (int i = 0; i < CS_STRAT_COUNT; i++)
            if (cs_strategy_knob_applies((cs_strategy)i, k)) set |= 1u << i;
        join(list, sizeof list, set, "and");
    }
    snprintf(buf, len, "%s%s", list, knobs[k].note);
}

int cs_strategy_reshard_after_forward(const cs_training *t)
{
    return cs_strategy_row_of(t->strategy)->reshards && t->reshard_after_forward != 0;
}
