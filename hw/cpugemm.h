/* SPDX-License-Identifier: MIT */
/*
 * cpugemm.h - a simple cache-blocked single-precision GEMM for the MPI
 * (CPU) backend: C[m x n] = A[m x k] B[k x n], row-major. Not a BLAS: it
 * exists so CPU ranks have a compute kernel whose time grows with FLOPs
 * like a GPU GEMM's, with no dependency beyond the C compiler. A callback
 * runs between blocks so the replay executor can progress non-blocking
 * MPI collectives while "computing" (as a GPU's copy engines and NCCL
 * kernels progress while a GEMM runs).
 */
#ifndef CS_HW_CPUGEMM_H
#define CS_HW_CPUGEMM_H

/* progress may be NULL. */
void cs_hw_cpu_sgemm(int m, int n, int k, const float *a, const float *b, float *c,
                     void (*progress)(void *), void *arg);

#endif
