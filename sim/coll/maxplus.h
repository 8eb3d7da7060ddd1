/* SPDX-License-Identifier: MIT */
/*
 * maxplus.h - pipelined schedules in which every link carries one transfer
 * at a time (a ring's or a chain's hops), evaluated by their max-plus
 * recurrence instead of the event queue.
 *
 * When no link is shared, a transfer's rate is fixed when it starts, so
 * the event engine's times are a longest path through the dependency
 * graph: step k at rank r starts at the later of its own step k-1 leaving
 * and its predecessor's step k-1 (ring) or chunk k (chain) arriving,
 *     S[r][k] = max(S[r][k-1] + send[r], S[r-1][k-1] + send[r-1] + lat[r-1]),
 * evaluated in one pass of ranks x steps additions and maxima (Baccelli,
 * Cohen, Olsder & Quadrat 1992, "Synchronization and Linearity", ch. 1's
 * tandem queues). The recurrence performs the event engine's floating-point
 * operations in the same order (start + bytes/rate, + latency, max of the
 * two), so its times equal the engine's bit for bit (tests/test-maxplus.c
 * runs both); the event count reported is the one the engine would run.
 * O(ranks x steps) time, O(ranks) memory; no global state.
 */
#ifndef CS_MAXPLUS_H
#define CS_MAXPLUS_H

/* One rank's hop to its successor. */
typedef struct cs_maxplus_hop {
    double start_s; /* the rank starts sending no earlier (its start delay) */
    double send_s;  /* one message's time on the link: bytes / rate */
    double lat_s;   /* from its last byte leaving to its arrival */
} cs_maxplus_hop;

/* A ring of n >= 1 ranks (one: a rank standing for every node, sending
 * to its own image on the next), rank r sending `steps` >= 1 messages to
 * (r + 1) mod n: step k leaves once r's step k-1 has left and its
 * predecessor's step k-1 has arrived. Returns the last arrival; *events is
 * n starts + 2 events per message, as the event engine counts them. */
double cs_maxplus_ring(const cs_maxplus_hop *hops, int n, long steps, unsigned long long *events);

/* A chain 0 -> 1 -> ... -> n-1 (n >= 2) of `chunks` >= 1 chunks that rank 0
 * holds from the start: rank r < n-1 forwards chunk k once it has arrived
 * and its chunk k-1 has left (hops[n-1] is not read). Returns the arrival of
 * the last chunk at rank n-1; *events as for the ring. */
double cs_maxplus_chain(const cs_maxplus_hop *hops, int n, long chunks,
                        unsigned long long *events);

#endif
