/* SPDX-License-Identifier: MIT */
/*
 * trace.h - the Chrome / Perfetto trace JSON of simulated iterations
 * (`collsim simulate --trace FILE`; open in ui.perfetto.dev): a process
 * per run, a track per stream (per stream and rank class where ranks
 * differ, trace.c), a memory counter, or with a pipeline a track per
 * stage; slices of a track never overlap.
 */
#ifndef CS_OUT_TRACE_H
#define CS_OUT_TRACE_H

#include "base/buf.h"
#include "train/iteration.h"
#include "train/pipeline.h"
#include "train/workload.h"

/* The trace's layout version, in its "otherData" (docs/json-output.md). */
#define CS_TRACE_VERSION 1

/* A trace of several runs: begin, one add per run (pid distinct, name the
 * process's label, copied), end; all append to b. */
void cs_trace_begin(cs_buf *b);
void cs_trace_add(cs_buf *b, int pid, const char *name, const cs_workload *w,
                  const cs_iteration *it);
void cs_trace_end(cs_buf *b);
/* A pipeline's run (train/pipeline.h timeline) as process pid: one thread
 * per stage (tid = stage) with its passes, the transfers it sends, its
 * gradient synchronisation and optimizer step. */
void cs_trace_add_pipeline(cs_buf *b, int pid, const char *name, const cs_pp_timeline *tl);

/* One run as process 0 ("rank 0", or "every rank, by class" where ranks
 * differ): begin, add, end. */
void cs_trace_write(const cs_workload *w, const cs_iteration *it, cs_buf *b);

#endif
