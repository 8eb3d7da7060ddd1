/* SPDX-License-Identifier: MIT */
/*
 * algo_tree.c - NCCL's double binary tree all_reduce: closed form and
 * discrete-event schedule.
 *
 * Structure (Sanders, Speck & Träff 2009, "Two-tree algorithms for full
 * bandwidth broadcast, reduction and scan", Parallel Computing 35(12); as
 * NCCL 2.4+ builds it): inside a node the ranks form a chain whose head
 * (local rank 0) joins an inter-node binary tree; two complementary trees
 * (the second one mirrored, or shifted for an odd node count) each carry
 * half of the channels, so every node is an interior node in at most one.
 * Data per channel is cut into chunks that are reduced up the tree and
 * broadcast down it, pipelined: a rank forwards chunk k up once it has
 * chunk k from all its children, and down once it has it from its parent.
 * NCCL splits each channel's threads between the reduce (up) and broadcast
 * (down) halves, so each half runs at half the channel rate: that is the
 * 1/2 in NCCL's tree algbw = busbw / 2, and why up and down use separate
 * lanes (half of a port each) here.
 *
 * Closed form: NCCL's estimate as it is (tuning.cc ncclTopoTuneModel for
 * the latency and bandwidth, ncclTopoGetAlgoTime for the size term):
 *   T = base + 2((ppn-1) lat_intra + log2i(nodes) lat_inter)
 *       + bytes / (channels x rate x corr(bytes))
 *   rate = min(link share x factor, cap) / 2 per channel, link share = the
 *   slower of the GPU port and node-network per-channel shares;
 *   corr = NCCL's treeCorrectionFactor (coll/ncclmodel.c), applied by
 *   collective.c to factor and cap.
 * NCCL's comment on the table ("Trees are not perfectly sticking to the
 * model for medium sizes") says what it stands for: the pipeline fill and
 * the per-chunk synchronisation its fluid formula leaves out. So the closed
 * form adds no fill of its own (it once did: the fill then counted twice,
 * ~100% slow at 1-16 MiB on a 4-GPU PCIe box forced to tree).
 *
 * DES: NCCL's chunks (enqueue.cc calcCollChunking: one step of the
 * protocol's buffer per chunk for trees, chunkSteps = 1) pipelined hop by
 * hop, so the fill is simulated, not assumed. Its flows run at the rate
 * that makes the uniform pipeline, fill included, exactly NCCL's estimate:
 *   flow rate = rate x corr x (hops + chunks - 1) / chunks,
 *   hops = 2((ppn-1) + depth) on the critical path.
 * The correction is then counted once in either engine, and what the DES
 * adds over the closed form is what only it sees: slow links, stragglers,
 * contention, and the real depth of an uneven tree.
 * Where the engines differ by design (multi-node; tests/test-oracle.c
 * bounds it): depth = ceil(log2 nodes) in the DES against NCCL's floor in
 * the latency, and the two trees hold different roles across nodes, so
 * their flows are not in lockstep and a flow often has a lane to itself:
 * the DES uses that idle capacity, the closed form (like NCCL) charges the
 * shared rate throughout.
 * In the DES both trees are simulated, each standing for half the
 * channels; links carry 2/channels of each physical lane. The run itself
 * (rules, lanes, flows) is coll/treepipe.c's: the nodes' chains and the
 * heads' tree run as separate parts, equal chains once.
 */
#include <math.h>

#include "coll/algo.h"
#include "coll/treepipe.h"

/* Per-flow rate of either half (up or down) of a channel. With two or more
 * trees sharing a lane (every case but two nodes, where each node's network
 * lane carries one flow: one tree's root sends down while the other's leaf
 * sends up) each flow gets half a lane. */
static double tree_rate(const cs_topology *t, const cs_coll_params *p)
{
    double net = t->nodes == 2 ? 2.0 * p->net_ch_Bps : p->net_ch_Bps;
    double share = p->port_ch_Bps;
    if (t->nodes > 1) share = t->ppn_max == 1 ? net : fmin(share, net);
    return cs__hop_rate(p, share) * CS_NCCL_TREE_RATIO;
}

static void tree_chunks(const cs_coll_params *p, double *chunks, double *chunk_bytes)
{
    double per_ch = p->bytes / p->channels;
    *chunks = fmax(1.0, ceil(per_ch / p->chunk_bytes));
    *chunk_bytes = per_ch / *chunks;
}

/* NCCL's latency term: base + 2((ppn-1) intra + log2i(nodes) inter). */
static double tree_latency(const cs_topology *t, const cs_coll_params *p)
{
    int ppn = t->ranks / t->nodes;
    return p->base_lat_s + 2.0 * ((ppn - 1) * p->intra_lat_s + cs__log2i(t->nodes) * p->inter_lat_s);
}

static double tree_closed_form(const cs_topology *t, const cs_coll_params *p)
{
    if (t->ranks == 1) return p->base_lat_s;
    return tree_latency(t, p) + p->bytes / (p->channels * tree_rate(t, p));
}

/* What the DES's flows run at, over NCCL's rate: the uniform pipeline's
 * fill, (hops + chunks - 1) / chunks (see the file header). */
static double fill_scale(const cs_topology *t, double chunks)
{
    int ppn = t->ranks / t->nodes;
    double hops = 2.0 * ((ppn - 1) + cs__tree_depth(t->nodes));
    return (hops + chunks - 1) / chunks;
}

/* NCCL's binary tree over n nodes (ncclGetBtree): a node's parent and
 * children, found from its lowest set bit; the root has one child. */
static void btree(int n, int rank, int *up, int *d0, int *d1)
{
    int bit;
    for (bit = 1; bit < n; bit <<= 1)
        if (bit & rank) break;
    if (rank == 0) {
        *up = -1;
        *d0 = -1;
        *d1 = n > 1 ? bit >> 1 : -1;
        return;
    }
    int u = (rank ^ bit) | (bit << 1);
    if (u >= n) u = rank ^ bit;
    *up = u;
    int low = bit >> 1;
    *d0 = low == 0 ? -1 : rank - low;
    int down1 = low == 0 ? -1 : rank + low;
    while (down1 >= n) {
        low >>= 1;
        down1 = low == 0 ? -1 : rank + low;
    }
    *d1 = down1;
}

/* Tree `which` (0 or 1) over nodes: the second tree is the first mirrored
 * (even n) or shifted by one (odd n), as NCCL's ncclGetDtree. Shared with
 * the NVLSTree schedule (coll/algo.h). */
void cs__algo_dtree(int n, int which, int node, int *up, int *d0, int *d1)
{
    if (which == 0) {
        btree(n, node, up, d0, d1);
        return;
    }
    int mirror = n % 2 == 0;
    int m = mirror ? n - 1 - node : (node - 1 + n) % n;
    btree(n, m, up, d0, d1);
    int *v[3] = {up, d0, d1};
    for (int i = 0; i < 3; i++)
        if (*v[i] >= 0) *v[i] = mirror ? n - 1 - *v[i] : (*v[i] + 1) % n;
}

static int tree_simulate(const cs_topology *t, const cs_coll_params *p, double *time_s,
                         unsigned long long *events)
{
    if (t->ranks == 1) {
        *time_s = p->base_lat_s;
        *events = 0;
        return 0;
    }
    double chunks, chunk_bytes;
    tree_chunks(p, &chunks, &chunk_bytes);
    double fill = fill_scale(t, chunks);
    /* each simulated tree stands for channels/2 real channels, each lane is
     * half a physical direction: lane capacity = phys / 2 / (channels / 2),
     * channels being those the size runs on (cs_deslinks divides by the
     * cluster's count) */
    cs_treepipe q = {.t = t, .chunks = (long)chunks, .chunk_bytes = chunk_bytes,
                     .factor = p->factor * fill, .cap_Bps = p->cap_Bps * CS_NCCL_TREE_RATIO * fill,
                     .intra_lat_s = p->intra_lat_s, .inter_lat_s = p->inter_lat_s,
                     .ch_scale = (double)t->cluster.coll.channels / p->channels};
    *time_s = p->base_lat_s + cs_treepipe_run(&q, events);
    return 0;
}

/* ---- NCCL's model: src/graph/tuning.cc ncclTopoTuneModel ------------- */

/* Tree's "model refinements": busBw x .92 capped by perChMaxTreeBw; LL
 * then x 1/3.8 capped by llMaxBw; LL128 x 7/9 (one node) or 120/128
 * capped by perChMaxTreeLL128Bw. The per-channel caps count NCCL's search
 * channels, half the runtime channels a cluster's `channels` counts
 * (CS_NCCL_SEARCH_SHARE, connect.cc): with them per runtime channel the
 * tree's bound was twice NCCL's, and on an 8-NIC A100 pair of nodes it
 * beat the ring NCCL keeps (8 x 23.6 GB/s busBw against the ring's 8 x 24).
 * Across nodes only: there NCCL's search puts about one channel on each
 * NIC and a cluster's `channels` is twice that; on one node collsim's
 * default (16 on NVLink) is below NCCL's runtime count (an NVSwitch A100
 * searches 12 channels of 20 GB/s, runs 24), and halving it would bind a
 * cap NCCL does not reach there. */
static void tree_bandwidth(const cs_topology *t, cs_op op, cs_proto p, int channels, double *factor,
                           double *cap)
{
    (void)op;
    int scale = cs_ncclmodel_scale(t->nodes);
    double share = t->nodes > 1 ? CS_NCCL_SEARCH_SHARE : 1.0;
    double tree_cap = cs_ncclmodel_tree_max_per_channel_Bps(t->arch, scale) * share;
    switch (p) {
    case CS_PROTO_LL:
        *factor = CS_NCCL_TREE_FACTOR / CS_NCCL_TREE_LL_DIVISOR;
        *cap = fmin(tree_cap / CS_NCCL_TREE_LL_DIVISOR,
                    cs_ncclmodel_ll_max_Bps(t->arch, scale) / channels);
        break;
    case CS_PROTO_LL128: {
        double f2 = t->nodes == 1 ? CS_NCCL_TREE_LL128_FACTOR_1NODE : CS_NCCL_TREE_LL128_FACTOR;
        *factor = CS_NCCL_TREE_FACTOR * f2;
        *cap = fmin(tree_cap * f2, cs_ncclmodel_tree_ll128_max_per_channel_Bps(t->arch, scale) *
                                        share);
        break;
    }
    case CS_PROTO_SIMPLE:
        *factor = CS_NCCL_TREE_FACTOR;
        *cap = tree_cap;
        break;
    default: CS_PANIC("protocol %d", (int)p);
    }
}

/* enqueue.cc "Ring/Tree channel tuning" with the tree's maxThreads and
 * threadThresholds. */
static int tree_channels(const cs_topology *t, cs_op op, cs_proto p, double bytes)
{
    (void)op;
    return cs_ncclmodel_channels(bytes, t->cluster.coll.channels, cs_ncclmodel_max_threads(p),
                                 cs_ncclmodel_thread_threshold(p));
}

const cs_algo cs__algo_tree = {
    .ops = CS_OP_BIT(CS_OP_ALL_REDUCE),
    .protos = CS_PROTOS_ALL,
    .hint = "tree implements all_reduce only, as in NCCL",
    .latency = &cs_ncclmodel_tree_latency,
    .bandwidth = tree_bandwidth,
    .channels = tree_channels,
    .correction = cs_ncclmodel_tree_correction, /* ncclTopoGetAlgoTime */
    .closed_form = tree_closed_form,
    .simulate = tree_simulate,
    .calib = {.param = "efficiency.tree", .yaml = "collectives.efficiency.tree", .priority = 0},
};
