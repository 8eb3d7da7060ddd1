/* SPDX-License-Identifier: MIT */
/*
 * deslinks.c - link capacities and stragglers for the DES schedules (see
 * deslinks.h). The overrides and stragglers were validated by config.c
 * and cs_topology_build: one entry per link or rank, all present.
 */
#include "coll/deslinks.h"

double cs_deslinks_port_ch_Bps(const cs_topology *t, int node, int local)
{
    const cs_cluster *c = &t->cluster;
    double bw = t->port_Bps;
    for (int i = 0; i < c->n_overrides; i++)
        if (!c->overrides[i].is_nic && c->overrides[i].node == node &&
            c->overrides[i].gpu == local)
            bw = c->overrides[i].bw_Bps * c->intra.efficiency;
    return bw / c->coll.channels;
}

double cs_deslinks_net_ch_Bps(const cs_topology *t, int node)
{
    return cs_topology_net_Bps(t, node) / t->cluster.coll.channels;
}

double cs_deslinks_slowdown(const cs_topology *t, int rank)
{
    const cs_cluster *c = &t->cluster;
    for (int i = 0; i < c->n_stragglers; i++)
        if (c->stragglers[i].rank == rank) return c->stragglers[i].slowdown;
    return 1.0;
}

double cs_deslinks_delay_s(const cs_topology *t, int rank)
{
    const cs_cluster *c = &t->cluster;
    for (int i = 0; i < c->n_stragglers; i++)
        if (c->stragglers[i].rank == rank) return c->stragglers[i].delay_s;
    return 0.0;
}
