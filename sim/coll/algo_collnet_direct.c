/* SPDX-License-Identifier: MIT */
/*
 * algo_collnet_direct.c - NCCL's CollNet Direct all_reduce (in-network
 * reduction by SHARP switches; every GPU reaches the network through the
 * node's heads, one GPU per NIC): its row.
 *
 * The pipeline, its closed form and DES are collnet.c's; this file gives
 * what is Direct's (NVIDIA/nccl v2.20.3-1; the same from v2.19.3 to
 * v2.23.4):
 *  - bandwidth (src/graph/tuning.cc ncclTopoTuneModel): busBw divided by
 *    the "GPU/NIC ratio" f = ppn / nChannels of the collnet graph, less
 *    (f - 1) / 2 ("Collnet+Direct requires all GPUs to have a local NIC to
 *    work at full speed"), and x 0.85 from compute capability 90; here f =
 *    ppn / heads (one head per NIC: src/graph/connect.cc connectCollNet
 *    takes each collnet channel's first GPU, the one by its NIC, as a
 *    head), as NCCL's comment reads, since collsim's channels are the
 *    ring's and not the collnet graph's;
 *  - latency: 2 (min(1, ppn - 1) intraLat + (ppn - 1) x 0.4 us) + interLat,
 *    hwLat NVLink / PCI 3.7 us, NET 31 us, baseLat 0;
 *  - chunks (src/enqueue.cc computeCollChunkInfo): the Simple step (4 MiB
 *    / NCCL_STEPS = 512 KiB, the cluster's chunk.simple), halved while
 *    bytes / (channels x heads x chunk) < depth x 64 above 128 KiB, then
 *    < depth x 8 above 64 KiB and above 32 KiB, depth 2 (1 with one GPU
 *    per node: connectCollNet); a pipeline step is one chunk per head;
 *  - channels (src/enqueue.cc getChannnelThreadInfo, "CollNet channel
 *    tuning"): fewer while bytes < nc x 640 threads x heads x 512, down to
 *    16, 8, 4, 2, 1 in turn, the threshold halved at each nc = 1.5 x step;
 *  - availability (tuning.cc; src/init.cc): all_reduce with Simple, 2+
 *    nodes, NVSwitch inside them ("Disable CollNet+Direct if not on an
 *    NVSwitch system"), CollNet support (here inter.sharp), at most 8 GPUs
 *    per node. Departure: NCCL 2.20+ also runs Direct for all_gather and
 *    reduce_scatter where the SHARP plugin offers them and every GPU owns a
 *    NIC; collsim does not (no such data to test it on).
 */
#include <math.h>

#include "coll/collnet.h"

static double direct_chunk(const cs_topology *t, const cs_coll_params *p)
{
    double depth = t->ppn_max > 1 ? 2 : 1;
    double per = (double)p->channels * cs__collnet_heads(t);
    return cs__collnet_chunk(p->bytes, per, p->chunk_bytes,
                             (const double[3]){depth * 64, depth * 8, depth * 8});
}

static cs__collnet_shape direct_shape(const cs_topology *t, const cs_coll_params *p)
{
    int ppn = cs__collnet_ppn(t);
    return (cs__collnet_shape){
        .unit_bytes = cs__collnet_heads(t) * direct_chunk(t, p),
        .local_lat_s = (ppn > 1 ? p->intra_lat_s : 0) + (ppn - 1) * CS_NCCL_COLLNET_ARITY_LAT_S};
}

static double direct_closed_form(const cs_topology *t, const cs_coll_params *p)
{
    cs__collnet_shape s = direct_shape(t, p);
    return cs__collnet_closed_form(t, p, &s);
}

static int direct_simulate(const cs_topology *t, const cs_coll_params *p, double *time_s,
                           unsigned long long *events)
{
    cs__collnet_shape s = direct_shape(t, p);
    return cs__collnet_simulate(t, p, &s, time_s, events);
}

/* NCCL's loop as it is written (the threshold changes inside it). */
static int direct_channels(const cs_topology *t, cs_op op, cs_proto p, double bytes)
{
    (void)op;
    (void)p;
    int nc = t->cluster.coll.channels;
    double th = CS_NCCL_COLLNET_THREAD_THRESHOLD;
    double per = (double)CS_NCCL_MAX_NTHREADS * cs__collnet_heads(t);
    int flag = 1;
    for (int sw = 16; sw >= 1 && flag; sw /= 2)
        while ((flag = bytes < nc * per * th) && nc > sw) {
            if (nc == sw + sw / 2) th /= 2;
            nc--;
        }
    return nc;
}

static void direct_bandwidth(const cs_topology *t, cs_op op, cs_proto p, int channels, double *factor,
                             double *cap)
{
    (void)op;
    (void)p;
    (void)channels;
    double f = (double)cs__collnet_ppn(t) / cs__collnet_heads(t);
    f -= (f - 1) / 2;
    *factor = cs__collnet_fits(t) ? 1.0 / f : 0.0;
    if (t->arch >= CS_ARCH_HOPPER) *factor *= 0.85;
    *cap = INFINITY;
}

static const cs_nccl_latency direct_latency = {
    .base_us = {0.0, 0.0, 0.0},
    .hw_us = {[CS_HW_NVLINK] = {0.0, 0.0, 3.7}, [CS_HW_PCI] = {0.0, 0.0, 3.7},
              [CS_HW_NET] = {0.0, 0.0, 31.0}},
};

const cs_algo cs__algo_collnet_direct = {
    .ops = CS_OP_BIT(CS_OP_ALL_REDUCE),
    .protos = CS_PROTO_BIT(CS_PROTO_SIMPLE),
    .multi_node = 1, /* src/init.cc: CollNet off below NCCL_COLLNET_NODE_THRESHOLD 2 */
    .flag = {.key = "collnet_direct",
             .fabric = CS_FABRIC_NVSWITCH,
             .min_cc = 0,
             .sharp = 1,
             .needs = "switches that reduce in the network (inter.sharp: true) and an NVSwitch "
                      "fabric (intra.fabric: nvswitch)"},
    .hint = "CollNet Direct: all_reduce with Simple across 2+ nodes of NVSwitch, at most 8 GPUs "
            "each, on SHARP switches (inter.sharp): collectives.collnet_direct",
    .help = "collnet_direct (in-network reduction, NVIDIA SHARP; Simple only): all_reduce on 2+ "
            "NVSwitch nodes of at most 8 GPUs with inter.sharp (collectives.collnet_direct).",
    .latency = &direct_latency,
    .bandwidth = direct_bandwidth,
    .channels = direct_channels,
    .closed_form = direct_closed_form,
    .simulate = direct_simulate,
    /* collectives.efficiency.collnet_direct is not fitted */
};
