/* SPDX-License-Identifier: MIT */
/*
 * backend_mpi.c - the CPU backend: collectives with MPI on host memory,
 * GEMMs with a blocked C SGEMM (cpugemm.c), copies with memcpy. It lets the
 * measure -> calibrate loop run where there is no GPU (CI: 2-4 local
 * ranks; cluster preset cpu-local).
 *
 * Collectives: MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter (equal
 * counts: the tuned component offers a ring for it, not for
 * MPI_Reduce_scatter_block), MPI_Bcast and MPI_Reduce (root 0). Types MPI
 * lacks (bf16, fp16, fp8) travel as 16/8-bit integers and are summed by
 * user-defined commutative operators that convert through float.
 *
 * Algorithm choice (--algo): Open MPI's "tuned" collective component reads
 * OMPI_MCA_coll_tuned_use_dynamic_rules=1 and
 * OMPI_MCA_coll_tuned_<coll>_algorithm=ID from the environment at
 * MPI_Init, so they are set before MPI_Init. Names map to IDs of Open MPI
 * 4.1 (`ompi_info --param coll tuned --level 9`):
 *   all_reduce      ring -> 4 ring; tree -> 3 recursive_doubling (Open MPI
 *                   has no double binary tree; this is its log(p)-step
 *                   algorithm); also basic_linear, nonoverlapping,
 *                   segmented_ring, rabenseifner
 *   all_gather      ring -> 4 ring; also linear, bruck, recursive_doubling,
 *                   neighbor, two_proc
 *   reduce_scatter  ring -> 3 ring; also non-overlapping, recursive_halving,
 *                   butterfly
 *   broadcast       ring -> 3 pipeline (a pipelined chain, as NCCL's ring
 *                   broadcast); also basic_linear, chain, split_binary_tree,
 *                   binary_tree, binomial, knomial, scatter_allgather,
 *                   scatter_allgather_ring
 *   reduce          ring -> 3 pipeline; also linear, chain, binary,
 *                   binomial, in-order_binary, rabenseifner
 * Other MPI libraries ignore these variables (the choice is then the
 * library's). --proto has no MPI meaning and is ignored with a note.
 *
 * Timing: each measured iteration starts after MPI_Barrier; its time is
 * the slowest rank's MPI_Wtime span from barrier exit to completion. A
 * hung collective cannot be interrupted: the commands' SIGALRM watchdog
 * (watchdog.h) ends the process at --timeout.
 *
 * Replay: one thread per rank. Collectives are non-blocking (MPI_I*), one
 * communicator per (group, stream) so that streams progress independently
 * and every communicator sees its collectives in the same order on all
 * ranks (MPI requires it); compute and memory tasks run on the thread and
 * call MPI_Test between GEMM blocks / copy chunks, which is when running
 * collectives progress and when their completion is seen (end times are
 * late by at most one block). Non-blocking collectives use Open MPI's
 * libnbc algorithms, so --algo affects only blocking calls (bench).
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>

#include "backend.h"
#include "cpugemm.h"
#include "base/error.h"
#include "pattern.h"
#include "train/workload.h"

#define NSTREAMS CS_STREAM_COUNT
#define NGROUPS CS_GROUP_COUNT
#define GEMM_NMAX 512
#define GEMM_KMAX 2048
#define COPY_CHUNK (64u << 20)

struct cs_hw_ctx {
    cs_hw_config cfg;
    int rank, size;
    char *send, *recv;
    size_t send_cap, recv_cap;
    int *recvcounts;
    MPI_Op ops[CS_DTYPE_COUNT];
    /* replay */
    MPI_Comm comm[NGROUPS][NSTREAMS];
    char *rsend[NSTREAMS], *rrecv[NSTREAMS];
    int *rcounts[NSTREAMS];
    float *ga, *gb, *gc;
    char *csrc, *cdst;
    size_t ccap;
    const cs_hw_rplan *plan;
    char *state;
    double *start, *end;
    size_t *queue[NSTREAMS], qlen[NSTREAMS], head[NSTREAMS];
    int running[NSTREAMS]; /* collective running on each stream, or -1 */
    int local_stream;      /* stream whose compute/memory task runs now, or -1 */
    size_t ndone;
    MPI_Request req[NSTREAMS];
    double t0;
    int failed;
};

/* ---- algorithm names ----------------------------------------------------- */

typedef struct mpi_coll {
    const char *mca;
    const char *names[10]; /* index = Open MPI algorithm id; 0 = "ignore" */
    int ring, tree;
} mpi_coll;

static const mpi_coll colls[CS_OP_COUNT] = {
    [CS_OP_ALL_REDUCE] = {"allreduce",
                          {NULL, "basic_linear", "nonoverlapping", "recursive_doubling", "ring",
                           "segmented_ring", "rabenseifner"},
                          4, 3},
    [CS_OP_ALL_GATHER] = {"allgather",
                          {NULL, "linear", "bruck", "recursive_doubling", "ring", "neighbor",
                           "two_proc"},
                          4, 0},
    [CS_OP_REDUCE_SCATTER] = {"reduce_scatter",
                              {NULL, "non-overlapping", "recursive_halving", "ring", "butterfly"},
                              3, 0},
    [CS_OP_BROADCAST] = {"bcast",
                         {NULL, "basic_linear", "chain", "pipeline", "split_binary_tree",
                          "binary_tree", "binomial", "knomial", "scatter_allgather",
                          "scatter_allgather_ring"},
                         3, 0},
    [CS_OP_REDUCE] = {"reduce",
                      {NULL, "linear", "chain", "pipeline", "binary", "binomial", "in-order_binary",
                       "rabenseifner"},
                      3, 0},
};

/* Open MPI algorithm id of name for op, or 0. */
static int algo_id(const char *name, int op)
{
    const mpi_coll *c = &colls[op];
    if (!strcasecmp(name, "ring")) return c->ring;
    if (!strcasecmp(name, "tree")) return c->tree;
    for (int i = 1; i < 10; i++)
        if (c->names[i] && !strcasecmp(name, c->names[i])) return i;
    return 0;
}

static int mpi_check_choice(const char *algo, const char *proto, int op, char *msg, size_t len)
{
    if (algo) {
        int ok = 0;
        for (int o = 0; o < CS_OP_COUNT; o++)
            if ((op < 0 || o == op) && algo_id(algo, o)) ok = 1;
        if (!ok) {
            int o = op < 0 ? CS_OP_ALL_REDUCE : op;
            int n = snprintf(msg, len, "--algo '%s' is not an Open MPI algorithm for %s (expected ring%s",
                             algo, cs_op_name((cs_op)o), colls[o].tree ? ", tree" : "");
            for (int i = 1; i < 10 && n > 0 && (size_t)n < len; i++)
                if (colls[o].names[i] && strcmp(colls[o].names[i], "ring"))
                    n += snprintf(msg + n, len - (size_t)n, ", %s", colls[o].names[i]);
            if (n > 0 && (size_t)n < len) snprintf(msg + n, len - (size_t)n, ")");
            return CS_EINVAL;
        }
    }
    cs_proto p;
    if (proto && cs_proto_parse(proto, &p)) {
        snprintf(msg, len, "unknown --proto '%s' (expected ll, ll128 or simple)", proto);
        return CS_EINVAL;
    }
    return 0;
}

/* ---- helpers ------------------------------------------------------------- */

static int mpi_fail(cs_hw_ctx *c, int err, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(err, s, &n);
    fprintf(stderr, "collsim-hw: rank %d: %s failed: %s\n", c ? c->rank : cs_hw_launch_rank(), what,
            s);
    if (c) c->failed = 1;
    return CS_HW_EBACKEND;
}

#define MPI_TRY(c, call)                                                                          \
    do {                                                                                          \
        int mpi_rc_ = (call);                                                                     \
        if (mpi_rc_ != MPI_SUCCESS) return mpi_fail((c), mpi_rc_, #call);                         \
    } while (0)

static MPI_Datatype mpi_type(cs_dtype t)
{
    switch (t) {
    case CS_DTYPE_FP64: return MPI_DOUBLE;
    case CS_DTYPE_BF16:
    case CS_DTYPE_FP16: return MPI_UINT16_T;
    case CS_DTYPE_FP8: return MPI_UINT8_T;
    default: return MPI_FLOAT;
    }
}

static void sum_bf16(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = cs_hw_float_to_bf16(cs_hw_bf16_to_float(a[i]) + cs_hw_bf16_to_float(b[i]));
}

static void sum_fp16(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const uint16_t *a = in;
    uint16_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = cs_hw_float_to_fp16(cs_hw_fp16_to_float(a[i]) + cs_hw_fp16_to_float(b[i]));
}

static void sum_fp8(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const uint8_t *a = in;
    uint8_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = cs_hw_float_to_fp8(cs_hw_fp8_to_float(a[i]) + cs_hw_fp8_to_float(b[i]));
}

static MPI_Op mpi_sum(const cs_hw_ctx *c, cs_dtype t)
{
    return (t == CS_DTYPE_BF16 || t == CS_DTYPE_FP16 || t == CS_DTYPE_FP8) ? c->ops[t] : MPI_SUM;
}

/* Blocking collective on comm (size n) with counts[] = count for reduce_scatter. */
static int coll_run(cs_hw_ctx *c, MPI_Comm comm, int *counts, cs_op op, cs_dtype t, size_t count,
                    const void *send, void *recv)
{
    MPI_Datatype dt = mpi_type(t);
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
    default: CS_PANIC("bad op %d", (int)op);
    }
    return 0;
}

static int coll_start(cs_hw_ctx *c, MPI_Comm comm, int *counts, cs_op op, cs_dtype t,
                      size_t count, const void *send, void *recv, MPI_Request *req)
{
    MPI_Datatype dt = mpi_type(t);
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
    default: CS_PANIC("bad op %d", (int)op);
    }
    return 0;
}

/* ---- init / finalize ----------------------------------------------------- */

static void set_algorithm_env(const cs_hw_config *cfg)
{
    if (!cfg->algo) return;
    setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 1);
    for (int o = 0; o < CS_OP_COUNT; o++) {
        if (cfg->algo_op >= 0 && o != cfg->algo_op) continue;
        int id = algo_id(cfg->algo, o);
        if (!id) continue;
        char var[96], val[16];
        snprintf(var, sizeof var, "OMPI_MCA_coll_tuned_%s_algorithm", colls[o].mca);
        snprintf(val, sizeof val, "%d", id);
        setenv(var, val, 1);
    }
}

static int mpi_init(const cs_hw_config *cfg, cs_hw_ctx **out, cs_hw_info *info, char *msg,
                    size_t len)
{
    (void)msg;
    (void)len;
    set_algorithm_env(cfg);
    int rc = MPI_Init(NULL, NULL);
    if (rc != MPI_SUCCESS) return mpi_fail(NULL, rc, "MPI_Init");
    cs_hw_ctx *c = cs_xcalloc(1, sizeof *c);
    c->cfg = *cfg;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    c->recvcounts = cs_xmalloc((size_t)c->size * sizeof *c->recvcounts);
    MPI_Op_create(sum_bf16, 1, &c->ops[CS_DTYPE_BF16]);
    MPI_Op_create(sum_fp16, 1, &c->ops[CS_DTYPE_FP16]);
    MPI_Op_create(sum_fp8, 1, &c->ops[CS_DTYPE_FP8]);
    for (int g = 0; g < NGROUPS; g++)
        for (int s = 0; s < NSTREAMS; s++) c->comm[g][s] = MPI_COMM_NULL;

    memset(info, 0, sizeof *info);
    info->proc = c->rank;
    info->nprocs = c->size;
    info->local_ranks = 1;
    info->nranks = c->size;
    if (gethostname(info->host, sizeof info->host) != 0) snprintf(info->host, sizeof info->host, "?");
    info->host[sizeof info->host - 1] = 0;
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int vlen = 0;
    MPI_Get_library_version(ver, &vlen);
    ver[strcspn(ver, ",\n")] = 0; /* "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4" */
    cs_hw_csv_safe(info->library, sizeof info->library, ver);
    snprintf(info->device, sizeof info->device, "CPU");
    if (cfg->proto && c->rank == 0 && !cfg->quiet)
        fprintf(stderr, "collsim-hw: note: --proto %s is ignored by the MPI backend (MPI has no "
                        "protocol choice)\n", cfg->proto);
    *out = c;
    return 0;
}

static void mpi_finalize(cs_hw_ctx *c, int abort_code)
{
    if (abort_code) {
        fflush(NULL);
        MPI_Abort(MPI_COMM_WORLD, abort_code);
    }
    for (int g = 0; g < NGROUPS; g++)
        for (int s = 0; s < NSTREAMS; s++)
            if (c->comm[g][s] != MPI_COMM_NULL) MPI_Comm_free(&c->comm[g][s]);
    for (int t = 0; t < CS_DTYPE_COUNT; t++)
        if (c->ops[t] != MPI_OP_NULL && c->ops[t]) MPI_Op_free(&c->ops[t]);
    MPI_Finalize();
    for (int s = 0; s < NSTREAMS; s++) {
        free(c->rsend[s]);
        free(c->rrecv[s]);
        free(c->rcounts[s]);
        free(c->queue[s]);
    }
    free(c->ga);
    free(c->gb);
    free(c->gc);
    free(c->csrc);
    free(c->cdst);
    free(c->state);
    free(c->start);
    free(c->end);
    free(c->send);
    free(c->recv);
    free(c->recvcounts);
    free(c);
}

/* ---- bench ------------------------------------------------------------- */

static int mpi_coll_setup(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t max_count)
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

static int mpi_coll_fill(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count)
{
    cs_hw_pattern_fill(c->send, t, op, count, c->rank, c->size);
    memset(c->recv, 0, cs_hw_recv_count(op, count, c->size) * (size_t)cs_dtype_size(t));
    return 0;
}

static int mpi_coll_time(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count, int warmup, int iters,
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
            rc = mpi_fail(c, e, "MPI_Barrier");
            break;
        }
        double t0 = MPI_Wtime();
        rc = coll_run(c, MPI_COMM_WORLD, c->recvcounts, op, t, count, c->send, c->recv);
        local[i] = MPI_Wtime() - t0;
    }
    if (!rc) {
        int e = MPI_Reduce(local, times_s, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (e != MPI_SUCCESS) rc = mpi_fail(c, e, "MPI_Reduce");
    }
    free(local);
    return rc;
}

static int mpi_coll_check(cs_hw_ctx *c, cs_op op, cs_dtype t, size_t count, int corrupt,
                          long long *wrong)
{
    if (corrupt && c->rank == 0) cs_hw_elem_set(c->recv, t, 0, -100.0);
    long long mine = cs_hw_pattern_check(c->recv, t, op, count, c->rank, c->size);
    *wrong = 0;
    MPI_TRY(c, MPI_Reduce(&mine, wrong, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
    return 0;
}

/* ---- compute ------------------------------------------------------------- */

static int mpi_gemm_time(cs_hw_ctx *c, cs_dtype t, int m, int n, int k, int warmup, int iters,
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
    int e = MPI_Reduce(local, times_s, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (e != MPI_SUCCESS) rc = mpi_fail(c, e, "MPI_Reduce");
out:
    free(a);
    free(b);
    free(cc);
    free(local);
    return rc;
}

static volatile unsigned char sink;

static int mpi_copy_time(cs_hw_ctx *c, size_t bytes, int warmup, int iters, double *times_s)
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
    int e = MPI_Reduce(local, times_s, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (e != MPI_SUCCESS) rc = mpi_fail(c, e, "MPI_Reduce");
out:
    free(src);
    free(dst);
    free(local);
    return rc;
}

/* ---- replay -------------------------------------------------------------- */

static int group_color(int g, int rank, int shard)
{
    return g == CS_GROUP_WORLD ? 0 : g == CS_GROUP_SHARD ? rank / shard : rank % shard;
}

static int mpi_replay_setup(cs_hw_ctx *c, const cs_hw_rplan *p)
{
    int used[NGROUPS][NSTREAMS] = {{0}};
    size_t sbytes[NSTREAMS] = {0}, rbytes[NSTREAMS] = {0}, gemm = 1, copy = 1;
    for (size_t i = 0; i < p->n; i++) {
        const cs_hw_rtask *t = &p->tasks[i];
        if (t->kind == CS_TASK_COLLECTIVE) used[t->group][t->stream] = 1;
    }
    /* every rank runs the same plan, so these collective calls match */
    for (int g = 0; g < NGROUPS; g++)
        for (int s = 0; s < NSTREAMS; s++)
            if (used[g][s] && c->comm[g][s] == MPI_COMM_NULL)
                MPI_TRY(c, MPI_Comm_split(MPI_COMM_WORLD, group_color(g, c->rank, p->shard_ranks),
                                          c->rank, &c->comm[g][s]));
    for (size_t i = 0; i < p->n; i++) {
        const cs_hw_rtask *t = &p->tasks[i];
        if (t->kind == CS_TASK_COLLECTIVE) {
            int gsize;
            MPI_Comm_size(c->comm[t->group][t->stream], &gsize);
            size_t ts = (size_t)cs_dtype_size(t->dtype);
            if (cs_hw_recv_count(t->op, t->count, gsize) > INT_MAX ||
                cs_hw_send_count(t->op, t->count, gsize) > INT_MAX) {
                fprintf(stderr, "collsim-hw: rank %d: task %zu: count exceeds MPI's int range\n",
                        c->rank, i);
                return CS_HW_ENOMEM;
            }
            size_t sb = cs_hw_send_count(t->op, t->count, gsize) * ts;
            size_t rb = cs_hw_recv_count(t->op, t->count, gsize) * ts;
            if (sb > sbytes[t->stream]) sbytes[t->stream] = sb;
            if (rb > rbytes[t->stream]) rbytes[t->stream] = rb;
            if (!c->rcounts[t->stream]) {
                c->rcounts[t->stream] = cs_xmalloc((size_t)gsize * sizeof(int));
            }
        } else if (t->kind == CS_TASK_COMPUTE) {
            int m, n, k;
            cs_hw_gemm_shape(t->flops, GEMM_NMAX, GEMM_KMAX, &m, &n, &k);
            size_t need = (size_t)m * (size_t)k;
            if ((size_t)k * (size_t)n > need) need = (size_t)k * (size_t)n;
            if ((size_t)m * (size_t)n > need) need = (size_t)m * (size_t)n;
            if (need > gemm) gemm = need;
        } else {
            size_t b = t->copy_bytes < COPY_CHUNK ? t->copy_bytes : COPY_CHUNK;
            if (b > copy) copy = b;
        }
    }
    for (int s = 0; s < NSTREAMS; s++) {
        c->rsend[s] = calloc(sbytes[s] ? sbytes[s] : 1, 1);
        c->rrecv[s] = calloc(rbytes[s] ? rbytes[s] : 1, 1);
        if (!c->rsend[s] || !c->rrecv[s]) goto nomem;
        c->queue[s] = cs_xmalloc((p->n ? p->n : 1) * sizeof(size_t));
    }
    c->ga = malloc(gemm * sizeof(float));
    c->gb = malloc(gemm * sizeof(float));
    c->gc = malloc(gemm * sizeof(float));
    c->csrc = calloc(copy, 1);
    c->cdst = calloc(copy, 1);
    c->ccap = copy;
    if (!c->ga || !c->gb || !c->gc || !c->csrc || !c->cdst) goto nomem;
    for (size_t i = 0; i < gemm; i++) c->ga[i] = c->gb[i] = (float)cs_hw_pattern_value(c->rank, i);
    c->state = cs_xmalloc(p->n ? p->n : 1);
    c->start = cs_xmalloc((p->n ? p->n : 1) * sizeof(double));
    c->end = cs_xmalloc((p->n ? p->n : 1) * sizeof(double));
    return 0;
nomem:
    fprintf(stderr, "collsim-hw: rank %d: cannot allocate replay buffers\n", c->rank);
    return CS_HW_ENOMEM;
}

static int task_ready(const cs_hw_ctx *c, const cs_hw_rtask *t)
{
    for (int k = 0; k < t->ndeps; k++) {
        char s = c->state[t->deps[k]];
        if (t->on_start[k] ? s < 1 : s < 2) return 0;
    }
    return 1;
}

/* Tests running collectives, then starts every ready collective at the
 * head of an idle stream. Runs between GEMM blocks and copy chunks. */
static void progress(void *arg)
{
    cs_hw_ctx *c = arg;
    const cs_hw_rplan *p = c->plan;
    if (c->failed) return;
    for (int s = 0; s < NSTREAMS; s++) {
        if (c->running[s] < 0) continue;
        int flag = 0;
        int e = MPI_Test(&c->req[s], &flag, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS) {
            mpi_fail(c, e, "MPI_Test");
            return;
        }
        if (flag) {
            c->end[c->running[s]] = MPI_Wtime() - c->t0;
            c->state[c->running[s]] = 2;
            c->ndone++;
            c->running[s] = -1;
        }
    }
    for (int s = 0; s < NSTREAMS; s++) {
        if (c->running[s] >= 0 || s == c->local_stream || c->head[s] == c->qlen[s]) continue;
        size_t i = c->queue[s][c->head[s]];
        const cs_hw_rtask *t = &p->tasks[i];
        if (t->kind != CS_TASK_COLLECTIVE || !task_ready(c, t)) continue;
        MPI_Comm comm = c->comm[t->group][s];
        int gsize;
        MPI_Comm_size(comm, &gsize);
        for (int r = 0; r < gsize; r++) c->rcounts[s][r] = (int)t->count;
        c->head[s]++;
        c->state[i] = 1;
        c->start[i] = MPI_Wtime() - c->t0;
        if (coll_start(c, comm, c->rcounts[s], t->op, t->dtype, t->count, c->rsend[s],
                       c->rrecv[s], &c->req[s]))
            return;
        c->running[s] = (int)i;
    }
}

static void run_local(cs_hw_ctx *c, const cs_hw_rtask *t)
{
    if (t->kind == CS_TASK_COMPUTE) {
        int m, n, k;
        int reps = cs_hw_gemm_shape(t->flops, GEMM_NMAX, GEMM_KMAX, &m, &n, &k);
        for (int r = 0; r < reps && !c->failed; r++)
            cs_hw_cpu_sgemm(m, n, k, c->ga, c->gb, c->gc, progress, c);
    } else {
        for (size_t done = 0; done < t->copy_bytes && !c->failed;) {
            size_t b = t->copy_bytes - done < c->ccap ? t->copy_bytes - done : c->ccap;
            memcpy(c->cdst, c->csrc, b);
            done += b;
            progress(c);
        }
        sink = (unsigned char)c->cdst[0];
    }
}

static int mpi_replay_run(cs_hw_ctx *c, const cs_hw_rplan *p, cs_hw_rresult *r)
{
    c->plan = p;
    memset(c->state, 0, p->n ? p->n : 1);
    c->ndone = 0;
    c->local_stream = -1;
    for (int s = 0; s < NSTREAMS; s++) {
        c->qlen[s] = c->head[s] = 0;
        c->running[s] = -1;
    }
    for (size_t i = 0; i < p->n; i++) {
        c->start[i] = c->end[i] = 0;
        int s = p->tasks[i].stream;
        c->queue[s][c->qlen[s]++] = i;
    }
    MPI_TRY(c, MPI_Barrier(MPI_COMM_WORLD));
    c->t0 = MPI_Wtime();
    while (c->ndone < p->n && !c->failed) {
        progress(c);
        int ran = 0;
        for (int s = 0; s < NSTREAMS && !ran; s++) {
            if (c->running[s] >= 0 || c->head[s] == c->qlen[s]) continue;
            size_t i = c->queue[s][c->head[s]];
            const cs_hw_rtask *t = &p->tasks[i];
            if (t->kind == CS_TASK_COLLECTIVE || !task_ready(c, t)) continue;
            c->head[s]++;
            c->state[i] = 1;
            c->start[i] = MPI_Wtime() - c->t0;
            c->local_stream = s; /* keeps collectives of this stream waiting */
            progress(c);         /* collectives waiting for this task's start */
            run_local(c, t);
            c->local_stream = -1;
            c->end[i] = MPI_Wtime() - c->t0;
            c->state[i] = 2;
            c->ndone++;
            ran = 1;
        }
        int busy = 0;
        for (int s = 0; s < NSTREAMS; s++) busy |= c->running[s] >= 0;
        if (!ran && !busy && c->ndone < p->n) {
            /* nothing runs and nothing can start: progress() starts every
             * ready collective, so the schedule's dependencies are circular */
            progress(c);
            for (int s = 0; s < NSTREAMS; s++) busy |= c->running[s] >= 0;
            if (!busy) {
                fprintf(stderr, "collsim-hw: rank %d: replay stalled with %zu of %zu tasks done "
                                "(circular dependencies?)\n", c->rank, c->ndone, p->n);
                return CS_HW_EBACKEND;
            }
        }
    }
    if (c->failed) return CS_HW_EBACKEND;
    MPI_TRY(c, MPI_Gather(c->start, (int)p->n, MPI_DOUBLE, r->start_s, (int)p->n, MPI_DOUBLE, 0,
                          MPI_COMM_WORLD));
    MPI_TRY(c, MPI_Gather(c->end, (int)p->n, MPI_DOUBLE, r->end_s, (int)p->n, MPI_DOUBLE, 0,
                          MPI_COMM_WORLD));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double mine = (double)ru.ru_maxrss * 1024.0, peak = 0;
    MPI_TRY(c, MPI_Reduce(&mine, &peak, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD));
    r->peak_bytes = peak;
    return 0;
}

static const cs_hw_backend mpi_backend = {
    .name = "mpi",
    .check_choice = mpi_check_choice,
    .init = mpi_init,
    .coll_setup = mpi_coll_setup,
    .coll_fill = mpi_coll_fill,
    .coll_time = mpi_coll_time,
    .coll_check = mpi_coll_check,
    .gemm_time = mpi_gemm_time,
    .copy_time = mpi_copy_time,
    .replay_setup = mpi_replay_setup,
    .replay_run = mpi_replay_run,
    .finalize = mpi_finalize,
    .polls_timeout = 0,
    .multi_gpu = 0,
    .protocols = 0,
    .gemm_dtype = CS_DTYPE_FP32, /* cpugemm.c is an SGEMM */
    .gemm_dtype_only = 1,
    .gemm_min_n = 64,
    .gemm_max_n = 512,
    .copy_min_bytes = 64 << 10,
    .copy_max_bytes = 64 << 20,
    .compute_iters = 3,
    .replay_flops_scale = 1e-4, /* the SGEMM is ~10^4 times slower than a GPU's tensor cores */
    .peak_memory = "resident",
};

const cs_hw_backend *cs_hw_backend_mpi(void) { return &mpi_backend; }
