/* SPDX-License-Identifier: MIT */
/*
 * engine.c - binary min-heap of events keyed by (time, sequence).
 *
 * Invariant: for every index i > 0, key(parent(i)) <= key(i), where keys
 * compare by time then by sequence. The sequence counter only increases,
 * so ties break in scheduling order and runs are deterministic.
 * Complexity: push O(log n), pop O(log n); storage grows by doubling.
 */
#include "engine.h"

#include <stdlib.h>

#include "error.h"

typedef struct event {
    double t;
    uint64_t seq;
    cs_event_fn fn;
    void *ctx;
    int64_t a, b;
} event;

struct cs_engine {
    event *heap;
    size_t n, cap;
    uint64_t next_seq;
    uint64_t ran;
    double now;
};

static int ev_less(const event *x, const event *y)
{
    if (x->t != y->t) return x->t < y->t;
    return x->seq < y->seq;
}

cs_engine *cs_engine_new(void)
{
    cs_engine *e = cs_xcalloc(1, sizeof *e);
    e->cap = 64;
    e->heap = cs_xmalloc(e->cap * sizeof *e->heap);
    return e;
}

void cs_engine_free(cs_engine *e)
{
    if (!e) return;
    free(e->heap);
    free(e);
}

void cs_engine_schedule(cs_engine *e, double t_s, cs_event_fn fn, void *ctx,
                        int64_t a, int64_t b)
{
    if (!(t_s >= e->now)) CS_PANIC("event scheduled in the past (%.17g < %.17g)", t_s, e->now);
    if (e->n == e->cap) {
        e->cap *= 2;
        e->heap = cs_xrealloc(e->heap, e->cap * sizeof *e->heap);
    }
    event ev = {t_s, e->next_seq++, fn, ctx, a, b};
    size_t i = e->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&ev, &e->heap[p])) break;
        e->heap[i] = e->heap[p];
        i = p;
    }
    e->heap[i] = ev;
}

static event pop(cs_engine *e)
{
    event top = e->heap[0];
    event last = e->heap[--e->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const event *best = &last;
        if (l < e->n && ev_less(&e->heap[l], best)) {
            m = l;
            best = &e->heap[l];
        }
        if (r < e->n && ev_less(&e->heap[r], best)) m = r;
        if (m == i) break;
        e->heap[i] = e->heap[m];
        i = m;
    }
    if (e->n > 0) e->heap[i] = last;
    return top;
}

int cs_engine_step(cs_engine *e)
{
    if (e->n == 0) return 0;
    event ev = pop(e);
    e->now = ev.t;
    e->ran++;
    ev.fn(e, ev.ctx, ev.a, ev.b);
    return 1;
}

double cs_engine_run(cs_engine *e)
{
    while (cs_engine_step(e)) {
    }
    return e->now;
}

double cs_engine_now(const cs_engine *e) { return e->now; }
size_t cs_engine_pending(const cs_engine *e) { return e->n; }
uint64_t cs_engine_events_run(const cs_engine *e) { return e->ran; }

int cs_engine_check(const cs_engine *e)
{
    for (size_t i = 1; i < e->n; i++)
        if (ev_less(&e->heap[i], &e->heap[(i - 1) / 2])) return 0;
    return 1;
}
