/* SPDX-License-Identifier: MIT */
/*
 * mesh.c - the device mesh (mesh.h): mixed-radix rank <-> coordinates,
 * groups as sets of dimensions, and a group's topology on a cluster.
 *
 * Coordinates follow Megatron-LM's RankGenerator (megatron/core/
 * parallel_state.py: generate_masked_orthogonal_rank_groups, sizes in
 * "tp-cp-ep-dp-pp" order, innermost first) and torch's
 * init_device_mesh (row-major, the last dimension innermost): a group of
 * dimension set S holds the ranks whose coordinates outside S agree; its
 * colour reads those outside coordinates as one number, innermost first,
 * and a rank's index inside it reads the coordinates in S the same way.
 *
 * Placement on the cluster (cs_mesh_group_topology) prices a group where
 * its members sit: consecutive members pack onto nodes as the world does
 * (topology.h: ranks fill nodes in order); members a stride apart sit k to
 * a node (k = the group's members among a node's ranks: 1 when the stride
 * is a node or more, as HYBRID_SHARD's replica groups; several when it is
 * less, as the data-parallel groups beside TP 2 or 4, or the pipeline's
 * stages on one node), joined by the node's NVLink, and the node's NICs
 * serve the sibling groups that run their collectives at once (one replica
 * group per rank of a shard group): whole NICs to each when they divide
 * evenly (on a rail-optimised node each GPU keeps its own NIC, as NCCL's
 * search gives a GPU its local NIC), else each NIC's rate split among them.
 * Departures: ranks per node that the group's stride does not divide put
 * unequal member counts on nodes, priced as the first node's count.
 */
#include "coll/mesh.h"

#include <math.h>
#include <string.h>

void cs_mesh_init(cs_mesh *m)
{
    memset(m, 0, sizeof *m);
    m->ranks = 1;
}

int cs_mesh_add(cs_mesh *m, const char *name, int size)
{
    CS_ASSERT(m->ndims < CS_MESH_MAX_DIMS);
    CS_ASSERT(size >= 1);
    CS_ASSERT(strlen(name) < CS_MESH_NAME_MAX);
    CS_ASSERT(cs_mesh_find(m, name) < 0);
    cs_mesh_dim *d = &m->dim[m->ndims];
    memcpy(d->name, name, strlen(name) + 1);
    d->size = size;
    d->stride = m->ranks;
    m->ranks *= size;
    return m->ndims++;
}

int cs_mesh_find(const cs_mesh *m, const char *name)
{
    for (int i = 0; i < m->ndims; i++)
        if (!strcmp(m->dim[i].name, name)) return i;
    return -1;
}

cs_mesh_dims cs_mesh_all(const cs_mesh *m) { return (CS_MESH_BIT(m->ndims)) - 1u; }

void cs_mesh_coords(const cs_mesh *m, int rank, int *coords)
{
    CS_ASSERT(rank >= 0 && rank < m->ranks);
    for (int i = 0; i < m->ndims; i++) coords[i] = rank / m->dim[i].stride % m->dim[i].size;
}

int cs_mesh_rank(const cs_mesh *m, const int *coords)
{
    int r = 0;
    for (int i = 0; i < m->ndims; i++) {
        CS_ASSERT(coords[i] >= 0 && coords[i] < m->dim[i].size);
        r += coords[i] * m->dim[i].stride;
    }
    return r;
}

int cs_mesh_group_size(const cs_mesh *m, cs_mesh_dims dims)
{
    int n = 1;
    for (int i = 0; i < m->ndims; i++)
        if (dims & CS_MESH_BIT(i)) n *= m->dim[i].size;
    return n;
}

/* Rank's coordinates in the dimensions of `in` (inside) or outside them,
 * read as one mixed-radix number, innermost first. */
static int digits(const cs_mesh *m, cs_mesh_dims dims, int rank, int inside)
{
    CS_ASSERT(rank >= 0 && rank < m->ranks);
    int v = 0, radix = 1;
    for (int i = 0; i < m->ndims; i++) {
        if (((dims & CS_MESH_BIT(i)) != 0) != inside) continue;
        v += rank / m->dim[i].stride % m->dim[i].size * radix;
        radix *= m->dim[i].size;
    }
    return v;
}

int cs_mesh_group_colour(const cs_mesh *m, cs_mesh_dims dims, int rank)
{
    return digits(m, dims, rank, 0);
}

int cs_mesh_group_index(const cs_mesh *m, cs_mesh_dims dims, int rank)
{
    return digits(m, dims, rank, 1);
}

int cs_mesh_group_stride(const cs_mesh *m, cs_mesh_dims dims)
{
    for (int i = 0; i < m->ndims; i++)
        if ((dims & CS_MESH_BIT(i)) && m->dim[i].size > 1) return m->dim[i].stride;
    return 1;
}

int cs_mesh_group_contiguous(const cs_mesh *m, cs_mesh_dims dims)
{
    int outside = 0; /* a dimension of size > 1 outside dims seen, inner to the rest */
    for (int i = 0; i < m->ndims; i++) {
        if (m->dim[i].size == 1) continue;
        if (!(dims & CS_MESH_BIT(i))) outside = 1;
        else if (outside) return 0;
    }
    return 1;
}

int cs_mesh_group_node_share(const cs_mesh *m, cs_mesh_dims dims, int ranks_per_node)
{
    int n = ranks_per_node < m->ranks ? ranks_per_node : m->ranks, distinct = 0;
    for (int r = 0; r < n; r++) { /* colours new to the node, in rank order */
        int c = cs_mesh_group_colour(m, dims, r), seen = 0;
        for (int q = 0; q < r && !seen; q++) seen = cs_mesh_group_colour(m, dims, q) == c;
        distinct += !seen;
    }
    return distinct > 0 ? distinct : 1;
}

int cs_mesh_group_node_members(const cs_mesh *m, cs_mesh_dims dims, int ranks_per_node)
{
    int n = ranks_per_node < m->ranks ? ranks_per_node : m->ranks, k = 0;
    int c0 = cs_mesh_group_colour(m, dims, 0);
    for (int r = 0; r < n; r++) k += cs_mesh_group_colour(m, dims, r) == c0;
    return k > 0 ? k : 1;
}

int cs_mesh_group_topology(const cs_mesh *m, cs_mesh_dims dims, const cs_topology *world,
                           cs_topology *out, cs_diag *d)
{
    CS_ASSERT(world->ranks == m->ranks);
    const cs_cluster *c = &world->cluster;
    if (dims == cs_mesh_all(m)) {
        *out = *world;
        return 0;
    }
    int size = cs_mesh_group_size(m, dims), ppn = world->ppn_max;
    if (size > 1 && cs_mesh_group_contiguous(m, dims))
        return cs_topology_build(c, size, (size + ppn - 1) / ppn, out, d);
    cs_cluster apart = *c;
    apart.n_overrides = apart.n_stragglers = 0;
    if (size <= 1) return cs_topology_build(&apart, 1, 1, out, d);
    /* k members to a node (rank 0's group on the first node); the node's
     * NICs serve `share` groups at once */
    int k = cs_mesh_group_node_members(m, dims, ppn);
    int share = cs_mesh_group_node_share(m, dims, ppn);
    int nics = apart.inter.nics_per_node;
    if (nics >= share && nics % share == 0) {
        apart.inter.nics_per_node = nics / share; /* whole NICs, each at its own rate */
    } else {
        apart.inter.nic_bw_Bps /= share;
        if (apart.inter.pcie_Bps > 0) { /* the share of a NIC's path; a member stands for */
            apart.inter.nic_bw_Bps = fmin(apart.inter.nic_bw_Bps, apart.inter.pcie_Bps / share);
            apart.inter.pcie_Bps = 0;   /* several GPUs, so no one GPU link caps it */
        }
    }
    return cs_topology_build(&apart, size, (size + k - 1) / k, out, d);
}
