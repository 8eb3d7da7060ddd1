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
        if (t->kind == CS_TASK_COLLECTIVE) {
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
