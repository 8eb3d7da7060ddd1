/* SPDX-License-Identifier: MIT */
/*
 * iteration.c - the iteration executor: streams, dependencies, rates that
 * change when compute and communication overlap, the memory timeline.
 *
 * Each running task keeps (remaining standalone seconds, rate); whenever
 * the set of running tasks changes, every running task is brought up to
 * date and gets a new completion event (versioned, as in network.c).
 * At most one task per stream runs, so each change costs O(streams) per
 * rank class (a collective's rate, the slowest class's: O(classes) more).
 */
#include "train/iteration.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/engine.h"

/* One class's timeline (one rank's streams). */
typedef struct exec {
    struct job *j;
    double slow;          /* its kernels' slowdown (1: a normal rank) */
    char *state;          /* 0 waiting, 1 running, 2 done */
    double *remaining, *rate, *last_t;
    uint64_t *version;
    size_t stream_head[CS_STREAM_COUNT];
    int running[CS_STREAM_COUNT]; /* task id or -1 (set_running) */
    /* running now, by kind: compute streams (and of them, memory-bound
     * optimizer tasks), communication streams, collectives per group */
    int ncompute, noptimizer, ncopy, ncomm;
    int nside_copy;       /* memory-bound tasks running on communication streams */
    int ndma;             /* copies on copy streams (the host link's DMA) */
    int per_group[CS_GROUP_COUNT];
    size_t group_head[CS_GROUP_COUNT]; /* the next collective of each group allowed */
    double rc, rm;        /* overlap_rates, set by each reschedule */
    double last_acc_t;
    double mem, mem_peak;
    size_t mem_cap;
    cs_iteration *out;
} exec;

/* What every class shares: the graph, the clock, the streams' task lists. */
typedef struct job {
    const cs_workload *w;
    const cs_training *t;
    cs_engine *eng;
    size_t n;
    uint64_t versions;
    int *stream_tasks[CS_STREAM_COUNT];
    size_t stream_n[CS_STREAM_COUNT];
    cs_stream_kind kind[CS_STREAM_COUNT];
    char *wake;           /* 1: a wake-up at the task's issue_s is pending */
    /* cs_workload_serial_groups: each group's collectives in id order */
    int serial;
    int *group_tasks[CS_GROUP_COUNT];
    size_t group_n[CS_GROUP_COUNT];
    int nx;
    exec *x;              /* nx classes */
} job;

static void on_done(cs_engine *e, void *ctx, int64_t id, int64_t version);

static void mem_change(exec *x, double delta, int task)
{
    if (delta == 0) return;
    cs_iteration *o = x->out;
    double now = cs_engine_now(x->j->eng);
    x->mem += delta;
    if (x->mem > x->mem_peak) {
        x->mem_peak = x->mem;
        o->peak_time_s = now;
        snprintf(o->peak_task, sizeof o->peak_task, "%s", cs_workload_task(x->j->w, (size_t)task)->name);
    }
    if (o->nmem == x->mem_cap) {
        x->mem_cap = x->mem_cap ? 2 * x->mem_cap : 256;
        o->mem_t_s = cs_xrealloc(o->mem_t_s, x->mem_cap * sizeof(double));
        o->mem_bytes = cs_xrealloc(o->mem_bytes, x->mem_cap * sizeof(double));
    }
    o->mem_t_s[o->nmem] = now;
    o->mem_bytes[o->nmem] = x->mem;
    o->nmem++;
}

/* Stream s starts task id, or (id = -1) finishes its task tk: the counts
 * by kind follow. tk is the task starting or finishing (the caller holds
 * it: no lookup on this per-event path). */
static void set_running(exec *x, int s, int id, const cs_task *tk)
{
    int d = id >= 0 ? 1 : -1;
    cs_stream_kind kind = x->j->kind[s];
    if (kind == CS_STREAM_KIND_COPY) {
        /* a DMA copy (activation offloading's): neither compute nor
         * communication, and it takes no SM */
        x->ndma += d;
    } else if (tk->kind == CS_TASK_MEMORY && kind != CS_STREAM_KIND_COMPUTE) {
        /* a copy or cast on a side stream (FSDP's all-gather copy-in, the
         * post-backward stream's casts and divides): a kernel, not a
         * collective: it takes no link and is no communication */
        x->nside_copy += d;
    } else if (kind == CS_STREAM_KIND_COMPUTE) {
        x->ncompute += d;
        if (tk->kind == CS_TASK_MEMORY) { /* the step, or a copy inside a micro-batch */
            if (tk->micro < 0) x->noptimizer += d;
            else x->ncopy += d;
        }
    } else if (kind == CS_STREAM_KIND_COMM) {
        x->ncomm += d;
        x->per_group[tk->group] += d;
    }
    x->running[s] = id;
}

/* Integrates busy and exposed time since the class's last change. */
static void account(exec *x)
{
    double now = cs_engine_now(x->j->eng), dt = now - x->last_acc_t;
    x->last_acc_t = now;
    if (dt <= 0) return;
    if (x->ncompute > 0) {
        x->out->compute_s += dt;
        if (x->noptimizer > 0) x->out->optimizer_s += dt;
        if (x->ncopy > 0) x->out->copies_s += dt;
    } else if (x->ncomm > 0) {
        x->out->exposed_comm_s += dt;
        for (int s = 0; s < CS_STREAM_COUNT; s++) {
            int id = x->running[s];
            if (x->j->kind[s] != CS_STREAM_KIND_COMM || id < 0) continue;
            const cs_task *tk = cs_workload_task(x->j->w, (size_t)id);
            if (tk->kind == CS_TASK_COLLECTIVE) x->out->exposed_by_op_s[tk->op] += dt / x->ncomm;
        }
    } else if (x->nside_copy > 0 || x->ndma > 0) { /* a side-stream copy nothing else hides */
        x->out->copies_s += dt;
        x->out->side_copies_s += dt;
    } else {
        /* idle: waiting for the CPU to issue a task (or, on a class that
         * is not the slowest, for a slower rank at a collective) */
        x->out->cpu_wait_s += dt;
    }
}

/* The rates while compute and communication overlap on class x: with
 * comm_compute_slowdown >= 0 (the scenario's, else the cluster's:
 * cs_training_comm_compute_slowdown; set by the user or a fit) both slow by that
 * factor; unset (< 0), compute runs on the SMs the running collectives
 * leave it (each takes cs_workload_comm_sm_share, at most half the GPU
 * for all of them) and communication at its own speed. */
static void overlap_rates(exec *x)
{
    x->rc = x->rm = 1.0;
    double s = cs_workload_comm_compute_slowdown(x->j->w, x->j->t);
    if (s >= 0) {
        double slow = 1.0 + s;
        if (x->ncomm > 0) x->rc = 1.0 / slow;
        if (x->ncompute > 0) x->rm = 1.0 / slow;
    } else if (x->ncomm > 0) {
        x->rc = 1.0 - fmin(0.5, x->ncomm * cs_workload_comm_sm_share(x->j->w));
    }
}

/* The rate of tk, running on stream s of class x (overlap_rates set). */
static inline double rate_on(const exec *x, int s, const cs_task *tk)
{
    /* a side-stream copy kernel streams HBM on every SM: it and the
     * compute stream's kernel take turns (work-conserving, each at
     * 1 / (1 + side copies)) rather than overlapping for free */
    double share = x->ncompute > 0 ? 1.0 / (1 + x->nside_copy) : 1.0;
    if (x->j->kind[s] == CS_STREAM_KIND_COMPUTE) return x->rc * share;
    if (x->j->kind[s] == CS_STREAM_KIND_COPY) return 1.0; /* the DMA engines' own rate */
    if (tk->kind == CS_TASK_COLLECTIVE) /* a group's collectives share its links */
        return x->rm / x->per_group[tk->group];
    return share; /* a memory-bound kernel on a communication stream */
}

/* Brings every running task of every class up to date and gives those
 * whose rate changed a new completion event. A collective runs at the
 * slowest class's rate, on every class alike; class 0's copy alone has
 * events (on_done ends it on every class). */
static void reschedule(job *j)
{
    double now = cs_engine_now(j->eng);
    for (int k = 0; k < j->nx; k++) overlap_rates(&j->x[k]);
    for (int k = 0; k < j->nx; k++) {
        exec *x = &j->x[k];
        for (int s = 0; s < CS_STREAM_COUNT; s++) {
            int id = x->running[s];
            if (id < 0) continue;
            const cs_task *tk = cs_workload_task(j->w, (size_t)id);
            x->remaining[id] -= x->rate[id] * (now - x->last_t[id]);
            if (x->remaining[id] < 0) x->remaining[id] = 0;
            x->last_t[id] = now;
            double r = rate_on(x, s, tk);
            int coll = tk->kind == CS_TASK_COLLECTIVE;
            for (int c = 0; coll && j->nx > 1 && c < j->nx; c++)
                r = fmin(r, rate_on(&j->x[c], s, tk));
            if (r != x->rate[id] || x->version[id] == 0) {
                x->rate[id] = r;
                x->version[id] = ++j->versions;
                if (!coll || k == 0)
                    cs_engine_schedule(j->eng, now + x->remaining[id] / r, on_done, j,
                                       (int64_t)((size_t)k * j->n + (size_t)id),
                                       (int64_t)x->version[id]);
            }
        }
    }
}

static int deps_met(const exec *x, const cs_task *tk)
{
    for (int k = 0; k < tk->ndeps; k++) {
        char st = x->state[tk->deps[k]];
        if (tk->on_start[k] ? st == 0 : st != 2) return 0;
    }
    return 1;
}

static void on_wake(cs_engine *e, void *ctx, int64_t id, int64_t version);

/* The task may start now on class x: the CPU thread has issued it (else
 * a wake-up at its issue time is set once) and its dependencies are met. */
static inline int ready(exec *x, const cs_task *tk)
{
    job *j = x->j;
    if (tk->issue_s > cs_engine_now(j->eng)) {
        if (!j->wake[tk->id]) {
            j->wake[tk->id] = 1;
            cs_engine_schedule(j->eng, tk->issue_s, on_wake, j, tk->id, 0);
        }
        return 0;
    }
    if (j->serial && tk->kind == CS_TASK_COLLECTIVE &&
        j->group_tasks[tk->group][x->group_head[tk->group]] != tk->id)
        return 0; /* an earlier collective of its group has not finished */
    return deps_met(x, tk);
}

/* A collective may start: it heads its idle stream and is ready on every
 * class (the last rank has reached it). */
static int ready_all(job *j, const cs_task *tk)
{
    int s = tk->stream;
    for (int k = 0; k < j->nx; k++) {
        exec *x = &j->x[k];
        if (x->running[s] >= 0 || x->stream_head[s] >= j->stream_n[s] ||
            j->stream_tasks[s][x->stream_head[s]] != tk->id || !ready(x, tk))
            return 0;
    }
    return 1;
}

static inline void start_task(exec *x, int s, int id, const cs_task *tk)
{
    double now = cs_engine_now(x->j->eng);
    account(x);
    x->state[id] = 1;
    set_running(x, s, id, tk);
    x->out->start_s[id] = now;
    /* a straggler's kernels are slower; a collective's price has it */
    x->remaining[id] = tk->kind == CS_TASK_COLLECTIVE ? tk->duration_s : tk->duration_s * x->slow;
    x->last_t[id] = now;
    x->rate[id] = 0;
    x->version[id] = 0;
    mem_change(x, tk->mem_at_start, id);
}

/* Starts every stream head whose dependencies are met, on every class (a
 * collective on all at once); repeats because a start can satisfy an "on
 * start" dependency of another stream. */
static int try_start(job *j)
{
    int started, any = 0;
    do {
        started = 0;
        for (int k = 0; k < j->nx; k++) {
            exec *x = &j->x[k];
            for (int s = 0; s < CS_STREAM_COUNT; s++) {
                if (x->running[s] >= 0 || x->stream_head[s] >= j->stream_n[s]) continue;
                int id = j->stream_tasks[s][x->stream_head[s]];
                const cs_task *tk = cs_workload_task(j->w, (size_t)id);
                if (tk->kind != CS_TASK_COLLECTIVE || j->nx == 1) {
                    if (!ready(x, tk)) continue;
                    start_task(x, s, id, tk);
                } else {
                    if (!ready_all(j, tk)) continue;
                    for (int c = 0; c < j->nx; c++) start_task(&j->x[c], s, id, tk);
                }
                started = 1;
            }
        }
        if (started) reschedule(j);
        any |= started;
    } while (started);
    return any;
}

static inline void finish_task(exec *x, int id, const cs_task *tk)
{
    cs_iteration *o = x->out;
    account(x);
    x->state[id] = 2;
    o->end_s[id] = cs_engine_now(x->j->eng);
    if (tk->recompute_s > 0) /* its share of the time it took (slowed while overlapped) */
        o->recompute_s += (o->end_s[id] - o->start_s[id]) * tk->recompute_s / tk->duration_s;
    set_running(x, tk->stream, -1, tk);
    x->stream_head[tk->stream]++;
    if (x->j->serial && tk->kind == CS_TASK_COLLECTIVE) x->group_head[tk->group]++;
    mem_change(x, tk->mem_at_end, id);
}

static void on_done(cs_engine *e, void *ctx, int64_t ev, int64_t version)
{
    (void)e;
    job *j = ctx;
    int k = (int)((size_t)ev / j->n), id = (int)((size_t)ev % j->n);
    exec *x = &j->x[k];
    if (x->state[id] != 1 || x->version[id] != (uint64_t)version) return; /* superseded */
    const cs_task *tk = cs_workload_task(j->w, (size_t)id);
    if (tk->kind != CS_TASK_COLLECTIVE) finish_task(x, id, tk);
    else
        for (int c = 0; c < j->nx; c++) finish_task(&j->x[c], id, tk);
    /* one reschedule for the finish and what it lets start (the remaining
     * work of every running task is brought to now either way) */
    if (!try_start(j)) reschedule(j);
}

/* The CPU thread has issued task id: its stream may start it. */
static void on_wake(cs_engine *e, void *ctx, int64_t id, int64_t version)
{
    (void)e;
    (void)id;
    (void)version;
    try_start(ctx);
}

static void exec_init(exec *x, job *j, double slow, cs_iteration *out)
{
    size_t n = j->n;
    memset(out, 0, sizeof *out);
    *x = (exec){.j = j, .slow = slow, .out = out};
    out->ntasks = n;
    out->start_s = cs_xcalloc(n, sizeof(double));
    out->end_s = cs_xcalloc(n, sizeof(double));
    x->state = cs_xcalloc(n ? n : 1, 1);
    x->remaining = cs_xcalloc(n, sizeof(double));
    x->rate = cs_xcalloc(n, sizeof(double));
    x->last_t = cs_xcalloc(n, sizeof(double));
    x->version = cs_xcalloc(n, sizeof(uint64_t));
    for (int s = 0; s < CS_STREAM_COUNT; s++) x->running[s] = -1;
}

/* The class's totals once the run is over; frees its work arrays. */
static void exec_finish(exec *x)
{
    const job *j = x->j;
    cs_iteration *out = x->out;
    for (size_t i = 0; i < j->n; i++) {
        const cs_task *tk = cs_workload_task(j->w, i);
        if (x->state[i] != 2) CS_PANIC("iteration graph stalled at task %zu (%s)", i, tk->name);
        if (out->end_s[i] > out->iteration_time_s) out->iteration_time_s = out->end_s[i];
        if (tk->kind == CS_TASK_COLLECTIVE) out->wire_bytes_by_op[tk->op] += tk->wire_bytes;
    }
    double it = out->iteration_time_s;
    out->dyn_peak_bytes = x->mem_peak;
    const cs_memory *m = cs_workload_memory(j->w);
    double states = m->params_bytes + m->grads_bytes + m->optimizer_bytes + m->buckets_bytes;
    out->peak_bytes = (states + x->mem_peak) * (1.0 + cs_training_flat_fragmentation(j->t)) + m->cuda_context_bytes +
                      m->nccl_bytes;
    if (it > 0) {
        out->tokens_per_s = cs_workload_tokens(j->w) / it;
        out->tflops_per_gpu = cs_workload_model_flops_per_rank(j->w) / it / 1e12;
        out->mfu = cs_workload_model_flops_per_rank(j->w) / it / cs_workload_peak_flops(j->w);
        out->hfu = cs_workload_hardware_flops_per_rank(j->w) / it / cs_workload_peak_flops(j->w);
    }
    free(x->state);
    free(x->remaining);
    free(x->rate);
    free(x->last_t);
    free(x->version);
}

static double *dup_doubles(const double *p, size_t n)
{
    double *q = cs_xmalloc((n ? n : 1) * sizeof(double));
    if (n) memcpy(q, p, n * sizeof(double));
    return q;
}

/* out = the slowest class's run (its timeline copied), with the highest
 * class's memory peak; out owns the classes. */
static void take_classes(cs_iteration *out, cs_iteration_class *cls, int nc)
{
    int slowest = 0, high = 0;
    for (int k = 1; k < nc; k++) {
        if (cls[k].it.iteration_time_s > cls[slowest].it.iteration_time_s) slowest = k;
        if (cls[k].it.peak_bytes > cls[high].it.peak_bytes) high = k;
    }
    const cs_iteration *s = &cls[slowest].it, *h = &cls[high].it;
    *out = *s;
    out->start_s = dup_doubles(s->start_s, s->ntasks);
    out->end_s = dup_doubles(s->end_s, s->ntasks);
    out->mem_t_s = dup_doubles(s->mem_t_s, s->nmem);
    out->mem_bytes = dup_doubles(s->mem_bytes, s->nmem);
    out->dyn_peak_bytes = h->dyn_peak_bytes;
    out->peak_bytes = h->peak_bytes;
    out->peak_time_s = h->peak_time_s;
    memcpy(out->peak_task, h->peak_task, sizeof out->peak_task);
    out->nclasses = nc;
    out->slowest = slowest;
    out->classes = cls;
}

int cs_iteration_run_ranks(const cs_workload *w, const cs_training *t,
                           const cs_rank_class *classes, int nclasses, cs_iteration *out,
                           cs_diag *d)
{
    (void)d;
    size_t n = cs_workload_count(w);
    int nx = nclasses > 0 ? nclasses : 1;
    job j = {.w = w, .t = t, .n = n, .nx = nx, .x = cs_xcalloc((size_t)nx, sizeof(exec))};
    cs_iteration_class *cls = nclasses > 0 ? cs_xcalloc((size_t)nclasses, sizeof *cls) : NULL;
    j.wake = cs_xcalloc(n ? n : 1, 1);
    for (int s = 0; s < CS_STREAM_COUNT; s++) {
        j.stream_tasks[s] = cs_xmalloc((n ? n : 1) * sizeof(int));
        j.kind[s] = cs_stream_kind_of((cs_stream)s);
    }
    j.serial = cs_workload_serial_groups(w);
    for (int g = 0; g < CS_GROUP_COUNT && j.serial; g++)
        j.group_tasks[g] = cs_xmalloc((n ? n : 1) * sizeof(int));
    for (size_t i = 0; i < n; i++) {
        const cs_task *tk = cs_workload_task(w, i);
        j.stream_tasks[tk->stream][j.stream_n[tk->stream]++] = (int)i;
        if (j.serial && tk->kind == CS_TASK_COLLECTIVE)
            j.group_tasks[tk->group][j.group_n[tk->group]++] = (int)i;
    }
    for (int k = 0; k < nx; k++) {
        if (cls) cls[k].ranks = classes[k];
        exec_init(&j.x[k], &j, cls ? classes[k].slowdown : 1.0, cls ? &cls[k].it : out);
    }
    j.eng = cs_engine_new();
    try_start(&j);
    cs_engine_run(j.eng);
    for (int k = 0; k < nx; k++) exec_finish(&j.x[k]);
    if (cls) take_classes(out, cls, nclasses);
    cs_engine_free(j.eng);
    free(j.x);
    free(j.wake);
    for (int s = 0; s < CS_STREAM_COUNT; s++) free(j.stream_tasks[s]);
    for (int g = 0; g < CS_GROUP_COUNT; g++) free(j.group_tasks[g]);
    return 0;
}

int cs_iteration_run(const cs_workload *w, const cs_training *t, cs_iteration *out, cs_diag *d)
{
    return cs_iteration_run_ranks(w, t, NULL, 0, out, d);
}

void cs_iteration_breakdown(const cs_iteration *it, cs_breakdown *out)
{
    *out = (cs_breakdown){
        .kernels_s = it->compute_s - it->recompute_s - (it->copies_s - it->side_copies_s) -
                     it->optimizer_s,
        .recompute_s = it->recompute_s,
        .copies_s = it->copies_s,
        .optimizer_s = it->optimizer_s,
        .cpu_wait_s = it->cpu_wait_s,
        .pipeline_bubble_s = it->pipeline_bubble_s,
    };
    for (int op = 0; op < CS_OP_COUNT; op++) out->exposed_s[op] = it->exposed_by_op_s[op];
}

/* The parts of a cs_breakdown other than the exposed time per primitive,
 * in the order cs_breakdown_largest_gain compares them (before the
 * primitives; ties keep the earlier). */
static const struct {
    const char *name;
    size_t off; /* of a double in cs_breakdown */
} breakdown_parts[] = {
    {"compute kernels", offsetof(cs_breakdown, kernels_s)},
    {"recompute", offsetof(cs_breakdown, recompute_s)},
    {"copies and casts", offsetof(cs_breakdown, copies_s)},
    {"optimizer step", offsetof(cs_breakdown, optimizer_s)},
    {"waiting for the CPU", offsetof(cs_breakdown, cpu_wait_s)},
    {"pipeline bubble", offsetof(cs_breakdown, pipeline_bubble_s)},
};
#define NPARTS (sizeof breakdown_parts / sizeof breakdown_parts[0])

static double part_s(const cs_breakdown *b, size_t i)
{
    return *(const double *)((const char *)b + breakdown_parts[i].off);
}

void cs_breakdown_largest_gain(const cs_breakdown *a, const cs_breakdown *b, char *name,
                               size_t len, double *sa, double *sb)
{
    size_t best = 0; /* < NPARTS: breakdown_parts[best]; else exposed op best - NPARTS */
    double d = -INFINITY;
    for (size_t i = 0; i < NPARTS + CS_OP_COUNT; i++) {
        double x = i < NPARTS ? part_s(a, i) : a->exposed_s[i - NPARTS];
        double y = i < NPARTS ? part_s(b, i) : b->exposed_s[i - NPARTS];
        if (y - x > d) d = y - x, best = i, *sa = x, *sb = y;
    }
    if (best < NPARTS) snprintf(name, len, "%s", breakdown_parts[best].name);
    else snprintf(name, len, "exposed %s", cs_op_name((cs_op)(best - NPARTS)));
}

void cs_iteration_free(cs_iteration *it)
{
    for (int k = 0; k < it->nclasses; k++) cs_iteration_free(&it->classes[k].it);
    free(it->classes);
    free(it->start_s);
    free(it->end_s);
    free(it->mem_t_s);
    free(it->mem_bytes);
    memset(it, 0, sizeof *it);
}
