/* SPDX-License-Identifier: MIT */
/*
 * mesh.h - the device mesh: a job's ranks as a grid of named dimensions,
 * and the process groups it forms (their sizes, each rank's colour, their
 * placement on a cluster's nodes and the topology their collectives are
 * priced on). The one place in the tree that derives group geometry: the
 * simulator's layout (train/layout.h) and collsim-hw's communicator splits
 * (hw/rplan.c) both ask it.
 *
 * Dimensions are ordered innermost first, as Megatron-LM orders its
 * parallel ranks (tp-cp-ep-dp-pp: tensor parallelism innermost, so a TP
 * group is consecutive ranks inside a node) and torch's DeviceMesh names
 * them (its mesh is row-major: the last name is the innermost). Rank r's
 * coordinate in dimension i is (r / stride_i) % size_i, stride_0 = 1,
 * stride_i = stride_{i-1} x size_{i-1}. A group is a set of dimensions:
 * the ranks that differ only in those coordinates. The mesh is a value
 * type; it holds no pointers.
 */
#ifndef CS_MESH_H
#define CS_MESH_H

#include "base/error.h"
#include "coll/topology.h"

#define CS_MESH_MAX_DIMS 8
#define CS_MESH_NAME_MAX 16

typedef struct cs_mesh_dim {
    char name[CS_MESH_NAME_MAX];
    int size;    /* >= 1 */
    int stride;  /* ranks between neighbours along it: the product of the sizes inside it */
} cs_mesh_dim;

typedef struct cs_mesh {
    int ndims;
    int ranks;   /* the product of the sizes (1 with no dimension) */
    cs_mesh_dim dim[CS_MESH_MAX_DIMS]; /* innermost first */
} cs_mesh;

/* A set of dimensions: bit i is dim[i] (CS_MESH_BIT). */
typedef unsigned cs_mesh_dims;
#define CS_MESH_BIT(i) (1u << (i))

/* ---- building ---- */
/* An empty mesh: no dimension, one rank. */
void cs_mesh_init(cs_mesh *m);
/* Appends dimension `name` (shorter than CS_MESH_NAME_MAX) of `size` >= 1
 * outside the others; returns its index. A full mesh, a duplicate name or
 * size < 1 is a broken invariant (panics). */
int cs_mesh_add(cs_mesh *m, const char *name, int size);
/* The index of dimension `name`, or -1. */
int cs_mesh_find(const cs_mesh *m, const char *name);
/* Every dimension: the world group. */
cs_mesh_dims cs_mesh_all(const cs_mesh *m);

/* ---- ranks and coordinates (O(dims)) ---- */
/* coords[ndims] of rank (0 <= rank < ranks). */
void cs_mesh_coords(const cs_mesh *m, int rank, int *coords);
/* The rank at coords[ndims] (each within its dimension's size). */
int cs_mesh_rank(const cs_mesh *m, const int *coords);

/* ---- groups (O(dims) each) ---- */
/* Ranks in one group of dims. */
int cs_mesh_group_size(const cs_mesh *m, cs_mesh_dims dims);
/* Which of the ranks / size sibling groups rank belongs to: its
 * coordinates outside dims read as one number, innermost first (the
 * colour of an MPI_Comm_split / ncclCommSplit). */
int cs_mesh_group_colour(const cs_mesh *m, cs_mesh_dims dims, int rank);
/* Rank's index inside its group: its coordinates in dims read the same
 * way (the key of the split). */
int cs_mesh_group_index(const cs_mesh *m, cs_mesh_dims dims, int rank);
/* Ranks between consecutive members: the stride of the innermost member
 * dimension of size > 1 (1 for a group of one rank). */
int cs_mesh_group_stride(const cs_mesh *m, cs_mesh_dims dims);
/* 1 when each group is consecutive ranks: no dimension of size > 1
 * outside dims lies inside one in dims. */
int cs_mesh_group_contiguous(const cs_mesh *m, cs_mesh_dims dims);
/* How many sibling groups have members on one node when ranks fill nodes
 * ranks_per_node at a time: the distinct colours among a node's ranks
 * (the first node's; every full node holds as many). O(ranks_per_node x
 * dims). */
int cs_mesh_group_node_share(const cs_mesh *m, cs_mesh_dims dims, int ranks_per_node);
/* How many members of rank 0's group sit on the first node when ranks fill
 * nodes ranks_per_node at a time (>= 1). O(ranks_per_node x dims). */
int cs_mesh_group_node_members(const cs_mesh *m, cs_mesh_dims dims, int ranks_per_node);

/* The topology one group of dims runs its collectives on, world being the
 * mesh's ranks laid out on a cluster (world->ranks == m->ranks):
 *   every dimension  the world itself;
 *   one rank         one rank on one node (nothing to price: no network);
 *   contiguous       its ranks packed gpus_per_node to a node;
 *   otherwise        node_members to a node (on its NVLink), each node's
 *                    NICs shared by the node_share sibling groups that
 *                    drive them at once: whole NICs each when the count
 *                    divides, else each NIC's rate (and its PCIe path)
 *                    split; no des: overrides or stragglers.
 * Returns 0, or cs_topology_build's error with d filled. */
int cs_mesh_group_topology(const cs_mesh *m, cs_mesh_dims dims, const cs_topology *world,
                           cs_topology *out, cs_diag *d);

#endif
