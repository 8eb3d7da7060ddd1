/* SPDX-License-Identifier: MIT */
/*
 * test-hw-pipeline.c - a pipeline's schedule in collsim-hw, without MPI or
 * a GPU: the schedule `collsim simulate --pp 2 --emit-schedule` writes
 * reads back (stages, every task's stage, p2p sends and receives with
 * peer, tag and batch), its predicted timeline runs each stage on its own
 * streams with every receive waiting for its send and comes to the
 * simulator's iteration within one send, a replay plan gives each rank its
 * stage and batches (rplan.h), and a receive without its send or a
 * dependency across stages is refused. Hand-written 2-stage schedules: a
 * batch listing its receive first is placed as a unit, a circular wait and
 * a size_bytes past 2^60 are refused at load, a tag of 2^30 costs no
 * tag-sized table, and busy / exposed time are the slowest stage's.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "config/config.h"
#include "out/schedule.h"
#include "rplan.h"
#include "schedule.h"
#include "train/evaluate.h"
#include "train/pipeline.h"
#include "testutil.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CS_TEST_ASAN 1
#endif
#endif
#ifndef CS_TEST_ASAN
#define CS_TEST_ASAN 0
#endif

/* text with the first `old` after the first `after` replaced by `new`
 * (caller frees). */
static char *replace_after(const char *text, const char *after, const char *old, const char *new)
{
    const char *a = strstr(text, after);
    ck_assert_ptr_nonnull(a);
    const char *o = strstr(a, old);
    ck_assert_ptr_nonnull(o);
    size_t n = strlen(text) - strlen(old) + strlen(new) + 1, head = (size_t)(o - text);
    char *out = malloc(n);
    memcpy(out, text, head);
    snprintf(out + head, n - head, "%s%s", new, o + strlen(old));
    return out;
}

/* A pipeline's schedule (simulate --pp 2 --emit-schedule) reads back: its
 * stages, every task's stage, its p2p tasks (op, peer, tag, batch), and
 * the predicted timeline of the stages (a receive waits for its send) is
 * the simulator's iteration to within the last send, which the executor
 * leaves out of a stage's end. A receive whose tag no send has, and a
 * dependency across stages, are refused. */
START_TEST(schedule_pipeline_from_simulator)
{
    cs_diag d;
    cs_diag_clear(&d);
    cs_model m;
    ck_assert_int_eq(cs_model_load("gpt2-124m", &m, &d), 0);
    cs_cluster cl;
    ck_assert_int_eq(cs_config_cluster("dgx-h100", &cl, &d), 0);
    cs_topology topo;
    ck_assert_int_eq(cs_topology_build(&cl, 4, 0, &topo, &d), 0);
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_DDP);
    t.pipeline_parallel = 2;
    t.grad_accum = 4;
    cs_pp_timeline tl = {0};
    cs_evaluate_opts o = {.simulate = 1, .timeline = &tl};
    cs_evaluation ev;
    ck_assert_msg(cs_evaluate_config(&m, &t, &topo, &o, &ev, &d) == 0, "%s", d.message);
    cs_buf b = {0};
    cs_schedule_write_pipeline(&tl, &b);
    cs_hw_schedule s;
    ck_assert_msg(cs_hw_schedule_parse(b.data, b.len, "pp.json", &s, &d) == 0, "%s", d.message);
    ck_assert_int_eq(s.stages, 2);
    int sends = 0, recvs = 0;
    for (size_t i = 0; i < s.n; i++) {
        const cs_hw_stask *x = &s.tasks[i];
        ck_assert(x->stage == 0 || x->stage == 1);
        if (!x->p2p) continue;
        ck_assert_int_eq(x->op, CS_OP_SEND_RECV);
        ck_assert_int_eq(x->group, CS_GROUP_PP);
        ck_assert_int_eq(x->peer_stage, 1 - x->stage);
        sends += x->p2p == CS_HW_P2P_SEND, recvs += x->p2p == CS_HW_P2P_RECV;
    }
    ck_assert_int_eq(sends, 2 * 4);
    ck_assert_int_eq(recvs, 2 * 4);
    double *st = malloc(s.n * sizeof *st), *en = malloc(s.n * sizeof *en);
    double pred = cs_hw_schedule_predict(&s, st, en), p2p = 0;
    for (size_t i = 0; i < s.n; i++) {
        const cs_hw_stask *x = &s.tasks[i];
        if (x->p2p == CS_HW_P2P_SEND) p2p = x->predicted_s;
        if (x->p2p != CS_HW_P2P_RECV) continue;
        for (size_t j = 0; j < s.n; j++) /* the receive ends no earlier than its send */
            if (s.tasks[j].p2p == CS_HW_P2P_SEND && s.tasks[j].tag == x->tag)
                ck_assert(en[i] >= en[j] - 1e-15);
    }
    double sim = ev.iteration.iteration_time_s;
    /* the schedule carries each predicted_s to 10 significant digits
     * (%.9e, out/schedule.c): the replayed sum may differ from the
     * simulator's by that rounding along the critical path */
    double eps = 1e-9 * sim;
    ck_assert_msg(pred >= sim - eps && pred <= sim + p2p + eps,
                  "predicted %.9g vs simulated %.9g (+ one send %.3g)", pred, sim, p2p);
    free(st), free(en);
    /* the replay plan: ranks 0-1 run stage 0, 2-3 stage 1 (pp outermost);
     * stage 0's "send F 1" and "recv B 0" are one batch of 2 */
    cs_hw_rtask *rt = calloc(s.n, sizeof *rt);
    size_t *queue = calloc(s.n, sizeof *queue), nq = 0, at_send = 0;
    for (size_t i = 0; i < s.n; i++)
        rt[i] = (cs_hw_rtask){.kind = s.tasks[i].kind, .stream = s.tasks[i].stream,
                              .stage = s.tasks[i].stage, .p2p = s.tasks[i].p2p,
                              .peer_stage = s.tasks[i].peer_stage, .tag = s.tasks[i].tag,
                              .batch = s.tasks[i].batch};
    cs_hw_rplan plan = {.n = s.n, .tasks = rt};
    cs_hw_rplan_set_groups(&plan, &s, 4, 1);
    for (int r = 0; r < 4; r++) ck_assert_int_eq(cs_hw_rplan_stage(&plan, r), r / 2);
    for (size_t i = 0; i < s.n; i++)
        if (cs_hw_rplan_runs(&plan, &rt[i], 1) && rt[i].stream == CS_STREAM_COMPUTE) {
            if (!strcmp(s.tasks[i].name, "send F 1 -> stage 1")) at_send = nq;
            queue[nq++] = i;
        }
    ck_assert_int_eq(cs_hw_rplan_batch(&plan, &queue[at_send], nq - at_send, 1), 2);
    ck_assert_str_eq(s.tasks[queue[at_send + 1]].name, "recv B 0 <- stage 1");
    ck_assert_int_eq(cs_hw_rplan_batch(&plan, &queue[at_send], nq - at_send, 2), 0); /* not stage 1's */
    ck_assert_int_eq(cs_hw_rplan_batch(&plan, &queue[0], nq, 1), 0); /* a pass: no batch */
    free(rt), free(queue);
    cs_hw_schedule_free(&s);
    /* a receive with no send: its tag changed */
    char *bad = replace_after(b.data, "\"op\": \"recv\"", "\"tag\": ", "\"tag\": 99");
    ck_assert_int_eq(cs_hw_schedule_parse(bad, strlen(bad), "pp.json", &s, &d), CS_ECONFIG);
    ck_assert_msg(strstr(d.message, "not one send and one receive") != NULL, "%s", d.message);
    free(bad);
    /* a dependency of a stage-1 task on task 0 (stage 0's) */
    bad = replace_after(b.data, "recv F 0 <- stage 0", "\"deps\": []",
                        "\"deps\": [{\"task\": 0, \"when\": \"end\"}]");
    ck_assert_int_eq(cs_hw_schedule_parse(bad, strlen(bad), "pp.json", &s, &d), CS_ECONFIG);
    ck_assert_msg(strstr(d.message, "another pipeline stage") != NULL, "%s", d.message);
    free(bad);
    cs_buf_free(&b);
    cs_pp_timeline_free(&tl);
    cs_evaluate_free(&ev);
}
END_TEST

/* A 2-stage schedule (mesh pp 2) of the given tasks' JSON (caller frees). */
static char *two_stage(const char *tasks)
{
    static const char head[] =
        "{\"format\": \"collsim-schedule\", \"version\": 2,\n"
        " \"mesh\": [{\"name\": \"pp\", \"size\": 2}],\n"
        " \"groups\": {\"world\": {\"ranks\": 2, \"dims\": [\"pp\"]},"
        " \"pp\": {\"ranks\": 2, \"dims\": [\"pp\"]}},\n"
        " \"pipeline\": {\"stages\": 2},\n \"tasks\": [\n";
    size_t n = sizeof head + strlen(tasks) + 8;
    char *out = malloc(n);
    snprintf(out, n, "%s%s]}\n", head, tasks);
    return out;
}

/* A p2p task's JSON: id, stage, op, peer, tag, batch, size_bytes. */
static void p2p(char *buf, size_t n, int id, int stage, const char *op, int tag, int batch,
                const char *size)
{
    snprintf(buf, n,
             "{\"id\": %d, \"kind\": \"p2p\", \"stream\": \"compute\", \"name\": \"%s %d\", "
             "\"predicted_s\": 0.001, \"stage\": %d, \"op\": \"%s\", \"peer\": {\"pp\": %d}, "
             "\"size_bytes\": %s, \"dtype\": \"bf16\", \"group\": \"pp\", \"tag\": %d, "
             "\"batch\": %d, \"deps\": []}",
             id, op, tag, stage, op, 1 - stage, size, tag, batch);
}

/* Four p2p tasks: stage 0 [recv tag 1, send tag 0], stage 1 [recv tag 0,
 * send tag 1], in batches b[0..3]; tags tag0 / tag1; a schedule text. */
static char *exchange(const int b[4], int tag0, int tag1, const char *size)
{
    char t[4][512], all[2100];
    p2p(t[0], sizeof t[0], 0, 0, "recv", tag1, b[0], size);
    p2p(t[1], sizeof t[1], 1, 0, "send", tag0, b[1], size);
    p2p(t[2], sizeof t[2], 2, 1, "recv", tag0, b[2], size);
    p2p(t[3], sizeof t[3], 3, 1, "send", tag1, b[3], size);
    snprintf(all, sizeof all, "%s,\n%s,\n%s,\n%s\n", t[0], t[1], t[2], t[3]);
    return two_stage(all);
}

/* A batch that lists its receive before its send is posted as a unit (as
 * torch's batch_isend_irecv posts it): every task is placed, each receive
 * ends no earlier than its send. A large tag is indexed by position: the
 * test runs (forked, as Check does by default) with 4 GiB of address
 * space. */
START_TEST(schedule_batch_recv_first)
{
    cs_diag d;
    cs_diag_clear(&d);
    static const int one[4] = {1, 1, 1, 1};
#if !defined(__SANITIZE_ADDRESS__) && !CS_TEST_ASAN
    /* a table indexed by tag value (8 GiB for tag 2^30) would fail here */
    struct rlimit rl;
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &rl), 0);
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)4 << 30) {
        rl.rlim_cur = (rlim_t)4 << 30;
        ck_assert_int_eq(setrlimit(RLIMIT_AS, &rl), 0);
    }
#endif
    char *text = exchange(one, 0, 1 << 30, "1024");
    cs_hw_schedule s;
    ck_assert_msg(cs_hw_schedule_parse(text, strlen(text), "b.json", &s, &d) == 0, "%s",
                  d.message);
    double st[4], en[4];
    for (int i = 0; i < 4; i++) st[i] = en[i] = -7; /* garbage the predictor must overwrite */
    double it = cs_hw_schedule_predict(&s, st, en);
    for (int i = 0; i < 4; i++) ck_assert_msg(st[i] >= 0 && en[i] >= st[i], "task %d unplaced", i);
    ck_assert(en[0] >= en[3] && en[2] >= en[1]); /* each receive after its send */
    ck_assert_double_eq_tol(it, 0.002, 1e-12);   /* send, then the receive */
    cs_hw_schedule_free(&s);
    free(text);
}
END_TEST

/* A real cycle (each task its own batch: each stage's receive waits for
 * the other's send behind it) is refused at load, naming a task. */
START_TEST(schedule_deadlock_refused)
{
    cs_diag d;
    cs_diag_clear(&d);
    static const int own[4] = {1, 2, 3, 4};
    char *text = exchange(own, 0, 1, "1024");
    cs_hw_schedule s;
    ck_assert_int_eq(cs_hw_schedule_parse(text, strlen(text), "c.json", &s, &d), CS_ECONFIG);
    ck_assert_msg(strstr(d.message, "deadlock") != NULL, "%s", d.message);
    free(text);
}
END_TEST

/* size_bytes beyond 2^60 (a count no size_t holds on 32 bits, nor a
 * transfer any run makes) is refused with the task's position. */
START_TEST(schedule_size_bytes_range)
{
    cs_diag d;
    cs_diag_clear(&d);
    static const int one[4] = {1, 1, 1, 1};
    char *text = exchange(one, 0, 1, "1e30");
    cs_hw_schedule s;
    ck_assert_int_eq(cs_hw_schedule_parse(text, strlen(text), "z.json", &s, &d), CS_ECONFIG);
    ck_assert_msg(strstr(d.message, "size_bytes") != NULL && d.line > 0, "%s", d.message);
    free(text);
    text = exchange(one, 0, 1, "1152921504606846976"); /* 2^60: accepted */
    ck_assert_msg(cs_hw_schedule_parse(text, strlen(text), "z.json", &s, &d) == 0, "%s",
                  d.message);
    cs_hw_schedule_free(&s);
    free(text);
}
END_TEST

/* A pipeline's compute busy time and exposed communication are the
 * slowest stage's (the simulator's, sim/train/pipeline.c fill_iteration),
 * not all stages merged on one timeline. Stage 0: compute 1 s, send, an
 * all-reduce of 0.1 s; stage 1: the receive (ends with the send, 1.001 s),
 * compute 2 s, an all-reduce of 0.5 s. */
START_TEST(schedule_pipeline_per_stage)
{
    cs_diag d;
    cs_diag_clear(&d);
    static const char *const fmt[] = {
        "{\"id\": %d, \"kind\": \"compute\", \"stream\": \"compute\", \"name\": \"c\", "
        "\"predicted_s\": %s, \"stage\": %d, \"flops\": 1, \"deps\": []}",
        "{\"id\": %d, \"kind\": \"collective\", \"stream\": \"comm\", \"name\": \"ar\", "
        "\"predicted_s\": %s, \"stage\": %d, \"op\": \"all_reduce\", \"dtype\": \"bf16\", "
        "\"group\": \"world\", \"size_bytes\": 1024, \"deps\": [{\"task\": %d, \"when\": \"end\"}]}"};
    char t[6][512], all[3200];
    snprintf(t[0], sizeof t[0], fmt[0], 0, "1", 0);
    p2p(t[1], sizeof t[1], 1, 0, "send", 0, 1, "1024");
    snprintf(t[2], sizeof t[2], fmt[1], 2, "0.1", 0, 0);
    p2p(t[3], sizeof t[3], 3, 1, "recv", 0, 2, "1024");
    snprintf(t[4], sizeof t[4], fmt[0], 4, "2", 1);
    snprintf(t[5], sizeof t[5], fmt[1], 5, "0.5", 1, 4);
    snprintf(all, sizeof all, "%s,\n%s,\n%s,\n%s,\n%s,\n%s\n", t[0], t[1], t[2], t[3], t[4], t[5]);
    char *text = two_stage(all);
    cs_hw_schedule s;
    ck_assert_msg(cs_hw_schedule_parse(text, strlen(text), "s.json", &s, &d) == 0, "%s",
                  d.message);
    double st[6], en[6];
    ck_assert_double_eq_tol(cs_hw_schedule_predict(&s, st, en), 3.501, 1e-12);
    /* stage 1: the receive and its compute on the compute stream */
    ck_assert_double_eq_tol(cs_hw_compute_busy_s(&s, st, en), 3.001, 1e-12);
    /* stage 1: the receive (compute idle) and its all-reduce */
    ck_assert_double_eq_tol(cs_hw_exposed_comm_s(&s, st, en), 1.501, 1e-12);
    cs_hw_schedule_free(&s);
    free(text);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("hw-pipeline");
    TCase *tc = tcase_create("schedule");
    tcase_add_test(tc, schedule_pipeline_from_simulator);
    tcase_add_test(tc, schedule_batch_recv_first);
    tcase_add_test(tc, schedule_deadlock_refused);
    tcase_add_test(tc, schedule_size_bytes_range);
    tcase_add_test(tc, schedule_pipeline_per_stage);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return cs_test_run(suite()); }
