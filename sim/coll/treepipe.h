/* SPDX-License-Identifier: MIT */
/*
 * treepipe.h - the discrete-event run of NCCL's double binary tree
 * pipeline (algo_tree.c's schedule: chunks reduced up both trees and
 * broadcast down them, each tree's hops flows of the fluid network model,
 * coll/network.h), cut into the parts that share no link.
 *
 * A node's ranks form a chain under its head; the chain's hops use the GPU
 * ports' lanes and nothing else does, the heads' hops use the node
 * networks' lanes and nothing else does, and up and down use separate
 * lanes. So the run falls into three kinds of parts, each an event run of
 * its own, joined only by the times at which chunks pass between them:
 *   1. each node's chain reduced up to its head (both trees; no input);
 *   2. the heads' tree: up and down across nodes, each head's chain
 *      chunks entering at the times part 1 delivered them; the times at
 *      which each head holds each reduced chunk are recorded;
 *   3. each node's chain broadcast down from its head, the head's chunks
 *      entering at the times part 2 recorded.
 * Parts 1 and 3 are pure functions of their inputs (the node's rank
 * count, its ranks' lanes, slowdowns and start delays, and for part 3 the
 * entering times), so nodes with equal inputs are run once: on a uniform
 * cluster part 1 runs once and part 3 once per distinct set of times the
 * heads see (18 of 512 nodes at 4096 ranks). Parts 1 and 3 run on
 * coll/treechain.h's loop, part 2 on the engine and the network.
 * A flow's floating-point operations depend only on the flows of its own
 * lanes, so a time is the whole run's as long as the events at each
 * instant run in the same order. Within a part they do; across a boundary
 * (a chunk leaving a chain for the heads' tree, or entering a chain) the
 * entering chunk takes its place by when the part scheduled or counted
 * it, not when the whole run would have, and where that reorders it with a
 * flow completing at the same instant the flow's bytes left (bytes - rate
 * x elapsed, not exactly 0) move its completion by a few ulps. This is the
 * one difference by design: tests/test-treepipe.c runs random clusters
 * against cs_treepipe_run_whole (the event run over every rank at once,
 * kept as the reference): 197 of 200 bit for bit, the rest within 1e-15
 * relative; test-desref's pinned runs and the golden corpus are unchanged.
 * O(events of the heads' tree + distinct chains) instead of O(every
 * rank's events).
 * No global state.
 */
#ifndef CS_TREEPIPE_H
#define CS_TREEPIPE_H

#include "coll/topology.h"

/* What a run needs besides the topology (algo_tree.c fills it in). */
typedef struct cs_treepipe {
    const cs_topology *t;
    long chunks;        /* per channel, >= 1 */
    double chunk_bytes; /* per chunk */
    double factor;      /* a flow's factor before its sender's slowdown */
    double cap_Bps;     /* a flow's cap before its sender's slowdown */
    double intra_lat_s, inter_lat_s;
    double ch_scale;    /* lane capacity = cs_deslinks' per-channel share x ch_scale */
} cs_treepipe;

/* The time at which the last rank holds every reduced chunk, from the
 * parts (see above); *events is what the whole event run counts:
 * ranks + 8 (ranks - 1) chunks. t->ranks >= 2. */
double cs_treepipe_run(const cs_treepipe *q, unsigned long long *events);

/* The same, by one event run over every rank (the reference the parts are
 * tested against; O(ranks x chunks) events). */
double cs_treepipe_run_whole(const cs_treepipe *q, unsigned long long *events);

#endif
