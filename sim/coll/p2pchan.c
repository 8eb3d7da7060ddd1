/* SPDX-License-Identifier: MIT */
/*
 * p2pchan.c - NCCL's channel rules for point-to-point operations: how many
 * channels a communicator gives p2p, how many a peer's op is split over,
 * the step (chunk) a part moves in, and the rate those channels carry
 * across the network and over NVLink.
 *
 * Sources (NVIDIA/nccl v2.23.4-1 .. v2.29.2-1, HEAD's changes noted):
 * src/graph/search.cc ncclTopoCompute / ncclTopoDupChannels and the speed
 * arrays, src/graph/connect.cc ncclTopoPostset, src/graph/paths.cc
 * ncclTopoGetNchannels / ncclTopoComputeP2pChannels, src/init.cc
 * computeBuffSizes, src/enqueue.cc scheduleP2pTasksToPlan / addP2pToPlan,
 * src/device/sendrecv.h, src/transport/net.cc and p2p.cc. Pure functions
 * of the topology and a peer's bytes, O(1) each (the one-node ring search
 * is a loop over a dozen speeds). Where the source does not settle a rate
 * (what one channel's thread block copies over NVLink) the function says
 * what collsim assumes and why. algo_p2p.c's closed form and DES read
 * these, so the two engines can never use different channel counts.
 */
#include <math.h>

#include "coll/p2pchan.h"

/* NCCL's p2p constants (v2.23.4-1 .. v2.29.2-1) */
#define P2P_NET_CHUNK_BYTES (128.0 * 1024) /* init.cc NCCL_P2P_NET_CHUNKSIZE */
#define P2P_PCI_CHUNK_BYTES (128.0 * 1024) /* init.cc NCCL_P2P_PCI_CHUNKSIZE */
#define P2P_NVL_CHUNK_BYTES (512.0 * 1024) /* init.cc NCCL_P2P_NVL_CHUNKSIZE */
/* computeBuffSizes: p2pChunkSize x NCCL_STEPS (8) <= DEFAULT_BUFFSIZE (4 MiB) */
#define P2P_MAX_CHUNK_BYTES (4.0 * 1024 * 1024 / 8)
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

/* search.cc speedArrayIntra, sm90SpeedArrayIntra, sm100SpeedArrayIntra
 * (v2.29.2-1; 2.28 lacks sm100's 45, which changes no count below): the
 * per-channel rates, GB/s, a one-node ring search tries */
static const double speeds_intra[] = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                      9.0,  7.0,  6.0,  5.0,  4.0,  3.0,  0};
static const double speeds_intra_sm90[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                           15.0, 12.0, 11.0, 6.0,  3.0,  0};
static const double speeds_intra_sm100[] = {90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0,
                                            30.0, 24.0, 20.0, 19.0, 18.0, 0};

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

/* comm->p2pChunkSize (init.cc computeBuffSizes). */
double cs_p2pchan_chunk_bytes(const cs_topology *t)
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

/* comm->nChannels of a one-node NVLink ring (search.cc ncclTopoCompute,
 * ringGraph maxChannels = MAXCHANNELS / 2, init.cc): the search starts at
 * the fastest intra speed within the GPU's NVLink rate (NCCL's: the port,
 * links x ncclTopoNVLinkBw) and keeps g = rate / speed channels; it tries
 * slower speeds while one is above 0.49 x the best found and keeps one only
 * if g x speed is strictly higher (ncclTopoCompareGraphs), stopping once
 * g x speed reaches the rate; ncclTopoDupChannels doubles g unless the
 * speed is below 25 GB/s or (compute capability > 80) below 50 with more
 * than 4 channels; ncclTopoPostset (connect.cc) runs every channel twice.
 * DGX H100: 6 x 60 -> 12 -> 24 runtime channels; HGX A100: 6 x 40 -> 12
 * -> 24 (NCCL logs "Channel 23/24"); GB300 tray: 8 x 90 -> 16 -> 32.
 * Pass 2 of the search only raises the speed at that count. */
static int intra_ring_channels(const cs_topology *t)
{
    int cc = t->cluster.gpu.compute_capability;
    const double *sp = cc >= 100 ? speeds_intra_sm100 : cc >= 90 ? speeds_intra_sm90 : speeds_intra;
    double bw = t->port_Bps / 1e9, best_s = 0;
    int best_g = 0, i = 0;
    while (sp[i + 1] > 0 && sp[i] > bw) i++;
    for (; sp[i] > 0; i++) {
        if (best_g > 0 && sp[i] / best_s <= 0.49) break;
        int g = (int)fmin(bw / sp[i], P2P_MAX_CHANNELS / 2); /* capped before the cast */
        if (g >= 1 && g * sp[i] > best_g * best_s) best_g = g, best_s = sp[i];
        if (best_g * best_s >= bw) break;
    }
    if (best_g == 0) best_g = 1; /* the search's fallback: one channel */
    if (best_s >= 25.0 && !(cc > 80 && best_s < 50.0 && best_g > 4))
        best_g = 2 * best_g < P2P_MAX_CHANNELS / 2 ? 2 * best_g : P2P_MAX_CHANNELS / 2;
    return 2 * best_g;
}

/* comm->p2pnChannels before and after ncclTopoComputeP2pChannels makes it
 * a power of two (paths.cc): min(nChannels, MAXCHANNELS); across nodes
 * nChannels is the inter-node ring's (net_channel_GBps), on one NVLink
 * node (or NVLink domain) the one-node ring's (intra_ring_channels: the
 * cluster's `channels`, collsim's ring-model count, is not NCCL's here),
 * on one PCIe node the cluster's `channels`. */
static int nchannels_raw(const cs_topology *t)
{
    int c = t->cluster.coll.channels;
    if (t->nodes > 1) net_channel_GBps(t, &c);
    else if (t->cluster.intra.kind != CS_FABRIC_PCIE) c = intra_ring_channels(t);
    return c < P2P_MAX_CHANNELS ? c : P2P_MAX_CHANNELS;
}
int cs_p2pchan_count(const cs_topology *t) { return pow2_up(nchannels_raw(t)); }

/* comm->p2pnChannelsPerPeer (paths.cc ncclTopoGetNchannels, the least over
 * the peers, then ncclTopoComputeP2pChannels). */
int cs_p2pchan_per_peer(const cs_topology *t)
{
    const cs_cluster *c = &t->cluster;
    int raw = nchannels_raw(t), least = raw;
    if (t->ppn_max > 1) {
        int links = (int)fmin(c->intra.bw_Bps / 1e9 / nvlink_link_GBps(c->gpu.compute_capability),
                              P2P_MAX_CHANNELS); /* capped before the cast */
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
    int pp = pow2_up(least), nch = cs_p2pchan_count(t);
    if (t->nodes == 1) return pp < nch ? pp : nch;
    /* ncclTopoComputeP2pChannels (2.29) across nodes: halved while
     * perPeer x divUp(nRanks, 8) > p2pnChannels, so every peer fits in one
     * round (2.28 and earlier: 2 channels halved while 2 x nRanks >
     * 4 x p2pnChannels, at least the local NICs) */
    long long rounds = ((long long)t->ranks + CS_P2P_PER_BATCH - 1) / CS_P2P_PER_BATCH;
    while ((long long)pp * rounds > nch && pp > 1) pp /= 2; /* 2^30 ranks */
    return pp;
}

/* nChannels of one peer's op of `b` bytes (enqueue.cc addP2pToPlan, with
 * scheduleP2pTasksToPlan's nChannelsMin and nChannelsMax). */
int cs_p2pchan_op(const cs_topology *t, double b)
{
    int most = cs_p2pchan_per_peer(t), least = most;
    while ((long long)least * t->ranks > cs_p2pchan_count(t) && least > 1) least /= 2;
    if (!(b > 0)) return 1;
    double step = cs_p2pchan_chunk_bytes(t);
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
double cs_p2pchan_net_cap_Bps(const cs_topology *t, double m)
{
    int n;
    double ch_Bps = net_channel_GBps(t, &n) * 1e9;
    return cs_p2pchan_op(t, m) * ch_Bps;
}

/* One intra-node peer's rate cap (Simple, NVLink) when `rounds` rounds of
 * the rank (itself included) run at once. A channel's part of an op is
 * copied by that channel's thread block (one CTA of NCCL_MAX_NTHREADS,
 * enqueue.cc scheduleP2pTasksToPlan) with SM stores into the peer's FIFO
 * (P2P write: p2p.cc p2pGetInfo reads only on Ampere NVLink), and the ops
 * batched on one channel split its warps evenly (device/sendrecv.h
 * RunWorkBatch: nWarpPerWork = nWarps / nWorks). A peer's op is split
 * over nChannels (cs_p2pchan_op), each part on its own channel while
 * rounds x nChannels <= p2pnChannels (ncclP2pChannelBaseForRound spreads
 * the rounds), else p2pnChannels / rounds channels' worth. What one CTA
 * moves is not in NCCL's source; collsim takes one NVLink at NCCL's rate
 * (ncclTopoNVLinkBw, the unit NCCL's topology counts NVLink paths in) per
 * channel, an assumption: nccl-tests issue 268 (two H100, sendrecv ~80
 * GB/s at default sizes, i.e. 4 channels) is consistent with it. On one
 * DGX H100 a send_recv of <= 64 MiB runs on 4 channels: 82 GB/s, not the
 * port's 371. PCIe peers are not capped (their path is slower). */
double cs_p2pchan_nvl_cap_Bps(const cs_topology *t, double m, long rounds)
{
    if (t->cluster.intra.kind == CS_FABRIC_PCIE) return INFINITY;
    double nch = cs_p2pchan_op(t, m), fit = (double)cs_p2pchan_count(t) / (double)rounds;
    return nvlink_link_GBps(t->cluster.gpu.compute_capability) * 1e9 * fmin(nch, fit);
}

/* The pipeline's fill of an intra-node peer (Simple, NVLink): Simple moves
 * a part in steps of p2pChunkSize through the connection's FIFO (P2P
 * write into the receiver's buffer; device/sendrecv.h runSend / runRecv,
 * ProtoSimple<1, 1>: one slice per chunk), and the receiver copies a step
 * out only once the sender has posted all of it (prims.h waitPeer on the
 * step's tail). So a part's last step is copied after the send ends: one
 * step (the part, if smaller) at a channel's rate more than the send
 * (cs_p2pchan_nvl_cap_Bps's rate). Without user-buffer registration (nccl-tests'
 * default) nothing is written in place. PCIe peers: none counted. */
double cs_p2pchan_nvl_fill_s(const cs_topology *t, double m)
{
    if (t->cluster.intra.kind == CS_FABRIC_PCIE || !(m > 0)) return 0;
    double part = m / cs_p2pchan_op(t, m);
    double ch_Bps = nvlink_link_GBps(t->cluster.gpu.compute_capability) * 1e9;
    return fmin(part, cs_p2pchan_chunk_bytes(t)) / ch_Bps;
}
