/* SPDX-License-Identifier: MIT */
/*
 * engine.c - binary min-heap of events keyed by (time, sequence).
 *
 * Invariant: for every index i > 0, key(parent(i)) <= key(i), where keys
 * compare by time then by sequence. The sequence counter only increases,
 * so ties break in scheduling order and runs are deterministic.
 * Complexity: push O(log n), pop O(log n); storage grows by doubling.
 * Handles: every event owns a slot whose pos[] entry tracks its heap index,
 * so a pending event can be moved in place (cs_engine_reschedule) instead
 * of leaving a superseded copy to be popped and ignored; slots are reused
 * through a free list once their event has run.
 */
#include "base/engine.h"

#include <stdlib.h>

#include "base/error.h"

/* Heap entries are small (key + slot); the payload lives in the slot table,
 * so sifting moves 24 bytes instead of the whole event. */
typedef struct event {
    double t;
    uint64_t seq;
    int32_t slot; /* handle: index into pos[] and payload[] */
} event;

typedef struct payload {
    cs_event_fn fn;
    void *ctx;
    int64_t a, b;
} payload;

struct cs_engine {
    event *heap;
    size_t n, cap;
    int32_t *pos;      /* slot -> heap index; free slots chain as -2 - next */
    payload *data;     /* slot -> what to run */
    int32_t nslots, slot_cap, free_slot;
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
    e->free_slot = -1;
    e->cap = 64;
    e->heap = cs_xmalloc(e->cap * sizeof *e->heap);
    return e;
}

void cs_engine_free(cs_engine *e)
{
    if (!e) return;
    free(e->heap);
    free(e->pos);
    free(e->data);
    free(e);
}

static void place(cs_engine *e, size_t i, event ev)
{
    e->heap[i] = ev;
    e->pos[ev.slot] = (int32_t)i;
}

static void sift_up(cs_engine *e, size_t i, event ev)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&ev, &e->heap[p])) break;
        place(e, i, e->heap[p]);
        i = p;
    }
    place(e, i, ev);
}

static void sift_down(cs_engine *e, size_t i, event ev)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const event *best = &ev;
        if (l < e->n && ev_less(&e->heap[l], best)) {
            m = l;
            best = &e->heap[l];
        }
        if (r < e->n && ev_less(&e->heap[r], best)) m = r;
        if (m == i) break;
        place(e, i, e->heap[m]);
        i = m;
    }
    place(e, i, ev);
}

static int32_t slot_alloc(cs_engine *e)
{
    if (e->free_slot >= 0) {
        int32_t s = e->free_slot;
        e->free_slot = -2 - e->pos[s]; /* free list stored as -2 - next */
        return s;
    }
    if (e->nslots == e->slot_cap) {
        e->slot_cap = e->slot_cap ? 2 * e->slot_cap : 64;
        e->pos = cs_xrealloc(e->pos, (size_t)e->slot_cap * sizeof *e->pos);
        e->data = cs_xrealloc(e->data, (size_t)e->slot_cap * sizeof *e->data);
    }
    return e->nslots++;
}

static void slot_free(cs_engine *e, int32_t s)
{
    e->pos[s] = -2 - e->free_slot;
    e->free_slot = s;
}

cs_event_handle cs_engine_schedule_handle(cs_engine *e, double t_s, cs_event_fn fn, void *ctx,
                                          int64_t a, int64_t b)
{
    if (!(t_s >= e->now)) CS_PANIC("event scheduled in the past (%.17g < %.17g)", t_s, e->now);
    if (e->n == e->cap) {
        e->cap *= 2;
        e->heap = cs_xrealloc(e->heap, e->cap * sizeof *e->heap);
    }
    event ev = {t_s, e->next_seq++, slot_alloc(e)};
    e->data[ev.slot] = (payload){fn, ctx, a, b};
    sift_up(e, e->n++, ev);
    return ev.slot;
}

void cs_engine_schedule(cs_engine *e, double t_s, cs_event_fn fn, void *ctx,
                        int64_t a, int64_t b)
{
    cs_engine_schedule_handle(e, t_s, fn, ctx, a, b);
}

void cs_engine_reschedule(cs_engine *e, cs_event_handle h, double t_s, int64_t b)
{
    CS_ASSERT(h >= 0 && h < e->nslots && e->pos[h] >= 0);
    if (!(t_s >= e->now)) CS_PANIC("event rescheduled into the past (%.17g < %.17g)", t_s, e->now);
    size_t i = (size_t)e->pos[h];
    event ev = e->heap[i];
    ev.t = t_s;
    e->data[h].b = b;
    ev.seq = e->next_seq++; /* ordered as if scheduled now */
    /* the new key is never smaller in seq; it may be earlier in time */
    if (i > 0 && ev_less(&ev, &e->heap[(i - 1) / 2]))
        sift_up(e, i, ev);
    else
        sift_down(e, i, ev);
}

static event pop(cs_engine *e)
{
    event top = e->heap[0];
    event last = e->heap[--e->n];
    if (e->n > 0) sift_down(e, 0, last);
    slot_free(e, top.slot);
    return top;
}

int cs_engine_step(cs_engine *e)
{
    if (e->n == 0) return 0;
    payload run = e->data[e->heap[0].slot];
    event ev = pop(e);
    e->now = ev.t;
    e->ran++;
    run.fn(e, run.ctx, run.a, run.b);
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
    for (size_t i = 0; i < e->n; i++)
        if (e->pos[e->heap[i].slot] != (int32_t)i) return 0;
    return 1;
}
