/* SPDX-License-Identifier: MIT */
/*
 * test-topology.c - rank placement and link capacities of cs_topology:
 * what --ranks / --nodes mean, which node and local index each rank gets
 * (ranks in node order; with N not divisible by K the first N mod K
 * nodes hold one more), the effective capacities derived from the
 * cluster, and the errors for layouts the cluster cannot hold.
 * Placement is checked against a plain reference (a list of ranks per
 * node, filled in order) for many (N, K), with a deliberately wrong
 * reference that the comparison must catch.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "coll/topology.h"
#include "config/config.h"
#include "testutil.h"

/* 4 GPUs per node, 2 NICs of 100 GB/s at 0.9, NVLink at 0.8. */
static const char *base_yaml =
    "name: t4\nnodes: 8\ngpus_per_node: 4\n"
    "gpu: {model: G, memory: 80GiB, compute_capability: 90, tflops: {bf16: 1000}, "
    "hbm_bandwidth: 3TB/s}\n"
    "intra: {fabric: nvswitch, bandwidth: 400GB/s, efficiency: 0.8}\n"
    "inter: {nics_per_node: 2, nic_bandwidth: 100GB/s, efficiency: 0.9%s}\n%s";

static cs_cluster cluster(const char *inter_extra, const char *tail)
{
    char buf[2048];
    snprintf(buf, sizeof buf, base_yaml, inter_extra, tail);
    return cs_test_cluster_yaml("t.yaml", buf);
}

/* Builds a layout that must fail; returns the message. */
static const char *fails(const cs_cluster *c, int ranks, int nodes, cs_diag *d)
{
    cs_topology t;
    ck_assert_int_eq(cs_topology_build(c, ranks, nodes, &t, d), CS_EINVAL);
    return d->message;
}

START_TEST(neither_given_takes_the_cluster)
{
    cs_cluster c = cluster("", "");
    cs_topology t = cs_test_topology(&c, 0, 0);
    ck_assert_int_eq(t.nodes, 8);
    ck_assert_int_eq(t.ranks, 32);
    ck_assert_int_eq(t.ppn_max, 4);
    ck_assert(t.uniform);
    ck_assert(!t.heterogeneous);
}
END_TEST

START_TEST(ranks_alone_take_the_fewest_nodes)
{
    cs_cluster c = cluster("", "");
    cs_topology t = cs_test_topology(&c, 16, 0);
    ck_assert_int_eq(t.nodes, 4);
    for (int r = 0; r < 16; r++) {
        ck_assert_int_eq(cs_topology_node_of(&t, r), r / 4);
        ck_assert_int_eq(cs_topology_local_of(&t, r), r % 4);
    }
    /* 6 ranks need 2 nodes and spread over them evenly: 3 + 3 */
    t = cs_test_topology(&c, 6, 0);
    ck_assert_int_eq(t.nodes, 2);
    ck_assert_int_eq(t.ppn_max, 3);
    ck_assert_int_eq(cs_topology_ranks_on(&t, 0), 3);
    ck_assert_int_eq(cs_topology_node_of(&t, 3), 1);
    /* more nodes than the cluster describes are allowed: the YAML's node
     * count is a default, the CLI's --ranks / --nodes scale it */
    t = cs_test_topology(&c, 4096, 0);
    ck_assert_int_eq(t.nodes, 1024);
}
END_TEST

START_TEST(nodes_alone_take_every_gpu)
{
    cs_cluster c = cluster("", "");
    cs_topology t = cs_test_topology(&c, 0, 3);
    ck_assert_int_eq(t.ranks, 12);
    ck_assert_int_eq(t.ppn_max, 4);
}
END_TEST

START_TEST(nodes_and_ranks_spread_first_nodes_get_one_more)
{
    cs_cluster c = cluster("", "");
    cs_topology t = cs_test_topology(&c, 10, 4); /* 3, 3, 2, 2 */
    ck_assert(!t.uniform);
    ck_assert_int_eq(t.ppn_max, 3);
    static const int node[10] = {0, 0, 0, 1, 1, 1, 2, 2, 3, 3};
    static const int local[10] = {0, 1, 2, 0, 1, 2, 0, 1, 0, 1};
    for (int r = 0; r < 10; r++) {
        ck_assert_int_eq(cs_topology_node_of(&t, r), node[r]);
        ck_assert_int_eq(cs_topology_local_of(&t, r), local[r]);
    }
    ck_assert_int_eq(cs_topology_ranks_on(&t, 1), 3);
    ck_assert_int_eq(cs_topology_ranks_on(&t, 2), 2);
}
END_TEST

/* The reference: node k holds ranks first..first+count-1, counts filled
 * in order with the remainder on the first nodes; `wrong` puts it on the
 * last nodes instead. Returns 1 when cs_topology agrees everywhere. */
static int matches_reference(const cs_topology *t, int wrong)
{
    int n = t->ranks, k = t->nodes, first = 0;
    for (int node = 0; node < k; node++) {
        int extra = wrong ? node >= k - n % k : node < n % k;
        int count = n / k + extra;
        if (cs_topology_ranks_on(t, node) != count) return 0;
        for (int i = 0; i < count; i++)
            if (cs_topology_node_of(t, first + i) != node || cs_topology_local_of(t, first + i) != i)
                return 0;
        first += count;
    }
    return first == n;
}

START_TEST(placement_matches_a_plain_reference)
{
    cs_cluster c = cluster("", "");
    int uneven = 0;
    for (int k = 1; k <= 9; k++)
        for (int n = k; n <= 4 * k; n++) {
            cs_topology t = cs_test_topology(&c, n, k);
            ck_assert_msg(matches_reference(&t, 0), "%d ranks on %d nodes", n, k);
            ck_assert_int_eq(t.uniform, n % k == 0);
            ck_assert_int_eq(t.ppn_max, (n + k - 1) / k);
            /* the wrong reference differs exactly when the remainder matters */
            if (n % k) {
                ck_assert_msg(!matches_reference(&t, 1), "%d ranks on %d nodes", n, k);
                uneven++;
            }
        }
    ck_assert_int_gt(uneven, 50);
}
END_TEST

START_TEST(capacities_follow_the_cluster)
{
    cs_cluster c = cluster("", "");
    cs_topology t = cs_test_topology(&c, 8, 2);
    ck_assert_double_eq_tol(t.port_Bps, 400e9 * 0.8, 1);
    ck_assert_double_eq_tol(t.nic_Bps, 100e9 * 0.9, 1);
    ck_assert_double_eq_tol(t.node_net_Bps, 2 * 100e9 * 0.9, 1);
    ck_assert_int_eq(t.intra_hw, CS_HW_NVLINK);
    ck_assert_int_eq(t.arch, CS_ARCH_HOPPER);
    /* a fat-tree core taper divides the node's network, rail-optimized not */
    cs_cluster ft = cluster(", topology: fat-tree, oversubscription: 2", "");
    cs_topology f = cs_test_topology(&ft, 8, 2);
    ck_assert_double_eq_tol(f.node_net_Bps, 2 * 100e9 * 0.9 / 2, 1);
    ck_assert_double_eq_tol(f.nic_Bps, 100e9 * 0.9, 1);
    cs_cluster ro = cluster(", oversubscription: 2", "");
    ck_assert_double_eq_tol(cs_test_topology(&ro, 8, 2).node_net_Bps, 2 * 100e9 * 0.9, 1);
    /* the topology carries its own copy of the cluster */
    ck_assert_int_eq(t.cluster.gpus_per_node, 4);
}
END_TEST

START_TEST(pcie_and_ada_gpus_pick_nccl_rows)
{
    cs_cluster c = cs_test_cluster("pcie-l40s");
    cs_topology t = cs_test_topology(&c, 0, 0);
    ck_assert_int_eq(t.intra_hw, CS_HW_PCI);
    ck_assert_int_eq(t.arch, CS_ARCH_AMPERE); /* sm_89 uses NCCL's Ampere row */
    ck_assert_int_eq(cs_ncclmodel_arch(70), CS_ARCH_VOLTA);
    ck_assert_int_eq(cs_ncclmodel_arch(100), CS_ARCH_BLACKWELL);
}
END_TEST

START_TEST(des_overrides_mark_it_heterogeneous)
{
    cs_cluster c = cluster("", "des:\n  stragglers:\n    - {rank: 5, slowdown: 2}\n");
    ck_assert(cs_test_topology(&c, 8, 2).heterogeneous);
    cs_cluster l = cluster("", "des:\n  links:\n    - {node: 1, nic: 0, bandwidth: 1GB/s}\n");
    ck_assert(cs_test_topology(&l, 8, 2).heterogeneous);
}
END_TEST

START_TEST(layouts_the_cluster_cannot_hold_fail)
{
    cs_cluster c = cluster("", "");
    cs_diag d;
    ck_assert_str_eq(fails(&c, 3, 4, &d),
                     "3 ranks cannot occupy 4 nodes (at least one rank per node)");
    ck_assert_str_eq(fails(&c, 9, 2, &d),
                     "9 ranks on 2 nodes needs 5 GPUs per node, but 't4' has 4");
    cs_cluster one = cs_test_cluster("pcie-l40s");
    CS_ASSERT_CONTAINS(fails(&one, 0, 2, &d), "describes no inter-node network");
}
END_TEST

START_TEST(overrides_must_name_present_ranks)
{
    cs_cluster c = cluster("", "des:\n  links:\n    - {node: 5, gpu: 0, bandwidth: 1GB/s}\n");
    cs_diag d;
    ck_assert_str_eq(fails(&c, 8, 2, &d),
                     "link override names node 5 gpu 0, absent with 8 ranks on 2 nodes");
    ck_assert_int_gt(d.line, 0); /* where the override was written */
    /* a GPU the layout leaves empty: 6 ranks on 2 nodes use GPUs 0..2 */
    cs_cluster g = cluster("", "des:\n  links:\n    - {node: 0, gpu: 3, bandwidth: 1GB/s}\n");
    CS_ASSERT_CONTAINS(fails(&g, 6, 2, &d), "absent with 6 ranks on 2 nodes");
    ck_assert(cs_test_topology(&g, 8, 2).heterogeneous);
    cs_cluster s = cluster("", "des:\n  stragglers:\n    - {rank: 20}\n");
    ck_assert_str_eq(fails(&s, 16, 0, &d), "straggler rank 20 does not exist with 16 ranks");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("topology");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, neither_given_takes_the_cluster);
    tcase_add_test(tc, ranks_alone_take_the_fewest_nodes);
    tcase_add_test(tc, nodes_alone_take_every_gpu);
    tcase_add_test(tc, nodes_and_ranks_spread_first_nodes_get_one_more);
    tcase_add_test(tc, placement_matches_a_plain_reference);
    tcase_add_test(tc, capacities_follow_the_cluster);
    tcase_add_test(tc, pcie_and_ada_gpus_pick_nccl_rows);
    tcase_add_test(tc, des_overrides_mark_it_heterogeneous);
    tcase_add_test(tc, layouts_the_cluster_cannot_hold_fail);
    tcase_add_test(tc, overrides_must_name_present_ranks);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
