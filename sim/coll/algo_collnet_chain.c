/* SPDX-License-Identifier: MIT */
/*
 * algo_collnet_chain.c - NCCL's CollNet Chain all_reduce (in-network
 * reduction by SHARP switches; inside a node the data goes up a chain
 * through the node's GPUs to the one that sends it to the network, and the
 * result comes back down the chain): its row.
 *
 * The pipeline, its closed form and DES are collnet.c's; this file gives
 * what is Chain's (NVIDIA/nccl v2.20.3-1; the same from v2.19.3 to
 * v2.23.4):
 *  - bandwidth (src/graph/tuning.cc ncclTopoTuneModel): no refinement on
 *    busBw = nChannels x bwIntra (2.16 had x 0.75, 2.17+ none);
 *  - latency: 2 (ppn - 1) intraLat + interLat, hwLat NVLink / PCI 2.8 us,
 *    NET 30 us, baseLat 0;
 *  - chunks (src/enqueue.cc computeCollChunkInfo): min(256 KiB, the Simple
 *    step), halved while bytes / (channels x chunk) < depth x 64 above
 *    128 KiB, < depth x 8 above 64 KiB, < depth above 32 KiB, with depth
 *    the chain's length, ppn (src/graph/connect.cc connectCollNet);
 *  - channels (src/enqueue.cc getChannnelThreadInfo, the ring/tree loop):
 *    fewer while bytes < nc x 640 threads x 512;
 *  - availability (tuning.cc; src/init.cc): all_reduce with Simple, 2+
 *    nodes, CollNet support (here inter.sharp), at most 8 GPUs per node;
 *    any intra-node fabric.
 */
#include <math.h>

#include "coll/collnet.h"

static cs__collnet_shape chain_shape(const cs_topology *t, const cs_coll_params *p)
{
    int ppn = cs__collnet_ppn(t);
    double c = fmin(CS_NCCL_COLLNET_CHAIN_MAX_CHUNK_BYTES, p->chunk_bytes);
    double depth = ppn;
    c = cs__collnet_chunk(p->bytes, p->channels, c, (const double[3]){depth * 64, depth * 8, depth});
    return (cs__collnet_shape){.unit_bytes = c, .local_lat_s = (ppn - 1) * p->intra_lat_s};
}

static double chain_closed_form(const cs_topology *t, const cs_coll_params *p)
{
    cs__collnet_shape s = chain_shape(t, p);
    return cs__collnet_closed_form(t, p, &s);
}

static int chain_simulate(const cs_topology *t, const cs_coll_params *p, double *time_s,
                          unsigned long long *events)
{
    cs__collnet_shape s = chain_shape(t, p);
    return cs__collnet_simulate(t, p, &s, time_s, events);
}

static int chain_channels(const cs_topology *t, cs_op op, cs_proto p, double bytes)
{
    (void)op;
    (void)p;
    return cs_ncclmodel_channels(bytes, t->cluster.coll.channels, CS_NCCL_MAX_NTHREADS,
                                 CS_NCCL_COLLNET_THREAD_THRESHOLD);
}

static void chain_bandwidth(const cs_topology *t, cs_op op, cs_proto p, int channels, double *factor,
                            double *cap)
{
    (void)op;
    (void)p;
    (void)channels;
    *factor = cs__collnet_fits(t) ? 1.0 : 0.0;
    *cap = INFINITY;
}

static const cs_nccl_latency chain_latency = {
    .base_us = {0.0, 0.0, 0.0},
    .hw_us = {[CS_HW_NVLINK] = {0.0, 0.0, 2.8}, [CS_HW_PCI] = {0.0, 0.0, 2.8},
              [CS_HW_NET] = {0.0, 0.0, 30.0}},
};

const cs_algo cs__algo_collnet_chain = {
    .ops = CS_OP_BIT(CS_OP_ALL_REDUCE),
    .protos = CS_PROTO_BIT(CS_PROTO_SIMPLE),
    .multi_node = 1, /* src/init.cc: CollNet off below NCCL_COLLNET_NODE_THRESHOLD 2 */
    .flag = {.key = "collnet_chain",
             .fabric = -1,
             .min_cc = 0,
             .sharp = 1,
             .needs = "switches that reduce in the network (inter.sharp: true)"},
    .hint = "CollNet Chain: all_reduce with Simple across 2+ nodes of at most 8 GPUs each, on "
            "SHARP switches (inter.sharp): collectives.collnet_chain",
    .help = "collnet_chain (in-network reduction, NVIDIA SHARP; Simple only): all_reduce on 2+ "
            "nodes of at most 8 GPUs with inter.sharp (collectives.collnet_chain).",
    .latency = &chain_latency,
    .bandwidth = chain_bandwidth,
    .channels = chain_channels,
    .closed_form = chain_closed_form,
    .simulate = chain_simulate,
    /* collectives.efficiency.collnet_chain is not fitted */
};
