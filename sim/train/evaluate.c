/* SPDX-License-Identifier: MIT */
/*
 * evaluate.c - one configuration: its layout (layout.c: the mesh, the
 * groups and their topologies, built once and handed to every stage), the
 * memory estimate (memory.c), then the iteration graph (workload.c, given
 * that estimate) run by the executor (iteration.c). One
 * memory peak per configuration: the allocation timeline replayed through
 * the caching allocator (memory.c, memreplay.c: peak reserved + CUDA
 * context + NCCL buffers), which sees which FSDP units are gathered at
 * once, when the loss buffers, cast copies and optimizer intermediates are
 * freed, and what the allocator's per-stream caches hold; the executor's
 * own memory timeline is kept for its peak task and checked against it
 * (tests/test-workload.c). Without o->simulate nothing is run.
 * `memory`, `simulate` and `plan` all evaluate here, so they report the
 * same peak and verdict, and the largest micro-batch by the same rule.
 * Cost: O(layers x ops) for the estimate and its replay; a build and a
 * run, O(tasks log tasks).
 *
 * Gradient accumulation: micro-steps after the first are alike (the same
 * tasks, and from the first on the timeline repeats with one period), so
 * above CS_EVALUATE_MICRO_BUILT micro-steps the graph is not built whole:
 * two runs, of CS_EVALUATE_MICRO_BUILT - 1 and CS_EVALUATE_MICRO_BUILT
 * micro-steps, give the period, and every additive result (times,
 * exposure, wire bytes) grows by it once per micro-step left out; the
 * memory peak and its task are the last run's (the same in every period),
 * its time moved as the runs move it. Exact to rounding while the
 * timeline is periodic from the built micro-steps on
 * (tests/test-workload.c compares it with whole graphs); the cost no
 * longer grows with grad-accum (1e6 micro-steps: milliseconds, not a hang).
 * A caller that asks for the graph (a trace, a schedule) gets it whole, up
 * to CS_EVALUATE_MICRO_WHOLE_MAX micro-steps.
 */
#include "train/evaluate.h"
#include "train/pipeline.h"
#include "train/tensor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The allocator replay's peak (memory.c) is the one peak: the run's
 * copy of it too, so that every reader of the iteration sees it. */
static void take_peak(cs_evaluation *out, cs_iteration *it)
{
    it->peak_bytes = out->memory.peak_bytes;
}

/* it (a run of k micro-steps) extended to `more` micro-steps more, each
 * adding what the k-th added over prev (a run of k - 1); tokens and model
 * FLOPs grow in proportion. */
static void extend(cs_iteration *it, const cs_iteration *prev, int k, double more)
{
#define GROW(f) it->f += more * (it->f - prev->f)
    double t0 = it->iteration_time_s;
    GROW(iteration_time_s);
    GROW(compute_s);
    GROW(optimizer_s);
    GROW(copies_s);
    GROW(side_copies_s);
    GROW(cpu_wait_s);
    GROW(exposed_comm_s);
    GROW(pipeline_bubble_s); /* 0: a pipeline runs no graph to extend */
    GROW(recompute_s);
    GROW(peak_time_s);
    for (int op = 0; op < CS_OP_COUNT; op++) {
        GROW(exposed_by_op_s[op]);
        GROW(wire_bytes_by_op[op]);
    }
#undef GROW
    double t1 = it->iteration_time_s, work = (k + more) / k; /* tokens and FLOPs, x */
    if (t0 > 0 && t1 > 0) {
        it->tokens_per_s *= work * t0 / t1;
        it->tflops_per_gpu *= work * t0 / t1;
        it->mfu *= work * t0 / t1;
        it->hfu *= work * t0 / t1;
    }
}

/* The run of t on layout l with the graph built (wo) and run per rank class. */
static int run_once(const cs_model *m, const cs_training *t, const cs_layout *l,
                    const cs_workload_opts *wo, cs_iteration *it, cs_workload **keep, cs_diag *d)
{
    cs_workload *w;
    int rc = cs_workload_build_layout(m, t, l, wo, &w, d);
    if (rc) return rc;
    cs_rank_class ranks[CS_RANK_CLASS_MAX]; /* des: stragglers, under the DES */
    int nclasses = cs_rankclass_group(t, l, ranks);
    rc = cs_iteration_run_ranks(w, t, ranks, nclasses, it, d);
    if (rc == 0 && keep)
        *keep = w;
    else
        cs_workload_free(w);
    return rc;
}

/* The run of t's grad_accum micro-steps: whole up to
 * CS_EVALUATE_MICRO_BUILT (or when keep asks for the graph), else from two
 * shorter runs (the file's header). */
static int run_iteration(const cs_model *m, const cs_training *t, const cs_layout *l,
                         const cs_workload_opts *wo, cs_iteration *it, cs_workload **keep,
                         cs_diag *d)
{
    const int k = CS_EVALUATE_MICRO_BUILT;
    if (t->grad_accum <= k) return run_once(m, t, l, wo, it, keep, d);
    if (keep) {
        if (t->grad_accum > CS_EVALUATE_MICRO_WHOLE_MAX)
            return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                               "a trace or schedule holds every micro-step's tasks: grad_accum "
                               "at most %d there, got %d",
                               CS_EVALUATE_MICRO_WHOLE_MAX, t->grad_accum);
        return run_once(m, t, l, wo, it, keep, d);
    }
    cs_training tk = *t;
    tk.grad_accum = k - 1;
    /* the short runs' layout: the same but for the tokens of their steps */
    cs_layout *lk = cs_xmalloc(sizeof *lk);
    *lk = *l;
    lk->tokens_per_step = l->tokens_per_step / t->grad_accum * (k - 1);
    cs_iteration prev;
    int rc = run_once(m, &tk, lk, wo, &prev, NULL, d);
    if (rc) {
        free(lk);
        return rc;
    }
    tk.grad_accum = k;
    lk->tokens_per_step = l->tokens_per_step / t->grad_accum * k;
    rc = run_once(m, &tk, lk, wo, it, NULL, d);
    free(lk);
    if (rc == 0) {
        double more = (double)t->grad_accum - k;
        extend(it, &prev, k, more);
        for (int c = 0; c < it->nclasses && c < prev.nclasses; c++)
            extend(&it->classes[c].it, &prev.classes[c].it, k, more);
    }
    cs_iteration_free(&prev);
    return rc;
}


/* What an evaluation says beside the memory estimate out->memory (set
 * first): the verdict and peak it starts from, the note, the TP group. */
static void take_estimate(cs_evaluation *out, const cs_training *t, const cs_layout *l)
{
    out->fits = out->memory.fits;
    out->estimate_peak_bytes = out->memory.peak_bytes;
    out->note = cs_training_note(t);
    out->tp_ranks = l->group[CS_GROUP_TP].size;
    out->tp_nodes = l->group[CS_GROUP_TP].topo.nodes;
    out->tp_sequence_parallel = cs_tensor_sequence_parallel(t);
    out->tp_async = cs_tensor_async(t);
}
/* P > 1: the stages' timelines and memory (pipeline.h) in place of the
 * one rank graph; its peak is the largest stage's. */
static int run_pipeline(const cs_model *m, const cs_training *t, const cs_layout *l,
                        const cs_evaluate_opts *o, cs_evaluation *out, cs_diag *d)
{
    if (o->workload)
        return cs_diag_set(d, CS_ENOTSUP, NULL, 0, 0,
                           "a pipeline (pipeline_parallel %d) has no task graph: its trace and "
                           "schedule are written from its timeline (cs_evaluate_opts.timeline)",
                           cs_pipeline_degree(t));
    if (o->timeline && t->grad_accum > CS_EVALUATE_MICRO_WHOLE_MAX)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "a trace or schedule holds every micro-batch's passes: grad_accum "
                           "at most %d there, got %d",
                           CS_EVALUATE_MICRO_WHOLE_MAX, t->grad_accum);
    cs_pp_memory *mem = o->stages ? o->stages : cs_xmalloc(sizeof *mem);
    int rc = cs_pipeline_run_timeline(m, t, l, o->cache, &out->iteration, mem, o->timeline, d);
    if (rc == 0) {
        out->memory = mem->stage[mem->peak_stage];
        if (o->model_states_only) {
            out->memory.peak_bytes = out->memory.model_states_bytes;
            out->memory.fits = out->memory.peak_bytes <= out->memory.capacity_bytes;
        }
        snprintf(out->memory.peak_phase, sizeof out->memory.peak_phase,
                 "start of backward, stage %d of %d", mem->peak_stage, mem->P);
        snprintf(out->iteration.peak_task, sizeof out->iteration.peak_task,
                 "backward, stage %d of %d", mem->peak_stage, mem->P);
        take_estimate(out, t, l);
        if (o->simulate)
            out->simulated = 1;
        else
            cs_iteration_free(&out->iteration);
    }
    if (mem != o->stages) free(mem);
    return rc;
}

int cs_evaluate_config(const cs_model *m, const cs_training *t, const cs_topology *topo,
                       const cs_evaluate_opts *o, cs_evaluation *out, cs_diag *d)
{
    static const cs_evaluate_opts memory_only = {0};
    if (!o) o = &memory_only;
    memset(out, 0, sizeof *out);
    if (o->workload) *o->workload = NULL;
    cs_diag_clear(d);
    cs_layout *l = cs_xmalloc(sizeof *l);
    int rc = cs_layout_build(m, t, topo, l, d);
    if (rc == 0 && cs_pipeline_degree(t) > 1) {
        rc = run_pipeline(m, t, l, o, out, d);
        goto done;
    }
    if (rc == 0) rc = cs_memory_estimate_layout(m, t, l, o->model_states_only, &out->memory, d);
    if (rc) goto done;
    take_estimate(out, t, l);
    if (!o->simulate) goto done; /* the peak is the replay's: no run needed */
    /* the graph's static footprint is this estimate, unless it is the ZeRO view */
    cs_workload_opts wo = {.cache = o->cache, .unnamed = o->unnamed,
                           .memory = o->model_states_only ? NULL : &out->memory};
    if ((rc = run_iteration(m, t, l, &wo, &out->iteration, o->simulate ? o->workload : NULL, d)))
        goto done;
    if (!o->model_states_only) take_peak(out, &out->iteration);
    if (o->simulate) {
        out->simulated = 1;
    } else {
        cs_iteration_free(&out->iteration);
    }
done:
    free(l);
    return rc;
}

void cs_evaluate_free(cs_evaluation *e)
{
    if (e->simulated) cs_iteration_free(&e->iteration);
    e->simulated = 0;
}

/* 1 when micro-batch b fits by the timeline, 0 when not, -1 on error. */
static int fits_at(const cs_model *m, const cs_training *t, const cs_topology *topo,
                   cs_pricing_cache *cache, int b)
{
    cs_training tt = *t;
    tt.micro_batch = b;
    cs_evaluation ev;
    cs_evaluate_opts o = {.cache = cache, .unnamed = 1};
    if (cs_evaluate_config(m, &tt, topo, &o, &ev, NULL)) return -1;
    return ev.fits;
}

int cs_evaluate_max_micro_batch(const cs_model *m, const cs_training *t, const cs_topology *topo,
                                cs_pricing_cache *cache)
{
    const int top = 1 << 16;
    int guess = cs_memory_max_micro_batch(m, t, topo);
    if (guess < 1) guess = 1;
    int f = fits_at(m, t, topo, cache, guess);
    if (f < 0) return 0;
    int lo = 0, hi = guess; /* lo fits (0: none known to), hi does not */
    if (f) { /* gallop up: the estimate may over-count what overlaps */
        lo = guess;
        for (hi = guess + 1; hi <= top && fits_at(m, t, topo, cache, hi) == 1; hi *= 2) lo = hi;
        if (hi > top) hi = top + 1;
    }
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (fits_at(m, t, topo, cache, mid) == 1) lo = mid;
        else hi = mid;
    }
    return lo < top ? lo : top;
}
