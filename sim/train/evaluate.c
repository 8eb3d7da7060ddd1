/* SPDX-License-Identifier: MIT */
/*
 * evaluate.c - one configuration: its layout (layout.c: the mesh, the
 * groups and their topologies, built once and handed to every stage), the
 * memory estimate (memory.c), then the iteration graph (workload.c, given
 * that estimate) run by the executor (iteration.c). One
 * memory peak per configuration: the timeline's, since it alone sees
 * which FSDP units are gathered at once and when the loss buffers, cast
 * copies and optimizer intermediates are freed; the estimate's lines (its
 * closed form, the same terms) are kept alongside, and agree with the
 * timeline wherever nothing overlaps by timing (tests/test-workload.c).
 * `memory`, `simulate` and `plan` all evaluate here, so they report the
 * same peak and verdict, and the largest micro-batch by the same rule.
 * Cost: O(1) for the estimate; a build and a run, O(tasks log tasks).
 */
#include "train/evaluate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The timeline's peak replaces the estimate's. */
static void take_peak(cs_evaluation *out, const cs_iteration *it)
{
    cs_memory *m = &out->memory;
    m->peak_bytes = it->peak_bytes;
    m->fits = out->fits = it->peak_bytes <= m->capacity_bytes;
    if (it->peak_task[0])
        snprintf(m->peak_phase, sizeof m->peak_phase, "%s", it->peak_task);
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
    cs_workload *w = NULL;
    int rc = cs_layout_build(m, t, topo, l, d);
    if (rc == 0) rc = cs_memory_estimate_layout(m, t, l, o->model_states_only, &out->memory, d);
    if (rc) goto done;
    out->fits = out->memory.fits;
    out->estimate_peak_bytes = out->memory.peak_bytes;
    out->note = cs_training_note(t);
    if (!o->simulate && o->model_states_only) goto done;
    /* the graph's static footprint is this estimate, unless it is the ZeRO view */
    cs_workload_opts wo = {.cache = o->cache, .unnamed = o->unnamed,
                           .memory = o->model_states_only ? NULL : &out->memory};
    if ((rc = cs_workload_build_layout(m, t, l, &wo, &w, d))) goto done;
    cs_rank_class ranks[CS_RANK_CLASS_MAX]; /* des: stragglers, under the DES */
    int nclasses = cs_rankclass_group(t, l, ranks);
    rc = cs_iteration_run_ranks(w, t, ranks, nclasses, &out->iteration, d);
    if (rc == 0 && !o->model_states_only) take_peak(out, &out->iteration);
    if (rc == 0 && o->simulate) {
        out->simulated = 1;
    } else {
        cs_iteration_free(&out->iteration);
    }
    if (rc == 0 && o->simulate && o->workload)
        *o->workload = w;
    else
        cs_workload_free(w);
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
