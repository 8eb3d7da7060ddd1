/* SPDX-License-Identifier: MIT */
/*
 * pipeline.h - pipeline parallelism on the pp dimension of the layout
 * (layout.h): which layers each stage (and each of its V chunks) holds,
 * the passes' times it gives the executor (pipeline_exec.h: a schedule
 * row run as P stage timelines joined by point-to-point transfers), the
 * data-parallel
 * gradient synchronisation and optimizer step each stage ends with, and
 * each stage's memory. pipeline.c states the model, its sources and
 * departures. With P = 1 nothing here runs: evaluate.c keeps its graph.
 */
#ifndef CS_PIPELINE_H
#define CS_PIPELINE_H

#include "base/dtype.h"
#include "base/error.h"
#include "base/limit.h"
#include "coll/collective.h"
#include "train/iteration.h"
#include "train/layout.h"
#include "train/memory.h"
#include "train/model.h"
#include "train/pipeline_exec.h"
#include "train/pipeline_sched.h"
#include "train/pricing.h"
#include "train/training.h"

/* The most stages `memory` lists one by one: limit.h's range of
 * pipeline_parallel, so every stage is listed and compared. */
#define CS_PIPELINE_STAGES_MAX CS_LIMIT_HI_PIPELINE_PARALLEL

/* P (>= 1), V (>= 1), and the schedule row in effect (the default: 1f1b,
 * interleaved_1f1b when V > 1). */
int cs_pipeline_degree(const cs_training *t);
int cs_pipeline_chunks(const cs_training *t);
const cs_pp_schedule_row *cs_pipeline_schedule(const cs_training *t);

/* 0, or CS_EINVAL with d filled: P within limit.h's range, P x V not
 * over the layers, the
 * row must accept V and m = grad_accum (its check). O(1). */
int cs_pipeline_check(const cs_model *m, const cs_training *t, cs_diag *d);

/* Layers of virtual stage v = chunk x P + stage of L layers over P x V
 * chunks: L / PV each, the first L mod PV one more (file header); the
 * first layer's index into *first when first is not NULL. */
int cs_pipeline_chunk_layers(int L, int P, int V, int stage, int chunk, int *first);

/* The parameters (whole, before tensor parallelism) stage s of P stages
 * of V chunks each holds of m: its layers', the first stage's embedding,
 * the last stage's tied output layer. O(V). */
double cs_pipeline_stage_params(const cs_model *m, int P, int V, int s);

/* ---- one configuration ---- */
/* Per stage memory, as memory.h's lines. */
typedef struct cs_pp_memory {
    int P, V;
    const char *schedule;    /* the schedule row's name */
    int peak_stage;          /* the stage of the largest peak */
    cs_memory stage[CS_PIPELINE_STAGES_MAX]; /* the first min(P, max) stages */
    int held[CS_PIPELINE_STAGES_MAX];        /* activations of (micro-batch, chunk) held */
    int layers[CS_PIPELINE_STAGES_MAX];
} cs_pp_memory;

/* The iteration of m and t on layout l (P > 1): pass times from the
 * compute model and the TP collectives' prices, the schedule's run, each
 * stage's gradient synchronisation and optimizer step; it's fields filled
 * as the per-rank executor fills them (no tasks: ntasks 0), mem (may be
 * NULL) per stage. cache may be NULL. Caller frees it with
 * cs_iteration_free. Returns 0, or CS_EINVAL / a pricing error with d
 * filled. */
int cs_pipeline_run(const cs_model *m, const cs_training *t, const cs_layout *l,
                    cs_pricing_cache *cache, cs_iteration *it, cs_pp_memory *mem, cs_diag *d);

/* A pipeline iteration as the trace and the schedule writer show it:
 * every stage's passes and transfers (cs_pp_slice), then its closing
 * data-parallel synchronisation and optimizer step; the pass FLOPs and
 * the transfer's size. Arrays of P (slices: nslices[s] from
 * slice[first[s]]). Caller frees with cs_pp_timeline_free. */
typedef struct cs_pp_timeline {
    int P, V, m;
    const char *schedule;        /* the row's name */
    cs_pp_slice *slice;
    int *first, *nslices;
    double *f_flops, *b_flops, *w_flops; /* [stage x V + chunk], one micro-batch, executed */
    double p2p_bytes;            /* one transfer, per rank */
    cs_dtype p2p_dtype;
    cs_op sync_op;               /* all_reduce (DDP, ZeRO-1) or reduce_scatter (sharded) */
    cs_dtype sync_dtype;         /* the dtype sync_bytes are sized in (the wire's: the
                                  * comm hook's, or grad_reduce_dtype) */
    double *gather_s;            /* sharded parameters: the all-gather before the first pass
                                  * (drawn and replayed at the stage's end, with the sync:
                                  * the executor adds it to the stage's time there) */
    double *gather_bytes;        /* its size (the stage's parameters, per rank) */
    double *sync_s, *sync_bytes; /* the gradient sync of each stage (bytes per rank) */
    double *optimizer_s, *optimizer_bytes; /* the step and the HBM bytes it moves */
    int *layers;                 /* each stage's layers */
    cs_group sync_group;         /* the group the sync runs on (the layout's shard group) */
    cs_layout *layout;           /* the layout it ran on (a copy, owned) */
} cs_pp_timeline;
void cs_pp_timeline_free(cs_pp_timeline *tl);

/* cs_pipeline_run that also fills *tl (may be NULL) with the timeline. */
int cs_pipeline_run_timeline(const cs_model *m, const cs_training *t, const cs_layout *l,
                             cs_pricing_cache *cache, cs_iteration *it, cs_pp_memory *mem,
                             cs_pp_timeline *tl, cs_diag *d);

#endif
