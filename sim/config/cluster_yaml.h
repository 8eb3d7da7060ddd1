/* SPDX-License-Identifier: MIT */
/*
 * cluster_yaml.h - a cs_cluster written as cluster YAML, through the same
 * schema tables the loader reads with (cluster_schema.c), so every key is
 * written and loading the text back gives the same cluster.
 *
 * With the source text the cluster was derived from, the written YAML
 * keeps the source's comments (its head, the comments of every key whose
 * value did not change, its tail) and the source's spelling of unchanged
 * values ("80GiB", "3.35TB/s"); a key whose value changed gets the
 * caller's note instead. Everything else is written in plain units that
 * read back exactly (GB/s = 1e9 B/s, us, bytes).
 */
#ifndef CS_CLUSTER_YAML_H
#define CS_CLUSTER_YAML_H

#include <stddef.h>

#include "base/buf.h"
#include "coll/cluster.h"

/* The comment (without '#') for the key at the dotted path ("intra.
 * efficiency", "collectives.base_latency"), whose value differs from the
 * source's, written into buf; NULL or "" for none. */
typedef const char *(*cs_cluster_yaml_note)(void *ud, const char *path, char *buf, size_t len);

typedef struct cs_cluster_yaml_opts {
    const char *src_text;     /* the YAML the cluster was derived from, or NULL */
    size_t src_len;
    const cs_cluster *base;   /* without src_text: what it was derived from (may be NULL) */
    cs_cluster_yaml_note note; /* keys whose value differs from the source's (base's); or NULL */
    void *ud;
} cs_cluster_yaml_opts;

/* Appends c as YAML to b (o may be NULL: no source, no notes). A source
 * that does not load as a cluster is ignored. What is appended loads back
 * as c (checked: a panic otherwise). */
void cs_config_write_cluster(cs_buf *b, const cs_cluster *c, const cs_cluster_yaml_opts *o);

/* The dotted path of the first schema key whose value differs between a
 * and b, into buf; NULL when they are the same cluster (where a link
 * override or straggler was written is not part of it). */
const char *cs_config_cluster_diff(const cs_cluster *a, const cs_cluster *b, char *buf,
                                   size_t len);

#endif
