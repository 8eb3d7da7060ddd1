/* SPDX-License-Identifier: MIT */
/*
 * memory.c - per-rank memory footprint of data-parallel training.
 *
 * Model states follow ZeRO (Rajbhandari et al., SC20, arXiv:1910.02054,
 * Sec 3.1 and 5): with Psi parameters, 16-bit parameters and gradients
 * take 2 Psi each and mixed-precision Adam K Psi = 12 Psi (fp32 master,
 * momentum, variance). Each is divided by its sharding degree (the
 * strategy's row says which state its shard group divides):
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
 *   activations  what each block keeps under the checkpointing policy
 *                (checkpoint.c: Korthikanti Table 2 bytes per layer,
 *                cs_model_activation_bytes_per_layer, or what torchtitan's
 *                per-op policy saves), plus, where blocks recompute, one
 *                block's full activations while it is recomputed;
 *   unsharded,   the strategy's own terms, its row's memory_terms
 *   buckets      (strategy.h): FSDP's gathered units and unsharded
 *                gradients (strategy_fsdp.c), DDP's gradient buckets, also
 *                under ZeRO-1 (strategy_ddp.c);
 *   temp         the loss's buffers over micro_batch x seq x vocab
 *                elements, as the loss implementation holds them (loss.c:
 *                naive: the logits in the compute dtype, their fp32 copy
 *                and, in the head's backward, the fp32 gradient; fused and
 *                chunked hold less); and, under amp, autocast's cached weight copies
 *                of every layer and the head (aten/src/ATen/
 *                autocast_mode.cpp cached_cast: kept until the autocast
 *                region exits, and saved for backward): the peak is at
 *                the head's backward, all of them held;
 *   step temp    the foreach optimizer's intermediates while it steps
 *                (torch/optim/adam.py _multi_tensor_adam: exp_avg_sq_sqrt
 *                = torch._foreach_sqrt(device_exp_avg_sqs), one tensor list
 *                the size of the shard in the states' dtype; fused and SGD
 *                keep none). Activations are freed by then, so the peak is
 *                the larger of the two phases.
 *   overheads    CUDA context (a configuration value) and NCCL buffers
 *                (below), outside the caching allocator.
 * The lines above are the analytic breakdown; the peak is not their sum
 * but the allocation timeline of an iteration replayed through the
 * caching allocator (memreplay.c, allocator.c): peak allocated and peak
 * reserved as torch reports them, the tensors sized from these lines.
 * fits = peak reserved + CUDA context + NCCL buffers <= GPU memory; the
 * fragmentation line is what the cache holds beyond the tensors (peak
 * reserved - peak allocated). A `fragmentation` set in the scenario
 * overrides the replay's reserved with peak allocated x (1 + fraction).
 * Tensor parallelism (train/tensor.h): activations per Korthikanti
 * Table 2's rows with T and SP, the rest of the model as one rank holds
 * it (parameters / T, vocab / T: logits and the head's cast).
 * Departures: no pipeline parallelism; communication-hook
 * temporaries (a 16-bit compressed copy per bucket in flight) and the
 * embedding gradient's growth are not modelled.
 */
#include "train/memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/checkpoint.h"
#include "train/loss.h"
#include "train/memreplay.h"
#include "train/strategy.h"
#include "train/tensor.h"

#define MiB (1024.0 * 1024.0)

/* NCCL allocates, per channel and per peer connection, one buffer per
 * protocol (src/init.cc: DEFAULT_BUFFSIZE 4 MiB for Simple,
 * DEFAULT_LL_BUFFSIZE 8 lines x 512 threads x 8 steps x 16 B = 512 KiB,
 * DEFAULT_LL128_BUFFSIZE 120 x 640 x 8 steps x 8 B = 4.6875 MiB). A ring
 * connects each rank to two peers, so a communicator holds about
 * 2 x channels x 9.1875 MiB (294 MiB at 16 channels). Tree connections,
 * work FIFOs and proxy memory are not counted: an approximation; set
 * nccl_buffers to a measured figure to override. One communicator per
 * process group of more than one rank: the shard group and, with
 * hybrid sharding, the replica group. */
double cs_memory_nccl_buffer_bytes(const cs_training *t, const cs_layout *l)
{
    (void)t;
    const double per_connection = 4.0 * MiB + 0.5 * MiB + 4.6875 * MiB;
    int comms = (l->group[CS_GROUP_DP_SHARD].size > 1) + (l->group[CS_GROUP_DP_REPLICATE].size > 1);
    return comms * 2.0 * l->group[CS_GROUP_WORLD].topo.cluster.coll.channels * per_connection;
}

/* The loss implementation's row (loss.c cites each). */
double cs_memory_logit_forward_bytes(const cs_training *t) { return cs_loss_held_bytes(t); }

double cs_memory_logit_backward_bytes(const cs_training *t) { return cs_loss_backward_bytes(t); }

double cs_memory_autocast_copy_bytes(const cs_training *t, double params)
{
    if (cs_training_autocast_cast_bytes_per_param(t) <= 0) return 0;
    return params * cs_dtype_size(t->param_dtype);
}

double cs_memory_optimizer_temp_bytes(const cs_training *t, double params)
{
    if (t->optimizer_impl != CS_OPTIMPL_FOREACH) return 0;
    if (t->optimizer != CS_OPT_ADAM && t->optimizer != CS_OPT_ADAMW) return 0;
    double state = cs_training_master_copy(t) ? 4.0 : cs_dtype_size(cs_training_stored_dtype(t));
    return params * state;
}

int cs_memory_estimate(const cs_model *m, const cs_training *t, const cs_topology *topo,
                       int model_states_only, cs_memory *out, cs_diag *d)
{
    cs_diag_clear(d);
    cs_layout *l = cs_xmalloc(sizeof *l);
    int rc = cs_layout_build(m, t, topo, l, d);
    if (rc == 0) rc = cs_memory_estimate_layout(m, t, l, model_states_only, out, d);
    free(l);
    return rc;
}

/* The lines, and the peak from the replay (replay) or, as a guess for
 * searches, from the lines' sum with the flat fraction (no replay). */
static int estimate(const cs_model *m, const cs_training *t, const cs_layout *l,
                    int model_states_only, int replay, cs_memory *out, cs_diag *d)
{
    cs_diag_clear(d);
    if (t->micro_batch < 1)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "micro_batch must be >= 1, got %d",
                           t->micro_batch);
    memset(out, 0, sizeof *out);
    const cs_topology *topo = &l->group[CS_GROUP_WORLD].topo;
    int dp = l->params_degree, dg = l->grads_degree, dopt = l->optimizer_degree;
    double psi = l->params_per_rank, ps = cs_dtype_size(cs_training_stored_dtype(t));
    out->params_bytes = psi * ps / dp;
    out->grads_bytes = psi * ps / dg; /* gradients have the stored parameters' dtype */
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
    const cs_model *whole = m;
    out->activations_bytes = cs_checkpoint_peak_bytes(m, t); /* the policy's (checkpoint.c) */
    cs_model rank; /* the rest as one tensor-parallel rank holds the model */
    m = cs_tensor_rank_model(m, t, &rank);

    const cs_strategy_row *row = cs_strategy_row_of(t->strategy);
    cs_strategy_mem own = {0};
    if (row->memory_terms) row->memory_terms(m, t, l, &own);
    out->unsharded_bytes = own.unsharded_bytes;
    out->buckets_bytes = own.buckets_bytes;
    double logits = (double)b * m->seq_len * m->vocab;
    out->temp_bytes =
        logits * (cs_memory_logit_forward_bytes(t) + cs_memory_logit_backward_bytes(t)) +
        cs_memory_autocast_copy_bytes(t, m->layers * m->layer_params + (double)m->vocab * m->hidden);
    out->step_temp_bytes = cs_memory_optimizer_temp_bytes(t, psi / dopt);

    out->cuda_context_bytes = t->cuda_context_bytes;
    out->nccl_bytes = t->nccl_buffer_bytes >= 0 ? t->nccl_buffer_bytes
                                                : cs_memory_nccl_buffer_bytes(t, l);
    double backward = out->activations_bytes + out->unsharded_bytes + out->temp_bytes;
    int step_peak = out->step_temp_bytes > backward;
    double outside = out->cuda_context_bytes + out->nccl_bytes;
    cs_memreplay rp = {0};
    if (replay) {
        cs_memreplay_run(whole, t, l, out, out->capacity_bytes - outside, &rp);
    } else {
        rp.peak_allocated_bytes = out->model_states_bytes + out->buckets_bytes +
                                  (step_peak ? out->step_temp_bytes : backward);
        rp.peak_reserved_bytes = rp.peak_allocated_bytes * (1 + cs_training_flat_fragmentation(t));
        snprintf(rp.peak_phase, sizeof rp.peak_phase, "analytic guess");
    }
    out->peak_allocated_bytes = rp.peak_allocated_bytes;
    out->peak_reserved_bytes = t->fragmentation >= 0 /* the user's flat override */
                                   ? rp.peak_allocated_bytes * (1.0 + t->fragmentation)
                                   : rp.peak_reserved_bytes;
    out->fragmentation_bytes = out->peak_reserved_bytes - out->peak_allocated_bytes;
    out->overhead_bytes = outside + out->fragmentation_bytes;
    out->peak_bytes = out->peak_reserved_bytes + outside;
    out->fits = out->peak_bytes <= out->capacity_bytes;
    snprintf(out->peak_phase, sizeof out->peak_phase, "%s", rp.peak_phase);
    return 0;
}

int cs_memory_estimate_layout(const cs_model *m, const cs_training *t, const cs_layout *l,
                              int model_states_only, cs_memory *out, cs_diag *d)
{
    return estimate(m, t, l, model_states_only, 1, out, d);
}

int cs_memory_lines_layout(const cs_model *m, const cs_training *t, const cs_layout *l,
                           cs_memory *out, cs_diag *d)
{
    return estimate(m, t, l, 0, 0, out, d);
}

/* Peak memory grows with the micro-batch (activations and logits are
 * linear in it, everything else constant), so a binary search finds the
 * largest that fits. A guess (the lines' sum with the flat fraction, no
 * replay): callers correct it with the replay (evaluate.c). O(log 2^16)
 * estimates. */
int cs_memory_max_micro_batch(const cs_model *m, const cs_training *t, const cs_topology *topo)
{
    cs_training tt = *t;
    cs_memory mem;
    tt.micro_batch = 1;
    cs_layout *l = cs_xmalloc(sizeof *l); /* the micro-batch changes no group */
    int lo = 0;
    if (cs_layout_build(m, &tt, topo, l, NULL) == 0 &&
        estimate(m, &tt, l, 0, 0, &mem, NULL) == 0 && mem.fits) {
        lo = 1;
        int hi = 1 << 16; /* lo fits; answer in [lo, hi] */
        while (lo < hi) {
            int mid = lo + (hi - lo + 1) / 2;
            tt.micro_batch = mid;
            if (!estimate(m, &tt, l, 0, 0, &mem, NULL) && mem.fits)
                lo = mid;
            else
                hi = mid - 1;
        }
    }
    free(l);
    return lo;
}
