/* SPDX-License-Identifier: MIT */
/*
 * cmd_replay.c - `collsim-hw replay SCHEDULE.json`: executes the iteration
 * that `collsim simulate --emit-schedule` wrote, with its streams and
 * dependencies, and times every task.
 *
 * Mapping of tasks to work (the backends execute it, see backend.h):
 *   compute      a GEMM sized to the task's FLOPs (cs_hw_gemm_shape: square
 *                up to the backend's replay_gemm_nmax, then longer k and
 *                repetitions; in its replay_gemm_dtype), FLOPs x
 *                --flops-scale (default 1 on GPUs; 1e-4 on the CPU backend,
 *                whose SGEMM is ~10^4 times slower than a GPU's tensor cores)
 *   memory       a device copy of mem_bytes / 2 (read + write = mem_bytes
 *                moved), x --bytes-scale
 *   collective   the op on the task's group, per-rank count from size_bytes
 *                (nccl-tests convention for the schedule's group size),
 *                x --bytes-scale
 *   p2p          (a pipeline's schedule) the send or receive of size_bytes x
 *                --bytes-scale to the rank of the peer's stage in the pp
 *                group, the tasks of one batch started together and waited
 *                for together; each rank runs its stage's tasks alone, and
 *                the run must have the schedule's ranks. The CSV's row of a
 *                task is from the first rank of its stage; the trace shows
 *                each rank's own tasks
 * Groups: when the run has as many ranks as the schedule's world, each
 * group's communicators are split from the schedule's device mesh by the
 * simulator's mesh code (coll/mesh.h: a dp_shard group is consecutive
 * ranks, a dp_replicate group every dp_shard-th rank, PyTorch
 * HYBRID_SHARD's layout); otherwise every collective runs on all ranks of
 * the run (with a note).
 * The schedule's per-task algorithm and protocol cannot be forced per call
 * (NCCL_ALGO / Open MPI's rules are per communicator): --algo/--proto force
 * one choice for all, else the library chooses; the schedule's choice is
 * kept in the trace.
 *
 * The iteration runs --warmup times, then --iters times; the reported
 * iteration is the one with the median iteration time. Outputs:
 *   PREFIX.csv         one row per task, rank 0's times, joining the
 *                      schedule (and the simulator's per-task predictions)
 *                      on id: id,name,stream,kind,predicted_s,measured_s,
 *                      start_s,end_s,scale,predicted_scaled_s (scale = work
 *                      executed / work in the schedule), then what ran:
 *                      work (gemm, copy, collective), m,n,k,reps (GEMMs:
 *                      reps of m x n x k; copies: reps chunks), dtype (the
 *                      GEMM's or the collective's), executed_flops,
 *                      executed_bytes (work_cells); `collsim calibrate
 *                      --schedule S --replay CSV` reads it (study/replay_runs.h)
 *   PREFIX.trace.json  Chrome/Perfetto trace, the layout of `collsim simulate
 *                      --trace` (sim/train/iteration.c) with one process per rank
 * and a summary on stdout: iteration time, compute-stream busy time,
 * exposed communication (sim/train/iteration.h's definition; a pipeline's:
 * its slowest stage's, schedule.h) and peak memory, next to the schedule's no-contention prediction, as written and scaled
 * to the work executed (predicted_s x scale per task). Progress lines go
 * to stderr every --progress seconds (a long replay is never silent).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwcli.h"
#include "out/report.h"
#include "rplan.h"
#include "schedule.h"
#include "session.h"
#include "watchdog.h"

/* The columns PREFIX.csv appends after the timeline: what the task ran
 * (hw/README.md). */
#define WORK_COLUMNS "work,m,n,k,reps,dtype,executed_flops,executed_bytes"

static void help(FILE *f)
{
    fprintf(f,
            "Usage: collsim-hw replay SCHEDULE.json [--backend mpi|nccl] [-o PREFIX] [--iters N]\n"
            "         [--warmup N] [--flops-scale F] [--bytes-scale F] [--algo A] [--proto P]\n"
            "         [-g GPUS] [--timeout S] [--progress S]\n"
            "\n"
            "Executes a training iteration written by `collsim simulate --emit-schedule FILE`:\n"
            "compute tasks as GEMMs of the task's FLOPs, memory tasks as copies, collectives on\n"
            "their own streams (GPU) / non-blocking (MPI), with the schedule's dependencies.\n"
            "\n"
            "  --backend B       mpi (default) or nccl\n"
            "  -o PREFIX         writes PREFIX.csv (per task: id,name,stream,kind,predicted_s,\n"
            "                    measured_s,start_s,end_s,scale,predicted_scaled_s, then what\n"
            "                    ran: " WORK_COLUMNS ")\n"
            "                    and PREFIX.trace.json (default PREFIX: replay)\n"
            "  --iters N         measured iterations, the median one is reported (default 3);\n"
            "                    --warmup N (default 1)\n"
            "  --flops-scale F   multiply every compute task's FLOPs (default: nccl 1, mpi 1e-4)\n"
            "  --bytes-scale F   multiply collective and copy sizes (default 1)\n"
            "  --algo/--proto    force one algorithm/protocol for every collective (see bench)\n"
            "  -g GPUS           GPUs driven by this process (nccl backend)\n"
            "  --timeout S       give up on an iteration after S seconds (default 300)\n"
            "  --progress S      a progress line on stderr (iteration, its time, elapsed) at\n"
            "                    most every S seconds (default 2: short replays print none;\n"
            "                    0: every iteration); --quiet: none\n"
            "\n"
            "The summary shows the schedule's prediction twice: as the simulator made it, and\n"
            "scaled to the work this run executed (each task's predicted_s x its scale:\n"
            "compute time in proportion to FLOPs, copies and collectives taken as\n"
            "bandwidth-bound), the one to compare with the measurement under --flops-scale or\n"
            "--bytes-scale.\n"
            "\n");
    cs_hw_exit_help(f);
}

/* What task r (size: a collective's size_bytes as run) executed, the
 * WORK_COLUMNS of its row: reps GEMMs of m x n x k in the backend's
 * replay type (FLOPs 2 m n k reps, bytes its operands: (m k + k n + m n) x
 * the element size x reps), a copy in reps chunks moving 2 x copy_bytes
 * (read + write), or a collective of size bytes (nccl-tests convention). */
static void work_cells(cs_buf *b, const cs_hw_rtask *r, double size, cs_dtype gemm)
{
    if (r->kind == CS_TASK_COMPUTE) {
        double m = r->m, n = r->n, k = r->k;
        cs_buf_printf(b, ",gemm,%d,%d,%d,%d,%s,%.9e,%.9e", r->m, r->n, r->k, r->reps,
                      cs_dtype_name(gemm), 2 * m * n * k * r->reps,
                      (m * k + k * n + m * n) * cs_dtype_size(gemm) * r->reps);
    } else if (r->kind == CS_TASK_MEMORY) {
        cs_buf_printf(b, ",copy,,,,%d,,0,%.9e", r->reps, 2.0 * (double)r->copy_bytes);
    } else {
        cs_buf_printf(b, ",collective,,,,1,%s,0,%.9e", cs_dtype_name(r->dtype), size);
    }
}

/* Writes PREFIX.csv from rank 0's timeline; rt, sizes: the tasks as run
 * (replay_plan), gemm the backend's GEMM type. */
static int write_csv(const cs_hw_schedule *s, const cs_hw_rtask *rt, const double *sizes,
                     cs_dtype gemm, const double *start, const double *end, const double *scale,
                     const char *path, cs_diag *d)
{
    cs_buf b = {0};
    cs_buf_printf(&b, "id,name,stream,kind,predicted_s,measured_s,start_s,end_s,scale,"
                      "predicted_scaled_s," WORK_COLUMNS "\n");
    for (size_t i = 0; i < s->n; i++) {
        const cs_hw_stask *t = &s->tasks[i];
        char name[64];
        cs_hw_csv_safe(name, sizeof name, t->name);
        cs_buf_printf(&b, "%d,%s,%s,%s,%.9e,%.9e,%.9e,%.9e,%g,%.9e", t->id, name,
                      cs_stream_name(t->stream),
                      t->p2p                      ? "p2p"
                      : t->kind == CS_TASK_COMPUTE ? "compute"
                      : t->kind == CS_TASK_MEMORY  ? "memory"
                                                   : "collective",
                      t->predicted_s, end[i] - start[i], start[i], end[i], scale[i],
                      t->predicted_s * scale[i]);
        work_cells(&b, &rt[i], sizes[i], gemm);
        cs_buf_printf(&b, "\n");
    }
    int rc = cs_buf_write(&b, path, d);
    cs_buf_free(&b);
    return rc;
}

/* sizes[i]: the run's size_bytes of collective i (nccl-tests convention);
 * forced: the run's --algo/--proto or NULL. */
static int write_trace(const cs_hw_schedule *s, const cs_hw_rplan *p, int nranks, const double *start,
                       const double *end, const double *sizes, const char *algo,
                       const char *proto, double peak_bytes, const char *path, cs_diag *d)
{
    cs_buf b = {0};
    cs_buf_printf(&b, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    for (int r = 0; r < nranks; r++) {
        cs_buf_printf(&b, "%s  {\"ph\": \"M\", \"pid\": %d, \"name\": \"process_name\", "
                          "\"args\": {\"name\": \"rank %d\"}}", r ? ",\n" : "", r, r);
        for (int st = 0; st < CS_STREAM_COUNT; st++)
            cs_buf_printf(&b, ",\n  {\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": "
                              "\"thread_name\", \"args\": {\"name\": \"%s stream\"}}",
                          r, st, cs_stream_name((cs_stream)st));
    }
    for (int r = 0; r < nranks; r++)
        for (size_t i = 0; i < s->n; i++) {
            const cs_hw_stask *t = &s->tasks[i];
            size_t k = (size_t)r * s->n + i;
            if (!cs_hw_rplan_runs(p, &p->tasks[i], r)) continue; /* another stage's */
            cs_buf_printf(&b, ",\n  {\"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"name\": ", r,
                          (int)t->stream);
            cs_buf_json_string(&b, t->name);
            cs_buf_printf(&b, ", \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"id\": %d, "
                              "\"predicted_us\": %.3f", start[k] * 1e6, (end[k] - start[k]) * 1e6,
                          t->id, t->predicted_s * 1e6);
            if (t->kind == CS_TASK_COLLECTIVE) {
                cs_buf_printf(&b, ", \"op\": \"%s\", \"size_bytes\": %.0f, \"algo\": ",
                              cs_op_name(t->op), sizes[i]);
                cs_buf_json_string(&b, algo ? algo : "auto");
                cs_buf_printf(&b, ", \"proto\": ");
                cs_buf_json_string(&b, proto ? proto : "auto");
                cs_buf_printf(&b, ", \"predicted_algo\": ");
                cs_buf_json_string(&b, t->algo);
                cs_buf_printf(&b, ", \"predicted_proto\": ");
                cs_buf_json_string(&b, t->proto);
            }
            cs_buf_printf(&b, "}}");
        }
    cs_buf_printf(&b, ",\n  {\"ph\": \"C\", \"pid\": 0, \"name\": \"peak memory (measured)\", "
                      "\"ts\": 0.000, \"args\": {\"GiB\": %.6f}}", peak_bytes / (1 << 30));
    cs_buf_printf(&b, "\n]}\n");
    int rc = cs_buf_write(&b, path, d);
    cs_buf_free(&b);
    return rc;
}

static int fail_diag(const cs_diag *d)
{
    char m[1024];
    cs_diag_format(d, m, sizeof m);
    if (cs_hw_launch_rank() == 0) fprintf(stderr, "collsim-hw: %s\n", m);
    return d->code == CS_EIO || d->code == CS_ENOENT ? CS_HW_EXIT_IO : CS_HW_EXIT_USAGE;
}

static const cs_hw_command command = {
    .name = "replay",
    .help = help,
    .common = CS_HW_COMMON_ALL,
    .iters_max = 10000,
    .operand = "a SCHEDULE.json file",
    .backend = "mpi",
    .iters = 3,
    .warmup = 1,
    .output = "replay", /* PREFIX */
};

typedef struct replay_args {
    double fscale, bscale; /* --flops-scale (< 0: the backend's), --bytes-scale */
    double progress_s;     /* --progress: seconds between progress lines */
} replay_args;

/* The checks of replay's options, the backend's among them: 0 or an exit code. */
static int replay_check(cs_hw_session *s, replay_args *a)
{
    if (!*s->output) return cs_hw_usage(s->cmd->name, "%s", "-o needs a non-empty PREFIX");
    int rc = cs_hw_session_pick(s);
    if (rc) return rc;
    if (a->fscale < 0) a->fscale = s->b->replay_flops_scale;
    return 0;
}

/* Reads the schedule: 0, or an exit code after a message. */
static int replay_load(const cs_hw_session *s, cs_hw_schedule *sc)
{
    cs_diag d;
    cs_diag_clear(&d);
    if (cs_hw_schedule_load(s->operand, sc, &d)) return fail_diag(&d);
    if (sc->n == 0) {
        cs_hw_schedule_free(sc);
        return cs_hw_usage(s->cmd->name, "%s has no tasks", s->operand);
    }
    return 0;
}

/* The schedule mapped onto this run. */
typedef struct replay_plan {
    cs_hw_rtask *rt;
    double *sizes; /* size_bytes of each collective as run (nccl-tests convention) */
    double *scale; /* work executed / work in the schedule, per task */
    cs_hw_rplan plan;
} replay_plan;

/* An element count from a floored double: at least 1, and held by size_t
 * (schedule.c caps size_bytes at 2^60; --bytes-scale could still go past). */
static size_t count_of(double cnt)
{
    if (!(cnt >= 1)) return 1;
    const size_t cap = SIZE_MAX / 4;
    return cnt < (double)cap ? (size_t)cnt : cap;
}

/* Task t as this run executes it on backend b (r, *size, *scale); nr
 * ranks, matches: the run has the schedule's world size, so its groups
 * are kept. */
static void map_task(const cs_hw_backend *b, const cs_hw_schedule *sc, const cs_hw_stask *t,
                     int nr, int matches, const replay_args *a, cs_hw_rtask *r, double *size,
                     double *scale)
{
    r->kind = (int)t->kind;
    r->stream = (int)t->stream;
    r->stage = t->stage;
    r->p2p = t->p2p;
    r->peer_stage = t->peer_stage;
    r->tag = t->tag;
    r->batch = t->batch;
    r->ndeps = t->ndeps;
    memcpy(r->deps, t->deps, sizeof r->deps);
    memcpy(r->on_start, t->on_start, sizeof r->on_start);
    if (t->p2p) { /* size_bytes per rank, on the pp group (a pipeline runs on its own ranks) */
        int ts = cs_dtype_size(t->dtype);
        double cnt = floor(t->size_bytes * a->bscale / ts);
        r->op = t->op;
        r->dtype = t->dtype;
        r->count = count_of(cnt);
        r->group = CS_GROUP_PP;
        *size = (double)r->count * ts;
        *scale = a->bscale;
    } else if (t->kind == CS_TASK_COLLECTIVE) {
        int per_rank = t->op == CS_OP_ALL_GATHER || t->op == CS_OP_REDUCE_SCATTER;
        int ts = cs_dtype_size(t->dtype);
        double cnt =
            floor(t->size_bytes * a->bscale / ts / (per_rank ? sc->group_ranks[t->group] : 1));
        r->op = t->op;
        r->dtype = t->dtype;
        r->count = count_of(cnt);
        r->group = matches ? (int)t->group : CS_GROUP_WORLD;
        int gsize = matches ? sc->group_ranks[t->group] : nr;
        *size = (double)r->count * ts * (per_rank ? gsize : 1);
        *scale = a->bscale;
    } else if (t->kind == CS_TASK_COMPUTE && t->flops > 0) {
        r->kind = CS_TASK_COMPUTE;
        r->flops = t->flops * a->fscale;
        r->reps = cs_hw_gemm_shape(r->flops, b->replay_gemm_nmax, b->replay_gemm_kmax, &r->m,
                                   &r->n, &r->k);
        *scale = a->fscale;
    } else {
        r->kind = CS_TASK_MEMORY; /* copies: memory tasks, and compute tasks without FLOPs */
        r->copy_bytes = (size_t)floor(t->mem_bytes / 2 * a->bscale);
        size_t chunks = (r->copy_bytes + b->replay_copy_chunk - 1) / b->replay_copy_chunk;
        r->reps = chunks > 1 ? (int)chunks : 1;
        *scale = a->bscale;
    }
}

static void build_plan(const cs_hw_session *s, const cs_hw_schedule *sc, const replay_args *a,
                       replay_plan *p)
{
    int nr = s->info.nranks, world = sc->group_ranks[CS_GROUP_WORLD];
    int matches = nr == world;
    if (!matches && s->info.proc == 0 && !s->cfg.quiet)
        fprintf(stderr, "collsim-hw: note: the schedule is for %d ranks, this run has %d: every "
                        "collective runs on all %d ranks\n", world, nr, nr);
    p->rt = cs_xcalloc(sc->n, sizeof *p->rt);
    p->sizes = cs_xcalloc(sc->n, sizeof *p->sizes);
    p->scale = cs_xcalloc(sc->n, sizeof *p->scale);
    for (size_t i = 0; i < sc->n; i++)
        map_task(s->b, sc, &sc->tasks[i], nr, matches, a, &p->rt[i], &p->sizes[i],
                 &p->scale[i]);
    p->plan = (cs_hw_rplan){.n = sc->n, .tasks = p->rt};
    cs_hw_rplan_set_groups(&p->plan, sc, nr, matches);
}

/* Every measured iteration's timeline (ranks x tasks), kept on process 0
 * to report the median iteration's. */
typedef struct replay_times {
    size_t nall;           /* ranks x tasks */
    double *start, *end;   /* the iteration being run */
    double *iter_s;        /* iters: each iteration's time */
    double **all_start, **all_end;
    double peak_bytes;
} replay_times;

/* A progress line on stderr (process 0, not --quiet) after iteration it
 * (0-based, warmups first) when progress_s have passed since the last. */
static void progress(const cs_hw_session *s, const replay_args *a, int it, double iter_s,
                     double t0, double *last)
{
    double now = cs_hw_now_s();
    if (s->info.proc != 0 || s->cfg.quiet || now - *last < a->progress_s) return;
    *last = now;
    int n = s->warmup + s->iters;
    fprintf(stderr, "collsim-hw replay: iteration %d of %d%s done in %.3f s, %.1f s elapsed\n",
            it + 1, n, it < s->warmup ? " (warmup)" : "", iter_s, now - t0);
}

static int replay_iterations(cs_hw_session *s, const replay_args *a, const replay_plan *p,
                             replay_times *t)
{
    int iters = s->iters, warmup = s->warmup;
    size_t nall = t->nall = (size_t)s->info.nranks * p->plan.n;
    t->start = cs_xcalloc(nall, sizeof *t->start);
    t->end = cs_xcalloc(nall, sizeof *t->end);
    t->iter_s = cs_xcalloc((size_t)iters, sizeof *t->iter_s);
    t->all_start = cs_xcalloc((size_t)iters, sizeof *t->all_start);
    t->all_end = cs_xcalloc((size_t)iters, sizeof *t->all_end);
    int rc = 0;
    double t0 = cs_hw_now_s(), last = t0;
    for (int it = 0; it < warmup + iters && !rc; it++) {
        char what[96];
        snprintf(what, sizeof what, "replay iteration %d", it + 1);
        cs_hw_rresult res = {t->start, t->end, 0};
        double it0 = cs_hw_now_s();
        cs_hw_session_guard(s, what);
        rc = s->b->replay_run(s->ctx, &p->plan, &res);
        cs_hw_watchdog_disarm();
        if (!rc) progress(s, a, it, cs_hw_now_s() - it0, t0, &last);
        if (rc || it < warmup) continue;
        if (res.peak_bytes > t->peak_bytes) t->peak_bytes = res.peak_bytes;
        double t_end = 0;
        for (size_t k = 0; k < nall; k++)
            if (t->end[k] > t_end) t_end = t->end[k];
        t->iter_s[it - warmup] = t_end;
        if (s->info.proc == 0) {
            t->all_start[it - warmup] = cs_xmalloc(nall * sizeof(double));
            t->all_end[it - warmup] = cs_xmalloc(nall * sizeof(double));
            memcpy(t->all_start[it - warmup], t->start, nall * sizeof(double));
            memcpy(t->all_end[it - warmup], t->end, nall * sizeof(double));
        }
    }
    return rc;
}

static void free_times(replay_times *t, int iters)
{
    for (int i = 0; t->all_start && i < iters; i++) {
        free(t->all_start[i]);
        free(t->all_end[i]);
    }
    free(t->all_start);
    free(t->all_end);
    free(t->start);
    free(t->end);
    free(t->iter_s);
}

/* The summary on stdout: iteration times (it_s: min, median, max), the
 * median iteration (start, end) next to the schedule's prediction. */
/* The schedule's no-contention prediction, each task's predicted_s x
 * scale[i] (scale NULL: as written): out = iteration, compute busy,
 * exposed communication. */
static void predict(const cs_hw_schedule *sc, const double *scale, double out[3])
{
    cs_hw_schedule w = *sc;
    w.tasks = cs_xmalloc(sc->n * sizeof *w.tasks);
    memcpy(w.tasks, sc->tasks, sc->n * sizeof *w.tasks);
    for (size_t i = 0; scale && i < sc->n; i++) w.tasks[i].predicted_s *= scale[i];
    double *ps = cs_xmalloc(sc->n * sizeof *ps), *pe = cs_xmalloc(sc->n * sizeof *pe);
    out[0] = cs_hw_schedule_predict(&w, ps, pe);
    out[1] = cs_hw_compute_busy_s(&w, ps, pe);
    out[2] = cs_hw_exposed_comm_s(&w, ps, pe);
    free(ps);
    free(pe);
    free(w.tasks);
}

static void print_summary(const cs_hw_session *s, const cs_hw_schedule *sc, const replay_args *a,
                          const replay_times *t, const double it_s[3], const double *start,
                          const double *end, const double *scale, const char *csv_path,
                          const char *trace_path)
{
    double pred[3], scaled[3]; /* iteration, compute busy, exposed */
    predict(sc, NULL, pred);
    predict(sc, scale, scaled);
    const cs_hw_info *info = &s->info;
    printf("# collsim-hw replay: %s, %zu tasks, %d ranks (%d processes x %d), backend %s "
           "(%s), host %s, device %s\n", s->operand, sc->n, info->nranks, info->nprocs,
           info->local_ranks, s->b->name, info->library, info->host, info->device);
    printf("# work scale: FLOPs x %g, bytes x %g; median of %d iterations (%d warmup); %s\n",
           a->fscale, a->bscale, s->iters, s->warmup,
           sc->stages ? "each task from the first rank of its pipeline stage" : "rank 0's timeline");
    printf("  %-34s %14s %14s %14s\n", "", "measured", "pred. scaled", "predicted");
    printf("  %-34s %14.6f %14.6f %14.6f\n", "iteration time (s)", it_s[1], scaled[0], pred[0]);
    printf("  %-34s %14.6f %14s %14s\n", "iteration time, fastest (s)", it_s[0], "-", "-");
    printf("  %-34s %14.6f %14s %14s\n", "iteration time, slowest (s)", it_s[2], "-", "-");
    printf("  %-34s %14.6f %14.6f %14.6f\n", "compute stream busy (s)",
           cs_hw_compute_busy_s(sc, start, end), scaled[1], pred[1]);
    printf("  %-34s %14.6f %14.6f %14.6f\n", "exposed communication (s)",
           cs_hw_exposed_comm_s(sc, start, end), scaled[2], pred[2]);
    char peak[64];
    snprintf(peak, sizeof peak, "peak %s memory (GiB)", s->b->peak_memory);
    printf("  %-34s %14.3f %14s %14s\n", peak, t->peak_bytes / (1 << 30), "-", "-");
    printf("# predicted: the schedule's predicted_s per task, no contention; pred. scaled: each "
           "x its work scale (FLOPs x %g, bytes x %g)\n", a->fscale, a->bscale);
    printf("# wrote %s and %s\n", csv_path, trace_path);
    fflush(stdout);
}

/* Process 0: PREFIX.csv, PREFIX.trace.json and the summary of the median
 * iteration. 0, or CS_EIO after a message. */
static int replay_report(const cs_hw_session *s, const cs_hw_schedule *sc, const replay_args *a,
                         const replay_plan *p, const replay_times *t)
{
    double it_s[3];
    cs_hw_stats(t->iter_s, s->iters, &it_s[0], &it_s[1], &it_s[2]);
    int pick = 0;
    for (int i = 0; i < s->iters; i++)
        if (fabs(t->iter_s[i] - it_s[1]) < fabs(t->iter_s[pick] - it_s[1])) pick = i;
    const double *start = t->all_start[pick], *end = t->all_end[pick];
    double *own_start = NULL, *own_end = NULL;
    if (sc->stages) { /* a pipeline: each task from the first rank of its stage */
        own_start = cs_xmalloc(sc->n * sizeof(double));
        own_end = cs_xmalloc(sc->n * sizeof(double));
        for (size_t i = 0; i < sc->n; i++) {
            int r = 0;
            while (r < s->info.nranks - 1 && !cs_hw_rplan_runs(&p->plan, &p->rt[i], r)) r++;
            own_start[i] = start[(size_t)r * sc->n + i];
            own_end[i] = end[(size_t)r * sc->n + i];
        }
    }
    size_t plen = strlen(s->output) + 16;
    char *csv_path = cs_xmalloc(plen), *trace_path = cs_xmalloc(plen);
    snprintf(csv_path, plen, "%s.csv", s->output);
    snprintf(trace_path, plen, "%s.trace.json", s->output);
    cs_diag d;
    cs_diag_clear(&d);
    int rc = write_csv(sc, p->rt, p->sizes, s->b->replay_gemm_dtype,
                       own_start ? own_start : start, own_end ? own_end : end, p->scale,
                       csv_path, &d);
    if (!rc)
        rc = write_trace(sc, &p->plan, s->info.nranks, start, end, p->sizes, s->cfg.algo,
                         s->cfg.proto, t->peak_bytes, trace_path, &d);
    if (own_start) start = own_start, end = own_end;
    if (rc) {
        char m[1024];
        cs_diag_format(&d, m, sizeof m);
        fprintf(stderr, "collsim-hw: %s\n", m);
        rc = CS_EIO;
    } else {
        print_summary(s, sc, a, t, it_s, start, end, p->scale, csv_path, trace_path);
    }
    free(csv_path);
    free(trace_path);
    free(own_start);
    free(own_end);
    return rc;
}

/* A pipeline runs on its own ranks: each rank its stage's tasks, its p2p
 * peers by their pp coordinate. 0, or an exit code after a message. */
static int pipeline_check(const cs_hw_session *s, const cs_hw_schedule *sc)
{
    int world = sc->group_ranks[CS_GROUP_WORLD];
    if (!sc->stages || s->info.nranks == world) return 0;
    if (s->info.proc == 0)
        fprintf(stderr, "collsim-hw: %s is a pipeline of %d stages on %d ranks: replay it on %d "
                        "ranks (this run has %d)\n", s->operand, sc->stages, world, world,
                s->info.nranks);
    return CS_HW_EXIT_USAGE;
}

/* The started backend: set-up, iterations, report, end. Returns the exit code. */
static int replay_execute(cs_hw_session *s, const cs_hw_schedule *sc, const replay_args *a)
{
    int pc = pipeline_check(s, sc);
    if (pc) { /* every rank decides alike: a clean end, no MPI_Abort */
        cs_hw_session_end(s, CS_HW_EXIT_OK);
        return pc;
    }
    replay_plan p;
    build_plan(s, sc, a, &p);
    cs_hw_session_guard(s, "replay set-up");
    int rc = s->b->replay_setup(s->ctx, &p.plan);
    cs_hw_watchdog_disarm();
    replay_times t = {0};
    if (!rc) rc = replay_iterations(s, a, &p, &t);
    if (!rc && s->info.proc == 0) rc = replay_report(s, sc, a, &p, &t);
    free_times(&t, s->iters);
    free(p.rt);
    free(p.sizes);
    free(p.scale);
    if (!rc) return cs_hw_session_end(s, CS_HW_EXIT_OK);
    if (rc != CS_EIO) cs_hw_session_stopped(s, "");
    return cs_hw_session_end(s, cs_hw_exit_code(rc));
}

int cs_hw_cmd_replay(int argc, char **argv)
{
    replay_args a = {.fscale = -1, .bscale = 1, .progress_s = 2};
    const cs_hw_opt opts[] = {
        {"flops-scale", 0, CS_HW_ARG_DOUBLE, &a.fscale, 1e-12, 1e3, NULL},
        {"bytes-scale", 0, CS_HW_ARG_DOUBLE, &a.bscale, 1e-12, 1e3, NULL},
        {"progress", 0, CS_HW_ARG_DOUBLE, &a.progress_s, 0, 1e6, NULL},
    };
    cs_hw_session s;
    if (cs_hw_session_args(&s, &command, argc, argv, opts, sizeof opts / sizeof opts[0]))
        return s.exit;
    int rc = replay_check(&s, &a);
    if (rc) return rc;
    cs_hw_schedule sc;
    if ((rc = replay_load(&s, &sc))) return rc;
    rc = cs_hw_session_start(&s, NULL);
    if (!rc) rc = replay_execute(&s, &sc, &a);
    cs_hw_schedule_free(&sc);
    return rc;
}
