/* SPDX-License-Identifier: MIT */
/*
 * test-config-errors.c - the config suite's errors: every class of
 * cluster YAML error with its exact line and column, the diagnostic's
 * printed form, and the edit distance behind did-you-mean. Presets,
 * defaults and overrides are in test-config.c. Runs with the project root
 * as working directory.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "test-config.h"


/* ---- errors: one class per test, each with line and column ---- */

START_TEST(error_unknown_keys)
{
    ERR("nodes: 1\ngpus_per_nod: 8\n", 2, 1,
        "unknown key 'gpus_per_nod' in cluster (did you mean 'gpus_per_node'?)");
    ERR_FREE(cs_test_replace(BASE, "  model: H100", "  modle: H100"), 4, 3,
             "unknown key 'modle' in gpu (did you mean 'model'?)");
    ERR_FREE(with(BASE, "  nic_bw: 1\n"), 15, 3, "unknown key 'nic_bw' in inter");
    /* No close match: list the keys instead. */
    ERR_FREE(with(BASE, "colour: blue\n"), 15, 1,
             "unknown key 'colour' in cluster (expected one of: name, nodes,");
    ERR_FREE(with(BASE, "collectives: {base_latency: {rign: {ll: 1us}}}\n"), 15, 30,
             "unknown key 'rign' in collectives.base_latency (did you mean 'ring'?)");
    ERR_FREE(with(BASE, "collectives: {hw_latency: {net: {tree: {simpel: 1us}}}}\n"), 15, 41,
             "unknown key 'simpel' in collectives.hw_latency.net.tree (did you mean 'simple'?)");
    ERR_FREE(cs_test_replace(BASE, "{bf16: 989.4", "{bf61: 989.4"), 7, 12,
             "unknown key 'bf61' in gpu.tflops (did you mean 'bf16'?)");
    ERR_FREE(with(BASE, "des: {links: [{node: 0, gpu: 0, bandwith: 1GB/s}]}\n"), 15, 33,
             "unknown key 'bandwith' in des.links[0] (did you mean 'bandwidth'?)");
}
END_TEST

START_TEST(error_bad_values)
{
    ERR("nodes: abc\n", 1, 8, "'nodes' must be an integer in 1..1000000, got 'abc'");
    ERR("nodes: 0\n", 1, 8, "'nodes' must be an integer in 1..1000000, got 0");
    ERR("nodes: 1.5\n", 1, 8, "'nodes' must be an integer");
    ERR("nodes: 99999999999999999999\n", 1, 8, "'nodes' must be an integer");
    ERR("nodes: 1\ngpus_per_node: 2048\n", 2, 16,
        "'gpus_per_node' must be an integer in 1..1024, got 2048");
    ERR_FREE(cs_test_replace(BASE, "compute_capability: 90", "compute_capability: 60"), 6, 23,
             "'compute_capability' must be an integer in 70..120, got 60");
    ERR_FREE(cs_test_replace(BASE, "memory: 80GiB", "memory: 80Gib"), 5, 11,
             "'memory': expected a size such as 8, 4K, 25MiB, 8G or 80GB, got '80Gib'");
    ERR_FREE(cs_test_replace(BASE, "memory: 80GiB", "memory: 0"), 5, 11,
             "'memory' must be a size > 0, got 0");
    ERR_FREE(cs_test_replace(BASE, "bandwidth: 450GB/s", "bandwidth: 450GB"), 11, 14,
             "'bandwidth': expected a rate such as 400Gbps");
    ERR_FREE(cs_test_replace(BASE, "nic_bandwidth: 400Gbps", "nic_bandwidth: -400Gbps"), 14, 18,
             "negative values are not allowed");
    ERR_FREE(with(BASE, "  efficiency: 1.7\n"), 15, 15, "'efficiency' must be in (0, 1], got 1.7");
    ERR_FREE(with(BASE, "  efficiency: 0\n"), 15, 15, "'efficiency' must be in (0, 1], got 0");
    ERR_FREE(with(BASE, "  efficiency: -0.5\n"), 15, 15,
             "'efficiency' must be in (0, 1], got -0.5");
    ERR_FREE(with(BASE, "  efficiency: high\n"), 15, 15,
             "'efficiency' must be a number in (0, 1], got 'high'");
    ERR_FREE(with(BASE, "  oversubscription: 0.5\n"), 15, 21,
             "'oversubscription' must be >= 1, got 0.5");
    ERR_FREE(with(BASE, "  pcie: gne4x16\n"), 15, 9,
             "'pcie' must be one of gen3x8, gen3x16, gen4x8, gen4x16, gen5x8, gen5x16, gen6x8, "
             "gen6x16 or a rate such as 24GB/s, got 'gne4x16' (did you mean 'gen4x16'?)");
    ERR_FREE(with(BASE, "  pcie: 0\n"), 15, 9, "'pcie' must be a rate > 0, got 0");
    ERR_FREE(with(BASE, "  pcie: 24GB\n"), 15, 9, "'pcie': expected a rate such as 400Gbps");
    ERR_FREE(with(BASE, "  nics_per_node: 65\n"), 15, 3, "duplicate key 'nics_per_node'");
    ERR_FREE(cs_test_replace(BASE, "nics_per_node: 8", "nics_per_node: 65"), 13, 18,
             "'nics_per_node' must be an integer in 1..64, got 65");
    ERR_FREE(cs_test_replace(BASE, "fp32: 67", "fp32: 0"), 7, 31,
             "'fp32' must be in (0, 100000), got 0");
    ERR_FREE(cs_test_replace(BASE, "{bf16: 989.4, fp32: 67}", "{}"), 7, 11,
             "'tflops' needs at least one of fp32");
    ERR_FREE(with(BASE, "collectives: {ll128: yes}\n"), 15, 22,
             "'ll128' must be true or false, got 'yes'");
    ERR_FREE(with(BASE, "collectives: {channels: 65}\n"), 15, 25,
             "'channels' must be an integer in 1..64, got 65");
    ERR_FREE(with(BASE, "collectives: {bw_factor: {ring: {ll: 2}}}\n"), 15, 38,
             "'ll' must be in (0, 1.5], got 2");
    ERR_FREE(with(BASE, "collectives: {efficiency: {tree: 0}}\n"), 15, 34,
             "'tree' must be in (0, 1.5], got 0");
    ERR_FREE(with(BASE, "collectives: {chunk: {ll: 0}}\n"), 15, 27,
             "'ll' must be a size > 0, got 0");
    ERR_FREE(with(BASE, "collectives: {base_latency: {ring: {ll: 1h}}}\n"), 15, 41,
             "'ll': expected a time such as 500ns");
    char long_model[200];
    snprintf(long_model, sizeof long_model, "model: %0100d", 7);
    ERR_FREE(cs_test_replace(BASE, "model: H100", long_model), 4, 10,
             "'model' must be at most 63 characters");
    ERR_FREE(cs_test_replace(BASE, "model: H100", "model: \"\""), 4, 10,
             "'model' must be a non-empty string");
    ERR_FREE(cs_test_replace(BASE, "model: H100", "model:"), 4, 9,
             "'model' must be a string, got an empty value");
}
END_TEST

START_TEST(error_enum_suggestions)
{
    ERR_FREE(cs_test_replace(BASE, "fabric: nvswitch", "fabric: nvswtich"), 10, 11,
             "'fabric' must be one of nvswitch, nvlink, pcie, got 'nvswtich' (did you mean "
             "'nvswitch'?)");
    ERR_FREE(cs_test_replace(BASE, "fabric: nvswitch", "fabric: infiniband"), 10, 11,
             "'fabric' must be one of nvswitch, nvlink, pcie, got 'infiniband'");
    ERR_FREE(with(BASE, "  topology: fattree\n"), 15, 13, "(did you mean 'fat-tree'?)");
}
END_TEST

START_TEST(error_missing_keys)
{
    ERR("nodes: 1\ngpus_per_node: 8\n", 1, 1, "missing required key 'gpu' in cluster");
    ERR("gpus_per_node: 8\n", 1, 1, "missing required key 'nodes' in cluster");
    /* In a nested mapping, the mapping's own mark. */
    ERR_FREE(cs_test_replace(BASE, "  model: H100\n", ""), 4, 3,
             "missing required key 'model' in gpu");
    ERR_FREE(cs_test_replace(BASE, "  hbm_bandwidth: 3.35TB/s\n", ""), 4, 3,
             "missing required key 'hbm_bandwidth' in gpu");
    ERR_FREE(cs_test_replace(BASE, "  nic_bandwidth: 400Gbps\n", ""), 13, 3,
             "missing required key 'nic_bandwidth' in inter");
    /* a sustained clock needs the clock the peaks are quoted at (the gpu
     * mapping's mark) */
    ERR_FREE(cs_test_replace(BASE, "  hbm_bandwidth: 3.35TB/s\n",
                             "  hbm_bandwidth: 3.35TB/s\n  sustained_clock_mhz: 1500\n"),
             4, 3, "gpu.sustained_clock_mhz needs gpu.peak_clock_mhz");
    ERR_FREE(cs_test_replace(BASE, "  hbm_bandwidth: 3.35TB/s\n",
                             "  hbm_bandwidth: 3.35TB/s\n  peak_clock_mhz: 0\n"),
             9, 19, "'peak_clock_mhz' must be in (0, 100000], got 0");
    /* inter is required only for more than one node. */
    char *y = cs_test_replace(BASE, "inter:\n  nics_per_node: 8\n  nic_bandwidth: 400Gbps\n", "");
    ERR(y, 1, 1, "missing required key 'inter' in cluster (needed when nodes > 1; nodes is 2)");
    free(y);
}
END_TEST

START_TEST(error_structure)
{
    ERR("nodes: 1\ngpus_per_node: 8\ngpu: 5\n", 3, 6, "'gpu' must be a mapping, got '5'");
    ERR("nodes: 1\ngpus_per_node: 8\ngpu: [1, 2]\n", 3, 6,
        "'gpu' must be a mapping, got a sequence");
    ERR("nodes: 1\ngpus_per_node: 8\ngpu:\n", 3, 5, "'gpu' must be a mapping, got an empty value");
    ERR("- 1\n- 2\n", 1, 1, "expected a mapping of cluster keys");
    ERR("just text\n", 1, 1, "got a scalar");
    ERR("nodes: {a: 1}\n", 1, 8, "'nodes' must be an integer in 1..1000000, got a mapping");
    ERR("? [a]\n: 1\n", 1, 3, "mapping keys must be scalars");
    /* Nesting is capped (the tree is freed recursively). */
    char deep[512];
    size_t n = 0;
    n += (size_t)snprintf(deep, sizeof deep, "nodes: ");
    for (int i = 0; i < 100; i++) deep[n++] = '[';
    for (int i = 0; i < 100; i++) deep[n++] = ']';
    deep[n++] = '\n';
    deep[n] = '\0';
    /* The root mapping is level 1, so the 64th bracket (column 7 + 64) is too deep. */
    ERR(deep, 1, 7 + 64, "nesting deeper than 64 levels");
}
END_TEST

START_TEST(error_empty)
{
    ERR("", 1, 1, "empty file");
    ERR("# only a comment\n\n", 1, 1, "empty file");
    ERR("---\n", 2, 1, "empty file");
}
END_TEST

START_TEST(error_duplicate_keys)
{
    ERR("nodes: 1\nnodes: 2\n", 2, 1, "duplicate key 'nodes' (first defined at line 1, column 1)");
    ERR_FREE(cs_test_replace(BASE, "  model: H100\n", "  model: H100\n  model: H200\n"), 5, 3,
             "duplicate key 'model' (first defined at line 4, column 3)");
    ERR("a: {x: 1, x: 2}\n", 1, 11, "duplicate key 'x'");
}
END_TEST

START_TEST(error_yaml_syntax)
{
    ERR("nodes: [1\n", 2, 1, "invalid YAML: did not find expected ',' or ']'");
    ERR("nodes: 1\ngpus_per_node: 8\n  x: 1\n", 3, 4,
        "invalid YAML: mapping values are not allowed in this context");
    ERR("nodes: 1\n\tgpus_per_node: 2\n", 2, 1, "invalid YAML: found a tab character");
    ERR("nodes: \"1\n", 2, 1, "invalid YAML: found unexpected end of stream");
    ERR("nodes: 1\nfoo: \xff\n", 2, 6, "invalid YAML: invalid leading UTF-8 octet");
    ERR("nodes: &n 1\ngpus_per_node: *n\n", 2, 16, "YAML aliases (*n) are not supported");
    ERR("nodes: 1\n---\nnodes: 2\n", 2, 1, "expected a single YAML document");
}
END_TEST

START_TEST(error_des_ranges)
{
    /* BASE has 2 nodes x 8 GPUs, 8 NICs per node; des starts on line 15. */
    ERR_FREE(with(BASE, "des:\n  links:\n    - {node: 2, gpu: 0, bandwidth: 1GB/s}\n"), 17, 14,
             "'node' must be in 0..1 (nodes is 2), got 2");
    ERR_FREE(with(BASE, "des:\n  links:\n    - {node: 1, gpu: 8, bandwidth: 1GB/s}\n"), 17, 22,
             "'gpu' must be in 0..7 (gpus_per_node is 8), got 8");
    ERR_FREE(with(BASE, "des:\n  links:\n    - {node: 1, nic: 8, bandwidth: 1GB/s}\n"), 17, 22,
             "'nic' must be in 0..7 (inter.nics_per_node is 8), got 8");
    ERR_FREE(with(BASE, "des:\n  links:\n    - {node: -1, gpu: 0, bandwidth: 1GB/s}\n"), 17, 14,
             "'node' must be an integer >= 0, got -1");
    ERR_FREE(with(BASE, "des:\n  links:\n    - {node: 0, gpu: 0, nic: 0, bandwidth: 1GB/s}\n"), 17,
             30, "exactly one of 'gpu' or 'nic', not both");
    ERR_FREE(with(BASE, "des:\n  links:\n    - {node: 0, bandwidth: 1GB/s}\n"), 17, 7,
             "needs one of 'gpu'");
    ERR_FREE(with(BASE, "des:\n  links:\n    - {node: 0, gpu: 1}\n"), 17, 7,
             "missing required key 'bandwidth' in des.links[0]");
    ERR_FREE(with(BASE, "des:\n  links:\n    - {node: 0, gpu: 1, bandwidth: 0}\n"), 17, 36,
             "'bandwidth' must be a rate > 0, got 0");
    ERR_FREE(with(BASE, "des:\n  links:\n    - {node: 0, gpu: 1, bandwidth: 1GB/s}\n"
                        "    - {node: 0, gpu: 1, bandwidth: 2GB/s}\n"),
             18, 7, "duplicate override of gpu 1 on node 0 (first at line 17, column 7)");
    ERR_FREE(with(BASE, "des:\n  links: {node: 0}\n"), 16, 10, "'links' must be a sequence");
    ERR_FREE(with(BASE, "des:\n  links: [5]\n"), 16, 11,
             "expected a mapping for des.links[0], got '5'");

    ERR_FREE(with(BASE, "des:\n  stragglers:\n    - {rank: 16}\n"), 17, 14,
             "'rank' must be in 0..15 (nodes x gpus_per_node is 16), got 16");
    ERR_FREE(with(BASE, "des:\n  stragglers:\n    - {rank: 1, slowdown: 0.5}\n"), 17, 27,
             "'slowdown' must be >= 1, got 0.5");
    ERR_FREE(with(BASE, "des:\n  stragglers:\n    - {slowdown: 2}\n"), 17, 7,
             "missing required key 'rank' in des.stragglers[0]");
    ERR_FREE(with(BASE, "des:\n  stragglers:\n    - {rank: 3}\n    - {rank: 3, delay: 1us}\n"), 18,
             7, "duplicate straggler rank 3 (first at line 17, column 7)");

    /* A NIC override on a cluster without NICs. */
    ERR_FREE(with(SINGLE, "des: {links: [{node: 0, nic: 0, bandwidth: 1GB/s}]}\n"), 12, 30,
             "'nic' override needs NICs");
    /* More than CS_MAX_OVERRIDES entries: reported at the first extra one. */
    char *y = with(BASE, "des:\n  stragglers:\n");
    for (int i = 0; i <= CS_MAX_OVERRIDES; i++) {
        char item[64];
        snprintf(item, sizeof item, "    - {rank: %d}\n", i % 16);
        char *z = with(y, item);
        free(y);
        y = z;
    }
    ERR(y, 17 + CS_MAX_OVERRIDES, 7, "at most 64 entries are allowed in 'stragglers'");
    free(y);
}
END_TEST

START_TEST(diag_format_and_clear_on_success)
{
    cs_cluster c;
    cs_diag d;
    ck_assert_int_eq(load("nodes: x\n", &c, &d), CS_ECONFIG);
    char buf[1024];
    cs_diag_format(&d, buf, sizeof buf);
    ck_assert_str_eq(buf,
                     "test.yaml:1:8: error: 'nodes' must be an integer in 1..1000000, got 'x'");
    OK_YAML(SINGLE, &c);
    ck_assert_int_eq(load(SINGLE, &c, &d), 0);
    ck_assert_int_eq(d.code, 0);
    ck_assert_int_eq(d.line, 0);
    /* d may be NULL */
    ck_assert_int_eq(load("nodes: x\n", &c, NULL), CS_ECONFIG);
}
END_TEST

START_TEST(edit_distance)
{
    ck_assert_int_eq(cs_config_edit_distance("kitten", "sitting"), 3);
    ck_assert_int_eq(cs_config_edit_distance("", "abc"), 3);
    ck_assert_int_eq(cs_config_edit_distance("abc", ""), 3);
    ck_assert_int_eq(cs_config_edit_distance("same", "same"), 0);
    ck_assert_int_eq(cs_config_edit_distance("nvswtich", "nvswitch"), 2);
    ck_assert_int_eq(cs_config_edit_distance("gpus_per_nod", "gpus_per_node"), 1);
    ck_assert_int_eq(cs_config_edit_distance("flaw", "lawn"), 2);
}
END_TEST

static Suite *config_errors_suite(void)
{
    Suite *s = suite_create("config-errors");
    TCase *te = tcase_create("errors");
    tcase_add_test(te, error_unknown_keys);
    tcase_add_test(te, error_bad_values);
    tcase_add_test(te, error_enum_suggestions);
    tcase_add_test(te, error_missing_keys);
    tcase_add_test(te, error_structure);
    tcase_add_test(te, error_empty);
    tcase_add_test(te, error_duplicate_keys);
    tcase_add_test(te, error_yaml_syntax);
    tcase_add_test(te, error_des_ranges);
    tcase_add_test(te, diag_format_and_clear_on_success);
    tcase_add_test(te, edit_distance);
    suite_add_tcase(s, te);
    return s;
}

int main(void)
{
    return cs_test_run(config_errors_suite());
}
