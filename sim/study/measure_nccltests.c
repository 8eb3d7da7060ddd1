/* SPDX-License-Identifier: MIT */
/*
 * measure_nccltests.c - raw nccl-tests logs -> measurement rows.
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
 * A table closes at the next header or device list, or at the end: then
 * its op (the "Collective test starting:" line, a *_perf command, the file
 * name), ranks and nodes (the "#  Rank N ... on HOST" lines, else busbw /
 * algbw) and forced algorithm / protocol are filled into its rows.
 * Cost: O(file size); hosts are deduplicated in O(ranks^2), fine for the
 * few thousand ranks a log lists.
 */
#include "study/measure.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/units.h"
#include "study/measure_parse.h"

/* ---- tokens ------------------------------------------------------------------ */

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

/* Token i is w and the token before it ends in '#' ("#  size", "# Rank"). */
static int tok_after_hash(const tokens *t, int i, const char *w)
{
    return i > 0 && tok_eq(t, i, w) && t->s[i - 1][t->len[i - 1] - 1] == '#';
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

static int is_type_name(const tokens *t, int i)
{
    if (!t->len[i] || !isalpha((unsigned char)t->s[i][0])) return 0;
    for (int k = 0; k < t->len[i]; k++)
        if (!isalnum((unsigned char)t->s[i][k]) && t->s[i][k] != '_') return 0;
    return 1;
}

/* ---- which op, how many ranks -------------------------------------------------- */

/* The op named by "X_perf" at text[i] (i = start of "_perf"); -1 if none,
 * -2 for an nccl-tests binary collsim does not model (scatter, ...);
 * alltoall_perf and sendrecv_perf are all_to_all and send_recv. */
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
    static const char *const other[] = {"scatter", "gather", "hypercube"};
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
        {"alltoall", CS_OP_ALL_TO_ALL}, {"sendrecv", CS_OP_SEND_RECV},
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
    else if (op == CS_OP_ALL_GATHER || op == CS_OP_REDUCE_SCATTER || op == CS_OP_ALL_TO_ALL)
        n = r < 1.0 ? 1.0 / (1.0 - r) : 0;
    else return 0;
    if (!(n >= 1.0) || n > 1e6) return 0;
    long k = lround(n);
    /* algbw / busbw carry 2 decimals: accept a 1% mismatch */
    if (fabs(cs_op_busbw_factor(op, (int)k) - r) > 0.01 * r + 0.01 / algbw) return 0;
    return (int)k;
}

/* ---- the state of a reading ------------------------------------------------------- */

/* The device list of the run being read. */
typedef struct log_ranks {
    int count, max_rank;
    char (*hosts)[64];
    int nhosts, hcap;
    long pids[8];
    int npids;
    char gpu[96];
    int gpus_per_process;
} log_ranks;

/* The table being read. */
typedef struct log_table {
    int ds;            /* dataset index, -1 before the first header */
    int op;            /* -1 unknown */
    int header_line;
    int ncols;
    int c_size, c_count, c_type, c_time, c_algbw, c_busbw;
    size_t first_row;  /* index of this table's first row in the set */
    double ratio_algbw, ratio_busbw; /* largest row's bandwidths */
} log_table;

/* What one reading of a log carries from line to line. */
typedef struct log_reader {
    cs_meas_set *s;
    const char *origin, *text;
    size_t len;
    cs_diag *d;
    log_table tb;
    log_ranks rk;
    int op_hint, tables, lineno;
} log_reader;

/* ---- the device list ------------------------------------------------------------- */

static void ranks_reset(log_ranks *r)
{
    free(r->hosts);
    memset(r, 0, sizeof *r);
    r->max_rank = -1;
}

static void ranks_add_pid(log_ranks *r, long pid)
{
    int seen = 0;
    for (int p = 0; p < r->npids; p++) seen |= r->pids[p] == pid;
    if (!seen && r->npids < 8) r->pids[r->npids++] = pid;
}

static void ranks_add_host(log_ranks *r, const char *host)
{
    for (int h = 0; h < r->nhosts; h++)
        if (!strcmp(r->hosts[h], host)) return;
    if (r->nhosts == r->hcap)
        r->hosts = cs_xrealloc(r->hosts,
                               (size_t)(r->hcap = r->hcap ? 2 * r->hcap : 16) * sizeof *r->hosts);
    snprintf(r->hosts[r->nhosts++], 64, "%s", host);
}

/* Token i as an integer in lo..hi: 0, or -1 (not an integer, or out of range). */
static int tok_int(const tokens *t, int i, long long lo, long long hi, long long *v)
{
    return cs_units_parse_int(t->s[i], (size_t)t->len[i], lo, hi, v) ? -1 : 0;
}

/* "#  Rank  0 Group  0 Pid 123 on host device  0 [0x07] NVIDIA H100 ..."
 * (t->s[k] is "Rank"). A rank number outside 0..CS_MEAS_RANKS_MAX-1 is
 * refused: it would make the rank count. */
static int ranks_line(log_ranks *r, const log_reader *lr, const char *line, size_t len,
                      const tokens *t, int k)
{
    if (k + 1 >= t->n || !tok_is_uint(t, k + 1)) return 0;
    long long rank;
    if (tok_int(t, k + 1, 0, CS_MEAS_RANKS_MAX - 1, &rank)) {
        char tok[32];
        tok_copy(t, k + 1, tok, sizeof tok);
        return cs_diag_set(lr->d, CS_ECONFIG, lr->origin, lr->lineno, t->col[k + 1],
                           "rank number '%s' out of range (expected 0..%d)", tok,
                           CS_MEAS_RANKS_MAX - 1);
    }
    r->count++;
    if (rank > r->max_rank) r->max_rank = (int)rank;
    for (int i = k + 2; i + 1 < t->n; i++) {
        long long pid;
        if (tok_eq(t, i, "Pid") && !tok_int(t, i + 1, 0, LONG_MAX, &pid)) ranks_add_pid(r, (long)pid);
        if (tok_eq(t, i, "on")) {
            char host[64];
            tok_copy(t, i + 1, host, sizeof host);
            ranks_add_host(r, host);
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
    return 0;
}

/* ---- tables ------------------------------------------------------------------------ */

/* The columns of a "#  size  count  type ... time  algbw  busbw" header
 * into *tb; 1 if t is such a header. */
static int table_header(const tokens *t, log_table *tb)
{
    int k = -1;
    for (int i = 1; i < t->n && k < 0; i++)
        if (tok_after_hash(t, i, "size")) k = i;
    if (k < 0) return 0;
    static const struct { const char *name; size_t off; } cols[] = {
        {"count", offsetof(log_table, c_count)}, {"type", offsetof(log_table, c_type)},
        {"time", offsetof(log_table, c_time)},   {"algbw", offsetof(log_table, c_algbw)},
        {"busbw", offsetof(log_table, c_busbw)},
    };
    for (size_t j = 0; j < sizeof cols / sizeof cols[0]; j++) {
        int *c = (int *)((char *)tb + cols[j].off);
        *c = -1;
        for (int i = k; i < t->n && *c < 0; i++)
            if (tok_eq(t, i, cols[j].name)) *c = i - k;
    }
    tb->c_size = 0;
    tb->ncols = t->n - k;
    return tb->c_count == 1 && tb->c_type == 2 && tb->c_time > 2 && tb->c_algbw > tb->c_time &&
           tb->c_busbw > tb->c_algbw;
}

/* The op a table measures: its own hint, else the file name, else any
 * *_perf command in the log. */
static int table_op(const log_reader *lr)
{
    int op = lr->tb.op;
    if (op == -1) op = op_from_name(lr->origin);
    if (op == -1) op = find_perf(lr->text, 0, lr->len);
    return op;
}

/* The dataset's hardware line and GPUs per process from the device list. */
static void table_hardware(log_reader *lr, int ranks, int nodes)
{
    const log_ranks *rk = &lr->rk;
    cs_meas_dataset *ds = &lr->s->datasets[lr->tb.ds];
    if (rk->gpu[0])
        snprintf(ds->hardware, sizeof ds->hardware, "%d x %.96s on %d host%s", ranks, rk->gpu,
                 nodes, nodes == 1 ? "" : "s");
    ds->gpus_per_process = rk->gpus_per_process;
    if (!ds->gpus_per_process && rk->npids > 0 && rk->npids < 8 && rk->count > rk->npids)
        ds->gpus_per_process = rk->count / rk->npids;
}

/* Closes the open table (if any): fills op, ranks, nodes of its rows. */
static int finish_table(log_reader *lr)
{
    const log_table *tb = &lr->tb;
    const log_ranks *rk = &lr->rk;
    if (tb->ds < 0) return 0;
    if (lr->s->n == tb->first_row)
        return cs_diag_set(lr->d, CS_ECONFIG, lr->origin, tb->header_line, 1,
                           "nccl-tests table without result rows");
    int op = table_op(lr);
    if (op == -1)
        return cs_diag_set(lr->d, CS_ECONFIG, lr->origin, tb->header_line, 1,
                           "cannot tell which collective this table measures: no 'Collective "
                           "test starting:' line, no *_perf command and no op in the file name");
    if (op == -2)
        return cs_diag_set(lr->d, CS_ECONFIG, lr->origin, tb->header_line, 1,
                           "this table measures a collective collsim does not model (only "
                           "all_reduce, all_gather, reduce_scatter, broadcast, reduce, "
                           "all_to_all and send_recv)");
    int ranks = rk->count > 0 ? (rk->max_rank + 1 > rk->count ? rk->max_rank + 1 : rk->count) : 0;
    int nodes = rk->count > 0 ? rk->nhosts : 0;
    if (!ranks) ranks = ranks_from_ratio((cs_op)op, tb->ratio_algbw, tb->ratio_busbw);
    if (!ranks)
        return cs_diag_set(lr->d, CS_ECONFIG, lr->origin, tb->header_line, 1,
                           "cannot tell the rank count: no '#  Rank N ... on HOST device' lines "
                           "and busbw/algbw does not imply one");
    if (nodes > ranks) nodes = 0;
    table_hardware(lr, ranks, nodes);
    cs__meas_forced fo;
    cs__meas_forced_in(lr->text, lr->len, &fo);
    for (size_t i = tb->first_row; i < lr->s->n; i++) {
        cs_meas_row *r = &lr->s->rows[i];
        r->op = (cs_op)op;
        r->ranks = ranks;
        r->nodes = nodes;
        r->algo = fo.algo;
        r->proto = fo.proto;
        snprintf(r->algo_name, sizeof r->algo_name, "%s", fo.algo_name);
    }
    return 0;
}

/* ---- lines ---------------------------------------------------------------------------- */

/* "Collective test starting: X_perf" anywhere, or the first X_perf before
 * any table, names the op of the tables that follow. */
static void meta_line(log_reader *lr, const char *line, size_t ll)
{
    const char *cts = cs__meas_find_sub(line, ll, "Collective test starting:", 25);
    int op = -1;
    if (cts) op = find_perf(line, (size_t)(cts - line), ll);
    else if (lr->tb.ds < 0 && cs__meas_find_sub(line, ll, "_perf", 5)) op = find_perf(line, 0, ll);
    if (op != -1) lr->op_hint = op;
}

/* A "#  Rank N" device line: 1 if t is one (read into the rank list; a
 * new run's list closes the table before it). */
static int device_line(log_reader *lr, const char *line, size_t ll, const tokens *t, int *rc)
{
    int k = -1;
    for (int i = 0; i + 1 < t->n && k < 0; i++)
        if (tok_after_hash(t, i, "Rank")) k = i;
    if (k < 0) return 0;
    if (lr->tb.ds >= 0 && lr->s->n > lr->tb.first_row) {
        if ((*rc = finish_table(lr))) return 1;
        lr->tb.ds = -1;
        ranks_reset(&lr->rk);
    }
    *rc = ranks_line(&lr->rk, lr, line, ll, t, k);
    return 1;
}

/* A table header: 1 if t is one (it opens a new table, or renews the line
 * of an open table that has no rows yet). */
static int header_line(log_reader *lr, const tokens *t, int *rc)
{
    log_table h = lr->tb;
    if (!table_header(t, &h)) return 0;
    if (lr->tb.ds >= 0) {
        if (lr->s->n == lr->tb.first_row) { /* a repeated header: keep the table */
            lr->tb.header_line = lr->lineno;
            return 1;
        }
        if ((*rc = finish_table(lr))) return 1;
    }
    h.ds = cs__meas_add_dataset(lr->s, lr->origin, "nccl-tests", ++lr->tables);
    h.op = lr->op_hint;
    h.header_line = lr->lineno;
    h.first_row = lr->s->n;
    h.ratio_algbw = h.ratio_busbw = 0;
    lr->tb = h;
    return 1;
}

/* The numbers a result row must give, by column: size, then the
 * out-of-place time, algbw, busbw (in that order, the first bad one is
 * reported). */
enum { R_SIZE, R_TIME, R_ALGBW, R_BUSBW, R_COUNT };

static void row_columns(const log_table *tb, int b, int idx[R_COUNT])
{
    idx[R_SIZE] = b;
    idx[R_TIME] = b + tb->c_time;
    idx[R_ALGBW] = b + tb->c_algbw;
    idx[R_BUSBW] = b + tb->c_busbw;
}

/* Whether the line ending at t's last token is the text's last and lacks
 * its newline: a log cut off in the middle of a row. */
static int row_cut_off(const log_reader *lr, const tokens *t)
{
    const char *end = t->s[t->n - 1] + t->len[t->n - 1];
    const char *e = lr->text + lr->len;
    while (end < e && (*end == ' ' || *end == '\t' || *end == '\r')) end++;
    return end == e && (lr->len == 0 || e[-1] != '\n');
}

/* A result row after the first plain integer at token b. */
static int data_row(log_reader *lr, const tokens *t, int b)
{
    static const char *const what[R_COUNT] = {"size", "out-of-place time (us, > 0)", "algbw",
                                              "busbw"};
    log_table *tb = &lr->tb;
    if (t->n - b < tb->c_busbw + 1)
        return cs_diag_set(lr->d, CS_ECONFIG, lr->origin, lr->lineno, t->col[t->n - 1],
                           "result row has %d columns, the table header (line %d) needs at "
                           "least %d", t->n - b, tb->header_line, tb->c_busbw + 1);
    int idx[R_COUNT];
    double v[R_COUNT];
    row_columns(tb, b, idx);
    for (int c = 0; c < R_COUNT; c++)
        if (cs__meas_parse_num(t->s[idx[c]], (size_t)t->len[idx[c]], &v[c]) ||
            (c == R_TIME && !(v[c] > 0))) {
            char tok[40];
            tok_copy(t, idx[c], tok, sizeof tok);
            return cs_diag_set(lr->d, CS_ECONFIG, lr->origin, lr->lineno, t->col[idx[c]],
                               "expected the %s, got '%s'", what[c], tok);
        }
    long long size;
    if (tok_int(t, idx[R_SIZE], 0, LLONG_MAX, &size))
        return cs_diag_set(lr->d, CS_ECONFIG, lr->origin, lr->lineno, t->col[idx[R_SIZE]],
                           "size out of range (expected a byte count below 2^63)");
    if (t->n - b < tb->ncols && row_cut_off(lr, t))
        return cs_diag_set(lr->d, CS_ECONFIG, lr->origin, lr->lineno, t->col[t->n - 1],
                           "the last result row is cut off: %d columns, the table header "
                           "(line %d) has %d", t->n - b, tb->header_line, tb->ncols);
    if (size == 0) return 0; /* nccl-tests prints size-0 rows with -b 0 */
    cs_meas_row *r = cs__meas_add_row(lr->s);
    r->size_bytes = v[R_SIZE];
    r->time_us = v[R_TIME];
    r->dataset = tb->ds;
    r->line = lr->lineno;
    if (v[R_ALGBW] >= tb->ratio_algbw) {
        tb->ratio_algbw = v[R_ALGBW];
        tb->ratio_busbw = v[R_BUSBW];
    }
    return 0;
}

/* "nThread N nGpus M": GPUs per process (1..1024 each). */
static int threads_line(log_reader *lr, const tokens *t)
{
    for (int i = 0; i + 3 < t->n; i++) {
        if (!tok_eq(t, i, "nThread") || !tok_eq(t, i + 2, "nGpus") || lr->tb.ds >= 0) continue;
        long long th, g;
        int bad = tok_int(t, i + 1, 1, 1024, &th) ? i + 1 : tok_int(t, i + 3, 1, 1024, &g) ? i + 3 : -1;
        if (bad >= 0) {
            char tok[32];
            tok_copy(t, bad, tok, sizeof tok);
            return cs_diag_set(lr->d, CS_ECONFIG, lr->origin, lr->lineno, t->col[bad],
                               "expected %s as an integer in 1..1024, got '%s'",
                               bad == i + 1 ? "nThread" : "nGpus", tok);
        }
        lr->rk.gpus_per_process = (int)(th * g);
    }
    return 0;
}

/* Token i looks like a number ("12", "-5", "1K", "3.5e2"): a line of a
 * table starting with one is table-like. */
static int tok_numeric(const tokens *t, int i)
{
    const char *p = t->s[i];
    int k = (p[0] == '-' || p[0] == '+') && t->len[i] > 1;
    return isdigit((unsigned char)p[k]) && !memchr(p, ':', (size_t)t->len[i]);
}

/* Notes a table-like line that is not a result row in its dataset. */
static void skip_line(log_reader *lr)
{
    cs_meas_dataset *ds = &lr->s->datasets[lr->tb.ds];
    if (ds->nskipped < CS_MEAS_SKIPPED_KEPT) ds->skipped_lines[ds->nskipped] = lr->lineno;
    ds->nskipped++;
}

/* A line of an open table that is not a header: a result row (read), a
 * row cut to its size (and count) (an error), another line starting with a
 * number (skipped and counted), or noise. */
static int table_line(log_reader *lr, const tokens *t)
{
    /* a data row: first plain integer, then an integer count and a type */
    int b = -1;
    for (int i = 0; i < t->n && b < 0 && t->s[i][0] != '#'; i++)
        if (tok_is_uint(t, i)) b = i;
    if (b >= 0 && b + 2 < t->n && tok_is_uint(t, b + 1) && is_type_name(t, b + 2))
        return data_row(lr, t, b);
    /* the first token after launcher labels ("0:", "[1,0]<stdout>:") */
    int f = 0;
    while (f < t->n && t->s[f][t->len[f] - 1] == ':') f++;
    if (f == t->n || !tok_numeric(t, f)) return 0;
    if (f == b && t->n - b <= 2 && (b + 1 == t->n || tok_is_uint(t, b + 1)))
        return cs_diag_set(lr->d, CS_ECONFIG, lr->origin, lr->lineno, t->col[t->n - 1],
                           "incomplete result row: %d of the %d columns the table header "
                           "(line %d) names", t->n - b, lr->tb.ncols, lr->tb.header_line);
    skip_line(lr);
    return 0;
}

/* One line of the log: metadata, device list, header, result row or noise. */
static int log_line(void *ud, int lineno, const char *line, size_t ll)
{
    log_reader *lr = ud;
    lr->lineno = lineno;
    tokens t;
    tokenize(line, ll, &t);
    if (!t.n) return 0;
    meta_line(lr, line, ll);
    int rc = 0;
    if (device_line(lr, line, ll, &t, &rc)) return rc;
    if ((rc = threads_line(lr, &t))) return rc;
    if (header_line(lr, &t, &rc)) return rc;
    if (lr->tb.ds < 0) return 0;
    return table_line(lr, &t);
}

int cs_meas_read_nccl_tests_string(cs_meas_set *s, const char *origin, const char *text,
                                   size_t len, cs_diag *d)
{
    size_t n0 = s->n, nd0 = s->ndatasets;
    log_reader lr = {.s = s, .origin = origin, .text = text, .len = len, .d = d,
                     .tb = {.ds = -1, .op = -1}, .op_hint = -1};
    ranks_reset(&lr.rk);
    int lines, rc = cs__meas_each_line(text, len, log_line, &lr, &lines);
    if (!rc && lr.tb.ds < 0)
        rc = cs_diag_set(d, CS_ECONFIG, origin, 1, 1,
                         "no nccl-tests result table found (expected a '#  size  count  type "
                         "...  time  algbw  busbw' header followed by rows)");
    if (!rc) rc = finish_table(&lr);
    ranks_reset(&lr.rk);
    if (rc) cs__meas_truncate(s, n0, nd0);
    return rc;
}

int cs_meas_read_nccl_tests(cs_meas_set *s, const char *path, cs_diag *d)
{
    return cs__meas_read_file(s, path, cs_meas_read_nccl_tests_string, d);
}
