/* SPDX-License-Identifier: MIT */
/*
 * strategy.h - the data-parallel training strategies as one table. Each
 * strategy of training.h's CS_STRATEGIES list is one row: the scenario
 * knobs that apply to it, which model state it shards (the layout,
 * layout.h, turns that into ZeRO's degrees), whether its shard group is
 * hybrid (layout.c sizes the groups), its reshard-after-forward rule, a
 * check of settings it contradicts, its memory terms beyond the model
 * states, and the hooks that build its part of the iteration graph. Rows
 * live one file per family: strategy_ddp.c (ddp), strategy_zero.c
 * (zero1), strategy_fsdp.c (the four FSDP sharding strategies). Nothing
 * outside the table switches on the strategy or tests the enum's order:
 * callers ask the functions below (or read the row).
 *
 * The row also holds how the strategy is named and drawn: the other
 * spellings users may type (PyTorch's and DeepSpeed's names) and its
 * colour in every plot. tests/test-training.c checks that every row sets
 * every attribute a row must have.
 *
 * Adding a strategy: one line in CS_STRATEGIES and one row (a
 * `const cs_strategy_row cs__strategy_<name>`) in a family file.
 */
#ifndef CS_STRATEGY_H
#define CS_STRATEGY_H

#include <stddef.h>

#include "base/error.h"
#include "coll/collective.h"
#include "coll/topology.h"
#include "train/layout.h"
#include "train/model.h"
#include "train/training.h"

/* Scenario keys that apply to some strategies only, in the order the
 * scenario loader checks them. */
typedef enum cs_knob {
    CS_KNOB_BUCKET_CAP,          /* bucket_cap_mb */
    CS_KNOB_FIRST_BUCKET,        /* first_bucket_mb */
    CS_KNOB_BUCKET_VIEW,         /* gradient_as_bucket_view */
    CS_KNOB_COMM_HOOK,           /* ddp_comm_hook */
    CS_KNOB_BACKWARD_PREFETCH,   /* backward_prefetch */
    CS_KNOB_FORWARD_PREFETCH,    /* forward_prefetch */
    CS_KNOB_LIMIT_ALL_GATHERS,   /* limit_all_gathers */
    CS_KNOB_RESHARD,             /* reshard_after_forward */
    CS_KNOB_SHARD_GROUP,         /* shard_group */
    CS_KNOB_FSDP_VERSION,        /* fsdp_version */
    CS_KNOB_FSDP_UNIT_LAYERS,    /* fsdp_unit_layers */
    CS_KNOB_FSDP_HOOK_CPU,       /* fsdp_hook_cpu_ms */
    CS_KNOB_COUNT
} cs_knob;
#define CS_KNOB_BIT(k) (1u << (k))
/* DDP's gradient buckets; FullyShardedDataParallel's own arguments. */
#define CS_KNOBS_BUCKETS                                                                   \
    (CS_KNOB_BIT(CS_KNOB_BUCKET_CAP) | CS_KNOB_BIT(CS_KNOB_FIRST_BUCKET) |                 \
     CS_KNOB_BIT(CS_KNOB_BUCKET_VIEW) | CS_KNOB_BIT(CS_KNOB_COMM_HOOK))
#define CS_KNOBS_FSDP                                                                      \
    (CS_KNOB_BIT(CS_KNOB_BACKWARD_PREFETCH) | CS_KNOB_BIT(CS_KNOB_FORWARD_PREFETCH) |      \
     CS_KNOB_BIT(CS_KNOB_LIMIT_ALL_GATHERS) | CS_KNOB_BIT(CS_KNOB_FSDP_VERSION) |           \
     CS_KNOB_BIT(CS_KNOB_FSDP_UNIT_LAYERS) | CS_KNOB_BIT(CS_KNOB_FSDP_HOOK_CPU))

/* Memory a strategy adds beyond params + grads + optimizer states
 * (memory.c states the accounting). */
typedef struct cs_strategy_mem {
    double unsharded_bytes;  /* FSDP: gathered units and unsharded gradients at the peak */
    double buckets_bytes;    /* DDP: gradient buckets */
} cs_strategy_mem;

/* The iteration graph under construction (train/wbuild.h: the calls a
 * hook makes to add tasks). */
typedef struct cs_wbuild cs_wbuild;

/* An empty alias list, for a row whose name is its only spelling. */
#define CS_STRATEGY_NO_ALIASES ((const char *const[]){NULL})

/* One strategy. Hooks may be NULL: a NULL forward_unit / backward_unit
 * adds just the layer's compute, the others add nothing; every other
 * pointer is set (contradiction and memory_terms aside). */
typedef struct cs_strategy_row {
    /* other spellings users may type for it (PyTorch's ShardingStrategy
     * names, DeepSpeed's ZeRO stages as zero<N>: `--zero N` picks the row
     * spelled zero<N>), NULL-terminated; CS_STRATEGY_NO_ALIASES if none */
    const char *const *aliases;
    /* its colour in every plot, "#RRGGBB" (Okabe & Ito 2008, "Color
     * Universal Design": colour-blind-safe) */
    const char *color;
    unsigned knobs;                  /* CS_KNOB_BIT()s of the keys that apply */
    /* which model state the shard group divides (Rajbhandari et al. 2020
     * Sec 5: P_os, P_os+g, P_os+g+p) */
    unsigned char shards_params, shards_grads, shards_optimizer;
    /* the shard group is training.shard_group (0: one node) and state is
     * replicated across groups (torch HYBRID_SHARD); else the world */
    unsigned char hybrid;
    /* frees gathered parameters after forward unless reshard_after_forward
     * is false (torch FULL_SHARD); 0: never (not sharded, or SHARD_GRAD_OP) */
    unsigned char reshards;
    /* no mixed-precision wrapper of its own: trained under torch.autocast
     * (mixed_precision amp, the default) or pure; 0: FSDP's MixedPrecision
     * (fsdp_param_dtype, the default) */
    unsigned char autocast;
    cs_op grad_op;                   /* how gradients are reduced */
    /* 1: each rank keeps its whole gradients in param.grad across the
     * micro-batches of a step (DDP's no_sync, Megatron-LM's local DDP), so
     * autograd adds every micro-batch's gradient after the first into them
     * (compute.c prices the add); 0: the strategy reduces or shards them
     * per micro-batch (FSDP's own accumulation is not priced) */
    unsigned char accumulates_grads;
    /* A setting the strategy contradicts: the message, with *key the
     * scenario key at fault; NULL if none. */
    const char *(*contradiction)(const cs_training *t, const char **key);
    /* Memory terms beyond model states; out is zeroed by the caller. */
    void (*memory_terms)(const cs_model *m, const cs_training *t, const cs_layout *l,
                         cs_strategy_mem *out);
    /* Graph hooks, called per micro-batch in this order: pre_forward;
     * forward_unit for layers 0..L-1; (the head's forward and backward);
     * backward_unit for layers L-1..0; post_backward. after_step once,
     * after the optimizer step (task opt). */
    void (*pre_forward)(cs_wbuild *b);
    void (*forward_unit)(cs_wbuild *b, int layer);
    void (*backward_unit)(cs_wbuild *b, int layer);
    void (*post_backward)(cs_wbuild *b);
    void (*after_step)(cs_wbuild *b, int opt);
} cs_strategy_row;

/* The row of s (static storage). */
const cs_strategy_row *cs_strategy_row_of(cs_strategy s);

/* ---- names ---- */
const char *cs_strategy_name(cs_strategy s);
int cs_strategy_parse(const char *s, cs_strategy *out);
/* The names in table order, NULL-terminated (the scenario schema's enum). */
extern const char *const cs_strategy_names[CS_STRAT_COUNT + 1];
/* The strategy spelled s exactly, by its name or an alias (DeepSpeed's
 * ZeRO stage N is the one spelled zero<N>); 0 or CS_EINVAL. */
int cs_strategy_find(const char *s, cs_strategy *out);
/* The k-th alias over the whole table (rows in table order, each row's
 * aliases in its order) and, into *s, the strategy it names; NULL when k
 * is past the last. */
const char *cs_strategy_alias(int k, cs_strategy *s);
/* The plot colour of s, "#RRGGBB" (static storage). */
const char *cs_strategy_color(cs_strategy s);

/* ---- knobs ---- */
const char *cs_strategy_knob_key(cs_knob k);
int cs_strategy_knob_applies(cs_strategy s, cs_knob k);
/* Which strategies k applies to, for messages ("ddp and zero1 (DDP's
 * gradient buckets)"), into buf. */
void cs_strategy_knob_scope(cs_knob k, char *buf, size_t len);

/* ---- sharding ---- */
/* (The process groups and sharding degrees are the layout's: layout.h.)
 * reshard_after_forward resolved: the row's rule, off when set to false. */
int cs_strategy_reshard_after_forward(const cs_training *t);

#endif
