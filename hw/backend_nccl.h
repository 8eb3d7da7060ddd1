/* SPDX-License-Identifier: MIT */
/*
 * backend_nccl.h - private to the NCCL backend, shared by its three files:
 *   backend_nccl.c         names, errors, waiting, init / finalize, the table
 *   backend_nccl_ops.c     collective launches, GEMMs, bench and compute
 *   backend_nccl_replay.c  the replay executor
 * A context drives G GPUs of this process (one `gpu` each); ranks are
 * proc x G + local index. Every CUDA call on a GPU is preceded by
 * cudaSetDevice(g->id).
 */
#ifndef CS_HW_BACKEND_NCCL_H
#define CS_HW_BACKEND_NCCL_H

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stddef.h>

#include "backend.h"
#include "train/workload.h"

#define NSTREAMS CS_STREAM_COUNT
#define NGROUPS CS_GROUP_COUNT

typedef struct gpu {
    int id;               /* CUDA device */
    int rank;             /* collective rank */
    ncclComm_t comm;
    cudaStream_t stream;
    void *send, *recv;
    cudaEvent_t *ev0, *ev1;
    cublasHandle_t blas;
    /* replay */
    ncclComm_t rcomm[NGROUPS][NSTREAMS];
    cudaStream_t rstream[NSTREAMS];
    void *rsend[NSTREAMS], *rrecv[NSTREAMS];
    void *p2p_send, *p2p_recv; /* a pipeline's transfers: one send, a receive per batch task */
    size_t p2p_bytes;
    int stage;            /* the pipeline stage this GPU's rank runs */
    void *ga, *gb, *gc, *csrc, *cdst;
    cudaEvent_t base, *tev0, *tev1;
} gpu;

struct cs_hw_ctx {
    cs_hw_config cfg;
    int proc, nprocs, G, nranks;
    int use_mpi, aborted;
    gpu *g;
    size_t send_cap, recv_cap;
    char *host;
    size_t host_cap;
    int nev;
    size_t ntev, ccap;
    double *local; /* per-iteration scratch */
};

/* One message "rank R: WHAT failed: ..." each; they return the CS_HW_E*
 * code to pass on (c may be NULL before the context exists). */
int cs_hw__cuda_fail(const cs_hw_ctx *c, cudaError_t e, const char *what);
int cs_hw__nccl_fail(const cs_hw_ctx *c, ncclResult_t r, const char *what);
int cs_hw__blas_fail(const cs_hw_ctx *c, cublasStatus_t s, const char *what);

#define CUDA_TRY(c, call)                                                                         \
    do {                                                                                          \
        cudaError_t cuda_e_ = (call);                                                             \
        if (cuda_e_ != cudaSuccess) return cs_hw__cuda_fail((c), cuda_e_, #call);                 \
    } while (0)
#define NCCL_TRY(c, call)                                                                         \
    do {                                                                                          \
        ncclResult_t nccl_r_ = (call);                                                            \
        if (nccl_r_ != ncclSuccess) return cs_hw__nccl_fail((c), nccl_r_, #call);                 \
    } while (0)
#define BLAS_TRY(c, call)                                                                         \
    do {                                                                                          \
        cublasStatus_t blas_s_ = (call);                                                          \
        if (blas_s_ != CUBLAS_STATUS_SUCCESS) return cs_hw__blas_fail((c), blas_s_, #call);       \
    } while (0)

/* backend_nccl.c */
/* Waits for the bench stream (replay 0) or the replay streams of every
 * GPU, polling NCCL's asynchronous errors and --timeout; on either, every
 * communicator is aborted. 0, CS_HW_EBACKEND or CS_HW_ETIMEOUT. */
int cs_hw__nccl_wait(cs_hw_ctx *c, int replay);
/* out[0..n) on process 0 = the slowest process's v[0..n). */
int cs_hw__nccl_reduce_max(cs_hw_ctx *c, const double *v, double *out, int n);

/* backend_nccl_ops.c */
typedef struct gemm_types {
    cudaDataType_t ab, c;
    cublasComputeType_t compute;
    int alpha_double;
} gemm_types;

/* NCCL's type for t: 0, or CS_ENOTSUP (this NCCL lacks it). */
int cs_hw__nccl_type(cs_dtype t, ncclDataType_t *out);
int cs_hw__nccl_launch(cs_hw_ctx *c, ncclComm_t comm, cudaStream_t s, cs_op op, cs_dtype t,
                       size_t count, const void *send, void *recv);
int cs_hw__nccl_gemm_types(cs_dtype t, gemm_types *g);
int cs_hw__nccl_ensure_blas(cs_hw_ctx *c, gpu *g);
/* C = A B, column-major, on stream s. */
int cs_hw__nccl_gemm(cs_hw_ctx *c, gpu *g, cudaStream_t s, const gemm_types *gt, int m,
                     int n, int k, const void *a, const void *b, void *cc);
/* cudaMalloc + fill with the check pattern. */
int cs_hw__nccl_device_pattern(cs_hw_ctx *c, void **p, cs_dtype t, size_t n, int seed);
cs_hw_coll_setup_fn cs_hw__nccl_coll_setup;
cs_hw_coll_fill_fn cs_hw__nccl_coll_fill;
cs_hw_coll_time_fn cs_hw__nccl_coll_time;
cs_hw_coll_check_fn cs_hw__nccl_coll_check;
cs_hw_gemm_time_fn cs_hw__nccl_gemm_time;
cs_hw_copy_time_fn cs_hw__nccl_copy_time;

/* backend_nccl_replay.c */
cs_hw_replay_setup_fn cs_hw__nccl_replay_setup;
cs_hw_replay_run_fn cs_hw__nccl_replay_run;

#endif
