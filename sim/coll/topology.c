/* SPDX-License-Identifier: MIT */
/*
 * topology.c - rank placement and effective link capacities.
 *
 * Effective capacities are the datasheet line rate times the configured
 * efficiency (e.g. NCCL's 20.6 GB/s usable per 25 GB/s NVLink4 link, the
 * 46-48 GB/s measured on 50 GB/s NDR NICs): see the YAML files in configs/clusters/ for
 * the sources of each preset's numbers.
 */
#include "coll/topology.h"

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

int cs_topology_build(const cs_cluster *c, int ranks, int nodes, cs_topology *out,
                      cs_diag *d)
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
    out->ppn_max = ppn_max;
    out->uniform = ranks % nodes == 0;
    out->intra_hw = c->intra.kind == CS_FABRIC_PCIE ? CS_HW_PCI : CS_HW_NVLINK;
    out->arch = cs_ncclmodel_arch(c->gpu.compute_capability);
    out->port_Bps = c->intra.bw_Bps * c->intra.efficiency;
    out->nic_Bps = c->inter.nic_bw_Bps * c->inter.efficiency;
    out->node_net_Bps = out->nic_Bps * c->inter.nics_per_node;
    if (c->inter.topology == CS_NET_FAT_TREE && c->inter.oversubscription > 1)
        out->node_net_Bps /= c->inter.oversubscription;
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
