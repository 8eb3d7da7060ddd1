/* SPDX-License-Identifier: MIT */
/*
 * test-config.c - cluster YAML loading: presets and their documented
 * numbers, files, defaults and overrides. Every class of error with its
 * exact line and column is in test-config-errors.c. Runs with the project
 * root as working directory.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/presets.h"
#include "test-config.h"

/* ---- presets ---- */

START_TEST(presets_listed_sorted)
{
    ck_assert_uint_eq(cs_presets_cluster_count(), 11);
    ck_assert_str_eq(cs_presets_cluster_name(0), "cpu-local");
    ck_assert_str_eq(cs_presets_cluster_name(1), "dgx-a100");
    ck_assert_str_eq(cs_presets_cluster_name(2), "dgx-b200");
    ck_assert_str_eq(cs_presets_cluster_name(3), "dgx-h100");
    ck_assert_str_eq(cs_presets_cluster_name(4), "gb200-nvl72");
    ck_assert_str_eq(cs_presets_cluster_name(5), "gb300-nvl72");
    ck_assert_str_eq(cs_presets_cluster_name(6), "grandteton-h100");
    ck_assert_str_eq(cs_presets_cluster_name(7), "hgx-h200");
    ck_assert_str_eq(cs_presets_cluster_name(8), "pcie-h100");
    ck_assert_str_eq(cs_presets_cluster_name(9), "pcie-h100-nvl");
    ck_assert_str_eq(cs_presets_cluster_name(10), "pcie-l40s");
    ck_assert_ptr_null(cs_presets_cluster_name(11));
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
    ck_assert_double_eq_tol(c.inter.efficiency, 47.0 / 48, 1e-12);
    ck_assert_double_eq_tol(c.inter.pcie_Bps, 48e9, 1); /* gen5x16 */
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
    ck_assert_double_eq_tol(c.inter.efficiency, 1, 1e-12);
    ck_assert_double_eq_tol(c.inter.pcie_Bps, 24e9, 1); /* gen4x16 */
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
    ck_assert_double_eq_tol(c.inter.efficiency, 47.0 / 48, 1e-12);
    ck_assert_double_eq_tol(c.inter.pcie_Bps, 48e9, 1); /* gen5x16 */
    ck_assert_int_eq(c.coll.algo_enabled[CS_ALGO_NVLS], 1);
}
END_TEST

/* The H100 variants: each part's datasheet (or torchtitan's) figures, and
 * the clock the tensor peak is quoted at = peak / (SMs x 4096 dense bf16
 * FLOPs per SM per clock), the relation cs_compute_peak_flops scales by. */
START_TEST(preset_h100_variants)
{
    const struct {
        const char *name;
        double mem, hbm, bf16, sms, clock;
    } v[] = {
        {"dgx-h100", 80.0 * (1 << 30), 3.35e12, 989.4e12, 132, 0},
        {"grandteton-h100", 95.0396 * (1 << 30), 2.4e12, 989.4e12, 132, 1830},
        {"pcie-h100", 80e9, 2e12, 756e12, 114, 1620},
        {"pcie-h100-nvl", 94e9, 3.9e12, 835.5e12, 132, 1545},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        cs_cluster c = cs_test_cluster(v[i].name);
        ck_assert_int_eq(c.gpu.compute_capability, 90);
        ck_assert_double_eq_tol(c.gpu.memory_bytes, v[i].mem, 1e3);
        ck_assert_double_eq_tol(c.gpu.hbm_Bps, v[i].hbm, 1);
        ck_assert_double_eq_tol(c.gpu.peak_flops[CS_DTYPE_BF16], v[i].bf16, 1e6);
        ck_assert_double_eq(c.gpu.compute.sms, v[i].sms);
        ck_assert_double_eq(c.gpu.peak_clock_mhz, v[i].clock);
        ck_assert_double_eq(c.gpu.sustained_clock_mhz, 0); /* none is known to be held lower */
        if (v[i].clock > 0) /* the quoted clock matches the quoted peak within 0.1% */
            ck_assert_double_eq_tol(v[i].sms * 4096 * v[i].clock * 1e6 / v[i].bf16, 1, 1e-3);
    }
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
                                "cpu-local, dgx-a100, dgx-b200, dgx-h100, gb200-nvl72, gb300-nvl72, grandteton-h100, "
                                "hgx-h200, pcie-h100, pcie-h100-nvl, pcie-l40s)");
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
    ck_assert_double_eq_tol(c.inter.pcie_Bps, 0.0, 1e-15); /* no path limit */
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
    tcase_add_test(tp, preset_h100_variants);
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
    return s;
}

int main(void)
{
    return cs_test_run(config_suite());
}
