/* SPDX-License-Identifier: MIT */
/*
 * cpugemm.c - blocked SGEMM (see cpugemm.h). Blocks of 64 rows x 256 of
 * the inner dimension keep a panel of B in cache; the innermost loop runs
 * over contiguous columns so the compiler vectorizes it. O(m n k).
 */
#include "cpugemm.h"

#include <string.h>

#define BM 64
#define BK 256

void cs_hw_cpu_sgemm(int m, int n, int k, const float *a, const float *b, float *c,
                     void (*progress)(void *), void *arg)
{
    memset(c, 0, (size_t)m * (size_t)n * sizeof *c);
    for (int i0 = 0; i0 < m; i0 += BM) {
        int i1 = i0 + BM < m ? i0 + BM : m;
        for (int p0 = 0; p0 < k; p0 += BK) {
            int p1 = p0 + BK < k ? p0 + BK : k;
            for (int i = i0; i < i1; i++) {
                float *restrict ci = c + (size_t)i * (size_t)n;
                for (int p = p0; p < p1; p++) {
                    float aip = a[(size_t)i * (size_t)k + (size_t)p];
                    const float *restrict bp = b + (size_t)p * (size_t)n;
                    for (int j = 0; j < n; j++) ci[j] += aip * bp[j];
                }
            }
            if (progress) progress(arg);
        }
    }
}
