/* SPDX-License-Identifier: MIT */
/*
 * iteration.c - the iteration executor: streams, dependencies, rates that
 * change when compute and communication overlap, the memory timeline.
 *
 * Each running task keeps (remaining standalone seconds, rate); whenever
 * the set of running tasks changes, every running task is brought up to
 * date and gets a new completion event (versioned, as in network.c).
 * At most one task per stream runs, so each change costs O(streams).
 */
#include "train/iteration.h"

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/engine.h"

typedef struct exec {
    const cs_workload *w;
    const cs_training *t;
    cs_engine *eng;
    size_t n;
    char *state;          /* 0 waiting, 1 running, 2 done */
    double *remaining, *rate, *last_t;
    uint64_t *version;
    uint64_t versions;
    int *stream_tasks[CS_STREAM_COUNT];
    size_t stream_n[CS_STREAM_COUNT], stream_head[CS_STREAM_COUNT];
    int running[CS_STREAM_COUNT]; /* task id or -1 (set_running) */
    cs_stream_kind kind[CS_STREAM_COUNT];
    /* running now, by kind: compute streams (and of them, memory-bound
     * optimizer tasks), communication streams, collectives per group */
    int ncompute, noptimizer, ncopy, ncomm;
    int nside_copy;       /* memory-bound tasks running on non-compute streams */
    char *wake;           /* 1: a wake-up at the task's issue_s is pending */
    int per_group[CS_GROUP_COUNT];
    /* cs_workload_serial_groups: each group's collectives in id order, and
     * the next one allowed to start */
    int serial;
    int *group_tasks[CS_GROUP_COUNT];
    size_t group_n[CS_GROUP_COUNT], group_head[CS_GROUP_COUNT];
    double last_acc_t;
    double mem, mem_peak;
    size_t mem_cap;
    cs_iteration *out;
} exec;

static void on_done(cs_engine *e, void *ctx, int64_t id, int64_t version);

static void mem_change(exec *x, double delta, int task)
{
    if (delta == 0) return;
    cs_iteration *o = x->out;
    x->mem += delta;
    if (x->mem > x->mem_peak) {
        x->mem_peak = x->mem;
        o->peak_time_s = cs_engine_now(x->eng);
        snprintf(o->peak_task, sizeof o->peak_task, "%s", cs_workload_task(x->w, (size_t)task)->name);
    }
    if (o->nmem == x->mem_cap) {
        x->mem_cap = x->mem_cap ? 2 * x->mem_cap : 256;
        o->mem_t_s = cs_xrealloc(o->mem_t_s, x->mem_cap * sizeof(double));
        o->mem_bytes = cs_xrealloc(o->mem_bytes, x->mem_cap * sizeof(double));
    }
    o->mem_t_s[o->nmem] = cs_engine_now(x->eng);
    o->mem_bytes[o->nmem] = x->mem;
    o->nmem++;
}

/* Stream s starts task id, or (id = -1) finishes its task tk: the counts
 * by kind follow. tk is the task starting or finishing (the caller holds
 * it: no lookup on this per-event path). */
static void set_running(exec *x, int s, int id, const cs_task *tk)
{
    int d = id >= 0 ? 1 : -1;
    if (tk->kind == CS_TASK_MEMORY && x->kind[s] != CS_STREAM_KIND_COMPUTE) {
        /* a copy or cast on a side stream (FSDP's all-gather copy-in, the
         * post-backward stream's casts and divides): a kernel, not a
         * collective: it takes no link and is no communication */
        x->nside_copy += d;
    } else if (x->kind[s] == CS_STREAM_KIND_COMPUTE) {
        x->ncompute += d;
        if (tk->kind == CS_TASK_MEMORY) { /* the step, or a copy inside a micro-batch */
            if (tk->micro < 0) x->noptimizer += d;
            else x->ncopy += d;
        }
    } else if (x->kind[s] == CS_STREAM_KIND_COMM) {
        x->ncomm += d;
        x->per_group[tk->group] += d;
    }
    x->running[s] = id;
}

/* Integrates busy and exposed time since the last change. */
static void account(exec *x)
{
    double now = cs_engine_now(x->eng), dt = now - x->last_acc_t;
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
            if (x->kind[s] != CS_STREAM_KIND_COMM || id < 0) continue;
            const cs_task *tk = cs_workload_task(x->w, (size_t)id);
            if (tk->kind == CS_TASK_COLLECTIVE) x->out->exposed_by_op_s[tk->op] += dt / x->ncomm;
        }
    } else if (x->nside_copy > 0) { /* a side-stream copy nothing else hides */
        x->out->copies_s += dt;
        x->out->side_copies_s += dt;
    } else {
        x->out->cpu_wait_s += dt; /* idle: waiting for the CPU to issue a task */
    }
}

/* The rates while compute and communication overlap: with
 * comm_compute_slowdown >= 0 (the scenario's, else the cluster's:
 * cs_training_comm_compute_slowdown; set by the user or a fit) both slow by that
 * factor; unset (< 0), compute runs on the SMs the running collectives
 * leave it (each takes cs_workload_comm_sm_share, at most half the GPU
 * for all of them) and communication at its own speed. */
static void overlap_rates(const exec *x, double *compute, double *comm)
{
    *compute = *comm = 1.0;
    double s = cs_workload_comm_compute_slowdown(x->w, x->t);
    if (s >= 0) {
        double slow = 1.0 + s;
        if (x->ncomm > 0) *compute = 1.0 / slow;
        if (x->ncompute > 0) *comm = 1.0 / slow;
    } else if (x->ncomm > 0) {
        *compute = 1.0 - fmin(0.5, x->ncomm * cs_workload_comm_sm_share(x->w));
    }
}

static void reschedule(exec *x)
{
    double now = cs_engine_now(x->eng), rc, rm;
    overlap_rates(x, &rc, &rm);
    for (int s = 0; s < CS_STREAM_COUNT; s++) {
        int id = x->running[s];
        if (id < 0) continue;
        const cs_task *tk = cs_workload_task(x->w, (size_t)id);
        x->remaining[id] -= x->rate[id] * (now - x->last_t[id]);
        if (x->remaining[id] < 0) x->remaining[id] = 0;
        x->last_t[id] = now;
        /* a side-stream copy kernel streams HBM on every SM: it and the
         * compute stream's kernel take turns (work-conserving, each at
         * 1 / (1 + side copies)) rather than overlapping for free */
        double share = x->ncompute > 0 ? 1.0 / (1 + x->nside_copy) : 1.0;
        double r = 1.0; /* copies on a copy stream: the DMA engines' own rate */
        if (x->kind[s] == CS_STREAM_KIND_COMPUTE)
            r = rc * share;
        else if (tk->kind == CS_TASK_COLLECTIVE) /* a group's collectives share its links */
            r = rm / x->per_group[tk->group];
        else if (tk->kind == CS_TASK_MEMORY)
            r = share;
        if (r != x->rate[id] || x->version[id] == 0) {
            x->rate[id] = r;
            x->version[id] = ++x->versions;
            cs_engine_schedule(x->eng, now + x->remaining[id] / r, on_done, x, id,
                               (int64_t)x->version[id]);
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

/* The task may start now: the CPU thread has issued it (else a wake-up
 * at its issue time is set once) and its dependencies are met. */
static int ready(exec *x, const cs_task *tk)
{
    if (tk->issue_s > cs_engine_now(x->eng)) {
        if (!x->wake[tk->id]) {
            x->wake[tk->id] = 1;
            cs_engine_schedule(x->eng, tk->issue_s, on_wake, x, tk->id, 0);
        }
        return 0;
    }
    if (x->serial && tk->kind == CS_TASK_COLLECTIVE &&
        x->group_tasks[tk->group][x->group_head[tk->group]] != tk->id)
        return 0; /* an earlier collective of its group has not finished */
    return deps_met(x, tk);
}

/* Starts every stream head whose dependencies are met; repeats because a
 * start can satisfy an "on start" dependency of another stream. */
static int try_start(exec *x)
{
    int started, any = 0;
    do {
        started = 0;
        for (int s = 0; s < CS_STREAM_COUNT; s++) {
            if (x->running[s] >= 0 || x->stream_head[s] >= x->stream_n[s]) continue;
            int id = x->stream_tasks[s][x->stream_head[s]];
            const cs_task *tk = cs_workload_task(x->w, (size_t)id);
            if (!ready(x, tk)) continue;
            account(x);
            x->state[id] = 1;
            set_running(x, s, id, tk);
            x->out->start_s[id] = cs_engine_now(x->eng);
            x->remaining[id] = tk->duration_s;
            x->last_t[id] = cs_engine_now(x->eng);
            x->rate[id] = 0;
            x->version[id] = 0;
            mem_change(x, tk->mem_at_start, id);
            started = 1;
        }
        if (started) reschedule(x);
        any |= started;
    } while (started);
    return any;
}

static void on_done(cs_engine *e, void *ctx, int64_t id, int64_t version)
{
    exec *x = ctx;
    if (x->state[id] != 1 || x->version[id] != (uint64_t)version) return; /* superseded */
    const cs_task *tk = cs_workload_task(x->w, (size_t)id);
    account(x);
    x->state[id] = 2;
    x->out->end_s[id] = cs_engine_now(e);
    if (tk->recompute_s > 0) /* its share of the time it took (slowed while overlapped) */
        x->out->recompute_s +=
            (x->out->end_s[id] - x->out->start_s[id]) * tk->recompute_s / tk->duration_s;
    set_running(x, tk->stream, -1, tk);
    x->stream_head[tk->stream]++;
    if (x->serial && tk->kind == CS_TASK_COLLECTIVE) x->group_head[tk->group]++;
    mem_change(x, tk->mem_at_end, (int)id);
    /* one reschedule for the finish and what it lets start (the remaining
     * work of every running task is brought to now either way) */
    if (!try_start(x)) reschedule(x);
}

/* The CPU thread has issued task id: its stream may start it. */
static void on_wake(cs_engine *e, void *ctx, int64_t id, int64_t version)
{
    (void)e;
    (void)id;
    (void)version;
    try_start(ctx);
}

int cs_iteration_run(const cs_workload *w, const cs_training *t, cs_iteration *out, cs_diag *d)
{
    (void)d;
    memset(out, 0, sizeof *out);
    exec x = {.w = w, .t = t, .n = cs_workload_count(w), .out = out};
    size_t n = x.n;
    out->ntasks = n;
    out->start_s = cs_xcalloc(n, sizeof(double));
    out->end_s = cs_xcalloc(n, sizeof(double));
    x.state = cs_xcalloc(n, 1);
    x.wake = cs_xcalloc(n ? n : 1, 1);
    x.remaining = cs_xcalloc(n, sizeof(double));
    x.rate = cs_xcalloc(n, sizeof(double));
    x.last_t = cs_xcalloc(n, sizeof(double));
    x.version = cs_xcalloc(n, sizeof(uint64_t));
    for (int s = 0; s < CS_STREAM_COUNT; s++) {
        x.stream_tasks[s] = cs_xmalloc((n ? n : 1) * sizeof(int));
        x.running[s] = -1;
        x.kind[s] = cs_stream_kind_of((cs_stream)s);
    }
    x.serial = cs_workload_serial_groups(w);
    for (int g = 0; g < CS_GROUP_COUNT && x.serial; g++)
        x.group_tasks[g] = cs_xmalloc((n ? n : 1) * sizeof(int));
    for (size_t i = 0; i < n; i++) {
        const cs_task *tk = cs_workload_task(w, i);
        x.stream_tasks[tk->stream][x.stream_n[tk->stream]++] = (int)i;
        if (x.serial && tk->kind == CS_TASK_COLLECTIVE)
            x.group_tasks[tk->group][x.group_n[tk->group]++] = (int)i;
        if (tk->kind == CS_TASK_COLLECTIVE) out->wire_bytes_by_op[tk->op] += tk->wire_bytes;
    }
    x.eng = cs_engine_new();
    try_start(&x);
    cs_engine_run(x.eng);
    for (size_t i = 0; i < n; i++)
        if (x.state[i] != 2)
            CS_PANIC("iteration graph stalled at task %zu (%s)", i, cs_workload_task(w, i)->name);
    for (size_t i = 0; i < n; i++)
        if (out->end_s[i] > out->iteration_time_s) out->iteration_time_s = out->end_s[i];
    double it = out->iteration_time_s;
    out->dyn_peak_bytes = x.mem_peak;
    const cs_memory *m = cs_workload_memory(w);
    double states = m->params_bytes + m->grads_bytes + m->optimizer_bytes + m->buckets_bytes;
    out->peak_bytes = (states + x.mem_peak) * (1.0 + t->fragmentation) + m->cuda_context_bytes +
                      m->nccl_bytes;
    if (it > 0) {
        out->tokens_per_s = cs_workload_tokens(w) / it;
        out->tflops_per_gpu = cs_workload_model_flops_per_rank(w) / it / 1e12;
        out->mfu = cs_workload_model_flops_per_rank(w) / it / cs_workload_peak_flops(w);
        out->hfu = cs_workload_hardware_flops_per_rank(w) / it / cs_workload_peak_flops(w);
    }
    cs_engine_free(x.eng);
    free(x.state);
    free(x.wake);
    free(x.remaining);
    free(x.rate);
    free(x.last_t);
    free(x.version);
    for (int s = 0; s < CS_STREAM_COUNT; s++) free(x.stream_tasks[s]);
    for (int g = 0; g < CS_GROUP_COUNT; g++) free(x.group_tasks[g]);
    return 0;
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
    };
    for (int op = 0; op < CS_OP_COUNT; op++) out->exposed_s[op] = it->exposed_by_op_s[op];
}

void cs_breakdown_largest_gain(const cs_breakdown *a, const cs_breakdown *b, char *name,
                               size_t len, double *sa, double *sb)
{
    static const char *const parts[] = {"compute kernels", "recompute", "copies and casts",
                                        "optimizer step", "waiting for the CPU"};
    const double va[] = {a->kernels_s, a->recompute_s, a->copies_s, a->optimizer_s, a->cpu_wait_s};
    const double vb[] = {b->kernels_s, b->recompute_s, b->copies_s, b->optimizer_s, b->cpu_wait_s};
    int best = 0; /* < 5: parts[best]; else exposed op best - 5 */
    double d = -INFINITY;
    for (int i = 0; i < 5 + CS_OP_COUNT; i++) {
        double x = i < 5 ? va[i] : a->exposed_s[i - 5], y = i < 5 ? vb[i] : b->exposed_s[i - 5];
        if (y - x > d) d = y - x, best = i, *sa = x, *sb = y;
    }
    if (best < 5) snprintf(name, len, "%s", parts[best]);
    else snprintf(name, len, "exposed %s", cs_op_name((cs_op)(best - 5)));
}

void cs_iteration_free(cs_iteration *it)
{
    free(it->start_s);
    free(it->end_s);
    free(it->mem_t_s);
    free(it->mem_bytes);
    memset(it, 0, sizeof *it);
}
