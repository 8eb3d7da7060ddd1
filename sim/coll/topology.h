/* SPDX-License-Identifier: MIT */
/*
 * topology.h - a cluster plus a rank layout: which ranks share a node, the
 * effective bandwidth of each link class, and the physical links the
 * discrete-event engine instantiates.
 *
 * Rank placement: ranks fill nodes in order (rank r on node r / ppn when
 * every node holds ppn ranks); with --nodes K and N ranks not divisible by
 * K, the first N mod K nodes hold one extra rank. Link classes:
 *   port   - a GPU's fabric port, one per direction (NVSwitch/NVLink/PCIe),
 *            capacity intra.bw x intra.efficiency;
 *   nic    - a node's NICs, one per direction, capacity per NIC
 *            inter.efficiency x min(nic_bw, inter.pcie), the node's sum
 *            capped by its ranks' own PCIe links (topology.c says why,
 *            from NCCL's topology search);
 *   uplink - for fat-trees, a node's share of the core: that sum /
 *            oversubscription (absent when rail-optimized or
 *            oversubscription is 1).
 * cs_topology is a value type; it embeds a copy of the cluster.
 */
#ifndef CS_TOPOLOGY_H
#define CS_TOPOLOGY_H

#include "coll/cluster.h"
#include "base/error.h"

typedef struct cs_topology {
    cs_cluster cluster;
    int ranks;
    int nodes;            /* NCCL's nodes: trays sharing an NVLink domain
                           * (intra.domain_size) are one */
    int trays;            /* the nodes as given, before domains merge them */
    int ppn_max;          /* ranks on the fullest node */
    int uniform;          /* every node holds the same number of ranks */
    cs_hw intra_hw;       /* NVLink or PCI (NCCL's latency row) */
    cs_arch arch;
    double port_Bps;      /* effective per GPU per direction */
    double nic_Bps;       /* effective per NIC per direction (PCIe-capped) */
    double node_net_Bps;  /* effective per node: NICs, GPU links' cap and core
                           * taper applied; the node with the fewest ranks */
    double gpu_net_Bps;   /* one GPU's NIC path: its local NICs' share of the
                           * node's, capped by its PCIe link */
    int heterogeneous;    /* DES-only overrides or stragglers present */
} cs_topology;

/* Lays out `ranks` ranks on `nodes` nodes of cluster c. ranks <= 0 and
 * nodes <= 0 mean "not given": ranks alone fills nodes in order; nodes
 * alone takes every GPU of each node; neither takes the cluster's size.
 * Returns 0, or CS_EINVAL with d naming the conflict (too many ranks per
 * node, fewer ranks than nodes, overrides that name absent ranks, ...). */
int cs_topology_build(const cs_cluster *c, int ranks, int nodes, cs_topology *out,
                      cs_diag *d);
/* With intra.domain_size above gpus_per_node, `nodes` counts trays and
 * the trays of one NVLink domain become one node (NCCL's MNNVL clique):
 * out->cluster is then that node's cluster (gpus_per_node and
 * nics_per_node of the domain's trays, no domain_size), out->trays the
 * trays. */

/* What one NIC of line rate line_Bps delivers per direction on cluster
 * c: inter.efficiency x min(line_Bps, inter.pcie) (the line alone when
 * inter.pcie is unset). */
double cs_topology_nic_rate_Bps(const cs_cluster *c, double line_Bps);
/* Node `node`'s network per direction with the des.links overrides
 * applied: its NICs' sum capped by its ranks' PCIe links, over the core
 * taper; and one GPU's NIC path there (as gpu_net_Bps). O(NICs x
 * overrides). */
double cs_topology_net_Bps(const cs_topology *t, int node);
double cs_topology_gpu_net_Bps(const cs_topology *t, int node);

/* Node of a rank and its index within the node. */
int cs_topology_node_of(const cs_topology *t, int rank);
int cs_topology_local_of(const cs_topology *t, int rank);
/* Ranks placed on node k. */
int cs_topology_ranks_on(const cs_topology *t, int node);

#endif
