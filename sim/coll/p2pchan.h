/* SPDX-License-Identifier: MIT */
/*
 * p2pchan.h - NCCL's channel rules for point-to-point operations
 * (all_to_all, send_recv): p2p channel counts, a peer op's split, its
 * step size, and the rate its channels carry (p2pchan.c cites the
 * source). Pure functions of the topology; nothing to free.
 */
#ifndef CS_P2PCHAN_H
#define CS_P2PCHAN_H

#include "coll/topology.h"

/* device.h NCCL_MAX_DEV_WORK_P2P_PER_BATCH: ops a channel runs at once. */
#define CS_P2P_PER_BATCH 8

/* comm->p2pChunkSize, bytes (init.cc computeBuffSizes). */
double cs_p2pchan_chunk_bytes(const cs_topology *t);
/* comm->p2pnChannels (a power of two) and comm->p2pnChannelsPerPeer. */
int cs_p2pchan_count(const cs_topology *t);
int cs_p2pchan_per_peer(const cs_topology *t);
/* nChannels of one peer's op of `bytes` (enqueue.cc addP2pToPlan). */
int cs_p2pchan_op(const cs_topology *t, double bytes);
/* Rate caps of one peer's op of `bytes`, B/s: across nodes (Simple), and
 * over NVLink (Simple) while `rounds` rounds of the rank run at once
 * (INFINITY on a PCIe node). */
double cs_p2pchan_net_cap_Bps(const cs_topology *t, double bytes);
double cs_p2pchan_nvl_cap_Bps(const cs_topology *t, double bytes, long rounds);
/* The copy of an NVLink part's last FIFO step after its send, seconds
 * (0 on a PCIe node or at 0 bytes). */
double cs_p2pchan_nvl_fill_s(const cs_topology *t, double bytes);

#endif
