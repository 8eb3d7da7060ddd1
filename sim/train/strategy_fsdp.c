/* SPDX-License-Identifier: MIT */
/*
 * strategy_fsdp.c - the FSDP family's rows: torch.distributed.fsdp.
 * FullyShardedDataParallel with ShardingStrategy NO_SHARD, SHARD_GRAD_OP,
 * FULL_SHARD and HYBRID_SHARD.
 *
 * Model (Zhao et al. 2023, "PyTorch FSDP", VLDB 16(12), Sec 3-4): one unit
 * per transformer layer plus the root (embeddings, head). In forward each
 * unit is all-gathered before it runs and, with reshard_after_forward
 * (FULL_SHARD / HYBRID_SHARD), freed after; the rate limiter allows
 * limit_all_gathers units unsharded at once. In backward the unit is
 * gathered again (not for SHARD_GRAD_OP, which keeps it from forward),
 * prefetched per backward_prefetch (PRE: issued when the previous unit's
 * backward starts; POST/NONE: when it ends), then its gradients are
 * reduce-scattered; HYBRID_SHARD adds an all_reduce across replicas of the
 * sharded gradient. NO_SHARD all-reduces each unit's gradients. Gradients
 * are reduced every micro-batch (no no_sync). The root is not resharded
 * after forward (torch fsdp/_runtime_utils.py _post_forward_reshard: "Do
 * not free the root's parameters in the post-forward"): it is gathered
 * once per micro-batch and freed after its gradients are reduced.
 *
 * Memory beyond the model states (memory.c states the accounting), with
 * unit = a layer's parameters and root = the root unit's, in param dtype:
 * with resharding root + (1 + prefetched) units of parameters
 * (prefetched = 1 when backward or forward prefetch is on; the rate
 * limiter caps units in flight at limit_all_gathers), plus the unsharded
 * gradients of the root (alive until its reduce-scatter at the end of
 * backward) and of the layer in backward; without resharding every unit
 * stays gathered: a full parameter copy plus those gradients.
 * SHARD_GRAD_OP's full parameters are counted whole and static (degree 1,
 * ZeRO's P_os+g), so only the gradients are added, and its gathers add
 * nothing to the timeline. The sharded copy is ZeRO's fp32 master inside
 * the optimizer's 12 bytes (as in torch FSDP with MixedPrecision, whose
 * sharded FlatParameter is fp32).
 */
#include "train/strategy.h"
#include "train/wbuild.h"

/* What the hooks read from the row: a row that shards gradients gathers
 * its units and reduce-scatters their gradients (SHARD_GRAD_OP, FULL_SHARD,
 * HYBRID_SHARD; NO_SHARD all-reduces whole gradients); a gather allocates
 * the unit on the timeline only when parameters are sharded. */
static int gathers(const cs_wbuild *b) { return b->row->shards_grads; }
static double gathered(const cs_wbuild *b) { return b->row->shards_params ? 1.0 : 0.0; }

static void pre_forward(cs_wbuild *b)
{
    b->root_task = -1;
    if (!gathers(b)) return;
    b->root_task = cs__wb_collective(b, CS_STREAM_COMM, b->micro, -1, CS_OP_ALL_GATHER,
                                     b->param_bytes[0], b->t->param_dtype, b->shard, "root");
    cs__wb_task(b, b->root_task)->mem_at_start = gathered(b) * b->param_bytes[0];
}

static void forward_unit(cs_wbuild *b, int l)
{
    if (!gathers(b)) {
        cs__wb_forward(b, l);
        return;
    }
    int ag = cs__wb_collective(b, CS_STREAM_COMM, b->micro, l, CS_OP_ALL_GATHER,
                               b->param_bytes[1], b->t->param_dtype, b->shard, "fwd");
    cs__wb_task(b, ag)->mem_at_start = gathered(b) * b->param_bytes[1];
    /* rate limiter: unit l - limit must have been freed */
    if (b->reshard && l >= b->limit) cs__wb_dep(b, ag, b->fwd[l - b->limit], 0);
    int f = cs__wb_forward(b, l);
    cs__wb_dep(b, f, ag, 0);
    if (l == 0) cs__wb_dep(b, f, b->root_task, 0);
    if (b->reshard) cs__wb_task(b, f)->mem_at_end = -b->param_bytes[1];
}

/* A unit's gradients reduced over the shard group once `after` ends, then
 * (hybrid) the shard all-reduced across replicas; returns the reduction. */
static int reduce(cs_wbuild *b, int layer, int after, double bytes, const char *what,
                  const char *across)
{
    const cs_training *t = b->t;
    int r = cs__wb_collective(b, CS_STREAM_COMM_REDUCE, b->micro, layer, b->row->grad_op, bytes,
                              t->grad_reduce_dtype, b->shard, what);
    cs__wb_dep(b, r, after, 0);
    if (b->replica_ranks > 1)
        cs__wb_collective(b, CS_STREAM_COMM_REDUCE, b->micro, layer, CS_OP_ALL_REDUCE,
                          bytes / b->shard_ranks, t->grad_reduce_dtype, CS_GROUP_REPLICA, across);
    return r;
}

static void backward_unit(cs_wbuild *b, int l)
{
    int ag = -1;
    if (gathers(b) && b->reshard) {
        ag = cs__wb_collective(b, CS_STREAM_COMM, b->micro, l, CS_OP_ALL_GATHER,
                               b->param_bytes[1], b->t->param_dtype, b->shard, "bwd");
        cs__wb_task(b, ag)->mem_at_start = b->param_bytes[1];
        int prev = l == b->layers - 1 ? b->head_bwd : b->bwd[l + 1];
        cs__wb_dep(b, ag, prev, b->t->backward_prefetch == CS_PREFETCH_PRE);
        if (l + b->limit < b->layers) cs__wb_dep(b, ag, b->bwd[l + b->limit], 0); /* rate limiter */
    }
    int k = cs__wb_backward(b, l);
    if (gathers(b)) {
        /* the unit's unsharded gradient is allocated by its backward; the
         * gathered unit is freed at its end */
        cs_task *bt = cs__wb_task(b, k);
        bt->mem_at_start += b->param_bytes[1];
        bt->mem_at_end -= gathered(b) * b->param_bytes[1];
    }
    cs__wb_dep(b, k, ag, 0);
    int r = reduce(b, l, k, b->grad_bytes[1], "grads", "replicas");
    /* the unsharded gradient lives until its reduce-scatter is done */
    if (gathers(b)) cs__wb_task(b, r)->mem_at_end = -b->param_bytes[1];
}

static void post_backward(cs_wbuild *b)
{
    int r = reduce(b, -1, b->bwd[0], b->grad_bytes[0], "root grads", "root replicas");
    if (gathers(b)) cs__wb_task(b, r)->mem_at_end = -gathered(b) * b->param_bytes[0]; /* resharded */
}

/* Layer units resident at once while gathering with resharding. */
static int resident_units(const cs_training *t)
{
    int prefetched = t->backward_prefetch != CS_PREFETCH_NONE || t->forward_prefetch;
    int units = 1 + prefetched;
    if (t->limit_all_gathers > 0 && units > t->limit_all_gathers) units = t->limit_all_gathers;
    return units;
}

static void full_shard_memory(const cs_model *m, const cs_training *t, const cs_strategy_groups *g,
                              cs_strategy_mem *out)
{
    if (g->shard == 1) return; /* nothing is sharded: no gathers */
    double ps = cs_dtype_size(t->param_dtype);
    double unit = m->layer_params * ps, root = m->embedding_params * ps;
    if (cs_strategy_reshard_after_forward(t))
        out->unsharded_bytes = root + resident_units(t) * unit;
    else
        out->unsharded_bytes = m->params * ps;
    out->unsharded_bytes += root + unit; /* unsharded gradients */
}

static void shard_grad_op_memory(const cs_model *m, const cs_training *t,
                                 const cs_strategy_groups *g, cs_strategy_mem *out)
{
    double ps = cs_dtype_size(t->param_dtype);
    if (g->shard > 1) out->unsharded_bytes = m->embedding_params * ps + m->layer_params * ps;
}

static const char *shard_grad_op_contradiction(const cs_training *t, const char **key)
{
    *key = "reshard_after_forward";
    if (t->reshard_after_forward != 1) return NULL;
    return "fsdp_shard_grad_op keeps parameters unsharded from forward to backward; "
           "reshard_after_forward: true is fsdp_full_shard";
}

#define FSDP_HOOKS                                                                         \
    .pre_forward = pre_forward, .forward_unit = forward_unit, .backward_unit = backward_unit, \
    .post_backward = post_backward

const cs_strategy_row cs__strategy_fsdp_no_shard = {
    .knobs = CS_KNOBS_FSDP,
    .grad_op = CS_OP_ALL_REDUCE,
    FSDP_HOOKS,
};

const cs_strategy_row cs__strategy_fsdp_shard_grad_op = {
    .knobs = CS_KNOBS_FSDP | CS_KNOB_BIT(CS_KNOB_RESHARD),
    .shards_grads = 1,
    .shards_optimizer = 1,
    .grad_op = CS_OP_REDUCE_SCATTER,
    .contradiction = shard_grad_op_contradiction,
    .memory_terms = shard_grad_op_memory,
    FSDP_HOOKS,
};

const cs_strategy_row cs__strategy_fsdp_full_shard = {
    .knobs = CS_KNOBS_FSDP | CS_KNOB_BIT(CS_KNOB_RESHARD),
    .shards_params = 1,
    .shards_grads = 1,
    .shards_optimizer = 1,
    .reshards = 1,
    .grad_op = CS_OP_REDUCE_SCATTER,
    .memory_terms = full_shard_memory,
    FSDP_HOOKS,
};

const cs_strategy_row cs__strategy_fsdp_hybrid_shard = {
    .knobs = CS_KNOBS_FSDP | CS_KNOB_BIT(CS_KNOB_RESHARD) | CS_KNOB_BIT(CS_KNOB_SHARD_GROUP),
    .shards_params = 1,
    .shards_grads = 1,
    .shards_optimizer = 1,
    .hybrid = 1,
    .reshards = 1,
    .grad_op = CS_OP_REDUCE_SCATTER,
    .memory_terms = full_shard_memory,
    FSDP_HOOKS,
};
