/* SPDX-License-Identifier: MIT */
/*
 * test-loss.c - the loss implementations (train/loss.h): the bytes each
 * holds per logit against a hand count of its source (naive: log_softmax's
 * fp32 result, nll_loss's and log_softmax's fp32 gradients at once, the
 * fp32 logits when the loop holds them; flash-attn's xentropy as llm-foundry builds
 * it: the bf16 logits, a bf16 gradient; torchtune's chunked loss, eager and
 * compiled), the memory estimate's temporary buffers for MPT-760M at
 * micro-batch 24 (issue 23's 23 GiB), and the kernels the head runs; each
 * with a deliberately wrong case the comparison must reject.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "train/compute.h"
#include "train/loss.h"
#include "train/memory.h"

static cs_training bf16(int loss, int compiled)
{
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_FSDP_FULL_SHARD);
    t.param_dtype = CS_DTYPE_BF16;
    t.loss_impl = loss;
    t.compile = compiled;
    return t;
}

START_TEST(names)
{
    ck_assert_str_eq(cs_loss_impl_names[CS_LOSS_NAIVE], "naive");
    ck_assert_str_eq(cs_loss_impl_names[CS_LOSS_FUSED], "fused");
    ck_assert_str_eq(cs_loss_impl_names[CS_LOSS_CHUNKED], "chunked");
    ck_assert_ptr_null(cs_loss_impl_names[CS_LOSS_COUNT]);
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_DDP);
    ck_assert_int_eq(t.loss_impl, CS_LOSS_NAIVE); /* the default */
}
END_TEST

START_TEST(bytes_per_logit)
{
    static const struct {
        int loss, compiled;
        double held, backward;
    } hand[] = {
        {CS_LOSS_NAIVE, 0, 4, 4 + 4},     /* log_softmax's fp32 result; nll's and its grads */
        {CS_LOSS_NAIVE, 1, 4, 4 + 4},     /* compile does not change the naive loss here */
        {CS_LOSS_FUSED, 0, 2, 2},         /* logits saved as they are; gI = empty_like */
        {CS_LOSS_CHUNKED, 0, 2 + 4, 0.75}, /* every chunk's log_softmax saved; one chunk's grads */
        {CS_LOSS_CHUNKED, 1, 2, 0.25},    /* compiled: nothing fp32 saved */
    };
    for (size_t i = 0; i < sizeof hand / sizeof *hand; i++) {
        cs_training t = bf16(hand[i].loss, hand[i].compiled);
        ck_assert_double_eq_tol(cs_loss_held_bytes(&t), hand[i].held, 1e-12);
        ck_assert_double_eq_tol(cs_loss_backward_bytes(&t), hand[i].backward, 1e-12);
        ck_assert_double_eq_tol(cs_memory_logit_forward_bytes(&t), hand[i].held, 1e-12);
    }
    /* fp32 logits: .float() is the same tensor */
    cs_training f = bf16(CS_LOSS_NAIVE, 0);
    f.param_dtype = CS_DTYPE_FP32;
    ck_assert_double_eq(cs_loss_held_bytes(&f), 4);
    ck_assert_double_eq(cs_loss_steps_of(&f).upcast_bytes, 0);
    /* torchtitan's loop keeps its fp32 logits (pred) through backward */
    cs_training h = bf16(CS_LOSS_NAIVE, 0);
    h.hold_logits = 1;
    ck_assert_double_eq(cs_loss_held_bytes(&h), 4 + 4);
    cs_loss_steps st = cs_loss_steps_of(&h);
    ck_assert_double_eq(st.input_bytes, 4);
    ck_assert_double_eq(st.upcast_bytes, 4);
    /* fused keeps its bf16 input (ctx.save_for_backward), whoever holds it */
    cs_training fs = bf16(CS_LOSS_FUSED, 0);
    ck_assert_double_eq(cs_loss_steps_of(&fs).input_bytes, 2);
    /* deliberately wrong: a fused loss that upcast like the naive one */
    cs_training fu = bf16(CS_LOSS_FUSED, 0), na = bf16(CS_LOSS_NAIVE, 0);
    ck_assert(cs_loss_held_bytes(&fu) + cs_loss_backward_bytes(&fu) <
              0.5 * (cs_loss_held_bytes(&na) + cs_loss_backward_bytes(&na)));
}
END_TEST

/* MPT-760M (llm-foundry's yaml: 24 layers, d_model 1536, 12 heads, vocab
 * 50368), micro-batch 24 x 2048 on 8 H100: the loss's buffers */
START_TEST(mpt760m_temp)
{
    cs_model m = cs_test_model("gpt2-774m");
    m.layers = 24, m.hidden = 1536, m.heads = 12, m.kv_heads = 12, m.ffn_hidden = 4 * 1536;
    m.vocab = 50368, m.seq_len = 2048;
    cs_diag d;
    ck_assert_int_eq(cs_model_derive(&m, &d), 0);
    cs_cluster c = cs_test_cluster("dgx-h100");
    cs_topology topo = cs_test_topology(&c, 8, 0);
    cs_memory naive, fused;
    cs_training t = bf16(CS_LOSS_NAIVE, 0);
    t.micro_batch = 24;
    ck_assert_int_eq(cs_memory_estimate(&m, &t, &topo, 0, &naive, &d), 0);
    t.loss_impl = CS_LOSS_FUSED;
    ck_assert_int_eq(cs_memory_estimate(&m, &t, &topo, 0, &fused, &d), 0);
    double logits = 24.0 * 2048 * 50368;
    /* naive 12 bytes per logit (log_softmax's result, then two fp32
     * gradients at once), fused 4: 8 x logits less */
    ck_assert_double_eq_tol(naive.temp_bytes - fused.temp_bytes, 8 * logits, 1);
    ck_assert(naive.temp_bytes >= 12 * logits);
    /* deliberately wrong: the fused estimate is not the naive one */
    ck_assert(fabs(fused.peak_bytes - naive.peak_bytes) > 5 * logits);
}
END_TEST

static const cs_kernel *find(const cs_kernel *k, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(k[i].name, name)) return &k[i];
    return NULL;
}

START_TEST(head_kernels)
{
    cs_model m = cs_test_model("llama2-7b");
    cs_cluster c = cs_test_cluster("dgx-h100");
    cs_kernel k[256];
    double TV = 2.0 * m.seq_len * m.vocab;
    cs_training t = bf16(CS_LOSS_FUSED, 0);
    t.micro_batch = 2;
    size_t n = cs_compute_kernels(&m, &t, &c, k, 256);
    ck_assert(n < 256);
    const cs_kernel *x = find(k, n, "xentropy"), *xb = find(k, n, "xentropy.backward");
    ck_assert_ptr_nonnull(x);
    ck_assert_ptr_nonnull(xb);
    ck_assert_double_eq_tol(x->bytes, 4 * TV, 1); /* two reads of the bf16 row */
    ck_assert_double_eq_tol(xb->bytes, 4 * TV, 1); /* read logits, write the gradient */
    ck_assert_ptr_null(find(k, n, "cross_entropy")); /* deliberately wrong: no naive kernel */
    t.loss_impl = CS_LOSS_NAIVE;
    n = cs_compute_kernels(&m, &t, &c, k, 256);
    ck_assert_double_eq_tol(find(k, n, "cross_entropy")->bytes, 14 * TV, 1);
    ck_assert_double_eq_tol(find(k, n, "cross_entropy.backward")->bytes, 22 * TV, 1);
    t.loss_impl = CS_LOSS_CHUNKED;
    n = cs_compute_kernels(&m, &t, &c, k, 256);
    ck_assert_double_eq(find(k, n, "chunked_cross_entropy")->launches, 8);
    /* the loss's time: fused is faster than naive on the same head */
    cs_compute pf, pn;
    cs_diag d;
    t.loss_impl = CS_LOSS_FUSED;
    ck_assert_int_eq(cs_compute_price(&m, &t, &c, &pf, &d), 0);
    t.loss_impl = CS_LOSS_NAIVE;
    ck_assert_int_eq(cs_compute_price(&m, &t, &c, &pn, &d), 0);
    ck_assert(pf.pass[CS_KPASS_HEAD_BACKWARD].time_s < pn.pass[CS_KPASS_HEAD_BACKWARD].time_s);
}
END_TEST

/* Composer's train metrics: each a no-grad F.cross_entropy over the bf16
 * logits, the naive forward's kernels (cast e + 4, log_softmax 4 + 4, nll
 * 4 = 14 bytes per logit at bf16), once per metric after the backward;
 * none without them. Two (llm-foundry's MPT) add 28 bytes per logit: with
 * the fused loss's 8 the head moves what the naive loss's 36 moved. */
START_TEST(train_metrics_kernels)
{
    cs_model m = cs_test_model("llama2-7b");
    cs_cluster c = cs_test_cluster("dgx-h100");
    cs_kernel k[256];
    double TV = 2.0 * m.seq_len * m.vocab;
    cs_training t = bf16(CS_LOSS_FUSED, 0);
    t.micro_batch = 2;
    size_t n = cs_compute_kernels(&m, &t, &c, k, 256);
    ck_assert_ptr_null(find(k, n, "train_metrics")); /* default 0: no pass */
    cs_compute p0, p2, pn;
    cs_diag d;
    ck_assert_int_eq(cs_compute_price(&m, &t, &c, &p0, &d), 0);
    t.train_metrics = 2;
    n = cs_compute_kernels(&m, &t, &c, k, 256);
    const cs_kernel *x = find(k, n, "train_metrics");
    ck_assert_ptr_nonnull(x);
    ck_assert_int_eq(x->pass, CS_KPASS_HEAD_BACKWARD);
    ck_assert_double_eq(x->launches, 2);
    ck_assert_double_eq_tol(x->bytes, 2 * 14 * TV, 1); /* totals over the launches */
    ck_assert_int_eq(cs_compute_price(&m, &t, &c, &p2, &d), 0);
    ck_assert(p2.pass[CS_KPASS_HEAD_BACKWARD].time_s >
              p0.pass[CS_KPASS_HEAD_BACKWARD].time_s + 0.9 * x->time_s);
    /* fused + 2 metrics moves the naive loss's bytes: the same head time within 1% */
    cs_training tn = bf16(CS_LOSS_NAIVE, 0);
    tn.micro_batch = 2;
    ck_assert_int_eq(cs_compute_price(&m, &tn, &c, &pn, &d), 0);
    double h2 = p2.pass[CS_KPASS_HEAD_FORWARD].time_s + p2.pass[CS_KPASS_HEAD_BACKWARD].time_s;
    double hn = pn.pass[CS_KPASS_HEAD_FORWARD].time_s + pn.pass[CS_KPASS_HEAD_BACKWARD].time_s;
    ck_assert_double_eq_tol(h2 / hn, 1, 0.01);
}
END_TEST

static Suite *loss_suite(void)
{
    Suite *s = suite_create("loss");
    TCase *tc = tcase_create("impls");
    tcase_add_test(tc, names);
    tcase_add_test(tc, bytes_per_logit);
    tcase_add_test(tc, mpt760m_temp);
    tcase_add_test(tc, head_kernels);
    tcase_add_test(tc, train_metrics_kernels);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return cs_test_run(loss_suite());
}
