/* SPDX-License-Identifier: MIT */
/*
 * strategy_zero.c - the ZeRO family's rows: zero1, as torch.distributed.
 * optim.ZeroRedundancyOptimizer over DDP runs it, and deepspeed_zero1,
 * DeepSpeed's stage 1.
 *
 * Model (torch/distributed/optim/zero_redundancy_optimizer.py): the
 * optimizer states are partitioned over the ranks (Rajbhandari et al.
 * 2020 Sec 5.1's P_os: 4 Psi + 12 Psi / N with mixed-precision Adam), but
 * the gradients are DDP's: the whole gradient is all-reduced in DDP's
 * buckets in the last micro-batch (strategy_ddp.c; ZeRO leaves DDP
 * untouched unless overlap_with_ddp). step() updates this rank's
 * partition, then _sync_params calls _broadcast_params_from_rank(rank)
 * for every rank: one broadcast per rank of that rank's updated
 * parameters, from it to all (per parameter, or per bucket with
 * parameters_as_bucket_view). So zero1 moves the all-reduce's 2 Psi plus
 * a broadcast of Psi, not DeepSpeed stage 1's reduce-scatter + all-gather
 * (2 Psi in all). Departure: each rank's partition is one broadcast of
 * Psi / N parameters (torch balances the partitions by size; its default
 * broadcasts each parameter separately, which adds per-call latency).
 *
 * deepspeed_zero1 (Rajbhandari et al. Sec 5.1; DeepSpeed's
 * deepspeed/runtime/zero/stage_1_and_2.py): 16-bit parameters and
 * gradients with the fp32 master partitioned alongside the states
 * (mixed_precision fsdp_param_dtype's accounting: 4 Psi + 12 Psi / N, the
 * paper's P_os); gradients reduce-scattered bucket by bucket in the last
 * micro-batch, each rank updates its partition, the updated 16-bit
 * parameters all-gathered one bucket_cap at a time (2 Psi in all).
 * Departure: DeepSpeed's own buckets (reduce_bucket_size,
 * allgather_bucket_size) are DDP's bucket_cap_mb here, and its IPG buffer
 * is not counted.
 */
#include <math.h>

#include "train/strategy.h"
#include "train/wbuild.h"

/* DeepSpeed: the updated shards gathered back, bucket by bucket. */
static void gather_params(cs_wbuild *b, int opt)
{
    if (b->topo->ranks <= 1) return;
    const cs_training *t = b->t;
    cs_dtype dt = cs_training_stored_dtype(t);
    double total = b->m->params * (double)cs_dtype_size(dt), cap = t->bucket_cap_bytes;
    /* more than CS_WB_RUN_MAX (run_max) whole buckets are one task with a count
     * (cs_task.count), then what is left: the graph does not grow with
     * the model's size */
    double n = cs__wb_whole(total, cap);
    if (n > b->run_max) {
        char what[40];
        cs__wb_name_range(b, what, sizeof what, "params", 0, n - 1);
        int a = cs__wb_collective(b, CS_STREAM_COMM, -1, -1, CS_OP_ALL_GATHER, cap, dt,
                                  b->shard, what);
        cs__wb_repeat(b, a, n);
        cs__wb_dep(b, a, opt, 0);
        total -= n * cap;
    }
    double k = n > b->run_max ? n : 0; /* the next bucket's number */
    for (double left = total; left > 0; left -= cap, k++) {
        char what[40];
        cs__wb_name_range(b, what, sizeof what, "params", k, k);
        int a = cs__wb_collective(b, CS_STREAM_COMM, -1, -1, CS_OP_ALL_GATHER, fmin(cap, left),
                                  dt, b->shard, what);
        cs__wb_dep(b, a, opt, 0);
    }
}

/* Each rank's updated partition broadcast from it, rank after rank. */
static void broadcast_params(cs_wbuild *b, int opt)
{
    int n = b->topo->ranks;
    if (n <= 1) return;
    const cs_training *t = b->t;
    double part = b->m->params * (double)cs_dtype_size(cs_training_stored_dtype(t)) / n;
    for (int r = 0; r < n; r++) {
        char what[24];
        cs__wb_name(b, what, sizeof what, "params from rank", r);
        int a = cs__wb_collective(b, CS_STREAM_COMM, -1, -1, CS_OP_BROADCAST, part,
                                  cs_training_stored_dtype(t), b->shard, what);
        cs__wb_dep(b, a, opt, 0);
    }
}

const cs_strategy_row cs__strategy_zero1 = {
    .aliases = CS_STRATEGY_NO_ALIASES, /* its name is DeepSpeed's zero1 (`--zero 1`) */
    .color = "#56B4E9",                /* sky blue */
    .knobs = CS_KNOBS_BUCKETS,
    .autocast = 1,
    .shards_optimizer = 1,
    .grad_op = CS_OP_ALL_REDUCE,
    .accumulates_grads = 1, /* DDP's no_sync underneath, as ddp's row */
    .memory_terms = cs__ddp_bucket_memory,
    .backward_unit = cs__ddp_backward_unit,
    .post_backward = cs__ddp_reduce_buckets,
    .after_step = broadcast_params,
};

/* Yellow: the palette's last colour but black, which the plots keep for
 * the crossings and the memory capacity. */
const cs_strategy_row cs__strategy_deepspeed_zero1 = {
    .aliases = CS_STRATEGY_NO_ALIASES,
    .color = "#F0E442", /* yellow */
    .knobs = CS_KNOB_BIT(CS_KNOB_BUCKET_CAP) | CS_KNOB_BIT(CS_KNOB_FIRST_BUCKET),
    .shards_optimizer = 1,
    .grad_op = CS_OP_REDUCE_SCATTER,
    .backward_unit = cs__ddp_backward_unit,
    .post_backward = cs__ddp_reduce_buckets,
    .after_step = gather_params,
};
