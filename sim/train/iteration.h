/* SPDX-License-Identifier: MIT */
/*
 * iteration.h - discrete-event execution of one iteration's task graph on
 * a rank's streams, with compute/communication overlap and the memory
 * timeline.
 *
 * Each stream runs its tasks in order, a task starting once its
 * dependencies allow. Streams are accounted by their kind
 * (cs_stream_kind_of): while compute and communication streams overlap
 * both run slower by (1 + comm_compute_slowdown) (shared SMs and memory
 * bandwidth; a calibratable factor); concurrent collectives of one process
 * group share its links equally; copy streams (the host copies of
 * activation offloading) run at their own rate and count as neither,
 * and as side_copies_s while nothing else runs. A memory-bound task (a copy or cast) on a
 * communication stream is no communication: it takes no link, takes turns
 * with the compute stream's kernel (each at 1 / (1 + such copies) while
 * both run) and, when nothing else runs, counts as side_copies_s. A task
 * starts no earlier than its issue_s (the CPU thread's clock); time when
 * nothing runs is cpu_wait_s. Exposed communication is the time some
 * communication stream runs a collective while no compute stream runs,
 * attributed to the running primitives in equal shares. The Chrome trace
 * of a run is out/trace.h.
 *
 * Ranks that differ (rankclass.h: des: stragglers under the DES engine)
 * run one timeline per class, all on one clock: a class's kernels take
 * its slowdown x their duration; a collective is a synchronisation point,
 * starting once it is ready on every class (the last rank's inputs are
 * there) and running, on every class at once, at the slowest class's rate
 * (its price already holds the stragglers' slow sends and delays). Every
 * collective joins every class, whatever its group: exact for world
 * groups; with a shard group smaller than the world (HYBRID_SHARD), ranks
 * outside the straggler's shard group wait for it at its gathers here,
 * not only at the replica all-reduce, which leaves the straggler's own
 * timeline (and so the iteration time) as it is. The iteration time is
 * the slowest class's.
 */
#ifndef CS_ITERATION_H
#define CS_ITERATION_H

#include "train/rankclass.h"
#include "train/workload.h"

struct cs_iteration_class;

typedef struct cs_iteration {
    double iteration_time_s;
    double compute_s;             /* compute stream busy, optimizer included */
    double optimizer_s;
    double copies_s;              /* memory-bound copies and casts the strategy adds
                                   * (DDP's bucket copies, FSDP's copy-in / copy-out,
                                   * gradient casts and divides): on the compute stream
                                   * (part of compute_s), plus side_copies_s */
    double side_copies_s;         /* copies on other streams while no compute or
                                   * communication runs (not communication) */
    double cpu_wait_s;            /* nothing runs: the GPU waits for the CPU thread to
                                   * issue work (FSDP's hooks, cs_task.issue_s); in a
                                   * rank class's run, also for a slower class to reach
                                   * a collective */
    double exposed_comm_s;
    double pipeline_bubble_s;     /* pipeline parallelism (pipeline.h): the reported
                                   * stage's idle time waiting for its neighbours'
                                   * passes, not on a transfer (no communication, not in
                                   * exposed_comm_s); 0 without. iteration_time_s =
                                   * compute_s + exposed_comm_s + side_copies_s +
                                   * cpu_wait_s + pipeline_bubble_s */
    double recompute_s;           /* of compute_s: checkpointing's re-run forwards */
    double exposed_by_op_s[CS_OP_COUNT];
    double wire_bytes_by_op[CS_OP_COUNT]; /* bytes this rank sends per iteration (a
                                           * pipeline's: the reported stage's rank) */
    double tokens_per_s;
    double tflops_per_gpu;        /* model FLOPs (no recompute) per second per GPU / 1e12 */
    double mfu;                   /* model FLOPs / (time x peak), Korthikanti Sec 6 */
    double hfu;                   /* hardware FLOPs (+ recompute) / (time x peak) */
    double dyn_peak_bytes;        /* peak of the dynamic timeline */
    double peak_bytes;            /* static + dynamic, fragmentation applied */
    double peak_time_s;
    char peak_task[48];           /* task running when the peak was reached */
    size_t ntasks;
    double *start_s, *end_s;      /* per task */
    size_t nmem;
    double *mem_t_s, *mem_bytes;  /* dynamic memory after each change */
    /* ranks that differ: one run per class (nclasses of them, by first
     * rank), the fields above then the slowest class's (the first of the
     * slowest), its timeline copied, except the memory peak (dyn_peak_bytes,
     * peak_bytes, peak_time_s, peak_task), the highest class's. Every rank
     * alike: 0 and NULL. */
    int nclasses;
    int slowest;                  /* index of the class the fields are of */
    struct cs_iteration_class *classes;
} cs_iteration;

/* One class's run: its ranks and its own iteration (nclasses 0). */
typedef struct cs_iteration_class {
    cs_rank_class ranks;
    cs_iteration it;
} cs_iteration_class;

/* Where an iteration's time goes: compute_s split into kernels,
 * recompute, copies and the optimizer step; the exposed communication by
 * primitive; the GPU waiting for the CPU; the pipeline bubble. The parts add up to the iteration time. What
 * simulate, plan and crossover print as the breakdown. */
typedef struct cs_breakdown {
    double kernels_s, recompute_s, copies_s, optimizer_s;
    double exposed_s[CS_OP_COUNT];
    double cpu_wait_s;
    double pipeline_bubble_s;
} cs_breakdown;
void cs_iteration_breakdown(const cs_iteration *it, cs_breakdown *out);
/* The part where a saves the most time over b (b - a largest): its name
 * ("optimizer step", "exposed all_gather", ...) into name[len], and a's
 * and b's seconds there. Swap a and b for where a loses the most. */
void cs_breakdown_largest_gain(const cs_breakdown *a, const cs_breakdown *b, char *name,
                               size_t len, double *sa, double *sb);

/* Runs the graph, every rank alike. Caller frees with cs_iteration_free
 * (which frees the classes too). */
int cs_iteration_run(const cs_workload *w, const cs_training *t, cs_iteration *out, cs_diag *d);
/* Runs it once per rank class (classes[nclasses], cs_rankclass_group; each
 * slowdown >= 1); nclasses 0 is cs_iteration_run. */
int cs_iteration_run_ranks(const cs_workload *w, const cs_training *t,
                           const cs_rank_class *classes, int nclasses, cs_iteration *out,
                           cs_diag *d);
void cs_iteration_free(cs_iteration *it);

#endif
