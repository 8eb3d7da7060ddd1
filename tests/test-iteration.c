/* SPDX-License-Identifier: MIT */
/*
 * test-iteration.c - the iteration executor on graphs written by hand:
 * a collective hidden behind compute, exposed when compute waits for it,
 * exposed time split by primitive and accounted by stream kind, links
 * shared by collectives of one group, the overlap slowdown, the memory
 * timeline; then a differential test against a simple reference schedule
 * (each stream in order, a task starting when its stream and its
 * dependencies are done, exposed = communication time not covered by
 * compute), with a deliberately wrong expectation the comparison must
 * reject.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/iteration.h"
#include "train/training.h"
#include "train/workload.h"
#include "testutil.h"

#define TOL 1e-12

static cs_training settings(double slowdown)
{
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_DDP);
    t.comm_compute_slowdown = slowdown;
    t.fragmentation = 0;
    return t;
}

/* Appends a task of `dur` seconds; deps end with -1. */
static int add(cs_workload *w, cs_stream s, double dur, cs_op op, cs_group g, const int *deps)
{
    cs_task t = {.stream = s, .duration_s = dur, .op = op, .group = g, .micro = -1, .layer = -1};
    t.kind = cs_stream_kind_of(s) == CS_STREAM_KIND_COMM ? CS_TASK_COLLECTIVE : CS_TASK_COMPUTE;
    snprintf(t.name, sizeof t.name, "%s %zu", cs_stream_name(s), cs_workload_count(w));
    for (; deps && *deps >= 0; deps++) t.deps[t.ndeps++] = *deps;
    return cs_workload_append(w, &t);
}
#define DEPS(...) ((const int[]){__VA_ARGS__, -1})
#define COMPUTE(w, d, ...) add(w, CS_STREAM_COMPUTE, d, CS_OP_ALL_REDUCE, CS_GROUP_WORLD, __VA_ARGS__)

static void run(const cs_workload *w, const cs_training *t, cs_iteration *it)
{
    cs_diag d;
    ck_assert_int_eq(cs_iteration_run(w, t, it, &d), 0);
}

START_TEST(stream_kinds)
{
    ck_assert_int_eq(cs_stream_kind_of(CS_STREAM_COMPUTE), CS_STREAM_KIND_COMPUTE);
    ck_assert_int_eq(cs_stream_kind_of(CS_STREAM_COMM), CS_STREAM_KIND_COMM);
    ck_assert_int_eq(cs_stream_kind_of(CS_STREAM_COMM_REDUCE), CS_STREAM_KIND_COMM);
    for (int s = 0; s < CS_STREAM_COUNT; s++) {
        ck_assert_int_lt(cs_stream_kind_of((cs_stream)s), CS_STREAM_KIND_COUNT);
        ck_assert_ptr_nonnull(cs_stream_name((cs_stream)s));
    }
}
END_TEST

/* A 0.4 s all-reduce beside 1 s of compute costs nothing. */
START_TEST(comm_hides_behind_compute)
{
    cs_workload *w = cs_workload_new(1e15);
    int c = COMPUTE(w, 1.0, NULL);
    int r = add(w, CS_STREAM_COMM, 0.4, CS_OP_ALL_REDUCE, CS_GROUP_WORLD, NULL);
    cs_training t = settings(0);
    cs_iteration it;
    run(w, &t, &it);
    ck_assert_double_eq_tol(it.iteration_time_s, 1.0, TOL);
    ck_assert_double_eq_tol(it.compute_s, 1.0, TOL);
    ck_assert_double_eq_tol(it.exposed_comm_s, 0, TOL);
    ck_assert_double_eq_tol(it.start_s[r], 0, TOL);
    ck_assert_double_eq_tol(it.end_s[r], 0.4, TOL);
    ck_assert_double_eq_tol(it.end_s[c], 1.0, TOL);
    cs_iteration_free(&it);
    cs_workload_free(w);
}
END_TEST

/* Compute that waits for a collective exposes the wait, charged to the
 * collective's primitive; compute and exposed time fill the iteration. */
START_TEST(comm_exposed_when_compute_waits)
{
    cs_workload *w = cs_workload_new(1e15);
    COMPUTE(w, 0.2, NULL);
    int g = add(w, CS_STREAM_COMM, 0.5, CS_OP_ALL_GATHER, CS_GROUP_SHARD, NULL);
    int b = COMPUTE(w, 0.3, DEPS(g));
    cs_training t = settings(0);
    cs_iteration it;
    run(w, &t, &it);
    ck_assert_double_eq_tol(it.start_s[b], 0.5, TOL);
    ck_assert_double_eq_tol(it.iteration_time_s, 0.8, TOL);
    ck_assert_double_eq_tol(it.compute_s, 0.5, TOL);
    ck_assert_double_eq_tol(it.exposed_comm_s, 0.3, TOL);
    ck_assert_double_eq_tol(it.exposed_by_op_s[CS_OP_ALL_GATHER], 0.3, TOL);
    ck_assert_double_eq_tol(it.exposed_by_op_s[CS_OP_ALL_REDUCE], 0, TOL);
    ck_assert_double_eq_tol(it.compute_s + it.exposed_comm_s, it.iteration_time_s, TOL);
    cs_iteration_free(&it);
    cs_workload_free(w);
}
END_TEST

/* Both communication streams count: exposed time is split between the
 * running primitives in equal shares; collectives of different groups
 * run at full rate side by side, those of one group share its links. */
START_TEST(exposed_time_by_stream_kind)
{
    cs_training t = settings(0);
    cs_iteration it;
    cs_workload *w = cs_workload_new(1e15);
    add(w, CS_STREAM_COMM, 0.2, CS_OP_ALL_GATHER, CS_GROUP_SHARD, NULL);
    add(w, CS_STREAM_COMM_REDUCE, 0.4, CS_OP_REDUCE_SCATTER, CS_GROUP_WORLD, NULL);
    run(w, &t, &it);
    ck_assert_double_eq_tol(it.iteration_time_s, 0.4, TOL);
    ck_assert_double_eq_tol(it.exposed_comm_s, 0.4, TOL);
    ck_assert_double_eq_tol(it.exposed_by_op_s[CS_OP_ALL_GATHER], 0.1, TOL);
    ck_assert_double_eq_tol(it.exposed_by_op_s[CS_OP_REDUCE_SCATTER], 0.3, TOL);
    ck_assert_double_eq_tol(it.compute_s, 0, TOL);
    cs_iteration_free(&it);
    cs_workload_free(w);

    w = cs_workload_new(1e15); /* one group: half rate each while both run */
    int a = add(w, CS_STREAM_COMM, 0.2, CS_OP_ALL_GATHER, CS_GROUP_WORLD, NULL);
    int r = add(w, CS_STREAM_COMM_REDUCE, 0.4, CS_OP_REDUCE_SCATTER, CS_GROUP_WORLD, NULL);
    run(w, &t, &it);
    ck_assert_double_eq_tol(it.end_s[a], 0.4, TOL);
    ck_assert_double_eq_tol(it.end_s[r], 0.6, TOL);
    ck_assert_double_eq_tol(it.exposed_comm_s, 0.6, TOL);
    cs_iteration_free(&it);
    cs_workload_free(w);
}
END_TEST

/* With slowdown s both sides run at 1 / (1 + s) while they overlap. */
START_TEST(slowdown_while_overlapping)
{
    cs_workload *w = cs_workload_new(1e15);
    int c = COMPUTE(w, 1.0, NULL);
    int r = add(w, CS_STREAM_COMM, 0.5, CS_OP_ALL_REDUCE, CS_GROUP_WORLD, NULL);
    cs_training t = settings(0.25);
    cs_iteration it;
    run(w, &t, &it);
    ck_assert_double_eq_tol(it.end_s[r], 0.625, TOL);
    ck_assert_double_eq_tol(it.end_s[c], 1.125, TOL);
    ck_assert_double_eq_tol(it.exposed_comm_s, 0, TOL);
    cs_iteration_free(&it);
    cs_workload_free(w);
}
END_TEST

/* With serial groups (ProcessGroupNCCL's one NCCL stream per group) a
 * group's collectives run one at a time in issue order, whatever stream
 * issued them; another group's run beside them. */
START_TEST(serial_groups)
{
    cs_training t = settings(0);
    cs_iteration it;
    cs_workload *w = cs_workload_new(1e15);
    cs_workload_set_serial_groups(w, 1);
    int a = add(w, CS_STREAM_COMM, 0.2, CS_OP_ALL_GATHER, CS_GROUP_WORLD, NULL);
    int r = add(w, CS_STREAM_COMM_REDUCE, 0.4, CS_OP_REDUCE_SCATTER, CS_GROUP_WORLD, NULL);
    int o = add(w, CS_STREAM_COMM_REDUCE, 0.1, CS_OP_ALL_REDUCE, CS_GROUP_REPLICA, NULL);
    run(w, &t, &it);
    ck_assert_double_eq_tol(it.end_s[a], 0.2, TOL);
    ck_assert_double_eq_tol(it.start_s[r], 0.2, TOL); /* after the gather, at full rate */
    ck_assert_double_eq_tol(it.end_s[r], 0.6, TOL);
    ck_assert_double_eq_tol(it.end_s[o], 0.7, TOL); /* its stream's order */
    cs_iteration_free(&it);
    cs_workload_free(w);
    /* issue order is id order: a later id on a free stream still waits */
    w = cs_workload_new(1e15);
    cs_workload_set_serial_groups(w, 1);
    int c = COMPUTE(w, 0.5, NULL);
    int g = add(w, CS_STREAM_COMM, 0.2, CS_OP_ALL_GATHER, CS_GROUP_SHARD, DEPS(c));
    int s = add(w, CS_STREAM_COMM_REDUCE, 0.2, CS_OP_REDUCE_SCATTER, CS_GROUP_SHARD, NULL);
    run(w, &t, &it);
    ck_assert_double_eq_tol(it.start_s[g], 0.5, TOL);
    ck_assert_double_eq_tol(it.start_s[s], 0.7, TOL);
    cs_iteration_free(&it);
    cs_workload_free(w);
}
END_TEST

/* Unset slowdown: compute runs on the SMs running collectives leave it
 * (share each, half the GPU at most) and communication at full speed. */
START_TEST(collectives_take_sms)
{
    cs_workload *w = cs_workload_new(1e15);
    cs_workload_set_comm_sm_share(w, 0.125);
    int c = COMPUTE(w, 1.0, NULL);
    int r = add(w, CS_STREAM_COMM, 0.4, CS_OP_ALL_REDUCE, CS_GROUP_WORLD, NULL);
    cs_training t = settings(-1);
    cs_iteration it;
    run(w, &t, &it);
    ck_assert_double_eq_tol(it.end_s[r], 0.4, TOL);
    /* 0.4 s at 7/8 speed does 0.35 s of work; 0.65 s remain */
    ck_assert_double_eq_tol(it.end_s[c], 1.05, TOL);
    cs_iteration_free(&it);
    cs_workload_free(w);
    /* two collectives at once take twice the SMs, up to half the GPU */
    w = cs_workload_new(1e15);
    cs_workload_set_comm_sm_share(w, 0.4);
    c = COMPUTE(w, 1.0, NULL);
    add(w, CS_STREAM_COMM, 0.5, CS_OP_ALL_GATHER, CS_GROUP_SHARD, NULL);
    add(w, CS_STREAM_COMM_REDUCE, 0.5, CS_OP_REDUCE_SCATTER, CS_GROUP_WORLD, NULL);
    run(w, &t, &it);
    ck_assert_double_eq_tol(it.end_s[c], 1.25, TOL); /* 0.5 s at half speed */
    cs_iteration_free(&it);
    cs_workload_free(w);
}
END_TEST

/* A task may wait for another's start (FSDP's BACKWARD_PRE prefetch);
 * memory deltas apply at start and end, the peak is found. */
START_TEST(on_start_dependency_and_memory)
{
    cs_workload *w = cs_workload_new(1e15);
    int c = COMPUTE(w, 1.0, NULL);
    cs_task g = {.kind = CS_TASK_COLLECTIVE, .stream = CS_STREAM_COMM, .duration_s = 0.3,
                 .op = CS_OP_ALL_GATHER, .ndeps = 1, .deps = {c}, .on_start = {1},
                 .mem_at_start = 100, .mem_at_end = -40, .name = "gather"};
    int a = cs_workload_append(w, &g);
    cs_training t = settings(0);
    cs_iteration it;
    run(w, &t, &it);
    ck_assert_double_eq_tol(it.start_s[a], 0, TOL);
    ck_assert_double_eq_tol(it.dyn_peak_bytes, 100, TOL);
    ck_assert_str_eq(it.peak_task, "gather");
    ck_assert_double_eq_tol(it.mem_bytes[it.nmem - 1], 60, TOL);
    cs_iteration_free(&it);
    cs_workload_free(w);
}
END_TEST

/* ---- differential: the executor against a reference schedule ---- */

typedef struct ref {
    double end_s, exposed_s;
} ref;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* List schedule at full rates (valid when no collectives of one group
 * overlap and slowdown is 0), then exposed = measure of the union of
 * communication intervals minus the compute intervals, by a sweep over
 * the sorted task boundaries. O(n^2), n small. */
static ref reference(const cs_workload *w)
{
    size_t n = cs_workload_count(w);
    double *st = calloc(n, sizeof *st), *en = calloc(n, sizeof *en), cut[2 * 64];
    double stream_free[CS_STREAM_COUNT] = {0};
    ck_assert(n <= 64);
    ref r = {0};
    for (size_t i = 0; i < n; i++) {
        const cs_task *t = cs_workload_task(w, i);
        double s = stream_free[t->stream];
        for (int k = 0; k < t->ndeps; k++) s = fmax(s, en[t->deps[k]]);
        st[i] = s;
        en[i] = stream_free[t->stream] = s + t->duration_s;
        r.end_s = fmax(r.end_s, en[i]);
        cut[2 * i] = st[i];
        cut[2 * i + 1] = en[i];
    }
    qsort(cut, 2 * n, sizeof *cut, by_value);
    for (size_t a = 0; a + 1 < 2 * n; a++) {
        if (!(cut[a + 1] > cut[a])) continue;
        double mid = 0.5 * (cut[a] + cut[a + 1]);
        int comp = 0, comm = 0;
        for (size_t i = 0; i < n; i++) {
            if (!(st[i] < mid && mid < en[i])) continue;
            cs_stream_kind k = cs_stream_kind_of(cs_workload_task(w, i)->stream);
            comp |= k == CS_STREAM_KIND_COMPUTE;
            comm |= k == CS_STREAM_KIND_COMM;
        }
        if (comm && !comp) r.exposed_s += cut[a + 1] - cut[a];
    }
    free(st);
    free(en);
    return r;
}

static int agrees(ref r, const cs_iteration *it)
{
    return fabs(r.end_s - it->iteration_time_s) <= 1e-9 * r.end_s &&
           fabs(r.exposed_s - it->exposed_comm_s) <= 1e-9 * r.end_s;
}

/* A DDP-like backward: layer computes of uneven length, each followed by
 * a bucket all-reduce on the comm stream and (every third) a reduce on the
 * other stream and group, then an optimizer step waiting for both. */
static cs_workload *ddp_like(void)
{
    cs_workload *w = cs_workload_new(1e15);
    int last_ar = -1, last_rs = -1;
    for (int l = 0; l < 12; l++) {
        int c = COMPUTE(w, 0.05 + 0.01 * (l % 5), NULL);
        last_ar = add(w, CS_STREAM_COMM, 0.07, CS_OP_ALL_REDUCE, CS_GROUP_WORLD, DEPS(c));
        if (l % 3 == 0)
            last_rs = add(w, CS_STREAM_COMM_REDUCE, 0.02, CS_OP_REDUCE_SCATTER, CS_GROUP_SHARD,
                          DEPS(c));
    }
    COMPUTE(w, 0.1, DEPS(last_ar, last_rs));
    return w;
}

START_TEST(agrees_with_reference_schedule)
{
    cs_workload *w = ddp_like();
    cs_training t = settings(0);
    cs_iteration it;
    run(w, &t, &it);
    ref r = reference(w);
    ck_assert_msg(agrees(r, &it), "executor %.9f s / %.9f exposed vs reference %.9f / %.9f",
                  it.iteration_time_s, it.exposed_comm_s, r.end_s, r.exposed_s);
    ck_assert(r.exposed_s > 0.1); /* the graph does expose communication */
    /* the fault: expecting the communication hidden (the reference without
     * its exposed part) must be caught */
    ref wrong = r;
    wrong.exposed_s = 0;
    ck_assert_msg(!agrees(wrong, &it), "a wrong expectation passed");
    /* and so must an executor slowed by overlap, against the full-rate reference */
    cs_iteration slow;
    t = settings(0.3);
    run(w, &t, &slow);
    ck_assert_msg(!agrees(r, &slow), "the slowdown went unnoticed");
    cs_iteration_free(&slow);
    cs_iteration_free(&it);
    cs_workload_free(w);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("iteration");
    TCase *tc = tcase_create("executor");
    tcase_add_test(tc, stream_kinds);
    tcase_add_test(tc, comm_hides_behind_compute);
    tcase_add_test(tc, comm_exposed_when_compute_waits);
    tcase_add_test(tc, exposed_time_by_stream_kind);
    tcase_add_test(tc, slowdown_while_overlapping);
    tcase_add_test(tc, collectives_take_sms);
    tcase_add_test(tc, serial_groups);
    tcase_add_test(tc, on_start_dependency_and_memory);
    tcase_add_test(tc, agrees_with_reference_schedule);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
