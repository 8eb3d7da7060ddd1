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
 * Replay (backend_mpi_replay.c): one thread per rank, non-blocking
 * collectives on one communicator per (group, stream), progressed between
 * GEMM blocks and copy chunks. Collective calls, bench and compute:
 * backend_mpi_ops.c.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backend_mpi.h"
#include "base/error.h"

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
    /* coll_tuned_alltoall_algorithm; send_recv has no tuned algorithm */
    [CS_OP_ALL_TO_ALL] = {"alltoall",
                          {NULL, "linear", "pairwise", "modified_bruck", "linear_sync", "two_proc"},
                          0, 0},
    [CS_OP_SEND_RECV] = {NULL, {NULL}, 0, 0},
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

int cs_hw__mpi_fail(cs_hw_ctx *c, int err, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;
    MPI_Error_string(err, s, &n);
    fprintf(stderr, "collsim-hw: rank %d: %s failed: %s\n", c ? c->rank : cs_hw_launch_rank(), what,
            s);
    if (c) c->failed = 1;
    return CS_HW_EBACKEND;
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
    if (rc != MPI_SUCCESS) return cs_hw__mpi_fail(NULL, rc, "MPI_Init");
    cs_hw_ctx *c = cs_xcalloc(1, sizeof *c);
    c->cfg = *cfg;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    c->recvcounts = cs_xmalloc((size_t)c->size * sizeof *c->recvcounts);
    cs_hw__mpi_ops_create(c);

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
    cs_hw__mpi_replay_free(c);
    cs_hw__mpi_ops_free(c);
    MPI_Finalize();
    free(c->send);
    free(c->recv);
    free(c->recvcounts);
    free(c);
}

static const cs_hw_backend mpi_backend = {
    .name = "mpi",
    .check_choice = mpi_check_choice,
    .init = mpi_init,
    .coll_setup = cs_hw__mpi_coll_setup,
    .coll_fill = cs_hw__mpi_coll_fill,
    .coll_time = cs_hw__mpi_coll_time,
    .coll_check = cs_hw__mpi_coll_check,
    .gemm_time = cs_hw__mpi_gemm_time,
    .copy_time = cs_hw__mpi_copy_time,
    .replay_setup = cs_hw__mpi_replay_setup,
    .replay_run = cs_hw__mpi_replay_run,
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
    .replay_gemm_dtype = CS_DTYPE_FP32, /* cpugemm.c */
    .replay_gemm_nmax = 512,            /* square up to 512 (1 MiB operands), then a longer k */
    .replay_gemm_kmax = 2048,
    .replay_copy_chunk = 64u << 20,     /* MPI_Test every 64 MiB copied */
    .peak_memory = "resident",
};

const cs_hw_backend *cs_hw_backend_mpi(void) { return &mpi_backend; }
