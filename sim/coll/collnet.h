/* SPDX-License-Identifier: MIT */
/*
 * collnet.h - internal: what NCCL's two CollNet all_reduce algorithms
 * (CollNet Direct, CollNet Chain: in-network reduction by the switches,
 * NVIDIA SHARP) share, for algo_collnet_direct.c and algo_collnet_chain.c.
 *
 * Both move a node's data through the node (a local reduction), send it
 * once to the switch, receive the reduced result once and spread it
 * through the node; they differ in how the node's GPUs reach the network
 * (every GPU to a head per NIC, or a chain through all of them), which
 * shows in NCCL's latencies, payload factor, chunks and channels: the
 * shape (collnet.c says the model and its sources).
 */
#ifndef CS_COLLNET_H
#define CS_COLLNET_H

#include "coll/algo.h"

/* NCCL's constants of the CollNet rows (NVIDIA/nccl at v2.20.3-1):
 * src/graph/tuning.cc ncclTopoTuneModel sets maxThreads to NCCL_MAX_NTHREADS
 * (src/include/device.h: 640) and threadThresholds to 512 for both; the
 * kernels serve at most NCCL_MAX_DIRECT_ARITY + 1 = 8 GPUs per node
 * (src/init.cc: a node with more local ranks disables CollNet); Direct
 * adds 0.4 us of "arity serialization" per local peer to its latency. */
#define CS_NCCL_MAX_NTHREADS 640
#define CS_NCCL_COLLNET_THREAD_THRESHOLD 512
#define CS_NCCL_COLLNET_MAX_LOCAL 8
#define CS_NCCL_COLLNET_ARITY_LAT_S 0.4e-6
/* src/enqueue.cc computeCollChunkInfo: CollNet Chain's chunk is at most
 * 256 KiB (Direct's is the Simple step, the cluster's chunk.simple). */
#define CS_NCCL_COLLNET_CHAIN_MAX_CHUNK_BYTES (256.0 * 1024)

/* The part of the pipeline that differs by algorithm. */
typedef struct cs__collnet_shape {
    double unit_bytes;  /* per channel: what one pipeline step sends to the
                         * switch (Direct: one chunk per head) */
    double local_lat_s; /* one trip through the node (reduce, or spread) */
} cs__collnet_shape;

/* GPUs per node as NCCL counts them for latency (nRanks / nNodes). */
int cs__collnet_ppn(const cs_topology *t);
/* Heads per node (CollNet Direct's GPUs that own a NIC): one per NIC, at
 * most one per GPU, at least one. */
int cs__collnet_heads(const cs_topology *t);
/* Whether the CollNet kernels serve t (at most 8 GPUs on every node). */
int cs__collnet_fits(const cs_topology *t);

/* src/enqueue.cc computeCollChunkInfo's halving of a CollNet chunk: c
 * halved while bytes / (per x c) < deep[0] above 128 KiB, < deep[1] above
 * 64 KiB, < deep[2] above 32 KiB (per: the parts the data is cut into,
 * deep[]: the row's depth multiples). */
double cs__collnet_chunk(double bytes, double per, double c, const double deep[3]);

/* Closed-form time and discrete-event run of the pipeline (collnet.c). */
double cs__collnet_closed_form(const cs_topology *t, const cs_coll_params *p,
                               const cs__collnet_shape *s);
int cs__collnet_simulate(const cs_topology *t, const cs_coll_params *p, const cs__collnet_shape *s,
                         double *time_s, unsigned long long *events);

#endif
