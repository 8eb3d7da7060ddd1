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
 * rate (cs_p2pchan_net_cap_Bps): one rank per node gets 2 of 4 channels of a
 * 48 GB/s NIC, 24 GB/s. The protocol is LL when a peer's
 * bytes <= nChannelsMax x NCCL_P2P_LL_THRESHOLD (16 KiB) and the
 * connection has LL buffers, else Simple; network connections have none
 * (src/transport/net.cc: only with NCCL_ALLOC_P2P_NET_LL_BUFFERS), so
 * across nodes p2p is Simple. A channel runs up to
 * NCCL_MAX_DEV_WORK_CS_P2P_PER_BATCH = 8 ops of a batch at once (device.h);
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
 * min(share x factor, cap / flows of its rank), across nodes at most its
 * peer's network channels' rate (cs_p2pchan_net_cap_Bps), and over NVLink
 * (Simple) at most its channels' rate, one NVLink's (ncclTopoNVLinkBw) per
 * channel, an assumption the source does not settle (cs_p2pchan_nvl_cap_Bps);
 * one node's p2pnChannels comes from NCCL's one-node ring search
 * (intra_ring_channels: 32 on DGX H100, so a peer of <= 64 MiB runs on 4
 * channels). An NVLink flow's latency adds the copy of its last FIFO step
 * (cs_p2pchan_nvl_fill_s). Time:
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
 * Departures: the self copy (round 0) is free (its warps still share the
 * channels: cs_p2pchan_nvl_cap_Bps counts its round); the chunked staging
 * through a network connection's buffers (the GPU's copy in and out of
 * each chunk, the proxy's steps) is not simulated; what many NVLink peers
 * at once lose at the switch is not either (one node's all_to_all runs
 * at 84-94% of NCCL's NVLink rate on H100, 71-87% on GB300, where one
 * peer's send_recv reaches 99%); a wave ends on every channel at once
 * (NCCL's channels progress independently); the quadratic order of node
 * deltas is replaced by 1, 2, ... (on uniform nodes the loads are the
 * same); intra-node
 * peers of a multi-node all_to_all use Simple too (NCCL may use LL there).
 * The channel rules and the per-peer rate caps are p2pchan.c's.
 * The DES uses one node's senders when nodes are uniform and nothing is
 * overridden (the others are that node shifted; receive-side links then
 * carry the same loads as send-side ones and are left out).
 */
#include <math.h>
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/deslinks.h"
#include "coll/network.h"
#include "coll/p2pchan.h"

#define P2P_LL_THRESHOLD_BYTES 16384.0 /* enqueue.cc NCCL_P2P_LL_THRESHOLD */

/* ---- the row's p2p schedule ---------------------------------------------- */

static int is_p2p(cs_op op) { return (CS_OPS_P2P & CS_OP_BIT(op)) != 0; }

/* Bytes one rank sends to one peer. */
static double peer_bytes(const cs_topology *t, cs_op op, double bytes)
{
    return op == CS_OP_ALL_TO_ALL ? bytes / t->ranks : bytes;
}

/* Rounds in flight at once: p2pnChannels / nChannels x 8 (maxConcurrent). */
static long p2p_per_wave(const cs_topology *t, const cs_coll_params *q)
{
    int nch = q->channels < cs_p2pchan_count(t) ? q->channels : cs_p2pchan_count(t);
    return (long)(cs_p2pchan_count(t) / nch) * CS_P2P_PER_BATCH;
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
        double cap_x = t->nodes > 1 ? fmin(cap, cs_p2pchan_net_cap_Bps(t, m)) : cap;
        int simple = q->proto == CS_PROTO_SIMPLE;
        double cap_i = simple ? fmin(cap, cs_p2pchan_nvl_cap_Bps(t, m, 1)) : cap;
        double lat_i = q->intra_lat_s + (simple ? cs_p2pchan_nvl_fill_s(t, m) : 0);
        return q->base_lat_s + fmax(class_time(q, m, k_in, port, cap_i, lat_i),
                                    class_time(q, m, k_out, fmin(gnet, net), cap_x, q->inter_lat_s));
    }
    long rounds = p2p_rounds(t, q->op), per = p2p_per_wave(t, q);
    double total = q->base_lat_s;
    double peer_x = t->nodes > 1 ? cs_p2pchan_net_cap_Bps(t, m) : INFINITY;
    int simple = q->proto == CS_PROTO_SIMPLE;
    double lat_i = q->intra_lat_s + (simple ? cs_p2pchan_nvl_fill_s(t, m) : 0);
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
        double each_i = simple ? fmin(each, cs_p2pchan_nvl_cap_Bps(t, m, hi - lo)) : each;
        total += fmax(class_time(q, m, ki, ki ? port / ki : 0, each_i, lat_i),
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
    double slow = cs_deslinks_slowdown(t, r);
    double peer_x = t->nodes > 1 ? cs_p2pchan_net_cap_Bps(t, s->m) : INFINITY;
    int simple = s->q->proto == CS_PROTO_SIMPLE;
    double peer_i = simple ? cs_p2pchan_nvl_cap_Bps(t, s->m, hi - lo) : INFINITY;
    double lat_i = s->q->intra_lat_s + (simple ? cs_p2pchan_nvl_fill_s(t, s->m) : 0);
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
                                          inter ? peer_x : peer_i) / slow,
                          .latency_s = inter ? s->q->inter_lat_s : lat_i,
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
    return cs_p2pchan_op(t, peer_bytes(t, op, bytes));
}

/* addP2pToPlan: LL when a peer's bytes <= the op's nChannels x 16 KiB
 * (protoLL[dir] &= bytes[dir] <= nChannels[dir] * P2pLLThreshold, after
 * nChannels is chosen; and the connection has LL buffers: not across
 * nodes), else Simple. */
static int p2p_picks(const cs_topology *t, cs_op op, cs_proto p, double bytes)
{
    if (!is_p2p(op)) return 1;
    double m = peer_bytes(t, op, bytes);
    int ll = t->nodes == 1 && m <= cs_p2pchan_op(t, m) * P2P_LL_THRESHOLD_BYTES;
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
