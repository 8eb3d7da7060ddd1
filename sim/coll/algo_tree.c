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
 * channels; links carry 2/channels of each physical lane.
 */
#include <math.h>
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/deslinks.h"
#include "coll/network.h"

#define MAX_CHILD 3

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

typedef struct tnode {
    int parent;
    int child[MAX_CHILD];
    int nchild;
    long up_recv[MAX_CHILD];
    long up_sent;
    char up_busy;
    long down_recv;
    long down_sent[MAX_CHILD];
    char down_busy[MAX_CHILD];
    char started; /* the rank's start delay has passed */
} tnode;

typedef struct tree_sim {
    const cs_topology *t;
    const cs_coll_params *p;
    cs_engine *eng;
    cs_network *net;
    tnode *nodes[2];   /* per tree, per rank */
    int *lane;         /* link ids: [rank][4] ports then [node][4] network */
    double *slow;
    double fill;       /* fill_scale: flows' rate over NCCL's */
    long chunks;
    double chunk_bytes;
    double done_s;
} tree_sim;

enum { UP_OUT, UP_IN, DN_OUT, DN_IN };

static int port_link(const tree_sim *s, int r, int which) { return s->lane[4 * r + which]; }

static int net_link(const tree_sim *s, int node, int which)
{
    return s->lane[4 * s->t->ranks + 4 * node + which];
}

static long ready_up(const tree_sim *s, const tnode *x)
{
    long m = s->chunks;
    for (int i = 0; i < x->nchild; i++)
        if (x->up_recv[i] < m) m = x->up_recv[i];
    return m;
}

static long ready_down(const tree_sim *s, const tnode *x)
{
    return x->parent < 0 ? ready_up(s, x) : x->down_recv;
}

static void tree_pump(tree_sim *s, int tree, int r);
static void tree_on_sent(cs_engine *e, void *ctx, int64_t a, int64_t b);
static void tree_on_arrive(cs_engine *e, void *ctx, int64_t a, int64_t b);

static void tree_send(tree_sim *s, int tree, int from, int to, int up, int slot)
{
    const cs_topology *t = s->t;
    int nf = cs_topology_node_of(t, from), nt = cs_topology_node_of(t, to);
    int inter = nf != nt;
    int links[2];
    if (inter) {
        links[0] = net_link(s, nf, up ? UP_OUT : DN_OUT);
        links[1] = net_link(s, nt, up ? UP_IN : DN_IN);
    } else {
        links[0] = port_link(s, from, up ? UP_OUT : DN_OUT);
        links[1] = port_link(s, to, up ? UP_IN : DN_IN);
    }
    /* payload: a = from << 32 | to; b = tree << 8 | up << 4 | child slot */
    int64_t a = ((int64_t)from << 32) | (uint32_t)to;
    int64_t b = ((int64_t)tree << 8) | ((int64_t)up << 4) | slot;
    cs_flow_spec f = {.links = links, .nlinks = 2, .bytes = s->chunk_bytes,
                      .factor = s->p->factor * s->fill / s->slow[from],
                      .cap_Bps = s->p->cap_Bps * CS_NCCL_TREE_RATIO * s->fill / s->slow[from],
                      .latency_s = inter ? s->p->inter_lat_s : s->p->intra_lat_s,
                      .on_sent = tree_on_sent, .on_arrive = tree_on_arrive,
                      .ctx = s, .a = a, .b = b};
    cs_network_start_flow(s->net, &f);
}

static void tree_on_sent(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    (void)e;
    tree_sim *s = ctx;
    int from = (int)(a >> 32), tree = (int)(b >> 8), up = (int)((b >> 4) & 1), slot = (int)(b & 15);
    tnode *x = &s->nodes[tree][from];
    if (up)
        x->up_busy = 0;
    else
        x->down_busy[slot] = 0;
    tree_pump(s, tree, from);
}

static void tree_on_arrive(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    tree_sim *s = ctx;
    int from = (int)(a >> 32), to = (int)(uint32_t)a;
    int tree = (int)(b >> 8), up = (int)((b >> 4) & 1);
    tnode *y = &s->nodes[tree][to];
    if (up) {
        for (int i = 0; i < y->nchild; i++)
            if (y->child[i] == from) y->up_recv[i]++;
    } else {
        y->down_recv++;
    }
    /* a rank is done when it holds every reduced chunk */
    if (ready_down(s, y) == s->chunks) {
        double now = cs_engine_now(e);
        if (now > s->done_s) s->done_s = now;
    }
    tree_pump(s, tree, to);
}

static void tree_pump(tree_sim *s, int tree, int r)
{
    tnode *x = &s->nodes[tree][r];
    if (!x->started) return;
    if (x->parent >= 0 && !x->up_busy && x->up_sent < ready_up(s, x)) {
        x->up_busy = 1;
        x->up_sent++;
        tree_send(s, tree, r, x->parent, 1, 0);
    }
    long rd = ready_down(s, x);
    for (int i = 0; i < x->nchild; i++) {
        if (!x->down_busy[i] && x->down_sent[i] < rd) {
            x->down_busy[i] = 1;
            x->down_sent[i]++;
            tree_send(s, tree, r, x->child[i], 0, i);
        }
    }
}

static void tree_start(cs_engine *e, void *ctx, int64_t r, int64_t unused)
{
    (void)e;
    (void)unused;
    tree_sim *s = ctx;
    for (int w = 0; w < 2; w++) {
        s->nodes[w][r].started = 1;
        tree_pump(s, w, (int)r);
    }
}

static int head_of(const cs_topology *t, int node)
{
    /* first rank of a node: ranks are placed in node order */
    int r = 0;
    for (int k = 0; k < node; k++) r += cs_topology_ranks_on(t, k);
    return r;
}

static void build_tree(tree_sim *s, int which, const int *heads)
{
    const cs_topology *t = s->t;
    tnode *v = s->nodes[which];
    for (int r = 0; r < t->ranks; r++) {
        tnode *x = &v[r];
        *x = (tnode){.parent = -1};
        int k = cs_topology_node_of(t, r), i = cs_topology_local_of(t, r);
        int on = cs_topology_ranks_on(t, k);
        if (i > 0) x->parent = r - 1;
        if (i + 1 < on) x->child[x->nchild++] = r + 1;
        if (i == 0) {
            int up, d0, d1;
            cs__algo_dtree(t->nodes, which, k, &up, &d0, &d1);
            if (up >= 0) x->parent = heads[up];
            if (d0 >= 0) x->child[x->nchild++] = heads[d0];
            if (d1 >= 0) x->child[x->nchild++] = heads[d1];
        }
    }
}

static int tree_simulate(const cs_topology *t, const cs_coll_params *p, double *time_s,
                         unsigned long long *events)
{
    int n = t->ranks, nn = t->nodes;
    if (n == 1) {
        *time_s = p->base_lat_s;
        *events = 0;
        return 0;
    }
    tree_sim s = {.t = t, .p = p};
    double chunks;
    tree_chunks(p, &chunks, &s.chunk_bytes);
    s.chunks = (long)chunks;
    s.fill = fill_scale(t, chunks);
    s.eng = cs_engine_new();
    s.net = cs_network_new(s.eng);
    s.lane = cs_xmalloc((size_t)4 * (n + nn) * sizeof(int));
    s.slow = cs_xmalloc((size_t)n * sizeof(double));
    /* each simulated tree stands for channels/2 real channels, each lane is
     * half a physical direction: lane capacity = phys / 2 / (channels / 2),
     * channels being those the size runs on (cs_deslinks divides by the
     * cluster's count) */
    double ch_scale = (double)t->cluster.coll.channels / p->channels;
    for (int r = 0; r < n; r++) {
        double cap = cs_deslinks_port_ch_Bps(t, cs_topology_node_of(t, r), cs_topology_local_of(t, r)) *
                     ch_scale;
        for (int l = 0; l < 4; l++) s.lane[4 * r + l] = cs_network_add_link(s.net, cap);
        s.slow[r] = cs_deslinks_slowdown(t, r);
    }
    for (int k = 0; k < nn; k++) {
        double cap = nn > 1 ? cs_deslinks_net_ch_Bps(t, k) * ch_scale : 1.0;
        for (int l = 0; l < 4; l++) s.lane[4 * n + 4 * k + l] = cs_network_add_link(s.net, cap);
    }
    int *heads = cs_xmalloc((size_t)nn * sizeof(int));
    for (int k = 0; k < nn; k++) heads[k] = head_of(t, k);
    for (int w = 0; w < 2; w++) {
        s.nodes[w] = cs_xmalloc((size_t)n * sizeof(tnode));
        build_tree(&s, w, heads);
    }
    free(heads);
    for (int r = 0; r < n; r++) cs_engine_schedule(s.eng, cs_deslinks_delay_s(t, r), tree_start, &s, r, 0);
    cs_engine_run(s.eng);
    for (int w = 0; w < 2; w++)
        for (int r = 0; r < n; r++)
            if (ready_down(&s, &s.nodes[w][r]) != s.chunks)
                CS_PANIC("tree schedule stalled: tree %d rank %d", w, r);
    *time_s = p->base_lat_s + s.done_s;
    *events = cs_engine_events_run(s.eng);
    free(s.nodes[0]);
    free(s.nodes[1]);
    free(s.lane);
    free(s.slow);
    cs_network_free(s.net);
    cs_engine_free(s.eng);
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
