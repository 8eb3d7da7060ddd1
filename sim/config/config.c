/* SPDX-License-Identifier: MIT */
/*
 * config.c - cluster YAML -> validated cs_cluster.
 *
 * The schema is data: one cs_yfield table per mapping (cluster, gpu,
 * intra, inter, collectives, des, and the items of des.links and
 * des.stragglers), walked by yamlnode.c. Rows are read in table order, so
 * `des` (last) can range-check node/GPU/NIC/rank indices against `nodes`,
 * `gpus_per_node` and `inter.nics_per_node` wherever they appear in the
 * file. Defaults are written before the walk; the three that depend on
 * other keys (channels, ll128 and nvls, from the fabric and compute
 * capability) are resolved after it. Default latencies are NCCL's (ncclmodel.h); chunk
 * sizes are one step of NCCL's per-channel buffers (src/init.cc
 * DEFAULT_*_BUFFSIZE, NCCL_STEPS = 8 from src/include/device.h):
 * Simple 4 MiB / 8 = 512 KiB; LL 8 lines x 512 threads x 8 steps x 16 B =
 * 512 KiB, a 64 KiB step of which half is flags = 32 KiB payload; LL128
 * 120 x 640 x 8 x 8 B = 4.6875 MiB / 8 = 600 KiB. The schema is documented
 * in configs/clusters/README.md.
 * No global mutable state: everything lives on the caller's stack/heap.
 */
#include "base/textfile.h"
#include "config/config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/presets.h"
#include "base/yamlnode.h"

_Static_assert(sizeof(cs_fabric) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_net_topology) == sizeof(int), "enum fields are stored as int");

#define OFF(member) offsetof(cs_cluster, member)
#define STR_SIZE(member) sizeof(((cs_cluster *)0)->member)
#define REQUIRED CS_YF_REQUIRED
#define POSITIVE (CS_YF_LO_OPEN | CS_YF_NO_HI) /* > 0 */
/* One schema row: key, kind, where it goes, flags; extras are designated. */
#define ROW(n, k, off, fl) .name = (n), .kind = (k), .offset = (off), .flags = (fl)

static const char *const fabric_names[] = {[CS_FABRIC_NVSWITCH] = "nvswitch",
                                           [CS_FABRIC_NVLINK] = "nvlink",
                                           [CS_FABRIC_PCIE] = "pcie",
                                           NULL};
static const char *const topology_names[] = {
    [CS_NET_RAIL_OPTIMIZED] = "rail-optimized", [CS_NET_FAT_TREE] = "fat-tree", NULL};

/* ---- enum-keyed grids: tflops, chunk, base_latency, hw_latency, ... ---- */

/* A mapping `depth` levels deep keyed at level i by names[i][0..count[i]),
 * with leaves stored row-major in cells (as C lays out double[a][b][c]). */
typedef struct grid {
    int depth;
    const char *names[3][8];
    size_t count[3];
    cs_yfield leaf; /* kind and range; name is set per key */
    double scale;   /* stored value = read value * scale */
    double *cells;
    /* walk state */
    int level;
    size_t index;
    char path[160];
} grid;

_Static_assert(CS_DTYPE_COUNT <= 8 && CS_ALGO_COUNT <= 8 && CS_PROTO_COUNT <= 8 &&
                   CS_HW_COUNT <= 8,
               "grid.names holds 8 keys per level");

static int grid_entry(const cs_yctx *c, size_t i, const cs_ynode *v, void *ud)
{
    grid *g = ud;
    const char *key = g->names[g->level][i];
    size_t saved_index = g->index, saved_len = strlen(g->path);
    g->index = g->index * g->count[g->level] + i;
    snprintf(g->path + saved_len, sizeof g->path - saved_len, ".%s", key);
    int rc;
    if (g->level + 1 == g->depth) {
        cs_yfield f = g->leaf;
        f.name = key;
        double x;
        rc = cs_yamlnode_read(c, &f, v, &x);
        if (!rc) g->cells[g->index] = x * g->scale;
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

static int grid_read(const cs_yctx *c, grid *g, const cs_ynode *v, const char *name,
                     const char *path)
{
    g->level = 0;
    g->index = 0;
    if (g->scale == 0.0) g->scale = 1.0;
    snprintf(g->path, sizeof g->path, "%s", path);
    return cs_yamlnode_each_key(c, v, name, path, g->names[0], g->count[0], grid_entry, g);
}

static void grid_algos(grid *g, int level)
{
    for (int a = 0; a < CS_ALGO_COUNT; a++) g->names[level][a] = cs_algo_name((cs_algo_id)a);
    g->count[level] = CS_ALGO_COUNT;
}

static void grid_protos(grid *g, int level)
{
    for (int p = 0; p < CS_PROTO_COUNT; p++) g->names[level][p] = cs_proto_name((cs_proto)p);
    g->count[level] = CS_PROTO_COUNT;
}

static int read_tflops(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    grid g = {.depth = 1,
              .leaf = {.kind = CS_YF_NUMBER, .flags = CS_YF_LO_OPEN | CS_YF_HI_OPEN, .hi = 1e5},
              .scale = 1e12,
              .cells = cl->gpu.peak_flops};
    for (int t = 0; t < CS_DTYPE_COUNT; t++) g.names[0][t] = cs_dtype_name((cs_dtype)t);
    g.count[0] = CS_DTYPE_COUNT;
    if (v->kind == CS_YNODE_MAPPING && v->n == 0)
        return cs_yamlnode_error(
            c, v, "'%s' needs at least one of fp32, tf32, bf16, fp16, fp8, fp64", f->name);
    return grid_read(c, &g, v, f->name, "gpu.tflops");
}

static int read_chunk(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    grid g = {.depth = 1,
              .leaf = {.kind = CS_YF_SIZE, .flags = CS_YF_LO_OPEN | CS_YF_NO_HI},
              .cells = cl->coll.chunk_bytes};
    grid_protos(&g, 0);
    return grid_read(c, &g, v, f->name, "collectives.chunk");
}

static int read_base_latency(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    grid g = {.depth = 2,
              .leaf = {.kind = CS_YF_TIME, .flags = CS_YF_NO_HI},
              .cells = &cl->coll.base_latency_s[0][0]};
    grid_algos(&g, 0);
    grid_protos(&g, 1);
    return grid_read(c, &g, v, f->name, "collectives.base_latency");
}

static int read_hw_latency(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    grid g = {.depth = 3,
              .leaf = {.kind = CS_YF_TIME, .flags = CS_YF_NO_HI},
              .cells = &cl->coll.hw_latency_s[0][0][0]};
    for (int h = 0; h < CS_HW_COUNT; h++) g.names[0][h] = cs_hw_name((cs_hw)h);
    g.count[0] = CS_HW_COUNT;
    grid_algos(&g, 1);
    grid_protos(&g, 2);
    return grid_read(c, &g, v, f->name, "collectives.hw_latency");
}

static int read_bw_factor(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    grid g = {.depth = 2,
              .leaf = {.kind = CS_YF_NUMBER, .flags = CS_YF_LO_OPEN, .hi = 1.5},
              .cells = &cl->coll.proto_bw_factor[0][0]};
    grid_algos(&g, 0);
    grid_protos(&g, 1);
    return grid_read(c, &g, v, f->name, "collectives.bw_factor");
}

static int read_algo_efficiency(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    grid g = {.depth = 1,
              .leaf = {.kind = CS_YF_NUMBER, .flags = CS_YF_LO_OPEN, .hi = 1.5},
              .cells = cl->coll.algo_efficiency};
    grid_algos(&g, 0);
    return grid_read(c, &g, v, f->name, "collectives.efficiency");
}

/* An algorithm's enable flag (collectives.<key>, e.g. nvls: NVLink SHARP
 * needs a third-generation NVSwitch, Hopper and later): an explicit `true`
 * on hardware its row does not allow is an error. The collectives mapping
 * is read after gpu and intra (table order), so both are known here. */
static int read_algo_flag(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    int a = 0; /* the row whose flag this key is (cs__algo_row asserts one is) */
    while (!cs_algo_flag_key(a) || strcmp(cs_algo_flag_key(a), f->name)) a++;
    cs_yfield b = {.name = f->name, .kind = CS_YF_BOOL};
    int on;
    int rc = cs_yamlnode_read(c, &b, v, &on);
    if (rc) return rc;
    if (on && !cs_algo_hw_allows(a, cl))
        return cs_yamlnode_error(c, v, "'%s: true' needs %s, got fabric %s and compute capability %d",
                                 f->name, cs_algo_flag_needs(a), fabric_names[cl->intra.kind],
                                 cl->gpu.compute_capability);
    cl->coll.algo_enabled[a] = on;
    return 0;
}

/* ---- des: link overrides and stragglers ---- */

typedef struct link_item {
    int node, gpu, nic;
    double bw_Bps;
} link_item;

static const cs_yfield link_fields[] = {
    {ROW("node", CS_YF_INT, offsetof(link_item, node), REQUIRED | CS_YF_NO_HI), .lo = 0},
    {ROW("gpu", CS_YF_INT, offsetof(link_item, gpu), CS_YF_NO_HI), .lo = 0},
    {ROW("nic", CS_YF_INT, offsetof(link_item, nic), CS_YF_NO_HI), .lo = 0},
    {ROW("bandwidth", CS_YF_RATE, offsetof(link_item, bw_Bps), REQUIRED | POSITIVE)},
    {.name = NULL},
};

typedef struct straggler_item {
    int rank;
    double slowdown, delay_s;
} straggler_item;

static const cs_yfield straggler_fields[] = {
    {ROW("rank", CS_YF_INT, offsetof(straggler_item, rank), REQUIRED | CS_YF_NO_HI), .lo = 0},
    {ROW("slowdown", CS_YF_NUMBER, offsetof(straggler_item, slowdown), CS_YF_NO_HI), .lo = 1},
    {ROW("delay", CS_YF_TIME, offsetof(straggler_item, delay_s), CS_YF_NO_HI)},
    {.name = NULL},
};

/* The sequence checks shared by links and stragglers. */
static int check_sequence(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v,
                          const char *example)
{
    if (v->kind != CS_YNODE_SEQUENCE)
        return cs_yamlnode_error(c, v, "'%s' must be a sequence of mappings such as %s, got %s",
                                 f->name, example, cs_yamlnode_describe(v));
    if (v->n > CS_MAX_OVERRIDES)
        return cs_yamlnode_error(c, v->items[CS_MAX_OVERRIDES],
                                 "at most %d entries are allowed in '%s'", CS_MAX_OVERRIDES,
                                 f->name);
    return 0;
}

static int index_error(const cs_yctx *c, const cs_ynode *item, const char *key, int value,
                       int count, const char *what)
{
    return cs_yamlnode_error(c, cs_yamlnode_find(item, key),
                             "'%s' must be in 0..%d (%s is %d), got %d", key, count - 1, what,
                             count, value);
}

static int read_links(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    int rc = check_sequence(c, f, v, "{node: 0, gpu: 3, bandwidth: 100GB/s}");
    if (rc) return rc;
    for (size_t i = 0; i < v->n; i++) {
        const cs_ynode *item = v->items[i];
        char path[64];
        snprintf(path, sizeof path, "des.links[%zu]", i);
        link_item li = {.node = -1, .gpu = -1, .nic = -1};
        rc = cs_yamlnode_apply(c, item, path, link_fields, &li);
        if (rc) return rc;
        if (li.gpu >= 0 && li.nic >= 0)
            return cs_yamlnode_error(
                c, cs_yamlnode_find(item, "nic"),
                "a link override names exactly one of 'gpu' or 'nic', not both");
        if (li.gpu < 0 && li.nic < 0)
            return cs_yamlnode_error(c, item,
                                     "a link override needs one of 'gpu' (a GPU's fabric port) "
                                     "or 'nic' (a node's NIC)");
        if (li.node >= cl->nodes) return index_error(c, item, "node", li.node, cl->nodes, "nodes");
        if (li.gpu >= cl->gpus_per_node)
            return index_error(c, item, "gpu", li.gpu, cl->gpus_per_node, "gpus_per_node");
        if (li.nic >= 0 && cl->inter.nics_per_node == 0)
            return cs_yamlnode_error(c, cs_yamlnode_find(item, "nic"),
                                     "'nic' override needs NICs, but the cluster has no 'inter' "
                                     "section");
        if (li.nic >= cl->inter.nics_per_node)
            return index_error(c, item, "nic", li.nic, cl->inter.nics_per_node,
                               "inter.nics_per_node");
        cs_link_override o = {.node = li.node,
                              .gpu = li.nic >= 0 ? li.nic : li.gpu,
                              .is_nic = li.nic >= 0,
                              .bw_Bps = li.bw_Bps,
                              .line = item->line,
                              .column = item->column};
        for (int j = 0; j < cl->n_overrides; j++) {
            const cs_link_override *p = &cl->overrides[j];
            if (p->node == o.node && p->gpu == o.gpu && p->is_nic == o.is_nic)
                return cs_yamlnode_error(
                    c, item, "duplicate override of %s %d on node %d (first at line %d, column %d)",
                    o.is_nic ? "nic" : "gpu", o.gpu, o.node, p->line, p->column);
        }
        cl->overrides[cl->n_overrides++] = o;
    }
    return 0;
}

static int read_stragglers(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    int rc = check_sequence(c, f, v, "{rank: 5, slowdown: 1.5, delay: 10us}");
    if (rc) return rc;
    int ranks = cl->nodes * cl->gpus_per_node; /* <= 1e6 * 1024 < INT_MAX */
    for (size_t i = 0; i < v->n; i++) {
        const cs_ynode *item = v->items[i];
        char path[64];
        snprintf(path, sizeof path, "des.stragglers[%zu]", i);
        straggler_item si = {.rank = -1, .slowdown = 1.0, .delay_s = 0.0};
        rc = cs_yamlnode_apply(c, item, path, straggler_fields, &si);
        if (rc) return rc;
        if (si.rank >= ranks)
            return index_error(c, item, "rank", si.rank, ranks, "nodes x gpus_per_node");
        for (int j = 0; j < cl->n_stragglers; j++)
            if (cl->stragglers[j].rank == si.rank)
                return cs_yamlnode_error(
                    c, item, "duplicate straggler rank %d (first at line %d, column %d)", si.rank,
                    cl->stragglers[j].line, cl->stragglers[j].column);
        cl->stragglers[cl->n_stragglers++] = (cs_straggler){.rank = si.rank,
                                                            .slowdown = si.slowdown,
                                                            .delay_s = si.delay_s,
                                                            .line = item->line,
                                                            .column = item->column};
    }
    return 0;
}

/* ---- the schema ---- */

static const cs_yfield gpu_fields[] = {
    {ROW("model", CS_YF_STRING, OFF(gpu.model), REQUIRED), .size = STR_SIZE(gpu.model)},
    {ROW("memory", CS_YF_SIZE, OFF(gpu.memory_bytes), REQUIRED | POSITIVE)},
    {ROW("compute_capability", CS_YF_INT, OFF(gpu.compute_capability), REQUIRED), .lo = 70,
     .hi = 120},
    {ROW("tflops", CS_YF_CUSTOM, 0, REQUIRED), .fn = read_tflops},
    {ROW("hbm_bandwidth", CS_YF_RATE, OFF(gpu.hbm_Bps), REQUIRED | POSITIVE)},
    {.name = NULL},
};

static const cs_yfield intra_fields[] = {
    {ROW("fabric", CS_YF_ENUM, OFF(intra.kind), REQUIRED), .names = fabric_names},
    {ROW("bandwidth", CS_YF_RATE, OFF(intra.bw_Bps), REQUIRED | POSITIVE)},
    {ROW("efficiency", CS_YF_NUMBER, OFF(intra.efficiency), CS_YF_LO_OPEN), .hi = 1},
    {ROW("latency", CS_YF_TIME, OFF(intra.latency_s), CS_YF_NO_HI)},
    {.name = NULL},
};

static const cs_yfield inter_fields[] = {
    {ROW("nics_per_node", CS_YF_INT, OFF(inter.nics_per_node), REQUIRED), .lo = 1, .hi = 64},
    {ROW("nic_bandwidth", CS_YF_RATE, OFF(inter.nic_bw_Bps), REQUIRED | POSITIVE)},
    {ROW("efficiency", CS_YF_NUMBER, OFF(inter.efficiency), CS_YF_LO_OPEN), .hi = 1},
    {ROW("latency", CS_YF_TIME, OFF(inter.latency_s), CS_YF_NO_HI)},
    {ROW("topology", CS_YF_ENUM, OFF(inter.topology), 0), .names = topology_names},
    {ROW("oversubscription", CS_YF_NUMBER, OFF(inter.oversubscription), CS_YF_NO_HI), .lo = 1},
    {.name = NULL},
};

static const cs_yfield collectives_fields[] = {
    {ROW("channels", CS_YF_INT, OFF(coll.channels), 0), .lo = 1, .hi = 64},
    {ROW("net_overhead", CS_YF_TIME, OFF(coll.net_overhead_s), CS_YF_NO_HI)},
    {ROW("ll128", CS_YF_BOOL, OFF(coll.ll128_enabled), 0)},
    {ROW("nvls", CS_YF_CUSTOM, 0, 0), .fn = read_algo_flag},
    {ROW("chunk", CS_YF_CUSTOM, 0, 0), .fn = read_chunk},
    {ROW("base_latency", CS_YF_CUSTOM, 0, 0), .fn = read_base_latency},
    {ROW("hw_latency", CS_YF_CUSTOM, 0, 0), .fn = read_hw_latency},
    {ROW("bw_factor", CS_YF_CUSTOM, 0, 0), .fn = read_bw_factor},
    {ROW("efficiency", CS_YF_CUSTOM, 0, 0), .fn = read_algo_efficiency},
    {.name = NULL},
};

static const cs_yfield des_fields[] = {
    {ROW("links", CS_YF_CUSTOM, 0, 0), .fn = read_links},
    {ROW("stragglers", CS_YF_CUSTOM, 0, 0), .fn = read_stragglers},
    {.name = NULL},
};

static int inter_missing(const cs_yctx *c, const cs_yfield *f, const cs_ynode *map, void *obj)
{
    cs_cluster *cl = obj;
    if (cl->nodes > 1)
        return cs_yamlnode_error(c, map,
                                 "missing required key '%s' in cluster (needed when nodes > 1; "
                                 "nodes is %d)",
                                 f->name, cl->nodes);
    cl->inter.nics_per_node = 0;
    cl->inter.nic_bw_Bps = 0.0;
    return 0;
}

/* Order matters: des is last so its indices can be checked. */
static const cs_yfield cluster_fields[] = {
    {ROW("name", CS_YF_STRING, OFF(name), 0), .size = STR_SIZE(name)},
    {ROW("nodes", CS_YF_INT, OFF(nodes), REQUIRED), .lo = 1, .hi = 1000000},
    {ROW("gpus_per_node", CS_YF_INT, OFF(gpus_per_node), REQUIRED), .lo = 1, .hi = 1024},
    {ROW("gpu", CS_YF_MAPPING, 0, REQUIRED), .sub = gpu_fields},
    {ROW("intra", CS_YF_MAPPING, 0, REQUIRED), .sub = intra_fields},
    {ROW("inter", CS_YF_MAPPING, 0, 0), .sub = inter_fields, .missing = inter_missing},
    {ROW("collectives", CS_YF_MAPPING, 0, 0), .sub = collectives_fields},
    {ROW("des", CS_YF_MAPPING, 0, 0), .sub = des_fields},
    {.name = NULL},
};

/* Defaults that do not depend on other keys; channels, ll128 and the
 * algorithms' flags (nvls) get sentinels (0, -1, -1) resolved by
 * resolve_defaults. */
static void set_defaults(cs_cluster *cl, const char *name)
{
    memset(cl, 0, sizeof *cl);
    snprintf(cl->name, sizeof cl->name, "%s", name);
    cl->intra.efficiency = 1.0;
    cl->inter.efficiency = 1.0;
    cl->inter.topology = CS_NET_RAIL_OPTIMIZED;
    cl->inter.oversubscription = 1.0;
    cl->coll.channels = 0;
    cl->coll.ll128_enabled = -1;
    cl->coll.net_overhead_s = 1e-6; /* NCCL getNetOverhead: 1 us on x86 Intel */
    cl->coll.chunk_bytes[CS_PROTO_LL] = 32.0 * 1024;
    cl->coll.chunk_bytes[CS_PROTO_LL128] = 600.0 * 1024;
    cl->coll.chunk_bytes[CS_PROTO_SIMPLE] = 512.0 * 1024;
    for (int a = 0; a < CS_ALGO_COUNT; a++) {
        cl->coll.algo_enabled[a] = -1;
        cl->coll.algo_efficiency[a] = 1.0;
        for (int p = 0; p < CS_PROTO_COUNT; p++) {
            cl->coll.base_latency_s[a][p] = cs_algo_base_latency_s(a, p);
            cl->coll.proto_bw_factor[a][p] = CS_UNSET;
            for (int h = 0; h < CS_HW_COUNT; h++)
                cl->coll.hw_latency_s[h][a][p] = cs_algo_hw_latency_s(h, a, p);
        }
    }
}

static void resolve_defaults(cs_cluster *cl)
{
    int nvlink = cl->intra.kind != CS_FABRIC_PCIE;
    if (cl->coll.channels == 0) cl->coll.channels = nvlink ? 16 : 4;
    /* NCCL enables LL128 only when the intra-node path is NVLink
     * (src/graph/tuning.cc: typeIntra <= PATH_NVB) on Volta and newer. */
    if (cl->coll.ll128_enabled < 0)
        cl->coll.ll128_enabled = nvlink && cl->gpu.compute_capability >= 70;
    /* An algorithm's flag defaults to what the hardware allows (NCCL
     * enables NVLS where the NVSwitch supports multicast: nvlsSupport). */
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        if (cl->coll.algo_enabled[a] < 0) cl->coll.algo_enabled[a] = cs_algo_hw_allows(a, cl);
}

static int load(const char *origin, const char *default_name, const char *yaml, size_t len,
                cs_cluster *out, cs_diag *d)
{
    cs_diag_clear(d);
    cs_ynode *root = NULL;
    int rc = cs_yamlnode_parse(origin, yaml, len, &root, d);
    if (rc) return rc;
    cs_yctx c = {.origin = origin, .root = "cluster", .d = d};
    cs_cluster *cl = cs_xmalloc(sizeof *cl);
    set_defaults(cl, default_name);
    if (!root || cs_yamlnode_is_null(root))
        rc = cs_diag_set(d, CS_ECONFIG, origin, root ? root->line : 1, root ? root->column : 1,
                         "empty file: expected a mapping with at least nodes, gpus_per_node, "
                         "gpu and intra");
    else if (root->kind != CS_YNODE_MAPPING)
        rc = cs_yamlnode_error(&c, root,
                               "expected a mapping of cluster keys (nodes, gpus_per_node, gpu, "
                               "intra, ...) at the top level, got %s",
                               cs_yamlnode_describe(root));
    else
        rc = cs_yamlnode_apply(&c, root, "", cluster_fields, cl);
    if (!rc) {
        resolve_defaults(cl);
        *out = *cl;
    }
    free(cl);
    cs_yamlnode_free(root);
    return rc;
}

int cs_config_cluster_from_node(const cs_yctx *c, const cs_ynode *map, const char *path,
                                const char *default_name, cs_cluster *out)
{
    cs_cluster *cl = cs_xmalloc(sizeof *cl);
    set_defaults(cl, default_name);
    int rc = cs_yamlnode_apply(c, map, path, cluster_fields, cl);
    if (!rc) {
        resolve_defaults(cl);
        *out = *cl;
    }
    free(cl);
    return rc;
}


int cs_config_load_cluster_string(const char *origin, const char *yaml, size_t len, cs_cluster *out,
                                  cs_diag *d)
{
    char name[sizeof out->name];
    cs_textfile_origin_name(origin, "cluster", name, sizeof name);
    return load(origin ? origin : "<string>", name, yaml, len, out, d);
}


int cs_config_load_cluster_file(const char *path, cs_cluster *out, cs_diag *d)
{
    cs_diag_clear(d);
    char *text = NULL;
    size_t len = 0;
    int rc = cs_textfile_read(path, "cluster file", &text, &len, d);
    if (rc) return rc;
    char name[sizeof out->name];
    cs_textfile_origin_name(path, "cluster", name, sizeof name);
    rc = load(path, name, text, len, out, d);
    free(text);
    return rc;
}

int cs_config_cluster(const char *spec, cs_cluster *out, cs_diag *d)
{
    cs_diag_clear(d);
    if (cs_textfile_is_path(spec))
        return cs_config_load_cluster_file(spec, out, d);

    size_t len;
    const char *text = cs_presets_cluster_yaml(spec, &len);
    if (text) {
        char origin[sizeof d->file];
        snprintf(origin, sizeof origin, "configs/clusters/%s.yaml (built-in preset)", spec);
        return load(origin, spec, text, len, out, d);
    }
    /* Not a preset: a file of that name in the working directory? */
    int rc = cs_config_load_cluster_file(spec, out, d);
    if (rc != CS_ENOENT) return rc;

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
    if (sug)
        rc = cs_diag_set(d, CS_ENOENT, NULL, 0, 0,
                         "unknown cluster '%s' (did you mean '%s'? presets: %s)", spec, sug, list);
    else
        rc = cs_diag_set(d, CS_ENOENT, NULL, 0, 0,
                         "unknown cluster '%s' (not a preset or a file; presets: %s)", spec, list);
    free(names);
    return rc;
}

int cs_config_edit_distance(const char *a, const char *b)
{
    return cs_yamlnode_edit_distance(a, b);
}
