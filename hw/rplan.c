/* SPDX-License-Identifier: MIT */
/*
 * rplan.c - a replay plan's groups and buffer needs (see rplan.h). One
 * pass over the tasks: O(tasks).
 */
#include "rplan.h"

#include <string.h>

#include "pattern.h"

int cs_hw_rplan_group_size(const cs_hw_rplan *p, int nranks, int g)
{
    CS_ASSERT(nranks == p->mesh.ranks && g >= 0 && g < CS_GROUP_COUNT);
    return cs_mesh_group_size(&p->mesh, p->group_dims[g]);
}

int cs_hw_rplan_group_color(const cs_hw_rplan *p, int g, int rank)
{
    CS_ASSERT(g >= 0 && g < CS_GROUP_COUNT);
    return cs_mesh_group_colour(&p->mesh, p->group_dims[g], rank);
}

void cs_hw_rplan_set_groups(cs_hw_rplan *p, const cs_hw_schedule *sc, int nranks, int match)
{
    if (match) {
        p->mesh = sc->mesh;
        memcpy(p->group_dims, sc->group_dims, sizeof p->group_dims);
        return;
    }
    cs_mesh_init(&p->mesh);
    cs_mesh_add(&p->mesh, "world", nranks);
    for (int g = 0; g < CS_GROUP_COUNT; g++) p->group_dims[g] = cs_mesh_all(&p->mesh);
}

int cs_hw_rplan_stage(const cs_hw_rplan *p, int rank)
{
    int pp = cs_mesh_find(&p->mesh, "pp");
    if (pp < 0) return 0;
    int c[CS_MESH_MAX_DIMS];
    cs_mesh_coords(&p->mesh, rank, c);
    return c[pp];
}

int cs_hw_rplan_runs(const cs_hw_rplan *p, const cs_hw_rtask *t, int rank)
{
    return t->stage < 0 || t->stage == cs_hw_rplan_stage(p, rank);
}

int cs_hw_rplan_batch(const cs_hw_rplan *p, const size_t *queue, size_t n, int rank)
{
    if (n == 0) return 0;
    const cs_hw_rtask *first = &p->tasks[queue[0]];
    if (!first->p2p || !cs_hw_rplan_runs(p, first, rank)) return 0;
    int k = 1;
    while ((size_t)k < n && k < CS_HW_P2P_BATCH_MAX) {
        const cs_hw_rtask *t = &p->tasks[queue[k]];
        if (!t->p2p || t->batch != first->batch || t->stage != first->stage) break;
        k++;
    }
    return k;
}

static void grow(size_t *have, size_t need)
{
    if (need > *have) *have = need;
}

void cs_hw_rplan_needs(const cs_hw_rplan *p, int nranks, size_t copy_chunk, cs_hw_rneeds *out)
{
    memset(out, 0, sizeof *out);
    out->gemm_a = out->gemm_b = out->gemm_c = out->copy_bytes = 1;
    for (size_t i = 0; i < p->n; i++) {
        const cs_hw_rtask *t = &p->tasks[i];
        if (t->p2p) { /* the pp group's communicator on its stream, its own buffers */
            out->used[t->group][t->stream] = 1;
            grow(&out->p2p_bytes, t->count * (size_t)cs_dtype_size(t->dtype));
        } else if (t->kind == CS_TASK_COLLECTIVE) {
            int gsize = cs_hw_rplan_group_size(p, nranks, t->group);
            size_t ts = (size_t)cs_dtype_size(t->dtype);
            out->used[t->group][t->stream] = 1;
            grow(&out->send_bytes[t->stream], cs_hw_send_count(t->op, t->count, gsize) * ts);
            grow(&out->recv_bytes[t->stream], cs_hw_recv_count(t->op, t->count, gsize) * ts);
        } else if (t->kind == CS_TASK_COMPUTE) {
            grow(&out->gemm_a, (size_t)t->m * (size_t)t->k);
            grow(&out->gemm_b, (size_t)t->k * (size_t)t->n);
            grow(&out->gemm_c, (size_t)t->m * (size_t)t->n);
        } else {
            grow(&out->copy_bytes, t->copy_bytes < copy_chunk ? t->copy_bytes : copy_chunk);
        }
    }
}
