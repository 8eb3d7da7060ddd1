/* SPDX-License-Identifier: MIT */
/*
 * backend.h - the one interface behind which collsim-hw's backends live:
 * MPI on host memory (backend_mpi.c) and CUDA + NCCL on GPUs
 * (backend_nccl.c). The commands (cmd_bench.c, cmd_compute.c,
 * cmd_replay.c, through session.h) see only this table of functions and
 * properties, so a measurement is made the same way whatever runs it.
 *
 * A backend drives `local_ranks` collective ranks from this process (1
 * under mpirun, G with `-g G` on the NCCL backend); ranks are numbered
 * process x local_ranks + local index, as in nccl-tests. Process 0 prints
 * and writes files; timing results come back there. Every function returns
 * 0 or a negative CS_HW_E* code after printing one message to stderr
 * (prefixed "collsim-hw: rank R:"). Sizes follow nccl-tests: `count` is the
 * per-rank element count (the send count of all_gather, the receive count
 * of reduce_scatter); broadcast and reduce use root 0.
 */
#ifndef CS_HW_BACKEND_H
#define CS_HW_BACKEND_H

#include <stddef.h>
#include <stdio.h>

#include "coll/collective.h"
#include "base/dtype.h"
#include "coll/mesh.h"
#include "train/layout.h"

/* Exit codes of collsim-hw: one table, printed by every --help
 * (cs_hw_exit_help, hw_util.c) and copied in hw/README.md. 0-2 mean what
 * they mean for collsim (cli/cli.h). X(name, value, meaning) */
#define CS_HW_EXIT_MAP(X)                                                                          \
    X(OK, 0, "success")                                                                            \
    X(IO, 1, "a file could not be read or written (missing, a directory, no permission, "       \
             "disk full)")                                                                         \
    X(USAGE, 2, "bad usage or a bad schedule file (the message names file:line:column)")          \
    X(WRONG, 3, "--check found wrong results")                                                     \
    X(BACKEND, 4, "an MPI / CUDA / NCCL / cuBLAS call failed")                                     \
    X(TIMEOUT, 5, "a collective (or init) exceeded --timeout (rows so far are kept)")              \
    X(SKIP, 77, "backend unavailable: no GPU, or not built with NCCL / MPI")

enum {
#define CS__HW_EXIT_ENUM(name, val, text) CS_HW_EXIT_##name = (val),
    CS_HW_EXIT_MAP(CS__HW_EXIT_ENUM)
#undef CS__HW_EXIT_ENUM
};

/* Backend error codes (negative, distinct from the library's CS_E*). */
enum {
    CS_HW_EBACKEND = -100, /* a library call failed */
    CS_HW_ETIMEOUT = -101, /* --timeout exceeded (communicators aborted) */
    CS_HW_EUNAVAIL = -102, /* no device / not built in */
    CS_HW_ENOMEM = -103    /* device or host buffer allocation failed */
};

/* Maps a CS_HW_E* or CS_E* code to the exit code above. */
int cs_hw_exit_code(int err);
/* Prints the exit-code table ("Exit status:" and one line per code). */
void cs_hw_exit_help(FILE *f);

/* What a backend is started with (validated by the command first). */
typedef struct cs_hw_config {
    int gpus;            /* devices driven by this process (-g), >= 1 */
    const char *algo;    /* library name to force, or NULL = the library's choice */
    const char *proto;   /* NCCL protocol name to force, or NULL */
    int algo_op;         /* cs_op the MPI algorithm is forced for, -1 = every op */
    double timeout_s;    /* per measurement (one size, one GEMM shape, one replay) */
    int quiet;           /* no notes on stderr */
} cs_hw_config;

/* Who we are, filled by init. */
typedef struct cs_hw_info {
    int proc;            /* this process's index (MPI rank, or 0) */
    int nprocs;
    int local_ranks;     /* collective ranks driven by this process */
    int nranks;          /* nprocs x local_ranks */
    char host[64];
    char library[96];    /* "Open MPI v4.1.4", "NCCL 2.28.9 + CUDA 13.0" (no commas) */
    char device[96];     /* "CPU" or the GPU's name */
    double device_memory_bytes; /* per device, 0 if unknown */
} cs_hw_info;

typedef struct cs_hw_ctx cs_hw_ctx;

/* One replay task, already scaled and sized for this run (see cmd_replay.c). */
typedef struct cs_hw_rtask {
    int kind;            /* cs_task_kind: compute, memory, collective */
    int stream;          /* 0 compute, 1 comm, 2 comm_reduce */
    double flops;        /* compute: FLOPs to execute (after --flops-scale) */
    int m, n, k, reps;   /* compute: reps GEMMs of m x n x k (cs_hw_gemm_shape of flops with
                          * the backend's replay caps, in its replay_gemm_dtype); memory: reps
                          * = the copy's chunks of at most replay_copy_chunk bytes */
    size_t copy_bytes;   /* memory: bytes to copy (half the bytes moved) */
    cs_op op;            /* collective */
    cs_dtype dtype;
    size_t count;        /* per-rank count, nccl-tests convention */
    int group;           /* cs_group: an index into the plan's groups */
    int ndeps;
    int deps[4];         /* indices of earlier tasks */
    char on_start[4];    /* 1: wait for that task's start, 0: its end */
    /* pipelines (schedule.h): the stage whose ranks run it (-1: every rank);
     * p2p tasks (kind collective, op send_recv): CS_HW_P2P_SEND / _RECV, the
     * peer's stage (its rank in the pp group's communicator), the tag, and
     * the batch: consecutive p2p tasks of a stream with one batch are
     * started together and end together (Megatron's batch_isend_irecv) */
    int stage, p2p, peer_stage, tag, batch;
} cs_hw_rtask;

/* The most p2p tasks one batch holds (a pass's send and the next pass's
 * receive: 2; room for interleaved and split schedules). */
#define CS_HW_P2P_BATCH_MAX 8

typedef struct cs_hw_rplan {
    size_t n;
    const cs_hw_rtask *tasks;
    cs_mesh mesh;                             /* the run's ranks as a device mesh */
    cs_mesh_dims group_dims[CS_GROUP_COUNT];  /* the dimensions each group spans */
} cs_hw_rplan;

/* Per-iteration result: start/end of every task on every rank, seconds
 * from the iteration's start, [rank * n + task]; valid on process 0. */
typedef struct cs_hw_rresult {
    double *start_s, *end_s;   /* nranks x n, caller-allocated */
    double peak_bytes;         /* max over ranks of device (GPU) or resident (CPU) memory */
} cs_hw_rresult;

/* What a backend does, one function type each (a backend's files declare
 * their functions with these types: `cs_hw_coll_time_fn cs_hw__mpi_coll_time;`). */

/* Validates a forced algorithm / protocol name for op (-1: any op)
 * before any device work; 0 or CS_EINVAL with a message in msg. */
typedef int cs_hw_check_choice_fn(const char *algo, const char *proto, int op, char *msg,
                                  size_t len);
/* Starts the library (MPI_Init / CUDA / NCCL communicators). On
 * CS_HW_EUNAVAIL msg says why (no GPU, ...) and nothing needs freeing. */
typedef int cs_hw_init_fn(const cs_hw_config *cfg, cs_hw_ctx **out, cs_hw_info *info, char *msg,
                          size_t len);
/* Allocates buffers for counts up to max_count of op/dtype. */
typedef int cs_hw_coll_setup_fn(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t max_count);
/* Fills send buffers with the rank-dependent check pattern (pattern.h). */
typedef int cs_hw_coll_fill_fn(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count);
/* warmup + iters collectives; times_s[iters] = slowest rank's time of
 * each iteration (valid on process 0). hang: the last rank skips the
 * collective (fault injection, tests the timeout). */
typedef int cs_hw_coll_time_fn(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count, int warmup,
                               int iters, int hang, double *times_s);
/* Compares receive buffers with the expected pattern; *wrong = wrong
 * elements over all ranks (valid on process 0). corrupt: flip one
 * element first (fault injection, proves the check can fail). */
typedef int cs_hw_coll_check_fn(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count, int corrupt,
                                long long *wrong);
/* C[m x n] = A[m x k] B[k x n] in dtype t, times per iteration (rank 0's). */
typedef int cs_hw_gemm_time_fn(cs_hw_ctx *c, cs_dtype t, int m, int n, int k, int warmup,
                               int iters, double *times_s);
/* Device-to-device (GPU) or memcpy (CPU) copy of bytes. */
typedef int cs_hw_copy_time_fn(cs_hw_ctx *c, size_t bytes, int warmup, int iters,
                               double *times_s);
/* Prepares communicators and buffers for a replay plan. */
typedef int cs_hw_replay_setup_fn(cs_hw_ctx *c, const cs_hw_rplan *p);
/* Runs the plan once. */
typedef int cs_hw_replay_run_fn(cs_hw_ctx *c, const cs_hw_rplan *p, cs_hw_rresult *r);
/* Ends the library and frees c. abort_code != 0 after a failure on
 * this process: communicators are aborted and, under MPI, MPI_Abort
 * ends every rank with that exit code (so none waits forever). */
typedef void cs_hw_finalize_fn(cs_hw_ctx *c, int abort_code);

typedef struct cs_hw_backend {
    const char *name; /* "mpi", "nccl" */
    cs_hw_check_choice_fn *check_choice;
    cs_hw_init_fn *init;
    cs_hw_coll_setup_fn *coll_setup;
    cs_hw_coll_fill_fn *coll_fill;
    cs_hw_coll_time_fn *coll_time;
    cs_hw_coll_check_fn *coll_check;
    cs_hw_gemm_time_fn *gemm_time;
    cs_hw_copy_time_fn *copy_time;
    cs_hw_replay_setup_fn *replay_setup;
    cs_hw_replay_run_fn *replay_run;
    cs_hw_finalize_fn *finalize;
    /* 1 if the backend polls its own operations against --timeout (NCCL);
     * 0 if the commands' SIGALRM watchdog is the timeout (blocking MPI). */
    int polls_timeout;
    int multi_gpu;       /* 1: one process may drive several devices (-g) */
    int protocols;       /* 1: the library has protocols (--proto; bench's proto column) */
    /* What the commands take when not told (hw/README.md) */
    cs_dtype gemm_dtype;          /* compute --dtype */
    int gemm_dtype_only;          /* 1: the GEMM has no other type */
    int gemm_min_n, gemm_max_n;   /* compute --min-n, --max-n */
    double copy_min_bytes, copy_max_bytes; /* compute --copy-min, --copy-max */
    int compute_iters;            /* compute --iters */
    double replay_flops_scale;    /* replay --flops-scale */
    /* What replay runs (cmd_replay.c shapes every task with these, the
     * backend executes that shape and replay's CSV names it) */
    cs_dtype replay_gemm_dtype;   /* a compute task's GEMM type */
    int replay_gemm_nmax, replay_gemm_kmax; /* cs_hw_gemm_shape's caps for a compute task */
    size_t replay_copy_chunk;     /* a memory task copies in chunks of at most this */
    const char *peak_memory;      /* what replay's peak is: "device" or "resident" memory */
} cs_hw_backend;

/* The backends compiled in; NULL when this build lacks one. */
const cs_hw_backend *cs_hw_backend_mpi(void);
const cs_hw_backend *cs_hw_backend_nccl(void);

/* Shared helpers (hw_util.c). */
double cs_hw_now_s(void);               /* monotonic clock */
/* The launcher's rank of this process before MPI_Init (OMPI_COMM_WORLD_RANK,
 * PMIX_RANK, PMI_RANK, SLURM_PROCID), 0 when not launched by one. */
int cs_hw_launch_rank(void);
/* Whether a launcher (mpirun, srun) started this process. */
int cs_hw_launched(void);
/* Median / min / max of n values (sorts a copy). */
void cs_hw_stats(const double *v, int n, double *min, double *median, double *max);
/* Square-ish GEMM shape for a FLOP count: 2 m n k reps ~= flops, with
 * m, n <= nmax and k <= kmax; returns reps >= 1. */
int cs_hw_gemm_shape(double flops, int nmax, int kmax, int *m, int *n, int *k);
/* Copies s into buf, replacing commas and newlines by blanks. */
void cs_hw_csv_safe(char *buf, size_t len, const char *s);

#endif
