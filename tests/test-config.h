/* SPDX-License-Identifier: MIT */
/*
 * test-config.h - what the two halves of the config suite (test-config.c,
 * test-config-errors.c) share: a valid two-node cluster and its one-node
 * variant (the line numbers the tests cite refer to them), loading YAML
 * text as if from test.yaml, and the expect-ok / expect-error helpers with
 * their macros (a failure names the caller's line).
 */
#ifndef CS_TEST_CONFIG_H
#define CS_TEST_CONFIG_H

#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "testutil.h"


/* A valid two-node cluster; line numbers below refer to it. */
static const char BASE[] = "nodes: 2\n"                          /* 1 */
                           "gpus_per_node: 8\n"                  /* 2 */
                           "gpu:\n"                              /* 3 */
                           "  model: H100\n"                     /* 4 */
                           "  memory: 80GiB\n"                   /* 5 */
                           "  compute_capability: 90\n"          /* 6 */
                           "  tflops: {bf16: 989.4, fp32: 67}\n" /* 7 */
                           "  hbm_bandwidth: 3.35TB/s\n"         /* 8 */
                           "intra:\n"                            /* 9 */
                           "  fabric: nvswitch\n"                /* 10 */
                           "  bandwidth: 450GB/s\n"              /* 11 */
                           "inter:\n"                            /* 12 */
                           "  nics_per_node: 8\n"                /* 13 */
                           "  nic_bandwidth: 400Gbps\n";         /* 14 */

/* Lines 1-11 of BASE with one node and no inter section. */
static const char SINGLE[] = "nodes: 1\n"
                             "gpus_per_node: 8\n"
                             "gpu:\n"
                             "  model: H100\n"
                             "  memory: 80GiB\n"
                             "  compute_capability: 90\n"
                             "  tflops: {bf16: 989.4, fp32: 67}\n"
                             "  hbm_bandwidth: 3.35TB/s\n"
                             "intra:\n"
                             "  fabric: nvswitch\n"
                             "  bandwidth: 450GB/s\n";

static inline int load(const char *yaml, cs_cluster *c, cs_diag *d)
{
    return cs_config_load_cluster_string("test.yaml", yaml, strlen(yaml), c, d);
}

/* BASE (or SINGLE) with `extra` appended; caller frees. */
static inline char *with(const char *base, const char *extra)
{
    return cs_test_replace(base, "", extra);
}

static inline void expect_ok(const char *yaml, cs_cluster *c, int line)
{
    cs_diag d;
    cs_test_diag_ok(load(yaml, c, &d), &d, "line %d", line);
}

static inline void expect_error(const char *yaml, int want_line, int want_col, const char *text,
                                int line)
{
    cs_cluster c;
    cs_diag d;
    cs_test_diag_error(load(yaml, &c, &d), &d, "test.yaml", want_line, want_col, text, "line %d",
                       line);
}

#define OK_YAML(yaml, c)        expect_ok(yaml, c, __LINE__)
#define ERR(yaml, l, col, text) expect_error(yaml, l, col, text, __LINE__)
/* Same, freeing a string made by with()/cs_test_replace(). */
#define ERR_FREE(expr, l, col, text)                                                               \
    do {                                                                                           \
        char *y_ = (expr);                                                                         \
        expect_error(y_, l, col, text, __LINE__);                                                  \
        free(y_);                                                                                  \
    } while (0)

#endif
