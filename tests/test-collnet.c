/* SPDX-License-Identifier: MIT */
/*
 * test-collnet.c - the CollNet rows (collnet_direct, collnet_chain: NCCL's
 * in-network reduction on SHARP switches) against NCCL's formulas
 * (src/graph/tuning.cc, src/enqueue.cc at v2.20.3-1), where they run, why
 * they win at scale, and the DES against the closed form.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/collective.h"
#include "config/config.h"
#include "config/presets.h"
#include "testutil.h"

#define GIB (1024.0 * 1024 * 1024)

/* dgx-h100 on `nodes` nodes, with `edit` appended to its inter mapping
 * (e.g. "  sharp: true\n"), or the text replaced where `from` is given. */
static char *h100_yaml(int nodes, const char *from, const char *to)
{
    const char *base = cs_presets_cluster_yaml("dgx-h100", NULL);
    ck_assert_ptr_nonnull(base);
    char n[32];
    snprintf(n, sizeof n, "\nnodes: %d ", nodes);
    char *a = cs_test_replace(base, "\nnodes: 1 ", n);
    char *b = cs_test_replace(a, "\n  topology: rail-optimized", "\n  sharp: true\n  topology: rail-optimized");
    free(a);
    if (!from) return b;
    char *c = cs_test_replace(b, from, to);
    free(b);
    return c;
}

static cs_topology sharp_topo(int nodes, int ranks, const char *from, const char *to)
{
    char *y = h100_yaml(nodes, from, to);
    cs_cluster c = cs_test_cluster_yaml("sharp.yaml", y);
    free(y);
    return cs_test_topology(&c, ranks, nodes);
}

static double closed(const cs_topology *t, double bytes, cs_algo_id a)
{
    double tm;
    ck_assert_int_eq(cs_collective_time(t, CS_OP_ALL_REDUCE, bytes, a, CS_PROTO_SIMPLE, &tm), 0);
    return tm;
}

static double des(const cs_topology *t, double bytes, cs_algo_id a)
{
    cs_coll_request rq = {CS_OP_ALL_REDUCE, bytes, a, CS_PROTO_SIMPLE, CS_ENGINE_DES};
    cs_coll_result r;
    cs_diag d;
    ck_assert_msg(cs_collective_run(t, &rq, &r, &d) == 0, "%s", d.message);
    ck_assert_int_eq(r.algo, a);
    return r.time_s;
}

START_TEST(off_unless_the_switches_reduce)
{
    /* inter.sharp defaults to false, and with it both flags */
    cs_cluster plain = cs_test_cluster("dgx-h100");
    ck_assert_int_eq(plain.inter.sharp, 0);
    ck_assert_int_eq(plain.coll.algo_enabled[CS_ALGO_COLLNET_DIRECT], 0);
    ck_assert_int_eq(plain.coll.algo_enabled[CS_ALGO_COLLNET_CHAIN], 0);
    cs_topology t = sharp_topo(2, 16, NULL, NULL);
    ck_assert_int_eq(t.cluster.coll.algo_enabled[CS_ALGO_COLLNET_DIRECT], 1);
    ck_assert_int_eq(t.cluster.coll.algo_enabled[CS_ALGO_COLLNET_CHAIN], 1);
    /* Direct needs NVSwitch (tuning.cc), Chain any fabric */
    cs_cluster pcie = t.cluster;
    pcie.intra.kind = CS_FABRIC_PCIE;
    ck_assert(!cs_algo_hw_allows(CS_ALGO_COLLNET_DIRECT, &pcie));
    ck_assert(cs_algo_hw_allows(CS_ALGO_COLLNET_CHAIN, &pcie));
    /* an explicit true without SHARP is an error at the key; false turns
     * one off where SHARP is */
    const char *base = cs_presets_cluster_yaml("dgx-h100", NULL);
    char *y = cs_test_replace(base, "\ncollectives:\n", "\ncollectives:\n  collnet_chain: true\n");
    cs_cluster c;
    cs_diag d;
    int rc = cs_config_load_cluster_string("x.yaml", y, strlen(y), &c, &d);
    ck_assert_int_eq(rc, CS_ECONFIG);
    CS_ASSERT_CONTAINS(d.message, "'collnet_chain: true' needs switches that reduce in the network");
    free(y);
    cs_topology off = sharp_topo(2, 16, "\ncollectives:\n", "\ncollectives:\n  collnet_direct: false\n");
    ck_assert_int_eq(off.cluster.coll.algo_enabled[CS_ALGO_COLLNET_DIRECT], 0);
    ck_assert_int_eq(off.cluster.coll.algo_enabled[CS_ALGO_COLLNET_CHAIN], 1);
}
END_TEST

START_TEST(all_reduce_with_simple_across_nodes_of_at_most_8)
{
    double tm;
    cs_topology one = sharp_topo(1, 8, NULL, NULL), two = sharp_topo(2, 16, NULL, NULL);
    for (int a = CS_ALGO_COLLNET_DIRECT; a <= CS_ALGO_COLLNET_CHAIN; a++) {
        ck_assert_int_eq(cs_collective_time(&one, CS_OP_ALL_REDUCE, 1e9, a, CS_PROTO_SIMPLE, &tm), CS_ENOTSUP);
        ck_assert_int_eq(cs_collective_time(&two, CS_OP_ALL_GATHER, 1e9, a, CS_PROTO_SIMPLE, &tm), CS_ENOTSUP);
        ck_assert_int_eq(cs_collective_time(&two, CS_OP_ALL_REDUCE, 1e9, a, CS_PROTO_LL, &tm), CS_ENOTSUP);
        ck_assert_int_eq(cs_collective_time(&two, CS_OP_ALL_REDUCE, 1e9, a, CS_PROTO_SIMPLE, &tm), 0);
    }
    /* src/init.cc: more than NCCL_MAX_DIRECT_ARITY + 1 = 8 local ranks
     * disables CollNet */
    cs_topology wide = sharp_topo(2, 32, "\ngpus_per_node: 8 ", "\ngpus_per_node: 16 ");
    ck_assert_int_eq(cs_collective_time(&wide, CS_OP_ALL_REDUCE, 1e9, CS_ALGO_COLLNET_CHAIN, CS_PROTO_SIMPLE, &tm), CS_ENOTSUP);
    ck_assert_int_eq(cs_collective_time(&wide, CS_OP_ALL_REDUCE, 1e9, CS_ALGO_COLLNET_DIRECT, CS_PROTO_SIMPLE, &tm), CS_ENOTSUP);
}
END_TEST

/* Large messages: NCCL's algbw, channels x factor x min(port share / 2,
 * network share) (tuning.cc; search.cc caps bwIntra at 2 bwInter), the
 * same at every node count. */
START_TEST(large_messages_run_at_nccls_algbw)
{
    double bytes = 16 * GIB;
    for (int nodes = 2; nodes <= 32; nodes *= 4) {
        cs_topology t = sharp_topo(nodes, 8 * nodes, NULL, NULL);
        /* 8 NICs: the ports bind (H100: 370.8 GB/s port / 2 < 376 GB/s network) */
        double chain = t.port_Bps / 2, direct = 0.85 * t.port_Bps / 2;
        ck_assert(t.port_Bps / 2 < t.node_net_Bps);
        double tc = closed(&t, bytes, CS_ALGO_COLLNET_CHAIN), td = closed(&t, bytes, CS_ALGO_COLLNET_DIRECT);
        ck_assert_msg(fabs(tc * chain / bytes - 1) < 0.005, "chain, %d nodes: %g s, NCCL's %g", nodes, tc, bytes / chain);
        ck_assert_msg(fabs(td * direct / bytes - 1) < 0.005, "direct, %d nodes: %g s, NCCL's %g", nodes, td, bytes / direct);
        ck_assert(tc < td); /* NCCL's Direct x 0.85 on Hopper: its tuner takes Chain */
    }
    /* 2 NICs: the network binds, algbw = the node's NICs; Direct's GPU/NIC
     * ratio f = 8 / 2 = 4 counts (f + 1) / 2 = 2.5 */
    cs_topology t = sharp_topo(4, 32, "\n  nics_per_node: 8 ", "\n  nics_per_node: 2 ");
    ck_assert(t.node_net_Bps < t.port_Bps / 2);
    double tc = closed(&t, bytes, CS_ALGO_COLLNET_CHAIN), td = closed(&t, bytes, CS_ALGO_COLLNET_DIRECT);
    ck_assert_msg(fabs(tc * t.node_net_Bps / bytes - 1) < 0.005, "%g", tc * t.node_net_Bps / bytes);
    double d_bw = fmin(t.port_Bps / 2, t.node_net_Bps) * 0.85 / 2.5;
    ck_assert_msg(fabs(td * d_bw / bytes - 1) < 0.005, "%g", td * d_bw / bytes);
}
END_TEST

/* Zero bytes: NCCL's latency, nothing else (tuning.cc; interLat =
 * hwLat[NET] + 2 network latencies for Simple). */
START_TEST(latency_is_nccls)
{
    cs_topology t = sharp_topo(4, 32, "\n  latency: 0us ", "\n  latency: 2us ");
    double inter = 2e-6 * 2, nv = t.cluster.intra.latency_s;
    ck_assert_double_eq_tol(closed(&t, 0, CS_ALGO_COLLNET_CHAIN), 2 * 7 * (2.8e-6 + nv) + 30e-6 + inter, 1e-12);
    ck_assert_double_eq_tol(closed(&t, 0, CS_ALGO_COLLNET_DIRECT),
                            2 * ((3.7e-6 + nv) + 7 * 0.4e-6) + 31e-6 + inter, 1e-12);
    /* one GPU per node: no intra-node terms */
    cs_topology one = cs_test_topology(&t.cluster, 4, 4);
    ck_assert_double_eq_tol(closed(&one, 0, CS_ALGO_COLLNET_CHAIN), 30e-6 + inter, 1e-12);
    ck_assert_double_eq_tol(closed(&one, 0, CS_ALGO_COLLNET_DIRECT), 31e-6 + inter, 1e-12);
}
END_TEST

/* Each node sends its data once and receives it once: the time does not
 * grow with nodes, while the ring's does (2(N-1) network latencies, and a
 * node network that carries 2(n-1)/n of the data). */
START_TEST(beats_the_ring_at_scale)
{
    cs_topology small = sharp_topo(2, 16, NULL, NULL), big = sharp_topo(64, 512, NULL, NULL);
    for (double b = 1 << 20; b <= 4 * GIB; b *= 64)
        ck_assert_double_eq_tol(closed(&small, b, CS_ALGO_COLLNET_CHAIN), closed(&big, b, CS_ALGO_COLLNET_CHAIN), 1e-12);
    double ring_small = closed(&small, 256e6, CS_ALGO_RING), ring_big = closed(&big, 256e6, CS_ALGO_RING);
    ck_assert(ring_big > ring_small);
    ck_assert(closed(&big, 256e6, CS_ALGO_COLLNET_CHAIN) < ring_big);
    cs_algo_id a;
    cs_proto p;
    ck_assert_int_eq(cs_collective_choose(&big, CS_OP_ALL_REDUCE, 256e6, CS_CHOICE_AUTO, CS_CHOICE_AUTO, &a, &p, NULL), 0);
    ck_assert_msg(a == CS_ALGO_COLLNET_CHAIN || a == CS_ALGO_COLLNET_DIRECT, "tuner took %s", cs_algo_name(a));
}
END_TEST

/* src/enqueue.cc getChannnelThreadInfo, "CollNet channel tuning", by hand
 * for 1 MiB on 16 channels and 8 heads (nc x 640 x 8 x threshold): 16
 * stays past the 16 switch; 16 -> 8 (threshold 512 -> 256 at 12); 8 -> 4
 * (-> 128 at 6); 4 -> 2 (-> 64 at 3); at 2, 2 x 5120 x 64 = 655360 <= 1 MiB
 * stops it. Chain: the ring/tree loop, floor(bytes / (640 x 512)). */
START_TEST(small_messages_run_on_fewer_channels)
{
    cs_topology t = sharp_topo(2, 16, NULL, NULL);
    const cs_algo *d = cs__algo_row(CS_ALGO_COLLNET_DIRECT), *c = cs__algo_row(CS_ALGO_COLLNET_CHAIN);
    ck_assert_int_eq(d->channels(&t, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 1 << 20), 2);
    ck_assert_int_eq(d->channels(&t, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 1e9), 16);
    ck_assert_int_eq(c->channels(&t, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 1 << 20), 3);
    ck_assert_int_eq(c->channels(&t, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 100), 1);
    ck_assert_int_eq(c->channels(&t, CS_OP_ALL_REDUCE, CS_PROTO_SIMPLE, 1e9), 16);
}
END_TEST

/* On uniform clusters the DES runs the closed form's pipeline: within 1%
 * from 64 MiB, within 5% below (the fill: the first step's spread shares
 * the port with later reductions), for node counts that are not powers of
 * two too, port- or network-bound. */
START_TEST(des_agrees_with_the_closed_form)
{
    static const int nodes[] = {2, 3, 12};
    for (int net = 0; net < 2; net++)
        for (size_t k = 0; k < sizeof nodes / sizeof nodes[0]; k++) {
            cs_topology t = net ? sharp_topo(nodes[k], 8 * nodes[k], "\n  nics_per_node: 8 ", "\n  nics_per_node: 2 ")
                                : sharp_topo(nodes[k], 8 * nodes[k], NULL, NULL);
            for (int a = CS_ALGO_COLLNET_DIRECT; a <= CS_ALGO_COLLNET_CHAIN; a++)
                for (double b = 4096; b <= 4 * GIB; b *= 16) {
                    double m = closed(&t, b, a), s = des(&t, b, a);
                    double tol = b >= 64.0 * 1024 * 1024 ? 0.01 : 0.05;
                    ck_assert_msg(fabs(s - m) <= tol * m, "%s %d nodes%s %.0f B: des %g closed %g",
                                  cs_algo_name(a), nodes[k], net ? " (2 NICs)" : "", b, s, m);
                }
        }
}
END_TEST

/* Only the DES sees a slow NIC or a straggler; through the switch's
 * barrier they slow every node. */
START_TEST(des_sees_slow_nics_and_stragglers)
{
    double b = 1 * GIB;
    cs_topology plain = sharp_topo(4, 32, NULL, NULL);
    cs_topology nic = sharp_topo(4, 32, "\ncollectives:\n",
                                 "\ndes:\n  links:\n    - {node: 2, nic: 0, bandwidth: 5GB/s}\n"
                                 "    - {node: 2, nic: 1, bandwidth: 5GB/s}\n"
                                 "    - {node: 2, nic: 2, bandwidth: 5GB/s}\n"
                                 "    - {node: 2, nic: 3, bandwidth: 5GB/s}\n"
                                 "    - {node: 2, nic: 4, bandwidth: 5GB/s}\n"
                                 "    - {node: 2, nic: 5, bandwidth: 5GB/s}\n"
                                 "    - {node: 2, nic: 6, bandwidth: 5GB/s}\n"
                                 "    - {node: 2, nic: 7, bandwidth: 5GB/s}\n"
                                 "collectives:\n");
    cs_topology slow = sharp_topo(4, 32, "\ncollectives:\n",
                                  "\ndes:\n  stragglers:\n    - {rank: 9, slowdown: 2}\ncollectives:\n");
    for (int a = CS_ALGO_COLLNET_DIRECT; a <= CS_ALGO_COLLNET_CHAIN; a++) {
        double d0 = des(&plain, b, a), d1 = des(&nic, b, a), d2 = des(&slow, b, a);
        /* node 2's network: 8 x 5 GB/s x 0.94 = 37.6 GB/s carries all of it */
        ck_assert_msg(d1 > 0.9 * b / 37.6e9, "%s: slow NIC %g s", cs_algo_name(a), d1);
        ck_assert_msg(d2 > 1.9 * d0, "%s: straggler %g s against %g s", cs_algo_name(a), d2, d0);
        ck_assert_double_eq_tol(closed(&nic, b, a), closed(&plain, b, a), 1e-15);
        ck_assert_double_eq_tol(closed(&slow, b, a), closed(&plain, b, a), 1e-15);
    }
}
END_TEST

/* Edge sizes and layouts on a SHARP cluster, every row that runs there,
 * both engines: 0 B, one element and an odd size, on 1 rank, 2 ranks of
 * one node, 3 ranks over 2 nodes and 2 full nodes: a finite time >= 0,
 * and a row refused at a size is refused at 1 MiB too (the choice drops a
 * row whose time is NaN, which would hide it). */
START_TEST(edge_sizes_and_layouts_run)
{
    static const int layout[][2] = {{1, 1}, {2, 1}, {3, 2}, {16, 2}};
    static const double sizes[] = {0, 4, 1000003};
    for (size_t l = 0; l < sizeof layout / sizeof *layout; l++) {
        cs_topology t = sharp_topo(layout[l][1], layout[l][0], NULL, NULL);
        for (int a = 0; a < CS_ALGO_COUNT; a++)
            for (int op = 0; op < CS_OP_COUNT; op++)
                for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
                    cs_coll_request rq = {(cs_op)op, sizes[z], a, CS_CHOICE_AUTO,
                                          CS_ENGINE_ANALYTIC};
                    cs_coll_result cf, des;
                    cs_diag d;
                    if (cs_collective_run(&t, &rq, &cf, &d)) { /* not this row's: at any size */
                        rq.bytes = 1 << 20;
                        ck_assert_msg(cs_collective_run(&t, &rq, &cf, &d) != 0,
                                      "%s %s refused at %g B only, %d ranks", cs_algo_name(a),
                                      cs_op_name((cs_op)op), sizes[z], t.ranks);
                        continue;
                    }
                    rq.engine = CS_ENGINE_DES;
                    ck_assert_msg(cs_collective_run(&t, &rq, &des, &d) == 0, "%s", d.message);
                    ck_assert_msg(isfinite(cf.time_s) && cf.time_s >= 0 && isfinite(des.time_s) &&
                                      des.time_s >= 0,
                                  "%s %s %g B, %d ranks: %g / %g s", cs_algo_name(a),
                                  cs_op_name((cs_op)op), sizes[z], t.ranks, cf.time_s, des.time_s);
                }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("collnet");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, off_unless_the_switches_reduce);
    tcase_add_test(tc, all_reduce_with_simple_across_nodes_of_at_most_8);
    tcase_add_test(tc, large_messages_run_at_nccls_algbw);
    tcase_add_test(tc, latency_is_nccls);
    tcase_add_test(tc, beats_the_ring_at_scale);
    tcase_add_test(tc, small_messages_run_on_fewer_channels);
    tcase_add_test(tc, des_agrees_with_the_closed_form);
    tcase_add_test(tc, des_sees_slow_nics_and_stragglers);
    tcase_add_test(tc, edge_sizes_and_layouts_run);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
