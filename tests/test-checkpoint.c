/* SPDX-License-Identifier: MIT */
/*
 * test-checkpoint.c - activation checkpointing policies (train/checkpoint.h):
 * the selective_ac names, torchtitan's every-N-th-block rule (blocks N, 2N,
 * ... counted from 1; N = 1 is full checkpointing), the per-op policy's
 * saved bytes against a hand count of a Llama block (input, wq, wv,
 * attention out + logsumexp, w1, w2) and its recompute FLOPs against the
 * GEMMs it drops (wk, wo, w3), what Inductor's partition keeps under
 * compile against a hand count, each with a deliberately wrong case the
 * comparison must reject. Runs from the project root.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "train/checkpoint.h"
#include "train/compute.h"

static cs_training selective(int sac, int b)
{
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_FSDP_FULL_SHARD);
    t.checkpointing = CS_CKPT_SELECTIVE;
    t.selective_ac = sac;
    t.micro_batch = b;
    return t;
}

static cs_model llama7b_2048(void)
{
    cs_model m = cs_test_model("llama2-7b");
    m.seq_len = 2048;
    cs_diag d;
    ck_assert_int_eq(cs_model_derive(&m, &d), 0);
    return m;
}

START_TEST(parse_names)
{
    int v = 99;
    ck_assert_int_eq(cs_checkpoint_parse_selective("attention", &v), 0);
    ck_assert_int_eq(v, CS_SAC_ATTENTION);
    ck_assert_int_eq(cs_checkpoint_parse_selective("op", &v), 0);
    ck_assert_int_eq(v, CS_SAC_OP);
    ck_assert_int_eq(cs_checkpoint_parse_selective("2", &v), 0);
    ck_assert_int_eq(v, 2);
    const char *bad[] = {"", "0", "-1", "x", "2x", "op ", "99999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(cs_checkpoint_parse_selective(bad[i], &v) != 0, "'%s' accepted", bad[i]);
    char buf[16];
    ck_assert_str_eq(cs_checkpoint_selective_name(-1, buf, sizeof buf), "op");
    ck_assert_str_eq(cs_checkpoint_selective_name(3, buf, sizeof buf), "3");
}
END_TEST

START_TEST(every_nth_block)
{
    cs_model m = llama7b_2048();
    cs_training t = selective(2, 8);
    /* torchtitan: _count % 2 == 0 with _count from 1: blocks 2, 4, ... */
    ck_assert(!cs_checkpoint_layer_recomputes(&t, 0));
    ck_assert(cs_checkpoint_layer_recomputes(&t, 1));
    ck_assert_int_eq(cs_checkpoint_recomputing_layers(&m, &t), 16);
    double run = cs_checkpoint_running_bytes(&m, &t);
    double in = 2.0 * 2048 * 8 * 4096; /* Korthikanti's 2sbh */
    ck_assert_double_eq_tol(cs_checkpoint_peak_bytes(&m, &t), 16 * run + 16 * in + run, 1);
    /* N = 1 is full checkpointing, memory and blocks */
    cs_training one = selective(1, 8), full = selective(0, 8);
    full.checkpointing = CS_CKPT_FULL;
    ck_assert_double_eq_tol(cs_checkpoint_peak_bytes(&m, &one), cs_checkpoint_peak_bytes(&m, &full), 1);
    ck_assert_int_eq(cs_checkpoint_recomputing_layers(&m, &one), 32);
    /* deliberately wrong: every block kept would be far more */
    ck_assert(fabs(cs_checkpoint_peak_bytes(&m, &t) - 32 * run) > 0.2 * 32 * run);
    /* 33 blocks, N = 2: 16 recompute */
    m.layers = 33;
    ck_assert_int_eq(cs_checkpoint_recomputing_layers(&m, &t), 16);
}
END_TEST

START_TEST(op_policy_saved_bytes)
{
    cs_model m = llama7b_2048();
    cs_training t = selective(CS_SAC_OP, 8);
    double sb = 2048.0 * 8, h = 4096, f = 11008, kv = 4096, a = 32;
    double hand = sb * (2 * h + 2 * h + 2 * kv + 2 * h + 4 * a + 2 * f + 2 * h);
    ck_assert_double_eq_tol(cs_checkpoint_kept_bytes(&m, &t, 0), hand, 1);
    ck_assert_double_eq_tol(cs_checkpoint_kept_bytes(&m, &t, 31), hand, 1);
    /* deliberately wrong: saving every mm (wk, wo, w3 too) must differ */
    double all_mm = hand + sb * (2 * kv + 2 * h + 2 * f);
    ck_assert(fabs(cs_checkpoint_kept_bytes(&m, &t, 0) - all_mm) > 0.1 * hand);
    ck_assert_int_eq(cs_checkpoint_recomputing_layers(&m, &t), 32);
}
END_TEST

/* Under compile, Inductor's partition (checkpoint.c) keeps of a Llama
 * block: its input, rotary q and k, v, the attention output and its
 * logsumexp, the residual stream, w1 and w3; a checkpointed block keeps its
 * input as eager does, and op keeps its own list. */
START_TEST(compiled_saved_bytes)
{
    cs_model m = llama7b_2048();
    cs_training t = selective(2, 8);
    t.compile = 1;
    double sb = 2048.0 * 8, h = 4096, f = 11008, kv = 4096, a = 32;
    double hand = sb * (2 * h + 2 * (h + kv) + 2 * kv + 2 * h + 4 * a + 2 * h + 4 * f);
    ck_assert_double_eq_tol(cs_checkpoint_kept_bytes(&m, &t, 0), hand, 1);
    ck_assert_double_eq_tol(cs_checkpoint_running_bytes(&m, &t), hand, 1);
    ck_assert_double_eq_tol(cs_checkpoint_kept_bytes(&m, &t, 1), sb * 2 * h, 1);
    /* deliberately wrong: keeping the eager set (fp32 norms, silu, gate) must differ */
    t.compile = 0;
    double eager = cs_checkpoint_kept_bytes(&m, &t, 0);
    ck_assert(eager > 1.3 * hand);
    t.compile = 1;
    t.selective_ac = CS_SAC_OP;
    double op = cs_checkpoint_kept_bytes(&m, &t, 0);
    t.compile = 0;
    ck_assert_double_eq(op, cs_checkpoint_kept_bytes(&m, &t, 0));
}
END_TEST

START_TEST(op_policy_recompute_flops)
{
    cs_model m = llama7b_2048();
    cs_cluster c = cs_test_cluster("dgx-h100");
    cs_training t = selective(CS_SAC_OP, 8);
    cs_compute op, full;
    cs_diag d;
    ck_assert_int_eq(cs_compute_price(&m, &t, &c, &op, &d), 0);
    double T = 2048.0 * 8, h = 4096, f = 11008, kv = 4096;
    double dropped = 2 * T * (h * kv + h * h + h * f); /* wk, wo, w3 */
    ck_assert_double_eq_tol(op.pass[CS_KPASS_RECOMPUTE].flops, dropped, dropped * 1e-9);
    t.checkpointing = CS_CKPT_FULL;
    ck_assert_int_eq(cs_compute_price(&m, &t, &c, &full, &d), 0);
    ck_assert_double_eq_tol(full.pass[CS_KPASS_RECOMPUTE].flops, full.pass[CS_KPASS_FORWARD].flops, 1);
    /* deliberately wrong: the op policy does not re-run the whole forward */
    ck_assert(op.pass[CS_KPASS_RECOMPUTE].time_s < 0.7 * full.pass[CS_KPASS_RECOMPUTE].time_s);
    /* attention (Megatron's) with fused attention re-runs nothing */
    t = selective(CS_SAC_ATTENTION, 8);
    ck_assert_int_eq(cs_compute_price(&m, &t, &c, &op, &d), 0);
    ck_assert_double_eq_tol(op.pass[CS_KPASS_RECOMPUTE].time_s, 0, 1e-15);
}
END_TEST

static Suite *checkpoint_suite(void)
{
    Suite *s = suite_create("checkpoint");
    TCase *tc = tcase_create("policies");
    tcase_add_test(tc, parse_names);
    tcase_add_test(tc, every_nth_block);
    tcase_add_test(tc, op_policy_saved_bytes);
    tcase_add_test(tc, op_policy_recompute_flops);
    tcase_add_test(tc, compiled_saved_bytes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return cs_test_run(checkpoint_suite());
}
