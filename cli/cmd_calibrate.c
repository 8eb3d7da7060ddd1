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
#include "out/calib_train_report.h"
#include "study/calib_train.h"
#include "study/measure.h"
#include "study/replay_runs.h"

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
            "  algorithm collsim does not model (CollNet, ...) are shown, not predicted.\n"
            "  Nodes, when the input does not say, are filled in order (ranks / gpus_per_node).\n"
            "  --training-runs CSV    measured training runs: configuration and tokens/s per GPU\n"
            "                         per row (docs/training-runs.md); every row is priced on\n"
            "                         --cluster (its cluster column is informational).\n"
            "                         Repeatable.\n");
}

static void compute_help(FILE *f)
{
    fprintf(f, "  --compute-measurements CSV  `collsim-hw compute` output (kind gemm/copy, dtype,\n"
               "                         m,n,k, bytes, time_median_us; kernel with --shapes): GEMM\n"
               "                         and copy times fitted with the training runs. Repeatable.\n"
               "  --schedule FILE --replay CSV  a `collsim-hw replay` per-task CSV joined on task id\n"
               "                         with the schedule it replayed (`collsim simulate\n"
               "                         --emit-schedule FILE`; the last --schedule before it):\n"
               "                         GEMM and copy tasks that ran alone are kernel timings of\n"
               "                         the shape they ran, compute-stream tasks that collectives\n"
               "                         overlapped time comm_compute_slowdown. Repeatable\n"
               "                         (docs/training-runs.md).\n");
}

static void calibrate_help(FILE *f)
{
    fprintf(f,
            "Usage: collsim calibrate --cluster FILE|PRESET (--nccl-tests LOG | --measurements CSV |\n"
            "         --training-runs CSV | --compute-measurements CSV |\n"
            "         --schedule FILE --replay CSV)... -o OUT.yaml\n"
            "         [--format table|csv|json] [--report FILE]\n"
            "\n"
            "Fits the cluster's cost-model parameters to measured collectives (GSL nonlinear\n"
            "least squares on the relative error, outliers down-weighted) and writes the cluster\n"
            "with the fitted values as YAML that --cluster accepts. Fitted when the data\n"
            "determines them: intra.efficiency, inter.efficiency (multi-node rows only), a launch\n"
            "latency added to NCCL's base latencies, scales on NCCL's per-hop latencies (per\n"
            "protocol; network), per-algorithm efficiencies. The others keep their --cluster\n"
            "values and the report says why. Datasets whose busbw exceeds what ring, tree,\n"
            "NVLS or NVLSTree can reach at line rate (SHARP) are excluded from the fit.\n"
            "With --training-runs the compute model (gpu.compute) is fitted after the\n"
            "collectives: gemm, the attention kernel the runs use (flash1 / flash2), hbm,\n"
            "gemm_half, kernel_floor, comm_compute_slowdown and fsdp1_hook_cpu /\n"
            "fsdp2_hook_cpu where the runs determine them, by least squares on\n"
            "log(predicted / measured) tokens/s, the rest kept with the reason (with\n"
            "--compute-measurements or --replay: GEMM and copy timings in the same fit,\n"
            "hbm_half too; replayed tasks that collectives overlapped fit\n"
            "comm_compute_slowdown, 2 at least overlapped for 10%% of their time).\n"
            "\n"
            "  --cluster FILE|PRESET  the cluster to start from (required). Presets: ");
    cs_opts_presets(f);
    fprintf(f, "\n");
    inputs_help(f);
    compute_help(f);
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
            "       collsim compare --cluster FILE|PRESET (--training-runs CSV | --compute-measurements\n"
            "         CSV | --schedule FILE --replay CSV)... [--format F] [-o FILE]\n"
            "\n"
            "Predicts every measured row on the cluster and reports prediction vs measurement,\n"
            "and per dataset the median / p90 / max absolute %% error for sizes >= 1 MiB and\n"
            "for all sizes. Datasets whose busbw exceeds what ring, tree, NVLS or NVLSTree can\n"
            "reach at line rate are flagged (SHARP ran).\n"
            "\n"
            "  --cluster FILE|PRESET  the cluster (required).\n");
    inputs_help(f);
    compute_help(f);
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
            "(big = sizes >= 1 MiB).\n"
            "With --training-runs (not mixed with collective inputs): per run file,line,table,\n"
            "model,gpus,seq_len,micro_batch,grad_accum,checkpointing,\n"
            "measured_tokens_per_s_per_gpu,predicted_tokens_per_s_per_gpu,error_pct,\n"
            "measured_mfu_pct,predicted_mfu_pct; the table adds median / p90 / max per file.\n"
            "With --compute-measurements CSV (collsim-hw compute) or --replay CSV alone: per\n"
            "kernel file,line,kind,dtype,m,n,k,bytes,kernel,measured_us,predicted_us,error_pct\n"
            "(a replayed task: kernel 'task ID: NAME', its time of all its reps; JSON: both).\n");
    cs_cli_exit_help(f);
}

/* The arguments of both commands. Inputs are read as they come. */
typedef struct common_args {
    const char *cluster, *out, *report;
    const char *schedule; /* --schedule: the schedule of the --replay CSVs after it */
    int schedule_read;    /* a --replay read the last --schedule */
    int fmt, summary;
    cs_meas_set set;
    cs_trun_set runs;
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

static int read_training_runs(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    (void)cmd, (void)o;
    cs_diag d;
    cs_diag_clear(&d);
    return cs_training_runs_read(dst, arg, &d) ? cs_cli_fail(&d) : 0;
}

static int read_compute(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    (void)cmd, (void)o;
    cs_diag d;
    cs_diag_clear(&d);
    return cs_training_runs_read_compute(dst, arg, &d) ? cs_cli_fail(&d) : 0;
}

/* --replay CSV: dst is the whole common_args (the row's offset is 0). */
static int read_replay(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    (void)o;
    common_args *a = dst;
    if (!a->schedule)
        return cs_cli_usage(cmd, "--replay %s needs the schedule it replayed: give --schedule "
                                 "FILE (collsim simulate --emit-schedule) before it", arg);
    cs_diag d;
    cs_diag_clear(&d);
    cs_replay_counts n;
    if (cs_replay_runs_read(&a->runs, a->schedule, arg, &n, &d)) return cs_cli_fail(&d);
    a->schedule_read = 1;
    fprintf(stderr, "collsim %s: %s: %d tasks joined with %s: %d kernel timings alone, %d beside "
                    "collectives, %d GEMM / copy tasks left out (beside another one, or a copy "
                    "beside collectives off the compute stream, or of no time)\n",
            cmd, arg, n.tasks, a->schedule, n.alone, n.overlapped, n.left_out);
    return 0;
}

/* --schedule FILE: dst is the whole common_args; the --replay CSVs after
 * it read it. */
static int set_schedule(const char *cmd, const cs_opt *o, const char *arg, void *dst)
{
    (void)cmd, (void)o;
    common_args *a = dst;
    a->schedule = arg;
    a->schedule_read = 0;
    return 0;
}

/* The rows both commands share, then each one's own; an option of the
 * other command is refused by name. */
#define AT(f) CS_ARG_AT(common_args, f)
#define COMMON_OPTS                                                                                \
    CS_ARG_CLUSTER(common_args, cluster),                                                          \
        {"nccl-tests", .parse = read_nccl_tests, AT(set)},                                         \
        {"measurements", .parse = read_measurements, AT(set)},                                     \
        {"training-runs", .parse = read_training_runs, AT(runs)},                                 \
        {"schedule", .parse = set_schedule}, {"replay", .parse = read_replay},      \
        CS_ARG_FORMAT(common_args, fmt), CS_ARG_OUTPUT(common_args, out)
static const cs_opt calibrate_opts[] = {
    COMMON_OPTS,
    {"compute-measurements", .parse = read_compute, AT(runs)},
    {"report", .parse = cs_opt_string, AT(report)},
    {"summary", .flag = 1, .parse = cs_opt_refuse},
};
static const cs_opt compare_opts[] = {
    COMMON_OPTS,
    {"compute-measurements", .parse = read_compute, AT(runs)},
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
    if (a->schedule && !a->schedule_read)
        return cs_cli_usage(cmd, "--schedule %s: no --replay CSV after it (a schedule is read "
                                 "by the --replay CSVs that follow it)", a->schedule);
    if (a->set.n == 0 && a->runs.n == 0 && a->runs.nk == 0)
        return cs_cli_usage(cmd, "%s", "no measurements: give --nccl-tests LOG, --measurements CSV, "
                                       "--training-runs CSV, --compute-measurements CSV or "
                                       "--schedule FILE --replay CSV");
    return -1;
}

#define N(a) (sizeof a / sizeof a[0])

/* The calibrated YAML and the report(s) of the fits run (res and tr may
 * each be NULL, not both). */
static int write_calibrated(const common_args *a, const cs_cluster *cl, const cs_calib_result *res,
                            const cs_calib_train_result *tr, const char *src, size_t src_len,
                            cs_diag *d)
{
    char why[320], twhy[320];
    int quality = res ? cs_calib_quality(res, why, sizeof why) : 0;
    if (quality)
        fprintf(stderr, "collsim calibrate: %s: %s\n", quality == 2 ? "error" : "warning", why);
    /* the compute fit (training runs, kernel timings) is judged alike */
    int tq = tr ? cs_calib_train_quality(tr, twhy, sizeof twhy) : 0;
    if (tq) fprintf(stderr, "collsim calibrate: %s: %s\n", tq == 2 ? "error" : "warning", twhy);
    if (tq > quality) quality = tq;
    cs_buf yaml = {0}, rep = {0}, head = {0};
    if (tr) cs_calib_train_header(&head, tr, &a->runs);
    cs_calib_yaml_extra x = {.header = head.data, .input = cl, .note = cs_calib_train_note,
                             .ud = (void *)tr, .files = a->runs.files, .nfiles = a->runs.nfiles};
    if (tr) x.cluster = &tr->cluster;
    cs_calib_write_yaml_ext(&yaml, res, &a->set, tr ? &x : NULL, a->cluster, src, src_len);
    if (res) cs_calib_report(&rep, (cs_format)a->fmt, res, &a->set);
    if (tr) cs_calib_train_report(&rep, (cs_format)a->fmt, tr, &a->runs);
    /* the YAML must load back as a cluster: the contract of -o */
    cs_cluster check;
    if (cs_config_load_cluster_string(a->out, yaml.data, yaml.len, &check, d))
        CS_PANIC("calibrated YAML does not load: %s:%d:%d: %s", d->file, d->line, d->column,
                 d->message);
    /* an unusable fit (collective or compute) writes its report (the reasons) but no OUT.yaml */
    const cs_buf *bufs[] = {&yaml, &rep};
    const char *paths[] = {a->out, a->report};
    int skip = quality == 2;
    int rc = cs_cli_outputs_write(bufs + skip, paths + skip, N(paths) - (size_t)skip, d)
                 ? cs_cli_fail(d)
                 : quality == 2 ? CS_EXIT_UNFIT : CS_EXIT_OK;
    cs_buf_free(&yaml);
    cs_buf_free(&rep);
    cs_buf_free(&head);
    return rc;
}

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
    if (a.set.n && (a.runs.n || a.runs.nk) && a.fmt != CS_FORMAT_TABLE) {
        rc = cs_cli_usage(cmd, "%s", "collective and compute inputs give two reports, one CSV or "
                                     "JSON document each: use --format table, or calibrate in two "
                                     "calls (the second with --cluster the first's YAML)");
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
    cs_calib_result *res = NULL;
    cs_calib_train_result *tr = NULL;
    /* the collectives first: the training runs are priced with them fitted */
    if ((a.set.n && cs_calibrate(&cl, &a.set, &res, &d)) ||
        ((a.runs.n || a.runs.nk) &&
         cs_calib_train(res ? &res->cluster : &cl, &a.runs, &tr, &d)))
        rc = cs_cli_fail(&d);
    else
        rc = write_calibrated(&a, &cl, res, tr, src, src_len, &d);
    free(src);
    if (res) cs_calib_result_free(res);
    cs_calib_train_result_free(tr);
out:
    cs_meas_free(&a.set);
    cs_training_runs_free(&a.runs);
    return rc;
}

/* compare of training runs on cl. */
static int compare_runs(const common_args *a, const cs_cluster *cl, cs_diag *d)
{
    cs_calib_train_compare cmp;
    if (cs_calib_train_compare_run(cl, &a->runs, &cmp, d)) return cs_cli_fail(d);
    cs_buf b = {0};
    cs_calib_train_compare_report(&b, (cs_format)a->fmt, cl->name, &a->runs, &cmp);
    int rc = cs_buf_write(&b, a->out, d) ? cs_cli_fail(d) : CS_EXIT_OK;
    cs_buf_free(&b);
    cs_calib_train_compare_free(&cmp);
    return rc;
}

int cs_cmd_compare(int argc, char **argv)
{
    const char *cmd = "compare";
    common_args a = {.fmt = CS_FORMAT_TABLE};
    int rc = parse(cmd, compare_opts, N(compare_opts), argc, argv, &a, compare_help);
    if (rc >= 0) goto out;
    int train = a.runs.n || a.runs.nk;
    if (train && a.set.n) {
        rc = cs_cli_usage(cmd, "%s", "--training-runs does not mix with collective inputs "
                                     "here: compare them in two calls");
        goto out;
    }
    if (train && a.summary) {
        rc = cs_cli_usage(cmd, "%s", "--summary is for collective inputs; the table format "
                                     "of --training-runs ends with its summary");
        goto out;
    }
    if ((rc = cs_cli_outputs_check(cmd, &a.out, 1)) >= 0) goto out;
    cs_diag d;
    cs_diag_clear(&d);
    cs_cluster cl;
    if (cs_config_cluster(a.cluster, &cl, &d)) {
        rc = cs_cli_fail(&d);
        goto out;
    }
    if (train) {
        rc = compare_runs(&a, &cl, &d);
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
    cs_training_runs_free(&a.runs);
    return rc;
}
