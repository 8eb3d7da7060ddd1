/* SPDX-License-Identifier: MIT */
/*
 * algo_ring.c - the ring algorithm: closed form and discrete-event schedule.
 *
 * all_reduce / all_gather / reduce_scatter: the bandwidth-optimal ring of
 * Patarasuk & Yuan (2009, JPDC 69(2)): 2(n-1) steps for all_reduce
 * (reduce-scatter then all-gather), n-1 for the others; each step every rank
 * sends bytes/n (nccl-tests size) to its ring successor, split over the
 * channels. A rank sends step s as soon as step s-1 from its predecessor
 * has arrived, so the time is the longest chain of (hop latency + step
 * transfer) through the ring:
 *     T = base + sum of hop latencies over the nsteps hops on the critical
 *         path + nsteps x step_bytes / per-channel rate
 * where the critical path crosses ceil(nsteps / ppn) node boundaries when
 * every node holds ppn ranks (NCCL's model charges 2 x nodes for
 * all_reduce; equal when ppn > 2). The rate is the slower of the GPU-port
 * and node-network shares (the inter-node term bottlenecks multi-node
 * rings), times NCCL's protocol factor, capped per channel.
 * broadcast / reduce: a pipelined chain along the ring from rank 0; chunks
 * of `chunk` bytes flow hop by hop (store and forward per chunk), which is
 * a deterministic tandem queue: T = base + sum of latencies +
 * sum of per-hop chunk times + (chunks - 1) x slowest chunk time.
 *
 * The DES runs the same schedule on the flow model's links (per-link
 * overrides, stragglers); as no ring or chain link is ever shared it is the
 * max-plus recurrence of coll/maxplus.h, equal to the event engine's run
 * bit for bit in O(ranks x steps) without a queue. When every node holds
 * the same ranks and nothing is overridden, nodes are symmetric and only
 * one node's ranks are simulated (its successor's ranks are itself,
 * shifted); channels are symmetric too, so one channel is simulated over
 * links holding 1/channels of each physical link.
 */
#include <math.h>
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/deslinks.h"
#include "coll/maxplus.h"
#include "coll/network.h"

static int is_chain(cs_op op) { return op == CS_OP_BROADCAST || op == CS_OP_REDUCE; }

static int ring_nsteps(cs_op op, int n) { return op == CS_OP_ALL_REDUCE ? 2 * (n - 1) : n - 1; }

static int crosses(const cs_topology *t, int r)
{
    int next = (r + 1) % t->ranks;
    return cs_topology_node_of(t, r) != cs_topology_node_of(t, next);
}

/* Most node boundaries among `w` consecutive ring hops. */
static long max_crossings(const cs_topology *t, long w)
{
    int n = t->ranks;
    if (t->nodes == 1 || w <= 0) return 0;
    if (t->uniform) {
        long ppn = n / t->nodes;
        long c = (w + ppn - 1) / ppn;
        return c < w ? c : w;
    }
    long full = w / n, rem = w % n, best = 0, cur = 0;
    char *x = malloc((size_t)n);
    if (!x) abort();
    for (int r = 0; r < n; r++) x[r] = (char)crosses(t, r);
    for (long i = 0; i < rem; i++) cur += x[i];
    best = cur;
    for (int s = 1; s < n; s++) {
        cur += x[(s + rem - 1) % n] - x[s - 1];
        if (cur > best) best = cur;
    }
    free(x);
    return full * t->nodes + best;
}

static double ring_rate(const cs_topology *t, const cs_coll_params *p)
{
    double r_port = cs__hop_rate(p, p->port_ch_Bps);
    if (t->nodes == 1) return r_port;
    double r_net = cs__hop_rate(p, p->net_ch_Bps);
    if (t->ppn_max == 1) return r_net;
    return fmin(r_port, r_net);
}

static double chain_closed_form(const cs_topology *t, const cs_coll_params *p)
{
    int n = t->ranks;
    long hops = n - 1, xhops = t->nodes - 1;
    double per_ch = p->bytes / p->channels;
    double s = fmax(1.0, ceil(per_ch / p->chunk_bytes));
    double c = per_ch / s;
    double t_port = c / cs__hop_rate(p, p->port_ch_Bps);
    double total = p->base_lat_s + (hops - xhops) * (p->intra_lat_s + t_port);
    double slowest = hops > xhops ? t_port : 0;
    if (xhops > 0) { /* no network term at all on a single node */
        double t_net = c / cs__hop_rate(p, p->net_ch_Bps);
        total += xhops * (p->inter_lat_s + t_net);
        slowest = fmax(slowest, t_net);
    }
    return total + (s - 1) * slowest;
}

static double ring_closed_form(const cs_topology *t, const cs_coll_params *p)
{
    int n = t->ranks;
    if (n == 1) return p->base_lat_s;
    if (is_chain(p->op)) return chain_closed_form(t, p);
    long steps = ring_nsteps(p->op, n);
    long x = max_crossings(t, steps);
    double step_bytes = p->bytes / n / p->channels;
    return p->base_lat_s + (steps - x) * p->intra_lat_s + x * p->inter_lat_s +
           steps * step_bytes / ring_rate(t, p);
}

/* ---- discrete-event schedule ------------------------------------------ */

/* Ranks are placed in node order, so the ring enters and leaves every node
 * once and the chain too: each port is one rank's, each node network one
 * rank's way out and one rank's way in, and a rank sends one message at a
 * time. No link is ever shared, the flow model gives every transfer its
 * solo rate, and the event schedule is the max-plus recurrence
 * (coll/maxplus.h: equal to the event engine's times bit for bit). */

/* Rank `rank`'s hop: sender at (node, local), receiver at (node_to,
 * local_to), over the node networks if `inter` else the GPU ports, on
 * links of the flow model's capacities (coll/deslinks.h). */
static cs_maxplus_hop ring_hop(const cs_topology *t, const cs_coll_params *p, double msg_bytes,
                               int rank, int inter, int node, int local, int node_to, int local_to)
{
    /* a link holds 1/p->channels of the physical one: the channels the
     * size runs on share it (cs_deslinks gives 1/channels of the
     * cluster's count) */
    double ch_scale = (double)t->cluster.coll.channels / p->channels, caps[2];
    if (inter) {
        caps[0] = cs_deslinks_net_ch_Bps(t, node) * ch_scale;
        caps[1] = cs_deslinks_net_ch_Bps(t, node_to) * ch_scale;
    } else {
        caps[0] = cs_deslinks_port_ch_Bps(t, node, local) * ch_scale;
        caps[1] = cs_deslinks_port_ch_Bps(t, node_to, local_to) * ch_scale;
    }
    double slow = cs_deslinks_slowdown(t, rank);
    double rate = cs_network_solo_rate(caps, 2, p->factor / slow, p->cap_Bps / slow);
    return (cs_maxplus_hop){.start_s = cs_deslinks_delay_s(t, rank), .send_s = msg_bytes / rate,
                            .lat_s = inter ? p->inter_lat_s : p->intra_lat_s};
}

/* The hops of ranks [0, n) to their successors (r + 1) mod n. With
 * `symmetric` (every node alike, nothing overridden) n is one node's ranks
 * and the last one's successor is the next node's first, whose ports and
 * network are node 0's: node k + 1 is node k shifted, so one node stands
 * for all. Caller frees. */
static cs_maxplus_hop *ring_hops(const cs_topology *t, const cs_coll_params *p, double msg_bytes,
                                 int n, int symmetric)
{
    cs_maxplus_hop *h = cs_xmalloc((size_t)n * sizeof *h);
    int crossings = 0;
    for (int r = 0; r < n; r++) {
        int to = (r + 1) % n, inter;
        if (symmetric) {
            inter = t->nodes > 1 && to == 0;
            h[r] = ring_hop(t, p, msg_bytes, r, inter, 0, r, 0, to);
        } else {
            int node = cs_topology_node_of(t, r), node_to = cs_topology_node_of(t, to);
            inter = node != node_to;
            h[r] = ring_hop(t, p, msg_bytes, r, inter, node, cs_topology_local_of(t, r), node_to,
                            cs_topology_local_of(t, to));
        }
        crossings += inter;
    }
    /* every node left once: no network link carries two ranks' messages */
    CS_ASSERT(crossings == (t->nodes == 1 ? 0 : symmetric ? 1 : t->nodes));
    return h;
}

static int ring_simulate(const cs_topology *t, const cs_coll_params *p, double *time_s,
                         unsigned long long *events)
{
    int n = t->ranks;
    if (n == 1) {
        *time_s = p->base_lat_s;
        *events = 0;
        return 0;
    }
    double done;
    if (is_chain(p->op)) {
        /* the chain has an end, so it is never reduced by symmetry */
        double per_ch = p->bytes / p->channels;
        long chunks = (long)fmax(1.0, ceil(per_ch / p->chunk_bytes));
        cs_maxplus_hop *h = ring_hops(t, p, per_ch / chunks, n, 0);
        done = cs_maxplus_chain(h, n, chunks, events);
        free(h);
    } else {
        int symmetric = t->uniform && !t->heterogeneous;
        int sim_ranks = symmetric ? n / t->nodes : n;
        cs_maxplus_hop *h = ring_hops(t, p, p->bytes / n / p->channels, sim_ranks, symmetric);
        done = cs_maxplus_ring(h, sim_ranks, ring_nsteps(p->op, n), events);
        free(h);
    }
    *time_s = p->base_lat_s + done;
    return 0;
}

/* ---- NCCL's model: src/graph/tuning.cc ncclTopoTuneModel ------------- */

/* Ring's "model refinements": LL x 1/4 or 1/3 capped by llMaxBw (a total:
 * shared by the channels that run), LL128 x 0.92 (0.7 at one rank per
 * node) capped by perChMaxRingLL128Bw per channel, Simple at the link
 * rate. */
static void ring_bandwidth(const cs_topology *t, cs_op op, cs_proto p, int channels, double *factor,
                           double *cap)
{
    int scale = cs_ncclmodel_scale(t->nodes);
    double ppn = (double)t->ranks / t->nodes;
    switch (p) {
    case CS_PROTO_LL:
        *factor = (t->nodes > 1 || op == CS_OP_ALL_REDUCE || op == CS_OP_REDUCE)
                      ? CS_NCCL_RING_LL_FACTOR
                      : CS_NCCL_RING_LL_FACTOR_1NODE;
        *cap = cs_ncclmodel_ll_max_Bps(t->arch, scale) / channels;
        break;
    case CS_PROTO_LL128:
        *factor = ppn < 2 ? CS_NCCL_RING_LL128_FACTOR_1PPN : CS_NCCL_RING_LL128_FACTOR;
        *cap = cs_ncclmodel_ring_ll128_max_per_channel_Bps(t->arch, scale);
        break;
    case CS_PROTO_SIMPLE:
        *factor = 1.0;
        *cap = INFINITY;
        break;
    default: CS_PANIC("protocol %d", (int)p);
    }
}

/* enqueue.cc "Ring/Tree channel tuning": maxThreads (Simple: 256 when the
 * ring's intra bandwidth is at most PCI_BW) and threadThresholds (LL x
 * nRanks for rings). */
static int ring_channels(const cs_topology *t, cs_op op, cs_proto p, double bytes)
{
    (void)op;
    int nt = cs_ncclmodel_max_threads(p);
    if (p == CS_PROTO_SIMPLE && t->port_Bps <= CS_NCCL_PCI_BW_Bps) nt = CS_NCCL_SIMPLE_PCI_NTHREADS;
    double th = cs_ncclmodel_thread_threshold(p) * (p == CS_PROTO_LL ? t->ranks : 1);
    return cs_ncclmodel_channels(bytes, t->cluster.coll.channels, nt, th);
}

/* Across nodes: "Inter-node rings still have to launch nsteps * net
 * overhead" (all_reduce, all_gather, reduce_scatter; x3 for Simple), and
 * the "plateau effect of ring" for large Simple all_reduce
 * (ncclTopoGetAlgoTime). */
static void ring_latency_refine(const cs_topology *t, cs_coll_params *q)
{
    const cs_cluster *c = &t->cluster;
    if (t->nodes == 1) return;
    if (q->op == CS_OP_ALL_REDUCE || q->op == CS_OP_ALL_GATHER || q->op == CS_OP_REDUCE_SCATTER) {
        double ovh = c->coll.net_overhead_s *
                     (q->proto == CS_PROTO_SIMPLE ? CS_NCCL_NET_OVERHEAD_SIMPLE_MULT : 1.0);
        q->intra_lat_s = fmax(q->intra_lat_s, ovh);
    }
    if (q->proto == CS_PROTO_SIMPLE && q->op == CS_OP_ALL_REDUCE &&
        q->bytes / ((double)q->channels * t->ranks) >= CS_NCCL_PLATEAU_MIN_BYTES) {
        double plateau = c->gpu.compute_capability < CS_NCCL_PLATEAU_MIN_CC
                             ? CS_NCCL_PLATEAU_PRE_AMPERE
                             : CS_NCCL_PLATEAU;
        q->base_lat_s *= plateau;
        q->intra_lat_s *= plateau;
        q->inter_lat_s *= plateau;
    }
}

const cs_algo cs__algo_ring = {
    .ops = CS_OPS_ALL,
    .protos = CS_PROTOS_ALL,
    .hint = "", /* implements every op with every protocol */
    .latency = &cs_ncclmodel_ring_latency,
    .bandwidth = ring_bandwidth,
    .channels = ring_channels,
    .latency_refine = ring_latency_refine,
    .closed_form = ring_closed_form,
    .simulate = ring_simulate,
    .calib = {.param = "efficiency.ring", .yaml = "collectives.efficiency.ring", .priority = 1},
};
