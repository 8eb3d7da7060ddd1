/* SPDX-License-Identifier: MIT */
/*
 * presets.c - lookup over the built-in cluster presets.
 *
 * The data (names sorted, verbatim YAML texts and their lengths) is
 * generated at build time by tools/embed-presets.py from
 * configs/clusters/NAME.yaml into presets_data.c; this file only searches it.
 * The tables are read-only static storage.
 */
#include "config/presets.h"

#include <string.h>

/* Defined in the generated presets_data.c. */
extern const size_t cs__cluster_preset_count;
extern const char *const cs__cluster_preset_names[];
extern const char *const cs__cluster_preset_texts[];
extern const size_t cs__cluster_preset_lengths[];

const char *cs_presets_cluster_yaml(const char *name, size_t *len)
{
    for (size_t i = 0; i < cs__cluster_preset_count; i++) {
        if (!strcmp(name, cs__cluster_preset_names[i])) {
            if (len) *len = cs__cluster_preset_lengths[i];
            return cs__cluster_preset_texts[i];
        }
    }
    return NULL;
}

size_t cs_presets_cluster_count(void)
{
    return cs__cluster_preset_count;
}

const char *cs_presets_cluster_name(size_t i)
{
    return i < cs__cluster_preset_count ? cs__cluster_preset_names[i] : NULL;
}
