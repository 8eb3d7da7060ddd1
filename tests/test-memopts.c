/* SPDX-License-Identifier: MIT */
/*
 * test-memopts.c - the time of torchtune's activation offloading and
 * optimizer in backward in the iteration graph (sim/train/memopts.c):
 * the host copies carry what each block saves, cost time on a slow host
 * link and hide on a fast one; the optimizer step moves into backward
 * with the same bytes, waits for the gradients it steps (under FSDP
 * their reduce-scatter) and no longer ends the iteration.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "train/checkpoint.h"
#include "train/iteration.h"
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

static double run(const setup *s, cs_iteration *it)
{
    cs_workload *w = build(s);
    cs_diag d;
    ck_assert_int_eq(cs_iteration_run(w, &s->t, it, &d), 0);
    cs_workload_free(w);
    return it->iteration_time_s;
}

static double time_of(const setup *s)
{
    cs_iteration it;
    double t = run(s, &it);
    cs_iteration_free(&it);
    return t;
}

/* An optimizer step: a memory-bound task of the optimizer phase on the
 * compute stream. */
static int is_step(const cs_task *k)
{
    return k->kind == CS_TASK_MEMORY && k->stream == CS_STREAM_COMPUTE && k->micro < 0;
}

static int depends_on(const cs_task *k, int id)
{
    for (int i = 0; i < k->ndeps; i++)
        if (k->deps[i] == id) return 1;
    return 0;
}

/* Each block's copy to the host and back carries what it saves
 * (checkpoint.c's kept bytes), under every policy, and its backward waits
 * for the copy back; no copies without the option. */
START_TEST(offload_copies_carry_the_saved_bytes)
{
    for (int ck = 0; ck < CS_CKPT_COUNT; ck++) {
        setup s;
        cs_test_setup_make(&s, "dgx-h100", "llama2-7b", CS_STRAT_DDP, 8);
        s.t.checkpointing = (cs_ckpt)ck;
        cs_workload *w = build(&s);
        for (size_t i = 0; i < cs_workload_count(w); i++)
            ck_assert_int_ne(cs_workload_task(w, i)->stream, CS_STREAM_OFFLOAD);
        cs_workload_free(w);

        s.t.activation_offloading = 1;
        w = build(&s);
        double kept = 0, out = 0, back = 0;
        int nout = 0, nback = 0, fetch[256];
        ck_assert(s.m.layers <= 256);
        for (int l = 0; l < s.m.layers; l++) kept += cs_checkpoint_kept_bytes(&s.m, &s.t, l);
        for (size_t i = 0; i < cs_workload_count(w); i++) {
            const cs_task *k = cs_workload_task(w, i);
            if (k->kind == CS_TASK_COMPUTE && !strncmp(k->name, "backward ", 9)) /* waits for its copy back */
                ck_assert(depends_on(k, fetch[k->layer]));
            if (k->stream != CS_STREAM_OFFLOAD) continue;
            ck_assert(k->duration_s > 0);
            if (!strncmp(k->name, "offload", 7)) out += k->mem_bytes, nout++;
            else back += k->mem_bytes, nback++, fetch[k->layer] = k->id;
            /* the device bytes freed once copied out, taken again for the copy back */
            ck_assert_double_eq(k->mem_at_start - k->mem_at_end, k->mem_bytes);
        }
        ck_assert_int_eq(nout, s.m.layers);
        ck_assert_int_eq(nback, s.m.layers);
        ck_assert(kept > 0);
        ck_assert_double_eq_tol(out, kept, 1e-9 * kept);
        ck_assert_double_eq_tol(back, kept, 1e-9 * kept);
        cs_workload_free(w);
    }
}
END_TEST

/* On a slow host link the copies cannot hide behind compute: the
 * iteration is at least as long as the copies out and back; on a very
 * fast one they hide and the iteration is the one without offloading. */
START_TEST(offload_costs_time_on_a_slow_link_only)
{
    setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama2-7b", CS_STRAT_DDP, 8);
    s.t.checkpointing = CS_CKPT_FULL;
    double base = time_of(&s);
    s.t.activation_offloading = 1;
    double kept = 0;
    for (int l = 0; l < s.m.layers; l++) kept += cs_checkpoint_kept_bytes(&s.m, &s.t, l);

    s.topo.cluster.inter.pcie_Bps = 1e15; /* far faster than any compute */
    double fast = time_of(&s);
    ck_assert_msg(fabs(fast - base) <= 1e-3 * base, "fast link %.6g s vs none %.6g s", fast, base);

    s.topo.cluster.inter.pcie_Bps = 2 * kept / base; /* the round trip takes the iteration */
    cs_iteration it;
    double slow = run(&s, &it);
    ck_assert_msg(slow >= 2 * kept / s.topo.cluster.inter.pcie_Bps && slow > 1.2 * base,
                  "slow link %.6g s vs none %.6g s", slow, base);
    /* exposed, they are copies: not compute, not waiting for the CPU */
    ck_assert(it.side_copies_s > 0.1 * base);
    ck_assert_double_eq_tol(it.cpu_wait_s, 0, 1e-6 * base);
    cs_iteration_free(&it);

    /* a cluster that gives no host link rate is refused, not priced free */
    s.topo.cluster.inter.pcie_Bps = 0;
    cs_workload *w = NULL;
    cs_diag d;
    ck_assert_int_eq(cs_workload_build(&s.m, &s.t, &s.topo, &w, &d), CS_EINVAL);
    ck_assert_ptr_null(w);
    ck_assert_ptr_nonnull(strstr(d.message, "inter.pcie"));
}
END_TEST

/* The step in backward: one per block after its backward and the root's
 * last, the same bytes as the end-of-step one, none waiting for the
 * gradient all-reduce (DDP), so no step ends the iteration; on a
 * compute-bound case the iteration moves by less than the step's time. */
START_TEST(optimizer_in_backward_moves_the_step)
{
    setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama2-7b", CS_STRAT_DDP, 8);
    cs_workload *w = build(&s);
    double bytes = 0;
    int nbase = 0;
    for (size_t i = 0; i < cs_workload_count(w); i++)
        if (is_step(cs_workload_task(w, i))) bytes += cs_workload_task(w, i)->mem_bytes, nbase++;
    ck_assert_int_eq(nbase, 1);
    cs_workload_free(w);
    cs_iteration it;
    double base = run(&s, &it), step_s = it.optimizer_s;
    cs_iteration_free(&it);
    ck_assert(step_s > 0);

    s.t.optimizer_in_backward = 1;
    w = build(&s);
    double moved = 0;
    int n = 0, bwd[256];
    ck_assert(s.m.layers <= 256);
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *k = cs_workload_task(w, i);
        if (k->kind == CS_TASK_COMPUTE && !strncmp(k->name, "backward ", 9)) bwd[k->layer] = k->id;
        if (!is_step(k)) continue;
        moved += k->mem_bytes, n++;
        if (k->layer >= 0) ck_assert(depends_on(k, bwd[k->layer]));
        for (int j = 0; j < k->ndeps; j++)
            ck_assert_int_ne(cs_workload_task(w, (size_t)k->deps[j])->kind, CS_TASK_COLLECTIVE);
    }
    ck_assert_int_eq(n, s.m.layers + 1 + (s.m.tied_embeddings ? 0 : 1));
    ck_assert_double_eq_tol(moved, bytes, 1e-9 * bytes);
    cs_workload_free(w);
    double inbwd = run(&s, &it);
    ck_assert(it.optimizer_s > 0);
    cs_iteration_free(&it);
    ck_assert_msg(fabs(inbwd - base) < step_s, "in backward %.6g s, end of step %.6g s, step %.6g s",
                  inbwd, base, step_s);
}
END_TEST

/* s's optimizer steps, each asserted to wait for a reduce-scatter of the
 * gradients (not a tensor-parallel layer's own, group tp). */
static int steps_after_reduce_scatters(const setup *s)
{
    cs_workload *w = build(s);
    int n = 0;
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *k = cs_workload_task(w, i);
        if (!is_step(k)) continue;
        n++;
        int rs = 0;
        for (int j = 0; j < k->ndeps; j++) {
            const cs_task *on = cs_workload_task(w, (size_t)k->deps[j]);
            rs |= on->kind == CS_TASK_COLLECTIVE && on->op == CS_OP_REDUCE_SCATTER &&
                  on->group != CS_GROUP_TP;
        }
        ck_assert_msg(rs, "%s waits for no gradient reduce-scatter", k->name);
    }
    cs_workload_free(w);
    return n;
}

/* Under FSDP a block's gradient is the rank's once its reduce-scatter is
 * done: the block's step waits for it. */
START_TEST(optimizer_in_backward_waits_for_the_reduce_scatter)
{
    setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama2-7b", CS_STRAT_FSDP_FULL_SHARD, 8);
    s.t.optimizer_in_backward = 1;
    ck_assert_int_eq(steps_after_reduce_scatters(&s), s.m.layers + 1);
    /* with tensor parallelism and units of 2 layers: the unit's gradient
     * reduce-scatter (its shard group's), not a layer's own TP one */
    cs_test_setup_make(&s, "dgx-h100", "llama2-7b", CS_STRAT_FSDP_FULL_SHARD, 16);
    s.t.optimizer_in_backward = 1;
    s.t.tensor_parallel = 2;
    s.t.fsdp_unit_layers = 2;
    ck_assert_int_eq(steps_after_reduce_scatters(&s), s.m.layers / 2 + 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("memopts");
    TCase *tc = tcase_create("memopts");
    tcase_add_test(tc, offload_copies_carry_the_saved_bytes);
    tcase_add_test(tc, offload_costs_time_on_a_slow_link_only);
    tcase_add_test(tc, optimizer_in_backward_moves_the_step);
    tcase_add_test(tc, optimizer_in_backward_waits_for_the_reduce_scatter);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
