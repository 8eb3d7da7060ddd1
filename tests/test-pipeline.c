/* SPDX-License-Identifier: MIT */
/*
 * test-pipeline.c - pipeline parallelism (train/pipeline.h,
 * train/pipeline_sched.h): on uniform stages every schedule row's
 * simulated bubble equals its source's ideal (Narayanan et al. 2021:
 * (P - 1) / m, (P - 1) / (m V) interleaved; Qi et al. 2024 ZB-H1: (P - 1)
 * (tf + tb - tw) / (m (tf + tb + tw))) exactly without transfer time and
 * within 1% of the ideal iteration with it (transfers lengthen fill and
 * drain: the only difference), and so is the slowest stage's bubble with
 * its time on transfers taken out (nearer the ideal); a deliberately wrong ideal (interleaving
 * judged by 1F1B's (P - 1) / m) is caught; activations held per stage
 * (1F1B P - s, GPipe m, interleaved Megatron's warm-up + 1); the first
 * stage's activation memory against Korthikanti et al. 2022 Eq. 5 (and
 * its interleaving factor 1 + (P - 1) / (P V), Sec 4.2.3); the layer
 * split; a stage's DDP buckets are its own gradients; a stage's forward
 * carries its layers' TP collectives; the layout's pp dimension
 * (outermost, absent at P = 1). Review findings: pipeline_parallel's
 * range is the stages kept (3); zero_bubble's W split over tp once (4);
 * held activations by global layer index (5); the gradient sync's dtype
 * in the schedule JSON (8); the trace's all-gather before the first
 * pass (11); the iteration's recompute and all-gather (6). The
 * iteration's bytes sent by op, counted by hand on 2 stages; its parts
 * (the pipeline bubble apart from exposed communication) adding up on
 * every schedule row; exposed send_recv following the transfer's price
 * (NVLink against the NIC path).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/dtype.h"
#include "base/limit.h"
#include "out/schedule.h"
#include "out/trace.h"
#include "train/checkpoint.h"
#include "train/compute.h"
#include "train/layout.h"
#include "train/pipeline.h"
#include "train/pipeline_sched.h"
#include "train/pricing.h"
#include "train/tensor.h"
#include "testutil.h"

/* Runs row on P uniform stages; returns the bubble over m x stage work. */
static double bubble(const cs_pp_schedule_row *r, int P, int V, int m, double p2p, cs_pp_run *run)
{
    int n = P * V;
    double *f = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n),
           *w = malloc(sizeof(double) * n);
    double tf = 1, tb = r->split_backward ? 1 : 2, tw = r->split_backward ? 1 : 0;
    for (int k = 0; k < n; k++) f[k] = tf / V, b[k] = tb / V, w[k] = tw / V;
    cs_pipeline_simulate(r, P, V, m, f, b, w, p2p, 1, run);
    free(f), free(b), free(w);
    double work = m * (tf + tb + tw);
    for (int s = 0; s < P; s++) ck_assert_double_eq_tol(run->busy_s[s], work, 1e-9);
    return (run->time_s - work) / work;
}

/* The slowest stage's (the first to end last's, as pipeline.c reports
 * it) idle time over work, less its time on transfers when `bubble`. */
static double slowest_bubble(const cs_pp_run *run, int bubble, double work)
{
    int w = 0;
    for (int s = 1; s < run->P; s++)
        if (run->end_s[s] > run->end_s[w]) w = s;
    double idle = run->end_s[w] - run->busy_s[w];
    return (idle - (bubble ? run->p2p_wait_s[w] : 0)) / work;
}

static int chunks_of(const cs_pp_schedule_row *r) { return r->interleaved ? 2 : 1; }

START_TEST(bubble_matches_ideal_every_row)
{
    const int P = 4, m = 8;
    for (int i = 0; i < cs_pp_schedule_count(); i++) {
        const cs_pp_schedule_row *r = cs_pp_schedule_row_at(i);
        int V = chunks_of(r);
        double tb = r->split_backward ? 1 : 2, tw = r->split_backward ? 1 : 0;
        double ideal = r->ideal_bubble(P, V, m, 1, tb, tw);
        cs_pp_run run;
        double got = bubble(r, P, V, m, 0, &run);
        cs_pp_run_free(&run);
        if (fabs(got - ideal) > 1e-9)
            ck_abort_msg("%s: bubble %.6f, ideal %.6f", r->name, got, ideal);
        /* with transfers (1e-3 of a forward each way): the fill and drain
         * wait for them and senders are held for them, so the time grows,
         * by less than 1% of the ideal iteration; the slowest stage's
         * bubble (its idle time less that on transfers, what
         * cs_iteration.pipeline_bubble_s reports) is within the same 1%,
         * and nearer the ideal than its whole idle time */
        double p2p = 1e-3;
        got = bubble(r, P, V, m, p2p, &run);
        double work = m * (1 + tb + tw), idle = slowest_bubble(&run, 0, work),
               bub = slowest_bubble(&run, 1, work);
        cs_pp_run_free(&run);
        ck_assert(got > ideal);
        ck_assert_double_eq_tol(idle, got, 1e-12);
        if (fabs((1 + got) * work - (1 + ideal) * work) > 0.01 * (1 + ideal) * work)
            ck_abort_msg("%s: with p2p %.6f vs ideal %.6f", r->name, got, ideal);
        if (fabs(bub - ideal) * work > 0.01 * (1 + ideal) * work || !(fabs(bub - ideal) < got - ideal))
            ck_abort_msg("%s: bubble with p2p %.6f (idle %.6f) vs ideal %.6f", r->name, bub, got,
                         ideal);
    }
}
END_TEST

START_TEST(wrong_ideal_caught)
{
    /* interleaving judged by 1F1B's (P - 1) / m: off by far more than 1% */
    const cs_pp_schedule_row *r = cs_pp_schedule_find("interleaved_1f1b");
    cs_pp_run run;
    double got = bubble(r, 4, 2, 8, 0, &run);
    cs_pp_run_free(&run);
    ck_assert(fabs(got - 3.0 / 8) > 0.05);
    ck_assert_double_eq_tol(got, 3.0 / 16, 1e-9);
}
END_TEST

START_TEST(activations_held_per_stage)
{
    const int P = 4, m = 8, V = 2;
    cs_pp_run run;
    bubble(cs_pp_schedule_find("1f1b"), P, 1, m, 0, &run);
    for (int s = 0; s < P; s++) ck_assert_int_eq(run.held_max[s], P - s);
    cs_pp_run_free(&run);
    bubble(cs_pp_schedule_find("gpipe"), P, 1, m, 0, &run);
    for (int s = 0; s < P; s++) ck_assert_int_eq(run.held_max[s], m);
    cs_pp_run_free(&run);
    bubble(cs_pp_schedule_find("interleaved_1f1b"), P, V, m, 0, &run);
    for (int s = 0; s < P; s++) ck_assert_int_eq(run.held_max[s], 2 * (P - s - 1) + (V - 1) * P + 1);
    cs_pp_run_free(&run);
}
END_TEST

START_TEST(layer_split)
{
    int first, total = 0, next = 0;
    for (int s = 0; s < 35; s++)
        for (int c = 0; c < 3; c++) ck_assert_int_eq(cs_pipeline_chunk_layers(105, 35, 3, s, c, NULL), 1);
    int want[4] = {3, 3, 2, 2}; /* 10 layers over 4: the first 10 mod 4 one more */
    for (int s = 0; s < 4; s++) {
        ck_assert_int_eq(cs_pipeline_chunk_layers(10, 4, 1, s, 0, &first), want[s]);
        ck_assert_int_eq(first, next);
        next += want[s];
        total += want[s];
    }
    ck_assert_int_eq(total, 10);
    /* chunk c of stage s is virtual stage c x P + s */
    cs_pipeline_chunk_layers(16, 4, 2, 1, 1, &first);
    ck_assert_int_eq(first, 10);
}
END_TEST

/* Korthikanti's 22B-like GPT (Table 3: a 64, h 6144, s 2048, v 51200),
 * 48 layers, unfused attention, no recompute, T = 1. */
static void eq5_setup(cs_test_setup *s, int P, int V, int m)
{
    cs_test_setup_make(s, "dgx-h100", "gpt3-13b", CS_STRAT_DDP, 8 * P);
    s->m.layers = 48, s->m.hidden = 6144, s->m.heads = 64, s->m.kv_heads = 64;
    s->m.ffn_hidden = 4 * 6144, s->m.seq_len = 2048, s->m.vocab = 51200, s->m.dropout = 0.1;
    s->m.biases = 1, s->m.learned_positions = 1, s->m.tied_embeddings = 1;
    cs_diag d;
    ck_assert_int_eq(cs_model_derive(&s->m, &d), 0);
    s->t.micro_batch = 1;
    s->t.grad_accum = m;
    s->t.checkpointing = CS_CKPT_NONE;
    s->t.flash_attention = 0;
    s->t.pipeline_parallel = P;
    s->t.virtual_stages = V;
}

static double eq5_first_stage(int P, int V, int m, int schedule)
{
    cs_test_setup s;
    eq5_setup(&s, P, V, m);
    s.t.pipeline_schedule = schedule;
    cs_layout l;
    cs_diag d;
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), 0);
    cs_iteration it;
    cs_pp_memory *mem = malloc(sizeof *mem);
    int rc = cs_pipeline_run(&s.m, &s.t, &l, NULL, &it, mem, &d);
    cs_test_diag_ok(rc, &d, "pipeline run");
    double a = mem->stage[0].activations_bytes;
    ck_assert(it.iteration_time_s > 0);
    free(mem);
    return a;
}

START_TEST(first_stage_memory_korthikanti_eq5)
{
    const int P = 4, m = 8;
    double s = 2048, b = 1, h = 6144, a = 64, L = 48;
    double eq5 = s * b * h * L * (34 + 5 * a * s / h); /* t = 1 */
    double got = eq5_first_stage(P, 1, m, -1);
    if (fabs(got - eq5) > 0.01 * eq5) ck_abort_msg("1F1B first stage %.4g vs Eq. 5 %.4g", got, eq5);
    double inter = eq5 * (1 + (P - 1.0) / (P * 2));
    got = eq5_first_stage(P, 2, m, -1);
    if (fabs(got - inter) > 0.01 * inter)
        ck_abort_msg("interleaved first stage %.4g vs Eq. 5 x (1 + (p-1)/pm) %.4g", got, inter);
    /* GPipe holds all m micro-batches: m / P times Eq. 5, caught */
    got = eq5_first_stage(P, 1, m, 0);
    ck_assert(fabs(got - eq5) > 0.5 * eq5);
    ck_assert_double_eq_tol(got, eq5 * m / P, 0.01 * eq5 * m / P);
}
END_TEST

static int schedule_index(const char *name)
{
    for (int i = 0; i < cs_pp_schedule_count(); i++)
        if (!strcmp(cs_pp_schedule_row_at(i)->name, name)) return i;
    ck_abort_msg("no schedule %s", name);
    return -1;
}

/* Each stage's peak of the Eq. 5 model under schedule `name`. */
static void stage_peaks(int P, int m, const char *name, double *peak)
{
    cs_test_setup s;
    eq5_setup(&s, P, 1, m);
    s.t.pipeline_schedule = schedule_index(name);
    cs_layout l;
    cs_diag d;
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), 0);
    cs_iteration it;
    cs_pp_memory *mem = malloc(sizeof *mem);
    cs_test_diag_ok(cs_pipeline_run(&s.m, &s.t, &l, NULL, &it, mem, &d), &d, "pipeline run");
    for (int i = 0; i < P; i++) peak[i] = mem->stage[i].peak_bytes;
    free(mem);
}

/* ZB-H1 keeps 1F1B's peak (Qi et al. 2024 Sec 3.1, Table 2: p M_B both):
 * at most P micro-batches in flight on any stage, forward run and W not
 * yet, P - s of them before their B. m = 4P, so a schedule that holds
 * activations from F to a deferred W without that cap (m on stage 0, as
 * the greedy order did) is caught. */
START_TEST(zero_bubble_peak_matches_1f1b)
{
    enum { P = 4, m = 16 };
    cs_pp_run run;
    bubble(cs_pp_schedule_find("zero_bubble"), P, 1, m, 0, &run);
    ck_assert_int_eq(run.held_max[0], P);
    for (int s = 0; s < P; s++) ck_assert_int_le(run.held_max[s], P);
    cs_pp_run_free(&run);
    double zb[P], ofob[P], zb_max = 0, ofob_max = 0;
    stage_peaks(P, m, "zero_bubble", zb);
    stage_peaks(P, m, "1f1b", ofob);
    for (int s = 0; s < P; s++) {
        if (zb[s] > zb_max) zb_max = zb[s];
        if (ofob[s] > ofob_max) ofob_max = ofob[s];
    }
    /* the same stage 0 (its peak, the pipeline's), no stage above it */
    if (fabs(zb[0] - ofob[0]) > 0.03 * ofob[0])
        ck_abort_msg("stage 0: zero_bubble %.4g vs 1f1b %.4g", zb[0], ofob[0]);
    if (fabs(zb_max - ofob_max) > 0.03 * ofob_max)
        ck_abort_msg("peak: zero_bubble %.4g vs 1f1b %.4g", zb_max, ofob_max);
    for (int s = 0; s < P; s++) ck_assert(zb[s] <= 1.03 * ofob_max);
    /* GPipe holds all m: far above, caught by the same comparison */
    double gp[P];
    stage_peaks(P, m, "gpipe", gp);
    ck_assert(fabs(gp[0] - ofob[0]) > 0.03 * ofob[0]);
}
END_TEST

/* A stage's DDP buckets hold its own gradients (strategy_ddp.c: as many
 * bytes as the gradients, in their dtype), not the whole model's: on 4
 * stages of 12 layers each stage's buckets equal its gradients (sized by
 * the whole model they were about 4 times them). */
START_TEST(stage_buckets_are_the_stages)
{
    cs_test_setup s;
    eq5_setup(&s, 4, 1, 8);
    s.t.gradient_as_bucket_view = 0;
    cs_layout l;
    cs_diag d;
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), 0);
    cs_iteration it;
    cs_pp_memory *mem = malloc(sizeof *mem);
    cs_test_diag_ok(cs_pipeline_run(&s.m, &s.t, &l, NULL, &it, mem, &d), &d, "pipeline run");
    for (int st = 0; st < 4; st++) {
        const cs_memory *x = &mem->stage[st];
        ck_assert(x->buckets_bytes > 0);
        ck_assert_double_eq_tol(x->buckets_bytes, x->grads_bytes, 1e-9 * x->grads_bytes);
    }
    free(mem);
}
END_TEST

/* Builds s's layout into l and runs its pipeline timeline into it, tl. */
static void run_timeline(cs_test_setup *s, cs_layout *l, cs_iteration *it, cs_pp_timeline *tl)
{
    cs_diag d;
    ck_assert_int_eq(cs_layout_build(&s->m, &s->t, &s->topo, l, &d), 0);
    cs_test_diag_ok(cs_pipeline_run_timeline(&s->m, &s->t, l, NULL, it, NULL, tl, &d), &d,
                    "pipeline run");
}

/* A stage's forward carries its layers' TP collectives as the graph
 * issues them (tensor.h's rows, tensor.c): without SP two all-reduces of
 * b x s x h per layer forward (Megatron's f / g operators), priced on the
 * tp group. Stage 0's first forward of 1F1B with T = 2 on 2 stages is its
 * layers x (the rank's forward kernels + 2 all-reduces), derived here
 * from first principles, not from tensor.h's list. */
START_TEST(stage_forward_has_tp_collectives)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama3-8b", CS_STRAT_DDP, 32);
    s.t.tensor_parallel = 2;
    s.t.sequence_parallel = 0;
    s.t.pipeline_parallel = 2;
    s.t.checkpointing = CS_CKPT_NONE;
    s.t.grad_accum = 4;
    cs_layout l;
    cs_diag d;
    cs_iteration it;
    cs_pp_timeline tl;
    run_timeline(&s, &l, &it, &tl);
    const cs_pp_slice *f0 = &tl.slice[tl.first[0]];
    ck_assert_int_eq(f0->pass, CS_PP_F);
    /* the whole model: compute.c prices the tp rank's share itself */
    cs_compute comp;
    cs_test_diag_ok(cs_compute_price(&s.m, &s.t, &l.group[CS_GROUP_WORLD].topo.cluster, &comp, &d),
                    &d, "compute");
    double act = (double)s.t.micro_batch * s.m.seq_len * s.m.hidden * cs_dtype_size(s.t.param_dtype);
    cs_algo_id a;
    cs_proto p;
    double ar = 0;
    cs_test_diag_ok(cs_pricing_price(NULL, -1, &l.group[CS_GROUP_TP].topo, CS_OP_ALL_REDUCE, act,
                                     s.t.collective_engine, &a, &p, &ar, &d),
                    &d, "all-reduce");
    ck_assert(ar > 0);
    int layers = cs_pipeline_chunk_layers(s.m.layers, 2, 1, 0, 0, NULL);
    double want = layers * (comp.pass[CS_KPASS_FORWARD].time_s + 2 * ar);
    double got = f0->end_s - f0->start_s;
    ck_assert_double_eq_tol(got, want, 1e-9 * want);
    cs_pp_timeline_free(&tl);
}
END_TEST

/* The stages' passes are priced on the whole model (compute.c splits it
 * over the tp ranks itself): with T = 2 the last stage's forward FLOPs
 * exceed the first's (equal layers) by the head's logits GEMM over
 * V / T, not V / T^2 (pricing the tp rank's model split the vocab twice). */
START_TEST(stage_passes_priced_on_the_whole_model)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama3-8b", CS_STRAT_DDP, 16);
    s.t.tensor_parallel = 2;
    s.t.pipeline_parallel = 2;
    s.t.grad_accum = 4;
    cs_layout l;
    cs_iteration it;
    cs_pp_timeline tl;
    run_timeline(&s, &l, &it, &tl);
    double T = (double)s.t.micro_batch * s.m.seq_len;
    double logits = 2 * T * (s.m.vocab / 2.0) * s.m.hidden;
    double head = tl.f_flops[1] - tl.f_flops[0];
    ck_assert_double_eq_tol(head, logits, 1e-6 * logits);
    cs_pp_timeline_free(&tl);
}
END_TEST

START_TEST(layout_pp_outermost)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama3-8b", CS_STRAT_DDP, 32);
    cs_layout l;
    cs_diag d;
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), 0);
    ck_assert_int_eq(cs_mesh_find(&l.mesh, "pp"), -1); /* absent at P = 1 */
    ck_assert_int_eq(l.group[CS_GROUP_PP].size, 1);
    s.t.tensor_parallel = 2;
    s.t.pipeline_parallel = 4;
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), 0);
    ck_assert_int_eq(cs_mesh_find(&l.mesh, "pp"), l.mesh.ndims - 1);
    ck_assert_int_eq(l.group[CS_GROUP_PP].size, 4);
    ck_assert_int_eq(l.group[CS_GROUP_DP_SHARD].size, 4);
    ck_assert_int_eq(l.group[CS_GROUP_PP].topo.nodes, 4); /* stride 8: a node apart */
    ck_assert_double_eq_tol(l.tokens_per_step, 4.0 * s.m.seq_len * s.t.micro_batch * s.t.grad_accum, 1e-6);
    s.t.pipeline_parallel = 3; /* does not divide 16 */
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), CS_EINVAL);
}
END_TEST

/* Every stage is kept (review finding 3): limit.h's pipeline_parallel
 * range is the stages pipeline.c lists, and a P past it (a planner's, not
 * read through the table) is refused, not run on its first 1024 stages. */
START_TEST(stages_within_the_limit)
{
    ck_assert_int_eq(cs_limit_of(CS_LIMIT_PIPELINE_PARALLEL)->hi, CS_PIPELINE_STAGES_MAX);
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama3-8b", CS_STRAT_DDP, 8);
    s.m.layers = 4 * CS_PIPELINE_STAGES_MAX;
    s.t.grad_accum = 4 * CS_PIPELINE_STAGES_MAX;
    cs_diag d;
    s.t.pipeline_parallel = CS_PIPELINE_STAGES_MAX;
    cs_test_diag_ok(cs_pipeline_check(&s.m, &s.t, &d), &d, "check at the limit");
    s.t.pipeline_parallel = CS_PIPELINE_STAGES_MAX + 1;
    ck_assert_int_eq(cs_pipeline_check(&s.m, &s.t, &d), CS_EINVAL);
}
END_TEST

/* zero_bubble's W on 2 stages at tp T, a generic 7B model (its kernels
 * sized by layer_params, which the tp rank's model divides by T). */
static void zb_timeline(int T, const char *schedule, cs_pp_timeline *tl)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama3-8b", CS_STRAT_DDP, 8);
    cs_diag d;
    cs_test_diag_ok(cs_model_generic(7e9, &s.m, &d), &d, "generic model");
    s.t.tensor_parallel = T;
    s.t.pipeline_parallel = 2;
    s.t.grad_accum = 4;
    s.t.pipeline_schedule = schedule_index(schedule);
    cs_layout l;
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), 0);
    cs_iteration it;
    cs_test_diag_ok(cs_pipeline_run_timeline(&s.m, &s.t, &l, NULL, &it, NULL, tl, &d), &d,
                    "pipeline run");
}

/* W is the rank's share of the wgrad GEMMs, split over T once (review
 * finding 4: priced on the tp rank's model it was split twice, W
 * shrinking ~T^1.5): W's FLOPs x T constant; B + W is 1F1B's B. */
START_TEST(zero_bubble_w_split_once)
{
    cs_pp_timeline tl1, tl2, tl4, ofob;
    zb_timeline(1, "zero_bubble", &tl1);
    zb_timeline(2, "zero_bubble", &tl2);
    zb_timeline(4, "zero_bubble", &tl4);
    zb_timeline(2, "1f1b", &ofob);
    double w1 = tl1.w_flops[0];
    ck_assert(w1 > 0);
    ck_assert_double_eq_tol(2 * tl2.w_flops[0], w1, 0.01 * w1);
    ck_assert_double_eq_tol(4 * tl4.w_flops[0], w1, 0.01 * w1);
    ck_assert_double_eq_tol(tl2.b_flops[0] + tl2.w_flops[0], ofob.b_flops[0], 1e-9 * ofob.b_flops[0]);
    /* W's share of the backward's time is the same order at every T */
    double f1 = 0, f4 = 0, bw1 = 0, bw4 = 0;
    for (int i = 0; i < tl1.nslices[0]; i++) {
        const cs_pp_slice *x = &tl1.slice[tl1.first[0] + i];
        if (x->pass == CS_PP_W) f1 += x->end_s - x->start_s;
        if (x->pass != CS_PP_F) bw1 += x->end_s - x->start_s;
    }
    for (int i = 0; i < tl4.nslices[0]; i++) {
        const cs_pp_slice *x = &tl4.slice[tl4.first[0] + i];
        if (x->pass == CS_PP_W) f4 += x->end_s - x->start_s;
        if (x->pass != CS_PP_F) bw4 += x->end_s - x->start_s;
    }
    if (f4 / bw4 < 0.5 * (f1 / bw1))
        ck_abort_msg("W / (B + W): %.3f at T = 4 vs %.3f at T = 1", f4 / bw4, f1 / bw1);
    cs_pp_timeline_free(&tl1), cs_pp_timeline_free(&tl2), cs_pp_timeline_free(&tl4);
    cs_pp_timeline_free(&ofob);
}
END_TEST

/* A stage's held activations are its own layers' (review finding 5):
 * with every-2nd-layer checkpointing on 4 stages of gpt2's 12 layers
 * stage 0 (layers 0-2) keeps layer 1's input only, stage 1 (3-5) layers 3
 * and 5's; under GPipe (m held everywhere) stage 0's activations exceed
 * stage 1's by (m - 1) x the difference of their layers' kept bytes (by
 * local indices both stages looked alike). */
START_TEST(stage_memory_global_layers)
{
    enum { P = 4, m = 4 };
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "gpt2-124m", CS_STRAT_DDP, P);
    s.t.pipeline_parallel = P;
    s.t.grad_accum = m;
    s.t.checkpointing = CS_CKPT_SELECTIVE;
    s.t.selective_ac = 2;
    s.t.pipeline_schedule = schedule_index("gpipe");
    cs_layout l;
    cs_diag d;
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), 0);
    cs_iteration it;
    cs_pp_memory *mem = malloc(sizeof *mem);
    cs_test_diag_ok(cs_pipeline_run(&s.m, &s.t, &l, NULL, &it, mem, &d), &d, "pipeline run");
    ck_assert_int_eq(mem->held[0], m);
    ck_assert_int_eq(mem->held[1], m);
    cs_model sm = s.m;
    sm.layers = 3;
    double k0 = 0, k1 = 0;
    for (int i = 0; i < 3; i++)
        k0 += cs_checkpoint_kept_bytes(&sm, &s.t, i), k1 += cs_checkpoint_kept_bytes(&sm, &s.t, 3 + i);
    ck_assert(k0 > k1);
    double want = (m - 1) * (k0 - k1);
    double got = mem->stage[0].activations_bytes - mem->stage[1].activations_bytes;
    ck_assert_double_eq_tol(got, want, 1e-6 * want);
    free(mem);
}
END_TEST

/* The gradient sync's task in the schedule JSON names the dtype its bytes
 * are sized by (review finding 8): fp32 gradients reduced under bf16
 * compute were labelled bf16 (the transfers' dtype). */
START_TEST(schedule_sync_dtype_is_the_wire)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama3-8b", CS_STRAT_DDP, 8);
    s.t.pipeline_parallel = 2;
    s.t.grad_accum = 4;
    s.t.param_dtype = CS_DTYPE_BF16;
    s.t.grad_reduce_dtype = CS_DTYPE_FP32;
    cs_layout l;
    cs_iteration it;
    cs_pp_timeline tl;
    run_timeline(&s, &l, &it, &tl);
    ck_assert_int_eq(tl.sync_dtype, cs_training_bucket_wire_dtype(&s.t));
    double params = cs_pipeline_stage_params(&s.m, 2, 1, 0);
    ck_assert_double_eq_tol(tl.sync_bytes[0], params * 4, 1e-9 * params);
    cs_buf b = {0};
    cs_schedule_write_pipeline(&tl, &b);
    char want[96];
    snprintf(want, sizeof want, "\"size_bytes\": %.0f, \"dtype\": \"fp32\"", tl.sync_bytes[0]);
    if (!strstr(b.data, want)) ck_abort_msg("no '%s' in the schedule", want);
    cs_buf_free(&b);
    cs_pp_timeline_free(&tl);
}
END_TEST

/* The sharded strategies' all-gather is drawn before the stage's first
 * pass (review finding 11: it was inside the closing "gradient sync"
 * slice): on FSDP x 2 stages stage 0's track opens with an "all_gather
 * parameters" slice at 0 of gather_s, its first forward starts at the
 * end of the longest stage's gather, and the sync slice lasts sync_s
 * alone. */
START_TEST(trace_gather_before_first_pass)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama3-8b", CS_STRAT_FSDP_FULL_SHARD, 16);
    s.t.pipeline_parallel = 2;
    s.t.grad_accum = 4;
    cs_layout l;
    cs_iteration it;
    cs_pp_timeline tl;
    run_timeline(&s, &l, &it, &tl);
    ck_assert(tl.gather_s[0] > 1e-6 && tl.sync_s[0] > 0);
    cs_buf b = {0};
    cs_trace_begin(&b);
    cs_trace_add_pipeline(&b, 0, "pp", &tl);
    cs_trace_end(&b);
    const char *g = strstr(b.data, "\"tid\": 0, \"name\": \"all_gather parameters\", \"ts\": 0.000,");
    if (!g) ck_abort_msg("no all_gather slice at 0 on stage 0");
    const char *f = strstr(b.data, "\"tid\": 0, \"name\": \"F 0\", \"ts\": ");
    ck_assert_ptr_nonnull(f);
    double ts = strtod(f + strlen("\"tid\": 0, \"name\": \"F 0\", \"ts\": "), NULL) * 1e-6;
    double gmax = tl.gather_s[0] > tl.gather_s[1] ? tl.gather_s[0] : tl.gather_s[1];
    ck_assert_double_eq_tol(ts, gmax, 2e-9);
    const char *y = strstr(b.data, "\"tid\": 0, \"name\": \"gradient sync (reduce_scatter)\"");
    ck_assert_ptr_nonnull(y);
    const char *dur = strstr(y, "\"dur\": ");
    double ys = strtod(dur + strlen("\"dur\": "), NULL) * 1e-6;
    ck_assert_double_eq_tol(ys, tl.sync_s[0], 2e-9);
    cs_buf_free(&b);
    cs_pp_timeline_free(&tl);
}
END_TEST

/* pp runs of llama3-8b on 16 ranks, 4 stages, 8 micro-batches. */
static void pp_iteration(cs_strategy strategy, cs_ckpt ckpt, cs_iteration *it)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama3-8b", strategy, 16);
    s.t.pipeline_parallel = 4;
    s.t.grad_accum = 8;
    s.t.checkpointing = ckpt;
    cs_layout l;
    cs_diag d;
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), 0);
    cs_test_diag_ok(cs_pipeline_run(&s.m, &s.t, &l, NULL, it, NULL, &d), &d, "pipeline run");
}

/* The iteration's recompute and all-gather (review finding 6: recompute_s
 * was 0 under full checkpointing while HFU counted it; FSDP's all-gather
 * was added to the reduce-scatter's exposed time): full checkpointing
 * adds recompute_s to the slowest stage's compute over none; FSDP's
 * all-gather has its own exposed time, the reduce-scatter's excludes it. */
START_TEST(iteration_recompute_and_gather)
{
    cs_iteration none, full, fsdp;
    pp_iteration(CS_STRAT_DDP, CS_CKPT_NONE, &none);
    pp_iteration(CS_STRAT_DDP, CS_CKPT_FULL, &full);
    ck_assert(none.recompute_s == 0);
    ck_assert(full.recompute_s > 0);
    ck_assert_double_eq_tol(full.compute_s - none.compute_s, full.recompute_s, 1e-9);
    pp_iteration(CS_STRAT_FSDP_FULL_SHARD, CS_CKPT_NONE, &fsdp);
    double ag = fsdp.exposed_by_op_s[CS_OP_ALL_GATHER], rs = fsdp.exposed_by_op_s[CS_OP_REDUCE_SCATTER];
    ck_assert(ag > 0 && rs > 0);
    ck_assert_double_eq_tol(ag + rs + fsdp.exposed_by_op_s[CS_OP_SEND_RECV], fsdp.exposed_comm_s, 1e-12);
}
END_TEST

/* A pp run of llama3-8b on `ranks` ranks of a DGX H100 cluster (8 a
 * node), P stages, m micro-batches, row `schedule` (NULL: the default),
 * no checkpointing; its timeline into tl when not NULL. */
static void pp_run_timeline(cs_strategy strategy, int ranks, int P, int m, const char *schedule,
                            cs_test_setup *s, cs_iteration *it, cs_pp_timeline *tl)
{
    cs_test_setup_make(s, "dgx-h100", "llama3-8b", strategy, ranks);
    s->t.pipeline_parallel = P;
    s->t.grad_accum = m;
    s->t.checkpointing = CS_CKPT_NONE;
    if (schedule) {
        const cs_pp_schedule_row *r = cs_pp_schedule_find(schedule);
        ck_assert_ptr_nonnull(r);
        s->t.pipeline_schedule = (int)(r - cs_pp_schedule_row_at(0));
        s->t.virtual_stages = r->interleaved ? 2 : 1;
    }
    cs_layout l;
    cs_diag d;
    ck_assert_int_eq(cs_layout_build(&s->m, &s->t, &s->topo, &l, &d), 0);
    cs_test_diag_ok(cs_pipeline_run_timeline(&s->m, &s->t, &l, NULL, it, NULL, tl, &d), &d,
                    "pipeline run");
}

static void pp_run(cs_strategy strategy, int ranks, int P, int m, const char *schedule,
                   cs_test_setup *s, cs_iteration *it)
{
    pp_run_timeline(strategy, ranks, P, m, schedule, s, it, NULL);
}

/* The bytes a stage's rank sends (the issue: every op printed 0 under
 * PP), counted by hand on 2 stages, DDP on 16 ranks (8 per stage: dp 8),
 * 4 micro-batches, no TP: each stage sends one transfer a micro-batch
 * (stage 0 its forwards' outputs, stage 1 its backwards' input
 * gradients), b x s x h in bf16 each, so send_recv = m x act x 1
 * direction on either stage; the all-reduce of the reported stage's
 * gradients, 2 (n - 1) / n of them in the wire's dtype (one of the two
 * stages' counts); nothing else. Interleaved, a stage sends more. */
START_TEST(iteration_wire_bytes_hand_count)
{
    cs_test_setup s;
    cs_iteration it;
    const int m = 4;
    pp_run(CS_STRAT_DDP, 16, 2, m, NULL, &s, &it);
    double act = (double)s.t.micro_batch * s.m.seq_len * s.m.hidden * cs_dtype_size(s.t.param_dtype);
    ck_assert_double_eq_tol(it.wire_bytes_by_op[CS_OP_SEND_RECV], m * act * 1, 1e-6);
    double wire = cs_dtype_size(cs_training_bucket_wire_dtype(&s.t)) * 2.0 * 7 / 8;
    double ar0 = cs_pipeline_stage_params(&s.m, 2, 1, 0) * wire,
           ar1 = cs_pipeline_stage_params(&s.m, 2, 1, 1) * wire;
    double ar = it.wire_bytes_by_op[CS_OP_ALL_REDUCE];
    ck_assert_msg(ar0 != ar1 && (fabs(ar - ar0) < 1e-6 * ar0 || fabs(ar - ar1) < 1e-6 * ar1),
                  "all_reduce %.0f, stages %.0f %.0f", ar, ar0, ar1);
    for (int op = 0; op < CS_OP_COUNT; op++)
        if (op != CS_OP_SEND_RECV && op != CS_OP_ALL_REDUCE)
            ck_assert_msg(it.wire_bytes_by_op[op] == 0, "%s", cs_op_name((cs_op)op));
    /* interleaved, 2 chunks a stage: either stage sends 3 transfers a
     * micro-batch (stage 0: virtual stage 0 forward only, 2 both ways;
     * stage 1: 1 both ways, 3 backward only) */
    pp_run(CS_STRAT_DDP, 16, 2, m, "interleaved_1f1b", &s, &it);
    ck_assert_double_eq_tol(it.wire_bytes_by_op[CS_OP_SEND_RECV], m * act * 3, 1e-6);
}
END_TEST

/* The parts add up under PP (the issue: the bubble was exposed
 * send_recv): iteration = compute + exposed communication + the
 * pipeline bubble + the CPU's wait + side copies (iteration.h), exposed
 * communication is its ops' (the bubble in none), every schedule row,
 * DDP and FSDP; the bubble is there (m = 8 on 4 stages) and the
 * breakdown (kernels ... bubble) adds up too. */
START_TEST(iteration_parts_add_up)
{
    const cs_strategy st[] = {CS_STRAT_DDP, CS_STRAT_FSDP_FULL_SHARD};
    for (int i = 0; i < cs_pp_schedule_count(); i++)
        for (size_t k = 0; k < sizeof st / sizeof *st; k++) {
            cs_test_setup s;
            cs_iteration it;
            const char *name = cs_pp_schedule_row_at(i)->name;
            pp_run(st[k], 32, 4, 8, name, &s, &it);
            double T = it.iteration_time_s, tol = 1e-9 * T;
            ck_assert_msg(it.pipeline_bubble_s > 0.01 * T, "%s: bubble %g", name,
                          it.pipeline_bubble_s);
            ck_assert_msg(fabs(it.compute_s + it.exposed_comm_s + it.pipeline_bubble_s +
                               it.cpu_wait_s + it.side_copies_s - T) <= tol,
                          "%s: parts do not add up to %.9f", name, T);
            double ops = 0;
            for (int op = 0; op < CS_OP_COUNT; op++) ops += it.exposed_by_op_s[op];
            ck_assert_double_eq_tol(ops, it.exposed_comm_s, tol);
            cs_breakdown b;
            cs_iteration_breakdown(&it, &b);
            double sum = b.kernels_s + b.recompute_s + b.copies_s + b.optimizer_s + b.cpu_wait_s +
                         b.pipeline_bubble_s + ops;
            ck_assert_double_eq_tol(sum, T, tol);
            ck_assert_double_eq(b.pipeline_bubble_s, it.pipeline_bubble_s);
        }
}
END_TEST

/* Exposed send_recv is the reported stage's time on transfers (the
 * issue: it was the whole idle time), so it follows the transfer's price:
 * 2 stages, 1F1B, 8 micro-batches, each stage sending one transfer a
 * micro-batch, on one node (NVLink) and on two (the NIC path): either
 * stage is held for its m sends but the last (stage 0's ends in a B
 * that sends none; stage 1's last B sends the last), and waits on at
 * most one incoming transfer a pass, so m - 1 <= exposed / p2p <= 2 m +
 * 1 (a pass's wait on its input is at most p2p); across nodes, where a
 * transfer costs more, it is a larger share of the iteration. */
START_TEST(exposed_send_recv_follows_the_link)
{
    const int m = 8, ranks[2] = {8, 16};
    double share[2];
    for (int k = 0; k < 2; k++) {
        cs_test_setup s;
        cs_iteration it;
        cs_pp_timeline tl;
        pp_run_timeline(CS_STRAT_DDP, ranks[k], 2, m, NULL, &s, &it, &tl);
        const cs_pp_slice *f0 = &tl.slice[tl.first[0]];
        ck_assert(f0->pass == CS_PP_F && f0->send_s > 0);
        double p2p = f0->send_s, x = it.exposed_by_op_s[CS_OP_SEND_RECV];
        ck_assert_msg(x >= (m - 1) * p2p - 1e-12 && x <= (2 * m + 1) * p2p + 1e-12,
                      "%d ranks: exposed send_recv %g, transfer %g", ranks[k], x, p2p);
        share[k] = x / it.iteration_time_s;
        cs_pp_timeline_free(&tl);
    }
    ck_assert_msg(share[1] > 1.5 * share[0], "network %g, nvlink %g", share[1], share[0]);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("pipeline");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bubble_matches_ideal_every_row);
    tcase_add_test(tc, wrong_ideal_caught);
    tcase_add_test(tc, activations_held_per_stage);
    tcase_add_test(tc, layer_split);
    tcase_add_test(tc, first_stage_memory_korthikanti_eq5);
    tcase_add_test(tc, zero_bubble_peak_matches_1f1b);
    tcase_add_test(tc, stage_buckets_are_the_stages);
    tcase_add_test(tc, stage_forward_has_tp_collectives);
    tcase_add_test(tc, layout_pp_outermost);
    tcase_add_test(tc, stage_passes_priced_on_the_whole_model);
    tcase_add_test(tc, stages_within_the_limit);
    tcase_add_test(tc, zero_bubble_w_split_once);
    tcase_add_test(tc, stage_memory_global_layers);
    tcase_add_test(tc, schedule_sync_dtype_is_the_wire);
    tcase_add_test(tc, trace_gather_before_first_pass);
    tcase_add_test(tc, iteration_recompute_and_gather);
    tcase_add_test(tc, iteration_wire_bytes_hand_count);
    tcase_add_test(tc, iteration_parts_add_up);
    tcase_add_test(tc, exposed_send_recv_follows_the_link);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return cs_test_run(suite()); }
