/* SPDX-License-Identifier: MIT */
/*
 * maxplus.c - the ring and chain recurrences (see maxplus.h).
 *
 * Ring: per step one pass over the ranks; the departures D[r] of the step
 * and the arrivals A[r] (at r, of its predecessor's step) are kept, and
 * the new arrivals go to a second array that is swapped in, so a pass
 * reads only the previous step. Chain: per chunk one pass down the chain,
 * the chunk's arrival carried from rank to rank. The max is the engine's
 * choice of whichever of the two events ran last; equal times are the same
 * time either way.
 */
#include "coll/maxplus.h"

#include <math.h>
#include <stdlib.h>

#include "base/error.h"

static inline double later(double x, double y) { return x > y ? x : y; }

double cs_maxplus_ring(const cs_maxplus_hop *hops, int n, long steps, unsigned long long *events)
{
    CS_ASSERT(n >= 1 && steps >= 1);
    double *m = cs_xmalloc((size_t)5 * (size_t)n * sizeof *m);
    double *q = m, *lat = m + n, *dep = m + 2 * (size_t)n, *arr = m + 3 * (size_t)n,
           *next = m + 4 * (size_t)n;
    for (int r = 0; r < n; r++) {
        q[r] = hops[r].send_s;
        lat[r] = hops[r].lat_s;
        dep[r] = hops[r].start_s + q[r]; /* step 0 leaves at the start */
    }
    for (int r = 0; r < n; r++) arr[(r + 1) % n] = dep[r] + lat[r];
    for (long k = 1; k < steps; k++) {
        for (int r = 0; r < n - 1; r++) {
            double d = later(dep[r], arr[r]) + q[r];
            dep[r] = d;
            next[r + 1] = d + lat[r];
        }
        double d = later(dep[n - 1], arr[n - 1]) + q[n - 1];
        dep[n - 1] = d;
        next[0] = d + lat[n - 1];
        double *t = arr;
        arr = next;
        next = t;
    }
    double done = 0;
    for (int r = 0; r < n; r++) done = later(done, arr[r]);
    free(m);
    *events = (unsigned long long)n + 2ull * (unsigned long long)n * (unsigned long long)steps;
    return done;
}

double cs_maxplus_chain(const cs_maxplus_hop *hops, int n, long chunks,
                        unsigned long long *events)
{
    CS_ASSERT(n >= 2 && chunks >= 1);
    int senders = n - 1;
    double *m = cs_xmalloc((size_t)3 * (size_t)senders * sizeof *m);
    double *q = m, *lat = m + senders, *dep = m + 2 * (size_t)senders;
    for (int r = 0; r < senders; r++) {
        q[r] = hops[r].send_s;
        lat[r] = hops[r].lat_s;
        dep[r] = hops[r].start_s; /* chunk 0 waits for the start, not a departure */
    }
    double arr = 0;
    for (long k = 0; k < chunks; k++) {
        double a = -INFINITY; /* rank 0 holds every chunk */
        for (int r = 0; r < senders; r++) {
            double d = later(dep[r], a) + q[r];
            dep[r] = d;
            a = d + lat[r];
        }
        arr = a;
    }
    free(m);
    *events = (unsigned long long)n + 2ull * (unsigned long long)senders * (unsigned long long)chunks;
    return arr;
}
