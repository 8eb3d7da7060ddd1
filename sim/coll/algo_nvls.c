/* SPDX-License-Identifier: MIT */
/*
 * algo_nvls.c - NCCL's NVLS algorithm (NVLink SHARP on a Hopper or later
 * NVSwitch): closed form and discrete-event schedule, one node.
 *
 * Physical picture (NVIDIA, "NVIDIA NVLink and NVSwitch", third-generation
 * NVSwitch with SHARP; NCCL 2.17+ NVLS kernels): the switch reduces in the
 * fabric (multimem.ld_reduce) and multicasts (multimem.st), so each GPU
 * moves its data over its NVLink port once each way instead of the ring's
 * 2(n-1)/n: for all_reduce `bytes` out and `bytes` in per GPU, for
 * all_gather its own bytes/n out and `bytes` in, for reduce_scatter
 * `bytes` out and bytes/n in (nccl-tests sizes). That is how NVLS busbw
 * exceeds what a ring can reach on the same links.
 *
 * Cost (NVIDIA/nccl src/graph/tuning.cc at b6475625, 2.19 series):
 *   latency = hwLat[NVLINK][NVLS][Simple] = 23 us (baseLat 0; + the
 *             network's 18 us across nodes, which collsim does not run:
 *             NCCL uses NVLS across nodes only with CollNet);
 *   busBw   = channels x min(bwIntra, bwInter), algbw = busBw x 5/6;
 * here the per-channel bandwidth is the GPU port's share (port x
 * intra.efficiency / channels) times the protocol factor 5/6 x
 * nvlsEfficiency (0.85 Hopper, 0.74 Blackwell: NCCL's later NVLS model,
 * src/tuning/nvls.cc). Simple only; LL / LL128 are unsupported.
 * Departures: the closed form adds the pipeline fill of the two stages
 * (as the tree's does): with per-channel data cut into s chunks of c
 * bytes, stage bytes u (GPU -> switch) and d (switch -> GPU),
 *     T = base + lat + (u + d + (s - 1) max(u, d)) / rate,
 * u = d = c for all_reduce, u = c/n, d = c for all_gather, u = c,
 * d = c/n for reduce_scatter; for large messages this is NCCL's
 * lat + bytes / algbw. Broadcast and reduce are not NVLS operations.
 *
 * The DES runs the same pipeline over cs_network links, one channel
 * standing for all (links hold 1/channels of each physical link): chunk k
 * of every GPU flows over its port_out and the switch's reduction link;
 * when chunk k of all n GPUs has arrived the switch holds the reduced
 * chunk and multicasts it over its egress link to every GPU's port_in.
 * The switch links carry n flows at once with capacity n x the per-port
 * share (the SHARP engines serve every port at its line rate, so the
 * switch never binds on its own; a slow port binds through the reduction
 * barrier). Half the hop latency is paid on each stage. O(n) state plus
 * one counter per chunk.
 */
#include <math.h>
#include <stdlib.h>

#include "coll/algo.h"
#include "coll/deslinks.h"
#include "coll/network.h"

/* Chunks per channel and the bytes each stage moves per chunk. */
static void nvls_stages(const cs_topology *t, const cs_coll_params *p, double *chunks, double *up,
                        double *down)
{
    double per_ch = p->bytes / p->channels;
    *chunks = fmax(1.0, ceil(per_ch / p->chunk_bytes));
    double c = per_ch / *chunks;
    *up = p->op == CS_OP_ALL_GATHER ? c / t->ranks : c;
    *down = p->op == CS_OP_REDUCE_SCATTER ? c / t->ranks : c;
}

static double nvls_closed_form(const cs_topology *t, const cs_coll_params *p)
{
    if (t->ranks == 1) return p->base_lat_s;
    double s, u, d;
    nvls_stages(t, p, &s, &u, &d);
    double r = cs__hop_rate(p, p->port_ch_Bps);
    return p->base_lat_s + p->intra_lat_s + (u + d + (s - 1) * fmax(u, d)) / r;
}

/* ---- discrete-event schedule ------------------------------------------ */

typedef struct nvls_sim {
    const cs_topology *t;
    const cs_coll_params *p;
    cs_engine *eng;
    cs_network *net;
    int n;
    long chunks;
    double up_bytes, down_bytes;
    int *port_out, *port_in; /* link ids per rank */
    int sw_in, sw_out;       /* the switch's reduction and multicast links */
    double *slow;            /* straggler slowdown per rank */
    char *started;           /* the rank's start delay has passed */
    long *up_next;           /* next chunk a rank sends to the switch */
    char *up_busy;
    int *got;                /* per chunk: ranks whose copy reached the switch */
    long reduced;            /* chunks 0..reduced-1 are reduced in the switch */
    long *down_next;         /* next chunk the switch multicasts to a rank */
    char *down_busy;
    long *recvd;             /* reduced chunks a rank holds */
    double done_s;
} nvls_sim;

static void up_pump(nvls_sim *s, int r);
static void down_pump(nvls_sim *s, int r);

static void up_sent(cs_engine *e, void *ctx, int64_t r, int64_t chunk)
{
    (void)e;
    (void)chunk;
    nvls_sim *s = ctx;
    s->up_busy[r] = 0;
    up_pump(s, (int)r);
}

static void up_arrive(cs_engine *e, void *ctx, int64_t r, int64_t chunk)
{
    (void)e;
    (void)r;
    nvls_sim *s = ctx;
    s->got[chunk]++;
    /* every rank sends its chunks in order, so chunks complete in order */
    long before = s->reduced;
    while (s->reduced < s->chunks && s->got[s->reduced] == s->n) s->reduced++;
    if (s->reduced != before)
        for (int d = 0; d < s->n; d++) down_pump(s, d);
}

static void down_sent(cs_engine *e, void *ctx, int64_t r, int64_t chunk)
{
    (void)e;
    (void)chunk;
    nvls_sim *s = ctx;
    s->down_busy[r] = 0;
    down_pump(s, (int)r);
}

static void down_arrive(cs_engine *e, void *ctx, int64_t r, int64_t chunk)
{
    (void)chunk;
    nvls_sim *s = ctx;
    if (++s->recvd[r] == s->chunks) {
        double now = cs_engine_now(e);
        if (now > s->done_s) s->done_s = now;
    }
}

static void send(nvls_sim *s, int r, long chunk, int up)
{
    int links[2];
    if (up) {
        links[0] = s->port_out[r];
        links[1] = s->sw_in;
    } else {
        links[0] = s->sw_out;
        links[1] = s->port_in[r];
    }
    cs_flow_spec f = {.links = links, .nlinks = 2,
                      .bytes = up ? s->up_bytes : s->down_bytes,
                      .factor = s->p->factor / s->slow[r], .cap_Bps = s->p->cap_Bps / s->slow[r],
                      .latency_s = s->p->intra_lat_s / 2,
                      .on_sent = up ? up_sent : down_sent, .on_arrive = up ? up_arrive : down_arrive,
                      .ctx = s, .a = r, .b = chunk};
    cs_network_start_flow(s->net, &f);
}

static void up_pump(nvls_sim *s, int r)
{
    if (!s->started[r] || s->up_busy[r] || s->up_next[r] >= s->chunks) return;
    s->up_busy[r] = 1;
    send(s, r, s->up_next[r]++, 1);
}

static void down_pump(nvls_sim *s, int r)
{
    if (s->down_busy[r] || s->down_next[r] >= s->reduced) return;
    s->down_busy[r] = 1;
    send(s, r, s->down_next[r]++, 0);
}

static void nvls_start(cs_engine *e, void *ctx, int64_t r, int64_t unused)
{
    (void)e;
    (void)unused;
    nvls_sim *s = ctx;
    s->started[r] = 1;
    up_pump(s, (int)r);
}

static int nvls_simulate(const cs_topology *t, const cs_coll_params *p, double *time_s,
                         unsigned long long *events)
{
    int n = t->ranks;
    if (n == 1) {
        *time_s = p->base_lat_s;
        *events = 0;
        return 0;
    }
    CS_ASSERT(t->nodes == 1);
    const cs_cluster *c = &t->cluster;
    nvls_sim s = {.t = t, .p = p, .n = n};
    double chunks;
    nvls_stages(t, p, &chunks, &s.up_bytes, &s.down_bytes);
    s.chunks = (long)chunks;
    s.eng = cs_engine_new();
    s.net = cs_network_new(s.eng);
    s.port_out = cs_xmalloc((size_t)n * sizeof(int));
    s.port_in = cs_xmalloc((size_t)n * sizeof(int));
    s.slow = cs_xmalloc((size_t)n * sizeof(double));
    s.started = cs_xcalloc((size_t)n, 1);
    s.up_next = cs_xcalloc((size_t)n, sizeof(long));
    s.up_busy = cs_xcalloc((size_t)n, 1);
    s.down_next = cs_xcalloc((size_t)n, sizeof(long));
    s.down_busy = cs_xcalloc((size_t)n, 1);
    s.recvd = cs_xcalloc((size_t)n, sizeof(long));
    s.got = cs_xcalloc((size_t)s.chunks, sizeof(int));
    double share = t->port_Bps / c->coll.channels;
    for (int r = 0; r < n; r++) {
        double cap = cs_deslinks_port_ch_Bps(t, 0, r);
        s.port_out[r] = cs_network_add_link(s.net, cap);
        s.port_in[r] = cs_network_add_link(s.net, cap);
        s.slow[r] = cs_deslinks_slowdown(t, r);
    }
    s.sw_in = cs_network_add_link(s.net, n * share);
    s.sw_out = cs_network_add_link(s.net, n * share);
    for (int r = 0; r < n; r++) cs_engine_schedule(s.eng, cs_deslinks_delay_s(t, r), nvls_start, &s, r, 0);
    cs_engine_run(s.eng);
    for (int r = 0; r < n; r++)
        if (s.recvd[r] != s.chunks)
            CS_PANIC("nvls schedule stalled: rank %d received %ld of %ld", r, s.recvd[r], s.chunks);
    *time_s = p->base_lat_s + s.done_s;
    *events = cs_engine_events_run(s.eng);
    free(s.port_out);
    free(s.port_in);
    free(s.slow);
    free(s.started);
    free(s.up_next);
    free(s.up_busy);
    free(s.down_next);
    free(s.down_busy);
    free(s.recvd);
    free(s.got);
    cs_network_free(s.net);
    cs_engine_free(s.eng);
    return 0;
}

/* ---- NCCL's model: src/graph/tuning.cc ncclTopoTuneModel ------------- */

/* busBw x 5/6 (NVLS's busBw -> algbw ratio) x nvlsEfficiency; no
 * per-channel cap. Simple only (the row's protos). */
static void nvls_bandwidth(const cs_topology *t, cs_op op, cs_proto p, int channels, double *factor,
                           double *cap)
{
    (void)op;
    (void)p;
    (void)channels;
    *factor = CS_NCCL_NVLS_RATIO * cs_ncclmodel_nvls_efficiency(t->arch);
    *cap = INFINITY;
}

const cs_algo cs__algo_nvls = {
    .ops = CS_OP_BIT(CS_OP_ALL_REDUCE) | CS_OP_BIT(CS_OP_ALL_GATHER) |
           CS_OP_BIT(CS_OP_REDUCE_SCATTER),
    .protos = CS_PROTO_BIT(CS_PROTO_SIMPLE),
    .one_node = 1, /* NCCL: across nodes only with CollNet, not modelled */
    .flag = {.key = "nvls",
             .fabric = CS_FABRIC_NVSWITCH,
             .min_cc = CS_NCCL_NVLS_MIN_CC,
             .needs = "an NVSwitch fabric (intra.fabric: nvswitch) and compute_capability >= 90 "
                      "(NVLink SHARP)"},
    .hint = "NVLS: all_reduce, all_gather, reduce_scatter with Simple, on one node of an "
            "NVSwitch with compute capability >= 90: collectives.nvls",
    .help = "nvls (NVLink SHARP, Simple only): all_reduce, all_gather and reduce_scatter on one "
            "node of an NVSwitch with compute capability >= 90 (collectives.nvls).",
    .latency = &cs_ncclmodel_nvls_latency,
    .bandwidth = nvls_bandwidth,
    .closed_form = nvls_closed_form,
    .simulate = nvls_simulate,
    /* collectives.efficiency.nvls is not fitted */
};
