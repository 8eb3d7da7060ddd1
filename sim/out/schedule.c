/* SPDX-License-Identifier: MIT */
/*
 * schedule.c - the iteration graph as JSON ("format": "collsim-schedule",
 * "version": 2): the layout's device mesh (its dimensions, innermost
 * first, with their sizes), its process groups by name (each one's ranks
 * and the dimensions it spans), the compute rates, and every task with
 * its stream, kind, dependencies, memory deltas and predicted duration;
 * collectives with op, size, dtype, group (by name), algorithm, protocol
 * and wire bytes. collsim-hw reads it back, and colours its communicators
 * from the mesh (hw/schedule.h documents the fields it uses; it still
 * reads version 1, whose "groups" were {world, shard, replica} rank
 * counts). A task has "count" (absent: 1) when it stands for that many
 * back-to-back runs of itself (a long run of DDP's equal buckets:
 * cs_task.count), predicted_s and wire_bytes then of all of them.
 * Deterministic: the same graph gives the same bytes.
 */
#include "out/schedule.h"

/* The names of the dimensions in dims, as a JSON array. */
static void dim_names(const cs_mesh *m, cs_mesh_dims dims, cs_buf *b)
{
    cs_buf_printf(b, "[");
    for (int i = 0, k = 0; i < m->ndims; i++)
        if (dims & CS_MESH_BIT(i)) cs_buf_printf(b, "%s\"%s\"", k++ ? ", " : "", m->dim[i].name);
    cs_buf_printf(b, "]");
}

void cs_schedule_write(const cs_workload *w, cs_buf *b)
{
    const cs_layout *l = cs_workload_layout(w);
    cs_buf_printf(b, "{\n  \"format\": \"collsim-schedule\",\n  \"version\": %d,\n",
                  CS_WORKLOAD_SCHEDULE_VERSION);
    cs_buf_printf(b, "  \"mesh\": [");
    for (int i = 0; i < l->mesh.ndims; i++)
        cs_buf_printf(b, "%s{\"name\": \"%s\", \"size\": %d}", i ? ", " : "", l->mesh.dim[i].name,
                      l->mesh.dim[i].size);
    cs_buf_printf(b, "],\n  \"groups\": {");
    for (int g = 0; g < CS_GROUP_COUNT; g++) {
        /* the pp group only with a pipeline (the schedule of P = 1 as before it) */
        if (g == CS_GROUP_PP && l->group[g].size <= 1) continue;
        cs_buf_printf(b, "%s\n    \"%s\": {\"ranks\": %d, \"dims\": ", g ? "," : "",
                      cs_group_name((cs_group)g), l->group[g].size);
        dim_names(&l->mesh, l->group[g].dims, b);
        cs_buf_printf(b, "}");
    }
    cs_buf_printf(b, "\n  },\n");
    cs_buf_printf(b, "  \"peak_flops\": %.6e,\n  \"compute_efficiency\": %.6g,\n",
                  cs_workload_peak_flops(w), cs_workload_compute_efficiency(w));
    cs_buf_printf(b, "  \"tasks\": [");
    for (size_t i = 0; i < cs_workload_count(w); i++) {
        const cs_task *t = cs_workload_task(w, i);
        cs_buf_printf(b, "%s\n    {\"id\": %d, \"kind\": \"%s\", \"stream\": \"%s\", \"name\": \"%s\", "
                      "\"micro\": %d, \"layer\": %d, ",
                      i ? "," : "", t->id,
                      t->kind == CS_TASK_COMPUTE ? "compute"
                      : t->kind == CS_TASK_MEMORY ? "memory"
                                                  : "collective",
                      cs_stream_name(t->stream), t->name, t->micro, t->layer);
        if (t->kind == CS_TASK_COLLECTIVE)
            cs_buf_printf(b, "\"op\": \"%s\", \"size_bytes\": %.0f, \"dtype\": \"%s\", \"group\": \"%s\", "
                          "\"algo\": \"%s\", \"proto\": \"%s\", \"wire_bytes\": %.0f, ",
                          cs_op_name(t->op), t->size_bytes, cs_dtype_name(t->dtype),
                          cs_group_name(t->group), cs_algo_name(t->algo), cs_proto_name(t->proto),
                          t->wire_bytes);
        if (t->count > 1) /* runs of equal buckets (cs_task.count); absent: 1 */
            cs_buf_printf(b, "\"count\": %.0f, ", t->count);
        if (t->kind != CS_TASK_COLLECTIVE)
            cs_buf_printf(b, "\"flops\": %.6e, \"mem_bytes\": %.0f, ", t->flops, t->mem_bytes);
        cs_buf_printf(b, "\"predicted_s\": %.9e, \"mem_at_start\": %.0f, \"mem_at_end\": %.0f, \"deps\": [",
                      t->duration_s, t->mem_at_start, t->mem_at_end);
        for (int k = 0; k < t->ndeps; k++)
            cs_buf_printf(b, "%s{\"task\": %d, \"when\": \"%s\"}", k ? ", " : "", t->deps[k],
                          t->on_start[k] ? "start" : "end");
        cs_buf_printf(b, "]}");
    }
    cs_buf_printf(b, "\n  ]\n}\n");
}
