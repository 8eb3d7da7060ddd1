/* SPDX-License-Identifier: MIT */
/*
 * replay_runs.h - a `collsim-hw replay` per-task CSV (hw/cmd_replay.c:
 * one row per task of rank 0's median iteration, with what it ran: work,
 * m, n, k, reps, dtype, executed_flops, executed_bytes) joined on task id
 * with the schedule it replayed (`collsim simulate --emit-schedule`,
 * sim/out/schedule.c), read as kernel timings for the compute fit
 * (training_runs.h cs_kmeas_row; calib_train.h).
 *
 * Which tasks become timings, from the CSV's timeline (replay_runs.c):
 *   alone       a GEMM or copy task that no collective on another stream
 *               and no other GEMM or copy overlaps: a kernel timing of
 *               known shape, as `collsim-hw compute` gives (it fits the
 *               GEMM / HBM efficiencies and the kernel floor);
 *   overlapped  a GEMM or copy task on the compute stream that
 *               collectives on other streams overlap for overlap_us of
 *               its wall time, no other GEMM or copy beside it: the same
 *               timing with overlap_us, which the overlap slowdown
 *               (comm_compute_slowdown) prices.
 * Left out: collectives (the collective fit reads collsim-hw bench),
 * tasks of zero time or work, a copy on a communication stream that a
 * collective overlaps and tasks beside another GEMM or copy (the
 * simulator slows neither by the overlap slowdown).
 */
#ifndef CS_REPLAY_RUNS_H
#define CS_REPLAY_RUNS_H

#include <stddef.h>

#include "base/error.h"
#include "study/training_runs.h"

/* What one reading took and left (for messages and tests). */
typedef struct cs_replay_counts {
    int tasks;      /* CSV rows joined */
    int alone;      /* timings appended, alone */
    int overlapped; /* timings appended, overlapped by a collective */
    int left_out;   /* GEMM / copy tasks left out (see above) */
} cs_replay_counts;

/* Appends the timings of the replay CSV at csv_path, joined with the
 * schedule at schedule_path, to s (files[] gains csv_path); counts may be
 * NULL. Errors: CS_ENOENT / CS_EIO (unreadable), CS_ECONFIG at
 * file:line:column of either file (a bad schedule, a CSV without the
 * columns replay writes, a column given twice, a bad cell, a task id the
 * schedule lacks or given twice, a row whose name, kind or stream is not
 * its schedule task's, executed work that contradicts its shape); on
 * error s is left as it was. */
int cs_replay_runs_read(cs_trun_set *s, const char *schedule_path, const char *csv_path,
                        cs_replay_counts *counts, cs_diag *d);
/* The same from texts; the origins name them in errors and files[]. */
int cs_replay_runs_read_string(cs_trun_set *s, const char *schedule_origin,
                               const char *schedule_text, size_t schedule_len,
                               const char *csv_origin, const char *csv_text, size_t csv_len,
                               cs_replay_counts *counts, cs_diag *d);

#endif
