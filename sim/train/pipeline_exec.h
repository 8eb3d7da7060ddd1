/* SPDX-License-Identifier: MIT */
/*
 * pipeline_exec.h - the pipeline executor: runs a schedule row's order
 * (pipeline_sched.h) on given pass times as P stage timelines joined by
 * point-to-point transfers, and gives each stage's end, busy time and
 * activations held, optionally every pass as it ran. It knows no model:
 * pipeline.h prices the passes of a configuration and calls it.
 */
#ifndef CS_PIPELINE_EXEC_H
#define CS_PIPELINE_EXEC_H

#include "train/pipeline_sched.h"

/* What one run of a schedule gives, per stage (arrays of P; caller frees
 * with cs_pp_run_free). */
typedef struct cs_pp_run {
    int P;
    double time_s;     /* the last pass's end on any stage */
    double *end_s;     /* each stage's last pass's end */
    double *busy_s;    /* each stage's passes (no transfer) */
    double *p2p_wait_s; /* each stage's idle time on a transfer in flight, before a
                         * pass: held for its own send (its last send, after the last
                         * pass, is in no stage's end), then waiting on the incoming
                         * transfer while it runs (at most p2p_s of the wait for the
                         * input); end_s - busy_s - p2p_wait_s is the stage's bubble */
    int *held_max;     /* most (micro-batch, chunk) activations a stage held at once:
                        * from a forward's start to its backward's end (W's under split) */
    double *held_peak; /* the most held at once in micro-batches' activations, a
                        * micro-batch between B and W counting w_frac (= held_max unsplit) */
} cs_pp_run;
/* Runs row's order for P stages of V chunks and m micro-batches: pass
 * times f, b, w[stage x V + chunk] per micro-batch (w: 0 unless the row
 * splits the backward; unsplit rows run b + w as B), p2p_s per transfer
 * between neighbouring virtual stages (the sender held for it, the
 * receiver starting no earlier than its end); under a split row a
 * micro-batch's activations are w_frac held from its B to its W (file
 * header of pipeline.c). O(P x m x V x passes). */
void cs_pipeline_simulate(const cs_pp_schedule_row *row, int P, int V, int m, const double *f,
                          const double *b, const double *w, double p2p_s, double w_frac,
                          cs_pp_run *out);
void cs_pp_run_free(cs_pp_run *r);

/* One pass of a recorded run: stage `stage` ran `pass` of micro-batch
 * `micro` through its chunk `chunk` over [start_s, end_s]; its input came
 * from stage from_stage (-1: none, its own forward's) and arrived at
 * ready_s; it sent its output (activation or input gradient) to stage
 * to_stage (-1: none), holding the sender for send_s after end_s. tag
 * names the transfer the same on both sides: (micro x P V + the sender's
 * virtual stage) x 2 + (0 forward, 1 backward); recv_tag the one it
 * received (-1: none). */
typedef struct cs_pp_slice {
    int stage, chunk, micro;
    cs_pp_pass pass;
    double start_s, end_s, ready_s, send_s;
    int from_stage, to_stage, tag, recv_tag;
} cs_pp_slice;

/* cs_pipeline_simulate, recording every pass into rec (room for P x 3 x m
 * x V; stage s's ops from rec[s x 3 m V] in its order, nrec[s] of them). */
void cs_pipeline_simulate_record(const cs_pp_schedule_row *row, int P, int V, int m,
                                 const double *f, const double *b, const double *w, double p2p_s,
                                 double w_frac, cs_pp_run *out, cs_pp_slice *rec, int *nrec);

#endif
