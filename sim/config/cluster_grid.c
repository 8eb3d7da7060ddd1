/* SPDX-License-Identifier: MIT */
/*
 * cluster_grid.c - the cluster schema's enum-keyed grids: mappings keyed
 * by closed name sets (dtypes, fabrics, algorithms, protocols) whose leaves
 * are one C array (gpu.tflops, collectives.chunk, base_latency,
 * hw_latency, bw_factor, efficiency). One shape each; one reader, one
 * writer and one comparison serve them all. The per-algorithm grids are
 * keyed by the algorithm names, so a new algorithm needs no schema row.
 * Writing: a cell is written when it is set (tflops, bw_factor), differs
 * from the schema default (the latency tables, NCCL's: loading fills the
 * rest in exactly) or was in the source; levels from a shape's flow_level
 * on are inline, unless the source has comments inside them.
 */
#include <stdio.h>
#include <string.h>

#include "config/cluster_schema.h"
#include "config/yamlwriter.h"

/* The name sets grids are keyed by. */
typedef enum { DIM_DTYPE, DIM_HW, DIM_ALGO, DIM_PROTO } grid_dim;

static size_t dim_count(grid_dim d)
{
    static const size_t n[] = {[DIM_DTYPE] = CS_DTYPE_COUNT, [DIM_HW] = CS_HW_COUNT,
                               [DIM_ALGO] = CS_ALGO_COUNT, [DIM_PROTO] = CS_PROTO_COUNT};
    return n[d];
}

static const char *dim_name(grid_dim d, size_t i)
{
    switch (d) {
    case DIM_DTYPE: return cs_dtype_name((cs_dtype)i);
    case DIM_HW: return cs_hw_name((cs_hw)i);
    case DIM_ALGO: return cs_algo_name((cs_algo_id)i);
    default: return cs_proto_name((cs_proto)i);
    }
}

#define GRID_SET_ONLY     1u /* cells <= 0 are unset: not written */
#define GRID_OMIT_DEFAULT 2u /* cells at the default are not written (loading restores them) */
#define GRID_NONEMPTY     4u /* the mapping needs at least one key */

/* A mapping `depth` levels deep keyed at level i by the names of dim[i],
 * with leaves (leaf: kind and range; stored = read x scale) row-major at
 * the row's offset (as C lays out double[a][b][c]). Levels from
 * flow_level on are written inline ({k: v, ...}). */
typedef struct grid_shape {
    int depth;
    grid_dim dim[3];
    cs_yfield leaf;
    double scale;
    const char *path; /* in messages */
    int flow_level;
    unsigned flags;
} grid_shape;

_Static_assert(CS_DTYPE_COUNT <= 8 && CS_ALGO_COUNT <= 8 && CS_PROTO_COUNT <= 8 &&
                   CS_HW_COUNT <= 8,
               "grid.names holds 8 keys per level");

/* A grid being read. */
typedef struct grid {
    const grid_shape *sh;
    const char *names[3][8];
    size_t count[3];
    double *cells;
    int level;
    size_t index;
    char path[160];
} grid;

static const grid_shape *shape_of(const cs_yfield *f)
{
    return ((const cs__yrow *)f->ext)->data;
}

static int grid_entry(const cs_yctx *c, size_t i, const cs_ynode *v, void *ud)
{
    grid *g = ud;
    const char *key = g->names[g->level][i];
    size_t saved_index = g->index, saved_len = strlen(g->path);
    g->index = g->index * g->count[g->level] + i;
    snprintf(g->path + saved_len, sizeof g->path - saved_len, ".%s", key);
    int rc;
    if (g->level + 1 == g->sh->depth) {
        cs_yfield f = g->sh->leaf;
        f.name = key;
        double x;
        rc = cs_yamlnode_read(c, &f, v, &x);
        if (!rc) g->cells[g->index] = x * g->sh->scale;
    } else {
        g->level++;
        rc = cs_yamlnode_each_key(c, v, key, g->path, g->names[g->level], g->count[g->level],
                                  grid_entry, g);
        g->level--;
    }
    g->index = saved_index;
    g->path[saved_len] = '\0';
    return rc;
}

int cs__grid_read(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    grid g = {.sh = shape_of(f), .cells = (double *)((char *)obj + f->offset)};
    for (int l = 0; l < g.sh->depth; l++) {
        g.count[l] = dim_count(g.sh->dim[l]);
        for (size_t i = 0; i < g.count[l]; i++) g.names[l][i] = dim_name(g.sh->dim[l], i);
    }
    if ((g.sh->flags & GRID_NONEMPTY) && v->kind == CS_YNODE_MAPPING && v->n == 0) {
        char list[128] = "";
        for (size_t i = 0, used = 0; i < g.count[0] && used < sizeof list; i++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                     g.names[0][i]);
        return cs_yamlnode_error(c, v, "'%s' needs at least one of %s", f->name, list);
    }
    snprintf(g.path, sizeof g.path, "%s", g.sh->path);
    return cs_yamlnode_each_key(c, v, f->name, g.sh->path, g.names[0], g.count[0], grid_entry, &g);
}

/* ---- writing grids ---- */

/* One grid being written: its cells, the cells it came from (may be
 * NULL), the schema defaults; the writer, for what the source holds. */
typedef struct grid_out {
    const grid_shape *sh;
    const double *cells, *base, *dflt;
    const cs__yw *w;
    char root[300]; /* the grid's own path */
} grid_out;

/* Cells under the key at level l, index i: [i x span, (i + 1) x span). */
static size_t span(const grid_shape *sh, int l)
{
    size_t n = 1;
    for (int k = l; k < sh->depth; k++) n *= dim_count(sh->dim[k]);
    return n;
}

/* The path of cell i ("collectives.hw_latency.net.ring.ll"). */
static void cell_path(const grid_out *g, size_t i, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "%s", g->root);
    for (int l = 0; l < g->sh->depth && used < len; l++) {
        size_t below = span(g->sh, l + 1);
        used += (size_t)snprintf(buf + used, len - used, ".%s",
                                 dim_name(g->sh->dim[l], i / below % dim_count(g->sh->dim[l])));
    }
}

/* Cell i is written: set (GRID_SET_ONLY), not the default
 * (GRID_OMIT_DEFAULT: loading fills it in exactly), or in the source. */
static int cell_written(const grid_out *g, size_t i)
{
    if ((g->sh->flags & GRID_SET_ONLY) && !(g->cells[i] > 0)) return 0;
    if (!(g->sh->flags & GRID_OMIT_DEFAULT) || g->cells[i] != g->dflt[i]) return 1;
    char path[400];
    cell_path(g, i, path, sizeof path);
    return cs__yw_has_path(g->w, path);
}

/* Any cell under (l, i) written; any changed from `from` (may be NULL). */
static int any_written(const grid_out *g, int l, size_t i)
{
    for (size_t k = i * span(g->sh, l); k < (i + 1) * span(g->sh, l); k++)
        if (cell_written(g, k)) return 1;
    return 0;
}

static int any_changed(const grid_out *g, int l, size_t i, const double *from)
{
    for (size_t k = i * span(g->sh, l); k < (i + 1) * span(g->sh, l); k++)
        if (from && g->cells[k] != from[k]) return 1;
    return 0;
}

/* The text of cell i at rel (its dotted path under the writer's). */
static void cell_text(const grid_out *g, size_t i, const char *rel, char *buf, size_t len)
{
    int changed = g->base && g->cells[i] != g->base[i];
    if (changed || !cs__yw_source(g->w, rel, buf, len))
        cs__yw_value(&g->sh->leaf, &g->cells[i], g->sh->scale, buf, len);
}

/* The subtree (l, i) at rel as a flow mapping into buf. */
static void flow_text(const grid_out *g, int l, size_t i, const char *rel, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "{");
    int first = 1;
    for (size_t k = 0; k < dim_count(g->sh->dim[l]) && used < len; k++) {
        size_t ci = i * dim_count(g->sh->dim[l]) + k;
        if (!any_written(g, l + 1, ci)) continue;
        char sub[256], val[512];
        snprintf(sub, sizeof sub, "%s.%s", rel, dim_name(g->sh->dim[l], k));
        if (l + 1 == g->sh->depth) cell_text(g, ci, sub, val, sizeof val);
        else flow_text(g, l + 1, ci, sub, val, sizeof val);
        used += (size_t)snprintf(buf + used, len - used, "%s%s: %s", first ? "" : ", ",
                                 dim_name(g->sh->dim[l], k), val);
        first = 0;
    }
    if (used < len) snprintf(buf + used, len - used, "}");
}

/* Writes `key` holding the subtree (l, i): inline from flow_level on
 * (unless the source has comments inside it), else one key per line. */
static void put_level(cs__yw *w, const grid_out *g, int l, size_t i, const char *key)
{
    int changed = any_changed(g, l, i, g->base);
    char text[512];
    if (l == g->sh->depth) {
        cell_text(g, i, key, text, sizeof text);
        cs__yw_scalar(w, key, text, changed);
    } else if (l >= g->sh->flow_level && !cs__yw_commented(w, key)) {
        flow_text(g, l, i, key, text, sizeof text);
        cs__yw_scalar(w, key, text, changed);
    } else {
        cs__yw_begin(w, key, changed);
        for (size_t k = 0; k < dim_count(g->sh->dim[l]); k++) {
            size_t ci = i * dim_count(g->sh->dim[l]) + k;
            if (any_written(g, l + 1, ci)) put_level(w, g, l + 1, ci, dim_name(g->sh->dim[l], k));
        }
        cs__yw_end(w);
    }
}

static void put_grid(cs__yw *w, const cs_yfield *f, const void *obj, const void *base)
{
    cs_cluster dflt;
    cs__cluster_set_defaults(&dflt, "");
    grid_out g = {.sh = shape_of(f),
                  .cells = (const double *)((const char *)obj + f->offset),
                  .base = base ? (const double *)((const char *)base + f->offset) : NULL,
                  .dflt = (const double *)((const char *)&dflt + f->offset),
                  .w = w};
    snprintf(g.root, sizeof g.root, "%s%s%s", w->path, w->path[0] ? "." : "", f->name);
    if (any_written(&g, 0, 0)) put_level(w, &g, 0, 0, f->name);
    else if (cs__yw_has(w, f->name)) cs__yw_scalar(w, f->name, "{}", any_changed(&g, 0, 0, g.base));
}

static int same_grid(const cs_yfield *f, const void *a, const void *b)
{
    size_t n = span(shape_of(f), 0);
    const double *x = (const double *)((const char *)a + f->offset);
    const double *y = (const double *)((const char *)b + f->offset);
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i]) return 0;
    return 1;
}


static const grid_shape tflops_grid = {
    .depth = 1, .dim = {DIM_DTYPE},
    .leaf = {.kind = CS_YF_NUMBER, .flags = CS_YF_LO_OPEN | CS_YF_HI_OPEN, .hi = 1e5},
    .scale = 1e12, .path = "gpu.tflops", .flow_level = 1, .flags = GRID_SET_ONLY | GRID_NONEMPTY};
static const grid_shape chunk_grid = {
    .depth = 1, .dim = {DIM_PROTO}, .leaf = {.kind = CS_YF_SIZE, .flags = POSITIVE},
    .scale = 1, .path = "collectives.chunk", .flow_level = 0};
static const grid_shape base_latency_grid = {
    .depth = 2, .dim = {DIM_ALGO, DIM_PROTO}, .leaf = {.kind = CS_YF_TIME, .flags = CS_YF_NO_HI},
    .scale = 1, .path = "collectives.base_latency", .flow_level = 1, .flags = GRID_OMIT_DEFAULT};
static const grid_shape hw_latency_grid = {
    .depth = 3, .dim = {DIM_HW, DIM_ALGO, DIM_PROTO},
    .leaf = {.kind = CS_YF_TIME, .flags = CS_YF_NO_HI}, .scale = 1,
    .path = "collectives.hw_latency", .flow_level = 2, .flags = GRID_OMIT_DEFAULT};
static const grid_shape bw_factor_grid = {
    .depth = 2, .dim = {DIM_ALGO, DIM_PROTO},
    .leaf = {.kind = CS_YF_NUMBER, .flags = CS_YF_LO_OPEN, .hi = 1.5}, .scale = 1,
    .path = "collectives.bw_factor", .flow_level = 1, .flags = GRID_SET_ONLY};
/* collectives.efficiency: one number per algorithm */
static const grid_shape algo_efficiency_grid = {
    .depth = 1, .dim = {DIM_ALGO},
    .leaf = {.kind = CS_YF_NUMBER, .flags = CS_YF_LO_OPEN, .hi = 1.5},
    .scale = 1, .path = "collectives.efficiency", .flow_level = 0};


const cs__yrow cs__grid_tflops = {.put = put_grid, .same = same_grid, .data = &tflops_grid};
const cs__yrow cs__grid_chunk = {.put = put_grid, .same = same_grid, .data = &chunk_grid};
const cs__yrow cs__grid_base_latency = {.put = put_grid, .same = same_grid,
                                        .data = &base_latency_grid};
const cs__yrow cs__grid_hw_latency = {.put = put_grid, .same = same_grid, .data = &hw_latency_grid};
const cs__yrow cs__grid_bw_factor = {.put = put_grid, .same = same_grid, .data = &bw_factor_grid};
const cs__yrow cs__grid_efficiency = {.put = put_grid, .same = same_grid,
                                      .data = &algo_efficiency_grid};
