/* SPDX-License-Identifier: MIT */
/*
 * layout.c - a configuration's parallel layout (layout.h): the mesh's
 * dimensions as a table (a name and how its size follows from the
 * settings, innermost first), the process groups as a table (a name and
 * the dimensions it spans), and what follows from them once: each group's
 * size and topology (the mesh's geometry, coll/mesh.c), ZeRO's degrees,
 * parameters per rank, tokens per step.
 *
 * The tp dimension is training.tensor_parallel ranks, innermost (Megatron's
 * order: a TP group is consecutive ranks, inside a node's NVLink domain
 * when T <= GPUs per node); the data-parallel ranks are ranks / T.
 * Sizes follow torch.distributed.fsdp: the shard group is every
 * data-parallel rank, except for a hybrid strategy (HYBRID_SHARD), whose
 * shard group is training.shard_group ranks (0: the ranks of one node,
 * topo->ppn_max), capped at the ranks; the replica group holds one rank
 * of each shard group. Whole replicas are required; this file is the one
 * place that checks it, for the scenario loader, the memory estimate and
 * the graph builder alike. Adding a dimension: a row of `dims` (its size
 * from the settings) and a row of `groups` naming it.
 */
#include "train/layout.h"

#include <string.h>

#include "train/strategy.h"
#include "train/tensor.h"

/* What a dimension's size is computed from. */
typedef struct sizing {
    const cs_training *t;
    const cs_topology *topo;
    int ranks;   /* the world, >= 1 */
    int tp;      /* the tensor-parallel degree, dividing ranks */
    int shard;   /* the shard group's ranks, not yet checked against the world */
    int pp;      /* the pipeline-parallel degree, dividing ranks / tp */
} sizing;

static int size_tp(const sizing *s) { return s->tp; }
static int size_shard(const sizing *s) { return s->shard; }
static int size_replicate(const sizing *s) { return s->ranks / s->tp / s->pp / s->shard; }
static int size_pp(const sizing *s) { return s->pp; }

/* The mesh's dimensions, innermost first (Megatron's tp-cp-ep-dp-pp).
 * optional: left out of the mesh at size 1 (a layout without pipeline
 * parallelism has the mesh, and so the schedule, it had before pp). */
static const struct {
    const char *name;
    int (*size)(const sizing *s);
    int optional;
} dims[] = {
    {"tp", size_tp, 0},
    {"dp_shard", size_shard, 0},
    {"dp_replicate", size_replicate, 0},
    {"pp", size_pp, 1},
};
#define NDIMS (int)(sizeof dims / sizeof dims[0])

/* The groups, by cs_group: a name and the dimensions it spans (NULL-ended;
 * none: every dimension, the world). */
static const struct {
    const char *name;
    const char *dims[NDIMS + 1];
} groups[CS_GROUP_COUNT] = {
    [CS_GROUP_WORLD] = {"world", {NULL}},
    [CS_GROUP_DP_SHARD] = {"dp_shard", {"dp_shard", NULL}},
    [CS_GROUP_DP_REPLICATE] = {"dp_replicate", {"dp_replicate", NULL}},
    [CS_GROUP_TP] = {"tp", {"tp", NULL}},
    [CS_GROUP_PP] = {"pp", {"pp", NULL}},
};

const char *cs_group_name(cs_group g)
{
    CS_ASSERT(g >= 0 && g < CS_GROUP_COUNT);
    return groups[g].name;
}

int cs_group_parse(const char *name, cs_group *out)
{
    for (int g = 0; g < CS_GROUP_COUNT; g++)
        if (!strcmp(name, groups[g].name)) {
            *out = (cs_group)g;
            return 0;
        }
    return CS_EINVAL;
}

cs_mesh_dims cs_layout_group_dims(const cs_mesh *m, cs_group g)
{
    CS_ASSERT(g >= 0 && g < CS_GROUP_COUNT);
    if (!groups[g].dims[0]) return cs_mesh_all(m);
    cs_mesh_dims set = 0;
    for (int k = 0; groups[g].dims[k]; k++) {
        int i = cs_mesh_find(m, groups[g].dims[k]);
        if (i < 0) continue; /* an optional dimension of size 1: one rank */
        set |= CS_MESH_BIT(i);
    }
    return set;
}

int cs_layout_mesh(const cs_training *t, const cs_topology *topo, cs_mesh *out, cs_diag *d)
{
    sizing s = {t, topo, topo->ranks > 0 ? topo->ranks : 1, cs_tensor_degree(t), 0,
                t->pipeline_parallel > 1 ? t->pipeline_parallel : 1};
    cs_mesh_init(out);
    if (s.ranks % s.tp)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "tensor_parallel %d does not divide the %d ranks", s.tp, s.ranks);
    if ((s.ranks / s.tp) % s.pp)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "pipeline_parallel %d does not divide the %d ranks / tensor_parallel %d",
                           s.pp, s.ranks, s.tp);
    int dp = s.ranks / s.tp / s.pp;
    s.shard = dp;
    if (cs_strategy_row_of(t->strategy)->hybrid) {
        /* 0: one node's data-parallel ranks */
        int g = t->shard_group > 0 ? t->shard_group : topo->ppn_max / s.tp;
        if (g > dp) g = dp;
        s.shard = g < 1 ? 1 : g;
    }
    if (dp % s.shard)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "%s needs the shard group (%d ranks) to divide the %d ranks into "
                           "whole replicas",
                           cs_strategy_name(t->strategy), s.shard, dp);
    for (int i = 0; i < NDIMS; i++)
        if (!dims[i].optional || dims[i].size(&s) > 1) cs_mesh_add(out, dims[i].name, dims[i].size(&s));
    return 0;
}

int cs_layout_build(const cs_model *m, const cs_training *t, const cs_topology *topo,
                    cs_layout *out, cs_diag *d)
{
    if (!(m->params > 0))
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "model '%s' has no parameters", m->name);
    if (topo->ranks < 1)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "need at least 1 rank, got %d", topo->ranks);
    int rc = cs_layout_mesh(t, topo, &out->mesh, d);
    if (!rc) rc = cs_tensor_check(m, t, d);
    if (rc) return rc;
    const cs_mesh *mesh = &out->mesh;
    for (int g = 0; g < CS_GROUP_COUNT; g++) {
        cs_layout_group *x = &out->group[g];
        x->dims = cs_layout_group_dims(mesh, (cs_group)g);
        x->size = cs_mesh_group_size(mesh, x->dims);
        if ((rc = cs_mesh_group_topology(mesh, x->dims, topo, &x->topo, d))) return rc;
    }
    const cs_strategy_row *r = cs_strategy_row_of(t->strategy);
    /* the data-parallel ranks: the world unless hybrid, or tensor-parallel */
    out->shard = r->hybrid || cs_tensor_degree(t) > 1 || t->pipeline_parallel > 1
                     ? CS_GROUP_DP_SHARD
                     : CS_GROUP_WORLD;
    int shard = out->group[CS_GROUP_DP_SHARD].size;
    out->params_degree = r->shards_params ? shard : 1;
    out->grads_degree = r->shards_grads ? shard : 1;
    out->optimizer_degree = r->shards_optimizer ? shard : 1;
    int tp = out->group[CS_GROUP_TP].size;
    int dp = cs_mesh_group_size(mesh, cs_layout_group_dims(mesh, CS_GROUP_DP_SHARD) |
                                          cs_layout_group_dims(mesh, CS_GROUP_DP_REPLICATE));
    out->params_per_rank = m->params / tp; /* pipeline stages: train/pipeline.h */
    out->tokens_per_step = (double)t->micro_batch * m->seq_len * t->grad_accum * dp;
    return 0;
}
