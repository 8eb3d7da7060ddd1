/* SPDX-License-Identifier: MIT */
/*
 * parallel.c - MPI glue for sweeps (see parallel.h): launcher detection,
 * rank/size, a minimum reduction and the strided gather of fixed-size
 * items on rank 0. With CS_HAVE_MPI undefined, the one-process versions.
 *
 * Items travel as bytes (MPI_BYTE): every process runs the same binary,
 * so struct layouts agree. Counts are int in MPI-3; more than INT_MAX
 * bytes per process is refused with a panic rather than truncated.
 */
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#ifdef CS_HAVE_MPI
#include <limits.h>
#include <mpi.h>

static int mpi_active; /* this process called MPI_Init */

static int launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

int cs_parallel_init(int *argc, char ***argv)
{
    if (mpi_active || !launched()) return 0;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) CS_PANIC("MPI_Init failed");
    mpi_active = 1;
    return 1;
}

int cs_parallel_rank(void)
{
    int r = 0;
    if (mpi_active) MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

int cs_parallel_size(void)
{
    int n = 1;
    if (mpi_active) MPI_Comm_size(MPI_COMM_WORLD, &n);
    return n;
}

unsigned long long cs_parallel_min(unsigned long long v)
{
    unsigned long long m = v;
    if (mpi_active) MPI_Allreduce(&v, &m, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    return m;
}

/* Items process r owns: i = r, r + k, ... < n. */
static size_t owned(size_t n, int r, int k)
{
    return (size_t)r < n ? (n - (size_t)r + (size_t)k - 1) / (size_t)k : 0;
}

void cs_parallel_gather_strided(void *items, size_t item_bytes, size_t n)
{
    if (!mpi_active) return;
    int k = cs_parallel_size(), me = cs_parallel_rank();
    if (k == 1) return;
    unsigned char *base = items;
    size_t mine = owned(n, me, k);
    if (mine * item_bytes > INT_MAX) CS_PANIC("gather: %zu bytes exceed MPI's int count", mine * item_bytes);
    unsigned char *send = cs_xmalloc(mine * item_bytes + 1);
    for (size_t j = 0; j < mine; j++)
        memcpy(send + j * item_bytes, base + ((size_t)me + j * (size_t)k) * item_bytes, item_bytes);
    int *counts = NULL, *displs = NULL;
    unsigned char *recv = NULL;
    if (me == 0) {
        counts = cs_xmalloc((size_t)k * sizeof *counts);
        displs = cs_xmalloc((size_t)k * sizeof *displs);
        size_t off = 0;
        for (int r = 0; r < k; r++) {
            size_t b = owned(n, r, k) * item_bytes;
            if (off > INT_MAX || b > INT_MAX) CS_PANIC("gather: %zu items too many for MPI_Gatherv", n);
            counts[r] = (int)b;
            displs[r] = (int)off;
            off += b;
        }
        recv = cs_xmalloc(off + 1);
    }
    MPI_Gatherv(send, (int)(mine * item_bytes), MPI_BYTE, recv, counts, displs, MPI_BYTE, 0,
                MPI_COMM_WORLD);
    if (me == 0) {
        for (int r = 0; r < k; r++) {
            size_t m = owned(n, r, k);
            for (size_t j = 0; j < m; j++)
                memcpy(base + ((size_t)r + j * (size_t)k) * item_bytes,
                       recv + (size_t)displs[r] + j * item_bytes, item_bytes);
        }
    }
    free(send);
    free(recv);
    free(counts);
    free(displs);
}

void cs_parallel_finalize(void)
{
    if (!mpi_active) return;
    MPI_Finalize();
    mpi_active = 0;
}

#else /* one process */

int cs_parallel_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}
int cs_parallel_rank(void) { return 0; }
int cs_parallel_size(void) { return 1; }
unsigned long long cs_parallel_min(unsigned long long v) { return v; }
void cs_parallel_gather_strided(void *items, size_t item_bytes, size_t n)
{
    (void)items;
    (void)item_bytes;
    (void)n;
}
void cs_parallel_finalize(void) {}

#endif
