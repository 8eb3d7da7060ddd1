/* SPDX-License-Identifier: MIT */
/*
 * rplan.h - what a replay plan (backend.h cs_hw_rplan) asks of a backend,
 * worked out once for both: the communicator groups (their sizes and
 * each rank's colour, from the plan's device mesh by the simulator's own
 * code, coll/mesh.h), the (group, stream) pairs that need a communicator,
 * and the largest buffers each stream, GEMM and copy needs. Pure C: no
 * MPI, no CUDA.
 */
#ifndef CS_HW_RPLAN_H
#define CS_HW_RPLAN_H

#include <stddef.h>

#include "backend.h"
#include "schedule.h"
#include "train/workload.h"

typedef struct cs_hw_rneeds {
    int used[CS_GROUP_COUNT][CS_STREAM_COUNT]; /* 1: collectives of that group run on that stream */
    size_t send_bytes[CS_STREAM_COUNT];         /* largest send buffer of a stream's collectives */
    size_t recv_bytes[CS_STREAM_COUNT];         /* largest receive buffer */
    size_t gemm_a, gemm_b, gemm_c;              /* elements of the largest A, B, C (>= 1) */
    size_t copy_bytes;                          /* largest copy chunk (>= 1) */
    size_t p2p_bytes;                           /* largest p2p transfer (0: none); a batch's
                                                 * receives need one buffer each */
} cs_hw_rneeds;

/* A pipeline plan: the stage rank runs (its coordinate along the mesh's
 * pp dimension; 0 without one). */
int cs_hw_rplan_stage(const cs_hw_rplan *p, int rank);
/* Does rank run task t (its stage's, or a task of every rank)? */
int cs_hw_rplan_runs(const cs_hw_rplan *p, const cs_hw_rtask *t, int rank);
/* The first p2p batch starting at task i of a stream whose tasks are
 * queue[0 .. n - 1] (indices into p->tasks) that rank runs: how many
 * tasks it holds (consecutive in the queue, one batch, at most
 * CS_HW_P2P_BATCH_MAX). */
int cs_hw_rplan_batch(const cs_hw_rplan *p, const size_t *queue, size_t n, int rank);

/* Ranks in group g (cs_group) of plan p run on nranks ranks (the mesh's). */
int cs_hw_rplan_group_size(const cs_hw_rplan *p, int nranks, int g);
/* The group of g that rank belongs to (the color of a communicator split). */
int cs_hw_rplan_group_color(const cs_hw_rplan *p, int g, int rank);
/* p's mesh and groups: the schedule's when the run has its ranks (match),
 * else one dimension of nranks that every group spans. */
void cs_hw_rplan_set_groups(cs_hw_rplan *p, const cs_hw_schedule *sc, int nranks, int match);
/* The needs of p on nranks ranks: each compute task's GEMM of its m x n x
 * k, copies done in chunks of at most copy_chunk bytes. */
void cs_hw_rplan_needs(const cs_hw_rplan *p, int nranks, size_t copy_chunk, cs_hw_rneeds *out);

#endif
