/* SPDX-License-Identifier: MIT */
/*
 * measure.c - the measurement set (rows grouped into datasets) and the
 * text helpers its readers share.
 *
 * The readers are measure_nccltests.c (raw nccl-tests logs) and
 * measure_csv.c (CSV naming its columns: the reference layout, busbw
 * summaries, collsim-hw output). Both append here and roll back with
 * cs__meas_truncate on error, so a caller can keep reading other files
 * after reporting one. The set grows by doubling: O(1) amortised per row.
 */
#include "study/measure.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/textfile.h"
#include "study/measure_parse.h"

/* ---- the set ------------------------------------------------------------- */

void cs_meas_free(cs_meas_set *s)
{
    free(s->rows);
    free(s->datasets);
    *s = (cs_meas_set){0};
}

cs_meas_row *cs__meas_add_row(cs_meas_set *s)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->rows = cs_xrealloc(s->rows, s->cap * sizeof *s->rows);
    }
    cs_meas_row *r = &s->rows[s->n++];
    memset(r, 0, sizeof *r);
    r->algo = CS_CHOICE_AUTO;
    r->proto = CS_CHOICE_AUTO;
    return r;
}

int cs__meas_add_dataset(cs_meas_set *s, const char *origin, const char *kind, int table)
{
    if (s->ndatasets == s->dcap) {
        s->dcap = s->dcap ? 2 * s->dcap : 8;
        s->datasets = cs_xrealloc(s->datasets, s->dcap * sizeof *s->datasets);
    }
    cs_meas_dataset *ds = &s->datasets[s->ndatasets];
    memset(ds, 0, sizeof *ds);
    const char *base = strrchr(origin, '/');
    base = base ? base + 1 : origin;
    char stem[128];
    snprintf(stem, sizeof stem, "%s", base);
    char *dot = strrchr(stem, '.');
    if (dot && dot != stem) *dot = 0;
    if (table > 1)
        snprintf(ds->name, sizeof ds->name, "%.100s#%d", stem, table);
    else
        snprintf(ds->name, sizeof ds->name, "%s", stem);
    snprintf(ds->source, sizeof ds->source, "%s", origin);
    snprintf(ds->kind, sizeof ds->kind, "%s", kind);
    return (int)s->ndatasets++;
}

void cs__meas_truncate(cs_meas_set *s, size_t n0, size_t nd0)
{
    s->n = n0;
    s->ndatasets = nd0;
}

double cs_meas_busbw_GBps(const cs_meas_row *r, double time_us)
{
    return r->size_bytes / (time_us * 1e-6) * cs_op_busbw_factor(r->op, r->ranks) / 1e9;
}

/* ---- text helpers ---------------------------------------------------------- */

int cs__meas_read_file(cs_meas_set *s, const char *path, cs__meas_reader read, cs_diag *d)
{
    char *text;
    size_t len;
    int rc = cs_textfile_read(path, "measurements file", &text, &len, d);
    if (rc) return rc;
    rc = read(s, path, text, len, d);
    free(text);
    return rc;
}

int cs__meas_each_line(const char *text, size_t len, cs__meas_line_fn fn, void *ud, int *lines)
{
    /* a UTF-8 byte order mark (spreadsheets' "CSV UTF-8") is no text;
     * columns count from after it */
    size_t pos = len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
    int rc = 0;
    *lines = 0;
    while (!rc && pos < len) {
        const char *l = text + pos;
        const char *nl = memchr(l, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - l) : len - pos;
        pos += n + (nl ? 1 : 0);
        if (n && l[n - 1] == '\r') n--;
        rc = fn(ud, ++*lines, l, n);
    }
    return rc;
}

const char *cs__meas_find_sub(const char *hay, size_t n, const char *needle, size_t m)
{
    for (size_t i = 0; m <= n && i + m <= n; i++)
        if (!memcmp(hay + i, needle, m)) return hay + i;
    return NULL;
}

int cs__meas_parse_num(const char *s, size_t len, double *v)
{
    char buf[64];
    /* a NUL byte would end the number early ("8<NUL>junk" read as 8) */
    if (len == 0 || len >= sizeof buf || memchr(s, 0, len)) return -1;
    memcpy(buf, s, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    double x = strtod(buf, &end);
    if (*end || errno == ERANGE || !isfinite(x)) return -1;
    *v = x;
    return 0;
}

/* The word var forces (`var=W` or `var set by environment to W`), or "". */
static void env_word(const char *text, size_t len, const char *var, char *w, size_t wlen)
{
    size_t vl = strlen(var);
    w[0] = 0;
    for (size_t i = 0; i + vl < len; i++) {
        if (strncmp(text + i, var, vl)) continue;
        size_t j = i + vl;
        if (j < len && text[j] == '=') j++;
        else if (len - j > 24 && !strncmp(text + j, " set by environment to ", 23)) j += 23;
        else continue;
        size_t k = 0;
        while (j < len && k + 1 < wlen && (isalnum((unsigned char)text[j]) || text[j] == '_'))
            w[k++] = text[j++];
        w[k] = 0;
        if (!k || (j < len && (text[j] == ',' || text[j] == '^'))) {
            w[0] = 0;
            continue;
        }
        return;
    }
}

void cs__meas_forced_in(const char *text, size_t len, cs__meas_forced *out)
{
    char w[32];
    out->algo = out->proto = CS_CHOICE_AUTO;
    out->algo_name[0] = 0;
    env_word(text, len, "NCCL_ALGO", w, sizeof w);
    if (w[0]) {
        cs_algo_id a;
        out->algo = cs_algo_parse(w, &a) == 0 ? (int)a : CS_MEAS_ALGO_OTHER;
        snprintf(out->algo_name, sizeof out->algo_name, "%.23s", w);
    }
    env_word(text, len, "NCCL_PROTO", w, sizeof w);
    cs_proto p;
    if (w[0] && cs_proto_parse(w, &p) == 0) out->proto = p;
}

/* Splits at commas, trimming blanks; returns -1 if there are too many. */
int cs__meas_split_csv(const char *line, size_t len, cs__meas_fields *f)
{
    f->n = 0;
    size_t b = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != ',') continue;
        if (f->n == CS__MEAS_MAX_COLS) return -1;
        size_t x = b, y = i;
        while (x < y && isspace((unsigned char)line[x])) x++;
        while (y > x && isspace((unsigned char)line[y - 1])) y--;
        f->s[f->n] = line + x;
        f->len[f->n] = (int)(y - x);
        f->col[f->n] = (int)x + 1;
        f->n++;
        b = i + 1;
    }
    return 0;
}
