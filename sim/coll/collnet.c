/* SPDX-License-Identifier: MIT */
/*
 * collnet.c - the pipeline NCCL's CollNet all_reduce algorithms share
 * (in-network reduction by the switches, NVIDIA SHARP): closed form and
 * discrete-event schedule, two or more nodes.
 *
 * Physical picture (NVIDIA/nccl v2.20.3-1 src/device/all_reduce.h,
 * RunWorkElement<..., NCCL_ALGO_COLLNET_DIRECT / _CHAIN>): inside a node
 * the GPUs reduce a chunk to the GPU that owns its NIC (Direct: each GPU
 * scatters to every head, one per NIC; Chain: up a chain through the
 * node's GPUs), that GPU sends it once to the switch, the switch reduces
 * the nodes' copies and sends the result back once, and the node spreads
 * it to its GPUs (Direct: the heads broadcast, every GPU gathers; Chain:
 * down the chain). Per node the network carries `bytes` out and `bytes`
 * in, whatever the node count: against a ring, whose nodes carry 2(n-1)/n
 * of it each way over n - 1 network steps and 2(N-1) latencies, that is
 * what makes SHARP win at scale.
 * Cost (NVIDIA/nccl src/graph/tuning.cc ncclTopoTuneModel, v2.19.3 to
 * v2.23.4, the same collnet rows): busBw = nChannels x bwIntra whatever
 * the node count (no bwInter term), times the row's refinement (Direct:
 * the GPU/NIC ratio and 0.85 from Hopper, algo_collnet_direct.c; Chain:
 * none), algbw = busBw x 0.5; the graph search caps bwIntra at twice
 * bwInter for collnet graphs (src/graph/search.cc ncclTopoCompute: "increase
 * bwIntra for trees (2 nodes or collnet)" while bwIntra < 2 bwInter), so
 *     algbw = channels x factor x min(port share / 2, network share),
 * port share = a GPU's port / channels, network share = the node's NICs /
 * channels (topology.h). Here that is a pipeline over two links per node:
 * the node's ports, which carry each chunk twice (reduce in, spread out:
 * NCCL's 0.5), and its network, once each way. Latency (same function):
 *     Direct  2 (min(1, ppn - 1) intraLat + (ppn - 1) x 0.4 us) + interLat,
 *     Chain   2 (ppn - 1) intraLat + interLat,
 * baseLat 0, hwLat[NVLINK|PCI] Direct 3.7 / Chain 2.8 us, hwLat[NET] 31 / 30
 * us, interLat = hwLat[NET] + 2 network latencies (Simple's flush);
 * Simple only. Chunks (src/enqueue.cc computeCollChunkInfo) and channels
 * (getChannnelThreadInfo) are the rows'.
 * Departure: the closed form prices the pipeline NCCL's fluid formula
 * stands for. With per-channel data in n steps of u bytes, port rate rp
 * and network rate rn per channel (NCCL's factor on each share), L NCCL's
 * latency and l one trip through the node, it is the largest of three
 * bounds, each a path the DES can take:
 *     the network: L + 2u/rn + (n - 1) u/rn + 2u/rp (the first step's round
 *         trip, the others behind it at the network's pace);
 *     the port:    base + 2n u/rp + l (its 2n stages back to back: the
 *         latency hides behind the reductions of later steps, which NCCL's
 *         NCCL_STEPS = 8 buffers per connection allow for a round trip);
 *     the last step: L + 2u/rn + (n + 1) u/rp (reduced at the earliest,
 *         then its round trip and spread);
 * with one GPU per node no port stages (T = L + (n + 1) u/rn). For large
 * messages that is NCCL's L + bytes / algbw, less L where the port binds.
 *
 * The DES runs that pipeline with nodes as its units (CollNet treats a
 * node's GPUs alike, as algo_nvlstree.c): per node a port link (capacity
 * the slowest GPU's per-channel port share, overrides applied) and a
 * network link out and in (its NICs' share, cs_deslinks_net_ch_Bps). Step
 * k of a node is reduced over the port (local latency), sent to the switch
 * (half the network latency), and once step k of every node has arrived
 * the switch returns the reduced step to every node (the other half) and
 * it is spread over the port; the reduction of later steps shares the
 * port with it. A node's slowest GPU (straggler slowdown, latest start)
 * stands for the node; a slow NIC slows its node and, through the switch,
 * every node. O(nodes) state plus one counter per step.
 */
#include "coll/collnet.h"

#include <math.h>
#include <stdlib.h>

#include "coll/deslinks.h"
#include "coll/network.h"

int cs__collnet_ppn(const cs_topology *t) { return t->ranks / t->nodes; }

int cs__collnet_heads(const cs_topology *t)
{
    int h = t->cluster.inter.nics_per_node;
    if (h > t->ppn_max) h = t->ppn_max;
    return h < 1 ? 1 : h;
}

int cs__collnet_fits(const cs_topology *t) { return t->ppn_max <= CS_NCCL_COLLNET_MAX_LOCAL; }

double cs__collnet_chunk(double bytes, double per, double c, const double deep[3])
{
    static const double floor_bytes[3] = {131072, 65536, 32768};
    for (int i = 0; i < 3; i++)
        while (floor(bytes / (per * c)) < deep[i] && c > floor_bytes[i]) c /= 2;
    return c;
}

/* Steps per channel and the bytes of each. */
static void collnet_steps(const cs_coll_params *p, const cs__collnet_shape *s, double *steps,
                          double *unit)
{
    double per_ch = p->bytes / p->channels;
    *steps = fmax(1.0, ceil(per_ch / s->unit_bytes));
    *unit = per_ch / *steps;
}

static double collnet_latency(const cs_coll_params *p, const cs__collnet_shape *s)
{
    return p->base_lat_s + 2 * s->local_lat_s + p->inter_lat_s;
}

double cs__collnet_closed_form(const cs_topology *t, const cs_coll_params *p,
                               const cs__collnet_shape *s)
{
    double n, u;
    collnet_steps(p, s, &n, &u);
    double rn = cs__hop_rate(p, p->net_ch_Bps);
    /* the first step's round trip, the others behind it at the network's
     * pace */
    double trip = collnet_latency(p, s) + 2 * u / rn, net = trip + (n - 1) * u / rn;
    if (t->ppn_max == 1) return net;
    double rp = cs__hop_rate(p, p->port_ch_Bps);
    /* the port's 2n stages back to back, then the last arrives; the last
     * step reduced at the earliest, then its round trip and spread */
    double port = p->base_lat_s + 2 * n * u / rp + s->local_lat_s;
    double last = trip + (n + 1) * u / rp;
    return fmax(fmax(net + 2 * u / rp, port), last);
}

/* ---- discrete-event schedule ------------------------------------------ */

enum { K_REDUCE, K_UP, K_DOWN, K_SPREAD, K_KINDS };

typedef struct cn_node {
    int port, net_out, net_in; /* link ids */
    int local;                 /* more than one GPU: the port stages run */
    double slow, delay_s;      /* its slowest GPU */
    char started;
    char busy[K_KINDS];
    long sent[K_KINDS], done[K_KINDS];
} cn_node;

typedef struct cn_sim {
    const cs_coll_params *p;
    const cs__collnet_shape *shape;
    cs_engine *eng;
    cs_network *net;
    int nodes;
    cn_node *v;
    int *got;      /* per step: nodes whose copy reached the switch */
    long reduced;  /* steps 0..reduced-1 are reduced in the switch */
    long steps;
    double unit_bytes;
    double done_s;
} cn_sim;

static void cn_pump(cn_sim *s, int k);

static void cn_sent(cs_engine *e, void *ctx, int64_t k, int64_t kind)
{
    (void)e;
    cn_sim *s = ctx;
    s->v[k].busy[kind] = 0;
    cn_pump(s, (int)k);
}

/* Step `done` of stage `kind` reached its end; without port stages a
 * node's reduce and spread complete at once. */
static void cn_finish(cn_sim *s, int k, int kind, double now)
{
    cn_node *x = &s->v[k];
    x->done[kind]++;
    if (kind == K_UP) {
        s->got[x->done[K_UP] - 1]++;
        long before = s->reduced;
        /* every node sends its steps in order, so steps complete in order */
        while (s->reduced < s->steps && s->got[s->reduced] == s->nodes) s->reduced++;
        if (s->reduced != before)
            for (int j = 0; j < s->nodes; j++) cn_pump(s, j);
    }
    if (kind == K_SPREAD && x->done[K_SPREAD] == s->steps && now > s->done_s) s->done_s = now;
}

static void cn_arrive(cs_engine *e, void *ctx, int64_t k, int64_t kind)
{
    cn_sim *s = ctx;
    cn_finish(s, (int)k, (int)kind, cs_engine_now(e));
    cn_pump(s, (int)k);
}

static void cn_send(cn_sim *s, int k, int kind)
{
    cn_node *x = &s->v[k];
    x->sent[kind]++;
    int port = kind == K_REDUCE || kind == K_SPREAD;
    if (port && !x->local) { /* one GPU: nothing crosses the node */
        cn_finish(s, k, kind, cs_engine_now(s->eng));
        return;
    }
    x->busy[kind] = 1;
    int link = port ? x->port : kind == K_UP ? x->net_out : x->net_in;
    cs_flow_spec f = {.links = &link, .nlinks = 1, .bytes = s->unit_bytes,
                      .factor = s->p->factor / x->slow, .cap_Bps = s->p->cap_Bps / x->slow,
                      .latency_s = port ? s->shape->local_lat_s : s->p->inter_lat_s / 2,
                      .on_sent = cn_sent, .on_arrive = cn_arrive, .ctx = s, .a = k, .b = kind};
    cs_network_start_flow(s->net, &f);
}

/* What stage `kind` of node k may have started: its own steps (reduce),
 * those reduced in the node (up), in the switch (down), back home (spread). */
static long cn_ready(const cn_sim *s, const cn_node *x, int kind)
{
    switch (kind) {
    case K_REDUCE: return s->steps;
    case K_UP: return x->done[K_REDUCE];
    case K_DOWN: return s->reduced;
    default: return x->done[K_DOWN];
    }
}

static void cn_pump(cn_sim *s, int k)
{
    cn_node *x = &s->v[k];
    if (!x->started) return;
    for (int kind = 0; kind < K_KINDS; kind++)
        while (!x->busy[kind] && x->sent[kind] < cn_ready(s, x, kind)) cn_send(s, k, kind);
}

static void cn_start(cs_engine *e, void *ctx, int64_t k, int64_t unused)
{
    (void)e;
    (void)unused;
    cn_sim *s = ctx;
    s->v[k].started = 1;
    cn_pump(s, (int)k);
}

/* Node k's links and its slowest GPU. A link holds 1/channels of the
 * physical one for the channels this size runs on (cs_deslinks gives
 * 1/channels of the cluster's). */
static void cn_node_init(cn_sim *s, const cs_topology *t, int k, int first_rank)
{
    double scale = (double)t->cluster.coll.channels / s->p->channels;
    cn_node *x = &s->v[k];
    double port = INFINITY;
    x->slow = 1.0;
    for (int i = 0; i < cs_topology_ranks_on(t, k); i++) {
        port = fmin(port, cs_deslinks_port_ch_Bps(t, k, i));
        x->slow = fmax(x->slow, cs_deslinks_slowdown(t, first_rank + i));
        x->delay_s = fmax(x->delay_s, cs_deslinks_delay_s(t, first_rank + i));
    }
    x->local = cs_topology_ranks_on(t, k) > 1;
    x->port = cs_network_add_link(s->net, scale * port);
    x->net_out = cs_network_add_link(s->net, scale * cs_deslinks_net_ch_Bps(t, k));
    x->net_in = cs_network_add_link(s->net, scale * cs_deslinks_net_ch_Bps(t, k));
}

int cs__collnet_simulate(const cs_topology *t, const cs_coll_params *p, const cs__collnet_shape *sh,
                         double *time_s, unsigned long long *events)
{
    CS_ASSERT(t->nodes > 1);
    cn_sim s = {.p = p, .shape = sh, .nodes = t->nodes};
    double steps;
    collnet_steps(p, sh, &steps, &s.unit_bytes);
    s.steps = (long)steps;
    s.eng = cs_engine_new();
    s.net = cs_network_new(s.eng);
    s.v = cs_xcalloc((size_t)s.nodes, sizeof(cn_node));
    s.got = cs_xcalloc((size_t)s.steps, sizeof(int));
    for (int k = 0, r = 0; k < s.nodes; r += cs_topology_ranks_on(t, k), k++) cn_node_init(&s, t, k, r);
    for (int k = 0; k < s.nodes; k++) cs_engine_schedule(s.eng, s.v[k].delay_s, cn_start, &s, k, 0);
    cs_engine_run(s.eng);
    for (int k = 0; k < s.nodes; k++)
        if (s.v[k].done[K_SPREAD] != s.steps)
            CS_PANIC("collnet schedule stalled: node %d spread %ld of %ld steps", k,
                     s.v[k].done[K_SPREAD], s.steps);
    *time_s = p->base_lat_s + s.done_s;
    *events = cs_engine_events_run(s.eng);
    free(s.v);
    free(s.got);
    cs_network_free(s.net);
    cs_engine_free(s.eng);
    return 0;
}
