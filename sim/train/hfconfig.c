/* SPDX-License-Identifier: MIT */
/*
 * hfconfig.c - Hugging Face config.json -> cs_model.
 *
 * A config.json is JSON, which the YAML reader takes as one flow mapping
 * (nulls, floats and nested objects such as rope_scaling included), so
 * every message keeps file:line:column. The family is model_type (or,
 * without it, architectures[0]); its row in `families` names the HF key
 * of each shape field and the family's fixed style, taken from the
 * transformers modelling code of that family (modeling_<type>.py,
 * configuration_<type>.py: key names, defaults when a key is absent):
 *
 *   family    MLP     biases+LayerNorm  positions  tied default  kv heads
 *   llama     SwiGLU  no (RMSNorm)      rotary     false         num_key_value_heads
 *   mistral   SwiGLU  no (RMSNorm)      rotary     false         num_key_value_heads
 *   qwen2     SwiGLU  no (RMSNorm)      rotary     false         num_key_value_heads
 *   gpt2      GeLU    yes               learned    true          = heads
 *   gpt_neox  GeLU    yes               rotary     false         = heads
 *   falcon    GeLU    `bias` (false)    rotary     true          multi_query: 1
 *   mixtral   SwiGLU  no (RMSNorm)      rotary     false         num_key_value_heads
 *   qwen2_moe refused (below).
 *
 * Mixtral (MixtralForCausalLM) is the LLaMA row with a sparse mixture of
 * experts in every layer: num_local_experts MLPs of intermediate_size,
 * num_experts_per_tok of them per token (MixtralConfig's defaults 8 and
 * 2 when absent; configuration_mixtral.py), mapped to the model schema's
 * experts and experts_per_token (model.c: modeling_mixtral.py's
 * MixtralSparseMoeBlock, every token routed, no capacity factor).
 * Qwen2-MoE is refused: its Qwen2MoeSparseMoeBlock (modeling_qwen2_moe.py)
 * adds to the routed experts (moe_intermediate_size wide) a shared
 * expert of another width (shared_expert_intermediate_size) behind a
 * sigmoid gate, and decoder_sparse_step / mlp_only_layers make some
 * layers dense; the schema has one MLP width and one kind of layer.
 *
 * seq_len is the config's maximum context (max_position_embeddings,
 * GPT-2's n_positions): the length the position table (GPT-2) or RoPE is
 * built for, not necessarily the training length. tie_word_embeddings,
 * when absent, takes the family's class default (PretrainedConfig's true
 * for GPT-2 and Falcon; the LLaMA family, GPT-NeoX: false). Unknown keys
 * are ignored (a config carries tokenizer ids, dropouts, dtypes...).
 *
 * Departures (the model schema has one switch for biases and LayerNorm):
 * Qwen2's q, k, v biases (h + 2k per layer) are not counted (Qwen2-7B:
 * 129,024 of 7.6e9 parameters); Falcon without biases is counted as two
 * h-sized norms per layer and one final one, where it has one LayerNorm
 * (2h) per layer and a final one (2h): exact per layer, h short in total
 * for falcon-7b; Falcon's new_decoder_architecture (40B, 180B) has two
 * LayerNorms per layer, 2h short per layer. Sliding windows, partial
 * rotary (GPT-NeoX rotary_pct), ALiBi and rope_scaling change no
 * parameter and are not modelled.
 */
#include "train/hfconfig.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/textfile.h"
#include "base/yamlnode.h"

/* The shape fields a row maps, in reading order (kv_heads defaults to
 * heads, ffn_hidden to 4 x hidden: both after what they default to). */
enum { HF_LAYERS, HF_HIDDEN, HF_HEADS, HF_KV_HEADS, HF_FFN, HF_SEQ, HF_VOCAB, HF_FIELDS };

/* Where each field goes and its range (those of the YAML schema, model.c). */
static const struct {
    size_t offset;
    double hi;
} fields[HF_FIELDS] = {
    [HF_LAYERS] = {offsetof(cs_model, layers), 100000},
    [HF_HIDDEN] = {offsetof(cs_model, hidden), 1000000},
    [HF_HEADS] = {offsetof(cs_model, heads), 1000000},
    [HF_KV_HEADS] = {offsetof(cs_model, kv_heads), 1000000},
    [HF_FFN] = {offsetof(cs_model, ffn_hidden), 100000000},
    [HF_SEQ] = {offsetof(cs_model, seq_len), 100000000},
    [HF_VOCAB] = {offsetof(cs_model, vocab), 100000000},
};

/* Family-specific keys beyond the row's columns; 0 or CS_ECONFIG. */
typedef int (*hf_adjust_fn)(const cs_yctx *c, const cs_ynode *map, cs_model *m);

typedef struct hf_family {
    const char *model_type;   /* config.json's model_type */
    const char *architecture; /* architectures[0], used when model_type is absent */
    const char *keys[HF_FIELDS]; /* HF key per field; NULL: kv_heads = heads */
    int ffn_4h;          /* the ffn key absent or null: 4 x hidden */
    int seq_len_default; /* the seq key absent: this; 0: required */
    int gated_mlp, biases, learned_positions, tied_default;
    hf_adjust_fn adjust; /* NULL: none */
    const char *refused; /* non-NULL: recognised, not modelled, because */
} hf_family;

static int falcon_adjust(const cs_yctx *c, const cs_ynode *map, cs_model *m);
static int mixtral_adjust(const cs_yctx *c, const cs_ynode *map, cs_model *m);

#define LLAMA_KEYS                                                                                 \
    {"num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",            \
     "intermediate_size", "max_position_embeddings", "vocab_size"}
#define NEOX_KEYS                                                                                  \
    {"num_hidden_layers", "hidden_size", "num_attention_heads", NULL, "intermediate_size",        \
     "max_position_embeddings", "vocab_size"}

static const hf_family families[] = {
    {"llama", "LlamaForCausalLM", LLAMA_KEYS, 0, 0, 1, 0, 0, 0, NULL, NULL},
    {"mistral", "MistralForCausalLM", LLAMA_KEYS, 0, 0, 1, 0, 0, 0, NULL, NULL},
    {"qwen2", "Qwen2ForCausalLM", LLAMA_KEYS, 0, 0, 1, 0, 0, 0, NULL, NULL},
    {"gpt2", "GPT2LMHeadModel",
     {"n_layer", "n_embd", "n_head", NULL, "n_inner", "n_positions", "vocab_size"}, 1, 0, 0, 1, 1,
     1, NULL, NULL},
    {"gpt_neox", "GPTNeoXForCausalLM", NEOX_KEYS, 0, 0, 0, 1, 0, 0, NULL, NULL},
    /* FalconConfig: ffn_hidden_size None -> 4h, max_position_embeddings 2048. */
    {"falcon", "FalconForCausalLM",
     {"num_hidden_layers", "hidden_size", "num_attention_heads", NULL, "ffn_hidden_size",
      "max_position_embeddings", "vocab_size"},
     1, 2048, 0, 0, 0, 1, falcon_adjust, NULL},
    {"mixtral", "MixtralForCausalLM", LLAMA_KEYS, 0, 0, 1, 0, 0, 0, mixtral_adjust, NULL},
    {"qwen2_moe", "Qwen2MoeForCausalLM", LLAMA_KEYS, 0, 0, 1, 0, 0, 0, NULL,
     "its mixture of experts has a shared expert of another width (shared_expert_"
     "intermediate_size) beside the routed ones (moe_intermediate_size), and dense layers "
     "among the sparse (decoder_sparse_step, mlp_only_layers); collsim's experts have one "
     "width in every layer"},
};
#define NFAMILIES (sizeof families / sizeof families[0])

/* The value of key, or NULL when absent or null. */
static const cs_ynode *present(const cs_ynode *map, const char *key)
{
    const cs_ynode *v = key ? cs_yamlnode_find(map, key) : NULL;
    return v && !cs_yamlnode_is_null(v) ? v : NULL;
}

static int missing(const cs_yctx *c, const cs_ynode *map, const char *key, const hf_family *fam)
{
    return cs_yamlnode_error(c, map, "missing required key '%s' in a %s config.json", key,
                             fam->model_type);
}

/* A boolean key, or dflt when absent or null. */
static int read_bool(const cs_yctx *c, const cs_ynode *map, const char *key, int dflt, int *out)
{
    const cs_ynode *v = present(map, key);
    *out = dflt;
    if (!v) return 0;
    cs_yfield f = {.name = key, .kind = CS_YF_BOOL};
    return cs_yamlnode_read(c, &f, v, out);
}

/* FalconForCausalLM: kv heads from new_decoder_architecture (num_kv_heads)
 * or multi_query (one, FalconConfig's default), biases from `bias`. */
static int falcon_adjust(const cs_yctx *c, const cs_ynode *map, cs_model *m)
{
    int new_arch, multi_query;
    int rc = read_bool(c, map, "new_decoder_architecture", 0, &new_arch);
    if (!rc) rc = read_bool(c, map, "multi_query", 1, &multi_query);
    if (!rc) rc = read_bool(c, map, "bias", 0, &m->biases);
    if (rc) return rc;
    const cs_ynode *v = present(map, "num_kv_heads");
    m->kv_heads = !new_arch && multi_query ? 1 : m->heads;
    if (new_arch && v) {
        cs_yfield f = {.name = "num_kv_heads", .kind = CS_YF_INT, .lo = 1, .hi = 1000000};
        return cs_yamlnode_read(c, &f, v, &m->kv_heads);
    }
    return 0;
}

/* An integer key in 1..hi, or dflt when absent or null. */
static int read_int(const cs_yctx *c, const cs_ynode *map, const char *key, int dflt, int hi,
                    int *out)
{
    const cs_ynode *v = present(map, key);
    *out = dflt;
    if (!v) return 0;
    cs_yfield f = {.name = key, .kind = CS_YF_INT, .lo = 1, .hi = hi};
    return cs_yamlnode_read(c, &f, v, out);
}

/* MixtralForCausalLM: experts and top-k, MixtralConfig's 8 and 2 when
 * absent (the schema's ranges, model.c); the top-k at most the experts. */
static int mixtral_adjust(const cs_yctx *c, const cs_ynode *map, cs_model *m)
{
    int rc = read_int(c, map, "num_local_experts", 8, 100000, &m->experts);
    if (!rc) rc = read_int(c, map, "num_experts_per_tok", 2, 100000, &m->experts_per_token);
    if (rc) return rc;
    if (m->experts_per_token <= m->experts) return 0;
    const cs_ynode *at = present(map, "num_experts_per_tok");
    return cs_yamlnode_error(c, at ? at : map,
                             "'num_experts_per_tok' must be in 1..num_local_experts (%d), got %d",
                             m->experts, m->experts_per_token);
}

/* "llama (LlamaForCausalLM), mistral (...), ..." over supported or refused rows. */
static void family_list(int refused, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NFAMILIES && used < len; i++)
        if (!families[i].refused == !refused)
            used += (size_t)snprintf(buf + used, len - used, "%s%s (%s)", used ? ", " : "",
                                     families[i].model_type, families[i].architecture);
}

/* The row of the config's family, or CS_ECONFIG (unknown or refused). */
static int find_family(const cs_yctx *c, const cs_ynode *map, const hf_family **out)
{
    const cs_ynode *v = present(map, "model_type");
    int by_type = v != NULL;
    if (!v) {
        const cs_ynode *a = present(map, "architectures");
        v = a && a->kind == CS_YNODE_SEQUENCE && a->n ? a->items[0] : a;
    }
    if (!v)
        return cs_yamlnode_error(c, map,
                                 "missing required key 'model_type' (or 'architectures') in a "
                                 "config.json");
    char supported[512], refused[256];
    family_list(0, supported, sizeof supported);
    family_list(1, refused, sizeof refused);
    if (v->kind != CS_YNODE_SCALAR)
        return cs_yamlnode_error(c, v, "'%s' must be a string, got %s",
                                 by_type ? "model_type" : "architectures[0]",
                                 cs_yamlnode_describe(v));
    for (size_t i = 0; i < NFAMILIES; i++) {
        const hf_family *f = &families[i];
        if (strcmp(v->text, by_type ? f->model_type : f->architecture)) continue;
        if (f->refused)
            return cs_yamlnode_error(c, v, "architecture '%s' (%s) is not supported: %s (supported: "
                                     "%s)", f->model_type, f->architecture, f->refused,
                                     supported);
        *out = f;
        return 0;
    }
    return cs_yamlnode_error(c, v,
                             "unknown architecture '%.80s' (%s); supported: %s; recognised but "
                             "refused: %s",
                             v->text, by_type ? "model_type" : "architectures[0]", supported,
                             refused);
}

/* The shape fields of fam's row, with their defaults. */
static int read_shape(const cs_yctx *c, const cs_ynode *map, const hf_family *fam, cs_model *m)
{
    for (int i = 0; i < HF_FIELDS; i++) {
        int *dst = (int *)((char *)m + fields[i].offset);
        const char *key = fam->keys[i];
        const cs_ynode *v = present(map, key);
        if (v) {
            cs_yfield f = {.name = key, .kind = CS_YF_INT, .lo = 1, .hi = fields[i].hi};
            int rc = cs_yamlnode_read(c, &f, v, dst);
            if (rc) return rc;
        } else if (i == HF_KV_HEADS) {
            *dst = m->heads;
        } else if (i == HF_FFN && fam->ffn_4h) {
            *dst = 4 * m->hidden; /* hidden <= 1e6 */
        } else if (i == HF_SEQ && fam->seq_len_default) {
            *dst = fam->seq_len_default;
        } else {
            return missing(c, map, key, fam);
        }
    }
    return 0;
}

/* The model's name: _name_or_path, else the folder holding origin. */
static void model_name(const cs_ynode *map, const char *origin, char *buf, size_t len)
{
    const cs_ynode *v = present(map, "_name_or_path");
    if (v && v->kind == CS_YNODE_SCALAR && v->text[0]) {
        snprintf(buf, len, "%s", v->text);
        return;
    }
    const char *end = strrchr(origin, '/');
    if (!end) {
        snprintf(buf, len, "model");
        return;
    }
    const char *start = end;
    while (start > origin && start[-1] != '/') start--;
    if (start == end)
        snprintf(buf, len, "model");
    else
        snprintf(buf, len, "%.*s", (int)(end - start), start);
}

static int from_map(const cs_yctx *c, const cs_ynode *map, cs_model *out)
{
    const hf_family *fam = NULL;
    int rc = find_family(c, map, &fam);
    if (rc) return rc;
    cs_model m;
    memset(&m, 0, sizeof m);
    rc = read_shape(c, map, fam, &m);
    m.gated_mlp = fam->gated_mlp;
    m.biases = fam->biases;
    m.learned_positions = fam->learned_positions;
    if (!rc) rc = read_bool(c, map, "tie_word_embeddings", fam->tied_default, &m.tied_embeddings);
    if (!rc && fam->adjust) rc = fam->adjust(c, map, &m);
    if (rc) return rc;
    cs_diag tmp;
    cs_diag_clear(&tmp);
    if (cs_model_derive(&m, &tmp))
        return cs_yamlnode_error(c, map, "the %s shape of this config.json is inconsistent: %s",
                                 fam->model_type, tmp.message);
    model_name(map, c->origin, m.name, sizeof m.name);
    *out = m;
    return 0;
}

int cs_hfconfig_load_string(const char *origin, const char *json, size_t len, cs_model *out,
                            cs_diag *d)
{
    cs_diag_clear(d);
    if (!origin) origin = "<string>";
    cs_ynode *root;
    int rc = cs_yamlnode_parse_mapping(
        origin, json, len, "empty file: expected a Hugging Face config.json (a JSON object)",
        "expected a Hugging Face config.json (a JSON object) at the top level, got %s", &root, d);
    if (rc) return rc;
    cs_yctx c = {.origin = origin, .root = "config.json", .d = d};
    rc = from_map(&c, root, out);
    cs_yamlnode_free(root);
    return rc;
}

int cs_hfconfig_load(const char *path, cs_model *out, cs_diag *d)
{
    char *text = NULL;
    size_t len = 0;
    cs_diag_clear(d);
    int rc = cs_textfile_read(path, "model file", &text, &len, d);
    if (rc) return rc;
    rc = cs_hfconfig_load_string(path, text, len, out, d);
    free(text);
    return rc;
}

const char *cs_hfconfig_path(const char *spec)
{
    if (!strncmp(spec, "hf:", 3)) return spec + 3;
    const char *base = strrchr(spec, '/');
    return !strcmp(base ? base + 1 : spec, "config.json") ? spec : NULL;
}
