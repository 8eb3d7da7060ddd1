/* SPDX-License-Identifier: MIT */
/*
 * training.h - how a model is trained: data-parallel strategy (PyTorch's
 * names), precision, optimizer, batch, activation checkpointing, DDP
 * buckets and FSDP settings, and the efficiency / overhead parameters of
 * the compute and memory models. cs_training is a value type; every
 * default is documented (and cited) in training.c and
 * configs/scenarios/README.md. What a strategy does (its knobs, sharding,
 * process groups, graph and memory terms) is its row in the strategy table
 * (strategy.h); the scenario YAML that fills a cs_training is scenario.h.
 */
#ifndef CS_TRAINING_H
#define CS_TRAINING_H

#include "coll/collective.h"
#include "base/dtype.h"
#include "base/error.h"
#include "train/model.h"

/* The strategies, in table order (the order of every listing): X(ID, name)
 * gives CS_STRAT_<ID> and the name users type. Each name has a row,
 * cs__strategy_<name>, in one of the strategy_*.c files (strategy.h). */
#define CS_STRATEGIES(X)                                                                   \
    X(DDP, ddp)                                                                            \
    X(ZERO1, zero1)                                                                        \
    X(DEEPSPEED_ZERO1, deepspeed_zero1)                                                    \
    X(FSDP_NO_SHARD, fsdp_no_shard)                                                        \
    X(FSDP_SHARD_GRAD_OP, fsdp_shard_grad_op)                                              \
    X(FSDP_FULL_SHARD, fsdp_full_shard)                                                    \
    X(FSDP_HYBRID_SHARD, fsdp_hybrid_shard)

typedef enum cs_strategy {
#define CS__STRAT_ID(id, name) CS_STRAT_##id,
    CS_STRATEGIES(CS__STRAT_ID)
#undef CS__STRAT_ID
    CS_STRAT_COUNT
} cs_strategy;

typedef enum cs_optimizer { CS_OPT_ADAM, CS_OPT_ADAMW, CS_OPT_SGD_MOMENTUM, CS_OPT_SGD, CS_OPT_COUNT } cs_optimizer;
typedef enum cs_prefetch { CS_PREFETCH_NONE, CS_PREFETCH_PRE, CS_PREFETCH_POST } cs_prefetch;
/* How torch.optim runs the step: the multi-tensor `foreach` kernels
 * (torch's default on CUDA) or the single `fused` kernel. */
typedef enum cs_optimizer_impl { CS_OPTIMPL_FOREACH, CS_OPTIMPL_FUSED, CS_OPTIMPL_COUNT } cs_optimizer_impl;
/* How the model holds precision (PyTorch's three ways; training.c):
 * amp: torch.autocast over fp32 parameters (fp32 gradients, buckets and
 * optimizer; weights cast to param_dtype once per forward); fsdp_param_dtype:
 * FSDP's MixedPrecision(param_dtype, reduce_dtype) over fp32 shards (the
 * shards are the master copy); pure: model.to(param_dtype), everything in
 * it, no master copy. */
typedef enum cs_mixed_precision {
    CS_MP_AMP,
    CS_MP_FSDP_PARAM_DTYPE,
    CS_MP_PURE,
    CS_MP_COUNT
} cs_mixed_precision;
/* DDP's communication hook (torch/distributed/algorithms/ddp_comm_hooks/
 * default_hooks.py): none (allreduce_hook: the buckets as they are), or a
 * cast of each bucket to bf16 / fp16 before its all-reduce and back after. */
typedef enum cs_comm_hook {
    CS_HOOK_NONE,
    CS_HOOK_BF16_COMPRESS,
    CS_HOOK_FP16_COMPRESS,
    CS_HOOK_COUNT
} cs_comm_hook;
/* The fused attention kernel (its speed: the GPU's gpu.compute curves). */
typedef enum cs_attn_kernel { CS_ATTN_FLASH2, CS_ATTN_FLASH1, CS_ATTN_COUNT } cs_attn_kernel;

typedef struct cs_training {
    cs_strategy strategy;
    /* precision */
    cs_mixed_precision mixed_precision; /* default: the strategy row's */
    cs_dtype param_dtype;       /* parameters as used in compute (amp: the
                                 * autocast dtype) */
    cs_dtype grad_reduce_dtype; /* gradients on the wire (amp: fp32 unless
                                 * ddp_comm_hook casts them) */
    int master_weights_fp32;    /* fsdp_param_dtype: the fp32 shards kept (off:
                                 * a pure model); amp keeps none: the optimizer
                                 * updates the fp32 parameters */
    cs_comm_hook ddp_comm_hook; /* DDP's register_comm_hook; default none */
    cs_optimizer optimizer;
    cs_optimizer_impl optimizer_impl; /* default foreach */
    int optimizer_in_backward;  /* each parameter stepped, its gradient freed, as
                                 * backward makes it (torchtune optimizer_in_bwd:
                                 * register_post_accumulate_grad_hook); needs
                                 * grad_accum 1; default 0 */
    int hold_logits;            /* the training loop keeps the (upcast) logits
                                 * through backward, until the next step's
                                 * forward replaces them (torchtitan train.py of
                                 * 2024-03: `pred = model(input_ids)`, no del;
                                 * loss.c); default 0: dropped once the loss is
                                 * computed (torchtune's `del logits`) */
    int activation_offloading;  /* saved activations moved to the host after each
                                 * block's forward and fetched back for its
                                 * backward (torchtune enable_activation_offloading:
                                 * OffloadActivations); default 0 */
    /* batch */
    int micro_batch;            /* sequences per rank per micro-step */
    int grad_accum;             /* micro-steps per optimizer step */
    cs_ckpt checkpointing;
    int selective_ac;           /* under checkpointing selective: 0 attention
                                 * (Megatron's, default), -1 op (torchtitan's
                                 * per-op policy), N >= 1 every N-th block
                                 * (checkpoint.h) */
    int flash_attention;        /* fused attention (FlashAttention / PyTorch SDPA):
                                 * the s x s scores are never stored, so activation
                                 * memory is Korthikanti's selective-recompute
                                 * figure; default 1 */
    cs_attn_kernel attention_kernel; /* which fused kernel; default FlashAttention-2 */
    int compile;                /* torch.compile (Inductor): each chain of pointwise
                                 * ops and reductions between two GEMMs or attention
                                 * kernels runs as one kernel (compute_rows.c); 0: eager */
    int loss_impl;              /* the loss kernel, a cs_loss_impl (loss.h): naive
                                 * (0, the default), fused or chunked */
    int train_metrics;          /* cross-entropy passes the trainer runs over each
                                 * micro-batch's logits without grad, after its
                                 * backward (Composer's train metrics: loss.h);
                                 * default 0 */
    /* DDP */
    double bucket_cap_bytes;    /* 25 MiB (torch DDP bucket_cap_mb) */
    double first_bucket_bytes;  /* 1 MiB (torch dist._DEFAULT_FIRST_BUCKET_BYTES) */
    int gradient_as_bucket_view; /* torch DDP flag, default 0: buckets are a
                                    second copy of the gradients */
    /* FSDP */
    int shard_group;            /* hybrid_shard group size; 0 = one node */
    cs_prefetch backward_prefetch; /* default BACKWARD_PRE */
    int forward_prefetch;       /* default off */
    int limit_all_gathers;      /* all-gathers in flight; default 2 */
    int reshard_after_forward;  /* -1 = strategy default */
    int fsdp_version;           /* 1: FullyShardedDataParallel (flat parameters);
                                 * 2 (default): fully_shard (per-parameter DTensors) */
    int fsdp_unit_layers;       /* transformer blocks per FSDP unit (auto_wrap_policy):
                                 * default 1; 0 = the whole model one unit */
    double fsdp_hook_cpu_s;     /* CPU time of FSDP's hooks per unit per pass
                                 * (forward: pre/post-forward; backward:
                                 * pre/post-backward); < 0 = the version's default
                                 * (cs_training_fsdp_hook_cpu_s) */
    /* tensor parallelism (train/tensor.h: Megatron-LM's column / row
     * split, Korthikanti et al. 2022's sequence parallelism) */
    int tensor_parallel;        /* T, the tp dimension of the mesh; default 1 */
    int sequence_parallel;      /* 1 / 0, or -1 (default): on when T > 1
                                 * (cs_tensor_sequence_parallel) */
    int async_tp;               /* torch's micro-pipelined TP / Megatron's
                                 * --tp-comm-overlap; default 0 */
    /* pipeline parallelism (train/pipeline.h): the pp dimension of the
     * mesh, outermost; grad_accum is then the pipeline's micro-batches */
    int pipeline_parallel;      /* P; default 1 */
    int virtual_stages;         /* V model chunks per stage (interleaving); default 1 */
    int pipeline_schedule;      /* a row of the schedule table (pipeline_sched.h,
                                 * cs_pp_schedule_names), or -1 (default): 1f1b,
                                 * interleaved_1f1b when V > 1 (Megatron's choice) */
    /* compute and overlap model */
    double compute_efficiency;  /* 0: the compute model's per-kernel efficiencies;
                                 * (0, 1]: every GEMM / attention kernel at it */
    double comm_compute_slowdown; /* >= 0: both slowed by this factor while overlapping;
                                   * < 0 (default): compute loses the collectives' SMs */
    /* per-GPU overheads that are not model state */
    double cuda_context_bytes;
    double nccl_buffer_bytes;   /* < 0: derived from the cluster (memory.c) */
    double fragmentation;       /* >= 0: a flat fraction of peak allocated bytes the
                                 * allocator's cache adds, overriding the replay
                                 * (memory.c); < 0 (default): the replay's */
    /* how the iteration's collectives are timed: CS_ENGINE_ANALYTIC
     * (default: NCCL's closed form) or CS_ENGINE_DES (the algorithm NCCL's
     * tuner picks by the closed form, timed by the discrete-event run on
     * the process group's topology); scenario key `collective_engine` */
    cs_engine_kind collective_engine;
} cs_training;

/* "amp", "fsdp_param_dtype", "pure" and "none", "bf16_compress",
 * "fp16_compress", NULL-terminated. */
extern const char *const cs_mixed_precision_names[CS_MP_COUNT + 1];
extern const char *const cs_comm_hook_names[CS_HOOK_COUNT + 1];
/* "foreach", "fused", NULL-terminated. */
extern const char *const cs_optimizer_impl_names[CS_OPTIMPL_COUNT + 1];
/* Fused attention kernel names indexed by cs_attn_kernel ("flash2",
 * "flash1"), NULL-terminated. */
extern const char *const cs_attn_kernel_names[CS_ATTN_COUNT + 1];
/* Activation checkpointing names indexed by cs_ckpt, NULL-terminated. */
extern const char *const cs_ckpt_names[CS_CKPT_COUNT + 1];
const char *cs_ckpt_name(cs_ckpt c); /* "none", "selective", "full" */
const char *cs_optimizer_name(cs_optimizer o);
int cs_optimizer_parse(const char *s, cs_optimizer *out);
/* The optimizer names indexed by cs_optimizer, NULL-terminated. */
extern const char *const cs_optimizer_names[CS_OPT_COUNT + 1];

/* Activation mode for memory: what is kept per layer (flash attention keeps
 * no attention scores: Korthikanti's selective figure) and what a layer
 * holds while it runs (`running`, for recomputation under full
 * checkpointing). */
cs_ckpt cs_training_kept_activations(const cs_training *t);
cs_ckpt cs_training_running_activations(const cs_training *t);

/* What a user should know about these settings, or NULL (static
 * storage): selective recompute with fused attention recomputes nothing. */
const char *cs_training_note(const cs_training *t);

/* The flat fraction where no allocator replay decides (pipeline stages,
 * the executor's own peak): the user's fragmentation, else
 * CS_TRAINING_FLAT_FRAGMENTATION (the assumed typical value of before). */
#define CS_TRAINING_FLAT_FRAGMENTATION 0.05
double cs_training_flat_fragmentation(const cs_training *t);

/* Defaults for a strategy (everything documented in training.c). */
void cs_training_defaults(cs_training *t, cs_strategy s);
/* t under strategy s, the rest kept (sweeps and plans compare strategies
 * on one training): mixed precision moves to its counterpart where s has
 * no such mode: amp <-> fsdp_param_dtype (DDP has no MixedPrecision of its
 * own; FSDP's counterpart of autocast's bf16 compute is param_dtype bf16
 * over fp32 shards, reducing in param_dtype), with the dtypes resolved. */
void cs_training_set_strategy(cs_training *t, cs_strategy s);

/* What the mixed-precision mode makes of the dtypes (training.c):
 * the dtype the resident parameters and their gradients are stored in
 * (amp: fp32; otherwise param_dtype: the fsdp_param_dtype's fp32 shard is
 * counted as the optimizer's master copy, ZeRO's accounting); whether the
 * optimizer holds an fp32 master copy; the dtype DDP's buckets are
 * all-reduced in (the hook's, else the gradients'; fsdp_* reduce in
 * grad_reduce_dtype); and the bytes per parameter autocast's per-forward
 * weight cast reads + writes (0 unless amp with a narrower param_dtype). */
cs_dtype cs_training_stored_dtype(const cs_training *t);
int cs_training_master_copy(const cs_training *t);
cs_dtype cs_training_bucket_wire_dtype(const cs_training *t);
double cs_training_autocast_cast_bytes_per_param(const cs_training *t);
/* Makes the dtypes follow t->mixed_precision: amp sets fp32 gradients on
 * the wire (a hook casts them) and marks the fp32 parameters as the master;
 * pure reduces in param_dtype and keeps no master; fsdp_param_dtype keeps
 * param_dtype, grad_reduce_dtype (FSDP's reduce_dtype) and master_weights
 * as set. Idempotent. */
void cs_training_resolve_precision(cs_training *t);

/* CPU seconds FSDP's hooks take per block per pass: fsdp_hook_cpu_s if
 * set, else the cluster's gpu.compute.fsdp<version>_hook_cpu if set (c
 * may be NULL), else the version's cited default (training.c). */
double cs_training_fsdp_hook_cpu_s(const cs_training *t, const cs_cluster *c);
/* The overlap slowdown in effect: comm_compute_slowdown if set (>= 0),
 * else the cluster's gpu.compute.comm_compute_slowdown (c may be NULL),
 * else < 0 (unset: compute loses the collectives' SMs, iteration.c). */
double cs_training_comm_compute_slowdown(const cs_training *t, const cs_cluster *c);

/* Bytes of optimizer state per parameter (before sharding): Adam with
 * fp32 master weights 12 (master 4 + m 4 + v 4, ZeRO Sec 3.1's K = 12);
 * without master weights 8 (m, v); SGD+momentum 4 (+4 master); SGD 0 (+4).
 * The optimizer's states take the dtype of the tensors it updates (torch
 * optimizers allocate them with zeros_like): fp32 with master weights or
 * under amp, else the parameter dtype (pure bf16 Adam: 2 + 2). A master
 * copy exists only under fsdp_param_dtype with parameters narrower than 4
 * bytes (cs_training_master_copy). */
double cs_training_optimizer_bytes_per_param(const cs_training *t);
/* HBM bytes the optimizer step moves per parameter it updates: every
 * kernel of the implementation's sequence (training.c), plus, with a
 * master copy, writing the low-precision copy. */
double cs_training_optimizer_traffic_per_param(const cs_training *t);

#endif
