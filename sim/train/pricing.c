/* SPDX-License-Identifier: MIT */
/*
 * pricing.c - one collective's price for the iteration graph, and the
 * cross-build cache of prices.
 *
 * The (algorithm, protocol) is the closed form's choice
 * (cs_collective_choose, NCCL's tuner); with the DES engine that choice
 * is timed by the discrete-event run (cs_collective_run, engine DES) on
 * the group's topology, else by the closed form. A DES run costs far more
 * than a closed form (O(events log events); multi-node tree all_reduce is
 * O(ranks x chunks)), so builds that repeat collectives (sweeps) share a
 * cache: an open-addressing table keyed by (group topology, op, engine,
 * bytes). Every entry is a pure function of its key, so a cache changes no
 * result, only the time to get it.
 */
#include "train/pricing.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Cross-build cache: distinct group topologies (compared byte for byte:
 * equal bytes are equal topologies; a topology copied with different
 * padding only misses), and an open-addressing table of (topology slot,
 * op, engine, bytes) -> (algo, proto, duration), grown at half load. */
typedef struct xentry {
    double size_bytes;
    double duration_s;
    int slot;          /* topology slot + 1; 0 = empty */
    unsigned char op, engine, algo, proto;
} xentry;

struct cs_pricing_cache {
    cs_topology *topos;
    int ntopos, captopos;
    xentry *tab;
    size_t cap, n;
    unsigned long long hits, misses;
};

cs_pricing_cache *cs_pricing_cache_new(void) { return cs_xcalloc(1, sizeof(cs_pricing_cache)); }

void cs_pricing_cache_free(cs_pricing_cache *c)
{
    if (!c) return;
    free(c->topos);
    free(c->tab);
    free(c);
}

void cs_pricing_cache_stats(const cs_pricing_cache *c, size_t *entries, unsigned long long *hits,
                            unsigned long long *misses)
{
    if (entries) *entries = c->n;
    if (hits) *hits = c->hits;
    if (misses) *misses = c->misses;
}

/* The slot of topology t, added if new. The scalars after the embedded
 * cluster differ first (ranks, nodes), so they are compared first. */
int cs_pricing_cache_slot(cs_pricing_cache *c, const cs_topology *t)
{
    const size_t off = offsetof(cs_topology, ranks);
    for (int i = 0; i < c->ntopos; i++) {
        const cs_topology *u = &c->topos[i];
        if (!memcmp((const char *)u + off, (const char *)t + off, sizeof *t - off) &&
            !memcmp(u, t, off))
            return i;
    }
    if (c->ntopos == c->captopos) {
        c->captopos = c->captopos ? 2 * c->captopos : 8;
        c->topos = cs_xrealloc(c->topos, (size_t)c->captopos * sizeof *c->topos);
    }
    memcpy(&c->topos[c->ntopos], t, sizeof *t);
    return c->ntopos++;
}

static size_t xc_hash(int slot, cs_op op, cs_engine_kind e, double size)
{
    unsigned long long bits;
    memcpy(&bits, &size, sizeof bits);
    unsigned long long h = bits ^ ((unsigned long long)slot << 40) ^
                           ((unsigned long long)op << 56) ^ ((unsigned long long)e << 60);
    h ^= h >> 33; /* splitmix64 finaliser */
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (size_t)h;
}

/* The entry for the key, or the empty place where it belongs (NULL while
 * the table is unallocated). */
static xentry *xc_find(cs_pricing_cache *c, int slot, cs_op op, cs_engine_kind e, double size)
{
    if (!c->cap) return NULL;
    size_t mask = c->cap - 1;
    for (size_t i = xc_hash(slot, op, e, size) & mask;; i = (i + 1) & mask) {
        xentry *x = &c->tab[i];
        if (!x->slot || (x->slot == slot + 1 && x->op == op && x->engine == e &&
                         x->size_bytes == size))
            return x;
    }
}

static void xc_put(cs_pricing_cache *c, int slot, cs_op op, cs_engine_kind e, double size,
                   cs_algo_id a, cs_proto p, double duration_s)
{
    if (2 * (c->n + 1) > c->cap) {
        size_t oldcap = c->cap;
        xentry *old = c->tab;
        c->cap = oldcap ? 2 * oldcap : 1024;
        c->tab = cs_xcalloc(c->cap, sizeof *c->tab);
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].slot) {
                const xentry *o = &old[i];
                *xc_find(c, o->slot - 1, (cs_op)o->op, (cs_engine_kind)o->engine,
                         o->size_bytes) = *o;
            }
        free(old);
    }
    xentry *x = xc_find(c, slot, op, e, size);
    CS_ASSERT(!x->slot);
    *x = (xentry){.size_bytes = size, .duration_s = duration_s, .slot = slot + 1,
                  .op = (unsigned char)op, .engine = (unsigned char)e,
                  .algo = (unsigned char)a, .proto = (unsigned char)p};
    c->n++;
}

/* Chooses (algo, proto) by the closed form, as NCCL's tuner does, and
 * times it with engine e. Returns 0 or the engine's error. */
static int price(const cs_topology *topo, cs_op op, double size, cs_engine_kind e, cs_algo_id *a,
                 cs_proto *p, double *duration_s, cs_diag *d)
{
    int rc = cs_collective_choose(topo, op, size, CS_CHOICE_AUTO, CS_CHOICE_AUTO, a, p, NULL);
    CS_ASSERT(rc == 0);
    if (e == CS_ENGINE_DES) {
        cs_coll_request req = {.op = op, .bytes = size, .algo = (int)*a, .proto = (int)*p,
                               .engine = CS_ENGINE_DES};
        cs_coll_result res;
        rc = cs_collective_run(topo, &req, &res, d);
        if (rc) return rc;
        CS_ASSERT(res.algo == *a && res.proto == *p);
        *duration_s = res.time_s;
        return 0;
    }
    rc = cs_collective_time(topo, op, size, *a, *p, duration_s);
    CS_ASSERT(rc == 0);
    return 0;
}

int cs_pricing_price(cs_pricing_cache *c, int slot, const cs_topology *topo, cs_op op,
                     double size, cs_engine_kind e, cs_algo_id *a, cs_proto *p, double *duration_s,
                     cs_diag *d)
{
    xentry *x = c ? xc_find(c, slot, op, e, size) : NULL;
    if (x && x->slot) {
        c->hits++;
        *a = (cs_algo_id)x->algo;
        *p = (cs_proto)x->proto;
        *duration_s = x->duration_s;
        return 0;
    }
    int rc = price(topo, op, size, e, a, p, duration_s, d);
    if (rc) return rc;
    if (c) {
        c->misses++;
        xc_put(c, slot, op, e, size, *a, *p, *duration_s);
    }
    return 0;
}
