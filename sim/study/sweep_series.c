/* SPDX-License-Identifier: MIT */
/*
 * sweep_series.c - the series of a sweep (sweep.h): their count, order
 * and names, and the index of a layout.
 *
 * A series is a strategy, or with layout lists (crossover --tp / --pp) a
 * strategy at one tensor- and pipeline-parallel degree: every strategy x
 * tp x pp of the lists in strategy, then --tp, then --pp order (a list
 * not given: the training's degree). Without lists a series is its strategy and is named by it alone,
 * so every output reads as before layouts.
 */
#include "study/sweep.h"

#include <stdio.h>

#include "train/pipeline.h"
#include "train/tensor.h"

int cs_sweep_has_layouts(const cs_sweep_spec *s) { return s->ntps > 0 || s->npps > 0; }

int cs_sweep_nlayouts(const cs_sweep_spec *s)
{
    return (s->ntps > 0 ? s->ntps : 1) * (s->npps > 0 ? s->npps : 1);
}

int cs_sweep_nseries(const cs_sweep_spec *s) { return s->nstrategies * cs_sweep_nlayouts(s); }

cs_sweep_series cs_sweep_series_at(const cs_sweep_spec *s, int i)
{
    int nl = cs_sweep_nlayouts(s), npp = s->npps > 0 ? s->npps : 1;
    CS_ASSERT(i >= 0 && i < cs_sweep_nseries(s));
    int li = i % nl;
    cs_sweep_series se = {s->strategies[i / nl],
                          s->ntps > 0 ? s->tps[li / npp] : cs_tensor_degree(&s->training),
                          s->npps > 0 ? s->pps[li % npp] : cs_pipeline_degree(&s->training)};
    return se;
}

int cs_sweep_layout_index(const cs_sweep_spec *s, int tp, int pp)
{
    if (!cs_sweep_has_layouts(s)) return 0;
    int npp = s->npps > 0 ? s->npps : 1, ti = 0, pi = 0;
    if (s->ntps > 0)
        for (ti = 0; ti < s->ntps && s->tps[ti] != tp; ti++) continue;
    if (s->npps > 0)
        for (pi = 0; pi < s->npps && s->pps[pi] != pp; pi++) continue;
    if ((s->ntps > 0 && ti == s->ntps) || (s->npps > 0 && pi == s->npps)) return -1;
    return ti * npp + pi;
}

const char *cs_sweep_series_name(const cs_sweep_spec *s, cs_strategy st, int tp, int pp, char *buf,
                                 size_t n)
{
    if (cs_sweep_has_layouts(s))
        snprintf(buf, n, "%s tp%d pp%d", cs_strategy_name(st), tp, pp);
    else
        snprintf(buf, n, "%s", cs_strategy_name(st));
    return buf;
}
