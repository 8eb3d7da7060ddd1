/* SPDX-License-Identifier: MIT */
/*
 * plan.h - how to train a configuration: which parallel layout
 * (data-parallel strategy x tensor-parallel degree x pipeline-parallel
 * degree x virtual stages x pipeline schedule), checkpointing policy and
 * micro-batch, and how the seed request's rule of thumb fares on its
 * cluster (`collsim plan`). Every number is a train/evaluate.h simulated
 * iteration, exactly as `collsim simulate` computes it.
 *
 * The search: every layout and checkpointing policy of the space
 * (study/plan_space.h) x micro-batch 1, 2, 4, ... up to the largest that
 * fits (and the training's own micro-batch), with grad_accum chosen so
 * that micro_batch x grad_accum (sequences per data-parallel rank per
 * optimizer step; under PP the pipeline's micro-batches) keeps the
 * global batch. Where no whole grad_accum >= 1 keeps it, the nearest is
 * taken and the changed batch is noted; such configurations are listed
 * but never recommended. A layout whose memory floor (parameters and
 * optimizer states alone, cs_plan_memory_floor) exceeds the GPU is
 * pruned: listed once, never simulated. A configuration fits when the
 * simulated iteration's peak memory is within the GPU capacity. The
 * recommendation is the fastest (tokens/s) that fits and keeps the batch
 * (equally fast, within 1e-9 relative: the lower peak memory, then the
 * earlier: strategy order, then TP, PP, pipeline, policy, the smaller
 * micro-batch); its runner-up is the fastest of another strategy; and for
 * each other kind of configuration (without / with PP, without / with TP,
 * each other strategy, each pipeline schedule, each checkpointing mode)
 * its best, and why it loses: throughput (how much slower), memory
 * (nothing of the kind fits) or batch.
 *
 * The rule of thumb (cs_plan_rule_text) is checked on generic models
 * (model.h: GPT-3-like shapes with the configuration's sequence length
 * and vocabulary) at CS_PLAN_RULE_SIZES fixed sizes, with the same
 * cluster, ranks and training settings, for the rule's strategies. Cost:
 * (unpruned layouts x policies x ~log2(max micro-batch) + sizes x 3)
 * simulated iterations, each O(tasks log tasks) without PP, O(P x m x V)
 * with it; tools/bench-plan.sh times llama3-70b on 1024 GPUs.
 */
#ifndef CS_PLAN_H
#define CS_PLAN_H

#include <stddef.h>

#include "base/error.h"
#include "coll/topology.h"
#include "study/plan_space.h"
#include "train/evaluate.h"
#include "train/iteration.h"
#include "train/model.h"
#include "train/pricing.h"
#include "train/strategy.h"
#include "train/training.h"

/* The rule's pick "agrees" when it is the fastest or within this fraction
 * of it: closer than the simulator's accuracy (README: collectives within
 * a few percent of nccl-tests), so a difference this small decides
 * nothing. */
#define CS_PLAN_TIE_FRACTION 0.01
#define CS_PLAN_RULE_SIZES 10     /* plan's sizes (1, 2, 3, 5, 7, 10, 13, 20, 30, 70B) */
#define CS_PLAN_RULE_MAX_SIZES 10
#define CS_PLAN_RULE_STRATEGIES 3 /* ddp, fsdp_shard_grad_op, fsdp_full_shard */
/* Under pipeline parallelism the executor runs every micro-batch (pipeline.c:
 * O(P x m x V)), so plan simulates no micro-batch that leaves more than
 * this many in the pipeline (evaluate's CS_EVALUATE_MICRO_WHOLE_MAX, the
 * most a whole graph holds): with a bubble of (P - 1) / m that small, a
 * larger micro-batch loses nothing to it. */
#define CS_PLAN_PP_MICRO_MAX CS_EVALUATE_MICRO_WHOLE_MAX

/* One simulated configuration. */
typedef struct cs_plan_cfg {
    cs_strategy strategy;
    int tp;                  /* the tensor-parallel degree (1: none) */
    int pp, virtual_stages;  /* the pipeline-parallel degree (1: none), chunks per stage */
    const char *pp_schedule; /* the schedule row's name (static); NULL at pp 1 */
    cs_ckpt checkpointing;
    int selective_ac;        /* under selective (checkpoint.h), else 0 */
    int micro_batch, grad_accum;
    int batch_kept; /* micro_batch x grad_accum = the training's */
    int ok;         /* simulated; else `note` says why not */
    int pruned;     /* not simulated: floor_bytes > capacity_bytes (no micro-batch,
                       policy or schedule of the layout: those fields 0) */
    double floor_bytes; /* the layout's memory floor (cs_plan_memory_floor) */
    int fits;
    double peak_bytes, capacity_bytes;
    double iteration_time_s, tokens_per_s, tflops_per_gpu, mfu, exposed_comm_s;
    double pipeline_bubble_s; /* pp > 1: idle, not in exposed_comm_s (iteration.h) */
    double wire_bytes; /* all primitives, per rank per iteration */
    cs_breakdown time; /* where the iteration's time goes */
    char note[600];    /* "" when there is nothing to say */
} cs_plan_cfg;

/* ---- the fastest configuration of one strategy (crossover's search) ---------- */

/* What cs_plan_best keeps and what it may vary. */
typedef struct cs_plan_batch {
    long global_batch; /* sequences per optimizer step over all ranks (>= 1) */
    int micro_batch;   /* > 0: pinned; 0: searched over 1, 2, 4, ... */
    int ckpt;          /* a cs_ckpt: pinned; -1: searched (cs_plan_space's default modes) */
} cs_plan_batch;

/* The fastest configuration of t->strategy (t's other settings kept) on
 * topo that fits, keeping b->global_batch: each micro-batch mb gets the
 * grad_accum global / (ranks x mb), or the nearest whole one >= 1 where
 * that is no whole number (batch_kept 0, and the note says the batch
 * run). Micro-batches are 1, 2, 4, ... up to the sequences per rank
 * (1 when there are more ranks than sequences). Where nothing fits, the
 * configuration needing the least memory (micro-batch 1 or the pinned,
 * the most recomputation allowed), fits 0.
 * The search, per checkpointing mode in order of less memory (none,
 * selective, full): the largest micro-batch that fits (from the memory
 * estimate's guess, one simulated iteration up or down at a time, fitting
 * being monotone in the micro-batch), then smaller ones while they are
 * faster; a mode that recomputes more is skipped when the modes before it
 * already fit the largest micro-batch (the same micro-batch with more
 * recomputation is slower). Typically 2-4 simulated iterations per mode.
 * Ties as in the recommendation (faster, then a kept batch, then less
 * memory, then the earlier tried). Returns 0, or an evaluation's error
 * with d filled. */
int cs_plan_best(const cs_model *m, const cs_training *t, const cs_topology *topo,
                 const cs_plan_batch *b, cs_pricing_cache *cache, cs_plan_cfg *out, cs_diag *d);
/* Is simulated configuration a preferred to b (NULL: nothing yet)? One
 * that fits first, then a kept batch, then faster, then less memory. */
int cs_plan_cfg_preferred(const cs_plan_cfg *a, const cs_plan_cfg *b);
/* The configuration of b needing the least memory (as above), simulated:
 * whether anything fits is whether it fits. */
int cs_plan_least(const cs_model *m, const cs_training *t, const cs_topology *topo,
                  const cs_plan_batch *b, cs_pricing_cache *cache, cs_plan_cfg *out, cs_diag *d);

/* The rule checked at one size. */
typedef struct cs_plan_rule_row {
    double params;
    cs_plan_cfg c[CS_PLAN_RULE_STRATEGIES]; /* of cs_plan_rule_strategy(i) */
    int winner;             /* index into c of the fastest that fits; -1: none fits */
    int rule;               /* index into c the rule picks */
    int agrees;             /* 2: the rule's pick is the winner; 1: within the tie
                               fraction; 0: no */
    double pick_slower_pct; /* the rule's pick vs the winner (both fit, not the same) */
    int in_claim;           /* below 3B: the "DDP 20-30% faster" claim applies */
    int claim_checked;      /* in_claim, DDP and FULL_SHARD both fit */
    double ddp_vs_fs_pct;   /* checked: DDP's tokens/s over FULL_SHARD's, in % */
    int claim_holds;        /* checked and within +20..30 % */
} cs_plan_rule_row;

/* The rule checked at a list of sizes (cs_plan_rule_check). */
typedef struct cs_plan_rule {
    char cluster[64];                /* the topology's cluster */
    int ranks;
    int seq_len, vocab;              /* the generic models' */
    int micro_batch, grad_accum;     /* the training's (searched 0: at these) */
    int searched;                    /* each strategy at its cs_plan_best */
    int nsizes;
    cs_plan_rule_row rows[CS_PLAN_RULE_MAX_SIZES];
    int agrees;                      /* sizes where agrees > 0 */
    int claim_checked, claim_holds;  /* sizes where the claim was checked, held */
} cs_plan_rule;

/* The best configuration of one kind the recommendation is not of. */
#define CS_PLAN_MAX_ALTS 32
typedef struct cs_plan_alt {
    char kind[64];            /* "without pipeline parallelism", "strategy ddp", ... */
    const cs_plan_cfg *cfg;   /* its fastest eligible (into cfgs); NULL: none */
    const cs_plan_cfg *least; /* cfg NULL: the one of the kind needing the least memory
                               * (a pruned layout by its floor); NULL: none searched */
    const char *loses;        /* "throughput", "memory" (nothing of the kind fits),
                               * "batch" (what fits changes the global batch), "n/a" */
    double slower_pct;        /* cfg vs the recommendation, in % */
} cs_plan_alt;

typedef struct cs_plan {
    /* the inputs: the caller's, they must outlive the plan */
    const cs_model *model;
    const cs_training *training;
    const cs_topology *topo;
    int seqs_per_rank; /* the training's micro_batch x grad_accum */
    int dp_ranks;      /* the data-parallel ranks (ranks / the training's tp x pp) */
    long global_batch; /* seqs_per_rank x dp_ranks: kept at every layout */
    cs_plan_cfg *cfgs; /* owned: strategy order, then TP, PP, pipeline, policy, micro-batch */
    size_t ncfgs;
    size_t nsimulated, npruned;       /* of cfgs: simulated, pruned layouts */
    /* owned, into cfgs: for each (strategy, TP, PP) in cfgs' order, the
     * configuration the report shows: the preferred simulated one that
     * fits (cs_plan_cfg_preferred: keeps the batch, faster, less memory),
     * else the simulated one with the least peak, else the pruned one with
     * the least floor, else the first (it does not apply: its reason).
     * best and runner are among them. */
    const cs_plan_cfg **shown;
    size_t nshown;
    const cs_plan_cfg *best, *runner; /* into cfgs; NULL: none */
    double runner_slower_pct;         /* runner vs best, in % */
    int runner_as_fast;               /* equally fast (best needs less memory) */
    cs_plan_alt alts[CS_PLAN_MAX_ALTS]; /* the other kinds, in plan.c's kind table order */
    int nalts;
    cs_plan_rule rule;                /* at CS_PLAN_RULE_SIZES sizes, the training's batch */
} cs_plan;

/* The rule of thumb, as the seed request words it. */
const char *cs_plan_rule_text(void);
/* The i-th of the rule's strategies (i < CS_PLAN_RULE_STRATEGIES). */
cs_strategy cs_plan_rule_strategy(int i);

/* Checks the rule on generic models of shape's sequence length and
 * vocabulary at sizes[0..nsizes) (nsizes <= CS_PLAN_RULE_MAX_SIZES),
 * trained as t on topo, for the rule's strategies: each at t's own
 * micro-batch and checkpointing (b NULL), or at its cs_plan_best
 * configuration under b. Returns 0, or the first failure's code with d
 * filled (a generic model that cannot be made, an evaluation error under
 * b; without b an error is the configuration's note). */
int cs_plan_rule_check(const cs_model *shape, const cs_training *t, const cs_topology *topo,
                       const double *sizes, int nsizes, const cs_plan_batch *b,
                       cs_pricing_cache *cache, cs_plan_rule *out, cs_diag *d);

/* Plans m trained with t on topo into out over the space sp (NULL: the
 * defaults of cs_plan_space: everything searched); the configurations are
 * listed in strategy order, then TP degree, PP degree, pipeline (schedule
 * row, V), checkpointing policy, micro-batch. The recommendation and its
 * runner-up (the fastest of another strategy, at any layout) carry their
 * layout. A configuration that does not apply (a hybrid group that does
 * not divide the ranks, ...) is listed with its reason, not an error. Returns 0, or the first failure's code
 * with d filled (a generic model of the rule's sizes cannot be made);
 * either way free out with cs_plan_free. */
int cs_plan_run(const cs_model *m, const cs_training *t, const cs_topology *topo,
                const cs_plan_space *sp, cs_plan *out, cs_diag *d);
void cs_plan_free(cs_plan *p);

#endif
