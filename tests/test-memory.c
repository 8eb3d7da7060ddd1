/* SPDX-License-Identifier: MIT */
/*
 * test-memory.c - per-rank memory: the sharding degrees of every strategy,
 * every row of the strategy table (groups divide, degrees, lines summing
 * to the peak, the row's own terms; one check and one message for hybrid
 * groups), the strategies' ordering, the lines of the full estimate
 * against Korthikanti et al.'s formulas, and the micro-batch search
 * against a linear scan. ZeRO's Tables 1 and 2 are in test-memory-zero.c.
 * Each comparison has a deliberately wrong case it must reject. Runs from
 * the project root.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "test-memory.h"
#include "train/evaluate.h"
#include "train/layout.h"
#include "train/strategy.h"


/* ---- degrees and ordering ---- */

/* The layout of t and m on topo, into l (a failure fails the test). */
static void layout_of(const cs_model *m, const cs_training *t, const cs_topology *topo, cs_layout *l)
{
    cs_diag d;
    ck_assert_msg(cs_layout_build(m, t, topo, l, &d) == 0, "%s", d.message);
}

START_TEST(shard_degrees_every_strategy)
{
    cs_cluster c = cs_test_cluster("dgx-h100");
    cs_topology t16 = cs_test_topology(&c, 16, 0); /* 2 nodes x 8 */
    static const struct {
        cs_strategy s;
        int shard_group;
        int p, g, o;
    } cases[] = {
        {CS_STRAT_DDP, 0, 1, 1, 1},
        {CS_STRAT_FSDP_NO_SHARD, 0, 1, 1, 1},
        {CS_STRAT_ZERO1, 0, 1, 1, 16},
        {CS_STRAT_FSDP_SHARD_GRAD_OP, 0, 1, 16, 16},
        {CS_STRAT_FSDP_FULL_SHARD, 0, 16, 16, 16},
        {CS_STRAT_FSDP_HYBRID_SHARD, 0, 8, 8, 8},   /* one node */
        {CS_STRAT_FSDP_HYBRID_SHARD, 4, 4, 4, 4},
        {CS_STRAT_FSDP_HYBRID_SHARD, 64, 16, 16, 16}, /* capped at N */
    };
    cs_model m = cs_test_model("gpt3-1.3b");
    cs_layout *l = malloc(sizeof *l);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_training t = training(cases[i].s);
        t.shard_group = cases[i].shard_group;
        layout_of(&m, &t, &t16, l);
        int p = l->params_degree, g = l->grads_degree, o = l->optimizer_degree;
        ck_assert_msg(p == cases[i].p && g == cases[i].g && o == cases[i].o,
                      "case %zu (%s): got %d,%d,%d", i, cs_strategy_name(cases[i].s), p, g, o);
    }
    /* "One node" is the ranks on a node: 16 ranks on 4 nodes -> 4. */
    cs_topology t16x4 = cs_test_topology(&c, 16, 4);
    cs_training t = training(CS_STRAT_FSDP_HYBRID_SHARD);
    layout_of(&m, &t, &t16x4, l);
    ck_assert_int_eq(l->group[CS_GROUP_DP_SHARD].size, 4);
    ck_assert_int_eq(l->group[CS_GROUP_DP_REPLICATE].size, 4);
    /* One rank: nothing to shard. */
    cs_topology t1 = cs_test_topology(&c, 1, 0);
    layout_of(&m, &t, &t1, l);
    ck_assert_int_eq(l->params_degree * l->grads_degree * l->optimizer_degree, 1);
    free(l);
    /* A hybrid group that does not divide the ranks is an error. */
    t.shard_group = 3;
    cs_memory mem;
    cs_diag d;
    ck_assert_int_eq(cs_memory_estimate(&m, &t, &t16, 0, &mem, &d), CS_EINVAL);
    CS_ASSERT_CONTAINS(d.message, "divide");
}
END_TEST

/* Every row of the strategy table on several layouts: its groups divide
 * the world, its degrees are 1 or the shard group, the lines of the
 * estimate sum to the peak, and its own terms are the table's. A line
 * left out of the sum must be noticed. */
START_TEST(every_row_terms_sum_and_groups_divide)
{
    cs_cluster c = cs_test_cluster("dgx-h100");
    cs_model m = cs_test_model("gpt3-1.3b");
    static const int layouts[][3] = {{1, 0, 0}, {8, 0, 0}, {16, 0, 0}, {16, 4, 4}, {64, 0, 16}};
    for (size_t li = 0; li < sizeof layouts / sizeof *layouts; li++)
        for (int s = 0; s < CS_STRAT_COUNT; s++) {
            cs_topology topo = cs_test_topology(&c, layouts[li][0], layouts[li][1]);
            cs_training t = training((cs_strategy)s);
            t.shard_group = cs_strategy_knob_applies((cs_strategy)s, CS_KNOB_SHARD_GROUP)
                                ? layouts[li][2]
                                : 0;
            const char *name = cs_strategy_name((cs_strategy)s);
            cs_layout *l = malloc(sizeof *l);
            layout_of(&m, &t, &topo, l);
            int world = l->group[CS_GROUP_WORLD].size, shard = l->group[CS_GROUP_DP_SHARD].size,
                replica = l->group[CS_GROUP_DP_REPLICATE].size;
            ck_assert_int_eq(world, topo.ranks);
            ck_assert_int_eq(shard * replica, world);
            const cs_strategy_row *r = cs_strategy_row_of((cs_strategy)s);
            if (!r->hybrid) ck_assert_int_eq(shard, world);
            int dp = l->params_degree, dg = l->grads_degree, dopt = l->optimizer_degree;
            ck_assert_int_eq(dp, r->shards_params ? shard : 1);
            ck_assert_int_eq(dg, r->shards_grads ? shard : 1);
            ck_assert_int_eq(dopt, r->shards_optimizer ? shard : 1);

            cs_memory mem = estimate(&m, &t, &topo, 0);
            /* amp (ddp, zero1): fp32 params and grads, Adam's fp32 m, v;
             * fsdp_param_dtype: bf16 + bf16 + fp32 master, m, v */
            double ps = r->autocast ? 4 : 2, P = m.params, K = r->autocast ? 8 : 12;
            ck_assert_double_eq_tol(mem.params_bytes, P * ps / dp, 1e-9 * P);
            ck_assert_double_eq_tol(mem.grads_bytes, P * ps / dg, 1e-9 * P);
            ck_assert_double_eq_tol(mem.optimizer_bytes, P * K / dopt, 1e-9 * P);
            /* the peak is the replay's reserved bytes plus what lies
             * outside the allocator; the cache line is reserved - allocated */
            double sum = mem.peak_allocated_bytes + mem.fragmentation_bytes +
                         mem.cuda_context_bytes + mem.nccl_bytes;
            ck_assert_msg(fabs(sum - mem.peak_bytes) <= 1.0, "%s: lines %.0f, peak %.0f", name,
                          sum, mem.peak_bytes);
            ck_assert(mem.fragmentation_bytes >= 0);
            /* the fault: a line left out does not pass for the peak */
            ck_assert(fabs(sum - mem.fragmentation_bytes - mem.peak_bytes) > 1.0);
            /* the replay holds at least the states and one block's kept
             * activations at once, and no more than every analytic line */
            double bwd = mem.activations_bytes + mem.unsharded_bytes + mem.temp_bytes;
            double lines = mem.model_states_bytes + mem.buckets_bytes + fmax(bwd, mem.step_temp_bytes);
            ck_assert_msg(mem.peak_allocated_bytes >= mem.params_bytes + mem.optimizer_bytes &&
                              mem.peak_allocated_bytes <= 1.02 * lines,
                          "%s: replay %.0f, lines %.0f", name, mem.peak_allocated_bytes, lines);
            cs_strategy_mem own = {0};
            if (r->memory_terms) r->memory_terms(&m, &t, l, &own);
            ck_assert_double_eq(mem.unsharded_bytes, own.unsharded_bytes);
            ck_assert_double_eq(mem.buckets_bytes, own.buckets_bytes);
            /* one communicator per group of more than one rank */
            double comm = 2.0 * c.coll.channels * (4 + 0.5 + 4.6875) * MiB;
            ck_assert_double_eq_tol(mem.nccl_bytes, comm * ((shard > 1) + (replica > 1)), 1.0);
            free(l);
        }
}
END_TEST

/* Whole replicas are checked in one place, with one message, for the
 * memory estimate, the graph builder and the scenario loader alike. */
START_TEST(hybrid_groups_one_check_one_message)
{
    cs_cluster c = cs_test_cluster("dgx-h100");
    cs_topology t16 = cs_test_topology(&c, 16, 0);
    cs_model m = cs_test_model("gpt3-1.3b");
    cs_training t = training(CS_STRAT_FSDP_HYBRID_SHARD);
    t.shard_group = 3;
    cs_mesh g;
    cs_diag dg, dm;
    ck_assert_int_eq(cs_layout_mesh(&t, &t16, &g, &dg), CS_EINVAL);
    ck_assert_str_eq(dg.message, "fsdp_hybrid_shard needs the shard group (3 ranks) to divide "
                                 "the 16 ranks into whole replicas");
    cs_memory mem;
    ck_assert_int_eq(cs_memory_estimate(&m, &t, &t16, 0, &mem, &dm), CS_EINVAL);
    ck_assert_str_eq(dm.message, dg.message);
    /* a group that is not hybrid always divides */
    for (int s = 0; s < CS_STRAT_COUNT; s++) {
        if (cs_strategy_row_of((cs_strategy)s)->hybrid) continue;
        cs_training u = training((cs_strategy)s);
        u.shard_group = 3;
        ck_assert_int_eq(cs_layout_mesh(&u, &t16, &g, NULL), 0);
    }
}
END_TEST

START_TEST(strategy_ordering)
{
    cs_cluster c = cs_test_cluster("dgx-h100");
    cs_model m = cs_test_model("llama2-7b");
    static const int ns[] = {2, 8, 64, 512};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        cs_topology topo = cs_test_topology(&c, ns[i], 0);
        for (int only = 1; only >= 0; only--) {
            cs_training tf = training(CS_STRAT_FSDP_FULL_SHARD);
            cs_training tg = training(CS_STRAT_FSDP_SHARD_GRAD_OP);
            cs_training tz = training(CS_STRAT_ZERO1);
            cs_training td = training(CS_STRAT_DDP);
            cs_training tn = training(CS_STRAT_FSDP_NO_SHARD);
            cs_memory f = estimate(&m, &tf, &topo, only), g = estimate(&m, &tg, &topo, only),
                      z = estimate(&m, &tz, &topo, only), dd = estimate(&m, &td, &topo, only),
                      nn = estimate(&m, &tn, &topo, only);
            ck_assert_msg(f.model_states_bytes < g.model_states_bytes &&
                              g.model_states_bytes < z.model_states_bytes &&
                              z.model_states_bytes < dd.model_states_bytes,
                          "N=%d: %g %g %g %g", ns[i], f.model_states_bytes, g.model_states_bytes,
                          z.model_states_bytes, dd.model_states_bytes);
            ck_assert_double_eq(nn.model_states_bytes, dd.model_states_bytes);
            if (only) {
                ck_assert(f.peak_bytes < g.peak_bytes && g.peak_bytes < z.peak_bytes &&
                          z.peak_bytes < dd.peak_bytes);
            } else { /* reserved may meet the capacity (cached segments released) */
                ck_assert_msg(f.peak_allocated_bytes < g.peak_allocated_bytes &&
                                  g.peak_allocated_bytes < z.peak_allocated_bytes &&
                                  z.peak_allocated_bytes < dd.peak_allocated_bytes,
                              "N=%d: %.4g %.4g %.4g %.4g", ns[i], f.peak_allocated_bytes,
                              g.peak_allocated_bytes, z.peak_allocated_bytes, dd.peak_allocated_bytes);
                /* reserved in order, unless both met the capacity and fit */
#define LE(a, b) ((a).peak_bytes <= (b).peak_bytes || ((a).fits && (b).fits && (a).peak_bytes > 0.95 * (a).capacity_bytes))
                ck_assert(LE(f, g) && LE(g, z) && LE(z, dd));
#undef LE
            }
        }
    }
}
END_TEST

/* The seed's figure: 13B parameters under DDP with bf16 + fp32-master
 * Adam need more than 200 GB of static memory per GPU. */
START_TEST(ddp_13b_over_200GB)
{
    cs_cluster c = cs_test_cluster("dgx-h100");
    cs_topology topo = cs_test_topology(&c, 8, 0);
    cs_model m;
    cs_diag d;
    ck_assert_int_eq(cs_model_generic(13e9, &m, &d), 0);
    cs_training t = training(CS_STRAT_DDP);
    t.optimizer = CS_OPT_ADAM;
    cs_memory states = estimate(&m, &t, &topo, 1);
    ck_assert_double_eq_tol(states.model_states_bytes, 16 * 13e9, 1.0);
    ck_assert(states.model_states_bytes > 200e9);
    ck_assert(!states.fits);
    cs_memory full = estimate(&m, &t, &topo, 0);
    ck_assert(full.peak_bytes > states.peak_bytes);
    ck_assert(!full.fits);
    /* Fully sharded over 64 GPUs the states are 3.25 GB. */
    cs_topology t64 = cs_test_topology(&c, 64, 0);
    t.strategy = CS_STRAT_FSDP_FULL_SHARD;
    ck_assert_double_eq_tol(estimate(&m, &t, &t64, 1).model_states_bytes, 3.25e9, 1.0);
}
END_TEST

START_TEST(optimizer_bytes)
{
    cs_training t = zero_training(CS_STRAT_DDP);
    ck_assert_double_eq(cs_training_optimizer_bytes_per_param(&t), 12); /* ZeRO K */
    t.optimizer = CS_OPT_ADAM;
    ck_assert_double_eq(cs_training_optimizer_bytes_per_param(&t), 12);
    t.optimizer = CS_OPT_SGD_MOMENTUM;
    ck_assert_double_eq(cs_training_optimizer_bytes_per_param(&t), 8);
    t.optimizer = CS_OPT_SGD;
    ck_assert_double_eq(cs_training_optimizer_bytes_per_param(&t), 4);
    t.master_weights_fp32 = 0;
    ck_assert_double_eq(cs_training_optimizer_bytes_per_param(&t), 0);
    t.optimizer = CS_OPT_ADAMW; /* pure bf16: states in bf16 */
    ck_assert_double_eq(cs_training_optimizer_bytes_per_param(&t), 4);
    t.param_dtype = CS_DTYPE_FP32; /* fp32 params: m, v in fp32, no extra master */
    ck_assert_double_eq(cs_training_optimizer_bytes_per_param(&t), 8);
    t.master_weights_fp32 = 1;
    ck_assert_double_eq(cs_training_optimizer_bytes_per_param(&t), 8);
    /* amp (DDP's default): bf16 compute, but torch.optim updates the fp32
     * parameters: fp32 m, v and no master copy, whatever master_weights */
    cs_training a = training(CS_STRAT_DDP);
    ck_assert_int_eq(a.mixed_precision, CS_MP_AMP);
    ck_assert_int_eq(a.param_dtype, CS_DTYPE_BF16);
    ck_assert_double_eq(cs_training_optimizer_bytes_per_param(&a), 8);
    ck_assert_int_eq(cs_training_stored_dtype(&a), CS_DTYPE_FP32);
    ck_assert_int_eq(cs_training_bucket_wire_dtype(&a), CS_DTYPE_FP32);
    a.ddp_comm_hook = CS_HOOK_BF16_COMPRESS;
    ck_assert_int_eq(cs_training_bucket_wire_dtype(&a), CS_DTYPE_BF16);
    ck_assert_double_eq(cs_training_autocast_cast_bytes_per_param(&a), 4 + 2);
    a.mixed_precision = CS_MP_PURE;
    cs_training_resolve_precision(&a);
    ck_assert_double_eq(cs_training_autocast_cast_bytes_per_param(&a), 0);
    ck_assert_double_eq(cs_training_optimizer_bytes_per_param(&a), 4);
}
END_TEST

/* ---- the full estimate, line by line ---- */

/* GPT-3 13B is the case Korthikanti Table 2 describes exactly (GeLU 4h
 * MLP, multi-head attention): its activations are sbh(34 + 5as/h). The
 * case: FSDP full shard, micro-batch 2, scores stored (Korthikanti Table 2
 * as printed), on 64 H100 ranks. */
typedef struct full_case {
    cs_cluster c;
    cs_topology topo;
    cs_model m;
    cs_training t;
    double P, s, b, h, a, L, v;
    double act, unit, root; /* the activations, one layer unit, the root unit */
} full_case;

static full_case full_case_make(void)
{
    full_case f;
    f.c = cs_test_cluster("dgx-h100");
    f.topo = cs_test_topology(&f.c, 64, 0);
    f.m = cs_test_model("gpt3-13b");
    f.t = training(CS_STRAT_FSDP_FULL_SHARD);
    f.t.micro_batch = 2;
    f.t.flash_attention = 0;
    f.P = f.m.params, f.s = 2048, f.b = 2, f.h = 5120, f.a = 40, f.L = 40, f.v = 50257;
    f.act = f.L * f.s * f.b * f.h * (34 + 5 * f.a * f.s / f.h);
    f.unit = 2 * f.m.layer_params, f.root = 2 * f.m.embedding_params;
    return f;
}

START_TEST(full_estimate_lines)
{
    full_case f = full_case_make();
    cs_memory mem = estimate(&f.m, &f.t, &f.topo, 0);
    cs_training tf = f.t;
    tf.flash_attention = 1; /* fused attention keeps no s x s scores */
    cs_memory memf = estimate(&f.m, &tf, &f.topo, 0);

    double P = f.P, s = f.s, b = f.b, h = f.h, L = f.L, v = f.v;
    ck_assert_double_eq_tol(memf.activations_bytes, L * s * b * h * 34, 1e-9 * L * s * b * h * 34);
    ck_assert_double_eq_tol(mem.params_bytes, 2 * P / 64, 1e-6 * P);
    ck_assert_double_eq_tol(mem.grads_bytes, 2 * P / 64, 1e-6 * P);
    ck_assert_double_eq_tol(mem.optimizer_bytes, 12 * P / 64, 1e-6 * P);
    ck_assert_double_eq_tol(mem.activations_bytes, f.act, 1e-9 * f.act);
    /* root unit (embeddings) kept, current + one prefetched layer, and the
     * unsharded gradients of the root and the current layer */
    ck_assert_double_eq_tol(mem.unsharded_bytes, 2 * f.root + 3 * f.unit, 1.0);
    ck_assert_double_eq(mem.buckets_bytes, 0);
    /* the loss: log_softmax's fp32 result, nll_loss's and log_softmax's
     * fp32 gradients at once (loss.c) */
    ck_assert_double_eq_tol(mem.temp_bytes, b * s * v * (4 + 4 + 4), 1.0);
    /* foreach AdamW: sqrt(exp_avg_sq) over the fp32 shard */
    ck_assert_double_eq_tol(mem.step_temp_bytes, 4 * P / 64, 1e-6 * P);
    ck_assert_double_eq(mem.cuda_context_bytes, 512 * MiB);
    ck_assert_double_eq_tol(mem.nccl_bytes, 2 * 16 * (4 + 0.5 + 4.6875) * MiB, 1.0);
    /* the cache line is what the replay reserved beyond its tensors */
    ck_assert_double_eq_tol(mem.fragmentation_bytes,
                            mem.peak_reserved_bytes - mem.peak_allocated_bytes, 1.0);
    ck_assert(mem.peak_reserved_bytes > mem.peak_allocated_bytes);
    ck_assert_double_eq_tol(mem.overhead_bytes,
                            mem.cuda_context_bytes + mem.nccl_bytes + mem.fragmentation_bytes,
                            1.0);
    ck_assert_double_eq_tol(mem.peak_bytes,
                            mem.peak_reserved_bytes + mem.cuda_context_bytes + mem.nccl_bytes, 1.0);
    /* a flat fraction set by the user overrides the replay's reserved */
    cs_training to = f.t;
    to.fragmentation = 0.05;
    cs_memory mo = estimate(&f.m, &to, &f.topo, 0);
    ck_assert_double_eq_tol(mo.peak_reserved_bytes, 1.05 * mo.peak_allocated_bytes, 1.0);
    ck_assert_double_eq(mem.capacity_bytes, 80 * GiB);
    ck_assert_int_eq(mem.fits, mem.peak_bytes <= 80 * GiB);
    CS_ASSERT_CONTAINS(mem.peak_phase, "backward");
}
END_TEST

/* The same case with checkpointing, prefetch and resharding changed. */
START_TEST(full_estimate_knobs)
{
    full_case f = full_case_make();
    cs_training t = f.t;
    double P = f.P, s = f.s, b = f.b, h = f.h, L = f.L, root = f.root, unit = f.unit;
    /* Selective recomputation keeps 34 sbh; full keeps 2 sbh per layer
     * plus one layer's full set while it is recomputed. */
    t.checkpointing = CS_CKPT_SELECTIVE;
    ck_assert_double_eq_tol(estimate(&f.m, &t, &f.topo, 0).activations_bytes, L * 34 * s * b * h,
                            1.0);
    t.checkpointing = CS_CKPT_FULL;
    ck_assert_double_eq_tol(estimate(&f.m, &t, &f.topo, 0).activations_bytes,
                            L * 2 * s * b * h + f.act / L, 1.0);

    /* No prefetch: one layer unit gathered at a time. */
    t.checkpointing = CS_CKPT_NONE;
    t.backward_prefetch = CS_PREFETCH_NONE;
    ck_assert_double_eq_tol(estimate(&f.m, &t, &f.topo, 0).unsharded_bytes, 2 * root + 2 * unit,
                            1.0);
    /* Prefetch, but the limiter allows one all-gather: still one. */
    t.backward_prefetch = CS_PREFETCH_PRE;
    t.limit_all_gathers = 1;
    ck_assert_double_eq_tol(estimate(&f.m, &t, &f.topo, 0).unsharded_bytes, 2 * root + 2 * unit,
                            1.0);
    /* No resharding after forward: every unit stays gathered. */
    t.limit_all_gathers = 2;
    t.reshard_after_forward = 0;
    ck_assert_double_eq_tol(estimate(&f.m, &t, &f.topo, 0).unsharded_bytes, 2 * P + root + unit,
                            1.0);
}
END_TEST

/* The same model under the other strategies, and the overhead lines. */
START_TEST(full_estimate_other_strategies)
{
    full_case f = full_case_make();
    double P = f.P;
    /* SHARD_GRAD_OP: full parameters in params_bytes, gradients gathered. */
    cs_training g = training(CS_STRAT_FSDP_SHARD_GRAD_OP);
    cs_memory gm = estimate(&f.m, &g, &f.topo, 0);
    ck_assert_double_eq_tol(gm.params_bytes, 2 * P, 1.0);
    ck_assert_double_eq_tol(gm.unsharded_bytes, f.root + f.unit, 1.0);

    /* DDP: bucket buffers are a second gradient copy unless views. */
    cs_training dt = training(CS_STRAT_DDP);
    cs_memory dm = estimate(&f.m, &dt, &f.topo, 0);
    ck_assert_double_eq_tol(dm.buckets_bytes, 4 * P, 1.0); /* amp: fp32 buckets */
    ck_assert_double_eq(dm.unsharded_bytes, 0);
    dt.gradient_as_bucket_view = 1;
    ck_assert_double_eq(estimate(&f.m, &dt, &f.topo, 0).buckets_bytes, 0);

    /* Overheads: explicit NCCL bytes win; one rank has no communicator;
     * hybrid sharding over nodes has two. */
    dt.nccl_buffer_bytes = 123 * MiB;
    ck_assert_double_eq(estimate(&f.m, &dt, &f.topo, 0).nccl_bytes, 123 * MiB);
    dt.nccl_buffer_bytes = -1;
    cs_topology t1 = cs_test_topology(&f.c, 1, 0);
    ck_assert_double_eq(estimate(&f.m, &dt, &t1, 0).nccl_bytes, 0);
    cs_training hy = training(CS_STRAT_FSDP_HYBRID_SHARD);
    double full_shard_nccl = estimate(&f.m, &f.t, &f.topo, 0).nccl_bytes;
    ck_assert_double_eq_tol(estimate(&f.m, &hy, &f.topo, 0).nccl_bytes, 2 * full_shard_nccl, 1.0);
    dt.fragmentation = 0;
    dt.cuda_context_bytes = 0;
    cs_memory bare = estimate(&f.m, &dt, &t1, 0);
    ck_assert_double_eq(bare.overhead_bytes, 0);
}
END_TEST

/* ---- micro-batch search ---- */

/* Reference: the largest b in 1..limit that fits, by linear scan. */
static int max_mb_linear(const cs_model *m, const cs_training *t, const cs_topology *topo,
                         int limit)
{
    cs_training tt = *t;
    int best = 0;
    for (int b = 1; b <= limit; b++) {
        tt.micro_batch = b;
        if (estimate(m, &tt, topo, 0).fits) best = b;
    }
    return best;
}

START_TEST(max_micro_batch)
{
    cs_cluster c = cs_test_cluster("dgx-h100");
    cs_model m = cs_test_model("llama2-7b");
    cs_training t = training(CS_STRAT_FSDP_FULL_SHARD);
    t.checkpointing = CS_CKPT_SELECTIVE;
    int prev = -1, saw_zero = 0, saw_many = 0;
    for (double gib = 8; gib <= 512; gib *= 1.25) {
        c.gpu.memory_bytes = gib * GiB;
        cs_topology topo = cs_test_topology(&c, 8, 0);
        int b = cs_evaluate_max_micro_batch(&m, &t, &topo, NULL); /* the replay's verdict */
        ck_assert_msg(b >= prev, "%.1f GiB: %d < %d", gib, b, prev);
        prev = b;
        if (b == 0) saw_zero = 1;
        if (b > 8) saw_many = 1;
        if (b <= 64) ck_assert_int_eq(b, max_mb_linear(&m, &t, &topo, 65));
        if (b > 0) {
            cs_training tt = t;
            tt.micro_batch = b;
            ck_assert(estimate(&m, &tt, &topo, 0).fits);
            tt.micro_batch = b + 1;
            ck_assert(!estimate(&m, &tt, &topo, 0).fits);
        }
    }
    ck_assert(saw_zero && saw_many);
    /* The reference must disagree with a wrong answer. */
    c.gpu.memory_bytes = 80 * GiB;
    cs_topology topo = cs_test_topology(&c, 8, 0);
    int b = cs_memory_max_micro_batch(&m, &t, &topo);
    ck_assert_int_gt(b, 1);
    ck_assert_int_ne(b - 1, max_mb_linear(&m, &t, &topo, 65));
    /* Capacity beyond any micro-batch: the search's upper end. */
    c.gpu.memory_bytes = 1e18;
    topo = cs_test_topology(&c, 8, 0);
    ck_assert_int_eq(cs_memory_max_micro_batch(&m, &t, &topo), 1 << 16);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, shard_degrees_every_strategy);
    tcase_add_test(tc, every_row_terms_sum_and_groups_divide);
    tcase_add_test(tc, hybrid_groups_one_check_one_message);
    tcase_add_test(tc, strategy_ordering);
    tcase_add_test(tc, ddp_13b_over_200GB);
    tcase_add_test(tc, optimizer_bytes);
    tcase_add_test(tc, full_estimate_lines);
    tcase_add_test(tc, full_estimate_knobs);
    tcase_add_test(tc, full_estimate_other_strategies);
    tcase_add_test(tc, max_micro_batch);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return cs_test_run(suite());
}
