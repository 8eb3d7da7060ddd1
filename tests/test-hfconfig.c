/* SPDX-License-Identifier: MIT */
/*
 * test-hfconfig.c - Hugging Face config.json files read as model shapes
 * (sim/train/hfconfig.c): real configs of seven families
 * (tests/data/hf/, written from the model cards, README there; Mixtral
 * with its experts and top-k, Qwen2-MoE refused) give the
 * checkpoints' exact tensor totals where collsim's formula covers them and
 * the documented shortfall where it does not; GQA, tied embeddings and
 * the family styles are mapped; hf:PATH and .../config.json reach the
 * reader through cs_model_load; errors name file:line:column and the key;
 * a wrong mapping (Mistral read as multi-head) is caught.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "train/hfconfig.h"
#include "train/model.h"

#define DIR "tests/data/hf/"

/* One checkpoint: its shape in collsim's terms and its published total.
 * uncounted: what the model schema cannot express (hfconfig.c). */
static const struct {
    const char *dir, *name;
    int layers, hidden, heads, kv_heads, ffn, seq, vocab;
    int gated, biases, learned, tied;
    double published, uncounted;
    int experts, topk; /* 1, 1: dense */
} checkpoints[] = {
    /* meta-llama/Llama-2-7b-hf: 6,738,415,616 (as the llama2-7b preset) */
    {"llama2-7b", "meta-llama/Llama-2-7b-hf", 32, 4096, 32, 32, 11008, 4096, 32000, 1, 0, 0, 0,
     6738415616.0, 0, 1, 1},
    /* mistralai/Mistral-7B-v0.1: 7,241,732,096 */
    {"mistral-7b", "mistral-7b", 32, 4096, 32, 8, 14336, 32768, 32000, 1, 0, 0, 0, 7241732096.0,
     0, 1, 1},
    /* Qwen/Qwen2-7B: 7,615,616,512; q, k, v biases h + 2k per layer uncounted */
    {"qwen2-7b", "qwen2-7b", 28, 3584, 28, 4, 18944, 131072, 152064, 1, 0, 0, 0, 7615616512.0,
     28.0 * (3584 + 2 * 512), 1, 1},
    /* openai-community/gpt2: 124,439,808 (as the gpt2-124m preset) */
    {"gpt2", "gpt2", 12, 768, 12, 12, 3072, 1024, 50257, 0, 1, 1, 1, 124439808.0, 0, 1, 1},
    /* EleutherAI/pythia-1b: 1,011,781,632 (Biderman et al. 2023, Table 1) */
    {"pythia-1b", "pythia-1b", 16, 2048, 8, 8, 8192, 2048, 50304, 0, 1, 0, 0, 1011781632.0, 0, 1, 1},
    /* tiiuae/falcon-7b: 6,921,720,704; the final LayerNorm's bias (h) uncounted */
    {"falcon-7b", "falcon-7b", 32, 4544, 71, 1, 18176, 2048, 65024, 0, 0, 0, 1, 6921720704.0,
     4544, 1, 1},
    /* mistralai/Mixtral-8x7B-v0.1: 46,702,792,704 (as the mixtral-8x7b preset) */
    {"mixtral-8x7b", "mixtral-8x7b", 32, 4096, 32, 8, 14336, 32768, 32000, 1, 0, 0, 0,
     46702792704.0, 0, 8, 2},
};
#define NCHECKPOINTS (sizeof checkpoints / sizeof checkpoints[0])

static char *config_text(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, DIR "%s/config.json", dir);
    return cs_test_slurp(path, NULL);
}

static int load_text(const char *dir, const char *text, cs_model *m, cs_diag *d)
{
    char origin[256];
    snprintf(origin, sizeof origin, DIR "%s/config.json", dir);
    return cs_hfconfig_load_string(origin, text, strlen(text), m, d);
}

/* The checkpoint's config with `from` replaced by `to`, loaded. */
static int load_edited(const char *dir, const char *from, const char *to, cs_model *m, cs_diag *d)
{
    char *base = config_text(dir);
    char *text = cs_test_replace(base, from, to);
    int rc = load_text(dir, text, m, d);
    free(text);
    free(base);
    return rc;
}

START_TEST(checkpoints_give_their_totals)
{
    for (size_t i = 0; i < NCHECKPOINTS; i++) {
        char spec[256];
        snprintf(spec, sizeof spec, "hf:" DIR "%s/config.json", checkpoints[i].dir);
        cs_model m = cs_test_model(spec);
        ck_assert_str_eq(m.name, checkpoints[i].name);
        ck_assert_int_eq(m.layers, checkpoints[i].layers);
        ck_assert_int_eq(m.hidden, checkpoints[i].hidden);
        ck_assert_int_eq(m.heads, checkpoints[i].heads);
        ck_assert_int_eq(m.kv_heads, checkpoints[i].kv_heads);
        ck_assert_int_eq(m.ffn_hidden, checkpoints[i].ffn);
        ck_assert_int_eq(m.seq_len, checkpoints[i].seq);
        ck_assert_int_eq(m.vocab, checkpoints[i].vocab);
        ck_assert_int_eq(m.gated_mlp, checkpoints[i].gated);
        ck_assert_int_eq(m.biases, checkpoints[i].biases);
        ck_assert_int_eq(m.learned_positions, checkpoints[i].learned);
        ck_assert_int_eq(m.tied_embeddings, checkpoints[i].tied);
        ck_assert_int_eq(m.experts, checkpoints[i].experts);
        ck_assert_int_eq(m.experts_per_token, checkpoints[i].topk);
        ck_assert_msg(m.params + checkpoints[i].uncounted == checkpoints[i].published,
                      "%s: %.0f + %.0f uncounted, published %.0f", checkpoints[i].dir, m.params,
                      checkpoints[i].uncounted, checkpoints[i].published);
    }
}
END_TEST

/* The same shape as the preset: every field but the name. */
static void assert_same_shape(const char *spec, const char *preset)
{
    cs_model a = cs_test_model(spec), b = cs_test_model(preset);
    const int ia[] = {a.generic, a.layers, a.hidden, a.heads, a.kv_heads, a.ffn_hidden,
                      a.gated_mlp, a.seq_len, a.vocab, a.tied_embeddings, a.biases,
                      a.learned_positions, a.experts, a.experts_per_token};
    const int ib[] = {b.generic, b.layers, b.hidden, b.heads, b.kv_heads, b.ffn_hidden,
                      b.gated_mlp, b.seq_len, b.vocab, b.tied_embeddings, b.biases,
                      b.learned_positions, b.experts, b.experts_per_token};
    ck_assert_msg(!memcmp(ia, ib, sizeof ia), "%s differs from the %s preset", spec, preset);
    ck_assert_double_eq(a.layer_params, b.layer_params);
    ck_assert_double_eq(a.embedding_params, b.embedding_params);
    ck_assert_double_eq(a.params, b.params);
    ck_assert_double_eq(a.active_params, b.active_params);
}

START_TEST(presets_agree_and_specs_reach_the_reader)
{
    assert_same_shape("hf:" DIR "llama2-7b/config.json", "llama2-7b");
    assert_same_shape("hf:" DIR "gpt2/config.json", "gpt2-124m");
    assert_same_shape("hf:" DIR "mixtral-8x7b/config.json", "mixtral-8x7b");
    /* a path named config.json is a HF config without the prefix */
    assert_same_shape(DIR "gpt2/config.json", "gpt2-124m");
    ck_assert_str_eq(cs_hfconfig_path("hf:a.json"), "a.json");
    ck_assert_str_eq(cs_hfconfig_path("x/config.json"), "x/config.json");
    ck_assert_str_eq(cs_hfconfig_path("config.json"), "config.json");
    ck_assert_ptr_null(cs_hfconfig_path("llama2-7b"));
    ck_assert_ptr_null(cs_hfconfig_path("x/config.yaml"));
    ck_assert_ptr_null(cs_hfconfig_path("x/myconfig.json"));
    cs_model m;
    cs_diag d;
    ck_assert_int_eq(cs_model_load("hf:" DIR "none/config.json", &m, &d), CS_ENOENT);
    /* no folder: the name is "model" */
    char *text = config_text("gpt2");
    ck_assert_int_eq(cs_hfconfig_load_string("config.json", text, strlen(text), &m, &d), 0);
    ck_assert_str_eq(m.name, "model");
    free(text);
}
END_TEST

START_TEST(keys_and_defaults)
{
    cs_model m;
    cs_diag d;
    /* architectures[0] names the family without model_type */
    cs_test_diag_ok(load_edited("gpt2", "\"model_type\": \"gpt2\",", "", &m, &d), &d, "arch");
    ck_assert_double_eq(m.params, 124439808.0);
    /* an explicit tie halves LLaMA's vocabulary matrices */
    cs_test_diag_ok(load_edited("llama2-7b", "\"tie_word_embeddings\": false",
                                "\"tie_word_embeddings\": true", &m, &d),
                    &d, "tied");
    ck_assert_double_eq(m.params, 6738415616.0 - 32000.0 * 4096);
    /* n_inner given replaces 4h; null keeps it */
    cs_test_diag_ok(load_edited("gpt2", "\"n_head\": 12,", "\"n_head\": 12, \"n_inner\": 1024,", &m,
                                &d),
                    &d, "n_inner");
    ck_assert_int_eq(m.ffn_hidden, 1024);
    cs_test_diag_ok(load_edited("gpt2", "\"n_head\": 12,", "\"n_head\": 12, \"n_inner\": null,", &m,
                                &d),
                    &d, "n_inner null");
    ck_assert_int_eq(m.ffn_hidden, 3072);
    /* Falcon: multi-head without multi_query, num_kv_heads with the new architecture */
    cs_test_diag_ok(load_edited("falcon-7b", "\"multi_query\": true", "\"multi_query\": false", &m,
                                &d),
                    &d, "falcon mha");
    ck_assert_int_eq(m.kv_heads, 71);
    cs_test_diag_ok(load_edited("falcon-7b", "\"new_decoder_architecture\": false",
                                "\"new_decoder_architecture\": true, \"num_kv_heads\": 71",
                                &m, &d),
                    &d, "falcon new");
    ck_assert_int_eq(m.kv_heads, 71);
    /* LLaMA-1 configs have no num_key_value_heads: multi-head */
    cs_test_diag_ok(load_edited("mistral-7b", "\"num_key_value_heads\": 8,", "", &m, &d), &d,
                    "no kv key");
    ck_assert_int_eq(m.kv_heads, 32);
    /* Mixtral without its expert keys: MixtralConfig's 8 and 2 */
    char *base = config_text("mixtral-8x7b");
    char *a = cs_test_replace(base, "\"num_experts_per_tok\": 2,", "");
    char *b = cs_test_replace(a, "\"num_local_experts\": 8,", "");
    cs_test_diag_ok(load_text("mixtral-8x7b", b, &m, &d), &d, "mixtral defaults");
    ck_assert(m.experts == 8 && m.experts_per_token == 2 && m.params == 46702792704.0);
    free(b);
    free(a);
    free(base);
    /* top-1 of 16 */
    cs_test_diag_ok(load_edited("mixtral-8x7b", "\"num_local_experts\": 8",
                                "\"num_local_experts\": 16", &m, &d),
                    &d, "16 experts");
    ck_assert_int_eq(m.experts, 16);
    ck_assert_double_eq(m.params, 46702792704.0 + 32 * 8 * (3.0 * 4096 * 14336 + 4096));
}
END_TEST

START_TEST(a_wrong_mapping_is_caught)
{
    /* Mistral read as multi-head (kv_heads = heads) misses its published
     * total: the totals check above can fail. */
    cs_model m;
    cs_diag d;
    cs_test_diag_ok(load_edited("mistral-7b", "\"num_key_value_heads\": 8",
                                "\"num_key_value_heads\": 32", &m, &d),
                    &d, "mha");
    ck_assert_double_ne(m.params, 7241732096.0);
    ck_assert_double_eq(m.params, 7241732096.0 + 32 * 2.0 * 4096 * (4096 - 1024));
    /* Mixtral read as dense (its experts ignored) is Mistral 7B: the
     * totals check catches it */
    char *base = config_text("mixtral-8x7b");
    char *a = cs_test_replace(base, "\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 1");
    char *b = cs_test_replace(a, "\"num_local_experts\": 8", "\"num_local_experts\": 1");
    cs_test_diag_ok(load_text("mixtral-8x7b", b, &m, &d), &d, "dense");
    ck_assert_double_eq(m.params, 7241732096.0);
    free(b);
    free(a);
    free(base);
}
END_TEST

START_TEST(errors_name_line_column_and_key)
{
    const char *gpt2 = DIR "gpt2/config.json";
    cs_model m;
    cs_diag d;
    int rc = load_edited("gpt2", "\"model_type\": \"gpt2\"", "\"model_type\": \"bert\"", &m, &d);
    cs_test_diag_error(rc, &d, gpt2, 12, 17, "unknown architecture 'bert'", "unknown");
    CS_ASSERT_CONTAINS(d.message, "supported: llama (LlamaForCausalLM), mistral");
    CS_ASSERT_CONTAINS(d.message, "gpt_neox (GPTNeoXForCausalLM), falcon (FalconForCausalLM)");
    CS_ASSERT_CONTAINS(d.message, "falcon (FalconForCausalLM), mixtral (MixtralForCausalLM)");
    CS_ASSERT_CONTAINS(d.message, "refused: qwen2_moe (Qwen2MoeForCausalLM)");
    rc = load_edited("gpt2", "\"model_type\": \"gpt2\",", "", &m, &d);
    ck_assert_int_eq(rc, 0);
    /* model_type comes first; architectures[0] only without it */
    rc = load_edited("gpt2", "\"GPT2LMHeadModel\"", "\"BertModel\"", &m, &d);
    cs_test_diag_ok(rc, &d, "model_type first");
    char *base = config_text("gpt2"), *a = cs_test_replace(base, "\"model_type\": \"gpt2\",", "");
    char *b = cs_test_replace(a, "\"GPT2LMHeadModel\"", "\"BertModel\"");
    rc = load_text("gpt2", b, &m, &d);
    cs_test_diag_error(rc, &d, gpt2, 4, 5, "unknown architecture 'BertModel' (architectures[0])",
                       "architectures");
    free(b);
    free(a);
    free(base);
    rc = load_edited("gpt2", "\"n_embd\": 768,", "", &m, &d);
    cs_test_diag_error(rc, &d, gpt2, 1, 1, "missing required key 'n_embd' in a gpt2 config.json",
                       "missing");
    rc = load_edited("gpt2", "\"n_head\": 12", "\"n_head\": 12.5", &m, &d);
    cs_test_diag_error(rc, &d, gpt2, 15, 13, "'n_head'", "not an integer");
    rc = load_edited("gpt2", "\"n_head\": 12", "\"n_head\": 7", &m, &d);
    cs_test_diag_error(rc, &d, gpt2, 1, 1, "must divide 'hidden'", "inconsistent");
    rc = load_edited("gpt2", "\"n_layer\": 12", "\"n_layer\": 0", &m, &d);
    cs_test_diag_error(rc, &d, gpt2, 16, 14, "'n_layer'", "range");
    rc = load_edited("llama2-7b", "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": 2",
                     &m, &d);
    cs_test_diag_error(rc, &d, DIR "llama2-7b/config.json", 20, 26, "'tie_word_embeddings'",
                       "bool");
    /* Mixtral's top-k within its experts, at the value */
    const char *mixtral = DIR "mixtral-8x7b/config.json";
    rc = load_edited("mixtral-8x7b", "\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 9",
                     &m, &d);
    cs_test_diag_error(rc, &d, mixtral, 15, 26,
                       "'num_experts_per_tok' must be in 1..num_local_experts (8), got 9", "top-k");
    rc = load_edited("mixtral-8x7b", "\"num_local_experts\": 8", "\"num_local_experts\": 0", &m,
                     &d);
    cs_test_diag_error(rc, &d, mixtral, 18, 24, "'num_local_experts'", "experts range");
    /* Qwen2-MoE: recognised and refused, saying why */
    rc = load_edited("mixtral-8x7b", "\"model_type\": \"mixtral\"", "\"model_type\": \"qwen2_moe\"",
                     &m, &d);
    cs_test_diag_error(rc, &d, mixtral, 13, 17,
                       "architecture 'qwen2_moe' (Qwen2MoeForCausalLM) is not supported", "qwen2_moe");
    CS_ASSERT_CONTAINS(d.message, "shared expert");
    rc = load_text("x", "{\"hidden_size\": 8}", &m, &d);
    cs_test_diag_error(rc, &d, DIR "x/config.json", 1, 1, "missing required key 'model_type'",
                       "no family");
    rc = load_text("x", "[1, 2]", &m, &d);
    cs_test_diag_error(rc, &d, DIR "x/config.json", 1, 1, "a JSON object", "not an object");
    rc = load_text("x", "{\"model_type\": \"llama\",", &m, &d);
    ck_assert_int_eq(rc, CS_ECONFIG);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hfconfig");
    TCase *t = tcase_create("hfconfig");
    tcase_add_test(t, checkpoints_give_their_totals);
    tcase_add_test(t, presets_agree_and_specs_reach_the_reader);
    tcase_add_test(t, keys_and_defaults);
    tcase_add_test(t, a_wrong_mapping_is_caught);
    tcase_add_test(t, errors_name_line_column_and_key);
    suite_add_tcase(s, t);
    return cs_test_run(s);
}
