/* SPDX-License-Identifier: MIT */
/*
 * algos.h - the collective algorithms as seen from outside sim/coll: their
 * ids and names, and what each row of the table says that the cluster
 * schema, the calibration and the CLI need (NCCL's default latencies, the
 * enable flag, the texts, the fitted parameter).
 *
 * The ids come from coll/algos.def, in its order; the rows themselves
 * (coll/algo.h) are internal to sim/coll. Nothing here allocates; every
 * string returned is static.
 */
#ifndef CS_ALGOS_H
#define CS_ALGOS_H

#include "coll/ncclmodel.h"

struct cs_cluster;

typedef enum cs_algo_id {
#define CS_ALGO(ID, name) CS_ALGO_##ID,
#include "coll/algos.def"
#undef CS_ALGO
    CS_ALGO_COUNT
} cs_algo_id;

/* Names: "ring", "tree", "nvls", ... */
const char *cs_algo_name(cs_algo_id a);
int cs_algo_parse(const char *s, cs_algo_id *out); /* 0 or CS_EINVAL */

/* NCCL's default latencies of algorithm a in seconds (the cluster's
 * collectives.base_latency / hw_latency start from these). */
double cs_algo_base_latency_s(cs_algo_id a, cs_proto p);
double cs_algo_hw_latency_s(cs_hw h, cs_algo_id a, cs_proto p);

/* Why a may refuse an op or a situation, said after "no a implements op
 * on this cluster"; "" when only the protocols can (ring). */
const char *cs_algo_hint(cs_algo_id a);
/* A sentence for `collective --help` on --algo, or NULL. */
const char *cs_algo_help(cs_algo_id a);

/* The enable flag: its key under `collectives:` ("nvls"), or NULL when a
 * is always on; what the hardware needs for it (for the error on an
 * explicit `true`), and whether cluster c has that (the flag's default;
 * 1 for an algorithm without a flag). */
const char *cs_algo_flag_key(cs_algo_id a);
const char *cs_algo_flag_needs(cs_algo_id a);
int cs_algo_hw_allows(cs_algo_id a, const struct cs_cluster *c);

/* Calibration: the algorithms whose collectives.efficiency is fitted, in
 * fit priority order (k = 0 .. cs_algo_calib_count() - 1), and the fitted
 * parameter's name ("efficiency.tree") and YAML destination
 * ("collectives.efficiency.tree"); NULL for an algorithm not fitted. */
int cs_algo_calib_count(void);
cs_algo_id cs_algo_calib_at(int k);
const char *cs_algo_calib_param(cs_algo_id a);
const char *cs_algo_calib_yaml(cs_algo_id a);

#endif
