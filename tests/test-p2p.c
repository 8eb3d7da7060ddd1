/* SPDX-License-Identifier: MIT */
/*
 * test-p2p.c - all_to_all and send_recv on the p2p row (sim/coll/algo_p2p.c):
 * the closed form against alpha-beta numbers worked by hand from NCCL's
 * constants, NCCL's protocol rule, the DES against the closed form (equal
 * on uniform nodes, bounded on uneven ones, and a slow NIC that only the
 * DES sees), the op names and busbw factors, and nccl-tests logs of
 * alltoall_perf / sendrecv_perf.
 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "coll/collective.h"
#include "config/config.h"
#include "config/presets.h"
#include "study/measure.h"
#include "testutil.h"


static cs_topology topo(const char *preset, int ranks, int nodes)
{
    cs_cluster c = cs_test_cluster(preset);
    return cs_test_topology(&c, ranks, nodes);
}

static cs_coll_result run(const cs_topology *t, cs_op op, double bytes, int p, cs_engine_kind e)
{
    cs_coll_request rq = {op, bytes, CS_CHOICE_AUTO, p, e};
    cs_coll_result r;
    cs_diag d;
    ck_assert_msg(cs_collective_run(t, &rq, &r, &d) == 0, "%s", d.message);
    ck_assert_int_eq(r.algo, CS_ALGO_P2P);
    return r;
}

static double rel_err(const cs_topology *t, cs_op op, double bytes, int proto);

/* ---- closed form: NCCL's constants, by hand ------------------------------ */

/* dgx-h100 (configs/clusters/dgx-h100.yaml): NVLink 450 GB/s x 0.824 per
 * GPU, 8 NICs of 400 Gb/s behind a 48 GB/s Gen5 x16 path x 47 / 48 per
 * node, no extra link latency; the
 * ring's latencies (tuning.cc): Simple baseLat 8.4 us, hwLat NVLink 3.4 us,
 * NET 14 us. */
#define H100_PORT (450e9 * 0.824)
#define H100_NIC 47e9
/* a 512 KiB p2p step at one channel's rate (ncclTopoNVLinkBw, sm90) */
#define H100_FILL (512 * 1024.0 / 20.6e9)

START_TEST(all_to_all_one_node_is_alpha_beta)
{
    cs_topology t = topo("dgx-h100", 8, 1);
    double S = 128 * MiB, tm;
    /* each GPU sends 7 blocks of S/8 through its port at once; each block's
     * last 512 KiB step is copied out of the FIFO after it (one channel's
     * 20.6 GB/s: nvlink_peers_run_on_few_channels) */
    double want = 8.4e-6 + 3.4e-6 + H100_FILL + (S / 8) / (H100_PORT / 7);
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_TO_ALL, S, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm), 0);
    ck_assert_double_eq_tol(tm, want, want * 1e-12);
    cs_coll_result r = run(&t, CS_OP_ALL_TO_ALL, S, CS_CHOICE_AUTO, CS_ENGINE_ANALYTIC);
    ck_assert_int_eq(r.proto, CS_PROTO_SIMPLE);
    ck_assert_double_eq_tol(r.busbw_Bps, S / want * 7 / 8, 1e3);
}
END_TEST

START_TEST(all_to_all_across_nodes_shares_the_nics)
{
    /* 4 nodes of 8: each GPU sends 24 of its 32 blocks off the node; the
     * node's 8 GPUs share its 8 NICs (one per GPU): 24 flows per NIC */
    cs_topology t = topo("dgx-h100", 32, 4);
    double S = 256 * MiB, m = S / 32, tm;
    double intra = 8.4e-6 + 3.4e-6 + m / (H100_PORT / 7);
    /* Simple across nodes: NCCL's flush adds the network latency (0) again */
    double inter = 8.4e-6 + 14e-6 + m / (H100_NIC / 24);
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_TO_ALL, S, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm), 0);
    ck_assert_double_eq_tol(tm, fmax(intra, inter), inter * 1e-12);
    /* (N-1)/N of each GPU's data leaves the node: busbw tends to the NIC's
     * rate x (n-1)/n / ((N-1)/N) */
    double bus = S / tm * 31 / 32;
    ck_assert_double_le(bus, H100_NIC * 31 / 32 / (3.0 / 4));
    ck_assert_double_ge(bus, 0.95 * H100_NIC * 31 / 32 / (3.0 / 4));
}
END_TEST

/* dgx-h100 with 2 NICs per node, 2 nodes: a GPU's NIC path is one NIC
 * (max(1, 2 / 8)) shared by 4 GPUs at the node's network, which binds:
 * 8 GPUs x 8 remote peers = 64 flows over 2 NICs. */
static cs_topology two_nic_topology(int ranks, int nodes)
{
    const char *base = cs_presets_cluster_yaml("dgx-h100", NULL);
    char *text = cs_test_replace(base, "\n  nics_per_node: 8 ", "\n  nics_per_node: 2 ");
    cs_cluster c = cs_test_cluster_yaml("two-nics.yaml", text);
    free(text);
    return cs_test_topology(&c, ranks, nodes);
}

START_TEST(the_node_network_binds_when_nics_are_few)
{
    cs_topology t = two_nic_topology(16, 2);
    double S = 256 * MiB, m = S / 16, tm;
    double want = 8.4e-6 + 14e-6 + m / (2 * H100_NIC / 64);
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_TO_ALL, S, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm), 0);
    ck_assert_double_eq_tol(tm, want, want * 1e-12);
    ck_assert_double_le(fabs(rel_err(&t, CS_OP_ALL_TO_ALL, S, CS_CHOICE_AUTO)), 1e-9);
    /* send_recv: one flow leaves each node, through one NIC */
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_SEND_RECV, S, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm), 0);
    want = 8.4e-6 + 14e-6 + S / H100_NIC;
    ck_assert_double_eq_tol(tm, want, want * 1e-12);
}
END_TEST

START_TEST(send_recv_is_one_hop)
{
    double S = 64 * MiB, tm;
    /* one node: every rank sends 1 GiB to the next over its port (32
     * channels of 20.6 GB/s do not bind: nvlink_peers_run_on_few_channels) */
    cs_topology one = topo("dgx-h100", 8, 1);
    ck_assert_int_eq(cs_collective_time(&one, CS_OP_SEND_RECV, 16 * S, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm),
                     0);
    double want = 8.4e-6 + 3.4e-6 + H100_FILL + 16 * S / H100_PORT;
    ck_assert_double_eq_tol(tm, want, want * 1e-12);
    /* two nodes: the last rank of each node sends through its own NIC */
    cs_topology two = topo("dgx-h100", 16, 2);
    ck_assert_int_eq(cs_collective_time(&two, CS_OP_SEND_RECV, S, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm), 0);
    want = 8.4e-6 + 14e-6 + S / H100_NIC;
    ck_assert_double_eq_tol(tm, want, want * 1e-12);
    /* one rank: a local copy, the launch only */
    cs_topology solo = topo("dgx-h100", 1, 1);
    ck_assert_int_eq(cs_collective_time(&solo, CS_OP_SEND_RECV, S, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm), 0);
    ck_assert_double_eq_tol(tm, 8.4e-6, 1e-18);
}
END_TEST

/* The largest job a cluster YAML allows (2^30 ranks: 2^27 dgx-h100
 * nodes): NCCL's channel rules multiply channel counts by the rank count,
 * which must not overflow an int (UBSan: run the suite with
 * UBSAN_OPTIONS=halt_on_error=1). The time is still a time. */
START_TEST(channel_rules_hold_at_the_largest_job)
{
    cs_topology t = topo("dgx-h100", 1 << 30, 1 << 27);
    /* send_recv: the same channel rules as all_to_all, without its 2^27
     * waves to sum (seconds) */
    cs_coll_result r = run(&t, CS_OP_SEND_RECV, 1e12, CS_CHOICE_AUTO, CS_ENGINE_ANALYTIC);
    ck_assert(isfinite(r.time_s) && r.time_s > 0);
    /* at most one GPU's NIC (47 GB/s) per rank */
    ck_assert_double_le(r.algbw_Bps, H100_NIC * (1 + 1e-9));
}
END_TEST

/* enqueue.cc addP2pToPlan (2.23-2.30): LL when a peer's bytes <= the op's
 * nChannels x 16 KiB, nChannels chosen first: min(nChannelsMin, divUp(bytes,
 * 512 KiB / 8)) on one node, so one channel up to 64 KiB a peer and LL up
 * to 16 KiB a peer; above, a peer of 2 x 64 KiB runs on 2 channels (32 KiB
 * of LL), never enough. Across nodes there are no LL buffers: Simple. */
START_TEST(protocol_follows_nccls_rule)
{
    cs_topology t = topo("dgx-h100", 8, 1), m = topo("dgx-h100", 16, 2);
    ck_assert_int_eq(run(&t, CS_OP_ALL_TO_ALL, 8 * 16 * 1024.0, CS_CHOICE_AUTO, 0).proto, CS_PROTO_LL);
    ck_assert_int_eq(run(&t, CS_OP_ALL_TO_ALL, 8 * 16 * 1024.0 + 8, CS_CHOICE_AUTO, 0).proto,
                     CS_PROTO_SIMPLE);
    ck_assert_int_eq(run(&t, CS_OP_ALL_TO_ALL, 8 * 128 * 1024.0, CS_CHOICE_AUTO, 0).proto,
                     CS_PROTO_SIMPLE);
    ck_assert_int_eq(run(&t, CS_OP_SEND_RECV, 16 * 1024.0, CS_CHOICE_AUTO, 0).proto, CS_PROTO_LL);
    ck_assert_int_eq(run(&t, CS_OP_SEND_RECV, 16 * 1024.0 + 1, CS_CHOICE_AUTO, 0).proto,
                     CS_PROTO_SIMPLE);
    ck_assert_int_eq(run(&m, CS_OP_ALL_TO_ALL, 1024, CS_CHOICE_AUTO, 0).proto, CS_PROTO_SIMPLE);
    /* forced protocols: Simple anywhere, LL inside a node, never LL128 */
    ck_assert_int_eq(run(&t, CS_OP_ALL_TO_ALL, 1024, CS_PROTO_SIMPLE, 0).proto, CS_PROTO_SIMPLE);
    ck_assert_int_eq(run(&t, CS_OP_ALL_TO_ALL, 64 * MiB, CS_PROTO_LL, 0).proto, CS_PROTO_LL);
    cs_algo_id a;
    cs_proto p;
    cs_diag d;
    ck_assert_int_eq(cs_collective_choose(&m, CS_OP_ALL_TO_ALL, 1024, CS_CHOICE_AUTO, CS_PROTO_LL,
                                          &a, &p, &d), CS_ENOTSUP);
    CS_ASSERT_CONTAINS(d.message, "LL inside one node");
    ck_assert_int_eq(cs_collective_choose(&t, CS_OP_ALL_TO_ALL, 1024, CS_CHOICE_AUTO, CS_PROTO_LL128,
                                          &a, &p, &d), CS_ENOTSUP);
    /* LL: the ring's one-node factor 1/3 */
    ck_assert_double_eq_tol(cs_collective_nccl_bw_factor(&t, CS_OP_ALL_TO_ALL, CS_ALGO_P2P, CS_PROTO_LL),
                            1.0 / 3, 1e-15);
}
END_TEST

/* Only p2p runs the point-to-point ops, and p2p nothing else. */
START_TEST(only_p2p_runs_point_to_point)
{
    cs_topology t = topo("dgx-h100", 16, 2);
    for (int a = 0; a < CS_ALGO_COUNT; a++)
        for (int op = 0; op < CS_OP_COUNT; op++) {
            int p2p_op = op == CS_OP_ALL_TO_ALL || op == CS_OP_SEND_RECV;
            if (p2p_op || a == CS_ALGO_P2P)
                ck_assert_int_eq(cs_collective_supports(a, op), p2p_op && a == CS_ALGO_P2P);
        }
    cs_algo_id a;
    cs_proto p;
    cs_diag d;
    ck_assert_int_eq(cs_collective_choose(&t, CS_OP_ALL_TO_ALL, MiB, CS_ALGO_RING, CS_CHOICE_AUTO,
                                          &a, &p, &d), CS_ENOTSUP);
    CS_ASSERT_CONTAINS(d.message, "all_to_all runs on p2p");
    for (int op = 0; op < CS_OP_COUNT; op++)
        for (double s = 8; s <= 1e10; s *= 64)
            if (cs_collective_choose(&t, op, s, CS_CHOICE_AUTO, CS_CHOICE_AUTO, &a, &p, &d) == 0)
                ck_assert_int_eq(a == CS_ALGO_P2P, op == CS_OP_ALL_TO_ALL || op == CS_OP_SEND_RECV);
}
END_TEST

/* ---- the DES against the closed form ------------------------------------- */

static double rel_err(const cs_topology *t, cs_op op, double bytes, int proto)
{
    cs_coll_result a = run(t, op, bytes, proto, CS_ENGINE_ANALYTIC);
    cs_coll_result e = run(t, op, bytes, proto, CS_ENGINE_DES);
    ck_assert_int_eq(a.proto, e.proto);
    return (e.time_s - a.time_s) / a.time_s;
}

START_TEST(des_equals_closed_form_on_uniform_nodes)
{
    static const struct { const char *preset; int ranks, nodes; } cases[] = {
        {"dgx-h100", 2, 1}, {"dgx-h100", 8, 1}, {"dgx-h100", 16, 2}, {"dgx-h100", 64, 8},
        {"dgx-h100", 8, 8}, {"dgx-a100", 32, 4}, {"pcie-l40s", 4, 1}, {"dgx-h100", 512, 64},
        {"dgx-h100", 10, 10}, {"dgx-h100", 40, 10}, {"dgx-b200", 32, 4},
        {"gb300-nvl72", 8, 2}, {"gb300-nvl72", 144, 36}, {"gb200-nvl72", 16, 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_topology t = topo(cases[i].preset, cases[i].ranks, cases[i].nodes);
        for (int op = CS_OP_ALL_TO_ALL; op <= CS_OP_SEND_RECV; op++)
            for (double s = 1024; s <= 4e9; s *= 32) {
                double e = rel_err(&t, op, s, CS_CHOICE_AUTO);
                ck_assert_msg(fabs(e) <= 1e-9, "%s %d/%d %s %.0f B: DES vs closed form %.3g",
                              cases[i].preset, cases[i].ranks, cases[i].nodes, cs_op_name(op), s, e);
            }
    }
}
END_TEST

/* 256 ranks on 16 channels: one channel per peer, 128 rounds in flight,
 * two waves (the second all across nodes). */
START_TEST(waves_add_up)
{
    cs_topology t = topo("dgx-h100", 256, 32);
    double e = rel_err(&t, CS_OP_ALL_TO_ALL, 1e9, CS_CHOICE_AUTO);
    ck_assert_double_le(fabs(e), 1e-9);
    /* four waves of 64 rounds (8 channels) are slower than two: the waves
     * show */
    double tm, tm8;
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_TO_ALL, 1e9, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm), 0);
    cs_cluster c = t.cluster;
    c.coll.channels = 8; /* 64 rounds in flight */
    cs_topology w = cs_test_topology(&c, 256, 32);
    ck_assert_double_le(fabs(rel_err(&w, CS_OP_ALL_TO_ALL, 1e9, CS_CHOICE_AUTO)), 1e-9);
    ck_assert_int_eq(cs_collective_time(&w, CS_OP_ALL_TO_ALL, 1e9, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm8), 0);
    ck_assert_double_gt(tm8, tm); /* a latency per wave more */
}
END_TEST

/* Channels per network peer (NCCL 2.29, paths.cc): a GPU's one 48 GB/s
 * NIC asks max(1, divUp(48, 14)) = 4, halved while 4 x divUp(nRanks, 8)
 * exceeds p2pnChannels. The inter-node ring's search finds one channel per
 * NIC at 48 GB/s; ncclTopoDupChannels doubles them at 24 GB/s unless
 * there are more than 4; ncclTopoPostset runs each twice. So:
 *   1 rank per node, 10 nodes: 2 search channels -> 4 runtime of 12 GB/s,
 *     4 x 2 > 4 -> 2 per peer: 24 GB/s a peer, half the NIC;
 *   4 per node, 10 nodes: 8 -> 16 of 12 GB/s, 4 x 5 > 16 -> 2: 24 GB/s;
 *   8 per node, 2 nodes: 8 search channels (no dup) -> 16 of 24 GB/s,
 *     4 x 2 <= 16 -> 4: 96 GB/s, so the NIC path (47) binds. */
START_TEST(network_peers_run_on_few_channels)
{
    double S = 1024 * MiB, tm;
    static const struct { int ranks, nodes; double peer_Bps; } cases[] = {
        {10, 10, 24e9}, {20, 10, 24e9}, {40, 10, 24e9}, {16, 2, H100_NIC},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_topology t = topo("dgx-h100", cases[i].ranks, cases[i].nodes);
        ck_assert_int_eq(cs_collective_time(&t, CS_OP_SEND_RECV, S, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm), 0);
        double want = 8.4e-6 + 14e-6 + S / cases[i].peer_Bps;
        ck_assert_msg(fabs(tm - want) <= want * 1e-12, "%d/%d: %.9g s, want %.9g s", cases[i].ranks,
                      cases[i].nodes, tm, want);
        ck_assert_double_le(fabs(rel_err(&t, CS_OP_SEND_RECV, S, CS_CHOICE_AUTO)), 1e-9);
        ck_assert_double_le(fabs(rel_err(&t, CS_OP_ALL_TO_ALL, S, CS_CHOICE_AUTO)), 1e-9);
    }
    /* NCCL_NCHANNELS_PER_NET_PEER's effect without it: a small peer op
     * starts on 1 channel (nChannelsMin) and doubles only while a part
     * exceeds the 128 KiB net chunk: 64 KiB a peer runs at 12 GB/s */
    cs_topology t = topo("dgx-h100", 10, 10);
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_SEND_RECV, 64 * 1024.0, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm), 0);
    ck_assert_double_eq_tol(tm, 8.4e-6 + 14e-6 + 64 * 1024.0 / 12e9, 1e-15);
}
END_TEST

/* Channels on one NVLink node: the one-node ring search (search.cc) gives
 * dgx-h100 (8 x 450 GB/s x 0.824 = 370.8, sm90) 6 channels of 60 GB/s,
 * doubled to 12 and run twice: 24, so p2pnChannels 32; a peer starts on
 * 32 / 8 = 4 channels and doubles while a part exceeds 32 x 512 KiB. Each
 * channel moves ncclTopoNVLinkBw (20.6 GB/s on sm90): a send_recv of
 * 64 MiB runs on 4 channels (82.4 GB/s), 128 MiB on 8, 256 MiB on 16
 * (329.6), 512 MiB on 32 (the port binds). dgx-a100 (sm80, 12 x 20): 6 of
 * 40 GB/s -> 24 -> 32, 4 channels of 20 GB/s. gb300-nvl72's tray (sm103,
 * 721.8 GB/s): 8 of 90 -> 16 -> 32; 4 ranks start on 8 channels of
 * 40.1 GB/s. Each part's last step (512 KiB, or the part when smaller:
 * 1 MiB on 4 channels is 256 KiB a part) is copied out of the FIFO after
 * the send, at one channel's rate. The DES agrees. */
START_TEST(nvlink_peers_run_on_few_channels)
{
    static const struct { const char *preset; int ranks; double bytes, peer_Bps, fill_s; } cases[] = {
        {"dgx-h100", 8, 64 * MiB, 4 * 20.6e9, H100_FILL},
        {"dgx-h100", 8, 128 * MiB, 8 * 20.6e9, H100_FILL},
        {"dgx-h100", 8, 256 * MiB, 16 * 20.6e9, H100_FILL},
        {"dgx-h100", 8, 512 * MiB, H100_PORT, H100_FILL},
        {"dgx-h100", 8, 1 * MiB, 4 * 20.6e9, H100_FILL / 2},
        {"dgx-a100", 8, 64 * MiB, 4 * 20.0e9, 512 * 1024.0 / 20.0e9},
        {"gb300-nvl72", 4, 64 * MiB, 8 * 40.1e9, 512 * 1024.0 / 40.1e9},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_topology t = topo(cases[i].preset, cases[i].ranks, 1);
        double tm, lat;
        ck_assert_int_eq(cs_collective_time(&t, CS_OP_SEND_RECV, cases[i].bytes, CS_ALGO_P2P,
                                            CS_PROTO_SIMPLE, &tm), 0);
        ck_assert_int_eq(cs_collective_time(&t, CS_OP_SEND_RECV, 0, CS_ALGO_P2P, CS_PROTO_SIMPLE, &lat),
                         0);
        double want = lat + cases[i].fill_s + cases[i].bytes / cases[i].peer_Bps;
        ck_assert_msg(fabs(tm - want) <= want * 1e-12, "%s %.0f B: %.9g s, want %.9g s", cases[i].preset,
                      cases[i].bytes, tm, want);
        ck_assert_double_le(fabs(rel_err(&t, CS_OP_SEND_RECV, cases[i].bytes, CS_CHOICE_AUTO)), 1e-9);
        ck_assert_double_le(fabs(rel_err(&t, CS_OP_ALL_TO_ALL, cases[i].bytes, CS_CHOICE_AUTO)), 1e-9);
    }
    /* H800 (8 NVLinks: 8 x 25 GB/s x 0.824 = 164.8): the search keeps 4 of
     * 40 GB/s (better than 2 x 60 and 3 x 50), doubled to 8 (on sm90
     * ncclTopoDupChannels skips only more than 4 channels below 50 GB/s)
     * and run twice: 16, as NCCL logs on H800 ("16 coll channels, ... 16
     * p2p channels, 16 p2p channels per peer", NVIDIA/nccl issue 892); a
     * peer of 16 MiB starts on 16 / 8 = 2 channels: 41.2 GB/s (dgx-h100:
     * 4, 82.4) */
    cs_cluster h800 = cs_test_cluster("dgx-h100");
    h800.intra.bw_Bps = 200e9;
    cs_topology t8 = cs_test_topology(&h800, 8, 1);
    double tm16, lat16;
    ck_assert_int_eq(cs_collective_time(&t8, CS_OP_SEND_RECV, 16 * MiB, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm16),
                     0);
    ck_assert_int_eq(cs_collective_time(&t8, CS_OP_SEND_RECV, 0, CS_ALGO_P2P, CS_PROTO_SIMPLE, &lat16), 0);
    double want16 = lat16 + H100_FILL + 16 * MiB / (2 * 20.6e9);
    ck_assert_double_eq_tol(tm16, want16, want16 * 1e-12);
    /* an all_to_all's 8 rounds fill the 32 channels: 7 peers x 4 x 20.6
     * GB/s exceed the port, which binds */
    cs_topology t = topo("dgx-h100", 8, 1);
    double tm, S = 256 * MiB;
    ck_assert_int_eq(cs_collective_time(&t, CS_OP_ALL_TO_ALL, S, CS_ALGO_P2P, CS_PROTO_SIMPLE, &tm), 0);
    ck_assert_double_eq_tol(tm, 8.4e-6 + 3.4e-6 + H100_FILL + (S / 8) / (H100_PORT / 7), tm * 1e-12);
}
END_TEST

START_TEST(closed_form_bounds_uneven_nodes)
{
    static const int cases[][2] = {{13, 2}, {13, 3}, {20, 3}, {9, 2}, {30, 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cs_topology t = topo("dgx-h100", cases[i][0], cases[i][1]);
        for (double s = 1024; s <= 4e9; s *= 32) {
            double e = rel_err(&t, CS_OP_ALL_TO_ALL, s, CS_CHOICE_AUTO);
            ck_assert_msg(e <= 1e-9, "%d/%d %.0f B: DES above the bound by %.3g", cases[i][0],
                          cases[i][1], s, e);
        }
    }
}
END_TEST

/* The deliberately wrong case: a slow NIC on node 1 (des.links) slows
 * every flow into and out of that node; the closed form, which does not
 * read overrides, must be caught off by the comparison. */
START_TEST(a_slow_nic_only_the_des_sees)
{
    const char *base = cs_presets_cluster_yaml("dgx-h100", NULL);
    char *text = cs_test_replace(base, "\nnodes: 1 ", "\nnodes: 2 ");
    char buf[16384];
    snprintf(buf, sizeof buf, "%s\ndes:\n  links:\n    - {node: 1, nic: 0, bandwidth: 5GB/s}\n", text);
    free(text);
    cs_cluster c = cs_test_cluster_yaml("slow.yaml", buf);
    cs_topology t = cs_test_topology(&c, 16, 2);
    double e = rel_err(&t, CS_OP_ALL_TO_ALL, 256 * MiB, CS_CHOICE_AUTO);
    ck_assert_msg(e > 0.05, "a slow NIC must slow the DES: %.3g", e);
    e = rel_err(&t, CS_OP_SEND_RECV, 256 * MiB, CS_CHOICE_AUTO);
    ck_assert_msg(e > 0.05, "a slow NIC must slow the DES: %.3g", e);
}
END_TEST

/* ---- names, factors, logs ---------------------------------------------- */

START_TEST(op_names_and_factors)
{
    static const struct { const char *s; cs_op op; } ok[] = {
        {"all_to_all", CS_OP_ALL_TO_ALL}, {"alltoall", CS_OP_ALL_TO_ALL},
        {"AllToAll", CS_OP_ALL_TO_ALL},  {"alltoall_perf", CS_OP_ALL_TO_ALL},
        {"all_to_all_perf", CS_OP_ALL_TO_ALL}, {"send_recv", CS_OP_SEND_RECV},
        {"sendrecv", CS_OP_SEND_RECV},  {"sendrecv_perf", CS_OP_SEND_RECV},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        cs_op op;
        ck_assert_msg(cs_op_parse(ok[i].s, &op) == 0, "%s", ok[i].s);
        ck_assert_int_eq(op, ok[i].op);
    }
    cs_op op;
    ck_assert_int_eq(cs_op_parse("all2all", &op), CS_EINVAL);
    ck_assert_int_eq(cs_op_parse("alltoall_perff", &op), CS_EINVAL);
    ck_assert_str_eq(cs_op_name(CS_OP_ALL_TO_ALL), "all_to_all");
    ck_assert_str_eq(cs_op_name(CS_OP_SEND_RECV), "send_recv");
    ck_assert_double_eq_tol(cs_op_busbw_factor(CS_OP_ALL_TO_ALL, 8), 7.0 / 8, 1e-15);
    ck_assert_double_eq_tol(cs_op_busbw_factor(CS_OP_SEND_RECV, 8), 1.0, 1e-15);
    ck_assert_str_eq(cs_algo_name(CS_ALGO_P2P), "p2p");
}
END_TEST

START_TEST(nccl_tests_logs_of_alltoall_and_sendrecv)
{
    static const char a2a[] =
        "# nThread 1 nGpus 1 minBytes 1024 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20\n"
        "#  Rank  0 Group  0 Pid   1 on      hosta device  0 [0x18] NVIDIA H100 80GB HBM3\n"
        "#  Rank  1 Group  0 Pid   2 on      hosta device  1 [0x2a] NVIDIA H100 80GB HBM3\n"
        "#  Rank  2 Group  0 Pid   3 on      hostb device  0 [0x18] NVIDIA H100 80GB HBM3\n"
        "#  Rank  3 Group  0 Pid   4 on      hostb device  1 [0x2a] NVIDIA H100 80GB HBM3\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "        1024            64     float    none      -1    20.11    0.05    0.04      0    19.90    0.05    0.04    N/A\n"
        "     1048576         65536     float    none      -1    61.20   17.13   12.85      0    60.90   17.22   12.91    N/A\n";
    cs_meas_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    ck_assert_msg(cs_meas_read_nccl_tests_string(&s, "alltoall_perf.log", a2a, strlen(a2a), &d) == 0,
                  "%s", d.message);
    ck_assert_int_eq((int)s.n, 2);
    ck_assert_int_eq(s.rows[1].op, CS_OP_ALL_TO_ALL);
    ck_assert_int_eq(s.rows[1].ranks, 4);
    ck_assert_int_eq(s.rows[1].nodes, 2);
    ck_assert_double_eq_tol(s.rows[1].size_bytes, 1048576, 0.5);
    cs_meas_free(&s);
    /* the op from the file name */
    s = (cs_meas_set){0};
    ck_assert_int_eq(cs_meas_read_nccl_tests_string(&s, "h100_sendrecv.log", a2a, strlen(a2a), &d), 0);
    ck_assert_int_eq(s.rows[0].op, CS_OP_SEND_RECV);
    cs_meas_free(&s);
    /* no rank lines: the op from the command, the ranks from busbw/algbw
     * (all_to_all's (n-1)/n: 0.875 -> 8 ranks) */
    static const char named[] =
        "# alltoall_perf -b 8M -e 8M\n"
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
        "     8388608        262144     float    none      -1    80.00  104.86   91.75      0    80.00  104.86   91.75    N/A\n";
    s = (cs_meas_set){0};
    ck_assert_msg(cs_meas_read_nccl_tests_string(&s, "x.log", named, strlen(named), &d) == 0,
                  "%s", d.message);
    ck_assert_int_eq((int)s.n, 1);
    ck_assert_int_eq(s.rows[0].op, CS_OP_ALL_TO_ALL);
    ck_assert_int_eq(s.rows[0].ranks, 8);
    cs_meas_free(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("p2p");
    TCase *c = tcase_create("closed-form");
    tcase_add_test(c, all_to_all_one_node_is_alpha_beta);
    tcase_add_test(c, all_to_all_across_nodes_shares_the_nics);
    tcase_add_test(c, the_node_network_binds_when_nics_are_few);
    tcase_add_test(c, send_recv_is_one_hop);
    tcase_add_test(c, protocol_follows_nccls_rule);
    tcase_add_test(c, only_p2p_runs_point_to_point);
    suite_add_tcase(s, c);
    c = tcase_create("des");
    tcase_add_test(c, des_equals_closed_form_on_uniform_nodes);
    tcase_add_test(c, waves_add_up);
    tcase_add_test(c, network_peers_run_on_few_channels);
    tcase_add_test(c, nvlink_peers_run_on_few_channels);
    tcase_add_test(c, closed_form_bounds_uneven_nodes);
    tcase_add_test(c, a_slow_nic_only_the_des_sees);
    suite_add_tcase(s, c);
    c = tcase_create("names");
    tcase_add_test(c, channel_rules_hold_at_the_largest_job);
    tcase_add_test(c, op_names_and_factors);
    tcase_add_test(c, nccl_tests_logs_of_alltoall_and_sendrecv);
    suite_add_tcase(s, c);
    return cs_test_run(s);
}
