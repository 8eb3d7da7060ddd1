/* SPDX-License-Identifier: MIT */
/*
 * algo_nvlstree.c - NCCL's NVLSTree all_reduce (NVLink SHARP inside each
 * node, the double binary tree across nodes): closed form and
 * discrete-event schedule, two or more nodes.
 *
 * Physical picture (NCCL 2.18+ NVLS_TREE kernels, src/device/all_reduce.h
 * runNvlsTree): inside a node the NVSwitch reduces the node's GPUs in the
 * fabric (multimem.ld_reduce), so a node contributes one reduced copy of
 * each chunk; the nodes' copies are reduced up NCCL's double binary tree
 * over the network and the result is broadcast down it; every node then
 * multicasts it to its GPUs (multimem.st). Each GPU moves its data over
 * its NVLink port once each way, as in single-node NVLS, and the network
 * carries what a tree over nodes carries.
 *
 * Cost (NVIDIA/nccl src/graph/tuning.cc at b6475625 (2.20.3), the commit
 * of the NVLS row's constants; the NVLS_TREE bandwidth form is the same
 * from 2.19.1 to 2.27.5 (2.27 raised the NVLink hwLat to 25 us), and NCCL
 * 2.28 rewrote it):
 *   latency = baseLat 0 + hwLat[NVLINK][NVLS_TREE] 23 us
 *             + 2 log2i(nodes) (hwLat[NET][NVLS_TREE] 14 us + net latency,
 *               twice for Simple's flush);
 *   per channel bw = min(bwIntra, nodes <= 2 ? bwInter : bwInter / 2),
 *   algbw = channels x bw x 5/6,
 * with bwIntra the GPU port's per-channel share and bwInter the node
 * network's, and nvlsEfficiency (0.85 Hopper, 0.74 Blackwell) on top as for
 * NVLS (algo_nvls.c). bwInter / 2 beyond two nodes: each node is interior
 * (sending up once and down twice) in one of the two trees and a leaf in
 * the other, so its network carries twice the data of a ring step on
 * average; at two nodes one tree's root sends down while the other's leaf
 * sends up. Simple only, all_reduce only; NCCL enables it on 2+ nodes
 * where NVLS works ("Disable NVLS Tree on a single node").
 * Chunks: NCCL_NVLS_CHUNKSIZE 128 KiB, at most 64 KiB from 4 nodes
 * (src/transport/nvls.cc ncclNvlsTuning), halved down to 32 KiB for small
 * messages (src/enqueue.cc calcCollChunking, NVLS_TREE: below 4 and 1
 * chunks per concurrent op, ops = channels x local GPUs).
 * Departure, as in algo_nvls.c: the closed form adds the pipeline fill
 * NCCL's fluid formula omits (NCCL applies no tree correction to NVLSTree
 * before Blackwell): a tandem pipeline of the NVLS stages (in and out, at
 * the port's rate) and 2 x depth network hops,
 *   T = latency + 2 chunk / r_nvls + 2 depth chunk / r_net
 *       + (chunks - 1) x chunk / min(r_nvls, r_net).
 *
 * The DES runs the pipeline with nodes as its units (NVLS treats a node's
 * GPUs alike): per node an NVLS link in and out (capacity 2 x the port's
 * per-channel share) and a network link out and in (2 x the network's),
 * both trees' flows sharing them, each tree standing for half the
 * channels; chunk k leaves a node up its tree once the node's own NVLS
 * reduction of k and its children's k have arrived, comes down from the
 * parent (the root: once it has reduced k), and is multicast to the node.
 * A node's slowest GPU (straggler slowdown, latest start) stands for the
 * node. Where the engines differ by design: the DES's tree is
 * ceil(log2 nodes) deep against NCCL's floor in the latency, and beyond two
 * nodes a flow may find its link less loaded than the average bwInter / 2
 * charges; tests/test-collective.c bounds both.
 */
#include <math.h>
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/deslinks.h"
#include "coll/network.h"

/* Per-channel rates of the NVLS stages (the port) and of the network hops
 * (halved beyond two nodes), times NCCL's factor; NCCL's rate is the
 * slower. */
static void nvlstree_rates(const cs_topology *t, const cs_coll_params *p, double *nv, double *net)
{
    *nv = cs__hop_rate(p, p->port_ch_Bps);
    *net = cs__hop_rate(p, t->nodes <= 2 ? p->net_ch_Bps : p->net_ch_Bps / 2);
}

/* NCCL's NVLS_TREE chunk for this size (see the file header). */
static double nvlstree_chunk(const cs_topology *t, const cs_coll_params *p)
{
    double c = CS_NCCL_NVLS_CHUNK_BYTES;
    if (t->nodes >= CS_NCCL_NVLSTREE_4NODES) c = fmin(c, CS_NCCL_NVLSTREE_MAX_CHUNK_4NODES);
    double ops = (double)p->channels * t->ppn_max;
    if (p->bytes < 4 * ops * c && c > 65536) c = 65536;
    if (p->bytes < 1 * ops * c && c > 32768) c = 32768;
    return c;
}

static void nvlstree_chunks(const cs_topology *t, const cs_coll_params *p, double *chunks,
                            double *chunk_bytes)
{
    double per_ch = p->bytes / p->channels;
    *chunks = fmax(1.0, ceil(per_ch / nvlstree_chunk(t, p)));
    *chunk_bytes = per_ch / *chunks;
}

static double nvlstree_latency(const cs_topology *t, const cs_coll_params *p)
{
    return p->base_lat_s + p->intra_lat_s + 2.0 * cs__log2i(t->nodes) * p->inter_lat_s;
}

/* A tandem pipeline of stages (NVLS in, depth hops up, depth down, NVLS
 * out): the first chunk crosses every stage, the others follow at the
 * slowest; for large messages NCCL's bytes / (channels x min rate). */
static double nvlstree_closed_form(const cs_topology *t, const cs_coll_params *p)
{
    double s, c, nv, net;
    nvlstree_chunks(t, p, &s, &c);
    nvlstree_rates(t, p, &nv, &net);
    double fill = 2.0 * c / nv + 2.0 * cs__tree_depth(t->nodes) * c / net;
    return nvlstree_latency(t, p) + fill + (s - 1) * c / fmin(nv, net);
}

/* ---- discrete-event schedule ------------------------------------------ */

#define NT_MAX_CHILD 2

typedef struct nt_node {
    int parent;
    int child[NT_MAX_CHILD];
    int nchild;
    char started;                  /* the node's start delay has passed */
    long local_sent, local_up;     /* own NVLS reductions issued, arrived */
    char local_busy;
    long up_recv[NT_MAX_CHILD];    /* chunks from each child */
    long up_sent;
    char up_busy;
    long down_recv;                /* reduced chunks from the parent */
    long down_sent[NT_MAX_CHILD];
    char down_busy[NT_MAX_CHILD];
    long mc_sent, mc_done;         /* multicasts to the node's GPUs */
    char mc_busy;
} nt_node;

enum { NV_IN, NV_OUT, NET_OUT, NET_IN, NT_LINKS };
enum { K_LOCAL, K_UP, K_DOWN, K_MC };

typedef struct nt_sim {
    const cs_topology *t;
    const cs_coll_params *p;
    cs_engine *eng;
    cs_network *net;
    int nodes;
    nt_node *v[2];     /* per tree, per node */
    int *link;         /* [node][NT_LINKS] */
    double *slow;      /* per node: its slowest GPU */
    double *delay;     /* per node: its latest start */
    long chunks;
    double chunk_bytes;
    double done_s;
} nt_sim;

static long nt_ready_up(const nt_node *x)
{
    long m = x->local_up;
    for (int i = 0; i < x->nchild; i++)
        if (x->up_recv[i] < m) m = x->up_recv[i];
    return m;
}

static long nt_ready_down(const nt_node *x)
{
    return x->parent < 0 ? nt_ready_up(x) : x->down_recv;
}

static void nt_pump(nt_sim *s, int w, int k);
static void nt_sent(cs_engine *e, void *ctx, int64_t a, int64_t b);
static void nt_arrive(cs_engine *e, void *ctx, int64_t a, int64_t b);

/* a = from << 32 | to; b = tree << 8 | kind << 4 | child slot */
static void nt_send(nt_sim *s, int w, int from, int to, int kind, int slot)
{
    int links[2], n = 0;
    int inter = kind == K_UP || kind == K_DOWN;
    if (kind == K_LOCAL) links[n++] = s->link[NT_LINKS * from + NV_IN];
    if (kind == K_MC) links[n++] = s->link[NT_LINKS * from + NV_OUT];
    if (inter) {
        links[n++] = s->link[NT_LINKS * from + NET_OUT];
        links[n++] = s->link[NT_LINKS * to + NET_IN];
    }
    cs_flow_spec f = {.links = links, .nlinks = n, .bytes = s->chunk_bytes,
                      .factor = s->p->factor / s->slow[from],
                      .cap_Bps = s->p->cap_Bps / s->slow[from],
                      .latency_s = inter ? s->p->inter_lat_s : s->p->intra_lat_s / 2,
                      .on_sent = nt_sent, .on_arrive = nt_arrive, .ctx = s,
                      .a = ((int64_t)from << 32) | (uint32_t)to,
                      .b = ((int64_t)w << 8) | ((int64_t)kind << 4) | slot};
    cs_network_start_flow(s->net, &f);
}

static void nt_sent(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    (void)e;
    nt_sim *s = ctx;
    int from = (int)(a >> 32), w = (int)(b >> 8), kind = (int)((b >> 4) & 15), slot = (int)(b & 15);
    nt_node *x = &s->v[w][from];
    if (kind == K_LOCAL) x->local_busy = 0;
    if (kind == K_UP) x->up_busy = 0;
    if (kind == K_DOWN) x->down_busy[slot] = 0;
    if (kind == K_MC) x->mc_busy = 0;
    nt_pump(s, w, from);
}

static void nt_arrive(cs_engine *e, void *ctx, int64_t a, int64_t b)
{
    nt_sim *s = ctx;
    int from = (int)(a >> 32), to = (int)(uint32_t)a;
    int w = (int)(b >> 8), kind = (int)((b >> 4) & 15);
    nt_node *y = &s->v[w][to];
    if (kind == K_LOCAL) y->local_up++;
    if (kind == K_UP)
        for (int i = 0; i < y->nchild; i++)
            if (y->child[i] == from) y->up_recv[i]++;
    if (kind == K_DOWN) y->down_recv++;
    if (kind == K_MC && ++y->mc_done == s->chunks) {
        double now = cs_engine_now(e);
        if (now > s->done_s) s->done_s = now;
    }
    nt_pump(s, w, to);
}

/* Starts whatever node k of tree w can send now: its next NVLS reduction,
 * the next chunk up, down to each child, and into its own GPUs. */
static void nt_pump(nt_sim *s, int w, int k)
{
    nt_node *x = &s->v[w][k];
    if (!x->started) return;
    if (!x->local_busy && x->local_sent < s->chunks) {
        x->local_busy = 1;
        x->local_sent++;
        nt_send(s, w, k, k, K_LOCAL, 0);
    }
    if (x->parent >= 0 && !x->up_busy && x->up_sent < nt_ready_up(x)) {
        x->up_busy = 1;
        x->up_sent++;
        nt_send(s, w, k, x->parent, K_UP, 0);
    }
    long rd = nt_ready_down(x);
    for (int i = 0; i < x->nchild; i++)
        if (!x->down_busy[i] && x->down_sent[i] < rd) {
            x->down_busy[i] = 1;
            x->down_sent[i]++;
            nt_send(s, w, k, x->child[i], K_DOWN, i);
        }
    if (!x->mc_busy && x->mc_sent < rd) {
        x->mc_busy = 1;
        x->mc_sent++;
        nt_send(s, w, k, k, K_MC, 0);
    }
}

static void nt_start(cs_engine *e, void *ctx, int64_t k, int64_t unused)
{
    (void)e;
    (void)unused;
    nt_sim *s = ctx;
    for (int w = 0; w < 2; w++) {
        s->v[w][k].started = 1;
        nt_pump(s, w, (int)k);
    }
}

/* Node k's links (each tree stands for half the channels, so a link holds
 * 2/channels of the physical one) and its slowest GPU. */
static void nt_node_links(nt_sim *s, int k, int first_rank)
{
    const cs_topology *t = s->t;
    double port = INFINITY;
    s->slow[k] = 1.0;
    s->delay[k] = 0.0;
    for (int i = 0; i < cs_topology_ranks_on(t, k); i++) {
        port = fmin(port, cs_deslinks_port_ch_Bps(t, k, i));
        s->slow[k] = fmax(s->slow[k], cs_deslinks_slowdown(t, first_rank + i));
        s->delay[k] = fmax(s->delay[k], cs_deslinks_delay_s(t, first_rank + i));
    }
    double net = cs_deslinks_net_ch_Bps(t, k);
    s->link[NT_LINKS * k + NV_IN] = cs_network_add_link(s->net, 2 * port);
    s->link[NT_LINKS * k + NV_OUT] = cs_network_add_link(s->net, 2 * port);
    s->link[NT_LINKS * k + NET_OUT] = cs_network_add_link(s->net, 2 * net);
    s->link[NT_LINKS * k + NET_IN] = cs_network_add_link(s->net, 2 * net);
}

static void nt_build(nt_sim *s, int w)
{
    s->v[w] = cs_xcalloc((size_t)s->nodes, sizeof(nt_node));
    for (int k = 0; k < s->nodes; k++) {
        nt_node *x = &s->v[w][k];
        int up, d0, d1;
        cs__algo_dtree(s->nodes, w, k, &up, &d0, &d1);
        x->parent = up;
        if (d0 >= 0) x->child[x->nchild++] = d0;
        if (d1 >= 0) x->child[x->nchild++] = d1;
    }
}

static int nvlstree_simulate(const cs_topology *t, const cs_coll_params *p, double *time_s,
                             unsigned long long *events)
{
    CS_ASSERT(t->nodes > 1);
    int nn = t->nodes;
    nt_sim s = {.t = t, .p = p, .nodes = nn};
    double chunks;
    nvlstree_chunks(t, p, &chunks, &s.chunk_bytes);
    s.chunks = (long)chunks;
    s.eng = cs_engine_new();
    s.net = cs_network_new(s.eng);
    s.link = cs_xmalloc((size_t)NT_LINKS * nn * sizeof(int));
    s.slow = cs_xmalloc((size_t)nn * sizeof(double));
    s.delay = cs_xmalloc((size_t)nn * sizeof(double));
    for (int k = 0, r = 0; k < nn; r += cs_topology_ranks_on(t, k), k++) nt_node_links(&s, k, r);
    for (int w = 0; w < 2; w++) nt_build(&s, w);
    for (int k = 0; k < nn; k++) cs_engine_schedule(s.eng, s.delay[k], nt_start, &s, k, 0);
    cs_engine_run(s.eng);
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < nn; k++)
            if (s.v[w][k].mc_done != s.chunks)
                CS_PANIC("nvlstree schedule stalled: tree %d node %d", w, k);
    *time_s = p->base_lat_s + s.done_s;
    *events = cs_engine_events_run(s.eng);
    free(s.v[0]);
    free(s.v[1]);
    free(s.link);
    free(s.slow);
    free(s.delay);
    cs_network_free(s.net);
    cs_engine_free(s.eng);
    return 0;
}

/* ---- NCCL's model: src/graph/tuning.cc ncclTopoTuneModel ------------- */

/* busBw x 5/6 (NVLS_TREE's busBw -> algbw ratio) x nvlsEfficiency; no
 * per-channel cap before 2.28. Simple only (the row's protos). */
static void nvlstree_bandwidth(const cs_topology *t, cs_op op, cs_proto p, int channels, double *factor,
                               double *cap)
{
    (void)op;
    (void)p;
    (void)channels;
    *factor = CS_NCCL_NVLS_RATIO * cs_ncclmodel_nvls_efficiency(t->arch);
    *cap = INFINITY;
}

const cs_algo cs__algo_nvlstree = {
    .ops = CS_OP_BIT(CS_OP_ALL_REDUCE),
    .protos = CS_PROTO_BIT(CS_PROTO_SIMPLE),
    .multi_node = 1, /* tuning.cc: "Disable NVLS Tree on a single node" */
    .flag = {.key = "nvlstree",
             .fabric = CS_FABRIC_NVSWITCH,
             .min_cc = CS_NCCL_NVLS_MIN_CC,
             .needs = "an NVSwitch fabric (intra.fabric: nvswitch) and compute_capability >= 90 "
                      "(NVLink SHARP)"},
    .hint = "NVLSTree: all_reduce with Simple across 2+ nodes of NVSwitch with compute "
            "capability >= 90: collectives.nvlstree",
    .help = "nvlstree (NVLink SHARP in each node, tree across nodes; Simple only): all_reduce "
            "on 2+ nodes of NVSwitch with compute capability >= 90 (collectives.nvlstree).",
    .latency = &cs_ncclmodel_nvlstree_latency,
    .bandwidth = nvlstree_bandwidth,
    .closed_form = nvlstree_closed_form,
    .simulate = nvlstree_simulate,
    /* collectives.efficiency.nvlstree is not fitted */
};
