/* SPDX-License-Identifier: MIT */
/*
 * plan_kinds.h - inside the planner (plan.c, plan_kinds.c): the best of
 * each other kind of configuration than the recommendation, and the
 * order both files rank configurations by. Not for callers of plan.h.
 */
#ifndef CS_PLAN_KINDS_H
#define CS_PLAN_KINDS_H

#include "study/plan.h"

/* plan.c's: fits, keeps the batch; a ranks before b (NULL: nothing yet). */
int cs__plan_eligible(const cs_plan_cfg *c);
int cs__plan_better(const cs_plan_cfg *a, const cs_plan_cfg *b);

/* Fills p->alts (p->best set): for each kind of the kind table the
 * recommendation is not of, its fastest eligible configuration and how
 * much slower, or, where none is eligible, the one needing the least
 * memory and why. O(kinds x configurations). */
void cs__plan_kinds(cs_plan *p);

#endif
