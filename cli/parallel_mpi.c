/* SPDX-License-Identifier: MIT */
/*
 * parallel_mpi.c - the module collsim-mpi.so (see parallel_mpi.h): thin
 * wrappers over the MPI-3 calls parallel.c needs, exported as one table.
 */
#include <mpi.h>

#include "parallel_mpi.h"

static int init(int *argc, char ***argv) { return MPI_Init(argc, argv) != MPI_SUCCESS; }

static int rank(void)
{
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

static int size(void)
{
    int n = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

static unsigned long long min_ull(unsigned long long v)
{
    unsigned long long m = v;
    MPI_Allreduce(&v, &m, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    return m;
}

static int gatherv(const void *send, int count, void *recv, const int *counts, const int *displs)
{
    return MPI_Gatherv(send, count, MPI_BYTE, recv, counts, displs, MPI_BYTE, 0,
                       MPI_COMM_WORLD) != MPI_SUCCESS;
}

static void finalize(void) { MPI_Finalize(); }

const cs_parallel_mpi cs_parallel_mpi_calls = {init, rank, size, min_ull, gatherv, finalize};
