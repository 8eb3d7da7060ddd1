/* SPDX-License-Identifier: MIT */
/*
 * cmd_replay.c - `collsim-hw replay SCHEDULE.json`: executes the iteration
 * that `collsim simulate --emit-schedule` wrote, with its streams and
 * dependencies, and times every task.
 *
 * Mapping of tasks to work (the backends execute it, see backend.h):
 *   compute      a GEMM sized to the task's FLOPs (cs_hw_gemm_shape: square
 *                up to a cap, then longer k and repetitions), FLOPs x
 *                --flops-scale (default 1 on GPUs; 1e-4 on the CPU backend,
 *                whose SGEMM is ~10^4 times slower than a GPU's tensor cores)
 *   memory       a device copy of mem_bytes / 2 (read + write = mem_bytes
 *                moved), x --bytes-scale
 *   collective   the op on the task's group, per-rank count from size_bytes
 *                (nccl-tests convention for the schedule's group size),
 *                x --bytes-scale
 * Groups: when the run has as many ranks as the schedule's world, shard
 * groups are consecutive blocks of `shard` ranks and replica groups take
 * every shard-th rank (PyTorch HYBRID_SHARD's layout); otherwise every
 * collective runs on all ranks of the run (with a note).
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
 *                      start_s,end_s,scale (scale = work executed / work in
 *                      the schedule)
 *   PREFIX.trace.json  Chrome/Perfetto trace, the layout of `collsim simulate
 *                      --trace` (sim/iteration.c) with one process per rank
 * and a summary on stdout: iteration time, compute-stream busy time,
 * exposed communication (sim/iteration.h's definition) and peak memory,
 * next to the schedule's no-contention prediction.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backend.h"
#include "hwcli.h"
#include "out/report.h"
#include "schedule.h"
#include "watchdog.h"

static const char *const cmd = "replay";

static void help(FILE *f)
{
    fprintf(f,
            "Usage: collsim-hw replay SCHEDULE.json [--backend mpi|nccl] [-o PREFIX] [--iters N]\n"
            "         [--warmup N] [--flops-scale F] [--bytes-scale F] [--algo A] [--proto P]\n"
            "         [-g GPUS] [--timeout S]\n"
            "\n"
            "Executes a training iteration written by `collsim simulate --emit-schedule FILE`:\n"
            "compute tasks as GEMMs of the task's FLOPs, memory tasks as copies, collectives on\n"
            "their own streams (GPU) / non-blocking (MPI), with the schedule's dependencies.\n"
            "\n"
            "  --backend B       mpi (default) or nccl\n"
            "  -o PREFIX         writes PREFIX.csv (per task: id,name,stream,kind,predicted_s,\n"
            "                    measured_s,start_s,end_s,scale) and PREFIX.trace.json (default\n"
            "                    PREFIX: replay)\n"
            "  --iters N         measured iterations, the median one is reported (default 3);\n"
            "                    --warmup N (default 1)\n"
            "  --flops-scale F   multiply every compute task's FLOPs (default: nccl 1, mpi 1e-4)\n"
            "  --bytes-scale F   multiply collective and copy sizes (default 1)\n"
            "  --algo/--proto    force one algorithm/protocol for every collective (see bench)\n"
            "  -g GPUS           GPUs driven by this process (nccl backend)\n"
            "  --timeout S       give up on an iteration after S seconds (default 300)\n"
            "\n"
            "Exit status: 0 ok, 1 output not written / schedule not readable, 2 bad usage or\n"
            "schedule, 4 library failure, 5 timeout, 77 backend unavailable.\n");
}

/* Writes PREFIX.csv from rank 0's timeline. */
static int write_csv(const cs_hw_schedule *s, const double *start, const double *end,
                     const double *scale, const char *path, cs_diag *d)
{
    cs_buf b = {0};
    cs_buf_printf(&b, "id,name,stream,kind,predicted_s,measured_s,start_s,end_s,scale\n");
    for (size_t i = 0; i < s->n; i++) {
        const cs_hw_stask *t = &s->tasks[i];
        char name[64];
        cs_hw_csv_safe(name, sizeof name, t->name);
        cs_buf_printf(&b, "%d,%s,%s,%s,%.9e,%.9e,%.9e,%.9e,%g\n", t->id, name,
                      cs_stream_name(t->stream),
                      t->kind == CS_TASK_COMPUTE ? "compute"
                      : t->kind == CS_TASK_MEMORY ? "memory" : "collective",
                      t->predicted_s, end[i] - start[i], start[i], end[i], scale[i]);
    }
    int rc = cs_buf_write(&b, path, d);
    cs_buf_free(&b);
    return rc;
}

/* sizes[i]: the run's size_bytes of collective i (nccl-tests convention);
 * forced: the run's --algo/--proto or NULL. */
static int write_trace(const cs_hw_schedule *s, int nranks, const double *start,
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

/* Busy time of the compute stream in a timeline. */
static double compute_busy_s(const cs_hw_schedule *s, const double *start, const double *end)
{
    double busy = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->tasks[i].stream == CS_STREAM_COMPUTE) busy += end[i] - start[i];
    return busy;
}

int cs_hw_cmd_replay(int argc, char **argv)
{
    enum { O_BACKEND = 256, O_ITERS, O_WARMUP, O_FSCALE, O_BSCALE, O_ALGO, O_PROTO, O_TIMEOUT,
           O_QUIET };
    static const struct option opts[] = {
        {"backend", required_argument, 0, O_BACKEND},  {"iters", required_argument, 0, O_ITERS},
        {"warmup", required_argument, 0, O_WARMUP},    {"flops-scale", required_argument, 0, O_FSCALE},
        {"bytes-scale", required_argument, 0, O_BSCALE}, {"algo", required_argument, 0, O_ALGO},
        {"proto", required_argument, 0, O_PROTO},      {"timeout", required_argument, 0, O_TIMEOUT},
        {"quiet", no_argument, 0, O_QUIET},            {"gpus", required_argument, 0, 'g'},
        {"output", required_argument, 0, 'o'},         {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *backend_name = "mpi", *prefix = "replay";
    int iters = 3, warmup = 1;
    double fscale = -1, bscale = 1;
    cs_hw_config cfg = {.gpus = 1, .algo_op = -1, .timeout_s = 300};
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":g:o:h", opts, NULL)) != -1) {
        switch (ch) {
        case O_BACKEND: backend_name = optarg; break;
        case O_ITERS:
            if (cs_hw_opt_int(cmd, "--iters", optarg, 1, 10000, &iters)) return CS_HW_EXIT_USAGE;
            break;
        case O_WARMUP:
            if (cs_hw_opt_int(cmd, "--warmup", optarg, 0, 10000, &warmup)) return CS_HW_EXIT_USAGE;
            break;
        case O_FSCALE:
            if (cs_hw_opt_double(cmd, "--flops-scale", optarg, 1e-12, 1e3, &fscale))
                return CS_HW_EXIT_USAGE;
            break;
        case O_BSCALE:
            if (cs_hw_opt_double(cmd, "--bytes-scale", optarg, 1e-12, 1e3, &bscale))
                return CS_HW_EXIT_USAGE;
            break;
        case O_ALGO: cfg.algo = strcasecmp(optarg, "auto") ? optarg : NULL; break;
        case O_PROTO: cfg.proto = strcasecmp(optarg, "auto") ? optarg : NULL; break;
        case O_TIMEOUT:
            if (cs_hw_opt_double(cmd, "--timeout", optarg, 0.001, 1e6, &cfg.timeout_s))
                return CS_HW_EXIT_USAGE;
            break;
        case O_QUIET: cfg.quiet = 1; break;
        case 'g':
            if (cs_hw_opt_int(cmd, "-g", optarg, 1, 1024, &cfg.gpus)) return CS_HW_EXIT_USAGE;
            break;
        case 'o': prefix = optarg; break;
        case 'h': help(stdout); return CS_HW_EXIT_OK;
        case ':': return cs_hw_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return cs_hw_usage(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return cs_hw_usage(cmd, "%s", "a SCHEDULE.json file is required");
    if (optind + 1 < argc) return cs_hw_usage(cmd, "unexpected argument '%s'", argv[optind + 1]);
    const char *sched_path = argv[optind];
    if (!*prefix) return cs_hw_usage(cmd, "%s", "-o needs a non-empty PREFIX");
    const cs_hw_backend *b;
    int rc = cs_hw_opt_backend(cmd, backend_name, &b);
    if (rc) return rc;
    int gpu = !strcmp(b->name, "nccl");
    if (cfg.gpus > 1 && !gpu)
        return cs_hw_usage(cmd, "%s", "-g is for the nccl backend (the mpi backend runs one rank "
                                      "per process)");
    char msg[512];
    if (b->check_choice(cfg.algo, cfg.proto, -1, msg, sizeof msg)) return cs_hw_usage(cmd, "%s", msg);
    if (fscale < 0) fscale = gpu ? 1.0 : 1e-4;

    cs_hw_schedule s;
    cs_diag d;
    cs_diag_clear(&d);
    if (cs_hw_schedule_load(sched_path, &s, &d)) return fail_diag(&d);
    if (s.n == 0) {
        cs_hw_schedule_free(&s);
        return cs_hw_usage(cmd, "%s has no tasks", sched_path);
    }
    size_t plen = strlen(prefix) + 16;
    char *csv_path = cs_xmalloc(plen), *trace_path = cs_xmalloc(plen);
    snprintf(csv_path, plen, "%s.csv", prefix);
    snprintf(trace_path, plen, "%s.trace.json", prefix);

    cs_hw_ctx *c = NULL;
    cs_hw_info info;
    cs_hw_rtask *rt = NULL;
    double *sizes = NULL, *scale = NULL, *start = NULL, *end = NULL, *best_start = NULL,
           *best_end = NULL, *iter_s = NULL;
    if ((rc = cs_hw_start(b, &cfg, &c, &info))) goto out_free;

    /* the plan */
    int nr = info.nranks;
    int matches = nr == s.group_ranks[CS_GROUP_WORLD];
    if (!matches && info.proc == 0 && !cfg.quiet && s.group_ranks[CS_GROUP_WORLD] != nr)
        fprintf(stderr, "collsim-hw: note: the schedule is for %d ranks, this run has %d: every "
                        "collective runs on all %d ranks\n", s.group_ranks[CS_GROUP_WORLD], nr, nr);
    rt = cs_xcalloc(s.n, sizeof *rt);
    sizes = cs_xcalloc(s.n, sizeof *sizes);
    scale = cs_xcalloc(s.n, sizeof *scale);
    for (size_t i = 0; i < s.n; i++) {
        const cs_hw_stask *t = &s.tasks[i];
        cs_hw_rtask *r = &rt[i];
        r->kind = (int)t->kind;
        r->stream = (int)t->stream;
        r->ndeps = t->ndeps;
        memcpy(r->deps, t->deps, sizeof r->deps);
        memcpy(r->on_start, t->on_start, sizeof r->on_start);
        if (t->kind == CS_TASK_COLLECTIVE) {
            int per_rank = t->op == CS_OP_ALL_GATHER || t->op == CS_OP_REDUCE_SCATTER;
            int ts = cs_dtype_size(t->dtype);
            double cnt = floor(t->size_bytes * bscale / ts / (per_rank ? s.group_ranks[t->group] : 1));
            r->op = t->op;
            r->dtype = t->dtype;
            r->count = cnt < 1 ? 1 : (size_t)cnt;
            r->group = matches ? (int)t->group : CS_GROUP_WORLD;
            int gsize = r->group == CS_GROUP_WORLD ? nr
                      : r->group == CS_GROUP_SHARD ? s.group_ranks[CS_GROUP_SHARD]
                                                   : s.group_ranks[CS_GROUP_REPLICA];
            sizes[i] = (double)r->count * ts * (per_rank ? gsize : 1);
            scale[i] = bscale;
        } else if (t->kind == CS_TASK_COMPUTE && t->flops > 0) {
            r->kind = CS_TASK_COMPUTE;
            r->flops = t->flops * fscale;
            scale[i] = fscale;
        } else {
            r->kind = CS_TASK_MEMORY; /* copies: memory tasks, and compute tasks without FLOPs */
            r->copy_bytes = (size_t)floor(t->mem_bytes / 2 * bscale);
            scale[i] = bscale;
        }
    }
    cs_hw_rplan plan = {s.n, rt, matches ? s.group_ranks[CS_GROUP_SHARD] : nr};
    cs_hw_guard(b, cfg.timeout_s, info.proc, "replay set-up", NULL);
    rc = b->replay_setup(c, &plan);
    cs_hw_watchdog_disarm();
    if (rc) goto out_backend;

    size_t nall = (size_t)nr * s.n;
    start = cs_xcalloc(nall, sizeof *start);
    end = cs_xcalloc(nall, sizeof *end);
    best_start = cs_xcalloc(nall, sizeof *best_start);
    best_end = cs_xcalloc(nall, sizeof *best_end);
    iter_s = cs_xcalloc((size_t)iters, sizeof *iter_s);
    double peak = 0;
    /* rank 0 keeps every measured timeline (iters x ranks x tasks doubles)
     * to report the median iteration's */
    double **all_start = cs_xcalloc((size_t)iters, sizeof *all_start);
    double **all_end = cs_xcalloc((size_t)iters, sizeof *all_end);
    for (int it = 0; it < warmup + iters && !rc; it++) {
        char what[96];
        snprintf(what, sizeof what, "replay iteration %d", it + 1);
        cs_hw_rresult res = {start, end, 0};
        cs_hw_guard(b, cfg.timeout_s, info.proc, what, NULL);
        rc = b->replay_run(c, &plan, &res);
        cs_hw_watchdog_disarm();
        if (rc || it < warmup) continue;
        if (res.peak_bytes > peak) peak = res.peak_bytes;
        double t_end = 0;
        for (size_t k = 0; k < nall; k++)
            if (end[k] > t_end) t_end = end[k];
        iter_s[it - warmup] = t_end;
        if (info.proc == 0) {
            all_start[it - warmup] = cs_xmalloc(nall * sizeof(double));
            all_end[it - warmup] = cs_xmalloc(nall * sizeof(double));
            memcpy(all_start[it - warmup], start, nall * sizeof(double));
            memcpy(all_end[it - warmup], end, nall * sizeof(double));
        }
    }
    if (!rc && info.proc == 0) {
        double tmin, tmed, tmax;
        cs_hw_stats(iter_s, iters, &tmin, &tmed, &tmax);
        int pick = 0;
        for (int i = 0; i < iters; i++)
            if (fabs(iter_s[i] - tmed) < fabs(iter_s[pick] - tmed)) pick = i;
        memcpy(best_start, all_start[pick], nall * sizeof(double));
        memcpy(best_end, all_end[pick], nall * sizeof(double));
        double *ps = cs_xmalloc(s.n * sizeof *ps), *pe = cs_xmalloc(s.n * sizeof *pe);
        double pred_iter = cs_hw_schedule_predict(&s, ps, pe);
        double pred_exposed = cs_hw_exposed_comm_s(&s, ps, pe);
        double pred_busy = compute_busy_s(&s, ps, pe);
        double meas_exposed = cs_hw_exposed_comm_s(&s, best_start, best_end);
        double meas_busy = compute_busy_s(&s, best_start, best_end);
        free(ps);
        free(pe);
        int io = write_csv(&s, best_start, best_end, scale, csv_path, &d);
        if (!io)
            io = write_trace(&s, nr, best_start, best_end, sizes, cfg.algo, cfg.proto, peak,
                             trace_path, &d);
        if (io) {
            char m[1024];
            cs_diag_format(&d, m, sizeof m);
            fprintf(stderr, "collsim-hw: %s\n", m);
            rc = CS_EIO;
        } else {
            printf("# collsim-hw replay: %s, %zu tasks, %d ranks (%d processes x %d), backend %s "
                   "(%s), host %s, device %s\n", sched_path, s.n, nr, info.nprocs,
                   info.local_ranks, b->name, info.library, info.host, info.device);
            printf("# work scale: FLOPs x %g, bytes x %g; median of %d iterations (%d warmup); "
                   "rank 0's timeline\n", fscale, bscale, iters, warmup);
            printf("  %-34s %14s %14s\n", "", "measured", "predicted");
            printf("  %-34s %14.6f %14.6f\n", "iteration time (s)", tmed, pred_iter);
            printf("  %-34s %14.6f %14s\n", "iteration time, fastest (s)", tmin, "-");
            printf("  %-34s %14.6f %14s\n", "iteration time, slowest (s)", tmax, "-");
            printf("  %-34s %14.6f %14.6f\n", "compute stream busy (s)", meas_busy, pred_busy);
            printf("  %-34s %14.6f %14.6f\n", "exposed communication (s)", meas_exposed,
                   pred_exposed);
            printf("  %-34s %14.3f %14s\n", gpu ? "peak device memory (GiB)" : "peak resident memory (GiB)",
                   peak / (1 << 30), "-");
            printf("# predicted: the schedule's predicted_s per task, no contention, unscaled\n");
            printf("# wrote %s and %s\n", csv_path, trace_path);
            fflush(stdout);
        }
    }
    for (int i = 0; i < iters; i++) {
        free(all_start[i]);
        free(all_end[i]);
    }
    free(all_start);
    free(all_end);
out_backend:
    if (rc) {
        int code = cs_hw_exit_code(rc);
        if (rc != CS_EIO) fprintf(stderr, "collsim-hw: rank %d: replay stopped\n", info.proc);
        b->finalize(c, code);
        rc = code;
    } else {
        b->finalize(c, 0);
    }
out_free:
    free(rt);
    free(sizes);
    free(scale);
    free(start);
    free(end);
    free(best_start);
    free(best_end);
    free(iter_s);
    free(csv_path);
    free(trace_path);
    cs_hw_schedule_free(&s);
    return rc;
}
