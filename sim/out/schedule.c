/* SPDX-License-Identifier: MIT */
/*
 * schedule.c - the iteration graph as JSON ("format": "collsim-schedule",
 * "version": 1): the process groups' sizes, the compute rates, and every
 * task with its stream, kind, dependencies, memory deltas and predicted
 * duration; collectives with op, size, dtype, group, algorithm, protocol
 * and wire bytes; "count" (absent: 1) when one task stands for that many
 * back-to-back runs of itself (a long run of DDP's equal buckets:
 * cs_task.count), predicted_s and wire_bytes then of all of them.
 * collsim-hw reads it back (hw/schedule.h documents the
 * fields it uses). Deterministic: the same graph gives the same bytes.
 */
#include "out/schedule.h"

void cs_schedule_write(const cs_workload *w, cs_buf *b)
{
    cs_buf_printf(b, "{\n  \"format\": \"collsim-schedule\",\n  \"version\": %d,\n",
                  CS_WORKLOAD_SCHEDULE_VERSION);
    cs_buf_printf(b, "  \"groups\": {\"world\": %d, \"shard\": %d, \"replica\": %d},\n",
                  cs_workload_group_ranks(w, CS_GROUP_WORLD), cs_workload_group_ranks(w, CS_GROUP_SHARD),
                  cs_workload_group_ranks(w, CS_GROUP_REPLICA));
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
