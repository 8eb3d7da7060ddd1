/* SPDX-License-Identifier: MIT */
/*
 * network.c - flows over links with equal-share processor sharing.
 *
 * Each active flow keeps (remaining bytes, rate, time of last update). When
 * the set of flows on a link changes, every flow on that link is brought up
 * to date, gets its new rate and a new completion event; completion events
 * carry a version as a guard, and a pending completion is moved in place
 * (cs_engine_reschedule) so no superseded copies pile up in the queue.
 * Cost: O(flows sharing a link) per start/finish. Layout for the update
 * loop: what a rate update touches is one 64-byte line per flow (the rest
 * of a flow sits in a second array), a link keeps capacity / flows so a
 * rate needs no division, and a flow touched twice at one instant is not
 * recounted. Departures from SimGrid's
 * max-min fairness: capacity left unused by a flow bottlenecked elsewhere is
 * not redistributed (equal split), which is exact for the symmetric
 * schedules collectives produce and conservative otherwise.
 */
#include "coll/network.h"

#include <math.h>
#include <stdlib.h>

#include "base/error.h"

/* A flow's state split by use: what every rate update reads and writes
 * (one 64-byte line), and what only its start and end read. */
typedef struct flow {
    double remaining;
    double rate;
    double last_t;
    double factor, cap;
    int32_t links[CS_NET_MAX_PATH];
    cs_event_handle ev; /* pending completion event, if has_ev */
    int16_t nlinks;
    int8_t has_ev;
    int8_t active;
} flow;

typedef struct flow_cold {
    int pos[CS_NET_MAX_PATH]; /* index of this flow in each link's list */
    uint64_t version;
    double latency;
    cs_event_fn on_sent, on_arrive;
    void *ctx;
    int64_t a, b;
    int next_free;
} flow_cold;

typedef struct link {
    double share; /* capacity / nflows, kept as nflows changes (rates read it) */
    double capacity;
    double carried;
    int *flows;
    int nflows, cap_flows;
} link;

struct cs_network {
    cs_engine *engine;
    link *links;
    int nlinks, cap_links;
    flow *flows;
    flow_cold *cold;
    int nflows_alloc, cap_flows, free_head, active;
    uint64_t versions; /* completion-event versions, unique across slot reuse */
};

cs_network *cs_network_new(cs_engine *e)
{
    cs_network *n = cs_xcalloc(1, sizeof *n);
    n->engine = e;
    n->free_head = -1;
    return n;
}

void cs_network_free(cs_network *n)
{
    if (!n) return;
    for (int i = 0; i < n->nlinks; i++) free(n->links[i].flows);
    free(n->links);
    free(n->flows);
    free(n->cold);
    free(n);
}

int cs_network_add_link(cs_network *n, double capacity_Bps)
{
    CS_ASSERT(capacity_Bps > 0 && isfinite(capacity_Bps));
    if (n->nlinks == n->cap_links) {
        n->cap_links = n->cap_links ? 2 * n->cap_links : 16;
        n->links = cs_xrealloc(n->links, (size_t)n->cap_links * sizeof *n->links);
    }
    link *l = &n->links[n->nlinks];
    *l = (link){.share = capacity_Bps, .capacity = capacity_Bps};
    return n->nlinks++;
}

double cs_network_link_capacity(const cs_network *n, int id)
{
    CS_ASSERT(id >= 0 && id < n->nlinks);
    return n->links[id].capacity;
}

int cs_network_link_count(const cs_network *n) { return n->nlinks; }

double cs_network_link_bytes(const cs_network *n, int id)
{
    CS_ASSERT(id >= 0 && id < n->nlinks);
    return n->links[id].carried;
}

int cs_network_active_flows(const cs_network *n) { return n->active; }

static int flow_alloc(cs_network *n)
{
    if (n->free_head >= 0) {
        int id = n->free_head;
        n->free_head = n->cold[id].next_free;
        return id;
    }
    if (n->nflows_alloc == n->cap_flows) {
        n->cap_flows = n->cap_flows ? 2 * n->cap_flows : 64;
        n->flows = cs_xrealloc(n->flows, (size_t)n->cap_flows * sizeof *n->flows);
        n->cold = cs_xrealloc(n->cold, (size_t)n->cap_flows * sizeof *n->cold);
    }
    return n->nflows_alloc++;
}

/* min(cap, share x factor); no cap when cap <= 0 */
static double capped_rate(double share, double factor, double cap)
{
    double r = share * factor;
    if (cap > 0 && cap < r) r = cap;
    return r;
}

static double flow_rate(const cs_network *n, const flow *f)
{
    double share = INFINITY;
    for (int i = 0; i < f->nlinks; i++) {
        const link *l = &n->links[f->links[i]];
        if (l->share < share) share = l->share;
    }
    return capped_rate(share, f->factor, f->cap);
}

double cs_network_solo_rate(const double *caps, int n, double factor, double cap_Bps)
{
    double share = INFINITY;
    for (int i = 0; i < n; i++) /* capacity / 1 flow: the capacity itself */
        if (caps[i] < share) share = caps[i];
    return capped_rate(share, factor, cap_Bps);
}

static void on_complete(cs_engine *e, void *ctx, int64_t id, int64_t version);

/* Brings flow id up to date at time now and (re)schedules its completion.
 * A flow touched again at the same instant has sent nothing since: its
 * bytes are not recounted (adding 0 changes nothing). */
static void flow_update(cs_network *n, int id, double now)
{
    flow *f = &n->flows[id];
    if (f->last_t != now) {
        double sent = f->rate * (now - f->last_t);
        if (f->rate > 0) {
            f->remaining -= sent;
            for (int i = 0; i < f->nlinks; i++) n->links[f->links[i]].carried += sent;
        }
        if (f->remaining < 0) f->remaining = 0;
        f->last_t = now;
    }
    double r = flow_rate(n, f);
    if (r == f->rate && f->has_ev) return; /* completion still valid */
    f->rate = r;
    uint64_t version = n->cold[id].version = ++n->versions;
    double t = now + f->remaining / r;
    if (f->has_ev) { /* move the pending completion: no superseded event */
        cs_engine_reschedule(n->engine, f->ev, t, (int64_t)version);
    } else {
        f->ev = cs_engine_schedule_handle(n->engine, t, on_complete, n, id, (int64_t)version);
        f->has_ev = 1;
    }
}

static void link_touch(cs_network *n, int lid, int except, double now)
{
    link *l = &n->links[lid];
    for (int k = 0; k < l->nflows; k++)
        if (l->flows[k] != except) flow_update(n, l->flows[k], now);
}

void cs_network_start_flow(cs_network *n, const cs_flow_spec *s)
{
    const int *links = s->links;
    int nlinks = s->nlinks;
    CS_ASSERT(nlinks >= 1 && nlinks <= CS_NET_MAX_PATH);
    CS_ASSERT(s->bytes >= 0 && s->factor > 0 && s->latency_s >= 0);
    double now = cs_engine_now(n->engine);
    int id = flow_alloc(n);
    n->flows[id] = (flow){.nlinks = (int16_t)nlinks, .remaining = s->bytes, .last_t = now,
                          .factor = s->factor, .cap = s->cap_Bps, .active = 1};
    n->cold[id] = (flow_cold){.latency = s->latency_s, .on_sent = s->on_sent,
                              .on_arrive = s->on_arrive, .ctx = s->ctx, .a = s->a, .b = s->b,
                              .next_free = -1};
    /* Join the links, then bring the flows already on them up to date: each
     * first counts what it sent at its old rate (its rate always matches
     * the current shares, so a touch before joining would change nothing
     * else), then takes its share of the new count. */
    for (int i = 0; i < nlinks; i++) {
        CS_ASSERT(links[i] >= 0 && links[i] < n->nlinks);
        link *l = &n->links[links[i]];
        if (l->nflows == l->cap_flows) {
            l->cap_flows = l->cap_flows ? 2 * l->cap_flows : 4;
            l->flows = cs_xrealloc(l->flows, (size_t)l->cap_flows * sizeof *l->flows);
        }
        n->flows[id].links[i] = links[i];
        n->cold[id].pos[i] = l->nflows;
        l->flows[l->nflows++] = id;
        l->share = l->capacity / l->nflows;
    }
    n->active++;
    flow_update(n, id, now);
    for (int i = 0; i < nlinks; i++) link_touch(n, links[i], id, now);
}

static void on_arrive_trampoline(cs_engine *e, void *ctx, int64_t id, int64_t unused)
{
    (void)unused;
    cs_network *n = ctx;
    flow_cold c = n->cold[id];
    n->cold[id].next_free = n->free_head;
    n->free_head = (int)id;
    c.on_arrive(e, c.ctx, c.a, c.b);
}

static void on_complete(cs_engine *e, void *ctx, int64_t id, int64_t version)
{
    cs_network *n = ctx;
    flow *f = &n->flows[id];
    const flow_cold *c = &n->cold[id];
    f->has_ev = 0; /* this event has run: its handle is spent */
    if (!f->active || (int64_t)c->version != version) return; /* superseded */
    double now = cs_engine_now(e);
    double sent = f->rate * (now - f->last_t);
    for (int i = 0; i < f->nlinks; i++) n->links[f->links[i]].carried += sent;
    f->remaining = 0;
    f->active = 0;
    n->active--;
    /* unlink from every link (swap-remove), then let the others speed up */
    for (int i = 0; i < f->nlinks; i++) {
        link *l = &n->links[f->links[i]];
        int p = c->pos[i];
        int moved = l->flows[--l->nflows];
        l->share = l->nflows ? l->capacity / l->nflows : l->capacity;
        l->flows[p] = moved;
        if (moved != (int)id) {
            const flow *m = &n->flows[moved];
            for (int j = 0; j < m->nlinks; j++)
                if (m->links[j] == f->links[i]) n->cold[moved].pos[j] = p;
        }
    }
    for (int i = 0; i < f->nlinks; i++) link_touch(n, f->links[i], -1, now);
    cs_engine_schedule(e, now + c->latency, on_arrive_trampoline, n, id, 0);
    if (c->on_sent) c->on_sent(e, c->ctx, c->a, c->b);
}
