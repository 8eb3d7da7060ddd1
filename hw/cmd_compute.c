/* SPDX-License-Identifier: MIT */
/*
 * cmd_compute.c - `collsim-hw compute`: what the compute model is
 * calibrated with. Square GEMMs (m = n = k) over a range of sizes give the
 * achieved FLOP/s vs size (cuBLAS on a GPU; the blocked C SGEMM of
 * cpugemm.c on the MPI backend), and device-to-device copies give the
 * memory bandwidth (counted as bytes read + bytes written, 2 x size, the
 * convention of hbm_bandwidth in the cluster YAML). Every rank runs the
 * same work at the same time (as in training); each row reports the
 * slowest rank's times. With --shapes FILE (`collsim simulate --kernels
 * FILE`: the compute model's kernels) it measures exactly the model's
 * GEMMs (each distinct m x n x k once) and, for its memory-bound kernels,
 * a copy moving the same bytes (bytes / 2 copied: read + write); fused
 * attention and batched GEMMs have no kernel here and are counted, not
 * measured.
 *
 * CSV columns (a contract, in this order):
 *   kind            gemm | copy
 *   backend         nccl | mpi
 *   dtype           GEMM element type (fp32, bf16, ...); copy: "bytes"
 *   m,n,k           GEMM shape (0 for copies)
 *   bytes           copy size (0 for GEMMs)
 *   ranks           ranks running concurrently
 *   iters           timed iterations
 *   time_min_us,time_median_us,time_max_us
 *   tflops          2 m n k / median time / 1e12 (0 for copies)
 *   bandwidth_GBps  2 x bytes / median time / 1e9 (0 for GEMMs)
 *   host,device,library_version
 *   kernel          --shapes: the first model kernel of that shape ("" otherwise)
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/limit.h"
#include "hwcli.h"
#include "session.h"
#include "watchdog.h"

static const char *const csv_header =
    "kind,backend,dtype,m,n,k,bytes,ranks,iters,time_min_us,time_median_us,time_max_us,tflops,"
    "bandwidth_GBps,host,device,library_version,kernel";

static void help(FILE *f)
{
    fprintf(f,
            "Usage: collsim-hw compute [--backend mpi|nccl] [--dtype T] [--min-n N] [--max-n N]\n"
            "         [--factor F] [--copy-min SIZE] [--copy-max SIZE] [--iters N] [--warmup N]\n"
            "         [--shapes KERNELS.csv] [--timeout S] [-o FILE.csv]\n"
            "\n"
            "GEMM throughput vs size and memory-copy bandwidth, to calibrate the compute model.\n"
            "\n"
            "  --backend B       mpi (default: CPU, blocked C SGEMM, memcpy) or nccl (GPU: cuBLAS,\n"
            "                    cudaMemcpy device to device, on each process's first GPU)\n"
            "  --dtype T         GEMM type: nccl bf16 (default), fp16, fp32, tf32, fp64; mpi fp32\n"
            "  --min-n/--max-n N square GEMM sizes (default nccl 256..8192, mpi 64..512)\n"
            "  --factor F        size multiplier for both sweeps (default 2 for GEMMs, 4 for copies)\n"
            "  --copy-min/--copy-max SIZE  copy sizes (default nccl 1M..1G, mpi 64K..64M)\n"
            "  --shapes FILE     instead of the sweeps, the kernels `collsim simulate --kernels FILE`\n"
            "                    wrote: each distinct GEMM, and a copy of each memory-bound kernel's\n"
            "                    bytes (fused attention and batched GEMMs are skipped, and counted)\n"
            "  --iters N         timed iterations (default nccl 20, mpi 3); --warmup N (default 2)\n"
            "  --timeout S       give up after S seconds per measurement (default 300)\n"
            "  -o FILE.csv       CSV (columns: hw/README.md), rows written as measured\n"
            "\n");
    cs_hw_exit_help(f);
}

static const cs_hw_command command = {
    .name = "compute",
    .help = help,
    .common = CS_HW_COMMON_BACKEND | CS_HW_COMMON_ITERS | CS_HW_COMMON_TIMEOUT |
              CS_HW_COMMON_OUTPUT,
    .iters_max = 100000,
    .backend = "mpi",
    .iters = 0, /* the backend's compute_iters */
    .warmup = 2,
};

/* compute's own options; 0 = the backend's default */
typedef struct compute_args {
    cs_dtype dtype;
    int have_dtype, min_n, max_n;
    double factor, cmin, cmax;
    const char *shapes;
} compute_args;

/* One thing to measure: a GEMM (n > 0) or a copy of `bytes`, and the
 * model kernel it stands for ("" for the sweeps). */
typedef struct job {
    int m, n, k;
    size_t bytes;
    char kernel[48];
} job;

static int parse_dtype(const char *cmd, const char *text, void *value)
{
    compute_args *a = value;
    if (cs_dtype_parse(text, &a->dtype) || a->dtype == CS_DTYPE_FP8)
        return cs_hw_usage(cmd, "unknown --dtype '%s' (expected bf16, fp16, fp32, tf32 or "
                                "fp64)", text);
    a->have_dtype = 1;
    return 0;
}

/* The backend's defaults for what was not given, then the checks. */
static int compute_check(cs_hw_session *s, compute_args *a)
{
    const char *cmd = s->cmd->name;
    int rc = cs_hw_session_pick(s);
    if (rc) return rc;
    const cs_hw_backend *b = s->b;
    if (!a->have_dtype) a->dtype = b->gemm_dtype;
    if (b->gemm_dtype_only && a->dtype != b->gemm_dtype)
        return cs_hw_usage(cmd, "the %s backend's GEMM is %s only, got --dtype %s", b->name,
                           cs_dtype_name(b->gemm_dtype), cs_dtype_name(a->dtype));
    if (!a->min_n) a->min_n = b->gemm_min_n;
    if (!a->max_n) a->max_n = b->gemm_max_n;
    if (!a->cmin) a->cmin = b->copy_min_bytes;
    if (!a->cmax) a->cmax = b->copy_max_bytes;
    if (!s->iters) s->iters = b->compute_iters;
    if (a->min_n > a->max_n) return cs_hw_usage(cmd, "%s", "--min-n must not exceed --max-n");
    if (a->cmin > a->cmax) return cs_hw_usage(cmd, "%s", "--copy-min must not exceed --copy-max");
    return 0;
}

/* One GEMM of n x n x n (n > 0) or one copy of `bytes` (n = 0), timed
 * under the watchdog; process 0 prints its table row and writes its CSV
 * row (*io: the row could not be written). */
static int compute_one(cs_hw_session *s, const compute_args *a, const job *j, double *times,
                       int *io)
{
    const cs_hw_backend *b = s->b;
    const int m = j->m, n = j->n, k = j->k;
    const size_t bytes = j->bytes;
    char what[96];
    if (n) snprintf(what, sizeof what, "a %dx%dx%d GEMM", m, n, k);
    else snprintf(what, sizeof what, "a copy of %zu bytes", bytes);
    cs_hw_session_guard(s, what);
    int rc = n ? b->gemm_time(s->ctx, a->dtype, m, n, k, s->warmup, s->iters, times)
               : b->copy_time(s->ctx, bytes, s->warmup, s->iters, times);
    cs_hw_watchdog_disarm();
    if (rc || s->info.proc != 0) return rc;
    double tmin, tmed, tmax;
    cs_hw_stats(times, s->iters, &tmin, &tmed, &tmax);
    /* a GEMM has TFLOPS, a copy a bandwidth (read + write); the other is "-" / 0 */
    char table_tf[32] = "-", table_bw[32] = "-", csv_tf[32] = "0", csv_bw[32] = "0";
    if (n) {
        double tflops = 2.0 * m * (double)n * k / tmed / 1e12;
        snprintf(table_tf, sizeof table_tf, "%.3f", tflops);
        snprintf(csv_tf, sizeof csv_tf, "%.6f", tflops);
    } else {
        double bw = 2.0 * (double)bytes / tmed / 1e9;
        snprintf(table_bw, sizeof table_bw, "%.2f", bw);
        snprintf(csv_bw, sizeof csv_bw, "%.4f", bw);
    }
    const char *kind = n ? "gemm" : "copy";
    printf("  %-5s %6d %6d %6d %12zu %10.2f %10.2f %10.2f %9s %9s %s\n", kind, m, n, k, bytes,
           tmed * 1e6, tmin * 1e6, tmax * 1e6, table_tf, table_bw, j->kernel);
    fflush(stdout);
    *io = cs_hw_rowfile_row(&s->rows,
                            "%s,%s,%s,%d,%d,%d,%zu,%d,%d,%.4f,%.4f,%.4f,%s,%s,%s,%s,%s,%s\n", kind,
                            b->name, n ? cs_dtype_name(a->dtype) : "bytes", m, n, k, bytes,
                            s->info.nranks, s->iters, tmin * 1e6, tmed * 1e6, tmax * 1e6, csv_tf,
                            csv_bw, s->info.host, s->info.device, s->info.library, j->kernel);
    return 0;
}

/* ---- the jobs ---- */

typedef struct jobs {
    job *v;
    size_t n, cap;
    int skipped; /* --shapes rows with no kernel here (fused attention, batched GEMMs) */
} jobs;

static void add_job(jobs *js, job j)
{
    for (size_t i = 0; i < js->n; i++) /* each shape once */
        if (js->v[i].m == j.m && js->v[i].n == j.n && js->v[i].k == j.k &&
            js->v[i].bytes == j.bytes)
            return;
    if (js->n == js->cap) {
        js->cap = js->cap ? 2 * js->cap : 32;
        js->v = cs_xrealloc(js->v, js->cap * sizeof *js->v);
    }
    js->v[js->n++] = j;
}

/* The square GEMMs and the copies of the sweeps. */
static void sweep_jobs(const compute_args *a, jobs *js)
{
    double gfactor = a->factor ? a->factor : 2, cfactor = a->factor ? a->factor : 4;
    for (double x = a->min_n; x <= a->max_n * (1 + 1e-12); x *= gfactor) {
        int n = (int)floor(x);
        add_job(js, (job){.m = n, .n = n, .k = n});
    }
    for (double x = a->cmin; x <= a->cmax * (1 + 1e-12); x *= cfactor)
        add_job(js, (job){.bytes = (size_t)floor(x)});
}

/* The fields of one CSV line (no quoting: the kernel file has none),
 * split in place; returns how many. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = 0;
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *c = strchr(p, ',');
        if (!c) break;
        *c = 0;
        p = c + 1;
    }
    return n;
}

enum { F_CLASS, F_KERNEL, F_M, F_N, F_K, F_BATCH, F_BYTES, F_COUNT };
static const char *const shape_cols[F_COUNT] = {"class", "kernel", "m", "n", "k", "batch", "bytes"};

/* A dimension: a whole number in [1, 2^31); 0 and the value, or -1. */
static int dim(const char *t, int *out)
{
    char *end;
    double v = strtod(t, &end);
    if (end == t || *end || !(v >= 1 && v < 2147483648.0) || v != floor(v)) return -1;
    *out = (int)v;
    return 0;
}

/* One row of the kernel file into js (a job, a skip, or an error). */
static int shape_row(const char *cmd, const char *path, int line, char **f, const int *at, jobs *js)
{
    job j = {0};
    snprintf(j.kernel, sizeof j.kernel, "%s", f[at[F_KERNEL]]);
    const char *cls = f[at[F_CLASS]];
    if (!strcmp(cls, "attention")) return js->skipped++, 0;
    if (!strcmp(cls, "memory")) {
        char *end;
        double b = strtod(f[at[F_BYTES]], &end);
        if (end == f[at[F_BYTES]] || *end || !(b >= 2 && b < 1e15))
            return cs_hw_usage(cmd, "%s:%d: bytes must be a number in [2, 1e15), got '%s'", path,
                               line, f[at[F_BYTES]]);
        j.bytes = (size_t)(b / 2); /* read + write */
        add_job(js, j);
        return 0;
    }
    if (strcmp(cls, "gemm"))
        return cs_hw_usage(cmd, "%s:%d: class must be gemm, attention or memory, got '%s'", path,
                           line, cls);
    int batch;
    if (dim(f[at[F_M]], &j.m) || dim(f[at[F_N]], &j.n) || dim(f[at[F_K]], &j.k) ||
        dim(f[at[F_BATCH]], &batch))
        return cs_hw_usage(cmd, "%s:%d: m, n, k and batch must be whole numbers >= 1", path, line);
    if (batch > 1) return js->skipped++, 0;
    /* its three fp32 operands must be allocatable: refused before any
     * device work, like a memory kernel's bytes (base/limit.h) */
    double operands = 4.0 * ((double)j.m * j.k + (double)j.k * j.n + (double)j.m * j.n);
    if (!(operands < CS_LIMIT_BYTES_MAX))
        return cs_hw_usage(cmd, "%s:%d: a %d x %d x %d GEMM needs %.3g bytes of operands, more "
                                "than the %.0e this tool allocates", path, line, j.m, j.n, j.k,
                           operands, CS_LIMIT_BYTES_MAX);
    add_job(js, j);
    return 0;
}

/* The kernels of `collsim simulate --kernels FILE`. */
static int shape_jobs(const char *cmd, const char *path, jobs *js)
{
    /* a file that cannot be read is exit 1 (hw/README.md), not a usage
     * error: missing, unreadable, or a directory (which fopen opens) */
    struct stat st;
    FILE *fp = stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? NULL : fopen(path, "r");
    if (!fp) {
        const char *why = stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? "it is a directory"
                                                                       : strerror(errno);
        if (cs_hw_launch_rank() == 0)
            fprintf(stderr, "collsim-hw %s: cannot read --shapes %s: %s\n", cmd, path, why);
        return CS_HW_EXIT_IO;
    }
    char buf[1024], *f[32];
    int at[F_COUNT], rc = 0, line = 1;
    if (!fgets(buf, sizeof buf, fp)) rc = cs_hw_usage(cmd, "%s: empty, expected a header", path);
    int nf = rc ? 0 : split(buf, f, 32);
    for (int c = 0; c < F_COUNT && !rc; c++) {
        at[c] = -1;
        for (int i = 0; i < nf; i++)
            if (!strcmp(f[i], shape_cols[c])) at[c] = i;
        if (at[c] < 0)
            rc = cs_hw_usage(cmd, "%s:1: no column '%s' (the header of collsim simulate "
                                  "--kernels)", path, shape_cols[c]);
    }
    while (!rc && fgets(buf, sizeof buf, fp)) {
        line++;
        if (split(buf, f, 32) != nf)
            rc = cs_hw_usage(cmd, "%s:%d: expected %d fields", path, line, nf);
        else rc = shape_row(cmd, path, line, f, at, js);
    }
    fclose(fp);
    if (!rc && js->n == 0) rc = cs_hw_usage(cmd, "%s: no GEMM or memory kernel to measure", path);
    return rc;
}

int cs_hw_cmd_compute(int argc, char **argv)
{
    compute_args a = {.dtype = CS_DTYPE_FP32};
    const cs_hw_opt opts[] = {
        {"dtype", 0, CS_HW_ARG_CUSTOM, &a, 0, 0, parse_dtype},
        {"min-n", 0, CS_HW_ARG_INT, &a.min_n, 1, 65536, NULL},
        {"max-n", 0, CS_HW_ARG_INT, &a.max_n, 1, 65536, NULL},
        {"factor", 0, CS_HW_ARG_DOUBLE, &a.factor, 1.0001, 1e6, NULL},
        {"copy-min", 0, CS_HW_ARG_SIZE, &a.cmin, 0, 0, NULL},
        {"copy-max", 0, CS_HW_ARG_SIZE, &a.cmax, 0, 0, NULL},
        {"shapes", 0, CS_HW_ARG_STRING, &a.shapes, 0, 0, NULL},
    };
    cs_hw_session s;
    if (cs_hw_session_args(&s, &command, argc, argv, opts, sizeof opts / sizeof opts[0]))
        return s.exit;
    int rc = compute_check(&s, &a);
    if (rc) return rc;
    jobs js = {0};
    if (a.shapes) rc = shape_jobs(s.cmd->name, a.shapes, &js);
    else sweep_jobs(&a, &js);
    if (rc || (rc = cs_hw_session_start(&s, csv_header))) {
        free(js.v);
        return rc;
    }
    if (s.info.proc == 0) {
        printf("# collsim-hw compute: backend %s (%s), %d ranks, host %s, device %s\n", s.b->name,
               s.info.library, s.info.nranks, s.info.host, s.info.device);
        printf("# %-5s %6s %6s %6s %12s %10s %10s %10s %9s %9s\n", "kind", "m", "n", "k", "bytes",
               "time", "min", "max", "TFLOPS", "GB/s");
        if (js.skipped)
            printf("# %d kernel(s) of %s not measured: fused attention and batched GEMMs have "
                   "no kernel in collsim-hw\n", js.skipped, a.shapes);
        fflush(stdout);
    }
    double *times = cs_xmalloc((size_t)s.iters * sizeof *times);
    int io = 0;
    for (size_t i = 0; i < js.n && !rc && !io; i++) rc = compute_one(&s, &a, &js.v[i], times, &io);
    free(times);
    free(js.v);
    io |= cs_hw_rowfile_close(&s.rows);
    if (rc || io) {
        cs_hw_session_stopped(&s, "");
        return cs_hw_session_end(&s, io ? CS_HW_EXIT_IO : cs_hw_exit_code(rc));
    }
    return cs_hw_session_end(&s, CS_HW_EXIT_OK);
}
