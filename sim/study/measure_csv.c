/* SPDX-License-Identifier: MIT */
/*
 * measure_csv.c - CSV measurements naming their columns -> measurement rows.
 *
 * CSV files name their columns in a header row (any order), so one reader
 * serves the reference data (shared/data/nccl-tests, op and ranks in "#"
 * header lines), summary tables with busbw only, and collsim-hw output
 * (the `collsim collective --format csv` columns plus time_median_us and
 * friends; the median is taken, as the issue asks for noisy CPU timings).
 * The columns the reader knows are one table (col_names); so are the
 * "# key: value" header lines (comment_keys) and the steps that read a
 * row (row_steps), each reporting the first bad cell at file:line:column.
 * Cost: O(file size).
 */
#include "study/measure.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/units.h"
#include "study/measure_parse.h"

typedef cs__meas_fields csv_fields;
#define split_csv cs__meas_split_csv

static int field_is(const csv_fields *f, int i, const char *w)
{
    return w && (int)strlen(w) == f->len[i] && !strncasecmp(f->s[i], w, (size_t)f->len[i]);
}

/* ---- the columns ------------------------------------------------------------------ */

enum { K_OP, K_RANKS, K_NODES, K_ALGO, K_PROTO, K_SIZE, K_TIME, K_TMED, K_BUSBW, K_BACKEND, K_N };

/* Column names, case-insensitive: the name and an alias. */
static const char *const col_names[K_N][2] = {
    [K_OP] = {"op", "collective"},     [K_RANKS] = {"ranks", NULL},
    [K_NODES] = {"nodes", NULL},       [K_ALGO] = {"algo", "algorithm"},
    [K_PROTO] = {"proto", "protocol"}, [K_SIZE] = {"size_bytes", NULL},
    [K_TIME] = {"time_us", NULL},      [K_TMED] = {"time_median_us", NULL},
    [K_BUSBW] = {"busbw_GBps", NULL},  [K_BACKEND] = {"backend", NULL},
};

/* What one reading of a CSV carries from line to line. */
typedef struct csv_reader {
    cs_meas_set *s;
    const char *origin;
    cs_diag *d;
    int lineno, have_header, header_line, ncols;
    int col[K_N];               /* field index of each known column, -1 if absent */
    int h_op, h_ranks, h_nodes; /* from "# collective:" / "# ranks:" / "# nodes:" */
    int gpp;                    /* nccl-tests -g N in a header comment */
    char hardware[256];
    int ds;
} csv_reader;

static int fail_at(const csv_reader *rd, int column, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(const csv_reader *rd, int column, const char *fmt, ...)
{
    char msg[sizeof rd->d->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_diag_set(rd->d, CS_ECONFIG, rd->origin, rd->lineno, column, "%s", msg);
}

/* ---- "# key: value" header lines ---------------------------------------------------- */

/* "# key: value" -> value (trimmed) if the comment is that key. */
static int comment_value(const char *line, size_t len, const char *key, const char **v,
                         size_t *vlen)
{
    size_t i = 1;
    while (i < len && line[i] == ' ') i++;
    size_t kl = strlen(key);
    if (len - i < kl + 1 || strncasecmp(line + i, key, kl) || line[i + kl] != ':') return 0;
    i += kl + 1;
    while (i < len && isspace((unsigned char)line[i])) i++;
    size_t e = len;
    while (e > i && isspace((unsigned char)line[e - 1])) e--;
    *v = line + i;
    *vlen = e - i;
    return 1;
}

/* The integer that leads s[0, len) ("8", "8 GPUs"), in 1..max. */
static int leading_int(const char *s, size_t len, long long max, int *out)
{
    size_t k = 0;
    while (k < len && isdigit((unsigned char)s[k])) k++;
    long long v;
    if (k == 0 || cs_units_parse_int(s, k, 1, max, &v)) return -1;
    *out = (int)v;
    return 0;
}

/* Each reads the value v (at 1-based column col) of its header line. */
static int h_collective(csv_reader *rd, const char *v, size_t vl, int col)
{
    char w[32];
    snprintf(w, sizeof w, "%.*s", (int)(vl < 31 ? vl : 31), v);
    cs_op op;
    if (cs_op_parse(w, &op))
        return fail_at(rd, col, "unknown collective '%s' (expected all_reduce, all_gather, "
                                "reduce_scatter, broadcast or reduce)", w);
    rd->h_op = (int)op;
    return 0;
}

static int h_ranks(csv_reader *rd, const char *v, size_t vl, int col)
{
    if (leading_int(v, vl, CS_MEAS_RANKS_MAX, &rd->h_ranks))
        return fail_at(rd, col, "'# ranks:' expects an integer in 1..%d", CS_MEAS_RANKS_MAX);
    return 0;
}

static int h_nodes(csv_reader *rd, const char *v, size_t vl, int col)
{
    if (leading_int(v, vl, CS_MEAS_RANKS_MAX, &rd->h_nodes))
        return fail_at(rd, col, "'# nodes:' expects an integer in 1..%d", CS_MEAS_RANKS_MAX);
    return 0;
}

static int h_hardware(csv_reader *rd, const char *v, size_t vl, int col)
{
    (void)col;
    if (!rd->hardware[0]) snprintf(rd->hardware, sizeof rd->hardware, "%.*s", (int)vl, v);
    return 0;
}

static const struct {
    const char *key;
    int (*read)(csv_reader *rd, const char *v, size_t vl, int col);
} comment_keys[] = {
    {"collective", h_collective},
    {"ranks", h_ranks},
    {"nodes", h_nodes},
    {"hardware", h_hardware},
};

/* A '#' line at line + lead: header keys, and nccl-tests' "-g N". */
static int comment_line(csv_reader *rd, const char *line, size_t lead, size_t ll)
{
    const char *c = line + lead, *v;
    size_t cl = ll - lead, vl;
    for (size_t k = 0; k < sizeof comment_keys / sizeof comment_keys[0]; k++)
        if (comment_value(c, cl, comment_keys[k].key, &v, &vl)) {
            int rc = comment_keys[k].read(rd, v, vl, (int)(v - line) + 1);
            if (rc) return rc;
            break;
        }
    const char *g = cs__meas_find_sub(c, cl, " -g ", 4);
    size_t gl = g ? cl - (size_t)(g + 4 - c) : 0;
    if (gl && isdigit((unsigned char)g[4]) && leading_int(g + 4, gl, 1024, &rd->gpp))
        return fail_at(rd, (int)(g + 4 - line) + 1, "-g expects an integer in 1..1024");
    return 0;
}

/* ---- the header row ------------------------------------------------------------------ */

/* Known columns by field; a column named twice (time_us,time_us, or a
 * name and its alias: op,collective) is refused: which would count? */
static int header_row(csv_reader *rd, const csv_fields *f)
{
    for (int i = 0; i < f->n; i++)
        for (int k = 0; k < K_N; k++) {
            if (!field_is(f, i, col_names[k][0]) && !field_is(f, i, col_names[k][1])) continue;
            if (rd->col[k] >= 0)
                return fail_at(rd, f->col[i], "column '%.*s' given twice (first at column %d)",
                               f->len[i], f->s[i], f->col[rd->col[k]]);
            rd->col[k] = i;
        }
    const int *col = rd->col;
    if (col[K_SIZE] < 0 || (col[K_TIME] < 0 && col[K_TMED] < 0 && col[K_BUSBW] < 0))
        return fail_at(rd, 1, "expected a header row naming the columns, with size_bytes and "
                              "time_us (or time_median_us, or busbw_GBps)");
    rd->have_header = 1;
    rd->header_line = rd->lineno;
    rd->ncols = f->n;
    int hw = col[K_TMED] >= 0 || col[K_BACKEND] >= 0;
    rd->ds = cs__meas_add_dataset(rd->s, rd->origin, hw ? "collsim-hw" : "csv", 1);
    return 0;
}

/* ---- data rows ----------------------------------------------------------------------- */

/* A row step returns 0 (go on), ROW_SKIP (no measurement in this row) or
 * an error. */
#define ROW_SKIP 1

/* Column k is present and its cell non-empty. */
static int has(const csv_reader *rd, const csv_fields *f, int k)
{
    return rd->col[k] >= 0 && f->len[rd->col[k]] > 0;
}

/* Cell k as a string in w[64] (truncated). */
static const char *cell(const csv_reader *rd, const csv_fields *f, int k, char w[64])
{
    int i = rd->col[k];
    snprintf(w, 64, "%.*s", f->len[i] < 63 ? f->len[i] : 63, f->s[i]);
    return w;
}

static int cell_num(const csv_reader *rd, const csv_fields *f, int k, double *v)
{
    return cs__meas_parse_num(f->s[rd->col[k]], (size_t)f->len[rd->col[k]], v);
}

/* The message for a bad cell k, at its column. */
#define BAD(k, ...) fail_at(rd, f->col[rd->col[k]], __VA_ARGS__)

static int row_op(csv_reader *rd, const csv_fields *f, cs_meas_row *r)
{
    char w[64];
    if (rd->col[K_OP] >= 0) {
        cs_op op;
        if (cs_op_parse(cell(rd, f, K_OP, w), &op))
            return BAD(K_OP, "unknown op '%s' (expected all_reduce, all_gather, reduce_scatter, "
                             "broadcast or reduce)", w);
        r->op = op;
    } else if (rd->h_op < 0)
        return fail_at(rd, 1, "which collective? add an 'op' column or a '# collective:' line");
    return 0;
}

static int row_counts(csv_reader *rd, const csv_fields *f, cs_meas_row *r)
{
    static const struct {
        int k, empty_ok;
        double max;
        size_t off;
    } counts[] = {{K_RANKS, 0, CS_MEAS_RANKS_MAX, offsetof(cs_meas_row, ranks)},
                  {K_NODES, 1, CS_MEAS_RANKS_MAX, offsetof(cs_meas_row, nodes)}};
    char w[64];
    for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++) {
        int k = counts[j].k;
        double v;
        if (rd->col[k] < 0 || (counts[j].empty_ok && !has(rd, f, k))) continue;
        if (cell_num(rd, f, k, &v) || v < 1 || v > counts[j].max || v != floor(v))
            return BAD(k, "%s must be a positive integer, got '%s'", col_names[k][0],
                       cell(rd, f, k, w));
        *(int *)((char *)r + counts[j].off) = (int)v;
    }
    if (r->ranks < 1)
        return fail_at(rd, 1, "how many ranks? add a 'ranks' column or a '# ranks:' line");
    if (r->nodes > r->ranks)
        return fail_at(rd, 1, "%d ranks cannot fill %d nodes", r->ranks, r->nodes);
    return 0;
}

static int row_size(csv_reader *rd, const csv_fields *f, cs_meas_row *r)
{
    char w[64];
    if (cell_num(rd, f, K_SIZE, &r->size_bytes) || r->size_bytes < 0)
        return BAD(K_SIZE, "size_bytes must be a number >= 0, got '%s'", cell(rd, f, K_SIZE, w));
    return r->size_bytes == 0 ? ROW_SKIP : 0;
}

/* The median time, else the time, else the time busbw implies. */
static int row_time(csv_reader *rd, const csv_fields *f, cs_meas_row *r)
{
    char w[64];
    int tk = has(rd, f, K_TMED) ? K_TMED : has(rd, f, K_TIME) ? K_TIME : -1;
    if (tk >= 0) {
        if (cell_num(rd, f, tk, &r->time_us) || !(r->time_us > 0))
            return BAD(tk, "%s must be a number > 0, got '%s'", col_names[tk][0],
                       cell(rd, f, tk, w));
        return 0;
    }
    if (rd->col[K_BUSBW] < 0) return fail_at(rd, 1, "row has no time");
    if (!has(rd, f, K_BUSBW)) return ROW_SKIP; /* "not run" cell of a summary table */
    double v;
    if (cell_num(rd, f, K_BUSBW, &v) || !(v > 0))
        return BAD(K_BUSBW, "busbw_GBps must be a number > 0, got '%s'",
                   cell(rd, f, K_BUSBW, w));
    double factor = cs_op_busbw_factor(r->op, r->ranks);
    if (!(factor > 0))
        return BAD(K_BUSBW, "busbw of %s on 1 rank does not give a time", cs_op_name(r->op));
    r->time_us = r->size_bytes * factor / (v * 1e9) * 1e6;
    return 0;
}

/* Algorithm and protocol columns; an empty, "auto", "-" or "default"
 * algorithm is the library's choice, an unknown one is not modelled. */
static int row_choice(csv_reader *rd, const csv_fields *f, cs_meas_row *r)
{
    char w[64];
    if (rd->col[K_ALGO] >= 0) {
        cell(rd, f, K_ALGO, w);
        cs_algo_id a;
        if (!w[0] || !strcasecmp(w, "auto") || !strcmp(w, "-") || !strcasecmp(w, "default"))
            r->algo = CS_CHOICE_AUTO;
        else if (cs_algo_parse(w, &a) == 0) r->algo = a;
        else r->algo = CS_MEAS_ALGO_OTHER;
        snprintf(r->algo_name, sizeof r->algo_name, "%.23s", w);
    }
    cs_proto p;
    if (rd->col[K_PROTO] >= 0 && cs_proto_parse(cell(rd, f, K_PROTO, w), &p) == 0) r->proto = p;
    return 0;
}

#undef BAD

/* In order: the first failing step names the error. */
static int (*const row_steps[])(csv_reader *, const csv_fields *, cs_meas_row *) = {
    row_op, row_counts, row_size, row_time, row_choice,
};

static int data_row(csv_reader *rd, const csv_fields *f)
{
    if (f->n != rd->ncols)
        return fail_at(rd, 1, "row has %d fields, the header (line %d) has %d", f->n,
                       rd->header_line, rd->ncols);
    cs_meas_row r = {.algo = CS_CHOICE_AUTO, .proto = CS_CHOICE_AUTO, .dataset = rd->ds,
                     .line = rd->lineno, .op = (cs_op)rd->h_op, .ranks = rd->h_ranks,
                     .nodes = rd->h_nodes};
    for (size_t j = 0; j < sizeof row_steps / sizeof row_steps[0]; j++) {
        int rc = row_steps[j](rd, f, &r);
        if (rc == ROW_SKIP) return 0;
        if (rc) return rc;
    }
    *cs__meas_add_row(rd->s) = r;
    return 0;
}

/* ---- the file --------------------------------------------------------------------------- */

static int csv_line(void *ud, int lineno, const char *line, size_t ll)
{
    csv_reader *rd = ud;
    rd->lineno = lineno;
    size_t lead = 0;
    while (lead < ll && isspace((unsigned char)line[lead])) lead++;
    if (lead == ll) return 0;
    if (line[lead] == '#') return comment_line(rd, line, lead, ll);
    csv_fields f;
    if (split_csv(line, ll, &f)) return fail_at(rd, 1, "more than %d columns", CS__MEAS_MAX_COLS);
    return rd->have_header ? data_row(rd, &f) : header_row(rd, &f);
}

/* After the rows: the dataset's header facts, and a forced algorithm /
 * protocol (NCCL_ALGO= / NCCL_PROTO= anywhere) for rows without a column. */
static void csv_finish(csv_reader *rd, size_t n0, const char *text, size_t len)
{
    cs__meas_forced fo;
    cs__meas_forced_in(text, len, &fo);
    for (size_t i = n0; i < rd->s->n; i++) {
        cs_meas_row *r = &rd->s->rows[i];
        if (rd->col[K_ALGO] < 0) {
            r->algo = fo.algo;
            snprintf(r->algo_name, sizeof r->algo_name, "%s", fo.algo_name);
        }
        if (rd->col[K_PROTO] < 0) r->proto = fo.proto;
    }
    cs_meas_dataset *ds = &rd->s->datasets[rd->ds];
    snprintf(ds->hardware, sizeof ds->hardware, "%s", rd->hardware);
    ds->gpus_per_process = rd->gpp;
}

int cs_meas_read_csv_string(cs_meas_set *s, const char *origin, const char *text, size_t len,
                            cs_diag *d)
{
    size_t n0 = s->n, nd0 = s->ndatasets;
    csv_reader rd = {.s = s, .origin = origin, .d = d, .h_op = -1, .ds = -1};
    for (int k = 0; k < K_N; k++) rd.col[k] = -1;
    int lines, rc = cs__meas_each_line(text, len, csv_line, &rd, &lines);
    if (!rc && !rd.have_header) {
        rd.lineno = lines > 0 ? lines : 1;
        rc = fail_at(&rd, 1, "no header row (expected column names such as size_bytes,time_us)");
    }
    if (!rc && s->n == n0) {
        rd.lineno = rd.header_line;
        rc = fail_at(&rd, 1, "no measurement rows");
    }
    if (rc) {
        cs__meas_truncate(s, n0, nd0);
        return rc;
    }
    csv_finish(&rd, n0, text, len);
    return 0;
}

int cs_meas_read_csv(cs_meas_set *s, const char *path, cs_diag *d)
{
    return cs__meas_read_file(s, path, cs_meas_read_csv_string, d);
}
