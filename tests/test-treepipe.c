/* SPDX-License-Identifier: MIT */
/*
 * test-treepipe.c - the tree pipeline run in parts (coll/treepipe.h)
 * against the one event run over every rank it replaces
 * (cs_treepipe_run_whole): random clusters (rank counts, even and uneven
 * nodes, one rank per node, one node; stragglers with slowdowns and start
 * delays, slow GPU ports and NICs), chunk counts, chunk sizes (zero too),
 * factors, caps (binding or not), latencies and lane scales from a fixed
 * seed; the event counts must agree exactly and the times to 1e-12, bit
 * for bit in at least 95% of the cases. The difference is by design: the
 * parts run the events that fall at one instant on both sides of a part
 * boundary (a chunk leaving a chain for the heads' tree, or entering it)
 * in another order than the whole run does, and where a flow's bytes are
 * counted at that instant (bytes - rate x elapsed is not exactly 0 in
 * floating point) its completion moves by a few ulps: 3 of the 200 random
 * clusters here (relative differences below 1e-15). Within a part the order is the engine's
 * (treechain.c keeps its (time, sequence) order): runs where no boundary
 * tie occurs agree bit for bit, as do test-desref's pinned runs and the
 * golden corpus. A uniform 1024-rank cluster checks the memo's case
 * (every chain equal) bit for bit. The comparison is shown to see one
 * last bit: a straggler slower by 2^-40 changes the time.
 */
#include <math.h>
#include <string.h>

#include "coll/treepipe.h"
#include "testutil.h"

static cs_cluster base_cluster(void)
{
    cs_cluster c = cs_test_cluster("dgx-h100");
    c.nodes = 512;
    return c;
}

static double uniform01(cs_test_lcg *g) { return (double)cs_test_lcg_next(g) / 2147483648.0; }

/* Both runs of q: events exactly, times within rel_tol (0: bit for bit).
 * Returns 1 when the times agree bit for bit. */
static int check_same(const cs_treepipe *q, double rel_tol, const char *what, int i)
{
    unsigned long long ep = 0, ew = 0;
    double parts = cs_treepipe_run(q, &ep), whole = cs_treepipe_run_whole(q, &ew);
    int same = memcmp(&parts, &whole, sizeof parts) == 0;
    ck_assert_msg(same || fabs(parts - whole) <= rel_tol * whole,
                  "%s %d (%d ranks, %d nodes): parts %.17g, whole %.17g", what, i, q->t->ranks,
                  q->t->nodes, parts, whole);
    ck_assert_msg(ep == ew, "%s %d: events %llu, whole run %llu", what, i, ep, ew);
    return same;
}

/* The random cases' boundary-tie tolerance (see the file header). */
#define TIE_REL_TOL 1e-12

static cs_treepipe pipe_for(const cs_topology *t, long chunks)
{
    return (cs_treepipe){.t = t, .chunks = chunks, .chunk_bytes = 262144.0, .factor = 0.9,
                         .cap_Bps = 0, .intra_lat_s = 0, .inter_lat_s = 0, .ch_scale = 1.0};
}

/* One random cluster and pipeline from g; 1 when the runs agree bit for bit. */
static int random_case(cs_test_lcg *g, int i)
{
    cs_cluster c = base_cluster();
    int ranks = 2 + (int)(cs_test_lcg_next(g) % 200), nodes = 0;
    switch (cs_test_lcg_next(g) % 4) {
    case 0: nodes = ranks; break;                                /* one rank per node */
    case 1: nodes = (ranks + 7) / 8 + (int)(cs_test_lcg_next(g) % 3); break; /* uneven */
    case 2: ranks = 2 + ranks % 7; nodes = 1; break;            /* one node */
    default: break;                                              /* full nodes */
    }
    if (nodes > ranks) nodes = ranks;
    int used = nodes ? nodes : (ranks + 7) / 8;
    int want = (int)(cs_test_lcg_next(g) % 4);
    c.n_stragglers = 0;
    for (int s = 0; s < want; s++) { /* one entry per rank */
        int r = (int)(cs_test_lcg_next(g) % (uint32_t)ranks), dup = 0;
        for (int j = 0; j < c.n_stragglers; j++) dup |= c.stragglers[j].rank == r;
        if (dup) continue;
        double delay_s = cs_test_lcg_next(g) % 2 ? 1e-5 * uniform01(g) : 0.0;
        c.stragglers[c.n_stragglers++] =
            (cs_straggler){.rank = r, .slowdown = 1 + uniform01(g), .delay_s = delay_s};
    }
    c.n_overrides = (int)(cs_test_lcg_next(g) % 3);
    for (int o = 0; o < c.n_overrides; o++)
        c.overrides[o] = (cs_link_override){.node = (int)(cs_test_lcg_next(g) % (uint32_t)used),
                                            .gpu = o == 0 ? 0 : 1, .is_nic = o,
                                            .bw_Bps = 1e10 * (1 + 10 * uniform01(g))};
    cs_topology t = cs_test_topology(&c, ranks, nodes);
    cs_treepipe q = pipe_for(&t, 1 + (long)(cs_test_lcg_next(g) % 24));
    q.chunk_bytes = cs_test_lcg_next(g) % 8 == 0 ? 0.0 : 1e5 * (1 + 9 * uniform01(g));
    q.factor = 0.3 + uniform01(g);
    q.cap_Bps = cs_test_lcg_next(g) % 2 ? 0.0 : 5e9 * (1 + 4 * uniform01(g));
    if (cs_test_lcg_next(g) % 2) {
        q.intra_lat_s = 1e-6 * uniform01(g);
        q.inter_lat_s = 5e-6 * uniform01(g);
    }
    q.ch_scale = 1 + (double)(cs_test_lcg_next(g) % 2);
    return check_same(&q, TIE_REL_TOL, "random case", i);
}

START_TEST(random_clusters_against_whole)
{
    cs_test_lcg g = {.s = 16};
    int same = 0, cases = 200;
    for (int i = 0; i < cases; i++) same += random_case(&g, i);
    ck_assert_msg(same >= cases * 95 / 100, "%d of %d random cases bit for bit, want 95%%", same,
                  cases);
}
END_TEST

START_TEST(uniform_1024_ranks)
{
    cs_cluster c = base_cluster();
    cs_topology t = cs_test_topology(&c, 1024, 0);
    cs_treepipe q = pipe_for(&t, 16);
    ck_assert(check_same(&q, 0, "uniform", 0));
    q.cap_Bps = 1e9; /* a cap that binds: no flow's rate changes */
    ck_assert(check_same(&q, 0, "uniform, capped", 1));
}
END_TEST

START_TEST(one_last_bit_shows)
{
    cs_cluster c = base_cluster();
    cs_topology t = cs_test_topology(&c, 64, 0);
    cs_treepipe q = pipe_for(&t, 8);
    unsigned long long e;
    double before = cs_treepipe_run(&q, &e);
    c.n_stragglers = 1;
    c.stragglers[0] = (cs_straggler){.rank = 63, .slowdown = 1 + ldexp(1, -40)};
    cs_topology u = cs_test_topology(&c, 64, 0);
    q.t = &u;
    double after = cs_treepipe_run(&q, &e);
    ck_assert_msg(after != before, "a straggler slower by 2^-40 left %.17g unchanged", before);
    ck_assert(check_same(&q, 0, "last bit", 0));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("treepipe");
    TCase *tc = tcase_create("against the whole run");
    tcase_add_test(tc, random_clusters_against_whole);
    tcase_add_test(tc, uniform_1024_ranks);
    tcase_add_test(tc, one_last_bit_shows);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
