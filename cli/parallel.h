/* SPDX-License-Identifier: MIT */
/*
 * parallel.h - the MPI glue of the collsim executable: splitting a sweep
 * over the ranks of `mpirun -np K collsim ...` and gathering it on rank 0.
 *
 * MPI is initialised only when a launcher started the process (one of
 * OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK in the environment), so a
 * plain `collsim ...` never touches MPI; without CS_HAVE_MPI (no MPI at
 * build time) every function is the one-process version. This module holds
 * the process's MPI state (whether it was initialised): it belongs to the
 * executable, not to the library, which stays free of global state.
 */
#ifndef CS_PARALLEL_H
#define CS_PARALLEL_H

#include <stddef.h>

/* Initialises MPI when launched by mpirun/srun; returns 1 if it did, 0 if
 * running as one process. Call once, before any other function here. */
int cs_parallel_init(int *argc, char ***argv);
/* This process's rank and the number of processes (0 and 1 serially). */
int cs_parallel_rank(void);
int cs_parallel_size(void);
/* The minimum of v over all processes (v serially). */
unsigned long long cs_parallel_min(unsigned long long v);
/* items holds n items of item_bytes each; process r has filled items
 * i = r, r + K, r + 2K, ... After the call rank 0's array holds every
 * item (gathered with MPI_Gatherv as bytes); other ranks' arrays are
 * unchanged. Collective: every process must call it. */
void cs_parallel_gather_strided(void *items, size_t item_bytes, size_t n);
/* Finalises MPI if cs_parallel_init initialised it. */
void cs_parallel_finalize(void);

#endif
