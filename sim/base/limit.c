/* SPDX-License-Identifier: MIT */
/*
 * limit.c - the ranges table of limit.h as data: names and bounds by
 * row, looked up by id or by name. No state.
 */
#include "base/limit.h"

#include <math.h>
#include <stddef.h>
#include <strings.h>

static const cs_limit rows[CS_LIMIT_COUNT] = {
#define CS__LIMIT_ROW(id, name, lo, hi) [CS_LIMIT_##id] = {(name), (lo), (hi)},
    CS_LIMITS(CS__LIMIT_ROW)
#undef CS__LIMIT_ROW
};

const cs_limit *cs_limit_of(cs_limit_id id) { return &rows[id]; }

const cs_limit *cs_limit_named(const char *name)
{
    for (size_t i = 0; i < CS_LIMIT_COUNT; i++)
        if (!strcasecmp(rows[i].name, name)) return &rows[i];
    return NULL;
}

int cs_limit_holds(const cs_limit *l, double v)
{
    return v >= (double)l->lo && v <= (double)l->hi && v == floor(v);
}
