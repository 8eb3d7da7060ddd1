/* SPDX-License-Identifier: MIT */
/*
 * parallel.c - MPI glue for sweeps (see parallel.h): launcher detection,
 * rank/size, a minimum reduction and the strided gather of fixed-size
 * items on rank 0.
 *
 * MPI itself lives in the module collsim-mpi.so (parallel_mpi.h), loaded
 * with dlopen only when a launcher started the process: collsim is not
 * linked with MPI, so a plain run (`collsim --version`, every command
 * outside mpirun) maps none of it. The module is looked for next to the
 * executable (the build tree), then in the install directory; RTLD_GLOBAL
 * because Open MPI's own plugins resolve symbols of libmpi. Without
 * CS_HAVE_MPI (no MPI at build time) every function is the one-process
 * version, also under a launcher.
 *
 * Items travel as bytes (MPI_BYTE): every process runs the same binary,
 * so struct layouts agree. Counts are int in MPI-3; more than INT_MAX
 * bytes per process is refused with a panic rather than truncated.
 */
#include "parallel.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#ifdef CS_HAVE_MPI
#include <dlfcn.h>
#include <unistd.h>

#include "parallel_mpi.h"

static const cs_parallel_mpi *mpi; /* set once MPI_Init succeeded */

static int launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

/* dlopen of the module next to /proc/self/exe, else in CS_MPI_MODULE_DIR. */
static void *load_module(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n > 0) {
        path[n] = '\0';
        char *slash = strrchr(path, '/');
        if (slash && (size_t)(slash + 1 - path) + sizeof CS_PARALLEL_MPI_MODULE <= sizeof path) {
            memcpy(slash + 1, CS_PARALLEL_MPI_MODULE, sizeof CS_PARALLEL_MPI_MODULE);
            void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
            if (h) return h;
        }
    }
    return dlopen(CS_MPI_MODULE_DIR "/" CS_PARALLEL_MPI_MODULE, RTLD_NOW | RTLD_GLOBAL);
}

int cs_parallel_init(int *argc, char ***argv)
{
    if (mpi || !launched()) return 0;
    void *h = load_module();
    if (!h) CS_PANIC("launched by mpirun, but %s does not load: %s", CS_PARALLEL_MPI_MODULE, dlerror());
    const cs_parallel_mpi *m = dlsym(h, CS_PARALLEL_MPI_SYMBOL);
    if (!m) CS_PANIC("%s lacks %s", CS_PARALLEL_MPI_MODULE, CS_PARALLEL_MPI_SYMBOL);
    if (m->init(argc, argv)) CS_PANIC("MPI_Init failed");
    mpi = m; /* the module stays loaded: MPI lives until exit */
    return 1;
}

int cs_parallel_rank(void) { return mpi ? mpi->rank() : 0; }
int cs_parallel_size(void) { return mpi ? mpi->size() : 1; }
unsigned long long cs_parallel_min(unsigned long long v) { return mpi ? mpi->min_ull(v) : v; }

/* Items process r owns: i = r, r + k, ... < n. */
static size_t owned(size_t n, int r, int k)
{
    return (size_t)r < n ? (n - (size_t)r + (size_t)k - 1) / (size_t)k : 0;
}

void cs_parallel_gather_strided(void *items, size_t item_bytes, size_t n)
{
    if (!mpi) return;
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
    if (mpi->gatherv(send, (int)(mine * item_bytes), recv, counts, displs)) CS_PANIC("MPI_Gatherv failed");
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
    if (!mpi) return;
    mpi->finalize();
    mpi = NULL;
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
