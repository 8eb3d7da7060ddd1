/* SPDX-License-Identifier: MIT */
/*
 * backend_nccl_replay.c - the NCCL backend's replay executor: a replay
 * plan (backend.h) issued onto three CUDA streams per GPU (compute, comm,
 * comm_reduce). Each task waits (cudaStreamWaitEvent) on its dependencies'
 * start or end events, then records its own start and end events; times
 * are event distances from a base event recorded before the first task.
 * One communicator per (group, stream) (ncclCommSplit of the bench
 * communicator), as in the MPI backend. Caveat: NCCL kernels of two
 * communicators running at once on a GPU need to be co-resident; on the
 * GPUs NCCL supports they are (few channels each). Peak memory is
 * cudaMemGetInfo's used memory, the largest over GPUs.
 *
 * Pipelines: a GPU runs its stage's tasks (another stage's record their
 * events back to back, unused). A batch of p2p tasks (a pass's send and
 * the next pass's receive) is one ncclGroupStart / ncclSend, ncclRecv /
 * ncclGroupEnd on the pp group's communicator of the compute stream, the
 * peer's rank there being its stage: Megatron-LM's
 * p2p_communication._batched_p2p_ops (batch_isend_irecv, which NCCL runs
 * as one group). NCCL has no tags: a pair's transfers match in the order
 * they are issued, which the schedule gives alike on both sides for
 * 1F1B, GPipe and ZB-H1 (one chunk per stage). A process driving GPUs of
 * two stages (-g) is refused: NCCL needs a pair's send and receive in one
 * group when one thread drives both.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CS_HW_HAVE_MPI
#include <mpi.h>
#endif

#include "backend_nccl.h"
#include "base/error.h"
#include "rplan.h"

/* The GEMM type and copy chunk of a replay (backend_nccl.c's table). */
#define GEMM_DTYPE (cs_hw_backend_nccl()->replay_gemm_dtype)
#define COPY_CHUNK (cs_hw_backend_nccl()->replay_copy_chunk)

/* Every collective's type exists in this NCCL: 0, or CS_HW_EBACKEND after a message. */
static int check_types(const cs_hw_ctx *c, const cs_hw_rplan *p)
{
    for (size_t i = 0; i < p->n; i++) {
        const cs_hw_rtask *t = &p->tasks[i];
        ncclDataType_t dt;
        if (t->kind == CS_TASK_COLLECTIVE && cs_hw__nccl_type(t->dtype, &dt)) {
            fprintf(stderr, "collsim-hw: rank %d: NCCL has no %s type (task %zu)\n", c->proc,
                    cs_dtype_name(t->dtype), i);
            return CS_HW_EBACKEND;
        }
    }
    return 0;
}

/* One communicator per (group, stream) that runs collectives. */
static int split_comms(cs_hw_ctx *c, const cs_hw_rplan *p, const cs_hw_rneeds *need)
{
    for (int gr = 0; gr < NGROUPS; gr++)
        for (int s = 0; s < NSTREAMS; s++) {
            if (!need->used[gr][s]) continue;
            NCCL_TRY(c, ncclGroupStart());
            for (int i = 0; i < c->G; i++) {
                gpu *g = &c->g[i];
                CUDA_TRY(c, cudaSetDevice(g->id));
                NCCL_TRY(c, ncclCommSplit(g->comm, cs_hw_rplan_group_color(p, gr, g->rank),
                                          g->rank, &g->rcomm[gr][s], NULL));
            }
            NCCL_TRY(c, ncclGroupEnd());
        }
    return 0;
}

/* Streams, buffers and events of one GPU. */
static int setup_gpu(cs_hw_ctx *c, gpu *g, const cs_hw_rplan *p, const cs_hw_rneeds *need)
{
    int rc = cs_hw__nccl_ensure_blas(c, g);
    if (rc) return rc;
    CUDA_TRY(c, cudaSetDevice(g->id));
    for (int s = 0; s < NSTREAMS; s++) {
        size_t sb = need->send_bytes[s] ? need->send_bytes[s] : 1;
        size_t rb = need->recv_bytes[s] ? need->recv_bytes[s] : 1;
        CUDA_TRY(c, cudaStreamCreateWithFlags(&g->rstream[s], cudaStreamNonBlocking));
        CUDA_TRY(c, cudaMalloc(&g->rsend[s], sb));
        CUDA_TRY(c, cudaMalloc(&g->rrecv[s], rb));
        CUDA_TRY(c, cudaMemset(g->rsend[s], 0, sb));
    }
    if ((rc = cs_hw__nccl_device_pattern(c, &g->ga, GEMM_DTYPE, need->gemm_a, g->rank)))
        return rc;
    if ((rc = cs_hw__nccl_device_pattern(c, &g->gb, GEMM_DTYPE, need->gemm_b, g->rank + 1)))
        return rc;
    if ((rc = cs_hw__nccl_device_pattern(c, &g->gc, GEMM_DTYPE, need->gemm_c, 0))) return rc;
    g->p2p_bytes = need->p2p_bytes ? need->p2p_bytes : 1;
    g->stage = cs_hw_rplan_stage(p, g->rank);
    CUDA_TRY(c, cudaMalloc(&g->p2p_send, g->p2p_bytes));
    CUDA_TRY(c, cudaMalloc(&g->p2p_recv, g->p2p_bytes * CS_HW_P2P_BATCH_MAX));
    CUDA_TRY(c, cudaMemset(g->p2p_send, 0, g->p2p_bytes));
    CUDA_TRY(c, cudaMalloc(&g->csrc, need->copy_bytes));
    CUDA_TRY(c, cudaMalloc(&g->cdst, need->copy_bytes));
    CUDA_TRY(c, cudaMemset(g->csrc, 1, need->copy_bytes));
    CUDA_TRY(c, cudaEventCreate(&g->base));
    g->tev0 = cs_xcalloc(p->n ? p->n : 1, sizeof *g->tev0);
    g->tev1 = cs_xcalloc(p->n ? p->n : 1, sizeof *g->tev1);
    for (size_t k = 0; k < p->n; k++) {
        CUDA_TRY(c, cudaEventCreate(&g->tev0[k]));
        CUDA_TRY(c, cudaEventCreate(&g->tev1[k]));
        c->ntev = k + 1;
    }
    return 0;
}

/* The GPUs of this process run one pipeline stage: 0, or CS_HW_EUNAVAIL
 * after a message (run one process per GPU). */
static int check_stages(const cs_hw_ctx *c, const cs_hw_rplan *p)
{
    for (int i = 1; i < c->G; i++)
        if (cs_hw_rplan_stage(p, c->g[i].rank) != cs_hw_rplan_stage(p, c->g[0].rank)) {
            fprintf(stderr, "collsim-hw: rank %d: this process drives GPUs of two pipeline "
                            "stages; run one process per GPU (mpirun -np N, -g 1)\n", c->proc);
            return CS_HW_EUNAVAIL;
        }
    return 0;
}

int cs_hw__nccl_replay_setup(cs_hw_ctx *c, const cs_hw_rplan *p)
{
    int rc = check_types(c, p);
    if (!rc) rc = check_stages(c, p);
    if (rc) return rc;
    cs_hw_rneeds need;
    cs_hw_rplan_needs(p, c->nranks, COPY_CHUNK, &need);
    if ((rc = split_comms(c, p, &need))) return rc;
    c->ccap = need.copy_bytes;
    for (int i = 0; i < c->G; i++)
        if ((rc = setup_gpu(c, &c->g[i], p, &need))) return rc;
    c->local = cs_xrealloc(c->local, (size_t)c->G * (p->n ? p->n : 1) * 2 * sizeof(double));
    return 0;
}

/* The base event on the compute stream; the other streams start after it. */
static int begin(cs_hw_ctx *c)
{
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        CUDA_TRY(c, cudaSetDevice(g->id));
        CUDA_TRY(c, cudaEventRecord(g->base, g->rstream[0]));
        for (int s = 1; s < NSTREAMS; s++)
            CUDA_TRY(c, cudaStreamWaitEvent(g->rstream[s], g->base, 0));
    }
    return 0;
}

/* Task k's stream waits for its dependencies, then records its start. */
static int task_start(cs_hw_ctx *c, const cs_hw_rtask *t, size_t k)
{
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        cudaStream_t st = g->rstream[t->stream];
        CUDA_TRY(c, cudaSetDevice(g->id));
        if (t->stage >= 0 && t->stage != g->stage) { /* another stage's: events only */
            CUDA_TRY(c, cudaEventRecord(g->tev0[k], st));
            continue;
        }
        for (int d = 0; d < t->ndeps; d++)
            CUDA_TRY(c, cudaStreamWaitEvent(st, t->on_start[d] ? g->tev0[t->deps[d]]
                                                               : g->tev1[t->deps[d]], 0));
        CUDA_TRY(c, cudaEventRecord(g->tev0[k], st));
    }
    return 0;
}

/* Issues task t's work on every GPU: a grouped collective, GEMMs, or copies. */
static int task_work(cs_hw_ctx *c, const cs_hw_rtask *t, const gemm_types *gt)
{
    int rc = 0;
    if (t->kind == CS_TASK_COLLECTIVE) {
        NCCL_TRY(c, ncclGroupStart());
        for (int i = 0; i < c->G && !rc; i++) {
            gpu *g = &c->g[i];
            if (t->stage >= 0 && t->stage != g->stage) continue;
            rc = cs_hw__nccl_launch(c, g->rcomm[t->group][t->stream], g->rstream[t->stream],
                                    t->op, t->dtype, t->count, g->rsend[t->stream],
                                    g->rrecv[t->stream]);
        }
        NCCL_TRY(c, ncclGroupEnd());
        return rc;
    }
    /* compute: the plan's GEMM repetitions; memory: copies in chunks of ccap */
    int reps = t->kind == CS_TASK_COMPUTE ? t->reps : 0;
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        cudaStream_t st = g->rstream[t->stream];
        if (t->stage >= 0 && t->stage != g->stage) continue;
        CUDA_TRY(c, cudaSetDevice(g->id));
        for (int rp = 0; rp < reps; rp++)
            if ((rc = cs_hw__nccl_gemm(c, g, st, gt, t->m, t->n, t->k, g->ga, g->gb, g->gc)))
                return rc;
        for (size_t done = 0; t->kind != CS_TASK_COMPUTE && done < t->copy_bytes;) {
            size_t b = t->copy_bytes - done < c->ccap ? t->copy_bytes - done : c->ccap;
            CUDA_TRY(c, cudaMemcpyAsync(g->cdst, g->csrc, b, cudaMemcpyDeviceToDevice, st));
            done += b;
        }
    }
    return 0;
}

/* The p2p batch of tasks first .. first + n - 1 (one stage's, one
 * stream's) as one NCCL group on every GPU of that stage. */
static int batch_work(cs_hw_ctx *c, const cs_hw_rplan *p, size_t first, int n)
{
    const cs_hw_rtask *t0 = &p->tasks[first];
    NCCL_TRY(c, ncclGroupStart());
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        if (t0->stage != g->stage) continue;
        CUDA_TRY(c, cudaSetDevice(g->id));
        ncclComm_t comm = g->rcomm[CS_GROUP_PP][t0->stream];
        cudaStream_t st = g->rstream[t0->stream];
        for (int k = 0; k < n; k++) {
            const cs_hw_rtask *t = &p->tasks[first + (size_t)k];
            ncclDataType_t dt;
            cs_hw__nccl_type(t->dtype, &dt);
            if (t->p2p == CS_HW_P2P_SEND)
                NCCL_TRY(c, ncclSend(g->p2p_send, t->count, dt, t->peer_stage, comm, st));
            else
                NCCL_TRY(c, ncclRecv((char *)g->p2p_recv + (size_t)k * g->p2p_bytes, t->count, dt,
                                     t->peer_stage, comm, st));
        }
    }
    NCCL_TRY(c, ncclGroupEnd());
    return 0;
}

/* How many tasks from k form one p2p batch (consecutive in the plan, one
 * stream, batch and stage). */
static int batch_len(const cs_hw_rplan *p, size_t k)
{
    const cs_hw_rtask *t0 = &p->tasks[k];
    int n = 1;
    while (k + (size_t)n < p->n && n < CS_HW_P2P_BATCH_MAX) {
        const cs_hw_rtask *t = &p->tasks[k + (size_t)n];
        if (!t->p2p || t->batch != t0->batch || t->stage != t0->stage || t->stream != t0->stream)
            break;
        n++;
    }
    return n;
}

static int task_end(cs_hw_ctx *c, const cs_hw_rtask *t, size_t k)
{
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        CUDA_TRY(c, cudaSetDevice(g->id));
        CUDA_TRY(c, cudaEventRecord(g->tev1[k], g->rstream[t->stream]));
    }
    return 0;
}

/* After the GPUs finish: every GPU's timeline (ls, le: G x n, seconds
 * from the base event) and the peak used memory. */
static int read_times(cs_hw_ctx *c, size_t n, double *ls, double *le, double *peak)
{
    *peak = 0;
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        CUDA_TRY(c, cudaSetDevice(g->id));
        for (size_t k = 0; k < n; k++) {
            float a = 0, b = 0;
            CUDA_TRY(c, cudaEventElapsedTime(&a, g->base, g->tev0[k]));
            CUDA_TRY(c, cudaEventElapsedTime(&b, g->base, g->tev1[k]));
            ls[(size_t)i * n + k] = a / 1e3;
            le[(size_t)i * n + k] = b / 1e3;
        }
        size_t fr = 0, tot = 0;
        CUDA_TRY(c, cudaMemGetInfo(&fr, &tot));
        if ((double)(tot - fr) > *peak) *peak = (double)(tot - fr);
    }
    return 0;
}

/* Every process's timelines and the largest peak, on process 0. */
static int gather(cs_hw_ctx *c, size_t n, const double *ls, const double *le, double peak,
                  cs_hw_rresult *r)
{
    size_t mine = (size_t)c->G * n;
#ifdef CS_HW_HAVE_MPI
    if (c->use_mpi) {
        if (MPI_Gather(ls, (int)mine, MPI_DOUBLE, r->start_s, (int)mine, MPI_DOUBLE, 0,
                       MPI_COMM_WORLD) != MPI_SUCCESS ||
            MPI_Gather(le, (int)mine, MPI_DOUBLE, r->end_s, (int)mine, MPI_DOUBLE, 0,
                       MPI_COMM_WORLD) != MPI_SUCCESS) {
            fprintf(stderr, "collsim-hw: rank %d: MPI_Gather failed\n", c->proc);
            return CS_HW_EBACKEND;
        }
        double all = 0;
        int rc = cs_hw__nccl_reduce_max(c, &peak, &all, 1);
        if (rc) return rc;
        r->peak_bytes = all;
        return 0;
    }
#endif
    memcpy(r->start_s, ls, mine * sizeof(double));
    memcpy(r->end_s, le, mine * sizeof(double));
    r->peak_bytes = peak;
    return 0;
}

int cs_hw__nccl_replay_run(cs_hw_ctx *c, const cs_hw_rplan *p, cs_hw_rresult *r)
{
    gemm_types gt;
    cs_hw__nccl_gemm_types(GEMM_DTYPE, &gt);
    int rc = begin(c);
    for (size_t k = 0; !rc && k < p->n; k++) {
        const cs_hw_rtask *t = &p->tasks[k];
        if (t->p2p) { /* a batch: every start, one group, every end */
            int n = batch_len(p, k);
            for (int j = 0; !rc && j < n; j++) rc = task_start(c, &p->tasks[k + (size_t)j], k + (size_t)j);
            if (!rc) rc = batch_work(c, p, k, n);
            for (int j = 0; !rc && j < n; j++) rc = task_end(c, &p->tasks[k + (size_t)j], k + (size_t)j);
            k += (size_t)n - 1;
            continue;
        }
        rc = task_start(c, t, k);
        if (!rc) rc = task_work(c, t, &gt);
        if (!rc) rc = task_end(c, t, k);
    }
    if (!rc) rc = cs_hw__nccl_wait(c, 1);
    if (rc) return rc;
    double *ls = c->local, *le = c->local + (size_t)c->G * p->n, peak = 0;
    if ((rc = read_times(c, p->n, ls, le, &peak))) return rc;
    return gather(c, p->n, ls, le, peak, r);
}
