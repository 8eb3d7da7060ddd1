/* SPDX-License-Identifier: MIT */
/*
 * test-workload.c - the training-iteration graph and its execution:
 * bytes on the wire per primitive (the seed's figures), no_sync, overlap,
 * prefetch, the memory timeline's bookkeeping, determinism; collectives
 * timed by the discrete-event engine (training.collective_engine = des)
 * against the closed form on one node, the cross-build cache; every row of
 * the strategy table builds a well-formed graph, and the builder refuses
 * an undivided hybrid group with the table's message.
 */
#include <stdio.h>
#include <check.h>
#include <math.h>
#include <string.h>

#include "config/config.h"
#include "train/evaluate.h"
#include "train/iteration.h"
#include "train/scenario.h"
#include "train/strategy.h"
#include "train/workload.h"
#include "testutil.h"

typedef cs_test_setup setup;

static void simulate(const setup *s, cs_iteration *it)
{
    cs_workload *w;
    cs_diag d;
    ck_assert_msg(cs_workload_build(&s->m, &s->t, &s->topo, &w, &d) == 0, "%s", d.message);
    ck_assert_int_eq(cs_iteration_run(w, &s->t, it, &d), 0);
    cs_workload_free(w);
}

/* The seed's bytes on the wire, per rank per iteration, for model on n
 * ranks (seq_len > 0: at that length). */
static void check_wire_bytes(const char *model, int n, int seq_len)
{
    const double f = (double)(n - 1) / n;
    setup s;
    cs_iteration it;
    cs_test_setup_make(&s, "dgx-h100", model, CS_STRAT_DDP, n);
    if (seq_len > 0) s.m.seq_len = seq_len;
    ck_assert_int_eq(cs_model_derive(&s.m, NULL), 0);
    s.t.param_dtype = s.t.grad_reduce_dtype = CS_DTYPE_BF16;
    double pb = s.m.params * 2.0;
    simulate(&s, &it);
    ck_assert_double_eq_tol(it.wire_bytes_by_op[CS_OP_ALL_REDUCE], 2 * f * pb, 1e-6 * pb);
    ck_assert(it.wire_bytes_by_op[CS_OP_ALL_GATHER] == 0 && it.wire_bytes_by_op[CS_OP_REDUCE_SCATTER] == 0);
    cs_iteration_free(&it);

    s.t = (cs_training){0};
    cs_training_defaults(&s.t, CS_STRAT_FSDP_SHARD_GRAD_OP);
    simulate(&s, &it);
    double total = it.wire_bytes_by_op[CS_OP_ALL_GATHER] + it.wire_bytes_by_op[CS_OP_REDUCE_SCATTER];
    ck_assert_double_eq_tol(total, 2 * f * pb, 1e-6 * pb);
    cs_iteration_free(&it);

    /* FULL_SHARD: the layer units are gathered twice and reduce-scattered
     * once: 3(N-1)/N x their bytes. The root unit (embeddings, head) is not
     * freed after forward, as PyTorch FSDP's _post_forward_reshard skips the
     * root, so it is gathered once. */
    cs_training_defaults(&s.t, CS_STRAT_FSDP_FULL_SHARD);
    simulate(&s, &it);
    total = it.wire_bytes_by_op[CS_OP_ALL_GATHER] + it.wire_bytes_by_op[CS_OP_REDUCE_SCATTER];
    double layers = s.m.layer_params * s.m.layers * 2.0, root = s.m.embedding_params * 2.0;
    ck_assert_double_eq_tol(total, 3 * f * layers + 2 * f * root, 1e-6 * pb);
    ck_assert_double_eq_tol(it.wire_bytes_by_op[CS_OP_REDUCE_SCATTER], f * pb, 1e-6 * pb);
    ck_assert(fabs(total - 3 * f * pb) / (3 * f * pb) < 0.02);
    cs_iteration_free(&it);
}

START_TEST(wire_bytes_match_the_seed)
{
    check_wire_bytes("llama2-7b", 4096, 0);
}
END_TEST

/* A mixture of experts without expert parallelism: DDP all-reduces and
 * FSDP gathers and reduce-scatters every expert's parameters (46.7B for
 * Mixtral, not the 12.9B a token runs), while the model FLOPs are the
 * top-2's. */
START_TEST(experts_are_all_communicated)
{
    check_wire_bytes("mixtral-8x7b", 64, 4096); /* bytes of m.params: every expert */
    setup s;
    cs_test_setup_make(&s, "dgx-h100", "mixtral-8x7b", CS_STRAT_FSDP_FULL_SHARD, 64);
    s.m.seq_len = 4096;
    ck_assert_int_eq(cs_model_derive(&s.m, NULL), 0);
    ck_assert(s.m.params > 3.5 * s.m.active_params);
    cs_workload *w;
    cs_diag d;
    ck_assert_int_eq(cs_workload_build(&s.m, &s.t, &s.topo, &w, &d), 0);
    double tokens = (double)s.t.micro_batch * s.m.seq_len * s.t.grad_accum;
    ck_assert_double_eq_tol(cs_workload_model_flops_per_rank(w),
                            tokens * cs_model_flops_per_token(&s.m), 1);
    ck_assert(cs_workload_model_flops_per_rank(w) < 0.5 * 6 * s.m.params * tokens);
    cs_workload_free(w);
}
END_TEST

/* DDP's reducer copies each gradient into its bucket (divided by the
 * world size) and, unless gradient_as_bucket_view, the buckets back into
 * .grad: 2 x 4 bytes per parameter each way (amp: fp32 gradients), in the
 * last micro-batch only, on the compute stream; the buckets wait for the
 * copy-in. (Autocast's weight casts, every micro-batch: test-ddp.c.) */
START_TEST(ddp_bucket_copies)
{
    setup s;
    cs_test_setup_make(&s, "dgx-h100", "gpt3-1.3b", CS_STRAT_DDP, 8);
    s.t.grad_accum = 2;
    for (int view = 0; view < 2; view++) {
        s.t.gradient_as_bucket_view = view;
        cs_workload *w;
        cs_diag d;
        ck_assert_int_eq(cs_workload_build(&s.m, &s.t, &s.topo, &w, &d), 0);
        double in = 0, out = 0;
        int nin = 0;
        for (size_t i = 0; i < cs_workload_count(w); i++) {
            const cs_task *t = cs_workload_task(w, i);
            if (t->kind != CS_TASK_MEMORY || t->micro < 0) continue;
            if (strstr(t->name, "autocast")) continue;
            ck_assert_int_eq(t->stream, CS_STREAM_COMPUTE);
            ck_assert_int_eq(t->micro, 1); /* the last micro-batch only */
            if (strstr(t->name, "copy-in")) in += t->mem_bytes, nin++;
            else out += t->mem_bytes;
        }
        ck_assert_int_eq(nin, s.m.layers);
        ck_assert_double_eq_tol(in, 2 * 4 * s.m.params, 1e-6 * s.m.params);
        ck_assert_double_eq_tol(out, view ? 0 : 2 * 4 * s.m.params, 1e-6 * s.m.params);
        /* every bucket's all-reduce waits for a copy-in */
        for (size_t i = 0; i < cs_workload_count(w); i++) {
            const cs_task *t = cs_workload_task(w, i);
            if (t->kind != CS_TASK_COLLECTIVE) continue;
            ck_assert_int_eq(t->ndeps, 1);
            ck_assert_ptr_nonnull(strstr(cs_workload_task(w, (size_t)t->deps[0])->name, "copy-in"));
        }
        cs_iteration it;
        ck_assert_int_eq(cs_iteration_run(w, &s.t, &it, &d), 0);
        ck_assert(it.copies_s > 0 && it.copies_s < it.compute_s);
        cs_iteration_free(&it);
        cs_workload_free(w);
    }
}
END_TEST

/* Which graphs run a group's collectives one at a time: DDP and FSDP1
 * (ProcessGroupNCCL's internal stream), not FSDP2 (its own streams). */
START_TEST(serial_groups_by_strategy)
{
    setup s;
    const struct { cs_strategy st; int version, serial; } cases[] = {
        {CS_STRAT_DDP, 2, 1}, {CS_STRAT_ZERO1, 2, 1}, {CS_STRAT_FSDP_FULL_SHARD, 1, 1},
        {CS_STRAT_FSDP_FULL_SHARD, 2, 0}, {CS_STRAT_FSDP_SHARD_GRAD_OP, 2, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cs_test_setup_make(&s, "dgx-h100", "gpt3-1.3b", cases[i].st, 8);
        s.t.fsdp_version = cases[i].version;
        cs_workload *w;
        cs_diag d;
        ck_assert_int_eq(cs_workload_build(&s.m, &s.t, &s.topo, &w, &d), 0);
        ck_assert_int_eq(cs_workload_serial_groups(w), cases[i].serial);
        cs_workload_free(w);
    }
}
END_TEST

/* The id of micro-batch 0's collective `op` of layer l whose name holds
 * `what` (-1: none). */
static int find_collective(const cs_workload *w, cs_op op, int layer, const char *what)
{
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *tk = cs_workload_task(w, i);
        if (tk->kind == CS_TASK_COLLECTIVE && tk->op == op && tk->layer == layer &&
            tk->micro == 0 && strstr(tk->name, what))
            return (int)i;
    }
    return -1;
}

/* FSDP1 issues the next unit's backward gather before this unit's
 * reduce-scatter under BACKWARD_PRE and BACKWARD_POST (torch
 * fsdp/_runtime_utils.py _post_backward_hook: _post_backward_reshard
 * prefetches, then _reduce_grad), after it without prefetch; on one
 * process group (one NCCL stream) that order is the order they run in.
 * On 16 nodes behind one NIC each (the collectives outlast the compute)
 * the serial order with prefetch costs little against no serialisation,
 * and without prefetch the next unit's compute waits for both (5% and
 * more slower; 12% here). */
START_TEST(fsdp1_gathers_issued_before_reduce_scatters)
{
    setup s;
    const cs_prefetch modes[] = {CS_PREFETCH_PRE, CS_PREFETCH_POST, CS_PREFETCH_NONE};
    double serial_s[3], free_s[3];
    for (int i = 0; i < 3; i++) {
        cs_test_setup_make(&s, "dgx-h100", "gpt3-1.3b", CS_STRAT_FSDP_FULL_SHARD, 8);
        s.t.fsdp_version = 1;
        s.t.backward_prefetch = modes[i];
        cs_workload *w;
        cs_diag d;
        ck_assert_int_eq(cs_workload_build(&s.m, &s.t, &s.topo, &w, &d), 0);
        for (int l = 1; l < s.m.layers; l++) {
            int ag = find_collective(w, CS_OP_ALL_GATHER, l - 1, "bwd");
            int rs = find_collective(w, CS_OP_REDUCE_SCATTER, l, "grads");
            ck_assert(ag >= 0 && rs >= 0);
            if (modes[i] == CS_PREFETCH_NONE) ck_assert_int_gt(ag, rs);
            else ck_assert_int_lt(ag, rs);
        }
        cs_workload_free(w);
        /* the same on a slow network: the order decides the time */
        cs_cluster c = s.topo.cluster;
        c.inter.nics_per_node = 1;
        cs_topology topo;
        ck_assert_int_eq(cs_topology_build(&c, 128, 16, &topo, &d), 0);
        ck_assert_int_eq(cs_workload_build(&s.m, &s.t, &topo, &w, &d), 0);
        cs_iteration it;
        ck_assert_int_eq(cs_iteration_run(w, &s.t, &it, &d), 0);
        serial_s[i] = it.iteration_time_s;
        cs_iteration_free(&it);
        cs_workload_set_serial_groups(w, 0);
        ck_assert_int_eq(cs_iteration_run(w, &s.t, &it, &d), 0);
        free_s[i] = it.iteration_time_s;
        cs_iteration_free(&it);
        cs_workload_free(w);
    }
    ck_assert(serial_s[0] < 1.05 * free_s[0]);
    ck_assert(serial_s[1] < 1.05 * free_s[1]);
    ck_assert(serial_s[0] < 0.95 * serial_s[2]);
    ck_assert(serial_s[1] < 0.95 * serial_s[2]);
}
END_TEST

/* limit_all_gathers: false is no limit (1 << 30 units in flight): with
 * units of several layers the rate limiter's reach was 2^30 x layers, an
 * int overflow that indexed the backward's tasks out of bounds (a crash
 * from a valid scenario). */
START_TEST(no_gather_limit_with_multi_layer_units)
{
    setup s;
    const cs_prefetch modes[] = {CS_PREFETCH_PRE, CS_PREFETCH_POST, CS_PREFETCH_NONE};
    for (int unit = 2; unit <= 3; unit++)
        for (int i = 0; i < 3; i++)
            for (int v = 1; v <= 2; v++) {
                cs_test_setup_make(&s, "dgx-h100", "gpt2-124m", CS_STRAT_FSDP_FULL_SHARD, 16);
                s.t.limit_all_gathers = 0;
                s.t.fsdp_unit_layers = unit;
                s.t.backward_prefetch = modes[i];
                s.t.fsdp_version = v;
                s.t.grad_accum = 2;
                cs_iteration it;
                simulate(&s, &it);
                ck_assert(it.iteration_time_s > 0);
                cs_iteration_free(&it);
            }
}
END_TEST

START_TEST(ddp_communicates_once_per_step_fsdp_per_micro_batch)
{
    setup s;
    cs_iteration a, b;
    cs_test_setup_make(&s, "dgx-h100", "gpt3-1.3b", CS_STRAT_DDP, 16);
    simulate(&s, &a);
    s.t.grad_accum = 4;
    simulate(&s, &b);
    ck_assert_double_eq_tol(a.wire_bytes_by_op[CS_OP_ALL_REDUCE], b.wire_bytes_by_op[CS_OP_ALL_REDUCE], 1);
    /* four micro-batches of compute (the one step apart) */
    ck_assert(b.compute_s - b.optimizer_s > 3 * (a.compute_s - a.optimizer_s));
    cs_iteration_free(&a);
    cs_iteration_free(&b);
    cs_training_defaults(&s.t, CS_STRAT_FSDP_FULL_SHARD);
    simulate(&s, &a);
    s.t.grad_accum = 4;
    simulate(&s, &b);
    ck_assert_double_eq_tol(b.wire_bytes_by_op[CS_OP_REDUCE_SCATTER],
                            4 * a.wire_bytes_by_op[CS_OP_REDUCE_SCATTER], 1);
    cs_iteration_free(&a);
    cs_iteration_free(&b);
}
END_TEST

START_TEST(time_accounting_is_consistent)
{
    for (int i = 0; i < CS_STRAT_COUNT; i++) {
        setup s;
        cs_iteration it;
        cs_test_setup_make(&s, "dgx-a100", "gpt3-1.3b", (cs_strategy)i, 64);
        simulate(&s, &it);
        /* every instant is compute, exposed communication, an exposed
         * side-stream copy, or the GPU waiting for the CPU to issue work:
         * with one rank's graph there is no other idle time */
        ck_assert_double_eq_tol(it.compute_s + it.exposed_comm_s + it.side_copies_s +
                                    it.cpu_wait_s,
                                it.iteration_time_s, 1e-9 * it.iteration_time_s);
        ck_assert(it.copies_s >= it.side_copies_s);
        double parts = 0;
        for (int op = 0; op < CS_OP_COUNT; op++) parts += it.exposed_by_op_s[op];
        ck_assert_double_eq_tol(parts, it.exposed_comm_s, 1e-9 * it.iteration_time_s + 1e-15);
        ck_assert(it.mfu > 0 && it.mfu < 1);
        /* every allocation on the timeline is released by the end */
        ck_assert_double_eq_tol(it.mem_bytes[it.nmem - 1], 0, 1e-3);
        ck_assert(it.dyn_peak_bytes > 0);
        cs_iteration_free(&it);
    }
}
END_TEST

START_TEST(overlap_hides_communication_on_fast_networks)
{
    setup s;
    cs_iteration fast, slow;
    cs_test_setup_make(&s, "dgx-h100", "llama2-7b", CS_STRAT_DDP, 64);
    s.t.micro_batch = 2;
    simulate(&s, &fast);
    s.c.inter.nic_bw_Bps /= 20; /* 20 Gb/s NICs */
    s.topo = cs_test_topology(&s.c, 64, 0);
    simulate(&s, &slow);
    ck_assert(fast.exposed_comm_s < 0.25 * fast.iteration_time_s);
    ck_assert(slow.exposed_comm_s > 3 * fast.exposed_comm_s);
    ck_assert(slow.iteration_time_s > fast.iteration_time_s);
    cs_iteration_free(&fast);
    cs_iteration_free(&slow);
}
END_TEST

START_TEST(backward_prefetch_helps_fsdp)
{
    setup s;
    cs_iteration pre, none;
    cs_test_setup_make(&s, "dgx-h100", "llama2-13b", CS_STRAT_FSDP_FULL_SHARD, 128);
    s.t.backward_prefetch = CS_PREFETCH_PRE;
    simulate(&s, &pre);
    s.t.backward_prefetch = CS_PREFETCH_NONE;
    simulate(&s, &none);
    ck_assert(pre.iteration_time_s < none.iteration_time_s);
    ck_assert(pre.exposed_by_op_s[CS_OP_ALL_GATHER] < none.exposed_by_op_s[CS_OP_ALL_GATHER]);
    cs_iteration_free(&pre);
    cs_iteration_free(&none);
}
END_TEST

START_TEST(slowdown_factor_costs_time_when_overlapping)
{
    setup s;
    cs_iteration a, b;
    cs_test_setup_make(&s, "dgx-h100", "llama2-7b", CS_STRAT_FSDP_FULL_SHARD, 64);
    s.t.comm_compute_slowdown = 0;
    simulate(&s, &a);
    s.t.comm_compute_slowdown = 0.2;
    simulate(&s, &b);
    ck_assert(b.iteration_time_s > a.iteration_time_s);
    ck_assert(b.iteration_time_s < 1.2 * a.iteration_time_s + 1e-12);
    cs_iteration_free(&a);
    cs_iteration_free(&b);
}
END_TEST

START_TEST(fsdp_full_shard_timeline_holds_few_units)
{
    setup s;
    cs_iteration it;
    cs_test_setup_make(&s, "dgx-h100", "llama2-70b", CS_STRAT_FSDP_FULL_SHARD, 64);
    simulate(&s, &it);
    /* activations of every layer plus at most a few unsharded units */
    double act = s.m.layers *
                 cs_model_activation_bytes_per_layer(&s.m, 1, cs_training_kept_activations(&s.t));
    double unit = s.m.layer_params * 2.0;
    ck_assert(it.dyn_peak_bytes > act);
    ck_assert(it.dyn_peak_bytes < act + (s.t.limit_all_gathers + 3) * unit + s.m.embedding_params * 2 +
                                      s.m.seq_len * (double)s.m.vocab * 4);
    cs_iteration_free(&it);
}
END_TEST

/* The executor's timeline (workload.c's memory deltas on its tasks) and
 * the allocator replay (memreplay.c, the authority: memory.c) are two
 * accountings of the same tensors: the timeline's allocated peak (its
 * peak less the overheads and the flat fraction it applies) is within the
 * gradients + 8% of the replay's peak allocated for every strategy and
 * policy: the timeline counts gradients whole from the start of backward
 * (memory.c's over-count, at most the gradients), the replay allocates
 * them as backward makes them. */
START_TEST(timeline_peak_agrees_with_estimate)
{
    for (int i = 0; i < CS_STRAT_COUNT; i++)
        for (int ck = 0; ck < CS_CKPT_COUNT; ck++) {
            setup s;
            cs_iteration it;
            const cs_strategy st = (cs_strategy)i;
            cs_test_setup_make(&s, "dgx-h100", "gpt3-6.7b", st, 64);
            s.t.checkpointing = (cs_ckpt)ck;
            cs_memory m;
            cs_diag d;
            ck_assert_int_eq(cs_memory_estimate(&s.m, &s.t, &s.topo, 0, &m, &d), 0);
            simulate(&s, &it);
            double timeline = (it.peak_bytes - m.cuda_context_bytes - m.nccl_bytes) /
                              (1 + cs_training_flat_fragmentation(&s.t));
            double gap = fabs(timeline - m.peak_allocated_bytes);
            ck_assert_msg(gap <= m.grads_bytes + 0.08 * m.peak_allocated_bytes,
                          "%s ckpt %d: timeline %.4g vs replay %.4g (gradients %.4g)",
                          cs_strategy_name(st), ck, timeline, m.peak_allocated_bytes, m.grads_bytes);
            cs_iteration_free(&it);
        }
}
END_TEST

START_TEST(deterministic)
{
    setup s;
    cs_iteration a, b;
    cs_test_setup_make(&s, "dgx-a100", "gpt3-6.7b", CS_STRAT_FSDP_HYBRID_SHARD, 32);
    simulate(&s, &a);
    simulate(&s, &b);
    ck_assert(memcmp(&a.iteration_time_s, &b.iteration_time_s, sizeof(double)) == 0);
    ck_assert(memcmp(a.end_s, b.end_s, a.ntasks * sizeof(double)) == 0);
    cs_iteration_free(&a);
    cs_iteration_free(&b);
}
END_TEST

/* Builds and runs with s->t's engine, using cache (may be NULL). */
static void simulate_cached(const setup *s, cs_pricing_cache *cache, cs_workload **w,
                            cs_iteration *it)
{
    cs_diag d;
    ck_assert_msg(cs_workload_build_cached(&s->m, &s->t, &s->topo, cache, w, &d) == 0, "%s",
                  d.message);
    ck_assert_int_eq(cs_iteration_run(*w, &s->t, it, &d), 0);
}

/* An unnamed build (sweeps) is the named build without the names: the
 * same tasks, durations and run, bit for bit, for every strategy. The
 * fault: the named build must have names (else the check proves nothing). */
START_TEST(unnamed_build_runs_the_same)
{
    for (int st = 0; st < CS_STRAT_COUNT; st++) {
        setup s;
        cs_test_setup_make(&s, "dgx-h100", "gpt2-355m", (cs_strategy)st, 16);
        s.t.grad_accum = 2;
        cs_diag d;
        cs_workload *wn, *wu;
        cs_iteration a, b;
        cs_workload_opts named = {0}, unnamed = {.unnamed = 1};
        ck_assert_int_eq(cs_workload_build_opts(&s.m, &s.t, &s.topo, &named, &wn, &d), 0);
        ck_assert_int_eq(cs_workload_build_opts(&s.m, &s.t, &s.topo, &unnamed, &wu, &d), 0);
        ck_assert_uint_eq(cs_workload_count(wn), cs_workload_count(wu));
        int named_any = 0;
        for (size_t i = 0; i < cs_workload_count(wn); i++) {
            const cs_task *x = cs_workload_task(wn, i), *y = cs_workload_task(wu, i);
            named_any |= x->name[0] != 0;
            ck_assert_str_eq(y->name, "");
            ck_assert(x->kind == y->kind && x->stream == y->stream && x->ndeps == y->ndeps);
            ck_assert(memcmp(&x->duration_s, &y->duration_s, sizeof(double)) == 0);
        }
        ck_assert_msg(named_any, "%s: the named build has names", cs_strategy_name((cs_strategy)st));
        ck_assert_int_eq(cs_iteration_run(wn, &s.t, &a, &d), 0);
        ck_assert_int_eq(cs_iteration_run(wu, &s.t, &b, &d), 0);
        ck_assert(memcmp(&a.iteration_time_s, &b.iteration_time_s, sizeof(double)) == 0);
        ck_assert(memcmp(&a.exposed_comm_s, &b.exposed_comm_s, sizeof(double)) == 0);
        ck_assert(memcmp(&a.peak_bytes, &b.peak_bytes, sizeof(double)) == 0);
        ck_assert_str_eq(b.peak_task, "");
        cs_iteration_free(&a);
        cs_iteration_free(&b);
        cs_workload_free(wn);
        cs_workload_free(wu);
    }
}
END_TEST

/* On one uniform node the engines agree (the oracle), so DES collectives
 * leave the iteration within 1% of the closed form, with the same choice
 * of algorithm and protocol for every collective. The fault: the same
 * comparison against a DES run on a node with half the NVLink bandwidth
 * must fail. */
START_TEST(des_collectives_match_closed_form_on_one_node)
{
    const cs_strategy sts[] = {CS_STRAT_DDP, CS_STRAT_FSDP_NO_SHARD, CS_STRAT_FSDP_FULL_SHARD,
                               CS_STRAT_ZERO1};
    for (size_t k = 0; k < sizeof sts / sizeof *sts; k++) {
        setup s;
        cs_test_setup_make(&s, "dgx-h100", "gpt2-1.5b", sts[k], 8);
        cs_workload *wa, *wd;
        cs_iteration a, b;
        simulate_cached(&s, NULL, &wa, &a);
        s.t.collective_engine = CS_ENGINE_DES;
        simulate_cached(&s, NULL, &wd, &b);
        ck_assert_uint_eq(cs_workload_count(wa), cs_workload_count(wd));
        double comm_a = 0, diff = 0;
        for (size_t i = 0; i < cs_workload_count(wa); i++) {
            const cs_task *x = cs_workload_task(wa, i), *y = cs_workload_task(wd, i);
            if (x->kind != CS_TASK_COLLECTIVE) continue;
            ck_assert_int_eq(x->algo, y->algo);
            ck_assert_int_eq(x->proto, y->proto);
            comm_a += x->duration_s;
            diff += fabs(x->duration_s - y->duration_s);
        }
        ck_assert_msg(comm_a > 0, "%s has collectives", cs_strategy_name(sts[k]));
        ck_assert_msg(diff <= 0.01 * comm_a, "%s: collectives differ by %g of %g s",
                      cs_strategy_name(sts[k]), diff, comm_a);
        ck_assert_double_eq_tol(b.iteration_time_s, a.iteration_time_s, 0.01 * a.iteration_time_s);
        cs_iteration_free(&b);
        cs_workload_free(wd);

        /* fault: DES on a slower fabric must not pass for the closed form */
        s.c.intra.bw_Bps /= 2;
        s.topo = cs_test_topology(&s.c, 8, 0);
        simulate_cached(&s, NULL, &wd, &b);
        double comm_b = 0;
        for (size_t i = 0; i < cs_workload_count(wd); i++)
            if (cs_workload_task(wd, i)->kind == CS_TASK_COLLECTIVE)
                comm_b += cs_workload_task(wd, i)->duration_s;
        ck_assert_msg(comm_b > 1.2 * comm_a, "%s: the slow fabric went unnoticed (%g vs %g s)",
                      cs_strategy_name(sts[k]), comm_b, comm_a);
        cs_iteration_free(&a);
        cs_iteration_free(&b);
        cs_workload_free(wa);
        cs_workload_free(wd);
    }
}
END_TEST

/* A cache changes no result: every task's duration, algorithm and
 * protocol is bitwise the uncached build's, for all three process groups
 * (hybrid sharding on 2 nodes), and a second build finds everything. */
START_TEST(des_cache_changes_nothing)
{
    setup s;
    cs_test_setup_make(&s, "dgx-h100", "gpt3-6.7b", CS_STRAT_FSDP_HYBRID_SHARD, 16);
    s.t.collective_engine = CS_ENGINE_DES;
    s.t.grad_accum = 2;
    cs_pricing_cache *c = cs_pricing_cache_new();
    cs_workload *w0, *w1, *w2;
    cs_iteration i0, i1, i2;
    simulate_cached(&s, NULL, &w0, &i0);
    simulate_cached(&s, c, &w1, &i1);
    size_t n1;
    unsigned long long h1, m1, h2, m2;
    cs_pricing_cache_stats(c, &n1, &h1, &m1);
    ck_assert_uint_gt(n1, 2); /* several sizes on at least two groups */
    ck_assert_uint_eq(m1, n1);
    simulate_cached(&s, c, &w2, &i2);
    cs_pricing_cache_stats(c, NULL, &h2, &m2);
    ck_assert_uint_eq(m2, m1);  /* nothing new */
    ck_assert_uint_ge(h2, h1 + n1);
    ck_assert_uint_eq(cs_workload_count(w0), cs_workload_count(w1));
    ck_assert_uint_eq(cs_workload_count(w0), cs_workload_count(w2));
    for (size_t i = 0; i < cs_workload_count(w0); i++) {
        const cs_task *x = cs_workload_task(w0, i), *y = cs_workload_task(w1, i),
                      *z = cs_workload_task(w2, i);
        ck_assert(memcmp(&x->duration_s, &y->duration_s, sizeof(double)) == 0);
        ck_assert(memcmp(&x->duration_s, &z->duration_s, sizeof(double)) == 0);
        ck_assert(x->algo == y->algo && x->algo == z->algo);
        ck_assert(x->proto == y->proto && x->proto == z->proto);
    }
    ck_assert(memcmp(i0.end_s, i2.end_s, i0.ntasks * sizeof(double)) == 0);
    /* across nodes the engines differ by design (algo_tree.c), so the DES
     * durations are really the DES's: some task differs from the closed form */
    s.t.collective_engine = CS_ENGINE_ANALYTIC;
    cs_workload *wa;
    cs_iteration ia;
    simulate_cached(&s, NULL, &wa, &ia);
    int differs = 0;
    for (size_t i = 0; i < cs_workload_count(w0); i++)
        differs |= cs_workload_task(wa, i)->duration_s != cs_workload_task(w0, i)->duration_s;
    ck_assert_msg(differs, "DES durations equal the closed form's on 2 nodes: engine ignored?");
    cs_iteration_free(&ia);
    cs_workload_free(wa);
    s.t.collective_engine = CS_ENGINE_DES;
    /* another rank count is another topology: misses, not wrong hits */
    setup t = s;
    t.topo = cs_test_topology(&t.c, 32, 0);
    cs_workload *w3;
    cs_iteration i3;
    simulate_cached(&t, c, &w3, &i3);
    unsigned long long m3;
    cs_pricing_cache_stats(c, NULL, NULL, &m3);
    ck_assert_uint_gt(m3, m2);
    cs_iteration_free(&i0);
    cs_iteration_free(&i1);
    cs_iteration_free(&i2);
    cs_iteration_free(&i3);
    cs_workload_free(w0);
    cs_workload_free(w1);
    cs_workload_free(w2);
    cs_workload_free(w3);
    cs_pricing_cache_free(c);
}
END_TEST

/* Every row builds a graph whose tasks are in id order with earlier
 * dependencies, whose collectives run on communication streams in the
 * row's groups, and whose gradients are reduced by the row's primitive. */
START_TEST(every_row_builds_a_well_formed_graph)
{
    for (int i = 0; i < CS_STRAT_COUNT; i++) {
        setup s;
        cs_test_setup_make(&s, "dgx-h100", "gpt2-355m", (cs_strategy)i, 16);
        s.t.grad_accum = 2;
        cs_workload *w;
        cs_diag d;
        ck_assert_msg(cs_workload_build(&s.m, &s.t, &s.topo, &w, &d) == 0, "%s", d.message);
        const cs_strategy_row *r = cs_strategy_row_of((cs_strategy)i);
        int grad_reductions = 0;
        for (size_t k = 0; k < cs_workload_count(w); k++) {
            const cs_task *x = cs_workload_task(w, k);
            ck_assert_int_eq(x->id, (int)k);
            for (int j = 0; j < x->ndeps; j++) ck_assert_int_lt(x->deps[j], x->id);
            /* collectives run on communication streams only; those
             * streams may also run copies and casts (FSDP) */
            int comm = cs_stream_kind_of(x->stream) == CS_STREAM_KIND_COMM;
            if (x->kind == CS_TASK_COLLECTIVE) ck_assert(comm);
            if (comm) ck_assert(x->kind != CS_TASK_COMPUTE);
            if (x->kind != CS_TASK_COLLECTIVE) continue;
            ck_assert(r->hybrid || x->group == CS_GROUP_WORLD);
            if (x->micro >= 0 && x->op != CS_OP_ALL_GATHER && x->group != CS_GROUP_DP_REPLICATE) {
                ck_assert_int_eq(x->op, r->grad_op);
                grad_reductions++;
            }
        }
        ck_assert_msg(grad_reductions > 0, "%s reduces no gradients",
                      cs_strategy_name((cs_strategy)i));
        /* the graph's groups are its layout's */
        cs_mesh g;
        ck_assert_int_eq(cs_layout_mesh(&s.t, &s.topo, &g, &d), 0);
        const cs_layout *l = cs_workload_layout(w);
        ck_assert_int_eq(cs_workload_group_ranks(w, CS_GROUP_DP_SHARD),
                         g.dim[cs_mesh_find(&g, "dp_shard")].size);
        ck_assert_int_eq(cs_workload_group_ranks(w, CS_GROUP_DP_REPLICATE),
                         g.dim[cs_mesh_find(&g, "dp_replicate")].size);
        ck_assert_int_eq(l->mesh.ranks, s.topo.ranks);
        cs_workload_free(w);
    }
}
END_TEST

/* The builder refuses an undivided hybrid group with the table's one
 * message, as the memory estimate does. */
START_TEST(builder_hybrid_message_is_the_tables)
{
    setup s;
    cs_test_setup_make(&s, "dgx-h100", "gpt2-124m", CS_STRAT_FSDP_HYBRID_SHARD, 16);
    s.t.shard_group = 3;
    cs_workload *w = NULL;
    cs_diag d, dm;
    ck_assert_int_eq(cs_workload_build(&s.m, &s.t, &s.topo, &w, &d), CS_EINVAL);
    cs_memory mem;
    ck_assert_int_eq(cs_memory_estimate(&s.m, &s.t, &s.topo, 0, &mem, &dm), CS_EINVAL);
    ck_assert_str_eq(d.message, dm.message);
    CS_ASSERT_CONTAINS(d.message, "whole replicas");
}
END_TEST

/* The scenario key: analytic by default, des when asked, errors named. */
START_TEST(scenario_collective_engine_key)
{
    const char *base = "cluster: dgx-h100\nmodel: gpt2-124m\ntraining:\n  strategy: ddp\n";
    char yaml[256];
    cs_scenario sc;
    cs_diag d;
    ck_assert_msg(cs_scenario_load_string("s.yaml", base, strlen(base), &sc, &d) == 0, "%s", d.message);
    ck_assert_int_eq(sc.training.collective_engine, CS_ENGINE_ANALYTIC);
    snprintf(yaml, sizeof yaml, "%s  collective_engine: des\n", base);
    ck_assert_msg(cs_scenario_load_string("s.yaml", yaml, strlen(yaml), &sc, &d) == 0, "%s", d.message);
    ck_assert_int_eq(sc.training.collective_engine, CS_ENGINE_DES);
    snprintf(yaml, sizeof yaml, "%s  collective_engine: simgrid\n", base);
    ck_assert(cs_scenario_load_string("s.yaml", yaml, strlen(yaml), &sc, &d) != 0);
    ck_assert_int_eq(d.line, 5);
    CS_ASSERT_CONTAINS(d.message, "collective_engine");
}
END_TEST

/* Issue 27: above CS_EVALUATE_MICRO_BUILT micro-steps the iteration is
 * extrapolated from two short runs, not built whole; a caller asking for
 * the graph (a trace) gets the whole run, which must agree: every
 * strategy, with checkpointing and the DES engine, one grad-accum past the
 * limit. A run that did not repeat (a deliberately wrong period: the
 * whole run compared with one micro-step fewer) must fail the check. */
static void evaluate_pair(const setup *s, cs_evaluation *whole, cs_evaluation *folded)
{
    cs_diag d;
    cs_workload *w = NULL;
    cs_evaluate_opts o = {.simulate = 1, .workload = &w};
    ck_assert_msg(cs_evaluate_config(&s->m, &s->t, &s->topo, &o, whole, &d) == 0, "%s",
                  d.message);
    ck_assert_ptr_nonnull(w);
    cs_workload_free(w);
    cs_evaluate_opts f = {.simulate = 1};
    ck_assert_msg(cs_evaluate_config(&s->m, &s->t, &s->topo, &f, folded, &d) == 0, "%s",
                  d.message);
}

static int same_run(const cs_iteration *a, const cs_iteration *b)
{
    const double rel = 1e-9;
#define SAME(f) (fabs(a->f - b->f) <= rel * fmax(fabs(a->f), fabs(b->f)) + 1e-15)
    int ok = SAME(iteration_time_s) && SAME(compute_s) && SAME(optimizer_s) && SAME(copies_s) &&
             SAME(cpu_wait_s) && SAME(exposed_comm_s) && SAME(recompute_s) && SAME(mfu) &&
             SAME(hfu) && SAME(tokens_per_s) && SAME(peak_bytes) && SAME(peak_time_s);
    for (int op = 0; op < CS_OP_COUNT; op++)
        ok = ok && SAME(exposed_by_op_s[op]) && SAME(wire_bytes_by_op[op]);
#undef SAME
    return ok && !strcmp(a->peak_task, b->peak_task);
}

START_TEST(grad_accum_extrapolates_exactly)
{
    for (int st = 0; st < CS_STRAT_COUNT; st++) {
        setup s;
        cs_test_setup_make(&s, "dgx-h100", "gpt3-1.3b", (cs_strategy)st, 16);
        s.t.grad_accum = CS_EVALUATE_MICRO_BUILT + 7;
        if (st % 2) s.t.checkpointing = CS_CKPT_FULL;
        if (st == CS_STRAT_FSDP_FULL_SHARD) s.t.collective_engine = CS_ENGINE_DES;
        cs_evaluation whole, folded;
        evaluate_pair(&s, &whole, &folded);
        ck_assert_msg(same_run(&whole.iteration, &folded.iteration),
                      "%s: whole %.9g s, extrapolated %.9g s", cs_strategy_names[st],
                      whole.iteration.iteration_time_s, folded.iteration.iteration_time_s);
        /* the deliberate fault: one micro-step fewer is caught */
        cs_evaluation fewer;
        s.t.grad_accum--;
        cs_evaluate_opts f = {.simulate = 1};
        ck_assert_int_eq(cs_evaluate_config(&s.m, &s.t, &s.topo, &f, &fewer, NULL), 0);
        ck_assert(!same_run(&whole.iteration, &fewer.iteration));
        cs_evaluate_free(&whole);
        cs_evaluate_free(&folded);
        cs_evaluate_free(&fewer);
    }
    /* a million micro-steps: two short runs, not a million-step graph */
    setup s;
    cs_test_setup_make(&s, "dgx-h100", "gpt2-124m", CS_STRAT_FSDP_FULL_SHARD, 8);
    s.t.grad_accum = 1 << 20;
    cs_evaluation ev;
    cs_evaluate_opts f = {.simulate = 1};
    ck_assert_int_eq(cs_evaluate_config(&s.m, &s.t, &s.topo, &f, &ev, NULL), 0);
    ck_assert_uint_lt(ev.iteration.ntasks, 20000);
    cs_evaluate_free(&ev);
    /* a whole graph that large is refused, with the limit named */
    cs_workload *w = NULL;
    cs_evaluate_opts o = {.simulate = 1, .workload = &w};
    cs_diag d;
    ck_assert_int_eq(cs_evaluate_config(&s.m, &s.t, &s.topo, &o, &ev, &d), CS_EINVAL);
    ck_assert_ptr_null(w);
    ck_assert_ptr_nonnull(strstr(d.message, "grad_accum at most 4096"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("workload");
    TCase *tc = tcase_create("iteration");
    tcase_add_test(tc, wire_bytes_match_the_seed);
    tcase_add_test(tc, grad_accum_extrapolates_exactly);
    tcase_add_test(tc, experts_are_all_communicated);
    tcase_add_test(tc, ddp_communicates_once_per_step_fsdp_per_micro_batch);
    tcase_add_test(tc, ddp_bucket_copies);
    tcase_add_test(tc, serial_groups_by_strategy);
    tcase_add_test(tc, fsdp1_gathers_issued_before_reduce_scatters);
    tcase_add_test(tc, no_gather_limit_with_multi_layer_units);
    tcase_add_test(tc, time_accounting_is_consistent);
    tcase_add_test(tc, overlap_hides_communication_on_fast_networks);
    tcase_add_test(tc, backward_prefetch_helps_fsdp);
    tcase_add_test(tc, slowdown_factor_costs_time_when_overlapping);
    tcase_add_test(tc, fsdp_full_shard_timeline_holds_few_units);
    tcase_add_test(tc, timeline_peak_agrees_with_estimate);
    tcase_add_test(tc, deterministic);
    tcase_add_test(tc, des_collectives_match_closed_form_on_one_node);
    tcase_add_test(tc, des_cache_changes_nothing);
    tcase_add_test(tc, scenario_collective_engine_key);
    tcase_add_test(tc, every_row_builds_a_well_formed_graph);
    tcase_add_test(tc, unnamed_build_runs_the_same);
    tcase_add_test(tc, builder_hybrid_message_is_the_tables);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
