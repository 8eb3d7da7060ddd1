/* SPDX-License-Identifier: MIT */
/*
 * backend_mpi.h - private to the MPI backend, shared by its three files:
 *   backend_mpi.c         algorithm names, init / finalize, the table
 *   backend_mpi_ops.c     collective calls, bench and compute measurements
 *   backend_mpi_replay.c  the replay executor
 * The context is one rank's: MPI_COMM_WORLD's rank and size, the bench
 * buffers and the user-defined sums; the replay's state hangs off it and
 * is the replay file's alone.
 */
#ifndef CS_HW_BACKEND_MPI_H
#define CS_HW_BACKEND_MPI_H

#include <mpi.h>
#include <stddef.h>

#include "backend.h"

typedef struct mpi_replay mpi_replay; /* backend_mpi_replay.c */

struct cs_hw_ctx {
    cs_hw_config cfg;
    int rank, size;
    char *send, *recv;   /* bench buffers */
    size_t send_cap, recv_cap;
    int *recvcounts;     /* size: reduce_scatter's counts */
    MPI_Op ops[CS_DTYPE_COUNT]; /* sums of the types MPI lacks (bf16, fp16, fp8) */
    mpi_replay *replay;  /* NULL until replay_setup */
    int failed;          /* an MPI call failed (message printed) */
};

/* Prints "rank R: WHAT failed: MPI's words" (c may be NULL: before the
 * context exists), marks c failed; returns CS_HW_EBACKEND. */
int cs_hw__mpi_fail(cs_hw_ctx *c, int err, const char *what);

#define MPI_TRY(c, call)                                                                          \
    do {                                                                                          \
        int mpi_rc_ = (call);                                                                     \
        if (mpi_rc_ != MPI_SUCCESS) return cs_hw__mpi_fail((c), mpi_rc_, #call);                  \
    } while (0)

/* backend_mpi_ops.c */
void cs_hw__mpi_ops_create(cs_hw_ctx *c);
void cs_hw__mpi_ops_free(cs_hw_ctx *c);
/* The MPI type a buffer of t is sent as (16- and 8-bit types as unsigned integers). */
MPI_Datatype cs_hw__mpi_type(cs_dtype t);
/* Starts a non-blocking collective on comm; counts[size of comm] = count
 * for reduce_scatter. */
int cs_hw__mpi_coll_start(cs_hw_ctx *c, MPI_Comm comm, int *counts, cs_op op, cs_dtype t,
                          size_t count, const void *send, void *recv, MPI_Request *req);
cs_hw_coll_setup_fn cs_hw__mpi_coll_setup;
cs_hw_coll_fill_fn cs_hw__mpi_coll_fill;
cs_hw_coll_time_fn cs_hw__mpi_coll_time;
cs_hw_coll_check_fn cs_hw__mpi_coll_check;
cs_hw_gemm_time_fn cs_hw__mpi_gemm_time;
cs_hw_copy_time_fn cs_hw__mpi_copy_time;

/* backend_mpi_replay.c */
cs_hw_replay_setup_fn cs_hw__mpi_replay_setup;
cs_hw_replay_run_fn cs_hw__mpi_replay_run;
/* Frees the replay's communicators (before MPI_Finalize) and buffers. */
void cs_hw__mpi_replay_free(cs_hw_ctx *c);

#endif
