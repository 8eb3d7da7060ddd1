/* SPDX-License-Identifier: MIT */
/*
 * pricing.h - the price of one collective of the iteration graph: the
 * (algorithm, protocol) the closed form picks, as NCCL's tuner does, and
 * its duration by the build's engine (the closed form, or the
 * discrete-event run on the process group's topology), with a cache of
 * prices shared across builds.
 *
 * The cache is keyed by the process group's topology (compared byte for
 * byte), op, engine and size; each entry holds the chosen (algo, proto)
 * and the duration. Entries are pure functions of their keys, so a build
 * gives the same graph with or without a cache. Meant for DES collectives
 * (a run costs micro- to milliseconds); unbounded: one entry (40 bytes)
 * per distinct collective and one topology copy per distinct group. Not
 * thread-safe. Caller frees with cs_pricing_cache_free.
 */
#ifndef CS_PRICING_H
#define CS_PRICING_H

#include <stddef.h>

#include "base/error.h"
#include "coll/collective.h"
#include "coll/topology.h"

typedef struct cs_pricing_cache cs_pricing_cache;
cs_pricing_cache *cs_pricing_cache_new(void);
void cs_pricing_cache_free(cs_pricing_cache *c);
/* Distinct collectives held, and lookups answered / not answered. */
void cs_pricing_cache_stats(const cs_pricing_cache *c, size_t *entries, unsigned long long *hits,
                            unsigned long long *misses);
/* The cache's slot for topology t (added if new): the first part of every
 * key, found once per group and build. */
int cs_pricing_cache_slot(cs_pricing_cache *c, const cs_topology *t);

/* Prices op x size on topo with engine e: *a, *p as the closed form picks
 * them, *duration_s by e. With a cache (c not NULL, slot from
 * cs_pricing_cache_slot(c, topo)) the answer is looked up first and stored
 * after. Returns 0, or a failed DES run's code with d filled. */
int cs_pricing_price(cs_pricing_cache *c, int slot, const cs_topology *topo, cs_op op,
                     double size, cs_engine_kind e, cs_algo_id *a, cs_proto *p, double *duration_s,
                     cs_diag *d);

#endif
