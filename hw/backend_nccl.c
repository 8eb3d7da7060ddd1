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
 * Replay (backend_nccl_replay.c): three CUDA streams per GPU, tasks
 * ordered by CUDA events, one communicator per (group, stream). Launches,
 * GEMMs, bench and compute: backend_nccl_ops.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#ifdef CS_HW_HAVE_MPI
#include <mpi.h>
#endif

#include "backend_nccl.h"
#include "base/error.h"

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

int cs_hw__cuda_fail(const cs_hw_ctx *c, cudaError_t e, const char *what)
{
    fprintf(stderr, "collsim-hw: rank %d: %s failed: %s\n", c ? c->proc : cs_hw_launch_rank(),
            what, cudaGetErrorString(e));
    return e == cudaErrorMemoryAllocation ? CS_HW_ENOMEM : CS_HW_EBACKEND;
}

int cs_hw__nccl_fail(const cs_hw_ctx *c, ncclResult_t r, const char *what)
{
    const char *last = ncclGetLastError(NULL);
    fprintf(stderr, "collsim-hw: rank %d: %s failed: %s%s%s\n", c ? c->proc : cs_hw_launch_rank(),
            what, ncclGetErrorString(r), last && *last ? ": " : "", last ? last : "");
    return CS_HW_EBACKEND;
}

int cs_hw__blas_fail(const cs_hw_ctx *c, cublasStatus_t s, const char *what)
{
    fprintf(stderr, "collsim-hw: rank %d: %s failed: cuBLAS status %d\n", c->proc, what, (int)s);
    return CS_HW_EBACKEND;
}

/* ---- waiting ------------------------------------------------------------- */

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

int cs_hw__nccl_wait(cs_hw_ctx *c, int replay)
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
                    cs_hw__cuda_fail(c, e, "a kernel (cudaStreamQuery)");
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
                    cs_hw__nccl_fail(c, r, "a NCCL collective (asynchronous error)");
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

int cs_hw__nccl_reduce_max(cs_hw_ctx *c, const double *v, double *out, int n)
{
#ifdef CS_HW_HAVE_MPI
    if (c->use_mpi) {
        if (MPI_Reduce(v, out, n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
            fprintf(stderr, "collsim-hw: rank %d: MPI_Reduce failed\n", c->proc);
            return CS_HW_EBACKEND;
        }
        return 0;
    }
#else
    (void)c;
#endif
    memcpy(out, v, (size_t)n * sizeof *v);
    return 0;
}

/* ---- init / finalize ---------------------------------------------------- */

/* 1 if CUDA sees devices (*ndev of them); else 0 with msg saying why. */
static int count_devices(int *ndev, char *msg, size_t len)
{
    cudaError_t e = cudaGetDeviceCount(ndev);
    int ok = e == cudaSuccess && *ndev > 0;
    if (!ok)
        snprintf(msg, len, "no CUDA GPU found (cudaGetDeviceCount: %s)",
                 e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    return ok;
}

/* Under mpirun / srun: MPI_Init, this process's index and its node-local
 * rank *local. 0, or CS_HW_EBACKEND / CS_HW_EUNAVAIL with msg. */
static int join_launcher(cs_hw_ctx *c, int *local, char *msg, size_t len)
{
#ifdef CS_HW_HAVE_MPI
    if (!cs_hw_launched()) return 0;
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        snprintf(msg, len, "MPI_Init failed");
        return CS_HW_EBACKEND;
    }
    c->use_mpi = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->proc);
    MPI_Comm_size(MPI_COMM_WORLD, &c->nprocs);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->proc, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, local);
    MPI_Comm_free(&node);
    return 0;
#else
    (void)c;
    (void)local;
    const char *size = getenv("OMPI_COMM_WORLD_SIZE");
    if (!size) size = getenv("PMI_SIZE");
    if (!size) size = getenv("SLURM_NTASKS");
    if (size && atoi(size) > 1) {
        snprintf(msg, len, "started by a launcher with several processes, but this collsim-hw "
                           "was built without MPI (use -g GPUS from one process)");
        return CS_HW_EUNAVAIL;
    }
    return 0;
#endif
}

/* Whether every process has its GPUs (ok: this one has); msg says so
 * when another has not. */
static int all_agree(cs_hw_ctx *c, int ok, char *msg, size_t len)
{
#ifdef CS_HW_HAVE_MPI
    if (c->use_mpi) {
        int all = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (ok && !all) snprintf(msg, len, "another rank has no usable GPU");
        return all;
    }
#endif
    (void)c;
    (void)msg;
    (void)len;
    return ok;
}

/* Ends what join_launcher started, after a failure before the GPUs. */
static void leave_launcher(cs_hw_ctx *c)
{
#ifdef CS_HW_HAVE_MPI
    if (c->use_mpi) MPI_Finalize();
#else
    (void)c;
#endif
}

/* Streams and the communicators of this process's G GPUs (local: its
 * node-local rank), from rank 0's ncclUniqueId. */
static int init_comms(cs_hw_ctx *c, int local)
{
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
    return 0;
}

static void fill_info(const cs_hw_ctx *c, cs_hw_info *info)
{
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
}

static int nccl_init(const cs_hw_config *cfg, cs_hw_ctx **out, cs_hw_info *info, char *msg,
                     size_t len)
{
    int ndev = 0;
    int ok = count_devices(&ndev, msg, len);
    cs_hw_ctx *c = cs_xcalloc(1, sizeof *c);
    c->cfg = *cfg;
    c->G = cfg->gpus;
    c->nprocs = 1;
    int local = 0;
    int rc = join_launcher(c, &local, msg, len);
    if (rc) {
        free(c);
        return rc;
    }
    if (ok && (local + 1) * c->G > ndev) {
        ok = 0;
        snprintf(msg, len, "needs GPUs %d..%d (node-local rank %d x -g %d), found %d", local * c->G,
                 (local + 1) * c->G - 1, local, c->G, ndev);
    }
    if (!all_agree(c, ok, msg, len)) {
        leave_launcher(c);
        free(c);
        return CS_HW_EUNAVAIL;
    }
    c->nranks = c->nprocs * c->G;
    if (cfg->algo) setenv("NCCL_ALGO", lookup(algos, NALGOS, cfg->algo), 1);
    if (cfg->proto) setenv("NCCL_PROTO", lookup(protos, NPROTOS, cfg->proto), 1);
    c->g = cs_xcalloc((size_t)c->G, sizeof *c->g);
    *out = c; /* from here on, finalize frees */
    if ((rc = init_comms(c, local))) return rc;
    fill_info(c, info);
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
        cudaFree(g->p2p_send);
        cudaFree(g->p2p_recv);
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

static const cs_hw_backend nccl_backend = {
    .name = "nccl",
    .check_choice = nccl_check_choice,
    .init = nccl_init,
    .coll_setup = cs_hw__nccl_coll_setup,
    .coll_fill = cs_hw__nccl_coll_fill,
    .coll_time = cs_hw__nccl_coll_time,
    .coll_check = cs_hw__nccl_coll_check,
    .gemm_time = cs_hw__nccl_gemm_time,
    .copy_time = cs_hw__nccl_copy_time,
    .replay_setup = cs_hw__nccl_replay_setup,
    .replay_run = cs_hw__nccl_replay_run,
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
    .replay_gemm_dtype = CS_DTYPE_BF16, /* a training step's GEMMs */
    .replay_gemm_nmax = 4096,           /* square up to 4096, then a longer k */
    .replay_gemm_kmax = 16384,
    .replay_copy_chunk = (size_t)256 << 20,
    .peak_memory = "device",
};

const cs_hw_backend *cs_hw_backend_nccl(void) { return &nccl_backend; }
