/* SPDX-License-Identifier: MIT */
/*
 * test-tensor.c - tensor parallelism (train/tensor.h): activations per
 * layer against Korthikanti et al. 2022 Table 2's general rows for their
 * 22B model (with a deliberately wrong split, all of it / T, that the
 * comparison must catch); the compute model's split conserves GEMM work
 * and divides the vocabulary; the layout's tp dimension and its checks;
 * the graph's TP collectives (count, op, group, size) with and without
 * sequence parallelism; T = 1 is the identity.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "train/compute.h"
#include "train/layout.h"
#include "train/tensor.h"
#include "train/workload.h"
#include "testutil.h"

/* Korthikanti Table 3's 22B: a 64, h 6144, 48 layers, s 2048, v 51200. */
static cs_model model_22b(void)
{
    cs_model m = {.layers = 48, .hidden = 6144, .heads = 64, .kv_heads = 64, .ffn_hidden = 4 * 6144,
                  .seq_len = 2048, .vocab = 51200, .tied_embeddings = 1, .biases = 1,
                  .learned_positions = 1, .dropout = 0.1};
    snprintf(m.name, sizeof m.name, "22b");
    cs_diag d;
    ck_assert_int_eq(cs_model_derive(&m, &d), 0);
    return m;
}

static cs_training tp_training(int tp, int sp, cs_ckpt ck)
{
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_DDP);
    t.tensor_parallel = tp;
    t.sequence_parallel = sp;
    t.checkpointing = ck;
    t.flash_attention = 0;
    return t;
}

/* Table 2, bytes per layer: sbh x (row), a s / h = 64 x 2048 / 6144. */
static double table2(int row, double t)
{
    const double as_h = 64.0 * 2048 / 6144;
    switch (row) {
    case 0: return 10 + 24 / t + 5 * as_h / t;  /* tensor parallel (baseline) */
    case 1: return 34 / t + 5 * as_h / t;       /* tensor + sequence parallel */
    case 2: return 10 + 24 / t;                  /* TP + selective recompute */
    case 3: return 34 / t;                       /* TP + SP + selective */
    default: return 2;                           /* full recompute (no SP) */
    }
}

START_TEST(activations_match_korthikanti_table2)
{
    cs_model m = model_22b();
    const int b = 4;
    const double sbh = 2048.0 * b * 6144;
    static const struct { int sp; cs_ckpt mode; } rows[] = {
        {0, CS_CKPT_NONE}, {1, CS_CKPT_NONE}, {0, CS_CKPT_SELECTIVE}, {1, CS_CKPT_SELECTIVE},
        {0, CS_CKPT_FULL}};
    for (int t = 1; t <= 8; t *= 2)
        for (int r = 0; r < 5; r++) {
            cs_training tr = tp_training(t, rows[r].sp, CS_CKPT_NONE);
            double got = cs_tensor_activation_bytes_per_layer(&m, &tr, b, rows[r].mode);
            ck_assert_double_eq_tol(got / sbh, table2(r, t), 1e-9);
        }
    /* a wrong model (every byte split T ways without SP) is caught */
    cs_training tr = tp_training(8, 0, CS_CKPT_NONE);
    double wrong = cs_model_activation_bytes_per_layer(&m, b, CS_CKPT_NONE) / 8;
    ck_assert(fabs(wrong / sbh - table2(0, 8)) > 1.0);
    ck_assert(fabs(cs_tensor_activation_bytes_per_layer(&m, &tr, b, CS_CKPT_NONE) / sbh -
                   table2(0, 8)) < 1e-9);
}
END_TEST

START_TEST(gqa_kv_heads_replicated_below_t)
{
    cs_model m = cs_test_model("llama3-70b"); /* 64 heads, 8 kv heads */
    cs_training t8 = tp_training(8, 0, CS_CKPT_NONE), t16 = tp_training(16, 0, CS_CKPT_NONE);
    double sb = (double)m.seq_len, d = m.hidden / m.heads;
    double a8 = cs_tensor_activation_bytes_per_layer(&m, &t8, 1, CS_CKPT_SELECTIVE);
    double a16 = cs_tensor_activation_bytes_per_layer(&m, &t16, 1, CS_CKPT_SELECTIVE);
    double whole = cs_model_activation_bytes_per_layer(&m, 1, CS_CKPT_SELECTIVE);
    double rep = 10 * sb * m.hidden, kv = 4 * sb * d * m.kv_heads;
    ck_assert_double_eq_tol(a8, rep + (whole - rep - kv) / 8 + kv / 8, 1);
    /* T 16 > 8 kv heads: one head's K and V per rank, not half of one */
    ck_assert_double_eq_tol(a16, rep + (whole - rep - kv) / 16 + 4 * sb * d, 1);
    cs_diag dg;
    cs_training t3 = tp_training(3, -1, CS_CKPT_NONE);
    ck_assert_int_eq(cs_tensor_check(&m, &t3, &dg), CS_EINVAL);
    ck_assert_int_eq(cs_tensor_check(&m, &t16, &dg), 0);
    cs_training ta = tp_training(8, 0, CS_CKPT_NONE);
    ta.async_tp = 1;
    ck_assert_int_eq(cs_tensor_check(&m, &ta, &dg), CS_EINVAL); /* async needs SP */
}
END_TEST

/* GEMM FLOPs of a layer's passes and the head's. */
static void gemm_flops(const cs_model *m, const cs_training *t, const cs_cluster *c, double *layer,
                       double *head)
{
    size_t n = cs_compute_kernels(m, t, c, NULL, 0);
    cs_kernel *k = calloc(n, sizeof *k);
    cs_compute_kernels(m, t, c, k, n);
    *layer = *head = 0;
    for (size_t i = 0; i < n; i++) {
        if (k[i].cls == CS_KCLASS_MEMORY) continue;
        if (k[i].pass >= CS_KPASS_HEAD_FORWARD) *head += k[i].flops;
        else *layer += k[i].flops;
    }
    free(k);
}

START_TEST(split_conserves_gemm_work)
{
    cs_cluster c = cs_test_cluster("dgx-h100");
    const char *models[] = {"gpt3-13b", "llama3-70b"};
    for (int i = 0; i < 2; i++) {
        cs_model m = cs_test_model(models[i]);
        cs_training t1 = tp_training(1, -1, CS_CKPT_NONE);
        t1.flash_attention = 1;
        double l1, h1;
        gemm_flops(&m, &t1, &c, &l1, &h1);
        for (int T = 2; T <= 8; T *= 2) {
            cs_training t = t1;
            t.tensor_parallel = T;
            double l, h;
            gemm_flops(&m, &t, &c, &l, &h);
            double exact = l1 / T;
            if (m.kv_heads < T) continue; /* replicated kv heads add work */
            ck_assert_double_eq_tol(l, exact, exact * 1e-12);
            ck_assert_double_eq_tol(h, h1 / T, h1 / T * 1e-12);
            ck_assert(fabs(l - l1) > 0.1 * l1); /* it does split */
        }
        /* sequence parallelism moves the norms' work, not the GEMMs' */
        cs_compute a, b;
        cs_training tsp = t1, tno = t1;
        tsp.tensor_parallel = tno.tensor_parallel = 4;
        tsp.sequence_parallel = 1;
        tno.sequence_parallel = 0;
        cs_diag d;
        ck_assert_int_eq(cs_compute_price(&m, &tsp, &c, &a, &d), 0);
        ck_assert_int_eq(cs_compute_price(&m, &tno, &c, &b, &d), 0);
        ck_assert(a.pass[CS_KPASS_FORWARD].time_s < b.pass[CS_KPASS_FORWARD].time_s);
        ck_assert_double_eq_tol(a.pass[CS_KPASS_FORWARD].flops, b.pass[CS_KPASS_FORWARD].flops, 1);
    }
}
END_TEST

START_TEST(identity_at_t1)
{
    cs_model m = cs_test_model("llama2-7b");
    cs_training t = tp_training(1, -1, CS_CKPT_NONE), t0 = t;
    cs_model buf;
    ck_assert_ptr_eq(cs_tensor_rank_model(&m, &t, &buf), &m);
    ck_assert_int_eq(cs_tensor_sequence_parallel(&t), 0);
    ck_assert_double_eq(cs_tensor_activation_bytes_per_layer(&m, &t, 2, CS_CKPT_NONE),
                        cs_model_activation_bytes_per_layer(&m, 2, CS_CKPT_NONE));
    t0.tensor_parallel = 2;
    ck_assert_int_eq(cs_tensor_sequence_parallel(&t0), 1); /* the default with T > 1 */
    const cs_model *r = cs_tensor_rank_model(&m, &t0, &buf);
    ck_assert_ptr_eq(r, &buf);
    ck_assert_double_eq_tol(r->params, m.params / 2, 1);
    ck_assert_int_eq(r->vocab, 16000);
}
END_TEST

START_TEST(layout_tp_innermost)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama3-8b", CS_STRAT_FSDP_FULL_SHARD, 32);
    s.t.tensor_parallel = 8;
    cs_layout l;
    cs_diag d;
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), 0);
    ck_assert_int_eq(l.group[CS_GROUP_TP].size, 8);
    ck_assert_int_eq(l.group[CS_GROUP_DP_SHARD].size, 4);
    ck_assert_int_eq(l.group[CS_GROUP_TP].topo.nodes, 1);   /* inside one node */
    ck_assert_int_eq(l.group[CS_GROUP_DP_SHARD].topo.nodes, 4); /* one member per node */
    ck_assert_double_eq_tol(l.params_per_rank, s.m.params / 8, 1);
    ck_assert_double_eq_tol(l.tokens_per_step, 4.0 * s.m.seq_len * s.t.micro_batch, 1e-6);
    ck_assert_int_eq(l.params_degree, 4);
    s.t.tensor_parallel = 16; /* spans two nodes: priced on the network */
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), 0);
    ck_assert_int_eq(l.group[CS_GROUP_TP].topo.nodes, 2);
    s.t.tensor_parallel = 64; /* does not divide 32 ranks */
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), CS_EINVAL);
    s.t.strategy = CS_STRAT_FSDP_HYBRID_SHARD; /* one node's dp ranks: 8 / T */
    s.t.tensor_parallel = 4;
    ck_assert_int_eq(cs_layout_build(&s.m, &s.t, &s.topo, &l, &d), 0);
    ck_assert_int_eq(l.group[CS_GROUP_DP_SHARD].size, 2);
    ck_assert_int_eq(l.group[CS_GROUP_DP_REPLICATE].size, 4);
}
END_TEST

/* The TP collectives of a graph: runs of op on the tp group. */
static double tp_runs(const cs_workload *w, cs_op op, double *size)
{
    double n = 0;
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *t = cs_workload_task(w, i);
        if (t->kind != CS_TASK_COLLECTIVE || t->group != CS_GROUP_TP || t->op != op) continue;
        ck_assert_int_eq(t->stream, CS_STREAM_TP);
        if (t->layer >= 0) *size = t->size_bytes;
        n += t->count;
    }
    return n;
}

START_TEST(graph_tp_collectives)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "llama2-7b", CS_STRAT_FSDP_FULL_SHARD, 8);
    s.t.tensor_parallel = 4;
    s.t.checkpointing = CS_CKPT_NONE;
    const int L = s.m.layers;
    const double act = (double)s.m.seq_len * s.m.hidden * cs_dtype_size(s.t.param_dtype);
    cs_diag d;
    cs_workload *w;
    double size = 0;
    /* SP: per layer forward AG 2 + RS 2, backward AG 4 + RS 2; the head:
     * RS (embedding) + AG forward, RS + AG backward */
    s.t.sequence_parallel = 1;
    ck_assert_int_eq(cs_workload_build(&s.m, &s.t, &s.topo, &w, &d), 0);
    ck_assert_double_eq(tp_runs(w, CS_OP_ALL_GATHER, &size), 6.0 * L + 2);
    ck_assert_double_eq_tol(size, act, 1e-6);
    ck_assert_double_eq(tp_runs(w, CS_OP_REDUCE_SCATTER, &size), 4.0 * L + 2);
    ck_assert_double_eq(tp_runs(w, CS_OP_ALL_REDUCE, &size), 3); /* the loss */
    /* FSDP gathers and reduces over the data-parallel ranks, not the world */
    for (size_t i = 0; i < cs_workload_count(w); i++)
        if (cs_workload_task(w, i)->kind == CS_TASK_COLLECTIVE)
            ck_assert_int_ne(cs_workload_task(w, i)->group, CS_GROUP_WORLD);
    cs_workload_free(w);
    /* no SP: 2 all-reduces per layer each way, + embedding, head bwd, loss x 3 */
    s.t.sequence_parallel = 0;
    ck_assert_int_eq(cs_workload_build(&s.m, &s.t, &s.topo, &w, &d), 0);
    ck_assert_double_eq(tp_runs(w, CS_OP_ALL_REDUCE, &size), 4.0 * L + 5);
    ck_assert_double_eq(tp_runs(w, CS_OP_ALL_GATHER, &size), 0);
    cs_workload_free(w);
    /* T = 1: none */
    s.t.tensor_parallel = 1;
    ck_assert_int_eq(cs_workload_build(&s.m, &s.t, &s.topo, &w, &d), 0);
    ck_assert_double_eq(tp_runs(w, CS_OP_ALL_REDUCE, &size), 0);
    cs_workload_free(w);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tensor");
    TCase *tc = tcase_create("tensor");
    tcase_add_test(tc, activations_match_korthikanti_table2);
    tcase_add_test(tc, gqa_kv_heads_replicated_below_t);
    tcase_add_test(tc, split_conserves_gemm_work);
    tcase_add_test(tc, identity_at_t1);
    tcase_add_test(tc, layout_tp_innermost);
    tcase_add_test(tc, graph_tp_collectives);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return cs_test_run(suite()); }
