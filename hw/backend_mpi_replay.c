/* SPDX-License-Identifier: MIT */
/*
 * backend_mpi_replay.c - the MPI backend's replay executor: one thread per
 * rank runs a replay plan (backend.h) with its streams and dependencies.
 *
 * Collectives are non-blocking (MPI_I*), one communicator per (group,
 * stream) so that streams progress independently and every communicator
 * sees its collectives in the same order on all ranks (MPI requires it).
 * Compute and memory tasks run on the thread and call MPI_Test between
 * GEMM blocks / copy chunks (progress()); a compute task is the plan's
 * reps SGEMMs of m x n x k (the caps and chunk: backend_mpi.c's table), which is when running
 * collectives progress and when their completion is seen: end times are
 * late by at most one block. Non-blocking collectives use Open MPI's
 * libnbc algorithms, so --algo affects only blocking calls (bench).
 *
 * Task states: 0 waiting, 1 started, 2 done. Each stream runs its tasks in
 * plan order; a task starts when every dependency has started (on_start)
 * or ended. Peak memory is the largest resident set over ranks
 * (getrusage).
 *
 * Pipelines: a rank runs its stage's tasks only (the others count as done
 * at 0). A batch of p2p tasks (a pass's send and the next pass's receive)
 * is posted as MPI_Isend / MPI_Irecv on the pp group's communicator (the
 * peer's rank there is its stage), tagged with the schedule's tag, and
 * ends when MPI_Testall sees every request done: Megatron-LM's
 * p2p_communication._batched_p2p_ops (torch.distributed.batch_isend_irecv
 * of send_forward_recv_backward's pair, then req.wait() on all), which is
 * what keeps 1F1B free of deadlock: two neighbours that each send to the
 * other post both sides before waiting for either (a blocking MPI_Send
 * pair of large messages would wait on each other).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "backend_mpi.h"
#include "base/error.h"
#include "cpugemm.h"
#include "pattern.h"
#include "rplan.h"
#include "train/workload.h"

#define NSTREAMS CS_STREAM_COUNT
#define NGROUPS CS_GROUP_COUNT

struct mpi_replay {
    MPI_Comm comm[NGROUPS][NSTREAMS];
    char *send[NSTREAMS], *recv[NSTREAMS];
    int *counts[NSTREAMS]; /* reduce_scatter's, one per rank of the world */
    float *ga, *gb, *gc;
    char *csrc, *cdst;
    size_t ccap;
    /* the iteration being run */
    const cs_hw_rplan *plan;
    char *state;
    double *start, *end;
    size_t *queue[NSTREAMS], qlen[NSTREAMS], head[NSTREAMS];
    int running[NSTREAMS]; /* collective running on each stream, or -1 */
    int local_stream;      /* stream whose compute/memory task runs now, or -1 */
    size_t ndone;
    int rank;              /* this process's world rank */
    MPI_Request req[NSTREAMS];
    double t0;
    /* p2p: the batch running on each stream (nbatch tasks, bidx[] theirs) */
    char *p2p_send, *p2p_recv; /* one send buffer (read only), a receive buffer per task */
    size_t p2p_bytes;
    int nbatch[NSTREAMS];
    size_t bidx[NSTREAMS][CS_HW_P2P_BATCH_MAX];
    MPI_Request breq[NSTREAMS][CS_HW_P2P_BATCH_MAX];
};

static volatile unsigned char sink;

/* Every collective's counts fit MPI's int: 0, or CS_HW_ENOMEM after a message. */
static int check_counts(const cs_hw_ctx *c, const cs_hw_rplan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        const cs_hw_rtask *t = &p->tasks[i];
        if (t->kind != CS_TASK_COLLECTIVE) continue;
        int gsize = cs_hw_rplan_group_size(p, c->size, t->group);
        if (cs_hw_recv_count(t->op, t->count, gsize) > INT_MAX ||
            cs_hw_send_count(t->op, t->count, gsize) > INT_MAX) {
            fprintf(stderr, "collsim-hw: rank %d: task %zu: count exceeds MPI's int range\n",
                    c->rank, i);
            return CS_HW_ENOMEM;
        }
    }
    return 0;
}

/* Every p2p tag is within MPI_TAG_UB: 0, or CS_HW_EBACKEND after a message. */
static int check_tags(const cs_hw_ctx *c, const cs_hw_rplan *p)
{
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    for (size_t i = 0; flag && i < p->n; i++)
        if (p->tasks[i].p2p && p->tasks[i].tag > *ub) {
            fprintf(stderr, "collsim-hw: rank %d: task %zu: p2p tag %d exceeds MPI_TAG_UB %d "
                            "(fewer micro-batches)\n", c->rank, i, p->tasks[i].tag, *ub);
            return CS_HW_EBACKEND;
        }
    return 0;
}

static int alloc_buffers(cs_hw_ctx *c, mpi_replay *rp, const cs_hw_rplan *p,
                         const cs_hw_rneeds *need)
{
    size_t n = p->n ? p->n : 1;
    for (int s = 0; s < NSTREAMS; s++) {
        rp->send[s] = calloc(need->send_bytes[s] ? need->send_bytes[s] : 1, 1);
        rp->recv[s] = calloc(need->recv_bytes[s] ? need->recv_bytes[s] : 1, 1);
        if (!rp->send[s] || !rp->recv[s]) goto nomem;
        rp->queue[s] = cs_xmalloc(n * sizeof(size_t));
        rp->counts[s] = cs_xmalloc((size_t)c->size * sizeof(int));
    }
    size_t gemm = need->gemm_a; /* one size for A, B and C */
    if (need->gemm_b > gemm) gemm = need->gemm_b;
    if (need->gemm_c > gemm) gemm = need->gemm_c;
    rp->ga = malloc(gemm * sizeof(float));
    rp->gb = malloc(gemm * sizeof(float));
    rp->gc = malloc(gemm * sizeof(float));
    rp->csrc = calloc(need->copy_bytes, 1);
    rp->cdst = calloc(need->copy_bytes, 1);
    rp->ccap = need->copy_bytes;
    if (!rp->ga || !rp->gb || !rp->gc || !rp->csrc || !rp->cdst) goto nomem;
    for (size_t i = 0; i < gemm; i++)
        rp->ga[i] = rp->gb[i] = (float)cs_hw_pattern_value(c->rank, i);
    rp->p2p_bytes = need->p2p_bytes ? need->p2p_bytes : 1;
    rp->p2p_send = calloc(rp->p2p_bytes, 1);
    rp->p2p_recv = calloc(rp->p2p_bytes, CS_HW_P2P_BATCH_MAX);
    if (!rp->p2p_send || !rp->p2p_recv) goto nomem;
    rp->state = cs_xmalloc(n);
    rp->start = cs_xmalloc(n * sizeof(double));
    rp->end = cs_xmalloc(n * sizeof(double));
    return 0;
nomem:
    fprintf(stderr, "collsim-hw: rank %d: cannot allocate replay buffers\n", c->rank);
    return CS_HW_ENOMEM;
}

int cs_hw__mpi_replay_setup(cs_hw_ctx *c, const cs_hw_rplan *p)
{
    if (!c->replay) {
        c->replay = cs_xcalloc(1, sizeof *c->replay);
        for (int g = 0; g < NGROUPS; g++)
            for (int s = 0; s < NSTREAMS; s++) c->replay->comm[g][s] = MPI_COMM_NULL;
    }
    mpi_replay *rp = c->replay;
    cs_hw_rneeds need;
    cs_hw_rplan_needs(p, c->size, cs_hw_backend_mpi()->replay_copy_chunk, &need);
    /* every rank runs the same plan, so these collective calls match */
    for (int g = 0; g < NGROUPS; g++)
        for (int s = 0; s < NSTREAMS; s++)
            if (need.used[g][s] && rp->comm[g][s] == MPI_COMM_NULL)
                MPI_TRY(c, MPI_Comm_split(MPI_COMM_WORLD, cs_hw_rplan_group_color(p, g, c->rank),
                                          c->rank, &rp->comm[g][s]));
    int rc = check_counts(c, p);
    if (!rc) rc = check_tags(c, p);
    return rc ? rc : alloc_buffers(c, rp, p, &need);
}

void cs_hw__mpi_replay_free(cs_hw_ctx *c)
{
    mpi_replay *rp = c->replay;
    if (!rp) return;
    for (int g = 0; g < NGROUPS; g++)
        for (int s = 0; s < NSTREAMS; s++)
            if (rp->comm[g][s] != MPI_COMM_NULL) MPI_Comm_free(&rp->comm[g][s]);
    for (int s = 0; s < NSTREAMS; s++) {
        free(rp->send[s]);
        free(rp->recv[s]);
        free(rp->counts[s]);
        free(rp->queue[s]);
    }
    free(rp->ga);
    free(rp->gb);
    free(rp->gc);
    free(rp->csrc);
    free(rp->cdst);
    free(rp->p2p_send);
    free(rp->p2p_recv);
    free(rp->state);
    free(rp->start);
    free(rp->end);
    free(rp);
    c->replay = NULL;
}

static int task_ready(const mpi_replay *rp, const cs_hw_rtask *t)
{
    for (int k = 0; k < t->ndeps; k++) {
        char s = rp->state[t->deps[k]];
        if (t->on_start[k] ? s < 1 : s < 2) return 0;
    }
    return 1;
}

static void mark_start(mpi_replay *rp, size_t i)
{
    rp->state[i] = 1;
    rp->start[i] = MPI_Wtime() - rp->t0;
}

static void mark_end(mpi_replay *rp, size_t i)
{
    rp->end[i] = MPI_Wtime() - rp->t0;
    rp->state[i] = 2;
    rp->ndone++;
}

/* Posts the p2p batch at the head of stream s (its tasks have no
 * dependencies: a stage's order is its stream's): non-blocking sends and
 * receives on the pp group's communicator. 0, or -1 after a failure. */
static int start_batch(cs_hw_ctx *c, mpi_replay *rp, int s)
{
    const cs_hw_rplan *p = rp->plan;
    int nb = cs_hw_rplan_batch(p, &rp->queue[s][rp->head[s]], rp->qlen[s] - rp->head[s], c->rank);
    MPI_Comm comm = rp->comm[CS_GROUP_PP][s];
    for (int k = 0; k < nb; k++) {
        size_t i = rp->queue[s][rp->head[s] + k];
        const cs_hw_rtask *t = &p->tasks[i];
        MPI_Datatype dt = cs_hw__mpi_type(t->dtype);
        mark_start(rp, i);
        rp->bidx[s][k] = i;
        int e = t->p2p == CS_HW_P2P_SEND
                    ? MPI_Isend(rp->p2p_send, (int)t->count, dt, t->peer_stage, t->tag, comm,
                                &rp->breq[s][k])
                    : MPI_Irecv(rp->p2p_recv + (size_t)k * rp->p2p_bytes, (int)t->count, dt,
                                t->peer_stage, t->tag, comm, &rp->breq[s][k]);
        if (e != MPI_SUCCESS) {
            cs_hw__mpi_fail(c, e, t->p2p == CS_HW_P2P_SEND ? "MPI_Isend" : "MPI_Irecv");
            return -1;
        }
    }
    rp->head[s] += (size_t)nb;
    rp->nbatch[s] = nb;
    rp->running[s] = (int)rp->bidx[s][0];
    return 0;
}

/* Tests running collectives, then starts every ready collective at the
 * head of an idle stream. Runs between GEMM blocks and copy chunks. */
static void progress(void *arg)
{
    cs_hw_ctx *c = arg;
    mpi_replay *rp = c->replay;
    if (c->failed) return;
    for (int s = 0; s < NSTREAMS; s++) {
        if (rp->running[s] < 0) continue;
        int flag = 0, nb = rp->nbatch[s];
        int e = nb ? MPI_Testall(nb, rp->breq[s], &flag, MPI_STATUSES_IGNORE)
                   : MPI_Test(&rp->req[s], &flag, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS) {
            cs_hw__mpi_fail(c, e, nb ? "MPI_Testall" : "MPI_Test");
            return;
        }
        if (flag && nb) {
            for (int k = 0; k < nb; k++) mark_end(rp, rp->bidx[s][k]);
            rp->nbatch[s] = 0;
            rp->running[s] = -1;
        } else if (flag) {
            mark_end(rp, (size_t)rp->running[s]);
            rp->running[s] = -1;
        }
    }
    for (int s = 0; s < NSTREAMS; s++) {
        if (rp->running[s] >= 0 || s == rp->local_stream || rp->head[s] == rp->qlen[s]) continue;
        size_t i = rp->queue[s][rp->head[s]];
        const cs_hw_rtask *t = &rp->plan->tasks[i];
        if (t->kind != CS_TASK_COLLECTIVE || !task_ready(rp, t)) continue;
        if (t->p2p) {
            if (start_batch(c, rp, s)) return;
            continue;
        }
        MPI_Comm comm = rp->comm[t->group][s];
        int gsize;
        MPI_Comm_size(comm, &gsize);
        for (int r = 0; r < gsize; r++) rp->counts[s][r] = (int)t->count;
        rp->head[s]++;
        mark_start(rp, i);
        if (cs_hw__mpi_coll_start(c, comm, rp->counts[s], t->op, t->dtype, t->count, rp->send[s],
                                  rp->recv[s], &rp->req[s]))
            return;
        rp->running[s] = (int)i;
    }
}

static void run_local(cs_hw_ctx *c, const cs_hw_rtask *t)
{
    mpi_replay *rp = c->replay;
    if (t->kind == CS_TASK_COMPUTE) {
        for (int r = 0; r < t->reps && !c->failed; r++)
            cs_hw_cpu_sgemm(t->m, t->n, t->k, rp->ga, rp->gb, rp->gc, progress, c);
    } else {
        for (size_t done = 0; done < t->copy_bytes && !c->failed;) {
            size_t b = t->copy_bytes - done < rp->ccap ? t->copy_bytes - done : rp->ccap;
            memcpy(rp->cdst, rp->csrc, b);
            done += b;
            progress(c);
        }
        sink = (unsigned char)rp->cdst[0];
    }
}

/* Runs the first ready compute / memory task at the head of a stream with
 * no collective running; 1 if one ran. */
static int run_ready_local(cs_hw_ctx *c)
{
    mpi_replay *rp = c->replay;
    for (int s = 0; s < NSTREAMS; s++) {
        if (rp->running[s] >= 0 || rp->head[s] == rp->qlen[s]) continue;
        size_t i = rp->queue[s][rp->head[s]];
        const cs_hw_rtask *t = &rp->plan->tasks[i];
        if (t->kind == CS_TASK_COLLECTIVE || !task_ready(rp, t)) continue;
        rp->head[s]++;
        mark_start(rp, i);
        rp->local_stream = s; /* keeps collectives of this stream waiting */
        progress(c);          /* collectives waiting for this task's start */
        run_local(c, t);
        rp->local_stream = -1;
        mark_end(rp, i);
        return 1;
    }
    return 0;
}

static int any_running(const mpi_replay *rp)
{
    int busy = 0;
    for (int s = 0; s < NSTREAMS; s++) busy |= rp->running[s] >= 0;
    return busy;
}

static void reset(mpi_replay *rp, const cs_hw_rplan *p)
{
    rp->plan = p;
    memset(rp->state, 0, p->n ? p->n : 1);
    rp->ndone = 0;
    rp->local_stream = -1;
    for (int s = 0; s < NSTREAMS; s++) {
        rp->qlen[s] = rp->head[s] = 0;
        rp->running[s] = -1;
    }
    for (int s = 0; s < NSTREAMS; s++) rp->nbatch[s] = 0;
    for (size_t i = 0; i < p->n; i++) {
        rp->start[i] = rp->end[i] = 0;
        if (!cs_hw_rplan_runs(p, &p->tasks[i], rp->rank)) { /* another stage's */
            rp->state[i] = 2;
            rp->ndone++;
            continue;
        }
        int s = p->tasks[i].stream;
        rp->queue[s][rp->qlen[s]++] = i;
    }
}

/* Every rank's timeline and the largest resident set, on rank 0. */
static int gather(cs_hw_ctx *c, const cs_hw_rplan *p, cs_hw_rresult *r)
{
    mpi_replay *rp = c->replay;
    MPI_TRY(c, MPI_Gather(rp->start, (int)p->n, MPI_DOUBLE, r->start_s, (int)p->n, MPI_DOUBLE, 0,
                          MPI_COMM_WORLD));
    MPI_TRY(c, MPI_Gather(rp->end, (int)p->n, MPI_DOUBLE, r->end_s, (int)p->n, MPI_DOUBLE, 0,
                          MPI_COMM_WORLD));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double mine = (double)ru.ru_maxrss * 1024.0, peak = 0;
    MPI_TRY(c, MPI_Reduce(&mine, &peak, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    r->peak_bytes = peak;
    return 0;
}

int cs_hw__mpi_replay_run(cs_hw_ctx *c, const cs_hw_rplan *p, cs_hw_rresult *r)
{
    mpi_replay *rp = c->replay;
    rp->rank = c->rank;
    reset(rp, p);
    MPI_TRY(c, MPI_Barrier(MPI_COMM_WORLD));
    rp->t0 = MPI_Wtime();
    while (rp->ndone < p->n && !c->failed) {
        progress(c);
        int ran = run_ready_local(c);
        if (!ran && !any_running(rp) && rp->ndone < p->n) {
            /* nothing runs and nothing can start: progress() starts every
             * ready collective, so the schedule's dependencies are circular */
            progress(c);
            if (!any_running(rp)) {
                fprintf(stderr, "collsim-hw: rank %d: replay stalled with %zu of %zu tasks done "
                                "(circular dependencies?)\n", c->rank, rp->ndone, p->n);
                return CS_HW_EBACKEND;
            }
        }
    }
    if (c->failed) return CS_HW_EBACKEND;
    return gather(c, p, r);
}
