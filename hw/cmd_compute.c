/* SPDX-License-Identifier: MIT */
/*
 * cmd_compute.c - `collsim-hw compute`: what the compute model is
 * calibrated with. Square GEMMs (m = n = k) over a range of sizes give the
 * achieved FLOP/s vs size (cuBLAS on a GPU; the blocked C SGEMM of
 * cpugemm.c on the MPI backend), and device-to-device copies give the
 * memory bandwidth (counted as bytes read + bytes written, 2 x size, the
 * convention of hbm_bandwidth in the cluster YAML). Every rank runs the
 * same work at the same time (as in training); each row reports the
 * slowest rank's times.
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
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "hwcli.h"
#include "rowfile.h"
#include "watchdog.h"

static const char *const cmd = "compute";

static const char *const csv_header =
    "kind,backend,dtype,m,n,k,bytes,ranks,iters,time_min_us,time_median_us,time_max_us,tflops,"
    "bandwidth_GBps,host,device,library_version";

static void help(FILE *f)
{
    fprintf(f,
            "Usage: collsim-hw compute [--backend mpi|nccl] [--dtype T] [--min-n N] [--max-n N]\n"
            "         [--factor F] [--copy-min SIZE] [--copy-max SIZE] [--iters N] [--warmup N]\n"
            "         [--timeout S] [-o FILE.csv]\n"
            "\n"
            "GEMM throughput vs size and memory-copy bandwidth, to calibrate the compute model.\n"
            "\n"
            "  --backend B       mpi (default: CPU, blocked C SGEMM, memcpy) or nccl (GPU: cuBLAS,\n"
            "                    cudaMemcpy device to device, on each process's first GPU)\n"
            "  --dtype T         GEMM type: nccl bf16 (default), fp16, fp32, tf32, fp64; mpi fp32\n"
            "  --min-n/--max-n N square GEMM sizes (default nccl 256..8192, mpi 64..512)\n"
            "  --factor F        size multiplier for both sweeps (default 2 for GEMMs, 4 for copies)\n"
            "  --copy-min/--copy-max SIZE  copy sizes (default nccl 1M..1G, mpi 64K..64M)\n"
            "  --iters N         timed iterations (default nccl 20, mpi 3); --warmup N (default 2)\n"
            "  --timeout S       give up after S seconds per measurement (default 300)\n"
            "  -o FILE.csv       CSV (columns: hw/README.md), rows written as measured\n"
            "\n"
            "Exit status: 0 ok, 1 CSV not writable, 2 bad usage, 4 library failure, 5 timeout,\n"
            "77 backend unavailable.\n");
}

int cs_hw_cmd_compute(int argc, char **argv)
{
    enum { O_BACKEND = 256, O_DTYPE, O_MINN, O_MAXN, O_FACTOR, O_CMIN, O_CMAX, O_ITERS, O_WARMUP,
           O_TIMEOUT };
    static const struct option opts[] = {
        {"backend", required_argument, 0, O_BACKEND}, {"dtype", required_argument, 0, O_DTYPE},
        {"min-n", required_argument, 0, O_MINN},      {"max-n", required_argument, 0, O_MAXN},
        {"factor", required_argument, 0, O_FACTOR},   {"copy-min", required_argument, 0, O_CMIN},
        {"copy-max", required_argument, 0, O_CMAX},   {"iters", required_argument, 0, O_ITERS},
        {"warmup", required_argument, 0, O_WARMUP},   {"timeout", required_argument, 0, O_TIMEOUT},
        {"output", required_argument, 0, 'o'},        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *backend_name = "mpi", *out_path = NULL;
    int min_n = 0, max_n = 0, iters = 0, warmup = 2, have_dtype = 0;
    double factor = 0, cmin = 0, cmax = 0;
    cs_dtype dtype = CS_DTYPE_FP32;
    cs_hw_config cfg = {.gpus = 1, .algo_op = -1, .timeout_s = 300};
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (ch) {
        case O_BACKEND: backend_name = optarg; break;
        case O_DTYPE:
            if (cs_dtype_parse(optarg, &dtype) || dtype == CS_DTYPE_FP8)
                return cs_hw_usage(cmd, "unknown --dtype '%s' (expected bf16, fp16, fp32, tf32 or "
                                        "fp64)", optarg);
            have_dtype = 1;
            break;
        case O_MINN:
            if (cs_hw_opt_int(cmd, "--min-n", optarg, 1, 65536, &min_n)) return CS_HW_EXIT_USAGE;
            break;
        case O_MAXN:
            if (cs_hw_opt_int(cmd, "--max-n", optarg, 1, 65536, &max_n)) return CS_HW_EXIT_USAGE;
            break;
        case O_FACTOR:
            if (cs_hw_opt_double(cmd, "--factor", optarg, 1.0001, 1e6, &factor))
                return CS_HW_EXIT_USAGE;
            break;
        case O_CMIN:
            if (cs_hw_opt_size(cmd, "--copy-min", optarg, &cmin)) return CS_HW_EXIT_USAGE;
            break;
        case O_CMAX:
            if (cs_hw_opt_size(cmd, "--copy-max", optarg, &cmax)) return CS_HW_EXIT_USAGE;
            break;
        case O_ITERS:
            if (cs_hw_opt_int(cmd, "--iters", optarg, 1, 100000, &iters)) return CS_HW_EXIT_USAGE;
            break;
        case O_WARMUP:
            if (cs_hw_opt_int(cmd, "--warmup", optarg, 0, 100000, &warmup)) return CS_HW_EXIT_USAGE;
            break;
        case O_TIMEOUT:
            if (cs_hw_opt_double(cmd, "--timeout", optarg, 0.001, 1e6, &cfg.timeout_s))
                return CS_HW_EXIT_USAGE;
            break;
        case 'o': out_path = optarg; break;
        case 'h': help(stdout); return CS_HW_EXIT_OK;
        case ':': return cs_hw_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return cs_hw_usage(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return cs_hw_usage(cmd, "unexpected argument '%s'", argv[optind]);
    const cs_hw_backend *b;
    int rc = cs_hw_opt_backend(cmd, backend_name, &b);
    if (rc) return rc;
    int gpu = !strcmp(b->name, "nccl");
    if (!have_dtype) dtype = gpu ? CS_DTYPE_BF16 : CS_DTYPE_FP32;
    if (!gpu && dtype != CS_DTYPE_FP32)
        return cs_hw_usage(cmd, "the mpi backend's GEMM is fp32 only, got --dtype %s",
                           cs_dtype_name(dtype));
    if (!min_n) min_n = gpu ? 256 : 64;
    if (!max_n) max_n = gpu ? 8192 : 512;
    if (!cmin) cmin = gpu ? 1 << 20 : 64 << 10;
    if (!cmax) cmax = gpu ? 1 << 30 : 64 << 20;
    if (!iters) iters = gpu ? 20 : 3;
    if (min_n > max_n) return cs_hw_usage(cmd, "%s", "--min-n must not exceed --max-n");
    if (cmin > cmax) return cs_hw_usage(cmd, "%s", "--copy-min must not exceed --copy-max");
    double gfactor = factor ? factor : 2, cfactor = factor ? factor : 4;

    cs_hw_rowfile rows;
    memset(&rows, 0, sizeof rows);
    if (out_path && cs_hw_launch_rank() == 0) {
        cs_diag d;
        cs_diag_clear(&d);
        if (cs_hw_rowfile_open(&rows, out_path, csv_header, &d)) {
            char m[800];
            cs_diag_format(&d, m, sizeof m);
            fprintf(stderr, "collsim-hw: %s\n", m);
            return CS_HW_EXIT_IO;
        }
    }
    cs_hw_ctx *c = NULL;
    cs_hw_info info;
    if ((rc = cs_hw_start(b, &cfg, &c, &info))) {
        if (rows.f) {
            cs_hw_rowfile_close(&rows);
            remove(out_path);
        }
        return rc;
    }
    if (info.proc == 0) {
        printf("# collsim-hw compute: backend %s (%s), %d ranks, host %s, device %s\n", b->name,
               info.library, info.nranks, info.host, info.device);
        printf("# %-5s %6s %6s %6s %12s %10s %10s %10s %9s %9s\n", "kind", "m", "n", "k", "bytes",
               "time", "min", "max", "TFLOPS", "GB/s");
        fflush(stdout);
    }
    double *times = cs_xmalloc((size_t)iters * sizeof *times);
    int io = 0;
    /* GEMMs */
    for (double x = min_n; !rc && !io && x <= max_n * (1 + 1e-12); x *= gfactor) {
        int nn = (int)floor(x);
        char what[96];
        snprintf(what, sizeof what, "a %dx%dx%d GEMM", nn, nn, nn);
        cs_hw_guard(b, cfg.timeout_s, info.proc, what, out_path);
        rc = b->gemm_time(c, dtype, nn, nn, nn, warmup, iters, times);
        cs_hw_watchdog_disarm();
        if (rc || info.proc != 0) continue;
        double tmin, tmed, tmax;
        cs_hw_stats(times, iters, &tmin, &tmed, &tmax);
        double tflops = 2.0 * nn * (double)nn * nn / tmed / 1e12;
        printf("  %-5s %6d %6d %6d %12d %10.2f %10.2f %10.2f %9.3f %9s\n", "gemm", nn, nn, nn, 0,
               tmed * 1e6, tmin * 1e6, tmax * 1e6, tflops, "-");
        fflush(stdout);
        io = cs_hw_rowfile_row(&rows, "gemm,%s,%s,%d,%d,%d,0,%d,%d,%.4f,%.4f,%.4f,%.6f,0,%s,%s,%s\n",
                               b->name, cs_dtype_name(dtype), nn, nn, nn, info.nranks, iters,
                               tmin * 1e6, tmed * 1e6, tmax * 1e6, tflops, info.host, info.device,
                               info.library);
    }
    /* copies */
    for (double x = cmin; !rc && !io && x <= cmax * (1 + 1e-12); x *= cfactor) {
        size_t bytes = (size_t)floor(x);
        char what[96];
        snprintf(what, sizeof what, "a copy of %zu bytes", bytes);
        cs_hw_guard(b, cfg.timeout_s, info.proc, what, out_path);
        rc = b->copy_time(c, bytes, warmup, iters, times);
        cs_hw_watchdog_disarm();
        if (rc || info.proc != 0) continue;
        double tmin, tmed, tmax;
        cs_hw_stats(times, iters, &tmin, &tmed, &tmax);
        double bw = 2.0 * (double)bytes / tmed / 1e9;
        printf("  %-5s %6d %6d %6d %12zu %10.2f %10.2f %10.2f %9s %9.2f\n", "copy", 0, 0, 0, bytes,
               tmed * 1e6, tmin * 1e6, tmax * 1e6, "-", bw);
        fflush(stdout);
        io = cs_hw_rowfile_row(&rows, "copy,%s,bytes,0,0,0,%zu,%d,%d,%.4f,%.4f,%.4f,0,%.4f,%s,%s,%s\n",
                               b->name, bytes, info.nranks, iters, tmin * 1e6, tmed * 1e6,
                               tmax * 1e6, bw, info.host, info.device, info.library);
    }
    free(times);
    io |= cs_hw_rowfile_close(&rows);
    if (rc || io) {
        int code = io ? CS_HW_EXIT_IO : cs_hw_exit_code(rc);
        fprintf(stderr, "collsim-hw: rank %d: compute stopped%s%s\n", info.proc,
                out_path ? "; rows measured so far are kept in " : "", out_path ? out_path : "");
        b->finalize(c, code);
        return code;
    }
    b->finalize(c, 0);
    return CS_HW_EXIT_OK;
}
