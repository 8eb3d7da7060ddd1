/* SPDX-License-Identifier: MIT */
/*
 * limit.h - the one table of ranges for the counts a user gives in more
 * than one place: a model's shape, the batch, the ranks, a GEMM's
 * dimensions. The model and scenario schemas (YAML), the command-line
 * options and every CSV reader (training runs, kernel timings) check a
 * field against its row here, so a field has the same range wherever it is
 * read, and every loop over such a count is bounded by it (the sizes of
 * a sweep too) (issue 27: a
 * training-runs row of a billion layers hung; the schema refused it).
 * The ranges are whole numbers; CS_LIMIT_LO_<ID> / CS_LIMIT_HI_<ID> are
 * constants for static tables (schema rows, option rows), cs_limit_named
 * finds a row by a CSV column's name. (Named limit.h, not limits.h: inside
 * sim/base a "limits.h" would stand in for the C library's <limits.h>.)
 */
#ifndef CS_LIMIT_H
#define CS_LIMIT_H

/* X(ID, name, lo, hi): hi keeps every product the model forms of these
 * (4 x hidden, layers x hidden^2, micro_batch x seq_len x vocab) finite
 * and within a double's exact integers where it is an element count;
 * pipeline_parallel's hi is the most stages pipeline.c keeps one by one
 * (CS_PIPELINE_STAGES_MAX, review finding 3). */
#define CS_LIMITS(X)                                                                       \
    X(LAYERS, "layers", 1, 100000)                                                         \
    X(HIDDEN, "hidden", 1, 1000000)                                                        \
    X(HEADS, "heads", 1, 1000000)                                                          \
    X(KV_HEADS, "kv_heads", 1, 1000000)                                                    \
    X(FFN_HIDDEN, "ffn_hidden", 1, 100000000)                                              \
    X(EXPERTS, "experts", 1, 100000)                                                       \
    X(EXPERTS_PER_TOKEN, "experts_per_token", 1, 100000)                                   \
    X(SEQ_LEN, "seq_len", 1, 100000000)                                                    \
    X(VOCAB, "vocab", 1, 100000000)                                                        \
    X(MICRO_BATCH, "micro_batch", 1, 1 << 20)                                              \
    X(GRAD_ACCUM, "grad_accum", 1, 1 << 20)                                                \
    X(SHARD_GROUP, "shard_group", 0, 1 << 20)                                              \
    X(TENSOR_PARALLEL, "tensor_parallel", 1, 1 << 16)                                      \
    X(PIPELINE_PARALLEL, "pipeline_parallel", 1, 1024)                                     \
    X(VIRTUAL_STAGES, "virtual_stages", 1, 1 << 16)                                        \
    X(TRAIN_METRICS, "train_metrics", 0, 64)                                               \
    X(RANKS, "ranks", 1, 1 << 30)                                                          \
    X(NODES, "nodes", 1, 1000000)                                                          \
    X(GEMM_DIM, "gemm_dim", 1, 2147483647)                                                 \
    X(SWEEP_SIZES, "sweep_sizes", 1, 100000)

/* The largest message a size sweep (collsim collective, collsim-hw bench)
 * or a kernel row measures, in bytes: 1e15 keeps every element count
 * exact in a double and within size_t (1e20 converted past it). */
#define CS_LIMIT_BYTES_MAX 1e15

typedef enum cs_limit_id {
#define CS__LIMIT_ID(id, name, lo, hi) CS_LIMIT_##id,
    CS_LIMITS(CS__LIMIT_ID)
#undef CS__LIMIT_ID
    CS_LIMIT_COUNT
} cs_limit_id;

/* The bounds as constants: CS_LIMIT_LO_LAYERS, CS_LIMIT_HI_LAYERS, ... */
enum {
#define CS__LIMIT_BOUNDS(id, name, lo, hi) CS_LIMIT_LO_##id = (lo), CS_LIMIT_HI_##id = (hi),
    CS_LIMITS(CS__LIMIT_BOUNDS)
#undef CS__LIMIT_BOUNDS
};

typedef struct cs_limit {
    const char *name;
    long lo, hi;
} cs_limit;

/* Row id (static storage). */
const cs_limit *cs_limit_of(cs_limit_id id);
/* The row named name (case-insensitive; a CSV column or a YAML key), or
 * NULL. O(rows). */
const cs_limit *cs_limit_named(const char *name);
/* 1 when v is a whole number within the row's range. */
int cs_limit_holds(const cs_limit *l, double v);

#endif
