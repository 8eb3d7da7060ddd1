/* SPDX-License-Identifier: MIT */
/*
 * test-config.c - cluster YAML loading: presets and their documented
 * numbers, defaults, overrides, and every class of error with its exact
 * line and column. Runs with the project root as working directory.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config/presets.h"
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

static int load(const char *yaml, cs_cluster *c, cs_diag *d)
{
    return cs_config_load_cluster_string("test.yaml", yaml, strlen(yaml), c, d);
}

/* BASE (or SINGLE) with `extra` appended; caller frees. */
static char *with(const char *base, const char *extra)
{
    return cs_test_replace(base, "", extra);
}

static void expect_ok(const char *yaml, cs_cluster *c, int line)
{
    cs_diag d;
    cs_test_diag_ok(load(yaml, c, &d), &d, "line %d", line);
}

static void expect_error(const char *yaml, int want_line, int want_col, const char *text, int line)
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

/* ---- presets ---- */

START_TEST(presets_listed_sorted)
{
    ck_assert_uint_eq(cs_presets_cluster_count(), 5);
    ck_assert_str_eq(cs_presets_cluster_name(0), "cpu-local");
    ck_assert_str_eq(cs_presets_cluster_name(1), "dgx-a100");
    ck_assert_str_eq(cs_presets_cluster_name(2), "dgx-h100");
    ck_assert_str_eq(cs_presets_cluster_name(3), "hgx-h200");
    ck_assert_str_eq(cs_presets_cluster_name(4), "pcie-l40s");
    ck_assert_ptr_null(cs_presets_cluster_name(5));
    ck_assert_ptr_null(cs_presets_cluster_yaml("nope", NULL));
    ck_assert_ptr_nonnull(cs_presets_cluster_yaml(CS_DEFAULT_CLUSTER, NULL));
}
END_TEST

/* 0 if text[0..len) equals the file's bytes. */
static int compare_with_file(const char *path, const char *text, size_t len)
{
    size_t n;
    char *buf = cs_test_slurp(path, &n);
    int diff = n != len || memcmp(buf, text, len) != 0;
    free(buf);
    return diff;
}

START_TEST(presets_match_their_files)
{
    for (size_t i = 0; i < cs_presets_cluster_count(); i++) {
        const char *name = cs_presets_cluster_name(i);
        size_t len = 0;
        const char *text = cs_presets_cluster_yaml(name, &len);
        ck_assert_ptr_nonnull(text);
        ck_assert_uint_eq(strlen(text), len);
        char path[256];
        snprintf(path, sizeof path, "configs/clusters/%s.yaml", name);
        ck_assert_msg(compare_with_file(path, text, len) == 0, "%s differs from the embedded copy",
                      path);
        /* The comparison must catch a one-byte change. */
        char *copy = malloc(len + 1);
        memcpy(copy, text, len + 1);
        copy[len / 2] ^= 1;
        ck_assert_int_ne(compare_with_file(path, copy, len), 0);
        free(copy);
        /* and the YAML's name is the preset's name */
        cs_cluster c = cs_test_cluster(name);
        ck_assert_str_eq(c.name, name);
    }
}
END_TEST

START_TEST(preset_dgx_h100)
{
    cs_cluster c = cs_test_cluster("dgx-h100");
    ck_assert_int_eq(c.nodes, 1);
    ck_assert_int_eq(c.gpus_per_node, 8);
    ck_assert_str_eq(c.gpu.model, "H100-SXM5-80GB");
    ck_assert_double_eq_tol(c.gpu.memory_bytes, 80 * GiB, 1);
    ck_assert_int_eq(c.gpu.compute_capability, 90);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_BF16], 989.4e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP16], 989.4e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_TF32], 494.7e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP8], 1978.9e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP32], 67e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP64], 67e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.hbm_Bps, 3.35e12, 1);
    ck_assert_int_eq(c.intra.kind, CS_FABRIC_NVSWITCH);
    ck_assert_double_eq_tol(c.intra.bw_Bps, 450e9, 1);
    ck_assert_double_eq_tol(c.intra.efficiency, 0.824, 1e-12);
    ck_assert_double_eq_tol(c.intra.latency_s, 0, 1e-15);
    ck_assert_int_eq(c.inter.nics_per_node, 8);
    ck_assert_double_eq_tol(c.inter.nic_bw_Bps, 50e9, 1);
    ck_assert_double_eq_tol(c.inter.efficiency, 0.94, 1e-12);
    ck_assert_int_eq(c.inter.topology, CS_NET_RAIL_OPTIMIZED);
    ck_assert_double_eq_tol(c.inter.oversubscription, 1, 1e-12);
    ck_assert_int_eq(c.coll.channels, 16);
    ck_assert_int_eq(c.coll.ll128_enabled, 1);
    ck_assert_int_eq(c.coll.algo_enabled[CS_ALGO_NVLS], 1); /* NVSwitch + sm_90 */
    ck_assert_int_eq(c.n_overrides, 0);
    ck_assert_int_eq(c.n_stragglers, 0);
}
END_TEST

START_TEST(preset_dgx_a100)
{
    cs_cluster c = cs_test_cluster("dgx-a100");
    ck_assert_int_eq(c.nodes, 1);
    ck_assert_int_eq(c.gpus_per_node, 8);
    ck_assert_str_eq(c.gpu.model, "A100-SXM4-80GB");
    ck_assert_int_eq(c.gpu.compute_capability, 80);
    ck_assert_double_eq_tol(c.gpu.memory_bytes, 80 * GiB, 1);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP64], 19.5e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP32], 19.5e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_TF32], 156e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_BF16], 312e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP16], 312e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP8], 0, 1e-9); /* no FP8 on A100 */
    ck_assert_double_eq_tol(c.gpu.hbm_Bps, 2039e9, 1);
    ck_assert_int_eq(c.intra.kind, CS_FABRIC_NVSWITCH);
    ck_assert_double_eq_tol(c.intra.bw_Bps, 300e9, 1);
    ck_assert_double_eq_tol(c.intra.efficiency, 0.8, 1e-12);
    ck_assert_int_eq(c.inter.nics_per_node, 8);
    ck_assert_double_eq_tol(c.inter.nic_bw_Bps, 25e9, 1);
    ck_assert_double_eq_tol(c.inter.efficiency, 0.96, 1e-12);
    ck_assert_int_eq(c.inter.topology, CS_NET_RAIL_OPTIMIZED);
    ck_assert_int_eq(c.coll.ll128_enabled, 1);
    ck_assert_int_eq(c.coll.algo_enabled[CS_ALGO_NVLS], 0); /* Ampere: no NVLink SHARP */
    ck_assert_int_eq(c.coll.channels, 16);
}
END_TEST

START_TEST(preset_hgx_h200)
{
    cs_cluster c = cs_test_cluster("hgx-h200");
    ck_assert_int_eq(c.gpus_per_node, 8);
    ck_assert_str_eq(c.gpu.model, "H200-SXM5-141GB");
    ck_assert_double_eq_tol(c.gpu.memory_bytes, 141e9, 1); /* decimal GB */
    ck_assert_double_eq_tol(c.gpu.hbm_Bps, 4.8e12, 1);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_BF16], 989.4e12, 1e6);
    ck_assert_int_eq(c.gpu.compute_capability, 90);
    ck_assert_double_eq_tol(c.intra.bw_Bps, 450e9, 1);
    ck_assert_double_eq_tol(c.intra.efficiency, 0.824, 1e-12);
    ck_assert_int_eq(c.inter.nics_per_node, 8);
    ck_assert_double_eq_tol(c.inter.nic_bw_Bps, 50e9, 1);
    ck_assert_double_eq_tol(c.inter.efficiency, 0.94, 1e-12);
    ck_assert_int_eq(c.coll.algo_enabled[CS_ALGO_NVLS], 1);
}
END_TEST

START_TEST(preset_pcie_l40s)
{
    cs_cluster c = cs_test_cluster("pcie-l40s");
    ck_assert_int_eq(c.nodes, 1);
    ck_assert_int_eq(c.gpus_per_node, 4);
    ck_assert_int_eq(c.gpu.compute_capability, 89);
    ck_assert_double_eq_tol(c.gpu.memory_bytes, 48e9, 1);
    ck_assert_double_eq_tol(c.gpu.hbm_Bps, 864e9, 1);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP32], 91.6e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_TF32], 183e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_BF16], 362.05e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP8], 733e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP64], 0, 1e-9);
    ck_assert_int_eq(c.intra.kind, CS_FABRIC_PCIE);
    ck_assert_double_eq_tol(c.intra.bw_Bps, 31.5e9, 1);
    ck_assert_double_eq_tol(c.intra.efficiency, 0.76, 1e-12);
    ck_assert_int_eq(c.inter.nics_per_node, 0);
    ck_assert_int_eq(c.coll.channels, 4);
    ck_assert_int_eq(c.coll.ll128_enabled, 0);
    ck_assert_int_eq(c.coll.algo_enabled[CS_ALGO_NVLS], 0);
}
END_TEST

START_TEST(unknown_preset_suggests)
{
    cs_cluster c;
    cs_diag d;
    ck_assert_int_eq(cs_config_cluster("dgx-h10", &c, &d), CS_ENOENT);
    ck_assert_int_eq(d.code, CS_ENOENT);
    ck_assert_str_eq(d.message, "unknown cluster 'dgx-h10' (did you mean 'dgx-h100'? presets: "
                                "cpu-local, dgx-a100, dgx-h100, hgx-h200, pcie-l40s)");
    ck_assert_int_eq(cs_config_cluster("zzzzzzzzzz", &c, &d), CS_ENOENT);
    CS_ASSERT_LACKS(d.message, "did you mean");
    CS_ASSERT_CONTAINS(d.message, "presets: cpu-local, dgx-a100");
}
END_TEST

START_TEST(files_and_missing_files)
{
    cs_cluster c;
    cs_diag d;
    /* A path (has '/') is read as a file, and names come from its YAML. */
    ck_assert_int_eq(cs_config_cluster("configs/clusters/dgx-a100.yaml", &c, &d), 0);
    ck_assert_str_eq(c.name, "dgx-a100");
    ck_assert_int_eq(cs_config_load_cluster_file("configs/clusters/pcie-l40s.yaml", &c, &d), 0);
    ck_assert_int_eq(c.gpus_per_node, 4);

    ck_assert_int_eq(cs_config_load_cluster_file("no/such/file.yaml", &c, &d), CS_ENOENT);
    ck_assert_str_eq(d.file, "no/such/file.yaml");
    CS_ASSERT_CONTAINS(d.message, "cannot open");
    ck_assert_int_eq(cs_config_cluster("no/such/file.yaml", &c, &d), CS_ENOENT);
    ck_assert_int_eq(cs_config_cluster("missing.yaml", &c, &d), CS_ENOENT);
    /* A directory cannot be read as a file. */
    ck_assert_int_eq(cs_config_load_cluster_file("configs/clusters", &c, &d), CS_EIO);
}
END_TEST

START_TEST(file_name_defaults_to_basename)
{
    char *dir = cs_test_tmpdir();
    char path[256];
    snprintf(path, sizeof path, "%s/my-box.yaml", dir);
    cs_test_write(path, SINGLE);
    cs_cluster c;
    cs_diag d;
    int rc = cs_config_load_cluster_file(path, &c, &d);
    int rc2 = cs_config_cluster(path, &c, &d);
    cs_test_rmdir(dir);
    free(dir);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(rc2, 0);
    ck_assert_str_eq(c.name, "my-box");

    ck_assert_int_eq(cs_config_load_cluster_string("preset:tiny", SINGLE, strlen(SINGLE), &c, &d),
                     0);
    ck_assert_str_eq(c.name, "tiny");
    ck_assert_int_eq(cs_config_load_cluster_string("dir/x.yml", SINGLE, strlen(SINGLE), &c, &d), 0);
    ck_assert_str_eq(c.name, "x");
}
END_TEST

/* ---- defaults and overrides ---- */

START_TEST(defaults_filled)
{
    cs_cluster c;
    OK_YAML(SINGLE, &c);
    ck_assert_str_eq(c.name, "test");
    ck_assert_double_eq_tol(c.intra.efficiency, 1.0, 1e-15);
    ck_assert_double_eq_tol(c.intra.latency_s, 0.0, 1e-15);
    ck_assert_int_eq(c.inter.nics_per_node, 0);
    ck_assert_double_eq_tol(c.inter.nic_bw_Bps, 0.0, 1e-15);
    ck_assert_double_eq_tol(c.inter.efficiency, 1.0, 1e-15);
    ck_assert_double_eq_tol(c.inter.oversubscription, 1.0, 1e-15);
    ck_assert_int_eq(c.inter.topology, CS_NET_RAIL_OPTIMIZED);
    ck_assert_int_eq(c.coll.channels, 16);
    ck_assert_int_eq(c.coll.ll128_enabled, 1);
    ck_assert_double_eq_tol(c.coll.net_overhead_s, 1e-6, 1e-15);
    ck_assert_double_eq_tol(c.coll.chunk_bytes[CS_PROTO_LL], 32 * 1024, 1e-9);
    ck_assert_double_eq_tol(c.coll.chunk_bytes[CS_PROTO_LL128], 600 * 1024, 1e-9);
    ck_assert_double_eq_tol(c.coll.chunk_bytes[CS_PROTO_SIMPLE], 512 * 1024, 1e-9);
    for (int a = 0; a < CS_ALGO_COUNT; a++) {
        ck_assert_double_eq_tol(c.coll.algo_efficiency[a], 1.0, 1e-15);
        for (int p = 0; p < CS_PROTO_COUNT; p++) {
            ck_assert_double_eq_tol(c.coll.base_latency_s[a][p], cs_algo_base_latency_s(a, p),
                                    1e-15);
            ck_assert_double_eq_tol(c.coll.proto_bw_factor[a][p], CS_UNSET, 1e-15);
            for (int h = 0; h < CS_HW_COUNT; h++)
                ck_assert_double_eq_tol(c.coll.hw_latency_s[h][a][p],
                                        cs_algo_hw_latency_s(h, a, p), 1e-15);
        }
    }
    ck_assert_double_eq_tol(c.coll.base_latency_s[CS_ALGO_RING][CS_PROTO_LL], 6.6e-6, 1e-15);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_BF16], 989.4e12, 1e6);
    ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_FP8], 0.0, 1e-9);
}
END_TEST

START_TEST(defaults_depend_on_fabric)
{
    cs_cluster c;
    char *y = cs_test_replace(SINGLE, "fabric: nvswitch", "fabric: pcie");
    OK_YAML(y, &c);
    free(y);
    ck_assert_int_eq(c.intra.kind, CS_FABRIC_PCIE);
    ck_assert_int_eq(c.coll.channels, 4);
    ck_assert_int_eq(c.coll.ll128_enabled, 0);

    y = cs_test_replace(SINGLE, "fabric: nvswitch", "fabric: nvlink");
    OK_YAML(y, &c);
    free(y);
    ck_assert_int_eq(c.intra.kind, CS_FABRIC_NVLINK);
    ck_assert_int_eq(c.coll.channels, 16);
    ck_assert_int_eq(c.coll.ll128_enabled, 1);
    ck_assert_int_eq(c.coll.algo_enabled[CS_ALGO_NVLS], 0); /* NVLS needs an NVSwitch */
}
END_TEST

START_TEST(nvls_default_and_override)
{
    cs_cluster c;
    OK_YAML(SINGLE, &c); /* nvswitch, compute capability 90 */
    ck_assert_int_eq(c.coll.algo_enabled[CS_ALGO_NVLS], 1);
    char *y = cs_test_replace(SINGLE, "compute_capability: 90", "compute_capability: 80");
    OK_YAML(y, &c);
    free(y);
    ck_assert_int_eq(c.coll.algo_enabled[CS_ALGO_NVLS], 0);
    y = with(SINGLE, "collectives:\n  nvls: false\n");
    OK_YAML(y, &c);
    free(y);
    ck_assert_int_eq(c.coll.algo_enabled[CS_ALGO_NVLS], 0);
    y = with(SINGLE, "collectives:\n  nvls: true\n");
    OK_YAML(y, &c);
    free(y);
    ck_assert_int_eq(c.coll.algo_enabled[CS_ALGO_NVLS], 1);
    /* explicit true without the hardware: an error at the value */
    char *a = cs_test_replace(SINGLE, "compute_capability: 90", "compute_capability: 80");
    ERR_FREE(with(a, "collectives:\n  nvls: true\n"), 13, 9, "compute_capability >= 90");
    free(a);
    a = cs_test_replace(SINGLE, "fabric: nvswitch", "fabric: nvlink");
    ERR_FREE(with(a, "collectives:\n  nvls: true\n"), 13, 9, "got fabric nvlink");
    free(a);
    ERR_FREE(with(SINGLE, "collectives:\n  nvls: yes\n"), 13, 9, "nvls");
    /* the collectives mapping may come first in the file */
    y = malloc(strlen(SINGLE) + 64);
    ck_assert_ptr_nonnull(y);
    strcpy(y, "collectives: {nvls: true}\n");
    strcat(y, SINGLE);
    char *z = cs_test_replace(y, "fabric: nvswitch", "fabric: pcie");
    free(y);
    ERR_FREE(z, 1, 21, "NVSwitch");
}
END_TEST

START_TEST(collectives_overrides)
{
    cs_cluster c;
    char *y = with(BASE, "  efficiency: 0.9\n"
                         "  latency: 2us\n"
                         "  topology: fat-tree\n"
                         "  oversubscription: 2\n"
                         "name: custom\n"
                         "collectives:\n"
                         "  channels: 8\n"
                         "  net_overhead: 2us\n"
                         "  ll128: false\n"
                         "  chunk: {ll: 16KiB, simple: 1MiB}\n"
                         "  base_latency: {ring: {ll: 10us}}\n"
                         "  hw_latency:\n"
                         "    net: {tree: {simple: 20us}}\n"
                         "  bw_factor: {ring: {ll128: 0.92}, tree: {ll: 0.3}}\n"
                         "  efficiency: {tree: 1.2}\n");
    OK_YAML(y, &c);
    free(y);
    ck_assert_str_eq(c.name, "custom");
    ck_assert_double_eq_tol(c.inter.efficiency, 0.9, 1e-15);
    ck_assert_double_eq_tol(c.inter.latency_s, 2e-6, 1e-15);
    ck_assert_int_eq(c.inter.topology, CS_NET_FAT_TREE);
    ck_assert_double_eq_tol(c.inter.oversubscription, 2.0, 1e-15);
    ck_assert_int_eq(c.coll.channels, 8);
    ck_assert_double_eq_tol(c.coll.net_overhead_s, 2e-6, 1e-15);
    ck_assert_int_eq(c.coll.ll128_enabled, 0);
    ck_assert_double_eq_tol(c.coll.chunk_bytes[CS_PROTO_LL], 16 * 1024, 1e-9);
    ck_assert_double_eq_tol(c.coll.chunk_bytes[CS_PROTO_LL128], 600 * 1024, 1e-9);
    ck_assert_double_eq_tol(c.coll.chunk_bytes[CS_PROTO_SIMPLE], 1024 * 1024, 1e-9);
    ck_assert_double_eq_tol(c.coll.base_latency_s[CS_ALGO_RING][CS_PROTO_LL], 10e-6, 1e-15);
    ck_assert_double_eq_tol(c.coll.base_latency_s[CS_ALGO_RING][CS_PROTO_SIMPLE],
                            cs_algo_base_latency_s(CS_ALGO_RING, CS_PROTO_SIMPLE), 1e-15);
    ck_assert_double_eq_tol(c.coll.hw_latency_s[CS_HW_NET][CS_ALGO_TREE][CS_PROTO_SIMPLE], 20e-6,
                            1e-15);
    ck_assert_double_eq_tol(c.coll.hw_latency_s[CS_HW_NET][CS_ALGO_RING][CS_PROTO_SIMPLE],
                            cs_algo_hw_latency_s(CS_HW_NET, CS_ALGO_RING, CS_PROTO_SIMPLE),
                            1e-15);
    ck_assert_double_eq_tol(c.coll.hw_latency_s[CS_HW_NVLINK][CS_ALGO_TREE][CS_PROTO_SIMPLE],
                            cs_algo_hw_latency_s(CS_HW_NVLINK, CS_ALGO_TREE, CS_PROTO_SIMPLE),
                            1e-15);
    ck_assert_double_eq_tol(c.coll.proto_bw_factor[CS_ALGO_RING][CS_PROTO_LL128], 0.92, 1e-15);
    ck_assert_double_eq_tol(c.coll.proto_bw_factor[CS_ALGO_TREE][CS_PROTO_LL], 0.3, 1e-15);
    ck_assert_double_eq_tol(c.coll.proto_bw_factor[CS_ALGO_RING][CS_PROTO_LL], CS_UNSET, 1e-15);
    ck_assert_double_eq_tol(c.coll.algo_efficiency[CS_ALGO_TREE], 1.2, 1e-15);
    ck_assert_double_eq_tol(c.coll.algo_efficiency[CS_ALGO_RING], 1.0, 1e-15);
}
END_TEST

START_TEST(des_overrides_parsed)
{
    cs_cluster c;
    char *y = with(BASE, "des:\n"                                        /* 15 */
                         "  links:\n"                                    /* 16 */
                         "    - {node: 0, gpu: 3, bandwidth: 100GB/s}\n" /* 17 */
                         "    - node: 1\n"                               /* 18 */
                         "      nic: 7\n"                                /* 19 */
                         "      bandwidth: 100Gbps\n"                    /* 20 */
                         "  stragglers:\n"                               /* 21 */
                         "    - {rank: 5, slowdown: 1.5, delay: 10us}\n" /* 22 */
                         "    - {rank: 15}\n");                          /* 23 */
    OK_YAML(y, &c);
    free(y);
    ck_assert_int_eq(c.n_overrides, 2);
    ck_assert_int_eq(c.overrides[0].node, 0);
    ck_assert_int_eq(c.overrides[0].gpu, 3);
    ck_assert_int_eq(c.overrides[0].is_nic, 0);
    ck_assert_double_eq_tol(c.overrides[0].bw_Bps, 100e9, 1);
    ck_assert_int_eq(c.overrides[0].line, 17);
    ck_assert_int_eq(c.overrides[0].column, 7);
    ck_assert_int_eq(c.overrides[1].node, 1);
    ck_assert_int_eq(c.overrides[1].gpu, 7); /* the NIC index */
    ck_assert_int_eq(c.overrides[1].is_nic, 1);
    ck_assert_double_eq_tol(c.overrides[1].bw_Bps, 12.5e9, 1);
    ck_assert_int_eq(c.overrides[1].line, 18);
    ck_assert_int_eq(c.overrides[1].column, 7);
    ck_assert_int_eq(c.n_stragglers, 2);
    ck_assert_int_eq(c.stragglers[0].rank, 5);
    ck_assert_double_eq_tol(c.stragglers[0].slowdown, 1.5, 1e-15);
    ck_assert_double_eq_tol(c.stragglers[0].delay_s, 10e-6, 1e-15);
    ck_assert_int_eq(c.stragglers[0].line, 22);
    ck_assert_int_eq(c.stragglers[0].column, 7);
    ck_assert_int_eq(c.stragglers[1].rank, 15);
    ck_assert_double_eq_tol(c.stragglers[1].slowdown, 1.0, 1e-15);
    ck_assert_double_eq_tol(c.stragglers[1].delay_s, 0.0, 1e-15);
}
END_TEST

START_TEST(des_before_nodes_is_fine)
{
    /* Keys may come in any order; index checks still see nodes. */
    cs_cluster c;
    char *y = with("des: {stragglers: [{rank: 7}]}\n", SINGLE);
    OK_YAML(y, &c);
    free(y);
    ck_assert_int_eq(c.n_stragglers, 1);
    ck_assert_int_eq(c.stragglers[0].rank, 7);
    /* SINGLE has 8 ranks. */
    ERR_FREE(with("des: {stragglers: [{rank: 8}]}\n", SINGLE), 1, 27,
             "'rank' must be in 0..7 (nodes x gpus_per_node is 8), got 8");
}
END_TEST

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
             "'memory': expected a size such as 8, 4K, 25MiB or 8G, got '80Gib'");
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

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tp = tcase_create("presets");
    tcase_add_test(tp, presets_listed_sorted);
    tcase_add_test(tp, presets_match_their_files);
    tcase_add_test(tp, preset_dgx_h100);
    tcase_add_test(tp, preset_dgx_a100);
    tcase_add_test(tp, preset_hgx_h200);
    tcase_add_test(tp, preset_pcie_l40s);
    tcase_add_test(tp, unknown_preset_suggests);
    tcase_add_test(tp, files_and_missing_files);
    tcase_add_test(tp, file_name_defaults_to_basename);
    suite_add_tcase(s, tp);

    TCase *tv = tcase_create("values");
    tcase_add_test(tv, defaults_filled);
    tcase_add_test(tv, defaults_depend_on_fabric);
    tcase_add_test(tv, nvls_default_and_override);
    tcase_add_test(tv, collectives_overrides);
    tcase_add_test(tv, des_overrides_parsed);
    tcase_add_test(tv, des_before_nodes_is_fine);
    suite_add_tcase(s, tv);

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
    return cs_test_run(config_suite());
}
