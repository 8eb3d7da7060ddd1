/* SPDX-License-Identifier: MIT */
/*
 * test-calib_train.c - training runs predicted and fitted
 * (study/calib_train.h).
 *
 * Prediction: a run's tokens/s per GPU is `collsim simulate`'s (the same
 * cs_evaluate_config) over its GPUs. Fit: a synthetic round trip (runs
 * "measured" on a cluster whose gemm and flash1 were altered; the fit from
 * the unaltered preset recovers both within 2% with intervals that hold
 * them, and the preset scores the altered runs badly, or the round trip
 * proves nothing); the rules: runs of one model width keep gemm_half and
 * say so, runs at one sequence length keep the attention kernel; the
 * fitted cluster writes YAML that loads back with the fitted values.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "study/calib_train.h"
#include "train/compute.h"
#include "train/evaluate.h"
#include "train/scenario.h"
#include "testutil.h"

#define HEAD                                                                                       \
    "model,layers,hidden,heads,vocab,seq_len,gpus,strategy,precision,micro_batch,grad_accum,"     \
    "activation_checkpointing,tokens_per_s_per_gpu\n"

/* Several widths and sequence lengths (shapes of the MPT table). */
static const char *const several =
    HEAD "mpt-125m,12,768,12,50368,512,8,fsdp_full_shard,amp_bf16/DEFAULT,64,1,none,1\n"
         "mpt-125m,12,768,12,50368,16384,8,fsdp_full_shard,amp_bf16/DEFAULT,2,1,none,1\n"
         "mpt-1b,24,2048,16,50368,2048,8,fsdp_full_shard,amp_bf16/DEFAULT,8,1,none,1\n"
         "mpt-1b,24,2048,16,50368,8192,8,fsdp_full_shard,amp_bf16/DEFAULT,2,1,full,1\n"
         "mpt-7b,32,4096,32,50368,4096,8,fsdp_full_shard,amp_bf16/DEFAULT,2,1,full,1\n"
         "mpt-7b,32,4096,32,50368,32768,8,fsdp_full_shard,amp_bf16/DEFAULT,1,1,full,1\n";

static cs_trun_set read_runs(const char *text)
{
    cs_trun_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_training_runs_read_string(&s, "runs.csv", text, strlen(text), &d), &d,
                    "runs");
    return s;
}

/* Sets every run's measurement to its prediction on c. */
static void measure_on(const cs_cluster *c, cs_trun_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        cs_diag d;
        cs_diag_clear(&d);
        double tps;
        cs_test_diag_ok(cs_calib_train_predict(c, s, i, &tps, NULL, &d), &d, "row %zu", i);
        s->rows[i].measured_tps_per_gpu = tps;
    }
}

static const cs_calib_param *param(const cs_calib_train_result *r, const char *name)
{
    for (int j = 0; j < r->nparams; j++)
        if (!strcmp(r->params[j].name, name)) return &r->params[j];
    ck_abort_msg("no parameter %s", name);
    return NULL;
}

/* The YAML the fit r from c writes (caller frees), loaded back into *back. */
static cs_buf fitted_yaml(const cs_cluster *c, cs_calib_train_result *r, cs_cluster *back)
{
    cs_buf b = {0};
    cs_calib_yaml_extra x = {.input = c, .cluster = &r->cluster, .note = cs_calib_train_note,
                             .ud = r};
    cs_calib_write_yaml_ext(&b, NULL, &(cs_meas_set){0}, &x, c->name, NULL, 0);
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_config_load_cluster_string("cal.yaml", b.data, b.len, back, &d), &d,
                    "YAML");
    return b;
}

START_TEST(prediction_is_simulate)
{
    /* mpt-125m, 8 x A100, seq 2048, micro 32: `collsim simulate` of the
     * same scenario (validation/training/throughput.py's) gives
     * tokens_per_s / 8 */
    cs_trun_set s = read_runs(
        HEAD "mpt-125m,12,768,12,50368,2048,8,fsdp_full_shard,amp_bf16/DEFAULT,32,2,none,141737\n");
    cs_cluster c = cs_test_cluster("dgx-a100");
    cs_calib_train_compare cmp;
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_calib_train_compare_run(&c, &s, &cmp, &d), &d, "compare");
    /* the scenario validation/training/throughput.py writes for that row */
    static const char yaml[] =
        "cluster: dgx-a100\nranks: 8\nmodel:\n  name: mpt-125m\n  layers: 12\n  hidden: 768\n"
        "  heads: 12\n  vocab: 50368\n  seq_len: 2048\n  position_embedding: learned\n"
        "training:\n  strategy: fsdp_full_shard\n  param_dtype: bf16\n  grad_reduce_dtype: fp32\n"
        "  master_weights: true\n  micro_batch: 32\n  grad_accum: 2\n"
        "  activation_checkpointing: none\n  backward_prefetch: post\n  limit_all_gathers: true\n"
        "  flash_attention: true\n  attention_kernel: flash1\n  fsdp_version: 1\n"
        "  fsdp_unit_layers: 1\n  loss_impl: fused\n  train_metrics: 2\n";
    cs_scenario sc;
    cs_test_diag_ok(cs_scenario_load_string("row.yaml", yaml, sizeof yaml - 1, &sc, &d), &d, "yaml");
    cs_topology topo = cs_test_topology(&sc.cluster, 8, 0);
    cs_evaluation ev;
    cs_evaluate_opts o = {.simulate = 1};
    cs_test_diag_ok(cs_evaluate_config(&sc.model, &sc.training, &topo, &o, &ev, &d), &d, "simulate");
    ck_assert_double_eq_tol(cmp.pred_tps[0], ev.iteration.tokens_per_s / 8, 1.0);
    cs_evaluate_free(&ev);
    ck_assert_double_eq_tol(cmp.err_pct[0], 100 * (cmp.pred_tps[0] - 141737) / 141737, 1e-9);
    ck_assert_int_eq(cmp.file[0].n, 1);
    ck_assert_double_eq_tol(cmp.file[0].median, fabs(cmp.err_pct[0]), 1e-12);
    cs_calib_train_compare_free(&cmp);
    cs_training_runs_free(&s);
}
END_TEST

START_TEST(round_trip)
{
    cs_cluster c = cs_test_cluster("dgx-a100"), alt = c;
    alt.gpu.compute.gemm *= 0.8;
    alt.gpu.compute.flash1 *= 1.3;
    cs_trun_set s = read_runs(several);
    measure_on(&alt, &s);
    cs_calib_train_compare cmp;
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_calib_train_compare_run(&c, &s, &cmp, &d), &d, "compare");
    ck_assert_msg(cmp.file[0].median > 5, "the preset must miss the altered runs (median %.2f%%)",
                  cmp.file[0].median);
    cs_calib_train_compare_free(&cmp);
    cs_calib_train_result *r;
    cs_test_diag_ok(cs_calib_train(&c, &s, &r, &d), &d, "fit");
    ck_assert_msg(r->converged, "%s", r->status);
    const cs_calib_param *g = param(r, "gemm"), *f = param(r, "flash1");
    ck_assert(g->fitted && f->fitted);
    ck_assert_double_eq_tol(g->value, alt.gpu.compute.gemm, 0.02 * alt.gpu.compute.gemm);
    ck_assert_double_eq_tol(f->value, alt.gpu.compute.flash1, 0.02 * alt.gpu.compute.flash1);
    ck_assert(r->rms_after_pct < 0.5);
    ck_assert(r->rms_before_pct > 5);
    for (size_t i = 0; i < s.n; i++) ck_assert(fabs(r->after_pct[i]) < 1);
    ck_assert(!param(r, "flash2")->fitted);
    CS_ASSERT_CONTAINS(param(r, "flash2")->why, "fewer than 2 rows run the flash2");
    /* the YAML: the fitted values load back */
    cs_cluster back;
    cs_buf b = fitted_yaml(&c, r, &back);
    ck_assert_double_eq_tol(back.gpu.compute.gemm, g->value, 1e-6);
    ck_assert_double_eq_tol(back.gpu.compute.flash1, f->value, 1e-6);
    CS_ASSERT_CONTAINS(b.data, "fitted to training runs: gemm = ");
    cs_buf_free(&b);
    cs_calib_train_result_free(r);
    cs_training_runs_free(&s);
}
END_TEST

START_TEST(one_width_keeps_width_term)
{
    cs_cluster c = cs_test_cluster("dgx-a100"), alt = c;
    alt.gpu.compute.gemm *= 0.8;
    alt.gpu.compute.gemm_half_flops *= 3;
    cs_trun_set s = read_runs(
        HEAD "mpt-1b,24,2048,16,50368,1024,8,fsdp_full_shard,amp_bf16/DEFAULT,8,1,none,1\n"
             "mpt-1b,24,2048,16,50368,2048,8,fsdp_full_shard,amp_bf16/DEFAULT,4,1,none,1\n"
             "mpt-1b,24,2048,16,50368,2048,16,fsdp_full_shard,amp_bf16/DEFAULT,8,1,full,1\n");
    measure_on(&alt, &s);
    cs_calib_train_result *r;
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_calib_train(&c, &s, &r, &d), &d, "fit");
    const cs_calib_param *h = param(r, "gemm_half");
    ck_assert(!h->fitted);
    ck_assert_double_eq(h->value, c.gpu.compute.gemm_half_flops * 1e-9);
    CS_ASSERT_CONTAINS(h->why, "one model width (hidden 2048): a width-dependent term cannot");
    ck_assert(param(r, "gemm")->fitted);
    cs_calib_train_result_free(r);
    cs_training_runs_free(&s);
}
END_TEST

START_TEST(one_sequence_keeps_attention)
{
    cs_trun_set s = read_runs(
        HEAD "mpt-1b,24,2048,16,50368,8192,8,fsdp_full_shard,amp_bf16/DEFAULT,2,1,none,1000\n"
             "mpt-7b,32,4096,32,50368,8192,8,fsdp_full_shard,amp_bf16/DEFAULT,1,1,full,300\n"
             "mpt-125m,12,768,12,50368,8192,8,fsdp_full_shard,amp_bf16/DEFAULT,4,1,none,9000\n");
    cs_cluster c = cs_test_cluster("dgx-a100");
    cs_calib_train_result *r;
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_calib_train(&c, &s, &r, &d), &d, "fit");
    ck_assert(!param(r, "flash1")->fitted);
    CS_ASSERT_CONTAINS(param(r, "flash1")->why, "all at one sequence length (8192)");
    cs_calib_train_result_free(r);
    cs_training_runs_free(&s);
}
END_TEST

START_TEST(run_must_fit_cluster)
{
    cs_trun_set s = read_runs(
        HEAD "mpt-1b,24,2048,16,50368,2048,8,fsdp_full_shard,amp_bf16/DEFAULT,8,1,none,1\n"
             "mpt-1b,24,2048,16,50368,2048,8,fsdp_full_shard,amp_bf16/DEFAULT,8,1,none,1\n");
    s.rows[1].training.strategy = CS_STRAT_FSDP_HYBRID_SHARD;
    s.rows[1].training.shard_group = 3; /* does not divide 8 GPUs */
    cs_cluster c = cs_test_cluster("dgx-a100");
    cs_calib_train_compare cmp;
    cs_diag d;
    cs_diag_clear(&d);
    int rc = cs_calib_train_compare_run(&c, &s, &cmp, &d);
    cs_test_diag_error(rc, &d, "runs.csv", 3, 1, "cannot be simulated on cluster", "group 3 of 8");
    cs_training_runs_free(&s);
}
END_TEST

/* The roofline time (us) of a GEMM (m = n = k) or a copy on c: the
 * reference the fit's kernel pricing must agree with (compute.c emit). */
static double ref_time_us(const cs_cluster *c, double mnk, double copy_bytes)
{
    if (mnk > 0) {
        double t_f = 2 * mnk * mnk * mnk /
                     (c->gpu.peak_flops[CS_DTYPE_BF16] * cs_compute_gemm_efficiency(c, mnk, mnk, mnk, 1));
        double b = 2 * 3 * mnk * mnk;
        return 1e6 * fmax(fmax(t_f, b / (c->gpu.hbm_Bps * cs_compute_hbm_efficiency(c, b))),
                          c->gpu.compute.kernel_floor_s);
    }
    double b = 2 * copy_bytes;
    return 1e6 * fmax(b / (c->gpu.hbm_Bps * cs_compute_hbm_efficiency(c, b)),
                      c->gpu.compute.kernel_floor_s);
}

START_TEST(kernel_round_trip)
{
    cs_cluster c = cs_test_cluster("dgx-h100"), alt = c;
    alt.gpu.compute.gemm *= 0.7;
    alt.gpu.compute.gemm_half_flops *= 2;
    alt.gpu.compute.hbm *= 0.8;
    char text[4096] = "kind,dtype,m,n,k,bytes,time_median_us\n";
    for (double n = 256; n <= 8192; n *= 2)
        snprintf(text + strlen(text), sizeof text - strlen(text), "gemm,bf16,%.0f,%.0f,%.0f,0,%.6f\n",
                 n, n, n, ref_time_us(&alt, n, 0));
    for (double b = 1 << 20; b <= (1 << 30); b *= 4)
        snprintf(text + strlen(text), sizeof text - strlen(text), "copy,bytes,0,0,0,%.0f,%.6f\n", b,
                 ref_time_us(&alt, 0, b));
    cs_trun_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_training_runs_read_compute_string(&s, "k.csv", text, strlen(text), &d), &d,
                    "kernels");
    cs_calib_train_result *r;
    cs_test_diag_ok(cs_calib_train(&c, &s, &r, &d), &d, "fit");
    ck_assert(r->rms_before_pct > 10);
    const char *names[] = {"gemm", "gemm_half", "hbm"};
    double want[] = {alt.gpu.compute.gemm, alt.gpu.compute.gemm_half_flops * 1e-9, alt.gpu.compute.hbm};
    for (int i = 0; i < 3; i++) {
        const cs_calib_param *p = param(r, names[i]);
        ck_assert_msg(p->fitted, "%s: %s", names[i], p->why);
        ck_assert_msg(fabs(p->value - want[i]) < 0.02 * want[i], "%s %g, want %g", names[i],
                      p->value, want[i]);
    }
    ck_assert(!param(r, "flash1")->fitted); /* no run */
    cs_calib_train_result_free(r);
    cs_training_runs_free(&s);
}
END_TEST

/* FSDP1 runs, small blocks among them (the CPU thread binds): measured on
 * a cluster whose FSDP1 hooks take 1.5 ms, fitted from the preset (hooks
 * unset: the cited 0.25 ms) the hook cost comes back within 2% with an
 * interval that holds it, lands in gpu.compute.fsdp1_hook_cpu, and what the
 * runs cannot determine (the overlap slowdown: indistinguishable from
 * gemm in step times; FSDP2's hooks: no FSDP2 run) stays unset, absent
 * from the YAML. */
START_TEST(hook_round_trip)
{
    cs_cluster c = cs_test_cluster("dgx-a100"), alt = c;
    alt.gpu.compute.fsdp1_hook_cpu_s = 1.5e-3;
    cs_trun_set s = read_runs(
        "model,layers,hidden,heads,vocab,seq_len,gpus,strategy,precision,micro_batch,grad_accum,"
        "activation_checkpointing,fsdp_version,tokens_per_s_per_gpu\n"
        "mpt-125m,12,768,12,50368,512,8,fsdp_full_shard,amp_bf16/DEFAULT,2,1,none,1,1\n"
        "mpt-125m,12,768,12,50368,2048,8,fsdp_full_shard,amp_bf16/DEFAULT,8,1,none,1,1\n"
        "mpt-350m,24,1024,16,50368,1024,16,fsdp_full_shard,amp_bf16/DEFAULT,4,1,none,1,1\n"
        "mpt-1b,24,2048,16,50368,8192,8,fsdp_full_shard,amp_bf16/DEFAULT,2,1,full,1,1\n"
        "mpt-7b,32,4096,32,50368,32768,8,fsdp_full_shard,amp_bf16/DEFAULT,1,1,full,1,1\n");
    measure_on(&alt, &s);
    cs_calib_train_result *r;
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_calib_train(&c, &s, &r, &d), &d, "fit");
    ck_assert(r->rms_before_pct > 10);
    const cs_calib_param *h = param(r, "fsdp1_hook_cpu");
    ck_assert_msg(h->fitted, "%s", h->why);
    ck_assert_double_eq_tol(h->initial, 0.25, 1e-12); /* the cited default it started from */
    ck_assert_double_eq_tol(h->value, 1.5, 0.03);
    ck_assert(h->ci_lo <= 1.5 && 1.5 <= h->ci_hi);
    ck_assert(!param(r, "fsdp2_hook_cpu")->fitted);
    CS_ASSERT_CONTAINS(param(r, "fsdp2_hook_cpu")->why, "no row runs FSDP2");
    ck_assert(!param(r, "comm_compute_slowdown")->fitted);
    CS_ASSERT_CONTAINS(param(r, "comm_compute_slowdown")->why, "stays unset");
    ck_assert_double_eq(r->cluster.gpu.compute.comm_compute_slowdown, -1);
    ck_assert_double_eq(r->cluster.gpu.compute.fsdp2_hook_cpu_s, -1);
    cs_cluster back;
    cs_buf b = fitted_yaml(&c, r, &back);
    ck_assert_double_eq_tol(back.gpu.compute.fsdp1_hook_cpu_s, h->value * 1e-3, 1e-9);
    ck_assert_double_eq(back.gpu.compute.comm_compute_slowdown, -1);
    ck_assert(!strstr(b.data, "comm_compute_slowdown:") && !strstr(b.data, "fsdp2_hook_cpu:"));
    cs_buf_free(&b);
    cs_calib_train_result_free(r);
    cs_training_runs_free(&s);
}
END_TEST

/* The cluster's gpu.compute.comm_compute_slowdown / fsdp1_hook_cpu are a
 * training's defaults: a run priced on a cluster that sets them equals the
 * run with the scenario keys set, and the scenario's own value wins. */
START_TEST(cluster_keys_are_training_defaults)
{
    cs_cluster c = cs_test_cluster("dgx-a100");
    cs_trun_set s = read_runs(
        "model,layers,hidden,heads,vocab,seq_len,gpus,strategy,precision,micro_batch,grad_accum,"
        "activation_checkpointing,fsdp_version,tokens_per_s_per_gpu\n"
        "mpt-1b,24,2048,16,50368,2048,64,fsdp_full_shard,amp_bf16/DEFAULT,1,1,none,1,1\n"
        "mpt-125m,12,768,12,50368,512,16,fsdp_full_shard,amp_bf16/DEFAULT,2,1,none,1,1\n");
    /* row 0 (communication-heavy) under the slowdown, row 1 (small blocks) under the hooks */
    double *key[2] = {&c.gpu.compute.comm_compute_slowdown, &c.gpu.compute.fsdp1_hook_cpu_s};
    double value[2] = {0.4, 2e-3};
    for (int i = 0; i < 2; i++) {
        double base, on_cluster, on_scenario, both;
        cs_diag d;
        cs_diag_clear(&d);
        cs_trun_row *r = &s.rows[i];
        double *scen = i ? &r->training.fsdp_hook_cpu_s : &r->training.comm_compute_slowdown;
        cs_test_diag_ok(cs_calib_train_predict(&c, &s, (size_t)i, &base, NULL, &d), &d, "preset");
        *key[i] = value[i];
        cs_test_diag_ok(cs_calib_train_predict(&c, &s, (size_t)i, &on_cluster, NULL, &d), &d, "cl");
        ck_assert_msg(fabs(on_cluster - base) > 0.01 * base, "key %d: %g vs %g", i, on_cluster, base);
        *key[i] = -1;
        *scen = value[i];
        cs_test_diag_ok(cs_calib_train_predict(&c, &s, (size_t)i, &on_scenario, NULL, &d), &d, "sc");
        ck_assert_double_eq_tol(on_cluster, on_scenario, 1e-9 * base);
        *key[i] = value[i];
        *scen = 0; /* the scenario's own value wins over the cluster's */
        cs_test_diag_ok(cs_calib_train_predict(&c, &s, (size_t)i, &both, NULL, &d), &d, "both");
        ck_assert(fabs(both - on_cluster) > 0.01 * base);
        *key[i] = -1;
    }
    cs_training_runs_free(&s);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("calib_train");
    TCase *tc = tcase_create("fit");
    tcase_add_test(tc, prediction_is_simulate);
    tcase_add_test(tc, round_trip);
    tcase_add_test(tc, one_width_keeps_width_term);
    tcase_add_test(tc, one_sequence_keeps_attention);
    tcase_add_test(tc, run_must_fit_cluster);
    tcase_add_test(tc, kernel_round_trip);
    tcase_add_test(tc, hook_round_trip);
    tcase_add_test(tc, cluster_keys_are_training_defaults);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
