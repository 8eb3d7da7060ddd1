/* SPDX-License-Identifier: MIT */
/*
 * sweep_report.h - the report of a sweep (`collsim crossover`): the grid
 * of points and the crossings, in every format of out/table.h, and the
 * crossings alone as CSV (--crossings). Appends to a caller-owned buffer.
 */
#ifndef CS_SWEEP_REPORT_H
#define CS_SWEEP_REPORT_H

#include <stddef.h>

#include "base/buf.h"
#include "out/table.h"
#include "study/sweep.h"

/* The CSV header lines (without newline): the grid's and the crossings'. */
const char *cs_sweep_report_columns(void);
const char *cs_sweep_report_crossing_columns(void);

/* The version of crossover's JSON layout: 3 with layout lists (--tp /
 * --pp: the points carry tp and pp after strategy, the crossings tp_a,
 * pp_a, tp_b, pp_b, a point whose layout does not apply has fits 0 and no
 * numbers); without them 2, the shape unchanged (each point runs its
 * strategy at the configuration it chose, micro_batch, grad_accum,
 * activation_checkpointing, at one global batch). */
#define CS_SWEEP_JSON_VERSION 3
#define CS_SWEEP_JSON_VERSION_STRATEGIES 2

/* For people: a title line, the grid by rank count, one sentence per
 * crossing, then (rules not NULL: s->nranks of them, cs_sweep_rules) the
 * rule of thumb per rank count; CSV: the grid; JSON: title, cluster,
 * points, crossings and rule_of_thumb. */
void cs_sweep_report(cs_buf *b, cs_format f, const cs_sweep_spec *s, const cs_sweep_point *pts,
                     size_t n, const cs_crossing *c, size_t nc, const cs_plan_rule *rules);
/* The crossings of s as CSV (with layout lists: tp_a, pp_a, tp_b, pp_b
 * beside the strategies); the margin is empty for an OOM crossing. */
void cs_sweep_report_crossings(cs_buf *b, const cs_sweep_spec *s, const cs_crossing *c, size_t nc);

#endif
