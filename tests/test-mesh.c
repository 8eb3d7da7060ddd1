/* SPDX-License-Identifier: MIT */
/*
 * test-mesh.c - the device mesh (coll/mesh.h): rank <-> coordinates
 * round trips; group sizes, colours, indices and strides checked against
 * a plain reference (every pair of ranks compared coordinate by
 * coordinate), with a deliberately wrong reference the comparison must
 * catch; contiguity; how many sibling groups share a node; and the
 * topologies groups are priced on over a 2-node cluster (the world as
 * laid out, a packed group, a strided group splitting its nodes' NICs).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "coll/mesh.h"
#include "testutil.h"

/* Megatron's order, innermost first: tp 2, dp_shard 3, dp_replicate 4. */
static cs_mesh mesh_2x3x4(void)
{
    cs_mesh m;
    cs_mesh_init(&m);
    ck_assert_int_eq(cs_mesh_add(&m, "tp", 2), 0);
    ck_assert_int_eq(cs_mesh_add(&m, "dp_shard", 3), 1);
    ck_assert_int_eq(cs_mesh_add(&m, "dp_replicate", 4), 2);
    return m;
}

START_TEST(empty_mesh_is_one_rank)
{
    cs_mesh m;
    cs_mesh_init(&m);
    ck_assert_int_eq(m.ranks, 1);
    ck_assert_int_eq(cs_mesh_group_size(&m, cs_mesh_all(&m)), 1);
    ck_assert_int_eq(cs_mesh_group_colour(&m, cs_mesh_all(&m), 0), 0);
    ck_assert_int_eq(cs_mesh_find(&m, "tp"), -1);
}
END_TEST

START_TEST(strides_are_products_of_inner_sizes)
{
    cs_mesh m = mesh_2x3x4();
    ck_assert_int_eq(m.ranks, 24);
    ck_assert_int_eq(m.dim[0].stride, 1);
    ck_assert_int_eq(m.dim[1].stride, 2);
    ck_assert_int_eq(m.dim[2].stride, 6);
    ck_assert_int_eq(cs_mesh_find(&m, "dp_shard"), 1);
    ck_assert_int_eq(cs_mesh_all(&m), 7u);
}
END_TEST

START_TEST(rank_coords_round_trip)
{
    cs_mesh m = mesh_2x3x4();
    int c[CS_MESH_MAX_DIMS];
    for (int r = 0; r < m.ranks; r++) {
        cs_mesh_coords(&m, r, c);
        ck_assert_int_eq(cs_mesh_rank(&m, c), r);
    }
    cs_mesh_coords(&m, 13, c); /* 13 = 1 + 0 x 2 + 2 x 6 */
    ck_assert_int_eq(c[0], 1);
    ck_assert_int_eq(c[1], 0);
    ck_assert_int_eq(c[2], 2);
}
END_TEST

/* The reference: ranks a and b are in one group of dims iff their
 * coordinates outside dims agree. */
static int same_group(const cs_mesh *m, cs_mesh_dims dims, int a, int b)
{
    int ca[CS_MESH_MAX_DIMS], cb[CS_MESH_MAX_DIMS];
    cs_mesh_coords(m, a, ca);
    cs_mesh_coords(m, b, cb);
    for (int i = 0; i < m->ndims; i++)
        if (!(dims & CS_MESH_BIT(i)) && ca[i] != cb[i]) return 0;
    return 1;
}

/* Deliberately wrong: ignores the outermost dimension. */
static int same_group_wrong(const cs_mesh *m, cs_mesh_dims dims, int a, int b)
{
    return same_group(m, dims | CS_MESH_BIT(m->ndims - 1), a, b);
}

/* Counts the pairs where colours disagree with a reference. */
static int colour_mismatches(const cs_mesh *m, cs_mesh_dims dims,
                             int (*ref)(const cs_mesh *, cs_mesh_dims, int, int))
{
    int bad = 0;
    for (int a = 0; a < m->ranks; a++)
        for (int b = 0; b < m->ranks; b++)
            bad += (cs_mesh_group_colour(m, dims, a) == cs_mesh_group_colour(m, dims, b)) !=
                   ref(m, dims, a, b);
    return bad;
}

START_TEST(colours_match_the_reference)
{
    cs_mesh m = mesh_2x3x4();
    for (cs_mesh_dims dims = 0; dims <= cs_mesh_all(&m); dims++) {
        ck_assert_msg(colour_mismatches(&m, dims, same_group) == 0, "dims %u", dims);
        int size = cs_mesh_group_size(&m, dims), groups = m.ranks / size;
        /* colours are 0..groups-1, indices 0..size-1, and (colour, index) names one rank */
        int seen[24] = {0};
        for (int r = 0; r < m.ranks; r++) {
            int c = cs_mesh_group_colour(&m, dims, r), i = cs_mesh_group_index(&m, dims, r);
            ck_assert_int_lt(c, groups);
            ck_assert_int_lt(i, size);
            ck_assert_int_eq(seen[c * size + i]++, 0);
        }
    }
    /* the wrong reference is caught wherever the outer dimension is outside */
    ck_assert_int_gt(colour_mismatches(&m, CS_MESH_BIT(1), same_group_wrong), 0);
}
END_TEST

START_TEST(hybrid_groups_as_torch_forms_them)
{
    /* HYBRID_SHARD on 16 ranks with shard groups of 8: shard groups are
     * consecutive blocks, replica groups every 8th rank */
    cs_mesh m;
    cs_mesh_init(&m);
    cs_mesh_add(&m, "tp", 1);
    int s = cs_mesh_add(&m, "dp_shard", 8), r = cs_mesh_add(&m, "dp_replicate", 2);
    for (int k = 0; k < 16; k++) {
        ck_assert_int_eq(cs_mesh_group_colour(&m, CS_MESH_BIT(s), k), k / 8);
        ck_assert_int_eq(cs_mesh_group_colour(&m, CS_MESH_BIT(r), k), k % 8);
        ck_assert_int_eq(cs_mesh_group_colour(&m, cs_mesh_all(&m), k), 0);
    }
    ck_assert_int_eq(cs_mesh_group_size(&m, CS_MESH_BIT(s)), 8);
    ck_assert_int_eq(cs_mesh_group_size(&m, CS_MESH_BIT(r)), 2);
    ck_assert_int_eq(cs_mesh_group_stride(&m, CS_MESH_BIT(s)), 1);
    ck_assert_int_eq(cs_mesh_group_stride(&m, CS_MESH_BIT(r)), 8);
    ck_assert(cs_mesh_group_contiguous(&m, CS_MESH_BIT(s)));
    ck_assert(!cs_mesh_group_contiguous(&m, CS_MESH_BIT(r)));
    ck_assert(cs_mesh_group_contiguous(&m, cs_mesh_all(&m)));
}
END_TEST

START_TEST(strides_and_contiguity)
{
    cs_mesh m = mesh_2x3x4();
    ck_assert_int_eq(cs_mesh_group_stride(&m, CS_MESH_BIT(0)), 1);
    ck_assert_int_eq(cs_mesh_group_stride(&m, CS_MESH_BIT(1)), 2);
    ck_assert_int_eq(cs_mesh_group_stride(&m, CS_MESH_BIT(2) | CS_MESH_BIT(1)), 2);
    ck_assert_int_eq(cs_mesh_group_stride(&m, 0), 1);
    ck_assert(cs_mesh_group_contiguous(&m, CS_MESH_BIT(0) | CS_MESH_BIT(1)));
    ck_assert(!cs_mesh_group_contiguous(&m, CS_MESH_BIT(0) | CS_MESH_BIT(2)));
    ck_assert(!cs_mesh_group_contiguous(&m, CS_MESH_BIT(1)));
    /* a size-1 dimension inside does not break contiguity */
    cs_mesh u;
    cs_mesh_init(&u);
    cs_mesh_add(&u, "tp", 1);
    cs_mesh_add(&u, "dp_shard", 4);
    ck_assert(cs_mesh_group_contiguous(&u, CS_MESH_BIT(1)));
    ck_assert_int_eq(cs_mesh_group_stride(&u, CS_MESH_BIT(1)), 1);
}
END_TEST

START_TEST(node_share_counts_sibling_groups)
{
    cs_mesh m;
    cs_mesh_init(&m);
    cs_mesh_add(&m, "tp", 1);
    int s = cs_mesh_add(&m, "dp_shard", 2), r = cs_mesh_add(&m, "dp_replicate", 4);
    /* 4 ranks per node: replica groups are 2 apart, so 2 of them share a node */
    ck_assert_int_eq(cs_mesh_group_node_share(&m, CS_MESH_BIT(r), 4), 2);
    ck_assert_int_eq(cs_mesh_group_node_share(&m, CS_MESH_BIT(s), 4), 2);
    ck_assert_int_eq(cs_mesh_group_node_share(&m, cs_mesh_all(&m), 4), 1);
    ck_assert_int_eq(cs_mesh_group_node_share(&m, CS_MESH_BIT(r), 1), 1);
}
END_TEST

/* 2 nodes of 4 GPUs, 2 NICs of 100 GB/s each at 0.9, no PCIe cap. */
static cs_cluster two_nodes(void)
{
    return cs_test_cluster_yaml(
        "two.yaml",
        "name: two\nnodes: 2\ngpus_per_node: 4\n"
        "gpu: {model: G, memory: 80GiB, compute_capability: 90, tflops: {bf16: 1000}, "
        "hbm_bandwidth: 3TB/s}\n"
        "intra: {fabric: nvswitch, bandwidth: 400GB/s, efficiency: 0.8}\n"
        "inter: {nics_per_node: 2, nic_bandwidth: 100GB/s, efficiency: 0.9}\n");
}

START_TEST(group_topologies_on_two_nodes)
{
    cs_cluster c = two_nodes();
    cs_topology world = cs_test_topology(&c, 8, 0), t;
    cs_mesh m;
    cs_mesh_init(&m);
    cs_mesh_add(&m, "tp", 1);
    int s = cs_mesh_add(&m, "dp_shard", 4), r = cs_mesh_add(&m, "dp_replicate", 2);
    cs_diag d;
    /* the world as laid out */
    ck_assert_int_eq(cs_mesh_group_topology(&m, cs_mesh_all(&m), &world, &t, &d), 0);
    ck_assert_int_eq(t.ranks, 8);
    ck_assert_int_eq(t.nodes, 2);
    /* a shard group: one node's 4 ranks, NVLink only */
    ck_assert_int_eq(cs_mesh_group_topology(&m, CS_MESH_BIT(s), &world, &t, &d), 0);
    ck_assert_int_eq(t.ranks, 4);
    ck_assert_int_eq(t.nodes, 1);
    /* a replica group: one rank per node, 4 groups on each node's 2 NICs */
    ck_assert_int_eq(cs_mesh_group_node_share(&m, CS_MESH_BIT(r), world.ppn_max), 4);
    ck_assert_int_eq(cs_mesh_group_topology(&m, CS_MESH_BIT(r), &world, &t, &d), 0);
    ck_assert_int_eq(t.ranks, 2);
    ck_assert_int_eq(t.nodes, 2);
    ck_assert_double_eq_tol(t.cluster.inter.nic_bw_Bps, c.inter.nic_bw_Bps / 4, 1);
    ck_assert_double_eq_tol(t.nic_Bps, world.nic_Bps / 4, 1);
    /* shard groups of 2: a replica group has 2 members on each node (ranks
     * 0 and 2 on the first), joined by NVLink; its 2 siblings per node take
     * one of the node's 2 NICs each, at its full rate */
    cs_mesh h;
    cs_mesh_init(&h);
    cs_mesh_add(&h, "tp", 1);
    cs_mesh_add(&h, "dp_shard", 2);
    r = cs_mesh_add(&h, "dp_replicate", 4);
    ck_assert_int_eq(cs_mesh_group_node_members(&h, CS_MESH_BIT(r), world.ppn_max), 2);
    ck_assert_int_eq(cs_mesh_group_topology(&h, CS_MESH_BIT(r), &world, &t, &d), 0);
    ck_assert_int_eq(t.ranks, 4);
    ck_assert_int_eq(t.nodes, 2);
    ck_assert_int_eq(t.ppn_max, 2);
    ck_assert_int_eq(t.cluster.inter.nics_per_node, 1);
    ck_assert_double_eq_tol(t.nic_Bps, world.nic_Bps, 1);
    /* TP 2: each data-parallel group has 2 members on a node; on one node
     * of 4 ranks the pipeline's 2 stages (stride 2) are both on it: NVLink
     * only, no network */
    cs_mesh tpm;
    cs_mesh_init(&tpm);
    cs_mesh_add(&tpm, "tp", 2);
    int dps = cs_mesh_add(&tpm, "dp_shard", 2);
    int pp = cs_mesh_add(&tpm, "pp", 2);
    ck_assert_int_eq(cs_mesh_group_topology(&tpm, CS_MESH_BIT(dps), &world, &t, &d), 0);
    ck_assert_int_eq(t.ranks, 2);
    ck_assert_int_eq(t.nodes, 1);
    ck_assert_int_eq(cs_mesh_group_topology(&tpm, CS_MESH_BIT(pp), &world, &t, &d), 0);
    ck_assert_int_eq(t.ranks, 2);
    ck_assert_int_eq(t.nodes, 2); /* ranks 0 and 4: the second node */
    cs_mesh four;
    cs_mesh_init(&four);
    cs_mesh_add(&four, "tp", 1);
    cs_mesh_add(&four, "dp_shard", 2);
    pp = cs_mesh_add(&four, "pp", 2);
    cs_topology one_node = cs_test_topology(&c, 4, 1);
    ck_assert_int_eq(cs_mesh_group_topology(&four, CS_MESH_BIT(pp), &one_node, &t, &d), 0);
    ck_assert_int_eq(t.ranks, 2);
    ck_assert_int_eq(t.nodes, 1);
    /* a group of one rank has no network */
    cs_mesh one;
    cs_mesh_init(&one);
    int tp = cs_mesh_add(&one, "tp", 1);
    cs_mesh_add(&one, "dp_shard", 8);
    ck_assert_int_eq(cs_mesh_group_topology(&one, CS_MESH_BIT(tp), &world, &t, &d), 0);
    ck_assert_int_eq(t.ranks, 1);
    ck_assert_int_eq(t.nodes, 1);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mesh");
    TCase *tc = tcase_create("mesh");
    tcase_add_test(tc, empty_mesh_is_one_rank);
    tcase_add_test(tc, strides_are_products_of_inner_sizes);
    tcase_add_test(tc, rank_coords_round_trip);
    tcase_add_test(tc, colours_match_the_reference);
    tcase_add_test(tc, hybrid_groups_as_torch_forms_them);
    tcase_add_test(tc, strides_and_contiguity);
    tcase_add_test(tc, node_share_counts_sibling_groups);
    tcase_add_test(tc, group_topologies_on_two_nodes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return cs_test_run(suite()); }
