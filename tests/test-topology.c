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

#include "coll/deslinks.h"
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

/* An A100-like node: 8 GPUs, 8 HDR NICs (200 Gb/s = 25 GB/s) at
 * efficiency 1; inter_extra adds inter keys (the PCIe path), tail more. */
static cs_cluster a100_like(const char *inter_extra, const char *tail)
{
    char buf[2048];
    snprintf(buf, sizeof buf,
             "name: a8\nnodes: 2\ngpus_per_node: 8\n"
             "gpu: {model: G, memory: 80GiB, compute_capability: 80, tflops: {bf16: 312}, "
             "hbm_bandwidth: 2TB/s}\n"
             "intra: {fabric: nvswitch, bandwidth: 300GB/s}\n"
             "inter: {nics_per_node: 8, nic_bandwidth: 200Gbps%s}\n%s",
             inter_extra, tail);
    return cs_test_cluster_yaml("a8.yaml", buf);
}

START_TEST(the_pcie_path_caps_each_nic)
{
    /* HDR's 25 GB/s behind NCCL's Gen4 x16 rate, 24 GB/s (topo.cc), at
     * efficiency 1 */
    cs_cluster c = a100_like(", pcie: gen4x16", "");
    ck_assert_double_eq_tol(c.inter.pcie_Bps, 24e9, 1e-3);
    cs_topology t = cs_test_topology(&c, 16, 2);
    ck_assert_double_eq_tol(t.nic_Bps, 24e9, 1e-3);
    ck_assert_double_eq_tol(t.node_net_Bps, 8 * 24e9, 1e-3);
    ck_assert_double_eq_tol(t.gpu_net_Bps, 24e9, 1e-3);
    ck_assert_double_eq_tol(cs_topology_net_Bps(&t, 1), 8 * 24e9, 1e-3);
    /* the dgx-a100 preset: 192 GB/s per node from the path, not 200 */
    cs_cluster a = cs_test_cluster("dgx-a100");
    cs_topology ta = cs_test_topology(&a, 16, 2);
    ck_assert_double_eq_tol(ta.nic_Bps, 24e9, 1e-3);
    ck_assert_double_eq_tol(ta.node_net_Bps, 192e9, 1e-3);
    /* a path faster than the line leaves line x efficiency; the
     * efficiency multiplies the path where it binds */
    cs_cluster g5 = a100_like(", pcie: gen5x16, efficiency: 0.9", "");
    ck_assert_double_eq_tol(cs_test_topology(&g5, 16, 2).nic_Bps, 25e9 * 0.9, 1e-3);
    cs_cluster g4 = a100_like(", pcie: gen4x16, efficiency: 0.9", "");
    ck_assert_double_eq_tol(cs_test_topology(&g4, 16, 2).nic_Bps, 24e9 * 0.9, 1e-3);
    /* a rate instead of a link name; gen3x16 is NCCL's PCI_BW, 12 GB/s */
    cs_cluster r = a100_like(", pcie: 20GB/s", "");
    ck_assert_double_eq_tol(cs_test_topology(&r, 16, 2).nic_Bps, 20e9, 1e-3);
    cs_cluster g3 = a100_like(", pcie: gen3x16", "");
    ck_assert_double_eq_tol(cs_test_topology(&g3, 16, 2).nic_Bps, 12e9, 1e-3);
    /* a des.links NIC is capped too: 50 GB/s behind the 24 GB/s path,
     * 12.5 GB/s below it */
    cs_cluster o = a100_like(", pcie: gen4x16", "des:\n  links:\n"
                                                "    - {node: 0, nic: 0, bandwidth: 400Gbps}\n"
                                                "    - {node: 1, nic: 3, bandwidth: 100Gbps}\n");
    cs_topology to = cs_test_topology(&o, 16, 2);
    ck_assert_double_eq_tol(cs_topology_net_Bps(&to, 0), 8 * 24e9, 1e-3);
    ck_assert_double_eq_tol(cs_topology_net_Bps(&to, 1), 7 * 24e9 + 12.5e9, 1e-3);
}
END_TEST

START_TEST(fewer_ranks_than_nics_are_capped_by_their_gpu_links)
{
    /* 2 ranks on each node of 8 NICs: the NICs they drive share their
     * two Gen4 links (search.cc followPath), 48 GB/s, not 8 x 24 */
    cs_cluster c = a100_like(", pcie: gen4x16", "");
    cs_topology t = cs_test_topology(&c, 4, 2);
    ck_assert_double_eq_tol(t.nic_Bps, 24e9, 1e-3);
    ck_assert_double_eq_tol(t.node_net_Bps, 2 * 24e9, 1e-3);
    ck_assert_double_eq_tol(t.gpu_net_Bps, 24e9, 1e-3);
    /* the DES's links: per node, by the ranks on it (3 + 2) */
    cs_topology u = cs_test_topology(&c, 5, 2);
    ck_assert_double_eq_tol(cs_topology_net_Bps(&u, 0), 3 * 24e9, 1e-3);
    ck_assert_double_eq_tol(cs_topology_net_Bps(&u, 1), 2 * 24e9, 1e-3);
    ck_assert_double_eq_tol(u.node_net_Bps, 2 * 24e9, 1e-3); /* the fewest bound it */
    ck_assert_double_eq_tol(cs_deslinks_net_ch_Bps(&u, 0), 3 * 24e9 / c.coll.channels, 1e-3);
    /* one rank per dgx-h100 node: its Gen5 link, 47 of NCCL's 48 GB/s,
     * not 8 NICs' 376 */
    cs_cluster h = cs_test_cluster("dgx-h100");
    cs_topology th = cs_test_topology(&h, 2, 2);
    ck_assert_double_eq_tol(th.nic_Bps, 47e9, 1e-3);
    ck_assert_double_eq_tol(th.node_net_Bps, 47e9, 1e-3);
    ck_assert_double_eq_tol(cs_test_topology(&h, 16, 2).node_net_Bps, 8 * 47e9, 1e-3);
    /* the efficiency scales the GPU links' cap too (a fit of it moves the
     * network in every regime) */
    cs_cluster e = a100_like(", pcie: gen4x16, efficiency: 0.5", "");
    cs_topology te = cs_test_topology(&e, 4, 2);
    ck_assert_double_eq_tol(te.nic_Bps, 12e9, 1e-3);
    ck_assert_double_eq_tol(te.node_net_Bps, 2 * 12e9, 1e-3);
    ck_assert_double_eq_tol(te.gpu_net_Bps, 12e9, 1e-3);
    /* under a fat-tree taper the cap applies first, then the taper */
    cs_cluster f = a100_like(", pcie: gen4x16, topology: fat-tree, oversubscription: 2", "");
    ck_assert_double_eq_tol(cs_test_topology(&f, 4, 2).node_net_Bps, 2 * 24e9 / 2, 1e-3);
}
END_TEST

START_TEST(without_the_key_the_path_does_not_limit)
{
    /* a YAML written before inter.pcie: line x efficiency per NIC, every
     * NIC counted at one rank per node, bit for bit as before */
    cs_cluster c = a100_like(", efficiency: 0.96", "");
    ck_assert(c.inter.pcie_Bps == 0);
    cs_topology t = cs_test_topology(&c, 2, 2);
    ck_assert(t.nic_Bps == 25e9 * 0.96);
    ck_assert(t.node_net_Bps == 25e9 * 0.96 * 8);
    ck_assert(t.gpu_net_Bps == 25e9 * 0.96 * 8 * (1.0 / 8));
    ck_assert(cs_topology_net_Bps(&t, 0) == t.node_net_Bps);
    ck_assert(cs_topology_nic_rate_Bps(&c, 100e9) == 100e9 * 0.96);
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

/* NVLink domains (intra.domain_size): trays of one domain are one node to
 * NCCL (MNNVL), the trays' NICs together; beyond a domain the network.
 * The deliberately wrong reading, each tray a node, must differ. */
START_TEST(trays_of_one_nvlink_domain_are_one_node)
{
    cs_cluster c = cs_test_cluster("gb300-nvl72");
    ck_assert_int_eq(c.intra.domain_size, 72);
    cs_topology t = cs_test_topology(&c, 8, 2); /* 2 trays of 4 */
    ck_assert_int_eq(t.nodes, 1);
    ck_assert_int_eq(t.trays, 2);
    ck_assert_int_eq(t.ppn_max, 8);
    ck_assert_int_eq(t.cluster.inter.nics_per_node, 8);
    ck_assert_int_eq(t.cluster.gpus_per_node, 8);
    t = cs_test_topology(&c, 144, 36); /* two racks */
    ck_assert_int_eq(t.nodes, 2);
    ck_assert_int_eq(t.ppn_max, 72);
    ck_assert_int_eq(t.cluster.inter.nics_per_node, 72);
    ck_assert_double_eq_tol(t.gpu_net_Bps, 0.94 * 100e9, 1e-3);
    t = cs_test_topology(&c, 72, 18); /* one rack, ranks alone also fill it */
    ck_assert_int_eq(t.nodes, 1);
    cs_topology r = cs_test_topology(&c, 72, 0);
    ck_assert_int_eq(r.nodes, 1);
    /* the wrong reading: without the key, 2 trays are 2 nodes */
    cs_cluster apart = c;
    apart.intra.domain_size = 0;
    ck_assert_int_ne(cs_test_topology(&apart, 8, 2).nodes, 1);
    /* a domain that is not whole trays */
    cs_diag d;
    c.intra.domain_size = 70;
    ck_assert_str_eq(fails(&c, 8, 2, &d),
                     "intra.domain_size 70 of 'gb300-nvl72' is not a multiple of gpus_per_node 4");
    c.intra.domain_size = 72; /* more ranks than a tray holds */
    ck_assert_str_eq(fails(&c, 12, 2, &d),
                     "12 ranks on 2 nodes needs 6 GPUs per node, but 'gb300-nvl72' has 4");
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
    tcase_add_test(tc, the_pcie_path_caps_each_nic);
    tcase_add_test(tc, fewer_ranks_than_nics_are_capped_by_their_gpu_links);
    tcase_add_test(tc, without_the_key_the_path_does_not_limit);
    tcase_add_test(tc, pcie_and_ada_gpus_pick_nccl_rows);
    tcase_add_test(tc, des_overrides_mark_it_heterogeneous);
    tcase_add_test(tc, layouts_the_cluster_cannot_hold_fail);
    tcase_add_test(tc, overrides_must_name_present_ranks);
    tcase_add_test(tc, trays_of_one_nvlink_domain_are_one_node);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
