/* SPDX-License-Identifier: MIT */
/*
 * test-ddp.c - DDP and ZeroRedundancyOptimizer as PyTorch runs them:
 * mixed precision under torch.autocast (fp32 parameters, gradients and
 * buckets, the weights cast once per forward and the copies held until
 * backward), the compress hook, the untied head's early bucket, zero1's
 * all-reduce + per-rank broadcasts, the foreach optimizer's intermediates,
 * and one memory peak per configuration (memory, simulate and the largest
 * micro-batch agree). Each test fails when its effect is removed.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train/evaluate.h"
#include "train/scenario.h"
#include "train/strategy.h"
#include "testutil.h"

typedef struct setup {
    cs_cluster c;
    cs_model m;
    cs_training t;
    cs_topology topo;
} setup;

static void make(setup *s, const char *model, cs_strategy st, int ranks)
{
    s->c = cs_test_cluster("dgx-h100");
    s->m = cs_test_model(model);
    cs_training_defaults(&s->t, st);
    s->topo = cs_test_topology(&s->c, ranks, 0);
}

static cs_workload *build(const setup *s)
{
    cs_workload *w;
    cs_diag d;
    ck_assert_msg(cs_workload_build(&s->m, &s->t, &s->topo, &w, &d) == 0, "%s", d.message);
    return w;
}

/* Sum of size_bytes over the collectives of op (and their count). */
static double op_bytes(const cs_workload *w, cs_op op, int *count)
{
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *t = cs_workload_task(w, i);
        if (t->kind == CS_TASK_COLLECTIVE && t->op == op) sum += t->size_bytes * t->count, n++;
    }
    if (count) *count = n;
    return sum;
}

static const cs_task *named(const cs_workload *w, const char *name)
{
    for (size_t i = 0; i < cs_workload_count(w); i++)
        if (!strcmp(cs_workload_task(w, i)->name, name)) return cs_workload_task(w, i);
    return NULL;
}

/* torch.autocast: each weight read (fp32) and written (bf16) once per
 * forward, every micro-batch, right before the unit's forward on the
 * compute stream; the copies are held until the unit's backward. */
START_TEST(amp_casts_weights_once_per_forward)
{
    setup s;
    make(&s, "llama2-7b", CS_STRAT_DDP, 8);
    s.t.grad_accum = 2;
    ck_assert_int_eq(s.t.mixed_precision, CS_MP_AMP);
    cs_workload *w = build(&s);
    double bytes = 0;
    int n = 0;
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *t = cs_workload_task(w, i);
        if (!strstr(t->name, "autocast cast")) continue;
        n++;
        bytes += t->mem_bytes;
        ck_assert_int_eq(t->stream, CS_STREAM_COMPUTE);
        ck_assert_int_eq(t->kind, CS_TASK_MEMORY);
        ck_assert(strstr(cs_workload_task(w, i + 1)->name, "forward") != NULL);
    }
    double weights = s.m.layers * s.m.layer_params + (double)s.m.vocab * s.m.hidden;
    ck_assert_int_eq(n, 2 * (s.m.layers + 1));
    ck_assert_double_eq_tol(bytes, 2 * (4 + 2) * weights, 1e-6 * weights);
    /* the bf16 copies are on the timeline at its backward-start peak */
    cs_iteration it;
    cs_diag d;
    ck_assert_int_eq(cs_iteration_run(w, &s.t, &it, &d), 0);
    const cs_memory *m = cs_workload_memory(w);
    ck_assert_double_eq_tol(m->temp_bytes,
                            s.m.seq_len * (double)s.m.vocab * (4 + 4 + 4) + 2 * weights, 1.0);
    double act = s.m.layers * cs_model_activation_bytes_per_layer(
                                  &s.m, 1, cs_training_kept_activations(&s.t));
    ck_assert(it.dyn_peak_bytes >= act + 2 * weights);
    cs_iteration_free(&it);
    cs_workload_free(w);
    /* a pure bf16 model casts nothing */
    s.t.mixed_precision = CS_MP_PURE;
    cs_training_resolve_precision(&s.t);
    w = build(&s);
    ck_assert_ptr_null(named(w, "autocast cast 0"));
    cs_workload_free(w);
}
END_TEST

/* amp: fp32 gradients and buckets, all-reduced in fp32 (4 P bytes);
 * default_hooks.bf16_compress_hook halves the bytes and adds its casts. */
START_TEST(amp_reduces_fp32_unless_hooked)
{
    setup s;
    make(&s, "gpt3-1.3b", CS_STRAT_DDP, 8);
    double P = s.m.params;
    cs_workload *w = build(&s);
    ck_assert_double_eq_tol(op_bytes(w, CS_OP_ALL_REDUCE, NULL), 4 * P, 1e-6 * P);
    cs_workload_free(w);
    s.t.ddp_comm_hook = CS_HOOK_BF16_COMPRESS;
    w = build(&s);
    ck_assert_double_eq_tol(op_bytes(w, CS_OP_ALL_REDUCE, NULL), 2 * P, 1e-6 * P);
    double in = 0, out = 0;
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *t = cs_workload_task(w, i);
        if (t->kind == CS_TASK_COLLECTIVE) ck_assert_int_eq(t->dtype, CS_DTYPE_BF16);
        if (strstr(t->name, "copy-in")) in += t->mem_bytes;
        if (strstr(t->name, "copy-out")) out += t->mem_bytes;
    }
    /* copy 4+4, cast 4+2, div_ 2+2; back: decompress 2+4, copy 4+4 */
    ck_assert_double_eq_tol(in, 18 * P, 1e-6 * P);
    ck_assert_double_eq_tol(out, 14 * P, 1e-6 * P);
    cs_workload_free(w);
}
END_TEST

/* Buckets follow the order gradients become ready: an untied head's
 * gradient is ready after the head's backward, so bucket 0 is its and
 * its all-reduce starts while the last layer's backward runs; a tied head
 * waits for the embedding's backward and goes in the last bucket. */
START_TEST(untied_head_fills_an_early_bucket)
{
    for (int tied = 0; tied < 2; tied++) {
        setup s;
        make(&s, tied ? "gpt3-1.3b" : "llama2-7b", CS_STRAT_DDP, 8);
        ck_assert_int_eq(s.m.tied_embeddings, tied);
        cs_workload *w = build(&s);
        cs_iteration it;
        cs_diag d;
        ck_assert_int_eq(cs_iteration_run(w, &s.t, &it, &d), 0);
        const cs_task *b0 = named(w, "all_reduce bucket 0");
        char last[32];
        snprintf(last, sizeof last, "backward %d", s.m.layers - 1);
        const cs_task *bl = named(w, last);
        ck_assert_ptr_nonnull(b0);
        ck_assert_ptr_nonnull(bl);
        const cs_task *ready = cs_workload_task(w, (size_t)b0->deps[0]);
        if (!tied) {
            ck_assert_int_eq(ready->layer, -1); /* the head's copy-in */
            ck_assert(it.start_s[b0->id] < it.end_s[bl->id]);
            /* the first buckets hold the head's fp32 gradient (all but what
             * shares a bucket with the last layer's: buckets are cut by bytes) */
            double head = 0;
            for (size_t i = 0; i < cs_workload_count(w); i++) {
                const cs_task *t = cs_workload_task(w, i);
                if (t->kind == CS_TASK_COLLECTIVE && t->deps[0] == ready->id)
                    head += t->size_bytes;
            }
            double hb = 4.0 * s.m.vocab * s.m.hidden;
            ck_assert(head <= hb && head > hb - s.t.bucket_cap_bytes);
        } else {
            ck_assert(it.start_s[b0->id] >= it.end_s[bl->id]);
        }
        cs_iteration_free(&it);
        cs_workload_free(w);
    }
}
END_TEST

/* ZeroRedundancyOptimizer over DDP: DDP's all-reduce stays (4 P bytes
 * under amp), then each rank broadcasts its updated partition (N
 * broadcasts of 4 P / N after the step); no reduce-scatter or all-gather. */
START_TEST(zero1_allreduces_then_broadcasts)
{
    setup s;
    make(&s, "gpt3-1.3b", CS_STRAT_ZERO1, 8);
    double P = s.m.params;
    cs_workload *w = build(&s);
    int nb, nrs, nag;
    ck_assert_double_eq_tol(op_bytes(w, CS_OP_ALL_REDUCE, NULL), 4 * P, 1e-6 * P);
    ck_assert_double_eq_tol(op_bytes(w, CS_OP_BROADCAST, &nb), 4 * P, 1e-6 * P);
    ck_assert_int_eq(nb, 8);
    op_bytes(w, CS_OP_REDUCE_SCATTER, &nrs);
    op_bytes(w, CS_OP_ALL_GATHER, &nag);
    ck_assert_int_eq(nrs + nag, 0);
    const cs_task *opt = named(w, "optimizer step");
    ck_assert_ptr_nonnull(opt);
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *t = cs_workload_task(w, i);
        if (t->kind == CS_TASK_COLLECTIVE && t->op == CS_OP_BROADCAST)
            ck_assert_int_eq(t->deps[0], opt->id);
    }
    /* the optimizer updates 1/N of the parameters */
    cs_training td = s.t;
    td.strategy = CS_STRAT_DDP;
    ck_assert_double_eq_tol(opt->mem_bytes * 8,
                            P * cs_training_optimizer_traffic_per_param(&td), 1e-6 * P);
    cs_workload_free(w);
}
END_TEST

/* DeepSpeed's stage 1, kept under its own name: 16-bit parameters and
 * gradients over a partitioned fp32 master (4 Psi + 12 Psi / N), the
 * gradients reduce-scattered and the 16-bit parameters all-gathered. */
START_TEST(deepspeed_zero1_reduce_scatters_and_gathers)
{
    setup s;
    make(&s, "gpt3-1.3b", CS_STRAT_DEEPSPEED_ZERO1, 8);
    double P = s.m.params;
    ck_assert_int_eq(s.t.mixed_precision, CS_MP_FSDP_PARAM_DTYPE);
    cs_workload *w = build(&s);
    int nar, nb;
    ck_assert_double_eq_tol(op_bytes(w, CS_OP_REDUCE_SCATTER, NULL), 2 * P, 1e-6 * P);
    ck_assert_double_eq_tol(op_bytes(w, CS_OP_ALL_GATHER, NULL), 2 * P, 1e-6 * P);
    op_bytes(w, CS_OP_ALL_REDUCE, &nar);
    op_bytes(w, CS_OP_BROADCAST, &nb);
    ck_assert_int_eq(nar + nb, 0);
    const cs_memory *m = cs_workload_memory(w);
    ck_assert_double_eq_tol(m->model_states_bytes, 4 * P + 12 * P / 8, 1e-6 * P);
    cs_workload_free(w);
}
END_TEST

/* foreach AdamW holds sqrt(exp_avg_sq) (a list the size of the shard, in
 * the states' dtype) while it steps; fused holds none. */
START_TEST(foreach_intermediates_during_the_step)
{
    setup s;
    make(&s, "gpt3-1.3b", CS_STRAT_DDP, 8);
    double P = s.m.params;
    cs_workload *w = build(&s);
    ck_assert_double_eq_tol(named(w, "optimizer step")->mem_at_start, 4 * P, 1e-6 * P);
    ck_assert_double_eq_tol(cs_workload_memory(w)->step_temp_bytes, 4 * P, 1e-6 * P);
    cs_iteration it;
    cs_diag d;
    ck_assert_int_eq(cs_iteration_run(w, &s.t, &it, &d), 0);
    /* on the timeline while the step runs: nothing else is allocated */
    int seen = 0;
    for (size_t i = 0; i < it.nmem; i++) seen += fabs(it.mem_bytes[i] - 4 * P) < 1e-6 * P;
    ck_assert_int_eq(seen, 1);
    cs_iteration_free(&it);
    cs_workload_free(w);
    s.t.optimizer_impl = CS_OPTIMPL_FUSED;
    w = build(&s);
    ck_assert_double_eq(named(w, "optimizer step")->mem_at_start, 0);
    cs_workload_free(w);
}
END_TEST

static cs_evaluation evaluate(const setup *s, int simulate)
{
    cs_evaluation ev;
    cs_diag d;
    cs_evaluate_opts o = {.simulate = simulate};
    ck_assert_msg(cs_evaluate_config(&s->m, &s->t, &s->topo, &o, &ev, &d) == 0, "%s", d.message);
    return ev;
}

/* One peak per configuration: `memory` (no simulation asked) and
 * `simulate` report the timeline's, bit for bit, and the largest
 * micro-batch is the one whose timeline fits (the case: llama3-70b
 * on 32 ranks under fsdp_full_shard, 239.01 vs 231.55 GiB before). */
START_TEST(one_peak_in_memory_and_simulate)
{
    setup s;
    make(&s, "llama3-70b", CS_STRAT_FSDP_FULL_SHARD, 32);
    for (int mb = 1; mb <= 2; mb++) {
        s.t.micro_batch = mb;
        cs_evaluation a = evaluate(&s, 0), b = evaluate(&s, 1);
        ck_assert(a.memory.peak_bytes == b.iteration.peak_bytes);
        ck_assert(b.memory.peak_bytes == b.iteration.peak_bytes);
        ck_assert_int_eq(a.fits, b.fits);
        ck_assert_int_eq(a.memory.fits, a.fits);
        cs_evaluate_free(&b);
    }
    /* the largest micro-batch agrees with the verdicts */
    const char *models[] = {"llama3-8b", "gpt3-1.3b"};
    for (int k = 0; k < 2; k++) {
        make(&s, models[k], k ? CS_STRAT_DDP : CS_STRAT_FSDP_FULL_SHARD, 8);
        int mmb = cs_evaluate_max_micro_batch(&s.m, &s.t, &s.topo, NULL);
        ck_assert_int_ge(mmb, 1);
        s.t.micro_batch = mmb;
        ck_assert_int_eq(evaluate(&s, 0).fits, 1);
        s.t.micro_batch = mmb + 1;
        ck_assert_int_eq(evaluate(&s, 0).fits, 0);
    }
}
END_TEST

static cs_training load(const char *train, int ok, const char *needle)
{
    char y[1024];
    snprintf(y, sizeof y, "cluster: dgx-h100\nmodel: gpt3-1.3b\nranks: 8\ntraining:\n%s", train);
    cs_scenario sc;
    cs_diag d;
    int rc = cs_scenario_load_string("t.yaml", y, strlen(y), &sc, &d);
    if (ok) {
        ck_assert_msg(rc == 0, "%s", d.message);
        return sc.training;
    }
    ck_assert_int_ne(rc, 0);
    ck_assert_msg(strstr(d.message, needle) != NULL, "%s", d.message);
    return (cs_training){0};
}

/* mixed_precision and the keys before it: old scenarios keep loading
 * with their meaning; settings a mode fixes are refused with why. */
START_TEST(scenario_precision_keys)
{
    cs_training t = load("  strategy: ddp\n", 1, NULL);
    ck_assert_int_eq(t.mixed_precision, CS_MP_AMP);
    ck_assert_int_eq(t.grad_reduce_dtype, CS_DTYPE_FP32);
    t = load("  strategy: fsdp_full_shard\n", 1, NULL);
    ck_assert_int_eq(t.mixed_precision, CS_MP_FSDP_PARAM_DTYPE);
    ck_assert_int_eq(t.grad_reduce_dtype, CS_DTYPE_BF16);
    /* before mixed_precision, master_weights false under DDP: pure bf16 */
    t = load("  strategy: ddp\n  param_dtype: bf16\n  master_weights: false\n", 1, NULL);
    ck_assert_int_eq(t.mixed_precision, CS_MP_PURE);
    ck_assert_int_eq(t.grad_reduce_dtype, CS_DTYPE_BF16);
    ck_assert_double_eq(cs_training_optimizer_bytes_per_param(&t), 4);
    t = load("  strategy: ddp\n  ddp_comm_hook: bf16_compress\n", 1, NULL);
    ck_assert_int_eq(cs_training_bucket_wire_dtype(&t), CS_DTYPE_BF16);
    load("  strategy: ddp\n  mixed_precision: fsdp_param_dtype\n", 0, "FSDP's MixedPrecision");
    load("  strategy: zero1\n  grad_reduce_dtype: bf16\n", 0, "ddp_comm_hook: bf16_compress");
    load("  strategy: ddp\n  mixed_precision: pure\n  master_weights: true\n", 0,
         "no fp32 master copy");
    load("  strategy: fsdp_full_shard\n  ddp_comm_hook: bf16_compress\n", 0,
         "applies only to ddp and zero1");
}
END_TEST

/* Comparing strategies on one training moves the precision to its
 * counterpart: DDP's amp <-> FSDP's MixedPrecision(param_dtype). */
START_TEST(set_strategy_maps_precision)
{
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_DDP);
    cs_training_set_strategy(&t, CS_STRAT_FSDP_FULL_SHARD);
    cs_training f;
    cs_training_defaults(&f, CS_STRAT_FSDP_FULL_SHARD);
    ck_assert_int_eq(t.mixed_precision, f.mixed_precision);
    ck_assert_int_eq(t.grad_reduce_dtype, f.grad_reduce_dtype);
    ck_assert_int_eq(t.master_weights_fp32, f.master_weights_fp32);
    cs_training_set_strategy(&t, CS_STRAT_DDP);
    ck_assert_int_eq(t.mixed_precision, CS_MP_AMP);
    ck_assert_int_eq(t.grad_reduce_dtype, CS_DTYPE_FP32);
}
END_TEST

/* Issue 27: the graph's size does not grow with the parameters. A run of
 * more than CS_WB_RUN_MAX equal buckets (DDP's gradient buckets,
 * DeepSpeed's parameter gathers) is one task with a count; with runs
 * folded the iteration is the one run bucket by bucket (the differential
 * check), and a 1e15-parameter model's graph is as small as a 1e11 one's
 * (it had tens of millions of tasks, minutes and gigabytes). */
static void run_iteration(const setup *s, double run_max, size_t *ntasks, cs_iteration *it)
{
    cs_workload *w;
    cs_diag d;
    cs_workload_opts o = {.bucket_run_max = run_max};
    ck_assert_msg(cs_workload_build_opts(&s->m, &s->t, &s->topo, &o, &w, &d) == 0, "%s",
                  d.message);
    *ntasks = cs_workload_count(w);
    ck_assert_int_eq(cs_iteration_run(w, &s->t, it, &d), 0);
    cs_workload_free(w);
}

START_TEST(bucket_runs_fold_into_one_task)
{
    static const cs_strategy strategies[] = {CS_STRAT_DDP, CS_STRAT_ZERO1,
                                             CS_STRAT_DEEPSPEED_ZERO1};
    for (size_t k = 0; k < sizeof strategies / sizeof strategies[0]; k++) {
        setup s;
        make(&s, "1e10", strategies[k], 8);
        s.t.bucket_cap_bytes = 2 * 1048576.0; /* ~500 buckets a layer */
        size_t folded, unfolded;
        cs_iteration a, b;
        run_iteration(&s, 0, &folded, &a);
        run_iteration(&s, 1e12, &unfolded, &b);
        ck_assert_msg(folded * 5 < unfolded, "%zu tasks folded, %zu not", folded, unfolded);
        ck_assert_double_eq_tol(a.iteration_time_s, b.iteration_time_s,
                                1e-12 * b.iteration_time_s);
        ck_assert_double_eq_tol(a.exposed_comm_s, b.exposed_comm_s, 1e-9 * b.iteration_time_s);
        ck_assert_double_eq(a.peak_bytes, b.peak_bytes);
        for (int op = 0; op < CS_OP_COUNT; op++)
            ck_assert_double_eq_tol(a.wire_bytes_by_op[op], b.wire_bytes_by_op[op],
                                    1e-12 * b.wire_bytes_by_op[op] + 1);
        cs_iteration_free(&a);
        cs_iteration_free(&b);
        /* every gradient byte still reduced, every parameter gathered */
        cs_workload *w = build(&s);
        double grads = s.m.params * cs_dtype_size(cs_training_bucket_wire_dtype(&s.t));
        cs_op op = cs_strategy_row_of(s.t.strategy)->grad_op;
        ck_assert_double_eq_tol(op_bytes(w, op, NULL), grads, 1e-9 * grads);
        cs_workload_free(w);
        /* 1e15 parameters: a graph no larger than the layers make it */
        make(&s, "1e15", strategies[k], 8);
        w = build(&s);
        ck_assert_msg(cs_workload_count(w) < (size_t)s.m.layers * 12 + 64, "%zu tasks, %d layers",
                      cs_workload_count(w), s.m.layers);
        grads = s.m.params * cs_dtype_size(cs_training_bucket_wire_dtype(&s.t));
        ck_assert_double_eq_tol(op_bytes(w, op, NULL), grads, 1e-9 * grads);
        cs_workload_free(w);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ddp");
    TCase *tc = tcase_create("ddp");
    tcase_add_test(tc, amp_casts_weights_once_per_forward);
    tcase_add_test(tc, amp_reduces_fp32_unless_hooked);
    tcase_add_test(tc, untied_head_fills_an_early_bucket);
    tcase_add_test(tc, zero1_allreduces_then_broadcasts);
    tcase_add_test(tc, deepspeed_zero1_reduce_scatters_and_gathers);
    tcase_add_test(tc, foreach_intermediates_during_the_step);
    tcase_add_test(tc, one_peak_in_memory_and_simulate);
    tcase_add_test(tc, scenario_precision_keys);
    tcase_add_test(tc, set_strategy_maps_precision);
    tcase_add_test(tc, bucket_runs_fold_into_one_task);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
