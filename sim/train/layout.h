/* SPDX-License-Identifier: MIT */
/*
 * layout.h - the parallel layout of one configuration: (training
 * settings, model, topology) -> the device mesh of its ranks, the named
 * process groups on it with the topology each is priced on, the ZeRO
 * degrees over the data-parallel dimensions, parameters per rank and
 * tokens per step. Computed once per evaluation (train/evaluate.c) and
 * read by the memory estimate, the graph builder (and through the graph
 * the executor and the schedule writer) and the rank classes; the
 * geometry itself is the mesh's (coll/mesh.h).
 *
 * The mesh, innermost first: tp (tensor parallel: training.tensor_parallel
 * consecutive ranks, train/tensor.h), dp_shard (the ranks that share one
 * copy of the sharded state: every data-parallel rank (ranks / tp) unless
 * the strategy is hybrid, whose shard group is training.shard_group
 * data-parallel ranks, 0 = one node's),
 * dp_replicate (one rank of each shard group), pp (the pipeline's
 * stages, training.pipeline_parallel, outermost as in Megatron; absent
 * from the mesh at P = 1). Groups are rows of one
 * table (layout.c): a name and the dimensions it spans.
 */
#ifndef CS_LAYOUT_H
#define CS_LAYOUT_H

#include "base/error.h"
#include "coll/mesh.h"
#include "coll/topology.h"
#include "train/model.h"
#include "train/training.h"

/* The process groups, by their row in the layout's group table; a task's
 * group is an index into cs_layout.group. */
typedef enum cs_group {
    CS_GROUP_WORLD,        /* every rank */
    CS_GROUP_DP_SHARD,     /* dp_shard: gathers and reduce-scatters of sharded state */
    CS_GROUP_DP_REPLICATE, /* dp_replicate: hybrid sharding's all-reduce across shard groups */
    CS_GROUP_TP,           /* tp: tensor parallelism's collectives (tensor.h) */
    CS_GROUP_PP,           /* pp: a pipeline's stages, joined by point-to-point
                            * transfers (pipeline.h); one rank at P = 1 */
    CS_GROUP_COUNT
} cs_group;

typedef struct cs_layout_group {
    cs_mesh_dims dims;     /* the mesh dimensions it spans */
    int size;              /* its ranks */
    cs_topology topo;      /* where its collectives are priced (cs_mesh_group_topology) */
} cs_layout_group;

typedef struct cs_layout {
    cs_mesh mesh;
    cs_layout_group group[CS_GROUP_COUNT];
    /* the group the strategy gathers and reduces (DDP, ZeRO: all-reduces)
     * its state on: dp_shard when hybrid or tensor-parallel, else the world */
    cs_group shard;
    /* ZeRO's sharding degrees of parameters, gradients and optimizer
     * states (Rajbhandari et al. 2020 Sec 5): the dp_shard size where the
     * strategy shards that state, else 1 */
    int params_degree, grads_degree, optimizer_degree;
    double params_per_rank;   /* the model's parameters / tp */
    double tokens_per_step;   /* micro_batch x seq_len x grad_accum x data-parallel ranks */
} cs_layout;

/* The layout of t and m on topo. Returns 0, or CS_EINVAL with d filled:
 * no parameters, no ranks, a tensor-parallel degree that does not divide
 * the ranks or the model (cs_tensor_check), a shard group that does not divide the ranks
 * into whole replicas (torch's HYBRID_SHARD builds its groups with
 * new_subgroups, which needs them), or a group topology the cluster
 * cannot hold. O(groups x topology build). */
int cs_layout_build(const cs_model *m, const cs_training *t, const cs_topology *topo,
                    cs_layout *out, cs_diag *d);
/* The mesh alone (the scenario loader's check of the hybrid group):
 * 0, or CS_EINVAL with d filled as above. O(1). */
int cs_layout_mesh(const cs_training *t, const cs_topology *topo, cs_mesh *out, cs_diag *d);

/* A group's name ("world", "dp_shard", "dp_replicate", "tp"), and the
 * group of a name (0, or CS_EINVAL). */
const char *cs_group_name(cs_group g);
int cs_group_parse(const char *name, cs_group *out);
/* The dimensions group g spans on mesh m (built by cs_layout_mesh). */
cs_mesh_dims cs_layout_group_dims(const cs_mesh *m, cs_group g);

#endif
