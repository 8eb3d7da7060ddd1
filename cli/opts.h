/* SPDX-License-Identifier: MIT */
/*
 * opts.h - internal to the collsim executable: the one option parser. A
 * command's options are a table of rows (cs_opt: name, argument kind,
 * parse function, limits, where the value goes in the command's argument
 * struct); cs_opts_parse runs them with getopt_long and handles what
 * every command shares (--help, a missing value, an unknown option).
 *
 * The rows every command spells the same way are macros here (CS_ARG_*),
 * so a name, a limit or a message lives once: --cluster, --ranks and
 * --nodes (the scenario schema's limits), --engine, --format, -o,
 * --checkpointing, --dtype, --micro-batch, --grad-accum, --attention.
 * Things that come in kinds (ops, algorithms, protocols, engines, dtypes,
 * formats, checkpointing modes, strategies, attention) are cs_choice rows:
 * their names, for parsing and for the "expected a, b or c" of a message,
 * come from the library's tables (attention's flash / standard are the
 * CLI's own). Comma-separated lists go through one tokenizer; help texts
 * list a table's names with cs_opts_list and wrap them with cs_opts_wrap.
 *
 * Parsers print their own message (collsim CMD: ...) and return an exit
 * code (cli.h); 0 means the value was stored.
 */
#ifndef CS_OPTS_H
#define CS_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "cli.h"
#include "config/presets.h"
#include "train/scenario.h"
#include "train/strategy.h"
#include "train/training.h"

typedef struct cs_opt cs_opt;

/* Parses arg (NULL for a flag) into dst, the row's field. */
typedef int (*cs_opt_fn)(const char *cmd, const cs_opt *o, const char *arg, void *dst);

/* A kind of named value: count values 0..count-1 with their names;
 * parse (NULL: the names, exactly) may accept other spellings. alias
 * gives the k-th other spelling (PyTorch's FULL_SHARD, DeepSpeed's
 * zero3) and, into *v, its value; NULL past the last. With alias, a value
 * that is not parsed exactly is matched against the names and the aliases
 * loosely: case, '-' and '_' ignored. A value refused gets a did-you-mean
 * from the names and aliases (the nearest by edit distance, or one equal
 * but for case). */
typedef struct cs_choice {
    int count;
    const char *(*name)(int v);
    int (*parse)(const char *s, int *v); /* 0 or CS_EINVAL */
    const char *(*alias)(int k, int *v); /* NULL: none */
} cs_choice;

extern const cs_choice cs_choice_op, cs_choice_algo, cs_choice_proto, cs_choice_engine,
    cs_choice_dtype, cs_choice_dtype_nccl, cs_choice_format, cs_choice_ckpt, cs_choice_strategy,
    cs_choice_attention, cs_choice_optimizer, cs_choice_loss;

/* The strategy aliases (PyTorch's ShardingStrategy names, DeepSpeed's
 * ZeRO stages), for help texts: "FULL_SHARD=fsdp_full_shard, ...". */
void cs_opts_aliases(char *buf, size_t len, const cs_choice *c);

/* How a bad choice is reported. */
typedef enum cs_says {
    CS_SAYS_UNKNOWN, /* unknown --NAME 'x' (expected a, b or c) */
    CS_SAYS_EXPECTS, /* --NAME expects a, b or c, got 'x' */
    CS_SAYS_ITEM     /* unknown NAME 'x' (expected a, b or c): a list item */
} cs_says;

#define CS_OPT_END (-2) /* ends a row's `only` list */

struct cs_opt {
    const char *name; /* the long name without "--" */
    char key;         /* the short form ('o' for -o), or 0 */
    int flag;         /* 1: takes no value */
    cs_opt_fn parse;
    size_t at; /* offset of the value in the command's argument struct */
    /* what the parsers below read (unused fields stay 0) */
    double lo, hi;           /* cs_opt_int: the range; cs_opt_above: lo, exclusive */
    const cs_choice *choice; /* cs_opt_choice */
    const int *only;         /* the choices accepted, in message order, CS_OPT_END-ended;
                              * NULL: all, in value order */
    int with_auto;           /* "auto" is accepted as CS_CHOICE_AUTO, listed first */
    cs_says says;
};

/* A list of strategies (cs_opt_strategies): at most one per strategy of
 * the table is kept, in the order given; later items are checked, then
 * dropped. */
typedef struct cs_cli_strategies {
    int n;
    cs_strategy v[CS_STRAT_COUNT];
} cs_cli_strategies;

/* ---- parsers (dst types: const char *, int, double) ------------------------ */

int cs_opt_string(const char *cmd, const cs_opt *o, const char *arg, void *dst);
int cs_opt_set(const char *cmd, const cs_opt *o, const char *arg, void *dst); /* a flag: 1 */
int cs_opt_int(const char *cmd, const cs_opt *o, const char *arg, void *dst);
int cs_opt_above(const char *cmd, const cs_opt *o, const char *arg, void *dst);
int cs_opt_size(const char *cmd, const cs_opt *o, const char *arg, void *dst); /* 4K, 25MiB */
int cs_opt_choice(const char *cmd, const cs_opt *o, const char *arg, void *dst);
/* A parameter count (cs_cli_params: 13e9, 7B, 70b) into a double. */
int cs_opt_params(const char *cmd, const cs_opt *o, const char *arg, void *dst);
/* A DeepSpeed ZeRO stage 0..CS_OPTS_ZERO_MAX into a cs_cli_strategies of
 * one strategy: the row spelled zero<N>, by name or alias
 * (cs_opts_zero_stage: 0 ddp, 1 zero1, 2 fsdp_shard_grad_op, 3
 * fsdp_full_shard, the stages' PyTorch equivalents). */
int cs_opt_zero(const char *cmd, const cs_opt *o, const char *arg, void *dst);
#define CS_OPTS_ZERO_MAX 3
/* The strategy of ZeRO stage z (0..CS_OPTS_ZERO_MAX); panics if no row is
 * spelled zero<z>. */
cs_strategy cs_opts_zero_stage(int z);
/* S[,S...] into a cs_cli_strategies, replacing what an earlier use gave;
 * an unknown name is refused as a list item (cs_strategy_item), a list of
 * 256 characters or more as too long. */
int cs_opt_strategies(const char *cmd, const cs_opt *o, const char *arg, void *dst);
/* An option another command of the same argument struct has: refused as
 * unknown (by its full name). */
int cs_opt_refuse(const char *cmd, const cs_opt *o, const char *arg, void *dst);

/* ---- the shared rows: T is the argument struct, f the field ---------------- */

#define CS_ARG_AT(T, f) .at = offsetof(T, f)
#define CS_ARG_CLUSTER(T, f) {"cluster", .parse = cs_opt_string, CS_ARG_AT(T, f)}
#define CS_ARG_OUTPUT(T, f) {"output", 'o', .parse = cs_opt_string, CS_ARG_AT(T, f)}
#define CS_ARG_RANKS(T, f)                                                                         \
    {"ranks", .parse = cs_opt_int, CS_ARG_AT(T, f), .lo = 1, .hi = CS_SCENARIO_RANKS_MAX}
#define CS_ARG_NODES(T, f)                                                                         \
    {"nodes", .parse = cs_opt_int, CS_ARG_AT(T, f), .lo = 1, .hi = CS_SCENARIO_NODES_MAX}
#define CS_ARG_FORMAT(T, f)                                                                        \
    {"format", .parse = cs_opt_choice, CS_ARG_AT(T, f), .choice = &cs_choice_format}
#define CS_ARG_ENGINE(T, f, message)                                                               \
    {"engine", .parse = cs_opt_choice, CS_ARG_AT(T, f), .choice = &cs_choice_engine,               \
     .says = (message)}
/* The training knobs (cs_cli_knobs below). */
#define CS_ARG_MICRO_BATCH(T, f)                                                                   \
    {"micro-batch", .parse = cs_opt_int, CS_ARG_AT(T, f), .lo = 1, .hi = CS_LIMIT_HI_MICRO_BATCH}
#define CS_ARG_GRAD_ACCUM(T, f)                                                                    \
    {"grad-accum", .parse = cs_opt_int, CS_ARG_AT(T, f), .lo = 1, .hi = CS_LIMIT_HI_GRAD_ACCUM}
#define CS_ARG_GLOBAL_BATCH(T, f)                                                                  \
    {"global-batch", .parse = cs_opt_int, CS_ARG_AT(T, f), .lo = 1, .hi = 1 << 30}
#define CS_ARG_TP(T, f)                                                                            \
    {"tp", .parse = cs_opt_int, CS_ARG_AT(T, f), .lo = 1, .hi = CS_LIMIT_HI_TENSOR_PARALLEL}
#define CS_ARG_PP(T, f)                                                                            \
    {"pp", .parse = cs_opt_int, CS_ARG_AT(T, f), .lo = 1, .hi = CS_LIMIT_HI_PIPELINE_PARALLEL}
/* gpipe | 1f1b | interleaved_1f1b | zero_bubble (train/pipeline_sched.h) */
int cs_opt_pp_schedule(const char *cmd, const cs_opt *o, const char *arg, void *dst);
#define CS_ARG_PP_SCHEDULE(T, f) {"pp-schedule", .parse = cs_opt_pp_schedule, CS_ARG_AT(T, f)}
#define CS_ARG_OPTIMIZER(T, f)                                                                     \
    {"optimizer", .parse = cs_opt_choice, CS_ARG_AT(T, f), .choice = &cs_choice_optimizer,         \
     .says = CS_SAYS_EXPECTS}
/* attention | op | N: torchtitan's selective policies (train/checkpoint.h) */
int cs_opt_selective_ac(const char *cmd, const cs_opt *o, const char *arg, void *dst);
#define CS_ARG_SELECTIVE_AC(T, f) {"selective-ac", .parse = cs_opt_selective_ac, CS_ARG_AT(T, f)}
#define CS_ARG_CKPT(T, f)                                                                          \
    {"checkpointing", .parse = cs_opt_choice, CS_ARG_AT(T, f), .choice = &cs_choice_ckpt,          \
     .says = CS_SAYS_EXPECTS}
/* flash, flash2, flash1 or standard: the training's flash_attention (1
 * or 0) and, named, its attention_kernel. */
extern const int cs_attention_order[];
#define CS_ARG_ATTENTION(T, f)                                                                     \
    {"attention", .parse = cs_opt_choice, CS_ARG_AT(T, f), .choice = &cs_choice_attention,         \
     .only = cs_attention_order, .says = CS_SAYS_EXPECTS}
/* naive | fused | chunked: the loss kernel (train/loss.h) */
#define CS_ARG_LOSS(T, f)                                                                          \
    {"loss", .parse = cs_opt_choice, CS_ARG_AT(T, f), .choice = &cs_choice_loss,                   \
     .says = CS_SAYS_EXPECTS}
#define CS_ARG_COMPILE(T, f) {"compile", .flag = 1, .parse = cs_opt_set, CS_ARG_AT(T, f)}
/* torchtune's optimizer_in_bwd and enable_activation_offloading (memory and time) */
#define CS_ARG_OPTIMIZER_IN_BACKWARD(T, f)                                                         \
    {"optimizer-in-backward", .flag = 1, .parse = cs_opt_set, CS_ARG_AT(T, f)}
#define CS_ARG_ACTIVATION_OFFLOADING(T, f)                                                         \
    {"activation-offloading", .flag = 1, .parse = cs_opt_set, CS_ARG_AT(T, f)}
/* The training dtypes: one for params, gradients and collectives. */
extern const int cs_training_dtypes[];
#define CS_ARG_TRAINING_DTYPE(T, f)                                                                \
    {"dtype", .parse = cs_opt_choice, CS_ARG_AT(T, f), .choice = &cs_choice_dtype,                 \
     .only = cs_training_dtypes, .says = CS_SAYS_EXPECTS}

/* A strategy as an item of a list: "unknown strategy 'x' (expected ...)". */
extern const cs_opt cs_strategy_item;

/* ---- running a table --------------------------------------------------------- */

/* Parses argv[1..] against the n rows of opts into args; --help / -h
 * prints help. Returns -1 to go on, with *next the first argument that
 * is not an option; else the exit code (CS_EXIT_OK after --help). */
int cs_opts_parse(const char *cmd, const cs_opt *opts, size_t n, int argc, char **argv, void *args,
                  void (*help)(FILE *), int *next);

/* Calls each(ctx, item) for the comma-separated items of list in order;
 * an empty list, an empty or blank item ("8,,16", "8,") and a list of
 * maxlen characters or more are refused with a usage message. Returns 0,
 * or the first exit code each returned. */
int cs_opts_each(const char *cmd, const char *opt, const char *list, size_t maxlen,
                 int (*each)(void *ctx, const char *item), void *ctx);

/* Parses s as a choice of o (as cs_opt_choice, into an int). */
int cs_opts_choose(const char *cmd, const cs_opt *o, const char *s, int *v);

/* Writes names as "a, b or c"; only as in cs_opt (NULL: all). */
void cs_opts_names(char *buf, size_t len, const cs_choice *c, const int *only, int with_auto);
/* Writes every name of c as "a, b, c", for help texts. */
void cs_opts_list(char *buf, size_t len, const cs_choice *c);
/* Prints text, which starts at column col, wrapped before a word that
 * would end past column width; a new line starts with indent blanks. Ends
 * with a newline. Words are separated by single blanks. */
void cs_opts_wrap(FILE *f, const char *text, int col, int indent, int width);

/* Warns on stderr ("collsim CMD: warning: ...") when c declares DES-only
 * heterogeneity (des: slow links, stragglers) and engine is not the DES:
 * the closed form prices a uniform cluster and would ignore them
 * silently. */
struct cs_cluster;
void cs_cli_warn_des(const char *cmd, const struct cs_cluster *c, int engine);

/* The preset cluster names, comma-separated, for help texts. */
void cs_opts_presets(FILE *f);

/* ---- overrides of a scenario's training ---------------------------------------- */

/* The training knobs a command line sets; -1 (dtype, ckpt, attention,
 * engine, optimizer) or 0 (micro_batch, grad_accum, global_batch): not
 * given. global_batch is sequences per optimizer step over all ranks
 * (PyTorch's / DeepSpeed's train_batch_size): grad_accum is derived. */
typedef struct cs_cli_knobs {
    int dtype, micro_batch, grad_accum, ckpt, attention, engine, optimizer, global_batch;
    int sac_set, sac; /* --selective-ac given (1) and its value (checkpoint.h) */
    int compile; /* 1: --compile given */
    int optimizer_in_backward, activation_offloading; /* 1: the flag given */
    int loss; /* --loss: a cs_loss_impl (train/loss.h); -1 unset */
    int tp; /* --tp: the tensor-parallel degree; 0 unset */
    int pp; /* --pp: the pipeline-parallel degree; 0 unset */
    int pp_schedule_set, pp_schedule; /* --pp-schedule given (1) and its row */
} cs_cli_knobs;

#define CS_CLI_KNOBS_UNSET                                                                         \
    {.dtype = -1, .ckpt = -1, .attention = -1, .engine = -1, .optimizer = -1, .loss = -1}

/* Sets what k gives on t: a dtype is pure low precision (params,
 * gradients and collectives, no fp32 master weights). */
void cs_cli_knobs_apply(const cs_cli_knobs *k, cs_training *t);
/* With a --global-batch, sets t->grad_accum = global / (micro_batch x
 * data-parallel ranks: ranks / t's tensor-parallel degree); refused (exit code, message printed) when that is no whole
 * number >= 1 or an explicit --grad-accum disagrees. 0 otherwise. */
int cs_cli_knobs_batch(const char *cmd, const cs_cli_knobs *k, int ranks, cs_training *t);

#endif
