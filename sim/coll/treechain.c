/* SPDX-License-Identifier: MIT */
/*
 * treechain.c - a node's chain run by its own event loop (see treechain.h).
 *
 * Hops are named by their sender: up, vertex i >= 1 sends to i - 1; down,
 * i <= m - 2 sends to i + 1. Pending events (the vertices' starts, the
 * head's next entering chunk per tree (down), the flows' completions, the
 * arrivals in flight) sit in a binary heap by (time, sequence); a moved
 * completion is pushed again with its new sequence and the old entry is
 * dropped when popped (its flow's sequence has moved on). What each handler does, and in what
 * order it schedules, is network.c's and treepipe.c's:
 *   start: the rank pumps tree 0, then tree 1;
 *   entering chunk: the head holds it, pumps, then the next one is
 *     scheduled;
 *   a flow starts: its completion is scheduled at the rate of the hop's
 *     flows counted with it, then the hop's other flow is brought up to
 *     date (network.c flow_update: its bytes counted at the old rate, its
 *     completion moved only if the rate changed);
 *   a completion: the other flow is brought up to date at the rate of one,
 *     the arrival is scheduled, then the sender pumps that tree;
 *   an arrival: the receiver holds one more chunk, pumps that tree.
 * O(log pending) per event; pending is O(m) (a node's GPU count) plus the
 * arrivals in flight.
 */
#include "coll/treechain.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/error.h"
#include "coll/network.h"

typedef struct cflow {
    int active;
    double remaining, rate, last_t, done_t;
    uint64_t seq; /* of its pending completion */
} cflow;

/* A pending event: (time, sequence) orders it; what = kind << 24 |
 * vertex << 1 | tree. A completion is stale once its flow's seq moved. */
typedef struct cev {
    double t;
    uint64_t seq;
    int32_t what;
} cev;

typedef struct chain {
    const cs_treechain *c;
    int m;
    long C;
    cflow *flow;        /* [sender][tree] */
    char *busy;         /* [sender][tree] */
    long *sent, *recv;  /* [vertex][tree]: chunks sent on its hop, received */
    double *rate;       /* [sender][flows - 1]: its hop's rate with one, two flows */
    char *started;      /* [vertex] */
    cev *heap;          /* binary min-heap of pending events */
    size_t hn, hcap;
    long enter_next[2]; /* the head's next entering chunk per tree */
    const double *in;
    double *out;
    uint64_t seq;
    double done;
} chain;

enum { EV_START = 1, EV_ENTER, EV_DONE, EV_ARRIVE };

static int before(const cev *x, const cev *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

/* Schedules an event at t with the next sequence number; returns it. */
static uint64_t push(chain *s, double t, int kind, int i, int w)
{
    if (s->hn == s->hcap) {
        s->hcap = s->hcap ? 2 * s->hcap : 64;
        s->heap = cs_xrealloc(s->heap, s->hcap * sizeof *s->heap);
    }
    cev e = {.t = t, .seq = ++s->seq, .what = kind << 24 | i << 1 | w};
    size_t k = s->hn++;
    while (k > 0 && before(&e, &s->heap[(k - 1) / 2])) {
        s->heap[k] = s->heap[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    s->heap[k] = e;
    return e.seq;
}

static cev pop(chain *s)
{
    cev top = s->heap[0], last = s->heap[--s->hn];
    size_t k = 0;
    for (;;) {
        size_t c = 2 * k + 1;
        if (c >= s->hn) break;
        if (c + 1 < s->hn && before(&s->heap[c + 1], &s->heap[c])) c++;
        if (!before(&s->heap[c], &last)) break;
        s->heap[k] = s->heap[c];
        k = c;
    }
    if (s->hn) s->heap[k] = last;
    return top;
}

/* The rate of a flow from sender i while its hop carries n flows. */
static double hop_rate(const cs_treechain *c, int i, int n)
{
    int r = c->up ? i - 1 : i + 1;
    double share[2] = {c->port_Bps[i] / n, c->port_Bps[r] / n};
    return cs_network_solo_rate(share, 2, c->factor[i], c->cap_Bps[i]);
}

/* network.c flow_update, for an active flow with a pending completion */
static void touch(chain *s, cflow *f, int i, int w, double rate, double now)
{
    if (f->last_t != now) {
        double sent = f->rate * (now - f->last_t);
        if (f->rate > 0) f->remaining -= sent;
        if (f->remaining < 0) f->remaining = 0;
        f->last_t = now;
    }
    if (rate == f->rate) return; /* completion still valid */
    f->rate = rate;
    f->done_t = now + f->remaining / rate;
    f->seq = push(s, f->done_t, EV_DONE, i, w);
}

static void start_flow(chain *s, int i, int w, double now)
{
    cflow *f = &s->flow[2 * i + w], *o = &s->flow[2 * i + 1 - w];
    double r = s->rate[2 * i + o->active];
    *f = (cflow){.active = 1, .remaining = s->c->chunk_bytes, .rate = r, .last_t = now,
                 .done_t = now + s->c->chunk_bytes / r};
    f->seq = push(s, f->done_t, EV_DONE, i, w);
    if (o->active) touch(s, o, i, 1 - w, r, now);
}

static void pump(chain *s, int i, int w, double now)
{
    if (!s->started[i]) return;
    int k = 2 * i + w;
    int sends = s->c->up ? i >= 1 : i <= s->m - 2;
    long ready = s->c->up && i == s->m - 1 ? s->C : s->recv[k];
    if (!sends || s->busy[k] || s->sent[k] >= ready) return;
    s->busy[k] = 1;
    s->sent[k]++;
    start_flow(s, i, w, now);
}

/* Vertex j holds one more chunk of tree w. */
static void arrive(chain *s, int j, int w, double now)
{
    long got = ++s->recv[2 * j + w];
    if (s->c->up && j == 0) s->out[(size_t)w * s->C + got - 1] = now;
    if (got == s->C && (!s->c->up || j == 0) && now > s->done) s->done = now;
    pump(s, j, w, now);
}

static void on_done(chain *s, int i, int w, double now)
{
    cflow *f = &s->flow[2 * i + w], *o = &s->flow[2 * i + 1 - w];
    f->active = 0;
    if (o->active) touch(s, o, i, 1 - w, s->rate[2 * i], now);
    push(s, now + s->c->lat_s, EV_ARRIVE, i, w);
    s->busy[2 * i + w] = 0;
    pump(s, i, w, now);
}

double cs_treechain_run(const cs_treechain *c, const double *in, double *out)
{
    int m = c->ranks;
    long C = c->chunks;
    CS_ASSERT(m >= 2 && C >= 1 && (c->up ? out != NULL : in != NULL));
    size_t k2 = 2 * (size_t)m;
    chain s = {.c = c, .m = m, .C = C, .in = in, .out = out};
    s.flow = cs_xcalloc(k2, sizeof *s.flow);
    s.busy = cs_xcalloc(k2, 1);
    s.sent = cs_xcalloc(k2, sizeof *s.sent);
    s.recv = cs_xcalloc(k2, sizeof *s.recv);
    s.started = cs_xcalloc((size_t)m, 1);
    s.rate = cs_xcalloc(k2, sizeof *s.rate);
    for (int i = c->up ? 1 : 0; i < (c->up ? m : m - 1); i++)
        for (int n = 1; n <= 2; n++) s.rate[2 * i + n - 1] = hop_rate(c, i, n);
    /* treepipe.c's part_run: the starts, then the entering chunks */
    for (int i = 0; i < m; i++) push(&s, c->start_s[i], EV_START, i, 0);
    if (!c->up)
        for (int w = 0; w < 2; w++) push(&s, in[(size_t)w * C], EV_ENTER, 0, w);
    while (s.hn) {
        cev e = pop(&s);
        int kind = e.what >> 24, i = (e.what >> 1) & 0x7fffff, w = e.what & 1;
        double now = e.t;
        switch (kind) {
        case EV_START:
            s.started[i] = 1;
            pump(&s, i, 0, now);
            pump(&s, i, 1, now);
            break;
        case EV_ENTER:
            arrive(&s, 0, w, now);
            if (++s.enter_next[w] < C) push(&s, in[(size_t)w * C + s.enter_next[w]], EV_ENTER, 0, w);
            break;
        case EV_DONE:
            if (s.flow[2 * i + w].active && s.flow[2 * i + w].seq == e.seq) on_done(&s, i, w, now);
            break;
        default: arrive(&s, c->up ? i - 1 : i + 1, w, now); /* EV_ARRIVE */
        }
    }
    for (int v = 0; v < m; v++)
        for (int t = 0; t < 2; t++)
            if ((c->up ? v == 0 : 1) && s.recv[2 * v + t] != C)
                CS_PANIC("tree chain stalled: tree %d vertex %d", t, v);
    free(s.flow);
    free(s.busy);
    free(s.sent);
    free(s.recv);
    free(s.started);
    free(s.rate);
    free(s.heap);
    return s.done;
}
