/* SPDX-License-Identifier: MIT */
/*
 * engine.h - the discrete-event core: a simulation clock and an event queue.
 *
 * Events are ordered by (time, sequence): the sequence number only grows, so
 * events at equal times run first-in-first-out and every run repeats exactly
 * (the libuv timer-heap rule; ROSS orders by time then id for the same
 * reason). The queue is a min-heap of distinct times, each holding its
 * events first-in-first-out (engine.c): O(1) push and pop at a time already
 * pending, O(log distinct times) otherwise.
 * Models plug in as handler functions; the engine knows nothing about
 * networks or collectives. Owns no global state.
 */
#ifndef CS_ENGINE_H
#define CS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_engine cs_engine;

/* A handler receives the engine, its context and two integer payloads. */
typedef void (*cs_event_fn)(cs_engine *e, void *ctx, int64_t a, int64_t b);

/* Creates an engine at time 0 with an empty queue. Caller frees with
 * cs_engine_free. Never returns NULL (aborts on out-of-memory). */
cs_engine *cs_engine_new(void);
void cs_engine_free(cs_engine *e);

/* Schedules fn(ctx, a, b) at absolute time t_s (>= now; earlier panics). */
void cs_engine_schedule(cs_engine *e, double t_s, cs_event_fn fn, void *ctx,
                        int64_t a, int64_t b);

/* A scheduled event that can be moved (cs_engine_reschedule) until it
 * runs; valid from cs_engine_schedule_handle until the event starts. */
typedef int32_t cs_event_handle;

/* As cs_engine_schedule, returning a handle. */
cs_event_handle cs_engine_schedule_handle(cs_engine *e, double t_s, cs_event_fn fn, void *ctx,
                                          int64_t a, int64_t b);
/* Moves a pending event to time t_s (>= now) with payload b. It is ordered
 * as if scheduled now: the same order a cancel-and-schedule would give, in
 * O(log n), without leaving a superseded event in the queue. */
void cs_engine_reschedule(cs_engine *e, cs_event_handle h, double t_s, int64_t b);

/* Runs until the queue is empty; returns the time of the last event. */
double cs_engine_run(cs_engine *e);
/* Pops and runs one event; returns 0 if the queue was empty, else 1. */
int cs_engine_step(cs_engine *e);

double cs_engine_now(const cs_engine *e);
size_t cs_engine_pending(const cs_engine *e);
uint64_t cs_engine_events_run(const cs_engine *e);

/* Verifies the queue's invariants (for tests); returns 1 if they hold. */
int cs_engine_check(const cs_engine *e);

#endif
