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
 *
 * A pipeline has no graph: its schedule (cs_schedule_write_pipeline) is
 * written from its timeline (train/pipeline.h), still version 2 (members
 * added): "pipeline" {stages, virtual_stages, micro_batches, schedule},
 * "stages" [{stage, layers, first_task, tasks}], every task with its
 * "stage", and p2p tasks (kind "p2p", op send / recv, peer {"pp": S},
 * size_bytes, dtype, group pp, tag, batch) around each pass: the
 * receive of its input before it, the send of its output after it, a
 * pass's send and the next pass's receive in one batch (Megatron-LM
 * megatron/core/pipeline_parallel/p2p_communication.py
 * send_forward_recv_backward / send_backward_recv_forward: one
 * batch_isend_irecv per pair, waited for as one). docs/json-output.md
 * lists the members.
 */
#include "out/schedule.h"

#include <stdlib.h>

/* The names of the dimensions in dims, as a JSON array. */
static void dim_names(const cs_mesh *m, cs_mesh_dims dims, cs_buf *b)
{
    cs_buf_printf(b, "[");
    for (int i = 0, k = 0; i < m->ndims; i++)
        if (dims & CS_MESH_BIT(i)) cs_buf_printf(b, "%s\"%s\"", k++ ? ", " : "", m->dim[i].name);
    cs_buf_printf(b, "]");
}

/* The members every schedule opens with: format, version, mesh, groups. */
static void head(const cs_layout *l, cs_buf *b)
{
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
}

void cs_schedule_write(const cs_workload *w, cs_buf *b)
{
    head(cs_workload_layout(w), b);
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

/* ---- pipelines ---------------------------------------------------------- */

static const char *const pass_names[] = {"F", "B", "W"};

/* What the pipeline writer carries from task to task. */
typedef struct pp_writer {
    cs_buf *b;
    const cs_pp_timeline *tl;
    int id; /* the next task's */
} pp_writer;

/* Opens task w->id of stage s: its id, kind, stream, name, stage. */
static void pp_task(pp_writer *w, int s, const char *kind, const char *stream, const char *name)
{
    cs_buf_printf(w->b, "%s\n    {\"id\": %d, \"kind\": \"%s\", \"stream\": \"%s\", \"name\": \"%s\", "
                  "\"stage\": %d, ", w->id ? "," : "", w->id, kind, stream, name, s);
    w->id++;
}

/* Closes a task: predicted_s and its one dependency (-1: none). */
static void pp_close(pp_writer *w, double predicted_s, int dep)
{
    cs_buf_printf(w->b, "\"predicted_s\": %.9e, \"deps\": [", predicted_s);
    if (dep >= 0) cs_buf_printf(w->b, "{\"task\": %d, \"when\": \"end\"}", dep);
    cs_buf_printf(w->b, "]}");
}

/* The send (after pass x) or the receive (before it) of stage s, in batch
 * `batch` of the stage: the send predicted at the transfer's time as NCCL
 * prices it (send_s: the executor holds the sender for it), the receive at
 * 0 (the receiver pays only its wait for the send's end). */
static void pp_p2p(pp_writer *w, int s, const cs_pp_slice *x, int send, int batch)
{
    const cs_pp_timeline *tl = w->tl;
    char name[48], mb[24];
    if (tl->V > 1) snprintf(mb, sizeof mb, "%d.%d", x->micro, x->chunk);
    else snprintf(mb, sizeof mb, "%d", x->micro);
    int peer = send ? x->to_stage : x->from_stage;
    snprintf(name, sizeof name, "%s %s %s %s stage %d", send ? "send" : "recv", pass_names[x->pass],
             mb, send ? "->" : "<-", peer);
    pp_task(w, s, "p2p", "compute", name);
    cs_buf_printf(w->b, "\"micro\": %d, \"chunk\": %d, \"op\": \"%s\", \"peer\": {\"pp\": %d}, "
                  "\"size_bytes\": %.0f, \"dtype\": \"%s\", \"group\": \"pp\", \"tag\": %d, "
                  "\"batch\": %d, ",
                  x->micro, x->chunk, send ? "send" : "recv", peer, tl->p2p_bytes,
                  cs_dtype_name(tl->p2p_dtype), send ? x->tag : x->recv_tag, batch);
    pp_close(w, send ? x->send_s : 0, -1);
}

/* Stage s's tasks: the parameters' all-gather (sharded strategies), then
 * per pass its receive, the pass, its send; then the gradient sync and
 * the optimizer step. */
static void pp_stage(pp_writer *w, int s)
{
    const cs_pp_timeline *tl = w->tl;
    int gather = -1, last = -1;
    if (tl->gather_bytes[s] > 0) {
        gather = w->id;
        pp_task(w, s, "collective", "comm", "all_gather parameters");
        cs_buf_printf(w->b, "\"op\": \"all_gather\", \"size_bytes\": %.0f, \"dtype\": \"%s\", "
                      "\"group\": \"%s\", ", tl->gather_bytes[s], cs_dtype_name(tl->p2p_dtype),
                      cs_group_name(tl->sync_group));
        pp_close(w, tl->gather_s[s], -1);
    }
    for (int i = 0; i < tl->nslices[s]; i++) {
        const cs_pp_slice *x = &tl->slice[tl->first[s] + i];
        char name[48];
        if (x->from_stage >= 0) pp_p2p(w, s, x, 0, i);
        if (tl->V > 1) snprintf(name, sizeof name, "%s %d.%d", pass_names[x->pass], x->micro, x->chunk);
        else snprintf(name, sizeof name, "%s %d", pass_names[x->pass], x->micro);
        int k = s * tl->V + x->chunk;
        double flops = x->pass == CS_PP_F   ? tl->f_flops[k]
                       : x->pass == CS_PP_B ? tl->b_flops[k]
                                            : tl->w_flops[k];
        pp_task(w, s, "compute", "compute", name);
        cs_buf_printf(w->b, "\"micro\": %d, \"chunk\": %d, \"pass\": \"%s\", \"flops\": %.6e, "
                      "\"mem_bytes\": 0, ", x->micro, x->chunk, pass_names[x->pass], flops);
        pp_close(w, x->end_s - x->start_s, i == 0 ? gather : -1);
        if (x->to_stage >= 0) pp_p2p(w, s, x, 1, i + 1);
        last = w->id - 1;
    }
    int sync = w->id;
    char name[48];
    snprintf(name, sizeof name, "%s gradients", cs_op_name(tl->sync_op));
    pp_task(w, s, "collective", "comm", name);
    cs_buf_printf(w->b, "\"op\": \"%s\", \"size_bytes\": %.0f, \"dtype\": \"%s\", \"group\": \"%s\", ",
                  cs_op_name(tl->sync_op), tl->sync_bytes[s], cs_dtype_name(tl->sync_dtype),
                  cs_group_name(tl->sync_group));
    pp_close(w, tl->sync_s[s], last);
    pp_task(w, s, "memory", "compute", "optimizer step");
    cs_buf_printf(w->b, "\"flops\": 0, \"mem_bytes\": %.0f, ", tl->optimizer_bytes[s]);
    pp_close(w, tl->optimizer_s[s], sync);
}

void cs_schedule_write_pipeline(const cs_pp_timeline *tl, cs_buf *b)
{
    head(tl->layout, b);
    cs_buf_printf(b, "  \"pipeline\": {\"stages\": %d, \"virtual_stages\": %d, \"micro_batches\": %d, "
                  "\"schedule\": \"%s\"},\n", tl->P, tl->V, tl->m, tl->schedule);
    cs_buf tasks = {0};
    pp_writer w = {.b = &tasks, .tl = tl};
    int *first = cs_xmalloc(sizeof *first * (size_t)tl->P), *n = cs_xmalloc(sizeof *n * (size_t)tl->P);
    for (int s = 0; s < tl->P; s++) {
        first[s] = w.id;
        pp_stage(&w, s);
        n[s] = w.id - first[s];
    }
    cs_buf_printf(b, "  \"stages\": [");
    for (int s = 0; s < tl->P; s++)
        cs_buf_printf(b, "%s\n    {\"stage\": %d, \"layers\": %d, \"first_task\": %d, \"tasks\": %d}",
                      s ? "," : "", s, tl->layers[s], first[s], n[s]);
    cs_buf_printf(b, "\n  ],\n  \"tasks\": [%s\n  ]\n}\n", tasks.data ? tasks.data : "");
    cs_buf_free(&tasks);
    free(first), free(n);
}
