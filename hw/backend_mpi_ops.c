/* SPDX-License-Identifier: MIT */
/*
 * backend_mpi_ops.c - the MPI backend's collective calls (blocking for
 * bench, non-blocking for replay) and its bench and compute measurements
 * (see backend_mpi.c for the model and backend_mpi.h for the context).
 *
 * Collectives: MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter (equal
 * counts), MPI_Bcast and MPI_Reduce (root 0), out of place. Types MPI
 * lacks (bf16, fp16, fp8) travel as 16/8-bit integers and are summed by
 * user-defined commutative operators that convert through float.
 *
 * Timing: each measured iteration starts after MPI_Barrier; its time is
 * the slowest rank's MPI_Wtime span from barrier exit to completion.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_mpi.h"
#include "base/error.h"
#include "cpugemm.h"
#include "pattern.h"

MPI_Datatype cs_hw__mpi_type(cs_dtype t)
{
    switch (t) {
    case CS_DTYPE_FP64: return MPI_DOUBLE;
    case CS_DTYPE_BF16:
    case CS_DTYPE_FP16: return MPI_UINT16_T;
    case CS_DTYPE_FP8: return MPI_UINT8_T;
    default: return MPI_FLOAT;
    }
}

/* An MPI user operator: b[i] = a[i] + b[i], computed in float. */
#define SUM_THROUGH_FLOAT(name, type, to_float, from_float)                                       \
    static void name(void *in, void *inout, int *len, MPI_Datatype *dt)                           \
    {                                                                                             \
        (void)dt;                                                                                 \
        const type *a = in;                                                                       \
        type *b = inout;                                                                          \
        for (int i = 0; i < *len; i++) b[i] = from_float(to_float(a[i]) + to_float(b[i]));        \
    }

SUM_THROUGH_FLOAT(sum_bf16, uint16_t, cs_hw_bf16_to_float, cs_hw_float_to_bf16)
SUM_THROUGH_FLOAT(sum_fp16, uint16_t, cs_hw_fp16_to_float, cs_hw_float_to_fp16)
SUM_THROUGH_FLOAT(sum_fp8, uint8_t, cs_hw_fp8_to_float, cs_hw_float_to_fp8)

void cs_hw__mpi_ops_create(cs_hw_ctx *c)
{
    MPI_Op_create(sum_bf16, 1, &c->ops[CS_DTYPE_BF16]);
    MPI_Op_create(sum_fp16, 1, &c->ops[CS_DTYPE_FP16]);
    MPI_Op_create(sum_fp8, 1, &c->ops[CS_DTYPE_FP8]);
}

void cs_hw__mpi_ops_free(cs_hw_ctx *c)
{
    for (int t = 0; t < CS_DTYPE_COUNT; t++)
        if (c->ops[t] != MPI_OP_NULL && c->ops[t]) MPI_Op_free(&c->ops[t]);
}

static MPI_Op mpi_sum(const cs_hw_ctx *c, cs_dtype t)
{
    return (t == CS_DTYPE_BF16 || t == CS_DTYPE_FP16 || t == CS_DTYPE_FP8) ? c->ops[t] : MPI_SUM;
}

/* Blocking collective on comm (size n) with counts[] = count for reduce_scatter. */
static int coll_run(cs_hw_ctx *c, MPI_Comm comm, int *counts, cs_op op, cs_dtype t, size_t count,
                    const void *send, void *recv)
{
    MPI_Datatype dt = cs_hw__mpi_type(t);
    int n = (int)count;
    switch (op) {
    case CS_OP_ALL_REDUCE: MPI_TRY(c, MPI_Allreduce(send, recv, n, dt, mpi_sum(c, t), comm)); break;
    case CS_OP_ALL_GATHER: MPI_TRY(c, MPI_Allgather(send, n, dt, recv, n, dt, comm)); break;
    case CS_OP_REDUCE_SCATTER:
        MPI_TRY(c, MPI_Reduce_scatter(send, recv, counts, dt, mpi_sum(c, t), comm));
        break;
    case CS_OP_BROADCAST: {
        /* out of place, like ncclBroadcast: the root's send buffer lands in
         * every recv buffer */
        int r;
        MPI_Comm_rank(comm, &r);
        if (r == 0) memcpy(recv, send, count * (size_t)cs_dtype_size(t));
        MPI_TRY(c, MPI_Bcast(recv, n, dt, 0, comm));
        break;
    }
    case CS_OP_REDUCE: MPI_TRY(c, MPI_Reduce(send, recv, n, dt, mpi_sum(c, t), 0, comm)); break;
    case CS_OP_ALL_TO_ALL: MPI_TRY(c, MPI_Alltoall(send, n, dt, recv, n, dt, comm)); break;
    case CS_OP_SEND_RECV: { /* nccl-tests' sendrecv: to rank + 1, from rank - 1 */
        int r, size;
        MPI_Comm_rank(comm, &r);
        MPI_Comm_size(comm, &size);
        MPI_TRY(c, MPI_Sendrecv(send, n, dt, (r + 1) % size, 0, recv, n, dt, (r + size - 1) % size,
                                0, comm, MPI_STATUS_IGNORE));
        break;
    }
    default: CS_PANIC("bad op %d", (int)op);
    }
    return 0;
}

int cs_hw__mpi_coll_start(cs_hw_ctx *c, MPI_Comm comm, int *counts, cs_op op, cs_dtype t,
                          size_t count, const void *send, void *recv, MPI_Request *req)
{
    MPI_Datatype dt = cs_hw__mpi_type(t);
    int n = (int)count;
    switch (op) {
    case CS_OP_ALL_REDUCE:
        MPI_TRY(c, MPI_Iallreduce(send, recv, n, dt, mpi_sum(c, t), comm, req));
        break;
    case CS_OP_ALL_GATHER: MPI_TRY(c, MPI_Iallgather(send, n, dt, recv, n, dt, comm, req)); break;
    case CS_OP_REDUCE_SCATTER:
        MPI_TRY(c, MPI_Ireduce_scatter(send, recv, counts, dt, mpi_sum(c, t), comm, req));
        break;
    case CS_OP_BROADCAST: MPI_TRY(c, MPI_Ibcast(recv, n, dt, 0, comm, req)); break;
    case CS_OP_REDUCE: MPI_TRY(c, MPI_Ireduce(send, recv, n, dt, mpi_sum(c, t), 0, comm, req)); break;
    case CS_OP_ALL_TO_ALL: MPI_TRY(c, MPI_Ialltoall(send, n, dt, recv, n, dt, comm, req)); break;
    case CS_OP_SEND_RECV: /* MPI 4's MPI_Isendrecv; Open MPI 4 has none */
        fprintf(stderr, "collsim-hw: rank %d: the MPI backend replays no send_recv\n", c->rank);
        c->failed = 1;
        return CS_HW_EBACKEND;
    default: CS_PANIC("bad op %d", (int)op);
    }
    return 0;
}

/* times_s[iters] on rank 0 = the slowest rank's local[i]. */
static int reduce_slowest(cs_hw_ctx *c, const double *local, double *times_s, int iters)
{
    int e = MPI_Reduce(local, times_s, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return e == MPI_SUCCESS ? 0 : cs_hw__mpi_fail(c, e, "MPI_Reduce");
}

/* ---- bench ------------------------------------------------------------- */

int cs_hw__mpi_coll_setup(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t max_count)
{
    if (cs_hw_recv_count(op, max_count, c->size) > INT_MAX ||
        cs_hw_send_count(op, max_count, c->size) > INT_MAX) {
        fprintf(stderr, "collsim-hw: rank %d: %zu elements exceed MPI's int counts\n", c->rank,
                max_count);
        return CS_HW_ENOMEM;
    }
    size_t ts = (size_t)cs_dtype_size(t);
    size_t sb = cs_hw_send_count(op, max_count, c->size) * ts;
    size_t rb = cs_hw_recv_count(op, max_count, c->size) * ts;
    free(c->send);
    free(c->recv);
    c->send = calloc(sb ? sb : 1, 1);
    c->recv = calloc(rb ? rb : 1, 1);
    if (!c->send || !c->recv) {
        fprintf(stderr, "collsim-hw: rank %d: cannot allocate %zu + %zu bytes of buffers\n",
                c->rank, sb, rb);
        return CS_HW_ENOMEM;
    }
    c->send_cap = sb;
    c->recv_cap = rb;
    return 0;
}

int cs_hw__mpi_coll_fill(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count)
{
    cs_hw_pattern_fill(c->send, t, op, count, c->rank, c->size);
    memset(c->recv, 0, cs_hw_recv_count(op, count, c->size) * (size_t)cs_dtype_size(t));
    return 0;
}

int cs_hw__mpi_coll_time(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count, int warmup, int iters,
                         int hang, double *times_s)
{
    for (int r = 0; r < c->size; r++) c->recvcounts[r] = (int)count;
    if (hang && c->rank == c->size - 1)
        for (;;) pause(); /* the watchdog ends this process */
    for (int i = 0; i < warmup; i++) {
        int rc = coll_run(c, MPI_COMM_WORLD, c->recvcounts, op, t, count, c->send, c->recv);
        if (rc) return rc;
    }
    double *local = cs_xmalloc((size_t)iters * sizeof *local);
    int rc = 0;
    for (int i = 0; i < iters && !rc; i++) {
        int e = MPI_Barrier(MPI_COMM_WORLD);
        if (e != MPI_SUCCESS) {
            rc = cs_hw__mpi_fail(c, e, "MPI_Barrier");
            break;
        }
        double t0 = MPI_Wtime();
        rc = coll_run(c, MPI_COMM_WORLD, c->recvcounts, op, t, count, c->send, c->recv);
        local[i] = MPI_Wtime() - t0;
    }
    if (!rc) rc = reduce_slowest(c, local, times_s, iters);
    free(local);
    return rc;
}

int cs_hw__mpi_coll_check(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count, int corrupt,
                          long long *wrong)
{
    if (corrupt && c->rank == 0) cs_hw_elem_set(c->recv, t, 0, -100.0);
    long long mine = cs_hw_pattern_check(c->recv, t, op, count, c->rank, c->size);
    *wrong = 0;
    MPI_TRY(c, MPI_Reduce(&mine, wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    return 0;
}

/* ---- compute ------------------------------------------------------------- */

int cs_hw__mpi_gemm_time(cs_hw_ctx *c, cs_dtype t, int m, int n, int k, int warmup, int iters,
                         double *times_s)
{
    if (t != CS_DTYPE_FP32) {
        fprintf(stderr, "collsim-hw: rank %d: the MPI backend's GEMM is fp32 only\n", c->rank);
        return CS_HW_EBACKEND;
    }
    size_t na = (size_t)m * (size_t)k, nb = (size_t)k * (size_t)n, nc = (size_t)m * (size_t)n;
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *cc = malloc(nc * sizeof *cc);
    double *local = malloc((size_t)iters * sizeof *local);
    int rc = 0;
    if (!a || !b || !cc || !local) {
        fprintf(stderr, "collsim-hw: rank %d: cannot allocate a %dx%dx%d GEMM\n", c->rank, m, n, k);
        rc = CS_HW_ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < na; i++) a[i] = (float)cs_hw_pattern_value(c->rank, i);
    for (size_t i = 0; i < nb; i++) b[i] = (float)cs_hw_pattern_value(c->rank + 1, i);
    for (int i = 0; i < warmup + iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        cs_hw_cpu_sgemm(m, n, k, a, b, cc, NULL, NULL);
        if (i >= warmup) local[i - warmup] = MPI_Wtime() - t0;
    }
    rc = reduce_slowest(c, local, times_s, iters);
out:
    free(a);
    free(b);
    free(cc);
    free(local);
    return rc;
}

static volatile unsigned char sink;

int cs_hw__mpi_copy_time(cs_hw_ctx *c, size_t bytes, int warmup, int iters, double *times_s)
{
    char *src = malloc(bytes ? bytes : 1), *dst = malloc(bytes ? bytes : 1);
    double *local = malloc((size_t)iters * sizeof *local);
    int rc = 0;
    if (!src || !dst || !local) {
        fprintf(stderr, "collsim-hw: rank %d: cannot allocate 2 x %zu bytes\n", c->rank, bytes);
        rc = CS_HW_ENOMEM;
        goto out;
    }
    memset(src, 1, bytes);
    memset(dst, 0, bytes);
    for (int i = 0; i < warmup + iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        memcpy(dst, src, bytes);
        if (i >= warmup) local[i - warmup] = MPI_Wtime() - t0;
        sink = (unsigned char)dst[bytes ? bytes - 1 : 0];
    }
    rc = reduce_slowest(c, local, times_s, iters);
out:
    free(src);
    free(dst);
    free(local);
    return rc;
}
