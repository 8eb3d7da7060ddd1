/* SPDX-License-Identifier: MIT */
/*
 * plan_report.h - the report of a plan (`collsim plan`, study/plan.h): the
 * best configuration of each strategy x tp x pp, the recommendation, its
 * runner-up and the best of each other kind, and the rule-of-thumb check
 * (out/rule_report.h), in every format of out/table.h but CSV (a plan is
 * no one flat table). Appends to a caller-owned buffer.
 */
#ifndef CS_PLAN_REPORT_H
#define CS_PLAN_REPORT_H

#include "base/buf.h"
#include "out/table.h"
#include "study/plan.h"

/* For people: a title, the configurations, the recommendation in words,
 * the rule's table and verdict; JSON: the same as members. scenario is the
 * path (or built-in name) the plan's inputs came from, named in both;
 * NULL: none (the options alone; JSON "scenario": null). */
void cs_plan_report(cs_buf *b, cs_format f, const char *scenario, const cs_plan *p);

#endif
