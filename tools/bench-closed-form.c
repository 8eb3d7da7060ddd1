/* SPDX-License-Identifier: MIT */
/*
 * bench-closed-form.c - closed-form collective evaluations per second
 * (auto choice over every algorithm and protocol, varying size, op and
 * rank count), for the closing notes; not a test.
 */
#include <stdio.h>
#include <time.h>

#include "coll/collective.h"
#include "config/config.h"

int main(void)
{
    cs_cluster c;
    cs_diag d;
    if (cs_config_cluster("dgx-h100", &c, &d)) return 2;
    static const int ranks[] = {8, 64, 512, 4096};
    cs_topology t[4];
    for (int i = 0; i < 4; i++)
        if (cs_topology_build(&c, ranks[i], 0, &t[i], &d)) return 2;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    long evals = 0;
    double sink = 0;
    for (int rep = 0; rep < 4000; rep++)
        for (int k = 0; k < 4; k++)
            for (int op = 0; op < CS_OP_COUNT; op++)
                for (double s = 8; s < 17e9; s *= 8) {
                    double tm;
                    if (cs_collective_time(&t[k], (cs_op)op, s, CS_ALGO_RING, CS_PROTO_SIMPLE, &tm) == 0)
                        sink += tm;
                    evals++;
                }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double sec = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
    printf("closed form: %ld evaluations in %.3f s = %.2f million/s (checksum %.6g)\n", evals, sec,
           evals / sec / 1e6, sink);
    return 0;
}
