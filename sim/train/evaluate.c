/* SPDX-License-Identifier: MIT */
/*
 * evaluate.c - one configuration: the memory estimate (memory.c), then
 * the iteration graph (workload.c) run by the executor (iteration.c). The
 * memory verdict of a simulated configuration is the timeline's peak
 * against the GPU's capacity, as `collsim simulate` reports it; the
 * estimate's own lines are kept alongside. Cost: O(1) for the estimate;
 * a build and a run, O(tasks log tasks), when simulated.
 */
#include "train/evaluate.h"

#include <string.h>

int cs_evaluate_config(const cs_model *m, const cs_training *t, const cs_topology *topo,
                       const cs_evaluate_opts *o, cs_evaluation *out, cs_diag *d)
{
    static const cs_evaluate_opts memory_only = {0};
    if (!o) o = &memory_only;
    memset(out, 0, sizeof *out);
    if (o->workload) *o->workload = NULL;
    int rc = cs_memory_estimate(m, t, topo, o->model_states_only, &out->memory, d);
    if (rc) return rc;
    out->fits = out->memory.fits;
    out->note = cs_training_note(t);
    if (!o->simulate) return 0;
    cs_workload *w;
    cs_workload_opts wo = {.cache = o->cache, .unnamed = o->unnamed};
    if ((rc = cs_workload_build_opts(m, t, topo, &wo, &w, d))) return rc;
    rc = cs_iteration_run(w, t, &out->iteration, d);
    if (rc == 0) {
        out->simulated = 1;
        out->fits = out->iteration.peak_bytes <= out->memory.capacity_bytes;
    } else {
        cs_iteration_free(&out->iteration);
    }
    if (rc == 0 && o->workload)
        *o->workload = w;
    else
        cs_workload_free(w);
    return rc;
}

void cs_evaluate_free(cs_evaluation *e)
{
    if (e->simulated) cs_iteration_free(&e->iteration);
    e->simulated = 0;
}
