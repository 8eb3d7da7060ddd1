/* SPDX-License-Identifier: MIT */
/*
 * deslinks.h - what every algorithm's discrete-event schedule reads from
 * the topology: the per-channel capacity of each physical link it builds,
 * with the DES-only link overrides (des.links) applied, and the stragglers
 * (des.stragglers).
 *
 * A schedule simulates one channel standing for all of them, so a link
 * holds 1/channels of its physical capacity. An override replaces a link's
 * line rate (then times the class's efficiency, like the default). Pure
 * functions of the topology, O(overrides) or O(stragglers) each.
 */
#ifndef CS_DESLINKS_H
#define CS_DESLINKS_H

#include "coll/topology.h"

/* Per-channel capacity of GPU `local`'s fabric port on node `node`. */
double cs_deslinks_port_ch_Bps(const cs_topology *t, int node, int local);
/* Per-channel capacity of node `node`'s network: cs_topology_net_Bps
 * (its NICs, overrides applied, capped by its ranks' PCIe links, over the
 * fat-tree core taper) / channels. */
double cs_deslinks_net_ch_Bps(const cs_topology *t, int node);
/* Straggler slowdown (>= 1; 1 when rank is no straggler) and start delay
 * (0 when none) of a rank. */
double cs_deslinks_slowdown(const cs_topology *t, int rank);
double cs_deslinks_delay_s(const cs_topology *t, int rank);

#endif
