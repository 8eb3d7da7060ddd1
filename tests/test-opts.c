/* SPDX-License-Identifier: MIT */
/*
 * test-opts.c - the collsim option parser (cli/opts.c): a table of every
 * argument kind parsed into a struct (strings, flags, integers with their
 * range, numbers above a bound, sizes, choices with aliases, "auto" and a
 * subset), parameter counts, flash/standard, strategy lists (each use
 * replacing the last, at most one row per strategy kept), the next
 * positional argument, the shared errors (unknown
 * option, missing value, --help) with their exact messages and exit codes,
 * the "expected a, b or c" lists built from the library's tables, the
 * list tokenizer, help-text lists and wrapping, the training overrides, and --ranks refusing exactly
 * what the scenario schema refuses (the same range in both messages).
 * A deliberately wrong expected message must be told apart.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/collective.h"
#include "opts.h"
#include "out/table.h"
#include "train/training.h"
#include "testutil.h"

#define N(a) (sizeof a / sizeof a[0])

typedef struct args {
    const char *name, *out;
    int flag, count, op, algo, engine, fmt, dtype, ckpt, attention;
    double factor, size, params;
    cs_cli_strategies strategies;
    int optimizer, global_batch;
} args;

static const int two_dtypes[] = {CS_DTYPE_FP16, CS_DTYPE_FP32, CS_OPT_END};

#define AT(f) CS_ARG_AT(args, f)
static const cs_opt rows[] = {
    {"name", .parse = cs_opt_string, AT(name)},
    {"flag", .flag = 1, .parse = cs_opt_set, AT(flag)},
    {"count", .parse = cs_opt_int, AT(count), .lo = 1, .hi = 10},
    {"op", .parse = cs_opt_choice, AT(op), .choice = &cs_choice_op},
    {"algo", .parse = cs_opt_choice, AT(algo), .choice = &cs_choice_algo, .with_auto = 1},
    CS_ARG_ENGINE(args, engine, CS_SAYS_EXPECTS),
    CS_ARG_FORMAT(args, fmt),
    {"dtype", .parse = cs_opt_choice, AT(dtype), .choice = &cs_choice_dtype_nccl,
     .only = two_dtypes},
    CS_ARG_CKPT(args, ckpt),
    {"factor", .parse = cs_opt_above, AT(factor), .lo = 1},
    {"size", .parse = cs_opt_size, AT(size)},
    {"params", .parse = cs_opt_params, AT(params)},
    CS_ARG_ATTENTION(args, attention),
    {"strategy", .parse = cs_opt_strategies, AT(strategies)},
    {"zero", .parse = cs_opt_zero, AT(strategies)},
    CS_ARG_OPTIMIZER(args, optimizer),
    CS_ARG_GLOBAL_BATCH(args, global_batch),
    CS_ARG_OUTPUT(args, out),
};
#undef AT

static int helped;
static void help(FILE *f)
{
    (void)f;
    helped++;
}

/* Runs cs_opts_parse on the words of line (split at blanks) into *a, with
 * what it printed on stderr in err (the caller frees); returns its code. */
static int parse_line(const char *line, args *a, int *next, char **err)
{
    static char buf[512]; /* the values stored point into it */
    char *argv[32];
    int argc = 0;
    snprintf(buf, sizeof buf, "test %s", line);
    for (char *s = strtok(buf, " "); s && argc < 31; s = strtok(NULL, " ")) argv[argc++] = s;
    argv[argc] = NULL;
    *a = (args){.op = -1, .algo = -1, .engine = -1, .fmt = -1, .dtype = -1, .ckpt = -1,
                .attention = -1, .optimizer = -1};
    fflush(stderr);
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    int rc = cs_opts_parse("test", rows, N(rows), argc, argv, a, help, next);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    long len = ftell(tmp);
    *err = calloc(1, (size_t)len + 1);
    rewind(tmp);
    ck_assert_uint_eq(fread(*err, 1, (size_t)len, tmp), (size_t)len);
    fclose(tmp);
    return rc;
}

/* Whether line fails with exit code 2 and exactly the message want (the
 * --help hint appended when hint). */
static int refuses(const char *line, const char *want, int hint)
{
    args a;
    int next;
    char *err, full[600];
    int rc = parse_line(line, &a, &next, &err);
    snprintf(full, sizeof full, "collsim test: %s\n%s", want, hint ? "Try 'collsim test --help'.\n" : "");
    int ok = rc == CS_EXIT_USAGE && !strcmp(err, full);
    if (!ok) fprintf(stderr, "'%s': rc %d, message\n%s--- want\n%s", line, rc, err, full);
    free(err);
    return ok;
}

START_TEST(every_kind)
{
    args a;
    int next;
    char *err;
    int rc = parse_line("--name x --flag --count 10 --op all_gather_perf --algo auto --engine des "
                        "--format JSON --dtype half --checkpointing full --factor 1.5 --size 4K "
                        "-o out.txt pos1 pos2",
                        &a, &next, &err);
    ck_assert_int_eq(rc, -1);
    ck_assert_str_eq(err, "");
    free(err);
    ck_assert_str_eq(a.name, "x");
    ck_assert_str_eq(a.out, "out.txt");
    ck_assert_int_eq(a.flag, 1);
    ck_assert_int_eq(a.count, 10);
    ck_assert_int_eq(a.op, CS_OP_ALL_GATHER);
    ck_assert_int_eq(a.algo, CS_CHOICE_AUTO);
    ck_assert_int_eq(a.engine, CS_ENGINE_DES);
    ck_assert_int_eq(a.fmt, CS_FORMAT_JSON);
    ck_assert_int_eq(a.dtype, CS_DTYPE_FP16);
    ck_assert_int_eq(a.ckpt, CS_CKPT_FULL);
    ck_assert_double_eq(a.factor, 1.5);
    ck_assert_double_eq(a.size, 4096);
    ck_assert_int_eq(next, 24); /* "pos1": the first word that is no option */
    rc = parse_line("--algo tree --dtype fp32", &a, &next, &err);
    ck_assert_int_eq(rc, -1);
    free(err);
    ck_assert_int_eq(a.algo, CS_ALGO_TREE);
    ck_assert_int_eq(a.dtype, CS_DTYPE_FP32);
    ck_assert_int_eq(a.count, 0); /* not given: untouched */
}
END_TEST

START_TEST(training_kinds)
{
    args a;
    int next;
    char *err;
    int rc = parse_line("--params 1.5T --attention standard --strategy zero1,ddp", &a, &next, &err);
    ck_assert_int_eq(rc, -1);
    ck_assert_str_eq(err, "");
    free(err);
    ck_assert_double_eq(a.params, 1.5e12);
    ck_assert_int_eq(a.attention, 0);
    ck_assert_int_eq(a.strategies.n, 2);
    ck_assert_int_eq(a.strategies.v[0], CS_STRAT_ZERO1);
    ck_assert_int_eq(a.strategies.v[1], CS_STRAT_DDP);
    /* a second --strategy replaces the first; repeats are kept, up to one
     * row per strategy of the table */
    rc = parse_line("--attention flash --strategy ddp --strategy "
                    "ddp,ddp,ddp,ddp,ddp,ddp,ddp,fsdp_full_shard",
                    &a, &next, &err);
    ck_assert_int_eq(rc, -1);
    free(err);
    ck_assert_int_eq(a.attention, 1);
    ck_assert_int_eq(a.strategies.n, CS_STRAT_COUNT);
    ck_assert_int_eq(a.strategies.v[CS_STRAT_COUNT - 1], CS_STRAT_DDP);
    rc = parse_line("--strategy zero1 --strategy fsdp_full_shard,ddp", &a, &next, &err);
    ck_assert_int_eq(rc, -1);
    free(err);
    ck_assert_int_eq(a.strategies.n, 2);
    ck_assert_int_eq(a.strategies.v[0], CS_STRAT_FSDP_FULL_SHARD);
    ck_assert(refuses("--params 0", "--params expects a count > 0 such as 13e9 or 7B, got '0'", 1));
    ck_assert(refuses("--params 7X", "--params expects a count > 0 such as 13e9 or 7B, got '7X'", 1));
    ck_assert(refuses("--attention Flash",
                      "--attention expects flash, flash2, flash1 or standard, got 'Flash' (did you "
                      "mean 'flash'?)",
                      1));
    /* a named kernel: fused, and that kernel */
    rc = parse_line("--attention flash1", &a, &next, &err);
    ck_assert_int_eq(rc, -1);
    free(err);
    ck_assert_int_eq(a.attention, 2 + CS_ATTN_FLASH1);
    char names[256], want[400];
    cs_opts_names(names, sizeof names, &cs_choice_strategy, NULL, 0);
    snprintf(want, sizeof want, "unknown strategy 'fsdq' (did you mean 'fsdp'? expected %s)",
             names);
    ck_assert(refuses("--strategy ddp,fsdq", want, 1));
    /* an unknown name after the kept ones is still refused */
    ck_assert(refuses("--strategy ddp,ddp,ddp,ddp,ddp,ddp,ddp,xxxxxxxxxx",
                      "unknown strategy 'xxxxxxxxxx' (expected ddp, zero1, deepspeed_zero1, fsdp_no_shard, "
                      "fsdp_shard_grad_op, fsdp_full_shard or fsdp_hybrid_shard)",
                      1));
    char longer[300];
    memset(longer, 'x', 299);
    longer[299] = 0;
    char line[320];
    snprintf(line, sizeof line, "--strategy %s", longer);
    ck_assert(refuses(line, "--strategy: list too long", 1));
}
END_TEST

/* PyTorch's and DeepSpeed's spellings, loosely (case, '-', '_'), --zero
 * stages, lower-case parameter suffixes, optimizers; refusals suggest. */
START_TEST(aliases)
{
    args a;
    int next;
    char *err;
    int rc = parse_line("--strategy FULL_SHARD,zero2,ZeRO-1,shard-grad-op,NO_SHARD,hybrid_shard,"
                        "Zero0,DDP --params 70b --optimizer AdamW",
                        &a, &next, &err);
    ck_assert_int_eq(rc, -1);
    ck_assert_str_eq(err, "");
    free(err);
    static const cs_strategy want[] = {CS_STRAT_FSDP_FULL_SHARD, CS_STRAT_FSDP_SHARD_GRAD_OP,
                                       CS_STRAT_ZERO1, CS_STRAT_FSDP_SHARD_GRAD_OP,
                                       CS_STRAT_FSDP_NO_SHARD, CS_STRAT_FSDP_HYBRID_SHARD};
    ck_assert_int_eq(a.strategies.n, CS_STRAT_COUNT);
    for (size_t i = 0; i < N(want); i++) ck_assert_int_eq(a.strategies.v[i], want[i]);
    ck_assert_double_eq(a.params, 70e9);
    ck_assert_int_eq(a.optimizer, CS_OPT_ADAMW);
    for (int z = 0; z <= 3; z++) {
        static const cs_strategy stage[] = {CS_STRAT_DDP, CS_STRAT_ZERO1,
                                            CS_STRAT_FSDP_SHARD_GRAD_OP, CS_STRAT_FSDP_FULL_SHARD};
        char line[64];
        snprintf(line, sizeof line, "--strategy ddp,zero1 --zero %d --global-batch 512", z);
        ck_assert_int_eq(parse_line(line, &a, &next, &err), -1);
        free(err);
        ck_assert_int_eq(a.strategies.n, 1);
        ck_assert_int_eq(a.strategies.v[0], stage[z]);
        ck_assert_int_eq(a.global_batch, 512);
    }
    ck_assert(refuses("--zero 4", "--zero expects an integer in 0..3, got '4'", 0));
    char names[256], msg[400];
    cs_opts_names(names, sizeof names, &cs_choice_strategy, NULL, 0);
    snprintf(msg, sizeof msg, "unknown strategy 'FULL_SHRD' (did you mean 'FULL_SHARD'? expected %s)",
             names);
    ck_assert(refuses("--strategy FULL_SHRD", msg, 1));
    ck_assert(refuses("--optimizer adamm",
                      "--optimizer expects adam, adamw, sgd_momentum or sgd, got 'adamm' (did you "
                      "mean 'adam'?)",
                      1));
    ck_assert(refuses("--params 7q", "--params expects a count > 0 such as 13e9 or 7B, got '7q'", 1));
    /* the exact names stay exact where no aliases are declared */
    ck_assert(refuses("--engine Des", "--engine expects analytic or des, got 'Des' (did you mean "
                                      "'des'?)",
                      1));
    char buf[512];
    cs_opts_aliases(buf, sizeof buf, &cs_choice_strategy);
    ck_assert_ptr_nonnull(strstr(buf, "zero3=fsdp_full_shard"));
    ck_assert_ptr_nonnull(strstr(buf, "SHARD_GRAD_OP=fsdp_shard_grad_op"));
}
END_TEST

/* --global-batch derives grad_accum; a remainder or a disagreeing
 * --grad-accum is refused. */
START_TEST(global_batch)
{
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_DDP);
    t.micro_batch = 2;
    cs_cli_knobs k = CS_CLI_KNOBS_UNSET;
    k.global_batch = 256;
    ck_assert_int_eq(cs_cli_knobs_batch("test", &k, 16, &t), 0);
    ck_assert_int_eq(t.grad_accum, 8);
    k.grad_accum = 8;
    ck_assert_int_eq(cs_cli_knobs_batch("test", &k, 16, &t), 0);
    freopen("/dev/null", "w", stderr);
    k.grad_accum = 4;
    ck_assert_int_eq(cs_cli_knobs_batch("test", &k, 16, &t), CS_EXIT_USAGE);
    k.grad_accum = 0;
    k.global_batch = 100;
    ck_assert_int_eq(cs_cli_knobs_batch("test", &k, 16, &t), CS_EXIT_USAGE);
    k.global_batch = 0;
    t.grad_accum = 3;
    ck_assert_int_eq(cs_cli_knobs_batch("test", &k, 16, &t), 0);
    ck_assert_int_eq(t.grad_accum, 3); /* not given: untouched */
    k = (cs_cli_knobs)CS_CLI_KNOBS_UNSET;
    k.optimizer = CS_OPT_SGD;
    cs_cli_knobs_apply(&k, &t);
    ck_assert_int_eq(t.optimizer, CS_OPT_SGD);
}
END_TEST

START_TEST(messages)
{
    ck_assert(refuses("--count 0", "--count expects an integer in 1..10, got '0'", 0));
    ck_assert(refuses("--count 11", "--count expects an integer in 1..10, got '11'", 0));
    ck_assert(refuses("--count 3x", "--count expects an integer in 1..10, got '3x'", 0));
    ck_assert(refuses("--op all_reduse",
                      "unknown --op 'all_reduse' (did you mean 'all_reduce'? expected all_reduce, "
                      "all_gather, "
                      "reduce_scatter, broadcast, reduce, all_to_all or send_recv)",
                      1));
    ck_assert(refuses("--algo ringg", "unknown --algo 'ringg' (did you mean 'ring'? expected auto, ring, tree, nvls, nvlstree, collnet_direct, collnet_chain or p2p)", 1));
    ck_assert(refuses("--engine DES", "--engine expects analytic or des, got 'DES' (did you mean 'des'?)", 1));
    ck_assert(refuses("--format yaml", "unknown --format 'yaml' (expected table, csv or json)", 1));
    /* a subset, in its own order, under nccl-tests' names; other dtypes refused */
    ck_assert(refuses("--dtype bf16", "unknown --dtype 'bf16' (expected half or float)", 1));
    ck_assert(refuses("--checkpointing Full",
                      "--checkpointing expects none, selective or full, got 'Full' (did you mean 'full'?)", 1));
    ck_assert(refuses("--factor 1", "--factor expects a number > 1, got '1'", 1));
    ck_assert(refuses("--factor nan", "--factor expects a number > 1, got 'nan'", 1));
    ck_assert(refuses("--bogus", "unknown option '--bogus'", 1));
    ck_assert(refuses("-x", "unknown option '-x'", 1));
    ck_assert(refuses("--name", "option '--name' needs a value", 1));
    ck_assert(refuses("-o", "option '-o' needs a value", 1));
    /* the deliberately wrong expectation: the other message style */
    args a;
    int next;
    char *err;
    ck_assert_int_eq(parse_line("--engine DES", &a, &next, &err), CS_EXIT_USAGE);
    ck_assert_str_ne(err, "collsim test: unknown --engine 'DES' (expected analytic or des)\n"
                          "Try 'collsim test --help'.\n");
    free(err);
}
END_TEST

START_TEST(help_and_stop)
{
    args a;
    int next;
    char *err;
    helped = 0;
    ck_assert_int_eq(parse_line("--count 2 --help --bogus", &a, &next, &err), CS_EXIT_OK);
    ck_assert_int_eq(helped, 1);
    ck_assert_str_eq(err, "");
    free(err);
    /* the first error stops the parse: later options are not read */
    ck_assert_int_eq(parse_line("--count 0 --name x --help", &a, &next, &err), CS_EXIT_USAGE);
    ck_assert_ptr_null(a.name);
    ck_assert_int_eq(helped, 1);
    free(err);
}
END_TEST

START_TEST(names)
{
    char buf[256];
    cs_opts_names(buf, sizeof buf, &cs_choice_engine, NULL, 0);
    ck_assert_str_eq(buf, "analytic or des");
    cs_opts_names(buf, sizeof buf, &cs_choice_engine, NULL, 1);
    ck_assert_str_eq(buf, "auto, analytic or des");
    static const int one[] = {CS_FORMAT_CSV, CS_OPT_END};
    cs_opts_names(buf, sizeof buf, &cs_choice_format, one, 0);
    ck_assert_str_eq(buf, "csv");
    cs_opts_names(buf, sizeof buf, &cs_choice_dtype, cs_training_dtypes, 0);
    ck_assert_str_eq(buf, "fp32, bf16 or fp16");
    /* every strategy of the library's table, in its order */
    cs_opts_names(buf, sizeof buf, &cs_choice_strategy, NULL, 0);
    char want[256] = "";
    for (int i = 0; i < CS_STRAT_COUNT; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s",
                 i == 0 ? "" : i == CS_STRAT_COUNT - 1 ? " or " : ", ",
                 cs_strategy_name((cs_strategy)i));
    ck_assert_str_eq(buf, want);
    int v;
    ck_assert_int_eq(cs_opts_choose("test", &cs_strategy_item, "fsdp_full_shard", &v), 0);
    ck_assert_int_eq(v, CS_STRAT_FSDP_FULL_SHARD);
    /* for help texts: every name, comma-joined */
    cs_opts_list(buf, sizeof buf, &cs_choice_engine);
    ck_assert_str_eq(buf, "analytic, des");
}
END_TEST

/* What cs_opts_wrap printed for text. */
static char *wrapped(const char *text, int col, int indent, int width)
{
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    cs_opts_wrap(tmp, text, col, indent, width);
    long len = ftell(tmp);
    char *s = calloc(1, (size_t)len + 1);
    rewind(tmp);
    ck_assert_uint_eq(fread(s, 1, (size_t)len, tmp), (size_t)len);
    fclose(tmp);
    return s;
}

START_TEST(wrap)
{
    /* a word that would end past the width starts a new, indented line; one
     * that ends at the width stays */
    char *s = wrapped("aa bb cc dd", 4, 2, 10);
    ck_assert_str_eq(s, "aa bb\n  cc dd\n");
    free(s);
    s = wrapped("aaaa bbbb", 0, 0, 9);
    ck_assert_str_eq(s, "aaaa bbbb\n");
    free(s);
    /* a word longer than the width has a line of its own */
    s = wrapped("a bbbbbbbbbbbb c", 0, 1, 5);
    ck_assert_str_eq(s, "a\n bbbbbbbbbbbb\n c\n");
    free(s);
    /* the deliberately wrong expectation: wrapped at the blank past the width */
    s = wrapped("aa bb cc dd", 4, 2, 10);
    ck_assert_str_ne(s, "aa bb cc\n  dd\n");
    free(s);
}
END_TEST

typedef struct seen {
    char items[8][16];
    int n, stop_at;
} seen;

static int collect(void *ctx, const char *item)
{
    seen *s = ctx;
    if (s->n == s->stop_at) return 7;
    snprintf(s->items[s->n++], sizeof s->items[0], "%s", item);
    return 0;
}

START_TEST(lists)
{
    seen s = {.stop_at = -1};
    ck_assert_int_eq(cs_opts_each("test", "--l", "a,bc", 64, collect, &s), 0);
    ck_assert_int_eq(s.n, 2);
    ck_assert_str_eq(s.items[0], "a");
    ck_assert_str_eq(s.items[1], "bc");
    /* empty items are refused, not skipped (--ranks 8,,16 and --strategy ""
     * ran before); nothing after the empty item is looked at */
    freopen("/dev/null", "w", stderr);
    static const char *const empty[] = {"", ",", "a,,bc", ",a", "a,", "a, ,b"};
    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        s = (seen){.stop_at = -1};
        ck_assert_msg(cs_opts_each("test", "--l", empty[i], 64, collect, &s) == CS_EXIT_USAGE,
                      "'%s' accepted", empty[i]);
        ck_assert_int_le(s.n, 1);
    }
    s = (seen){.stop_at = 1};
    ck_assert_int_eq(cs_opts_each("test", "--l", "a,b,c", 64, collect, &s), 7);
    ck_assert_int_eq(s.n, 1);
    s = (seen){.stop_at = -1};
    ck_assert_int_eq(cs_opts_each("test", "--l", "abcd", 4, collect, &s), CS_EXIT_USAGE);
    ck_assert_int_eq(s.n, 0);
}
END_TEST

START_TEST(knobs)
{
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_DDP);
    cs_training before = t;
    cs_cli_knobs k = CS_CLI_KNOBS_UNSET;
    cs_cli_knobs_apply(&k, &t);
    ck_assert(!memcmp(&t, &before, sizeof t));
    k = (cs_cli_knobs){.dtype = CS_DTYPE_BF16, .micro_batch = 4, .grad_accum = 2,
                       .ckpt = CS_CKPT_SELECTIVE, .attention = 0, .engine = CS_ENGINE_DES};
    cs_cli_knobs_apply(&k, &t);
    ck_assert_int_eq(t.param_dtype, CS_DTYPE_BF16);
    ck_assert_int_eq(t.grad_reduce_dtype, CS_DTYPE_BF16);
    ck_assert_int_eq(t.master_weights_fp32, 0);
    ck_assert_int_eq(t.micro_batch, 4);
    ck_assert_int_eq(t.grad_accum, 2);
    ck_assert_int_eq(t.checkpointing, CS_CKPT_SELECTIVE);
    ck_assert_int_eq(t.flash_attention, 0);
    k = (cs_cli_knobs)CS_CLI_KNOBS_UNSET;
    k.attention = 2 + CS_ATTN_FLASH1;
    cs_cli_knobs_apply(&k, &t);
    ck_assert_int_eq(t.flash_attention, 1);
    ck_assert_int_eq(t.attention_kernel, CS_ATTN_FLASH1);
    ck_assert_int_eq(t.collective_engine, CS_ENGINE_DES);
}
END_TEST

/* "lo..hi" of a message, or "" */
static void range_of(const char *msg, char *out, size_t len)
{
    const char *dots = strstr(msg, "..");
    out[0] = 0;
    if (!dots) return;
    const char *a = dots, *b = dots + 2;
    while (a > msg && a[-1] >= '0' && a[-1] <= '9') a--;
    while (*b >= '0' && *b <= '9') b++;
    snprintf(out, len, "%.*s", (int)(b - a), a);
}

START_TEST(ranks_limit_is_the_schema_s)
{
    typedef struct { int ranks; } rargs;
    static const cs_opt ranks[] = {CS_ARG_RANKS(rargs, ranks)};
    char over[32], cli_msg[256] = "", yaml_range[64], cli_range[64];
    snprintf(over, sizeof over, "%ld", (long)CS_SCENARIO_RANKS_MAX + 1);
    rargs r = {0};
    ck_assert_int_eq(cs_opt_int("test", &ranks[0], "1073741824", &r.ranks), 0);
    ck_assert_int_eq(r.ranks, 1 << 30);
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    int rc = cs_opt_int("test", &ranks[0], over, &r.ranks);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    ck_assert_ptr_nonnull(fgets(cli_msg, sizeof cli_msg, tmp));
    fclose(tmp);
    ck_assert_int_eq(rc, CS_EXIT_USAGE);
    char yaml[256];
    int n = snprintf(yaml, sizeof yaml,
                     "cluster: dgx-h100\nmodel: gpt2-124m\ntraining:\n  strategy: ddp\nranks: %s\n",
                     over);
    cs_scenario *sc = malloc(sizeof *sc);
    cs_diag d;
    ck_assert_int_ne(cs_scenario_load_string("s.yaml", yaml, (size_t)n, sc, &d), 0);
    free(sc);
    range_of(d.message, yaml_range, sizeof yaml_range);
    range_of(cli_msg, cli_range, sizeof cli_range);
    ck_assert_str_eq(yaml_range, "1..1073741824");
    ck_assert_str_eq(cli_range, yaml_range);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("opts");
    TCase *tc = tcase_create("parser");
    tcase_add_test(tc, every_kind);
    tcase_add_test(tc, training_kinds);
    tcase_add_test(tc, wrap);
    tcase_add_test(tc, messages);
    tcase_add_test(tc, help_and_stop);
    tcase_add_test(tc, names);
    tcase_add_test(tc, lists);
    tcase_add_test(tc, knobs);
    tcase_add_test(tc, aliases);
    tcase_add_test(tc, global_batch);
    tcase_add_test(tc, ranks_limit_is_the_schema_s);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return cs_test_run(suite()); }
