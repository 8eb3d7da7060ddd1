/* SPDX-License-Identifier: MIT */
/*
 * schedule.h - the training-iteration schedule that `collsim simulate
 * --emit-schedule FILE` writes (sim/train/workload.c cs_workload_write_schedule),
 * read back for `collsim-hw replay`, plus the two timeline measures replay
 * reports: the no-contention timeline the schedule predicts and the
 * exposed communication of a timeline.
 *
 * Format ("format": "collsim-schedule", "version": 2, sim/out/schedule.c):
 * "mesh" [{name, size}] (the device mesh, innermost first: coll/mesh.h),
 * "groups" {NAME: {ranks, dims: [dimension names]}} with the layout's
 * group names (train/layout.h: world, dp_shard, dp_replicate, tp), and
 * "tasks": [{id, kind compute|memory|collective, stream compute|comm|
 * comm_reduce, name, flops, mem_bytes (not collectives), op, size_bytes,
 * dtype, group (a NAME of "groups"), algo, proto (collectives),
 * predicted_s, deps: [{task: ID, when: start|end}]}]. Version 1 is read
 * too: "groups" {world, shard, replica} rank counts, task groups by those
 * names; its mesh is tp 1 x dp_shard shard x dp_replicate replica.
 * A task with "count" other than 1 (collsim's folded run of more than 64
 * equal buckets, cs_task.count) is refused: replay runs one call per task.
 * Members this reader does not use (micro, layer, wire_bytes,
 * mem_at_start, ...) are ignored, so newer writers stay readable. Checked:
 * ids unique, dependencies name earlier tasks, values in range; errors
 * name FILE:LINE:COLUMN.
 *
 * A pipeline's schedule (version 2 with "pipeline" {stages, ...} and a
 * mesh dimension "pp" of that size: sim/out/schedule.c) gives every task
 * a "stage" (the ranks of that pp coordinate run it) and has tasks of kind
 * "p2p": op send / recv, peer {"pp": S}, size_bytes, dtype, group "pp",
 * tag, batch; read as collectives of op send_recv with p2p set. Checked:
 * stages in range, peers other stages, every send's tag received once
 * by the stage it names, with the same size; the stages can finish (no
 * circular wait: cs_hw_schedule_deadlock). Dependencies stay within a
 * stage. Every size_bytes is at most 2^60.
 */
#ifndef CS_HW_SCHEDULE_H
#define CS_HW_SCHEDULE_H

#include <stddef.h>

#include "coll/collective.h"
#include "base/dtype.h"
#include "base/error.h"
#include "coll/mesh.h"
#include "train/workload.h"

typedef struct cs_hw_stask {
    int id;
    cs_task_kind kind;
    cs_stream stream;
    char name[48];
    double flops;        /* compute */
    double mem_bytes;    /* compute / memory: bytes moved */
    cs_op op;            /* collective */
    double size_bytes;   /* nccl-tests convention for the group */
    cs_dtype dtype;
    cs_group group;
    char algo[16], proto[16]; /* the simulator's choice, as written */
    int stage;           /* pipelines: the stage that runs it; -1: every rank */
    int p2p;             /* CS_HW_P2P_SEND / _RECV (op send_recv), 0: none */
    int peer_stage, tag, batch; /* p2p: the other stage, the transfer's tag, its batch */
    double predicted_s;
    int ndeps;
    int deps[4];         /* indices (not ids) of earlier tasks */
    char on_start[4];
} cs_hw_stask;

enum { CS_HW_P2P_SEND = 1, CS_HW_P2P_RECV = 2 };

typedef struct cs_hw_schedule {
    size_t n;
    cs_hw_stask *tasks;
    int version;                              /* 1 or 2 */
    cs_mesh mesh;                             /* the ranks the schedule was made for */
    cs_mesh_dims group_dims[CS_GROUP_COUNT];  /* the dimensions each group spans */
    int has_group[CS_GROUP_COUNT];            /* 1: the schedule names it */
    int group_ranks[CS_GROUP_COUNT];          /* ranks per group (from the mesh) */
    int stages;                               /* a pipeline's stages; 0: none */
} cs_hw_schedule;

/* Reads and checks a schedule file. 0, CS_ENOENT / CS_EIO (file), or
 * CS_ECONFIG (content) with d filled. Caller frees with cs_hw_schedule_free. */
int cs_hw_schedule_load(const char *path, cs_hw_schedule *s, cs_diag *d);
int cs_hw_schedule_parse(const char *text, size_t len, const char *file, cs_hw_schedule *s,
                         cs_diag *d);
void cs_hw_schedule_free(cs_hw_schedule *s);

/* ---- the timeline (schedule_timeline.c) ---- */

/* The timeline the schedule predicts with no contention: each task starts
 * when its stream is free and its dependencies allow, and runs for
 * predicted_s. Fills start_s/end_s[n]; returns the iteration time.
 * Pipelines: each stage has its own streams, and a receive ends no
 * earlier than its send, and every task a circular wait leaves unplaced
 * (cs_hw_schedule_deadlock) starts and ends at 0. */
double cs_hw_schedule_predict(const cs_hw_schedule *s, double *start_s, double *end_s);

/* 1 when a pipeline's stages cannot all finish: a circular wait, each
 * receive waiting for a send that a receive of its own stage holds back
 * (sends never block in the prediction; a batch is posted as a unit), with
 * *task the index of a receive that waits; 0 otherwise. */
int cs_hw_schedule_deadlock(const cs_hw_schedule *s, size_t *task);

/* Busy time of the compute stream in a timeline of s; a pipeline's: its
 * slowest stage's (the stage whose task ends last, as the simulator
 * reports it: sim/train/pipeline.c fill_iteration), with the tasks of no
 * stage. The same for cs_hw_exposed_comm_s. */
double cs_hw_compute_busy_s(const cs_hw_schedule *s, const double *start_s, const double *end_s);

/* Time during which some collective runs while the compute stream is idle
 * (the simulator's definition, sim/train/iteration.h), for a timeline of s. */
double cs_hw_exposed_comm_s(const cs_hw_schedule *s, const double *start_s, const double *end_s);

#endif
