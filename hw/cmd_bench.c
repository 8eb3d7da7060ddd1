/* SPDX-License-Identifier: MIT */
/*
 * cmd_bench.c - `collsim-hw bench`: one collective over a range of sizes,
 * like nccl-tests' *_perf, on any backend.
 *
 * Sizes are generated exactly as `collsim collective` generates them
 * (min, min x factor, ... <= max; whole elements; all_gather /
 * reduce_scatter sizes are the total over ranks, rounded down to a multiple
 * of ranks x type size), so measured and predicted rows join on
 * (op, size_bytes, ranks). Each size: warmup collectives, then `iters`
 * timed ones; time_us is the median of the per-iteration times (each the
 * slowest rank's), algbw = size / time, busbw = algbw x nccl-tests' factor
 * (cs_op_busbw_factor). With --check the send buffers hold the pattern of
 * pattern.h and the last iteration's result is verified on every rank.
 * Rank 0 prints the table and appends each row to the CSV the moment it
 * is measured (rowfile.h).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backend.h"
#include "hwcli.h"
#include "out/report.h"
#include "rowfile.h"
#include "watchdog.h"

static const char *const cmd = "bench";

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
            "  --op OP          all_reduce, all_gather, reduce_scatter, broadcast, reduce\n"
            "  --min/--max SIZE sizes in bytes, nccl-tests convention (4K = 4096; the total\n"
            "                   over ranks for all_gather/reduce_scatter); default 32M..32M\n"
            "  --factor F       size multiplier, > 1 (default 2)\n"
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
            "\n"
            "Exit status: 0 ok, 1 CSV not writable, 2 bad usage, 3 wrong results, 4 library\n"
            "failure, 5 timeout, 77 backend unavailable (no GPU, not built).\n");
}

static const char *csv_columns =
    "time_min_us,time_median_us,time_max_us,iters,host,backend,library_version";

int cs_hw_cmd_bench(int argc, char **argv)
{
    enum { O_BACKEND = 256, O_OP, O_MIN, O_MAX, O_FACTOR, O_DTYPE, O_ITERS, O_WARMUP, O_ALGO,
           O_PROTO, O_CHECK, O_TIMEOUT, O_INJECT, O_QUIET };
    static const struct option opts[] = {
        {"backend", required_argument, 0, O_BACKEND}, {"op", required_argument, 0, O_OP},
        {"min", required_argument, 0, O_MIN},         {"max", required_argument, 0, O_MAX},
        {"factor", required_argument, 0, O_FACTOR},   {"dtype", required_argument, 0, O_DTYPE},
        {"iters", required_argument, 0, O_ITERS},     {"warmup", required_argument, 0, O_WARMUP},
        {"algo", required_argument, 0, O_ALGO},       {"proto", required_argument, 0, O_PROTO},
        {"check", no_argument, 0, O_CHECK},           {"timeout", required_argument, 0, O_TIMEOUT},
        {"inject", required_argument, 0, O_INJECT},   {"quiet", no_argument, 0, O_QUIET},
        {"gpus", required_argument, 0, 'g'},          {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},                {0, 0, 0, 0}};
    const cs_hw_backend *b = NULL;
    const char *backend_name = NULL, *out_path = NULL;
    cs_op op = CS_OP_ALL_REDUCE;
    int have_op = 0, iters = 20, warmup = 5, check = 0, corrupt = 0, hang = 0;
    double min_b = 32 << 20, max_b = 32 << 20, factor = 2;
    cs_dtype dtype = CS_DTYPE_FP32;
    cs_hw_config cfg = {.gpus = 1, .algo_op = -1, .timeout_s = 300};
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":g:o:h", opts, NULL)) != -1) {
        switch (ch) {
        case O_BACKEND: backend_name = optarg; break;
        case O_OP:
            if (cs_op_parse(optarg, &op))
                return cs_hw_usage(cmd, "unknown --op '%s' (expected all_reduce, all_gather, "
                                        "reduce_scatter, broadcast or reduce)", optarg);
            have_op = 1;
            break;
        case O_MIN:
            if (cs_hw_opt_size(cmd, "--min", optarg, &min_b)) return CS_HW_EXIT_USAGE;
            break;
        case O_MAX:
            if (cs_hw_opt_size(cmd, "--max", optarg, &max_b)) return CS_HW_EXIT_USAGE;
            break;
        case O_FACTOR: {
            char *end;
            factor = strtod(optarg, &end);
            if (!*optarg || *end || !(factor > 1.0) || !isfinite(factor))
                return cs_hw_usage(cmd, "--factor expects a number > 1, got '%s'", optarg);
            break;
        }
        case O_DTYPE:
            if (cs_dtype_parse(optarg, &dtype) || dtype == CS_DTYPE_TF32)
                return cs_hw_usage(cmd, "unknown --dtype '%s' (expected float, half, bfloat16, "
                                        "double or fp8)", optarg);
            break;
        case O_ITERS:
            if (cs_hw_opt_int(cmd, "--iters", optarg, 1, 100000, &iters)) return CS_HW_EXIT_USAGE;
            break;
        case O_WARMUP:
            if (cs_hw_opt_int(cmd, "--warmup", optarg, 0, 100000, &warmup)) return CS_HW_EXIT_USAGE;
            break;
        case O_ALGO: cfg.algo = strcasecmp(optarg, "auto") ? optarg : NULL; break;
        case O_PROTO: cfg.proto = strcasecmp(optarg, "auto") ? optarg : NULL; break;
        case O_CHECK: check = 1; break;
        case O_TIMEOUT:
            if (cs_hw_opt_double(cmd, "--timeout", optarg, 0.001, 1e6, &cfg.timeout_s))
                return CS_HW_EXIT_USAGE;
            break;
        case O_INJECT:
            if (!strcmp(optarg, "corrupt")) corrupt = 1;
            else if (!strcmp(optarg, "hang")) hang = 1;
            else return cs_hw_usage(cmd, "unknown --inject '%s' (expected corrupt or hang)", optarg);
            break;
        case O_QUIET: cfg.quiet = 1; break;
        case 'g':
            if (cs_hw_opt_int(cmd, "-g", optarg, 1, 1024, &cfg.gpus)) return CS_HW_EXIT_USAGE;
            break;
        case 'o': out_path = optarg; break;
        case 'h': help(stdout); return CS_HW_EXIT_OK;
        case ':': return cs_hw_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return cs_hw_usage(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return cs_hw_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (!backend_name) return cs_hw_usage(cmd, "%s", "--backend is required (nccl or mpi)");
    if (!have_op) return cs_hw_usage(cmd, "%s", "--op is required");
    if (min_b > max_b) return cs_hw_usage(cmd, "%s", "--min must not exceed --max");
    if (corrupt && !check) return cs_hw_usage(cmd, "%s", "--inject corrupt needs --check");
    int rc = cs_hw_opt_backend(cmd, backend_name, &b);
    if (rc) return rc;
    if (cfg.gpus > 1 && strcmp(b->name, "nccl"))
        return cs_hw_usage(cmd, "%s", "-g is for the nccl backend (the mpi backend runs one rank "
                                      "per process)");
    char msg[512];
    cfg.algo_op = (int)op;
    if (b->check_choice(cfg.algo, cfg.proto, (int)op, msg, sizeof msg))
        return cs_hw_usage(cmd, "%s", msg);
    if (cfg.algo && !strcasecmp(cfg.algo, "tree") && op != CS_OP_ALL_REDUCE)
        return cs_hw_usage(cmd, "--algo tree implements all_reduce only (as in NCCL), not %s",
                           cs_op_name(op));

    /* the CSV is created before any device work, by the launcher's rank 0 */
    cs_hw_rowfile rows;
    memset(&rows, 0, sizeof rows);
    if (out_path && cs_hw_launch_rank() == 0) {
        char header[512];
        snprintf(header, sizeof header, "%s,%s", cs_report_collective_csv_header(), csv_columns);
        cs_diag d;
        cs_diag_clear(&d);
        if (cs_hw_rowfile_open(&rows, out_path, header, &d)) {
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
            remove(out_path); /* nothing was measured */
        }
        return rc;
    }
    int ts = cs_dtype_size(dtype);
    int per_rank = op == CS_OP_ALL_GATHER || op == CS_OP_REDUCE_SCATTER;
    int n = info.nranks;
    size_t max_count = 0;
    for (double s = min_b; s <= max_b * (1 + 1e-12); s *= factor) {
        double count = floor(s / ts / (per_rank ? n : 1));
        if (count > (double)max_count) max_count = (size_t)count;
        if (min_b == max_b) break;
    }
    if (max_count == 0) max_count = 1;
    rc = b->coll_setup(c, op, dtype, max_count);

    char algo_label[32], proto_label[32];
    snprintf(algo_label, sizeof algo_label, "%s", cfg.algo ? cfg.algo : "auto");
    snprintf(proto_label, sizeof proto_label, "%s",
             !strcmp(b->name, "mpi") ? "none" : cfg.proto ? cfg.proto : "auto");
    for (char *p = algo_label; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    for (char *p = proto_label; *p; p++) *p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
    int root = op == CS_OP_BROADCAST || op == CS_OP_REDUCE ? 0 : -1;
    const char *redop =
        op == CS_OP_ALL_GATHER || op == CS_OP_BROADCAST ? "none" : "sum";
    if (info.proc == 0 && !rc) {
        printf("# collsim-hw %s bench: %s, %d ranks (%d processes x %d), backend %s (%s), "
               "host %s, device %s\n", CS_VERSION, cs_op_name(op), n, info.nprocs,
               info.local_ranks, b->name, info.library, info.host, info.device);
        printf("# algo %s, proto %s, %d warmup + %d timed iterations per size%s\n#\n", algo_label,
               proto_label, warmup, iters, check ? ", results checked" : "");
        printf("# %12s %12s %9s %6s %5s %10s %8s %8s %7s %10s %10s\n", "size", "count", "type",
               "redop", "root", "time", "algbw", "busbw", "#wrong", "min", "max");
        printf("# %12s %12s %9s %6s %5s %10s %8s %8s %7s %10s %10s\n", "(B)", "(elements)", "", "",
               "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)");
        fflush(stdout);
    }
    double *times = cs_xmalloc((size_t)iters * sizeof *times);
    double busbw_sum = 0;
    int nsizes = 0, index = 0;
    long long wrong_total = 0;
    for (double s = min_b; !rc && s <= max_b * (1 + 1e-12); s *= factor, index++) {
        double count = floor(s / ts / (per_rank ? n : 1));
        double size = count * ts * (per_rank ? n : 1);
        if (count >= 1) {
            char what[160];
            snprintf(what, sizeof what, "%s of %.0f bytes", cs_op_name(op), size);
            if (check) rc = b->coll_fill(c, op, dtype, (size_t)count);
            cs_hw_guard(b, cfg.timeout_s, info.proc, what, out_path);
            if (!rc)
                rc = b->coll_time(c, op, dtype, (size_t)count, warmup, iters, hang && nsizes == 1,
                                  times);
            cs_hw_watchdog_disarm();
            long long wrong = -1;
            if (!rc && check) rc = b->coll_check(c, op, dtype, (size_t)count, corrupt, &wrong);
            if (rc) break;
            if (info.proc == 0) {
                double tmin, tmed, tmax;
                cs_hw_stats(times, iters, &tmin, &tmed, &tmax);
                double algbw = size / tmed / 1e9;
                double busbw = algbw * cs_op_busbw_factor(op, n);
                char wbuf[24];
                if (wrong >= 0) snprintf(wbuf, sizeof wbuf, "%lld", wrong);
                else snprintf(wbuf, sizeof wbuf, "N/A");
                printf("  %12.0f %12.0f %9s %6s %5d %10.2f %8.2f %8.2f %7s %10.2f %10.2f\n", size,
                       count, cs_dtype_nccl_name(dtype), redop, root, tmed * 1e6, algbw, busbw,
                       wbuf, tmin * 1e6, tmax * 1e6);
                fflush(stdout);
                if (cs_hw_rowfile_row(&rows,
                                      "%s,%s,%s,measured,%d,%.0f,%.0f,%s,%.4f,%.4f,%.4f,%.4f,%.4f,"
                                      "%.4f,%d,%s,%s,%s\n",
                                      cs_op_name(op), algo_label, proto_label, n, size, count,
                                      cs_dtype_nccl_name(dtype), tmed * 1e6, algbw, busbw,
                                      tmin * 1e6, tmed * 1e6, tmax * 1e6, iters, info.host,
                                      b->name, info.library)) {
                    fprintf(stderr, "collsim-hw: %s: cannot write a row\n", out_path);
                    free(times);
                    cs_hw_rowfile_close(&rows);
                    b->finalize(c, CS_HW_EXIT_IO);
                    return CS_HW_EXIT_IO;
                }
                busbw_sum += busbw;
                if (wrong > 0) wrong_total += wrong;
            }
            nsizes++;
        }
        if (min_b == max_b) break;
    }
    free(times);
    if (rc) {
        int code = cs_hw_exit_code(rc);
        fprintf(stderr, "collsim-hw: rank %d: bench stopped%s%s%s\n", info.proc,
                out_path ? "; rows measured so far are kept in " : "", out_path ? out_path : "",
                rc == CS_HW_ETIMEOUT ? " (timeout)" : "");
        cs_hw_rowfile_close(&rows);
        b->finalize(c, code);
        return code;
    }
    if (info.proc == 0) {
        printf("# Out of bounds values : %lld %s\n", check ? wrong_total : 0,
               !check ? "(not checked)" : wrong_total ? "ERROR" : "OK");
        printf("# Avg bus bandwidth    : %g\n#\n", nsizes ? busbw_sum / nsizes : 0.0);
        fflush(stdout);
    }
    int io = cs_hw_rowfile_close(&rows);
    b->finalize(c, 0);
    if (io) {
        fprintf(stderr, "collsim-hw: %s: cannot close the CSV\n", out_path);
        return CS_HW_EXIT_IO;
    }
    return wrong_total ? CS_HW_EXIT_WRONG : CS_HW_EXIT_OK;
}
