/* SPDX-License-Identifier: MIT */
/*
 * schedule_timeline.c - the timeline a schedule predicts with no
 * contention, and a timeline's compute busy time and exposed
 * communication (a pipeline's: its slowest stage's) (schedule.h);
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

/* A send's tag and its task index; the sends sorted by tag, so a large tag
 * costs nothing (check_p2p: one send per tag). */
typedef struct send_at {
    int tag;
    size_t task;
} send_at;

static int cmp_send(const void *a, const void *b)
{
    const send_at *x = a, *y = b;
    return (x->tag > y->tag) - (x->tag < y->tag);
}

/* The placement of a pipeline's tasks in progress. */
typedef struct placing {
    const cs_hw_schedule *s;
    double *start_s, *end_s, *free_at, last;
    char *done;
    send_at *sends;
    size_t nsends, left;
} placing;

/* Task i's send (a receive's), or SIZE_MAX when none (check_p2p refuses). */
static size_t send_of(const placing *p, size_t i)
{
    send_at key = {p->s->tasks[i].tag, 0};
    const send_at *f = bsearch(&key, p->sends, p->nsends, sizeof key, cmp_send);
    return f ? f->task : (size_t)-1;
}

/* 1 when task i's dependencies are placed (they are earlier tasks of its
 * stage, but a batch may post a later send first). */
static int deps_placed(const placing *p, size_t i)
{
    const cs_hw_stask *t = &p->s->tasks[i];
    for (int k = 0; k < t->ndeps; k++)
        if (!p->done[t->deps[k]]) return 0;
    return 1;
}

/* Places task i on its stage's stream after its dependencies, ending no
 * earlier than floor_end. */
static void place(placing *p, size_t i, double floor_end)
{
    const cs_hw_stask *t = &p->s->tasks[i];
    double *fa = &p->free_at[(size_t)t->stage * CS_STREAM_COUNT + t->stream], ready = *fa;
    for (int k = 0; k < t->ndeps; k++) {
        double dt = t->on_start[k] ? p->start_s[t->deps[k]] : p->end_s[t->deps[k]];
        if (dt > ready) ready = dt;
    }
    p->start_s[i] = ready;
    p->end_s[i] = ready + t->predicted_s > floor_end ? ready + t->predicted_s : floor_end;
    *fa = p->end_s[i];
    if (p->end_s[i] > p->last) p->last = p->end_s[i];
    p->done[i] = 1;
    p->left--;
}

/* A batch is posted as a unit (torch.distributed batch_isend_irecv posts
 * every op of the batch before waiting on any; NCCL groups them,
 * ncclGroupStart/End): when receive i waits, the sends of its batch (the
 * run of its stage's p2p tasks of that batch) are placed first. The
 * number placed. */
static size_t post_batch_sends(placing *p, size_t i)
{
    const cs_hw_stask *r = &p->s->tasks[i];
    size_t placed = 0;
    for (size_t j = i + 1; j < p->s->n; j++) {
        const cs_hw_stask *t = &p->s->tasks[j];
        if (t->stage != r->stage) continue;
        if (!t->p2p || t->batch != r->batch) break;
        if (t->p2p == CS_HW_P2P_SEND && !p->done[j] && deps_placed(p, j)) place(p, j, 0), placed++;
    }
    return placed;
}

/* Stage st runs its tasks from next on, in file order, until a receive
 * whose send is not placed (*next: that receive). The number placed. */
static size_t advance(placing *p, int st, size_t *next)
{
    size_t placed = 0;
    for (size_t i = *next; i < p->s->n; i++, *next = i) {
        const cs_hw_stask *t = &p->s->tasks[i];
        if (t->stage != st || p->done[i]) continue;
        double floor_end = 0;
        if (t->p2p == CS_HW_P2P_RECV) {
            size_t j = send_of(p, i);
            if (j == (size_t)-1 || !p->done[j]) return placed + post_batch_sends(p, i);
            floor_end = p->end_s[j];
        }
        place(p, i, floor_end);
        placed++;
    }
    return placed;
}

/* Pipelines: every stage runs its tasks in file order on its own streams,
 * a receive ending no earlier than its send; the stages advance in turn
 * (the simulator's executor, train/pipeline.c), a stage stopping at a
 * receive whose send has not been placed. Every time starts at 0; *stuck:
 * a receive no stage can reach the send of (a circular wait), or
 * SIZE_MAX. O(tasks x stages) at worst. */
static double predict_stages(const cs_hw_schedule *s, double *start_s, double *end_s,
                             size_t *stuck)
{
    int P = s->stages;
    placing p = {.s = s, .start_s = start_s, .end_s = end_s, .left = s->n};
    p.sends = cs_xmalloc((s->n ? s->n : 1) * sizeof *p.sends);
    for (size_t i = 0; i < s->n; i++) {
        start_s[i] = end_s[i] = 0;
        if (s->tasks[i].p2p == CS_HW_P2P_SEND) p.sends[p.nsends++] = (send_at){s->tasks[i].tag, i};
    }
    qsort(p.sends, p.nsends, sizeof *p.sends, cmp_send);
    size_t *next = cs_xcalloc((size_t)P, sizeof *next);
    p.free_at = cs_xcalloc((size_t)P * CS_STREAM_COUNT, sizeof *p.free_at);
    p.done = cs_xcalloc(s->n ? s->n : 1, 1);
    for (size_t i = 0; i < s->n; i++) /* tasks of no stage: at 0 */
        if (s->tasks[i].stage < 0) p.left--, p.done[i] = 1;
    size_t progress = 1;
    while (p.left > 0 && progress) {
        progress = 0;
        for (int st = 0; st < P; st++) progress += advance(&p, st, &next[st]);
    }
    *stuck = (size_t)-1;
    for (int st = 0; p.left > 0 && st < P; st++)
        if (next[st] < s->n && (*stuck == (size_t)-1 || next[st] < *stuck)) *stuck = next[st];
    free(next), free(p.free_at), free(p.done), free(p.sends);
    return p.last;
}

int cs_hw_schedule_deadlock(const cs_hw_schedule *s, size_t *task)
{
    *task = (size_t)-1;
    if (s->stages <= 0) return 0;
    double *t = cs_xmalloc(2 * (s->n ? s->n : 1) * sizeof *t);
    predict_stages(s, t, t + s->n, task);
    free(t);
    return *task != (size_t)-1;
}

double cs_hw_schedule_predict(const cs_hw_schedule *s, double *start_s, double *end_s)
{
    size_t stuck;
    if (s->stages > 0) return predict_stages(s, start_s, end_s, &stuck);
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

/* A pipeline's slowest stage, the one whose task ends last (first in file
 * order on a tie): the simulator reports that stage's compute and exposed
 * time (sim/train/pipeline.c close_stages, fill_iteration). -1 without a
 * pipeline: every task counts. */
static int slowest_stage(const cs_hw_schedule *s, const double *end_s)
{
    int slowest = -1;
    double last = 0;
    for (size_t i = 0; s->stages > 0 && i < s->n; i++)
        if (s->tasks[i].stage >= 0 && (slowest < 0 || end_s[i] > last))
            slowest = s->tasks[i].stage, last = end_s[i];
    return slowest;
}

/* 1 when task t runs on stage st (-1: all of them); a task of no stage
 * runs on every one. */
static int on_stage(const cs_hw_stask *t, int st)
{
    return st < 0 || t->stage < 0 || t->stage == st;
}

double cs_hw_compute_busy_s(const cs_hw_schedule *s, const double *start_s, const double *end_s)
{
    int st = slowest_stage(s, end_s);
    double busy = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->tasks[i].stream == CS_STREAM_COMPUTE && on_stage(&s->tasks[i], st))
            busy += end_s[i] - start_s[i];
    return busy;
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
    int st = slowest_stage(s, end_s);
    for (size_t i = 0; i < s->n; i++) {
        const cs_hw_stask *t = &s->tasks[i];
        if (!(end_s[i] > start_s[i]) || !on_stage(t, st)) continue;
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
