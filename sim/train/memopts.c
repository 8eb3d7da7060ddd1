/* SPDX-License-Identifier: MIT */
/*
 * memopts.c - the time of torchtune's two memory options in the
 * iteration graph (memopts.h); their memory is memreplay.c's.
 *
 * Activation offloading (torchtune torchtune/training/_activation_
 * offloading.py: OffloadActivations, a saved_tensors_hooks pair;
 * get_act_offloading_ctx_manager builds it with use_streams=True, the
 * recipes' default, and keeps the output head on the device through a
 * NoOpManager). With streams:
 *   forward   pack_tensor: the side stream s1 waits for the compute
 *             stream (s1.wait_stream(s0)), copies the saved tensor to
 *             pinned host memory and records an event; the device tensor
 *             stays in fwd_stash until a tensor max_fwd_stash_size (5)
 *             saves later, whose pack makes the compute stream wait for
 *             that event (s0.wait_event). Per block: the copy of what the
 *             block saves (checkpoint.c's kept bytes) after its forward,
 *             on the offload stream, freeing those bytes when it ends; the
 *             forward of block l waits for the copy of block
 *             l - 1 - ceil(4 / n), n the tensors a block saves (1 under
 *             whole-block recompute, its input; at least 4 otherwise:
 *             checkpoint.c's kept lists), so that the stash bound is met
 *             by the time the block's first tensor is saved.
 *   backward  unpack_tensor_with_streams: the copy back to the device on
 *             s1, then s0.wait_stream(s1): the backward that needs it
 *             waits; the node's hook records an event on s0 and makes s1
 *             wait for the previous node's event before the next copy is
 *             issued. Per block: the fetch of block l on the offload
 *             stream after the backward of block l + 2 (so it overlaps
 *             block l + 1's), allocating the bytes when it starts; block
 *             l's backward waits for it.
 * The copies run at the GPU's host link rate (cs__memopts_host_link_Bps)
 * on a copy-kind stream: DMA engines, neither compute nor communication
 * (iteration.c), exposed only when the compute stream waits for them.
 * Departures: per block, not per tensor (a block's many saved tensors
 * overlap its neighbours' compute a tensor at a time); the few tensors
 * unpacked by the first backward node come from fwd_stash without a
 * copy in torchtune, here every block's make the round trip; the host
 * side (pinned-memory allocation, the copies' share of host memory
 * bandwidth when eight GPUs copy at once) is not modelled; pipeline
 * stages (pipeline.c) add no copies.
 *
 * Optimizer in backward (torchtune torchtune/training/memory.py:
 * create_optim_in_bwd_wrapper and register_optim_in_bwd_hooks: one
 * optimizer per parameter, stepped and zeroed by a hook registered with
 * torch's Tensor.register_post_accumulate_grad_hook, which autograd runs
 * once the parameter's .grad is accumulated, inside backward, on the
 * compute stream). The end-of-iteration step's traffic (workload.c: the
 * optimizer's bytes per parameter over this rank's shard, at the HBM
 * streaming rate) is split into one task per block after its backward,
 * and the root's (embeddings, head) after the last backward, in
 * proportion to their parameters; the same bytes in total, each task a
 * smaller kernel (cs_compute_hbm_efficiency). Where the strategy shards
 * gradients (FSDP), a unit's gradient exists on the rank only once its
 * reduce-scatter is done, so its step also waits for that reduction.
 */
#include "train/memopts.h"

#include <math.h>

#include "train/checkpoint.h"
#include "train/compute.h"

/* torchtune OffloadActivations' default max_fwd_stash_size */
#define FWD_STASH 5

int cs__memopts_host_link_Bps(const cs_cluster *c, double *out, cs_diag *d)
{
    *out = c->inter.pcie_Bps > 0 ? c->inter.pcie_Bps
           : c->intra.kind == CS_FABRIC_PCIE ? c->intra.bw_Bps
                                             : 0;
    if (*out > 0) return 0;
    return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                       "activation_offloading copies activations over the GPU's host link, "
                       "whose rate cluster '%s' does not give: set inter.pcie (a PCIe link "
                       "name or a rate; GB200 and GB300 reach the host over NVLink-C2C)",
                       c->name);
}

/* The blocks between a forward and the earlier block whose copy to the
 * host it waits for (the file header). */
static int stash_blocks(const cs_training *t, int layer)
{
    int whole = cs_checkpoint_layer_recomputes(t, layer) && cs_checkpoint_recomputes_whole(t);
    int saved = whole ? 1 : 4;
    return 1 + (FWD_STASH - 1 + saved - 1) / saved;
}

static int copy_task(cs_wbuild *b, int layer, const char *what)
{
    double bytes = cs_checkpoint_kept_bytes(b->whole, b->t, layer);
    cs_task *k = cs__wb_add(b->w, CS_TASK_MEMORY, CS_STREAM_OFFLOAD, b->micro, layer, what, NULL,
                            layer);
    k->mem_bytes = bytes;
    k->duration_s = bytes / b->host_Bps;
    return k->id;
}

void cs__memopts_forward(cs_wbuild *b, int layer, int fwd)
{
    if (!b->t->activation_offloading) return;
    int back = layer - stash_blocks(b->t, layer);
    if (back >= 0) cs__wb_dep(b, fwd, b->d2h[back], 0);
    int id = copy_task(b, layer, "offload");
    cs__wb_dep(b, id, fwd, 0);
    cs__wb_task(b, id)->mem_at_end = -cs__wb_task(b, id)->mem_bytes;
    b->d2h[layer] = id;
}

int cs__memopts_fetch(cs_wbuild *b, int layer)
{
    if (!b->t->activation_offloading) return -1;
    int id = copy_task(b, layer, "fetch");
    if (layer + 2 < b->layers) cs__wb_dep(b, id, b->bwd[layer + 2], 0);
    cs__wb_task(b, id)->mem_at_start = cs__wb_task(b, id)->mem_bytes;
    return id;
}

int cs__memopts_reduction(const cs_wbuild *b, int after)
{
    if (!b->row->shards_grads || b->shard_ranks <= 1) return after;
    const cs_workload *w = b->w;
    for (size_t i = w->n; i-- > (size_t)after + 1;) {
        const cs_task *k = &w->tasks[i];
        /* the gradients' reduction: the shard group's reduce-scatter, or
         * the replica all-reduce after it; a tensor-parallel layer's own
         * reduce-scatters (group tp) are not it */
        if (k->kind == CS_TASK_COLLECTIVE && cs_stream_kind_of(k->stream) == CS_STREAM_KIND_COMM &&
            (k->group == b->shard || k->group == CS_GROUP_DP_REPLICATE) &&
            (k->op == CS_OP_REDUCE_SCATTER || k->op == CS_OP_ALL_REDUCE))
            return (int)i;
    }
    return -1;
}

int cs__memopts_step(cs_wbuild *b, int layer, double params, const char *what, int after)
{
    cs_workload *w = b->w;
    const double shard = params / b->layout->optimizer_degree;
    /* micro -1: the optimizer phase, which the executor accounts as the step */
    cs_task *k = cs__wb_add(w, CS_TASK_MEMORY, CS_STREAM_COMPUTE, -1, layer, "optimizer step", what,
                            layer);
    k->mem_bytes = shard * cs_training_optimizer_traffic_per_param(b->t);
    k->duration_s = k->mem_bytes / (w->cluster->gpu.hbm_Bps *
                                     cs_compute_hbm_efficiency(w->cluster, k->mem_bytes));
    k->mem_at_start = cs_memory_optimizer_temp_bytes(b->t, shard);
    k->mem_at_end = -k->mem_at_start;
    int id = k->id;
    cs__wb_dep(b, id, after, 0);
    return id;
}
