/* SPDX-License-Identifier: MIT */
/*
 * training_runs.c - the reader of measured training runs (training_runs.h;
 * the format: docs/training-runs.md).
 *
 * The header row names the columns (any order, case-insensitive); "#"
 * lines are comments (the provenance header). The columns the reader knows
 * are one table (cols), read in table order so the strategy (whose
 * defaults every other setting starts from) comes first; a column the
 * table does not know is informational and skipped. Each cell is checked
 * where it stands and a bad one is reported at file:line:column with what
 * was expected.
 *
 * How a row maps to a training configuration: the mapping of validation/
 * training/throughput.py (its docstring cites each choice), for the
 * llm-foundry / Composer runs this format comes from:
 *   precision amp_bf16/DEFAULT   bf16 compute and all-gathers, fp32
 *                                gradient reduction, fp32 master weights
 *                                (Composer's get_mixed_precision DEFAULT);
 *   precision bf16/PURE          bf16 everywhere, no fp32 master copy;
 *   activation_checkpointing     none | selective | full;
 *   selective_ac                 column, attention | op | N (checkpoint.h),
 *                                default attention;
 *   backward_prefetch            column, default post (Composer's FSDP
 *                                default BACKWARD_POST);
 *   limit_all_gathers            column, default true (2 in flight);
 *   attention_kernel             column, default flash1 (the tables' torch
 *                                1.x stack ran FlashAttention v1-class
 *                                kernels); fused attention always;
 *   loss_impl                    column, naive | fused | chunked (loss.h),
 *                                default fused (llm-foundry's MPT default
 *                                loss_fn fused_crossentropy: flash-attn's
 *                                xentropy, loss.c);
 *   train_metrics                column, default 2: the no-grad cross-
 *                                entropy passes over the logits after each
 *                                micro-batch's backward (Composer's
 *                                LanguageCrossEntropy and LanguagePerplexity,
 *                                llm-foundry's MPT train metrics: loss.h);
 *   compile                      column, yes / no (or true / false),
 *                                default no: torch.compile (training.h);
 *   optimizer_in_backward,       columns, true / false, default false: the
 *   activation_offloading        scenario keys (torchtune's optimizer_in_bwd,
 *                                needing grad_accum 1, and
 *                                enable_activation_offloading: training.h);
 *   fsdp_version                 column, default 1 (Composer of 2023 wraps
 *                                FullyShardedDataParallel, one unit per
 *                                transformer block);
 *   tp, sequence_parallel,       columns, default 1, on when tp > 1, off:
 *   async_tp                     the scenario keys tensor_parallel,
 *                                sequence_parallel and async_tp (tp in
 *                                tensor_parallel's range, limit.h; whether
 *                                it divides the gpus and the heads is the
 *                                evaluation's check, as for a scenario);
 *   pp, virtual_stages,          columns, default 1, 1, and 1f1b
 *   pipeline_schedule            (interleaved_1f1b with virtual stages):
 *                                the scenario keys pipeline_parallel,
 *                                virtual_stages and pipeline_schedule
 *                                (pipeline_sched.h's rows; ranges in
 *                                limit.h; whether P divides the gpus and
 *                                the layers is the evaluation's check).
 * Model columns default as a model YAML does (model.c): kv_heads = heads,
 * ffn_hidden = 4 hidden, biases / learned positions / tied embeddings
 * unless the MLP is gated. A `params` column must equal collsim's count.
 * Cost: O(file size).
 */
#include "study/training_runs.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/limit.h"
#include "base/textfile.h"
#include "study/measure_parse.h"
#include "train/checkpoint.h"
#include "train/loss.h"
#include "train/pipeline_sched.h"
#include "train/strategy.h"

/* ---- the columns ---------------------------------------------------------------- */

/* One row being read: the row, and the model columns read as given. */
typedef struct row_build {
    cs_trun_row r;
    int gated, biases, learned, tied; /* -1: not given */
    double params;                    /* the row's count, NaN when absent */
    int params_col;                   /* its column */
} row_build;

typedef enum { C_INT, C_INT0, C_NUM, C_BOOL, C_STR, C_FN } col_kind;

/* A custom cell: sets b from the text; returns NULL or what was expected. */
typedef const char *(*cell_fn)(row_build *b, const char *s);

typedef struct col_def {
    const char *name;
    int required;
    col_kind kind;
    size_t off;     /* into row_build */
    cell_fn fn;     /* C_FN */
    size_t size;    /* C_STR: the buffer at off */
    cs_limit_id lim; /* C_INT, C_INT0: the range, the schemas' (limits.h) */
} col_def;

static const char *strategy_cell(row_build *b, const char *s)
{
    cs_strategy st;
    if (cs_strategy_parse(s, &st)) return "a strategy (ddp, zero1, fsdp_full_shard, ...)";
    cs_training_defaults(&b->r.training, st);
    b->r.training.backward_prefetch = CS_PREFETCH_POST;
    b->r.training.attention_kernel = CS_ATTN_FLASH1;
    b->r.training.flash_attention = 1;
    b->r.training.fsdp_version = 1;
    b->r.training.loss_impl = CS_LOSS_FUSED;
    b->r.training.train_metrics = 2;
    return NULL;
}

/* The Precision / MP Mode names: (name, param, reduce, master weights). */
static const struct {
    const char *name;
    cs_dtype param, reduce;
    int master;
} precisions[] = {
    {"amp_bf16/DEFAULT", CS_DTYPE_BF16, CS_DTYPE_FP32, 1},
    {"bf16/PURE", CS_DTYPE_BF16, CS_DTYPE_BF16, 0},
};

static const char *precision_cell(row_build *b, const char *s)
{
    for (size_t i = 0; i < sizeof precisions / sizeof *precisions; i++)
        if (!strcasecmp(s, precisions[i].name)) {
            b->r.training.param_dtype = precisions[i].param;
            b->r.training.grad_reduce_dtype = precisions[i].reduce;
            b->r.training.master_weights_fp32 = precisions[i].master;
            return NULL;
        }
    return "amp_bf16/DEFAULT or bf16/PURE";
}

/* index of s in a NULL-terminated name list, or -1 */
static int name_index(const char *const *names, const char *s)
{
    for (int i = 0; names[i]; i++)
        if (!strcasecmp(names[i], s)) return i;
    return -1;
}

/* torch.compile: yes / no as the tables print it, or true / false. */
static const char *compile_cell(row_build *b, const char *s)
{
    static const char *const names[] = {"no", "yes", "false", "true", NULL};
    int i = name_index(names, s);
    if (i < 0) return "yes, no, true or false";
    b->r.training.compile = i % 2;
    return NULL;
}

static const char *ckpt_cell(row_build *b, const char *s)
{
    int i = name_index(cs_ckpt_names, s);
    if (i < 0) return "none, selective or full";
    b->r.training.checkpointing = (cs_ckpt)i;
    return NULL;
}

static const char *selective_ac_cell(row_build *b, const char *s)
{
    if (!*s) return NULL; /* empty: the default (attention) */
    if (cs_checkpoint_parse_selective(s, &b->r.training.selective_ac))
        return "attention, op or a block interval N >= 1";
    return NULL;
}

static const char *kernel_cell(row_build *b, const char *s)
{
    int i = name_index(cs_attn_kernel_names, s);
    if (i < 0) return "flash2 or flash1";
    b->r.training.attention_kernel = (cs_attn_kernel)i;
    return NULL;
}

static const char *loss_cell(row_build *b, const char *s)
{
    int i = name_index(cs_loss_impl_names, s);
    if (i < 0) return "naive, fused or chunked";
    b->r.training.loss_impl = i;
    return NULL;
}

/* A pipeline schedule row's name (pipeline_sched.h); empty: the default
 * (1f1b, interleaved_1f1b with virtual stages). */
static const char *pp_schedule_cell(row_build *b, const char *s)
{
    int i = name_index(cs_pp_schedule_names, s);
    if (i < 0) return "gpipe, 1f1b, interleaved_1f1b or zero_bubble";
    b->r.training.pipeline_schedule = i;
    return NULL;
}

static const char *prefetch_cell(row_build *b, const char *s)
{
    static const char *const names[] = {"none", "pre", "post", NULL};
    int i = name_index(names, s);
    if (i < 0) return "none, pre or post";
    b->r.training.backward_prefetch = (cs_prefetch)i;
    return NULL;
}

static const char *version_cell(row_build *b, const char *s)
{
    static const char *const names[] = {"1", "2", NULL};
    int i = name_index(names, s);
    if (i < 0) return "1 or 2";
    b->r.training.fsdp_version = i + 1;
    return NULL;
}

static const char *position_cell(row_build *b, const char *s)
{
    static const char *const names[] = {"rotary", "learned", NULL};
    int i = name_index(names, s);
    if (i < 0) return "learned or rotary";
    b->learned = i;
    return NULL;
}

static const char *limit_cell(row_build *b, const char *s)
{
    static const char *const names[] = {"false", "true", NULL};
    int i = name_index(names, s);
    if (i < 0) return "true or false";
    b->r.training.limit_all_gathers = i ? 2 : 0;
    return NULL;
}

#define B(member) offsetof(row_build, member)
#define M(member) offsetof(row_build, r.model.member)
/* In reading order: the strategy first (it sets the defaults). */
static const col_def cols[] = {
    {.name = "strategy", .required = 1, .kind = C_FN, .fn = strategy_cell},
    {.name = "model", .required = 1, .kind = C_STR, .off = M(name), .size = sizeof(((cs_model *)0)->name)},
    {.name = "layers", .required = 1, .kind = C_INT, .off = M(layers), .lim = CS_LIMIT_LAYERS},
    {.name = "hidden", .required = 1, .kind = C_INT, .off = M(hidden), .lim = CS_LIMIT_HIDDEN},
    {.name = "heads", .required = 1, .kind = C_INT, .off = M(heads), .lim = CS_LIMIT_HEADS},
    {.name = "kv_heads", .kind = C_INT, .off = M(kv_heads), .lim = CS_LIMIT_KV_HEADS},
    {.name = "ffn_hidden", .kind = C_INT, .off = M(ffn_hidden), .lim = CS_LIMIT_FFN_HIDDEN},
    {.name = "gated_mlp", .kind = C_BOOL, .off = B(gated)},
    {.name = "biases", .kind = C_BOOL, .off = B(biases)},
    {.name = "position_embedding", .kind = C_FN, .fn = position_cell},
    {.name = "tied_embeddings", .kind = C_BOOL, .off = B(tied)},
    {.name = "vocab", .required = 1, .kind = C_INT, .off = M(vocab), .lim = CS_LIMIT_VOCAB},
    {.name = "seq_len", .required = 1, .kind = C_INT, .off = M(seq_len), .lim = CS_LIMIT_SEQ_LEN},
    {.name = "params", .kind = C_NUM, .off = B(params)},
    {.name = "gpus", .required = 1, .kind = C_INT, .off = B(r.gpus), .lim = CS_LIMIT_RANKS},
    {.name = "shard_group", .kind = C_INT0, .off = B(r.training.shard_group), .lim = CS_LIMIT_SHARD_GROUP},
    {.name = "precision", .required = 1, .kind = C_FN, .fn = precision_cell},
    {.name = "micro_batch", .required = 1, .kind = C_INT, .off = B(r.training.micro_batch), .lim = CS_LIMIT_MICRO_BATCH},
    {.name = "grad_accum", .required = 1, .kind = C_INT, .off = B(r.training.grad_accum), .lim = CS_LIMIT_GRAD_ACCUM},
    {.name = "activation_checkpointing", .required = 1, .kind = C_FN, .fn = ckpt_cell},
    {.name = "selective_ac", .kind = C_FN, .fn = selective_ac_cell},
    {.name = "attention_kernel", .kind = C_FN, .fn = kernel_cell},
    {.name = "backward_prefetch", .kind = C_FN, .fn = prefetch_cell},
    {.name = "limit_all_gathers", .kind = C_FN, .fn = limit_cell},
    {.name = "fsdp_version", .kind = C_FN, .fn = version_cell},
    {.name = "compile", .kind = C_FN, .fn = compile_cell},
    {.name = "optimizer_in_backward", .kind = C_BOOL, .off = B(r.training.optimizer_in_backward)},
    {.name = "activation_offloading", .kind = C_BOOL, .off = B(r.training.activation_offloading)},
    {.name = "tp", .kind = C_INT, .off = B(r.training.tensor_parallel), .lim = CS_LIMIT_TENSOR_PARALLEL},
    {.name = "sequence_parallel", .kind = C_BOOL, .off = B(r.training.sequence_parallel)},
    {.name = "async_tp", .kind = C_BOOL, .off = B(r.training.async_tp)},
    {.name = "loss_impl", .kind = C_FN, .fn = loss_cell},
    {.name = "train_metrics", .kind = C_INT0, .off = B(r.training.train_metrics), .lim = CS_LIMIT_TRAIN_METRICS},
    {.name = "pp", .kind = C_INT, .off = B(r.training.pipeline_parallel), .lim = CS_LIMIT_PIPELINE_PARALLEL},
    {.name = "virtual_stages", .kind = C_INT, .off = B(r.training.virtual_stages), .lim = CS_LIMIT_VIRTUAL_STAGES},
    {.name = "pipeline_schedule", .kind = C_FN, .fn = pp_schedule_cell},
    {.name = "source_table", .kind = C_STR, .off = B(r.table), .size = sizeof(((cs_trun_row *)0)->table)},
    {.name = "tokens_per_s_per_gpu", .required = 1, .kind = C_NUM, .off = B(r.measured_tps_per_gpu)},
    {.name = "mfu_pct", .kind = C_NUM, .off = B(r.measured_mfu_pct)},
};
#undef B
#undef M
#define NCOLS (sizeof cols / sizeof *cols)

/* ---- reading ---------------------------------------------------------------------- */

typedef cs__meas_fields fields;

typedef struct reader {
    cs_trun_set *s;
    const char *origin;
    cs_diag *d;
    int file, have_header;
    int at[NCOLS]; /* field index of each column, -1 absent */
} reader;

static int fail(const reader *rd, int line, int col, const char *fmt, const char *a, const char *b)
{
    return cs_diag_set(rd->d, CS_ECONFIG, rd->origin, line, col, fmt, a, b);
}

/* Field i of the header names a column field `first` named already. */
static int twice(const reader *rd, int lineno, const fields *f, int i, int first)
{
    char name[64], where[32];
    snprintf(name, sizeof name, "%.*s", f->len[i], f->s[i]);
    snprintf(where, sizeof where, "%d", f->col[first]);
    return fail(rd, lineno, f->col[i], "column '%s' given twice (first at column %s)", name, where);
}

static int header(reader *rd, int lineno, const fields *f)
{
    for (size_t c = 0; c < NCOLS; c++) {
        rd->at[c] = -1;
        for (int i = 0; i < f->n; i++)
            if ((int)strlen(cols[c].name) == f->len[i] &&
                !strncasecmp(f->s[i], cols[c].name, (size_t)f->len[i])) {
                if (rd->at[c] >= 0) /* which would count? (measure_csv.c refuses it too) */
                    return twice(rd, lineno, f, i, rd->at[c]);
                rd->at[c] = i;
            }
        if (rd->at[c] < 0 && cols[c].required)
            return fail(rd, lineno, 1, "the header has no '%s' column (required; the format: %s)",
                        cols[c].name, "docs/training-runs.md");
    }
    rd->have_header = 1;
    return 0;
}

/* Reads one cell of column c (text s) into b; NULL or what was expected
 * (into want[len] when it names a range). */
static const char *cell(const col_def *c, row_build *b, const char *s, char *want, size_t len)
{
    char *p = (char *)b + c->off;
    double v;
    switch (c->kind) {
    case C_FN: return c->fn(b, s);
    case C_STR: snprintf(p, c->size, "%s", s); return NULL;
    case C_BOOL: {
        static const char *const names[] = {"false", "true", NULL};
        int i = name_index(names, s);
        if (i < 0) return "true or false";
        *(int *)p = i;
        return NULL;
    }
    case C_NUM:
        if (cs__meas_parse_num(s, strlen(s), &v) || !(v >= 0)) return "a number >= 0";
        *(double *)p = v;
        return NULL;
    default: {
        /* the model and scenario schemas' range (limits.h); an empty
         * C_INT0 cell never gets here */
        const cs_limit *l = cs_limit_of(c->lim);
        if (cs__meas_parse_num(s, strlen(s), &v) || !cs_limit_holds(l, v)) {
            snprintf(want, len, "an integer in %ld..%ld%s", l->lo, l->hi,
                     c->kind == C_INT0 ? " (or empty)" : "");
            return want;
        }
        *(int *)p = (int)v;
        return NULL;
    }
    }
}

/* The model columns' defaults, as a model YAML's (model.c from_map). */
static int finish_model(const reader *rd, int lineno, row_build *b)
{
    cs_model *m = &b->r.model;
    m->gated_mlp = b->gated > 0;
    if (m->kv_heads == 0) m->kv_heads = m->heads;
    if (m->ffn_hidden == 0) m->ffn_hidden = 4 * m->hidden;
    m->biases = b->biases >= 0 ? b->biases : !m->gated_mlp;
    m->learned_positions = b->learned >= 0 ? b->learned : !m->gated_mlp;
    m->tied_embeddings = b->tied >= 0 ? b->tied : !m->gated_mlp;
    cs_diag td;
    cs_diag_clear(&td);
    if (cs_model_derive(m, &td))
        return fail(rd, lineno, 1, "%s%s", "this row's model shape is not valid: ", td.message);
    if (isfinite(b->params) && b->params != m->params) {
        char msg[128];
        snprintf(msg, sizeof msg, "collsim counts %.0f parameters for this shape, the row says %.0f",
                 m->params, b->params);
        return fail(rd, lineno, b->params_col, "%s%s", msg, " (a column of the shape is wrong)");
    }
    return 0;
}

/* The index in cols of the column named `name` (one of the table's). */
static size_t col_of(const char *name)
{
    for (size_t c = 0; c < NCOLS; c++)
        if (!strcmp(cols[c].name, name)) return c;
    CS_PANIC("training_runs: no column %s", name);
}

static int data_row(reader *rd, int lineno, const fields *f)
{
    row_build b = {.gated = -1, .biases = -1, .learned = -1, .tied = -1, .params = NAN};
    b.r.measured_mfu_pct = NAN;
    b.r.file = rd->file;
    b.r.line = lineno;
    for (size_t c = 0; c < NCOLS; c++) {
        int i = rd->at[c];
        if (i < 0) continue;
        if (i >= f->n || f->len[i] == 0) {
            if (!cols[c].required) continue;
            return fail(rd, lineno, i < f->n ? f->col[i] : 1, "column '%s' is empty%s",
                        cols[c].name, " (required)");
        }
        char text[128];
        snprintf(text, sizeof text, "%.*s", f->len[i], f->s[i]);
        if (cols[c].off == offsetof(row_build, params)) b.params_col = f->col[i];
        if (memchr(f->s[i], 0, (size_t)f->len[i]))
            return fail(rd, lineno, f->col[i], "column '%s': a NUL byte in the cell%s",
                        cols[c].name, "");
        char range[64];
        const char *want = cell(&cols[c], &b, text, range, sizeof range);
        if (want) {
            char msg[256];
            snprintf(msg, sizeof msg, "column '%s': expected %s", cols[c].name, want);
            return fail(rd, lineno, f->col[i], "%s, got '%s'", msg, text);
        }
    }
    if (!(b.r.measured_tps_per_gpu > 0))
        return fail(rd, lineno, 1, "column '%s': expected %s", "tokens_per_s_per_gpu",
                    "a throughput > 0");
    if (b.r.training.optimizer_in_backward && b.r.training.grad_accum > 1) { /* as the scenario key */
        int i = rd->at[col_of("optimizer_in_backward")];
        return fail(rd, lineno, f->col[i], "column '%s': %s", "optimizer_in_backward",
                    "steps each parameter as its gradient is made: needs grad_accum 1");
    }
    int rc = finish_model(rd, lineno, &b);
    if (rc) return rc;
    cs_trun_set *s = rd->s;
    if (s->n >= s->cap) { /* doubling: a row costs O(1) amortised (issue 27) */
        s->cap = s->cap ? 2 * s->cap : 64;
        s->rows = cs_xrealloc(s->rows, s->cap * sizeof *s->rows);
    }
    s->rows[s->n++] = b.r;
    return 0;
}

static int line_fn(void *ud, int lineno, const char *line, size_t ll)
{
    reader *rd = ud;
    size_t i = 0;
    while (i < ll && isspace((unsigned char)line[i])) i++;
    if (i == ll || line[i] == '#') return 0;
    fields f;
    if (cs__meas_split_csv(line, ll, &f)) {
        char n[16];
        snprintf(n, sizeof n, "%d", CS__MEAS_MAX_COLS);
        return fail(rd, lineno, 1, "more than %s columns%s", n, "");
    }
    return rd->have_header ? data_row(rd, lineno, &f) : header(rd, lineno, &f);
}

/* ---- collsim-hw compute's CSV -------------------------------------------------------- */

enum { KC_KIND, KC_DTYPE, KC_M, KC_N, KC_K, KC_BYTES, KC_TIME, KC_KERNEL, KC_COUNT };
static const char *const kcols[KC_COUNT] = {"kind", "dtype", "m", "n", "k", "bytes",
                                            "time_median_us", "kernel"};

/* A number >= lo in field i of f into *v; NULL or what was expected. */
static const char *kernel_num(const fields *f, int i, double lo, double *v)
{
    if (i >= f->n || cs__meas_parse_num(f->s[i], (size_t)f->len[i], v) || !(*v >= lo))
        return lo > 0 ? "a number > 0" : "a number >= 0";
    return NULL;
}

/* Field of column c as text into buf. */
static const char *kernel_text(const reader *rd, const fields *f, int c, char *buf, size_t len)
{
    int at = rd->at[c];
    int ok = at >= 0 && at < f->n;
    snprintf(buf, len, "%.*s", ok ? f->len[at] : 0, ok ? f->s[at] : "");
    return buf;
}

static int kernel_row(reader *rd, int lineno, const fields *f)
{
    cs_kmeas_row k = {.file = rd->file, .line = lineno};
    char text[64];
    int c = KC_KIND;
    const char *want = NULL;
    kernel_text(rd, f, KC_KIND, text, sizeof text);
    k.gemm = !strcasecmp(text, "gemm");
    if (!k.gemm && strcasecmp(text, "copy")) want = "gemm or copy";
    for (int q = 0; q < KC_COUNT && !want; q++) /* a NUL would cut a cell short */
        if (rd->at[q] >= 0 && rd->at[q] < f->n && memchr(f->s[rd->at[q]], 0, (size_t)f->len[rd->at[q]]))
            c = q, want = "no NUL byte in the cell";
    double *dst[] = {&k.m, &k.n, &k.k, &k.bytes, &k.time_us};
    for (int q = KC_M; !want && q <= KC_TIME; q++) {
        int used = q == KC_TIME || (k.gemm ? q != KC_BYTES : q == KC_BYTES);
        c = q;
        want = used ? kernel_num(f, rd->at[q], 1e-300, dst[q - KC_M]) : NULL;
        /* GEMM dimensions: whole numbers in collsim-hw's range (limits.h),
         * so 2 m n k stays finite (1e300 gave a 0 us prediction) */
        if (!want && used && q <= KC_K && !cs_limit_holds(cs_limit_of(CS_LIMIT_GEMM_DIM), *dst[q - KC_M]))
            want = "a whole number in 1..2147483647";
    }
    if (!want && k.gemm && cs_dtype_parse(kernel_text(rd, f, KC_DTYPE, text, sizeof text), &k.dtype))
        c = KC_DTYPE, want = "a GEMM dtype (fp32, bf16, ...)";
    if (want) {
        char msg[128];
        snprintf(msg, sizeof msg, "column '%s': expected %s", kcols[c], want);
        int at = rd->at[c];
        return fail(rd, lineno, at < f->n ? f->col[at] : 1, "%s, got '%s'", msg,
                    kernel_text(rd, f, c, text, sizeof text));
    }
    kernel_text(rd, f, KC_KERNEL, k.kernel, sizeof k.kernel);
    cs_trun_set *s = rd->s;
    if (s->nk >= s->kcap) {
        s->kcap = s->kcap ? 2 * s->kcap : 64;
        s->kernels = cs_xrealloc(s->kernels, s->kcap * sizeof *s->kernels);
    }
    s->kernels[s->nk++] = k;
    return 0;
}

static int kernel_line_fn(void *ud, int lineno, const char *line, size_t ll)
{
    reader *rd = ud;
    size_t i = 0;
    while (i < ll && isspace((unsigned char)line[i])) i++;
    if (i == ll || line[i] == '#') return 0;
    fields f;
    if (cs__meas_split_csv(line, ll, &f)) return fail(rd, lineno, 1, "%s%s", "too many columns", "");
    if (rd->have_header) return kernel_row(rd, lineno, &f);
    for (int c = 0; c < KC_COUNT; c++) {
        rd->at[c] = -1;
        for (int j = 0; j < f.n; j++)
            if ((int)strlen(kcols[c]) == f.len[j] &&
                !strncasecmp(f.s[j], kcols[c], (size_t)f.len[j])) {
                if (rd->at[c] >= 0) return twice(rd, lineno, &f, j, rd->at[c]);
                rd->at[c] = j;
            }
        if (rd->at[c] < 0 && c != KC_KERNEL)
            return fail(rd, lineno, 1, "the header has no '%s' column (collsim-hw compute's CSV: %s)",
                        kcols[c], "hw/cmd_compute.c");
    }
    rd->have_header = 1;
    return 0;
}

/* Reads text line by line through fn (a reader in rd); what a file must
 * hold when it holds nothing is `empty`. */
static int read_text(cs_trun_set *s, const char *origin, const char *text, size_t len,
                     cs__meas_line_fn fn, const char *empty, cs_diag *d)
{
    size_t n0 = s->n, nk0 = s->nk;
    reader rd = {.s = s, .origin = origin, .d = d, .file = (int)s->nfiles};
    int lines = 0, rc = cs__meas_each_line(text, len, fn, &rd, &lines);
    if (!rc && s->n == n0 && s->nk == nk0)
        rc = cs_diag_set(d, CS_ECONFIG, origin, lines, 1, "%s", empty);
    if (rc) {
        s->n = n0;
        s->nk = nk0;
        return rc;
    }
    s->files = realloc(s->files, (s->nfiles + 1) * sizeof *s->files);
    if (!s->files) CS_PANIC("out of memory");
    snprintf(s->files[s->nfiles++], sizeof *s->files, "%s", origin);
    return 0;
}

int cs_training_runs_read_string(cs_trun_set *s, const char *origin, const char *text, size_t len,
                                 cs_diag *d)
{
    return read_text(s, origin, text, len, line_fn,
                     "no training run: expected a header row naming the columns, then one row "
                     "per run (docs/training-runs.md)", d);
}

int cs_training_runs_read_compute_string(cs_trun_set *s, const char *origin, const char *text,
                                         size_t len, cs_diag *d)
{
    return read_text(s, origin, text, len, kernel_line_fn,
                     "no kernel timing: expected collsim-hw compute's CSV (a header row, then "
                     "gemm / copy rows)", d);
}

typedef int (*string_reader)(cs_trun_set *, const char *, const char *, size_t, cs_diag *);

static int read_path(cs_trun_set *s, const char *path, const char *what, string_reader fn,
                     cs_diag *d)
{
    char *text;
    size_t len;
    int rc = cs_textfile_read(path, what, &text, &len, d);
    if (rc) return rc;
    rc = fn(s, path, text, len, d);
    free(text);
    return rc;
}

int cs_training_runs_read(cs_trun_set *s, const char *path, cs_diag *d)
{
    return read_path(s, path, "training runs", cs_training_runs_read_string, d);
}

int cs_training_runs_read_compute(cs_trun_set *s, const char *path, cs_diag *d)
{
    return read_path(s, path, "compute measurements", cs_training_runs_read_compute_string, d);
}

void cs_training_runs_free(cs_trun_set *s)
{
    free(s->rows);
    free(s->kernels);
    free(s->files);
    memset(s, 0, sizeof *s);
}
