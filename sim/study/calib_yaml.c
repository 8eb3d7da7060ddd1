/* SPDX-License-Identifier: MIT */
/*
 * calib_yaml.c - the calibrated cluster as YAML: a header naming the
 * inputs and every parameter (fitted, with its interval, or kept, with
 * why), then the cluster written through the schema tables that read it
 * (config/cluster_yaml.h): every key, the name `<input>-calibrated`, the
 * input's comments where the fit changed nothing and "# fitted ..." where
 * it did, a changed value in the unit the input spelled it in, and the
 * fit's date (fit_date: deterministic).
 * Departure from the fit's cluster: an efficiency fitted above 1 (the
 * achievable rate is above the line rate given) is written as the rate
 * times it, with efficiency 1, since the schema caps efficiencies at 1.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "config/cluster_yaml.h"
#include "study/calib_phases.h"

/* Efficiencies above 1 move into the rates. */
static void raise_rates(cs_cluster *c)
{
    if (c->intra.efficiency > 1.0) {
        c->intra.bw_Bps *= c->intra.efficiency;
        c->intra.efficiency = 1.0;
    }
    if (c->inter.nics_per_node > 0 && c->inter.efficiency > 1.0) {
        c->inter.nic_bw_Bps *= c->inter.efficiency;
        c->inter.pcie_Bps *= c->inter.efficiency; /* e scales both (coll/topology.c) */
        c->inter.efficiency = 1.0;
    }
}

/* The comment of a key the fit changed: the parameters landing there
 * (the collective fit's, then the extra's). */
typedef struct note_ctx {
    const cs_calib_result *r; /* may be NULL */
    const cs_calib_yaml_extra *x;
} note_ctx;

static const char *fitted_note(void *ud, const char *path, char *buf, size_t len)
{
    const note_ctx *nc = ud;
    const cs_calib_result *r = nc->r;
    if (!strcmp(path, "intra.bandwidth") || !strcmp(path, "inter.nic_bandwidth"))
        return snprintf(buf, len, "fitted: the achievable rate, above the line rate given"), buf;
    size_t used = 0;
    for (int j = 0; r && j < r->nparams && used < len; j++) {
        const cs_calib_param *p = &r->params[j];
        if (p->fitted && !strcmp(cs__calib_param(j).key, path))
            used += (size_t)snprintf(buf + used, len - used, "%s%s = %.6g%s",
                                     used ? ", " : "fitted ", p->name, p->value, p->unit);
    }
    if (!used && nc->x && nc->x->note) return nc->x->note(nc->x->ud, path, buf, len);
    return used ? buf : NULL;
}

/* The fit's date, deterministic: SOURCE_DATE_EPOCH when set (the
 * reproducible-builds convention, https://reproducible-builds.org/specs/
 * source-date-epoch/), else the newest modification time among the input
 * files (the measurements and the cluster file): the same inputs give the
 * same bytes, never the time of the run. UTC, ISO 8601 date. */
static void fit_date(const cs_meas_set *m, const cs_calib_yaml_extra *x, const char *origin,
                     char *buf, size_t len)
{
    const char *env = getenv("SOURCE_DATE_EPOCH");
    char *end = NULL;
    long long t = env && *env ? strtoll(env, &end, 10) : -1;
    const char *why = "SOURCE_DATE_EPOCH";
    if (!env || !*env || *end || t < 0) {
        struct stat st;
        t = -1;
        why = "the newest input file's modification time";
        for (size_t k = 0; k < m->ndatasets; k++)
            if (!stat(m->datasets[k].source, &st) && (long long)st.st_mtime > t)
                t = (long long)st.st_mtime;
        for (size_t k = 0; x && k < x->nfiles; k++)
            if (!stat(x->files[k], &st) && (long long)st.st_mtime > t) t = (long long)st.st_mtime;
        if (origin && !stat(origin, &st) && (long long)st.st_mtime > t) t = (long long)st.st_mtime;
    }
    if (t < 0) {
        snprintf(buf, len, "unknown (no input file to date it by; set SOURCE_DATE_EPOCH)");
        return;
    }
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    char day[16];
    strftime(day, sizeof day, "%Y-%m-%d", &tm);
    snprintf(buf, len, "%s (%s)", day, why);
}

static void header(cs_buf *b, const cs_calib_result *r, const cs_meas_set *m,
                   const cs_calib_yaml_extra *x, const char *origin)
{
    if (!r) {
        cs_buf_printf(b, "# Calibrated by `collsim calibrate` from cluster %s.\n", origin);
        goto extra;
    }
    cs_buf_printf(b, "# Calibrated by `collsim calibrate` from cluster %s and %zu measured rows "
                     "(%d used) in:\n", origin, m->n, r->used_rows);
    for (size_t k = 0; k < m->ndatasets; k++)
        cs_buf_printf(b, "#   %s (%s)%s%s\n", m->datasets[k].source, m->datasets[k].kind,
                      r->ds_why[k][0] ? " - excluded: " : "", r->ds_why[k]);
    cs_buf_printf(b, "# Fit: %s; weighted RMS relative error %.2f%% -> %.2f%%.\n", r->status,
                  r->rms_before_pct, r->rms_after_pct);
    for (int j = 0; j < r->nparams; j++) {
        const cs_calib_param *p = &r->params[j];
        if (p->fitted && isfinite(p->ci_lo))
            cs_buf_printf(b, "# fitted %s = %.6g%s (95%% CI %.6g .. %.6g; input %.6g) -> %s, %s\n",
                          p->name, p->value, p->unit, p->ci_lo, p->ci_hi, p->initial, p->yaml,
                          p->why);
        else if (p->fitted)
            cs_buf_printf(b, "# fitted %s = %.6g%s (input %.6g) -> %s, %s\n", p->name, p->value,
                          p->unit, p->initial, p->yaml, p->why);
        else if (isfinite(p->value))
            cs_buf_printf(b, "# kept   %s = %.6g%s: %s\n", p->name, p->value, p->unit, p->why);
        else
            cs_buf_printf(b, "# kept   %s = NCCL's: %s\n", p->name, p->why);
    }
extra:
    if (x && x->header) cs_buf_printf(b, "%s", x->header);
    char date[64];
    fit_date(m, x, origin, date, sizeof date);
    cs_buf_printf(b, "# Date: %s\n", date);
    cs_buf_printf(b, "# Schema: configs/clusters/README.md. A changed value is written in the unit "
                     "its input used\n# (else GB/s = 1e9 B/s, us, GiB = 2^30 B); the rest as "
                     "the input wrote it.\n");
}

void cs_calib_write_yaml(cs_buf *b, const cs_calib_result *r, const cs_meas_set *m,
                         const char *origin, const char *src_text, size_t src_len)
{
    cs_calib_write_yaml_ext(b, r, m, NULL, origin, src_text, src_len);
}

void cs_calib_write_yaml_ext(cs_buf *b, const cs_calib_result *r, const cs_meas_set *m,
                             const cs_calib_yaml_extra *x, const char *origin,
                             const char *src_text, size_t src_len)
{
    CS_ASSERT(r || (x && x->input && x->cluster));
    header(b, r, m, x, origin);
    if (src_text) cs_buf_printf(b, "\n");
    const cs_cluster *input = r ? &r->input : x->input;
    cs_cluster c = x && x->cluster ? *x->cluster : r->cluster;
    raise_rates(&c);
    /* its own name, so it never passes for the input (a recalibration keeps one suffix) */
    const char *sfx = "-calibrated";
    size_t n = strlen(c.name), ns = strlen(sfx);
    if (n < ns || strcmp(c.name + n - ns, sfx))
        snprintf(c.name, sizeof c.name, "%.*s%s", (int)(sizeof c.name - ns - 1), input->name, sfx);
    note_ctx nc = {r, x};
    cs_cluster_yaml_opts o = {.src_text = src_text, .src_len = src_len, .base = input,
                              .note = fitted_note, .ud = &nc};
    cs_config_write_cluster(b, &c, &o);
}

void cs_calib_cluster_yaml(cs_buf *b, const cs_cluster *c)
{
    cs_buf_printf(b, "# cluster '%s' written by collsim\n", c->name);
    cs_config_write_cluster(b, c, NULL);
}
