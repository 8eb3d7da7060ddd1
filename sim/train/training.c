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

#define MiB (1024.0 * 1024.0)

const char *const cs_optimizer_names[CS_OPT_COUNT + 1] = {
    [CS_OPT_ADAM] = "adam",
    [CS_OPT_ADAMW] = "adamw",
    [CS_OPT_SGD_MOMENTUM] = "sgd_momentum",
    [CS_OPT_SGD] = "sgd",
    NULL,
};

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
    /* Mixed precision as in ZeRO Sec 3.1 and torch.amp / FSDP
     * MixedPrecision(param_dtype=bfloat16): 16-bit compute copy, fp32
     * master weights and Adam states. */
    t->param_dtype = CS_DTYPE_BF16;
    t->grad_reduce_dtype = CS_DTYPE_BF16;
    t->master_weights_fp32 = 1;
    t->optimizer = CS_OPT_ADAMW;
    t->micro_batch = 1;
    t->grad_accum = 1;
    t->checkpointing = CS_CKPT_NONE;
    /* PyTorch >= 2.0 scaled_dot_product_attention dispatches bf16/fp16
     * attention to FlashAttention (Dao et al. 2022) or memory-efficient
     * kernels, which never materialise the s x s score matrix */
    t->flash_attention = 1;
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
    /* Achieved / peak FLOP/s for GEMM-heavy work: Korthikanti et al. 2022
     * (arXiv:2205.05198) Table 5 measure 41.5-56.3% model FLOPs
     * utilisation for 22B-1T GPT models on A100 (validation data:
     * korthikanti_measured.csv); 0.5 sits in that range. Calibrate per
     * cluster. */
    t->compute_efficiency = 0.5;
    /* Slowdown of compute and communication while they overlap (NCCL
     * kernels take SMs and memory bandwidth from GEMMs). A calibration
     * parameter: 0 until fitted to measurements of the cluster. */
    t->comm_compute_slowdown = 0.0;
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
    t->fragmentation = 0.05;
    /* Collectives priced by the closed form; `des` runs each distinct one
     * through the discrete-event engine instead (slower, same choice of
     * algorithm and protocol). */
    t->collective_engine = CS_ENGINE_ANALYTIC;
}

double cs_training_optimizer_bytes_per_param(const cs_training *t)
{
    int ps = cs_dtype_size(t->param_dtype);
    int master = t->master_weights_fp32 && ps < 4;
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

cs_ckpt cs_training_running_activations(const cs_training *t)
{
    return t->flash_attention ? CS_CKPT_SELECTIVE : CS_CKPT_NONE;
}

cs_ckpt cs_training_kept_activations(const cs_training *t)
{
    if (t->checkpointing == CS_CKPT_NONE) return cs_training_running_activations(t);
    return t->checkpointing;
}
