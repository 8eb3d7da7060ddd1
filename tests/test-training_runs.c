/* SPDX-License-Identifier: MIT */
/*
 * test-training_runs.c - the reader of measured training runs
 * (study/training_runs.h): the mapping of a row to a model and training
 * (as validation/training/throughput.py writes it), the model defaults,
 * informational columns skipped, every validation row read, and bad input
 * at file:line:column.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "study/training_runs.h"
#include "testutil.h"
#include "train/pipeline_sched.h"

#define HEAD                                                                                       \
    "# provenance\n"                                                                               \
    "model,layers,hidden,heads,vocab,seq_len,gpus,strategy,precision,micro_batch,grad_accum,"     \
    "activation_checkpointing,tokens_per_s_per_gpu,cluster\n"
#define ROW_125M "mpt-125m,12,768,12,50368,2048,8,fsdp_full_shard,amp_bf16/DEFAULT,32,2,none,141737,x\n"

START_TEST(row_maps_like_throughput_py)
{
    cs_trun_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_training_runs_read_string(&s, "t.csv", HEAD ROW_125M, strlen(HEAD ROW_125M), &d),
                    &d, "minimal");
    ck_assert_uint_eq(s.n, 1);
    const cs_trun_row *r = &s.rows[0];
    ck_assert_int_eq(r->line, 3);
    ck_assert_str_eq(r->model.name, "mpt-125m");
    ck_assert_int_eq(r->model.kv_heads, 12);
    ck_assert_int_eq(r->model.ffn_hidden, 4 * 768);
    ck_assert_int_eq(r->model.biases, 1); /* not gated: GPT style */
    ck_assert_int_eq(r->model.learned_positions, 1);
    ck_assert_double_eq(r->model.params, 125311488); /* the table's NumParams */
    ck_assert_int_eq(r->training.strategy, CS_STRAT_FSDP_FULL_SHARD);
    ck_assert_int_eq(r->training.param_dtype, CS_DTYPE_BF16);
    ck_assert_int_eq(r->training.grad_reduce_dtype, CS_DTYPE_FP32);
    ck_assert_int_eq(r->training.master_weights_fp32, 1);
    ck_assert_int_eq(r->training.backward_prefetch, CS_PREFETCH_POST);
    ck_assert_int_eq(r->training.attention_kernel, CS_ATTN_FLASH1);
    ck_assert_int_eq(r->training.limit_all_gathers, 2);
    ck_assert_int_eq(r->training.micro_batch, 32);
    ck_assert_int_eq(r->training.grad_accum, 2);
    ck_assert_int_eq(r->training.train_metrics, 2); /* Composer's two train metrics */
    ck_assert_int_eq(r->gpus, 8);
    ck_assert_double_eq(r->measured_tps_per_gpu, 141737);
    ck_assert(isnan(r->measured_mfu_pct));
    ck_assert_str_eq(s.files[0], "t.csv");
    cs_training_runs_free(&s);
}
END_TEST

START_TEST(optional_columns)
{
    const char *text = "model,layers,hidden,heads,vocab,seq_len,gpus,strategy,precision,micro_batch,"
                       "grad_accum,activation_checkpointing,tokens_per_s_per_gpu,attention_kernel,"
                       "backward_prefetch,limit_all_gathers,gated_mlp,kv_heads,ffn_hidden,"
                       "train_metrics\n"
                       "m,4,1024,16,32000,4096,8,fsdp_full_shard,bf16/PURE,1,1,full,1000,flash2,"
                       "pre,false,true,4,2816,0\n";
    cs_trun_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_training_runs_read_string(&s, "o.csv", text, strlen(text), &d), &d, "opt");
    const cs_trun_row *r = &s.rows[0];
    ck_assert_int_eq(r->training.attention_kernel, CS_ATTN_FLASH2);
    ck_assert_int_eq(r->training.backward_prefetch, CS_PREFETCH_PRE);
    ck_assert_int_eq(r->training.limit_all_gathers, 0);
    ck_assert_int_eq(r->training.master_weights_fp32, 0);
    ck_assert_int_eq(r->training.grad_reduce_dtype, CS_DTYPE_BF16);
    ck_assert_int_eq(r->training.checkpointing, CS_CKPT_FULL);
    ck_assert_int_eq(r->model.gated_mlp, 1);
    ck_assert_int_eq(r->model.biases, 0); /* gated: LLaMA style */
    ck_assert_int_eq(r->model.kv_heads, 4);
    ck_assert_int_eq(r->training.train_metrics, 0); /* the column's 0 over the default 2 */
    cs_training_runs_free(&s);
}
END_TEST

/* torchtune's options as columns (the scenario keys), default off. */
START_TEST(torchtune_option_columns)
{
    const char *text = "model,layers,hidden,heads,vocab,seq_len,gpus,strategy,precision,micro_batch,"
                       "grad_accum,activation_checkpointing,tokens_per_s_per_gpu,"
                       "optimizer_in_backward,activation_offloading\n"
                       "m,4,1024,16,32000,4096,1,ddp,bf16/PURE,2,1,full,1000,true,true\n"
                       "m,4,1024,16,32000,4096,1,ddp,bf16/PURE,2,1,full,1000,false,\n";
    cs_trun_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_training_runs_read_string(&s, "o.csv", text, strlen(text), &d), &d, "tt");
    ck_assert_int_eq(s.rows[0].training.optimizer_in_backward, 1);
    ck_assert_int_eq(s.rows[0].training.activation_offloading, 1);
    ck_assert_int_eq(s.rows[1].training.optimizer_in_backward, 0);
    ck_assert_int_eq(s.rows[1].training.activation_offloading, 0); /* empty: the default */
    cs_training_runs_free(&s);
}
END_TEST

START_TEST(validation_table_reads)
{
    cs_trun_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(
        cs_training_runs_read(&s, "validation/training/mpt_llm_foundry_a100_80gb_h100.csv", &d),
        &d, "validation");
    ck_assert_uint_eq(s.n, 113); /* every row; the params column checked on each */
    ck_assert_str_eq(s.rows[0].table, "h100_bf16");
    ck_assert_double_eq(s.rows[0].measured_mfu_pct, 42.57);
    cs_training_runs_free(&s);
}
END_TEST

/* text (HEAD + rows) fails at line:column with msg */
static void bad(const char *text, int line, int column, const char *msg)
{
    cs_trun_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    int rc = cs_training_runs_read_string(&s, "b.csv", text, strlen(text), &d);
    cs_test_diag_error(rc, &d, "b.csv", line, column, msg, "%s", text);
    ck_assert_uint_eq(s.n, 0);
    cs_training_runs_free(&s);
}

START_TEST(errors_at_line_column)
{
    char *t = cs_test_replace(HEAD ROW_125M, "amp_bf16/DEFAULT", "fp8");
    bad(t, 3, 49, "column 'precision': expected amp_bf16/DEFAULT or bf16/PURE, got 'fp8'");
    free(t);
    t = cs_test_replace(HEAD ROW_125M, ",none,", ",some,");
    bad(t, 3, 71, "expected none, selective or full");
    free(t);
    t = cs_test_replace(HEAD ROW_125M, "mpt-125m,12,", "mpt-125m,1.5,");
    bad(t, 3, 10, "column 'layers': expected an integer in 1..100000");
    free(t);
    t = cs_test_replace(HEAD ROW_125M, "micro_batch,", "");
    bad(t, 2, 1, "no 'micro_batch' column");
    free(t);
    t = cs_test_replace(HEAD ROW_125M, "768,12,", "768,7,");
    bad(t, 3, 1, "model shape is not valid");
    free(t);
    bad(HEAD, 2, 1, "no training run");
    /* a params column that differs from collsim's count */
    const char *p = "model,layers,hidden,heads,vocab,seq_len,gpus,strategy,precision,micro_batch,"
                    "grad_accum,activation_checkpointing,tokens_per_s_per_gpu,params\n"
                    "m,12,768,12,50368,2048,8,ddp,amp_bf16/DEFAULT,1,1,none,1,125311489\n";
    bad(p, 2, 58, "collsim counts 125311488 parameters for this shape, the row says 125311489");
}
END_TEST

START_TEST(compute_csv)
{
    const char *text = "kind,backend,dtype,m,n,k,bytes,ranks,iters,time_min_us,time_median_us,kernel\n"
                       "gemm,nccl,bf16,4096,4096,4096,0,8,20,1,250.5,mlp_up.fwd\n"
                       "copy,nccl,bytes,0,0,0,1048576,8,20,1,5.25,\n";
    cs_trun_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_training_runs_read_compute_string(&s, "k.csv", text, strlen(text), &d), &d,
                    "compute");
    ck_assert_uint_eq(s.nk, 2);
    ck_assert_uint_eq(s.n, 0);
    ck_assert(s.kernels[0].gemm);
    ck_assert_int_eq(s.kernels[0].dtype, CS_DTYPE_BF16);
    ck_assert_double_eq(s.kernels[0].k, 4096);
    ck_assert_double_eq(s.kernels[0].time_us, 250.5); /* the median, not the min */
    ck_assert_str_eq(s.kernels[0].kernel, "mlp_up.fwd");
    ck_assert(!s.kernels[1].gemm);
    ck_assert_double_eq(s.kernels[1].bytes, 1048576);
    ck_assert_str_eq(s.kernels[1].kernel, "");
    /* errors at the cell; nothing appended */
    char *t = cs_test_replace(text, "copy,nccl", "norm,nccl");
    int rc = cs_training_runs_read_compute_string(&s, "k.csv", t, strlen(t), &d);
    cs_test_diag_error(rc, &d, "k.csv", 3, 1, "column 'kind': expected gemm or copy, got 'norm'",
                       "kind");
    free(t);
    t = cs_test_replace(text, ",250.5,", ",-1,");
    rc = cs_training_runs_read_compute_string(&s, "k.csv", t, strlen(t), &d);
    cs_test_diag_error(rc, &d, "k.csv", 2, 40, "column 'time_median_us': expected a number > 0",
                       "time");
    free(t);
    t = cs_test_replace(text, "time_median_us", "time_med");
    rc = cs_training_runs_read_compute_string(&s, "k.csv", t, strlen(t), &d);
    cs_test_diag_error(rc, &d, "k.csv", 1, 1, "no 'time_median_us' column", "header");
    free(t);
    ck_assert_uint_eq(s.nk, 2);
    cs_training_runs_free(&s);
}
END_TEST

/* Issue 27: the schemas' ranges (limits.h) hold here too; a column named
 * twice, a NUL byte inside a cell and a GEMM dimension beyond collsim-hw's
 * range are refused at the cell; rows grow in amortised O(1). */
START_TEST(hostile_cells)
{
    static const struct {
        const char *from, *to;
        int column;
        const char *msg;
    } cases[] = {
        {"mpt-125m,12,", "mpt-125m,1000000000,", 10,
         "column 'layers': expected an integer in 1..100000, got '1000000000'"},
        {",768,", ",999999999,", 13, "column 'hidden': expected an integer in 1..1000000"},
        {",2048,", ",1000000000,", 26, "column 'seq_len': expected an integer in 1..100000000"},
        {",32,2,", ",32,2000000,", 69, "column 'grad_accum': expected an integer in 1..1048576"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = cs_test_replace(HEAD ROW_125M, cases[i].from, cases[i].to);
        bad(t, 3, cases[i].column, cases[i].msg);
        free(t);
    }
    /* a column named twice: which would count? */
    char *t = cs_test_replace(HEAD ROW_125M, ",cluster\n", ",LAYERS\n");
    bad(t, 2, 134, "column 'LAYERS' given twice (first at column 7)");
    free(t);
    /* "8<NUL>junk" in gpus was read as 8 */
    cs_trun_set s = {0};
    cs_diag d;
    char buf[512];
    int n = snprintf(buf, sizeof buf, "%s", HEAD ROW_125M);
    char *g = strstr(buf, ",8,fsdp");
    memmove(g + 7, g + 2, strlen(g + 2) + 1); /* ",8" + NUL + "junk" */
    memcpy(g + 2, "\0junk", 5);
    n += 5;
    int rc = cs_training_runs_read_string(&s, "b.csv", buf, (size_t)n, &d);
    cs_test_diag_error(rc, &d, "b.csv", 3, 31, "column 'gpus': a NUL byte in the cell", "nul");
    ck_assert_uint_eq(s.n, 0);
    /* the kernel timings: the same, and GEMM dimensions within 1..2^31-1 */
    const char *k = "kind,backend,dtype,m,n,k,bytes,ranks,iters,time_min_us,time_median_us,kernel\n"
                    "gemm,nccl,bf16,4096,4096,4096,0,8,20,1,250.5,mlp_up.fwd\n";
    t = cs_test_replace(k, "bf16,4096,", "bf16,1e300,");
    rc = cs_training_runs_read_compute_string(&s, "k.csv", t, strlen(t), &d);
    cs_test_diag_error(rc, &d, "k.csv", 2, 16, "column 'm': expected a whole number in 1..2147483647",
                       "m");
    free(t);
    t = cs_test_replace(k, "bf16,4096,", "bf16,4096.5,");
    rc = cs_training_runs_read_compute_string(&s, "k.csv", t, strlen(t), &d);
    cs_test_diag_error(rc, &d, "k.csv", 2, 16, "expected a whole number", "fraction");
    free(t);
    t = cs_test_replace(k, ",kernel\n", ",time_median_us\n");
    rc = cs_training_runs_read_compute_string(&s, "k.csv", t, strlen(t), &d);
    cs_test_diag_error(rc, &d, "k.csv", 1, 71, "column 'time_median_us' given twice (first at column 56)",
                       "twice");
    free(t);
    n = snprintf(buf, sizeof buf, "%s", k);
    g = strstr(buf, ",250.5,");
    memmove(g + 6, g + 4, strlen(g + 4) + 1); /* ",250" + NUL + "x" + ".5," */
    memcpy(g + 4, "\0x", 2);
    n += 2;
    rc = cs_training_runs_read_compute_string(&s, "k.csv", buf, (size_t)n, &d);
    cs_test_diag_error(rc, &d, "k.csv", 2, 40, "no NUL byte in the cell", "nul");
    ck_assert_uint_eq(s.nk, 0);
    /* many rows: capacity doubles */
    size_t rows = 5000, len = strlen(HEAD) + rows * strlen(ROW_125M);
    char *big = malloc(len + 1), *o = big;
    o += sprintf(o, "%s", HEAD);
    for (size_t i = 0; i < rows; i++) o += sprintf(o, "%s", ROW_125M);
    rc = cs_training_runs_read_string(&s, "big.csv", big, len, &d);
    cs_test_diag_ok(rc, &d, "big");
    ck_assert_uint_eq(s.n, rows);
    ck_assert_uint_ge(s.cap, s.n);
    ck_assert_uint_lt(s.cap, 2 * s.n);
    free(big);
    cs_training_runs_free(&s);
}
END_TEST

/* The tensor-parallel columns (issue 22): tp, sequence_parallel and async_tp
 * read into the scenario keys, their defaults when absent, and hostile
 * cells refused at their column with tensor_parallel's range (limit.h). */
/* Issue 24's columns: pp, virtual_stages, pipeline_schedule as the
 * scenario keys read them (ranges from limit.h, the schedule rows' names),
 * empty or absent cells the defaults. */
START_TEST(pp_columns)
{
    const char *text = "model,layers,hidden,heads,vocab,seq_len,gpus,strategy,precision,micro_batch,"
                       "grad_accum,activation_checkpointing,tokens_per_s_per_gpu,pp,"
                       "virtual_stages,pipeline_schedule\n"
                       "m,8,1024,16,32000,4096,8,ddp,bf16/PURE,1,8,full,1000,4,2,interleaved_1f1b\n"
                       "m,8,1024,16,32000,4096,8,ddp,bf16/PURE,1,8,full,1000,2,,zero_bubble\n"
                       "m,8,1024,16,32000,4096,8,ddp,bf16/PURE,1,8,full,1000,,,\n";
    cs_trun_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_training_runs_read_string(&s, "pp.csv", text, strlen(text), &d), &d, "pp");
    ck_assert_uint_eq(s.n, 3);
    ck_assert_int_eq(s.rows[0].training.pipeline_parallel, 4);
    ck_assert_int_eq(s.rows[0].training.virtual_stages, 2);
    ck_assert_str_eq(cs_pp_schedule_names[s.rows[0].training.pipeline_schedule], "interleaved_1f1b");
    ck_assert_int_eq(s.rows[1].training.pipeline_parallel, 2);
    ck_assert_int_eq(s.rows[1].training.virtual_stages, 1);
    ck_assert_str_eq(cs_pp_schedule_names[s.rows[1].training.pipeline_schedule], "zero_bubble");
    /* empty cells: no pipeline, the schedule left to the default (-1) */
    ck_assert_int_eq(s.rows[2].training.pipeline_parallel, 1);
    ck_assert_int_eq(s.rows[2].training.virtual_stages, 1);
    ck_assert_int_eq(s.rows[2].training.pipeline_schedule, -1);
    cs_training_runs_free(&s);
    static const struct {
        const char *cells, *msg;
    } cases[] = {
        {"0,1,1f1b", "column 'pp': expected an integer in 1..1024, got '0'"},
        {"70000,1,1f1b", "column 'pp': expected an integer in 1..1024, got '70000'"},
        {"2,0,1f1b", "column 'virtual_stages': expected an integer in 1..65536, got '0'"},
        {"2,1,pipedream", "column 'pipeline_schedule': expected gpipe, 1f1b, interleaved_1f1b or "
                          "zero_bubble, got 'pipedream'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char buf[512];
        snprintf(buf, sizeof buf,
                 "model,layers,hidden,heads,vocab,seq_len,gpus,strategy,precision,micro_batch,"
                 "grad_accum,activation_checkpointing,tokens_per_s_per_gpu,pp,virtual_stages,"
                 "pipeline_schedule\nm,8,1024,16,32000,4096,8,ddp,bf16/PURE,1,8,full,1000,%s\n",
                 cases[k].cells);
        cs_trun_set t = {0};
        int rc = cs_training_runs_read_string(&t, "bad.csv", buf, strlen(buf), &d);
        ck_assert_msg(rc != 0, "case %zu accepted", k);
        ck_assert_int_eq(d.line, 2);
        ck_assert_msg(strstr(d.message, cases[k].msg), "case %zu: '%s'", k, d.message);
        cs_training_runs_free(&t);
    }
}
END_TEST

START_TEST(tp_columns)
{
    const char *text = "model,layers,hidden,heads,vocab,seq_len,gpus,strategy,precision,micro_batch,"
                       "grad_accum,activation_checkpointing,tokens_per_s_per_gpu,tp,"
                       "sequence_parallel,async_tp\n"
                       "m,4,1024,16,32000,4096,8,fsdp_full_shard,bf16/PURE,1,1,full,1000,4,true,"
                       "true\n"
                       "m,4,1024,16,32000,4096,8,fsdp_full_shard,bf16/PURE,1,1,full,1000,2,false,"
                       "\n"
                       "m,4,1024,16,32000,4096,8,fsdp_full_shard,bf16/PURE,1,1,full,1000,,,\n";
    cs_trun_set s = {0};
    cs_diag d;
    cs_diag_clear(&d);
    cs_test_diag_ok(cs_training_runs_read_string(&s, "tp.csv", text, strlen(text), &d), &d, "tp");
    ck_assert_uint_eq(s.n, 3);
    ck_assert_int_eq(s.rows[0].training.tensor_parallel, 4);
    ck_assert_int_eq(s.rows[0].training.sequence_parallel, 1);
    ck_assert_int_eq(s.rows[0].training.async_tp, 1);
    ck_assert_int_eq(s.rows[1].training.tensor_parallel, 2);
    ck_assert_int_eq(s.rows[1].training.sequence_parallel, 0);
    ck_assert_int_eq(s.rows[1].training.async_tp, 0);
    /* empty cells: the scenario's defaults (T 1, SP on when T > 1, no async) */
    ck_assert_int_eq(s.rows[2].training.tensor_parallel, 1);
    ck_assert_int_eq(s.rows[2].training.sequence_parallel, -1);
    ck_assert_int_eq(s.rows[2].training.async_tp, 0);
    cs_training_runs_free(&s);
    /* absent columns: the same defaults */
    cs_test_diag_ok(cs_training_runs_read_string(&s, "t.csv", HEAD ROW_125M, strlen(HEAD ROW_125M), &d),
                    &d, "no tp");
    ck_assert_int_eq(s.rows[0].training.tensor_parallel, 1);
    ck_assert_int_eq(s.rows[0].training.sequence_parallel, -1);
    cs_training_runs_free(&s);
    static const struct {
        const char *cells, *msg;
        int column;
    } cases[] = {
        {"0,true,false", "column 'tp': expected an integer in 1..65536, got '0'", 66},
        {"65537,true,false", "column 'tp': expected an integer in 1..65536, got '65537'", 66},
        {"2.5,true,false", "column 'tp': expected an integer in 1..65536, got '2.5'", 66},
        {"-8,true,false", "column 'tp': expected an integer in 1..65536, got '-8'", 66},
        {"1e300,true,false", "column 'tp': expected an integer in 1..65536, got '1e300'", 66},
        {"2,maybe,false", "column 'sequence_parallel': expected true or false, got 'maybe'", 68},
        {"2,true,1", "column 'async_tp': expected true or false, got '1'", 73},
    };
    const char *head = "model,layers,hidden,heads,vocab,seq_len,gpus,strategy,precision,micro_batch,"
                       "grad_accum,activation_checkpointing,tokens_per_s_per_gpu,tp,"
                       "sequence_parallel,async_tp\n";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char t[1024];
        snprintf(t, sizeof t, "%sm,4,1024,16,32000,4096,8,fsdp_full_shard,bf16/PURE,1,1,full,1000,%s\n",
                 head, cases[i].cells);
        bad(t, 2, cases[i].column, cases[i].msg);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("training_runs");
    TCase *tc = tcase_create("read");
    tcase_add_test(tc, row_maps_like_throughput_py);
    tcase_add_test(tc, optional_columns);
    tcase_add_test(tc, torchtune_option_columns);
    tcase_add_test(tc, validation_table_reads);
    tcase_add_test(tc, errors_at_line_column);
    tcase_add_test(tc, compute_csv);
    tcase_add_test(tc, hostile_cells);
    tcase_add_test(tc, tp_columns);
    tcase_add_test(tc, pp_columns);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
