/* SPDX-License-Identifier: MIT */
/*
 * training.c - training settings (strategy, precision, optimizer, batch,
 * DDP buckets, FSDP knobs, efficiency and overhead parameters), their
 * defaults, the optimizer's names and state size, the activation modes.
 *
 * Knob names are PyTorch's (torch.nn.parallel.DistributedDataParallel,
 * torch.distributed.fsdp.FullyShardedDataParallel / BackwardPrefetch,
 * torch.optim). Every default below is either PyTorch's own default
 * (named), a cited measurement, or a documented configuration value meant
 * to be calibrated; configs/scenarios/README.md lists them for users. The
 * strategies' names and behaviour are the strategy table's (strategy.c);
 * the YAML loader is scenario.c. No global mutable state.
 */
#include "train/training.h"

#include <string.h>

#include "train/strategy.h"

#define MiB (1024.0 * 1024.0)

const char *const cs_optimizer_names[CS_OPT_COUNT + 1] = {
    [CS_OPT_ADAM] = "adam",
    [CS_OPT_ADAMW] = "adamw",
    [CS_OPT_SGD_MOMENTUM] = "sgd_momentum",
    [CS_OPT_SGD] = "sgd",
    NULL,
};

const char *const cs_mixed_precision_names[CS_MP_COUNT + 1] = {
    [CS_MP_AMP] = "amp", [CS_MP_FSDP_PARAM_DTYPE] = "fsdp_param_dtype", [CS_MP_PURE] = "pure",
    NULL};

const char *const cs_comm_hook_names[CS_HOOK_COUNT + 1] = {
    [CS_HOOK_NONE] = "none", [CS_HOOK_BF16_COMPRESS] = "bf16_compress",
    [CS_HOOK_FP16_COMPRESS] = "fp16_compress", NULL};

const char *const cs_optimizer_impl_names[CS_OPTIMPL_COUNT + 1] = {
    [CS_OPTIMPL_FOREACH] = "foreach", [CS_OPTIMPL_FUSED] = "fused", NULL};

const char *const cs_attn_kernel_names[CS_ATTN_COUNT + 1] = {
    [CS_ATTN_FLASH2] = "flash2", [CS_ATTN_FLASH1] = "flash1", NULL};

const char *const cs_ckpt_names[CS_CKPT_COUNT + 1] = {
    [CS_CKPT_NONE] = "none", [CS_CKPT_SELECTIVE] = "selective", [CS_CKPT_FULL] = "full", NULL};

const char *cs_ckpt_name(cs_ckpt c)
{
    CS_ASSERT(c >= 0 && c < CS_CKPT_COUNT);
    return cs_ckpt_names[c];
}

const char *cs_optimizer_name(cs_optimizer o)
{
    CS_ASSERT(o >= 0 && o < CS_OPT_COUNT);
    return cs_optimizer_names[o];
}

int cs_optimizer_parse(const char *s, cs_optimizer *out)
{
    for (int i = 0; i < CS_OPT_COUNT; i++)
        if (!strcmp(s, cs_optimizer_names[i])) {
            *out = (cs_optimizer)i;
            return 0;
        }
    return CS_EINVAL;
}

void cs_training_defaults(cs_training *t, cs_strategy s)
{
    CS_ASSERT(s >= 0 && s < CS_STRAT_COUNT);
    memset(t, 0, sizeof *t);
    t->strategy = s;
    /* Mixed precision as PyTorch users run each strategy (the row's
     * default): DDP under torch.autocast(dtype=bfloat16), FSDP with
     * MixedPrecision(param_dtype=bfloat16) over fp32 shards (ZeRO Sec 3.1's
     * 16-bit compute copy, fp32 master and Adam states). */
    t->mixed_precision = cs_strategy_row_of(s)->autocast ? CS_MP_AMP : CS_MP_FSDP_PARAM_DTYPE;
    t->param_dtype = CS_DTYPE_BF16;
    t->grad_reduce_dtype = CS_DTYPE_BF16;
    t->master_weights_fp32 = 1;
    t->ddp_comm_hook = CS_HOOK_NONE;
    cs_training_resolve_precision(t);
    t->optimizer = CS_OPT_ADAMW;
    /* torch.optim picks foreach when every tensor is on CUDA and never
     * fused by default (torch/optim/optimizer.py _default_to_fused_or_foreach) */
    t->optimizer_impl = CS_OPTIMPL_FOREACH;
    t->micro_batch = 1;
    t->grad_accum = 1;
    t->checkpointing = CS_CKPT_NONE;
    /* PyTorch >= 2.0 scaled_dot_product_attention dispatches bf16/fp16
     * attention to FlashAttention (Dao et al. 2022) or memory-efficient
     * kernels, which never materialise the s x s score matrix */
    t->flash_attention = 1;
    /* PyTorch's SDPA flash backend is FlashAttention-2 (aten/src/ATen/
     * native/transformers/cuda/flash_attn/, vendored from Dao-AILab
     * flash-attention v2 since torch 2.2) */
    t->attention_kernel = CS_ATTN_FLASH2;
    /* torch DDP: bucket_cap_mb=25 and dist._DEFAULT_FIRST_BUCKET_BYTES =
     * 1 MiB (torch/nn/parallel/distributed.py); gradient_as_bucket_view
     * defaults to False. */
    t->bucket_cap_bytes = 25.0 * MiB;
    t->first_bucket_bytes = 1.0 * MiB;
    t->gradient_as_bucket_view = 0;
    /* FSDP: hybrid group = one node; backward_prefetch=BACKWARD_PRE and
     * forward_prefetch=False are FullyShardedDataParallel's defaults; its
     * rate limiter (limit_all_gathers=True) lets two all-gathers run ahead
     * (torch/distributed/fsdp/_limiter_utils.py, _FreeEventQueue.
     * _max_num_inflight_all_gathers = 2). */
    t->shard_group = 0;
    t->backward_prefetch = CS_PREFETCH_PRE;
    t->forward_prefetch = 0;
    t->limit_all_gathers = 2;
    t->reshard_after_forward = -1;
    /* FSDP2 (torch.distributed.fsdp.fully_shard) is what PyTorch's FSDP
     * documentation recommends for new code; FSDP1 remains in
     * torch.distributed.fsdp.FullyShardedDataParallel. One unit per
     * transformer block is what transformer_auto_wrap_policy gives (and
     * the FSDP2 recipe of torchtitan: fully_shard per block, then the
     * root). The hooks' CPU time: cs_training_fsdp_hook_cpu_s. */
    t->fsdp_version = 2;
    t->fsdp_unit_layers = 1;
    t->fsdp_hook_cpu_s = -1.0;
    /* No tensor parallelism; with it, sequence parallelism on (what
     * torchtitan's parallelize applies: SequenceParallel on the norms) and
     * the collectives not overlapped (both projects' default). */
    t->tensor_parallel = 1;
    t->pipeline_parallel = 1;
    t->virtual_stages = 1;
    t->pipeline_schedule = -1;
    t->sequence_parallel = -1;
    t->async_tp = 0;
    /* 0: every kernel at the efficiency the compute model gives its shape
     * on the cluster's GPU (compute.h, gpu.compute in the cluster YAML).
     * A value in (0, 1] is the scalar override: every GEMM and attention
     * kernel at that fraction of peak. */
    t->compute_efficiency = 0.0;
    /* Overlap: unset (-1), compute loses the SMs the running collectives'
     * CTAs hold (NCCL: one CTA per channel, src/enqueue.cc
     * ncclLaunchKernel), iteration.c; a value >= 0 (the scenario's or a
     * fit's) slows compute and communication both by that factor instead. */
    t->comm_compute_slowdown = -1.0;
    /* CUDA context and the kernels loaded with PyTorch: an approximate
     * figure of several hundred MiB per GPU as reported by nvidia-smi for
     * an idle PyTorch process on H100 with CUDA 12 (lazy module loading
     * on). A configuration value, not a constant of nature: measure with
     * nvidia-smi on the target machine. */
    t->cuda_context_bytes = 512.0 * MiB;
    /* Derived from the cluster's channels (memory.c). */
    t->nccl_buffer_bytes = -1.0;
    /* Caching-allocator waste as a fraction of what PyTorch allocates
     * (torch.cuda.memory_reserved vs memory_allocated). An assumed
     * typical value, configurable; no published constant. */
    t->fragmentation = -1; /* unset: the allocator replay decides (memory.c) */
    t->optimizer_in_backward = 0;
    t->activation_offloading = 0;
    t->hold_logits = 0;
    /* Collectives priced by the closed form; `des` runs each distinct one
     * through the discrete-event engine instead (slower, same choice of
     * algorithm and protocol). */
    t->collective_engine = CS_ENGINE_ANALYTIC;
}

/* CPU time of FSDP's hooks per transformer block per pass (a unit of k
 * blocks costs k times this; the root unit counts as one block): most of
 * it is per-parameter Python work (views set up and torn down, per-tensor
 * copy metadata), so it grows with the parameters a unit holds.
 * FSDP2: 1 ms, pytorch/pytorch#173680 (torch 2.10, "a standard
 * over-provisioned Xeon"): FSDP::pre_forward calls of about 1 ms each in
 * the reporter's profile, 50% of the step of a model whose GPU work per
 * unit was shorter. Only pre_forward was measured; the other hooks of the
 * pass (post_forward's reshard; pre_backward's unshard and
 * post_backward's foreach_reduce) are not added on top, so the figure
 * stands for the pass.
 * FSDP1: 0.25 ms, from pytorch/pytorch#96958 ("[FSDP] Reduce CPU
 * overhead", 400 nn.Parameters in one instance, world size 2, after the
 * PR): _use_unsharded_views 4.27 ms + _writeback_orig_params 1.07 ms +
 * _use_sharded_views 2.7-2.8 ms per unshard/reshard cycle, ~20 us per
 * parameter tensor, times the 12 tensors of a transformer block with
 * biases (norms, QKV, output projection, two MLP matrices). Both are a
 * CPU of one machine: set fsdp_hook_cpu_ms from a profile of the target,
 * or the cluster's gpu.compute.fsdp1_hook_cpu / fsdp2_hook_cpu (what
 * `collsim calibrate --training-runs` writes where the runs determine it). */
double cs_training_fsdp_hook_cpu_s(const cs_training *t, const cs_cluster *c)
{
    if (t->fsdp_hook_cpu_s >= 0) return t->fsdp_hook_cpu_s;
    double of_cluster = !c                  ? -1
                        : t->fsdp_version == 1 ? c->gpu.compute.fsdp1_hook_cpu_s
                                               : c->gpu.compute.fsdp2_hook_cpu_s;
    if (of_cluster >= 0) return of_cluster;
    return t->fsdp_version == 1 ? 0.25e-3 : 1.0e-3;
}

/* The scenario's value first (the job's own setting), then the cluster's
 * (a property of the GPU's software stack: NCCL's kernels and the
 * compute kernels sharing SMs and HBM, measured or fitted on that
 * machine). */
double cs_training_comm_compute_slowdown(const cs_training *t, const cs_cluster *c)
{
    if (t->comm_compute_slowdown >= 0) return t->comm_compute_slowdown;
    return c && c->gpu.compute.comm_compute_slowdown >= 0 ? c->gpu.compute.comm_compute_slowdown
                                                          : -1.0;
}

/* amp (torch.autocast, torch/amp/autocast_mode.py): the module keeps its
 * fp32 parameters, so autograd produces fp32 .grad (the gradient of a
 * cast is cast back: ToCopyBackward) and DDP's buckets are fp32
 * (reducer.cpp initialize_bucket_views: the buckets take the parameters'
 * dtype); torch.optim updates the fp32 parameters in place: no master
 * copy. pure: one dtype, no master. fsdp_param_dtype: the fp32 shards are
 * the master when param_dtype is narrower. */
cs_dtype cs_training_stored_dtype(const cs_training *t)
{
    return t->mixed_precision == CS_MP_AMP ? CS_DTYPE_FP32 : t->param_dtype;
}

int cs_training_master_copy(const cs_training *t)
{
    return t->mixed_precision == CS_MP_FSDP_PARAM_DTYPE && t->master_weights_fp32 &&
           cs_dtype_size(t->param_dtype) < 4;
}

static const cs_dtype hook_dtype[CS_HOOK_COUNT] = {
    [CS_HOOK_NONE] = CS_DTYPE_COUNT, /* none: the buckets' own */
    [CS_HOOK_BF16_COMPRESS] = CS_DTYPE_BF16,
    [CS_HOOK_FP16_COMPRESS] = CS_DTYPE_FP16,
};

cs_dtype cs_training_bucket_wire_dtype(const cs_training *t)
{
    if (t->ddp_comm_hook != CS_HOOK_NONE) return hook_dtype[t->ddp_comm_hook];
    return t->grad_reduce_dtype;
}

/* aten/src/ATen/autocast_mode.cpp cached_cast: a leaf fp32 tensor that
 * requires grad (a weight) is cast once per autocast region and the copy
 * cached until the region exits, so each weight is read (4 B) and written
 * in the autocast dtype once per forward; the copy is saved for backward
 * by the matmuls that use it. */
double cs_training_autocast_cast_bytes_per_param(const cs_training *t)
{
    int ps = cs_dtype_size(t->param_dtype);
    if (t->mixed_precision != CS_MP_AMP || ps >= 4) return 0;
    return 4.0 + ps;
}

void cs_training_resolve_precision(cs_training *t)
{
    switch (t->mixed_precision) {
    case CS_MP_AMP:
        t->master_weights_fp32 = 1; /* the fp32 parameters themselves */
        t->grad_reduce_dtype = CS_DTYPE_FP32;
        break;
    case CS_MP_PURE:
        t->master_weights_fp32 = 0;
        t->grad_reduce_dtype = t->param_dtype;
        break;
    default:
        break;
    }
}

void cs_training_set_strategy(cs_training *t, cs_strategy s)
{
    int autocast = cs_strategy_row_of(s)->autocast;
    t->strategy = s;
    if (autocast && t->mixed_precision == CS_MP_FSDP_PARAM_DTYPE) {
        t->mixed_precision = CS_MP_AMP;
    } else if (!autocast && t->mixed_precision == CS_MP_AMP) {
        t->mixed_precision = CS_MP_FSDP_PARAM_DTYPE;
        t->grad_reduce_dtype = t->param_dtype; /* MixedPrecision's reduce_dtype default */
        t->master_weights_fp32 = 1;
    }
    if (!autocast) t->ddp_comm_hook = CS_HOOK_NONE;
    cs_training_resolve_precision(t);
}

double cs_training_optimizer_bytes_per_param(const cs_training *t)
{
    int ps = cs_dtype_size(cs_training_stored_dtype(t));
    int master = cs_training_master_copy(t);
    /* States live in the dtype of what the optimizer updates. */
    double state = master ? 4.0 : (double)ps;
    double master_bytes = master ? 4.0 : 0.0;
    switch (t->optimizer) {
    case CS_OPT_ADAM:
    case CS_OPT_ADAMW:
        return master_bytes + 2.0 * state; /* exp_avg, exp_avg_sq */
    case CS_OPT_SGD_MOMENTUM:
        return master_bytes + state; /* momentum_buffer */
    case CS_OPT_SGD:
        return master_bytes;
    default:
        CS_PANIC("unknown optimizer %d", (int)t->optimizer);
    }
}

const char *cs_training_note(const cs_training *t)
{
    /* Korthikanti et al. 2022 Sec 4.2: selective recompute drops the
     * attention core's s x s activations (softmax output, dropout mask);
     * a fused kernel never stores them, so there is nothing to drop or
     * recompute (memory and time as without checkpointing) */
    if (t->checkpointing == CS_CKPT_SELECTIVE && t->selective_ac == 0 && t->flash_attention)
        return "selective recompute with fused attention recomputes nothing: the fused kernel "
               "stores no s x s scores, which is all selective recompute drops (memory and "
               "time as with none)";
    return NULL;
}

/* Tensor accesses (reads + writes) per updated element, by optimizer and
 * implementation. foreach follows torch/optim/adam.py _multi_tensor_adam
 * (AdamW: decoupled weight decay), one multi-tensor kernel per line:
 *   _foreach_mul_(params, 1 - lr wd)           2  (AdamW only)
 *   _foreach_lerp_(exp_avgs, grads, 1 - b1)    3
 *   _foreach_mul_(exp_avg_sqs, b2)             2
 *   _foreach_addcmul_(exp_avg_sqs, g, g, 1-b2) 4
 *   _foreach_sqrt(exp_avg_sqs) -> denom        2
 *   _foreach_div_(denom, bias_correction2)     2
 *   _foreach_add_(denom, eps)                  2
 *   _foreach_addcdiv_(params, exp_avgs, denom) 4
 * fused (_fused_adam: one kernel) reads param, grad, m, v and writes
 * param, m, v: 7. SGD with momentum (torch/optim/sgd.py
 * _multi_tensor_sgd): mul_ + add_ on the buffer, add_ on the params = 8;
 * fused 5. Plain SGD: one add_, 3 either way. */
static const int optimizer_accesses[CS_OPT_COUNT][CS_OPTIMPL_COUNT] = {
    [CS_OPT_ADAM] = {19, 7},
    [CS_OPT_ADAMW] = {21, 7},
    [CS_OPT_SGD_MOMENTUM] = {8, 5},
    [CS_OPT_SGD] = {3, 3},
};

double cs_training_optimizer_traffic_per_param(const cs_training *t)
{
    int ps = cs_dtype_size(cs_training_stored_dtype(t));
    int master = cs_training_master_copy(t);
    double updated = master ? 4.0 : (double)ps; /* what the optimizer's tensors hold */
    /* with a master copy: read it and write the low-precision parameters */
    return optimizer_accesses[t->optimizer][t->optimizer_impl] * updated + (master ? 4.0 + ps : 0);
}

cs_ckpt cs_training_running_activations(const cs_training *t)
{
    return t->flash_attention ? CS_CKPT_SELECTIVE : CS_CKPT_NONE;
}

cs_ckpt cs_training_kept_activations(const cs_training *t)
{
    if (t->checkpointing == CS_CKPT_NONE) return cs_training_running_activations(t);
    return t->checkpointing;
}

double cs_training_flat_fragmentation(const cs_training *t)
{
    return t->fragmentation >= 0 ? t->fragmentation : CS_TRAINING_FLAT_FRAGMENTATION;
}
