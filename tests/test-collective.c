/* SPDX-License-Identifier: MIT */
/*
 * test-collective.c - the collective module against NCCL's published model
 * and the properties a user relies on: busbw limits, the inter-node
 * bottleneck, tuner choices, forced choices, and heterogeneity that only
 * the DES sees.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "coll/collective.h"
#include "config/config.h"
#include "config/presets.h"
#include <stdio.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

static cs_topology topo(const char *preset, int ranks)
{
    cs_cluster c;
    cs_diag d;
    ck_assert_msg(cs_config_cluster(preset, &c, &d) == 0, "%s", d.message);
    cs_topology t;
    ck_assert_msg(cs_topology_build(&c, ranks, 0, &t, &d) == 0, "%s", d.message);
    return t;
}

static cs_coll_result run(const cs_topology *t, cs_op op, double bytes, int a, int p,
                          cs_engine_kind e)
{
    cs_coll_request rq = {op, bytes, a, p, e};
    cs_coll_result r;
    cs_diag d;
    ck_assert_msg(cs_collective_run(t, &rq, &r, &d) == 0, "%s", d.message);
    return r;
}

START_TEST(busbw_factors_are_nccl_tests)
{
    ck_assert_double_eq_tol(cs_op_busbw_factor(CS_OP_ALL_REDUCE, 8), 14.0 / 8, 1e-12);
    ck_assert_double_eq_tol(cs_op_busbw_factor(CS_OP_ALL_GATHER, 8), 7.0 / 8, 1e-12);
    ck_assert_double_eq_tol(cs_op_busbw_factor(CS_OP_REDUCE_SCATTER, 4), 3.0 / 4, 1e-12);
    ck_assert_double_eq_tol(cs_op_busbw_factor(CS_OP_BROADCAST, 8), 1.0, 1e-12);
    ck_assert_double_eq_tol(cs_op_busbw_factor(CS_OP_REDUCE, 8), 1.0, 1e-12);
}
END_TEST

START_TEST(ring_busbw_approaches_effective_nvlink)
{
    /* H100: 18 NVLink4 links x 20.6 GB/s usable (NCCL SM90_NVLINK_BW) */
    cs_topology t = topo("dgx-h100", 8);
    cs_coll_result r = run(&t, CS_OP_ALL_REDUCE, 16 * GiB, CS_ALGO_RING, CS_PROTO_SIMPLE,
                           CS_ENGINE_ANALYTIC);
    ck_assert_double_eq_tol(r.busbw_Bps / 1e9, 450 * 0.824, 0.005 * 370.8);
    ck_assert(r.busbw_Bps < 450e9 * 0.824);
}
END_TEST

START_TEST(internode_bandwidth_bottlenecks_multinode_rings)
{
    /* DGX-A100: NVLink 240 GB/s usable, 8 x 200 Gb/s HDR x 0.96 = 192 GB/s */
    cs_topology t = topo("dgx-a100", 32);
    ck_assert_int_eq(t.nodes, 4);
    cs_coll_result r = run(&t, CS_OP_ALL_REDUCE, 16 * GiB, CS_ALGO_RING, CS_PROTO_SIMPLE,
                           CS_ENGINE_ANALYTIC);
    ck_assert_double_eq_tol(r.busbw_Bps / 1e9, 192.0, 0.01 * 192);
    cs_topology one = topo("dgx-a100", 8);
    cs_coll_result r1 = run(&one, CS_OP_ALL_REDUCE, 16 * GiB, CS_ALGO_RING, CS_PROTO_SIMPLE,
                            CS_ENGINE_ANALYTIC);
    ck_assert(r1.busbw_Bps > r.busbw_Bps * 1.2);
}
END_TEST

START_TEST(ring_latency_is_nccl_formula_single_node)
{
    /* 8 ranks, all_reduce, ring/simple, 8 bytes: baseLat 8.4 + 14 x 3.4 us */
    cs_topology t = topo("dgx-h100", 8);
    double tm;
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_REDUCE, 8, CS_ALGO_RING, CS_PROTO_SIMPLE, &tm), 0);
    ck_assert_double_eq_tol(tm * 1e6, 8.4 + 14 * 3.4, 0.01);
    /* all_gather: 7 steps */
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_GATHER, 64, CS_ALGO_RING, CS_PROTO_SIMPLE, &tm), 0);
    ck_assert_double_eq_tol(tm * 1e6, 8.4 + 7 * 3.4, 0.01);
}
END_TEST

START_TEST(ring_crossings_match_nccl_for_many_nodes)
{
    /* NCCL charges 2 x nodes network hops for all_reduce; with 8 ranks per
     * node the critical path crosses ceil(2(N-1)/8) = 2 x nodes boundaries */
    cs_topology t = topo("dgx-h100", 64);
    double tm;
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_REDUCE, 8, CS_ALGO_RING, CS_PROTO_LL, &tm), 0);
    double intra = fmax(0.6, 1.0), inter = 2.7; /* LL: max(hwLat, net overhead 1 us) */
    double expect = 6.6 + (126 - 16) * intra + 16 * inter;
    ck_assert_double_eq_tol(tm * 1e6, expect, 0.05);
}
END_TEST

START_TEST(tuner_picks_ll_small_simple_large)
{
    cs_topology t = topo("dgx-h100", 8);
    cs_coll_result s = run(&t, CS_OP_ALL_REDUCE, 8, CS_CHOICE_AUTO, CS_CHOICE_AUTO, CS_ENGINE_ANALYTIC);
    ck_assert_int_eq(s.proto, CS_PROTO_LL);
    cs_coll_result l = run(&t, CS_OP_ALL_REDUCE, 4 * GiB, CS_CHOICE_AUTO, CS_CHOICE_AUTO, CS_ENGINE_ANALYTIC);
    ck_assert_int_eq(l.proto, CS_PROTO_SIMPLE);
    /* auto is never slower than any forced choice */
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            for (double b = 8; b < 8 * GiB; b *= 16) {
                double tm;
                if (cs_collective_time(&t, CS_OP_ALL_REDUCE, b, a, p, &tm)) continue;
                cs_coll_result au = run(&t, CS_OP_ALL_REDUCE, b, CS_CHOICE_AUTO, CS_CHOICE_AUTO,
                                        CS_ENGINE_ANALYTIC);
                ck_assert(au.time_s <= tm * (1 + 1e-12));
            }
}
END_TEST

START_TEST(tree_is_all_reduce_only_and_ll128_follows_config)
{
    cs_topology t = topo("dgx-h100", 16);
    double tm;
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_GATHER, 1e6, CS_ALGO_TREE, CS_PROTO_SIMPLE, &tm), CS_ENOTSUP);
    cs_coll_request rq = {CS_OP_BROADCAST, 1e6, CS_ALGO_TREE, CS_CHOICE_AUTO, CS_ENGINE_ANALYTIC};
    cs_coll_result r;
    cs_diag d;
    ck_assert_int_eq(cs_collective_run(&t, &rq, &r, &d), CS_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(d.message, "all_reduce only"));
    cs_topology pc = topo("pcie-l40s", 4);
    ck_assert_int_eq(cs_collective_time(&pc, CS_OP_ALL_REDUCE, 1e6, CS_ALGO_RING, CS_PROTO_LL128, &tm), CS_ENOTSUP);
}
END_TEST

START_TEST(tree_beats_ring_at_scale_for_mid_sizes)
{
    /* the reason NCCL has trees: log-depth latency at many nodes */
    cs_topology t = topo("dgx-h100", 4096);
    cs_coll_result r = run(&t, CS_OP_ALL_REDUCE, 1 << 20, CS_CHOICE_AUTO, CS_CHOICE_AUTO, CS_ENGINE_ANALYTIC);
    ck_assert_int_eq(r.algo, CS_ALGO_TREE);
}
END_TEST

static cs_topology yaml_topo(const char *extra, int ranks)
{
    size_t len;
    const char *base = cs_presets_cluster_yaml("dgx-h100", &len);
    ck_assert_ptr_nonnull(base);
    char buf[16384];
    snprintf(buf, sizeof buf, "%.*s\n%s", (int)len, base, extra);
    char *nodes = strstr(buf, "\nnodes: 1 "); /* a two-node cluster */
    ck_assert_ptr_nonnull(nodes);
    nodes[8] = '2';
    cs_cluster c;
    cs_diag d;
    ck_assert_msg(cs_config_load_cluster_string("test.yaml", buf, strlen(buf), &c, &d) == 0, "%s:%d:%d %s",
                  d.file, d.line, d.column, d.message);
    cs_topology t;
    ck_assert_msg(cs_topology_build(&c, ranks, 0, &t, &d) == 0, "%s", d.message);
    return t;
}

START_TEST(straggler_slows_des_only)
{
    cs_topology plain = topo("dgx-h100", 16);
    cs_topology slow = yaml_topo("des:\n  stragglers:\n    - {rank: 5, slowdown: 2}\n", 16);
    ck_assert(slow.heterogeneous);
    double b = 4 * GiB;
    cs_coll_result a0 = run(&plain, CS_OP_ALL_REDUCE, b, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_ANALYTIC);
    cs_coll_result a1 = run(&slow, CS_OP_ALL_REDUCE, b, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_ANALYTIC);
    cs_coll_result d0 = run(&plain, CS_OP_ALL_REDUCE, b, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    cs_coll_result d1 = run(&slow, CS_OP_ALL_REDUCE, b, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    ck_assert_double_eq_tol(a0.time_s, a1.time_s, 1e-15);
    /* a ring runs at its slowest member's pace: about 2x */
    ck_assert_double_eq_tol(d1.time_s / d0.time_s, 2.0, 0.05);
    /* a start delay adds about itself */
    cs_topology late = yaml_topo("des:\n  stragglers:\n    - {rank: 3, delay: 1ms}\n", 16);
    cs_coll_result d2 = run(&late, CS_OP_ALL_REDUCE, b, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    ck_assert_double_eq_tol(d2.time_s - d0.time_s, 1e-3, 2e-5);
}
END_TEST

START_TEST(slow_link_override_slows_des_only)
{
    cs_topology plain = topo("dgx-h100", 16);
    cs_topology t = yaml_topo("des:\n  links:\n    - {node: 1, nic: 0, bandwidth: 50Gbps}\n", 16);
    double b = 4 * GiB;
    cs_coll_result d0 = run(&plain, CS_OP_ALL_REDUCE, b, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    cs_coll_result d1 = run(&t, CS_OP_ALL_REDUCE, b, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    /* node 1's network drops from 8 x 400 to 7 x 400 + 50 Gb/s */
    ck_assert_double_eq_tol(d1.time_s / d0.time_s, (8 * 47.0) / (7 * 47.0 + 47.0 / 8), 0.03);
    cs_coll_result a1 = run(&t, CS_OP_ALL_REDUCE, b, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_ANALYTIC);
    cs_coll_result a0 = run(&plain, CS_OP_ALL_REDUCE, b, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_ANALYTIC);
    ck_assert_double_eq_tol(a0.time_s, a1.time_s, 1e-15);
}
END_TEST

START_TEST(des_is_deterministic)
{
    cs_topology t = yaml_topo("des:\n  stragglers:\n    - {rank: 7, slowdown: 1.3}\n", 24);
    cs_coll_result a = run(&t, CS_OP_ALL_REDUCE, 3e8, CS_ALGO_TREE, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    cs_coll_result b = run(&t, CS_OP_ALL_REDUCE, 3e8, CS_ALGO_TREE, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    ck_assert(memcmp(&a.time_s, &b.time_s, sizeof a.time_s) == 0);
    ck_assert_uint_eq(a.events, b.events);
}
END_TEST

START_TEST(symmetry_keeps_large_rings_cheap)
{
    cs_topology t = topo("dgx-h100", 4096);
    cs_coll_result r = run(&t, CS_OP_ALL_REDUCE, GiB, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    /* one node's 8 ranks x 8190 steps, a few events each */
    ck_assert_uint_le(r.events, 8ull * 8190 * 4);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("collective");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, busbw_factors_are_nccl_tests);
    tcase_add_test(tc, ring_busbw_approaches_effective_nvlink);
    tcase_add_test(tc, internode_bandwidth_bottlenecks_multinode_rings);
    tcase_add_test(tc, ring_latency_is_nccl_formula_single_node);
    tcase_add_test(tc, ring_crossings_match_nccl_for_many_nodes);
    tcase_add_test(tc, tuner_picks_ll_small_simple_large);
    tcase_add_test(tc, tree_is_all_reduce_only_and_ll128_follows_config);
    tcase_add_test(tc, tree_beats_ring_at_scale_for_mid_sizes);
    tcase_add_test(tc, straggler_slows_des_only);
    tcase_add_test(tc, slow_link_override_slows_des_only);
    tcase_add_test(tc, des_is_deterministic);
    tcase_add_test(tc, symmetry_keeps_large_rings_cheap);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
