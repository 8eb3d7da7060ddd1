/* SPDX-License-Identifier: MIT */
/*
 * cluster_schema.c - the cluster schema as data: one cs_yfield table per
 * mapping (cluster, gpu, intra, inter, collectives, des, and the items of
 * des.links and des.stragglers). config.c reads a YAML text with it
 * (yamlnode.c walks it), cluster_yaml.c writes a cluster with it
 * (yamlwriter.c walks it), so reader and writer cannot drift apart.
 *
 * Rows are read in table order, so `des` (last) can range-check node / GPU
 * / NIC / rank indices against `nodes`, `gpus_per_node` and
 * `inter.nics_per_node` wherever they appear in the file. Defaults are
 * written before the walk; those that depend on other keys (channels,
 * ll128 and the algorithms' enable flags, from the fabric and compute
 * capability) are resolved after it. The collectives mapping has a flag
 * row per algorithm whose table row names one (cs_algo_flag_key, e.g.
 * nvls), built from the algorithm table, so an algorithm needs no row
 * here. inter.pcie takes a PCIe link name (its NCCL rate) or a rate. Default latencies are NCCL's (coll/algos.h); chunk sizes are
 * one step of NCCL's per-channel buffers (src/init.cc DEFAULT_*_BUFFSIZE,
 * NCCL_STEPS = 8 from src/include/device.h): Simple 4 MiB / 8 = 512 KiB;
 * LL 8 lines x 512 threads x 8 steps x 16 B = 512 KiB, a 64 KiB step of
 * which half is flags = 32 KiB payload; LL128 120 x 640 x 8 x 8 B =
 * 4.6875 MiB / 8 = 600 KiB. The schema is documented in
 * configs/clusters/README.md.
 * The grids (tflops, chunk, latencies, factors, efficiencies) are
 * cluster_grid.c's, the des sequences cluster_des.c's.
 */
#include "config/cluster_schema.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/limit.h"
#include "config/yamlwriter.h"

_Static_assert(sizeof(cs_fabric) == sizeof(int), "enum fields are stored as int");
_Static_assert(sizeof(cs_net_topology) == sizeof(int), "enum fields are stored as int");

#define OFF(member) offsetof(cs_cluster, member)
#define STR_SIZE(member) sizeof(((cs_cluster *)0)->member)
/* Algorithm a's flag row stores into coll.algo_enabled[a]. */
#define FLAG_OFF(a) (OFF(coll.algo_enabled) + (size_t)(a) * STR_SIZE(coll.algo_enabled[0]))

static const char *const fabric_names[] = {[CS_FABRIC_NVSWITCH] = "nvswitch",
                                           [CS_FABRIC_NVLINK] = "nvlink",
                                           [CS_FABRIC_PCIE] = "pcie",
                                           NULL};
static const char *const topology_names[] = {
    [CS_NET_RAIL_OPTIMIZED] = "rail-optimized", [CS_NET_FAT_TREE] = "fat-tree", NULL};

/* An algorithm's enable flag (collectives.<key>, e.g. nvls: NVLink SHARP
 * needs a third-generation NVSwitch, Hopper and later): an explicit `true`
 * on hardware its row does not allow is an error. The collectives mapping
 * is read after gpu and intra (table order), so both are known here. The
 * row's offset is its algorithm's algo_enabled entry. */
static int read_algo_flag(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    cs_cluster *cl = obj;
    int a = (int)((f->offset - FLAG_OFF(0)) / (FLAG_OFF(1) - FLAG_OFF(0)));
    cs_yfield b = {.name = f->name, .kind = CS_YF_BOOL};
    int on;
    int rc = cs_yamlnode_read(c, &b, v, &on);
    if (rc) return rc;
    if (on && !cs_algo_hw_allows((cs_algo_id)a, cl))
        return cs_yamlnode_error(c, v,
                                 "'%s: true' needs %s, got fabric %s and compute capability %d",
                                 f->name, cs_algo_flag_needs((cs_algo_id)a),
                                 fabric_names[cl->intra.kind], cl->gpu.compute_capability);
    cl->coll.algo_enabled[a] = on;
    return 0;
}

/* A flag is written and compared as the boolean at its offset. */
static const cs_yfield flag_as_bool = {.kind = CS_YF_BOOL};

static void put_flag(cs__yw *w, const cs_yfield *f, const void *obj, const void *base)
{
    cs__yw_field(w, &flag_as_bool, f->name, (const char *)obj + f->offset,
                 base ? (const char *)base + f->offset : NULL, 1);
}

static int same_flag(const cs_yfield *f, const void *a, const void *b)
{
    return cs__yw_same_value(&flag_as_bool, (const char *)a + f->offset,
                             (const char *)b + f->offset);
}

static const cs__yrow flag_row = {.put = put_flag, .same = same_flag};

/* inter.pcie: the GPU-NIC PCIe path as a link name, at NCCL's rate for
 * it (src/graph/topo.cc ncclTopoAddPci: bw = link_width x
 * kvDictPciGen[link_speed] / 80 GB/s, the per-lane value in 100 Mb/s:
 * 8 GT/s 60, 16 GT/s 120, 32 GT/s 240, 64 GT/s 480; so Gen3 x16 is 12 GB/s,
 * topo.h PCI_BW), or as a rate. Written back as the link name when the
 * rate is one (the source's spelling when unchanged). */
static const struct pcie_link {
    const char *name;
    int lanes, lane_100Mbps;
} pcie_links[] = {
    {"gen3x8", 8, 60},   {"gen3x16", 16, 60},  {"gen4x8", 8, 120},  {"gen4x16", 16, 120},
    {"gen5x8", 8, 240},  {"gen5x16", 16, 240}, {"gen6x8", 8, 480},  {"gen6x16", 16, 480},
};
#define N_PCIE_LINKS (sizeof pcie_links / sizeof pcie_links[0])
static const cs_yfield pcie_rate = {.name = "pcie", .kind = CS_YF_RATE, .flags = POSITIVE};

static double pcie_link_Bps(const struct pcie_link *l)
{
    return l->lanes * l->lane_100Mbps / 80.0 * 1e9;
}

static int read_pcie(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    double *dst = (double *)((char *)obj + f->offset);
    if (v->kind != CS_YNODE_SCALAR || !isalpha((unsigned char)v->text[0]))
        return cs_yamlnode_read(c, &pcie_rate, v, dst);
    const char *names[N_PCIE_LINKS];
    char list[256] = "";
    for (size_t i = 0; i < N_PCIE_LINKS; i++) {
        if (!strcmp(v->text, pcie_links[i].name)) {
            *dst = pcie_link_Bps(&pcie_links[i]);
            return 0;
        }
        names[i] = pcie_links[i].name;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", names[i]);
    }
    const char *near = cs_yamlnode_suggest(v->text, names, N_PCIE_LINKS);
    return cs_yamlnode_error(c, v, "'%s' must be one of %s or a rate such as 24GB/s, got '%s'%s%s%s",
                             f->name, list, v->text, near ? " (did you mean '" : "",
                             near ? near : "", near ? "'?)" : "");
}

static void put_pcie(cs__yw *w, const cs_yfield *f, const void *obj, const void *base)
{
    const char *p = (const char *)obj + f->offset;
    const char *bp = base ? (const char *)base + f->offset : NULL;
    double v;
    memcpy(&v, p, sizeof v);
    int changed = bp && !cs__yw_same_value(&pcie_rate, p, bp);
    const char *link = NULL;
    for (size_t i = 0; i < N_PCIE_LINKS && !link; i++)
        if (pcie_link_Bps(&pcie_links[i]) == v) link = pcie_links[i].name;
    char src[64];
    if (link && (changed || !cs__yw_source(w, f->name, src, sizeof src)))
        cs__yw_scalar(w, f->name, link, changed);
    else
        cs__yw_field(w, &pcie_rate, f->name, p, bp, 1.0);
}

static int same_pcie(const cs_yfield *f, const void *a, const void *b)
{
    return cs__yw_same_value(&pcie_rate, (const char *)a + f->offset, (const char *)b + f->offset);
}

static int pcie_set(const void *obj) { return ((const cs_cluster *)obj)->inter.pcie_Bps > 0; }

static const cs__yrow pcie_row = {.put = put_pcie, .same = same_pcie, .present = pcie_set};

static int inter_present(const void *obj)
{
    return ((const cs_cluster *)obj)->inter.nics_per_node > 0;
}


/* The optional gpu.compute keys: present when set (>= 0). */
static int slowdown_set(const void *obj)
{
    return ((const cs_cluster *)obj)->gpu.compute.comm_compute_slowdown >= 0;
}
static int fsdp1_hook_set(const void *obj)
{
    return ((const cs_cluster *)obj)->gpu.compute.fsdp1_hook_cpu_s >= 0;
}
static int fsdp2_hook_set(const void *obj)
{
    return ((const cs_cluster *)obj)->gpu.compute.fsdp2_hook_cpu_s >= 0;
}
static const cs__yrow slowdown_row = {.present = slowdown_set};
static const cs__yrow fsdp1_hook_row = {.present = fsdp1_hook_set};
static const cs__yrow fsdp2_hook_row = {.present = fsdp2_hook_set};

/* gpu.compute: the compute model's efficiencies (train/compute.c says
 * what each means; configs/clusters/NAME.yaml cite the values). */
#define FRACTION(key, member) {ROW(key, CS_YF_NUMBER, OFF(gpu.compute.member), CS_YF_LO_OPEN), .hi = 1}
static const cs_yfield compute_fields[] = {
    FRACTION("gemm", gemm),
    {ROW("gemm_half", CS_YF_NUMBER, OFF(gpu.compute.gemm_half_flops), CS_YF_NO_HI)},
    {ROW("tile", CS_YF_NUMBER, OFF(gpu.compute.tile), 0), .lo = 1, .hi = 1024},
    FRACTION("flash2", flash2),
    {ROW("flash2_half_seq", CS_YF_NUMBER, OFF(gpu.compute.flash2_half_seq), CS_YF_NO_HI)},
    FRACTION("flash1", flash1),
    {ROW("flash1_half_seq", CS_YF_NUMBER, OFF(gpu.compute.flash1_half_seq), CS_YF_NO_HI)},
    FRACTION("hbm", hbm),
    {ROW("hbm_half", CS_YF_SIZE, OFF(gpu.compute.hbm_half_bytes), CS_YF_NO_HI)},
    {ROW("kernel_floor", CS_YF_TIME, OFF(gpu.compute.kernel_floor_s), CS_YF_NO_HI)},
    {ROW("sms", CS_YF_NUMBER, OFF(gpu.compute.sms), 0), .hi = 100000},
    /* optional (.ext: written only when set; never taken from a preset):
     * the software stack's terms a training reads as its default */
    {ROW("comm_compute_slowdown", CS_YF_NUMBER, OFF(gpu.compute.comm_compute_slowdown), 0),
     .hi = 10, .ext = &slowdown_row},
    {ROW("fsdp1_hook_cpu", CS_YF_TIME, OFF(gpu.compute.fsdp1_hook_cpu_s), CS_YF_NO_HI),
     .ext = &fsdp1_hook_row},
    {ROW("fsdp2_hook_cpu", CS_YF_TIME, OFF(gpu.compute.fsdp2_hook_cpu_s), CS_YF_NO_HI),
     .ext = &fsdp2_hook_row},
    {.name = NULL},
};
#undef FRACTION

/* gpu.sustained_clock_mhz / peak_clock_mhz: written only where given; a
 * sustained clock without the clock the peaks are quoted at has nothing
 * to scale (read in table order: sustained first, then peak's check). */
static int sustained_set(const void *obj)
{
    return ((const cs_cluster *)obj)->gpu.sustained_clock_mhz > 0;
}
static int peak_clock_set(const void *obj)
{
    return ((const cs_cluster *)obj)->gpu.peak_clock_mhz > 0;
}
static const cs__yrow sustained_row = {.present = sustained_set};
static const cs__yrow peak_clock_row = {.present = peak_clock_set};
static int peak_clock_missing(const cs_yctx *c, const cs_yfield *f, const cs_ynode *map, void *obj)
{
    if (((cs_cluster *)obj)->gpu.sustained_clock_mhz > 0)
        return cs_yamlnode_error(c, map,
                                 "gpu.sustained_clock_mhz needs gpu.%s, the SM clock the tflops "
                                 "are quoted at (missing)",
                                 f->name);
    return 0;
}

static const cs_yfield gpu_fields[] = {
    {ROW("model", CS_YF_STRING, OFF(gpu.model), REQUIRED), .size = STR_SIZE(gpu.model)},
    {ROW("memory", CS_YF_SIZE, OFF(gpu.memory_bytes), REQUIRED | POSITIVE)},
    {ROW("compute_capability", CS_YF_INT, OFF(gpu.compute_capability), REQUIRED), .lo = 70,
     .hi = 120},
    {ROW("tflops", CS_YF_CUSTOM, OFF(gpu.peak_flops), REQUIRED), .fn = cs__grid_read,
     .ext = &cs__grid_tflops},
    {ROW("hbm_bandwidth", CS_YF_RATE, OFF(gpu.hbm_Bps), REQUIRED | POSITIVE)},
    {ROW("sustained_clock_mhz", CS_YF_NUMBER, OFF(gpu.sustained_clock_mhz), CS_YF_LO_OPEN),
     .hi = 1e5, .ext = &sustained_row},
    {ROW("peak_clock_mhz", CS_YF_NUMBER, OFF(gpu.peak_clock_mhz), CS_YF_LO_OPEN), .hi = 1e5,
     .missing = peak_clock_missing, .ext = &peak_clock_row},
    {ROW("compute", CS_YF_MAPPING, 0, 0), .sub = compute_fields},
    {.name = NULL},
};

/* intra.domain_size is written only where a YAML gives it. */
static int domain_set(const void *obj) { return ((const cs_cluster *)obj)->intra.domain_size > 0; }
static const cs__yrow domain_row = {.present = domain_set};

static const cs_yfield intra_fields[] = {
    {ROW("fabric", CS_YF_ENUM, OFF(intra.kind), REQUIRED), .names = fabric_names},
    {ROW("bandwidth", CS_YF_RATE, OFF(intra.bw_Bps), REQUIRED | POSITIVE)},
    {ROW("efficiency", CS_YF_NUMBER, OFF(intra.efficiency), CS_YF_LO_OPEN), .hi = 1},
    {ROW("latency", CS_YF_TIME, OFF(intra.latency_s), CS_YF_NO_HI)},
    {ROW("domain_size", CS_YF_INT, OFF(intra.domain_size), 0), .lo = 1, .hi = 1 << 20,
     .ext = &domain_row},
    {.name = NULL},
};

static const cs_yfield inter_fields[] = {
    {ROW("nics_per_node", CS_YF_INT, OFF(inter.nics_per_node), REQUIRED), .lo = 1, .hi = 64},
    {ROW("nic_bandwidth", CS_YF_RATE, OFF(inter.nic_bw_Bps), REQUIRED | POSITIVE)},
    {ROW("efficiency", CS_YF_NUMBER, OFF(inter.efficiency), CS_YF_LO_OPEN), .hi = 1},
    /* the GPU-NIC PCIe path (a link name or a rate): optional, written
     * when set; without it the path does not limit (topology.c) */
    {ROW("pcie", CS_YF_CUSTOM, OFF(inter.pcie_Bps), 0), .fn = read_pcie, .ext = &pcie_row},
    {ROW("latency", CS_YF_TIME, OFF(inter.latency_s), CS_YF_NO_HI)},
    {ROW("topology", CS_YF_ENUM, OFF(inter.topology), 0), .names = topology_names},
    {ROW("oversubscription", CS_YF_NUMBER, OFF(inter.oversubscription), CS_YF_NO_HI), .lo = 1},
    /* in-network reduction (NVIDIA SHARP on Quantum InfiniBand switches):
     * the hardware fact the CollNet rows' flags default to; false unless
     * the YAML says so (nothing on the GPU side reveals it) */
    {ROW("sharp", CS_YF_BOOL, OFF(inter.sharp), 0)},
    {.name = NULL},
};

/* The collectives rows before the algorithms' enable flags, and after. */
static const cs_yfield collectives_head[] = {
    {ROW("channels", CS_YF_INT, OFF(coll.channels), 0), .lo = 1, .hi = 64},
    {ROW("net_overhead", CS_YF_TIME, OFF(coll.net_overhead_s), CS_YF_NO_HI)},
    {ROW("ll128", CS_YF_BOOL, OFF(coll.ll128_enabled), 0)},
};

static const cs_yfield collectives_tail[] = {
    {ROW("chunk", CS_YF_CUSTOM, OFF(coll.chunk_bytes), 0), .fn = cs__grid_read,
     .ext = &cs__grid_chunk},
    {ROW("base_latency", CS_YF_CUSTOM, OFF(coll.base_latency_s), 0), .fn = cs__grid_read,
     .ext = &cs__grid_base_latency},
    {ROW("hw_latency", CS_YF_CUSTOM, OFF(coll.hw_latency_s), 0), .fn = cs__grid_read,
     .ext = &cs__grid_hw_latency},
    {ROW("bw_factor", CS_YF_CUSTOM, OFF(coll.proto_bw_factor), 0), .fn = cs__grid_read,
     .ext = &cs__grid_bw_factor},
    {ROW("efficiency", CS_YF_CUSTOM, OFF(coll.algo_efficiency), 0), .fn = cs__grid_read,
     .ext = &cs__grid_efficiency},
};

#define N(a) (sizeof(a) / sizeof *(a))
_Static_assert(N(collectives_head) + CS_ALGO_COUNT + N(collectives_tail) + 1 <=
                   CS__COLLECTIVES_ROWS,
               "cs__cluster_schema.collectives holds every row");

static const cs_yfield des_fields[] = {
    {ROW("links", CS_YF_CUSTOM, 0, 0), .fn = cs__des_read_links, .ext = &cs__des_links},
    {ROW("stragglers", CS_YF_CUSTOM, 0, 0), .fn = cs__des_read_stragglers,
     .ext = &cs__des_stragglers},
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

/* Order matters: des is last so its indices can be checked. The
 * collectives rows are the built ones (cs__cluster_schema_build). */
static const cs_yfield cluster_fields[] = {
    {ROW("name", CS_YF_STRING, OFF(name), 0), .size = STR_SIZE(name)},
    {ROW("nodes", CS_YF_INT, OFF(nodes), REQUIRED), .lo = 1, .hi = CS_LIMIT_HI_NODES},
    {ROW("gpus_per_node", CS_YF_INT, OFF(gpus_per_node), REQUIRED), .lo = 1, .hi = 1024},
    {ROW("gpu", CS_YF_MAPPING, 0, REQUIRED), .sub = gpu_fields},
    {ROW("intra", CS_YF_MAPPING, 0, REQUIRED), .sub = intra_fields},
    {ROW("inter", CS_YF_MAPPING, 0, 0), .sub = inter_fields, .missing = inter_missing,
     .ext = &(const cs__yrow){.present = inter_present}},
    {ROW("collectives", CS_YF_MAPPING, 0, 0), .sub = NULL},
    {ROW("des", CS_YF_MAPPING, 0, 0), .sub = des_fields,
     .ext = &cs__des_section},
    {.name = NULL},
};
_Static_assert(N(cluster_fields) <= CS__CLUSTER_ROWS, "cs__cluster_schema.cluster holds every row");

const cs_yfield *cs__cluster_schema_build(cs__cluster_schema *s)
{
    size_t n = 0;
    for (size_t i = 0; i < N(collectives_head); i++) s->collectives[n++] = collectives_head[i];
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        if (cs_algo_flag_key((cs_algo_id)a))
            s->collectives[n++] =
                (cs_yfield){ROW(cs_algo_flag_key((cs_algo_id)a), CS_YF_CUSTOM, FLAG_OFF(a), 0),
                            .fn = read_algo_flag, .ext = &flag_row};
    for (size_t i = 0; i < N(collectives_tail); i++) s->collectives[n++] = collectives_tail[i];
    s->collectives[n] = (cs_yfield){.name = NULL};
    for (size_t i = 0; i < N(cluster_fields); i++) {
        s->cluster[i] = cluster_fields[i];
        if (cluster_fields[i].kind == CS_YF_MAPPING && !cluster_fields[i].sub) /* collectives */
            s->cluster[i].sub = s->collectives;
    }
    return s->cluster;
}

/* Sentinels: channels 0, ll128 and the algorithms' flags -1. */
void cs__cluster_set_defaults(cs_cluster *cl, const char *name)
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
    cs__cluster_compute_unset(cl);
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

void cs__cluster_resolve_defaults(cs_cluster *cl)
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
        if (cl->coll.algo_enabled[a] < 0)
            cl->coll.algo_enabled[a] = cs_algo_hw_allows((cs_algo_id)a, cl);
}

/* The i-th compute field (every one is a double). */
static double *compute_field(cs_cluster *cl, size_t i)
{
    return (double *)((char *)cl + compute_fields[i].offset);
}

void cs__cluster_compute_unset(cs_cluster *cl)
{
    for (size_t i = 0; compute_fields[i].name; i++) *compute_field(cl, i) = CS_UNSET;
}

int cs__cluster_compute_missing(const cs_cluster *cl)
{
    int n = 0;
    for (size_t i = 0; compute_fields[i].name; i++)
        n += !compute_fields[i].ext && *compute_field((cs_cluster *)cl, i) == CS_UNSET;
    return n;
}

void cs__cluster_compute_fill(cs_cluster *cl, const cs_cluster *from)
{
    for (size_t i = 0; compute_fields[i].name; i++)
        if (*compute_field(cl, i) == CS_UNSET)
            *compute_field(cl, i) = *compute_field((cs_cluster *)from, i);
}
