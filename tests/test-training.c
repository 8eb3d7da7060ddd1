/* SPDX-License-Identifier: MIT */
/*
 * test-training.c - training defaults and names, every row of the strategy
 * table (names, the CLI's lists, which knobs apply and the messages where
 * they do not; every attribute set: aliases, colour, hooks), and the scenario YAML loader: every key, preset and inline cluster/model, relative paths, the
 * example scenarios (which must load, fit, and be listed in the README),
 * and each class of error with its exact line and column. Runs with the
 * project root as working directory.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/topology.h"
#include "train/memory.h"
#include "train/scenario.h"
#include "train/strategy.h"
#include "train/training.h"
#include "testutil.h"


/* Line numbers in the tests refer to this text. */
static const char BASE[] = "cluster: dgx-h100\n"           /* 1 */
                           "model: gpt3-1.3b\n"            /* 2 */
                           "nodes: 2\n"                    /* 3 */
                           "training:\n"                   /* 4 */
                           "  strategy: fsdp_full_shard\n" /* 5 */
                           "  micro_batch: 2\n";           /* 6 */

static int load(const char *yaml, cs_scenario *sc, cs_diag *d)
{
    return cs_scenario_load_string("s.yaml", yaml, strlen(yaml), sc, d);
}

/* BASE with the first `from` replaced by `to` (from may be ""; then `to`
 * is appended). Caller frees. */
static char *edit(const char *from, const char *to)
{
    return cs_test_replace(BASE, from, to);
}

static cs_scenario expect_ok(const char *yaml)
{
    cs_scenario sc;
    cs_diag d;
    cs_test_diag_ok(load(yaml, &sc, &d), &d, "'%s'", yaml);
    return sc;
}

static void expect_error(const char *yaml, int line, int column, const char *needle)
{
    cs_scenario sc;
    cs_diag d;
    cs_test_diag_error(load(yaml, &sc, &d), &d, "s.yaml", line, column, needle, "'%s'", yaml);
}

static void expect_edit_error(const char *from, const char *to, int line, int column,
                              const char *needle)
{
    char *y = edit(from, to);
    expect_error(y, line, column, needle);
    free(y);
}

START_TEST(defaults)
{
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_FSDP_HYBRID_SHARD);
    ck_assert_int_eq(t.strategy, CS_STRAT_FSDP_HYBRID_SHARD);
    ck_assert_int_eq(t.param_dtype, CS_DTYPE_BF16);
    ck_assert_int_eq(t.grad_reduce_dtype, CS_DTYPE_BF16);
    ck_assert_int_eq(t.master_weights_fp32, 1);
    ck_assert_int_eq(t.optimizer, CS_OPT_ADAMW);
    ck_assert_int_eq(t.micro_batch, 1);
    ck_assert_int_eq(t.grad_accum, 1);
    ck_assert_int_eq(t.checkpointing, CS_CKPT_NONE);
    ck_assert_double_eq(t.bucket_cap_bytes, 25 * MiB);
    ck_assert_double_eq(t.first_bucket_bytes, 1 * MiB);
    ck_assert_int_eq(t.gradient_as_bucket_view, 0);
    ck_assert_int_eq(t.shard_group, 0);
    ck_assert_int_eq(t.backward_prefetch, CS_PREFETCH_PRE);
    ck_assert_int_eq(t.forward_prefetch, 0);
    ck_assert_int_eq(t.limit_all_gathers, 2);
    ck_assert_int_eq(t.reshard_after_forward, -1);
    ck_assert_double_eq(t.compute_efficiency, 0.0); /* the compute model's tables */
    ck_assert_int_eq(t.attention_kernel, CS_ATTN_FLASH2);
    ck_assert_double_eq(t.comm_compute_slowdown, -1.0); /* unset: the SM-share model */
    ck_assert_double_eq(t.cuda_context_bytes, 512 * MiB);
    ck_assert(t.nccl_buffer_bytes < 0);
    ck_assert_double_eq(t.fragmentation, -1); /* unset: the allocator replay decides */
}
END_TEST

/* The optimizer step's HBM traffic per parameter: torch's foreach AdamW
 * (21 fp32 accesses) plus writing the bf16 copy of the fp32 master; the
 * fused kernel 7 accesses. */
START_TEST(optimizer_traffic)
{
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_DDP);
    ck_assert_int_eq(t.optimizer_impl, CS_OPTIMPL_FOREACH);
    /* amp: the fp32 parameters updated in place, no low-precision copy */
    ck_assert_double_eq(cs_training_optimizer_traffic_per_param(&t), 21 * 4);
    cs_training_defaults(&t, CS_STRAT_FSDP_FULL_SHARD); /* fp32 shard, bf16 copy written */
    ck_assert_double_eq(cs_training_optimizer_traffic_per_param(&t), 21 * 4 + 4 + 2);
    t.optimizer_impl = CS_OPTIMPL_FUSED;
    ck_assert_double_eq(cs_training_optimizer_traffic_per_param(&t), 7 * 4 + 4 + 2);
    t.master_weights_fp32 = 0; /* pure bf16: states and params in bf16 */
    ck_assert_double_eq(cs_training_optimizer_traffic_per_param(&t), 7 * 2);
    t.optimizer = CS_OPT_SGD;
    t.param_dtype = CS_DTYPE_FP32;
    ck_assert_double_eq(cs_training_optimizer_traffic_per_param(&t), 3 * 4);
}
END_TEST

START_TEST(names_and_reshard)
{
    /* PyTorch's strategies under their names, and whether each reshards
     * after forward by default (-1); a strategy added to the table is
     * checked by strategy_rows */
    static const struct {
        const char *name;
        cs_strategy id;
        int reshards;
    } known[] = {
        {"ddp", CS_STRAT_DDP, 0},
        {"zero1", CS_STRAT_ZERO1, 0},
        {"fsdp_no_shard", CS_STRAT_FSDP_NO_SHARD, 0},
        {"fsdp_shard_grad_op", CS_STRAT_FSDP_SHARD_GRAD_OP, 0},
        {"fsdp_full_shard", CS_STRAT_FSDP_FULL_SHARD, 1},
        {"fsdp_hybrid_shard", CS_STRAT_FSDP_HYBRID_SHARD, 1},
    };
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        ck_assert_str_eq(cs_strategy_name(known[i].id), known[i].name);
        cs_strategy back;
        ck_assert_int_eq(cs_strategy_parse(known[i].name, &back), 0);
        ck_assert_int_eq(back, known[i].id);
        cs_training t;
        cs_training_defaults(&t, known[i].id);
        ck_assert_int_eq(cs_strategy_reshard_after_forward(&t), known[i].reshards);
    }
    cs_strategy x;
    ck_assert_int_eq(cs_strategy_parse("FULL_SHARD", &x), CS_EINVAL);
    static const char *const opt[] = {"adam", "adamw", "sgd_momentum", "sgd"};
    for (int o = 0; o < CS_OPT_COUNT; o++) {
        ck_assert_str_eq(cs_optimizer_name((cs_optimizer)o), opt[o]);
        cs_optimizer back;
        ck_assert_int_eq(cs_optimizer_parse(opt[o], &back), 0);
        ck_assert_int_eq(back, o);
    }
    cs_optimizer y;
    ck_assert_int_eq(cs_optimizer_parse("lamb", &y), CS_EINVAL);

    /* reshard_after_forward: false turns it off */
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_FSDP_FULL_SHARD);
    t.reshard_after_forward = 0;
    ck_assert_int_eq(cs_strategy_reshard_after_forward(&t), 0);
}
END_TEST

/* Reference for the table's lists: the names in `set`, ", " between, the
 * last two joined by " <last> ". */
static void join_names(char *buf, size_t len, unsigned set, const char *last)
{
    int total = 0, k = 0;
    for (int s = 0; s < CS_STRAT_COUNT; s++) total += (set >> s) & 1;
    buf[0] = '\0';
    for (int s = 0; s < CS_STRAT_COUNT; s++) {
        if (!((set >> s) & 1)) continue;
        size_t o = strlen(buf);
        snprintf(buf + o, len - o, "%s%s%s%s", k == 0 ? "" : k < total - 1 ? ", " : " ",
                 k > 0 && k == total - 1 ? last : "", k > 0 && k == total - 1 ? " " : "",
                 cs_strategy_name((cs_strategy)s));
        k++;
    }
}

/* Every row of the strategy table: its name parses back, the lists the
 * CLI prints come from the table, and ZeRO's stages nest. */
START_TEST(strategy_rows)
{
    for (int s = 0; s < CS_STRAT_COUNT; s++) {
        const char *name = cs_strategy_name((cs_strategy)s);
        ck_assert_str_eq(cs_strategy_names[s], name);
        cs_strategy back;
        ck_assert_int_eq(cs_strategy_parse(name, &back), 0);
        ck_assert_int_eq(back, s);
        for (int o = 0; o < s; o++) ck_assert_str_ne(cs_strategy_name((cs_strategy)o), name);
        /* ZeRO's stages nest: sharded parameters imply sharded gradients,
         * which imply sharded optimizer states; only sharded parameters
         * can be freed after forward */
        const cs_strategy_row *r = cs_strategy_row_of((cs_strategy)s);
        ck_assert(!r->shards_params || r->shards_grads);
        ck_assert(!r->shards_grads || r->shards_optimizer);
        ck_assert(!r->reshards || r->shards_params);
        ck_assert(!r->hybrid || r->shards_optimizer);
        /* "the fsdp_* strategies" in messages: FSDP's knobs are theirs */
        int fsdp = !strncmp(name, "fsdp_", 5);
        ck_assert_int_eq(cs_strategy_knob_applies((cs_strategy)s, CS_KNOB_BACKWARD_PREFETCH), fsdp);
    }
    ck_assert_ptr_null(cs_strategy_names[CS_STRAT_COUNT]);
}
END_TEST

/* Do a and b agree but for case, '-' and '_' (the CLI's loose match)? */
static int loosely_equal(const char *a, const char *b)
{
    for (;;) {
        while (*a == '-' || *a == '_') a++;
        while (*b == '-' || *b == '_') b++;
        if ((*a | 0x20) != (*b | 0x20)) return 0;
        if (!*a) return 1;
        a++, b++;
    }
}

/* What row s (r, normally cs_strategy_row_of(s)) lacks, into why; 0 if
 * nothing: every attribute a row must set (aliases, colour, the gradient
 * reduction and the hooks every strategy needs), a colour "#RRGGBB" none
 * of the other rows has, aliases no name or other alias already spells. */
static int row_lacks(cs_strategy s, const cs_strategy_row *r, char *why, size_t len)
{
    const char *name = cs_strategy_name(s);
    if (!r->aliases) return snprintf(why, len, "%s: no alias list", name), 1;
    if (!r->color) return snprintf(why, len, "%s: no colour", name), 1;
    if (strlen(r->color) != 7 || r->color[0] != '#' || strspn(r->color + 1, "0123456789ABCDEF") != 6)
        return snprintf(why, len, "%s: colour '%s' is not #RRGGBB", name, r->color), 1;
    if (!strcmp(r->color, "#000000") || !strcmp(r->color, "#BBBBBB"))
        return snprintf(why, len, "%s: colour %s is the plots' own", name, r->color), 1;
    if (!r->knobs) return snprintf(why, len, "%s: no scenario keys apply", name), 1;
    if (r->grad_op != CS_OP_ALL_REDUCE && r->grad_op != CS_OP_REDUCE_SCATTER)
        return snprintf(why, len, "%s: gradients reduced by %s", name, cs_op_name(r->grad_op)), 1;
    if (!r->backward_unit || !r->post_backward)
        return snprintf(why, len, "%s: no gradient reduction hooks", name), 1;
    for (int o = 0; o < CS_STRAT_COUNT; o++) {
        const cs_strategy_row *q = cs_strategy_row_of((cs_strategy)o);
        if (o != (int)s && q->color && !strcmp(q->color, r->color))
            return snprintf(why, len, "%s: colour %s is %s's too", name, r->color,
                            cs_strategy_name((cs_strategy)o)), 1;
    }
    for (const char *const *a = r->aliases; *a; a++) {
        if (!**a) return snprintf(why, len, "%s: an empty alias", name), 1;
        for (int o = 0; o < CS_STRAT_COUNT; o++)
            if (loosely_equal(*a, cs_strategy_name((cs_strategy)o)))
                return snprintf(why, len, "%s: alias %s spells a name", name, *a), 1;
        cs_strategy x;
        const char *b;
        for (int k = 0; (b = cs_strategy_alias(k, &x)); k++)
            if (b != *a && loosely_equal(*a, b))
                return snprintf(why, len, "%s: alias %s is %s's %s too", name, *a,
                                cs_strategy_name(x), b), 1;
    }
    return 0;
}

/* Every row sets every attribute (as the algorithm rows: test-collective.c
 * every_row_is_complete); a row without its colour (the deepspeed_zero1
 * row once had none, and gnuplot refused the plots) or with a clashing
 * alias is caught. The aliases over the table are the rows' and each finds
 * its row; DeepSpeed's stages zero0..zero3 each name a row (--zero N). */
START_TEST(every_strategy_row_is_complete)
{
    char why[200];
    int aliases = 0;
    for (int s = 0; s < CS_STRAT_COUNT; s++) {
        const cs_strategy_row *r = cs_strategy_row_of((cs_strategy)s);
        ck_assert_msg(!row_lacks((cs_strategy)s, r, why, sizeof why), "%s", why);
        ck_assert_str_eq(cs_strategy_color((cs_strategy)s), r->color);
        for (const char *const *a = r->aliases; *a; a++, aliases++) {
            cs_strategy x, back;
            ck_assert_str_eq(cs_strategy_alias(aliases, &x), *a);
            ck_assert_int_eq(x, s);
            ck_assert_int_eq(cs_strategy_find(*a, &back), 0);
            ck_assert_int_eq(back, s);
        }
        cs_strategy back;
        ck_assert_int_eq(cs_strategy_find(cs_strategy_name((cs_strategy)s), &back), 0);
        ck_assert_int_eq(back, s);
    }
    ck_assert_ptr_null(cs_strategy_alias(aliases, &(cs_strategy){0}));
    ck_assert_int_eq(cs_strategy_find("zero4", &(cs_strategy){0}), CS_EINVAL);
    for (int z = 0; z <= 3; z++) {
        char name[8];
        snprintf(name, sizeof name, "zero%d", z);
        ck_assert_msg(cs_strategy_find(name, &(cs_strategy){0}) == 0, "no row is %s", name);
    }
    /* deliberately wrong: the check must catch a row missing each attribute */
    const cs_strategy_row *good = cs_strategy_row_of(CS_STRAT_DEEPSPEED_ZERO1);
    cs_strategy_row bad = *good;
    bad.color = NULL;
    ck_assert(row_lacks(CS_STRAT_DEEPSPEED_ZERO1, &bad, why, sizeof why));
    ck_assert_str_eq(why, "deepspeed_zero1: no colour");
    bad.color = cs_strategy_color(CS_STRAT_DDP);
    ck_assert(row_lacks(CS_STRAT_DEEPSPEED_ZERO1, &bad, why, sizeof why));
    ck_assert_str_eq(why, "deepspeed_zero1: colour #0072B2 is ddp's too");
    bad = *good;
    bad.aliases = NULL;
    ck_assert(row_lacks(CS_STRAT_DEEPSPEED_ZERO1, &bad, why, sizeof why));
    bad.aliases = (const char *const[]){"Full-Shard", NULL};
    ck_assert(row_lacks(CS_STRAT_DEEPSPEED_ZERO1, &bad, why, sizeof why));
    ck_assert_str_eq(why, "deepspeed_zero1: alias Full-Shard is fsdp_full_shard's FULL_SHARD too");
    bad = *good;
    bad.post_backward = NULL;
    ck_assert(row_lacks(CS_STRAT_DEEPSPEED_ZERO1, &bad, why, sizeof why));
}
END_TEST

/* Each scenario knob is accepted exactly where the strategy table says it
 * applies, refused elsewhere with the table's scope text. */
START_TEST(strategy_knob_scopes)
{
    /* a setting per knob; how messages name the strategies it applies to:
     * a family's name, else the list of those strategies, then a note */
    static const struct {
        const char *line, *which, *note;
    } knobs[CS_KNOB_COUNT] = {
        [CS_KNOB_BUCKET_CAP] = {"bucket_cap_mb: 10", NULL, " (DDP's gradient buckets)"},
        [CS_KNOB_FIRST_BUCKET] = {"first_bucket_mb: 2", NULL, " (DDP's gradient buckets)"},
        [CS_KNOB_BUCKET_VIEW] = {"gradient_as_bucket_view: true", NULL,
                                 " (DDP's gradient buckets)"},
        [CS_KNOB_COMM_HOOK] = {"ddp_comm_hook: bf16_compress", NULL, " (DDP's gradient buckets)"},
        [CS_KNOB_BACKWARD_PREFETCH] = {"backward_prefetch: post", "the fsdp_* strategies", ""},
        [CS_KNOB_FORWARD_PREFETCH] = {"forward_prefetch: true", "the fsdp_* strategies", ""},
        [CS_KNOB_LIMIT_ALL_GATHERS] = {"limit_all_gathers: 3", "the fsdp_* strategies", ""},
        [CS_KNOB_RESHARD] = {"reshard_after_forward: false", NULL, ""},
        [CS_KNOB_SHARD_GROUP] = {"shard_group: 8", NULL, ""},
        [CS_KNOB_FSDP_VERSION] = {"fsdp_version: 1", "the fsdp_* strategies", ""},
        [CS_KNOB_FSDP_UNIT_LAYERS] = {"fsdp_unit_layers: 0", "the fsdp_* strategies", ""},
        [CS_KNOB_FSDP_HOOK_CPU] = {"fsdp_hook_cpu_ms: 0.5", "the fsdp_* strategies", ""},
    };
    for (int k = 0; k < CS_KNOB_COUNT; k++) {
        char scope[512], names[512], want[1024];
        unsigned set = 0;
        for (int s = 0; s < CS_STRAT_COUNT; s++)
            if (cs_strategy_knob_applies((cs_strategy)s, (cs_knob)k)) set |= 1u << s;
        join_names(names, sizeof names, set, "and");
        snprintf(want, sizeof want, "%s%s", knobs[k].which ? knobs[k].which : names, knobs[k].note);
        cs_strategy_knob_scope((cs_knob)k, scope, sizeof scope);
        ck_assert_str_eq(scope, want);
        if (k == CS_KNOB_RESHARD) /* the bytes users read today */
            ck_assert_str_eq(scope, "fsdp_shard_grad_op, fsdp_full_shard and fsdp_hybrid_shard");
        ck_assert(!strncmp(knobs[k].line, cs_strategy_knob_key((cs_knob)k),
                           strlen(cs_strategy_knob_key((cs_knob)k))));
        for (int s = 0; s < CS_STRAT_COUNT; s++) {
            char from[64], to[128];
            snprintf(from, sizeof from, "  strategy: fsdp_full_shard\n");
            snprintf(to, sizeof to, "  strategy: %s\n  %s\n", cs_strategy_name((cs_strategy)s),
                     knobs[k].line);
            char *y = edit(from, to);
            cs_scenario sc;
            cs_diag d;
            int rc = load(y, &sc, &d);
            free(y);
            if (cs_strategy_knob_applies((cs_strategy)s, (cs_knob)k)) {
                ck_assert_msg(rc == 0, "%s with %s: %s", cs_strategy_name((cs_strategy)s),
                              knobs[k].line, d.message);
                continue;
            }
            ck_assert_msg(rc != 0, "%s accepted %s", cs_strategy_name((cs_strategy)s),
                          knobs[k].line);
            char msg[640];
            snprintf(msg, sizeof msg, "applies only to %s, but the strategy is %s", scope,
                     cs_strategy_name((cs_strategy)s));
            ck_assert_msg(strstr(d.message, msg) != NULL, "got: %s", d.message);
            ck_assert_int_eq(d.line, 6);
        }
    }
}
END_TEST

START_TEST(scenario_basic)
{
    cs_scenario sc = expect_ok(BASE);
    ck_assert_str_eq(sc.cluster.name, "dgx-h100");
    ck_assert_str_eq(sc.model.name, "gpt3-1.3b");
    ck_assert_int_eq(sc.nodes, 2);
    ck_assert_int_eq(sc.ranks, 0);
    ck_assert_int_eq(sc.training.strategy, CS_STRAT_FSDP_FULL_SHARD);
    ck_assert_int_eq(sc.training.micro_batch, 2);
    /* Everything else is the strategy's default. */
    cs_training t;
    cs_training_defaults(&t, CS_STRAT_FSDP_FULL_SHARD);
    t.micro_batch = 2;
    ck_assert_mem_eq(&sc.training, &t, sizeof t);
}
END_TEST

START_TEST(scenario_every_key)
{
    const char *y = "cluster: hgx-h200\n"
                    "model: llama2-7b\n"
                    "ranks: 16\n"
                    "nodes: 2\n"
                    "training:\n"
                    "  strategy: ddp\n"
                    "  mixed_precision: pure\n"
                    "  param_dtype: fp16\n"
                    "  grad_reduce_dtype: fp16\n"
                    "  master_weights: false\n"
                    "  ddp_comm_hook: fp16_compress\n"
                    "  optimizer: sgd_momentum\n"
                    "  optimizer_impl: fused\n"
                    "  attention_kernel: flash1\n"
                    "  micro_batch: 3\n"
                    "  grad_accum: 4\n"
                    "  activation_checkpointing: full\n"
                    "  bucket_cap_mb: 50\n"
                    "  first_bucket_mb: 0.5\n"
                    "  gradient_as_bucket_view: true\n"
                    "  compute_efficiency: 0.42\n"
                    "  comm_compute_slowdown: 0.1\n"
                    "  cuda_context: 1GiB\n"
                    "  nccl_buffers: 300MiB\n"
                    "  fragmentation: 0.1\n";
    cs_scenario sc = expect_ok(y);
    const cs_training *t = &sc.training;
    ck_assert_int_eq(sc.ranks, 16);
    ck_assert_int_eq(t->mixed_precision, CS_MP_PURE);
    ck_assert_int_eq(t->param_dtype, CS_DTYPE_FP16);
    ck_assert_int_eq(t->grad_reduce_dtype, CS_DTYPE_FP16);
    ck_assert_int_eq(t->master_weights_fp32, 0);
    ck_assert_int_eq(t->ddp_comm_hook, CS_HOOK_FP16_COMPRESS);
    ck_assert_int_eq(t->optimizer, CS_OPT_SGD_MOMENTUM);
    ck_assert_int_eq(t->optimizer_impl, CS_OPTIMPL_FUSED);
    ck_assert_int_eq(t->attention_kernel, CS_ATTN_FLASH1);
    ck_assert_int_eq(t->micro_batch, 3);
    ck_assert_int_eq(t->grad_accum, 4);
    ck_assert_int_eq(t->checkpointing, CS_CKPT_FULL);
    ck_assert_double_eq(t->bucket_cap_bytes, 50 * MiB);
    ck_assert_double_eq(t->first_bucket_bytes, 0.5 * MiB);
    ck_assert_int_eq(t->gradient_as_bucket_view, 1);
    ck_assert_double_eq(t->compute_efficiency, 0.42);
    ck_assert_double_eq(t->comm_compute_slowdown, 0.1);
    ck_assert_double_eq(t->cuda_context_bytes, 1024 * MiB);
    ck_assert_double_eq(t->nccl_buffer_bytes, 300 * MiB);
    ck_assert_double_eq(t->fragmentation, 0.1);

    const char *f = "cluster: dgx-h100\n"
                    "model: gpt3-1.3b\n"
                    "nodes: 2\n"
                    "training:\n"
                    "  strategy: fsdp_hybrid_shard\n"
                    "  shard_group: 4\n"
                    "  backward_prefetch: post\n"
                    "  forward_prefetch: true\n"
                    "  limit_all_gathers: false\n"
                    "  reshard_after_forward: false\n"
                    "  nccl_buffers: auto\n";
    sc = expect_ok(f);
    t = &sc.training;
    ck_assert_int_eq(t->shard_group, 4);
    ck_assert_int_eq(t->backward_prefetch, CS_PREFETCH_POST);
    ck_assert_int_eq(t->forward_prefetch, 1);
    ck_assert_int_eq(t->limit_all_gathers, 0);
    ck_assert_int_eq(t->reshard_after_forward, 0);
    ck_assert(t->nccl_buffer_bytes < 0);

    char *y2 = edit("", "  limit_all_gathers: true\n");
    ck_assert_int_eq(expect_ok(y2).training.limit_all_gathers, 2);
    free(y2);
    y2 = edit("", "  limit_all_gathers: 3\n");
    ck_assert_int_eq(expect_ok(y2).training.limit_all_gathers, 3);
    free(y2);

    /* Every dtype spelling cs_dtype_name gives is accepted. */
    for (int dt = 0; dt < CS_DTYPE_COUNT; dt++) {
        char line[64];
        snprintf(line, sizeof line, "  param_dtype: %s\n", cs_dtype_name((cs_dtype)dt));
        char *s = edit("", line);
        ck_assert_int_eq(expect_ok(s).training.param_dtype, dt);
        free(s);
    }
}
END_TEST

START_TEST(scenario_inline_cluster_and_model)
{
    const char *y = "cluster:\n"                               /* 1 */
                    "  nodes: 2\n"                             /* 2 */
                    "  gpus_per_node: 4\n"                     /* 3 */
                    "  gpu:\n"                                 /* 4 */
                    "    model: X\n"                           /* 5 */
                    "    memory: 40GiB\n"                      /* 6 */
                    "    compute_capability: 80\n"             /* 7 */
                    "    tflops: {bf16: 312}\n"                /* 8 */
                    "    hbm_bandwidth: 1.5TB/s\n"             /* 9 */
                    "  intra:\n"                               /* 10 */
                    "    fabric: nvlink\n"                     /* 11 */
                    "    bandwidth: 100GB/s\n"                 /* 12 */
                    "  inter:\n"                               /* 13 */
                    "    nics_per_node: 1\n"                   /* 14 */
                    "    nic_bandwidth: 100Gbps\n"             /* 15 */
                    "model: {parameters: 2e9, seq_len: 1024}\n" /* 16 */
                    "training: {strategy: zero1}\n";           /* 17 */
    cs_scenario sc = expect_ok(y);
    ck_assert_str_eq(sc.cluster.name, "cluster");
    ck_assert_int_eq(sc.cluster.nodes, 2);
    ck_assert_int_eq(sc.cluster.gpus_per_node, 4);
    ck_assert_int_eq(sc.cluster.coll.channels, 16); /* resolved default for NVLink */
    ck_assert_double_eq(sc.model.params, 2e9);
    ck_assert_int_eq(sc.model.seq_len, 1024);
    ck_assert_int_eq(sc.training.strategy, CS_STRAT_ZERO1);

    /* Errors inside the inline parts keep the scenario's positions. */
    char *bad = strdup(y);
    char *at = strstr(bad, "fabric: nvlink");
    memcpy(at, "fabrc:", 6);
    expect_error(bad, 11, 5, "did you mean 'fabric'");
    free(bad);
    const char *no_gpu = "cluster:\n"
                         "  nodes: 1\n"
                         "  gpus_per_node: 4\n"
                         "model: gpt2-124m\n"
                         "training: {strategy: ddp}\n";
    expect_error(no_gpu, 2, 3, "missing required key 'gpu' in cluster");
    const char *mixed = "cluster: dgx-h100\n"
                        "model: {parameters: 2e9, layers: 4}\n"
                        "training: {strategy: ddp}\n";
    expect_error(mixed, 2, 26, "cannot be combined");
}
END_TEST

START_TEST(scenario_errors)
{
    expect_edit_error("  micro_batch: 2\n", "  micro_batc: 2\n", 6, 3,
                      "did you mean 'micro_batch'");
    expect_edit_error("fsdp_full_shard", "fsdp_ful_shard", 5, 13,
                      "did you mean 'fsdp_full_shard'");
    expect_edit_error("cluster: dgx-h100", "cluster: dgx-h10", 1, 10, "did you mean 'dgx-h100'");
    expect_edit_error("model: gpt3-1.3b", "model: gpt3-1.3c", 2, 8, "did you mean 'gpt3-1.3b'");
    expect_edit_error("nodes: 2", "nodes: 0", 3, 8, "'nodes' must be");
    expect_edit_error("nodes: 2\n", "nodes: 2\nranks: 64\n", 4, 8, "32 GPUs per node");
    expect_edit_error("", "  shard_group: 4\n", 7, 3, "applies only to fsdp_hybrid_shard");
    expect_edit_error("", "  bucket_cap_mb: 50\n", 7, 3, "applies only to ddp, zero1 and deepspeed_zero1");
    expect_edit_error("", "  micro_batch: 0\n", 7, 3, "duplicate");
    expect_edit_error("  micro_batch: 2\n", "  micro_batch: 0\n", 6, 16, "'micro_batch' must be");
    expect_edit_error("", "  fragmentation: 1\n", 7, 18, "'fragmentation' must be");
    /* optimizer_in_backward frees each gradient as it is made: no accumulation */
    expect_edit_error("", "  grad_accum: 4\n  optimizer_in_backward: true\n", 8, 3,
                      "needs grad_accum 1, got 4");
    expect_edit_error("", "  activation_offloading: maybe\n", 7, 26, "'activation_offloading'");
    expect_edit_error("", "  hold_logits: 2\n", 7, 16, "'hold_logits'");
    expect_edit_error("", "  compute_efficiency: 0\n", 7, 23, "'compute_efficiency' must be");
    expect_edit_error("", "  limit_all_gathers: maybe\n", 7, 22, "false (no limit)");
    expect_edit_error("", "  nccl_buffers: lots\n", 7, 17, "'nccl_buffers'");
    expect_edit_error("", "  activation_checkpointing: partial\n", 7, 29,
                      "one of none, selective, full");
    expect_edit_error("fsdp_full_shard", "fsdp_shard_grad_op\n  reshard_after_forward: true", 6,
                      3, "is fsdp_full_shard");
    expect_edit_error("fsdp_full_shard", "ddp\n  reshard_after_forward: false", 6, 3,
                      "applies only to fsdp_shard_grad_op");
    expect_edit_error("fsdp_full_shard", "fsdp_hybrid_shard\n  shard_group: 3", 6, 3,
                      "divide the 16 ranks");
    expect_edit_error("  strategy: fsdp_full_shard\n", "  optimizer: adam\n", 5, 3,
                      "missing required key 'strategy' in training");
    expect_error("cluster: dgx-h100\nmodel: gpt2-124m\n", 1, 1,
                 "missing required key 'training' in scenario");
    expect_error("cluster: dgx-h100\nmodel: gpt2-124m\ntraining: ddp\n", 3, 11,
                 "'training' must be a mapping");
    expect_error("cluster: [a, b]\nmodel: gpt2-124m\ntraining: {strategy: ddp}\n", 1, 10,
                 "'cluster' must be");
    expect_error("- a\n- b\n", 1, 1, "expected a mapping");
    expect_error("# nothing\n", 1, 1, "empty scenario");
    expect_error("cluster: dgx-h100\nclusters: x\n", 2, 1, "unknown key 'clusters'");
}
END_TEST

/* A scenario's file references are relative to the scenario file. */
START_TEST(scenario_files_and_relative_paths)
{
    char *dir = cs_test_tmpdir();
    char path[256], cl[256], sc_path[256];
    snprintf(cl, sizeof cl, "%s/mine.yaml", dir);
    cs_test_write(cl, "nodes: 1\ngpus_per_node: 2\ngpu: {model: G, memory: 24GiB, "
                      "compute_capability: 89, tflops: {bf16: 100}, hbm_bandwidth: 1TB/s}\n"
                      "intra: {fabric: pcie, bandwidth: 32GB/s}\n");
    snprintf(sc_path, sizeof sc_path, "%s/s.yaml", dir);
    cs_test_write(sc_path, "cluster: mine.yaml\nmodel: gpt2-124m\ntraining: {strategy: ddp}\n");
    cs_scenario sc;
    cs_diag d;
    int rc = cs_scenario_load_file(sc_path, &sc, &d);
    ck_assert_msg(rc == 0, "%s", d.message);
    ck_assert_str_eq(sc.cluster.name, "mine");
    ck_assert_int_eq(sc.cluster.gpus_per_node, 2);

    /* A missing referenced file is reported at the scenario's node. */
    cs_test_write(sc_path, "cluster: absent.yaml\nmodel: gpt2-124m\ntraining: {strategy: ddp}\n");
    ck_assert_int_ne(cs_scenario_load_file(sc_path, &sc, &d), 0);
    ck_assert_str_eq(d.file, sc_path);
    ck_assert_int_eq(d.line, 1);
    ck_assert_int_eq(d.column, 10);
    CS_ASSERT_CONTAINS(d.message, "absent.yaml");

    /* An error inside the referenced file names that file. */
    cs_test_write(cl, "nodes: 1\ngpus_per_node: two\n");
    cs_test_write(sc_path, "cluster: mine.yaml\nmodel: gpt2-124m\ntraining: {strategy: ddp}\n");
    ck_assert_int_ne(cs_scenario_load_file(sc_path, &sc, &d), 0);
    ck_assert_str_eq(d.file, cl);
    ck_assert_int_eq(d.line, 2);

    snprintf(path, sizeof path, "%s/none.yaml", dir);
    ck_assert_int_eq(cs_scenario_load_file(path, &sc, &d), CS_ENOENT);
    cs_test_rmdir(dir);
    free(dir);
}
END_TEST

/* Every example loads, builds a topology, fits, and is documented. */
START_TEST(example_scenarios)
{
    DIR *dir = opendir("configs/scenarios");
    ck_assert_ptr_nonnull(dir);
    char *readme = cs_test_slurp("configs/scenarios/README.md", NULL);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml")) continue;
        char path[512];
        snprintf(path, sizeof path, "configs/scenarios/%s", e->d_name);
        cs_scenario sc;
        cs_diag d;
        cs_test_diag_ok(cs_scenario_load_file(path, &sc, &d), &d, "%s", path);
        cs_topology topo = cs_test_topology(&sc.cluster, sc.ranks, sc.nodes);
        cs_memory mem;
        ck_assert_int_eq(cs_memory_estimate(&sc.model, &sc.training, &topo, 0, &mem, &d), 0);
        ck_assert_msg(mem.fits, "%s: %.1f GB > %.1f GB", path, mem.peak_bytes / 1e9,
                      mem.capacity_bytes / 1e9);
        ck_assert_msg(strstr(readme, e->d_name) != NULL, "README.md does not list %s",
                      e->d_name);
        count++;
    }
    closedir(dir);
    free(readme);
    ck_assert_int_ge(count, 3);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("training");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, defaults);
    tcase_add_test(tc, optimizer_traffic);
    tcase_add_test(tc, names_and_reshard);
    tcase_add_test(tc, strategy_rows);
    tcase_add_test(tc, every_strategy_row_is_complete);
    tcase_add_test(tc, strategy_knob_scopes);
    tcase_add_test(tc, scenario_basic);
    tcase_add_test(tc, scenario_every_key);
    tcase_add_test(tc, scenario_inline_cluster_and_model);
    tcase_add_test(tc, scenario_errors);
    tcase_add_test(tc, scenario_files_and_relative_paths);
    tcase_add_test(tc, example_scenarios);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return cs_test_run(suite());
}
