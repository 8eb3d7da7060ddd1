/* SPDX-License-Identifier: MIT */
/*
 * test-fsdp.c - FSDP as PyTorch runs it (strategy_fsdp.c): the copies and
 * casts of fsdp_version 1 and 2 and their bytes, side-stream copies that
 * are not communication, the root's gather waiting for the compute stream,
 * unit granularity (fsdp_unit_layers, the whole model one unit as in
 * allenai/OLMo#762), and the hooks' CPU time delaying compute only where
 * the CPU is the bottleneck. Each test fails when its effect is removed.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "train/iteration.h"
#include "train/scenario.h"
#include "train/strategy.h"
#include "train/workload.h"
#include "testutil.h"

typedef cs_test_setup setup;

static cs_workload *build(const setup *s)
{
    cs_workload *w;
    cs_diag d;
    ck_assert_msg(cs_workload_build(&s->m, &s->t, &s->topo, &w, &d) == 0, "%s", d.message);
    return w;
}

static double iteration_s(const setup *s, cs_iteration *keep)
{
    cs_workload *w = build(s);
    cs_iteration it;
    cs_diag d;
    ck_assert_int_eq(cs_iteration_run(w, &s->t, &it, &d), 0);
    double t = it.iteration_time_s;
    if (keep) *keep = it;
    else cs_iteration_free(&it);
    cs_workload_free(w);
    return t;
}

/* Bytes of the memory tasks on stream st whose name starts with `what`. */
static double bytes(const cs_workload *w, cs_stream st, const char *what)
{
    double sum = 0;
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *t = cs_workload_task(w, i);
        if (t->kind == CS_TASK_MEMORY && t->stream == st && !strncmp(t->name, what, strlen(what)))
            sum += t->mem_bytes;
    }
    return sum;
}

static int count_ops(const cs_workload *w, cs_op op, int micro)
{
    int n = 0;
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *t = cs_workload_task(w, i);
        n += t->kind == CS_TASK_COLLECTIVE && t->op == op && t->micro == micro;
    }
    return n;
}

/* FSDP2: every gather's output is copied into the parameters on the
 * compute stream (2 bytes read + written per bf16 parameter gathered: the
 * layers twice, the root once), and the gradients are copied into the
 * reduce-scatter input with the cast to fp32 (2 + 4 bytes per parameter)
 * on the compute stream; FSDP1 has neither, but assembles the flat
 * gradient (2 + 2) and casts it on the post-backward stream (2 + 4). */
START_TEST(version_copies_and_casts)
{
    setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama2-7b", CS_STRAT_FSDP_FULL_SHARD, 8);
    s.t.grad_reduce_dtype = CS_DTYPE_FP32;
    const double P = s.m.params, layers = s.m.layer_params * s.m.layers;
    ck_assert_int_eq(s.t.fsdp_version, 2); /* the default */
    cs_workload *w = build(&s);
    ck_assert_double_eq_tol(bytes(w, CS_STREAM_COMPUTE, "all-gather copy-out"),
                            2 * 2.0 * (2 * layers + (P - layers)), 1);
    ck_assert_double_eq_tol(bytes(w, CS_STREAM_COMPUTE, "reduce-scatter copy-in"), 6.0 * P, 1);
    ck_assert(bytes(w, CS_STREAM_COMM, "all-gather copy-in") > 0);
    ck_assert(bytes(w, CS_STREAM_COMM_REDUCE, "grad cast") == 0);
    cs_workload_free(w);

    s.t.fsdp_version = 1;
    w = build(&s);
    ck_assert(bytes(w, CS_STREAM_COMPUTE, "all-gather copy-out") == 0);
    ck_assert(bytes(w, CS_STREAM_COMPUTE, "reduce-scatter copy-in") == 0);
    ck_assert_double_eq_tol(bytes(w, CS_STREAM_COMPUTE, "flat grad copy"), 4.0 * P, 1);
    ck_assert_double_eq_tol(bytes(w, CS_STREAM_COMM_REDUCE, "grad cast"), 6.0 * P, 1);
    /* 8 ranks: pre-divide by 4 (the unsharded fp32 gradient, read + written) */
    ck_assert_double_eq_tol(bytes(w, CS_STREAM_COMM_REDUCE, "grad pre-divide"), 8.0 * P, 1);
    cs_workload_free(w);

    /* the copies cost time: FSDP2's copy-out sits on the compute stream */
    s.t.fsdp_version = 2;
    cs_iteration it;
    iteration_s(&s, &it);
    ck_assert(it.copies_s > 0);
    cs_iteration_free(&it);
}
END_TEST

/* A copy on a communication stream is no communication: alone it is
 * side_copies_s, never exposed_comm_s; beside compute it takes turns with
 * it (both take twice as long while they overlap). */
START_TEST(side_stream_copies_are_not_communication)
{
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_FSDP_FULL_SHARD);
    cs_workload *w = cs_workload_new(1e15);
    cs_task copy = {.kind = CS_TASK_MEMORY, .stream = CS_STREAM_COMM_REDUCE, .micro = 0,
                    .layer = 0, .mem_bytes = 1e9, .duration_s = 1e-3};
    cs_workload_append(w, &copy);
    cs_iteration it;
    cs_diag d;
    ck_assert_int_eq(cs_iteration_run(w, &t, &it, &d), 0);
    ck_assert_double_eq_tol(it.iteration_time_s, 1e-3, 1e-12);
    ck_assert(it.exposed_comm_s == 0);
    ck_assert_double_eq_tol(it.side_copies_s, 1e-3, 1e-12);
    ck_assert_double_eq_tol(it.copies_s, 1e-3, 1e-12);
    cs_iteration_free(&it);

    cs_task comp = {.kind = CS_TASK_COMPUTE, .stream = CS_STREAM_COMPUTE, .micro = 0,
                    .layer = 0, .flops = 1e12, .duration_s = 1e-3};
    cs_workload_append(w, &comp);
    ck_assert_int_eq(cs_iteration_run(w, &t, &it, &d), 0);
    ck_assert_double_eq_tol(it.iteration_time_s, 2e-3, 1e-12);
    ck_assert(it.exposed_comm_s == 0 && it.side_copies_s == 0);
    cs_iteration_free(&it);
    cs_workload_free(w);
}
END_TEST

/* _root_pre_forward: micro-batch 1's first gather starts only once
 * micro-batch 0's compute-stream work is done. */
START_TEST(root_gather_waits_for_the_compute_stream)
{
    for (int v = 1; v <= 2; v++) {
        setup s;
        cs_test_setup_make(&s, "dgx-h100", "gpt3-1.3b", CS_STRAT_FSDP_FULL_SHARD, 8);
        s.t.grad_accum = 2;
        s.t.fsdp_version = v;
        cs_workload *w = build(&s);
        cs_iteration it;
        cs_diag d;
        ck_assert_int_eq(cs_iteration_run(w, &s.t, &it, &d), 0);
        double compute_end = 0, first_gather = INFINITY;
        for (size_t i = 0; i < cs_workload_count(w); i++) {
            const cs_task *t = cs_workload_task(w, i);
            if (t->micro == 0 && t->stream == CS_STREAM_COMPUTE)
                compute_end = fmax(compute_end, it.end_s[i]);
            if (t->micro == 1 && t->stream == CS_STREAM_COMM)
                first_gather = fmin(first_gather, it.start_s[i]);
        }
        ck_assert_msg(first_gather >= compute_end - 1e-12,
                      "FSDP%d: micro-batch 1 gathers at %g s, micro-batch 0 computes until %g s", v,
                      first_gather, compute_end);
        cs_iteration_free(&it);
        cs_workload_free(w);
    }
}
END_TEST

/* fsdp_unit_layers: k blocks per unit gather ceil(L / k) layer units (+
 * the root) in forward; 0 gathers the whole model once per micro-batch
 * and reduces it once, after backward. */
START_TEST(unit_granularity)
{
    setup s;
    cs_test_setup_make(&s, "dgx-h100", "gpt3-1.3b", CS_STRAT_FSDP_FULL_SHARD, 8);
    const int L = s.m.layers; /* 24 */
    s.t.backward_prefetch = CS_PREFETCH_NONE;
    s.t.fsdp_unit_layers = 5;
    cs_workload *w = build(&s);
    int units = (L + 4) / 5;
    ck_assert_int_eq(count_ops(w, CS_OP_ALL_GATHER, 0), 1 + 2 * units);
    ck_assert_int_eq(count_ops(w, CS_OP_REDUCE_SCATTER, 0), 1 + units);
    cs_workload_free(w);

    s.t.fsdp_unit_layers = 0;
    w = build(&s);
    ck_assert_int_eq(count_ops(w, CS_OP_ALL_GATHER, 0), 1);
    ck_assert_int_eq(count_ops(w, CS_OP_REDUCE_SCATTER, 0), 1);
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *t = cs_workload_task(w, i);
        if (t->kind == CS_TASK_COLLECTIVE)
            ck_assert_double_eq_tol(t->size_bytes, s.m.params * cs_dtype_size(t->dtype), 1);
    }
    cs_workload_free(w);
}
END_TEST

/* allenai/OLMo#762: OLMo-1B on 4 GPUs, micro-batch 2, global batch 256
 * (32 micro-batches), FSDP1 FULL_SHARD with wrapping_strategy null (the
 * whole model one unit) against DDP: measured 8,034 vs 1,747
 * tokens/s/device (4.6x; the GPU is not stated). With one unit nothing
 * overlaps: 32 whole-model gathers and reductions per step, which DDP
 * does once, so DDP must be ahead on an A100 node, and further ahead on
 * PCIe than on NVLink. Nothing is tuned to the measured ratio. */
static const char *const olmo =
    "cluster: dgx-a100\n"
    "ranks: 4\n"
    "model:\n"
    "  name: olmo-1b\n"
    "  layers: 16\n"
    "  hidden: 2048\n"
    "  heads: 16\n"
    "  ffn_hidden: 8192\n"
    "  gated_mlp: true\n"
    "  biases: false\n"
    "  tied_embeddings: true\n"
    "  seq_len: 2048\n"
    "  vocab: 50304\n"
    "training:\n"
    "  strategy: %s\n"
    "  grad_reduce_dtype: fp32\n"
    "  micro_batch: 2\n"
    "  grad_accum: 32\n"
    "%s";

static double olmo_tokens_per_s(const char *strategy, const char *extra, int pcie)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml, olmo, strategy, extra);
    cs_scenario sc;
    cs_diag d;
    ck_assert_msg(cs_scenario_load_string("olmo762", yaml, strlen(yaml), &sc, &d) == 0, "%s",
                  d.message);
    if (pcie) { /* the same node on PCIe Gen4 x16 (configs/clusters/pcie-l40s.yaml's intra) */
        sc.cluster.intra.kind = CS_FABRIC_PCIE;
        sc.cluster.intra.bw_Bps = 31.5e9;
        sc.cluster.intra.efficiency = 0.76;
        sc.cluster.coll.channels = 4;
        sc.cluster.coll.ll128_enabled = 0;
    }
    setup s = {.c = sc.cluster, .m = sc.model, .t = sc.training};
    s.topo = cs_test_topology(&s.c, sc.ranks, 0);
    cs_iteration it;
    iteration_s(&s, &it);
    double tps = it.tokens_per_s / sc.ranks;
    cs_iteration_free(&it);
    return tps;
}

START_TEST(olmo762_ddp_ahead_of_one_unit_fsdp)
{
    const char *one_unit = "  fsdp_version: 1\n  fsdp_unit_layers: 0\n";
    double ratio[2];
    for (int pcie = 0; pcie < 2; pcie++) {
        double ddp = olmo_tokens_per_s("ddp", "", pcie);
        double fsdp = olmo_tokens_per_s("fsdp_full_shard", one_unit, pcie);
        /* the third run: SHARD_GRAD_OP, one unit per block (1,790) */
        double per_block = olmo_tokens_per_s("fsdp_shard_grad_op", "  fsdp_version: 1\n", pcie);
        ratio[pcie] = ddp / fsdp;
        fprintf(stderr,
                "OLMo#762 on %s: ddp %.0f, fsdp one unit %.0f, shard_grad_op per block %.0f "
                "tokens/s/GPU: ddp / one unit = %.2fx, ddp / per block = %.2fx\n",
                pcie ? "A100 PCIe" : "dgx-a100", ddp, fsdp, per_block, ratio[pcie],
                ddp / per_block);
        ck_assert_msg(ddp > 1.05 * fsdp, "DDP %.0f vs one-unit FSDP %.0f", ddp, fsdp);
    }
    ck_assert(ratio[1] > ratio[0]);
}
END_TEST

/* The hooks' CPU time delays compute only where the CPU is the
 * bottleneck: a model whose units take the GPU less than the hooks take
 * the CPU slows by about the hooks' total; a big one by no more than the
 * first hook. */
START_TEST(hook_cpu_time_binds_only_when_the_cpu_is_slower)
{
    setup s;
    cs_test_setup_make(&s, "dgx-h100", "gpt2-124m", CS_STRAT_FSDP_FULL_SHARD, 8);
    s.t.fsdp_hook_cpu_s = 0;
    double free_cpu = iteration_s(&s, NULL);
    const double h = 5e-3; /* well above a gpt2-124m block's GPU time at micro-batch 1 */
    s.t.fsdp_hook_cpu_s = h;
    cs_iteration it;
    double slow = iteration_s(&s, &it);
    double hooks = 2.0 * (s.m.layers + 2) * h; /* forward + backward, layers + root */
    ck_assert_msg(slow > free_cpu + 0.8 * hooks, "%g s vs %g s without hooks", slow, free_cpu);
    ck_assert(it.cpu_wait_s > 0.5 * hooks);
    cs_iteration_free(&it);

    cs_test_setup_make(&s, "dgx-h100", "llama2-7b", CS_STRAT_FSDP_FULL_SHARD, 8);
    s.t.micro_batch = 4;
    s.t.fsdp_hook_cpu_s = 0;
    free_cpu = iteration_s(&s, NULL);
    s.t.fsdp_hook_cpu_s = 1e-3;
    slow = iteration_s(&s, NULL);
    ck_assert_msg(slow - free_cpu <= 2 * 1e-3 + 1e-9, "GPU-bound: %g s slower", slow - free_cpu);
    /* the default is the version's cited figure */
    s.t.fsdp_hook_cpu_s = -1;
    ck_assert_double_eq_tol(cs_training_fsdp_hook_cpu_s(&s.t, NULL), 1e-3, 1e-15);
    s.t.fsdp_version = 1;
    ck_assert_double_eq_tol(cs_training_fsdp_hook_cpu_s(&s.t, NULL), 0.25e-3, 1e-15);
}
END_TEST

/* The scenario keys: fsdp_version, fsdp_unit_layers, fsdp_hook_cpu_ms
 * (milliseconds), FSDP only. */
START_TEST(scenario_keys)
{
    const char *y = "cluster: dgx-h100\nmodel: gpt2-124m\nranks: 8\ntraining:\n"
                    "  strategy: fsdp_full_shard\n  fsdp_version: 1\n  fsdp_unit_layers: 0\n"
                    "  fsdp_hook_cpu_ms: 0.5\n";
    cs_scenario sc;
    cs_diag d;
    ck_assert_msg(cs_scenario_load_string("k", y, strlen(y), &sc, &d) == 0, "%s", d.message);
    ck_assert_int_eq(sc.training.fsdp_version, 1);
    ck_assert_int_eq(sc.training.fsdp_unit_layers, 0);
    ck_assert_double_eq_tol(sc.training.fsdp_hook_cpu_s, 0.5e-3, 1e-15);
    const char *bad = "cluster: dgx-h100\nmodel: gpt2-124m\nranks: 8\ntraining:\n"
                      "  strategy: ddp\n  fsdp_version: 1\n";
    ck_assert(cs_scenario_load_string("k", bad, strlen(bad), &sc, &d) != 0);
    ck_assert_msg(strstr(d.message, "fsdp_version") != NULL, "%s", d.message);
    const char *v3 = "cluster: dgx-h100\nmodel: gpt2-124m\nranks: 8\ntraining:\n"
                     "  strategy: fsdp_full_shard\n  fsdp_version: 3\n";
    ck_assert(cs_scenario_load_string("k", v3, strlen(v3), &sc, &d) != 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fsdp");
    TCase *tc = tcase_create("fsdp");
    tcase_add_test(tc, version_copies_and_casts);
    tcase_add_test(tc, side_stream_copies_are_not_communication);
    tcase_add_test(tc, root_gather_waits_for_the_compute_stream);
    tcase_add_test(tc, unit_granularity);
    tcase_add_test(tc, olmo762_ddp_ahead_of_one_unit_fsdp);
    tcase_add_test(tc, hook_cpu_time_binds_only_when_the_cpu_is_slower);
    tcase_add_test(tc, scenario_keys);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
