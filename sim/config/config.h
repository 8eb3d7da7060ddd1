/* SPDX-License-Identifier: MIT */
/*
 * config.h - YAML cluster descriptions -> validated cs_cluster.
 *
 * Every error names file:line:column (libyaml marks, 1-based) and what was
 * expected; unknown keys get a did-you-mean suggestion. Defaults for
 * optional fields come from the fabric kind and from NCCL's cost model
 * (ncclmodel.h). The schema is documented in configs/clusters/README.md.
 */
#ifndef CS_CONFIG_H
#define CS_CONFIG_H

#include <stddef.h>

#include "coll/cluster.h"
#include "base/error.h"

/* Parses YAML text; `origin` names the text in messages (a path or
 * "preset:NAME"). Returns 0 or CS_ECONFIG with d filled. out is fully
 * written on success and left unspecified on error. */
int cs_config_load_cluster_string(const char *origin, const char *yaml, size_t len,
                                  cs_cluster *out, cs_diag *d);

/* Reads and parses a file. CS_ENOENT/CS_EIO if it cannot be read. */
int cs_config_load_cluster_file(const char *path, cs_cluster *out, cs_diag *d);

/* `spec` is a built-in preset name (see presets.h) or a file path:
 * a name with no '/' and no ".yaml"/".yml" suffix is looked up as a preset
 * first. Unknown presets get a did-you-mean over the preset names. */
int cs_config_cluster(const char *spec, cs_cluster *out, cs_diag *d);
/* The same, and the YAML text the cluster was read from in *text (caller
 * frees; text may be NULL), for writers that keep its comments. */
int cs_config_cluster_source(const char *spec, cs_cluster *out, char **text, size_t *len,
                             cs_diag *d);

/* Reads a cluster written inline inside a larger document (a scenario's
 * `cluster:` mapping): `map` is that mapping, `path` its dotted name in
 * messages ("cluster"), default_name the name when the mapping has none.
 * Same schema, defaults and checks as a cluster file; errors go to c->d
 * with the document's origin, line and column. out is written only on
 * success. */
struct cs_yctx;
struct cs_ynode;
int cs_config_cluster_from_node(const struct cs_yctx *c, const struct cs_ynode *map,
                                const char *path, const char *default_name, cs_cluster *out);

/* Edit distance used for did-you-mean suggestions (exposed for tests). */
int cs_config_edit_distance(const char *a, const char *b);

#endif
