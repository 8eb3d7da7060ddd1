/* SPDX-License-Identifier: MIT */
/*
 * config.c - cluster YAML -> validated cs_cluster: parsing, the schema walk
 * (cluster_schema.c's tables, walked by yamlnode.c), defaults, and where a
 * spec's text comes from (a built-in preset or a file).
 * No global mutable state: everything lives on the caller's stack/heap.
 */
#include "config/config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/textfile.h"
#include "base/yamlnode.h"
#include "config/cluster_schema.h"
#include "config/presets.h"

/* The preset whose gpu.compute a cluster without one (or with part of
 * one) takes: the GPU generation's reference machine, by compute
 * capability (the greatest one not above the GPU's; the first below
 * all). Each preset cites its values. */
static const struct {
    int cc;
    const char *preset;
} compute_presets[] = {{80, "dgx-a100"}, {89, "pcie-l40s"}, {90, "dgx-h100"}, {100, "dgx-b200"}};

static const char *compute_preset_for(int cc)
{
    const char *p = compute_presets[0].preset;
    for (size_t i = 0; i < sizeof compute_presets / sizeof *compute_presets; i++)
        if (compute_presets[i].cc <= cc) p = compute_presets[i].preset;
    return p;
}

static int load(const char *origin, const char *default_name, const char *yaml, size_t len,
                cs_cluster *out, cs_diag *d);

/* Fills what gpu.compute left out from the generation's preset. */
static void fill_compute(cs_cluster *cl)
{
    if (!cs__cluster_compute_missing(cl)) return;
    const char *name = compute_preset_for(cl->gpu.compute_capability);
    size_t len;
    const char *text = cs_presets_cluster_yaml(name, &len);
    CS_ASSERT(text);
    cs_cluster *ref = cs_xmalloc(sizeof *ref);
    cs_diag d;
    if (load(name, name, text, len, ref, &d))
        CS_PANIC("built-in preset %s does not load: %s", name, d.message);
    if (cs__cluster_compute_missing(ref))
        CS_PANIC("built-in preset %s lacks part of gpu.compute", name);
    cs__cluster_compute_fill(cl, ref);
    free(ref);
}

int cs_config_cluster_from_node(const cs_yctx *c, const cs_ynode *map, const char *path,
                                const char *default_name, cs_cluster *out)
{
    cs_cluster *cl = cs_xmalloc(sizeof *cl);
    cs__cluster_set_defaults(cl, default_name);
    cs__cluster_schema s;
    int rc = cs_yamlnode_apply(c, map, path, cs__cluster_schema_build(&s), cl);
    if (!rc) {
        cs__cluster_resolve_defaults(cl);
        fill_compute(cl);
        *out = *cl;
    }
    free(cl);
    return rc;
}

static int load(const char *origin, const char *default_name, const char *yaml, size_t len,
                cs_cluster *out, cs_diag *d)
{
    cs_diag_clear(d);
    cs_ynode *root;
    int rc = cs_yamlnode_parse_mapping(
        origin, yaml, len,
        "empty file: expected a mapping with at least nodes, gpus_per_node, gpu and intra",
        "expected a mapping of cluster keys (nodes, gpus_per_node, gpu, intra, ...) at the top "
        "level, got %s",
        &root, d);
    if (rc) return rc;
    cs_yctx c = {.origin = origin, .root = "cluster", .d = d};
    rc = cs_config_cluster_from_node(&c, root, "", default_name, out);
    cs_yamlnode_free(root);
    return rc;
}

int cs_config_load_cluster_string(const char *origin, const char *yaml, size_t len, cs_cluster *out,
                                  cs_diag *d)
{
    char name[sizeof out->name];
    cs_textfile_origin_name(origin, "cluster", name, sizeof name);
    return load(origin ? origin : "<string>", name, yaml, len, out, d);
}

/* The unknown-spec message: did-you-mean over the preset names. */
static int unknown_spec(const char *spec, cs_diag *d)
{
    size_t n = cs_presets_cluster_count();
    const char **names = cs_xcalloc(n, sizeof *names);
    char list[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        names[i] = cs_presets_cluster_name(i);
        if (used < sizeof list)
            used +=
                (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
    }
    const char *sug = cs_yamlnode_suggest(spec, names, n);
    int rc;
    if (sug)
        rc = cs_diag_set(d, CS_ENOENT, NULL, 0, 0,
                         "unknown cluster '%s' (did you mean '%s'? presets: %s)", spec, sug, list);
    else
        rc = cs_diag_set(d, CS_ENOENT, NULL, 0, 0,
                         "unknown cluster '%s' (not a preset or a file; presets: %s)", spec, list);
    free(names);
    return rc;
}

/* The text spec names (caller frees), the origin it is reported as and the
 * cluster's default name. */
typedef struct spec_source {
    char *text;
    size_t len;
    char origin[sizeof ((cs_diag *)0)->file];
    char name[sizeof ((cs_cluster *)0)->name];
} spec_source;

static int read_file(const char *path, spec_source *src, cs_diag *d)
{
    int rc = cs_textfile_read(path, "cluster file", &src->text, &src->len, d);
    if (rc) return rc;
    snprintf(src->origin, sizeof src->origin, "%s", path);
    cs_textfile_origin_name(path, "cluster", src->name, sizeof src->name);
    return 0;
}

static int read_spec(const char *spec, spec_source *src, cs_diag *d)
{
    size_t len;
    const char *preset = cs_textfile_is_path(spec) ? NULL : cs_presets_cluster_yaml(spec, &len);
    if (preset) {
        src->text = cs_xmalloc(len + 1);
        memcpy(src->text, preset, len);
        src->text[len] = 0;
        src->len = len;
        snprintf(src->origin, sizeof src->origin, "configs/clusters/%s.yaml (built-in preset)",
                 spec);
        snprintf(src->name, sizeof src->name, "%s", spec);
        return 0;
    }
    /* a path, or not a preset: a file of that name in the working directory? */
    int rc = read_file(spec, src, d);
    return rc == CS_ENOENT && !cs_textfile_is_path(spec) ? unknown_spec(spec, d) : rc;
}

/* Loads what src holds (and frees it, unless handed to *text). */
static int load_source(spec_source *src, cs_cluster *out, char **text, size_t *len, cs_diag *d)
{
    int rc = load(src->origin, src->name, src->text, src->len, out, d);
    if (!rc && text) {
        *text = src->text;
        *len = src->len;
    } else
        free(src->text);
    return rc;
}

int cs_config_load_cluster_file(const char *path, cs_cluster *out, cs_diag *d)
{
    cs_diag_clear(d);
    spec_source src = {0};
    int rc = read_file(path, &src, d);
    return rc ? rc : load_source(&src, out, NULL, NULL, d);
}

int cs_config_cluster_source(const char *spec, cs_cluster *out, char **text, size_t *len,
                             cs_diag *d)
{
    cs_diag_clear(d);
    spec_source src = {0};
    int rc = read_spec(spec, &src, d);
    return rc ? rc : load_source(&src, out, text, len, d);
}

int cs_config_cluster(const char *spec, cs_cluster *out, cs_diag *d)
{
    return cs_config_cluster_source(spec, out, NULL, NULL, d);
}

int cs_config_edit_distance(const char *a, const char *b)
{
    return cs_yamlnode_edit_distance(a, b);
}
