/* SPDX-License-Identifier: MIT */
/*
 * treechain.h - one node's chain in NCCL's double binary tree (its ranks
 * in a line under the head, both trees' chunks on the same hops), reduced
 * up to the head or broadcast down from it, by a small event loop of its
 * own instead of the engine and the network.
 *
 * A chain hop's two lanes (the sender's port out lane, the receiver's in
 * lane) carry that hop's flows and nothing else: one per tree at most. So
 * the chain needs no link tables: each hop keeps its two flows, with the
 * fluid model's arithmetic (coll/network.h) step for step, and the loop
 * runs the events the engine would run for them (starts, completions,
 * arrivals, the head's entering chunks) in the engine's (time, sequence)
 * order: every event takes the next sequence number when it is scheduled
 * or moved, as in base/engine.h, in the order network.c and the tree's
 * handlers schedule them. So its times are the engine's bit for bit
 * (tests/test-treepipe.c). O(events log pending), cache-resident; no
 * global state.
 */
#ifndef CS_TREECHAIN_H
#define CS_TREECHAIN_H

typedef struct cs_treechain {
    int ranks;              /* m >= 2; vertex 0 is the head */
    int up;                 /* 1: reduce up to vertex 0; 0: broadcast down from it */
    long chunks;            /* per tree, >= 1 */
    double chunk_bytes;
    double lat_s;           /* a hop's latency */
    const double *port_Bps; /* per vertex: its port lanes' capacity */
    const double *factor;   /* per vertex, as a sender: its flows' factor and cap */
    const double *cap_Bps;
    const double *start_s;  /* per vertex: its start delay */
} cs_treechain;

/* Runs the chain. Up: vertex m-1 holds every chunk from the start, and
 * out[w chunks + c] (caller's, 2 chunks) gets when vertex 0 holds chunk c
 * of tree w. Down: vertex 0 holds it at in[w chunks + c] (nondecreasing in
 * c); out is not written (may be NULL). Returns the last arrival at a
 * vertex that then holds every chunk of a tree. */
double cs_treechain_run(const cs_treechain *c, const double *in, double *out);

#endif
