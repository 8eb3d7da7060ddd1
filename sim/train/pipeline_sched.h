/* SPDX-License-Identifier: MIT */
/*
 * pipeline_sched.h - pipeline schedules as rows of one table: for a
 * pipeline of P stages, V model chunks (virtual stages) per stage and m
 * micro-batches, the order in which each stage runs the forward (F), the
 * backward (B: with split_backward the input-gradient part only) and the
 * weight-gradient part (W, split rows only) of each micro-batch of each
 * of its chunks; and the bubble the row's source gives for uniform stages
 * (what tests/test-pipeline.c holds the executor's timeline to).
 * The executor that runs an order (stage timelines joined by
 * point-to-point transfers) is train/pipeline_exec.h; adding a schedule = a row
 * in pipeline_sched.c.
 */
#ifndef CS_PIPELINE_SCHED_H
#define CS_PIPELINE_SCHED_H

#include "base/error.h"

typedef enum cs_pp_pass { CS_PP_F, CS_PP_B, CS_PP_W } cs_pp_pass;

/* One op of a stage's order: a pass of micro-batch `micro` through the
 * stage's chunk `chunk` (0 <= chunk < V: virtual stage chunk x P + stage). */
typedef struct cs_pp_op {
    cs_pp_pass pass;
    int micro;
    int chunk;
} cs_pp_op;

typedef struct cs_pp_schedule_row {
    const char *name;       /* the pipeline_schedule key's value */
    const char *source;     /* the implementation its order follows */
    int interleaved;        /* 1: takes V >= 1 chunks per stage; 0: V must be 1 */
    int split_backward;     /* 1: B is the input gradient, W the weight gradient */
    /* 0, or CS_EINVAL with d filled when the row cannot run (P, V, m) */
    int (*check)(int P, int V, int m, cs_diag *d);
    /* The ops of `stage` into out[] (room for 3 x m x V), returns how many. */
    int (*order)(int P, int V, int m, int stage, cs_pp_op *out);
    /* The bubble over the ideal time m x (tf + tb + tw) of a stage whose
     * passes take tf, tb, tw per micro-batch (all chunks; tw 0 unless
     * split), p2p free, per the row's source. */
    double (*ideal_bubble)(int P, int V, int m, double tf, double tb, double tw);
} cs_pp_schedule_row;

/* The rows in table order, and their names NULL-terminated (the scenario
 * key's choices). */
int cs_pp_schedule_count(void);
const cs_pp_schedule_row *cs_pp_schedule_row_at(int i);
extern const char *const cs_pp_schedule_names[];
/* The row named name, or NULL. */
const cs_pp_schedule_row *cs_pp_schedule_find(const char *name);

#endif
