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

#include <stdio.h>

#include "coll/algo.h" /* the rows themselves, for the table's invariants */
#include "coll/collective.h"
#include "config/config.h"
#include "config/presets.h"
#include "testutil.h"


static cs_topology topo(const char *preset, int ranks)
{
    cs_cluster c = cs_test_cluster(preset);
    return cs_test_topology(&c, ranks, 0);
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

/* cs_coll_result.latency_s is the closed form's latency term: NCCL's
 * formula on one node and across nodes, what is left of the time when the
 * bandwidth term (linear in bytes for ring) is taken out, the same for
 * both engines, and within the time for every algorithm that runs. */
START_TEST(result_latency_is_the_latency_term)
{
    cs_topology t = topo("dgx-h100", 8);
    cs_coll_result r1 = run(&t, CS_OP_ALL_REDUCE, GiB, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_ANALYTIC);
    cs_coll_result r2 = run(&t, CS_OP_ALL_REDUCE, 2 * GiB, CS_ALGO_RING, CS_PROTO_SIMPLE, CS_ENGINE_ANALYTIC);
    ck_assert_double_eq_tol(r1.latency_s * 1e6, 8.4 + 14 * 3.4, 0.01);
    ck_assert_double_eq_tol(r2.latency_s, r1.latency_s, 1e-15);
    ck_assert_double_eq_tol(r2.time_s - r2.latency_s, 2 * (r1.time_s - r1.latency_s), 1e-9);
    /* 64 ranks, LL: ring_crossings_match_nccl_for_many_nodes's sum */
    cs_topology big = topo("dgx-h100", 64);
    cs_coll_result ll = run(&big, CS_OP_ALL_REDUCE, 8, CS_ALGO_RING, CS_PROTO_LL, CS_ENGINE_ANALYTIC);
    ck_assert_double_eq_tol(ll.latency_s * 1e6, 6.6 + (126 - 16) * 1.0 + 16 * 2.7, 0.05);
    ck_assert(ll.latency_s < ll.time_s);
    cs_topology two = topo("dgx-h100", 16);
    int ran = 0;
    for (int op = 0; op < CS_OP_COUNT; op++)
        for (int a = 0; a < CS_ALGO_COUNT; a++) {
            cs_coll_request rq = {op, 64 * MiB, a, CS_CHOICE_AUTO, CS_ENGINE_ANALYTIC};
            cs_coll_result an, des;
            cs_diag d;
            if (cs_collective_run(&two, &rq, &an, &d)) continue;
            rq.engine = CS_ENGINE_DES;
            ck_assert_int_eq(cs_collective_run(&two, &rq, &des, &d), 0);
            ck_assert_msg(an.latency_s > 0 && an.latency_s < an.time_s, "%s %s: latency %g of %g s",
                          cs_op_name(op), cs_algo_name(a), an.latency_s, an.time_s);
            ck_assert_double_eq_tol(des.latency_s, an.latency_s, 1e-15);
            ran++;
        }
    ck_assert_int_ge(ran, CS_OP_COUNT);
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
    /* auto is never slower than any forced choice where NCCL runs every
     * channel (>= 512 KiB here: below, NCCL lowers the channel count after
     * choosing, so its choice need not be the fastest as run) */
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            for (double b = 512.0 * 1024; b < 8 * GiB; b *= 16) {
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
    CS_ASSERT_CONTAINS(d.message, "all_reduce only");
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

START_TEST(tree_closed_form_is_nccls_estimate)
{
    /* tuning.cc: 2((ppn-1) intra + log2i(nodes) inter) + bytes / (algbw x
     * treeCorrectionFactor), no pipeline fill of its own: on one DGX H100
     * (16 channels, NVLink port 450 GB/s x 0.824, tree/Simple) at 4 MiB,
     * logSize = log2(4 MiB / 64) = 16, corr .7 */
    cs_topology t = topo("dgx-h100", 8);
    const cs_cluster *c = &t.cluster;
    double bytes = 4.0 * 1024 * 1024, tm;
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_REDUCE, bytes, CS_ALGO_TREE, CS_PROTO_SIMPLE, &tm), 0);
    double lat = c->coll.base_latency_s[CS_ALGO_TREE][CS_PROTO_SIMPLE] +
                 2.0 * 7 * (c->coll.hw_latency_s[CS_HW_NVLINK][CS_ALGO_TREE][CS_PROTO_SIMPLE] + c->intra.latency_s);
    double per_ch = fmin(t.port_Bps / c->coll.channels * 0.92, 38.7e9) * 0.7 * 0.5;
    ck_assert_double_eq_tol(tm, lat + bytes / (c->coll.channels * per_ch), 1e-12);
}
END_TEST

START_TEST(two_node_tree_caps_count_search_channels)
{
    /* tuning.cc caps the tree at graphs[TREE]->nChannels x perChMaxTreeBw,
     * search channels (connect.cc runs each twice): on two DGX A100 (8 HDR
     * NICs: 8 search channels, 16 runtime) that is 8 x 23.6 = 188.8 GB/s
     * busBw, algbw 94.4, below the ring's 8 x 24 x 16/30 = 102.4: NCCL keeps
     * the ring for large all_reduce. Counting the cap per runtime channel
     * (16 x 23.6) made the tree win from 32 MiB. */
    cs_topology t = topo("dgx-a100", 16);
    ck_assert_int_eq(t.nodes, 2);
    for (double b = 32.0 * 1024 * 1024; b <= 8.0 * 1024 * 1024 * 1024; b *= 4) {
        cs_coll_result r = run(&t, CS_OP_ALL_REDUCE, b, CS_CHOICE_AUTO, CS_CHOICE_AUTO, CS_ENGINE_ANALYTIC);
        ck_assert_msg(r.algo == CS_ALGO_RING, "%.0f B: %s", b, cs_algo_name(r.algo));
    }
    /* the forced tree's busBw is NCCL's cap x .5 x 2(n-1)/n */
    cs_coll_result r = run(&t, CS_OP_ALL_REDUCE, 8.0 * 1024 * 1024 * 1024, CS_ALGO_TREE, CS_PROTO_SIMPLE,
                           CS_ENGINE_ANALYTIC);
    ck_assert_double_le(r.busbw_Bps, 8 * 23.6e9 * 0.5 * 30.0 / 16 * 1.0001);
    ck_assert_double_ge(r.busbw_Bps, 8 * 23.6e9 * 0.5 * 30.0 / 16 * 0.99);
}
END_TEST

START_TEST(small_messages_run_on_fewer_channels)
{
    /* enqueue.cc: nc = the largest count with bytes >= nc x nt x threshold.
     * Ring/LL128 on one DGX H100 (16 channels, nt 640, threshold 8): 32 KiB
     * runs on 6 channels, each then capped at perChMaxRingLL128Bw, as a
     * 6-channel cluster would run it; 80 KiB and more on all 16 */
    cs_topology t = topo("dgx-h100", 8);
    cs_cluster c6 = cs_test_cluster("dgx-h100");
    c6.coll.channels = 6;
    cs_topology t6 = cs_test_topology(&c6, 8, 0);
    double a, b;
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_REDUCE, 32768, CS_ALGO_RING, CS_PROTO_LL128, &a), 0);
    ck_assert_int_eq(cs_collective_time(&t6, CS_OP_ALL_REDUCE, 32768, CS_ALGO_RING, CS_PROTO_LL128, &b), 0);
    ck_assert_double_eq_tol(a, b, 1e-15);
    ck_assert_int_eq(cs_collective_time(&t6, CS_OP_ALL_REDUCE, 81920, CS_ALGO_RING, CS_PROTO_LL128, &b), 0);
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_REDUCE, 81920, CS_ALGO_RING, CS_PROTO_LL128, &a), 0);
    ck_assert_double_lt(a, b); /* 16 channels beat 6 once all run */
    ck_assert_int_eq(cs_ncclmodel_channels(32768, 16, 640, 8), 6);
    ck_assert_int_eq(cs_ncclmodel_channels(81920, 16, 640, 8), 16);
    ck_assert_int_eq(cs_ncclmodel_channels(8, 16, 512, 64), 1);
    /* ring/LL (threshold 8 x 8 ranks): 256 KiB runs on 8 channels, which
     * share NCCL's llMaxBw (a total busBw cap) as an 8-channel cluster does */
    cs_cluster c8 = cs_test_cluster("dgx-h100");
    c8.coll.channels = 8;
    cs_topology t8 = cs_test_topology(&c8, 8, 0);
    ck_assert_int_eq(cs_ncclmodel_channels(262144, 16, 512, 64), 8);
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_REDUCE, 262144, CS_ALGO_RING, CS_PROTO_LL, &a), 0);
    ck_assert_int_eq(cs_collective_time(&t8, CS_OP_ALL_REDUCE, 262144, CS_ALGO_RING, CS_PROTO_LL, &b), 0);
    ck_assert_double_eq_tol(a, b, 1e-15);
    /* the same in the DES */
    cs_coll_result d = run(&t, CS_OP_ALL_REDUCE, 32768, CS_ALGO_RING, CS_PROTO_LL128, CS_ENGINE_DES);
    cs_coll_result d6 = run(&t6, CS_OP_ALL_REDUCE, 32768, CS_ALGO_RING, CS_PROTO_LL128, CS_ENGINE_DES);
    ck_assert_double_eq_tol(d.time_s, d6.time_s, 1e-12);
}
END_TEST

START_TEST(nvlstree_runs_across_nvswitch_nodes_only)
{
    double tm;
    cs_topology one = topo("dgx-h100", 8), two = topo("dgx-h100", 16), a100 = topo("dgx-a100", 16);
    ck_assert_int_eq(cs_collective_time(&one, CS_OP_ALL_REDUCE, 1e9, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, &tm), CS_ENOTSUP);
    ck_assert_int_eq(cs_collective_time(&a100, CS_OP_ALL_REDUCE, 1e9, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, &tm), CS_ENOTSUP);
    ck_assert_int_eq(cs_collective_time(&two, CS_OP_ALL_GATHER, 1e9, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, &tm), CS_ENOTSUP);
    ck_assert_int_eq(cs_collective_time(&two, CS_OP_ALL_REDUCE, 1e9, CS_ALGO_NVLSTREE, CS_PROTO_LL128, &tm), CS_ENOTSUP);
    ck_assert_int_eq(cs_collective_time(&two, CS_OP_ALL_REDUCE, 1e9, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, &tm), 0);
    /* large messages: NCCL 2.19's algbw, channels x min(port, net) x 5/6 x
     * nvlsEfficiency .85 (two nodes; beyond two the network counts half) */
    const cs_cluster *c = &two.cluster;
    double bytes = 16.0 * 1024 * 1024 * 1024;
    for (int nodes = 2; nodes <= 8; nodes *= 2) {
        cs_topology t = topo("dgx-h100", 8 * nodes);
        double net = nodes <= 2 ? t.node_net_Bps : t.node_net_Bps / 2;
        double algbw = fmin(t.port_Bps, net) * 5.0 / 6.0 * 0.85;
        ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_REDUCE, bytes, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, &tm), 0);
        ck_assert_msg(fabs(tm * algbw / bytes - 1) < 0.01, "nodes %d: %g s, NCCL's %g s", nodes, tm,
                      bytes / algbw);
    }
    (void)c;
}
END_TEST

START_TEST(nvlstree_des_is_bounded_by_the_closed_form)
{
    /* two nodes: within 1% (5% for the mid sizes where the NVLS stages run
     * faster than the network one the closed form's fill charges for
     * every stage); beyond two the DES is never slower than the closed
     * form plus the extra tree level of an uneven node count, at most 30%
     * faster, within 1% at >= 1 GiB for powers of two */
    static const int ns[] = {16, 24, 32, 64};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        cs_topology t = topo("dgx-h100", ns[k]);
        int nodes = ns[k] / 8, pow2 = (nodes & (nodes - 1)) == 0;
        const cs_cluster *c = &t.cluster;
        double hop = c->coll.hw_latency_s[CS_HW_NET][CS_ALGO_NVLSTREE][CS_PROTO_SIMPLE] + 2 * c->inter.latency_s;
        double extra = pow2 ? 0 : 2 * hop;
        for (double b = 4096; b <= 4.0 * 1024 * 1024 * 1024; b *= 16) {
            double m = run(&t, CS_OP_ALL_REDUCE, b, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, CS_ENGINE_ANALYTIC).time_s;
            double s = run(&t, CS_OP_ALL_REDUCE, b, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, CS_ENGINE_DES).time_s;
            ck_assert_msg(s <= 1.01 * (m + extra) && s >= 0.7 * m, "N=%d %.0f B: des %g closed %g", ns[k], b, s, m);
            if (nodes == 2) ck_assert_msg(fabs(s - m) <= 0.05 * m, "N=16 %.0f B: des %g closed %g", b, s, m);
            if (pow2 && b >= 1e9) ck_assert_msg(fabs(s - m) <= 0.01 * m, "N=%d %.0f B: des %g closed %g", ns[k], b, s, m);
        }
    }
}
END_TEST

static cs_topology yaml_topo(const char *extra, int ranks)
{
    const char *base = cs_presets_cluster_yaml("dgx-h100", NULL);
    ck_assert_ptr_nonnull(base);
    char *two = cs_test_replace(base, "\nnodes: 1 ", "\nnodes: 2 "); /* a two-node cluster */
    char buf[16384];
    snprintf(buf, sizeof buf, "%s\n%s", two, extra);
    free(two);
    cs_cluster c = cs_test_cluster_yaml("test.yaml", buf);
    return cs_test_topology(&c, ranks, 0);
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

START_TEST(nvlstree_des_sees_stragglers_and_slow_nics)
{
    /* the node of a straggling GPU runs its NVLS stages and network sends
     * at that GPU's pace, a late one starts the node late; a slow NIC slows
     * its node's network share; the closed form sees none of it */
    cs_topology plain = topo("dgx-h100", 16);
    cs_topology slow = yaml_topo("des:\n  stragglers:\n    - {rank: 9, slowdown: 2}\n", 16);
    cs_topology late = yaml_topo("des:\n  stragglers:\n    - {rank: 3, delay: 1ms}\n", 16);
    cs_topology nic = yaml_topo("des:\n  links:\n    - {node: 1, nic: 0, bandwidth: 50Gbps}\n", 16);
    double b = 4 * GiB;
    cs_coll_result d0 = run(&plain, CS_OP_ALL_REDUCE, b, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    cs_coll_result d1 = run(&slow, CS_OP_ALL_REDUCE, b, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    cs_coll_result d2 = run(&late, CS_OP_ALL_REDUCE, b, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    cs_coll_result d3 = run(&nic, CS_OP_ALL_REDUCE, b, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, CS_ENGINE_DES);
    ck_assert_double_eq_tol(d1.time_s / d0.time_s, 2.0, 0.05);
    ck_assert_double_eq_tol(d2.time_s - d0.time_s, 1e-3, 2e-5);
    /* node 1's network drops from 8 x 400 to 7 x 400 + 50 Gb/s; the port
     * binds first until then (370.8 vs 376 GB/s), so the drop shows less */
    ck_assert_double_gt(d3.time_s, 1.05 * d0.time_s);
    ck_assert_double_lt(d3.time_s, 8.0 / (7 + 1.0 / 8) * d0.time_s * 1.01);
    cs_coll_result a0 = run(&plain, CS_OP_ALL_REDUCE, b, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, CS_ENGINE_ANALYTIC);
    cs_coll_result a1 = run(&slow, CS_OP_ALL_REDUCE, b, CS_ALGO_NVLSTREE, CS_PROTO_SIMPLE, CS_ENGINE_ANALYTIC);
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

/* ---- the algorithm table ------------------------------------------------ */

START_TEST(every_row_is_complete)
{
    int fitted = 0;
    for (int a = 0; a < CS_ALGO_COUNT; a++) {
        const cs_algo *r = cs__algo_row(a);
        const char *name = cs_algo_name(a);
        ck_assert_msg(name && *name, "row %d has no name", a);
        cs_algo_id back;
        ck_assert_int_eq(cs_algo_parse(name, &back), 0);
        ck_assert_int_eq(back, a);
        ck_assert_ptr_nonnull(cs_algo_hint(a));
        ck_assert_msg(r->ops && r->protos, "%s implements nothing", name);
        ck_assert_msg(r->latency && r->bandwidth && r->closed_form && r->simulate,
                      "%s lacks its latencies, bandwidth or an engine", name);
        /* a row that restricts ops, protocols or nodes says so */
        if (r->ops != CS_OPS_ALL || r->protos != CS_PROTOS_ALL || r->one_node)
            ck_assert_msg(*cs_algo_hint(a), "%s restricts where it runs without a hint", name);
        if (cs_algo_flag_key(a)) ck_assert_ptr_nonnull(cs_algo_flag_needs(a));
        for (int p = 0; p < CS_PROTO_COUNT; p++) {
            ck_assert(cs_algo_base_latency_s(a, p) >= 0);
            for (int h = 0; h < CS_HW_COUNT; h++) ck_assert(cs_algo_hw_latency_s(h, a, p) >= 0);
        }
        if (cs_algo_calib_param(a)) {
            fitted++;
            char want[64];
            snprintf(want, sizeof want, "efficiency.%s", name);
            ck_assert_str_eq(cs_algo_calib_param(a), want);
            snprintf(want, sizeof want, "collectives.efficiency.%s", name);
            ck_assert_str_eq(cs_algo_calib_yaml(a), want);
        }
    }
    ck_assert_int_eq(cs_algo_calib_count(), fitted);
    ck_assert_int_eq(cs_algo_parse("RING", &(cs_algo_id){0}), 0);
    ck_assert_int_eq(cs_algo_parse("ringg", &(cs_algo_id){0}), CS_EINVAL);
}
END_TEST

START_TEST(fitted_rows_come_in_priority_order)
{
    int seen[CS_ALGO_COUNT] = {0};
    for (int k = 0; k < cs_algo_calib_count(); k++) {
        cs_algo_id a = cs_algo_calib_at(k);
        ck_assert_ptr_nonnull(cs_algo_calib_param(a));
        ck_assert_msg(!seen[a]++, "%s listed twice", cs_algo_name(a));
        if (k) ck_assert(cs__algo_row(cs_algo_calib_at(k - 1))->calib.priority <
                         cs__algo_row(a)->calib.priority);
    }
    /* calibrate's reports list efficiency.tree before efficiency.ring */
    ck_assert_int_eq(cs_algo_calib_at(0), CS_ALGO_TREE);
    ck_assert_int_eq(cs_algo_calib_at(1), CS_ALGO_RING);
    ck_assert_ptr_null(cs_algo_calib_param(CS_ALGO_NVLS));
}
END_TEST

/* Every row prices every (op, protocol): a finite factor >= 0 from its own
 * bandwidth function; where it is available, a finite positive time. */
START_TEST(every_row_prices_every_protocol)
{
    const char *presets[] = {"dgx-h100", "dgx-a100", "pcie-l40s"};
    for (size_t i = 0; i < 3; i++)
        for (int ranks = 8; ranks <= 16; ranks += 8) {
            cs_cluster c = cs_test_cluster(presets[i]);
            cs_diag d;
            cs_topology t;
            if (cs_topology_build(&c, ranks, 0, &t, &d)) continue; /* pcie-l40s: one node */
            for (int a = 0; a < CS_ALGO_COUNT; a++)
                for (int op = 0; op < CS_OP_COUNT; op++)
                    for (int p = 0; p < CS_PROTO_COUNT; p++) {
                        double f = cs_collective_nccl_bw_factor(&t, op, a, p), tm;
                        ck_assert_msg(isfinite(f) && f >= 0, "%s/%s %s", cs_algo_name(a),
                                      cs_proto_name(p), presets[i]);
                        if (cs_collective_time(&t, op, 1 << 20, a, p, &tm) == 0)
                            ck_assert(isfinite(tm) && tm > 0);
                    }
        }
}
END_TEST

START_TEST(protocol_factors_are_nccls)
{
    cs_topology t = topo("dgx-h100", 8), m = topo("dgx-h100", 16), one = topo("dgx-h100", 2);
    one = cs_test_topology(&t.cluster, 2, 2); /* one rank per node */
    ck_assert_double_eq_tol(cs_collective_nccl_bw_factor(&one, CS_OP_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_LL128), 0.7, 1e-15);
    ck_assert_double_eq_tol(cs_collective_nccl_bw_factor(&t, CS_OP_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_SIMPLE), 0.92, 1e-15);
    ck_assert_double_eq_tol(cs_collective_nccl_bw_factor(&t, CS_OP_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_LL), 0.92 / 3.8, 1e-15);
    ck_assert_double_eq_tol(cs_collective_nccl_bw_factor(&t, CS_OP_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_LL128), 0.92 * 7 / 9, 1e-15);
    ck_assert_double_eq_tol(cs_collective_nccl_bw_factor(&m, CS_OP_ALL_REDUCE, CS_ALGO_TREE, CS_PROTO_LL128), 0.92 * 120 / 128, 1e-15);
    ck_assert_double_eq_tol(cs_collective_nccl_bw_factor(&t, CS_OP_ALL_GATHER, CS_ALGO_RING, CS_PROTO_LL), 1.0 / 3, 1e-15);
    ck_assert_double_eq_tol(cs_collective_nccl_bw_factor(&m, CS_OP_ALL_GATHER, CS_ALGO_RING, CS_PROTO_LL), 1.0 / 4, 1e-15);
    ck_assert_double_eq_tol(cs_collective_nccl_bw_factor(&t, CS_OP_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_LL128), 0.92, 1e-15);
    ck_assert_double_eq_tol(cs_collective_nccl_bw_factor(&t, CS_OP_ALL_REDUCE, CS_ALGO_RING, CS_PROTO_SIMPLE), 1.0, 1e-15);
    ck_assert_double_eq_tol(cs_collective_nccl_bw_factor(&t, CS_OP_ALL_REDUCE, CS_ALGO_NVLS, CS_PROTO_SIMPLE), 5.0 / 6 * 0.85, 1e-15);
    ck_assert_double_eq_tol(cs_algo_base_latency_s(CS_ALGO_RING, CS_PROTO_SIMPLE), 8.4e-6, 1e-18);
    ck_assert_double_eq_tol(cs_algo_hw_latency_s(CS_HW_NVLINK, CS_ALGO_NVLS, CS_PROTO_SIMPLE), 23e-6, 1e-18);
}
END_TEST

/* dgx-h100 with `collectives: nvls: false`, 8 ranks. */
static cs_topology nvls_off_topo(void)
{
    const char *base = cs_presets_cluster_yaml("dgx-h100", NULL);
    ck_assert_ptr_nonnull(base);
    char *off = cs_test_replace(base, "\ncollectives:\n", "\ncollectives:\n  nvls: false\n");
    cs_cluster c = cs_test_cluster_yaml("off.yaml", off);
    free(off);
    return cs_test_topology(&c, 8, 0);
}

/* The message of a forced choice that cannot run: "" when it runs. */
static const char *refusal(const cs_topology *t, cs_op op, int a, int p, cs_diag *d)
{
    cs_algo_id ra;
    cs_proto rp;
    if (cs_collective_choose(t, op, 1 << 20, a, p, &ra, &rp, d) == 0) return "";
    ck_assert_int_eq(d->code, CS_ENOTSUP);
    return d->message;
}

/* Every row with a hint meets a situation it refuses (an op, several
 * nodes, hardware without its flag, the flag off), and says its hint
 * there; a row without one falls back to the protocol's hint. */
START_TEST(a_row_that_cannot_run_gives_its_hint)
{
    cs_topology ts[] = {topo("dgx-h100", 8), topo("dgx-h100", 16), topo("dgx-a100", 8),
                        nvls_off_topo(), topo("pcie-l40s", 4)};
    for (int a = 0; a < CS_ALGO_COUNT; a++) {
        int refused = 0;
        for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
            for (int op = 0; op < CS_OP_COUNT; op++) {
                cs_diag d;
                const char *msg = refusal(&ts[i], op, a, CS_CHOICE_AUTO, &d);
                if (!*msg) continue;
                refused++;
                ck_assert_msg(strstr(msg, cs_algo_hint(a)), "%s: %s", cs_algo_name(a), msg);
                CS_ASSERT_CONTAINS(msg, cs_algo_name(a));
            }
        ck_assert_msg(refused || !*cs_algo_hint(a), "%s's hint is never said", cs_algo_name(a));
        cs_diag d; /* LL128 is off on PCIe */
        const char *msg = refusal(&ts[4], CS_OP_ALL_REDUCE, a, CS_PROTO_LL128, &d);
        ck_assert(*msg);
        CS_ASSERT_CONTAINS(msg, *cs_algo_hint(a) ? cs_algo_hint(a) : "LL128 is disabled");
    }
}
END_TEST

START_TEST(flags_default_to_what_the_hardware_allows)
{
    const char *presets[] = {"dgx-h100", "dgx-a100", "pcie-l40s", "hgx-h200", "cpu-local"};
    for (size_t i = 0; i < 5; i++) {
        cs_cluster c = cs_test_cluster(presets[i]);
        for (int a = 0; a < CS_ALGO_COUNT; a++)
            ck_assert_int_eq(c.coll.algo_enabled[a], cs_algo_hw_allows(a, &c));
    }
    cs_topology t = nvls_off_topo();
    ck_assert_int_eq(t.cluster.coll.algo_enabled[CS_ALGO_NVLS], 0);
    ck_assert(cs_algo_hw_allows(CS_ALGO_NVLS, &t.cluster));
    ck_assert(!cs_algo_flag_key(CS_ALGO_RING) && cs_algo_hw_allows(CS_ALGO_RING, &t.cluster));
    ck_assert_str_eq(cs_algo_flag_key(CS_ALGO_NVLS), "nvls");
    double tm;
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_REDUCE, 1e6, CS_ALGO_NVLS, CS_PROTO_SIMPLE, &tm), CS_ENOTSUP);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("collective");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, busbw_factors_are_nccl_tests);
    tcase_add_test(tc, ring_busbw_approaches_effective_nvlink);
    tcase_add_test(tc, internode_bandwidth_bottlenecks_multinode_rings);
    tcase_add_test(tc, ring_latency_is_nccl_formula_single_node);
    tcase_add_test(tc, result_latency_is_the_latency_term);
    tcase_add_test(tc, ring_crossings_match_nccl_for_many_nodes);
    tcase_add_test(tc, tuner_picks_ll_small_simple_large);
    tcase_add_test(tc, tree_is_all_reduce_only_and_ll128_follows_config);
    tcase_add_test(tc, tree_beats_ring_at_scale_for_mid_sizes);
    tcase_add_test(tc, tree_closed_form_is_nccls_estimate);
    tcase_add_test(tc, two_node_tree_caps_count_search_channels);
    tcase_add_test(tc, small_messages_run_on_fewer_channels);
    tcase_add_test(tc, nvlstree_runs_across_nvswitch_nodes_only);
    tcase_add_test(tc, nvlstree_des_is_bounded_by_the_closed_form);
    tcase_add_test(tc, straggler_slows_des_only);
    tcase_add_test(tc, nvlstree_des_sees_stragglers_and_slow_nics);
    tcase_add_test(tc, slow_link_override_slows_des_only);
    tcase_add_test(tc, des_is_deterministic);
    tcase_add_test(tc, symmetry_keeps_large_rings_cheap);
    tcase_add_test(tc, every_row_is_complete);
    tcase_add_test(tc, fitted_rows_come_in_priority_order);
    tcase_add_test(tc, every_row_prices_every_protocol);
    tcase_add_test(tc, protocol_factors_are_nccls);
    tcase_add_test(tc, a_row_that_cannot_run_gives_its_hint);
    tcase_add_test(tc, flags_default_to_what_the_hardware_allows);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
