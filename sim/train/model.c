/* SPDX-License-Identifier: MIT */
/*
 * model.c - transformer shapes (presets, YAML files, or a bare parameter
 * count) and what the rest of the simulator derives from them: parameters
 * per layer, FLOPs per token, activation bytes per layer.
 *
 * Parameters (per layer, h = hidden, f = ffn_hidden, k = h * kv_heads /
 * heads the key/value width):
 *   attention matrices  2h^2 (q, o) + 2hk (k, v)
 *   MLP matrices        (gated ? 3 : 2) h f
 *   biases (GPT-2/3)    2h + 2k (q, k, v, o) + (gated ? 2f : f) + h (MLP)
 *   norms               2 per layer, (biases ? 2h : h) each (LayerNorm has
 *                       a weight and a bias, LLaMA's RMSNorm a weight only)
 * and once per model: the token embedding vh, learned positions sh (GPT-2/3;
 * none with rotary embeddings), the final norm, and vh more for an untied
 * output head. For GPT-2 and GPT-3 this is the classic 12Lh^2 + 13Lh +
 * (v + s)h + 2h (Narayanan et al. 2021, Sec 5.1 / App. counts 12Lh^2 + 13Lh
 * + (v + s)h); the tests check every preset against its published total.
 *
 * FLOPs (Narayanan et al. SC21 App. A; Korthikanti et al. 2022 Eq. 7):
 * one forward pass through a layer costs, per token, 2 FLOPs per matrix
 * parameter plus 4sh for the attention scores (QK^T and the weighted sum
 * over V, each 2sh; the full s x s square, no causal halving, as both
 * papers count), and the logits 2vh. Backward is twice forward, so
 * flops_per_token = 3 (L (2 P_matmul + 4sh) + 2vh), which for a GPT model
 * is exactly Narayanan's 72BsLh^2 (1 + s/6h + v/12hL) / (Bs), about
 * 6P + 12Lhs. Biases, norms, softmax and the learned position lookup are
 * not counted (the papers' convention). Departure: grouped-query
 * attention shrinks the k, v matrices (counted) but not the score FLOPs.
 *
 * Activations per layer, 16-bit values, 1-byte dropout masks (Korthikanti
 * Sec 4.1, no tensor or sequence parallelism). The paper's itemisation
 * (validation/papers/korthikanti_activation_breakdown.csv) in units of
 * sb bytes, with k the key/value width and f the MLP width:
 *   attention  QKV input 2h, Q 2h, K 2k, V 2k, projection input 2h,
 *              dropout mask h                             = 7h + 4k
 *              softmax output, its dropout mask and output = 5as
 *   MLP        first linear input 2h, dropout mask h      = 3h
 *              GeLU input 2f, second linear input 2f      = 4f
 *   norms      two LayerNorm inputs                        = 4h
 * With k = h and f = 4h this is Table 2's sbh(34 + 5as/h). Departures,
 * both scaling a term of the breakdown rather than inventing one: k < h
 * under grouped-query attention; SwiGLU keeps the two up-projection
 * outputs (the fused swiglu input, 4f) and the down-projection input (2f),
 * 6f in place of GeLU's 4f (as Megatron-LM's fused bias_swiglu saves them).
 * The dropout mask terms stay for LLaMA, which trains without dropout
 * (a conservative 2sbh). Selective recomputation drops the 5as term
 * (Table 2: sbh 34); full recomputation keeps only the layer input, 2sbh.
 *
 * A sparse mixture of experts (E experts, top-k) is HF transformers'
 * MixtralSparseMoeBlock (models/mixtral/modeling_mixtral.py, commit
 * 00d4b3d2): a bias-free h x E router `gate`, fp32 softmax, torch.topk,
 * the k weights renormalised, then a loop over the experts hit, each MLP
 * on its tokens, index_add_ of the weighted outputs. All tokens are routed
 * ("strictly equivalent to standard MoE with full capacity (no dropped
 * tokens)", its docstring; MixtralConfig has no capacity factor). A layer
 * holds E MLPs (with their biases) and the router hE; a token runs the
 * router and k MLPs (FLOPs, active_params). Activations: the dense 3h,
 * then for each of a token's k experts its gathered input (2h, saved by
 * w1 and w3), the MLP's own 4f / 6f and the output kept for the routing
 * weight's gradient (2h); the router's fp32 softmax (4E bytes) and the k
 * fp32 weights and int64 indices (12k bytes).
 *
 * A generic model of P parameters takes GPT-3's aspect ratio: Table 2.1's
 * models from 1.3B up have d_head = 128 and d_model / n_layers of 85..128
 * (175B: 12288 / 96 = 128), so with h = 128 L and about 12 L h^2
 * parameters in the layers, L = round(cbrt(P / (12 x 128^2))). The layers
 * then take exactly P - vh (tied embedding, vocab 50257 and seq_len 2048
 * by default, as GPT-3), so the total is P to rounding. Below ~1B
 * parameters the embedding is a large share; h shrinks (by 128, then by
 * halves) until vh is at most half of P, and P < 1e5 is refused.
 *
 * Presets are configs/models/NAME.yaml, embedded by tools/embed-presets.py
 * (--prefix model). cs_model is a value type; nothing here allocates
 * beyond the YAML tree of one load, and there is no global mutable state.
 */
#include "base/textfile.h"
#include "train/model.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limit.h"
#include "base/units.h"
#include "base/yamlnode.h"
#include "train/hfconfig.h"

/* Defined in the generated model_presets_data.c. */
extern const size_t cs__model_preset_count;
extern const char *const cs__model_preset_names[];
extern const char *const cs__model_preset_texts[];
extern const size_t cs__model_preset_lengths[];

#define GPT3_HEAD_DIM 128   /* Brown et al. 2020 Table 2.1: d_head 128 from 1.3B up */
#define GPT3_SEQ_LEN  CS_MODEL_GENERIC_SEQ_LEN
#define GPT3_VOCAB    CS_MODEL_GENERIC_VOCAB
#define GENERIC_MIN_PARAMS 1e5
#define GENERIC_MAX_PARAMS 1e16

/* ---- parameters ---- */

/* Width of the key (and value) projections. */
static double kv_width(const cs_model *m)
{
    return (double)m->hidden / m->heads * m->kv_heads;
}

/* Experts per layer and per token: 1 each when dense (experts 0 or 1). */
static int experts_of(const cs_model *m) { return m->experts > 1 ? m->experts : 1; }
static int active_experts(const cs_model *m) { return m->experts > 1 ? m->experts_per_token : 1; }

/* One MLP's (one expert's) matrix parameters. */
static double mlp_matmul_params(const cs_model *m)
{
    return (m->gated_mlp ? 3 : 2) * (double)m->hidden * m->ffn_hidden;
}

/* One MLP's biases: (gated ? 2f : f) in the up projections, h in the down. */
static double mlp_bias_params(const cs_model *m)
{
    return m->biases ? (m->gated_mlp ? 2 : 1) * (double)m->ffn_hidden + m->hidden : 0;
}

/* The router: a bias-free h x experts linear (MixtralSparseMoeBlock.gate);
 * none in a dense layer. */
static double router_params(const cs_model *m)
{
    return m->experts > 1 ? (double)m->hidden * m->experts : 0;
}

/* Matrix parameters of one layer holding `mlps` MLPs: what the
 * 2-FLOPs-per-parameter rule multiplies when mlps is the top-k, and the
 * stored matrices when it is every expert. A generic model's layer is all
 * matrices. */
static double layer_matmul_params(const cs_model *m, int mlps)
{
    if (m->generic) return m->layer_params;
    double h = m->hidden, k = kv_width(m);
    return 2 * h * h + 2 * h * k + mlps * mlp_matmul_params(m) + router_params(m);
}

static double norm_params(const cs_model *m)
{
    return (m->biases ? 2.0 : 1.0) * m->hidden;
}

/* The first inconsistency in a shape: returns the key to blame and writes
 * the message, or NULL if the shape is fine. */
static const char *shape_problem(const cs_model *m, char *msg, size_t len)
{
#define NEED(cond, key, ...)                  \
    do {                                      \
        if (!(cond)) {                        \
            snprintf(msg, len, __VA_ARGS__);  \
            return key;                       \
        }                                     \
    } while (0)
    NEED(m->layers >= 1, "layers", "'layers' must be >= 1, got %d", m->layers);
    NEED(m->hidden >= 1, "hidden", "'hidden' must be >= 1, got %d", m->hidden);
    NEED(m->heads >= 1, "heads", "'heads' must be >= 1, got %d", m->heads);
    NEED(m->seq_len >= 1, "seq_len", "'seq_len' must be >= 1, got %d", m->seq_len);
    NEED(m->vocab >= 1, "vocab", "'vocab' must be >= 1, got %d", m->vocab);
    if (m->generic) {
        NEED(isfinite(m->layer_params) && m->layer_params > 0, "parameters",
             "a generic model needs positive parameters per layer, got %g", m->layer_params);
        NEED(m->experts <= 1 && m->experts_per_token <= 1, "experts",
             "a generic model is dense, got %d experts", m->experts);
        return NULL;
    }
    NEED(m->hidden % m->heads == 0, "heads",
         "'heads' (%d) must divide 'hidden' (%d) so every head has the same width", m->heads,
         m->hidden);
    NEED(m->kv_heads >= 1 && m->kv_heads <= m->heads, "kv_heads",
         "'kv_heads' must be in 1..heads (%d), got %d", m->heads, m->kv_heads);
    NEED(m->heads % m->kv_heads == 0, "kv_heads",
         "'kv_heads' (%d) must divide 'heads' (%d) so each key/value head serves the same "
         "number of query heads",
         m->kv_heads, m->heads);
    NEED(m->ffn_hidden >= 1, "ffn_hidden", "'ffn_hidden' must be >= 1, got %d", m->ffn_hidden);
    NEED(m->experts >= 0, "experts", "'experts' must be >= 1, got %d", m->experts);
    NEED(m->experts > 1 || m->experts_per_token <= 1, "experts_per_token",
         "'experts_per_token' (%d) needs 'experts' of at least that many", m->experts_per_token);
    NEED(m->experts <= 1 || m->experts_per_token != 0, "experts",
         "a mixture of %d 'experts' needs 'experts_per_token' (the top-k each token is routed "
         "to, 1..%d; HF num_experts_per_tok)",
         m->experts, m->experts);
    NEED(m->experts <= 1 || (m->experts_per_token >= 1 && m->experts_per_token <= m->experts),
         "experts_per_token", "'experts_per_token' must be in 1..experts (%d), got %d",
         m->experts, m->experts_per_token);
    return NULL;
#undef NEED
}

int cs_model_derive(cs_model *m, cs_diag *d)
{
    char msg[256];
    if (shape_problem(m, msg, sizeof msg)) return cs_diag_set(d, CS_EINVAL, NULL, 0, 0, "%s", msg);
    double h = m->hidden, v = m->vocab;
    m->experts = experts_of(m);
    m->experts_per_token = active_experts(m);
    double idle_experts = m->experts - m->experts_per_token; /* per token, per layer */
    double idle = 0;
    if (m->generic) {
        m->embedding_params = v * h;
    } else {
        double k = kv_width(m);
        double attention_biases = m->biases ? 2 * h + 2 * k : 0;
        m->layer_params = layer_matmul_params(m, m->experts) + attention_biases +
                          m->experts * mlp_bias_params(m) + 2 * norm_params(m);
        m->embedding_params = v * h + (m->learned_positions ? (double)m->seq_len * h : 0) +
                              norm_params(m) + (m->tied_embeddings ? 0 : v * h);
        idle = idle_experts * (mlp_matmul_params(m) + mlp_bias_params(m));
    }
    m->params = m->layers * m->layer_params + m->embedding_params;
    m->active_params = m->layers * (m->layer_params - idle) + m->embedding_params;
    return 0;
}

/* "generic-7B", "generic-1.3B", "generic-350M" */
static void generic_name(double params, char *buf, size_t len)
{
    static const struct {
        double scale;
        const char *suffix;
    } units[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (params >= units[i].scale) {
            snprintf(buf, len, "generic-%.4g%s", params / units[i].scale, units[i].suffix);
            return;
        }
    }
    snprintf(buf, len, "generic-%.4g", params);
}

int cs_model_generic_shape(double params, int seq_len, int vocab, cs_model *out, cs_diag *d)
{
    if (!(params >= GENERIC_MIN_PARAMS && params <= GENERIC_MAX_PARAMS))
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "a generic model needs %g..%g parameters, got %g", GENERIC_MIN_PARAMS,
                           GENERIC_MAX_PARAMS, params);
    if (seq_len < 1 || vocab < 1)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "a generic model needs seq_len >= 1 and vocab >= 1, got %d and %d",
                           seq_len, vocab);
    long layers = lround(cbrt(params / (12.0 * GPT3_HEAD_DIM * GPT3_HEAD_DIM)));
    if (layers < 1) layers = 1;
    long hidden = GPT3_HEAD_DIM * layers; /* <= 128 x 3700 for 1e16 */
    while ((double)vocab * hidden > params / 2 && hidden > 1)
        hidden = hidden > GPT3_HEAD_DIM ? hidden - GPT3_HEAD_DIM : hidden / 2;
    if ((double)vocab * hidden > params / 2)
        return cs_diag_set(d, CS_EINVAL, NULL, 0, 0,
                           "a generic model of %g parameters is too small for a vocabulary of %d "
                           "(the embedding alone would take more than half)",
                           params, vocab);
    cs_model m;
    memset(&m, 0, sizeof m);
    generic_name(params, m.name, sizeof m.name);
    m.generic = 1;
    m.layers = (int)layers;
    m.hidden = (int)hidden;
    m.heads = hidden >= GPT3_HEAD_DIM ? (int)(hidden / GPT3_HEAD_DIM) : 1;
    m.kv_heads = m.heads;
    m.ffn_hidden = 4 * m.hidden;
    m.gated_mlp = 0;
    m.seq_len = seq_len;
    m.vocab = vocab;
    m.tied_embeddings = 1;
    m.biases = 1;
    m.learned_positions = 0; /* the whole embedding is vocab x hidden */
    m.layer_params = (params - (double)vocab * hidden) / layers;
    int rc = cs_model_derive(&m, d);
    CS_ASSERT(rc == 0);
    *out = m;
    return 0;
}

int cs_model_generic(double params, cs_model *out, cs_diag *d)
{
    return cs_model_generic_shape(params, GPT3_SEQ_LEN, GPT3_VOCAB, out, d);
}

/* ---- FLOPs and activations ---- */

double cs_model_expert_tokens(const cs_model *m, double tokens)
{
    if (m->experts <= 1) return tokens;
    return tokens * m->experts_per_token / m->experts;
}

double cs_model_layer_forward_flops(const cs_model *m, double tokens)
{
    double attention_scores = 4.0 * m->seq_len * m->hidden; /* QK^T and AV, 2sh each */
    return tokens * (2.0 * layer_matmul_params(m, active_experts(m)) + attention_scores);
}

double cs_model_head_forward_flops(const cs_model *m, double tokens)
{
    return tokens * 2.0 * m->vocab * m->hidden;
}

double cs_model_flops_per_token(const cs_model *m)
{
    return 3.0 * (m->layers * cs_model_layer_forward_flops(m, 1) +
                  cs_model_head_forward_flops(m, 1));
}

double cs_model_activation_bytes_per_layer(const cs_model *m, int micro_batch, cs_ckpt mode)
{
    CS_ASSERT(micro_batch >= 0);
    double s = m->seq_len, b = micro_batch, h = m->hidden, a = m->heads;
    double f = m->ffn_hidden, k = kv_width(m);
    switch (mode) {
    case CS_CKPT_FULL:
        return 2 * s * b * h;
    case CS_CKPT_SELECTIVE:
    case CS_CKPT_NONE: {
        double attention = 7 * h + 4 * k;
        double expert = (m->gated_mlp ? 6 : 4) * f; /* one MLP's own terms */
        double mlp = 3 * h + expert;
        if (m->experts > 1) { /* the k experts' inputs, terms and outputs; the router's */
            double top = m->experts_per_token;
            mlp = 3 * h + top * (2 * h + expert + 2 * h) + 4.0 * m->experts + 12 * top;
        }
        double norms = 4 * h;
        double kept = s * b * (attention + mlp + norms);
        if (mode == CS_CKPT_SELECTIVE) return kept;
        return kept + 5 * a * s * s * b; /* softmax output, dropout mask, dropout output */
    }
    default:
        CS_PANIC("cs_model_activation_bytes_per_layer: bad checkpoint mode %d", (int)mode);
    }
}

/* ---- YAML ---- */

/* The loader's view: the model, and the mapping for cross-key checks. */
typedef struct model_doc {
    cs_model m;
    const cs_ynode *map;
    double params; /* > 0: `parameters` given */
} model_doc;

#define OFF(member) offsetof(model_doc, m.member)
#define ROW(n, k, off, fl) .name = (n), .kind = (k), .offset = (off), .flags = (fl)

/* Keys that describe a shape, exclusive with `parameters`. */
static const char *const shape_keys[] = {
    "layers", "hidden",          "heads",   "kv_heads",         "ffn_hidden",       "gated_mlp",
    "biases", "position_embedding", "tied_embeddings", "experts", "experts_per_token"};
/* Index = learned_positions. */
static const char *const position_names[] = {"rotary", "learned", NULL};

/* A count such as 7e9, 7000000000, 1.3B, 350M, 1T (decimal suffixes K, M,
 * B, T in either case). 0 and the value, or CS_EINVAL. */
static int parse_count(const char *text, double *out)
{
    char buf[64];
    size_t n = strlen(text);
    while (n && text[n - 1] == ' ') n--;
    if (n == 0 || n >= sizeof buf) return CS_EINVAL;
    memcpy(buf, text, n);
    buf[n] = '\0';
    static const char suffixes[] = "KkMmBbTt";
    static const double scales[] = {1e3, 1e3, 1e6, 1e6, 1e9, 1e9, 1e12, 1e12};
    const char *at = strchr(suffixes, buf[n - 1]);
    double scale = at ? scales[at - suffixes] : 1;
    if (at) buf[--n] = '\0';
    double x;
    if (cs_units_parse_number(buf, &x, NULL, 0)) return CS_EINVAL;
    *out = x * scale;
    return 0;
}

static int read_parameters(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj)
{
    model_doc *doc = obj;
    const cs_ynode *key = NULL;
    for (size_t i = 0; i < doc->map->n; i++)
        if (cs_yamlnode_value(doc->map, i) == v) key = cs_yamlnode_key(doc->map, i);
    for (size_t i = 0; i < doc->map->n; i++) {
        const cs_ynode *k = cs_yamlnode_key(doc->map, i);
        for (size_t j = 0; j < sizeof shape_keys / sizeof shape_keys[0]; j++)
            if (!strcmp(k->text, shape_keys[j]))
                return cs_yamlnode_error(
                    c, k,
                    "'%s' cannot be combined with 'parameters' (line %d, column %d): give either "
                    "'parameters' alone for a generic model (with optional name, seq_len, vocab) "
                    "or a shape (layers, hidden, heads, seq_len, vocab, ...)",
                    k->text, key ? key->line : v->line, key ? key->column : v->column);
    }
    double x = 0;
    if (v->kind != CS_YNODE_SCALAR || cs_yamlnode_is_null(v) || parse_count(v->text, &x))
        return cs_yamlnode_error(c, v,
                                 "'%s' must be a parameter count such as 7e9, 1.3B or 350M, got "
                                 "%s%.60s%s",
                                 f->name, v->kind == CS_YNODE_SCALAR ? "'" : "",
                                 v->kind == CS_YNODE_SCALAR ? v->text : cs_yamlnode_describe(v),
                                 v->kind == CS_YNODE_SCALAR ? "'" : "");
    if (!(x >= GENERIC_MIN_PARAMS && x <= GENERIC_MAX_PARAMS))
        return cs_yamlnode_error(c, v, "'%s' must be in [%g, %g], got %s", f->name,
                                 GENERIC_MIN_PARAMS, GENERIC_MAX_PARAMS, v->text);
    doc->params = x;
    return 0;
}

/* Shape keys are required unless the model is generic. */
static int shape_missing(const cs_yctx *c, const cs_yfield *f, const cs_ynode *map, void *obj)
{
    (void)obj;
    if (cs_yamlnode_find(map, "parameters")) return 0;
    return cs_yamlnode_error(c, map,
                             "missing required key '%s' in %s (a model is a shape with layers, "
                             "hidden, heads, seq_len and vocab, or 'parameters' alone)",
                             f->name, c->root);
}

static const cs_yfield model_fields[] = {
    {ROW("name", CS_YF_STRING, OFF(name), 0), .size = sizeof(((cs_model *)0)->name)},
    {ROW("parameters", CS_YF_CUSTOM, 0, 0), .fn = read_parameters},
    {ROW("layers", CS_YF_INT, OFF(layers), 0), .lo = CS_LIMIT_LO_LAYERS, .hi = CS_LIMIT_HI_LAYERS, .missing = shape_missing},
    {ROW("hidden", CS_YF_INT, OFF(hidden), 0), .lo = CS_LIMIT_LO_HIDDEN, .hi = CS_LIMIT_HI_HIDDEN, .missing = shape_missing},
    {ROW("heads", CS_YF_INT, OFF(heads), 0), .lo = CS_LIMIT_LO_HEADS, .hi = CS_LIMIT_HI_HEADS, .missing = shape_missing},
    {ROW("kv_heads", CS_YF_INT, OFF(kv_heads), 0), .lo = CS_LIMIT_LO_KV_HEADS, .hi = CS_LIMIT_HI_KV_HEADS},
    {ROW("ffn_hidden", CS_YF_INT, OFF(ffn_hidden), 0), .lo = CS_LIMIT_LO_FFN_HIDDEN, .hi = CS_LIMIT_HI_FFN_HIDDEN},
    {ROW("gated_mlp", CS_YF_BOOL, OFF(gated_mlp), 0)},
    {ROW("biases", CS_YF_BOOL, OFF(biases), 0)},
    {ROW("position_embedding", CS_YF_ENUM, OFF(learned_positions), 0), .names = position_names},
    {ROW("tied_embeddings", CS_YF_BOOL, OFF(tied_embeddings), 0)},
    {ROW("dropout", CS_YF_NUMBER, OFF(dropout), CS_YF_HI_OPEN), .hi = 1},
    {ROW("experts", CS_YF_INT, OFF(experts), 0), .lo = CS_LIMIT_LO_EXPERTS, .hi = CS_LIMIT_HI_EXPERTS},
    {ROW("experts_per_token", CS_YF_INT, OFF(experts_per_token), 0), .lo = CS_LIMIT_LO_EXPERTS_PER_TOKEN, .hi = CS_LIMIT_HI_EXPERTS_PER_TOKEN},
    {ROW("seq_len", CS_YF_INT, OFF(seq_len), 0), .lo = CS_LIMIT_LO_SEQ_LEN, .hi = CS_LIMIT_HI_SEQ_LEN,
     .missing = shape_missing},
    {ROW("vocab", CS_YF_INT, OFF(vocab), 0), .lo = CS_LIMIT_LO_VOCAB, .hi = CS_LIMIT_HI_VOCAB, .missing = shape_missing},
    {.name = NULL},
};

/* Walks a model mapping. default_name (may be NULL) names a model without
 * `name:`; otherwise a generic model is "generic-7B", a shape "model". */
static int from_map(const cs_yctx *c, const cs_ynode *map, const char *path,
                    const char *default_name, cs_model *out)
{
    model_doc doc;
    memset(&doc, 0, sizeof doc);
    doc.map = map;
    doc.m.biases = doc.m.learned_positions = doc.m.tied_embeddings = -1;
    int rc = cs_yamlnode_apply(c, map, path, model_fields, &doc);
    if (rc) return rc;
    cs_model m = doc.m;
    if (doc.params > 0) {
        cs_diag tmp;
        cs_diag_clear(&tmp);
        rc = cs_model_generic_shape(doc.params, m.seq_len ? m.seq_len : GPT3_SEQ_LEN,
                                    m.vocab ? m.vocab : GPT3_VOCAB, &m, &tmp);
        if (rc)
            return cs_yamlnode_error(c, cs_yamlnode_find(map, "parameters"), "%s", tmp.message);
    } else {
        /* GPT-2/3 style unless the MLP is gated (LLaMA style). */
        if (m.kv_heads == 0) m.kv_heads = m.heads;
        if (m.ffn_hidden == 0) m.ffn_hidden = 4 * m.hidden; /* hidden <= 1e6 */
        if (m.biases < 0) m.biases = !m.gated_mlp;
        if (m.learned_positions < 0) m.learned_positions = !m.gated_mlp;
        if (m.tied_embeddings < 0) m.tied_embeddings = !m.gated_mlp;
        char msg[256];
        const char *key = shape_problem(&m, msg, sizeof msg);
        if (key) {
            const cs_ynode *at = cs_yamlnode_find(map, key);
            return cs_yamlnode_error(c, at ? at : map, "%s", msg);
        }
        rc = cs_model_derive(&m, NULL);
        CS_ASSERT(rc == 0);
    }
    if (!doc.m.name[0]) {
        if (default_name)
            snprintf(m.name, sizeof m.name, "%s", default_name);
        else if (!m.generic)
            snprintf(m.name, sizeof m.name, "model");
    } else {
        memcpy(m.name, doc.m.name, sizeof m.name);
    }
    *out = m;
    return 0;
}

static int load(const char *origin, const char *default_name, const char *yaml, size_t len,
                cs_model *out, cs_diag *d)
{
    cs_diag_clear(d);
    cs_ynode *root;
    int rc = cs_yamlnode_parse_mapping(
        origin, yaml, len,
        "empty file: expected a mapping with layers, hidden, heads, seq_len and vocab, or "
        "parameters",
        "expected a mapping of model keys (layers, hidden, heads, ... or parameters) at the top "
        "level, got %s",
        &root, d);
    if (rc) return rc;
    cs_yctx c = {.origin = origin, .root = "model", .d = d};
    rc = from_map(&c, root, "", default_name, out);
    cs_yamlnode_free(root);
    return rc;
}


int cs_model_load_string(const char *origin, const char *yaml, size_t len, cs_model *out,
                         cs_diag *d)
{
    char name[sizeof out->name];
    cs_textfile_origin_name(origin, "model", name, sizeof name);
    return load(origin ? origin : "<string>", name, yaml, len, out, d);
}


static int load_file(const char *path, cs_model *out, cs_diag *d)
{
    char *text = NULL;
    size_t len = 0;
    int rc = cs_textfile_read(path, "model file", &text, &len, d);
    if (rc) return rc;
    char name[sizeof out->name];
    cs_textfile_origin_name(path, "model", name, sizeof name);
    rc = load(path, name, text, len, out, d);
    free(text);
    return rc;
}

int cs_model_load(const char *spec, cs_model *out, cs_diag *d)
{
    cs_diag_clear(d);
    const char *hf = cs_hfconfig_path(spec); /* hf:PATH or .../config.json */
    if (hf) return cs_hfconfig_load(hf, out, d);
    if (cs_textfile_is_path(spec))
        return load_file(spec, out, d);

    for (size_t i = 0; i < cs__model_preset_count; i++) {
        if (!strcmp(spec, cs__model_preset_names[i])) {
            char origin[sizeof d->file];
            snprintf(origin, sizeof origin, "configs/models/%s.yaml (built-in preset)", spec);
            return load(origin, spec, cs__model_preset_texts[i], cs__model_preset_lengths[i], out,
                        d);
        }
    }
    /* A bare count ("7e9", "1.3B"): a generic model. */
    double params;
    if (!parse_count(spec, &params)) return cs_model_generic(params, out, d);

    /* Not a preset: a file of that name in the working directory? */
    int rc = load_file(spec, out, d);
    if (rc != CS_ENOENT) return rc;

    char list[512] = "";
    size_t used = 0;
    for (size_t i = 0; i < cs__model_preset_count && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                 cs__model_preset_names[i]);
    const char *sug = cs_yamlnode_suggest(spec, cs__model_preset_names, cs__model_preset_count);
    if (sug)
        return cs_diag_set(d, CS_ENOENT, NULL, 0, 0,
                           "unknown model '%.100s' (did you mean '%s'? presets: %s)", spec, sug,
                           list);
    return cs_diag_set(d, CS_ENOENT, NULL, 0, 0,
                       "unknown model '%.100s' (not a preset, a file or a parameter count such "
                       "as 7e9; presets: %s)",
                       spec, list);
}

int cs__model_from_node(const cs_yctx *c, const cs_ynode *v, cs_model *out)
{
    if (v && v->kind == CS_YNODE_MAPPING) return from_map(c, v, "model", NULL, out);
    if (!v || v->kind != CS_YNODE_SCALAR || cs_yamlnode_is_null(v))
        return cs_yamlnode_error(c, v,
                                 "'model' must be a preset name, a file, a parameter count or a "
                                 "mapping of model keys, got %s",
                                 cs_yamlnode_describe(v));
    cs_diag tmp;
    int rc = cs_model_load(v->text, out, &tmp);
    if (rc == CS_ENOENT && !tmp.file[0]) return cs_yamlnode_error(c, v, "%s", tmp.message);
    if (rc && c->d) *c->d = tmp;
    return rc;
}

size_t cs_model_preset_count(void)
{
    return cs__model_preset_count;
}

const char *cs_model_preset_name(size_t i)
{
    return i < cs__model_preset_count ? cs__model_preset_names[i] : NULL;
}
