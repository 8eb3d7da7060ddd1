/* SPDX-License-Identifier: MIT */
/*
 * treechain.c - a node's chain run by its own event loop (see treechain.h).
 *
 * Hops are named by their sender: up, vertex i >= 1 sends to i - 1; down,
 * i <= m - 2 sends to i + 1. Pending events are the vertices' starts, the
 * head's next entering chunk per tree (down), each hop's flows'
 * completions and each hop's arrivals in flight per tree (first in, first
 * out: a tree's chunks leave a hop one after another); the loop runs the
 * least (time, sequence) of them. What each handler does, and in what
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
 * The scan is O(5m) per event; m is a node's GPU count (8 on a DGX).
 */
#include "coll/treechain.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/error.h"
#include "coll/network.h"

typedef struct cflow {
    int active;
    double remaining, rate, last_t, done_t;
    uint64_t seq; /* of its pending completion */
} cflow;

typedef struct chain {
    const cs_treechain *c;
    int m;
    long C;
    cflow *flow;           /* [sender][tree] */
    char *busy;            /* [sender][tree] */
    long *sent, *recv;     /* [vertex][tree]: chunks sent on its hop, received */
    char *started, *start_pending;
    uint64_t *start_seq;   /* [vertex] */
    double *arr_t;         /* [sender][tree][chunk]: arrivals in flight */
    uint64_t *arr_seq;
    long *arr_head, *arr_tail; /* [sender][tree] */
    long enter_next[2];
    uint64_t enter_seq[2];
    const double *in;
    double *out;
    uint64_t seq;
    double done;
} chain;

enum { EV_NONE, EV_START, EV_ENTER, EV_DONE, EV_ARRIVE };

/* The rate of a flow from sender i while its hop carries n flows. */
static double hop_rate(const chain *s, int i, int n)
{
    int r = s->c->up ? i - 1 : i + 1;
    double share[2] = {s->c->port_Bps[i] / n, s->c->port_Bps[r] / n};
    return cs_network_solo_rate(share, 2, s->c->factor[i], s->c->cap_Bps[i]);
}

/* network.c flow_update, for an active flow with a pending completion */
static void touch(chain *s, cflow *f, double rate, double now)
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
    f->seq = ++s->seq;
}

static void start_flow(chain *s, int i, int w, double now)
{
    cflow *f = &s->flow[2 * i + w], *o = &s->flow[2 * i + 1 - w];
    double r = hop_rate(s, i, o->active ? 2 : 1);
    *f = (cflow){.active = 1, .remaining = s->c->chunk_bytes, .rate = r, .last_t = now,
                 .done_t = now + s->c->chunk_bytes / r, .seq = ++s->seq};
    if (o->active) touch(s, o, r, now);
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
    if (o->active) touch(s, o, hop_rate(s, i, 1), now);
    int k = 2 * i + w;
    s->arr_t[(size_t)k * s->C + s->arr_tail[k]] = now + s->c->lat_s;
    s->arr_seq[(size_t)k * s->C + s->arr_tail[k]++] = ++s->seq;
    s->busy[k] = 0;
    pump(s, i, w, now);
}

static int earlier(double t, uint64_t q, double bt, uint64_t bq)
{
    return t < bt || (t == bt && q < bq);
}

/* The least pending event: its kind, vertex (or sender) and tree. */
static int next_event(const chain *s, int *vi, int *vw, double *vt)
{
    int kind = EV_NONE;
    double bt = INFINITY;
    uint64_t bq = UINT64_MAX;
#define TAKE(K, T, Q, I, W)                                                                        \
    do {                                                                                           \
        if (earlier((T), (Q), bt, bq)) {                                                           \
            kind = (K);                                                                            \
            bt = (T);                                                                              \
            bq = (Q);                                                                              \
            *vi = (I);                                                                             \
            *vw = (W);                                                                             \
        }                                                                                          \
    } while (0)
    for (int i = 0; i < s->m; i++)
        if (s->start_pending[i]) TAKE(EV_START, s->c->start_s[i], s->start_seq[i], i, 0);
    for (int w = 0; w < 2; w++)
        if (!s->c->up && s->enter_next[w] < s->C)
            TAKE(EV_ENTER, s->in[(size_t)w * s->C + s->enter_next[w]], s->enter_seq[w], 0, w);
    for (int k = 0; k < 2 * s->m; k++) {
        if (s->flow[k].active) TAKE(EV_DONE, s->flow[k].done_t, s->flow[k].seq, k / 2, k % 2);
        if (s->arr_head[k] < s->arr_tail[k]) {
            size_t a = (size_t)k * s->C + s->arr_head[k];
            TAKE(EV_ARRIVE, s->arr_t[a], s->arr_seq[a], k / 2, k % 2);
        }
    }
#undef TAKE
    *vt = bt;
    return kind;
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
    s.start_pending = cs_xcalloc((size_t)m, 1);
    s.start_seq = cs_xcalloc((size_t)m, sizeof *s.start_seq);
    s.arr_t = cs_xmalloc(k2 * (size_t)C * sizeof *s.arr_t);
    s.arr_seq = cs_xmalloc(k2 * (size_t)C * sizeof *s.arr_seq);
    s.arr_head = cs_xcalloc(k2, sizeof *s.arr_head);
    s.arr_tail = cs_xcalloc(k2, sizeof *s.arr_tail);
    for (int i = 0; i < m; i++) { /* treepipe.c's part_run: starts, then entering chunks */
        s.start_pending[i] = 1;
        s.start_seq[i] = ++s.seq;
    }
    for (int w = 0; w < 2; w++) s.enter_seq[w] = ++s.seq;
    int i, w;
    double now;
    for (int kind; (kind = next_event(&s, &i, &w, &now)) != EV_NONE;) {
        switch (kind) {
        case EV_START:
            s.start_pending[i] = 0;
            s.started[i] = 1;
            pump(&s, i, 0, now);
            pump(&s, i, 1, now);
            break;
        case EV_ENTER:
            s.enter_next[w]++;
            arrive(&s, 0, w, now);
            s.enter_seq[w] = ++s.seq;
            break;
        case EV_DONE: on_done(&s, i, w, now); break;
        default: /* EV_ARRIVE */
            s.arr_head[2 * i + w]++;
            arrive(&s, c->up ? i - 1 : i + 1, w, now);
            break;
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
    free(s.start_pending);
    free(s.start_seq);
    free(s.arr_t);
    free(s.arr_seq);
    free(s.arr_head);
    free(s.arr_tail);
    return s.done;
}
