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
 * reject; then ranks that differ (rank classes): collectives as meeting
 * points, at the slowest class's rate, alike classes exactly the uniform
 * run, and a reference with classes that unsynchronised ranks fail.
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
    int g = add(w, CS_STREAM_COMM, 0.5, CS_OP_ALL_GATHER, CS_GROUP_DP_SHARD, NULL);
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
    add(w, CS_STREAM_COMM, 0.2, CS_OP_ALL_GATHER, CS_GROUP_DP_SHARD, NULL);
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
    int o = add(w, CS_STREAM_COMM_REDUCE, 0.1, CS_OP_ALL_REDUCE, CS_GROUP_DP_REPLICATE, NULL);
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
    int g = add(w, CS_STREAM_COMM, 0.2, CS_OP_ALL_GATHER, CS_GROUP_DP_SHARD, DEPS(c));
    int s = add(w, CS_STREAM_COMM_REDUCE, 0.2, CS_OP_REDUCE_SCATTER, CS_GROUP_DP_SHARD, NULL);
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
    add(w, CS_STREAM_COMM, 0.5, CS_OP_ALL_GATHER, CS_GROUP_DP_SHARD, NULL);
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
            last_rs = add(w, CS_STREAM_COMM_REDUCE, 0.02, CS_OP_REDUCE_SCATTER, CS_GROUP_DP_SHARD,
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

/* ---- ranks that differ: one timeline per rank class ---- */

static const cs_rank_class two_classes[] = {
    {.slowdown = 1.0, .nranks = 7, .first_rank = 0, .label = "ranks 0-6"},
    {.slowdown = 2.0, .nranks = 1, .first_rank = 7, .label = "rank 7"},
};

static void run_ranks(const cs_workload *w, const cs_training *t, const cs_rank_class *rc, int n,
                      cs_iteration *it)
{
    cs_diag d;
    ck_assert_int_eq(cs_iteration_run_ranks(w, t, rc, n, it, &d), 0);
}

/* compute 1 s -> all-reduce 1 s -> compute 1 s, a straggler at 2x: the
 * all-reduce starts when the straggler reaches it (2 s), on both classes;
 * the normal ranks idle 1 s before it; the iteration is the straggler's
 * 5 s, its timeline the one reported. */
START_TEST(ranks_meet_at_collectives)
{
    cs_workload *w = cs_workload_new(1e15);
    int a = COMPUTE(w, 1.0, NULL);
    int c = add(w, CS_STREAM_COMM, 1.0, CS_OP_ALL_REDUCE, CS_GROUP_WORLD, DEPS(a));
    int b = COMPUTE(w, 1.0, DEPS(c));
    cs_training t = settings(0);
    cs_iteration it;
    run_ranks(w, &t, two_classes, 2, &it);
    ck_assert_int_eq(it.nclasses, 2);
    ck_assert_int_eq(it.slowest, 1);
    const cs_iteration *n = &it.classes[0].it, *s = &it.classes[1].it;
    ck_assert_str_eq(it.classes[1].ranks.label, "rank 7");
    ck_assert_double_eq_tol(n->end_s[a], 1.0, TOL);
    ck_assert_double_eq_tol(s->end_s[a], 2.0, TOL);
    ck_assert_double_eq_tol(n->start_s[c], 2.0, TOL);
    ck_assert_double_eq_tol(s->start_s[c], 2.0, TOL);
    ck_assert_double_eq_tol(n->end_s[c], 3.0, TOL);
    ck_assert_double_eq_tol(s->end_s[c], 3.0, TOL);
    ck_assert_double_eq_tol(n->iteration_time_s, 4.0, TOL);
    ck_assert_double_eq_tol(s->iteration_time_s, 5.0, TOL);
    ck_assert_double_eq_tol(n->cpu_wait_s, 1.0, TOL);
    ck_assert_double_eq_tol(n->exposed_comm_s, 1.0, TOL);
    ck_assert_double_eq_tol(s->compute_s, 4.0, TOL);
    ck_assert_double_eq_tol(it.iteration_time_s, 5.0, TOL);
    ck_assert_double_eq_tol(it.compute_s, 4.0, TOL);
    ck_assert_double_eq_tol(it.end_s[b], 5.0, TOL);
    ck_assert_ptr_ne(it.end_s, s->end_s); /* a copy: each freed once */
    cs_iteration_free(&it);
    ck_assert_int_eq(it.nclasses, 0);
    cs_workload_free(w);
}
END_TEST

/* A collective runs at its slowest class's rate: with slowdown 1 a 3 s
 * all-reduce beside 1 s of compute runs at half rate while they overlap;
 * the straggler's compute (2 s standalone) overlaps it 4 s, so it ends at
 * 5 s on both classes, not at 4 s as with every rank alike. */
START_TEST(collective_at_the_slowest_rate)
{
    cs_workload *w = cs_workload_new(1e15);
    int x = COMPUTE(w, 1.0, NULL);
    int c = add(w, CS_STREAM_COMM, 3.0, CS_OP_ALL_REDUCE, CS_GROUP_WORLD, NULL);
    cs_training t = settings(1.0);
    cs_iteration u, it;
    run(w, &t, &u);
    ck_assert_double_eq_tol(u.end_s[x], 2.0, TOL);
    ck_assert_double_eq_tol(u.end_s[c], 4.0, TOL);
    run_ranks(w, &t, two_classes, 2, &it);
    ck_assert_double_eq_tol(it.classes[0].it.end_s[x], 2.0, TOL);
    ck_assert_double_eq_tol(it.classes[1].it.end_s[x], 4.0, TOL);
    ck_assert_double_eq_tol(it.classes[0].it.end_s[c], 5.0, TOL);
    ck_assert_double_eq_tol(it.classes[1].it.end_s[c], 5.0, TOL);
    ck_assert_double_eq_tol(it.iteration_time_s, 5.0, TOL);
    cs_iteration_free(&u);
    cs_iteration_free(&it);
    cs_workload_free(w);
}
END_TEST

/* Classes at slowdown 1 run the uniform timeline exactly, each of them. */
START_TEST(alike_classes_run_the_uniform_timeline)
{
    cs_workload *w = ddp_like();
    cs_training t = settings(0.3);
    cs_iteration u, it;
    run(w, &t, &u);
    cs_rank_class alike[3] = {two_classes[0], two_classes[0], two_classes[0]};
    run_ranks(w, &t, alike, 3, &it);
    size_t n = cs_workload_count(w);
    for (int k = 0; k < 3; k++) {
        const cs_iteration *c = &it.classes[k].it;
        ck_assert_int_eq(memcmp(c->start_s, u.start_s, n * sizeof(double)), 0);
        ck_assert_int_eq(memcmp(c->end_s, u.end_s, n * sizeof(double)), 0);
        ck_assert_double_eq(c->exposed_comm_s, u.exposed_comm_s);
    }
    ck_assert_int_eq(it.slowest, 0);
    ck_assert_double_eq(it.iteration_time_s, u.iteration_time_s);
    cs_iteration_free(&u);
    cs_iteration_free(&it);
    cs_workload_free(w);
}
END_TEST

/* The reference with rank classes: each class's streams in order, its
 * kernels slow x their duration; a collective starts at the latest class's
 * ready time and ends together everywhere (no overlap slowdown, groups
 * apart). sync = 0 is the fault: every class on its own. Each class's
 * last end into last[nc]. */
static void reference_ranks(const cs_workload *w, const double *slow, int nc, int sync, double *last)
{
    size_t n = cs_workload_count(w);
    double en[4][64], free_[4][CS_STREAM_COUNT] = {{0}};
    ck_assert(n <= 64 && nc <= 4);
    for (size_t i = 0; i < n; i++) {
        const cs_task *t = cs_workload_task(w, i);
        int coll = t->kind == CS_TASK_COLLECTIVE;
        double st[4], meet = 0;
        for (int k = 0; k < nc; k++) {
            st[k] = free_[k][t->stream];
            for (int d = 0; d < t->ndeps; d++) st[k] = fmax(st[k], en[k][t->deps[d]]);
            meet = fmax(meet, st[k]);
        }
        for (int k = 0; k < nc; k++) {
            double s = coll && sync ? meet : st[k];
            en[k][i] = free_[k][t->stream] = s + t->duration_s * (coll ? 1 : slow[k]);
            last[k] = fmax(i ? last[k] : 0, en[k][i]);
        }
    }
}

/* The executor's class ends match last[] (to 1e-9 relative). */
static int agrees_ranks(const cs_iteration *it, const double *last)
{
    for (int k = 0; k < it->nclasses; k++)
        if (fabs(it->classes[k].it.iteration_time_s - last[k]) > 1e-9 * last[k]) return 0;
    return 1;
}

START_TEST(ranks_agree_with_reference_schedule)
{
    cs_workload *w = ddp_like();
    cs_training t = settings(0);
    const double slow[] = {1.0, 1.3, 1.7};
    cs_rank_class rc[3] = {two_classes[0], two_classes[1], two_classes[1]};
    for (int k = 0; k < 3; k++) rc[k].slowdown = slow[k];
    cs_iteration it;
    run_ranks(w, &t, rc, 3, &it);
    double ref[3], apart[3];
    reference_ranks(w, slow, 3, 1, ref);
    reference_ranks(w, slow, 3, 0, apart);
    ck_assert_msg(agrees_ranks(&it, ref), "executor %.9f %.9f %.9f s vs reference %.9f %.9f %.9f",
                  it.classes[0].it.iteration_time_s, it.classes[1].it.iteration_time_s,
                  it.classes[2].it.iteration_time_s, ref[0], ref[1], ref[2]);
    ck_assert_int_eq(it.slowest, 2);
    ck_assert_double_eq_tol(it.iteration_time_s, ref[2], 1e-9);
    /* the fault: ranks that never wait for one another must be caught */
    ck_assert_msg(!agrees_ranks(&it, apart), "unsynchronised ranks passed");
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
    tcase_add_test(tc, ranks_meet_at_collectives);
    tcase_add_test(tc, collective_at_the_slowest_rate);
    tcase_add_test(tc, alike_classes_run_the_uniform_timeline);
    tcase_add_test(tc, ranks_agree_with_reference_schedule);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
