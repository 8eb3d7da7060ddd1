/* SPDX-License-Identifier: MIT */
/*
 * test-cluster_yaml.c - the cluster YAML writer (config/cluster_yaml.h).
 *
 * Round trips: every preset of configs/clusters and every cluster of
 * validation/clusters, written with and without its source text, loads
 * back as the same cluster (cs_config_cluster_diff), and with its source
 * keeps every comment line the source had. A hand-made source exercises
 * the comment rules (head, leading lines, trailing comments, aligned
 * continuations, tail, '#' inside quotes, block-style grids with comments
 * on their leaves, des sequences) and the source's spellings. A changed
 * value loses its source comment and gets the note, the others keep
 * theirs. Values that do not read back exactly in us / GB/s are still
 * written exactly; strings that need quotes get them. Deliberately wrong:
 * the diff must name the key of a one-ulp change deep in a grid and in a
 * straggler, or a round trip proves nothing. Every algorithm's enable
 * flag (its table row's key) is written, read and compared.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/cluster_yaml.h"
#include "config/config.h"
#include "config/presets.h"
#include "testutil.h"

/* Writes c (with src, a note when note is set) and loads it back; the
 * text in *out (caller frees with cs_buf_free). */
static void write_and_reload(const cs_cluster *c, const char *src, cs_cluster_yaml_note note,
                             cs_buf *out, cs_cluster *back)
{
    cs_cluster_yaml_opts o = {.src_text = src, .src_len = src ? strlen(src) : 0, .note = note};
    cs_config_write_cluster(out, c, &o);
    *back = cs_test_cluster_yaml("back.yaml", out->data);
}

static void expect_same(const cs_cluster *a, const cs_cluster *b, const char *what,
                        const char *text)
{
    char path[256];
    const char *diff = cs_config_cluster_diff(a, b, path, sizeof path);
    ck_assert_msg(!diff, "%s: %s differs after the round trip\n%s", what, diff, text);
}

/* Every comment of src (from '#' to the end of its line) is in out. */
static void expect_comments_kept(const char *src, const char *out, const char *what)
{
    for (const char *line = src; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *hash = NULL;
        char quote = 0;
        for (size_t i = 0; i < len && !hash; i++)
            if (quote) quote = line[i] == quote ? 0 : quote;
            else if (line[i] == '\'' || line[i] == '"') quote = line[i];
            else if (line[i] == '#' && (i == 0 || line[i - 1] == ' ')) hash = line + i;
        if (hash) {
            char c[512];
            snprintf(c, sizeof c, "%.*s", (int)(len - (size_t)(hash - line)), hash);
            ck_assert_msg(strstr(out, c), "%s: comment lost: %s\n%s", what, c, out);
        }
        line = nl ? nl + 1 : line + len;
    }
}

static void round_trip_spec(const char *spec)
{
    cs_cluster c, back;
    cs_diag d;
    char *src;
    size_t len;
    ck_assert_msg(cs_config_cluster_source(spec, &c, &src, &len, &d) == 0, "%s: %s", spec,
                  d.message);
    cs_buf b = {0};
    write_and_reload(&c, src, NULL, &b, &back);
    expect_same(&c, &back, spec, b.data);
    expect_comments_kept(src, b.data, spec);
    cs_buf_free(&b);
    write_and_reload(&c, NULL, NULL, &b, &back);
    expect_same(&c, &back, spec, b.data);
    ck_assert_ptr_null(strchr(b.data, '#')); /* no source: no comments */
    cs_buf_free(&b);
    free(src);
}

START_TEST(presets_and_validation_clusters_round_trip)
{
    for (size_t i = 0; i < cs_presets_cluster_count(); i++)
        round_trip_spec(cs_presets_cluster_name(i));
    static const char *const files[] = {
        "a100-aws-p4de", "a100-coreweave", "a100-meta",     "a100-modal",      "a100-oci",
        "b200-together", "h100-aws-p5",    "h100-bitdeer",  "h100-coreweave",  "h100-gcp-a3mega",
        "h100-together", "l40s-farmshare",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "validation/clusters/%s.yaml", files[i]);
        round_trip_spec(path);
    }
}
END_TEST

/* A source with comments everywhere the rules distinguish. */
static const char SRC[] =
    "# head line 1\n"
    "#\n"
    "# head line 3\n"
    "nodes: 2                 # two of them\n"
    "gpus_per_node: 4\n"
    "gpu:\n"
    "  model: 'A # not a comment'   # the model\n"
    "  memory: 80GiB\n"
    "  compute_capability: 90\n"
    "  tflops:\n"
    "    bf16: 989.4          # per leaf\n"
    "    fp32: 67             # continued\n"
    "                         # on the next line\n"
    "  hbm_bandwidth: 3.35TB/s\n"
    "intra:\n"
    "  fabric: nvswitch\n"
    "  # leads bandwidth\n"
    "  bandwidth: 450GB/s\n"
    "  efficiency: 0.824      # fitted later\n"
    "inter:\n"
    "  nics_per_node: 8\n"
    "  nic_bandwidth: 400Gbps # bits\n"
    "collectives:\n"
    "  base_latency: {ring: {ll: 7us}}   # only one entry\n"
    "  hw_latency:\n"
    "    net:\n"
    "      tree: {simple: 15us}          # a flow line\n"
    "  bw_factor: {ring: {ll128: 0.9}}\n"
    "des:\n"
    "  links:\n"
    "    - {node: 1, nic: 2, bandwidth: 12.5GB/s}   # a slow NIC\n"
    "  stragglers:\n"
    "    - {rank: 5, slowdown: 1.5, delay: 10us}\n"
    "# the tail\n";

START_TEST(comments_follow_their_keys)
{
    cs_cluster back, c = cs_test_cluster_yaml("src.yaml", SRC);
    cs_buf b = {0};
    write_and_reload(&c, SRC, NULL, &b, &back);
    expect_same(&c, &back, "SRC", b.data);
    expect_comments_kept(SRC, b.data, "SRC");
    /* the head first, the tail last, each key's comment on its line, the
     * continuation aligned under it, source spellings kept */
    static const char start[] = "# head line 1\n#\n# head line 3\nname: src\n";
    ck_assert_msg(!strncmp(b.data, start, strlen(start)), "%s", b.data);
    CS_ASSERT_CONTAINS(b.data, "\nnodes: 2                 # two of them\n");
    CS_ASSERT_CONTAINS(b.data, "  model: \"A # not a comment\"   # the model\n");
    CS_ASSERT_CONTAINS(b.data, "    fp32: 67             # continued\n"
                               "                         # on the next line\n");
    CS_ASSERT_CONTAINS(b.data, "  # leads bandwidth\n  bandwidth: 450GB/s\n");
    CS_ASSERT_CONTAINS(b.data, "  nic_bandwidth: 400Gbps # bits\n");
    CS_ASSERT_CONTAINS(b.data,
                       "  base_latency:                     # only one entry\n    ring: {ll: 7us}\n");
    CS_ASSERT_CONTAINS(b.data, "      tree: {simple: 15us}          # a flow line\n");
    CS_ASSERT_CONTAINS(b.data, "  bw_factor:\n    ring: {ll128: 0.9}\n");
    CS_ASSERT_CONTAINS(b.data, "    - {node: 1, nic: 2, bandwidth: 12.5GB/s}   # a slow NIC\n");
    CS_ASSERT_CONTAINS(b.data, "    - {rank: 5, slowdown: 1.5, delay: 10us}\n");
    size_t tl = strlen("# the tail\n");
    ck_assert_str_eq(b.data + b.len - tl, "# the tail\n");
    /* every schema key is written, defaults included */
    CS_ASSERT_CONTAINS(b.data, "\n  oversubscription: 1\n");
    CS_ASSERT_CONTAINS(b.data, "\n  chunk: {ll: 32KiB, ll128: 600KiB, simple: 512KiB}\n");
    CS_ASSERT_CONTAINS(b.data, "\n  efficiency: {ring: 1, tree: 1, nvls: 1, nvlstree: 1, collnet_direct: 1, collnet_chain: 1, p2p: 1}\n");
    /* NCCL's default latencies are not repeated */
    CS_ASSERT_LACKS(b.data, "nvlink:");
    cs_buf_free(&b);
}
END_TEST

static const char *note(void *ud, const char *path, char *buf, size_t len)
{
    (void)ud;
    snprintf(buf, len, "fitted %s", path);
    return buf;
}

START_TEST(changed_values_get_the_note)
{
    cs_cluster back, c = cs_test_cluster_yaml("src.yaml", SRC);
    c.intra.efficiency = 0.8056547951;
    c.coll.hw_latency_s[CS_HW_NVLINK][CS_ALGO_RING][CS_PROTO_LL] *= 0.7;
    c.stragglers[0].delay_s = 12e-6;
    cs_buf b = {0};
    write_and_reload(&c, SRC, note, &b, &back);
    expect_same(&c, &back, "changed", b.data);
    CS_ASSERT_CONTAINS(b.data, "  efficiency: 0.8056547951   # fitted intra.efficiency\n");
    CS_ASSERT_LACKS(b.data, "# fitted later");
    CS_ASSERT_CONTAINS(b.data, "  hw_latency:   # fitted collectives.hw_latency\n");
    CS_ASSERT_CONTAINS(b.data, "\n    nvlink:   # fitted collectives.hw_latency.nvlink\n");
    CS_ASSERT_CONTAINS(b.data, "      tree: {simple: 15us}          # a flow line\n");
    CS_ASSERT_CONTAINS(b.data, "    - {rank: 5, slowdown: 1.5, delay: 12us}   # fitted des.stragglers[0]\n");
    /* the unchanged keep theirs */
    CS_ASSERT_CONTAINS(b.data, "  bandwidth: 450GB/s\n");
    CS_ASSERT_CONTAINS(b.data, "# a slow NIC");
    cs_buf_free(&b);
}
END_TEST

/* A changed number is written in the unit the source spelled it in
 * (400Gbps stays in Gbps, 80GiB in GiB, 3.35TB/s in TB/s), exactly; the
 * source's unit is only a preference: a key the source did not write gets
 * the shortest plain text (sizes in GiB/MiB/KiB when whole). */
START_TEST(changed_values_keep_the_source_unit)
{
    cs_cluster back, c = cs_test_cluster_yaml("src.yaml", SRC);
    c.inter.nic_bw_Bps = 410e9 / 8;
    c.gpu.memory_bytes = 81.0 * 1073741824.0;
    c.gpu.hbm_Bps = 3.0e12;
    cs_buf b = {0};
    write_and_reload(&c, SRC, NULL, &b, &back);
    expect_same(&c, &back, "units", b.data);
    CS_ASSERT_CONTAINS(b.data, "  nic_bandwidth: 410Gbps\n");
    CS_ASSERT_CONTAINS(b.data, "  memory: 81GiB\n");
    CS_ASSERT_CONTAINS(b.data, "  hbm_bandwidth: 3TB/s\n");
    CS_ASSERT_LACKS(b.data, "51250000000"); /* not in plain bytes */
    cs_buf_free(&b);
}
END_TEST

START_TEST(exact_values_and_quoted_strings)
{
    cs_cluster back, c = cs_test_cluster("dgx-h100");
    /* 3.4 x 1e-6 is not 3.4 / 1e6 (how "3.4us" reads): written exactly */
    c.coll.base_latency_s[CS_ALGO_TREE][CS_PROTO_LL] = 3.4 * 1e-6;
    c.intra.bw_Bps = 450e9 * 1.0123456789;
    c.gpu.hbm_Bps = nextafter(3.35e12, 4e12);
    c.inter.latency_s = 1.0 / 3.0 * 1e-6;
    snprintf(c.gpu.model, sizeof c.gpu.model, " lead: colon # hash, [flow] \"q\"");
    snprintf(c.name, sizeof c.name, "null");
    cs_buf b = {0};
    write_and_reload(&c, NULL, NULL, &b, &back);
    expect_same(&c, &back, "exact", b.data);
    ck_assert_str_eq(back.gpu.model, c.gpu.model);
    CS_ASSERT_CONTAINS(b.data, "name: \"null\"\n");
    cs_buf_free(&b);
}
END_TEST

START_TEST(diff_names_the_key)
{
    cs_cluster a, b;
    char *src = cs_test_slurp("configs/clusters/dgx-h100.yaml", NULL);
    char ext[8192];
    snprintf(ext, sizeof ext, "%sdes:\n  stragglers:\n    - {rank: 3, slowdown: 2}\n", src);
    a = cs_test_cluster_yaml("x.yaml", ext);
    b = a;
    char path[256];
    ck_assert_ptr_null(cs_config_cluster_diff(&a, &b, path, sizeof path));
    /* where an entry was written is not part of the cluster */
    b.stragglers[0].line = 99;
    ck_assert_ptr_null(cs_config_cluster_diff(&a, &b, path, sizeof path));
    /* deliberately wrong: one ulp deep in a grid, a straggler, a name */
    b = a;
    b.coll.hw_latency_s[CS_HW_NET][CS_ALGO_TREE][CS_PROTO_SIMPLE] =
        nextafter(b.coll.hw_latency_s[CS_HW_NET][CS_ALGO_TREE][CS_PROTO_SIMPLE], 1);
    ck_assert_ptr_nonnull(cs_config_cluster_diff(&a, &b, path, sizeof path));
    ck_assert_str_eq(path, "collectives.hw_latency");
    b = a;
    b.stragglers[0].slowdown = 2.5;
    ck_assert_ptr_nonnull(cs_config_cluster_diff(&a, &b, path, sizeof path));
    ck_assert_str_eq(path, "des.stragglers");
    b = a;
    b.inter.efficiency = 0.95;
    ck_assert_ptr_nonnull(cs_config_cluster_diff(&a, &b, path, sizeof path));
    ck_assert_str_eq(path, "inter.efficiency");
    free(src);
}
END_TEST

/* inter.pcie: written as the link name its rate is (the source's
 * spelling while unchanged, so gen5x8 stays though gen4x16 is the same
 * 24 GB/s), a rate that is no link as a rate, absent when unset; the
 * diff names it. */
START_TEST(the_pcie_path_is_a_link_name_or_a_rate)
{
    cs_cluster back, a = cs_test_cluster("dgx-a100");
    cs_buf b = {0};
    write_and_reload(&a, NULL, NULL, &b, &back);
    CS_ASSERT_CONTAINS(b.data, "\n  pcie: gen4x16\n");
    ck_assert(back.inter.pcie_Bps == 24e9);
    cs_buf_free(&b);
    cs_cluster c = a;
    c.inter.pcie_Bps = 30e9; /* 30, not 3e+01 (%g at one digit) */
    char path[256];
    ck_assert_ptr_nonnull(cs_config_cluster_diff(&a, &c, path, sizeof path));
    ck_assert_str_eq(path, "inter.pcie");
    write_and_reload(&c, NULL, NULL, &b, &back);
    CS_ASSERT_CONTAINS(b.data, "\n  pcie: 30GB/s\n");
    expect_same(&c, &back, "pcie rate", b.data);
    cs_buf_free(&b);
    char *src = cs_test_slurp("configs/clusters/dgx-a100.yaml", NULL);
    char *g5 = cs_test_replace(src, "pcie: gen4x16", "pcie: gen5x8");
    cs_cluster s = cs_test_cluster_yaml("g5.yaml", g5);
    write_and_reload(&s, g5, NULL, &b, &back);
    CS_ASSERT_CONTAINS(b.data, "  pcie: gen5x8 ");
    cs_buf_free(&b);
    s.inter.pcie_Bps = 48e9; /* changed: the link name of the new rate */
    write_and_reload(&s, g5, NULL, &b, &back);
    CS_ASSERT_CONTAINS(b.data, "  pcie: gen5x16\n");
    cs_buf_free(&b);
    s.inter.pcie_Bps = 0; /* unset: no key */
    write_and_reload(&s, g5, NULL, &b, &back);
    CS_ASSERT_LACKS(b.data, "pcie:");
    ck_assert(back.inter.pcie_Bps == 0);
    cs_buf_free(&b);
    free(g5);
    free(src);
}
END_TEST

/* Every algorithm's enable flag is a collectives key (from its table row,
 * none listed in the schema): written, read back, and named by the diff. */
START_TEST(every_algorithm_flag_is_a_key)
{
    cs_cluster b, back, a = cs_test_cluster("dgx-h100");
    int flags = 0;
    for (int al = 0; al < CS_ALGO_COUNT; al++) {
        const char *key = cs_algo_flag_key((cs_algo_id)al);
        if (!key) continue;
        flags++;
        b = a;
        b.coll.algo_enabled[al] = !a.coll.algo_enabled[al];
        char path[256], want[64];
        ck_assert_ptr_nonnull(cs_config_cluster_diff(&a, &b, path, sizeof path));
        snprintf(want, sizeof want, "collectives.%s", key);
        ck_assert_str_eq(path, want);
        b.coll.algo_enabled[al] = 0; /* off is allowed on any hardware */
        cs_buf t = {0};
        write_and_reload(&b, NULL, NULL, &t, &back);
        snprintf(want, sizeof want, "\n  %s: false\n", key);
        ck_assert_msg(strstr(t.data, want) != NULL, "%s not written:\n%s", key, t.data);
        ck_assert_int_eq(back.coll.algo_enabled[al], 0);
        cs_buf_free(&t);
    }
    ck_assert_int_gt(flags, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cluster_yaml");
    TCase *tc = tcase_create("writer");
    tcase_add_test(tc, presets_and_validation_clusters_round_trip);
    tcase_add_test(tc, comments_follow_their_keys);
    tcase_add_test(tc, changed_values_get_the_note);
    tcase_add_test(tc, changed_values_keep_the_source_unit);
    tcase_add_test(tc, exact_values_and_quoted_strings);
    tcase_add_test(tc, diff_names_the_key);
    tcase_add_test(tc, every_algorithm_flag_is_a_key);
    tcase_add_test(tc, the_pcie_path_is_a_link_name_or_a_rate);
    suite_add_tcase(s, tc);
    return cs_test_run(s);
}
