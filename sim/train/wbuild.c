/* SPDX-License-Identifier: MIT */
/*
 * wbuild.c - adding tasks to an iteration graph (wbuild.h).
 *
 * By hand (cs_workload_new, cs_workload_append), and while workload.c
 * builds one, the calls its iteration and the strategies' hooks
 * (strategy.h) make:
 * named tasks and their dependencies, a layer's forward and backward
 * compute (the compute model's passes, compute.h) with the activations
 * and autocast copies they hold (memory.c's accounting), memory-bound
 * tasks, and collectives priced by pricing.c on the group's topology,
 * with the (op, group, size) choices of a build cached: the per-unit
 * collectives of a model repeat a few triples, and a choice is a pure
 * function of its triple. Split from workload.c, which keeps the graph
 * and what an iteration is made of.
 * Invariants: task ids are the order of the tasks; every dependency names
 * an earlier task.
 */
#include "train/wbuild.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/checkpoint.h"
#include "train/memopts.h"
#include "train/tensor.h"

/* ---- tasks ---- */

/* Appends n bytes of src at dst[o], keeping room for the NUL. */
static size_t put(char *dst, size_t o, size_t len, const char *src, size_t n)
{
    if (o + n > len - 1) n = len - 1 - o;
    memcpy(dst + o, src, n);
    return o + n;
}

/* Writes "<a>[ <b>][ <num>]" (num >= 0) into a task name, truncated as
 * snprintf would: task names are built for every task of every sweep
 * point, and printf's machinery was a quarter of a build. */
static void set_name(char *dst, size_t len, const char *a, const char *b, int num)
{
    size_t o = put(dst, 0, len, a, strlen(a));
    if (b) {
        o = put(dst, o, len, " ", 1);
        o = put(dst, o, len, b, strlen(b));
    }
    if (num >= 0) {
        char out[12]; /* " " and up to 10 digits, filled from the end */
        size_t i = sizeof out;
        do {
            out[--i] = (char)('0' + num % 10);
            num /= 10;
        } while (num > 0);
        out[--i] = ' ';
        o = put(dst, o, len, out + i, sizeof out - i);
    }
    dst[o] = 0;
}

void cs__wb_name(const cs_wbuild *b, char *dst, size_t len, const char *a, int num)
{
    if (b->w->unnamed)
        dst[0] = 0;
    else
        set_name(dst, len, a, NULL, num);
}

void cs__wb_name_range(const cs_wbuild *b, char *dst, size_t len, const char *a, double first,
                       double last)
{
    if (first == last && first <= INT_MAX)
        cs__wb_name(b, dst, len, a, (int)first);
    else if (b->w->unnamed)
        dst[0] = 0;
    else
        snprintf(dst, len, "%s %.0f-%.0f", a, first, last);
}

/* Room for one more task. */
static cs_task *grow(cs_workload *w)
{
    if (w->n == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 256;
        w->tasks = cs_xrealloc(w->tasks, w->cap * sizeof *w->tasks);
    }
    return &w->tasks[w->n];
}

cs_task *cs__wb_add(cs_workload *w, cs_task_kind k, cs_stream s, int micro, int layer,
                    const char *a, const char *b, int num)
{
    cs_task *t = grow(w);
    *t = (cs_task){.id = (int)w->n, .kind = k, .stream = s, .micro = micro, .layer = layer,
                   .count = 1, .issue_s = w->host_s};
    if (!w->unnamed) set_name(t->name, sizeof t->name, a, b, num);
    w->n++;
    return t;
}

static void dep(cs_task *t, int on, int on_start)
{
    if (on < 0) return;
    CS_ASSERT(on < t->id);
    for (int i = 0; i < t->ndeps; i++)
        if (t->deps[i] == on && t->on_start[i] == on_start) return;
    CS_ASSERT(t->ndeps < 4);
    t->on_start[t->ndeps] = (char)on_start;
    t->deps[t->ndeps++] = on;
}

cs_task *cs__wb_task(cs_wbuild *b, int id)
{
    CS_ASSERT(id >= 0 && (size_t)id < b->w->n);
    return &b->w->tasks[id];
}

void cs__wb_dep(cs_wbuild *b, int task, int on, int on_start)
{
    dep(cs__wb_task(b, task), on, on_start);
}

void cs__wb_host(cs_wbuild *b, double seconds)
{
    CS_ASSERT(seconds >= 0);
    b->w->host_s += seconds;
}

int cs__wb_last(const cs_wbuild *b, cs_stream s)
{
    for (size_t i = b->w->n; i-- > 0;)
        if (b->w->tasks[i].stream == s) return (int)i;
    return -1;
}

cs_workload *cs_workload_new(double peak_flops)
{
    cs_workload *w = cs_xcalloc(1, sizeof *w);
    w->peak_flops = peak_flops;
    w->eff = 1.0;
    w->cluster_slowdown = -1; /* no cluster: unset */
    return w;
}

int cs_workload_append(cs_workload *w, const cs_task *t)
{
    CS_ASSERT(t->ndeps >= 0 && t->ndeps <= 4);
    for (int i = 0; i < t->ndeps; i++) CS_ASSERT(t->deps[i] >= 0 && (size_t)t->deps[i] < w->n);
    CS_ASSERT(t->stream >= 0 && t->stream < CS_STREAM_COUNT);
    cs_task *x = grow(w);
    *x = *t;
    if (!(x->count >= 1)) x->count = 1;
    x->id = (int)w->n++;
    return x->id;
}

int cs__wb_compute(cs_workload *w, int micro, int layer, cs_kpass p0, cs_kpass p1,
                   const char *what, int l)
{
    CS_ASSERT(l >= 0);
    cs_task *t = cs__wb_add(w, CS_TASK_COMPUTE, CS_STREAM_COMPUTE, micro, layer, what, NULL, l);
    for (int p = p0; p <= (int)p1; p++) {
        t->flops += w->comp.pass[p].flops;
        t->duration_s += w->comp.pass[p].time_s;
    }
    if (p0 <= CS_KPASS_RECOMPUTE && CS_KPASS_RECOMPUTE <= p1)
        t->recompute_s = w->comp.pass[CS_KPASS_RECOMPUTE].time_s;
    return t->id;
}

/* Under amp, autocast's weight casts before a forward of `params`
 * parameters (training.h: cs_training_autocast_cast_bytes_per_param): a
 * memory-bound pass on the compute stream whose copies stay cached, and
 * saved for backward, until the unit's backward ends (cast_release). */
void cs__wb_autocast_cast(cs_wbuild *b, int layer, double params)
{
    double per = cs_training_autocast_cast_bytes_per_param(b->t);
    if (per <= 0 || params <= 0) return;
    int c = cs__wb_memory(b, CS_STREAM_COMPUTE, layer, per * params, "autocast cast");
    b->w->tasks[c].mem_at_start = cs_memory_autocast_copy_bytes(b->t, params);
}

static double cast_release(const cs_wbuild *b, double params)
{
    return cs_memory_autocast_copy_bytes(b->t, params);
}

int cs__wb_forward(cs_wbuild *b, int l)
{
    cs__wb_autocast_cast(b, l, b->m->layer_params);
    int id = cs__wb_compute(b->w, b->micro, l, CS_KPASS_FORWARD, CS_KPASS_FORWARD, "forward", l);
    b->w->tasks[id].mem_at_start = cs_checkpoint_kept_bytes(b->whole, b->t, l);
    dep(&b->w->tasks[id], b->tp_last, 0);
    b->tp_last = cs__tensor_layer(b, l, id, 0);
    cs__memopts_forward(b, l, id);
    return b->fwd[l] = id;
}

int cs__wb_memory(cs_wbuild *b, cs_stream s, int layer, double bytes, const char *what)
{
    cs_workload *w = b->w;
    cs_task *t = cs__wb_add(w, CS_TASK_MEMORY, s, b->micro, layer, what, NULL, layer);
    t->mem_bytes = bytes;
    t->duration_s = bytes / (w->cluster->gpu.hbm_Bps * cs_compute_hbm_efficiency(w->cluster, bytes));
    return t->id;
}

int cs__wb_backward(cs_wbuild *b, int l)
{
    /* the recompute pass only in the blocks the policy checkpoints (checkpoint.h) */
    cs_kpass last = cs_checkpoint_layer_recomputes(b->t, l) ? CS_KPASS_RECOMPUTE : CS_KPASS_BACKWARD;
    int fetch = cs__memopts_fetch(b, l); /* activation offloading's copy back */
    int id = cs__wb_compute(b->w, b->micro, l, CS_KPASS_BACKWARD, last, "backward", l);
    dep(&b->w->tasks[id], b->tp_last, 0);
    dep(&b->w->tasks[id], fetch, 0);
    b->tp_last = cs__tensor_layer(b, l, id, 1);
    cs_task *t = &b->w->tasks[id];
    /* recomputed activations live during the layer's backward */
    t->mem_at_start = b->act_full - cs_checkpoint_kept_bytes(b->whole, b->t, l);
    t->mem_at_end = -b->act_full - cast_release(b, b->m->layer_params);
    b->ready_bytes[b->nready] = b->grad_bytes[1];
    b->ready_task[b->nready++] = id;
    return b->bwd[l] = id;
}

/* ---- collectives ---- */

/* The choice already made in this build for (op, group, size), or NULL. */
static const choice *chosen(const cs_workload *w, cs_op op, cs_group g, double size)
{
    for (int i = 0; i < w->ncache; i++) {
        const choice *c = &w->cache[i];
        if (c->op == op && c->group == g && c->size_bytes == size) return c;
    }
    return NULL;
}

int cs__wb_collective(cs_wbuild *b, cs_stream s, int micro, int layer, cs_op op, double size,
                      cs_dtype dt, cs_group g, const char *what)
{
    cs_workload *w = b->w;
    int n = w->layout.group[g].size;
    cs_task *t = cs__wb_add(w, CS_TASK_COLLECTIVE, s, micro, layer, cs_op_name(op), what, -1);
    t->op = op;
    t->size_bytes = size;
    t->dtype = dt;
    t->group = g;
    t->wire_bytes = size * cs_op_busbw_factor(op, n);
    if (n <= 1) return t->id;
    const choice *c = chosen(w, op, g, size);
    if (c) {
        t->algo = c->algo;
        t->proto = c->proto;
        t->duration_s = c->duration_s;
        return t->id;
    }
    cs_algo_id a = CS_ALGO_RING;
    cs_proto p = CS_PROTO_SIMPLE;
    double dur = 0;
    int rc = cs_pricing_price(w->xc, w->xslot[g], &w->layout.group[g].topo, op, size, w->engine, &a, &p, &dur,
                              w->d);
    if (rc) {
        if (!w->err) w->err = rc;
        return t->id; /* the build fails at its end */
    }
    t->algo = a;
    t->proto = p;
    t->duration_s = dur;
    int slot = w->ncache < CHOICE_CACHE ? w->ncache++ : w->next_slot++ % CHOICE_CACHE;
    w->cache[slot] = (choice){op, g, size, a, p, t->duration_s};
    return t->id;
}

double cs__wb_whole(double bytes, double piece)
{
    CS_ASSERT(piece > 0);
    double n = floor(bytes / piece);
    if (n < 0x1p53) { /* beyond, n +- 1 is n: the quotient is as close as it gets */
        while (n > 0 && n * piece > bytes) n--;
        while ((n + 1) * piece <= bytes) n++;
    }
    return n;
}

void cs__wb_repeat(cs_wbuild *b, int id, double count)
{
    cs_task *t = cs__wb_task(b, id);
    CS_ASSERT(count >= 1 && t->count == 1);
    t->count = count;
    t->duration_s *= count;
    t->wire_bytes *= count;
    t->flops *= count;
    t->mem_bytes *= count;
}
