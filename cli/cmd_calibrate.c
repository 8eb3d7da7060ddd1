/* SPDX-License-Identifier: MIT */
/*
 * cmd_calibrate.c - the `collsim calibrate` and `collsim compare` commands:
 * argument parsing only; reading is study/measure*.c, fitting, scoring and
 * the calibrated YAML are study/calib*.c, the reports out/calib_report.c.
 *
 * Inputs are read in the order given on the command line, so datasets are
 * numbered and reported in that order (same inputs, same bytes out).
 */
#include <stdio.h>
#include <stdlib.h>

#include "config/config.h"
#include "opts.h"
#include "outputs.h"
#include "out/calib_report.h"
#include "study/measure.h"

static void inputs_help(FILE *f)
{
    fprintf(f,
            "  --nccl-tests LOG       raw nccl-tests output (all_reduce_perf and friends, any\n"
            "                         version's table layout; out-of-place columns are used).\n"
            "                         The op comes from the log ('Collective test starting',\n"
            "                         the *_perf command) or the file name; ranks and nodes from\n"
            "                         the '#  Rank N ... on HOST' lines. Repeatable.\n"
            "  --measurements CSV     a CSV naming its columns: collsim-hw output (the collective\n"
            "                         CSV columns plus time_median_us, ...), or the reference\n"
            "                         layout size_bytes,count,type,redop,time_us,algbw_GBps,\n"
            "                         busbw_GBps with '# collective:' and '# ranks:' header\n"
            "                         lines ('# nodes:' optional). Repeatable; kinds may mix.\n"
            "  NCCL_ALGO=X / NCCL_PROTO=X written in a log or CSV header mean the run forced\n"
            "  them; otherwise predictions choose as NCCL's tuner does. Rows that name an\n"
            "  algorithm collsim does not model (NVLSTree, CollNet, ...) are shown, not predicted.\n"
            "  Nodes, when the input does not say, are filled in order (ranks / gpus_per_node).\n");
}

static void calibrate_help(FILE *f)
{
    fprintf(f,
            "Usage: collsim calibrate --cluster FILE|PRESET (--nccl-tests LOG | --measurements CSV)...\n"
            "         -o OUT.yaml [--format table|csv|json] [--report FILE]\n"
            "\n"
            "Fits the cluster's cost-model parameters to measured collectives (GSL nonlinear\n"
            "least squares on the relative error, outliers down-weighted) and writes the cluster\n"
            "with the fitted values as YAML that --cluster accepts. Fitted when the data\n"
            "determines them: intra.efficiency, inter.efficiency (multi-node rows only), a launch\n"
            "latency added to NCCL's base latencies, scales on NCCL's per-hop latencies (per\n"
            "protocol; network), per-algorithm efficiencies. The others keep their --cluster\n"
            "values and the report says why. Datasets whose busbw exceeds what ring, tree or\n"
            "NVLS can reach at line rate (NVLSTree, SHARP) are excluded from the fit.\n"
            "\n"
            "  --cluster FILE|PRESET  the cluster to start from (required). Presets: ");
    cs_opts_presets(f);
    fprintf(f, "\n");
    inputs_help(f);
    fprintf(f,
            "  -o OUT.yaml            the calibrated cluster (required; written whole or not at all).\n"
            "  --format F             report format: table (default), csv (parameters) or json\n"
            "                         (parameters, datasets and residuals per row).\n"
            "  --report FILE          write the report to FILE instead of standard output.\n"
            "\n");
    cs_cli_exit_help(f);
}

static void compare_help(FILE *f)
{
    fprintf(f,
            "Usage: collsim compare --cluster FILE|PRESET (--measurements CSV | --nccl-tests LOG)...\n"
            "         [--format table|csv|json] [--summary] [-o FILE]\n"
            "\n"
            "Predicts every measured row on the cluster and reports prediction vs measurement,\n"
            "and per dataset the median / p90 / max absolute %% error for sizes >= 1 MiB and\n"
            "for all sizes. Datasets whose busbw exceeds what ring, tree or NVLS can reach at\n"
            "line rate are flagged (NVLSTree or SHARP ran).\n"
            "\n"
            "  --cluster FILE|PRESET  the cluster (required).\n");
    inputs_help(f);
    fprintf(f,
            "  --format F             table (rows, then the summary; default), csv (rows, or the\n"
            "                         summary with --summary) or json (both).\n"
            "  --summary              only the per-dataset summary (table and csv).\n"
            "  -o FILE                write to FILE (written whole or not at all); default stdout.\n"
            "\n"
            "CSV columns: dataset,op,ranks,nodes,size_bytes,measured_us,predicted_us,error_pct,\n"
            "measured_busbw_GBps,predicted_busbw_GBps,algo,proto,status; with --summary:\n"
            "dataset,rows,unmodelled,beyond_bound,max_busbw_GBps,bound_busbw_GBps,n_big,\n"
            "median_big_pct,p90_big_pct,max_big_pct,n_all,median_all_pct,p90_all_pct,max_all_pct\n"
            "(big = sizes >= 1 MiB).\n");
    cs_cli_exit_help(f);
}

/* The arguments of both commands. Inputs are read as they come. */
typedef struct common_args {
    const char *cluster, *out, *report;
    int fmt, summary;
    cs_meas_set set;
} common_args;

/* A warning for each dataset from nd0 on that skipped table-like lines
 * (the first CS_MEAS_SKIPPED_KEPT line numbers, then "..."). */
static void warn_skipped(const cs_meas_set *s, size_t nd0)
{
    for (size_t i = nd0; i < s->ndatasets; i++) {
        const cs_meas_dataset *ds = &s->datasets[i];
        int n = ds->nskipped, kept = n < CS_MEAS_SKIPPED_KEPT ? n : CS_MEAS_SKIPPED_KEPT;
        if (!n) continue;
        fprintf(stderr, "collsim: %s: warning: %d line%s of a result table that start%s with a "
                        "number but %s no result row skipped (line%s",
                ds->source, n, n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "is" : "are",
                n == 1 ? "" : "s");
        for (int k = 0; k < kept; k++) fprintf(stderr, "%s %d", k ? "," : "", ds->skipped_lines[k]);
        fprintf(stderr, "%s)\n", n > kept ? ", ..." : "");
    }
}

static int read_nccl_tests(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    (void)cmd, (void)o;
    cs_diag d;
    cs_diag_clear(&d);
    cs_meas_set *s = dst;
    size_t nd0 = s->ndatasets;
    if (cs_meas_read_nccl_tests(s, arg, &d)) return cs_cli_fail(&d);
    warn_skipped(s, nd0);
    return 0;
}

static int read_measurements(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    (void)cmd, (void)o;
    cs_diag d;
    cs_diag_clear(&d);
    return cs_meas_read_csv(dst, arg, &d) ? cs_cli_fail(&d) : 0;
}

/* The rows both commands share, then each one's own; an option of the
 * other command is refused by name. */
#define AT(f) CS_ARG_AT(common_args, f)
#define COMMON_OPTS                                                                                \
    CS_ARG_CLUSTER(common_args, cluster),                                                          \
        {"nccl-tests", .parse = read_nccl_tests, AT(set)},                                         \
        {"measurements", .parse = read_measurements, AT(set)}, CS_ARG_FORMAT(common_args, fmt),   \
        CS_ARG_OUTPUT(common_args, out)
static const cs_opt calibrate_opts[] = {
    COMMON_OPTS,
    {"report", .parse = cs_opt_string, AT(report)},
    {"summary", .flag = 1, .parse = cs_opt_refuse},
};
static const cs_opt compare_opts[] = {
    COMMON_OPTS,
    {"report", .parse = cs_opt_refuse},
    {"summary", .flag = 1, .parse = cs_opt_set, AT(summary)},
};
#undef AT

/* Parses argv into a; returns -1 to go on, else the exit code. */
static int parse(const char *cmd, const cs_opt *opts, size_t n, int argc, char **argv,
                 common_args *a, void (*help)(FILE *))
{
    int next, rc = cs_opts_parse(cmd, opts, n, argc, argv, a, help, &next);
    if (rc >= 0) return rc;
    if (next < argc) return cs_cli_usage(cmd, "unexpected argument '%s'", argv[next]);
    if (!a->cluster) return cs_cli_usage(cmd, "%s", "--cluster is required");
    if (a->set.n == 0)
        return cs_cli_usage(cmd, "%s", "no measurements: give --nccl-tests LOG or --measurements CSV");
    return -1;
}

#define N(a) (sizeof a / sizeof a[0])

int cs_cmd_calibrate(int argc, char **argv)
{
    const char *cmd = "calibrate";
    common_args a = {.fmt = CS_FORMAT_TABLE};
    int rc = parse(cmd, calibrate_opts, N(calibrate_opts), argc, argv, &a, calibrate_help);
    if (rc >= 0) goto out;
    if (!a.out) {
        rc = cs_cli_usage(cmd, "%s", "-o OUT.yaml is required (the calibrated cluster)");
        goto out;
    }
    const char *paths[] = {a.out, a.report};
    if ((rc = cs_cli_outputs_check(cmd, paths, N(paths))) >= 0) goto out;
    cs_diag d;
    cs_diag_clear(&d);
    cs_cluster cl;
    char *src = NULL;
    size_t src_len = 0;
    if (cs_config_cluster_source(a.cluster, &cl, &src, &src_len, &d)) {
        rc = cs_cli_fail(&d);
        goto out;
    }
    cs_calib_result *res;
    if (cs_calibrate(&cl, &a.set, &res, &d)) {
        free(src);
        rc = cs_cli_fail(&d);
        goto out;
    }
    char why[320];
    int quality = cs_calib_quality(res, why, sizeof why);
    if (quality) fprintf(stderr, "collsim calibrate: %s: %s\n", quality == 2 ? "error" : "warning", why);
    cs_buf yaml = {0}, rep = {0};
    cs_calib_write_yaml(&yaml, res, &a.set, a.cluster, src, src_len);
    free(src);
    cs_calib_report(&rep, (cs_format)a.fmt, res, &a.set);
    /* the YAML must load back as a cluster: the contract of -o */
    cs_cluster check;
    if (cs_config_load_cluster_string(a.out, yaml.data, yaml.len, &check, &d))
        CS_PANIC("calibrated YAML does not load: %s:%d:%d: %s", d.file, d.line, d.column, d.message);
    /* an unusable fit writes its report (the reasons) but no OUT.yaml */
    const cs_buf *bufs[] = {&yaml, &rep};
    int skip = quality == 2;
    rc = cs_cli_outputs_write(bufs + skip, paths + skip, N(paths) - (size_t)skip, &d)
             ? cs_cli_fail(&d)
             : quality == 2 ? CS_EXIT_UNFIT : CS_EXIT_OK;
    cs_buf_free(&yaml);
    cs_buf_free(&rep);
    cs_calib_result_free(res);
out:
    cs_meas_free(&a.set);
    return rc;
}

int cs_cmd_compare(int argc, char **argv)
{
    const char *cmd = "compare";
    common_args a = {.fmt = CS_FORMAT_TABLE};
    int rc = parse(cmd, compare_opts, N(compare_opts), argc, argv, &a, compare_help);
    if (rc >= 0) goto out;
    if ((rc = cs_cli_outputs_check(cmd, &a.out, 1)) >= 0) goto out;
    cs_diag d;
    cs_diag_clear(&d);
    cs_cluster cl;
    if (cs_config_cluster(a.cluster, &cl, &d)) {
        rc = cs_cli_fail(&d);
        goto out;
    }
    cs_calib_compare cmp;
    if (cs_calib_compare_run(&cl, &a.set, &cmp, &d)) {
        rc = cs_cli_fail(&d);
        goto out;
    }
    cs_buf b = {0};
    cs_calib_compare_report(&b, (cs_format)a.fmt, a.summary, cl.name, &a.set, &cmp);
    const cs_buf *bufs[] = {&b};
    rc = cs_cli_outputs_write(bufs, &a.out, 1, &d) ? cs_cli_fail(&d) : CS_EXIT_OK;
    cs_buf_free(&b);
    cs_calib_compare_free(&cmp);
out:
    cs_meas_free(&a.set);
    return rc;
}
