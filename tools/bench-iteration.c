/* SPDX-License-Identifier: MIT */
/*
 * bench-iteration.c - time to simulate one training iteration (graph build
 * + discrete-event run) of a 70B, 80-layer model under fsdp_full_shard on
 * 4096 GPUs (dgx-h100), median of 21 runs; for the closing notes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config/config.h"
#include "train/iteration.h"
#include "train/workload.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    cs_cluster c;
    cs_model m;
    cs_training t;
    cs_topology topo;
    cs_diag d;
    if (cs_config_cluster("dgx-h100", &c, &d) || cs_model_load("llama2-70b", &m, &d)) return 2;
    cs_training_defaults(&t, CS_STRAT_FSDP_FULL_SHARD);
    if (cs_topology_build(&c, 4096, 0, &topo, &d)) return 2;
    double ms[21];
    size_t tasks = 0;
    double it_s = 0;
    for (int r = 0; r < 21; r++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        cs_workload *w;
        cs_iteration it;
        if (cs_workload_build(&m, &t, &topo, &w, &d) || cs_iteration_run(w, &t, &it, &d)) return 2;
        tasks = cs_workload_count(w);
        it_s = it.iteration_time_s;
        cs_iteration_free(&it);
        cs_workload_free(w);
        clock_gettime(CLOCK_MONOTONIC, &b);
        ms[r] = 1e3 * ((b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec));
    }
    qsort(ms, 21, sizeof ms[0], cmp);
    printf("llama2-70b (%d layers) fsdp_full_shard on 4096 GPUs: %zu tasks, simulated iteration "
           "%.3f s; wall per simulation: median %.3f ms (min %.3f, max %.3f)\n",
           m.layers, tasks, it_s, ms[10], ms[0], ms[20]);
    return 0;
}
