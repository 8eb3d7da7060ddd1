/* SPDX-License-Identifier: MIT */
/*
 * presets.h - built-in cluster presets. Each is the verbatim text of
 * configs/clusters/NAME.yaml, embedded at build time, so a preset and its
 * file cannot drift apart.
 */
#ifndef CS_PRESETS_H
#define CS_PRESETS_H

#include <stddef.h>

/* The cluster used when no --cluster is given. */
#define CS_DEFAULT_CLUSTER "dgx-h100"

/* YAML text of a preset (static storage) or NULL if no such preset. */
const char *cs_presets_cluster_yaml(const char *name, size_t *len);
/* Number of presets and the i-th name (sorted by name). */
size_t cs_presets_cluster_count(void);
const char *cs_presets_cluster_name(size_t i);

#endif
