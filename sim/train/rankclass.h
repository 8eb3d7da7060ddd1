/* SPDX-License-Identifier: MIT */
/*
 * rankclass.h - the ranks of a training job grouped by the timeline they
 * run, for the iteration executor (iteration.h) and its trace.
 *
 * Data parallelism is symmetric: every rank runs the same graph, so one
 * timeline stands for all of them. The cluster's des: stragglers break
 * that: a straggler's kernels run slowdown x longer (a slow GPU: clocks,
 * thermals), so it reaches each collective late and the others wait for
 * it. Ranks with the same slowdown run the same timeline: one class each,
 * plus one for the normal ranks (slowdown 1); a straggler with a delay
 * only (slowdown 1) is a normal rank here, its delay being in every
 * collective's DES price (it enters each collective late). Slow links
 * (des.links) lengthen the collectives they carry on every rank alike
 * (all ranks leave a collective together), so they make no class.
 * Classes come only with the DES engine: the closed form ignores des:
 * (the CLI warns), and so does the rest of the iteration then.
 */
#ifndef CS_RANKCLASS_H
#define CS_RANKCLASS_H

#include "coll/topology.h"
#include "train/layout.h"
#include "train/training.h"

/* A class: the ranks that run one timeline. */
typedef struct cs_rank_class {
    double slowdown;  /* its kernels take slowdown x their duration (>= 1) */
    int nranks;       /* how many ranks it stands for */
    int first_rank;   /* its lowest rank (classes are ordered by it) */
    char label[128];  /* "rank 5", "ranks 0-4,6-15": the ranks it stands for;
                       * ",..." ends a list too long for it */
} cs_rank_class;

/* At most: the normal ranks and one class per straggler. */
#define CS_RANK_CLASS_MAX (CS_MAX_OVERRIDES + 1)

/* The classes of layout l's ranks (its world's) when t prices collectives
 * with the DES, into out[CS_RANK_CLASS_MAX], ordered by first rank;
 * returns how many, or 0 when every rank runs alike (no straggler slower
 * than 1, or the closed form): then one timeline stands for all.
 * O(stragglers^2). */
int cs_rankclass_group(const cs_training *t, const cs_layout *l, cs_rank_class *out);

#endif
