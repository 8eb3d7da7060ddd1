/* SPDX-License-Identifier: MIT */
/*
 * algos.c - the algorithm table: the rows of coll/algos.def in their order,
 * their names, and the queries of coll/algos.h on them.
 *
 * Each row is a cs_algo (coll/algo.h) defined by algo_<name>.c; this file
 * only lists them, so it never changes when an algorithm is added.
 * Invariant (checked by tests/test-collective.c): every row has a hint, a
 * latency table, bandwidth, closed-form and simulate functions, and the
 * fitted rows have distinct priorities.
 */
#include "coll/algos.h"

#include <strings.h>

#include "base/error.h"
#include "coll/algo.h"

#define CS_ALGO(ID, name) extern const cs_algo cs__algo_##name;
#include "coll/algos.def"
#undef CS_ALGO

const cs_algo *const cs__algo_rows[CS_ALGO_COUNT] = {
#define CS_ALGO(ID, name) [CS_ALGO_##ID] = &cs__algo_##name,
#include "coll/algos.def"
#undef CS_ALGO
};

static const char *const names[CS_ALGO_COUNT] = {
#define CS_ALGO(ID, name) [CS_ALGO_##ID] = #name,
#include "coll/algos.def"
#undef CS_ALGO
};

const char *cs_algo_name(cs_algo_id a)
{
    CS_ASSERT(a >= 0 && a < CS_ALGO_COUNT);
    return names[a];
}

int cs_algo_parse(const char *s, cs_algo_id *out)
{
    for (int i = 0; i < CS_ALGO_COUNT; i++)
        if (!strcasecmp(s, names[i])) {
            *out = (cs_algo_id)i;
            return 0;
        }
    return CS_EINVAL;
}

double cs_algo_base_latency_s(cs_algo_id a, cs_proto p)
{
    return cs__algo_row(a)->latency->base_us[p] * 1e-6;
}

double cs_algo_hw_latency_s(cs_hw h, cs_algo_id a, cs_proto p)
{
    return cs__algo_row(a)->latency->hw_us[h][p] * 1e-6;
}

const char *cs_algo_hint(cs_algo_id a) { return cs__algo_row(a)->hint; }

const char *cs_algo_help(cs_algo_id a) { return cs__algo_row(a)->help; }

const char *cs_algo_flag_key(cs_algo_id a) { return cs__algo_row(a)->flag.key; }

const char *cs_algo_flag_needs(cs_algo_id a) { return cs__algo_row(a)->flag.needs; }

int cs_algo_hw_allows(cs_algo_id a, const cs_cluster *c)
{
    const cs_algo_flag *f = &cs__algo_row(a)->flag;
    if (!f->key) return 1;
    return (f->fabric < 0 || (int)c->intra.kind == f->fabric) &&
           c->gpu.compute_capability >= f->min_cc && (!f->sharp || c->inter.sharp);
}

int cs_algo_calib_count(void)
{
    int n = 0;
    for (int a = 0; a < CS_ALGO_COUNT; a++) n += cs__algo_rows[a]->calib.param != NULL;
    return n;
}

/* The fitted rows ordered by priority: the k-th is the one with exactly k
 * fitted rows of lower priority (priorities are distinct). */
cs_algo_id cs_algo_calib_at(int k)
{
    for (int a = 0; a < CS_ALGO_COUNT; a++) {
        const cs_algo_calib *ca = &cs__algo_rows[a]->calib;
        if (!ca->param) continue;
        int before = 0;
        for (int b = 0; b < CS_ALGO_COUNT; b++) {
            const cs_algo_calib *cb = &cs__algo_rows[b]->calib;
            before += cb->param && cb->priority < ca->priority;
        }
        if (before == k) return (cs_algo_id)a;
    }
    CS_PANIC("no fitted algorithm at position %d of %d", k, cs_algo_calib_count());
}

const char *cs_algo_calib_param(cs_algo_id a) { return cs__algo_row(a)->calib.param; }

const char *cs_algo_calib_yaml(cs_algo_id a) { return cs__algo_row(a)->calib.yaml; }
