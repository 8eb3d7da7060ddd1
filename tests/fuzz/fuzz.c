/* SPDX-License-Identifier: MIT */
/*
 * fuzz.c - the fuzz targets: one row per input loader (cluster, model,
 * scenario and Hugging Face config loaders, the nccl-tests and CSV
 * measurement readers, the training-runs and collsim-hw compute CSV
 * readers, the replay reader, collsim-hw's schedule JSON reader). Each
 * harness executable is this file built with -DCS_FUZZ_TARGET=<row index>.
 *
 * The replay reader takes two texts, a schedule and the CSV of its
 * replay: an input that opens with '{' is fuzzed as the schedule, joined
 * with tests/data/replay-cpu.csv, any other as the CSV, joined with
 * tests/data/replay-cpu.json (CS_FUZZ_DATA names the folder; a partner
 * that cannot be read is a harness failure, not a finding).
 *
 * A target hands the bytes, NUL-terminated as a file read gives them
 * (base/textfile.c), to the loader's string form and frees what it made.
 * Success or a diagnostic are both fine; what must not happen is a crash,
 * a sanitizer report, a leak, or a diagnostic without a message. With
 * clang and -Dfuzz=enabled each target links libFuzzer (tests/fuzz/
 * meson.build); otherwise replay.c's main() runs it over files, so the
 * seed corpora and found inputs are regression tests of every build.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/textfile.h"
#include "config/config.h"
#include "study/measure.h"
#include "study/replay_runs.h"
#include "study/training_runs.h"
#include "train/hfconfig.h"
#include "train/model.h"
#include "train/scenario.h"
#ifdef CS_FUZZ_SCHEDULE
#include "schedule.h"
#endif

/* Each returns the loader's result; d is set when it is not 0. */
static int cluster(const char *t, size_t n, cs_diag *d)
{
    cs_cluster c;
    return cs_config_load_cluster_string("fuzz.yaml", t, n, &c, d);
}

static int model(const char *t, size_t n, cs_diag *d)
{
    cs_model m;
    return cs_model_load_string("fuzz.yaml", t, n, &m, d);
}

static int scenario(const char *t, size_t n, cs_diag *d)
{
    cs_scenario *s = cs_xmalloc(sizeof *s);
    int rc = cs_scenario_load_string("fuzz.yaml", t, n, s, d);
    free(s);
    return rc;
}

static int hfconfig(const char *t, size_t n, cs_diag *d)
{
    cs_model m;
    return cs_hfconfig_load_string("config.json", t, n, &m, d);
}

static int nccl_tests(const char *t, size_t n, cs_diag *d)
{
    cs_meas_set s = {0};
    int rc = cs_meas_read_nccl_tests_string(&s, "all_reduce.log", t, n, d);
    cs_meas_free(&s);
    return rc;
}

static int csv(const char *t, size_t n, cs_diag *d)
{
    cs_meas_set s = {0};
    int rc = cs_meas_read_csv_string(&s, "fuzz.csv", t, n, d);
    cs_meas_free(&s);
    return rc;
}

static int training_runs(const char *t, size_t n, cs_diag *d)
{
    cs_trun_set s = {0};
    int rc = cs_training_runs_read_string(&s, "runs.csv", t, n, d);
    cs_training_runs_free(&s);
    return rc;
}

static int compute(const char *t, size_t n, cs_diag *d)
{
    cs_trun_set s = {0};
    int rc = cs_training_runs_read_compute_string(&s, "compute.csv", t, n, d);
    cs_training_runs_free(&s);
    return rc;
}

#ifndef CS_FUZZ_DATA
#define CS_FUZZ_DATA "tests/data"
#endif

/* The replay's fixed partner file `name` under CS_FUZZ_DATA, read once
 * (kept to the end of the process). */
static const char *partner(const char *name, size_t *len)
{
    static char *text[2];
    static size_t n[2];
    int i = strstr(name, ".json") != NULL;
    if (!text[i]) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", CS_FUZZ_DATA, name);
        cs_diag d;
        if (cs_textfile_read(path, "fuzz partner", &text[i], &n[i], &d))
            CS_PANIC("%s", d.message);
    }
    *len = n[i];
    return text[i];
}

static int replay(const char *t, size_t n, cs_diag *d)
{
    cs_trun_set s = {0};
    size_t i = 0, pl;
    while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) i++;
    int rc;
    if (i < n && t[i] == '{') {
        const char *csv = partner("replay-cpu.csv", &pl);
        rc = cs_replay_runs_read_string(&s, "schedule.json", t, n, "replay.csv", csv, pl, NULL, d);
    } else {
        const char *json = partner("replay-cpu.json", &pl);
        rc = cs_replay_runs_read_string(&s, "schedule.json", json, pl, "replay.csv", t, n, NULL, d);
    }
    /* on error the set is left as it was: empty */
    if (rc && (s.n || s.nk || s.nfiles)) CS_PANIC("replay error %d left %zu timings", rc, s.nk);
    cs_training_runs_free(&s);
    return rc;
}

#ifdef CS_FUZZ_SCHEDULE
static int schedule(const char *t, size_t n, cs_diag *d)
{
    cs_hw_schedule s = {0};
    int rc = cs_hw_schedule_parse(t, n, "schedule.json", &s, d);
    cs_hw_schedule_free(&s);
    return rc;
}
#else
#define schedule NULL
#endif

/* The order of tests/fuzz/meson.build's targets. */
static int (*const targets[])(const char *, size_t, cs_diag *) = {
    cluster, model, scenario, hfconfig, nccl_tests, csv, training_runs, compute, replay, schedule,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = cs_xmalloc(size + 1);
    if (size) memcpy(text, data, size);
    text[size] = '\0';
    cs_diag d;
    cs_diag_clear(&d);
    int rc = targets[CS_FUZZ_TARGET](text, size, &d);
    /* an error always says what was wrong */
    if (rc != 0 && !d.message[0]) CS_PANIC("error %d without a message", rc);
    free(text);
    return 0;
}
