/* SPDX-License-Identifier: MIT */
/*
 * test-desref.c - the discrete-event results pinned bit for bit: ring
 * (every op), chain and tree schedules on uniform and heterogeneous
 * clusters (stragglers, start delays, slow links, uneven nodes), hashed
 * per (cluster, topology); event counts are checked where the schedules
 * are (test-maxplus.c, test-network.c). The expected hashes were taken from the event
 * engine as of 319d0d3, before the ring and chain moved to the max-plus
 * pass (coll/maxplus.h) and the engine's queue changed: any change to a
 * DES time shows here. An intended model change updates
 * the table in its own commit.
 * Cost: about 0.8 s (debugoptimized).
 */
#include <stdio.h>

#include "coll/collective.h"
#include "config/presets.h"
#include "testutil.h"

static const char *const extras[] = {
    "",
    "des:\n  stragglers:\n    - {rank: 2, slowdown: 1.5}\n",
    "des:\n  stragglers:\n    - {rank: 3, delay: 10us}\n    - {rank: 4, slowdown: 1.3, delay: 2us}\n",
    "des:\n  links:\n    - {node: 1, nic: 0, bandwidth: 50Gbps}\n    - {node: 0, gpu: 0, bandwidth: 100GB/s}\n",
    "des:\n  links:\n    - {node: 1, nic: 0, bandwidth: 50Gbps}\n  stragglers:\n    - {rank: 1, slowdown: 1.5}\n",
};
#define NEXTRA (int)(sizeof extras / sizeof extras[0])

static const struct { int ranks, nodes; } topos[] = {{16, 0}, {24, 0}, {20, 3}, {8, 0}, {5, 5}, {64, 0}};
#define NTOPO (int)(sizeof topos / sizeof topos[0])

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* Hash of every DES run (ring: 5 ops, tree: all_reduce; 3 protocols;
 * 2 sizes) on one (cluster, topology). */
static uint64_t case_hash(int e, int k)
{
    const char *base = cs_presets_cluster_yaml("dgx-h100", NULL);
    ck_assert_ptr_nonnull(base);
    char *eight = cs_test_replace(base, "\nnodes: 1 ", "\nnodes: 8 ");
    char buf[16384];
    snprintf(buf, sizeof buf, "%s\n%s", eight, extras[e]);
    free(eight);
    cs_cluster c = cs_test_cluster_yaml("test.yaml", buf);
    cs_topology t;
    cs_diag d;
    uint64_t h = 0xcbf29ce484222325ULL;
    /* a one-node topology has no node 1 to override: that case is empty */
    if (cs_topology_build(&c, topos[k].ranks, topos[k].nodes, &t, &d)) return h;
    static const double sizes[] = {1e6, 3e8};
    for (int op = 0; op <= CS_OP_COUNT; op++) /* op == CS_OP_COUNT: tree all_reduce */
        for (int p = 0; p < CS_PROTO_COUNT; p++)
            for (int s = 0; s < 2; s++) {
                cs_coll_request rq = {op == CS_OP_COUNT ? CS_OP_ALL_REDUCE : (cs_op)op, sizes[s],
                                      op == CS_OP_COUNT ? CS_ALGO_TREE : CS_ALGO_RING, p,
                                      CS_ENGINE_DES};
                cs_coll_result r = {0};
                int rc = cs_collective_run(&t, &rq, &r, &d);
                h = fnv(h, &rc, sizeof rc);
                if (rc) continue;
                h = fnv(h, &r.time_s, sizeof r.time_s);
            }
    return h;
}

/* [cluster][topology]: hashes of the event engine's results as of 319d0d3 */
static const uint64_t expected[NEXTRA][NTOPO] = {
    {0xd85bb65f1d411ea2ULL, 0x618f10b34df0da75ULL, 0xa6f77869ab90e8e7ULL, 0x26b2deacdf4052e9ULL, 0xf6432df2a6306b48ULL, 0xdf444b8ca2f83cc2ULL},
    {0x136a0d6990096d28ULL, 0x5e1d5d7fd6068875ULL, 0xfcb454a2a9fead76ULL, 0xf4b94b30845adeecULL, 0x397ce290418b4352ULL, 0x1cbf0da34b1e7567ULL},
    {0xb534240fbfa1dc4aULL, 0x48b85cc72df8f626ULL, 0x84e3b3fb1fcef46eULL, 0x0728d868383f4991ULL, 0x840a1b9c0179c66dULL, 0x39552aac33b0104eULL},
    {0x9e397b85eeb6c869ULL, 0x9c930cd30b616849ULL, 0xdb25211b68156a0dULL, 0xcbf29ce484222325ULL, 0xa71b0b245469a2c4ULL, 0x97ce5002e0437307ULL},
    {0xae58f84dd0cde84aULL, 0xe6ee386cd1f31061ULL, 0x2f686c07c7d7f40aULL, 0xcbf29ce484222325ULL, 0x8ea4cc8fbbad622bULL, 0xe7654d5467ac8ffdULL},
};

START_TEST(des_results_unchanged)
{
    int e = _i / NTOPO, k = _i % NTOPO;
    uint64_t h = case_hash(e, k);
    ck_assert_msg(h == expected[e][k], "cluster %d topology %d: hash 0x%016llxULL, expected 0x%016llxULL",
                  e, k, (unsigned long long)h, (unsigned long long)expected[e][k]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("desref");
    TCase *tc = tcase_create("pinned");
    tcase_add_loop_test(tc, des_results_unchanged, 0, NEXTRA * NTOPO);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
