/* SPDX-License-Identifier: MIT */
/*
 * test-memreplay.c - the allocation timeline replayed through the caching
 * allocator (train/memreplay.h): FSDP2 below FSDP1 (torchtitan PR #165's
 * direction, from FSDP1's record_stream delay and low-precision shard),
 * reserved above allocated (per-stream caches, segments no free can
 * merge), checkpointing policies in order, release of cached segments at
 * capacity (a run that only fits by returning the cache fits), the
 * user's flat override, and determinism.
 */
#include <check.h>
#include <math.h>

#include "testutil.h"
#include "train/layout.h"
#include "train/memreplay.h"


/* torchtitan PR #165's Llama-7B: 8 H100, batch 8 x 2048, FSDP with bf16
 * params over fp32 shards, fp32 reduce, AdamW. */
static void pr165(cs_test_setup *s, int version, cs_ckpt ck)
{
    cs_test_setup_make(s, "dgx-h100", "llama2-7b", CS_STRAT_FSDP_FULL_SHARD, 8);
    s->t.micro_batch = 8;
    s->t.grad_accum = 1;
    s->t.fsdp_version = version;
    s->t.grad_reduce_dtype = CS_DTYPE_FP32;
    s->t.checkpointing = ck;
}

static cs_memory estimate(const cs_test_setup *s)
{
    cs_memory m;
    cs_diag d;
    ck_assert_int_eq(cs_memory_estimate(&s->m, &s->t, &s->topo, 0, &m, &d), 0);
    return m;
}

START_TEST(fsdp2_below_fsdp1)
{
    cs_test_setup a, b;
    pr165(&a, 1, CS_CKPT_FULL);
    pr165(&b, 2, CS_CKPT_FULL);
    cs_memory m1 = estimate(&a), m2 = estimate(&b);
    /* the analytic lines do not tell the versions apart; the replay does */
    ck_assert_double_eq(m1.unsharded_bytes, m2.unsharded_bytes);
    ck_assert_msg(m2.peak_allocated_bytes < m1.peak_allocated_bytes &&
                      m2.peak_reserved_bytes < m1.peak_reserved_bytes,
                  "fsdp2 %.3g / %.3g, fsdp1 %.3g / %.3g", m2.peak_allocated_bytes,
                  m2.peak_reserved_bytes, m1.peak_allocated_bytes, m1.peak_reserved_bytes);
    /* by about a gathered unit or two, not by the model */
    double unit = a.m.layer_params * 2;
    ck_assert(m1.peak_allocated_bytes - m2.peak_allocated_bytes < 4 * unit);
}
END_TEST

START_TEST(reserved_above_allocated)
{
    cs_test_setup s;
    pr165(&s, 2, CS_CKPT_FULL);
    cs_memory m = estimate(&s);
    ck_assert(m.peak_reserved_bytes > 1.05 * m.peak_allocated_bytes);
    ck_assert_double_eq_tol(m.fragmentation_bytes, m.peak_reserved_bytes - m.peak_allocated_bytes, 1);
    ck_assert_double_eq_tol(m.peak_bytes, m.peak_reserved_bytes + m.cuda_context_bytes + m.nccl_bytes, 1);
    /* the replay sees what the analytic lines hold at least once: the
     * parameter and optimizer shards and the kept activations */
    ck_assert(m.peak_allocated_bytes > m.params_bytes + m.optimizer_bytes + 32 * 2.0 * 2048 * 8 * 4096);
    /* deterministic: the same request, the same bytes */
    cs_memory again = estimate(&s);
    ck_assert(again.peak_reserved_bytes == m.peak_reserved_bytes);
    ck_assert(again.peak_allocated_bytes == m.peak_allocated_bytes);
}
END_TEST

START_TEST(policies_in_order)
{
    cs_test_setup s;
    pr165(&s, 2, CS_CKPT_NONE);
    double none = estimate(&s).peak_allocated_bytes;
    s.t.checkpointing = CS_CKPT_SELECTIVE;
    s.t.selective_ac = -1; /* op */
    double op = estimate(&s).peak_allocated_bytes;
    s.t.selective_ac = 2;
    double every2 = estimate(&s).peak_allocated_bytes;
    s.t.checkpointing = CS_CKPT_FULL;
    double full = estimate(&s).peak_allocated_bytes;
    ck_assert_msg(full < every2 && every2 < none && full < op && op < none,
                  "full %.3g, every 2 %.3g, op %.3g, none %.3g", full, every2, op, none);
}
END_TEST

/* torchtitan PR #165's compiled FSDP2 run at micro-batch 16, every 2nd
 * block checkpointed, ran on the 95 GiB part (88.2 GiB reserved): with
 * compile's partition it fits; eager it would not. */
START_TEST(compile_fits_pr165_batch16)
{
    cs_test_setup s;
    pr165(&s, 2, CS_CKPT_SELECTIVE);
    s.t.selective_ac = 2;
    s.t.micro_batch = 16;
    s.t.mixed_precision = CS_MP_FSDP_PARAM_DTYPE; /* bf16 compute over fp32 shards */
    s.t.param_dtype = CS_DTYPE_BF16;
    s.t.master_weights_fp32 = 1;
    cs_training_resolve_precision(&s.t);
    s.m.seq_len = 2048;
    cs_diag d;
    ck_assert_int_eq(cs_model_derive(&s.m, &d), 0);
    s.c.gpu.memory_bytes = 95.0396 * GiB;
    s.topo = cs_test_topology(&s.c, 8, 0);
    cs_memory eager = estimate(&s);
    s.t.compile = 1;
    cs_memory compiled = estimate(&s);
    ck_assert_msg(compiled.fits && !eager.fits, "compiled %.4g, eager %.4g GiB reserved",
                  compiled.peak_reserved_bytes / GiB, eager.peak_reserved_bytes / GiB);
    ck_assert(compiled.peak_allocated_bytes < eager.peak_allocated_bytes - 16 * GiB);
}
END_TEST

/* torchtitan's loop keeps its fp32 logits (pred) through backward: at
 * the loss's backward (the peak of full checkpointing) they add 4 bytes
 * per logit to what F.cross_entropy holds. */
START_TEST(held_logits_in_the_timeline)
{
    cs_test_setup s;
    pr165(&s, 2, CS_CKPT_FULL);
    s.t.mixed_precision = CS_MP_FSDP_PARAM_DTYPE;
    s.t.param_dtype = CS_DTYPE_BF16;
    cs_training_resolve_precision(&s.t);
    double dropped = estimate(&s).peak_allocated_bytes;
    s.t.hold_logits = 1;
    double held = estimate(&s).peak_allocated_bytes;
    double logits = 8.0 * s.m.seq_len * s.m.vocab;
    ck_assert_msg(fabs(held - dropped - 4 * logits) < 0.05 * logits, "held %.4g, dropped %.4g, 4 x logits %.4g",
                  held, dropped, 4 * logits);
}
END_TEST

/* At capacity, torch returns cached segments (release_cached_blocks) and
 * retries: a run whose unbounded reserved would not fit, while what it
 * allocates does, still fits; one whose tensors alone do not, does not. */
START_TEST(capacity_releases_the_cache)
{
    cs_test_setup s;
    pr165(&s, 2, CS_CKPT_FULL);
    cs_memory m = estimate(&s);
    double outside = m.cuda_context_bytes + m.nccl_bytes;
    double between = m.peak_allocated_bytes + 0.9 * (m.peak_reserved_bytes - m.peak_allocated_bytes) + outside;
    s.c.gpu.memory_bytes = between;
    s.topo = cs_test_topology(&s.c, 8, 0);
    cs_memory t = estimate(&s);
    ck_assert(t.fits);
    ck_assert(t.peak_reserved_bytes <= between - outside + 1);
    ck_assert(t.peak_reserved_bytes < m.peak_reserved_bytes);
    s.c.gpu.memory_bytes = 0.9 * m.peak_allocated_bytes + outside;
    s.topo = cs_test_topology(&s.c, 8, 0);
    ck_assert(!estimate(&s).fits);
}
END_TEST

/* torchtune's options on its README's single-device Llama 3.2 3B (bf16,
 * AdamW, batch 2 x 4096, full checkpointing): optimizer_in_backward never
 * holds every gradient at once and has no step after backward; offloading
 * moves what blocks save to the host between their forward and backward.
 * The first lowers peak allocated; offloading then lowers it further (alone
 * the peak is the optimizer step after backward, which it does not touch). */
START_TEST(torchtune_options)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-a100", "llama3-8b", CS_STRAT_DDP, 1);
    s.t.mixed_precision = CS_MP_PURE;
    cs_training_resolve_precision(&s.t);
    s.t.micro_batch = 1;
    s.t.checkpointing = CS_CKPT_FULL;
    s.c.gpu.memory_bytes = 1024 * GiB; /* the comparison, not the verdict */
    s.topo = cs_test_topology(&s.c, 1, 0);
    double base = estimate(&s).peak_allocated_bytes;
    s.t.optimizer_in_backward = 1;
    double inbwd = estimate(&s).peak_allocated_bytes;
    s.t.activation_offloading = 1;
    double both = estimate(&s).peak_allocated_bytes;
    s.t.optimizer_in_backward = 0;
    double off = estimate(&s).peak_allocated_bytes;
    /* offloading alone: the peak is the step after backward, which it
     * does not touch; under optimizer_in_backward the peak is in backward */
    ck_assert_msg(inbwd < base && off <= base && both < inbwd,
                  "base %.4g, in backward %.4g, offloading %.4g, both %.4g", base, inbwd, off, both);
    /* in backward the gradients live one block at a time: well under all of them */
    cs_memory m = estimate(&s);
    ck_assert(base - inbwd > 0.5 * m.grads_bytes);
}
END_TEST

static Suite *memreplay_suite(void)
{
    Suite *s = suite_create("memreplay");
    TCase *tc = tcase_create("replay");
    tcase_add_test(tc, fsdp2_below_fsdp1);
    tcase_add_test(tc, reserved_above_allocated);
    tcase_add_test(tc, policies_in_order);
    tcase_add_test(tc, capacity_releases_the_cache);
    tcase_add_test(tc, torchtune_options);
    tcase_add_test(tc, compile_fits_pr165_batch16);
    tcase_add_test(tc, held_logits_in_the_timeline);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return cs_test_run(memreplay_suite());
}
