/* SPDX-License-Identifier: MIT */
/*
 * strategy_zero.c - the ZeRO family's row: zero1, as torch.distributed.
 * optim.ZeroRedundancyOptimizer over DDP runs it.
 *
 * Model (Rajbhandari et al. 2020, "ZeRO", SC20, arXiv:1910.02054, Sec 5.1;
 * DeepSpeed stage 1): optimizer states are sharded over the world (P_os:
 * 4 Psi + 12 Psi / N); gradients are reduce-scattered in DDP's buckets in
 * the last micro-batch (strategy_ddp.c), each rank's optimizer updates its
 * shard, then the updated parameters are all-gathered, one bucket_cap at a
 * time. Memory beyond the model states is DDP's: its bucket buffers.
 */
#include <math.h>

#include "train/strategy.h"
#include "train/wbuild.h"

/* Updated parameter shards gathered back, bucket by bucket. */
static void gather_params(cs_wbuild *b, int opt)
{
    if (b->topo->ranks <= 1) return;
    const cs_training *t = b->t;
    double total = b->m->params * (double)cs_dtype_size(t->param_dtype), cap = t->bucket_cap_bytes;
    int k = 0;
    for (double left = total; left > 0; left -= cap, k++) {
        char what[24];
        cs__wb_name(b, what, sizeof what, "params", k);
        int a = cs__wb_collective(b, CS_STREAM_COMM, -1, -1, CS_OP_ALL_GATHER, fmin(cap, left),
                                  t->param_dtype, CS_GROUP_WORLD, what);
        cs__wb_dep(b, a, opt, 0);
    }
}

const cs_strategy_row cs__strategy_zero1 = {
    .knobs = CS_KNOBS_BUCKETS,
    .shards_optimizer = 1,
    .grad_op = CS_OP_REDUCE_SCATTER,
    .memory_terms = cs__ddp_bucket_memory,
    .backward_unit = cs__ddp_backward_unit,
    .post_backward = cs__ddp_reduce_buckets,
    .after_step = gather_params,
};
