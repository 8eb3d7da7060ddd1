/* SPDX-License-Identifier: MIT */
/*
 * parallel_mpi.h - the MPI calls behind parallel.c, built as a module of
 * their own (collsim-mpi.so, the only part of collsim linked with MPI).
 * parallel.c loads it with dlopen only when a launcher started the
 * process, so a plain run never maps OpenMPI and its dozen libraries.
 * The module reads and writes only what it is given; errors come back as
 * nonzero codes for parallel.c to report.
 */
#ifndef CS_PARALLEL_MPI_H
#define CS_PARALLEL_MPI_H

/* The table the module exports under CS_PARALLEL_MPI_SYMBOL. */
typedef struct cs_parallel_mpi {
    int (*init)(int *argc, char ***argv); /* MPI_Init: 0 ok */
    int (*rank)(void);                    /* in MPI_COMM_WORLD */
    int (*size)(void);
    unsigned long long (*min_ull)(unsigned long long v); /* MPI_Allreduce MIN */
    /* MPI_Gatherv of bytes on rank 0 (recv, counts, displs read there only): 0 ok */
    int (*gatherv)(const void *send, int count, void *recv, const int *counts, const int *displs);
    void (*finalize)(void);
} cs_parallel_mpi;

#define CS_PARALLEL_MPI_SYMBOL "cs_parallel_mpi_calls"
#define CS_PARALLEL_MPI_MODULE "collsim-mpi.so"

#endif
