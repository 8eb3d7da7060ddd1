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
 * The DES runs the same schedule over cs_network links. When every node
 * holds the same ranks and nothing is overridden, nodes are symmetric and
 * only one node's ranks are simulated (its successor's ranks are itself,
 * shifted); channels are symmetric too, so one channel is simulated over
 * links holding 1/channels of each physical link. Per-rank state is O(1).
 */
#include <math.h>
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/deslinks.h"
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

typedef struct ring_sim {
    const cs_topology *t;
    const cs_coll_params *p;
    cs_engine *eng;
    cs_network *net;
    int sim_ranks;      /* ranks simulated: one node's worth when symmetric */
    int symmetric;
    int *port_out, *port_in; /* link ids per simulated rank */
    int *net_out, *net_in;   /* link ids per simulated node */
    double *slow;       /* straggler slowdown per simulated rank */
    long steps;         /* steps (ring) or chunks (chain) */
    double msg_bytes;
    double done_s;
    long *recvd;        /* steps (chunks) received per simulated rank */
    long *sent;         /* ring: steps sent; chain: chunks started */
    char *busy;         /* a transmission is in progress */
    char *started;      /* the rank's start delay has passed */
} ring_sim;

static int sim_node(const ring_sim *s, int r)
{
    return s->symmetric ? 0 : cs_topology_node_of(s->t, r);
}

static void ring_send(ring_sim *s, int r, long step, cs_event_fn on_sent, cs_event_fn on_arrive);

/* A rank sends step s+1 once step s has arrived from its predecessor and
 * its own step s has left (its link sends in order): recvd counts arrived
 * steps, sent counts steps whose last byte has left. */
static void ring_on_sent(cs_engine *e, void *ctx, int64_t to, int64_t step);
static void ring_on_arrive(cs_engine *e, void *ctx, int64_t to, int64_t step);

static void ring_advance(ring_sim *s, int r)
{
    long next = s->sent[r]; /* step k needs steps 0..k-1 received */
    if (s->started[r] && next < s->steps && next <= s->recvd[r] && !s->busy[r]) {
        s->busy[r] = 1;
        ring_send(s, r, next, ring_on_sent, ring_on_arrive);
    }
}

static void ring_on_sent(cs_engine *e, void *ctx, int64_t to, int64_t step)
{
    (void)e;
    ring_sim *s = ctx;
    int from = (int)((to - 1 + s->sim_ranks) % s->sim_ranks);
    s->sent[from] = step + 1;
    s->busy[from] = 0;
    ring_advance(s, from);
}

static void ring_on_arrive(cs_engine *e, void *ctx, int64_t to, int64_t step)
{
    ring_sim *s = ctx;
    s->recvd[to] = step + 1;
    if (step + 1 == s->steps) {
        double now = cs_engine_now(e);
        if (now > s->done_s) s->done_s = now;
        return;
    }
    ring_advance(s, (int)to);
}

/* Starts rank r's transfer of `step` to its successor. */
static void ring_send(ring_sim *s, int r, long step, cs_event_fn on_sent, cs_event_fn on_arrive)
{
    const cs_topology *t = s->t;
    int next_global = s->symmetric ? r + 1 : (r + 1) % t->ranks;
    int to = next_global % s->sim_ranks;
    int inter;
    if (s->symmetric)
        inter = t->nodes > 1 && next_global == s->sim_ranks; /* leaving the node */
    else
        inter = cs_topology_node_of(t, r) != cs_topology_node_of(t, to);
    int links[2];
    if (inter) {
        links[0] = s->net_out[sim_node(s, r)];
        links[1] = s->net_in[sim_node(s, to)];
    } else {
        links[0] = s->port_out[r];
        links[1] = s->port_in[to];
    }
    cs_flow_spec f = {.links = links, .nlinks = 2, .bytes = s->msg_bytes,
                      .factor = s->p->factor / s->slow[r], .cap_Bps = s->p->cap_Bps / s->slow[r],
                      .latency_s = inter ? s->p->inter_lat_s : s->p->intra_lat_s,
                      .on_sent = on_sent, .on_arrive = on_arrive, .ctx = s, .a = to, .b = step};
    cs_network_start_flow(s->net, &f);
}

static void start_ring(cs_engine *e, void *ctx, int64_t r, int64_t unused)
{
    (void)e;
    (void)unused;
    ring_sim *s = ctx;
    s->started[r] = 1;
    ring_advance(s, (int)r);
}

/* chain: rank r forwards chunk k once received; one transmission at a time */
static void chain_pump(ring_sim *s, int r);

static void chain_on_sent(cs_engine *e, void *ctx, int64_t to, int64_t chunk)
{
    (void)e;
    (void)chunk;
    ring_sim *s = ctx;
    int from = (int)((to - 1 + s->t->ranks) % s->t->ranks);
    s->busy[from] = 0;
    chain_pump(s, from);
}

static void chain_on_arrive(cs_engine *e, void *ctx, int64_t to, int64_t chunk)
{
    ring_sim *s = ctx;
    (void)chunk;
    s->recvd[to]++;
    if (to == s->t->ranks - 1) {
        double now = cs_engine_now(e);
        if (now > s->done_s) s->done_s = now;
        return;
    }
    chain_pump(s, (int)to);
}

static void chain_pump(ring_sim *s, int r)
{
    if (!s->started[r] || s->busy[r] || s->sent[r] >= s->recvd[r]) return;
    s->busy[r] = 1;
    ring_send(s, r, s->sent[r]++, chain_on_sent, chain_on_arrive);
}

static void start_chain(cs_engine *e, void *ctx, int64_t r, int64_t unused)
{
    (void)e;
    (void)unused;
    ring_sim *s = ctx;
    s->started[r] = 1;
    chain_pump(s, (int)r);
}

/* Builds the links of the simulated ranks; shared by ring and chain. A link
 * holds 1/p->channels of the physical one: the channels the size runs on
 * share it (cs_deslinks gives 1/channels of the cluster's count). */
static void ring_sim_init(ring_sim *s, const cs_topology *t, const cs_coll_params *p, int symmetric)
{
    double ch_scale = (double)t->cluster.coll.channels / p->channels;
    s->t = t;
    s->p = p;
    s->symmetric = symmetric;
    s->sim_ranks = symmetric ? t->ranks / t->nodes : t->ranks;
    s->eng = cs_engine_new();
    s->net = cs_network_new(s->eng);
    int n = s->sim_ranks, nn = symmetric ? 1 : t->nodes;
    s->port_out = cs_xmalloc((size_t)n * sizeof(int));
    s->port_in = cs_xmalloc((size_t)n * sizeof(int));
    s->slow = cs_xmalloc((size_t)n * sizeof(double));
    s->net_out = cs_xmalloc((size_t)nn * sizeof(int));
    s->net_in = cs_xmalloc((size_t)nn * sizeof(int));
    for (int r = 0; r < n; r++) {
        int node = symmetric ? 0 : cs_topology_node_of(t, r);
        int local = symmetric ? r : cs_topology_local_of(t, r);
        double cap = cs_deslinks_port_ch_Bps(t, node, local) * ch_scale;
        s->port_out[r] = cs_network_add_link(s->net, cap);
        s->port_in[r] = cs_network_add_link(s->net, cap);
        s->slow[r] = cs_deslinks_slowdown(t, r);
    }
    for (int k = 0; k < nn; k++) {
        double cap = t->nodes > 1 ? cs_deslinks_net_ch_Bps(t, k) * ch_scale : 1.0;
        s->net_out[k] = cs_network_add_link(s->net, cap);
        s->net_in[k] = cs_network_add_link(s->net, cap);
    }
}

static void ring_sim_free(ring_sim *s)
{
    free(s->port_out);
    free(s->port_in);
    free(s->net_out);
    free(s->net_in);
    free(s->slow);
    free(s->recvd);
    free(s->sent);
    free(s->busy);
    free(s->started);
    cs_network_free(s->net);
    cs_engine_free(s->eng);
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
    ring_sim s = {0};
    if (is_chain(p->op)) {
        /* the chain has an end, so it is never reduced by symmetry */
        ring_sim_init(&s, t, p, 0);
        double per_ch = p->bytes / p->channels;
        s.steps = (long)fmax(1.0, ceil(per_ch / p->chunk_bytes));
        s.msg_bytes = per_ch / s.steps;
        s.recvd = cs_xcalloc((size_t)n, sizeof(long));
        s.sent = cs_xcalloc((size_t)n, sizeof(long));
        s.busy = cs_xcalloc((size_t)n, 1);
        s.started = cs_xcalloc((size_t)n, 1);
        s.recvd[0] = s.steps; /* the root holds every chunk */
        for (int r = 0; r < n; r++)
            cs_engine_schedule(s.eng, cs_deslinks_delay_s(t, r), start_chain, &s, r, 0);
    } else {
        int symmetric = t->uniform && !t->heterogeneous;
        ring_sim_init(&s, t, p, symmetric);
        s.steps = ring_nsteps(p->op, n);
        s.msg_bytes = p->bytes / n / p->channels;
        s.recvd = cs_xcalloc((size_t)s.sim_ranks, sizeof(long));
        s.sent = cs_xcalloc((size_t)s.sim_ranks, sizeof(long));
        s.busy = cs_xcalloc((size_t)s.sim_ranks, 1);
        s.started = cs_xcalloc((size_t)s.sim_ranks, 1);
        for (int r = 0; r < s.sim_ranks; r++)
            cs_engine_schedule(s.eng, cs_deslinks_delay_s(t, r), start_ring, &s, r, 0);
    }
    cs_engine_run(s.eng);
    /* every rank must have received everything: a stall is a bug */
    for (int r = is_chain(p->op) ? n - 1 : 0; r < (is_chain(p->op) ? n : s.sim_ranks); r++)
        if (s.recvd[r] != s.steps)
            CS_PANIC("ring schedule stalled: rank %d received %ld of %ld", r, s.recvd[r], s.steps);
    *time_s = p->base_lat_s + s.done_s;
    *events = cs_engine_events_run(s.eng);
    ring_sim_free(&s);
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
