/* SPDX-License-Identifier: MIT */
/*
 * sweep.h - grids over model size P x ranks N x series, one simulated
 * iteration per point, and the crossovers between series: where one
 * series' throughput overtakes another's on a continuous P axis (GSL
 * root finding on the throughput difference) and where a series starts
 * to run out of memory (bisection on the fits verdict). A series is a
 * strategy, or, where the spec lists layouts (crossover --tp / --pp), a
 * strategy at one tensor- and pipeline-parallel degree ("fsdp_full_shard
 * tp4 pp2"): every strategy x tp x pp of the lists.
 *
 * A point uses a generic model of P parameters (--params) or a preset
 * (--models); everything else comes from the scenario / training defaults.
 * Results are deterministic and independent of how the grid is split
 * across MPI ranks.
 */
#ifndef CS_SWEEP_H
#define CS_SWEEP_H

#include <stddef.h>

#include "coll/cluster.h"
#include "base/error.h"
#include "train/model.h"
#include "base/buf.h"
#include "train/iteration.h"
#include "study/plan.h"
#include "train/strategy.h"
#include "train/training.h"

#define CS_SWEEP_MAX_LAYOUT 16 /* values of one --tp / --pp list */

typedef struct cs_sweep_spec {
    cs_cluster cluster;
    cs_training training;      /* strategy overwritten per point */
    /* The batch. global_batch: sequences per optimizer step over all ranks
     * (0: the training's micro_batch x grad_accum per rank, whatever the
     * rank count). search_micro_batch / search_ckpt: each point runs its
     * strategy at the fastest micro-batch / checkpointing that fits
     * (cs_plan_best), grad_accum derived from the global batch; 0: the
     * training's. */
    long global_batch;
    int search_micro_batch, search_ckpt;
    int seq_len;               /* the generic models' sequence length (0: GPT-3's) */
    int nranks;
    int ranks[64];
    int nstrategies;
    cs_strategy strategies[CS_STRAT_COUNT];
    /* the layouts each strategy runs at (crossover --tp, --pp): ntps > 0
     * or npps > 0 makes every strategy x tp x pp a series (a list not
     * given: the training's degree); both 0: one series per strategy at
     * the training's layout, keyed by the strategy alone */
    int ntps, tps[CS_SWEEP_MAX_LAYOUT];
    int npps, pps[CS_SWEEP_MAX_LAYOUT];
    /* either a log grid of generic models ... */
    double params_min, params_max;
    int params_points;
    /* ... or a list of models (nmodels > 0) */
    int nmodels;
    cs_model models[64];
} cs_sweep_spec;

/* One series: a strategy at a layout. */
typedef struct cs_sweep_series {
    cs_strategy strategy;
    int tp, pp;
} cs_sweep_series;

/* One grid point. */
typedef struct cs_sweep_point {
    cs_strategy strategy;
    int tp, pp;                /* the layout it ran (the training's without lists) */
    int applies;               /* 0: the layout does not apply to this model and rank
                                  count (TP over the heads, PP over the layers, tp x pp
                                  not dividing the ranks): nothing ran, fits 0, its
                                  numbers 0; only with layout lists */
    int ranks;
    double params;
    char model[64];
    int micro_batch, grad_accum; /* as run */
    cs_ckpt checkpointing;
    int batch_kept;            /* micro_batch x grad_accum x ranks = the spec's global batch */
    int fits;
    double iteration_time_s;
    double tokens_per_s;
    double tflops_per_gpu;
    double mfu;
    double peak_bytes;
    double capacity_bytes;
    double exposed_comm_s;
    double wire_bytes;         /* all primitives, per rank per iteration */
    cs_breakdown time;         /* where the iteration's time goes */
} cs_sweep_point;

/* Evaluates one point (generic model of `params`, or spec->models[model]
 * when model >= 0) of strategy st at the training's layout. */
int cs_sweep_point_eval(const cs_sweep_spec *s, cs_strategy st, int ranks, double params,
                        int model, cs_sweep_point *out, cs_diag *d);
/* The same for series se (a layout that does not apply: out->applies 0,
 * not an error, where s lists layouts). */
int cs_sweep_series_eval(const cs_sweep_spec *s, const cs_sweep_series *se, int ranks,
                         double params, int model, cs_sweep_point *out, cs_diag *d);

/* The series: how many (nstrategies x layouts), the i-th (strategy order,
 * then the --tp list's, then the --pp list's; a list not given: the
 * training's degree), whether s lists layouts,
 * the layouts per strategy and the index of (tp, pp) among them (0
 * without lists; -1: not listed). */
int cs_sweep_nseries(const cs_sweep_spec *s);
cs_sweep_series cs_sweep_series_at(const cs_sweep_spec *s, int i);
int cs_sweep_has_layouts(const cs_sweep_spec *s);
int cs_sweep_nlayouts(const cs_sweep_spec *s);
int cs_sweep_layout_index(const cs_sweep_spec *s, int tp, int pp);
/* A series' name into buf: the strategy's without layout lists
 * ("fsdp_full_shard"), else with its layout ("fsdp_full_shard tp4 pp2");
 * returns buf. */
const char *cs_sweep_series_name(const cs_sweep_spec *s, cs_strategy st, int tp, int pp, char *buf,
                                 size_t n);

/* Number of points of the grid and the i-th point's coordinates, in the
 * canonical order (ranks, then P or model, then series); st is the
 * series' strategy, *series (when not NULL) its index. */
size_t cs_sweep_size(const cs_sweep_spec *s);
void cs_sweep_coords(const cs_sweep_spec *s, size_t i, int *ranks, double *params, int *model,
                     cs_strategy *st);
int cs_sweep_series_of(const cs_sweep_spec *s, size_t i);
/* The k-th P of the log grid (0 <= k < params_points): params_min and
 * params_max exactly at the ends, 10^(log10 min + k (log10 max - log10
 * min) / (points - 1)) between. */
double cs_sweep_grid_params(const cs_sweep_spec *s, int k);

/* Called after each evaluated point with the count done and the count this
 * call evaluates. */
typedef void (*cs_sweep_progress_fn)(void *ctx, size_t done, size_t total);
/* Evaluates points i = first, first + stride, ... < cs_sweep_size(s) into
 * pts[i] (pts holds the whole grid; other entries are untouched): the
 * share of one MPI rank, or the whole grid with (0, 1). Stops at the
 * first point that fails: returns its code with d filled and *failed (if
 * not NULL) set to its index. progress may be NULL. */
int cs_sweep_run(const cs_sweep_spec *s, size_t first, size_t stride, cs_sweep_point *pts,
                 cs_sweep_progress_fn progress, void *ctx, size_t *failed, cs_diag *d);

typedef enum cs_crossing_kind { CS_CROSS_THROUGHPUT, CS_CROSS_OOM } cs_crossing_kind;

typedef struct cs_crossing {
    int ranks;
    cs_strategy a, b;          /* for OOM: a = b = the strategy */
    int tp_a, pp_a, tp_b, pp_b; /* their layouts (the series a and b) */
    cs_crossing_kind kind;
    double params;             /* where it happens */
    double margin;             /* throughput: a's advantage (fraction) just below params,
                                  read at the last untied grid point below; oom: 0 */
    int fits_below;            /* oom: 1 if the strategy fits below params and not above
                                  (the usual way round), 0 if it fits only above;
                                  throughput: 1 */
    double margin_params;      /* throughput: the grid P where margin is read */
    double lead_max;           /* throughput: a's largest advantage (fraction) at the grid
                                  points where it wins below params and both fit (>= margin);
                                  oom: 0 */
    double lead_max_params;    /* ... and the P where it is reached */
    /* what each side runs at params: throughput, a's and b's choice; oom,
     * the configuration needing the least memory (a's) */
    int micro_batch_a, micro_batch_b;
    cs_ckpt ckpt_a, ckpt_b;
} cs_crossing;

/* The batch a point of s on `ranks` keeps and what it pins. */
cs_plan_batch cs_sweep_batch(const cs_sweep_spec *s, int ranks);

/* Finds crossings for generic-model sweeps from evaluated points (all of
 * the grid, canonical order), refining each one by evaluating more points
 * (sweep.c states the method: Brent on log10 P for throughput, counted
 * only where both strategies fit; bisection for OOM; both to 1e-4
 * relative). For throughput crossings `a` is the winner below params.
 * Per ranks value the crossings are sorted by params. A list of models
 * gives none. Caller frees *out (NULL when none). */
int cs_sweep_crossings(const cs_sweep_spec *s, const cs_sweep_point *pts, size_t n,
                       cs_crossing **out, size_t *nout, cs_diag *d);

/* The sizes at which crossover checks the rule of thumb. */
#define CS_SWEEP_RULE_SIZES 6 /* 1, 3, 7, 13, 30, 70B */

/* The rule of thumb checked at each of s's rank counts (out[i] for
 * s->ranks[i]) on generic models of the sweep's shape at
 * CS_SWEEP_RULE_SIZES sizes, each strategy at what its points run
 * (cs_sweep_batch). Returns 0, or the first failure's code with d filled. */
int cs_sweep_rules(const cs_sweep_spec *s, cs_plan_rule *out, cs_diag *d);

#endif
