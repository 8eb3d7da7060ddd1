/* SPDX-License-Identifier: MIT */
/*
 * scenario.h - a scenario YAML (configs/scenarios/): `cluster:`, `model:`
 * and `training:` in one file, with optional `ranks:` / `nodes:`; the CLI
 * overrides any part. Schema and every default: configs/scenarios/
 * README.md. cs_scenario is a value type.
 */
#ifndef CS_SCENARIO_H
#define CS_SCENARIO_H

#include <stddef.h>

#include "base/error.h"
#include "base/limit.h"
#include "coll/cluster.h"
#include "train/model.h"
#include "train/training.h"

/* A scenario: the three parts a `collsim simulate SCENARIO.yaml` needs. */
/* The largest `ranks:` and `nodes:` a scenario may give (the CLI's --ranks
 * and --nodes share them). */
#define CS_SCENARIO_RANKS_MAX CS_LIMIT_HI_RANKS
#define CS_SCENARIO_NODES_MAX CS_LIMIT_HI_NODES

typedef struct cs_scenario {
    cs_cluster cluster;
    cs_model model;
    cs_training training;
    int ranks;  /* 0 = not given */
    int nodes;  /* 0 = not given */
} cs_scenario;

/* Loads a scenario YAML: `cluster:` (preset name or inline mapping),
 * `model:` (preset name or inline mapping), `training:` (mapping), and
 * optional `ranks:` / `nodes:`. Errors name file:line:column. */
int cs_scenario_load_file(const char *path, cs_scenario *out, cs_diag *d);
int cs_scenario_load_string(const char *origin, const char *yaml, size_t len, cs_scenario *out,
                            cs_diag *d);

#endif
