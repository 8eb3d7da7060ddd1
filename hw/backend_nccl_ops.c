/* SPDX-License-Identifier: MIT */
/*
 * backend_nccl_ops.c - the NCCL backend's collective launches and cuBLAS
 * GEMMs, and its bench and compute measurements (see backend_nccl.c for
 * the model, backend_nccl.h for the context).
 *
 * Bench: iterations are issued back to back without a barrier, as
 * nccl-tests does, with a CUDA event pair around each on each GPU; an
 * iteration's time is the slowest GPU's (MPI_MAX over processes). Data is
 * filled and checked through host copies (no custom kernels). Compute:
 * cublasGemmEx of the asked type on each process's first GPU, and
 * cudaMemcpyAsync device to device, timed the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CS_HW_HAVE_MPI
#include <mpi.h>
#endif

#include "backend_nccl.h"
#include "base/error.h"
#include "pattern.h"

int cs_hw__nccl_type(cs_dtype t, ncclDataType_t *out)
{
    switch (t) {
    case CS_DTYPE_FP32: *out = ncclFloat32; return 0;
    case CS_DTYPE_FP16: *out = ncclFloat16; return 0;
    case CS_DTYPE_BF16: *out = ncclBfloat16; return 0;
    case CS_DTYPE_FP64: *out = ncclFloat64; return 0;
#if NCCL_VERSION_CODE >= 22400
    case CS_DTYPE_FP8: *out = ncclFloat8e4m3; return 0;
#endif
    default: return CS_ENOTSUP;
    }
}

/* NCCL's type for t: 0, or CS_HW_EBACKEND after a message. */
static int checked_type(const cs_hw_ctx *c, cs_dtype t, ncclDataType_t *out)
{
    if (!cs_hw__nccl_type(t, out)) return 0;
    fprintf(stderr, "collsim-hw: rank %d: NCCL %d.%d has no %s type\n", c->proc, NCCL_MAJOR,
            NCCL_MINOR, cs_dtype_name(t));
    return CS_HW_EBACKEND;
}

/* ---- bench ------------------------------------------------------------- */

/* NCCL's point-to-point ops as nccl-tests runs them: all_to_all one send
 * and one receive of `count` elements (`block` bytes) per rank, itself
 * included (alltoall.cu), send_recv to rank + 1 from rank - 1
 * (sendrecv.cu), in one group; the group is ended even when a call in it
 * fails, and the first failure is reported. */
static int p2p_launch(cs_hw_ctx *c, ncclComm_t comm, cudaStream_t s, cs_op op, ncclDataType_t dt,
                      size_t count, size_t block, const void *send, void *recv)
{
    int n, me;
    NCCL_TRY(c, ncclCommCount(comm, &n));
    NCCL_TRY(c, ncclCommUserRank(comm, &me));
    NCCL_TRY(c, ncclGroupStart());
    ncclResult_t r = ncclSuccess;
    const char *what = "ncclSend/ncclRecv";
    if (op == CS_OP_ALL_TO_ALL) {
        for (int p = 0; p < n && r == ncclSuccess; p++) {
            r = ncclSend((const char *)send + (size_t)p * block, count, dt, p, comm, s);
            if (r == ncclSuccess) r = ncclRecv((char *)recv + (size_t)p * block, count, dt, p, comm, s);
        }
    } else {
        r = ncclSend(send, count, dt, (me + 1) % n, comm, s);
        if (r == ncclSuccess) r = ncclRecv(recv, count, dt, (me + n - 1) % n, comm, s);
    }
    ncclResult_t end = ncclGroupEnd();
    if (r != ncclSuccess) return cs_hw__nccl_fail(c, r, what);
    NCCL_TRY(c, end);
    return 0;
}

int cs_hw__nccl_launch(cs_hw_ctx *c, ncclComm_t comm, cudaStream_t s, cs_op op, cs_dtype t,
                       size_t count, const void *send, void *recv)
{
    ncclDataType_t dt;
    int rc = checked_type(c, t, &dt);
    if (rc) return rc;
    switch (op) {
    case CS_OP_ALL_REDUCE: NCCL_TRY(c, ncclAllReduce(send, recv, count, dt, ncclSum, comm, s)); break;
    case CS_OP_ALL_GATHER: NCCL_TRY(c, ncclAllGather(send, recv, count, dt, comm, s)); break;
    case CS_OP_REDUCE_SCATTER:
        NCCL_TRY(c, ncclReduceScatter(send, recv, count, dt, ncclSum, comm, s));
        break;
    case CS_OP_BROADCAST: NCCL_TRY(c, ncclBroadcast(send, recv, count, dt, 0, comm, s)); break;
    case CS_OP_REDUCE: NCCL_TRY(c, ncclReduce(send, recv, count, dt, ncclSum, 0, comm, s)); break;
    case CS_OP_ALL_TO_ALL:
    case CS_OP_SEND_RECV:
        return p2p_launch(c, comm, s, op, dt, count, count * (size_t)cs_dtype_size(t), send, recv);
    default: CS_PANIC("bad op %d", (int)op);
    }
    return 0;
}

static int ensure_host(cs_hw_ctx *c, size_t bytes)
{
    if (bytes <= c->host_cap) return 0;
    free(c->host);
    c->host = malloc(bytes);
    c->host_cap = c->host ? bytes : 0;
    if (!c->host) {
        fprintf(stderr, "collsim-hw: rank %d: cannot allocate %zu bytes of host memory\n", c->proc,
                bytes);
        return CS_HW_ENOMEM;
    }
    return 0;
}

static int ensure_events(cs_hw_ctx *c, int n)
{
    if (n <= c->nev) return 0;
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        CUDA_TRY(c, cudaSetDevice(g->id));
        g->ev0 = cs_xrealloc(g->ev0, (size_t)n * sizeof *g->ev0);
        g->ev1 = cs_xrealloc(g->ev1, (size_t)n * sizeof *g->ev1);
        for (int k = c->nev; k < n; k++) {
            CUDA_TRY(c, cudaEventCreate(&g->ev0[k]));
            CUDA_TRY(c, cudaEventCreate(&g->ev1[k]));
        }
    }
    c->nev = n;
    c->local = cs_xrealloc(c->local, (size_t)n * sizeof *c->local);
    return 0;
}

int cs_hw__nccl_coll_setup(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t max_count)
{
    ncclDataType_t dt;
    int rc = checked_type(c, t, &dt);
    if (rc) return rc;
    size_t ts = (size_t)cs_dtype_size(t);
    size_t sb = cs_hw_send_count(op, max_count, c->nranks) * ts;
    size_t rb = cs_hw_recv_count(op, max_count, c->nranks) * ts;
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        CUDA_TRY(c, cudaSetDevice(g->id));
        cudaFree(g->send);
        cudaFree(g->recv);
        g->send = g->recv = NULL;
        CUDA_TRY(c, cudaMalloc(&g->send, sb ? sb : 1));
        CUDA_TRY(c, cudaMalloc(&g->recv, rb ? rb : 1));
        CUDA_TRY(c, cudaMemset(g->send, 0, sb ? sb : 1));
        CUDA_TRY(c, cudaMemset(g->recv, 0, rb ? rb : 1));
    }
    c->send_cap = sb;
    c->recv_cap = rb;
    return 0;
}

int cs_hw__nccl_coll_fill(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count)
{
    size_t ts = (size_t)cs_dtype_size(t);
    size_t sb = cs_hw_send_count(op, count, c->nranks) * ts;
    size_t rb = cs_hw_recv_count(op, count, c->nranks) * ts;
    int rc = ensure_host(c, sb > rb ? sb : rb);
    if (rc) return rc;
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        cs_hw_pattern_fill(c->host, t, op, count, g->rank, c->nranks);
        CUDA_TRY(c, cudaSetDevice(g->id));
        CUDA_TRY(c, cudaMemcpy(g->send, c->host, sb, cudaMemcpyHostToDevice));
        CUDA_TRY(c, cudaMemset(g->recv, 0, rb));
    }
    return 0;
}

int cs_hw__nccl_coll_time(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count, int warmup, int iters,
                          int hang, double *times_s)
{
    int rc = ensure_events(c, iters);
    if (rc) return rc;
    for (int it = 0; it < warmup + iters; it++) {
        int m = it - warmup;
        for (int i = 0; m >= 0 && i < c->G; i++) {
            CUDA_TRY(c, cudaSetDevice(c->g[i].id));
            CUDA_TRY(c, cudaEventRecord(c->g[i].ev0[m], c->g[i].stream));
        }
        NCCL_TRY(c, ncclGroupStart());
        for (int i = 0; i < c->G; i++) {
            gpu *g = &c->g[i];
            if (hang && c->proc == c->nprocs - 1 && i == c->G - 1) continue;
            if ((rc = cs_hw__nccl_launch(c, g->comm, g->stream, op, t, count, g->send, g->recv))) {
                ncclGroupEnd();
                return rc;
            }
        }
        NCCL_TRY(c, ncclGroupEnd());
        for (int i = 0; m >= 0 && i < c->G; i++) {
            CUDA_TRY(c, cudaSetDevice(c->g[i].id));
            CUDA_TRY(c, cudaEventRecord(c->g[i].ev1[m], c->g[i].stream));
        }
    }
    if ((rc = cs_hw__nccl_wait(c, 0))) return rc;
    for (int m = 0; m < iters; m++) {
        double worst = 0;
        for (int i = 0; i < c->G; i++) {
            float ms = 0;
            CUDA_TRY(c, cudaEventElapsedTime(&ms, c->g[i].ev0[m], c->g[i].ev1[m]));
            if (ms / 1e3 > worst) worst = ms / 1e3;
        }
        c->local[m] = worst;
    }
    return cs_hw__nccl_reduce_max(c, c->local, times_s, iters);
}

int cs_hw__nccl_coll_check(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count, int corrupt,
                           long long *wrong)
{
    size_t ts = (size_t)cs_dtype_size(t);
    size_t rb = cs_hw_recv_count(op, count, c->nranks) * ts;
    int rc = ensure_host(c, rb > 8 ? rb : 8);
    if (rc) return rc;
    long long mine = 0;
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        CUDA_TRY(c, cudaSetDevice(g->id));
        if (corrupt && g->rank == 0) {
            cs_hw_elem_set(c->host, t, 0, -100.0);
            CUDA_TRY(c, cudaMemcpy(g->recv, c->host, ts, cudaMemcpyHostToDevice));
        }
        CUDA_TRY(c, cudaMemcpy(c->host, g->recv, rb, cudaMemcpyDeviceToHost));
        mine += cs_hw_pattern_check(c->host, t, op, count, g->rank, c->nranks);
    }
    *wrong = mine;
#ifdef CS_HW_HAVE_MPI
    if (c->use_mpi && MPI_Reduce(&mine, wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD) !=
                          MPI_SUCCESS) {
        fprintf(stderr, "collsim-hw: rank %d: MPI_Reduce failed\n", c->proc);
        return CS_HW_EBACKEND;
    }
#endif
    return 0;
}

/* ---- compute ------------------------------------------------------------- */

int cs_hw__nccl_gemm_types(cs_dtype t, gemm_types *g)
{
    switch (t) {
    case CS_DTYPE_BF16: *g = (gemm_types){CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 0}; return 0;
    case CS_DTYPE_FP16: *g = (gemm_types){CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 0}; return 0;
    case CS_DTYPE_FP32: *g = (gemm_types){CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 0}; return 0;
    case CS_DTYPE_TF32:
        *g = (gemm_types){CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 0};
        return 0;
    case CS_DTYPE_FP64: *g = (gemm_types){CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 1}; return 0;
    default: return CS_ENOTSUP;
    }
}

int cs_hw__nccl_ensure_blas(cs_hw_ctx *c, gpu *g)
{
    if (g->blas) return 0;
    CUDA_TRY(c, cudaSetDevice(g->id));
    BLAS_TRY(c, cublasCreate(&g->blas));
    return 0;
}

int cs_hw__nccl_gemm(cs_hw_ctx *c, gpu *g, cudaStream_t s, const gemm_types *gt, int m,
                     int n, int k, const void *a, const void *b, void *cc)
{
    float fa = 1, fb = 0;
    double da = 1, db = 0;
    BLAS_TRY(c, cublasSetStream(g->blas, s));
    BLAS_TRY(c, cublasGemmEx(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k,
                             gt->alpha_double ? (const void *)&da : (const void *)&fa, a, gt->ab, m,
                             b, gt->ab, k,
                             gt->alpha_double ? (const void *)&db : (const void *)&fb, cc, gt->c, m,
                             gt->compute, CUBLAS_GEMM_DEFAULT));
    return 0;
}

/* cudaMalloc + fill with the pattern (non-zero data: GEMMs on zeros draw
 * less power and run unrealistically fast). */
int cs_hw__nccl_device_pattern(cs_hw_ctx *c, void **p, cs_dtype t, size_t n, int seed)
{
    size_t bytes = n * (size_t)cs_dtype_size(t);
    CUDA_TRY(c, cudaMalloc(p, bytes ? bytes : 1));
    int rc = ensure_host(c, bytes ? bytes : 1);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) cs_hw_elem_set(c->host, t, i, cs_hw_pattern_value(seed, i) / 4);
    CUDA_TRY(c, cudaMemcpy(*p, c->host, bytes, cudaMemcpyHostToDevice));
    return 0;
}

static int time_events(cs_hw_ctx *c, gpu *g, int iters, double *times_s)
{
    int rc = cs_hw__nccl_wait(c, 0);
    if (rc) return rc;
    for (int m = 0; m < iters; m++) {
        float ms = 0;
        CUDA_TRY(c, cudaEventElapsedTime(&ms, g->ev0[m], g->ev1[m]));
        c->local[m] = ms / 1e3;
    }
    return cs_hw__nccl_reduce_max(c, c->local, times_s, iters);
}

int cs_hw__nccl_gemm_time(cs_hw_ctx *c, cs_dtype t, int m, int n, int k, int warmup, int iters,
                          double *times_s)
{
    gemm_types gt;
    if (cs_hw__nccl_gemm_types(t, &gt)) {
        fprintf(stderr, "collsim-hw: rank %d: no cuBLAS GEMM for %s\n", c->proc, cs_dtype_name(t));
        return CS_HW_EBACKEND;
    }
    gpu *g = &c->g[0];
    int rc = ensure_events(c, iters);
    if (!rc) rc = cs_hw__nccl_ensure_blas(c, g);
    if (rc) return rc;
    void *a = NULL, *b = NULL, *cc = NULL;
    CUDA_TRY(c, cudaSetDevice(g->id));
    rc = cs_hw__nccl_device_pattern(c, &a, t, (size_t)m * (size_t)k, c->proc);
    if (!rc) rc = cs_hw__nccl_device_pattern(c, &b, t, (size_t)k * (size_t)n, c->proc + 1);
    if (!rc) rc = cs_hw__nccl_device_pattern(c, &cc, t, (size_t)m * (size_t)n, 0);
    for (int it = 0; !rc && it < warmup + iters; it++) {
        int mm = it - warmup;
        if (mm >= 0 && cudaEventRecord(g->ev0[mm], g->stream) != cudaSuccess) rc = CS_HW_EBACKEND;
        if (!rc) rc = cs_hw__nccl_gemm(c, g, g->stream, &gt, m, n, k, a, b, cc);
        if (!rc && mm >= 0 && cudaEventRecord(g->ev1[mm], g->stream) != cudaSuccess)
            rc = CS_HW_EBACKEND;
    }
    if (!rc) rc = time_events(c, g, iters, times_s);
    cudaFree(a);
    cudaFree(b);
    cudaFree(cc);
    return rc;
}

int cs_hw__nccl_copy_time(cs_hw_ctx *c, size_t bytes, int warmup, int iters, double *times_s)
{
    gpu *g = &c->g[0];
    int rc = ensure_events(c, iters);
    if (rc) return rc;
    void *src = NULL, *dst = NULL;
    CUDA_TRY(c, cudaSetDevice(g->id));
    cudaError_t e = cudaMalloc(&src, bytes ? bytes : 1);
    if (e == cudaSuccess) e = cudaMalloc(&dst, bytes ? bytes : 1);
    if (e == cudaSuccess) e = cudaMemset(src, 1, bytes);
    for (int it = 0; e == cudaSuccess && it < warmup + iters; it++) {
        int mm = it - warmup;
        if (mm >= 0) e = cudaEventRecord(g->ev0[mm], g->stream);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, g->stream);
        if (e == cudaSuccess && mm >= 0) e = cudaEventRecord(g->ev1[mm], g->stream);
    }
    if (e != cudaSuccess) rc = cs_hw__cuda_fail(c, e, "a device copy");
    if (!rc) rc = time_events(c, g, iters, times_s);
    cudaFree(src);
    cudaFree(dst);
    return rc;
}
