/* SPDX-License-Identifier: MIT */
/*
 * test-rankclass.c - rank classes (train/rankclass.h): none where every
 * rank runs alike (no stragglers, a delay only, the closed form); the
 * normal ranks and one class per slowdown otherwise, ordered by first
 * rank, with labels listing their ranks as ranges; a list too long for
 * the label ends in ",..."; then the classes an evaluation runs: the
 * iteration time is the straggler's and lies between the uniform run's
 * and the uniform run slowed whole.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "train/evaluate.h"
#include "train/rankclass.h"
#include "testutil.h"

/* A topology of dgx-h100 with `ranks` ranks and stragglers (rank,
 * slowdown, delay) given as triples, and settings priced by engine e. */
static cs_topology with_stragglers(int ranks, const double *s, int n)
{
    cs_cluster c = cs_test_cluster("dgx-h100");
    for (int i = 0; i < n; i++)
        c.stragglers[c.n_stragglers++] =
            (cs_straggler){.rank = (int)s[3 * i], .slowdown = s[3 * i + 1], .delay_s = s[3 * i + 2]};
    return cs_test_topology(&c, ranks, 0);
}

static cs_training engine(cs_engine_kind e)
{
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_DDP);
    t.collective_engine = e;
    return t;
}

/* The classes of t on topo's layout (a gpt2-124m run). */
static int classes(const cs_training *t, const cs_topology *topo, cs_rank_class *rc)
{
    cs_model m = cs_test_model("gpt2-124m");
    cs_layout *l = malloc(sizeof *l);
    cs_diag d;
    ck_assert_int_eq(cs_layout_build(&m, t, topo, l, &d), 0);
    int n = cs_rankclass_group(t, l, rc);
    free(l);
    return n;
}

START_TEST(none_where_ranks_run_alike)
{
    cs_rank_class rc[CS_RANK_CLASS_MAX];
    cs_training des = engine(CS_ENGINE_DES), cf = engine(CS_ENGINE_ANALYTIC);
    cs_topology u = with_stragglers(16, NULL, 0);
    ck_assert_int_eq(classes(&des, &u, rc), 0);
    const double delay_only[] = {5, 1.0, 20e-6};
    cs_topology d = with_stragglers(16, delay_only, 1);
    ck_assert_int_eq(classes(&des, &d, rc), 0); /* its delay is in the collectives */
    const double slow[] = {5, 1.5, 0};
    cs_topology s = with_stragglers(16, slow, 1);
    ck_assert_int_eq(classes(&cf, &s, rc), 0); /* the closed form ignores des: */
    ck_assert_int_eq(classes(&des, &s, rc), 2);
}
END_TEST

START_TEST(classes_by_slowdown_and_first_rank)
{
    cs_rank_class rc[CS_RANK_CLASS_MAX];
    cs_training t = engine(CS_ENGINE_DES);
    /* written out of order; ranks 3 and 6 alike; rank 0 late only */
    const double s[] = {7, 1.2, 0, 6, 1.5, 20e-6, 0, 1.0, 10e-6, 3, 1.5, 0};
    cs_topology topo = with_stragglers(16, s, 4);
    ck_assert_int_eq(classes(&t, &topo, rc), 3);
    ck_assert_str_eq(rc[0].label, "ranks 0-2,4-5,8-15");
    ck_assert_int_eq(rc[0].nranks, 13);
    ck_assert_double_eq(rc[0].slowdown, 1.0);
    ck_assert_str_eq(rc[1].label, "ranks 3,6");
    ck_assert_int_eq(rc[1].nranks, 2);
    ck_assert_int_eq(rc[1].first_rank, 3);
    ck_assert_double_eq(rc[1].slowdown, 1.5);
    ck_assert_str_eq(rc[2].label, "rank 7");
    ck_assert_int_eq(rc[2].first_rank, 7);

    /* rank 0 a straggler: the normal class comes after it; runs of ranks
     * are ranges; every rank a straggler: no normal class */
    const double z[] = {0, 2, 0, 1, 2, 0, 2, 2, 0, 5, 3, 0};
    topo = with_stragglers(8, z, 4);
    ck_assert_int_eq(classes(&t, &topo, rc), 3);
    ck_assert_str_eq(rc[0].label, "ranks 0-2");
    ck_assert_str_eq(rc[1].label, "ranks 3-4,6-7");
    ck_assert_int_eq(rc[1].first_rank, 3);
    ck_assert_str_eq(rc[2].label, "rank 5");
    const double all[] = {0, 2, 0, 1, 2, 0};
    topo = with_stragglers(2, all, 2);
    ck_assert_int_eq(classes(&t, &topo, rc), 1);
    ck_assert_str_eq(rc[0].label, "ranks 0-1");
    ck_assert_int_eq(rc[0].nranks, 2);
}
END_TEST

/* 64 stragglers at every other rank: the normal ranks' list does not fit
 * its label, which ends in ",..." within its size. */
START_TEST(long_label_ends_in_ellipsis)
{
    double s[3 * CS_MAX_OVERRIDES];
    for (int i = 0; i < CS_MAX_OVERRIDES; i++) s[3 * i] = 1000 + 2 * i, s[3 * i + 1] = 2, s[3 * i + 2] = 0;
    cs_topology topo = with_stragglers(4096, s, CS_MAX_OVERRIDES);
    cs_training t = engine(CS_ENGINE_DES);
    cs_rank_class rc[CS_RANK_CLASS_MAX];
    ck_assert_int_eq(classes(&t, &topo, rc), 2);
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(rc[k].label);
        ck_assert_uint_lt(n, sizeof rc[k].label);
        ck_assert_str_eq(rc[k].label + n - 4, ",...");
    }
    ck_assert_int_eq(strncmp(rc[0].label, "ranks 0-999,1001,1003,", 22), 0);
    ck_assert_int_eq(rc[0].nranks, 4096 - CS_MAX_OVERRIDES);
    ck_assert_int_eq(strncmp(rc[1].label, "ranks 1000,1002,", 16), 0);
}
END_TEST

/* gpt2-124m, DDP on 8 ranks, rank 3 at 1.5x, the DES: two classes; the
 * iteration is the straggler's (the slowest class), longer than the
 * uniform run and shorter than the uniform run slowed 1.5x whole (its
 * communication is not slowed that much); the normal ranks idle while
 * they wait for it at the all-reduces. */
START_TEST(evaluation_runs_the_straggler)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "gpt2-124m", CS_STRAT_DDP, 8);
    s.t.collective_engine = CS_ENGINE_DES;
    cs_evaluate_opts o = {.simulate = 1};
    cs_evaluation uni, str;
    cs_diag d;
    ck_assert_int_eq(cs_evaluate_config(&s.m, &s.t, &s.topo, &o, &uni, &d), 0);
    ck_assert_int_eq(uni.iteration.nclasses, 0);
    const double one[] = {3, 1.5, 0};
    cs_topology topo = with_stragglers(8, one, 1);
    ck_assert_int_eq(cs_evaluate_config(&s.m, &s.t, &topo, &o, &str, &d), 0);
    const cs_iteration *it = &str.iteration;
    ck_assert_int_eq(it->nclasses, 2);
    ck_assert_int_eq(it->slowest, 1);
    ck_assert_str_eq(it->classes[1].ranks.label, "rank 3");
    ck_assert_double_eq(it->iteration_time_s, it->classes[1].it.iteration_time_s);
    ck_assert_double_gt(it->iteration_time_s, it->classes[0].it.iteration_time_s);
    ck_assert_double_gt(it->iteration_time_s, 1.2 * uni.iteration.iteration_time_s);
    ck_assert_double_lt(it->iteration_time_s, 1.5 * uni.iteration.iteration_time_s);
    ck_assert_double_gt(it->classes[0].it.cpu_wait_s, uni.iteration.cpu_wait_s + 1e-4);
    ck_assert_double_eq_tol(it->tokens_per_s * it->iteration_time_s,
                            uni.iteration.tokens_per_s * uni.iteration.iteration_time_s, 1e-3);
    cs_evaluate_free(&uni);
    cs_evaluate_free(&str);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rankclass");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, none_where_ranks_run_alike);
    tcase_add_test(tc, classes_by_slowdown_and_first_rank);
    tcase_add_test(tc, long_label_ends_in_ellipsis);
    tcase_add_test(tc, evaluation_runs_the_straggler);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
