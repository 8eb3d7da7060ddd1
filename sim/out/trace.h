/* SPDX-License-Identifier: MIT */
/*
 * trace.h - the Chrome / Perfetto trace JSON of a simulated iteration
 * (`collsim simulate --trace FILE`; open in ui.perfetto.dev): a track per
 * stream, a memory counter.
 */
#ifndef CS_OUT_TRACE_H
#define CS_OUT_TRACE_H

#include "base/buf.h"
#include "train/iteration.h"
#include "train/workload.h"

/* Appends the trace of run it of graph w to b. */
void cs_trace_write(const cs_workload *w, const cs_iteration *it, cs_buf *b);

#endif
