/* SPDX-License-Identifier: MIT */
/*
 * topology.c - rank placement and effective link capacities.
 *
 * Effective capacities are the datasheet line rate times the configured
 * efficiency (e.g. NCCL's 20.6 GB/s usable per 25 GB/s NVLink4 link): see
 * the YAML files in configs/clusters/ for the sources of each preset's
 * numbers.
 *
 * The node's network path follows NCCL's topology model. NCCL gives a
 * GPU-NIC path the bandwidth of its slowest link (src/graph/paths.cc
 * ncclTopoSetPaths: bw = min(path->bw, link->bw) along the path), a PCIe
 * link width x per-lane rate / 80 GB/s (src/graph/topo.cc ncclTopoAddPci,
 * kvDictPciGen: Gen4 x16 24 GB/s, Gen5 x16 48 GB/s) and a NIC its speed
 * / 8000 GB/s (ncclTopoAddNet: HDR 25 GB/s, NDR 50 GB/s); the ring / tree
 * search then reserves each channel's speed on every link of the path it
 * takes (src/graph/search.cc followPath, SUB_ROUND(link->bw, fwBw)), so
 * the NICs one GPU drives share that GPU's own PCIe link. Hence, with
 * P = inter.pcie (each NIC's link and each GPU's; 0 = not limited) and e
 * = inter.efficiency, the fraction of NCCL's path rate delivered:
 *   per NIC   nic  = e x min(nic_bandwidth, P)
 *   per node  net  = min(NICs x nic, ranks on the node x e x P) / taper
 *   per GPU (its local NICs, max(1, NICs / GPUs per node), as point-to-
 *             point reads it) gnet = min(local NICs x nic / taper, e x P).
 * e scales every term, so a fit of it moves the network in every regime
 * (a hard min(line x e, P) would hide e wherever the path binds).
 * With a rank on every GPU the NIC term decides (DGX A100: 8 x min(25,
 * 24) = 192 GB/s at e = 1); with fewer ranks per node than NICs the
 * GPUs' links do (one rank on a DGX H100 node: 47/48 x 48 = 47 GB/s, not
 * 8 NICs' 376). PXN (paths.cc ncclTopoComputePaths, NCCL_PXN_DISABLE)
 * lets a GPU reach a NIC through the NVLink peer local to it, but only a
 * peer in the communicator (topo.cc ncclTopoGetSystem detects this
 * process's GPU and fuses its peers' on the host; ncclTopoAddPci skips a
 * GPU without a rank): that is what makes every NIC of a full node usable
 * and what the per-node sum assumes. Departures: one rate P for the NIC's
 * and the GPU's links; a PCIe switch's uplink to the CPU, which traffic
 * crosses only without GPUDirect RDMA or across sockets, is not modelled;
 * NCCL's per-channel speed steps (search.cc speedArrayInter) are not
 * rounded to. Full nodes (issue 25): NCCL 2.29's ring search
 * (search.cc ncclTopoCompute, ncclTopoSearchCheckNet) first looks for
 * rail-aligned rings (crossNic 0: in and out on the same NIC, the last
 * GPU reaching it over NVLink by PXN), in which every GPU sends one NVLink
 * hop per channel; with 8 GPUs and 8 NICs of 48 GB/s on sm90 that is
 * 8 x 48 = 384 GB/s per GPU against NCCL's 18 x 20.6 = 370.8, so only 7
 * such channels fit, and the crossNic pass (8 x 48, even channels in on
 * one NIC and out on another, 7 NVLink hops a GPU) wins, unless the
 * search's time budget (NCCL_SEARCH_GLOBAL_TIMEOUT) ends first. With 1, 2 or 4
 * GPUs a node the aligned rings fit (k x 48 <= 370.8). So a full node's
 * ring sends cross-rail traffic, whose cost is the fabric's (spine
 * oversubscription between rails), which a cluster YAML does not state
 * (`topology: rail-optimized` is not priced; `oversubscription` tapers
 * every node alike); the 10-node runs with 1, 2 and 4 GPUs a node
 * (validation/, NCCL 2.29.2) deliver 48.2-48.7 GB/s a NIC at 16 GiB,
 * the model 47.
 */
#include "coll/topology.h"

#include <math.h>
#include <stdlib.h>

static int first_big(const cs_topology *t, int *small, int *extra)
{
    *small = t->ranks / t->nodes;
    *extra = t->ranks % t->nodes;
    return *extra * (*small + 1); /* ranks living on the "+1" nodes */
}

int cs_topology_node_of(const cs_topology *t, int r)
{
    int small, extra;
    int big_ranks = first_big(t, &small, &extra);
    if (r < big_ranks) return r / (small + 1);
    return extra + (r - big_ranks) / small;
}

int cs_topology_local_of(const cs_topology *t, int r)
{
    int small, extra;
    int big_ranks = first_big(t, &small, &extra);
    if (r < big_ranks) return r % (small + 1);
    return (r - big_ranks) % small;
}

int cs_topology_ranks_on(const cs_topology *t, int node)
{
    int small, extra;
    first_big(t, &small, &extra);
    return small + (node < extra ? 1 : 0);
}

/* The fat-tree core taper on a rate the node sends into the network. */
static double tapered(const cs_cluster *c, double net_Bps)
{
    if (c->inter.topology == CS_NET_FAT_TREE && c->inter.oversubscription > 1)
        return net_Bps / c->inter.oversubscription;
    return net_Bps;
}

/* The PCIe path's cap on `links` links' worth, each delivering pcie x
 * efficiency (no cap when unset). */
static double pcie_capped(const cs_cluster *c, double Bps, int links)
{
    double link = c->inter.pcie_Bps * c->inter.efficiency;
    return c->inter.pcie_Bps > 0 ? fmin(Bps, links * link) : Bps;
}

double cs_topology_nic_rate_Bps(const cs_cluster *c, double line_Bps)
{
    return pcie_capped(c, line_Bps * c->inter.efficiency, 1);
}

/* A node's network from its NICs' sum and its ranks. */
static double node_net_Bps(const cs_cluster *c, double nics_Bps, int ranks)
{
    return tapered(c, pcie_capped(c, nics_Bps, ranks));
}

/* One GPU's path from its node's NICs' sum: its local NICs' share over
 * the taper, capped by its own link. */
static double gpu_net_Bps(const cs_cluster *c, double nics_Bps)
{
    int nics = c->inter.nics_per_node, k = nics / c->gpus_per_node;
    if (nics < 1) return 0;
    return pcie_capped(c, tapered(c, nics_Bps) * fmin(1.0, (double)(k > 1 ? k : 1) / nics), 1);
}

/* The sum of node k's NICs' delivered rates, des.links overrides applied. */
static double nics_Bps(const cs_topology *t, int node)
{
    const cs_cluster *c = &t->cluster;
    double sum = 0;
    for (int k = 0; k < c->inter.nics_per_node; k++) {
        double bw = t->nic_Bps;
        for (int i = 0; i < c->n_overrides; i++)
            if (c->overrides[i].is_nic && c->overrides[i].node == node && c->overrides[i].gpu == k)
                bw = cs_topology_nic_rate_Bps(c, c->overrides[i].bw_Bps);
        sum += bw;
    }
    return sum;
}

double cs_topology_net_Bps(const cs_topology *t, int node)
{
    return node_net_Bps(&t->cluster, nics_Bps(t, node), cs_topology_ranks_on(t, node));
}

double cs_topology_gpu_net_Bps(const cs_topology *t, int node)
{
    return gpu_net_Bps(&t->cluster, nics_Bps(t, node));
}

/* Trays that share an NVLink domain (intra.domain_size > gpus_per_node)
 * are one node to NCCL: with MNNVL the ranks of one clique (the NVLink
 * domain's GPUs, mnnvl.cc ncclMnnvlCheck) fuse their topologies into one
 * (graph/topo.cc ncclTopoGetSystem: "MNNVL clique support", nLocalRanks =
 * clique.size), so the search, the tuner and NVLS see one node of the
 * domain's GPUs and the trays' NICs together. Lays `ranks` on `trays`
 * trays (as a node without a domain), then fills domains with trays in
 * order: domain k holds trays k x t .. (k + 1) x t - 1 of t per domain,
 * so a job of fewer trays than a domain is one node. Departures: a last
 * domain with fewer trays than the others is laid out by the uneven rule
 * (first ranks mod domains get one more), not tray by tray; des.links
 * node indices then name domains. */
static int build_flat(const cs_cluster *c, int ranks, int nodes, cs_topology *out, cs_diag *d);

static int build_domains(const cs_cluster *c, int ranks, int trays, cs_topology *out, cs_diag *d)
{
    int gpn = c->gpus_per_node, per = c->intra.domain_size / gpn;
    if (c->intra.domain_size % gpn)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "intra.domain_size %d of '%s' is not a multiple of gpus_per_node %d",
                           c->intra.domain_size, c->name, gpn);
    if (trays <= 0) trays = ranks > 0 ? (ranks + gpn - 1) / gpn : c->nodes;
    if (ranks <= 0) ranks = trays * gpn;
    if (ranks < trays || (ranks + trays - 1) / trays > gpn)
        return build_flat(c, ranks, trays, out, d); /* its message */
    cs_cluster *m = cs_xmalloc(sizeof *m);
    *m = *c;
    int domains = (trays + per - 1) / per, in_one = trays < per ? trays : per;
    m->gpus_per_node = gpn * in_one;
    m->nodes = domains;
    m->inter.nics_per_node = c->inter.nics_per_node * in_one;
    m->intra.domain_size = 0; /* a node of the domain: built once */
    int rc = build_flat(m, ranks, domains, out, d);
    if (!rc) out->trays = trays;
    free(m);
    return rc;
}

int cs_topology_build(const cs_cluster *c, int ranks, int nodes, cs_topology *out,
                      cs_diag *d)
{
    if (c->intra.domain_size > c->gpus_per_node) return build_domains(c, ranks, nodes, out, d);
    return build_flat(c, ranks, nodes, out, d);
}

static int build_flat(const cs_cluster *c, int ranks, int nodes, cs_topology *out, cs_diag *d)
{
    int gpn = c->gpus_per_node;
    if (ranks <= 0 && nodes <= 0) {
        nodes = c->nodes;
        ranks = c->nodes * gpn;
    } else if (ranks <= 0) {
        ranks = nodes * gpn;
    } else if (nodes <= 0) {
        nodes = (ranks + gpn - 1) / gpn;
    }
    if (ranks < 1)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "need at least 1 rank, got %d", ranks);
    if (ranks < nodes)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "%d ranks cannot occupy %d nodes (at least one rank per node)",
                           ranks, nodes);
    int ppn_max = (ranks + nodes - 1) / nodes;
    if (ppn_max > gpn)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "%d ranks on %d nodes needs %d GPUs per node, but '%s' has %d",
                           ranks, nodes, ppn_max, c->name, gpn);
    if (nodes > 1 && c->inter.nics_per_node < 1)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "cluster '%s' describes no inter-node network ('inter:'), "
                           "so it cannot span %d nodes", c->name, nodes);
    *out = (cs_topology){0};
    out->cluster = *c;
    out->ranks = ranks;
    out->nodes = nodes;
    out->trays = nodes;
    out->ppn_max = ppn_max;
    out->uniform = ranks % nodes == 0;
    out->intra_hw = c->intra.kind == CS_FABRIC_PCIE ? CS_HW_PCI : CS_HW_NVLINK;
    out->arch = cs_ncclmodel_arch(c->gpu.compute_capability);
    out->port_Bps = c->intra.bw_Bps * c->intra.efficiency;
    out->nic_Bps = cs_topology_nic_rate_Bps(c, c->inter.nic_bw_Bps);
    /* the node with the fewest ranks (the last) bounds a collective */
    double nics = out->nic_Bps * c->inter.nics_per_node;
    out->node_net_Bps = node_net_Bps(c, nics, ranks / nodes);
    out->gpu_net_Bps = gpu_net_Bps(c, nics);
    for (int i = 0; i < c->n_overrides; i++) {
        const cs_link_override *o = &c->overrides[i];
        if (o->node >= nodes || (!o->is_nic && o->gpu >= cs_topology_ranks_on(out, o->node)))
            return cs_diag_set(d, CS_EINVAL, NULL, o->line, o->column,
                               "link override names node %d %s %d, absent with %d ranks on %d nodes",
                               o->node, o->is_nic ? "nic" : "gpu", o->gpu, ranks, nodes);
    }
    for (int i = 0; i < c->n_stragglers; i++)
        if (c->stragglers[i].rank >= ranks)
            return cs_diag_set(d, CS_EINVAL, NULL, c->stragglers[i].line,
                               c->stragglers[i].column,
                               "straggler rank %d does not exist with %d ranks",
                               c->stragglers[i].rank, ranks);
    out->heterogeneous = c->n_overrides > 0 || c->n_stragglers > 0;
    return 0;
}
