/* SPDX-License-Identifier: MIT */
/*
 * test-validation.c - the default dgx-h100 preset against real H100
 * measurements (validation/nccl-tests/h100_8gpu_*_together_ringcfg.csv:
 * nccl-tests, NCCL 2.26.2, 8x H100 80GB, NCCL_ALGO=RING, one process -g 8).
 *
 * Predictions force the ring, as the runs did, and let the protocol be
 * chosen as NCCL's tuner would. For sizes >= 1 MiB the median absolute
 * error must stay within 10%, and no point may be worse than its recorded
 * score + 1 point (the scores are the errors measured when this test was
 * written; see the closing notes). Known gaps, not hidden by tuning: the
 * runs' ~35-41 us floor (one process launching 8 GPUs) exceeds NCCL's
 * LL/LL128 latency model at 1-4 MiB, and all_gather/reduce_scatter with
 * Simple run 5-11% slower than the ring model at 32-512 MiB.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/collective.h"
#include "config/config.h"
#include "testutil.h"

static const struct {
    const char *file;
    cs_op op;
    double max_err_recorded; /* percent, sizes >= 1 MiB */
} datasets[] = {
    {"validation/nccl-tests/h100_8gpu_allreduce_together_ringcfg.csv", CS_OP_ALL_REDUCE, 25.3},
    {"validation/nccl-tests/h100_8gpu_allgather_together_ringcfg.csv", CS_OP_ALL_GATHER, 56.3},
    {"validation/nccl-tests/h100_8gpu_reducescatter_together_ringcfg.csv", CS_OP_REDUCE_SCATTER, 55.2},
};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

START_TEST(preset_predicts_ring_measurements)
{
    cs_cluster c = cs_test_cluster("dgx-h100");
    cs_topology t = cs_test_topology(&c, 8, 0);
    FILE *f = fopen(datasets[_i].file, "r");
    ck_assert_msg(f != NULL, "cannot open %s", datasets[_i].file);
    char line[512];
    double errs[64];
    int n = 0, ranks_line = 0;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "# ranks: 8", 10)) ranks_line = 1;
        if (line[0] == '#' || !strncmp(line, "size_bytes", 10)) continue;
        double size, count, time_us;
        char type[32], redop[32];
        if (sscanf(line, "%lf,%lf,%31[^,],%31[^,],%lf", &size, &count, type, redop, &time_us) != 5)
            continue;
        if (size < 1048576) continue;
        cs_coll_request rq = {datasets[_i].op, size, CS_ALGO_RING, CS_CHOICE_AUTO, CS_ENGINE_ANALYTIC};
        cs_coll_result r;
        cs_diag d;
        ck_assert_int_eq(cs_collective_run(&t, &rq, &r, &d), 0);
        double e = 100.0 * fabs(r.time_s * 1e6 - time_us) / time_us;
        printf("%s %12.0f B measured %10.2f us predicted %10.2f us (%s) error %5.1f%%\n",
               cs_op_name(datasets[_i].op), size, time_us, r.time_s * 1e6,
               cs_proto_name(r.proto), e);
        ck_assert_msg(e <= datasets[_i].max_err_recorded + 1.0,
                      "%s at %.0f B: error %.1f%% exceeds the recorded %.1f%%", datasets[_i].file,
                      size, e, datasets[_i].max_err_recorded);
        ck_assert_int_lt(n, 64);
        errs[n++] = e;
    }
    fclose(f);
    ck_assert_msg(ranks_line, "%s lost its '# ranks: 8' provenance header", datasets[_i].file);
    ck_assert_int_ge(n, 10);
    qsort(errs, (size_t)n, sizeof errs[0], cmp);
    double median = n % 2 ? errs[n / 2] : 0.5 * (errs[n / 2 - 1] + errs[n / 2]);
    printf("%s: %d sizes >= 1 MiB, median error %.1f%%, max %.1f%%\n", datasets[_i].file, n,
           median, errs[n - 1]);
    ck_assert_msg(median <= 10.0, "median error %.1f%% > 10%%", median);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("validation");
    TCase *tc = tcase_create("h100-ring");
    tcase_add_loop_test(tc, preset_predicts_ring_measurements, 0,
                        (int)(sizeof datasets / sizeof datasets[0]));
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
