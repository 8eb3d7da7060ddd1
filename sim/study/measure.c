/* SPDX-License-Identifier: MIT */
/*
 * measure.c - readers for measured collective timings.
 *
 * nccl-tests (github.com/NVIDIA/nccl-tests, src/common.cu) prints one table
 * per run whose header names its columns; the layout changed over the
 * years (2.0: size count type [redop] time algbw busbw error, twice;
 * 2.10+: size count type redop root time algbw busbw #wrong, twice), so
 * the reader locates the columns by name in the "#  size  count ..."
 * header and takes the first (out-of-place) time. Launchers prefix lines
 * ("0: " from srun --label, "[1,0]<stdout>:" from mpirun --tag-output):
 * a data row is a line whose first plain integer is followed by a count
 * and a type name; everything else (NCCL INFO lines, warnings) is noise.
 * Once a line is recognised as a row, every number in it must parse, or
 * the reader stops with file:line:column.
 *
 * CSV files name their columns in a header row (any order), so one reader
 * serves the reference data (shared/data/nccl-tests, op and ranks in "#"
 * header lines), summary tables with busbw only, and collsim-hw output
 * (the `collsim collective --format csv` columns plus time_median_us and
 * friends; the median is taken, as the issue asks for noisy CPU timings).
 *
 * Both readers append to a set and roll back everything they appended on
 * error, so a caller can keep reading other files after reporting one.
 * Cost: O(file size); hosts are deduplicated in O(ranks^2), fine for the
 * few thousand ranks a log lists.
 */
#include "base/textfile.h"
#include "study/measure.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- set management ------------------------------------------------------ */

void cs_meas_free(cs_meas_set *s)
{
    free(s->rows);
    free(s->datasets);
    *s = (cs_meas_set){0};
}

static cs_meas_row *add_row(cs_meas_set *s)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->rows = cs_xrealloc(s->rows, s->cap * sizeof *s->rows);
    }
    cs_meas_row *r = &s->rows[s->n++];
    memset(r, 0, sizeof *r);
    r->algo = CS_CHOICE_AUTO;
    r->proto = CS_CHOICE_AUTO;
    return r;
}

static int add_dataset(cs_meas_set *s, const char *origin, const char *kind, int table)
{
    if (s->ndatasets == s->dcap) {
        s->dcap = s->dcap ? 2 * s->dcap : 8;
        s->datasets = cs_xrealloc(s->datasets, s->dcap * sizeof *s->datasets);
    }
    cs_meas_dataset *ds = &s->datasets[s->ndatasets];
    memset(ds, 0, sizeof *ds);
    const char *base = strrchr(origin, '/');
    base = base ? base + 1 : origin;
    char stem[128];
    snprintf(stem, sizeof stem, "%s", base);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = 0;
    if (table > 1)
        snprintf(ds->name, sizeof ds->name, "%.100s#%d", stem, table);
    else
        snprintf(ds->name, sizeof ds->name, "%s", stem);
    snprintf(ds->source, sizeof ds->source, "%s", origin);
    snprintf(ds->kind, sizeof ds->kind, "%s", kind);
    return (int)s->ndatasets++;
}

/* ---- small text helpers -------------------------------------------------- */


/* memmem is not POSIX. */
static const char *find_sub(const char *hay, size_t n, const char *needle, size_t m)
{
    for (size_t i = 0; m <= n && i + m <= n; i++)
        if (!memcmp(hay + i, needle, m)) return hay + i;
    return NULL;
}

#define MAX_TOK 64

typedef struct tokens {
    int n;
    const char *s[MAX_TOK];
    int len[MAX_TOK];
    int col[MAX_TOK]; /* 1-based column of each token */
} tokens;

/* Splits a line (not NUL-terminated) at blanks; at most MAX_TOK tokens. */
static void tokenize(const char *line, size_t len, tokens *t)
{
    t->n = 0;
    size_t i = 0;
    while (i < len && t->n < MAX_TOK) {
        while (i < len && isspace((unsigned char)line[i])) i++;
        if (i >= len) break;
        size_t b = i;
        while (i < len && !isspace((unsigned char)line[i])) i++;
        t->s[t->n] = line + b;
        t->len[t->n] = (int)(i - b);
        t->col[t->n] = (int)b + 1;
        t->n++;
    }
}

static int tok_eq(const tokens *t, int i, const char *w)
{
    return (int)strlen(w) == t->len[i] && !strncasecmp(t->s[i], w, (size_t)t->len[i]);
}

static void tok_copy(const tokens *t, int i, char *buf, size_t n)
{
    snprintf(buf, n, "%.*s", t->len[i], t->s[i]);
}

static int tok_is_uint(const tokens *t, int i)
{
    if (t->len[i] == 0 || t->len[i] > 20) return 0;
    for (int k = 0; k < t->len[i]; k++)
        if (!isdigit((unsigned char)t->s[i][k])) return 0;
    return 1;
}

/* A finite number filling the whole token/field. */
static int parse_num(const char *s, size_t len, double *v)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    double x = strtod(buf, &end);
    if (*end || errno == ERANGE || !isfinite(x)) return -1;
    *v = x;
    return 0;
}

/* Finds the algorithm / protocol a text forces: "NCCL_ALGO=Ring",
 * "NCCL_ALGO set by environment to Ring" (NCCL_DEBUG=INFO). Lists and
 * exclusions ("Ring,Tree", "^NVLS") leave the choice to the library. */
static void env_choice(const char *text, size_t len, const char *var, int *algo, int *proto,
                       char *name, size_t namelen)
{
    size_t vl = strlen(var);
    for (size_t i = 0; i + vl < len; i++) {
        if (strncmp(text + i, var, vl)) continue;
        size_t j = i + vl;
        if (j < len && text[j] == '=') j++;
        else if (len - j > 24 && !strncmp(text + j, " set by environment to ", 23)) j += 23;
        else continue;
        char w[32];
        size_t k = 0;
        while (j < len && k + 1 < sizeof w && (isalnum((unsigned char)text[j]) || text[j] == '_'))
            w[k++] = text[j++];
        w[k] = 0;
        if (!k || (j < len && (text[j] == ',' || text[j] == '^'))) continue;
        if (algo) {
            cs_algo_id a;
            if (cs_algo_parse(w, &a) == 0) *algo = a;
            else *algo = CS_MEAS_ALGO_OTHER;
            if (name) snprintf(name, namelen, "%.23s", w);
        } else {
            cs_proto p;
            if (cs_proto_parse(w, &p) == 0) *proto = p;
        }
        return;
    }
}

/* The op named by "X_perf" at text[i] (i = start of "_perf"); -1 if none,
 * -2 for an nccl-tests binary collsim does not model (alltoall, ...). */
static int op_before_perf(const char *text, size_t i)
{
    size_t b = i;
    while (b > 0 && (isalpha((unsigned char)text[b - 1]) || text[b - 1] == '_')) b--;
    char w[32];
    if (i - b == 0 || i - b >= sizeof w) return -1;
    memcpy(w, text + b, i - b);
    w[i - b] = 0;
    cs_op op;
    if (cs_op_parse(w, &op) == 0) return (int)op;
    static const char *const other[] = {"alltoall", "sendrecv", "scatter", "gather", "hypercube"};
    for (size_t k = 0; k < sizeof other / sizeof other[0]; k++)
        if (!strcasecmp(w, other[k])) return -2;
    return -1;
}

/* First "X_perf" in text[from, to): op or -1 / -2 as above. */
static int find_perf(const char *text, size_t from, size_t to)
{
    for (size_t i = from; i + 5 <= to; i++)
        if (!strncmp(text + i, "_perf", 5)) {
            int op = op_before_perf(text, i);
            if (op != -1) return op;
        }
    return -1;
}

/* Op from a file name: all_reduce, allreduce, all-reduce, ... */
static int op_from_name(const char *origin)
{
    const char *base = strrchr(origin, '/');
    base = base ? base + 1 : origin;
    char flat[256];
    size_t k = 0;
    for (const char *p = base; *p && k + 1 < sizeof flat; p++)
        if (*p != '_' && *p != '-') flat[k++] = (char)tolower((unsigned char)*p);
    flat[k] = 0;
    static const struct { const char *w; cs_op op; } names[] = {
        {"allreduce", CS_OP_ALL_REDUCE}, {"allgather", CS_OP_ALL_GATHER},
        {"reducescatter", CS_OP_REDUCE_SCATTER}, {"broadcast", CS_OP_BROADCAST},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strstr(flat, names[i].w)) return (int)names[i].op;
    return -1;
}

/* Rank count implied by busbw / algbw (nccl-tests factors); 0 if the
 * ratio does not determine it (broadcast, reduce, tiny bandwidths). */
static int ranks_from_ratio(cs_op op, double algbw, double busbw)
{
    if (!(algbw >= 1.0) || !(busbw > 0)) return 0;
    double r = busbw / algbw, n;
    if (op == CS_OP_ALL_REDUCE) n = r < 2.0 ? 2.0 / (2.0 - r) : 0;
    else if (op == CS_OP_ALL_GATHER || op == CS_OP_REDUCE_SCATTER) n = r < 1.0 ? 1.0 / (1.0 - r) : 0;
    else return 0;
    if (!(n >= 1.0) || n > 1e6) return 0;
    long k = lround(n);
    /* algbw / busbw carry 2 decimals: accept a 1% mismatch */
    if (fabs(cs_op_busbw_factor(op, (int)k) - r) > 0.01 * r + 0.01 / algbw) return 0;
    return (int)k;
}

/* ---- nccl-tests logs ------------------------------------------------------ */

typedef struct log_table {
    int ds;            /* dataset index, -1 before the first header */
    int op;            /* -1 unknown */
    int header_line;
    int ncols;
    int c_size, c_count, c_type, c_time, c_algbw, c_busbw;
    size_t first_row;  /* index of this table's first row in the set */
    double ratio_algbw, ratio_busbw; /* largest row's bandwidths */
} log_table;

typedef struct log_ranks {
    int count, max_rank;
    char (*hosts)[64];
    int nhosts, hcap;
    long pids[8];
    int npids;
    char gpu[96];
    int gpus_per_process;
} log_ranks;

static void ranks_reset(log_ranks *r)
{
    free(r->hosts);
    memset(r, 0, sizeof *r);
    r->max_rank = -1;
}

/* "#  Rank  0 Group  0 Pid 123 on host device  0 [0x07] NVIDIA H100 ..." */
static void ranks_line(log_ranks *r, const char *line, size_t len, const tokens *t, int k)
{
    /* t->s[k] is "Rank" */
    if (k + 1 >= t->n || !tok_is_uint(t, k + 1)) return;
    int rank = atoi(t->s[k + 1]);
    r->count++;
    if (rank > r->max_rank) r->max_rank = rank;
    for (int i = k + 2; i + 1 < t->n; i++) {
        if (tok_eq(t, i, "Pid") && r->npids < 8) {
            long pid = strtol(t->s[i + 1], NULL, 10);
            int seen = 0;
            for (int p = 0; p < r->npids; p++) seen |= r->pids[p] == pid;
            if (!seen) r->pids[r->npids++] = pid;
        }
        if (tok_eq(t, i, "on")) {
            char host[64];
            tok_copy(t, i + 1, host, sizeof host);
            int seen = 0;
            for (int h = 0; h < r->nhosts && !seen; h++) seen = !strcmp(r->hosts[h], host);
            if (!seen) {
                if (r->nhosts == r->hcap)
                    r->hosts = cs_xrealloc(r->hosts, (size_t)(r->hcap = r->hcap ? 2 * r->hcap : 16) *
                                                         sizeof *r->hosts);
                snprintf(r->hosts[r->nhosts++], 64, "%s", host);
            }
            break;
        }
    }
    const char *br = memchr(line, ']', len);
    if (br && !r->gpu[0]) {
        const char *e = line + len;
        br++;
        while (br < e && isspace((unsigned char)*br)) br++;
        while (e > br && isspace((unsigned char)e[-1])) e--;
        snprintf(r->gpu, sizeof r->gpu, "%.*s", (int)(e - br), br);
    }
}

/* Closes a table: fills op, ranks, nodes of its rows. */
static int finish_table(cs_meas_set *s, const char *origin, log_table *tb, log_ranks *rk,
                        const char *text, size_t len, cs_diag *d)
{
    if (tb->ds < 0) return 0;
    if (s->n == tb->first_row)
        return cs_diag_set(d, CS_ECONFIG, origin, tb->header_line, 1,
                           "nccl-tests table without result rows");
    int op = tb->op;
    if (op == -1) op = op_from_name(origin);
    if (op == -1) op = find_perf(text, 0, len);
    if (op == -1)
        return cs_diag_set(d, CS_ECONFIG, origin, tb->header_line, 1,
                           "cannot tell which collective this table measures: no 'Collective "
                           "test starting:' line, no *_perf command and no op in the file name");
    if (op == -2)
        return cs_diag_set(d, CS_ECONFIG, origin, tb->header_line, 1,
                           "this table measures a collective collsim does not model (only "
                           "all_reduce, all_gather, reduce_scatter, broadcast and reduce)");
    int ranks = rk->count > 0 ? (rk->max_rank + 1 > rk->count ? rk->max_rank + 1 : rk->count) : 0;
    int nodes = rk->count > 0 ? rk->nhosts : 0;
    if (!ranks) ranks = ranks_from_ratio((cs_op)op, tb->ratio_algbw, tb->ratio_busbw);
    if (!ranks)
        return cs_diag_set(d, CS_ECONFIG, origin, tb->header_line, 1,
                           "cannot tell the rank count: no '#  Rank N ... on HOST device' lines "
                           "and busbw/algbw does not imply one");
    if (nodes > ranks) nodes = 0;
    cs_meas_dataset *ds = &s->datasets[tb->ds];
    if (rk->gpu[0])
        snprintf(ds->hardware, sizeof ds->hardware, "%d x %.96s on %d host%s", ranks, rk->gpu,
                 nodes, nodes == 1 ? "" : "s");
    ds->gpus_per_process = rk->gpus_per_process;
    if (!ds->gpus_per_process && rk->npids > 0 && rk->npids < 8 && rk->count > rk->npids)
        ds->gpus_per_process = rk->count / rk->npids;
    int algo = CS_CHOICE_AUTO, proto = CS_CHOICE_AUTO;
    char aname[24] = "";
    env_choice(text, len, "NCCL_ALGO", &algo, NULL, aname, sizeof aname);
    env_choice(text, len, "NCCL_PROTO", NULL, &proto, NULL, 0);
    for (size_t i = tb->first_row; i < s->n; i++) {
        cs_meas_row *r = &s->rows[i];
        r->op = (cs_op)op;
        r->ranks = ranks;
        r->nodes = nodes;
        r->algo = algo;
        r->proto = proto;
        snprintf(r->algo_name, sizeof r->algo_name, "%s", aname);
    }
    return 0;
}

static int table_header(const tokens *t, log_table *tb)
{
    int k = -1;
    for (int i = 1; i < t->n; i++)
        if (tok_eq(t, i, "size") && t->s[i - 1][t->len[i - 1] - 1] == '#') {
            k = i;
            break;
        }
    if (k < 0) return 0;
    tb->c_size = tb->c_count = tb->c_type = tb->c_time = tb->c_algbw = tb->c_busbw = -1;
    for (int i = k; i < t->n; i++) {
        int c = i - k;
        if (tok_eq(t, i, "count") && tb->c_count < 0) tb->c_count = c;
        else if (tok_eq(t, i, "type") && tb->c_type < 0) tb->c_type = c;
        else if (tok_eq(t, i, "time") && tb->c_time < 0) tb->c_time = c;
        else if (tok_eq(t, i, "algbw") && tb->c_algbw < 0) tb->c_algbw = c;
        else if (tok_eq(t, i, "busbw") && tb->c_busbw < 0) tb->c_busbw = c;
    }
    tb->c_size = 0;
    tb->ncols = t->n - k;
    return tb->c_count == 1 && tb->c_type == 2 && tb->c_time > 2 && tb->c_algbw > tb->c_time &&
           tb->c_busbw > tb->c_algbw;
}

static int is_type_name(const tokens *t, int i)
{
    if (!t->len[i] || !isalpha((unsigned char)t->s[i][0])) return 0;
    for (int k = 0; k < t->len[i]; k++)
        if (!isalnum((unsigned char)t->s[i][k]) && t->s[i][k] != '_') return 0;
    return 1;
}

int cs_meas_read_nccl_tests_string(cs_meas_set *s, const char *origin, const char *text,
                                   size_t len, cs_diag *d)
{
    size_t n0 = s->n, nd0 = s->ndatasets;
    log_table tb = {.ds = -1, .op = -1};
    log_ranks rk = {0};
    ranks_reset(&rk);
    int op_hint = -1, tables = 0, rc = 0, lineno = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + (nl ? 1 : 0);
        lineno++;
        if (ll && line[ll - 1] == '\r') ll--;
        tokens t;
        tokenize(line, ll, &t);
        if (!t.n) continue;
        /* metadata lines (any prefix) */
        const char *cts = find_sub(line, ll, "Collective test starting:", 25);
        if (cts) {
            size_t off = (size_t)(cts - line);
            int op = find_perf(line, off, ll);
            if (op != -1) op_hint = op;
        } else {
            const char *pf = find_sub(line, ll, "_perf", 5);
            if (pf && tb.ds < 0) {
                int op = find_perf(line, 0, ll);
                if (op != -1) op_hint = op;
            }
        }
        int k = -1;
        for (int i = 0; i + 1 < t.n && k < 0; i++)
            if (tok_eq(&t, i, "Rank") && i > 0 && t.s[i - 1][t.len[i - 1] - 1] == '#') k = i;
        if (k >= 0) {
            if (tb.ds >= 0 && s->n > tb.first_row) { /* a new run's device list */
                if ((rc = finish_table(s, origin, &tb, &rk, text, len, d))) goto fail;
                tb.ds = -1;
                ranks_reset(&rk);
            }
            ranks_line(&rk, line, ll, &t, k);
            continue;
        }
        for (int i = 0; i + 3 < t.n; i++)
            if (tok_eq(&t, i, "nThread") && tok_eq(&t, i + 2, "nGpus") && tb.ds < 0)
                rk.gpus_per_process = atoi(t.s[i + 1]) * atoi(t.s[i + 3]);
        log_table h = tb;
        if (table_header(&t, &h)) {
            if (tb.ds >= 0) {
                if (s->n == tb.first_row) { /* a repeated header: keep the table */
                    tb.header_line = lineno;
                    continue;
                }
                if ((rc = finish_table(s, origin, &tb, &rk, text, len, d))) goto fail;
            }
            h.ds = add_dataset(s, origin, "nccl-tests", ++tables);
            h.op = op_hint;
            h.header_line = lineno;
            h.first_row = s->n;
            h.ratio_algbw = h.ratio_busbw = 0;
            tb = h;
            continue;
        }
        if (tb.ds < 0) continue;
        /* a data row: first plain integer, then an integer count and a type */
        int b = -1;
        for (int i = 0; i < t.n; i++) {
            if (t.s[i][0] == '#') break;
            if (tok_is_uint(&t, i)) {
                b = i;
                break;
            }
        }
        if (b < 0 || b + 2 >= t.n || !tok_is_uint(&t, b + 1) || !is_type_name(&t, b + 2)) continue;
        if (t.n - b < tb.c_busbw + 1) {
            rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, t.col[t.n - 1],
                             "result row has %d columns, the table header (line %d) needs at "
                             "least %d", t.n - b, tb.header_line, tb.c_busbw + 1);
            goto fail;
        }
        double size, time_us, algbw, busbw;
        int bad = -1;
        if (parse_num(t.s[b], (size_t)t.len[b], &size)) bad = b;
        else if (parse_num(t.s[b + tb.c_time], (size_t)t.len[b + tb.c_time], &time_us) ||
                 !(time_us > 0))
            bad = b + tb.c_time;
        else if (parse_num(t.s[b + tb.c_algbw], (size_t)t.len[b + tb.c_algbw], &algbw))
            bad = b + tb.c_algbw;
        else if (parse_num(t.s[b + tb.c_busbw], (size_t)t.len[b + tb.c_busbw], &busbw))
            bad = b + tb.c_busbw;
        if (bad >= 0) {
            char tok[40];
            tok_copy(&t, bad, tok, sizeof tok);
            const char *what = bad == b ? "size" : bad == b + tb.c_time ? "out-of-place time (us, > 0)"
                             : bad == b + tb.c_algbw ? "algbw" : "busbw";
            rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, t.col[bad],
                             "expected the %s, got '%s'", what, tok);
            goto fail;
        }
        if (size <= 0) continue; /* nccl-tests prints size-0 rows with -b 0 */
        cs_meas_row *r = add_row(s);
        r->size_bytes = size;
        r->time_us = time_us;
        r->dataset = tb.ds;
        r->line = lineno;
        if (algbw >= tb.ratio_algbw) {
            tb.ratio_algbw = algbw;
            tb.ratio_busbw = busbw;
        }
    }
    if (tb.ds < 0) {
        rc = cs_diag_set(d, CS_ECONFIG, origin, 1, 1,
                         "no nccl-tests result table found (expected a '#  size  count  type "
                         "...  time  algbw  busbw' header followed by rows)");
        goto fail;
    }
    if ((rc = finish_table(s, origin, &tb, &rk, text, len, d))) goto fail;
    ranks_reset(&rk);
    return 0;
fail:
    ranks_reset(&rk);
    s->n = n0;
    s->ndatasets = nd0;
    return rc;
}

int cs_meas_read_nccl_tests(cs_meas_set *s, const char *path, cs_diag *d)
{
    char *text;
    size_t len;
    int rc = cs_textfile_read(path, "measurements file", &text, &len, d);
    if (rc) return rc;
    rc = cs_meas_read_nccl_tests_string(s, path, text, len, d);
    free(text);
    return rc;
}

/* ---- CSV ------------------------------------------------------------------ */

#define MAX_COLS 48

typedef struct csv_fields {
    int n;
    const char *s[MAX_COLS];
    int len[MAX_COLS];
    int col[MAX_COLS];
} csv_fields;

/* Splits at commas, trimming blanks; returns -1 if there are too many. */
static int split_csv(const char *line, size_t len, csv_fields *f)
{
    f->n = 0;
    size_t b = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != ',') continue;
        if (f->n == MAX_COLS) return -1;
        size_t x = b, y = i;
        while (x < y && isspace((unsigned char)line[x])) x++;
        while (y > x && isspace((unsigned char)line[y - 1])) y--;
        f->s[f->n] = line + x;
        f->len[f->n] = (int)(y - x);
        f->col[f->n] = (int)x + 1;
        f->n++;
        b = i + 1;
    }
    return 0;
}

static int field_is(const csv_fields *f, int i, const char *w)
{
    return (int)strlen(w) == f->len[i] && !strncasecmp(f->s[i], w, (size_t)f->len[i]);
}

enum { K_OP, K_RANKS, K_NODES, K_ALGO, K_PROTO, K_SIZE, K_TIME, K_TMED, K_BUSBW, K_BACKEND, K_N };

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

static int leading_int(const char *s, size_t len, int *out)
{
    size_t k = 0;
    while (k < len && isdigit((unsigned char)s[k])) k++;
    if (k == 0 || k > 9) return -1;
    *out = atoi(s);
    return 0;
}

int cs_meas_read_csv_string(cs_meas_set *s, const char *origin, const char *text, size_t len,
                            cs_diag *d)
{
    size_t n0 = s->n, nd0 = s->ndatasets;
    int rc = 0, lineno = 0, have_header = 0, header_line = 0, ncols = 0;
    int col[K_N];
    for (int k = 0; k < K_N; k++) col[k] = -1;
    int h_op = -1, h_ranks = 0, h_nodes = 0, gpp = 0;
    char hardware[256] = "";
    int ds = -1;
    size_t pos = 0;
    while (pos < len) {
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + (nl ? 1 : 0);
        lineno++;
        if (ll && line[ll - 1] == '\r') ll--;
        size_t lead = 0;
        while (lead < ll && isspace((unsigned char)line[lead])) lead++;
        if (lead == ll) continue;
        if (line[lead] == '#') {
            const char *v;
            size_t vl;
            const char *c = line + lead;
            size_t cl = ll - lead;
            if (comment_value(c, cl, "collective", &v, &vl)) {
                char w[32];
                snprintf(w, sizeof w, "%.*s", (int)(vl < 31 ? vl : 31), v);
                cs_op op;
                if (cs_op_parse(w, &op)) {
                    rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, (int)(v - line) + 1,
                                     "unknown collective '%s' (expected all_reduce, all_gather, "
                                     "reduce_scatter, broadcast or reduce)", w);
                    goto fail;
                }
                h_op = (int)op;
            } else if (comment_value(c, cl, "ranks", &v, &vl)) {
                if (leading_int(v, vl, &h_ranks) || h_ranks < 1) {
                    rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, (int)(v - line) + 1,
                                     "'# ranks:' expects a positive integer");
                    goto fail;
                }
            } else if (comment_value(c, cl, "nodes", &v, &vl)) {
                if (leading_int(v, vl, &h_nodes) || h_nodes < 1) {
                    rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, (int)(v - line) + 1,
                                     "'# nodes:' expects a positive integer");
                    goto fail;
                }
            } else if (comment_value(c, cl, "hardware", &v, &vl) && !hardware[0]) {
                snprintf(hardware, sizeof hardware, "%.*s", (int)vl, v);
            }
            const char *g = find_sub(c, cl, " -g ", 4);
            if (g && isdigit((unsigned char)g[4])) gpp = atoi(g + 4);
            continue;
        }
        csv_fields f;
        if (split_csv(line, ll, &f)) {
            rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, 1, "more than %d columns", MAX_COLS);
            goto fail;
        }
        if (!have_header) {
            static const char *const names[K_N][2] = {
                [K_OP] = {"op", "collective"}, [K_RANKS] = {"ranks", NULL},
                [K_NODES] = {"nodes", NULL},   [K_ALGO] = {"algo", "algorithm"},
                [K_PROTO] = {"proto", "protocol"}, [K_SIZE] = {"size_bytes", NULL},
                [K_TIME] = {"time_us", NULL},  [K_TMED] = {"time_median_us", NULL},
                [K_BUSBW] = {"busbw_GBps", NULL}, [K_BACKEND] = {"backend", NULL},
            };
            for (int i = 0; i < f.n; i++)
                for (int k = 0; k < K_N; k++)
                    if (col[k] < 0 && (field_is(&f, i, names[k][0]) ||
                                       (names[k][1] && field_is(&f, i, names[k][1]))))
                        col[k] = i;
            if (col[K_SIZE] < 0 || (col[K_TIME] < 0 && col[K_TMED] < 0 && col[K_BUSBW] < 0)) {
                rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, 1,
                                 "expected a header row naming the columns, with size_bytes and "
                                 "time_us (or time_median_us, or busbw_GBps)");
                goto fail;
            }
            have_header = 1;
            header_line = lineno;
            ncols = f.n;
            ds = add_dataset(s, origin,
                             col[K_TMED] >= 0 || col[K_BACKEND] >= 0 ? "collsim-hw" : "csv", 1);
            continue;
        }
        if (f.n != ncols) {
            rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, 1,
                             "row has %d fields, the header (line %d) has %d", f.n, header_line,
                             ncols);
            goto fail;
        }
        cs_meas_row r = {.algo = CS_CHOICE_AUTO, .proto = CS_CHOICE_AUTO, .dataset = ds,
                         .line = lineno, .op = (cs_op)h_op, .ranks = h_ranks, .nodes = h_nodes};
        char w[64];
#define FIELD(k) (snprintf(w, sizeof w, "%.*s", f.len[col[k]] < 63 ? f.len[col[k]] : 63, \
                           f.s[col[k]]), w)
#define BAD(k, ...)                                                                      \
    do {                                                                                 \
        rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, f.col[col[k]], __VA_ARGS__);     \
        goto fail;                                                                       \
    } while (0)
        if (col[K_OP] >= 0) {
            cs_op op;
            if (cs_op_parse(FIELD(K_OP), &op))
                BAD(K_OP, "unknown op '%s' (expected all_reduce, all_gather, reduce_scatter, "
                          "broadcast or reduce)", w);
            r.op = op;
        } else if (h_op < 0) {
            rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, 1,
                             "which collective? add an 'op' column or a '# collective:' line");
            goto fail;
        }
        double v;
        if (col[K_RANKS] >= 0) {
            if (parse_num(f.s[col[K_RANKS]], (size_t)f.len[col[K_RANKS]], &v) || v < 1 ||
                v > 1e8 || v != floor(v))
                BAD(K_RANKS, "ranks must be a positive integer, got '%s'", FIELD(K_RANKS));
            r.ranks = (int)v;
        }
        if (col[K_NODES] >= 0 && f.len[col[K_NODES]]) {
            if (parse_num(f.s[col[K_NODES]], (size_t)f.len[col[K_NODES]], &v) || v < 1 ||
                v > 1e7 || v != floor(v))
                BAD(K_NODES, "nodes must be a positive integer, got '%s'", FIELD(K_NODES));
            r.nodes = (int)v;
        }
        if (r.ranks < 1) {
            rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, 1,
                             "how many ranks? add a 'ranks' column or a '# ranks:' line");
            goto fail;
        }
        if (r.nodes > r.ranks) {
            rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, 1, "%d ranks cannot fill %d nodes",
                             r.ranks, r.nodes);
            goto fail;
        }
        if (parse_num(f.s[col[K_SIZE]], (size_t)f.len[col[K_SIZE]], &r.size_bytes) ||
            r.size_bytes < 0)
            BAD(K_SIZE, "size_bytes must be a number >= 0, got '%s'", FIELD(K_SIZE));
        if (r.size_bytes == 0) continue;
        int tk = col[K_TMED] >= 0 && f.len[col[K_TMED]] ? K_TMED
                 : col[K_TIME] >= 0 && f.len[col[K_TIME]] ? K_TIME : -1;
        if (tk >= 0) {
            if (parse_num(f.s[col[tk]], (size_t)f.len[col[tk]], &r.time_us) || !(r.time_us > 0))
                BAD(tk, "%s must be a number > 0, got '%s'", tk == K_TMED ? "time_median_us"
                                                                          : "time_us", FIELD(tk));
        } else if (col[K_BUSBW] >= 0) {
            if (!f.len[col[K_BUSBW]]) continue; /* "not run" cell of a summary table */
            if (parse_num(f.s[col[K_BUSBW]], (size_t)f.len[col[K_BUSBW]], &v) || !(v > 0))
                BAD(K_BUSBW, "busbw_GBps must be a number > 0, got '%s'", FIELD(K_BUSBW));
            double factor = cs_op_busbw_factor(r.op, r.ranks);
            if (!(factor > 0))
                BAD(K_BUSBW, "busbw of %s on 1 rank does not give a time", cs_op_name(r.op));
            r.time_us = r.size_bytes * factor / (v * 1e9) * 1e6;
        } else {
            rc = cs_diag_set(d, CS_ECONFIG, origin, lineno, 1, "row has no time");
            goto fail;
        }
        if (col[K_ALGO] >= 0) {
            FIELD(K_ALGO);
            cs_algo_id a;
            if (!w[0] || !strcasecmp(w, "auto") || !strcmp(w, "-") || !strcasecmp(w, "default"))
                r.algo = CS_CHOICE_AUTO;
            else if (cs_algo_parse(w, &a) == 0) r.algo = a;
            else r.algo = CS_MEAS_ALGO_OTHER;
            snprintf(r.algo_name, sizeof r.algo_name, "%.23s", w);
        }
        if (col[K_PROTO] >= 0) {
            FIELD(K_PROTO);
            cs_proto p;
            if (cs_proto_parse(w, &p) == 0) r.proto = p;
        }
#undef FIELD
#undef BAD
        *add_row(s) = r;
    }
    if (!have_header) {
        rc = cs_diag_set(d, CS_ECONFIG, origin, lineno > 0 ? lineno : 1, 1,
                         "no header row (expected column names such as size_bytes,time_us)");
        goto fail;
    }
    if (s->n == n0) {
        rc = cs_diag_set(d, CS_ECONFIG, origin, header_line, 1, "no measurement rows");
        goto fail;
    }
    /* header-level NCCL_ALGO= / NCCL_PROTO= apply to rows without a column */
    int algo = CS_CHOICE_AUTO, proto = CS_CHOICE_AUTO;
    char aname[24] = "";
    env_choice(text, len, "NCCL_ALGO", &algo, NULL, aname, sizeof aname);
    env_choice(text, len, "NCCL_PROTO", NULL, &proto, NULL, 0);
    for (size_t i = n0; i < s->n; i++) {
        cs_meas_row *r = &s->rows[i];
        if (col[K_ALGO] < 0) {
            r->algo = algo;
            snprintf(r->algo_name, sizeof r->algo_name, "%s", aname);
        }
        if (col[K_PROTO] < 0) r->proto = proto;
    }
    snprintf(s->datasets[ds].hardware, sizeof s->datasets[ds].hardware, "%s", hardware);
    s->datasets[ds].gpus_per_process = gpp;
    return 0;
fail:
    s->n = n0;
    s->ndatasets = nd0;
    return rc;
}

int cs_meas_read_csv(cs_meas_set *s, const char *path, cs_diag *d)
{
    char *text;
    size_t len;
    int rc = cs_textfile_read(path, "measurements file", &text, &len, d);
    if (rc) return rc;
    rc = cs_meas_read_csv_string(s, path, text, len, d);
    free(text);
    return rc;
}

double cs_meas_busbw_GBps(const cs_meas_row *r, double time_us)
{
    return r->size_bytes / (time_us * 1e-6) * cs_op_busbw_factor(r->op, r->ranks) / 1e9;
}
