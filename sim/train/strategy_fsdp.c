/* SPDX-License-Identifier: MIT */
/*
 * strategy_fsdp.c - the FSDP family's rows: torch.distributed.fsdp.
 * FullyShardedDataParallel with ShardingStrategy NO_SHARD, SHARD_GRAD_OP,
 * FULL_SHARD and HYBRID_SHARD.
 *
 * Model (Zhao et al. 2023, "PyTorch FSDP", VLDB 16(12), Sec 3-4): one unit
 * per fsdp_unit_layers transformer layers (auto_wrap_policy; default one
 * per layer) plus the root (embeddings, head; with fsdp_unit_layers 0 the
 * root is the whole model, gathered in pre-forward and reduced after
 * backward: nothing overlaps). In forward each
 * unit is all-gathered before it runs and, with reshard_after_forward
 * (FULL_SHARD / HYBRID_SHARD), freed after; the rate limiter allows
 * limit_all_gathers units unsharded at once. In backward the unit is
 * gathered again (not for SHARD_GRAD_OP, which keeps it from forward),
 * prefetched per backward_prefetch (PRE: issued when the previous unit's
 * backward starts; POST/NONE: when it ends; with PRE or POST before the
 * previous unit's reduce-scatter, which FSDP1's one NCCL stream per
 * group then runs after it: backward_unit), then its gradients are
 * reduce-scattered; HYBRID_SHARD adds an all_reduce across replicas of the
 * sharded gradient. NO_SHARD all-reduces each unit's gradients. Gradients
 * are reduced every micro-batch (no no_sync). The root is not resharded
 * after forward (torch fsdp/_runtime_utils.py _post_forward_reshard: "Do
 * not free the root's parameters in the post-forward"): it is gathered
 * once per micro-batch and freed after its gradients are reduced. Its
 * gather waits for the compute stream (_root_pre_forward), so one
 * micro-batch's gathers never run under the previous one's backward.
 * fsdp_version selects the copies and casts around the collectives (FSDP2
 * fully_shard: copy-in, copy-out into the parameters, reduce-scatter
 * copy-in; FSDP1: flat parameters gathered in place, the flat gradient
 * cast and divided on the post-backward stream): gather() and reduce()
 * cite the PyTorch functions. Every unit's hooks take the CPU thread
 * cs_training_fsdp_hook_cpu_s per block per pass; the tasks issued after
 * them cannot start earlier (cs_task.issue_s), which delays the GPU only
 * when the CPU thread falls behind it. Departures: FSDP1's rate limiter
 * blocks the CPU (event.synchronize in _unshard), not modelled (the CPU
 * never waits for the GPU within an iteration); FSDP2's all-gather output
 * buffer, alive with the unsharded parameters during the copy-out, is
 * not on the memory timeline.
 *
 * Memory beyond the model states (memory.c states the accounting), with
 * unit = a layer's parameters and root = the root unit's, in param dtype:
 * (a unit: fsdp_unit_layers layers; 0: the whole model, all gathered and
 * all gradients unsharded) with resharding root + (1 + prefetched) units
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

/* ---- units ---- */

/* Layers per unit; 0 (fsdp_unit_layers: 0): the whole model is the root
 * unit and no layer has a unit of its own. */
static int per_unit(const cs_wbuild *b) { return b->t->fsdp_unit_layers; }
static int whole(const cs_wbuild *b) { return per_unit(b) == 0; }
static int unit_first(const cs_wbuild *b, int l) { return l / per_unit(b) * per_unit(b); }
static int unit_last(const cs_wbuild *b, int l)
{
    int last = unit_first(b, l) + per_unit(b) - 1;
    return last < b->layers - 1 ? last : b->layers - 1;
}
static int unit_size(const cs_wbuild *b, int l) { return unit_last(b, l) - unit_first(b, l) + 1; }
/* The root unit's layers: all of them when it is the whole model. */
static int root_layers(const cs_wbuild *b) { return whole(b) ? b->layers : 0; }

/* The hooks of a unit of n blocks (+1 for the root) take the CPU thread
 * cs_training_fsdp_hook_cpu_s each per pass; the tasks it issues after
 * them wait for it (workload.h issue_s). */
static void hooks(cs_wbuild *b, int blocks)
{
    cs__wb_host(b, blocks * cs_training_fsdp_hook_cpu_s(b->t, &b->topo->cluster));
}

/* ---- copies and casts (memory-bound tasks, cs__wb_memory) ---- */

static double psize(const cs_wbuild *b) { return cs_dtype_size(b->t->param_dtype); }
static double gsize(const cs_wbuild *b) { return cs_dtype_size(b->t->grad_reduce_dtype); }
/* The sharded parameters' dtype: the fp32 master with mixed precision
 * (FSDP keeps the original dtype sharded and casts to param_dtype). */
static double ssize(const cs_wbuild *b)
{
    return b->t->master_weights_fp32 && psize(b) < 4 ? 4.0 : psize(b);
}

/* A memory task on stream s after `after` (-1: stream order only). */
static int copy(cs_wbuild *b, cs_stream s, int layer, double bytes, int after, const char *what)
{
    int id = cs__wb_memory(b, s, layer, bytes, what);
    cs__wb_dep(b, id, after, 0);
    return id;
}

/* A gather of `params` parameters issued after `after` (-1: none): the
 * shard's copy-in on the unshard stream, the all-gather, and FSDP2's
 * copy-out on the compute stream. *ag is the all-gather; returns what
 * compute must wait for.
 * FSDP2 (_fsdp_collectives.py foreach_all_gather): the sharded
 * parameters are cast into a flat param_dtype buffer
 * (_get_param_all_gather_inputs, torch._foreach_copy_) and copied into the
 * all-gather input (all_gather_copy_in), on the copy-in stream; after the
 * all-gather, foreach_all_gather_copy_out runs on the current (compute)
 * stream: split_with_sizes_copy of the whole output into the unsharded
 * parameters, read + written once (wait_for_unshard, FSDPParamGroup).
 * FSDP1 (_runtime_utils.py _unshard): with mixed precision pre_unshard
 * casts the shard to the low-precision _mp_shard on the pre-unshard
 * stream; the all-gather writes the padded flat parameter, which the
 * module's parameters view (FlatParamHandle._use_unsharded_views): no
 * copy-out. */
static int gather(cs_wbuild *b, int layer, double params, const char *what, int after, int *ag)
{
    const double n = b->shard_ranks, ps = psize(b);
    int first = -1;
    if (b->t->fsdp_version == 2)
        first = copy(b, CS_STREAM_COMM, layer, params / n * (ssize(b) + ps + 2 * ps), after,
                     "all-gather copy-in");
    else if (ssize(b) != ps)
        first = copy(b, CS_STREAM_COMM, layer, params / n * (ssize(b) + ps), after,
                     "shard cast");
    *ag = cs__wb_collective(b, CS_STREAM_COMM, b->micro, layer, CS_OP_ALL_GATHER, params * ps,
                            b->t->param_dtype, b->shard, what);
    cs__wb_dep(b, *ag, first >= 0 ? first : after, 0);
    if (b->t->fsdp_version != 2) return *ag;
    return copy(b, CS_STREAM_COMPUTE, layer, 2 * params * ps, *ag, "all-gather copy-out");
}

/* Gradient division around the reduction over the data-parallel world
 * (shard x replica ranks): pre = the largest power of two f with world /
 * f > f (while world % f == 0), post = world / pre. FSDP1 always
 * divides so (_init_utils: DefaultState._get_gradient_predivide_factor,
 * _reduce_grad's _div_if_needed before and after the reduce-scatter);
 * FSDP2 (_get_gradient_divide_factors) divides inside NCCL (ReduceOp.AVG)
 * for fp32 and bf16 and pre / post divides only fp16, where overflow is
 * the risk. *pre and *post: 1 when there is that division. */
static void divides(const cs_wbuild *b, int *pre, int *post)
{
    int world = b->shard_ranks * b->replica_ranks, f = 1;
    *pre = *post = 0;
    if (world < 2 || (b->t->fsdp_version == 2 && b->t->grad_reduce_dtype != CS_DTYPE_FP16)) return;
    while (world % f == 0 && world / f > f) f *= 2;
    *pre = f > 1;
    *post = (double)world / f > 1;
}

/* A unit's gradients reduced over the shard group once its backward
 * (`after`) ends, then (hybrid) the shard all-reduced across replicas,
 * with the copies and casts of the version; returns the reduction (its
 * end frees the unsharded gradient).
 * FSDP2 (_fsdp_collectives.py foreach_reduce, called by
 * FSDPParamGroup.post_backward on the current stream):
 * foreach_reduce_scatter_copy_in (torch._chunk_cat of the unsharded
 * gradients into the reduce-scatter input, casting to reduce_dtype;
 * narrowing casts go through a grad-dtype buffer first) on the compute
 * stream, before reduce_scatter_stream.wait_stream(current_stream); on the
 * reduce-scatter stream the divides (fp16) and, after the collective, the
 * sharded output cast to the parameters' dtype (_to_dtype_if_needed).
 * FSDP1 (_runtime_utils.py _post_backward_hook, _reduce_grad): autograd
 * assembles the flat gradient from the views' gradients (the views are
 * torch.split of the flat parameter, FlatParamHandle._get_unflat_views_unaligned:
 * their backward writes one flat tensor, read + written on the compute
 * stream); then, on the post-backward stream, the cast to reduce_dtype
 * (flat_param.grad.to(handle._reduce_dtype)), the pre-divide of the
 * padded unsharded gradient, the collective, the post-divide of the
 * shard, and _cast_grad_to_param_dtype back to the parameters' dtype. */
static int reduce(cs_wbuild *b, int layer, int after, double params, const char *what,
                  const char *across)
{
    const cs_training *t = b->t;
    const double ps = psize(b), gs = gsize(b), ss = ssize(b);
    const double out = b->row->grad_op == CS_OP_REDUCE_SCATTER ? params / b->shard_ranks : params;
    int pre, post;
    divides(b, &pre, &post);
    int v1 = t->fsdp_version == 1;
    double in = v1 ? 2 * ps : ps + gs + (gs < ps ? 2 * ps : 0); /* copy-in / split backward */
    after = copy(b, CS_STREAM_COMPUTE, layer, params * in,
                 after, v1 ? "flat grad copy" : "reduce-scatter copy-in");
    const cs_stream rs = CS_STREAM_COMM_REDUCE;
    if (v1 && gs != ps) after = copy(b, rs, layer, params * (ps + gs), after, "grad cast");
    if (pre) after = copy(b, rs, layer, 2 * params * gs, after, "grad pre-divide");
    int r = cs__wb_collective(b, rs, b->micro, layer, b->row->grad_op, params * gs,
                              t->grad_reduce_dtype, b->shard, what);
    cs__wb_dep(b, r, after, 0);
    if (b->replica_ranks > 1)
        cs__wb_collective(b, rs, b->micro, layer, CS_OP_ALL_REDUCE, params / b->shard_ranks * gs,
                          t->grad_reduce_dtype, CS_GROUP_DP_REPLICATE, across);
    if (post) copy(b, rs, layer, 2 * out * gs, -1, "grad post-divide");
    if (gs != ss) copy(b, rs, layer, out * (gs + ss), -1, "sharded grad cast");
    return r;
}

/* ---- the hooks ---- */

static double layer_params(const cs_wbuild *b) { return b->m->layer_params; }
static double root_params(const cs_wbuild *b)
{
    return b->m->embedding_params + root_layers(b) * layer_params(b);
}

/* _root_pre_forward: the root's hooks, then its gather, which waits for
 * the compute stream (FSDP1: _wait_for_computation_stream makes the
 * unshard and pre-unshard streams wait for the current stream; FSDP2
 * FSDPState._root_pre_forward: all_gather_copy_in_stream and
 * all_gather_stream wait_stream(current_stream), "Wait for optimizer
 * before implicitly prefetched all-gathers"): micro-batch i + 1's gathers
 * start after micro-batch i's backward, not under it. */
static void pre_forward(cs_wbuild *b)
{
    b->root_task = -1;
    hooks(b, 1 + root_layers(b));
    if (!gathers(b)) return;
    double params = root_params(b);
    int ag;
    b->root_task = gather(b, -1, params, "root", cs__wb_last(b, CS_STREAM_COMPUTE), &ag);
    cs__wb_task(b, ag)->mem_at_start = gathered(b) * params * psize(b);
}

static void forward_unit(cs_wbuild *b, int l)
{
    int f;
    if (whole(b) || !gathers(b)) {
        if (!whole(b) && l == unit_first(b, l)) hooks(b, unit_size(b, l));
        f = cs__wb_forward(b, l);
        if (l == 0) cs__wb_dep(b, f, b->root_task, 0);
        return;
    }
    const double unit = unit_size(b, l) * b->param_bytes[1];
    int ready = -1;
    if (l == unit_first(b, l)) {
        hooks(b, unit_size(b, l));
        int ag;
        ready = gather(b, l, unit_size(b, l) * layer_params(b), "fwd", -1, &ag);
        cs__wb_task(b, ag)->mem_at_start = gathered(b) * unit;
        /* rate limiter: the unit `limit` units back must have been freed */
        long back = (long)l - (long)b->limit * per_unit(b); /* no limit: 1 << 30 units */
        if (b->reshard && back >= 0) cs__wb_dep(b, ag, b->fwd[unit_last(b, (int)back)], 0);
    }
    f = cs__wb_forward(b, l);
    cs__wb_dep(b, f, ready, 0);
    if (l == 0) cs__wb_dep(b, f, b->root_task, 0);
    if (b->reshard && l == unit_last(b, l)) cs__wb_task(b, f)->mem_at_end = -unit;
}

/* The backward gather of the unit ending at layer l (its first layer in
 * backward order), prefetched per backward_prefetch: PRE when the
 * previous unit's backward starts, POST / NONE when it ends. */
static int backward_gather(cs_wbuild *b, int l)
{
    int ag, k = per_unit(b);
    int next = l + 1; /* the previous unit in backward order starts at its last layer */
    int prev_start = next >= b->layers ? b->head_bwd : b->bwd[unit_last(b, next)];
    int prev_end = next >= b->layers ? b->head_bwd : b->bwd[next];
    int pre = b->t->backward_prefetch == CS_PREFETCH_PRE;
    int ready = gather(b, l, unit_size(b, l) * layer_params(b), "bwd", -1, &ag);
    cs__wb_task(b, ag)->mem_at_start = unit_size(b, l) * b->param_bytes[1];
    cs__wb_dep(b, ag, pre ? prev_start : prev_end, pre);
    long ahead = unit_first(b, l) + (long)b->limit * k; /* rate limiter (none: 1 << 30) */
    if (ahead < b->layers) cs__wb_dep(b, ag, b->bwd[unit_first(b, (int)ahead)], 0);
    return ready;
}

/* The backward of layer l, and at its unit's first layer the unit's
 * reduce. With backward prefetch (PRE or POST) the next unit's gather is
 * issued before this unit's reduce-scatter (torch fsdp/_runtime_utils.py
 * _post_backward_hook: _post_backward_reshard prefetches, then
 * _reduce_grad; PRE's prefetch comes earlier still, in the pre-backward
 * hook), so it is built first: on one process group's NCCL stream
 * (serial groups, iteration.h) the order of issue is the order of run, and
 * fsdp/api.py BackwardPrefetch says that is the point: POST "overlaps the
 * current reduce-scatter and the next gradient computation". Without
 * prefetch the gather is issued in its own unit's pre-backward hook,
 * after the reduce-scatter. FSDP1 only: FSDP2's collectives have their own
 * streams (no serial group), and its gather's copy-out on the compute
 * stream follows this unit's reduce-scatter copy-in. */
static void backward_unit(cs_wbuild *b, int l)
{
    int ready = -1, unit_end = !whole(b) && l == unit_last(b, l);
    if (unit_end) hooks(b, unit_size(b, l));
    if (unit_end && gathers(b) && b->reshard)
        ready = b->gather_ahead >= 0 ? b->gather_ahead : backward_gather(b, l);
    b->gather_ahead = -1;
    int k = cs__wb_backward(b, l);
    cs__wb_dep(b, k, ready, 0);
    if (gathers(b)) /* the layer's unsharded gradient is allocated by its backward */
        cs__wb_task(b, k)->mem_at_start += b->param_bytes[1];
    if (whole(b) || l != unit_first(b, l)) return;
    const double unit = unit_size(b, l) * b->param_bytes[1];
    if (gathers(b)) cs__wb_task(b, k)->mem_at_end -= gathered(b) * unit; /* resharded */
    if (l > 0 && gathers(b) && b->reshard && b->t->backward_prefetch != CS_PREFETCH_NONE &&
        b->t->fsdp_version == 1)
        b->gather_ahead = backward_gather(b, l - 1);
    int r = reduce(b, l, k, unit_size(b, l) * layer_params(b), "grads", "replicas");
    /* the unsharded gradients live until their reduce-scatter is done */
    if (gathers(b)) cs__wb_task(b, r)->mem_at_end = -unit;
}

static void post_backward(cs_wbuild *b)
{
    hooks(b, 1 + root_layers(b));
    double params = root_params(b);
    int r = reduce(b, -1, b->bwd[0], params, "root grads", "root replicas");
    /* resharded; a whole-model unit's layer gradients are freed too */
    if (gathers(b))
        cs__wb_task(b, r)->mem_at_end = -(gathered(b) * params * psize(b) +
                                          root_layers(b) * b->param_bytes[1]);
}

/* Layer units resident at once while gathering with resharding. */
static int resident_units(const cs_training *t)
{
    int prefetched = t->backward_prefetch != CS_PREFETCH_NONE || t->forward_prefetch;
    int units = 1 + prefetched;
    if (t->limit_all_gathers > 0 && units > t->limit_all_gathers) units = t->limit_all_gathers;
    return units;
}

/* A unit's parameters: fsdp_unit_layers layers (0: the whole model). */
static double unit_params(const cs_model *m, const cs_training *t)
{
    if (t->fsdp_unit_layers == 0) return m->params;
    int k = t->fsdp_unit_layers < m->layers ? t->fsdp_unit_layers : m->layers;
    return k * m->layer_params;
}

static void full_shard_memory(const cs_model *m, const cs_training *t, const cs_layout *l,
                              cs_strategy_mem *out)
{
    if (l->group[CS_GROUP_DP_SHARD].size == 1) return; /* nothing is sharded: no gathers */
    double ps = cs_dtype_size(t->param_dtype);
    double unit = unit_params(m, t) * ps, root = m->embedding_params * ps;
    if (t->fsdp_unit_layers == 0) /* one unit: all gathered, all gradients unsharded */
        out->unsharded_bytes = 2 * m->params * ps;
    else if (cs_strategy_reshard_after_forward(t))
        out->unsharded_bytes = root + resident_units(t) * unit + root + unit;
    else
        out->unsharded_bytes = m->params * ps + root + unit; /* + unsharded gradients */
}

static void shard_grad_op_memory(const cs_model *m, const cs_training *t,
                                 const cs_layout *l, cs_strategy_mem *out)
{
    double ps = cs_dtype_size(t->param_dtype);
    if (l->group[CS_GROUP_DP_SHARD].size == 1) return;
    double root = m->embedding_params * ps;
    out->unsharded_bytes = t->fsdp_unit_layers == 0 ? m->params * ps : root + unit_params(m, t) * ps;
}

static const char *shard_grad_op_contradiction(const cs_training *t, const char **key)
{
    *key = "reshard_after_forward";
    if (t->reshard_after_forward != 1) return NULL;
    return "fsdp_shard_grad_op keeps parameters unsharded from forward to backward; "
           "reshard_after_forward: true is fsdp_full_shard";
}

/* Aliases: torch's ShardingStrategy names (torch/distributed/fsdp/api.py:
 * FULL_SHARD, FullyShardedDataParallel's default, "maps to ZeRO-3";
 * SHARD_GRAD_OP "maps to ZeRO-2"), DeepSpeed's ZeRO stages 2 and 3
 * (deepspeed/runtime/zero/config.py: 2 shards gradients too, 3
 * parameters too), and fsdp for FullyShardedDataParallel's default. */
#define FSDP_HOOKS                                                                         \
    .pre_forward = pre_forward, .forward_unit = forward_unit, .backward_unit = backward_unit, \
    .post_backward = post_backward

const cs_strategy_row cs__strategy_fsdp_no_shard = {
    .aliases = (const char *const[]){"NO_SHARD", NULL},
    .color = "#009E73", /* bluish green */
    .knobs = CS_KNOBS_FSDP,
    .grad_op = CS_OP_ALL_REDUCE,
    FSDP_HOOKS,
};

const cs_strategy_row cs__strategy_fsdp_shard_grad_op = {
    .aliases = (const char *const[]){"zero2", "SHARD_GRAD_OP", NULL},
    .color = "#E69F00", /* orange */
    .knobs = CS_KNOBS_FSDP | CS_KNOB_BIT(CS_KNOB_RESHARD),
    .shards_grads = 1,
    .shards_optimizer = 1,
    .grad_op = CS_OP_REDUCE_SCATTER,
    .contradiction = shard_grad_op_contradiction,
    .memory_terms = shard_grad_op_memory,
    FSDP_HOOKS,
};

const cs_strategy_row cs__strategy_fsdp_full_shard = {
    .aliases = (const char *const[]){"zero3", "fsdp", "FULL_SHARD", NULL},
    .color = "#D55E00", /* vermillion */
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
    .aliases = (const char *const[]){"HYBRID_SHARD", NULL},
    .color = "#CC79A7", /* reddish purple */
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
