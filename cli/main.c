/* SPDX-License-Identifier: MIT */
/*
 * main.c - the `collsim` command line: argument parsing and dispatch only;
 * all modelling lives in the library.
 *
 * Exit codes (documented in --help and README):
 *   0  success
 *   1  the output could not be written
 *   2  bad usage, bad configuration or an unsupported request
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "coll/collective.h"
#include "config/config.h"
#include "config/presets.h"
#include "out/report.h"
#include "base/units.h"

#ifndef CS_VERSION
#define CS_VERSION "0.0.0"
#endif

enum { EXIT_OK = CS_EXIT_OK, EXIT_IO = CS_EXIT_IO, EXIT_USAGE = CS_EXIT_USAGE };

int cs_cli_fail(const cs_diag *d)
{
    char msg[1024];
    cs_diag_format(d, msg, sizeof msg);
    fprintf(stderr, "collsim: %s\n", msg);
    return d->code == CS_EIO ? EXIT_IO : EXIT_USAGE;
}

int cs_cli_usage(const char *cmd, const char *fmt, const char *arg)
{
    fprintf(stderr, "collsim %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'collsim %s --help'.\n", cmd);
    return EXIT_USAGE;
}

int cs_cli_number(const char *cmd, const char *opt, const char *s, double lo, double *v)
{
    char *end;
    double x = strtod(s, &end);
    if (!*s || *end || !isfinite(x) || x < lo) {
        fprintf(stderr, "collsim %s: %s expects a number >= %g, got '%s'\n", cmd, opt, lo, s);
        return -1;
    }
    *v = x;
    return 0;
}

int cs_cli_params(const char *s, double *v)
{
    char *end;
    double x = strtod(s, &end);
    double mul = 1;
    if (*end == 'K' || *end == 'k') mul = 1e3, end++;
    else if (*end == 'M') mul = 1e6, end++;
    else if (*end == 'B' || *end == 'G') mul = 1e9, end++;
    else if (*end == 'T') mul = 1e12, end++;
    if (!*s || *end || !(x > 0) || !isfinite(x) || !isfinite(x * mul)) return -1;
    *v = x * mul;
    return 0;
}

static void list_presets(FILE *f)
{
    for (size_t i = 0; i < cs_presets_cluster_count(); i++)
        fprintf(f, "%s%s", i ? ", " : "", cs_presets_cluster_name(i));
}

/* ---- collective ---------------------------------------------------------- */

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

static void collective_help(FILE *f)
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
    list_presets(f);
    fprintf(f,
            "\n"
            "  --ranks N              number of ranks. Alone, ranks fill the preset's nodes in\n"
            "                         order (N=4096 on dgx-h100 = 512 nodes of 8).\n"
            "  --nodes K              number of nodes. Alone, every GPU of K nodes; with --ranks,\n"
            "                         N ranks spread evenly over K nodes (first nodes get one\n"
            "                         more when K does not divide N).\n"
            "                         Neither: the cluster's nodes x gpus_per_node.\n"
            "  --op OP                all_reduce | all_gather | reduce_scatter | broadcast | reduce\n"
            "  --bytes SIZE           one size (8, 4K, 25MiB, 8G: binary, as nccl-tests)\n"
            "  --min/--max/--factor   sweep sizes min, min*F, ... <= max (default 8 .. 8G, F=2)\n"
            "                         For all_gather/reduce_scatter SIZE is the total over ranks\n"
            "                         (nccl-tests convention).\n");
    algo_help(f);
    fprintf(f,
            "  --proto P              force a protocol (like NCCL_PROTO); default auto.\n"
            "  --engine E             analytic (closed form, default) or des (discrete events).\n"
            "  --dtype T              element type for the count column: float (default), half,\n"
            "                         bfloat16, double, fp8.\n"
            "  --format F             table (nccl-tests style, default), csv or json.\n"
            "  -o FILE                write to FILE (written whole or not at all); default stdout.\n"
            "\n"
            "CSV columns: %s\n"
            "busbw = algbw x 2(n-1)/n all_reduce, (n-1)/n all_gather/reduce_scatter, 1 otherwise.\n"
            "Exit status: 0 ok, 1 output not written, 2 bad usage/config/unsupported request.\n",
            cs_report_collective_csv_header());
}

static int parse_size_arg(const char *cmd, const char *opt, const char *s, double *v)
{
    char err[256];
    if (cs_units_parse_size(s, v, err, sizeof err)) {
        fprintf(stderr, "collsim %s: %s: %s\n", cmd, opt, err);
        return -1;
    }
    return 0;
}

int cs_cli_int(const char *cmd, const char *opt, const char *s, int lo, int hi, int *v)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (!*s || *end || x < lo || x > hi) {
        fprintf(stderr, "collsim %s: %s expects an integer in %d..%d, got '%s'\n", cmd, opt, lo,
                hi, s);
        return -1;
    }
    *v = (int)x;
    return 0;
}

static int cmd_collective(int argc, char **argv)
{
    const char *cmd = "collective";
    const char *cluster_spec = CS_DEFAULT_CLUSTER, *out_path = NULL;
    int ranks = 0, nodes = 0, have_op = 0, algo = CS_CHOICE_AUTO, proto = CS_CHOICE_AUTO;
    double bytes = -1, min_b = 8, max_b = 8.0 * (1 << 30), factor = 2;
    int have_min = 0, have_max = 0, have_factor = 0;
    cs_op op = CS_OP_ALL_REDUCE;
    cs_engine_kind engine = CS_ENGINE_ANALYTIC;
    cs_format fmt = CS_FORMAT_TABLE;
    cs_dtype dtype = CS_DTYPE_FP32;
    static const struct option opts[] = {
        {"cluster", required_argument, 0, 'c'}, {"nodes", required_argument, 0, 'n'},
        {"ranks", required_argument, 0, 'r'},   {"op", required_argument, 0, 'p'},
        {"bytes", required_argument, 0, 'b'},   {"min", required_argument, 0, 'm'},
        {"max", required_argument, 0, 'M'},     {"factor", required_argument, 0, 'f'},
        {"algo", required_argument, 0, 'a'},    {"proto", required_argument, 0, 'P'},
        {"engine", required_argument, 0, 'e'},  {"format", required_argument, 0, 'F'},
        {"dtype", required_argument, 0, 'd'},   {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        switch (ch) {
        case 'c': cluster_spec = optarg; break;
        case 'n':
            if (cs_cli_int(cmd, "--nodes", optarg, 1, 1000000, &nodes)) return EXIT_USAGE;
            break;
        case 'r':
            if (cs_cli_int(cmd, "--ranks", optarg, 1, 100000000, &ranks)) return EXIT_USAGE;
            break;
        case 'p':
            if (cs_op_parse(optarg, &op))
                return cs_cli_usage(cmd, "unknown --op '%s' (expected all_reduce, all_gather, "
                                        "reduce_scatter, broadcast or reduce)", optarg);
            have_op = 1;
            break;
        case 'b':
            if (parse_size_arg(cmd, "--bytes", optarg, &bytes)) return EXIT_USAGE;
            break;
        case 'm':
            if (parse_size_arg(cmd, "--min", optarg, &min_b)) return EXIT_USAGE;
            have_min = 1;
            break;
        case 'M':
            if (parse_size_arg(cmd, "--max", optarg, &max_b)) return EXIT_USAGE;
            have_max = 1;
            break;
        case 'f': {
            char *end;
            factor = strtod(optarg, &end);
            if (!*optarg || *end || !(factor > 1.0) || !isfinite(factor))
                return cs_cli_usage(cmd, "--factor expects a number > 1, got '%s'", optarg);
            have_factor = 1;
            break;
        }
        case 'a': {
            cs_algo_id a;
            if (!strcmp(optarg, "auto")) algo = CS_CHOICE_AUTO;
            else if (cs_algo_parse(optarg, &a) == 0) algo = a;
            else {
                char algos[256], msg[512];
                algo_names(algos, sizeof algos, ", ", " or ");
                snprintf(msg, sizeof msg, "unknown --algo '%s' (expected auto, %s)", optarg, algos);
                return cs_cli_usage(cmd, "%s", msg);
            }
            break;
        }
        case 'P': {
            cs_proto p;
            if (!strcmp(optarg, "auto")) proto = CS_CHOICE_AUTO;
            else if (cs_proto_parse(optarg, &p) == 0) proto = p;
            else return cs_cli_usage(cmd, "unknown --proto '%s' (expected auto, ll, ll128 or simple)",
                                    optarg);
            break;
        }
        case 'e':
            if (!strcmp(optarg, "analytic")) engine = CS_ENGINE_ANALYTIC;
            else if (!strcmp(optarg, "des")) engine = CS_ENGINE_DES;
            else return cs_cli_usage(cmd, "unknown --engine '%s' (expected analytic or des)", optarg);
            break;
        case 'F':
            if (cs_format_parse(optarg, &fmt))
                return cs_cli_usage(cmd, "unknown --format '%s' (expected table, csv or json)", optarg);
            break;
        case 'd':
            if (cs_dtype_parse(optarg, &dtype) || dtype == CS_DTYPE_TF32)
                return cs_cli_usage(cmd, "unknown --dtype '%s' (expected float, half, bfloat16, "
                                        "double or fp8)", optarg);
            break;
        case 'o': out_path = optarg; break;
        case 'h': collective_help(stdout); return EXIT_OK;
        case ':': return cs_cli_usage(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return cs_cli_usage(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc) return cs_cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (!have_op) return cs_cli_usage(cmd, "%s", "--op is required");
    if (bytes >= 0 && (have_min || have_max || have_factor))
        return cs_cli_usage(cmd, "%s", "--bytes cannot be combined with --min/--max/--factor");
    if (bytes >= 0) min_b = max_b = bytes;
    if (min_b > max_b) return cs_cli_usage(cmd, "%s", "--min must not exceed --max");

    cs_diag d;
    cs_diag_clear(&d);
    cs_cluster cl;
    if (cs_config_cluster(cluster_spec, &cl, &d)) return cs_cli_fail(&d);
    cs_topology topo;
    if (cs_topology_build(&cl, ranks, nodes, &topo, &d)) return cs_cli_fail(&d);

    size_t cap = 64, n = 0;
    cs_coll_row *rows = cs_xmalloc(cap * sizeof *rows);
    int tsize = cs_dtype_size(dtype);
    int per_rank = op == CS_OP_ALL_GATHER || op == CS_OP_REDUCE_SCATTER;
    for (double s = min_b; s <= max_b * (1 + 1e-12); s *= factor) {
        /* nccl-tests: counts are whole elements; all_gather/reduce_scatter
         * counts are per rank and the size is the total over ranks */
        double count = floor(s / tsize / (per_rank ? topo.ranks : 1));
        double size = count * tsize * (per_rank ? topo.ranks : 1);
        if (count < 1) continue;
        cs_coll_request rq = {op, size, algo, proto, engine};
        cs_coll_result res;
        if (cs_collective_run(&topo, &rq, &res, &d)) {
            free(rows);
            return cs_cli_fail(&d);
        }
        if (n == cap) rows = cs_xrealloc(rows, (cap *= 2) * sizeof *rows);
        rows[n++] = (cs_coll_row){op, res.algo, res.proto, engine, topo.ranks, size, count, dtype,
                                  res.time_s * 1e6, res.algbw_Bps / 1e9, res.busbw_Bps / 1e9};
        if (min_b == max_b) break;
    }
    char title[512];
    snprintf(title, sizeof title,
             "collsim %s: %s on %s, %d ranks on %d nodes (%s%d per node), engine %s", CS_VERSION,
             cs_op_name(op), cl.name, topo.ranks, topo.nodes, topo.uniform ? "" : "up to ",
             topo.ppn_max, cs_engine_name(engine));
    cs_buf out = {0};
    cs_report_collective(&out, fmt, title, rows, n);
    free(rows);
    int rc = cs_buf_write(&out, out_path, &d);
    cs_buf_free(&out);
    return rc ? cs_cli_fail(&d) : EXIT_OK;
}

/* ---- dispatch ------------------------------------------------------------ */

static const struct command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"collective", "time one collective per size (ring/tree/nvls, LL/LL128/Simple), nccl-tests style",
     cmd_collective},
    {"memory", "per-GPU memory of DDP / ZeRO-1 / FSDP strategies, peak and OOM verdict",
     cs_cmd_memory},
    {"simulate", "one training iteration: overlap, exposed communication, tokens/s, MFU",
     cs_cmd_simulate},
    {"plan", "recommend a strategy and micro-batch for a scenario; check the rule of thumb",
     cs_cmd_plan},
    {"calibrate", "fit the cluster's cost model to nccl-tests / collsim-hw measurements",
     cs_cmd_calibrate},
    {"compare", "predicted vs measured collectives: per-row and per-dataset % errors",
     cs_cmd_compare},
    {"crossover", "sweep P x N x strategies: where DDP and FSDP overtake each other, OOM limits",
     cs_cmd_crossover},
};

static void main_help(FILE *f)
{
    fprintf(f, "Usage: collsim COMMAND [options]\n       collsim --help | --version\n\n"
               "Simulates collective communication and data-parallel training (DDP, FSDP)\n"
               "on a cluster described in YAML.\n\nCommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'collsim COMMAND --help' describes each command.\n"
               "Exit status: 0 ok, 1 output not written, 2 bad usage/config/unsupported request.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        main_help(stderr);
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        main_help(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("collsim %s\n", CS_VERSION);
        return EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "collsim: unknown command '%s'\nTry 'collsim --help'.\n", argv[1]);
    return EXIT_USAGE;
}
