/* SPDX-License-Identifier: MIT */
/*
 * replay_runs.c - a `collsim-hw replay` CSV joined with its schedule on
 * task id, read as kernel timings (replay_runs.h).
 *
 * The schedule is JSON (sim/out/schedule.c), which is YAML's flow style:
 * it is read with the library's YAML tree (base/yamlnode.h), so its errors
 * name file:line:column like every other input; members this reader does
 * not use are ignored (hw/schedule.c does the same), newer writers stay
 * readable. The CSV's header names its columns (any order,
 * case-insensitive; a byte order mark is skipped; a column named twice is
 * refused, as measure_csv.c does: which would count?; "#" lines are
 * comments); the columns this reader needs are one table (cols), each
 * cell checked where it stands.
 *
 * The join checks that the CSV is a replay of that schedule: every row's
 * id is a schedule task's, once, and its name (as replay writes it:
 * hw/schedule.c keeps 47 bytes, hw_util.c cs_hw_csv_safe blanks commas,
 * quotes and line breaks), kind and stream are that task's; what it ran (work)
 * fits the kind (a GEMM for a compute task, a copy for a memory task or a
 * compute task without FLOPs, a collective for a collective), and a GEMM's
 * executed_flops is its 2 m n k x reps.
 *
 * The timeline (rank 0's median iteration): a task's overlap is the
 * length of the union of [start_s, end_s] of the collectives on other
 * streams within its own interval (intervals that only touch do not
 * overlap). Cost: O(tasks log tasks) for the join, O(kernels x
 * collectives log collectives) for the overlaps.
 */
#include "study/replay_runs.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/textfile.h"
#include "base/yamlnode.h"
#include "study/measure_parse.h"
#include "train/workload.h"

/* ---- the schedule ------------------------------------------------------------------ */

/* The kinds of a task; a pipeline's p2p send / receive (sim/out/schedule.c)
 * is replayed as a transfer (work "collective"). */
enum { K_P2P = CS_TASK_COLLECTIVE + 1 };
static const char *const kind_names[] = {
    [CS_TASK_COMPUTE] = "compute", [CS_TASK_MEMORY] = "memory",
    [CS_TASK_COLLECTIVE] = "collective", [K_P2P] = "p2p", NULL};

typedef struct stask {
    int id, line, column;   /* where the task starts in the schedule */
    int kind;               /* cs_task_kind */
    int stream;             /* cs_stream */
    double flops;
    char name[48];          /* as replay writes it: hw/schedule.h keeps 47 bytes */
} stask;

typedef struct sched {
    const char *origin;
    size_t n;
    stask *t;               /* sorted by id once read */
} sched;

/* name as replay's CSV holds it: the first len - 1 bytes, commas, quotes
 * and line breaks blanked, blanks trimmed (the CSV splitter trims cells). */
static void csv_name(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s", name);
    for (char *p = out; *p; p++)
        if (*p == ',' || *p == '\n' || *p == '\r' || *p == '"') *p = ' ';
    size_t a = 0, b = strlen(out);
    while (a < b && isspace((unsigned char)out[a])) a++;
    while (b > a && isspace((unsigned char)out[b - 1])) b--;
    memmove(out, out + a, b - a);
    out[b - a] = 0;
}

/* The scalar member key of task map v: a number into *x, or one of names
 * into *x as its index; required or not (*x kept when absent). */
static int member(const cs_yctx *c, const cs_ynode *v, const char *key, const char *const *names,
                  int required, double *x)
{
    const cs_ynode *m = cs_yamlnode_find(v, key);
    if (!m) return required ? cs_yamlnode_error(c, v, "task without '%s'", key) : 0;
    if (m->kind == CS_YNODE_SCALAR && !names && m->plain && !cs__meas_parse_num(m->text, m->len, x))
        return 0;
    for (int i = 0; names && names[i] && m->kind == CS_YNODE_SCALAR; i++)
        if (!strcmp(m->text, names[i])) return *x = i, 0;
    if (!names) return cs_yamlnode_error(c, m, "'%s' must be a number", key);
    char want[96] = "";
    for (int i = 0; names[i]; i++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s",
                 i ? (names[i + 1] ? ", " : " or ") : "", names[i]);
    return cs_yamlnode_error(c, m, "'%s' must be %s", key, want);
}

static int by_id(const void *a, const void *b)
{
    const stask *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}
/* By id, then by place in the file: a repeated id's first is first. */
static int by_id_line(const void *a, const void *b)
{
    const stask *x = a, *y = b;
    int c = by_id(a, b);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* One task of the "tasks" array into *t. */
static int read_task(const cs_yctx *c, const cs_ynode *v, const char *const *streams, stask *t)
{
    if (v->kind != CS_YNODE_MAPPING)
        return cs_yamlnode_error(c, v, "a task must be an object, got %s", cs_yamlnode_describe(v));
    double id = -1, kind = 0, stream = 0, flops = 0;
    int rc = member(c, v, "id", NULL, 1, &id);
    if (!rc && (id < 0 || id != floor(id) || id > 1e9))
        rc = cs_yamlnode_error(c, cs_yamlnode_find(v, "id"), "'id' must be an integer >= 0");
    if (!rc) rc = member(c, v, "kind", kind_names, 1, &kind);
    if (!rc) rc = member(c, v, "stream", streams, 1, &stream);
    if (!rc) rc = member(c, v, "flops", NULL, 0, &flops);
    if (!rc && !(flops >= 0 && flops < 1e30)) /* the schedule's own error, at its place */
        rc = cs_yamlnode_error(c, cs_yamlnode_find(v, "flops"), "'flops' must be a number >= 0");
    const cs_ynode *nm = cs_yamlnode_find(v, "name");
    if (!rc && (!nm || nm->kind != CS_YNODE_SCALAR))
        rc = cs_yamlnode_error(c, nm ? nm : v, "a task needs a 'name' string");
    if (rc) return rc;
    *t = (stask){.id = (int)id, .line = v->line, .column = v->column, .kind = (int)kind,
                 .stream = (int)stream, .flops = flops};
    csv_name(t->name, sizeof t->name, nm->text);
    return 0;
}

static int read_schedule(sched *sc, const char *text, size_t len, cs_diag *d)
{
    cs_ynode *root;
    int rc = cs_yamlnode_parse_mapping(sc->origin, text, len,
                                       "empty schedule: expected the JSON `collsim simulate "
                                       "--emit-schedule` writes",
                                       "expected the JSON object `collsim simulate "
                                       "--emit-schedule` writes, got %s", &root, d);
    if (rc) return rc;
    cs_yctx c = {sc->origin, "schedule", d};
    char want[16];
    snprintf(want, sizeof want, "%d", CS_WORKLOAD_SCHEDULE_VERSION);
    const cs_ynode *ver = NULL;
    const cs_ynode *fmt = cs_yamlnode_find(root, "format"), *tasks = cs_yamlnode_find(root, "tasks");
    const char *streams[CS_STREAM_COUNT + 1] = {NULL};
    for (int s = 0; s < CS_STREAM_COUNT; s++) streams[s] = cs_stream_name((cs_stream)s);
    if (!fmt || fmt->kind != CS_YNODE_SCALAR || strcmp(fmt->text, "collsim-schedule"))
        rc = cs_yamlnode_error(&c, fmt ? fmt : root, "expected \"format\": \"collsim-schedule\" "
                                                     "(collsim simulate --emit-schedule)");
    else if (!(ver = cs_yamlnode_find(root, "version")) || ver->kind != CS_YNODE_SCALAR ||
             (strcmp(ver->text, want) && strcmp(ver->text, "1"))) /* v1: the same tasks */
        rc = cs_yamlnode_error(&c, ver ? ver : root,
                               "unsupported schedule version %s%.20s%s (this reader knows "
                               "versions 1 and %s: the schedule of another collsim?)",
                               ver && ver->kind == CS_YNODE_SCALAR ? "'" : "",
                               ver ? (ver->kind == CS_YNODE_SCALAR ? ver->text : "(not a number)")
                                   : "(none given)",
                               ver && ver->kind == CS_YNODE_SCALAR ? "'" : "", want);
    else if (!tasks || tasks->kind != CS_YNODE_SEQUENCE)
        rc = cs_yamlnode_error(&c, tasks ? tasks : root, "expected a \"tasks\" array");
    sc->t = cs_xcalloc(!rc && tasks->n ? tasks->n : 1, sizeof *sc->t);
    for (size_t i = 0; !rc && i < tasks->n; i++)
        rc = read_task(&c, tasks->items[i], streams, &sc->t[sc->n++]);
    if (!rc) qsort(sc->t, sc->n, sizeof *sc->t, by_id_line);
    for (size_t i = 1; !rc && i < sc->n; i++)
        if (sc->t[i].id == sc->t[i - 1].id)
            rc = cs_diag_set(d, CS_ECONFIG, sc->origin, sc->t[i].line, sc->t[i].column,
                             "task id %d given twice (first at line %d)", sc->t[i].id,
                             sc->t[i - 1].line);
    cs_yamlnode_free(root);
    return rc;
}

static const stask *find_task(const sched *sc, int id)
{
    stask key = {.id = id};
    return bsearch(&key, sc->t, sc->n, sizeof *sc->t, by_id);
}

/* ---- the CSV ------------------------------------------------------------------------- */

enum { C_ID, C_NAME, C_STREAM, C_KIND, C_MEASURED, C_START, C_END, C_WORK, C_M, C_N, C_K,
       C_REPS, C_DTYPE, C_FLOPS, C_BYTES, C_COUNT };
static const char *const cols[C_COUNT] = {
    "id", "name", "stream", "kind", "measured_s", "start_s", "end_s", "work", "m", "n", "k",
    "reps", "dtype", "executed_flops", "executed_bytes"};

enum { W_GEMM, W_COPY, W_COLLECTIVE, W_COUNT };
static const char *const work_names[W_COUNT + 1] = {"gemm", "copy", "collective", NULL};

/* One task's row. */
typedef struct rrow {
    int line;
    const stask *t;
    int work;                 /* W_* */
    double start, end, measured;
    int m, n, k, reps;
    cs_dtype dtype;
    double bytes;             /* executed_bytes */
} rrow;

typedef struct reader {
    const sched *sc;
    const char *origin;
    cs_diag *d;
    int lineno, have_header;
    int at[C_COUNT];          /* field of each column */
    rrow *rows;
    size_t n, cap;
    size_t *seen;             /* by schedule task: 1 + its row's index, 0 before */
} reader;

/* A CS_ECONFIG at the line being read, column col (printf's arguments). */
#define fail(rd, col, ...)                                                                         \
    cs_diag_set((rd)->d, CS_ECONFIG, (rd)->origin, (rd)->lineno, (col), __VA_ARGS__)

static int header(reader *rd, const cs__meas_fields *f)
{
    for (int c = 0; c < C_COUNT; c++) rd->at[c] = -1;
    for (int i = 0; i < f->n; i++)
        for (int c = 0; c < C_COUNT; c++) {
            if ((int)strlen(cols[c]) != f->len[i] || strncasecmp(f->s[i], cols[c], (size_t)f->len[i]))
                continue;
            if (rd->at[c] >= 0)
                return fail(rd, f->col[i], "column '%s' given twice (first at column %d)", cols[c],
                            f->col[rd->at[c]]);
            rd->at[c] = i;
        }
    for (int c = 0; c < C_COUNT; c++)
        if (rd->at[c] < 0)
            return fail(rd, 1, "the header has no '%s' column: expected collsim-hw replay's "
                               "per-task CSV (hw/README.md; one from a collsim-hw that did not "
                               "write work,m,n,k,reps,dtype,executed_flops,executed_bytes: "
                               "replay again)", cols[c]);
    rd->have_header = 1;
    return 0;
}

/* Cell c of f as text into buf ("" when the row is short). */
static const char *text(const reader *rd, const cs__meas_fields *f, int c, char *buf, size_t len)
{
    int i = rd->at[c];
    snprintf(buf, len, "%.*s", i < f->n ? f->len[i] : 0, i < f->n ? f->s[i] : "");
    return buf;
}

static int column_of(const reader *rd, const cs__meas_fields *f, int c)
{
    return rd->at[c] < f->n ? f->col[rd->at[c]] : 1;
}

/* "column 'x': expected WANT, got 'cell'" at cell c. */
static int bad(const reader *rd, const cs__meas_fields *f, int c, const char *want)
{
    char t[64];
    return fail(rd, column_of(rd, f, c), "column '%s': expected %s, got '%s'", cols[c], want,
                text(rd, f, c, t, sizeof t));
}

/* A number >= lo (integer: whole, <= 2^31) in cell c. */
static int num(const reader *rd, const cs__meas_fields *f, int c, double lo, int integer, double *v)
{
    int i = rd->at[c];
    if (i < f->n && !cs__meas_parse_num(f->s[i], (size_t)f->len[i], v) && *v >= lo &&
        (!integer || (*v == floor(*v) && *v < 2147483648.0)))
        return 0;
    return bad(rd, f, c, integer ? (lo > 0 ? "an integer >= 1" : "an integer >= 0")
                                 : "a number >= 0");
}

/* The task of the row's id, checked against the schedule's. */
static int join(reader *rd, const cs__meas_fields *f, rrow *r)
{
    double id;
    if (num(rd, f, C_ID, 0, 1, &id)) return rd->d->code;
    const stask *t = find_task(rd->sc, (int)id);
    if (!t)
        return fail(rd, column_of(rd, f, C_ID), "task %d is not in the schedule %s: this CSV is "
                    "not a replay of it", (int)id, rd->sc->origin);
    size_t prev = rd->seen[t - rd->sc->t];
    if (prev)
        return fail(rd, column_of(rd, f, C_ID), "task %d given twice (first at line %d)", t->id,
                    rd->rows[prev - 1].line);
    char got[64];
    const char *want[] = {[C_NAME] = t->name, [C_KIND] = kind_names[t->kind],
                          [C_STREAM] = cs_stream_name((cs_stream)t->stream)};
    static const int check[] = {C_NAME, C_KIND, C_STREAM};
    for (size_t q = 0; q < sizeof check / sizeof *check; q++)
        if (strcmp(text(rd, f, check[q], got, sizeof got), want[check[q]]))
            return fail(rd, column_of(rd, f, check[q]), "task %d's %s is '%s' in the schedule "
                        "(%s:%d:%d), '%s' here: this CSV is not a replay of it", t->id,
                        cols[check[q]], want[check[q]], rd->sc->origin, t->line, t->column, got);
    r->t = t;
    return 0;
}

/* The timeline cells: start <= end, measured = end - start. */
static int times(const reader *rd, const cs__meas_fields *f, rrow *r)
{
    if (num(rd, f, C_START, 0, 0, &r->start) || num(rd, f, C_END, 0, 0, &r->end) ||
        num(rd, f, C_MEASURED, 0, 0, &r->measured))
        return rd->d->code;
    if (r->end < r->start) return bad(rd, f, C_END, "a time >= start_s");
    if (fabs(r->measured - (r->end - r->start)) > 1e-6 * r->end + 1e-9)
        return bad(rd, f, C_MEASURED, "end_s - start_s");
    return 0;
}

/* What ran: work fitting the task's kind, a GEMM's shape and FLOPs. */
static int work(const reader *rd, const cs__meas_fields *f, rrow *r)
{
    char w[32];
    text(rd, f, C_WORK, w, sizeof w);
    for (r->work = 0; r->work < W_COUNT && strcasecmp(w, work_names[r->work]); r->work++) {}
    int kind = r->t->kind;
    int gemm = kind == CS_TASK_COMPUTE && r->t->flops > 0; /* what replay runs as a GEMM */
    int comm = kind == CS_TASK_COLLECTIVE || kind == K_P2P;
    int fits = r->work == W_GEMM         ? gemm
               : r->work == W_COPY       ? !comm && !gemm
               : r->work == W_COLLECTIVE ? comm
                                         : 0;
    if (!fits)
        return bad(rd, f, C_WORK, comm ? "collective for a collective or p2p task"
                                  : kind == CS_TASK_MEMORY   ? "copy for a memory task"
                                                             : "gemm (copy without FLOPs) for a "
                                                               "compute task");
    double reps = 1, flops, dim[3];
    if (num(rd, f, C_BYTES, 0, 0, &r->bytes) || num(rd, f, C_FLOPS, 0, 0, &flops) ||
        (r->work != W_COLLECTIVE && num(rd, f, C_REPS, 1, 1, &reps)))
        return rd->d->code;
    r->reps = (int)reps;
    if (r->work != W_GEMM) return 0;
    for (int q = 0; q < 3; q++)
        if (num(rd, f, C_M + q, 1, 1, &dim[q])) return rd->d->code;
    char dt[32];
    if (cs_dtype_parse(text(rd, f, C_DTYPE, dt, sizeof dt), &r->dtype))
        return bad(rd, f, C_DTYPE, "a GEMM dtype (fp32, bf16, ...)");
    r->m = (int)dim[0], r->n = (int)dim[1], r->k = (int)dim[2];
    double want = 2 * dim[0] * dim[1] * dim[2] * reps;
    if (fabs(flops - want) > 1e-6 * want) {
        char e[64];
        snprintf(e, sizeof e, "2 m n k x reps = %.9e", want);
        return bad(rd, f, C_FLOPS, e);
    }
    return 0;
}

static int row(reader *rd, const cs__meas_fields *f)
{
    rrow r = {.line = rd->lineno};
    int rc = join(rd, f, &r);
    if (!rc) rc = times(rd, f, &r);
    if (!rc) rc = work(rd, f, &r);
    if (rc) return rc;
    if (rd->n == rd->cap) {
        rd->cap = rd->cap ? 2 * rd->cap : 64;
        rd->rows = cs_xrealloc(rd->rows, rd->cap * sizeof *rd->rows);
    }
    rd->rows[rd->n++] = r;
    rd->seen[r.t - rd->sc->t] = rd->n;
    return 0;
}

static int line_fn(void *ud, int lineno, const char *line, size_t ll)
{
    reader *rd = ud;
    rd->lineno = lineno;
    size_t i = 0;
    while (i < ll && isspace((unsigned char)line[i])) i++;
    if (i == ll || line[i] == '#') return 0;
    cs__meas_fields f;
    if (cs__meas_split_csv(line, ll, &f))
        return fail(rd, 1, "more than %d columns", CS__MEAS_MAX_COLS);
    return rd->have_header ? row(rd, &f) : header(rd, &f);
}

/* ---- the timeline --------------------------------------------------------------------- */

typedef struct span {
    double a, b;
} span;

static int by_start(const void *x, const void *y)
{
    const span *p = x, *q = y;
    return (p->a > q->a) - (p->a < q->a);
}

/* Row i's overlap (s) with the collectives of other streams, and whether
 * a GEMM or copy of another task runs beside it (*beside); sp: room for
 * n spans. */
static double overlap_of(const rrow *rows, size_t n, size_t i, span *sp, int *beside)
{
    const rrow *r = &rows[i];
    size_t ns = 0;
    *beside = 0;
    for (size_t j = 0; j < n; j++) {
        const rrow *o = &rows[j];
        if (j == i || o->t->stream == r->t->stream || !(o->end > r->start && o->start < r->end))
            continue;
        if (o->work != W_COLLECTIVE) *beside = 1;
        else sp[ns++] = (span){fmax(o->start, r->start), fmin(o->end, r->end)};
    }
    qsort(sp, ns, sizeof *sp, by_start);
    double len = 0, upto = r->start;
    for (size_t q = 0; q < ns; q++) {
        double a = fmax(sp[q].a, upto);
        if (sp[q].b > a) len += sp[q].b - a, upto = sp[q].b;
    }
    return len;
}

/* The timings of rd's rows into *out (*nout of them; caller frees). */
static void timings(const reader *rd, int file, cs_kmeas_row **out, size_t *nout,
                    cs_replay_counts *cnt)
{
    span *sp = cs_xcalloc(rd->n ? rd->n : 1, sizeof *sp);
    *out = cs_xcalloc(rd->n ? rd->n : 1, sizeof **out);
    *nout = 0;
    for (size_t i = 0; i < rd->n; i++) {
        const rrow *r = &rd->rows[i];
        if (r->work == W_COLLECTIVE) continue;
        int beside;
        double ov = overlap_of(rd->rows, rd->n, i, sp, &beside);
        int compute_stream = cs_stream_kind_of((cs_stream)r->t->stream) == CS_STREAM_KIND_COMPUTE;
        if (!(r->measured > 0) || (r->work == W_COPY && !(r->bytes > 0)) || beside ||
            (ov > 0 && !compute_stream)) {
            cnt->left_out++;
            continue;
        }
        cs_kmeas_row *k = &(*out)[(*nout)++];
        *k = (cs_kmeas_row){.file = file, .line = r->line, .gemm = r->work == W_GEMM,
                            .dtype = r->dtype, .m = r->m, .n = r->n, .k = r->k,
                            .bytes = r->work == W_COPY ? r->bytes / 2 / r->reps : 0,
                            .time_us = 1e6 * r->measured, .replayed = 1, .reps = r->reps,
                            .overlap_us = 1e6 * ov};
        char label[96]; /* kept to the kernel column's 47 bytes */
        snprintf(label, sizeof label, "task %d: %s", r->t->id, r->t->name);
        snprintf(k->kernel, sizeof k->kernel, "%.47s", label);
        if (ov > 0) cnt->overlapped++;
        else cnt->alone++;
    }
    free(sp);
}

/* ---- reading -------------------------------------------------------------------------- */

int cs_replay_runs_read_string(cs_trun_set *s, const char *schedule_origin,
                               const char *schedule_text, size_t schedule_len,
                               const char *csv_origin, const char *csv_text, size_t csv_len,
                               cs_replay_counts *counts, cs_diag *d)
{
    cs_replay_counts cnt = {0};
    sched sc = {.origin = schedule_origin};
    int rc = read_schedule(&sc, schedule_text, schedule_len, d);
    reader rd = {.sc = &sc, .origin = csv_origin, .d = d};
    rd.seen = cs_xcalloc(sc.n ? sc.n : 1, sizeof *rd.seen);
    int lines = 0;
    if (!rc) rc = cs__meas_each_line(csv_text, csv_len, line_fn, &rd, &lines);
    if (!rc && rd.n == 0)
        rc = cs_diag_set(d, CS_ECONFIG, csv_origin, lines ? lines : 1, 1,
                         "no task row: expected collsim-hw replay's per-task CSV (a header row, "
                         "then a row per task of the schedule)");
    cs_kmeas_row *k = NULL;
    size_t nk = 0;
    if (!rc) {
        cnt.tasks = (int)rd.n;
        timings(&rd, (int)s->nfiles, &k, &nk, &cnt);
        if (nk == 0)
            rc = cs_diag_set(d, CS_ECONFIG, csv_origin, lines, 1, "none of the %zu tasks is a GEMM "
                             "or copy that ran alone or beside collectives only", rd.n);
    }
    if (!rc) {
        if (s->nk + nk > s->kcap) { /* the set's capacity (training_runs.h) */
            s->kcap = s->nk + nk;
            s->kernels = cs_xrealloc(s->kernels, s->kcap * sizeof *s->kernels);
        }
        memcpy(s->kernels + s->nk, k, nk * sizeof *k);
        s->nk += nk;
        s->files = cs_xrealloc(s->files, (s->nfiles + 1) * sizeof *s->files);
        snprintf(s->files[s->nfiles++], sizeof *s->files, "%s", csv_origin);
        if (counts) *counts = cnt;
    }
    free(k);
    free(rd.rows);
    free(rd.seen);
    free(sc.t);
    return rc;
}

int cs_replay_runs_read(cs_trun_set *s, const char *schedule_path, const char *csv_path,
                        cs_replay_counts *counts, cs_diag *d)
{
    char *st = NULL, *ct = NULL;
    size_t sl = 0, cl = 0;
    int rc = cs_textfile_read(schedule_path, "schedule", &st, &sl, d);
    if (!rc) rc = cs_textfile_read(csv_path, "replay CSV", &ct, &cl, d);
    if (!rc) rc = cs_replay_runs_read_string(s, schedule_path, st, sl, csv_path, ct, cl, counts, d);
    free(st);
    free(ct);
    return rc;
}
