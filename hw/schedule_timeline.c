/* SPDX-License-Identifier: MIT */
/*
 * schedule_timeline.c - the timeline a schedule predicts with no
 * contention, and the exposed communication of a timeline (schedule.h);
 * schedule.c reads and checks the file.
 *
 * The prediction is a list schedule in file order: a task starts when its
 * stream is free and its dependencies allow, and runs for its predicted_s,
 * with no contention between streams; a pipeline's stages advance in turn
 * (the simulator's executor, sim/train/pipeline.c). Exposed communication
 * is the simulator's definition (sim/train/iteration.h: time during which
 * a collective runs while the compute stream is idle), a sweep over
 * interval end points, O(n log n).
 */
#include "schedule.h"

#include <stdlib.h>

/* Pipelines: every stage runs its tasks in file order on its own streams,
 * a receive ending no earlier than its send; the stages advance in turn
 * (the simulator's executor, train/pipeline.c), a stage stopping at a
 * receive whose send has not been placed. O(tasks x stages) at worst. */
static double predict_stages(const cs_hw_schedule *s, double *start_s, double *end_s)
{
    int P = s->stages, top = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->tasks[i].p2p && s->tasks[i].tag > top) top = s->tasks[i].tag;
    size_t *send = cs_xmalloc(((size_t)top + 1) * sizeof *send); /* by tag (check_p2p: one) */
    for (size_t i = 0; i < s->n; i++)
        if (s->tasks[i].p2p == CS_HW_P2P_SEND) send[s->tasks[i].tag] = i;
    size_t *next = cs_xcalloc((size_t)P, sizeof *next), left = s->n;
    double *free_at = cs_xcalloc((size_t)P * CS_STREAM_COUNT, sizeof *free_at), last = 0;
    char *done = cs_xcalloc(s->n ? s->n : 1, 1);
    for (size_t i = 0; i < s->n; i++) /* tasks of no stage: placed as stage 0's */
        if (s->tasks[i].stage < 0) left--, done[i] = 1, start_s[i] = end_s[i] = 0;
    while (left > 0) {
        size_t progress = 0;
        for (int st = 0; st < P; st++) {
            for (size_t i = next[st]; i < s->n; i++, next[st] = i) {
                const cs_hw_stask *t = &s->tasks[i];
                if (t->stage != st || done[i]) continue;
                double *fa = &free_at[(size_t)st * CS_STREAM_COUNT + t->stream];
                double ready = *fa, floor_end = 0;
                for (int k = 0; k < t->ndeps; k++) {
                    double dt = t->on_start[k] ? start_s[t->deps[k]] : end_s[t->deps[k]];
                    if (dt > ready) ready = dt;
                }
                if (t->p2p == CS_HW_P2P_RECV) {
                    size_t j = send[t->tag];
                    if (!done[j]) break; /* its send not placed yet */
                    floor_end = end_s[j];
                }
                start_s[i] = ready;
                end_s[i] = ready + t->predicted_s > floor_end ? ready + t->predicted_s : floor_end;
                *fa = end_s[i];
                if (end_s[i] > last) last = end_s[i];
                done[i] = 1;
                left--, progress++;
            }
        }
        if (!progress) break; /* circular waits: check_p2p makes them unlikely; stop */
    }
    free(next), free(free_at), free(done), free(send);
    return last;
}

double cs_hw_schedule_predict(const cs_hw_schedule *s, double *start_s, double *end_s)
{
    if (s->stages > 0) return predict_stages(s, start_s, end_s);
    double free_at[CS_STREAM_COUNT] = {0};
    double last = 0;
    /* tasks are in id order per stream and dependencies point backwards,
     * so one pass in file order is a valid list schedule */
    for (size_t i = 0; i < s->n; i++) {
        const cs_hw_stask *t = &s->tasks[i];
        double ready = free_at[t->stream];
        for (int k = 0; k < t->ndeps; k++) {
            double dt = t->on_start[k] ? start_s[t->deps[k]] : end_s[t->deps[k]];
            if (dt > ready) ready = dt;
        }
        start_s[i] = ready;
        end_s[i] = ready + t->predicted_s;
        free_at[t->stream] = end_s[i];
        if (end_s[i] > last) last = end_s[i];
    }
    return last;
}

typedef struct edge {
    double t;
    int delta_comm, delta_compute;
} edge;

static int cmp_edge(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    return (x->t > y->t) - (x->t < y->t);
}

double cs_hw_exposed_comm_s(const cs_hw_schedule *s, const double *start_s, const double *end_s)
{
    edge *e = cs_xmalloc((2 * s->n + 1) * sizeof *e);
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++) {
        const cs_hw_stask *t = &s->tasks[i];
        if (!(end_s[i] > start_s[i])) continue;
        int comm = t->kind == CS_TASK_COLLECTIVE;
        int comp = !comm && t->stream == CS_STREAM_COMPUTE;
        if (!comm && !comp) continue;
        e[m++] = (edge){start_s[i], comm, comp};
        e[m++] = (edge){end_s[i], -comm, -comp};
    }
    qsort(e, m, sizeof *e, cmp_edge);
    double exposed = 0;
    int comm = 0, comp = 0;
    for (size_t i = 0; i < m; i++) {
        if (i > 0 && comm > 0 && comp == 0) exposed += e[i].t - e[i - 1].t;
        comm += e[i].delta_comm;
        comp += e[i].delta_compute;
    }
    free(e);
    return exposed;
}
