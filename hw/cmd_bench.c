/* SPDX-License-Identifier: MIT */
/*
 * cmd_bench.c - `collsim-hw bench`: one collective over a range of sizes,
 * like nccl-tests' *_perf, on any backend.
 *
 * Sizes are generated exactly as `collsim collective` generates them
 * (min, min x factor, ... <= max; whole elements; all_gather /
 * reduce_scatter / all_to_all sizes are the total over ranks, rounded down
 * to a multiple of ranks x type size; all_to_all's count is per peer), so measured and predicted rows join on
 * (op, size_bytes, ranks). Each size: warmup collectives, then `iters`
 * timed ones; time_us is the median of the per-iteration times (each the
 * slowest rank's), algbw = size / time, busbw = algbw x nccl-tests' factor
 * (cs_op_busbw_factor). With --check the send buffers hold the pattern of
 * pattern.h and the last iteration's result is verified on every rank.
 * Rank 0 prints the table and appends each row to the CSV the moment it
 * is measured (rowfile.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/limit.h"
#include "hwcli.h"
#include "out/report.h"
#include "session.h"
#include "watchdog.h"

static void help(FILE *f)
{
    fprintf(f,
            "Usage: collsim-hw bench --backend nccl|mpi --op OP [--min SIZE] [--max SIZE]\n"
            "         [--factor F] [--dtype T] [--iters N] [--warmup N] [--algo A] [--proto P]\n"
            "         [--check] [-g GPUS] [--timeout S] [-o FILE.csv]\n"
            "\n"
            "Times one collective per size, like nccl-tests (mpirun -np N collsim-hw bench ...\n"
            "for N processes; -g G drives G GPUs from one process with the nccl backend).\n"
            "\n"
            "  --backend B      nccl (CUDA + NCCL) or mpi (CPU ranks, host memory)\n"
            "  --op OP          all_reduce, all_gather, reduce_scatter, broadcast, reduce,\n"
            "                   all_to_all (alltoall), send_recv (sendrecv: to rank + 1)\n"
            "  --min/--max SIZE sizes in bytes, nccl-tests convention (4K = 4096; the total\n"
            "                   over ranks for all_gather/reduce_scatter/all_to_all); default\n"
            "                   32M..32M; --min >= 1, --max <= 1e15\n"
            "  --factor F       size multiplier, > 1 (default 2; at most 100000 sizes)\n"
            "  --dtype T        float (default), half, bfloat16, double, fp8 (fp32, fp16, ...)\n"
            "  --iters N        timed iterations per size (default 20); --warmup N (default 5)\n"
            "  --algo A         force the algorithm: ring, tree (all_reduce), or a library name\n"
            "                   (nccl: nvls, nvlstree, collnetdirect, collnetchain, pat; mpi:\n"
            "                   Open MPI tuned names such as recursive_doubling, rabenseifner;\n"
            "                   see hw/README.md). Default: the library's own choice.\n"
            "  --proto P        force the NCCL protocol: ll, ll128, simple (ignored by mpi)\n"
            "  --check          verify every result (rank-dependent data), like nccl-tests -c\n"
            "  -g GPUS          GPUs driven by this process (nccl backend; default 1)\n"
            "  --timeout S      give up on a size after S seconds (default 300); the rows\n"
            "                   measured so far stay in the CSV, exit status 5\n"
            "  -o FILE.csv      CSV: the columns of `collsim collective --format csv` (engine =\n"
            "                   measured, time_us = median) then time_min_us, time_median_us,\n"
            "                   time_max_us, iters, host, backend, library_version\n"
            "  --inject F       testing aid: corrupt (one wrong element, --check must fail) or\n"
            "                   hang (the last rank skips the second size's collective)\n"
            "\n");
    cs_hw_exit_help(f);
}

static const char *csv_columns =
    "time_min_us,time_median_us,time_max_us,iters,host,backend,library_version";

static const cs_hw_command command = {
    .name = "bench",
    .help = help,
    .common = CS_HW_COMMON_ALL,
    .iters_max = 100000,
    .iters = 20,
    .warmup = 5,
};

/* bench's own options */
typedef struct bench_args {
    cs_op op;
    int have_op, check, corrupt, hang;
    double min_b, max_b, factor; /* --min, --max: bytes */
    cs_dtype dtype;
} bench_args;

static int parse_op(const char *cmd, const char *text, void *value)
{
    bench_args *a = value;
    if (cs_op_parse(text, &a->op))
        return cs_hw_usage(cmd, "unknown --op '%s' (expected all_reduce, all_gather, "
                                "reduce_scatter, broadcast or reduce)", text);
    a->have_op = 1;
    return 0;
}

static int parse_factor(const char *cmd, const char *text, void *value)
{
    char *end;
    double f = strtod(text, &end);
    if (!*text || *end || !(f > 1.0) || !isfinite(f))
        return cs_hw_usage(cmd, "--factor expects a number > 1, got '%s'", text);
    ((bench_args *)value)->factor = f;
    return 0;
}

static int parse_dtype(const char *cmd, const char *text, void *value)
{
    cs_dtype *t = &((bench_args *)value)->dtype;
    if (cs_dtype_parse(text, t) || *t == CS_DTYPE_TF32)
        return cs_hw_usage(cmd, "unknown --dtype '%s' (expected float, half, bfloat16, "
                                "double or fp8)", text);
    return 0;
}

static int parse_inject(const char *cmd, const char *text, void *value)
{
    bench_args *a = value;
    if (!strcmp(text, "corrupt")) a->corrupt = 1;
    else if (!strcmp(text, "hang")) a->hang = 1;
    else return cs_hw_usage(cmd, "unknown --inject '%s' (expected corrupt or hang)", text);
    return 0;
}

/* The checks of bench's options, the backend's among them: 0 or an exit code. */
static int bench_check(cs_hw_session *s, const bench_args *a)
{
    const char *cmd = s->cmd->name;
    if (!a->have_op) return cs_hw_usage(cmd, "%s", "--op is required");
    /* the sweep multiplies from --min: from 0 it never ends */
    if (!(a->min_b >= 1)) return cs_hw_usage(cmd, "--min must be at least 1 byte, got %.0f", a->min_b);
    if (a->min_b > a->max_b) return cs_hw_usage(cmd, "%s", "--min must not exceed --max");
    if (!(a->max_b <= CS_LIMIT_BYTES_MAX)) /* counts stay exact and within size_t */
        return cs_hw_usage(cmd, "--max must be at most %.0e bytes, got %.0f", CS_LIMIT_BYTES_MAX,
                           a->max_b);
    /* a factor within rounding of 1: a sweep that never ends in practice
     * (collsim collective refuses it the same way, limits.h) */
    double sizes = floor(log(a->max_b / a->min_b) / log(a->factor) * (1 + 1e-12)) + 1;
    if (a->min_b < a->max_b && !(sizes <= CS_LIMIT_HI_SWEEP_SIZES))
        return cs_hw_usage(cmd, "--factor %.17g makes a sweep of %.3g sizes from %.0f to %.0f B "
                                "(at most %d): give a larger --factor",
                           a->factor, sizes, a->min_b, a->max_b, CS_LIMIT_HI_SWEEP_SIZES);
    if (a->corrupt && !a->check) return cs_hw_usage(cmd, "%s", "--inject corrupt needs --check");
    s->cfg.algo_op = (int)a->op;
    int rc = cs_hw_session_pick(s);
    if (rc) return rc;
    if (s->cfg.algo && !strcasecmp(s->cfg.algo, "tree") && a->op != CS_OP_ALL_REDUCE)
        return cs_hw_usage(cmd, "--algo tree implements all_reduce only (as in NCCL), not %s",
                           cs_op_name(a->op));
    return 0;
}

/* What the sizes loop carries. */
typedef struct bench_run {
    char algo[32], proto[32]; /* the CSV's labels, lower case */
    int ts, per_rank, n;      /* type size, sizes are totals over the n ranks */
    double *times;            /* iters */
    double busbw_sum;
    int nsizes;
    long long wrong_total;
} bench_run;

enum { BENCH_EROW = 1 }; /* a CSV row could not be written (message printed) */

static void lower_label(char *buf, size_t len, const char *s)
{
    snprintf(buf, len, "%s", s);
    for (char *p = buf; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
}

/* Per-rank element count of a size (whole elements). */
static double count_of(const bench_run *r, double size)
{
    return floor(size / r->ts / (r->per_rank ? r->n : 1));
}

/* Labels, and buffers for the largest size. */
static int bench_setup(cs_hw_session *s, const bench_args *a, bench_run *r)
{
    const cs_hw_config *cfg = &s->cfg;
    lower_label(r->algo, sizeof r->algo, cfg->algo ? cfg->algo : "auto");
    lower_label(r->proto, sizeof r->proto,
                !s->b->protocols ? "none" : cfg->proto ? cfg->proto : "auto");
    r->ts = cs_dtype_size(a->dtype);
    r->per_rank = a->op == CS_OP_ALL_GATHER || a->op == CS_OP_REDUCE_SCATTER ||
                  a->op == CS_OP_ALL_TO_ALL;
    r->n = s->info.nranks;
    size_t max_count = 0;
    for (double sz = a->min_b; sz <= a->max_b * (1 + 1e-12); sz *= a->factor) {
        double count = count_of(r, sz);
        if (count > (double)max_count) max_count = (size_t)count;
        if (a->min_b == a->max_b) break;
    }
    if (max_count == 0) max_count = 1;
    return s->b->coll_setup(s->ctx, a->op, a->dtype, max_count);
}

static void bench_banner(const cs_hw_session *s, const bench_args *a, const bench_run *r)
{
    const cs_hw_info *info = &s->info;
    printf("# collsim-hw %s bench: %s, %d ranks (%d processes x %d), backend %s (%s), "
           "host %s, device %s\n", CS_VERSION, cs_op_name(a->op), r->n, info->nprocs,
           info->local_ranks, s->b->name, info->library, info->host, info->device);
    printf("# algo %s, proto %s, %d warmup + %d timed iterations per size%s\n#\n", r->algo,
           r->proto, s->warmup, s->iters, a->check ? ", results checked" : "");
    printf("# %12s %12s %9s %6s %5s %10s %8s %8s %7s %10s %10s\n", "size", "count", "type",
           "redop", "root", "time", "algbw", "busbw", "#wrong", "min", "max");
    printf("# %12s %12s %9s %6s %5s %10s %8s %8s %7s %10s %10s\n", "(B)", "(elements)", "", "",
           "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)");
    fflush(stdout);
}

/* Process 0: the table row and the CSV row of one measured size. */
static int bench_row(cs_hw_session *s, const bench_args *a, bench_run *r, double count,
                     double size, long long wrong)
{
    double tmin, tmed, tmax;
    cs_hw_stats(r->times, s->iters, &tmin, &tmed, &tmax);
    double algbw = size / tmed / 1e9;
    double busbw = algbw * cs_op_busbw_factor(a->op, r->n);
    int root = a->op == CS_OP_BROADCAST || a->op == CS_OP_REDUCE ? 0 : -1;
    int moves = a->op == CS_OP_ALL_GATHER || a->op == CS_OP_BROADCAST ||
                a->op == CS_OP_ALL_TO_ALL || a->op == CS_OP_SEND_RECV;
    const char *redop = moves ? "none" : "sum";
    const char *type = cs_dtype_nccl_name(a->dtype);
    char wbuf[24];
    if (wrong >= 0) snprintf(wbuf, sizeof wbuf, "%lld", wrong);
    else snprintf(wbuf, sizeof wbuf, "N/A");
    printf("  %12.0f %12.0f %9s %6s %5d %10.2f %8.2f %8.2f %7s %10.2f %10.2f\n", size, count,
           type, redop, root, tmed * 1e6, algbw, busbw, wbuf, tmin * 1e6, tmax * 1e6);
    fflush(stdout);
    if (cs_hw_rowfile_row(&s->rows,
                          "%s,%s,%s,measured,%d,%.0f,%.0f,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%d,%s,"
                          "%s,%s\n",
                          cs_op_name(a->op), r->algo, r->proto, r->n, size, count, type,
                          tmed * 1e6, algbw, busbw, tmin * 1e6, tmed * 1e6, tmax * 1e6, s->iters,
                          s->info.host, s->b->name, s->info.library)) {
        fprintf(stderr, "collsim-hw: %s: cannot write a row\n", s->output);
        return BENCH_EROW;
    }
    r->busbw_sum += busbw;
    if (wrong > 0) r->wrong_total += wrong;
    return 0;
}

/* One size: fill (--check), time under the watchdog, check, report. */
static int bench_size(cs_hw_session *s, const bench_args *a, bench_run *r, double count,
                      double size)
{
    const cs_hw_backend *b = s->b;
    size_t cnt = (size_t)count;
    char what[160];
    snprintf(what, sizeof what, "%s of %.0f bytes", cs_op_name(a->op), size);
    int rc = a->check ? b->coll_fill(s->ctx, a->op, a->dtype, cnt) : 0;
    cs_hw_session_guard(s, what);
    if (!rc)
        rc = b->coll_time(s->ctx, a->op, a->dtype, cnt, s->warmup, s->iters,
                          a->hang && r->nsizes == 1, r->times);
    cs_hw_watchdog_disarm();
    long long wrong = -1;
    if (!rc && a->check) rc = b->coll_check(s->ctx, a->op, a->dtype, cnt, a->corrupt, &wrong);
    if (!rc && s->info.proc == 0) rc = bench_row(s, a, r, count, size, wrong);
    if (!rc) r->nsizes++;
    return rc;
}

/* The table's last lines, the CSV closed, the backend ended. */
static int bench_summary(cs_hw_session *s, const bench_args *a, const bench_run *r)
{
    if (s->info.proc == 0) {
        printf("# Out of bounds values : %lld %s\n", a->check ? r->wrong_total : 0,
               !a->check ? "(not checked)" : r->wrong_total ? "ERROR" : "OK");
        printf("# Avg bus bandwidth    : %g\n#\n", r->nsizes ? r->busbw_sum / r->nsizes : 0.0);
        fflush(stdout);
    }
    int io = cs_hw_rowfile_close(&s->rows);
    cs_hw_session_end(s, 0);
    if (io) {
        fprintf(stderr, "collsim-hw: %s: cannot close the CSV\n", s->output);
        return CS_HW_EXIT_IO;
    }
    return r->wrong_total ? CS_HW_EXIT_WRONG : CS_HW_EXIT_OK;
}

int cs_hw_cmd_bench(int argc, char **argv)
{
    bench_args a = {.op = CS_OP_ALL_REDUCE, .min_b = 32 << 20, .max_b = 32 << 20, .factor = 2,
                    .dtype = CS_DTYPE_FP32};
    const cs_hw_opt opts[] = {
        {"op", 0, CS_HW_ARG_CUSTOM, &a, 0, 0, parse_op},
        {"min", 0, CS_HW_ARG_SIZE, &a.min_b, 0, 0, NULL},
        {"max", 0, CS_HW_ARG_SIZE, &a.max_b, 0, 0, NULL},
        {"factor", 0, CS_HW_ARG_CUSTOM, &a, 0, 0, parse_factor},
        {"dtype", 0, CS_HW_ARG_CUSTOM, &a, 0, 0, parse_dtype},
        {"check", 0, CS_HW_ARG_FLAG, &a.check, 0, 0, NULL},
        {"inject", 0, CS_HW_ARG_CUSTOM, &a, 0, 0, parse_inject},
    };
    cs_hw_session s;
    if (cs_hw_session_args(&s, &command, argc, argv, opts, sizeof opts / sizeof opts[0]))
        return s.exit;
    int rc = bench_check(&s, &a);
    if (rc) return rc;
    /* the CSV is created before any device work, by the launcher's rank 0 */
    char header[512];
    snprintf(header, sizeof header, "%s,%s", cs_report_collective_csv_header(), csv_columns);
    if ((rc = cs_hw_session_start(&s, header))) return rc;

    bench_run r = {.times = cs_xmalloc((size_t)s.iters * sizeof(double))};
    rc = bench_setup(&s, &a, &r);
    if (s.info.proc == 0 && !rc) bench_banner(&s, &a, &r);
    for (double sz = a.min_b; !rc && sz <= a.max_b * (1 + 1e-12); sz *= a.factor) {
        double count = count_of(&r, sz);
        if (count >= 1) rc = bench_size(&s, &a, &r, count, count * r.ts * (r.per_rank ? r.n : 1));
        if (a.min_b == a.max_b) break;
    }
    free(r.times);
    if (rc == BENCH_EROW) return cs_hw_session_end(&s, CS_HW_EXIT_IO);
    if (rc) {
        cs_hw_session_stopped(&s, rc == CS_HW_ETIMEOUT ? " (timeout)" : "");
        return cs_hw_session_end(&s, cs_hw_exit_code(rc));
    }
    return bench_summary(&s, &a, &r);
}
