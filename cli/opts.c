/* SPDX-License-Identifier: MIT */
/*
 * opts.c - the collsim option parser (opts.h), its value parsers, the
 * choice rows, the list tokenizer, the training overrides, and the
 * messages and exit codes every command shares (cli.h).
 *
 * Messages keep each command's established wording: a bad choice reads
 * "unknown --NAME 'x' (expected ...)" or "--NAME expects ..., got 'x'" as
 * the row says; the list of what is expected is built from the choice's
 * names, so it follows the library's tables.
 */
#include "opts.h"

#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "base/yamlnode.h"
#include "coll/cluster.h"
#include "train/pipeline_sched.h"
#include "train/tensor.h"
#include "coll/collective.h"
#include "out/table.h"
#include "train/checkpoint.h"
#include "train/loss.h"

/* ---- messages and exit codes (cli.h) ------------------------------------------ */

int cs_cli_fail(const cs_diag *d)
{
    char msg[1024];
    cs_diag_format(d, msg, sizeof msg);
    fprintf(stderr, "collsim: %s\n", msg);
    /* a file that cannot be read (missing, a directory) is 1, whatever the
     * reason; an unknown preset name (CS_ENOENT without a file) is usage */
    return d->code == CS_EIO || (d->code == CS_ENOENT && d->file[0]) ? CS_EXIT_IO : CS_EXIT_USAGE;
}

int cs_cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "collsim %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'collsim %s --help'.\n", cmd);
    va_end(ap);
    return CS_EXIT_USAGE;
}

int cs_cli_int(const char *cmd, const char *opt, const char *s, int lo, int hi, int *v)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (!*s || *end || x < lo || x > hi) {
        fprintf(stderr, "collsim %s: %s expects an integer in %d..%d, got '%s'\n", cmd, opt, lo,
                hi, s);
        return -1;
    }
    *v = (int)x;
    return 0;
}

int cs_cli_params(const char *s, double *v)
{
    char *end;
    double x = strtod(s, &end);
    double mul = 1;
    switch (*end) { /* either case: "70b" as HF model names write it */
    case 'K': case 'k': mul = 1e3, end++; break;
    case 'M': case 'm': mul = 1e6, end++; break;
    case 'B': case 'b': case 'G': case 'g': mul = 1e9, end++; break;
    case 'T': case 't': mul = 1e12, end++; break;
    default: break;
    }
    if (!*s || *end || !(x > 0) || !isfinite(x) || !isfinite(x * mul)) return -1;
    *v = x * mul;
    return 0;
}

/* ---- choices --------------------------------------------------------------------- */

#define CHOICE(id, n, name_fn, parse_fn, type)                                                     \
    static const char *id##_name(int v) { return name_fn((type)v); }                               \
    static int id##_parse(const char *s, int *v)                                                   \
    {                                                                                              \
        type x;                                                                                    \
        int rc = parse_fn(s, &x);                                                                  \
        if (rc == 0) *v = (int)x;                                                                  \
        return rc;                                                                                 \
    }                                                                                              \
    const cs_choice cs_choice_##id = {n, id##_name, id##_parse, NULL};

CHOICE(op, CS_OP_COUNT, cs_op_name, cs_op_parse, cs_op)
CHOICE(algo, CS_ALGO_COUNT, cs_algo_name, cs_algo_parse, cs_algo_id)
CHOICE(proto, CS_PROTO_COUNT, cs_proto_name, cs_proto_parse, cs_proto)
CHOICE(dtype, CS_DTYPE_COUNT, cs_dtype_name, cs_dtype_parse, cs_dtype)
CHOICE(format, CS_FORMAT_COUNT, cs_format_name, cs_format_parse, cs_format)
/* Optimizers match loosely (AdamW, SGD): no aliases, but an alias lookup. */
static const char *loosely(int k, int *v)
{
    (void)k, (void)v;
    return NULL;
}
static const char *optimizer_name(int v) { return cs_optimizer_name((cs_optimizer)v); }
const cs_choice cs_choice_optimizer = {CS_OPT_COUNT, optimizer_name, NULL, loosely};

/* The strategies under PyTorch's and DeepSpeed's names: the rows'
 * aliases (train/strategy.h). */
static const char *strategy_alias(int k, int *v)
{
    cs_strategy s;
    const char *a = cs_strategy_alias(k, &s);
    if (a) *v = (int)s;
    return a;
}
static const char *strategy_name(int v) { return cs_strategy_name((cs_strategy)v); }
static int strategy_parse(const char *s, int *v)
{
    cs_strategy x;
    int rc = cs_strategy_parse(s, &x);
    if (rc == 0) *v = (int)x;
    return rc;
}
const cs_choice cs_choice_strategy = {CS_STRAT_COUNT, strategy_name, strategy_parse,
                                      strategy_alias};

/* nccl-tests' type names (float, half, ...); either spelling parses. */
static const char *dtype_nccl_name(int v) { return cs_dtype_nccl_name((cs_dtype)v); }
const cs_choice cs_choice_dtype_nccl = {CS_DTYPE_COUNT, dtype_nccl_name, dtype_parse, NULL};

/* Exactly "analytic" or "des"; exactly none, selective, full. */
static const char *engine_name(int v) { return cs_engine_name((cs_engine_kind)v); }
const cs_choice cs_choice_engine = {CS_ENGINE_COUNT, engine_name, NULL, NULL};
static const char *ckpt_name(int v) { return cs_ckpt_name((cs_ckpt)v); }
const cs_choice cs_choice_ckpt = {CS_CKPT_COUNT, ckpt_name, NULL, NULL};

/* Exactly naive, fused or chunked (train/loss.h). */
static const char *loss_name(int v) { return cs_loss_impl_names[v]; }
const cs_choice cs_choice_loss = {CS_LOSS_COUNT, loss_name, NULL, NULL};

const cs_opt cs_strategy_item = {"strategy", .choice = &cs_choice_strategy, .says = CS_SAYS_ITEM};

/* "standard" (0: unfused), "flash" (1: the default fused kernel) or a
 * fused kernel by name (2 + cs_attn_kernel), named flash first. */
static const char *attention_name(int v)
{
    return v == 0 ? "standard" : v == 1 ? "flash" : cs_attn_kernel_names[v - 2];
}
const cs_choice cs_choice_attention = {2 + CS_ATTN_COUNT, attention_name, NULL, NULL};
const int cs_attention_order[] = {1, 2 + CS_ATTN_FLASH2, 2 + CS_ATTN_FLASH1, 0, CS_OPT_END};

const int cs_training_dtypes[] = {CS_DTYPE_FP32, CS_DTYPE_BF16, CS_DTYPE_FP16, CS_OPT_END};

/* The k-th accepted value of o's choice list, or CS_OPT_END. */
static int nth(const cs_choice *c, const int *only, int k)
{
    if (only) return only[k];
    return k < c->count ? k : CS_OPT_END;
}

/* The names joined by ", ", the last two by last. */
static void join(char *buf, size_t len, const cs_choice *c, const int *only, int with_auto,
                 const char *last)
{
    int n = 0;
    while (nth(c, only, n) != CS_OPT_END) n++;
    size_t k = 0;
    buf[0] = 0;
    for (int i = -with_auto; i < n && k < len; i++) {
        const char *sep = i == -with_auto ? "" : i == n - 1 ? last : ", ";
        const char *name = i < 0 ? "auto" : c->name(nth(c, only, i));
        k += (size_t)snprintf(buf + k, len - k, "%s%s", sep, name);
    }
}

void cs_opts_names(char *buf, size_t len, const cs_choice *c, const int *only, int with_auto)
{
    join(buf, len, c, only, with_auto, " or ");
}

void cs_opts_list(char *buf, size_t len, const cs_choice *c) { join(buf, len, c, NULL, 0, ", "); }

void cs_opts_aliases(char *buf, size_t len, const cs_choice *c)
{
    size_t k = 0;
    buf[0] = 0;
    const char *a;
    int v;
    for (int i = 0; c->alias && (a = c->alias(i, &v)) && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s=%s", i ? ", " : "", a, c->name(v));
}

/* Do a and b agree but for case, '-' and '_'? */
static int loosely_equal(const char *a, const char *b)
{
    for (;;) {
        while (*a == '-' || *a == '_') a++;
        while (*b == '-' || *b == '_') b++;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
        if (!*a) return 1;
        a++, b++;
    }
}

/* The value s names loosely among c's names and aliases, or -1. */
static int loose(const cs_choice *c, const char *s)
{
    for (int i = 0; i < c->count; i++)
        if (loosely_equal(s, c->name(i))) return i;
    const char *a;
    int v;
    for (int i = 0; c->alias && (a = c->alias(i, &v)); i++)
        if (loosely_equal(s, a)) return v;
    return -1;
}

static int accepted(const cs_choice *c, const int *only, int x)
{
    for (int k = 0; x >= 0 && nth(c, only, k) != CS_OPT_END; k++)
        if (nth(c, only, k) == x) return 1;
    return 0;
}

/* The accepted name or alias nearest to s (equal but for case first,
 * then by edit distance: cs_yamlnode_suggest's limit), or NULL. */
static const char *suggest(const cs_choice *c, const int *only, const char *s)
{
    const char *cands[64];
    size_t n = 0;
    for (int k = 0; nth(c, only, k) != CS_OPT_END && n < 64; k++)
        cands[n++] = c->name(nth(c, only, k));
    const char *a;
    int v;
    for (int i = 0; c->alias && (a = c->alias(i, &v)) && n < 64; i++)
        if (accepted(c, only, v)) cands[n++] = a;
    for (size_t i = 0; i < n; i++)
        if (loosely_equal(s, cands[i])) return cands[i];
    return cs_yamlnode_suggest(s, cands, n);
}

int cs_opts_choose(const char *cmd, const cs_opt *o, const char *s, int *v)
{
    const cs_choice *c = o->choice;
    if (o->with_auto && !strcmp(s, "auto")) {
        *v = CS_CHOICE_AUTO;
        return 0;
    }
    int x = -1;
    if (c->parse) {
        if (c->parse(s, &x)) x = -1;
    } else {
        for (int i = 0; i < c->count; i++)
            if (!strcmp(s, c->name(i))) x = i;
    }
    if (x < 0 && c->alias) x = loose(c, s);
    if (accepted(c, o->only, x)) {
        *v = x;
        return 0;
    }
    char names[512], hint[128] = "";
    cs_opts_names(names, sizeof names, c, o->only, o->with_auto);
    const char *sug = suggest(c, o->only, s);
    if (o->says == CS_SAYS_EXPECTS) {
        if (sug) snprintf(hint, sizeof hint, " (did you mean '%s'?)", sug);
        return cs_cli_usage(cmd, "--%s expects %s, got '%s'%s", o->name, names, s, hint);
    }
    if (sug) snprintf(hint, sizeof hint, "did you mean '%s'? ", sug);
    return cs_cli_usage(cmd, "unknown %s%s '%s' (%sexpected %s)",
                        o->says == CS_SAYS_ITEM ? "" : "--", o->name, s, hint, names);
}

/* ---- value parsers --------------------------------------------------------------- */

int cs_opt_string(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    (void)cmd, (void)o;
    *(const char **)dst = arg;
    return 0;
}

int cs_opt_set(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    (void)cmd, (void)o, (void)arg;
    *(int *)dst = 1;
    return 0;
}

int cs_opt_int(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", o->name);
    return cs_cli_int(cmd, opt, arg, (int)o->lo, (int)o->hi, dst) ? CS_EXIT_USAGE : 0;
}

int cs_opt_above(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    char *end;
    double x = strtod(arg, &end);
    if (!*arg || *end || !(x > o->lo) || !isfinite(x))
        return cs_cli_usage(cmd, "--%s expects a number > %g, got '%s'", o->name, o->lo, arg);
    *(double *)dst = x;
    return 0;
}

int cs_opt_size(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    char err[256];
    if (cs_units_parse_size(arg, dst, err, sizeof err)) {
        fprintf(stderr, "collsim %s: --%s: %s\n", cmd, o->name, err);
        return CS_EXIT_USAGE;
    }
    return 0;
}

int cs_opt_selective_ac(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    int *sac = dst; /* cs_cli_knobs.sac; the flag before it */
    if (cs_checkpoint_parse_selective(arg, sac))
        return cs_cli_usage(cmd, "--%s expects attention, op or a block interval N >= 1, got '%s'",
                            o->name, arg);
    sac[-1] = 1;
    return 0;
}

int cs_opt_pp_schedule(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    int *row = dst; /* cs_cli_knobs.pp_schedule; the flag before it */
    for (int i = 0; i < cs_pp_schedule_count(); i++)
        if (!strcmp(cs_pp_schedule_row_at(i)->name, arg)) {
            *row = i;
            row[-1] = 1;
            return 0;
        }
    return cs_cli_usage(cmd, "--%s expects gpipe, 1f1b, interleaved_1f1b or zero_bubble, got '%s'",
                        o->name, arg);
}

int cs_opt_choice(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    return cs_opts_choose(cmd, o, arg, dst);
}

int cs_opt_params(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    if (cs_cli_params(arg, dst))
        return cs_cli_usage(cmd, "--%s expects a count > 0 such as 13e9 or 7B, got '%s'", o->name,
                            arg);
    return 0;
}

typedef struct strategies_ctx {
    const char *cmd;
    cs_cli_strategies *list;
} strategies_ctx;

static int strategy_item(void *ctx, const char *item)
{
    strategies_ctx *c = ctx;
    int s, rc = cs_opts_choose(c->cmd, &cs_strategy_item, item, &s);
    if (rc == 0 && c->list->n < CS_STRAT_COUNT) c->list->v[c->list->n++] = (cs_strategy)s;
    return rc;
}

int cs_opt_strategies(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", o->name);
    strategies_ctx c = {cmd, dst};
    c.list->n = 0;
    return cs_opts_each(cmd, opt, arg, 256, strategy_item, &c);
}

cs_strategy cs_opts_zero_stage(int z)
{
    char name[16];
    cs_strategy s;
    snprintf(name, sizeof name, "zero%d", z);
    if (cs_strategy_find(name, &s)) CS_PANIC("no strategy row is spelled %s", name);
    return s;
}

int cs_opt_zero(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    char opt[64];
    int z;
    snprintf(opt, sizeof opt, "--%s", o->name);
    if (cs_cli_int(cmd, opt, arg, 0, CS_OPTS_ZERO_MAX, &z)) return CS_EXIT_USAGE;
    *(cs_cli_strategies *)dst = (cs_cli_strategies){1, {cs_opts_zero_stage(z)}};
    return 0;
}

int cs_opt_refuse(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    (void)arg, (void)dst;
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", o->name);
    return cs_cli_usage(cmd, "unknown option '%s'", opt);
}

/* ---- the loop ---------------------------------------------------------------------- */

enum { KEY_BASE = 256, KEY_HELP = 'h' };

int cs_opts_parse(const char *cmd, const cs_opt *opts, size_t n, int argc, char **argv, void *args,
                  void (*help)(FILE *), int *next)
{
    struct option *lo = cs_xcalloc(n + 2, sizeof *lo);
    char shorts[64] = ":";
    size_t ns = 1;
    for (size_t i = 0; i < n; i++) {
        const cs_opt *o = &opts[i];
        lo[i] = (struct option){o->name, o->flag ? no_argument : required_argument, 0,
                                o->key ? o->key : KEY_BASE + (int)i};
        if (o->key && ns + 3 < sizeof shorts) {
            shorts[ns++] = o->key;
            if (!o->flag) shorts[ns++] = ':';
        }
    }
    lo[n] = (struct option){"help", no_argument, 0, KEY_HELP};
    shorts[ns++] = KEY_HELP;
    shorts[ns] = 0;
    optind = 0; /* a fresh scan, also for a second parse in one process (tests) */
    opterr = 0;
    int ch, rc = -1;
    while (rc < 0 && (ch = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
        const cs_opt *o = NULL;
        for (size_t i = 0; i < n && !o; i++)
            if (ch == (opts[i].key ? opts[i].key : KEY_BASE + (int)i)) o = &opts[i];
        if (o) {
            int r = o->parse(cmd, o, o->flag ? NULL : optarg, (char *)args + o->at);
            if (r) rc = r;
        } else if (ch == KEY_HELP) {
            help(stdout);
            rc = CS_EXIT_OK;
        } else if (ch == ':') {
            rc = cs_cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
        } else {
            rc = cs_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    free(lo);
    *next = optind;
    return rc;
}

/* ---- lists ------------------------------------------------------------------------- */

int cs_opts_each(const char *cmd, const char *opt, const char *list, size_t maxlen,
                 int (*each)(void *ctx, const char *item), void *ctx)
{
    if (strlen(list) >= maxlen) return cs_cli_usage(cmd, "%s: list too long", opt);
    if (!*list) return cs_cli_usage(cmd, "%s expects a comma-separated list, got ''", opt);
    char *buf = cs_xstrdup(list);
    int rc = 0, k = 1;
    /* every item counts: an empty one ("8,,16", a trailing comma) is refused */
    for (char *tok = buf; tok && !rc; k++) {
        char *comma = strchr(tok, ',');
        if (comma) *comma = '\0';
        if (!*tok || strspn(tok, " \t") == strlen(tok))
            rc = cs_cli_usage(cmd, "%s: item %d of '%s' is empty", opt, k, list);
        else
            rc = each(ctx, tok);
        tok = comma ? comma + 1 : NULL;
    }
    free(buf);
    return rc;
}

/* ---- warnings ------------------------------------------------------------------------ */

void cs_cli_warn_des(const char *cmd, const cs_cluster *c, int engine)
{
    if (engine == CS_ENGINE_DES || (c->n_overrides == 0 && c->n_stragglers == 0)) return;
    fprintf(stderr,
            "collsim %s: warning: the cluster's des: section (%d link override%s, %d "
            "straggler%s) is ignored by the closed form; --engine des prices it\n",
            cmd, c->n_overrides, c->n_overrides == 1 ? "" : "s", c->n_stragglers,
            c->n_stragglers == 1 ? "" : "s");
}

/* ---- help ---------------------------------------------------------------------------- */

void cs_opts_presets(FILE *f)
{
    for (size_t i = 0; i < cs_presets_cluster_count(); i++)
        fprintf(f, "%s%s", i ? ", " : "", cs_presets_cluster_name(i));
}

void cs_opts_wrap(FILE *f, const char *text, int col, int indent, int width)
{
    for (const char *w = text; *w;) {
        size_t n = strcspn(w, " ");
        if (w != text && col + 1 + (int)n > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (w != text) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)n, w);
        col += (int)n;
        w += n;
        if (*w) w++;
    }
    fputc('\n', f);
}

/* ---- training overrides --------------------------------------------------------------- */

void cs_cli_knobs_apply(const cs_cli_knobs *k, cs_training *t)
{
    if (k->dtype >= 0) {
        t->mixed_precision = CS_MP_PURE; /* the model in that dtype */
        t->param_dtype = (cs_dtype)k->dtype;
        cs_training_resolve_precision(t);
    }
    if (k->micro_batch) t->micro_batch = k->micro_batch;
    if (k->grad_accum) t->grad_accum = k->grad_accum;
    if (k->ckpt >= 0) t->checkpointing = (cs_ckpt)k->ckpt;
    if (k->sac_set) t->selective_ac = k->sac;
    if (k->attention >= 0) t->flash_attention = k->attention > 0;
    if (k->attention >= 2) t->attention_kernel = (cs_attn_kernel)(k->attention - 2);
    if (k->compile) t->compile = 1;
    if (k->optimizer_in_backward) t->optimizer_in_backward = 1;
    if (k->activation_offloading) t->activation_offloading = 1;
    if (k->loss >= 0) t->loss_impl = k->loss;
    if (k->engine >= 0) t->collective_engine = (cs_engine_kind)k->engine;
    if (k->optimizer >= 0) t->optimizer = (cs_optimizer)k->optimizer;
    if (k->tp) t->tensor_parallel = k->tp;
    if (k->pp) t->pipeline_parallel = k->pp;
    if (k->pp_schedule_set) t->pipeline_schedule = k->pp_schedule;
}

int cs_cli_knobs_batch(const char *cmd, const cs_cli_knobs *k, int ranks, cs_training *t)
{
    if (!k->global_batch) return 0;
    ranks /= cs_tensor_degree(t) > 0 ? cs_tensor_degree(t) : 1; /* the data-parallel ranks */
    ranks /= t->pipeline_parallel > 1 ? t->pipeline_parallel : 1;
    /* tp x pp above the ranks: no data-parallel rank to divide the batch
     * by; the layout's own check names the degrees (layout.c) */
    if (ranks < 1) return 0;
    long per_step = (long)t->micro_batch * ranks;
    if (k->global_batch % per_step)
        return cs_cli_usage(cmd,
                            "--global-batch %d is no whole multiple of micro-batch %d x %d ranks "
                            "(= %ld)",
                            k->global_batch, t->micro_batch, ranks, per_step);
    long gl = k->global_batch / per_step;
    if (gl > CS_LIMIT_HI_GRAD_ACCUM) /* --grad-accum's own range, derived or given */
        return cs_cli_usage(cmd,
                            "--global-batch %d gives grad-accum %ld (micro-batch %d x %d ranks), "
                            "above --grad-accum's 1..%d",
                            k->global_batch, gl, t->micro_batch, ranks, CS_LIMIT_HI_GRAD_ACCUM);
    int ga = (int)gl;
    if (k->grad_accum && k->grad_accum != ga)
        return cs_cli_usage(cmd,
                            "--grad-accum %d disagrees with --global-batch %d (micro-batch %d x "
                            "%d ranks x grad-accum %d)",
                            k->grad_accum, k->global_batch, t->micro_batch, ranks, ga);
    t->grad_accum = ga;
    return 0;
}
