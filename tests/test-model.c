/* SPDX-License-Identifier: MIT */
/*
 * test-model.c - model shapes: the preset list and its files, the shapes
 * the YAML comments cite, derive's checks, generic models of 100K..1T
 * parameters, then YAML loading and its errors with exact line and column.
 * The published-table checks (parameter totals, FLOPs, activation bytes
 * against the papers) are in test-model-presets.c. Runs with the project
 * root as working directory.
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "train/model.h"
#include "base/yamlnode.h"
#include "testutil.h"

static double rel_err(double got, double want)
{
    return fabs(got - want) / fabs(want);
}

/* ---- presets and parameter counts ---- */

static const char *const PRESETS[] = {
    "gpt2-1.5b", "gpt2-124m", "gpt2-355m",  "gpt2-774m",  "gpt3-1.3b",  "gpt3-13b",  "gpt3-175b",
    "gpt3-6.7b", "llama2-13b", "llama2-70b", "llama2-7b", "llama3-70b", "llama3-8b",
    "mixtral-8x7b",
};
#define N_PRESETS (sizeof PRESETS / sizeof PRESETS[0])

START_TEST(presets_listed_sorted)
{
    ck_assert_uint_eq(cs_model_preset_count(), N_PRESETS);
    for (size_t i = 0; i < N_PRESETS; i++) ck_assert_str_eq(cs_model_preset_name(i), PRESETS[i]);
    ck_assert_ptr_null(cs_model_preset_name(N_PRESETS));
    /* every YAML file in configs/models is a preset */
    DIR *dir = opendir("configs/models");
    ck_assert_msg(dir != NULL, "configs/models (tests run from the project root)");
    size_t files = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        size_t n = strlen(e->d_name);
        if (n > 5 && !strcmp(e->d_name + n - 5, ".yaml")) {
            char name[256];
            snprintf(name, sizeof name, "%.*s", (int)(n - 5), e->d_name);
            int found = 0;
            for (size_t i = 0; i < N_PRESETS; i++) found |= !strcmp(name, PRESETS[i]);
            ck_assert_msg(found, "configs/models/%s is not a built-in preset", e->d_name);
            files++;
        }
    }
    closedir(dir);
    ck_assert_uint_eq(files, N_PRESETS);
}
END_TEST

/* Each preset equals its file loaded by path, and is named after itself. */
START_TEST(presets_match_their_files)
{
    for (size_t i = 0; i < N_PRESETS; i++) {
        cs_model a = cs_test_model(PRESETS[i]);
        ck_assert_str_eq(a.name, PRESETS[i]);
        char path[256];
        snprintf(path, sizeof path, "configs/models/%s.yaml", PRESETS[i]);
        cs_model b = cs_test_model(path);
        ck_assert_str_eq(a.name, b.name);
        ck_assert(a.generic == b.generic && a.layers == b.layers && a.hidden == b.hidden &&
                  a.heads == b.heads && a.kv_heads == b.kv_heads &&
                  a.ffn_hidden == b.ffn_hidden && a.gated_mlp == b.gated_mlp &&
                  a.seq_len == b.seq_len && a.vocab == b.vocab &&
                  a.tied_embeddings == b.tied_embeddings && a.biases == b.biases &&
                  a.learned_positions == b.learned_positions && a.experts == b.experts &&
                  a.experts_per_token == b.experts_per_token);
        ck_assert(a.params == b.params && a.layer_params == b.layer_params &&
                  a.active_params == b.active_params &&
                  a.embedding_params == b.embedding_params);
    }
}
END_TEST

/* A preset's shape: layers, hidden, heads, kv heads, ffn, seq, vocab. */
static cs_model assert_shape(const char *name, const int want[7])
{
    cs_model m = cs_test_model(name);
    const int got[7] = {m.layers, m.hidden, m.heads, m.kv_heads, m.ffn_hidden, m.seq_len, m.vocab};
    for (int i = 0; i < 7; i++)
        ck_assert_msg(got[i] == want[i], "%s field %d: %d, want %d", name, i, got[i], want[i]);
    return m;
}

/* Shapes as the YAML comments cite them. */
START_TEST(preset_shapes)
{
    cs_model m = cs_test_model("gpt3-175b");
    ck_assert_int_eq(m.layers, 96);
    ck_assert_int_eq(m.hidden, 12288);
    ck_assert_int_eq(m.heads, 96);
    ck_assert_int_eq(m.kv_heads, 96);
    ck_assert_int_eq(m.ffn_hidden, 4 * 12288);
    ck_assert_int_eq(m.seq_len, 2048);
    ck_assert_int_eq(m.vocab, 50257);
    ck_assert(m.tied_embeddings && m.biases && m.learned_positions && !m.gated_mlp);
    /* GPT formula: 12Lh^2 + 13Lh + (v + s)h + 2h */
    double L = 96, h = 12288;
    ck_assert_double_eq_tol(m.params, 12 * L * h * h + 13 * L * h + (50257 + 2048) * h + 2 * h,
                            0.5);

    m = assert_shape("llama2-70b", (const int[7]){80, 8192, 64, 8, 28672, 4096, 32000});
    ck_assert(!m.tied_embeddings && !m.biases && !m.learned_positions && m.gated_mlp);

    m = cs_test_model("llama3-8b");
    ck_assert_int_eq(m.kv_heads, 8);
    ck_assert_int_eq(m.ffn_hidden, 14336);
    ck_assert_int_eq(m.seq_len, 8192);
    ck_assert_int_eq(m.vocab, 128256);

    m = cs_test_model("gpt2-124m");
    ck_assert_int_eq(m.seq_len, 1024);
    ck_assert_int_eq(m.vocab, 50257);
    ck_assert(m.tied_embeddings);
    ck_assert(m.experts == 1 && m.experts_per_token == 1 && m.active_params == m.params);

    /* Jiang et al. 2024 Table 1 */
    m = assert_shape("mixtral-8x7b", (const int[7]){32, 4096, 32, 8, 14336, 32768, 32000});
    ck_assert_int_eq(m.experts, 8);
    ck_assert_int_eq(m.experts_per_token, 2);
    ck_assert(!m.tied_embeddings && !m.biases && !m.learned_positions && m.gated_mlp);
}
END_TEST

START_TEST(derive_rejects_bad_shapes)
{
    cs_model m = cs_test_model("llama2-70b");
    cs_model bad = m;
    cs_diag d;
    bad.kv_heads = 6; /* 64 % 6 != 0 */
    ck_assert_int_eq(cs_model_derive(&bad, &d), CS_EINVAL);
    CS_ASSERT_CONTAINS(d.message, "'kv_heads' (6) must divide 'heads' (64)");
    bad = m;
    bad.heads = 60; /* 8192 % 60 != 0 */
    ck_assert_int_eq(cs_model_derive(&bad, &d), CS_EINVAL);
    CS_ASSERT_CONTAINS(d.message, "'heads' (60) must divide 'hidden' (8192)");
    bad = m;
    bad.kv_heads = 128;
    ck_assert_int_eq(cs_model_derive(&bad, &d), CS_EINVAL);
    bad = m;
    bad.layers = 0;
    ck_assert_int_eq(cs_model_derive(&bad, &d), CS_EINVAL);
    bad = m;
    bad.ffn_hidden = 0;
    ck_assert_int_eq(cs_model_derive(&bad, &d), CS_EINVAL);
    ck_assert_int_eq(cs_model_derive(&m, &d), 0);
    /* experts: 1 <= top-k <= experts */
    bad = m;
    bad.experts = 8, bad.experts_per_token = 9;
    ck_assert_int_eq(cs_model_derive(&bad, &d), CS_EINVAL);
    CS_ASSERT_CONTAINS(d.message, "'experts_per_token' must be in 1..experts (8), got 9");
    bad.experts_per_token = 0;
    ck_assert_int_eq(cs_model_derive(&bad, &d), CS_EINVAL);
    CS_ASSERT_CONTAINS(d.message, "needs 'experts_per_token'");
    bad.experts = 1, bad.experts_per_token = 2;
    ck_assert_int_eq(cs_model_derive(&bad, &d), CS_EINVAL);
    bad.experts = -1, bad.experts_per_token = 0;
    ck_assert_int_eq(cs_model_derive(&bad, &d), CS_EINVAL);
    /* a zeroed pair is dense, and derive says so */
    bad.experts = 0;
    ck_assert_int_eq(cs_model_derive(&bad, &d), 0);
    ck_assert(bad.experts == 1 && bad.experts_per_token == 1 && bad.active_params == bad.params);
    bad.experts = 8, bad.experts_per_token = 8; /* every expert per token: all active */
    ck_assert_int_eq(cs_model_derive(&bad, &d), 0);
    ck_assert(bad.active_params == bad.params && bad.params > m.params);
}
END_TEST

/* ---- generic models ---- */

START_TEST(generic_exact_and_sane)
{
    static const double P[] = {124e6, 350e6, 1e9, 6.7e9, 13e9, 70e9, 175e9, 530e9, 1e12};
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        cs_model m;
        cs_diag d;
        ck_assert_int_eq(cs_model_generic(P[i], &m, &d), 0);
        ck_assert_msg(rel_err(m.params, P[i]) < 1e-9, "%g: got %.17g", P[i], m.params);
        ck_assert_int_eq(m.generic, 1);
        ck_assert_int_eq(m.seq_len, 2048);
        ck_assert_int_eq(m.vocab, 50257);
        ck_assert_int_ge(m.layers, 1);
        ck_assert_int_eq(m.hidden, 128 * m.layers); /* GPT-3 175B's aspect ratio */
        ck_assert_int_eq(m.heads, m.hidden / 128);
        ck_assert_int_eq(m.kv_heads, m.heads);
        ck_assert_int_eq(m.ffn_hidden, 4 * m.hidden);
        ck_assert_double_eq_tol(m.embedding_params, 50257.0 * m.hidden, 0.5);
        /* a layer is about 12h^2, as a GPT layer of that width */
        double ratio = m.layer_params / (12.0 * m.hidden * m.hidden);
        ck_assert_msg(ratio > 0.4 && ratio < 1.6, "%g: layer/12h^2 = %g", P[i], ratio);
        /* derive keeps it */
        cs_model again = m;
        ck_assert_int_eq(cs_model_derive(&again, NULL), 0);
        ck_assert(rel_err(again.params, P[i]) < 1e-9);
    }
    /* 175B lands on GPT-3 175B's shape */
    cs_model m;
    ck_assert_int_eq(cs_model_generic(175e9, &m, NULL), 0);
    ck_assert_int_eq(m.layers, 96);
    ck_assert_int_eq(m.hidden, 12288);
    ck_assert_str_eq(m.name, "generic-175B");
    ck_assert_int_eq(cs_model_generic(1.3e9, &m, NULL), 0);
    ck_assert_str_eq(m.name, "generic-1.3B");
}
END_TEST

START_TEST(generic_small_and_invalid)
{
    cs_model m;
    cs_diag d;
    /* small: the width shrinks so the embedding stays at most half */
    static const double P[] = {2e5, 3e6, 1e7, 5e7};
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        ck_assert_int_eq(cs_model_generic(P[i], &m, &d), 0);
        ck_assert(rel_err(m.params, P[i]) < 1e-9);
        ck_assert(m.embedding_params <= P[i] / 2);
        ck_assert(m.layer_params > 0);
        ck_assert_int_eq(m.hidden % m.heads, 0);
    }
    ck_assert_int_eq(cs_model_generic(5e4, &m, &d), CS_EINVAL); /* below 1e5 */
    ck_assert_int_eq(cs_model_generic(1e5, &m, &d), CS_EINVAL); /* 50257 x 1 > half */
    CS_ASSERT_CONTAINS(d.message, "too small for a vocabulary of 50257");
    ck_assert_int_eq(cs_model_generic(-1, &m, &d), CS_EINVAL);
    ck_assert_int_eq(cs_model_generic(NAN, &m, &d), CS_EINVAL);
    ck_assert_int_eq(cs_model_generic(INFINITY, &m, &d), CS_EINVAL);
    ck_assert_int_eq(cs_model_generic_shape(1e9, 0, 50257, &m, &d), CS_EINVAL);
    /* another vocabulary and context */
    ck_assert_int_eq(cs_model_generic_shape(7e9, 4096, 32000, &m, &d), 0);
    ck_assert(rel_err(m.params, 7e9) < 1e-9);
    ck_assert_int_eq(m.seq_len, 4096);
    ck_assert_double_eq_tol(m.embedding_params, 32000.0 * m.hidden, 0.5);
}
END_TEST

/* ---- YAML ---- */

static int load(const char *yaml, cs_model *m, cs_diag *d)
{
    return cs_model_load_string("test.yaml", yaml, strlen(yaml), m, d);
}

static void expect_ok(const char *yaml, cs_model *m, int line)
{
    cs_diag d;
    cs_test_diag_ok(load(yaml, m, &d), &d, "line %d", line);
}

static void expect_error(const char *yaml, int want_line, int want_col, const char *text, int line)
{
    cs_model m;
    cs_diag d;
    cs_test_diag_error(load(yaml, &m, &d), &d, "test.yaml", want_line, want_col, text, "line %d",
                       line);
}

#define OK_YAML(yaml, m)        expect_ok(yaml, m, __LINE__)
#define ERR(yaml, l, col, text) expect_error(yaml, l, col, text, __LINE__)

/* A small valid shape; line numbers below refer to it. */
#define SHAPE "layers: 2\n"     /* 1 */ \
              "hidden: 64\n"    /* 2 */ \
              "heads: 4\n"      /* 3 */ \
              "seq_len: 128\n"  /* 4 */ \
              "vocab: 1000\n"   /* 5 */

START_TEST(yaml_defaults)
{
    cs_model m;
    OK_YAML(SHAPE, &m);
    ck_assert_str_eq(m.name, "test"); /* from the origin */
    ck_assert_int_eq(m.kv_heads, 4);
    ck_assert_int_eq(m.ffn_hidden, 256);
    ck_assert(!m.gated_mlp && m.biases && m.learned_positions && m.tied_embeddings);
    ck_assert_int_eq(m.generic, 0);
    /* 2 x (12 h^2 + 13 h) + (v + s) h + 2h */
    double h = 64;
    ck_assert_double_eq_tol(m.params, 2 * (12 * h * h + 13 * h) + (1000 + 128) * h + 2 * h, 0.5);

    OK_YAML(SHAPE "gated_mlp: true\nname: tiny\nkv_heads: 2\nffn_hidden: 100\n", &m);
    ck_assert_str_eq(m.name, "tiny");
    ck_assert(m.gated_mlp && !m.biases && !m.learned_positions && !m.tied_embeddings);
    /* 2 x (2h^2 + 2h(h/2) + 3hf + 2h) + 2vh + h */
    ck_assert_double_eq_tol(m.params,
                            2 * (2 * h * h + h * h + 3 * h * 100 + 2 * h) + 2 * 1000 * h + h, 0.5);

    /* explicit style keys override the gated default */
    OK_YAML(SHAPE "gated_mlp: true\nbiases: true\nposition_embedding: learned\n"
                  "tied_embeddings: true\n",
            &m);
    ck_assert(m.gated_mlp && m.biases && m.learned_positions && m.tied_embeddings);
    OK_YAML(SHAPE "position_embedding: rotary\n", &m);
    ck_assert_int_eq(m.learned_positions, 0);

    /* experts: default dense; 4 GeLU experts of f = 4h, top-1: the MLP
     * (2hf + f + h with biases) four times, a bias-free router of 4h */
    ck_assert(m.experts == 1 && m.experts_per_token == 1);
    cs_model d;
    OK_YAML(SHAPE, &d);
    OK_YAML(SHAPE "experts: 4\nexperts_per_token: 1\n", &m);
    ck_assert(m.experts == 4 && m.experts_per_token == 1);
    double mlp = 2 * h * 256 + 256 + h;
    ck_assert_double_eq(m.layer_params, d.layer_params + 3 * mlp + 4 * h);
    ck_assert_double_eq(m.active_params, d.params + 2 * 4 * h);
    OK_YAML(SHAPE "experts: 1\nexperts_per_token: 1\n", &m);
    ck_assert_double_eq(m.params, d.params);
}
END_TEST

START_TEST(yaml_generic)
{
    cs_model m;
    OK_YAML("parameters: 7e9\n", &m);
    ck_assert_int_eq(m.generic, 1);
    ck_assert(rel_err(m.params, 7e9) < 1e-9);
    ck_assert_str_eq(m.name, "test");
    ck_assert_int_eq(m.seq_len, 2048);
    ck_assert_int_eq(m.vocab, 50257);
    OK_YAML("name: big\nparameters: 1.3B\nseq_len: 4096\nvocab: 32000\n", &m);
    ck_assert_str_eq(m.name, "big");
    ck_assert(rel_err(m.params, 1.3e9) < 1e-9);
    ck_assert_int_eq(m.seq_len, 4096);
    ck_assert_int_eq(m.vocab, 32000);
    OK_YAML("parameters: 350M\n", &m);
    ck_assert(rel_err(m.params, 350e6) < 1e-9);
    OK_YAML("parameters: 1T\n", &m);
    ck_assert(rel_err(m.params, 1e12) < 1e-9);
    OK_YAML("parameters: 124000000\n", &m);
    ck_assert(rel_err(m.params, 124e6) < 1e-9);
}
END_TEST

START_TEST(yaml_errors)
{
    /* unknown key with a did-you-mean */
    ERR("layers: 2\nhiden: 64\nheads: 4\nseq_len: 128\nvocab: 1000\n", 2, 1,
        "unknown key 'hiden' in model (did you mean 'hidden'?)");
    ERR(SHAPE "kv_head: 2\n", 6, 1, "did you mean 'kv_heads'?");
    ERR(SHAPE "tied_embedding: false\n", 6, 1, "did you mean 'tied_embeddings'?");
    /* parameters mixed with a shape: at the shape key, naming parameters */
    ERR("parameters: 7e9\nlayers: 32\n", 2, 1,
        "'layers' cannot be combined with 'parameters' (line 1, column 1)");
    ERR("name: x\ngated_mlp: true\nparameters: 7e9\n", 2, 1,
        "'gated_mlp' cannot be combined with 'parameters' (line 3, column 1)");
    ERR("parameters: 7e9\nexperts: 8\n", 2, 1, "'experts' cannot be combined with 'parameters'");
    /* seq_len and vocab may go with parameters; nothing else */
    ERR("parameters: 7e9\nseq_len: 4096\nffn_hidden: 100\n", 3, 1, "cannot be combined");
    /* heads not dividing hidden, kv_heads not dividing heads: at the value */
    ERR("layers: 2\nhidden: 64\nheads: 5\nseq_len: 128\nvocab: 1000\n", 3, 8,
        "'heads' (5) must divide 'hidden' (64)");
    ERR(SHAPE "kv_heads: 3\n", 6, 11, "'kv_heads' (3) must divide 'heads' (4)");
    ERR(SHAPE "kv_heads: 8\n", 6, 11, "'kv_heads' must be in 1..heads (4), got 8");
    /* experts: the top-k in 1..experts, at its value; a mixture needs it */
    ERR(SHAPE "experts: 8\nexperts_per_token: 9\n", 7, 20,
        "'experts_per_token' must be in 1..experts (8), got 9");
    ERR(SHAPE "experts: 8\n", 6, 10,
        "a mixture of 8 'experts' needs 'experts_per_token' (the top-k each token is routed to, "
        "1..8");
    ERR(SHAPE "experts_per_token: 2\n", 6, 20,
        "'experts_per_token' (2) needs 'experts' of at least that many");
    ERR(SHAPE "experts: 0\nexperts_per_token: 1\n", 6, 10, "'experts' must be an integer in 1..");
    ERR(SHAPE "experts: 4\nexperts_per_token: 0\n", 7, 20, "'experts_per_token' must be an");
    /* missing keys: at the mapping */
    ERR("hidden: 64\nheads: 4\nseq_len: 128\nvocab: 1000\n", 1, 1,
        "missing required key 'layers' in model");
    ERR("layers: 2\nhidden: 64\nheads: 4\nseq_len: 128\n", 1, 1, "missing required key 'vocab'");
    /* values */
    ERR("layers: many\nhidden: 64\nheads: 4\nseq_len: 128\nvocab: 1000\n", 1, 9,
        "'layers' must be an integer in 1..100000, got 'many'");
    ERR("layers: 0\nhidden: 64\nheads: 4\nseq_len: 128\nvocab: 1000\n", 1, 9, "'layers' must be");
    ERR(SHAPE "gated_mlp: yes\n", 6, 12, "'gated_mlp' must be true or false");
    ERR(SHAPE "position_embedding: rotery\n", 6, 21, "did you mean 'rotary'?");
    ERR("parameters: lots\n", 1, 13, "'parameters' must be a parameter count such as 7e9");
    ERR("parameters: 50\n", 1, 13, "'parameters' must be in [100000, 1e+16]");
    ERR("parameters: [1, 2]\n", 1, 13, "got a sequence");
    ERR("parameters: 1e5\nvocab: 50257\n", 1, 13, "too small for a vocabulary of 50257");
    /* structure */
    ERR("", 1, 1, "empty file");
    ERR("- layers\n", 1, 1, "expected a mapping of model keys");
    ERR(SHAPE "layers: 3\n", 6, 1, "duplicate key 'layers'");
}
END_TEST

START_TEST(yaml_error_check_can_fail)
{
    /* The error helper compares position and text: a wrong column or text
     * must not pass. Reproduce its checks by hand on a known error. */
    cs_model m;
    cs_diag d;
    ck_assert_int_eq(load(SHAPE "kv_heads: 3\n", &m, &d), CS_ECONFIG);
    ck_assert_int_eq(d.line, 6);
    ck_assert_int_ne(d.column, 1);
    CS_ASSERT_LACKS(d.message, "'heads' (4) must divide");
}
END_TEST

START_TEST(load_specs)
{
    cs_model m;
    cs_diag d;
    /* unknown preset: did-you-mean */
    ck_assert_int_eq(cs_model_load("llama2-7", &m, &d), CS_ENOENT);
    CS_ASSERT_CONTAINS(d.message, "unknown model 'llama2-7' (did you mean 'llama2-7b'?");
    CS_ASSERT_CONTAINS(d.message, "presets: gpt2-1.5b, gpt2-124m");
    ck_assert_int_eq(cs_model_load("gpt3-175", &m, &d), CS_ENOENT);
    CS_ASSERT_CONTAINS(d.message, "did you mean 'gpt3-175b'?");
    ck_assert_int_eq(cs_model_load("bertlarge", &m, &d), CS_ENOENT);
    CS_ASSERT_LACKS(d.message, "did you mean");
    /* a missing file */
    ck_assert_int_eq(cs_model_load("configs/models/nope.yaml", &m, &d), CS_ENOENT);
    ck_assert_str_eq(d.file, "configs/models/nope.yaml");
    /* parameter counts */
    ck_assert_int_eq(cs_model_load("7e9", &m, &d), 0);
    ck_assert(m.generic && rel_err(m.params, 7e9) < 1e-9);
    ck_assert_int_eq(cs_model_load("1.3B", &m, &d), 0);
    ck_assert(rel_err(m.params, 1.3e9) < 1e-9);
    ck_assert_int_eq(cs_model_load("10", &m, &d), CS_EINVAL);
    /* a preset's origin names its file */
    ck_assert_int_eq(cs_model_load_string("configs/models/x.yml", "layers: x\n", 10, &m, &d),
                     CS_ECONFIG);
    ck_assert_str_eq(d.file, "configs/models/x.yml");
}
END_TEST

/* The scenario loader's entry: a `model:` value inside a larger document. */
static int from_node(const char *yaml, cs_model *m, cs_diag *d)
{
    cs_ynode *root = NULL;
    int rc = cs_yamlnode_parse("scenario.yaml", yaml, strlen(yaml), &root, d);
    ck_assert_int_eq(rc, 0);
    cs_yctx c = {.origin = "scenario.yaml", .root = "scenario", .d = d};
    rc = cs__model_from_node(&c, cs_yamlnode_find(root, "model"), m);
    cs_yamlnode_free(root);
    return rc;
}

START_TEST(model_from_node)
{
    cs_model m;
    cs_diag d;
    ck_assert_int_eq(from_node("cluster: dgx-h100\nmodel: llama3-8b\n", &m, &d), 0);
    ck_assert_str_eq(m.name, "llama3-8b");
    ck_assert_int_eq(from_node("model:\n  parameters: 13B\n", &m, &d), 0);
    ck_assert(m.generic && rel_err(m.params, 13e9) < 1e-9);
    ck_assert_str_eq(m.name, "generic-13B");
    ck_assert_int_eq(from_node("model: {layers: 2, hidden: 64, heads: 4, seq_len: 8, vocab: 10}\n",
                               &m, &d),
                     0);
    ck_assert_str_eq(m.name, "model");
    /* errors are at the node, in the scenario file */
    ck_assert_int_eq(from_node("x: 1\nmodel: llama2-7\n", &m, &d), CS_ECONFIG);
    ck_assert_str_eq(d.file, "scenario.yaml");
    ck_assert_int_eq(d.line, 2);
    ck_assert_int_eq(d.column, 8);
    CS_ASSERT_CONTAINS(d.message, "did you mean 'llama2-7b'?");
    ck_assert_int_eq(from_node("model:\n  layers: 2\n  hiden: 64\n", &m, &d), CS_ECONFIG);
    ck_assert_int_eq(d.line, 3);
    ck_assert_int_eq(d.column, 3);
    CS_ASSERT_CONTAINS(d.message, "unknown key 'hiden' in model (did you mean");
    ck_assert_int_eq(from_node("model:\n  parameters: 7e9\n  heads: 4\n", &m, &d), CS_ECONFIG);
    ck_assert_int_eq(d.line, 3);
    ck_assert_int_eq(from_node("model: [1]\n", &m, &d), CS_ECONFIG);
    ck_assert_int_eq(d.line, 1);
}
END_TEST

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tp = tcase_create("presets");
    tcase_add_test(tp, presets_listed_sorted);
    tcase_add_test(tp, presets_match_their_files);
    tcase_add_test(tp, preset_shapes);
    tcase_add_test(tp, derive_rejects_bad_shapes);
    suite_add_tcase(s, tp);

    TCase *tg = tcase_create("generic");
    tcase_add_test(tg, generic_exact_and_sane);
    tcase_add_test(tg, generic_small_and_invalid);
    suite_add_tcase(s, tg);

    TCase *ty = tcase_create("yaml");
    tcase_add_test(ty, yaml_defaults);
    tcase_add_test(ty, yaml_generic);
    tcase_add_test(ty, yaml_errors);
    tcase_add_test(ty, yaml_error_check_can_fail);
    tcase_add_test(ty, load_specs);
    tcase_add_test(ty, model_from_node);
    suite_add_tcase(s, ty);
    return s;
}

int main(void)
{
    return cs_test_run(model_suite());
}
