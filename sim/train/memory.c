/* SPDX-License-Identifier: MIT */
/*
 * memory.c - per-rank memory footprint of data-parallel training.
 *
 * Model states follow ZeRO (Rajbhandari et al., SC20, arXiv:1910.02054,
 * Sec 3.1 and 5): with Psi parameters, 16-bit parameters and gradients
 * take 2 Psi each and mixed-precision Adam K Psi = 12 Psi (fp32 master,
 * momentum, variance). Each is divided by its sharding degree:
 *   ddp, fsdp_no_shard   1, 1, 1    (ZeRO's baseline, 16 Psi)
 *   zero1                1, 1, N    (P_os:     4 Psi + 12 Psi / N)
 *   fsdp_shard_grad_op   1, N, N    (P_os+g:   2 Psi + 14 Psi / N; torch
 *                                    keeps parameters unsharded from forward
 *                                    to backward, so ZeRO's view holds)
 *   fsdp_full_shard      N, N, N    (P_os+g+p: 16 Psi / N)
 *   fsdp_hybrid_shard    g, g, g    (g = the shard group)
 * model_states_only reproduces ZeRO Table 1 (tests/test-memory.c).
 *
 * The full estimate adds what is resident at the start of backward, the
 * peak of an iteration without pipelining: all activations of one
 * micro-batch, gradients counted whole (ZeRO's accounting; with grad_accum
 * > 1 or zero_grad(set_to_none=False) they persist while activations are
 * built; with set_to_none they grow as activations shrink, so the sum
 * over-estimates by at most min(activations, gradients)), and:
 *   activations  layers x Korthikanti Table 2 bytes per layer
 *                (cs_model_activation_bytes_per_layer); with full
 *                recomputation, plus one layer's full activations while it
 *                is recomputed;
 *   unsharded    FSDP, one unit per transformer layer plus the root unit
 *                (embeddings, head): the root is not resharded after
 *                forward (torch fsdp/_runtime_utils.py _post_forward_reshard:
 *                "Do not free the root's parameters in the post-forward"),
 *                so with resharding: root + (1 + prefetched) layer units of
 *                parameters (prefetched = 1 when backward or forward
 *                prefetch is on; the rate limiter caps units in flight at
 *                limit_all_gathers), plus the unsharded gradients of the
 *                root (alive until its reduce-scatter at the end of
 *                backward) and of the layer in backward. Without
 *                resharding (reshard_after_forward: false) every unit stays
 *                gathered: a full parameter copy plus those gradients.
 *                fsdp_shard_grad_op's full parameters are already in
 *                params_bytes (degree 1); only the gradients are added.
 *                The sharded copy is ZeRO's fp32 master inside the
 *                optimizer's 12 bytes (as in torch FSDP with
 *                MixedPrecision, whose sharded FlatParameter is fp32).
 *   buckets      ddp / zero1 (DDP underneath ZeroRedundancyOptimizer):
 *                torch's Reducer allocates bucket buffers covering every
 *                gradient at construction; with gradient_as_bucket_view
 *                False (the default) param.grad is a second copy, so the
 *                buckets add one gradient-sized buffer (pytorch PR #41954:
 *                turning views on saved ~1 GB of peak on a ~1 GB model).
 *                With views on they add nothing. bucket_cap only sets how
 *                the same bytes are cut, not how many there are.
 *   temp         fp32 logits for the loss, micro_batch x seq x vocab x 4
 *                (Korthikanti Sec 4.3: "4sbv").
 *   overheads    CUDA context (a configuration value), NCCL buffers
 *                (below) and allocator fragmentation = fraction x
 *                everything PyTorch allocates (states, activations,
 *                unsharded, buckets, temp); each a separate line.
 * Departures: no pipeline or tensor parallelism; communication-hook
 * temporaries (e.g. a bf16 compression copy per bucket), the optimizer
 * step's foreach temporaries and the embedding gradient's growth are not
 * modelled.
 */
#include "train/memory.h"

#include <stdio.h>
#include <string.h>

#define MiB (1024.0 * 1024.0)

int cs_memory_shard_group(const cs_training *t, const cs_topology *topo)
{
    int n = topo->ranks > 0 ? topo->ranks : 1;
    switch (t->strategy) {
    case CS_STRAT_DDP:
    case CS_STRAT_FSDP_NO_SHARD:
        return 1;
    case CS_STRAT_ZERO1:
    case CS_STRAT_FSDP_SHARD_GRAD_OP:
    case CS_STRAT_FSDP_FULL_SHARD:
        return n;
    case CS_STRAT_FSDP_HYBRID_SHARD: {
        int g = t->shard_group > 0 ? t->shard_group : topo->ppn_max;
        if (g > n) g = n;
        return g < 1 ? 1 : g;
    }
    default:
        CS_PANIC("unknown strategy %d", (int)t->strategy);
    }
}

void cs_memory_shard_degrees(const cs_training *t, const cs_topology *topo, int *params,
                             int *grads, int *optimizer)
{
    int g = cs_memory_shard_group(t, topo);
    int p = 1, gr = 1, o = 1;
    switch (t->strategy) {
    case CS_STRAT_DDP:
    case CS_STRAT_FSDP_NO_SHARD:
        break;
    case CS_STRAT_ZERO1:
        o = g;
        break;
    case CS_STRAT_FSDP_SHARD_GRAD_OP:
        gr = o = g;
        break;
    case CS_STRAT_FSDP_FULL_SHARD:
    case CS_STRAT_FSDP_HYBRID_SHARD:
        p = gr = o = g;
        break;
    default:
        CS_PANIC("unknown strategy %d", (int)t->strategy);
    }
    if (params) *params = p;
    if (grads) *grads = gr;
    if (optimizer) *optimizer = o;
}

/* NCCL allocates, per channel and per peer connection, one buffer per
 * protocol (src/init.cc: DEFAULT_BUFFSIZE 4 MiB for Simple,
 * DEFAULT_LL_BUFFSIZE 8 lines x 512 threads x 8 steps x 16 B = 512 KiB,
 * DEFAULT_LL128_BUFFSIZE 120 x 640 x 8 steps x 8 B = 4.6875 MiB). A ring
 * connects each rank to two peers, so a communicator holds about
 * 2 x channels x 9.1875 MiB (294 MiB at 16 channels). Tree connections,
 * work FIFOs and proxy memory are not counted: an approximation; set
 * nccl_buffers to a measured figure to override. One communicator per
 * process group of more than one rank (hybrid sharding has two). */
double cs_memory_nccl_buffer_bytes(const cs_training *t, const cs_topology *topo)
{
    const double per_connection = 4.0 * MiB + 0.5 * MiB + 4.6875 * MiB;
    int n = topo->ranks, comms = 0;
    if (t->strategy == CS_STRAT_FSDP_HYBRID_SHARD) {
        int g = cs_memory_shard_group(t, topo);
        comms = (g > 1) + (n / g > 1);
    } else {
        comms = n > 1;
    }
    return comms * 2.0 * topo->cluster.coll.channels * per_connection;
}

/* Layer units resident at once while gathering with resharding. */
static int resident_units(const cs_training *t)
{
    int prefetched = t->backward_prefetch != CS_PREFETCH_NONE || t->forward_prefetch;
    int units = 1 + prefetched;
    if (t->limit_all_gathers > 0 && units > t->limit_all_gathers) units = t->limit_all_gathers;
    return units;
}

int cs_memory_estimate(const cs_model *m, const cs_training *t, const cs_topology *topo,
                       int model_states_only, cs_memory *out, cs_diag *d)
{
    cs_diag_clear(d);
    if (!(m->params > 0))
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "model '%s' has no parameters", m->name);
    if (topo->ranks < 1)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "need at least 1 rank, got %d", topo->ranks);
    if (t->micro_batch < 1)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "micro_batch must be >= 1, got %d",
                           t->micro_batch);
    int g = cs_memory_shard_group(t, topo);
    if (topo->ranks % g)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "fsdp_hybrid_shard needs the shard group (%d ranks) to divide the %d "
                           "ranks into whole replicas",
                           g, topo->ranks);

    memset(out, 0, sizeof *out);
    int dp, dg, dopt;
    cs_memory_shard_degrees(t, topo, &dp, &dg, &dopt);
    double psi = m->params, ps = cs_dtype_size(t->param_dtype);
    out->params_bytes = psi * ps / dp;
    out->grads_bytes = psi * ps / dg; /* gradients have the parameters' dtype */
    out->optimizer_bytes = psi * cs_training_optimizer_bytes_per_param(t) / dopt;
    out->model_states_bytes = out->params_bytes + out->grads_bytes + out->optimizer_bytes;
    out->capacity_bytes = topo->cluster.gpu.memory_bytes;

    if (model_states_only) {
        out->peak_bytes = out->model_states_bytes;
        snprintf(out->peak_phase, sizeof out->peak_phase, "model states only (ZeRO Sec 5)");
        out->fits = out->peak_bytes <= out->capacity_bytes;
        return 0;
    }

    int b = t->micro_batch;
    out->activations_bytes =
        m->layers * cs_model_activation_bytes_per_layer(m, b, cs_training_kept_activations(t));
    if (t->checkpointing == CS_CKPT_FULL)
        out->activations_bytes +=
            cs_model_activation_bytes_per_layer(m, b, cs_training_running_activations(t));

    double unit = m->layer_params * ps, root = m->embedding_params * ps;
    switch (t->strategy) {
    case CS_STRAT_FSDP_FULL_SHARD:
    case CS_STRAT_FSDP_HYBRID_SHARD:
        if (g == 1) break; /* nothing is sharded: no gathers */
        if (cs_training_reshard_after_forward(t))
            out->unsharded_bytes = root + resident_units(t) * unit;
        else
            out->unsharded_bytes = psi * ps;
        out->unsharded_bytes += root + unit; /* unsharded gradients */
        break;
    case CS_STRAT_FSDP_SHARD_GRAD_OP:
        if (g > 1) out->unsharded_bytes = root + unit;
        break;
    case CS_STRAT_DDP:
    case CS_STRAT_ZERO1:
        if (!t->gradient_as_bucket_view) out->buckets_bytes = psi * ps;
        break;
    default:
        break;
    }
    out->temp_bytes = (double)b * m->seq_len * m->vocab * 4.0;

    out->cuda_context_bytes = t->cuda_context_bytes;
    out->nccl_bytes = t->nccl_buffer_bytes >= 0 ? t->nccl_buffer_bytes
                                                : cs_memory_nccl_buffer_bytes(t, topo);
    double allocated = out->model_states_bytes + out->activations_bytes + out->unsharded_bytes +
                       out->buckets_bytes + out->temp_bytes;
    out->fragmentation_bytes = t->fragmentation * allocated;
    out->overhead_bytes = out->cuda_context_bytes + out->nccl_bytes + out->fragmentation_bytes;
    out->peak_bytes = allocated + out->overhead_bytes;
    out->fits = out->peak_bytes <= out->capacity_bytes;
    snprintf(out->peak_phase, sizeof out->peak_phase, "%s",
             t->checkpointing == CS_CKPT_FULL
                 ? "start of backward (last layer recomputed)"
                 : "start of backward (all activations held)");
    return 0;
}

/* Peak memory grows with the micro-batch (activations and logits are
 * linear in it, everything else constant), so a binary search finds the
 * largest that fits. O(log 2^16) estimates. */
int cs_memory_max_micro_batch(const cs_model *m, const cs_training *t, const cs_topology *topo)
{
    cs_training tt = *t;
    cs_memory mem;
    tt.micro_batch = 1;
    if (cs_memory_estimate(m, &tt, topo, 0, &mem, NULL) || !mem.fits) return 0;
    int lo = 1, hi = 1 << 16; /* lo fits; answer in [lo, hi] */
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        tt.micro_batch = mid;
        if (!cs_memory_estimate(m, &tt, topo, 0, &mem, NULL) && mem.fits)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}
