/* SPDX-License-Identifier: MIT */
/*
 * algo_p2p.c - NCCL's point-to-point operations, all_to_all and send_recv,
 * as one algorithm row: closed form and discrete-event schedule.
 *
 * What NCCL does (NVIDIA/nccl v2.23.4-1; HEAD's changes noted): an
 * all_to_all is a group of one ncclSend and one ncclRecv per rank, itself
 * included (nccl-tests src/alltoall.cu AlltoAllRunColl; NCCL 2.28's
 * ncclAlltoAll enqueues the same tasks, src/enqueue.cc taskAppend); a
 * send_recv is nccl-tests' ring shift, rank r sending to r + 1 and
 * receiving from r - 1 (src/sendrecv.cu). At ncclGroupEnd the tasks are
 * scheduled in the rounds of comm->p2pSchedule (src/init.cc
 * initTransportsRank: own node first, node deltas then local deltas in a
 * quadratic order; round 0 is the rank itself), each round on the
 * channels ncclP2pChannelBaseForRound gives it (src/include/channel.h)
 * out of comm->p2pnChannels = pow2Up(nChannels) (src/graph/paths.cc
 * ncclTopoComputeP2pChannels). A peer's op is split over nChannels parts
 * (src/enqueue.cc addP2pToPlan): between nChannelsMin (p2pnChannelsPerPeer
 * halved until nChannelsMin x nRanks <= p2pnChannels,
 * scheduleP2pTasksToPlan) and nChannelsMax = p2pnChannelsPerPeer, doubling
 * while a part exceeds stepSize (net) or 32 x stepSize (one node), with
 * stepSize = comm->p2pChunkSize: NCCL_P2P_NET_CHUNKSIZE 128 KiB across
 * nodes, NCCL_P2P_NVL_CHUNKSIZE 512 KiB on an all-NVLink node,
 * NCCL_P2P_PCI_CHUNKSIZE 128 KiB otherwise (src/init.cc computeBuffSizes).
 * p2pnChannelsPerPeer is the least over peers of 2 x max(1, NVLink bw /
 * per-link bw) for an NVLink peer, 2 for a PCIe peer and, for a remote one
 * (NCCL 2.29, the given H100 and B200 runs' version), max(local NICs,
 * divUp(their GB/s, NCCL_P2P_PER_CHANNEL_NET_BW 14)), then pow2Up; across
 * nodes it is halved while it x divUp(nRanks, 8) > p2pnChannels, on one
 * node capped at p2pnChannels (paths.cc ncclTopoGetNchannels and
 * ncclTopoComputeP2pChannels, NCCL_NCHANNELS_PER_NET_PEER unset; 2.28 and
 * earlier: max(local NICs, 2 halved while 2 x nRanks > 4 x
 * p2pnChannels)). Across nodes p2pnChannels comes from the inter-node
 * ring's channels (search.cc ncclTopoCompute / ncclTopoDupChannels,
 * connect.cc ncclTopoPostset: net_channel_GBps), which for ranks that do
 * not fill a node are fewer than a full node's, and each network peer's
 * rate is capped at its channels x one channel's share of the search's
 * rate (peer_net_cap_Bps): one rank per node gets 2 of 4 channels of a
 * 48 GB/s NIC, 24 GB/s. The protocol is LL when a peer's
 * bytes <= nChannelsMax x NCCL_P2P_LL_THRESHOLD (16 KiB) and the
 * connection has LL buffers, else Simple; network connections have none
 * (src/transport/net.cc: only with NCCL_ALLOC_P2P_NET_LL_BUFFERS), so
 * across nodes p2p is Simple. A channel runs up to
 * NCCL_MAX_DEV_WORK_P2P_PER_BATCH = 8 ops of a batch at once (device.h);
 * NCCL's own count of peers in flight is p2pnChannels / nChannels x 8
 * (HEAD addP2pToPlan, maxConcurrent). NCCL's tuner has no p2p entry:
 * ncclTopoGetAlgoTime never prices a send.
 *
 * What is modelled: every rank's transfers to its peers run at once as
 * flows over the flow model's links, in waves of maxConcurrent rounds (the
 * rank's own node first, as NCCL's schedule), a wave starting when the
 * rank's sends and receives of the previous one are in. An intra-node
 * flow crosses the sender's and the receiver's GPU ports (NVLink / PCIe);
 * an inter-node one the sender GPU's NIC path and its node's network out,
 * the receiver node's network in and its GPU's NIC path. A GPU's NIC path
 * is the share of the node's network its local NICs make (max(1, NICs /
 * GPUs) of them; NCCL sends a peer's data through the GPU's local NICs),
 * and the node's network is shared by all its GPUs, so an all_to_all at N
 * nodes sends (N - 1) / N of every GPU's data through its node's NICs.
 * Concurrent flows share a link equally; a flow's rate is
 * min(share x factor, cap / flows of its rank), and across nodes at most
 * its peer's network channels' rate (peer_net_cap_Bps). Time:
 *     T = base + sum over waves of max over the wave's flows of
 *         (hop latency + peer bytes / rate).
 * Latencies: NCCL has none for p2p, so the row starts from the ring's
 * tables (one ring step is one send to a peer: baseLat, hwLat of the
 * link class), overridable as collectives.*.p2p. Protocol factors: Simple
 * 1; LL the ring's one-node 1/3 under llMaxBw (tuning.cc), LL128 never.
 * The closed form is exact for uniform nodes (every rank's waves alike);
 * on uneven nodes it is an upper bound: each wave at the most flows any
 * rank, port, NIC path or node network carries in it, over the node sizes
 * (the DES shares less loaded links among fewer flows, and frees a share
 * when a flow ends). With several waves on uneven nodes the DES's ranks
 * drift apart and one rank's next wave overlaps another's last, so there
 * it may exceed the bound a little (0.5% at 200 ranks on 30 nodes).
 * Departures: the self copy (round 0) is free; the chunked staging of a
 * transfer through the connection's FIFO (its pipeline fill of one chunk)
 * is not simulated; a wave ends on every channel at once (NCCL's channels
 * progress independently); the quadratic order of node deltas is replaced
 * by 1, 2, ... (on uniform nodes the loads are the same); intra-node
 * peers of a multi-node all_to_all use Simple too (NCCL may use LL there).
 * The DES uses one node's senders when nodes are uniform and nothing is
 * overridden (the others are that node shifted; receive-side links then
 * carry the same loads as send-side ones and are left out).
 */
#include <math.h>
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/deslinks.h"
#include "coll/network.h"

/* ---- NCCL's p2p constants (v2.23.4-1) ---------------------------------- */
#define P2P_NET_CHUNK_BYTES (128.0 * 1024) /* init.cc NCCL_P2P_NET_CHUNKSIZE */
#define P2P_PCI_CHUNK_BYTES (128.0 * 1024) /* init.cc NCCL_P2P_PCI_CHUNKSIZE */
#define P2P_NVL_CHUNK_BYTES (512.0 * 1024) /* init.cc NCCL_P2P_NVL_CHUNKSIZE */
/* computeBuffSizes: p2pChunkSize x NCCL_STEPS (8) <= DEFAULT_BUFFSIZE (4 MiB) */
#define P2P_MAX_CHUNK_BYTES (4.0 * 1024 * 1024 / 8)
#define P2P_LL_THRESHOLD_BYTES 16384.0 /* enqueue.cc NCCL_P2P_LL_THRESHOLD */
#define P2P_PER_BATCH 8                /* device.h NCCL_MAX_DEV_WORK_P2P_PER_BATCH */
#define P2P_MAX_CHANNELS 64            /* device.h MAXCHANNELS */
#define P2P_PER_CHANNEL_NET_GBPS 14    /* paths.cc NCCL_P2P_PER_CHANNEL_NET_BW (2.29) */

/* search.cc speedArrayInter, sm90SpeedArrayInter, sm100SpeedArrayInter
 * (v2.29.2-1): the per-channel rates, GB/s, an inter-node ring search tries */
static const double speeds_inter[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                      7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12, 0};
static const double speeds_inter_sm90[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                                           15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12, 0};
static const double speeds_inter_sm100[] = {96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0,
                                            22.0, 20.0, 17.5, 15.0, 12.0, 6.0,  3.0,
                                            2.4,  1.2,  0.24, 0.12, 0};

/* topo.h SMxx_NVLINK_BW, GB/s per NVLink (ncclTopoNVLinkBw) */
static double nvlink_link_GBps(int cc)
{
    return cc >= 100 ? 40.1 : cc >= 90 ? 20.6 : cc >= 70 ? 20.0 : 18.0;
}

static int pow2_up(int x)
{
    int p = 1;
    while (p < x) p <<= 1;
    return p;
}

static int is_p2p(cs_op op) { return (CS_OPS_P2P & CS_OP_BIT(op)) != 0; }

/* Bytes one rank sends to one peer. */
static double peer_bytes(const cs_topology *t, cs_op op, double bytes)
{
    return op == CS_OP_ALL_TO_ALL ? bytes / t->ranks : bytes;
}

/* comm->p2pChunkSize (init.cc computeBuffSizes). */
static double p2p_chunk_bytes(const cs_topology *t)
{
    double c = t->nodes > 1                                    ? P2P_NET_CHUNK_BYTES
               : t->cluster.intra.kind != CS_FABRIC_PCIE ? P2P_NVL_CHUNK_BYTES
                                                             : P2P_PCI_CHUNK_BYTES;
    return fmin(c, P2P_MAX_CHUNK_BYTES);
}

/* NICs local to a GPU (max(1, NICs / GPUs per node)). */
static int gpu_nics(const cs_topology *t)
{
    int k = t->cluster.inter.nics_per_node / t->cluster.gpus_per_node;
    return k > 1 ? k : 1;
}

/* NCCL's rate of one NIC, GB/s: min(line, PCIe path) before
 * inter.efficiency (topo.cc ncclTopoAddNet / ncclTopoAddPci). */
static double nic_GBps(const cs_topology *t)
{
    const cs_cluster *c = &t->cluster;
    double r = c->inter.pcie_Bps > 0 ? fmin(c->inter.nic_bw_Bps, c->inter.pcie_Bps) : c->inter.nic_bw_Bps;
    return r / 1e9;
}

/* The inter-node ring NCCL's search finds, as the p2p channels see it:
 * *runtime = comm->nChannels and the return value, GB/s, the network rate
 * of one runtime channel. The search (search.cc ncclTopoCompute) starts at
 * the fastest speedArrayInter entry within a NIC's rate and finds one
 * channel per NIC the node's ranks drive; ncclTopoDupChannels doubles the
 * channels at half the rate unless the rate is below 25 GB/s or (compute
 * capability > 80) below 50 GB/s with more than 4 channels;
 * ncclTopoPostset (connect.cc) runs every channel twice; and on sm90+
 * across nodes a ring rate above 45 GB/s with fewer than 16 channels is
 * doubled once more ("4 compute channels per search channel"). The search
 * channels' rate is shared by the runtime channels that copy them; the
 * cluster's `channels` caps the count (NCCL_MAX_NCHANNELS). Departures: the
 * search's cross-NIC and time-limited passes are not run (each NIC is
 * taken to carry one channel at the first speed it can). */
static double net_channel_GBps(const cs_topology *t, int *runtime)
{
    int cc = t->cluster.gpu.compute_capability;
    const double *sp = cc >= 100 ? speeds_inter_sm100 : cc >= 90 ? speeds_inter_sm90 : speeds_inter;
    double nic = nic_GBps(t);
    int i = 0;
    while (sp[i + 1] > 0 && sp[i] > nic) i++;
    double s = sp[i];
    long nics = (long)t->ppn_max * gpu_nics(t);
    if (nics > t->cluster.inter.nics_per_node) nics = t->cluster.inter.nics_per_node;
    double g = (double)nics, speed = s;
    if (speed >= 25.0 && !(cc > 80 && speed < 50.0 && g > 4)) {
        g *= 2; /* ncclTopoDupChannels */
        speed /= 2;
    }
    double n = 2 * g; /* ncclTopoPostset */
    if (cc >= 90 && speed > 45.0 && n < 16) n *= 2;
    if (n > P2P_MAX_CHANNELS) n = P2P_MAX_CHANNELS;
    if (n > t->cluster.coll.channels) n = t->cluster.coll.channels;
    *runtime = (int)n;
    return speed * g / fmax(n, g);
}

/* comm->p2pnChannels before and after ncclTopoComputeP2pChannels makes it
 * a power of two (paths.cc): min(nChannels, MAXCHANNELS); across nodes
 * nChannels is the inter-node ring's (net_channel_GBps), on one node the
 * cluster's `channels`. */
static int p2p_nchannels_raw(const cs_topology *t)
{
    int c = t->cluster.coll.channels;
    if (t->nodes > 1) net_channel_GBps(t, &c);
    return c < P2P_MAX_CHANNELS ? c : P2P_MAX_CHANNELS;
}
static int p2p_nchannels(const cs_topology *t) { return pow2_up(p2p_nchannels_raw(t)); }

/* comm->p2pnChannelsPerPeer (paths.cc ncclTopoGetNchannels, the least over
 * the peers, then ncclTopoComputeP2pChannels). */
static int p2p_per_peer(const cs_topology *t)
{
    const cs_cluster *c = &t->cluster;
    int raw = p2p_nchannels_raw(t), least = raw;
    if (t->ppn_max > 1) {
        int links = (int)(c->intra.bw_Bps / 1e9 / nvlink_link_GBps(c->gpu.compute_capability));
        int local = c->intra.kind == CS_FABRIC_PCIE ? 2 : 2 * (links > 1 ? links : 1);
        if (local < least) least = local;
    }
    if (t->nodes > 1) {
        /* 2.29: max(local NICs, divUp(their rate, NCCL_P2P_PER_CHANNEL_NET_BW)) */
        int nn = gpu_nics(t), bw = (int)(nn * nic_GBps(t));
        int net = (bw + P2P_PER_CHANNEL_NET_GBPS - 1) / P2P_PER_CHANNEL_NET_GBPS;
        if (net < nn) net = nn;
        if (net < least) least = net;
    }
    int pp = pow2_up(least), nch = p2p_nchannels(t);
    if (t->nodes == 1) return pp < nch ? pp : nch;
    /* ncclTopoComputeP2pChannels (2.29) across nodes: halved while
     * perPeer x divUp(nRanks, 8) > p2pnChannels, so every peer fits in one
     * round (2.28 and earlier: 2 channels halved while 2 x nRanks >
     * 4 x p2pnChannels, at least the local NICs) */
    long long rounds = ((long long)t->ranks + P2P_PER_BATCH - 1) / P2P_PER_BATCH;
    while ((long long)pp * rounds > nch && pp > 1) pp /= 2; /* 2^30 ranks */
    return pp;
}

/* nChannels of one peer's op of `b` bytes (enqueue.cc addP2pToPlan, with
 * scheduleP2pTasksToPlan's nChannelsMin and nChannelsMax). */
static int p2p_op_channels(const cs_topology *t, double b)
{
    int most = p2p_per_peer(t), least = most;
    while ((long long)least * t->ranks > p2p_nchannels(t) && least > 1) least /= 2;
    if (!(b > 0)) return 1;
    double step = p2p_chunk_bytes(t);
    double min_part = t->nodes > 1 ? step / 2 : step / 8;
    double max_part = t->nodes > 1 ? step : step * 32;
    double parts = ceil(b / min_part);
    int nch = parts < least ? (int)parts : least;
    double part = fmax(min_part, ceil(b / nch));
    while (part > max_part && nch <= most / 2) {
        nch *= 2;
        part = ceil(b / nch);
    }
    return nch;
}

/* One peer's network rate cap (Simple, across nodes): its op's channels
 * x a runtime channel's share of the inter-node ring's rate
 * (net_channel_GBps). A channel is one connection whose proxy keeps at
 * most NCCL_STEPS chunks of NCCL_P2P_NET_CHUNKSIZE in flight (net.cc
 * sendProxyProgress), so one channel does not fill a NIC; NCCL's own
 * model gives it the search channel's rate shared by its copies (tuning.cc
 * prices a ring at graph nChannels x bwInter). The cap is that rate, not
 * scaled by inter.efficiency: the wire's achievable fraction binds only
 * where the NIC path does (the flow's share of it, which is scaled). One
 * rank per node: 2 of 4 runtime channels, half of NCCL's 48 GB/s NIC. */
static double peer_net_cap_Bps(const cs_topology *t, double m)
{
    int n;
    double ch_Bps = net_channel_GBps(t, &n) * 1e9;
    return p2p_op_channels(t, m) * ch_Bps;
}

/* Rounds in flight at once: p2pnChannels / nChannels x 8 (maxConcurrent). */
static long p2p_per_wave(const cs_topology *t, const cs_coll_params *q)
{
    int nch = q->channels < p2p_nchannels(t) ? q->channels : p2p_nchannels(t);
    return (long)(p2p_nchannels(t) / nch) * P2P_PER_BATCH;
}

/* Rounds of one rank: all_to_all every rank (round 0 itself), send_recv
 * one. */
static long p2p_rounds(const cs_topology *t, cs_op op)
{
    return op == CS_OP_ALL_TO_ALL ? t->ranks : 1;
}

/* ---- closed form ------------------------------------------------------- */

/* Intra and inter peers of a rank on a node of `ppn` ranks in rounds
 * [lo, hi) (own node's rounds 1 .. ppn-1 first; round 0 is itself). */
static void wave_peers(long lo, long hi, long ppn, long *k_intra, long *k_inter)
{
    long a = lo > 1 ? lo : 1, b = hi < ppn ? hi : ppn;
    *k_intra = b > a ? b - a : 0;
    a = lo > ppn ? lo : ppn;
    *k_inter = hi > a ? hi - a : 0;
}

/* One class of flows: `k` of a rank's flows, each of share_Bps x factor
 * capped at cap_each, after lat_s. 0 when k is 0. */
static double class_time(const cs_coll_params *q, double m, long k, double share_Bps,
                         double cap_each, double lat_s)
{
    if (k == 0) return 0;
    double r = fmin(share_Bps * q->factor, cap_each);
    return lat_s + m / r;
}

static double p2p_closed_form(const cs_topology *t, const cs_coll_params *q)
{
    int n = t->ranks;
    if (n == 1) return q->base_lat_s;
    double m = peer_bytes(t, q->op, q->bytes), cap = q->cap_Bps * q->channels;
    long ppn = t->ppn_max;
    double port = t->port_Bps, net = t->node_net_Bps, gnet = t->gpu_net_Bps;
    if (q->op == CS_OP_SEND_RECV) {
        /* ranks whose successor is on their node, and each node's last */
        long k_in = t->nodes == 1 || ppn > 1, k_out = t->nodes > 1;
        double cap_x = t->nodes > 1 ? fmin(cap, peer_net_cap_Bps(t, m)) : cap;
        return q->base_lat_s + fmax(class_time(q, m, k_in, port, cap, q->intra_lat_s),
                                    class_time(q, m, k_out, fmin(gnet, net), cap_x, q->inter_lat_s));
    }
    long rounds = p2p_rounds(t, q->op), per = p2p_per_wave(t, q);
    double total = q->base_lat_s, peer_x = t->nodes > 1 ? peer_net_cap_Bps(t, m) : INFINITY;
    for (long lo = 0; lo < rounds; lo += per) {
        /* the most flows a rank, a port, a NIC path or a node's network
         * carries in this wave, over the node sizes (one when uniform) */
        long hi = lo + per < rounds ? lo + per : rounds, ki = 0, kx = 0, k = 0, kn = 0;
        for (long p = t->ranks / t->nodes; p <= ppn; p++) {
            long a, b;
            wave_peers(lo, hi, p, &a, &b);
            ki = a > ki ? a : ki;
            kx = b > kx ? b : kx;
            k = a + b > k ? a + b : k;
            kn = p * b > kn ? p * b : kn;
        }
        if (k == 0) continue;
        double each = cap / (double)k;
        double share_x = kx ? fmin(gnet / kx, net / (double)kn) : 0;
        total += fmax(class_time(q, m, ki, ki ? port / ki : 0, each, q->intra_lat_s),
                      class_time(q, m, kx, share_x, fmin(each, peer_x), q->inter_lat_s));
    }
    return total;
}

/* ---- discrete-event schedule -------------------------------------------- */

typedef struct p2p_sim {
    const cs_topology *t;
    const cs_coll_params *q;
    cs_engine *eng;
    cs_network *net;
    int n, senders, symmetric;
    long rounds, per_wave;
    int waves;
    double m;
    /* links per rank (port out/in, NIC path out/in) and node (net out/in);
     * -1 where the symmetric run leaves the receive side out */
    int *port_out, *port_in, *gnic_out, *gnic_in, *net_out, *net_in;
    int *first;   /* [nodes + 1]: first rank of each node */
    int *wave;    /* wave each sender is in */
    int *pending; /* [rank x waves]: its transfers of that wave not yet in */
    double done;
} p2p_sim;

/* The rank r sends to in round j (send_recv: r + 1). Rounds 0 .. ppn-1 are
 * its node's ranks at local delta j (round 0 itself); then node delta
 * e = 1, 2, ..., each node's ranks in local-delta order. */
static int send_peer(const p2p_sim *s, int r, long j)
{
    const cs_topology *t = s->t;
    if (s->q->op == CS_OP_SEND_RECV) return (r + 1) % s->n;
    int nodes = t->nodes, a = cs_topology_node_of(t, r), l = cs_topology_local_of(t, r);
    long rest = j;
    for (int e = t->uniform ? (int)(j / (s->n / nodes)) : 0; e < nodes; e++) {
        int b = (a + e) % nodes;
        long pb = s->first[b + 1] - s->first[b];
        if (t->uniform) rest = j - (long)e * pb;
        if (rest < pb) return s->first[b] + (int)((l + rest) % pb);
        rest -= pb;
    }
    CS_PANIC("round %ld of rank %d beyond %d ranks", j, r, t->ranks);
}

static void p2p_arrive(cs_engine *e, void *ctx, int64_t a, int64_t b);

/* Starts rank r's sends of wave w (at least one transfer is in it). */
static void start_wave(p2p_sim *s, int r, int w)
{
    const cs_topology *t = s->t;
    long lo = (long)w * s->per_wave, hi = lo + s->per_wave < s->rounds ? lo + s->per_wave : s->rounds;
    long k = 0;
    for (long j = lo; j < hi; j++) k += send_peer(s, r, j) != r;
    double slow = cs_deslinks_slowdown(t, r), peer_x = t->nodes > 1 ? peer_net_cap_Bps(t, s->m) : INFINITY;
    for (long j = lo; j < hi; j++) {
        int to = send_peer(s, r, j);
        if (to == r) continue;
        int a = cs_topology_node_of(t, r), b = cs_topology_node_of(t, to), links[CS_NET_MAX_PATH];
        int nl = 0, inter = a != b;
        links[nl++] = inter ? s->gnic_out[r] : s->port_out[r];
        if (inter) links[nl++] = s->net_out[a];
        if (inter && s->net_in[b] >= 0) links[nl++] = s->net_in[b];
        int in = inter ? s->gnic_in[to] : s->port_in[to];
        if (in >= 0) links[nl++] = in;
        cs_flow_spec f = {.links = links, .nlinks = nl, .bytes = s->m,
                          .factor = s->q->factor / slow,
                          .cap_Bps = fmin(s->q->cap_Bps * s->q->channels / (double)k,
                                          inter ? peer_x : INFINITY) / slow,
                          .latency_s = inter ? s->q->inter_lat_s : s->q->intra_lat_s,
                          .on_arrive = p2p_arrive, .ctx = s, .a = r,
                          .b = (int64_t)to * s->waves + w};
        cs_network_start_flow(s->net, &f);
    }
}

/* Moves rank r on past every wave whose transfers are all in. */
static void advance(p2p_sim *s, int r)
{
    while (s->wave[r] < s->waves && s->pending[(size_t)r * s->waves + s->wave[r]] == 0) {
        s->done = fmax(s->done, cs_engine_now(s->eng));
        if (++s->wave[r] < s->waves && s->pending[(size_t)r * s->waves + s->wave[r]] > 0)
            start_wave(s, r, s->wave[r]);
    }
}

static void p2p_arrive(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    (void)e;
    p2p_sim *s = ctx;
    int w = (int)(b % s->waves), to = (int)(b / s->waves);
    s->pending[(size_t)a * s->waves + w]--;
    if (!s->symmetric) s->pending[(size_t)to * s->waves + w]--;
    advance(s, (int)a);
    if (!s->symmetric) advance(s, to);
}

static void p2p_begin(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    (void)e, (void)b;
    p2p_sim *s = ctx;
    int r = (int)a;
    if (s->pending[(size_t)r * s->waves] > 0) start_wave(s, r, 0);
    advance(s, r);
}

/* Counts every transfer into its sender's and (full run) receiver's wave. */
static void count_pending(p2p_sim *s)
{
    for (int r = 0; r < s->senders; r++)
        for (long j = 0; j < s->rounds; j++) {
            int to = send_peer(s, r, j), w = (int)(j / s->per_wave);
            if (to == r) continue;
            s->pending[(size_t)r * s->waves + w]++;
            if (!s->symmetric) s->pending[(size_t)to * s->waves + w]++;
        }
}

/* Adds the links: whole capacities (a cs_deslinks share x channels). */
static void add_links(p2p_sim *s)
{
    const cs_topology *t = s->t;
    double ch = t->cluster.coll.channels;
    for (int k = 0; k < t->nodes; k++) {
        s->net_out[k] = s->net_in[k] = -1;
        if (t->nodes == 1 || (s->symmetric && k > 0)) continue;
        s->net_out[k] = cs_network_add_link(s->net, cs_deslinks_net_ch_Bps(t, k) * ch);
        if (!s->symmetric) s->net_in[k] = cs_network_add_link(s->net, cs_deslinks_net_ch_Bps(t, k) * ch);
    }
    for (int r = 0; r < s->n; r++) {
        s->port_out[r] = s->port_in[r] = s->gnic_out[r] = s->gnic_in[r] = -1;
        if (r >= s->senders) continue;
        int node = cs_topology_node_of(t, r), local = cs_topology_local_of(t, r);
        double port = cs_deslinks_port_ch_Bps(t, node, local) * ch;
        double gnet = cs_topology_gpu_net_Bps(t, node); /* a GPU's NIC path, whole */
        s->port_out[r] = cs_network_add_link(s->net, port);
        s->port_in[r] = cs_network_add_link(s->net, port);
        if (t->nodes == 1) continue;
        s->gnic_out[r] = cs_network_add_link(s->net, gnet);
        if (!s->symmetric) s->gnic_in[r] = cs_network_add_link(s->net, gnet);
    }
}

static int p2p_simulate(const cs_topology *t, const cs_coll_params *q, double *time_s,
                        unsigned long long *events)
{
    p2p_sim s = {.t = t, .q = q, .n = t->ranks, .m = peer_bytes(t, q->op, q->bytes)};
    s.symmetric = t->uniform && !t->heterogeneous && q->op == CS_OP_ALL_TO_ALL;
    s.senders = s.symmetric ? t->ranks / t->nodes : t->ranks;
    s.rounds = p2p_rounds(t, q->op);
    s.per_wave = p2p_per_wave(t, q);
    s.waves = (int)((s.rounds + s.per_wave - 1) / s.per_wave);
    size_t n = (size_t)s.n;
    s.port_out = cs_xmalloc(4 * n * sizeof *s.port_out);
    s.port_in = s.port_out + n;
    s.gnic_out = s.port_in + n;
    s.gnic_in = s.gnic_out + n;
    s.net_out = cs_xmalloc(2 * (size_t)t->nodes * sizeof *s.net_out);
    s.net_in = s.net_out + t->nodes;
    s.wave = cs_xcalloc(n, sizeof *s.wave);
    s.pending = cs_xcalloc(n * (size_t)s.waves, sizeof *s.pending);
    s.first = cs_xmalloc(((size_t)t->nodes + 1) * sizeof *s.first);
    s.first[0] = 0;
    for (int k = 0; k < t->nodes; k++) s.first[k + 1] = s.first[k] + cs_topology_ranks_on(t, k);
    s.eng = cs_engine_new();
    s.net = cs_network_new(s.eng);
    add_links(&s);
    count_pending(&s);
    for (int r = 0; r < s.senders; r++)
        cs_engine_schedule(s.eng, cs_deslinks_delay_s(t, r), p2p_begin, &s, r, 0);
    cs_engine_run(s.eng);
    for (int r = 0; r < s.senders; r++) CS_ASSERT(s.wave[r] == s.waves); /* every wave ran */
    *time_s = q->base_lat_s + s.done;
    *events = cs_engine_events_run(s.eng);
    cs_network_free(s.net);
    cs_engine_free(s.eng);
    free(s.port_out);
    free(s.net_out);
    free(s.wave);
    free(s.pending);
    free(s.first);
    return 0;
}

/* ---- the row's model ---------------------------------------------------- */

/* Simple at the link rate; LL the ring's one-node factor 1/3 under llMaxBw
 * (a total, shared by the channels), and only inside a node (network
 * connections have no LL buffers); never LL128. */
static void p2p_bandwidth(const cs_topology *t, cs_op op, cs_proto p, int channels, double *factor,
                          double *cap)
{
    (void)op;
    *factor = p == CS_PROTO_SIMPLE ? 1.0 : 0.0;
    *cap = INFINITY;
    if (p == CS_PROTO_LL && t->nodes == 1) {
        *factor = CS_NCCL_RING_LL_FACTOR_1NODE;
        *cap = cs_ncclmodel_ll_max_Bps(t->arch, 0) / channels;
    }
}

static int p2p_channels(const cs_topology *t, cs_op op, cs_proto p, double bytes)
{
    (void)p;
    return p2p_op_channels(t, peer_bytes(t, op, bytes));
}

/* addP2pToPlan: LL when a peer's bytes <= nChannelsMax x 16 KiB (and the
 * connection has LL buffers: not across nodes), else Simple. */
static int p2p_picks(const cs_topology *t, cs_op op, cs_proto p, double bytes)
{
    if (!is_p2p(op)) return 1;
    int ll = t->nodes == 1 && peer_bytes(t, op, bytes) <= p2p_per_peer(t) * P2P_LL_THRESHOLD_BYTES;
    return p == (ll ? CS_PROTO_LL : CS_PROTO_SIMPLE);
}

const cs_algo cs__algo_p2p = {
    .ops = CS_OPS_P2P,
    .protos = CS_PROTO_BIT(CS_PROTO_LL) | CS_PROTO_BIT(CS_PROTO_SIMPLE),
    .hint = "p2p runs only all_to_all and send_recv, with LL inside one node only",
    .help = "p2p runs all_to_all and send_recv as NCCL does, grouped ncclSend/ncclRecv "
            "(the only choice for those ops).",
    .latency = &cs_ncclmodel_ring_latency,
    .bandwidth = p2p_bandwidth,
    .channels = p2p_channels,
    .picks = p2p_picks,
    .closed_form = p2p_closed_form,
    .simulate = p2p_simulate,
};
