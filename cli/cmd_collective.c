/* SPDX-License-Identifier: MIT */
/*
 * cmd_collective.c - `collsim collective`: options, the sweep of sizes
 * (nccl-tests' convention: whole elements; all_gather, reduce_scatter and
 * all_to_all sizes are totals over ranks, all_to_all's count per peer),
 * one library call per size, the report.
 * The timing itself is coll/collective.c; the rendering out/report.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algos.h"
#include "coll/collective.h"
#include "config/config.h"
#include "base/limit.h"
#include "base/units.h"
#include "opts.h"
#include "outputs.h"
#include "out/report.h"

/* The most sizes one sweep runs (min, min x F, ... <= max). */
#define CS_SWEEP_MAX_SIZES CS_LIMIT_HI_SWEEP_SIZES

#ifndef CS_VERSION
#define CS_VERSION "0.0.0"
#endif

#define CMD "collective"
#define N(a) (sizeof a / sizeof a[0])

typedef struct coll_args {
    const char *cluster, *out;
    int ranks, nodes, op, algo, proto, engine, fmt, dtype;
    double bytes, min, max, factor; /* NAN: not given */
} coll_args;

/* nccl-tests' type names, in the order its --datatype help lists them. */
static const int coll_dtypes[] = {CS_DTYPE_FP32, CS_DTYPE_FP16, CS_DTYPE_BF16, CS_DTYPE_FP64,
                                  CS_DTYPE_FP8, CS_OPT_END};

#define AT(f) CS_ARG_AT(coll_args, f)
static const cs_opt opts[] = {
    CS_ARG_CLUSTER(coll_args, cluster),
    CS_ARG_NODES(coll_args, nodes),
    CS_ARG_RANKS(coll_args, ranks),
    {"op", .parse = cs_opt_choice, AT(op), .choice = &cs_choice_op},
    {"bytes", .parse = cs_opt_size, AT(bytes)},
    {"min", .parse = cs_opt_size, AT(min)},
    {"max", .parse = cs_opt_size, AT(max)},
    {"factor", .parse = cs_opt_above, AT(factor), .lo = 1},
    {"algo", .parse = cs_opt_choice, AT(algo), .choice = &cs_choice_algo, .with_auto = 1},
    {"proto", .parse = cs_opt_choice, AT(proto), .choice = &cs_choice_proto, .with_auto = 1},
    CS_ARG_ENGINE(coll_args, engine, CS_SAYS_UNKNOWN),
    CS_ARG_FORMAT(coll_args, fmt),
    {"dtype", .parse = cs_opt_choice, AT(dtype), .choice = &cs_choice_dtype_nccl,
     .only = coll_dtypes},
    CS_ARG_OUTPUT(coll_args, out),
};
#undef AT

/* The algorithm names from the table, joined by sep and, before the last,
 * by last: "ring|tree|nvls" or "ring, tree or nvls". */
static void algo_names(char *buf, size_t len, const char *sep, const char *last)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int a = 0; a < CS_ALGO_COUNT && n < len; a++)
        n += (size_t)snprintf(buf + n, len - n, "%s%s",
                              a == 0 ? "" : a + 1 == CS_ALGO_COUNT ? last : sep,
                              cs_algo_name((cs_algo_id)a));
}

/* The --algo paragraph: its lead, then each algorithm's help sentence,
 * filled to 86 columns and indented to the option text (column 25). */
static void algo_help(FILE *f)
{
    char text[2048];
    size_t n = (size_t)snprintf(text, sizeof text, "%s",
                                "force an algorithm (like NCCL_ALGO); default auto picks the "
                                "fastest (algorithm, protocol) by NCCL's cost model.");
    for (int a = 0; a < CS_ALGO_COUNT && n < sizeof text; a++)
        if (cs_algo_help((cs_algo_id)a))
            n += (size_t)snprintf(text + n, sizeof text - n, " %s", cs_algo_help((cs_algo_id)a));
    const int indent = 25, width = 86;
    int col = fprintf(f, "  %-*s", indent - 2, "--algo A");
    for (const char *w = text; *w;) {
        int len = (int)strcspn(w, " ");
        if (col > indent && col + 1 + len > width) col = fprintf(f, "\n%*s", indent, "") - 1;
        col += fprintf(f, "%s%.*s", col > indent ? " " : "", len, w);
        w += len;
        while (*w == ' ') w++;
    }
    fprintf(f, "\n");
}

static void help(FILE *f)
{
    char algos[256];
    algo_names(algos, sizeof algos, "|", "|");
    fprintf(f,
            "Usage: collsim collective [--cluster FILE|PRESET] [--nodes K] [--ranks N] --op OP\n"
            "         [--bytes SIZE | --min SIZE --max SIZE --factor F] [--algo auto|%s]\n"
            "         [--proto auto|ll|ll128|simple] [--engine analytic|des] [--dtype T]\n"
            "         [--format table|csv|json] [-o FILE]\n"
            "\n"
            "Predicts the time of one collective per size, like nccl-tests' *_perf.\n"
            "\n"
            "  --cluster FILE|PRESET  cluster YAML or a built-in preset (default %s).\n"
            "                         Presets: ",
            algos, CS_DEFAULT_CLUSTER);
    cs_opts_presets(f);
    fprintf(f,
            "\n"
            "  --ranks N              number of ranks. Alone, ranks fill the preset's nodes in\n"
            "                         order (N=4096 on dgx-h100 = 512 nodes of 8).\n"
            "  --nodes K              number of nodes. Alone, every GPU of K nodes; with --ranks,\n"
            "                         N ranks spread evenly over K nodes (first nodes get one\n"
            "                         more when K does not divide N).\n"
            "                         Neither: the cluster's nodes x gpus_per_node.\n"
            "  --op OP                all_reduce | all_gather | reduce_scatter | broadcast | reduce\n"
            "                         | all_to_all (alltoall) | send_recv (sendrecv: rank r to\n"
            "                         r+1, as nccl-tests)\n"
            "  --bytes SIZE           one size (8, 4K, 25MiB, 8G, 1GB: see Units below)\n"
            "  --min/--max/--factor   sweep sizes min, min*F, ... <= max (default 8 .. 8G, F=2)\n"
            "                         For all_gather/reduce_scatter SIZE is the total over ranks,\n"
            "                         for all_to_all a rank's whole send buffer (SIZE/N to each\n"
            "                         rank; count is per peer), for send_recv the buffer sent\n"
            "                         (nccl-tests convention).\n");
    algo_help(f);
    fprintf(f,
            "  --proto P              force a protocol (like NCCL_PROTO); default auto.\n"
            "  --engine E             analytic (closed form, default) or des (discrete events).\n"
            "  --dtype T              element type for the count column: float (default), half,\n"
            "                         bfloat16, double, fp8.\n"
            "  --format F             table (default: nccl-tests' own table, out-of-place and\n"
            "                         in-place columns, #wrong N/A, Avg bus bandwidth, so its\n"
            "                         parsers read it; the algorithm/protocol chosen per size\n"
            "                         as comment lines after it), csv or json (\"format\",\n"
            "                         \"version\" first: docs/json-output.md).\n"
            "  -o FILE                write to FILE (written whole or not at all); default stdout.\n"
            "\n"
            "CSV columns: %s\n"
            "busbw = algbw x 2(n-1)/n all_reduce, (n-1)/n all_gather/reduce_scatter/all_to_all,\n"
            "1 otherwise.\n"
            "%s",
            cs_report_collective_csv_header(), cs_units_help());
    cs_cli_exit_help(f);
}

/* Parses argv into a; returns -1 to go on, else the exit code. */
static int parse(int argc, char **argv, coll_args *a)
{
    int next, rc = cs_opts_parse(CMD, opts, N(opts), argc, argv, a, help, &next);
    if (rc >= 0) return rc;
    if (next < argc) return cs_cli_usage(CMD, "unexpected argument '%s'", argv[next]);
    if (a->op < 0) return cs_cli_usage(CMD, "%s", "--op is required");
    int sweep = !isnan(a->min) || !isnan(a->max) || !isnan(a->factor);
    if (!isnan(a->bytes) && sweep)
        return cs_cli_usage(CMD, "%s", "--bytes cannot be combined with --min/--max/--factor");
    if (!isnan(a->bytes)) a->min = a->max = a->bytes;
    if (isnan(a->min)) a->min = 8;
    if (isnan(a->max)) a->max = 8.0 * (1 << 30);
    if (isnan(a->factor)) a->factor = 2;
    /* the sweep multiplies from min: from 0 it would never end */
    if (!(a->min > 0))
        return cs_cli_usage(CMD, "%s must be at least 1 byte, got 0",
                            isnan(a->bytes) ? "--min" : "--bytes");
    if (a->min > a->max) return cs_cli_usage(CMD, "%s", "--min must not exceed --max");
    /* sizes min, min x F, ... <= max; a factor within rounding of 1 would
     * make a sweep that never ends in practice (or, at F = 1 + 1 ulp, not
     * at all) */
    double sizes = floor(log(a->max / a->min) / log(a->factor) * (1 + 1e-12)) + 1;
    if (a->min < a->max && !(sizes <= CS_SWEEP_MAX_SIZES))
        return cs_cli_usage(CMD, "--factor %.17g makes a sweep of %.3g sizes from %.0f to %.0f B "
                                 "(at most %d): give a larger --factor",
                            a->factor, sizes, a->min, a->max, CS_SWEEP_MAX_SIZES);
    return -1;
}

/* One row per size min, min*factor, ... <= max; returns the row count or
 * -1 with d set. Caller frees *out. */
static long run_sizes(const cs_topology *topo, const coll_args *a, cs_coll_row **out, cs_diag *d)
{
    size_t cap = 64, n = 0;
    cs_coll_row *rows = cs_xmalloc(cap * sizeof *rows);
    int tsize = cs_dtype_size((cs_dtype)a->dtype);
    int per_rank = a->op == CS_OP_ALL_GATHER || a->op == CS_OP_REDUCE_SCATTER ||
                   a->op == CS_OP_ALL_TO_ALL;
    for (double s = a->min; s <= a->max * (1 + 1e-12); s *= a->factor) {
        /* nccl-tests: counts are whole elements; all_gather/reduce_scatter
         * counts are per rank (all_to_all: per peer) and the size is the
         * total over ranks */
        double count = floor(s / tsize / (per_rank ? topo->ranks : 1));
        double size = count * tsize * (per_rank ? topo->ranks : 1);
        if (count < 1) continue;
        cs_coll_request rq = {(cs_op)a->op, size, a->algo, a->proto, (cs_engine_kind)a->engine};
        cs_coll_result res;
        if (cs_collective_run(topo, &rq, &res, d)) {
            free(rows);
            return -1;
        }
        if (n == cap) rows = cs_xrealloc(rows, (cap *= 2) * sizeof *rows);
        rows[n++] = (cs_coll_row){rq.op, res.algo, res.proto, rq.engine, topo->ranks, size, count,
                                  (cs_dtype)a->dtype, res.time_s * 1e6, res.algbw_Bps / 1e9,
                                  res.busbw_Bps / 1e9};
        if (a->min == a->max) break;
    }
    *out = rows;
    return (long)n;
}

int cs_cmd_collective(int argc, char **argv)
{
    coll_args a = {.cluster = CS_DEFAULT_CLUSTER, .op = -1, .algo = CS_CHOICE_AUTO,
                   .proto = CS_CHOICE_AUTO, .engine = CS_ENGINE_ANALYTIC, .fmt = CS_FORMAT_TABLE,
                   .dtype = CS_DTYPE_FP32, .bytes = NAN, .min = NAN, .max = NAN, .factor = NAN};
    int rc = parse(argc, argv, &a);
    if (rc >= 0) return rc;
    if ((rc = cs_cli_outputs_check("collective", &a.out, 1)) >= 0) return rc;
    cs_diag d;
    cs_diag_clear(&d);
    cs_cluster cl;
    if (cs_config_cluster(a.cluster, &cl, &d)) return cs_cli_fail(&d);
    cs_cli_warn_des(CMD, &cl, a.engine);
    cs_topology topo;
    if (cs_topology_build(&cl, a.ranks, a.nodes, &topo, &d)) return cs_cli_fail(&d);
    cs_coll_row *rows;
    long n = run_sizes(&topo, &a, &rows, &d);
    if (n < 0) return cs_cli_fail(&d);
    if (n == 0) { /* every size below one whole element per rank (or peer): nothing to run */
        free(rows);
        int per_rank = a.op == CS_OP_ALL_GATHER || a.op == CS_OP_REDUCE_SCATTER ||
                       a.op == CS_OP_ALL_TO_ALL;
        long least = (long)cs_dtype_size((cs_dtype)a.dtype) * (per_rank ? topo.ranks : 1);
        return cs_cli_usage(CMD,
                            "%s of %.0f bytes on %d ranks is less than one whole %s element%s: "
                            "give at least %ld bytes",
                            cs_op_name((cs_op)a.op), a.max, topo.ranks,
                            cs_dtype_name((cs_dtype)a.dtype),
                            a.op == CS_OP_ALL_TO_ALL ? " per peer" : per_rank ? " per rank" : "",
                            least);
    }
    char title[512];
    snprintf(title, sizeof title,
             "collsim %s: %s on %s, %d ranks on %d nodes (%s%d per node), engine %s", CS_VERSION,
             cs_op_name((cs_op)a.op), cl.name, topo.ranks, topo.nodes, topo.uniform ? "" : "up to ",
             topo.ppn_max, cs_engine_name((cs_engine_kind)a.engine));
    cs_buf out = {0};
    cs_report_collective(&out, (cs_format)a.fmt, title, &topo, rows, (size_t)n);
    free(rows);
    const cs_buf *bufs[] = {&out};
    rc = cs_cli_outputs_write(bufs, &a.out, 1, &d);
    cs_buf_free(&out);
    return rc ? cs_cli_fail(&d) : CS_EXIT_OK;
}
