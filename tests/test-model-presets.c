/* SPDX-License-Identifier: MIT */
/*
 * test-model-presets.c - the model suite's published-table checks: every
 * preset's parameter total (published, and the exact counts of the Hugging
 * Face checkpoints; Mixtral 8x7B's total and active counts against Mistral
 * AI's 46.7B / 12.9B), FLOPs against Narayanan et al.'s formula and
 * Korthikanti et al.'s measured MFU, and activation bytes against
 * Korthikanti's Table 2 and Sec 4.1 breakdown, evaluated from the formulas
 * as written in the paper CSVs under validation/papers (a small expression
 * evaluator reads them). Each comparison has a deliberately wrong case that
 * it must catch. Shapes, generic models and YAML loading are in
 * test-model.c. Runs with the project root as working directory.
 */
#include <check.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "train/model.h"
#include "testutil.h"

static double rel_err(double got, double want)
{
    return fabs(got - want) / fabs(want);
}

/* A GPT-style shape built in code (the Korthikanti Table 3 models). */
static cs_model gpt_shape(int layers, int hidden, int heads, int seq_len, int vocab)
{
    cs_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "test");
    m.layers = layers;
    m.hidden = hidden;
    m.heads = m.kv_heads = heads;
    m.ffn_hidden = 4 * hidden;
    m.seq_len = seq_len;
    m.vocab = vocab;
    m.tied_embeddings = m.biases = m.learned_positions = 1;
    ck_assert_int_eq(cs_model_derive(&m, NULL), 0);
    return m;
}

/* ---- parameter totals ---- */

/* Published totals (the brief's list: GPT-2 from the openai/gpt-2 README's
 * corrected counts, GPT-3 Table 2.1 names, LLaMA model cards) and, where a
 * public checkpoint exists, the exact sum of its tensor sizes as the
 * Hugging Face model pages report it (0 = none). */
static const struct {
    const char *name;
    double published;
    double exact;
} TOTALS[] = {
    {"gpt2-124m", 124.4e6, 124439808},     {"gpt2-355m", 354.8e6, 354823168},
    {"gpt2-774m", 774e6, 774030080},       {"gpt2-1.5b", 1.558e9, 1557611200},
    {"gpt3-1.3b", 1.3e9, 0},               {"gpt3-6.7b", 6.7e9, 0},
    {"gpt3-13b", 13e9, 0},                 {"gpt3-175b", 175e9, 0},
    {"llama2-7b", 6.74e9, 6738415616},     {"llama2-13b", 13.0e9, 13015864320},
    {"llama2-70b", 69.0e9, 68976648192},   {"llama3-8b", 8.03e9, 8030261248},
    {"llama3-70b", 70.6e9, 70553706496},
    /* Mistral AI's 46.7B; the checkpoint mistralai/Mixtral-8x7B-v0.1 */
    {"mixtral-8x7b", 46.7e9, 46702792704},
};

START_TEST(preset_totals_match_published)
{
    ck_assert_uint_eq(sizeof TOTALS / sizeof TOTALS[0], cs_model_preset_count());
    for (size_t i = 0; i < cs_model_preset_count(); i++) {
        cs_model m = cs_test_model(TOTALS[i].name);
        ck_assert_int_eq(m.generic, 0);
        ck_assert_msg(rel_err(m.params, TOTALS[i].published) < 0.03, "%s: %.6g vs published %.6g",
                      m.name, m.params, TOTALS[i].published);
        if (TOTALS[i].exact > 0)
            ck_assert_msg(m.params == TOTALS[i].exact, "%s: %.0f vs checkpoint %.0f", m.name,
                          m.params, TOTALS[i].exact);
        ck_assert_double_eq_tol(m.params, m.layers * m.layer_params + m.embedding_params, 0.5);
    }
}
END_TEST

/* The 3% comparison catches a plausible mistake: an untied head. */
START_TEST(totals_catch_wrong_counting)
{
    cs_model m = cs_test_model("gpt2-124m");
    m.tied_embeddings = 0;
    ck_assert_int_eq(cs_model_derive(&m, NULL), 0);
    ck_assert(rel_err(m.params, 124.4e6) > 0.03);
    /* and LLaMA counted with GPT-style biases and learned positions: the
     * exact check (not the 3% one) is what catches this */
    m = cs_test_model("llama2-7b");
    m.biases = 1;
    ck_assert_int_eq(cs_model_derive(&m, NULL), 0);
    ck_assert(m.params != 6738415616.0);
}
END_TEST

/* ---- FLOPs ---- */

/* Narayanan et al. 2021 (and Korthikanti Eq. 7): model FLOPs per iteration. */
static double narayanan_flops(double B, double s, double L, double h, double V)
{
    return 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * h * L));
}

START_TEST(flops_narayanan_gpt3_175b)
{
    cs_model m = cs_test_model("gpt3-175b");
    double s = m.seq_len, want = narayanan_flops(1, s, m.layers, m.hidden, m.vocab);
    double got = cs_model_flops_per_token(&m) * s;
    ck_assert_msg(rel_err(got, want) < 0.01, "%g vs %g", got, want);
    ck_assert(rel_err(got, want) < 1e-12); /* the same formula, term by term */
    /* parts */
    ck_assert_double_eq_tol(cs_model_layer_forward_flops(&m, s),
                            s * (24.0 * m.hidden * m.hidden + 4.0 * s * m.hidden), 1);
    ck_assert_double_eq_tol(cs_model_head_forward_flops(&m, s), 2.0 * s * m.vocab * m.hidden, 1);
    /* the 1% check catches the bare 6P rule, which drops the attention
     * scores (s/6h = 2.8% at 175B) */
    ck_assert(rel_err(6 * m.params * s, want) > 0.01);
}
END_TEST

START_TEST(flops_about_6p_plus_attention)
{
    for (size_t i = 0; i < cs_model_preset_count(); i++) {
        cs_model m = cs_test_model(cs_model_preset_name(i));
        /* lookups cost nothing: an untied input embedding and learned
         * positions are parameters without FLOPs */
        double lookup = (m.tied_embeddings ? 0.0 : (double)m.vocab * m.hidden) +
                        (m.learned_positions ? (double)m.seq_len * m.hidden : 0.0);
        double approx = 6 * (m.active_params - lookup) + 12.0 * m.layers * m.hidden * m.seq_len;
        ck_assert_msg(rel_err(cs_model_flops_per_token(&m), approx) < 0.01, "%s: %g vs %g",
                      m.name, cs_model_flops_per_token(&m), approx);
        ck_assert_double_eq_tol(cs_model_flops_per_token(&m),
                                3 * (m.layers * cs_model_layer_forward_flops(&m, 1) +
                                     cs_model_head_forward_flops(&m, 1)),
                                1);
    }
    /* generic: 2 FLOPs per layer parameter */
    cs_model g;
    ck_assert_int_eq(cs_model_generic(7e9, &g, NULL), 0);
    ck_assert_double_eq_tol(cs_model_layer_forward_flops(&g, 10),
                            10 * (2 * g.layer_params + 4.0 * g.seq_len * g.hidden), 1);
}
END_TEST

/* Mixtral 8x7B: 46.7B parameters, 12.9B used per token (Mistral AI,
 * "Mixtral of experts", 2023: "46.7B total parameters but only uses 12.9B
 * parameters per token"; Jiang et al. 2024 round to 47B and 13B active).
 * Both to the published figure's 0.1B rounding; the FLOPs are the top-2
 * experts' and the router's, term by term. */
START_TEST(mixtral_total_and_active)
{
    cs_model m = cs_test_model("mixtral-8x7b");
    ck_assert_msg(fabs(m.params - 46.7e9) < 0.05e9, "total %.6g", m.params);
    ck_assert_msg(fabs(m.active_params - 12.9e9) < 0.05e9, "active %.6g", m.active_params);
    double h = 4096, k = 1024, f = 14336, L = 32, E = 8, v = 32000, s = m.seq_len;
    double attention = 2 * h * h + 2 * h * k, expert = 3 * h * f, router = h * E;
    ck_assert_double_eq(m.layer_params, attention + E * expert + router + 2 * h);
    ck_assert_double_eq(m.active_params, L * (attention + 2 * expert + router + 2 * h) + 2 * v * h + h);
    double fwd = 2 * (attention + 2 * expert + router) + 4 * s * h;
    ck_assert_double_eq(cs_model_layer_forward_flops(&m, 1), fwd);
    ck_assert_double_eq(cs_model_flops_per_token(&m), 3 * (L * fwd + 2 * v * h));
    ck_assert_double_eq(cs_model_expert_tokens(&m, 4096), 1024);
    /* the checks catch every expert counted as run (the dense 47B's
     * FLOPs), and the experts dropped from the total (Mistral 7B's 7.2B) */
    cs_model all = m;
    all.experts_per_token = 8;
    ck_assert_int_eq(cs_model_derive(&all, NULL), 0);
    ck_assert(fabs(all.active_params - 12.9e9) > 0.05e9);
    ck_assert_double_eq(cs_model_flops_per_token(&all) - cs_model_flops_per_token(&m),
                        3 * L * 2 * (E - 2) * expert);
    cs_model one = m;
    one.experts = one.experts_per_token = 1;
    ck_assert_int_eq(cs_model_derive(&one, NULL), 0);
    ck_assert(fabs(one.params - 46.7e9) > 0.05e9);
    ck_assert_double_eq(one.params, 7241732096.0); /* Mistral-7B-v0.1 at 32768 positions */
}
END_TEST

/* Activations of a mixture: the dense MLP's 3h, then per token k x (the
 * gathered input 2h, SwiGLU's 6f, the expert output 2h), the router's fp32
 * softmax 4E and top-k 12k; a top-1 mixture of one expert is not the dense
 * model (the gather and the output copy), a dense model is unchanged. */
START_TEST(mixtral_activations)
{
    cs_model m = cs_test_model("mixtral-8x7b");
    double s = m.seq_len, b = 1, h = 4096, k = 1024, f = 14336, E = 8, top = 2;
    double kept = s * b * ((7 * h + 4 * k) + (3 * h + top * (4 * h + 6 * f) + 4 * E + 12 * top) + 4 * h);
    ck_assert_double_eq(cs_model_activation_bytes_per_layer(&m, 1, CS_CKPT_SELECTIVE), kept);
    ck_assert_double_eq(cs_model_activation_bytes_per_layer(&m, 1, CS_CKPT_NONE),
                        kept + 5 * m.heads * s * s * b);
    ck_assert_double_eq(cs_model_activation_bytes_per_layer(&m, 1, CS_CKPT_FULL), 2 * s * b * h);
    /* a dense model of the same shape keeps the Korthikanti itemisation */
    cs_model d = m;
    d.experts = d.experts_per_token = 1;
    ck_assert_int_eq(cs_model_derive(&d, NULL), 0);
    ck_assert_double_eq(cs_model_activation_bytes_per_layer(&d, 1, CS_CKPT_SELECTIVE),
                        s * b * ((7 * h + 4 * k) + (3 * h + 6 * f) + 4 * h));
    /* and the check catches the experts' activations counted for all 8 */
    ck_assert(cs_model_activation_bytes_per_layer(&m, 1, CS_CKPT_SELECTIVE) <
              s * b * (3 * h + E * (4 * h + 6 * f)));
}
END_TEST

/* ---- reading the paper CSVs ---- */

/* Lines of a file (without '#' comments); NULL-terminated, caller frees
 * with free_lines. */
static char **read_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s (tests run from the project root)", path);
    size_t n = 0, cap = 16;
    char **lines = malloc(cap * sizeof *lines);
    char buf[1024];
    while (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\r\n")] = '\0';
        if (buf[0] == '#' || !buf[0]) continue;
        if (n + 1 >= cap) lines = realloc(lines, (cap *= 2) * sizeof *lines);
        lines[n++] = strdup(buf);
    }
    fclose(f);
    lines[n] = NULL;
    return lines;
}

static void free_lines(char **lines)
{
    for (char **p = lines; *p; p++) free(*p);
    free(lines);
}

/* Field i (0-based) of a CSV line without quotes, into buf. */
static const char *field(const char *line, int i, char *buf, size_t len)
{
    const char *p = line;
    for (int k = 0; k < i; k++) {
        p = strchr(p, ',');
        ck_assert_msg(p != NULL, "line '%s' has no field %d", line, i);
        p++;
    }
    size_t n = strcspn(p, ",");
    snprintf(buf, len, "%.*s", (int)n, p);
    return buf;
}

/* A tiny evaluator for the papers' formulas: + - * / ^, parentheses,
 * numbers, juxtaposition as multiplication ("5as/h", "sbh(34+...)"), and
 * identifiers read letter by letter as variables s, b, h, a, t. */
typedef struct expr {
    const char *p;
    double s, b, h, a, t;
    int error;
} expr;

static double e_sum(expr *e);

static void e_skip(expr *e)
{
    while (*e->p == ' ') e->p++;
}

static double e_primary(expr *e)
{
    e_skip(e);
    if (*e->p == '(') {
        e->p++;
        double v = e_sum(e);
        e_skip(e);
        if (*e->p == ')')
            e->p++;
        else
            e->error = 1;
        return v;
    }
    if (isdigit((unsigned char)*e->p) || *e->p == '.') {
        char *end;
        double v = strtod(e->p, &end);
        e->p = end;
        return v;
    }
    if (isalpha((unsigned char)*e->p)) { /* one letter = one variable */
        static const char names[] = "sbhat";
        const double values[] = {e->s, e->b, e->h, e->a, e->t};
        const char *at = strchr(names, *e->p++);
        if (at) return values[at - names];
    }
    e->error = 1;
    return 0;
}

static double e_power(expr *e)
{
    double v = e_primary(e);
    e_skip(e);
    if (*e->p == '^') {
        e->p++;
        v = pow(v, e_power(e));
    }
    return v;
}

static double e_product(expr *e)
{
    double v = e_power(e);
    for (;;) {
        e_skip(e);
        char c = *e->p;
        if (c == '*' || c == '/') {
            e->p++;
            double r = e_power(e);
            v = c == '*' ? v * r : v / r;
        } else if (c == '(' || isalnum((unsigned char)c) || c == '.') {
            v *= e_power(e); /* juxtaposition */
        } else {
            return v;
        }
    }
}

static double e_sum(expr *e)
{
    double v = e_product(e);
    for (;;) {
        e_skip(e);
        char c = *e->p;
        if (c != '+' && c != '-') return v;
        e->p++;
        double r = e_product(e);
        v = c == '+' ? v + r : v - r;
    }
}

/* Value of formula `text` with s, b, h, a and t = 1. */
static double eval(const char *text, const cs_model *m, int b)
{
    expr e = {.p = text, .s = m->seq_len, .b = b, .h = m->hidden, .a = m->heads, .t = 1};
    double v = e_sum(&e);
    e_skip(&e);
    ck_assert_msg(!e.error && *e.p == '\0', "cannot evaluate '%s' (stopped at '%s')", text, e.p);
    return v;
}

START_TEST(evaluator_self_test)
{
    cs_model m = gpt_shape(1, 10, 2, 3, 100); /* h 10, a 2, s 3 */
    ck_assert_double_eq_tol(eval("sbh*(34+5*a*s/h)", &m, 2), 3 * 2 * 10 * (34 + 5 * 2 * 3 / 10.0),
                            1e-9);
    ck_assert_double_eq_tol(eval("sbh(34+5as/h)", &m, 2), eval("sbh*(34+5*a*s/h)", &m, 2), 1e-9);
    ck_assert_double_eq_tol(eval("2*a*s^2*b + 2sbh", &m, 1), 2 * 2 * 9 + 2 * 30, 1e-9);
    ck_assert_double_eq_tol(eval("10-4-3", &m, 1), 3, 1e-12);
    ck_assert_double_eq_tol(eval("8/2/2", &m, 1), 2, 1e-12);
}
END_TEST

/* Table 2 rows (korthikanti_activation_memory.csv) at t = 1, each with the
 * mode it becomes without tensor parallelism. */
static const struct {
    const char *configuration;
    cs_ckpt mode;
} TABLE2[] = {
    {"no parallelism", CS_CKPT_NONE},
    {"tensor parallel (baseline)", CS_CKPT_NONE},
    {"tensor + sequence parallel", CS_CKPT_NONE},
    {"tensor parallel + selective activation recomputation", CS_CKPT_SELECTIVE},
    {"tensor parallel + sequence parallel + selective activation recomputation",
     CS_CKPT_SELECTIVE},
    {"full activation recomputation", CS_CKPT_FULL},
};

START_TEST(activations_table2)
{
    cs_model shapes[4];
    shapes[0] = cs_test_model("gpt3-175b");                   /* s 2048, h 12288, a 96 */
    shapes[1] = gpt_shape(48, 6144, 64, 2048, 51200);       /* Korthikanti 22B */
    shapes[2] = gpt_shape(105, 20480, 128, 2048, 51200);    /* MT-NLG 530B */
    shapes[3] = cs_test_model("gpt2-124m");
    static const int B[] = {1, 4, 1, 8};

    char **lines = read_lines("validation/papers/korthikanti_activation_memory.csv");
    size_t matched = 0;
    for (char **l = lines + 1; *l; l++) { /* line 0 is the CSV header */
        char config[160], formula[160];
        field(*l, 0, config, sizeof config);
        field(*l, 1, formula, sizeof formula);
        for (size_t r = 0; r < sizeof TABLE2 / sizeof TABLE2[0]; r++) {
            if (strcmp(config, TABLE2[r].configuration)) continue;
            matched++;
            for (size_t k = 0; k < 4; k++) {
                double want = eval(formula, &shapes[k], B[k]);
                double got = cs_model_activation_bytes_per_layer(&shapes[k], B[k], TABLE2[r].mode);
                ck_assert_msg(rel_err(got, want) < 1e-12, "%s, %s: %.17g vs %.17g (%s)", config,
                              shapes[k].name, got, want, formula);
            }
        }
    }
    free_lines(lines);
    ck_assert_uint_eq(matched, sizeof TABLE2 / sizeof TABLE2[0]);

    /* worked example: GPT-3 175B, b = 1: sbh(34 + 5as/h) with 5as/h = 80 */
    double sbh = 2048.0 * 12288;
    ck_assert_double_eq_tol(cs_model_activation_bytes_per_layer(&shapes[0], 1, CS_CKPT_NONE),
                            sbh * 114, 1e-3);
    /* the comparison catches a constant off by one */
    ck_assert(rel_err(eval("sbh*(35+5*a*s/h)", &shapes[0], 1),
                      cs_model_activation_bytes_per_layer(&shapes[0], 1, CS_CKPT_NONE)) > 1e-6);
}
END_TEST

/* The Sec 4.1 itemisation (korthikanti_activation_breakdown.csv): the items
 * add up to the block totals and the per-layer total, which is what
 * model.c's breakdown reproduces. */
START_TEST(activations_breakdown)
{
    cs_model m = cs_test_model("gpt3-175b");
    char **lines = read_lines("validation/papers/korthikanti_activation_breakdown.csv");
    double attention = 0, mlp = 0, attention_total = -1, mlp_total = -1, norms = -1, total = -1;
    for (char **l = lines + 1; *l; l++) {
        char item[128], bytes[160], note[160];
        field(*l, 0, item, sizeof item);
        field(*l, 1, bytes, sizeof bytes);
        field(*l, 2, note, sizeof note);
        if (!strcmp(item, "attention block total")) attention_total = eval(bytes, &m, 2);
        else if (!strcmp(item, "MLP block total")) mlp_total = eval(bytes, &m, 2);
        else if (!strcmp(item, "two layer norms (inputs)")) norms = eval(bytes, &m, 2);
        else if (!strcmp(item, "per-layer total")) total = eval(bytes, &m, 2);
        else if (!strcmp(note, "attention")) attention += eval(bytes, &m, 2);
        else if (!strncmp(note, "MLP", 3)) mlp += eval(bytes, &m, 2);
    }
    free_lines(lines);
    ck_assert(attention_total > 0 && mlp_total > 0 && norms > 0 && total > 0);
    ck_assert_double_eq_tol(attention, attention_total, 1e-3);
    ck_assert_double_eq_tol(mlp, mlp_total, 1e-3);
    ck_assert_double_eq_tol(attention + mlp + norms, total, 1e-3);
    ck_assert_double_eq_tol(cs_model_activation_bytes_per_layer(&m, 2, CS_CKPT_NONE), total, 1e-3);
}
END_TEST

/* SwiGLU, ffn != 4h and GQA scale the breakdown's MLP and K/V items. */
START_TEST(activations_scaled_terms)
{
    cs_model m = cs_test_model("llama2-7b"); /* h 4096, a 32, kv 32, f 11008, gated, s 4096 */
    double s = 4096, b = 2, h = 4096, f = 11008, a = 32;
    double kept = s * b * ((7 * h + 4 * h) + (3 * h + 6 * f) + 4 * h);
    ck_assert_double_eq_tol(cs_model_activation_bytes_per_layer(&m, 2, CS_CKPT_SELECTIVE), kept,
                            1e-3);
    ck_assert_double_eq_tol(cs_model_activation_bytes_per_layer(&m, 2, CS_CKPT_NONE),
                            kept + 5 * a * s * s * b, 1e-3);
    ck_assert_double_eq_tol(cs_model_activation_bytes_per_layer(&m, 2, CS_CKPT_FULL), 2 * s * b * h,
                            1e-3);
    m = cs_test_model("llama2-70b"); /* kv 8 of 64: k = h / 8 */
    s = 4096, b = 1, h = 8192, f = 28672;
    kept = s * b * ((7 * h + 4 * h / 8) + (3 * h + 6 * f) + 4 * h);
    ck_assert_double_eq_tol(cs_model_activation_bytes_per_layer(&m, 1, CS_CKPT_SELECTIVE), kept,
                            1e-3);
    /* and it is not the paper's 34 sbh (which assumes MHA and a 4h GeLU
     * MLP): 35.5 sbh here */
    ck_assert_double_eq_tol(kept / (s * b * h), 35.5, 1e-9);
    /* zero micro-batch: nothing */
    ck_assert(cs_model_activation_bytes_per_layer(&m, 0, CS_CKPT_NONE) == 0);
}
END_TEST

/* korthikanti_measured.csv: the in-text numbers, and Table 5's MFU from
 * Table 3's shapes with our FLOPs per token on A100 bf16 peak. */
typedef struct t3_shape {
    char model[32];
    int heads, hidden, layers, pp, gpus, batch;
} t3_shape;

/* A "T3," row: a Table 3 shape. */
static void read_t3(const char *line, t3_shape *r)
{
    for (int i = 0; i < 10; i++) {
        char buf[64];
        field(line, i, buf, sizeof buf);
        if (i == 1) snprintf(r->model, sizeof r->model, "%.*s", (int)strcspn(buf, " "), buf);
        if (i == 2) r->heads = atoi(buf);
        if (i == 3) r->hidden = atoi(buf);
        if (i == 4) r->layers = atoi(buf);
        if (i == 6) r->pp = atoi(buf);
        if (i == 7) r->gpus = atoi(buf);
        if (i == 8) r->batch = atoi(buf);
    }
}

/* A "T5," row: its MFU from the T3 shape of the same model. */
static void check_t5(const char *line, const t3_shape *t3, size_t n3, double peak)
{
    char f[3][64];
    field(line, 1, f[0], sizeof f[0]);
    field(line, 3, f[1], sizeof f[1]);
    field(line, 5, f[2], sizeof f[2]);
    size_t k = 0;
    while (k < n3 && strcmp(t3[k].model, f[0])) k++;
    ck_assert_msg(k < n3, "T5 row %s has no T3 shape", f[0]);
    /* s = 2048, v = 51200 (the file's header) */
    cs_model m = gpt_shape(t3[k].layers, t3[k].hidden, t3[k].heads, 2048, 51200);
    double tokens = (double)t3[k].batch * 2048, time_s = atof(f[1]);
    double mfu = cs_model_flops_per_token(&m) * tokens / (time_s * t3[k].gpus * peak);
    double want = atof(f[2]) / 100;
    ck_assert_msg(fabs(mfu - want) < 0.003, "%s: MFU %.4f vs Table 5 %.4f", f[0], mfu, want);
    /* the bare 6P rule misses the 175B figure by more than that */
    double mfu_6p = 6 * m.params * tokens / (time_s * t3[k].gpus * peak);
    if (!strcmp(f[0], "175B")) ck_assert(fabs(mfu_6p - want) > 0.003);
}

/* A "text," row: an in-text activation figure; returns 1 when it is one
 * of the four this test knows. */
static int check_text(const char *line, const t3_shape *t3, size_t n3)
{
    char f[2][64];
    field(line, 1, f[0], sizeof f[0]);
    field(line, 2, f[1], sizeof f[1]);
    cs_model gpt3 = cs_test_model("gpt3-175b");
    cs_model mtnlg = gpt_shape(105, 20480, 128, 2048, 51200);
    double sbh3 = 2048.0 * 12288, sbhm = 2048.0 * 20480;
    double none3 = cs_model_activation_bytes_per_layer(&gpt3, 1, CS_CKPT_NONE);
    double nonem = cs_model_activation_bytes_per_layer(&mtnlg, 1, CS_CKPT_NONE);
    double sel3 = cs_model_activation_bytes_per_layer(&gpt3, 1, CS_CKPT_SELECTIVE);
    double selm = cs_model_activation_bytes_per_layer(&mtnlg, 1, CS_CKPT_SELECTIVE);
    if (!strncmp(f[0], "GPT-3 5as/h", 11)) {
        ck_assert_double_eq_tol(none3 / sbh3 - 34, atof(f[1]), 1e-9);
        return 1;
    }
    if (!strncmp(f[0], "MT-NLG 5as/h", 12)) {
        ck_assert_double_eq_tol(nonem / sbhm - 34, atof(f[1]), 1e-9);
        return 1;
    }
    if (!strcmp(f[0], "selective recompute memory saved GPT-3 / MT-NLG")) {
        /* "70% / 65%" */
        double g = atof(f[1]), mt = atof(strchr(f[1], '/') + 1);
        ck_assert_double_eq_tol(100 * (1 - sel3 / none3), g, 0.5);
        ck_assert_double_eq_tol(100 * (1 - selm / nonem), mt, 0.5);
        return 1;
    }
    if (!strncmp(f[0], "530B first-stage saving", 23)) {
        /* sbhp: one 2-byte layer input per pipeline stage (p = 35) */
        double p = 0;
        for (size_t k = 0; k < n3; k++)
            if (!strcmp(t3[k].model, "530B")) p = t3[k].pp;
        ck_assert_int_eq((int)p, 35);
        double bytes = cs_model_activation_bytes_per_layer(&mtnlg, 1, CS_CKPT_FULL) * p;
        ck_assert_double_eq_tol(bytes / GiB, atof(f[1]), 0.005);
        return 1;
    }
    return 0;
}

START_TEST(korthikanti_measured)
{
    char **lines = read_lines("validation/papers/korthikanti_measured.csv");
    t3_shape t3[8];
    size_t n3 = 0, n5 = 0, ntext = 0;
    cs_cluster a100 = cs_test_cluster("dgx-a100"); /* Selene: A100-80GB */
    double peak = a100.gpu.peak_flops[CS_DTYPE_BF16];
    ck_assert_double_eq_tol(peak, 312e12, 1e6);
    for (char **l = lines; *l; l++) {
        if (!strncmp(*l, "T3,", 3)) {
            read_t3(*l, &t3[n3]);
            ck_assert_uint_lt(++n3, 8);
        } else if (!strncmp(*l, "T5,", 3)) {
            check_t5(*l, t3, n3, peak);
            n5++;
        } else if (!strncmp(*l, "text,", 5)) {
            ntext += check_text(*l, t3, n3);
        }
    }
    free_lines(lines);
    ck_assert_uint_eq(n3, 4);
    ck_assert_uint_eq(n5, 4);
    ck_assert_uint_eq(ntext, 4);
}
END_TEST

static Suite *model_presets_suite(void)
{
    Suite *s = suite_create("model-presets");
    TCase *tt = tcase_create("totals");
    tcase_add_test(tt, preset_totals_match_published);
    tcase_add_test(tt, totals_catch_wrong_counting);
    tcase_add_test(tt, mixtral_total_and_active);
    tcase_add_test(tt, mixtral_activations);
    suite_add_tcase(s, tt);

    TCase *tf = tcase_create("papers");
    tcase_add_test(tf, flops_narayanan_gpt3_175b);
    tcase_add_test(tf, flops_about_6p_plus_attention);
    tcase_add_test(tf, evaluator_self_test);
    tcase_add_test(tf, activations_table2);
    tcase_add_test(tf, activations_breakdown);
    tcase_add_test(tf, activations_scaled_terms);
    tcase_add_test(tf, korthikanti_measured);
    suite_add_tcase(s, tf);
    return s;
}

int main(void)
{
    return cs_test_run(model_presets_suite());
}
