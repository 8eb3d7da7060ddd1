/* SPDX-License-Identifier: MIT */
/*
 * cluster_schema.h - internal to sim/config: the cluster schema, one
 * table of cs_yfield rows per mapping, which config.c reads with and
 * cluster_yaml.c writes with; and the defaults of what the YAML may omit.
 */
#ifndef CS_CLUSTER_SCHEMA_H
#define CS_CLUSTER_SCHEMA_H

#include "base/yamlnode.h"
#include "coll/cluster.h"
#include "config/yamlwriter.h"

/* One schema row: key, kind, where it goes, flags; extras are designated. */
#define ROW(n, k, off, fl) .name = (n), .kind = (k), .offset = (off), .flags = (fl)
#define REQUIRED CS_YF_REQUIRED
#define POSITIVE (CS_YF_LO_OPEN | CS_YF_NO_HI) /* > 0 */

/* The schema as the walkers take it: the top-level mapping, whose rows
 * carry cs__yrow hooks (yamlwriter.h) where the generic walk needs them.
 * Its collectives mapping has a row for the enable flag of every
 * algorithm that has one (cs_algo_flag_key, after ll128), so it is built
 * from the algorithm table into the caller's storage: build returns
 * s->cluster, valid as long as s (no global mutable state). */
enum { CS__CLUSTER_ROWS = 9, CS__COLLECTIVES_ROWS = 9 + CS_ALGO_COUNT };
typedef struct cs__cluster_schema {
    cs_yfield cluster[CS__CLUSTER_ROWS];         /* with the terminator */
    cs_yfield collectives[CS__COLLECTIVES_ROWS]; /* fixed rows, flags, terminator */
} cs__cluster_schema;
const cs_yfield *cs__cluster_schema_build(cs__cluster_schema *s);

/* Defaults that do not depend on other keys; channels, ll128 and the
 * algorithms' flags get sentinels resolved by
 * cs__cluster_resolve_defaults after reading. */
void cs__cluster_set_defaults(cs_cluster *cl, const char *name);
void cs__cluster_resolve_defaults(cs_cluster *cl);
/* gpu.compute: every field to CS_UNSET; how many are still unset; the
 * unset ones copied from another cluster (config.c: the preset of the
 * same compute capability). */
void cs__cluster_compute_unset(cs_cluster *cl);
int cs__cluster_compute_missing(const cs_cluster *cl);
void cs__cluster_compute_fill(cs_cluster *cl, const cs_cluster *from);

/* cluster_grid.c: the reader of every grid row, and each grid's hooks
 * (its shape in .data). */
int cs__grid_read(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj);
extern const cs__yrow cs__grid_tflops, cs__grid_chunk, cs__grid_base_latency,
    cs__grid_hw_latency, cs__grid_bw_factor, cs__grid_efficiency;

/* cluster_des.c: the des sequences, and whether the des section has any. */
int cs__des_read_links(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj);
int cs__des_read_stragglers(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj);
extern const cs__yrow cs__des_links, cs__des_stragglers, cs__des_section;

#endif
