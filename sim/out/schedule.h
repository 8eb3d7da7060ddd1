/* SPDX-License-Identifier: MIT */
/*
 * schedule.h - the iteration's task graph as JSON (`collsim simulate
 * --emit-schedule FILE`), version 2: the layout's mesh and groups by name,
 * for collsim-hw to replay.
 */
#ifndef CS_OUT_SCHEDULE_H
#define CS_OUT_SCHEDULE_H

#include "base/buf.h"
#include "train/pipeline.h"
#include "train/workload.h"

/* Appends the schedule of graph w to b. */
void cs_schedule_write(const cs_workload *w, cs_buf *b);
/* Appends the schedule of a pipeline's run (train/pipeline.h timeline) to
 * b: version 2 with "pipeline", "stages" and each stage's tasks, p2p
 * send / recv among them (schedule.c). */
void cs_schedule_write_pipeline(const cs_pp_timeline *tl, cs_buf *b);

#endif
