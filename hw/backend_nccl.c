/* SPDX-License-Identifier: MIT */
/*
 * backend_nccl.c - the GPU backend: NCCL collectives, cuBLAS GEMMs and
 * device-to-device copies, timed with CUDA events. No custom kernels: data
 * is filled and checked through host copies (cudaMemcpy), so the binary
 * needs no nvcc and runs on every architecture cuBLAS and NCCL support
 * (their own kernels ship for sm_80, sm_90 and newer).
 *
 * Launch modes (as nccl-tests):
 *   (a) one process driving G GPUs (`-g G`): G communicators created in
 *       one ncclGroupStart/End, every collective issued for all G in a
 *       group call;
 *   (b) under mpirun/srun (detected from the launcher's environment), one
 *       process per GPU or per G GPUs: MPI_Init, rank 0's ncclUniqueId is
 *       MPI_Bcast to all, GPUs are picked by the node-local rank
 *       (MPI_COMM_TYPE_SHARED) x G.
 * Algorithm / protocol are forced the NCCL way: NCCL_ALGO / NCCL_PROTO are
 * set before the communicators are created (ring -> Ring, tree -> Tree,
 * nvls -> NVLS, ...; ll -> LL, ll128 -> LL128, simple -> Simple).
 *
 * Faults: no GPU (cudaGetDeviceCount fails or finds none) is reported as
 * CS_HW_EUNAVAIL (exit 77) before MPI or NCCL start. Every wait on the GPU
 * polls cudaStreamQuery and ncclCommGetAsyncError; an asynchronous NCCL
 * error, or --timeout passing, aborts every communicator (ncclCommAbort)
 * and returns, so the command keeps the rows measured so far and exits
 * (MPI_Abort brings the other processes down).
 *
 * Timing: a CUDA event pair around each iteration on each GPU; an
 * iteration's time is the slowest GPU's (MPI_MAX over processes).
 * Iterations are issued back to back without a barrier, as nccl-tests does.
 *
 * Replay: three CUDA streams per GPU (compute, comm, comm_reduce); each
 * task waits (cudaStreamWaitEvent) on its dependencies' start or end
 * events, then records its own start and end events. One communicator per
 * (group, stream) (ncclCommSplit), as in the MPI backend. Caveat: NCCL
 * kernels of two communicators running at once on a GPU need to be
 * co-resident; on the GPUs NCCL supports they are (few channels each).
 */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#ifdef CS_HW_HAVE_MPI
#include <mpi.h>
#endif

#include "backend.h"
#include "base/error.h"
#include "pattern.h"
#include "train/workload.h"

#define NSTREAMS CS_STREAM_COUNT
#define NGROUPS CS_GROUP_COUNT
#define GEMM_NMAX 4096
#define GEMM_KMAX 16384
#define COPY_CHUNK ((size_t)256 << 20)

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

/* ---- names ----------------------------------------------------------------- */

static const char *const algos[][2] = {{"ring", "Ring"},     {"tree", "Tree"},
                                       {"collnetdirect", "CollnetDirect"},
                                       {"collnetchain", "CollnetChain"},
                                       {"nvls", "NVLS"},     {"nvlstree", "NVLSTree"},
                                       {"pat", "PAT"}};
static const char *const protos[][2] = {{"ll", "LL"}, {"ll128", "LL128"}, {"simple", "Simple"}};

static const char *lookup(const char *const (*tab)[2], size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcasecmp(s, tab[i][0])) return tab[i][1];
    return NULL;
}

#define NALGOS (sizeof algos / sizeof algos[0])
#define NPROTOS (sizeof protos / sizeof protos[0])

static int nccl_check_choice(const char *algo, const char *proto, int op, char *msg, size_t len)
{
    (void)op;
    if (algo && !lookup(algos, NALGOS, algo)) {
        snprintf(msg, len, "unknown --algo '%s' for NCCL (expected ring, tree, nvls, nvlstree, "
                           "collnetdirect, collnetchain or pat)", algo);
        return CS_EINVAL;
    }
    if (proto && !lookup(protos, NPROTOS, proto)) {
        snprintf(msg, len, "unknown --proto '%s' (expected ll, ll128 or simple)", proto);
        return CS_EINVAL;
    }
    return 0;
}

/* ---- error handling ----------------------------------------------------- */

static int cuda_fail(const cs_hw_ctx *c, cudaError_t e, const char *what)
{
    fprintf(stderr, "collsim-hw: rank %d: %s failed: %s\n", c ? c->proc : cs_hw_launch_rank(),
            what, cudaGetErrorString(e));
    return e == cudaErrorMemoryAllocation ? CS_HW_ENOMEM : CS_HW_EBACKEND;
}

static int nccl_fail(const cs_hw_ctx *c, ncclResult_t r, const char *what)
{
    const char *last = ncclGetLastError(NULL);
    fprintf(stderr, "collsim-hw: rank %d: %s failed: %s%s%s\n", c ? c->proc : cs_hw_launch_rank(),
            what, ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "");
    return CS_HW_EBACKEND;
}

static int blas_fail(const cs_hw_ctx *c, cublasStatus_t s, const char *what)
{
    fprintf(stderr, "collsim-hw: rank %d: %s failed: cuBLAS status %d\n", c->proc, what, (int)s);
    return CS_HW_EBACKEND;
}

#define CUDA_TRY(c, call)                                                                         \
    do {                                                                                          \
        cudaError_t cuda_e_ = (call);                                                             \
        if (cuda_e_ != cudaSuccess) return cuda_fail((c), cuda_e_, #call);                        \
    } while (0)
#define NCCL_TRY(c, call)                                                                         \
    do {                                                                                          \
        ncclResult_t nccl_r_ = (call);                                                            \
        if (nccl_r_ != ncclSuccess) return nccl_fail((c), nccl_r_, #call);                        \
    } while (0)
#define BLAS_TRY(c, call)                                                                         \
    do {                                                                                          \
        cublasStatus_t blas_s_ = (call);                                                          \
        if (blas_s_ != CUBLAS_STATUS_SUCCESS) return blas_fail((c), blas_s_, #call);              \
    } while (0)

static int nccl_type(cs_dtype t, ncclDataType_t *out)
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

static void abort_all(cs_hw_ctx *c)
{
    if (c->aborted) return;
    c->aborted = 1;
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        for (int gr = 0; gr < NGROUPS; gr++)
            for (int s = 0; s < NSTREAMS; s++)
                if (g->rcomm[gr][s]) ncclCommAbort(g->rcomm[gr][s]);
        if (g->comm) ncclCommAbort(g->comm);
        memset(g->rcomm, 0, sizeof g->rcomm);
        g->comm = NULL;
    }
}

/* Waits for the streams (the bench stream, or the three replay streams)
 * of every GPU, polling NCCL's asynchronous errors and the timeout. */
static int wait_gpus(cs_hw_ctx *c, int replay)
{
    double t0 = cs_hw_now_s();
    struct timespec nap = {0, 20000};
    for (;;) {
        int pending = 0;
        for (int i = 0; i < c->G; i++) {
            gpu *g = &c->g[i];
            for (int s = 0; s < (replay ? NSTREAMS : 1); s++) {
                cudaError_t e = cudaStreamQuery(replay ? g->rstream[s] : g->stream);
                if (e == cudaErrorNotReady) pending = 1;
                else if (e != cudaSuccess) {
                    cuda_fail(c, e, "a kernel (cudaStreamQuery)");
                    abort_all(c);
                    return CS_HW_EBACKEND;
                }
            }
        }
        if (!pending) return 0;
        for (int i = 0; i < c->G; i++) {
            gpu *g = &c->g[i];
            ncclComm_t comms[1 + NGROUPS * NSTREAMS];
            int n = 0;
            if (g->comm) comms[n++] = g->comm;
            for (int gr = 0; gr < NGROUPS; gr++)
                for (int s = 0; s < NSTREAMS; s++)
                    if (g->rcomm[gr][s]) comms[n++] = g->rcomm[gr][s];
            for (int k = 0; k < n; k++) {
                ncclResult_t r = ncclSuccess;
                ncclCommGetAsyncError(comms[k], &r);
                if (r != ncclSuccess && r != ncclInProgress) {
                    nccl_fail(c, r, "a NCCL collective (asynchronous error)");
                    abort_all(c);
                    return CS_HW_EBACKEND;
                }
            }
        }
        if (cs_hw_now_s() - t0 > c->cfg.timeout_s) {
            fprintf(stderr, "collsim-hw: rank %d: timeout: GPU work did not finish within %g s; "
                            "aborting the NCCL communicators\n", c->proc, c->cfg.timeout_s);
            abort_all(c);
            return CS_HW_ETIMEOUT;
        }
        nanosleep(&nap, NULL);
    }
}

/* Slowest GPU's and process's value of v[0..n) (into out on process 0). */
static int reduce_max(cs_hw_ctx *c, const double *v, double *out, int n)
{
#ifdef CS_HW_HAVE_MPI
    if (c->use_mpi) {
        if (MPI_Reduce(v, out, n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
            fprintf(stderr, "collsim-hw: rank %d: MPI_Reduce failed\n", c->proc);
            return CS_HW_EBACKEND;
        }
        return 0;
    }
#endif
    memcpy(out, v, (size_t)n * sizeof *v);
    return 0;
}

/* ---- init / finalize ---------------------------------------------------- */

static int nccl_init(const cs_hw_config *cfg, cs_hw_ctx **out, cs_hw_info *info, char *msg,
                     size_t len)
{
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    int ok = e == cudaSuccess && ndev > 0;
    if (!ok)
        snprintf(msg, len, "no CUDA GPU found (cudaGetDeviceCount: %s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    cs_hw_ctx *c = cs_xcalloc(1, sizeof *c);
    c->cfg = *cfg;
    c->G = cfg->gpus;
    c->nprocs = 1;
    int local = 0;
#ifdef CS_HW_HAVE_MPI
    if (cs_hw_launched()) {
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
            free(c);
            snprintf(msg, len, "MPI_Init failed");
            return CS_HW_EBACKEND;
        }
        c->use_mpi = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &c->proc);
        MPI_Comm_size(MPI_COMM_WORLD, &c->nprocs);
        MPI_Comm node;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->proc, MPI_INFO_NULL, &node);
        MPI_Comm_rank(node, &local);
        MPI_Comm_free(&node);
    }
#else
    {
        const char *size = getenv("OMPI_COMM_WORLD_SIZE");
        if (!size) size = getenv("PMI_SIZE");
        if (!size) size = getenv("SLURM_NTASKS");
        if (size && atoi(size) > 1) {
            free(c);
            snprintf(msg, len, "started by a launcher with several processes, but this collsim-hw "
                               "was built without MPI (use -g GPUS from one process)");
            return CS_HW_EUNAVAIL;
        }
    }
#endif
    if (ok && (local + 1) * c->G > ndev) {
        ok = 0;
        snprintf(msg, len, "needs GPUs %d..%d (node-local rank %d x -g %d), found %d", local * c->G,
                 (local + 1) * c->G - 1, local, c->G, ndev);
    }
#ifdef CS_HW_HAVE_MPI
    if (c->use_mpi) {
        int all = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (ok && !all) snprintf(msg, len, "another rank has no usable GPU");
        ok = all;
    }
#endif
    if (!ok) {
#ifdef CS_HW_HAVE_MPI
        if (c->use_mpi) MPI_Finalize();
#endif
        free(c);
        return CS_HW_EUNAVAIL;
    }
    c->nranks = c->nprocs * c->G;
    if (cfg->algo) setenv("NCCL_ALGO", lookup(algos, NALGOS, cfg->algo), 1);
    if (cfg->proto) setenv("NCCL_PROTO", lookup(protos, NPROTOS, cfg->proto), 1);
    c->g = cs_xcalloc((size_t)c->G, sizeof *c->g);
    *out = c; /* from here on, finalize frees */
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (c->proc == 0) NCCL_TRY(c, ncclGetUniqueId(&id));
#ifdef CS_HW_HAVE_MPI
    if (c->use_mpi) MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        g->id = local * c->G + i;
        g->rank = c->proc * c->G + i;
        CUDA_TRY(c, cudaSetDevice(g->id));
        CUDA_TRY(c, cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    }
    NCCL_TRY(c, ncclGroupStart());
    for (int i = 0; i < c->G; i++) {
        CUDA_TRY(c, cudaSetDevice(c->g[i].id));
        NCCL_TRY(c, ncclCommInitRank(&c->g[i].comm, c->nranks, id, c->g[i].rank));
    }
    NCCL_TRY(c, ncclGroupEnd());

    memset(info, 0, sizeof *info);
    info->proc = c->proc;
    info->nprocs = c->nprocs;
    info->local_ranks = c->G;
    info->nranks = c->nranks;
    if (gethostname(info->host, sizeof info->host) != 0) snprintf(info->host, sizeof info->host, "?");
    info->host[sizeof info->host - 1] = 0;
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, c->g[0].id) == cudaSuccess) {
        cs_hw_csv_safe(info->device, sizeof info->device, prop.name);
        info->device_memory_bytes = (double)prop.totalGlobalMem;
    }
    int nv = 0, cv = 0;
    ncclGetVersion(&nv);
    cudaRuntimeGetVersion(&cv);
    snprintf(info->library, sizeof info->library, "NCCL %d.%d.%d + CUDA %d.%d", nv / 10000,
             (nv % 10000) / 100, nv % 100, cv / 1000, (cv % 1000) / 10);
    return 0;
}

static void nccl_finalize(cs_hw_ctx *c, int abort_code)
{
    if (abort_code) abort_all(c);
    for (int i = 0; c->g && i < c->G; i++) {
        gpu *g = &c->g[i];
        cudaSetDevice(g->id);
        if (!c->aborted) {
            for (int gr = 0; gr < NGROUPS; gr++)
                for (int s = 0; s < NSTREAMS; s++)
                    if (g->rcomm[gr][s]) ncclCommDestroy(g->rcomm[gr][s]);
            if (g->comm) ncclCommDestroy(g->comm);
        }
        cudaFree(g->send);
        cudaFree(g->recv);
        for (int s = 0; s < NSTREAMS; s++) {
            cudaFree(g->rsend[s]);
            cudaFree(g->rrecv[s]);
            if (g->rstream[s]) cudaStreamDestroy(g->rstream[s]);
        }
        cudaFree(g->ga);
        cudaFree(g->gb);
        cudaFree(g->gc);
        cudaFree(g->csrc);
        cudaFree(g->cdst);
        for (int k = 0; g->ev0 && k < c->nev; k++) {
            cudaEventDestroy(g->ev0[k]);
            cudaEventDestroy(g->ev1[k]);
        }
        for (size_t k = 0; g->tev0 && k < c->ntev; k++) {
            cudaEventDestroy(g->tev0[k]);
            cudaEventDestroy(g->tev1[k]);
        }
        if (g->base) cudaEventDestroy(g->base);
        free(g->ev0);
        free(g->ev1);
        free(g->tev0);
        free(g->tev1);
        if (g->blas) cublasDestroy(g->blas);
        if (g->stream) cudaStreamDestroy(g->stream);
    }
#ifdef CS_HW_HAVE_MPI
    if (c->use_mpi) {
        if (abort_code) {
            fflush(NULL);
            MPI_Abort(MPI_COMM_WORLD, abort_code);
        }
        MPI_Finalize();
    }
#endif
    free(c->g);
    free(c->host);
    free(c->local);
    free(c);
}

/* ---- bench ------------------------------------------------------------- */

static int launch(cs_hw_ctx *c, ncclComm_t comm, cudaStream_t s, cs_op op, cs_dtype t,
                  size_t count, const void *send, void *recv)
{
    ncclDataType_t dt;
    if (nccl_type(t, &dt)) {
        fprintf(stderr, "collsim-hw: rank %d: NCCL %d.%d has no %s type\n", c->proc, NCCL_MAJOR,
                NCCL_MINOR, cs_dtype_name(t));
        return CS_HW_EBACKEND;
    }
    switch (op) {
    case CS_OP_ALL_REDUCE: NCCL_TRY(c, ncclAllReduce(send, recv, count, dt, ncclSum, comm, s)); break;
    case CS_OP_ALL_GATHER: NCCL_TRY(c, ncclAllGather(send, recv, count, dt, comm, s)); break;
    case CS_OP_REDUCE_SCATTER:
        NCCL_TRY(c, ncclReduceScatter(send, recv, count, dt, ncclSum, comm, s));
        break;
    case CS_OP_BROADCAST: NCCL_TRY(c, ncclBroadcast(send, recv, count, dt, 0, comm, s)); break;
    case CS_OP_REDUCE: NCCL_TRY(c, ncclReduce(send, recv, count, dt, ncclSum, 0, comm, s)); break;
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

static int nccl_coll_setup(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t max_count)
{
    ncclDataType_t dt;
    if (nccl_type(t, &dt)) {
        fprintf(stderr, "collsim-hw: rank %d: NCCL %d.%d has no %s type\n", c->proc, NCCL_MAJOR,
                NCCL_MINOR, cs_dtype_name(t));
        return CS_HW_EBACKEND;
    }
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

static int nccl_coll_fill(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count)
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

static int nccl_coll_time(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count, int warmup, int iters,
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
            if ((rc = launch(c, g->comm, g->stream, op, t, count, g->send, g->recv))) {
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
    if ((rc = wait_gpus(c, 0))) return rc;
    for (int m = 0; m < iters; m++) {
        double worst = 0;
        for (int i = 0; i < c->G; i++) {
            float ms = 0;
            CUDA_TRY(c, cudaEventElapsedTime(&ms, c->g[i].ev0[m], c->g[i].ev1[m]));
            if (ms / 1e3 > worst) worst = ms / 1e3;
        }
        c->local[m] = worst;
    }
    return reduce_max(c, c->local, times_s, iters);
}

static int nccl_coll_check(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count, int corrupt,
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

typedef struct gemm_types {
    cudaDataType_t ab, c;
    cublasComputeType_t compute;
    int alpha_double;
} gemm_types;

static int gemm_types_of(cs_dtype t, gemm_types *g)
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

static int ensure_blas(cs_hw_ctx *c, gpu *g)
{
    if (g->blas) return 0;
    CUDA_TRY(c, cudaSetDevice(g->id));
    BLAS_TRY(c, cublasCreate(&g->blas));
    return 0;
}

/* C = A B, column-major, on stream s. */
static int gemm(cs_hw_ctx *c, gpu *g, cudaStream_t s, const gemm_types *gt, int m, int n, int k,
                const void *a, const void *b, void *cc)
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
static int device_pattern(cs_hw_ctx *c, void **p, cs_dtype t, size_t n, int seed)
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
    int rc = wait_gpus(c, 0);
    if (rc) return rc;
    for (int m = 0; m < iters; m++) {
        float ms = 0;
        CUDA_TRY(c, cudaEventElapsedTime(&ms, g->ev0[m], g->ev1[m]));
        c->local[m] = ms / 1e3;
    }
    return reduce_max(c, c->local, times_s, iters);
}

static int nccl_gemm_time(cs_hw_ctx *c, cs_dtype t, int m, int n, int k, int warmup, int iters,
                          double *times_s)
{
    gemm_types gt;
    if (gemm_types_of(t, &gt)) {
        fprintf(stderr, "collsim-hw: rank %d: no cuBLAS GEMM for %s\n", c->proc, cs_dtype_name(t));
        return CS_HW_EBACKEND;
    }
    gpu *g = &c->g[0];
    int rc = ensure_events(c, iters);
    if (!rc) rc = ensure_blas(c, g);
    if (rc) return rc;
    void *a = NULL, *b = NULL, *cc = NULL;
    CUDA_TRY(c, cudaSetDevice(g->id));
    rc = device_pattern(c, &a, t, (size_t)m * (size_t)k, c->proc);
    if (!rc) rc = device_pattern(c, &b, t, (size_t)k * (size_t)n, c->proc + 1);
    if (!rc) rc = device_pattern(c, &cc, t, (size_t)m * (size_t)n, 0);
    for (int it = 0; !rc && it < warmup + iters; it++) {
        int mm = it - warmup;
        if (mm >= 0 && cudaEventRecord(g->ev0[mm], g->stream) != cudaSuccess) rc = CS_HW_EBACKEND;
        if (!rc) rc = gemm(c, g, g->stream, &gt, m, n, k, a, b, cc);
        if (!rc && mm >= 0 && cudaEventRecord(g->ev1[mm], g->stream) != cudaSuccess)
            rc = CS_HW_EBACKEND;
    }
    if (!rc) rc = time_events(c, g, iters, times_s);
    cudaFree(a);
    cudaFree(b);
    cudaFree(cc);
    return rc;
}

static int nccl_copy_time(cs_hw_ctx *c, size_t bytes, int warmup, int iters, double *times_s)
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
    if (e != cudaSuccess) rc = cuda_fail(c, e, "a device copy");
    if (!rc) rc = time_events(c, g, iters, times_s);
    cudaFree(src);
    cudaFree(dst);
    return rc;
}

/* ---- replay -------------------------------------------------------------- */

static int group_color(int gr, int rank, int shard)
{
    return gr == CS_GROUP_WORLD ? 0 : gr == CS_GROUP_SHARD ? rank / shard : rank % shard;
}

static int nccl_replay_setup(cs_hw_ctx *c, const cs_hw_rplan *p)
{
    int used[NGROUPS][NSTREAMS] = {{0}};
    size_t sbytes[NSTREAMS] = {0}, rbytes[NSTREAMS] = {0}, gemm_a = 1, gemm_b = 1, gemm_c = 1;
    size_t copy = 1;
    int gsize[NGROUPS] = {c->nranks, p->shard_ranks, c->nranks / p->shard_ranks};
    for (size_t i = 0; i < p->n; i++) {
        const cs_hw_rtask *t = &p->tasks[i];
        if (t->kind == CS_TASK_COLLECTIVE) {
            ncclDataType_t dt;
            if (nccl_type(t->dtype, &dt)) {
                fprintf(stderr, "collsim-hw: rank %d: NCCL has no %s type (task %zu)\n", c->proc,
                        cs_dtype_name(t->dtype), i);
                return CS_HW_EBACKEND;
            }
            used[t->group][t->stream] = 1;
            size_t ts = (size_t)cs_dtype_size(t->dtype);
            size_t sb = cs_hw_send_count(t->op, t->count, gsize[t->group]) * ts;
            size_t rb = cs_hw_recv_count(t->op, t->count, gsize[t->group]) * ts;
            if (sb > sbytes[t->stream]) sbytes[t->stream] = sb;
            if (rb > rbytes[t->stream]) rbytes[t->stream] = rb;
        } else if (t->kind == CS_TASK_COMPUTE) {
            int m, n, k;
            cs_hw_gemm_shape(t->flops, GEMM_NMAX, GEMM_KMAX, &m, &n, &k);
            if ((size_t)m * (size_t)k > gemm_a) gemm_a = (size_t)m * (size_t)k;
            if ((size_t)k * (size_t)n > gemm_b) gemm_b = (size_t)k * (size_t)n;
            if ((size_t)m * (size_t)n > gemm_c) gemm_c = (size_t)m * (size_t)n;
        } else {
            size_t b = t->copy_bytes < COPY_CHUNK ? t->copy_bytes : COPY_CHUNK;
            if (b > copy) copy = b;
        }
    }
    for (int gr = 0; gr < NGROUPS; gr++)
        for (int s = 0; s < NSTREAMS; s++) {
            if (!used[gr][s]) continue;
            NCCL_TRY(c, ncclGroupStart());
            for (int i = 0; i < c->G; i++) {
                gpu *g = &c->g[i];
                CUDA_TRY(c, cudaSetDevice(g->id));
                NCCL_TRY(c, ncclCommSplit(g->comm, group_color(gr, g->rank, p->shard_ranks),
                                          g->rank, &g->rcomm[gr][s], NULL));
            }
            NCCL_TRY(c, ncclGroupEnd());
        }
    c->ccap = copy;
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        int rc = ensure_blas(c, g);
        if (rc) return rc;
        CUDA_TRY(c, cudaSetDevice(g->id));
        for (int s = 0; s < NSTREAMS; s++) {
            CUDA_TRY(c, cudaStreamCreateWithFlags(&g->rstream[s], cudaStreamNonBlocking));
            CUDA_TRY(c, cudaMalloc(&g->rsend[s], sbytes[s] ? sbytes[s] : 1));
            CUDA_TRY(c, cudaMalloc(&g->rrecv[s], rbytes[s] ? rbytes[s] : 1));
            CUDA_TRY(c, cudaMemset(g->rsend[s], 0, sbytes[s] ? sbytes[s] : 1));
        }
        if ((rc = device_pattern(c, &g->ga, CS_DTYPE_BF16, gemm_a, g->rank))) return rc;
        if ((rc = device_pattern(c, &g->gb, CS_DTYPE_BF16, gemm_b, g->rank + 1))) return rc;
        if ((rc = device_pattern(c, &g->gc, CS_DTYPE_BF16, gemm_c, 0))) return rc;
        CUDA_TRY(c, cudaMalloc(&g->csrc, copy));
        CUDA_TRY(c, cudaMalloc(&g->cdst, copy));
        CUDA_TRY(c, cudaMemset(g->csrc, 1, copy));
        CUDA_TRY(c, cudaEventCreate(&g->base));
        g->tev0 = cs_xcalloc(p->n ? p->n : 1, sizeof *g->tev0);
        g->tev1 = cs_xcalloc(p->n ? p->n : 1, sizeof *g->tev1);
        for (size_t k = 0; k < p->n; k++) {
            CUDA_TRY(c, cudaEventCreate(&g->tev0[k]));
            CUDA_TRY(c, cudaEventCreate(&g->tev1[k]));
            c->ntev = k + 1;
        }
    }
    c->local = cs_xrealloc(c->local, (size_t)c->G * (p->n ? p->n : 1) * 2 * sizeof(double));
    return 0;
}

static int nccl_replay_run(cs_hw_ctx *c, const cs_hw_rplan *p, cs_hw_rresult *r)
{
    gemm_types gt;
    gemm_types_of(CS_DTYPE_BF16, &gt);
    for (int i = 0; i < c->G; i++) {
        gpu *g = &c->g[i];
        CUDA_TRY(c, cudaSetDevice(g->id));
        CUDA_TRY(c, cudaEventRecord(g->base, g->rstream[0]));
        for (int s = 1; s < NSTREAMS; s++) CUDA_TRY(c, cudaStreamWaitEvent(g->rstream[s], g->base, 0));
    }
    int rc = 0;
    for (size_t k = 0; k < p->n; k++) {
        const cs_hw_rtask *t = &p->tasks[k];
        for (int i = 0; i < c->G; i++) {
            gpu *g = &c->g[i];
            cudaStream_t st = g->rstream[t->stream];
            CUDA_TRY(c, cudaSetDevice(g->id));
            for (int d = 0; d < t->ndeps; d++)
                CUDA_TRY(c, cudaStreamWaitEvent(st, t->on_start[d] ? g->tev0[t->deps[d]]
                                                                   : g->tev1[t->deps[d]], 0));
            CUDA_TRY(c, cudaEventRecord(g->tev0[k], st));
        }
        if (t->kind == CS_TASK_COLLECTIVE) {
            NCCL_TRY(c, ncclGroupStart());
            for (int i = 0; i < c->G && !rc; i++) {
                gpu *g = &c->g[i];
                rc = launch(c, g->rcomm[t->group][t->stream], g->rstream[t->stream], t->op,
                            t->dtype, t->count, g->rsend[t->stream], g->rrecv[t->stream]);
            }
            NCCL_TRY(c, ncclGroupEnd());
            if (rc) return rc;
        } else if (t->kind == CS_TASK_COMPUTE) {
            int m, n, kk;
            int reps = cs_hw_gemm_shape(t->flops, GEMM_NMAX, GEMM_KMAX, &m, &n, &kk);
            for (int i = 0; i < c->G; i++) {
                gpu *g = &c->g[i];
                CUDA_TRY(c, cudaSetDevice(g->id));
                for (int rp = 0; rp < reps; rp++)
                    if ((rc = gemm(c, g, g->rstream[t->stream], &gt, m, n, kk, g->ga, g->gb, g->gc)))
                        return rc;
            }
        } else {
            for (int i = 0; i < c->G; i++) {
                gpu *g = &c->g[i];
                CUDA_TRY(c, cudaSetDevice(g->id));
                for (size_t done = 0; done < t->copy_bytes;) {
                    size_t b = t->copy_bytes - done < c->ccap ? t->copy_bytes - done : c->ccap;
                    CUDA_TRY(c, cudaMemcpyAsync(g->cdst, g->csrc, b, cudaMemcpyDeviceToDevice,
                                                g->rstream[t->stream]));
                    done += b;
                }
            }
        }
        for (int i = 0; i < c->G; i++) {
            gpu *g = &c->g[i];
            CUDA_TRY(c, cudaSetDevice(g->id));
            CUDA_TRY(c, cudaEventRecord(g->tev1[k], g->rstream[t->stream]));
        }
    }
    if ((rc = wait_gpus(c, 1))) return rc;
    size_t n = p->n;
    double *ls = c->local, *le = c->local + (size_t)c->G * n;
    double peak = 0;
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
        if ((double)(tot - fr) > peak) peak = (double)(tot - fr);
    }
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
        if ((rc = reduce_max(c, &peak, &all, 1))) return rc;
        r->peak_bytes = all;
        return 0;
    }
#endif
    memcpy(r->start_s, ls, mine * sizeof(double));
    memcpy(r->end_s, le, mine * sizeof(double));
    r->peak_bytes = peak;
    return 0;
}

static const cs_hw_backend nccl_backend = {
    .name = "nccl",
    .check_choice = nccl_check_choice,
    .init = nccl_init,
    .coll_setup = nccl_coll_setup,
    .coll_fill = nccl_coll_fill,
    .coll_time = nccl_coll_time,
    .coll_check = nccl_coll_check,
    .gemm_time = nccl_gemm_time,
    .copy_time = nccl_copy_time,
    .replay_setup = nccl_replay_setup,
    .replay_run = nccl_replay_run,
    .finalize = nccl_finalize,
    .polls_timeout = 1,
    .multi_gpu = 1,
    .protocols = 1,
    .gemm_dtype = CS_DTYPE_BF16,
    .gemm_dtype_only = 0,
    .gemm_min_n = 256,
    .gemm_max_n = 8192,
    .copy_min_bytes = 1 << 20,
    .copy_max_bytes = 1 << 30,
    .compute_iters = 20,
    .replay_flops_scale = 1,
    .peak_memory = "device",
};

const cs_hw_backend *cs_hw_backend_nccl(void) { return &nccl_backend; }
