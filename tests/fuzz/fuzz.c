/* SPDX-License-Identifier: MIT */
/*
 * fuzz.c - the fuzz targets: one row per input loader (cluster, model,
 * scenario and Hugging Face config loaders, the nccl-tests and CSV
 * measurement readers, collsim-hw's schedule JSON reader). Each harness
 * executable is this file built with -DCS_FUZZ_TARGET=<row index>.
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
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "config/config.h"
#include "study/measure.h"
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
    cluster, model, scenario, hfconfig, nccl_tests, csv, schedule,
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
