/* SPDX-License-Identifier: MIT */
/*
 * test-stage_report.c - the per-stage memory of `collsim memory` /
 * `simulate` (out/stage_report.h through out/train_report.h): on
 * Korthikanti et al. 2022's 22B-like GPT (Table 3: a 64, h 6144, s 2048,
 * 48 layers, no recompute, T = 1), P = 4 stages under 1F1B, the JSON
 * "stages" rows give each stage's activations as Sec 4.2.3 / Eq. 5 says:
 * the first stage holds P micro-batches of L / P layers, s b h L (34 +
 * 5 a s / h) bytes in all, and stage s holds P - s of them; the peak is
 * on stage 0 and the text card and the rows say so. GPipe (all m
 * micro-batches held on every stage) is caught by the same comparison.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out/train_report.h"
#include "train/evaluate.h"
#include "train/pipeline.h"
#include "testutil.h"

enum { P = 4, M = 8 };

/* The report of Korthikanti's model on P stages under schedule (-1: the
 * default, 1f1b), rendered as f into b. */
static void report(int schedule, cs_format f, cs_buf *b)
{
    cs_test_setup s;
    cs_test_setup_make(&s, "dgx-h100", "gpt3-13b", CS_STRAT_DDP, 8 * P);
    s.m.layers = 48, s.m.hidden = 6144, s.m.heads = 64, s.m.kv_heads = 64;
    s.m.ffn_hidden = 4 * 6144, s.m.seq_len = 2048, s.m.vocab = 51200, s.m.dropout = 0.1;
    s.m.biases = 1, s.m.learned_positions = 1, s.m.tied_embeddings = 1;
    cs_diag d;
    ck_assert_int_eq(cs_model_derive(&s.m, &d), 0);
    s.t.micro_batch = 1;
    s.t.grad_accum = M;
    s.t.checkpointing = CS_CKPT_NONE;
    s.t.flash_attention = 0;
    s.t.pipeline_parallel = P;
    s.t.pipeline_schedule = schedule;
    cs_pp_memory *mem = malloc(sizeof *mem);
    cs_evaluate_opts o = {.stages = mem};
    cs_evaluation ev;
    cs_test_diag_ok(cs_evaluate_config(&s.m, &s.t, &s.topo, &o, &ev, &d), &d, "evaluate");
    cs_train_row row = {.strategy = CS_STRAT_DDP, .ev = &ev, .max_micro_batch = 1, .stages = mem};
    cs_train_report_head h = {.model = &s.m, .topo = &s.topo};
    cs_train_report(b, f, &h, &row, 1);
    cs_evaluate_free(&ev);
    free(mem);
}

/* Member `key` (a number) of the JSON "stages" row of stage s. */
static double stage_member(const char *json, int s, const char *key)
{
    char at[32], k[64];
    snprintf(at, sizeof at, "\"stage\": %d,", s);
    const char *row = strstr(strstr(json, "\"stages\": ["), at);
    ck_assert_msg(row != NULL, "no row of stage %d", s);
    snprintf(k, sizeof k, "\"%s\": ", key);
    const char *v = strstr(row, k);
    ck_assert_msg(v != NULL && v < strchr(row, '}'), "no %s in stage %d", key, s);
    return strtod(v + strlen(k), NULL);
}

START_TEST(stages_follow_korthikanti_eq5)
{
    cs_buf b = {0};
    report(-1, CS_FORMAT_JSON, &b);
    const char *json = b.data;
    const double s = 2048, bb = 1, h = 6144, a = 64, L = 48;
    const double eq5 = s * bb * h * L * (34 + 5 * a * s / h); /* the first stage, t = 1 */
    for (int st = 0; st < P; st++) {
        double want = eq5 * (P - st) / P, got = stage_member(json, st, "activations_bytes");
        if (fabs(got - want) > 0.01 * want)
            ck_abort_msg("stage %d: %.4g activation bytes, Eq. 5 x (P - s) / P %.4g", st, got, want);
        ck_assert_double_eq(stage_member(json, st, "held_micro_batches"), P - st);
    }
    ck_assert_ptr_nonnull(strstr(json, "\"stage\": 0, \"layers\": 12"));
    const char *peak = strstr(json, "\"peak_stage\": true");
    ck_assert_ptr_nonnull(peak);
    ck_assert_ptr_null(strstr(peak + 1, "\"peak_stage\": true")); /* one stage holds it */
    ck_assert(strstr(json, "\"stage\": 0,") < peak && strstr(json, "\"stage\": 1,") > peak);
    cs_buf_free(&b);

    cs_buf t = {0};
    report(-1, CS_FORMAT_TABLE, &t);
    ck_assert_ptr_nonnull(strstr(t.data, "4 stages x 1 chunks, 1f1b; peak on stage 0"));
    ck_assert_ptr_nonnull(strstr(t.data, "stage 3 (12 layers)"));
    cs_buf_free(&t);
    /* CSV: the strategy rows alone, as before pipelines */
    cs_buf c = {0};
    report(-1, CS_FORMAT_CSV, &c);
    ck_assert_ptr_null(strstr(c.data, "stage"));
    cs_buf_free(&c);
}
END_TEST

/* GPipe holds all m micro-batches on every stage: stage 0 at m / P times
 * Eq. 5, which the comparison above must reject. */
START_TEST(gpipe_caught)
{
    cs_buf b = {0};
    report(0, CS_FORMAT_JSON, &b);
    const double s = 2048, h = 6144, a = 64, L = 48;
    const double eq5 = s * h * L * (34 + 5 * a * s / h);
    double got = stage_member(b.data, 0, "activations_bytes");
    ck_assert(fabs(got - eq5) > 0.5 * eq5);
    ck_assert_double_eq_tol(got, eq5 * M / P, 0.01 * eq5 * M / P);
    cs_buf_free(&b);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("stage_report");
    TCase *tc = tcase_create("stage_report");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, stages_follow_korthikanti_eq5);
    tcase_add_test(tc, gpipe_caught);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return cs_test_run(suite()); }
