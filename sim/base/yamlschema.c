/* SPDX-License-Identifier: MIT */
/*
 * yamlschema.c - the schema walker of yamlnode.h: a mapping checked
 * against a static table of cs_yfield rows and read into struct fields,
 * with precise messages (file:line:column, the expected kind and range,
 * did-you-mean for unknown keys and enum values).
 *
 * The walker reads fields in table order (not document order) so that
 * later rows can range-check against earlier ones (e.g. a node index
 * against `nodes`). Scalars are read by one reader per field kind, in one
 * table (scalar_readers). Unknown keys are found by a linear scan of the
 * table's names, O(keys x fields), fine for hand-written files. No global
 * state.
 */
#include "base/yamlnode.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

#define CS_YAML_MAX_FIELDS 64

/* "'text'" for scalars, otherwise the kind; for "got ..." in messages. */
static const char *got(const cs_ynode *n, char *buf, size_t len)
{
    if (n && n->kind == CS_YNODE_SCALAR && !cs_yamlnode_is_null(n)) {
        snprintf(buf, len, "'%.60s%s'", n->text, n->len > 60 ? "..." : "");
        return buf;
    }
    return cs_yamlnode_describe(n);
}

/* ", did you mean 'x'?" style tail: " (did you mean 'x'?)" or the list. */
static void suggest_tail(const char *s, const char *const *cands, size_t n, char *buf, size_t len)
{
    const char *sug = cs_yamlnode_suggest(s, cands, n);
    if (sug) {
        snprintf(buf, len, " (did you mean '%s'?)", sug);
        return;
    }
    size_t used = (size_t)snprintf(buf, len, " (expected one of: ");
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", cands[i]);
    if (used < len) snprintf(buf + used, len - used, ")");
}

int cs_yamlnode_error(const cs_yctx *c, const cs_ynode *at, const char *fmt, ...)
{
    char msg[sizeof c->d->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_diag_set(c->d, CS_ECONFIG, c->origin, at ? at->line : 0, at ? at->column : 0, "%s",
                       msg);
}

/* "in 1..1024", ">= 1", "in (0, 1]", "> 0" */
static void range_text(const cs_yfield *f, int is_int, char *buf, size_t len)
{
    if (is_int) {
        if (f->flags & CS_YF_NO_HI)
            snprintf(buf, len, ">= %.0f", f->lo);
        else
            snprintf(buf, len, "in %.0f..%.0f", f->lo, f->hi);
    } else if (f->flags & CS_YF_NO_HI) {
        snprintf(buf, len, "%s %g", f->flags & CS_YF_LO_OPEN ? ">" : ">=", f->lo);
    } else {
        snprintf(buf, len, "in %c%g, %g%c", f->flags & CS_YF_LO_OPEN ? '(' : '[', f->lo, f->hi,
                 f->flags & CS_YF_HI_OPEN ? ')' : ']');
    }
}

static int in_range(const cs_yfield *f, double v)
{
    if (f->flags & CS_YF_LO_OPEN ? !(v > f->lo) : !(v >= f->lo)) return 0;
    if (f->flags & CS_YF_NO_HI) return 1;
    return f->flags & CS_YF_HI_OPEN ? v < f->hi : v <= f->hi;
}

static const char *kind_text(cs_yfield_kind k)
{
    switch (k) {
    case CS_YF_STRING:
        return "a string";
    case CS_YF_INT:
        return "an integer";
    case CS_YF_NUMBER:
        return "a number";
    case CS_YF_SIZE:
        return "a size";
    case CS_YF_RATE:
        return "a rate";
    case CS_YF_TIME:
        return "a time";
    case CS_YF_BOOL:
        return "true or false";
    case CS_YF_ENUM:
        return "one of the listed names";
    default:
        return "a mapping";
    }
}

static int parse_int(const char *s, long long *out)
{
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    if (*p < '0' || *p > '9') return CS_EINVAL;
    for (const char *q = p; *q; q++)
        if (*q < '0' || *q > '9') return CS_EINVAL;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE) v = s[0] == '-' ? LLONG_MIN : LLONG_MAX;
    *out = v;
    return 0;
}

static int read_number(const cs_yfield *f, const cs_ynode *v, double *out, char *err, size_t errlen)
{
    switch (f->kind) {
    case CS_YF_SIZE:
        return cs_units_parse_size(v->text, out, err, errlen);
    case CS_YF_RATE:
        return cs_units_parse_rate(v->text, out, err, errlen);
    case CS_YF_TIME:
        return cs_units_parse_time(v->text, out, err, errlen);
    default: {
        /* Allow a sign so an out-of-range negative gets the range message. */
        const char *s = v->text;
        while (*s == ' ') s++;
        int neg = *s == '-';
        int rc = cs_units_parse_number(neg ? s + 1 : s, out, err, errlen);
        if (!rc && neg) *out = -*out;
        return rc;
    }
    }
}

/* What a field of kind f->kind must be, for its messages. */
static void expect_text(const cs_yfield *f, char *expect, size_t len)
{
    char rbuf[64];
    if (f->kind == CS_YF_INT || f->kind == CS_YF_NUMBER) {
        range_text(f, f->kind == CS_YF_INT, rbuf, sizeof rbuf);
        snprintf(expect, len, "%s %s", kind_text(f->kind), rbuf);
    } else if (f->kind == CS_YF_ENUM) {
        size_t used = (size_t)snprintf(expect, len, "one of ");
        for (size_t i = 0; f->names[i] && used < len; i++)
            used += (size_t)snprintf(expect + used, len - used, "%s%s", i ? ", " : "",
                                     f->names[i]);
    } else {
        snprintf(expect, len, "%s", kind_text(f->kind));
    }
}

/* One scalar reader per field kind: v is a non-null scalar without NUL;
 * expect is expect_text's. Each returns 0 with dst written, or the error. */
typedef int (*scalar_reader)(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *dst,
                             const char *expect);

static int read_string(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *dst,
                       const char *expect)
{
    (void)expect;
    if (v->len == 0) return cs_yamlnode_error(c, v, "'%s' must be a non-empty string", f->name);
    if (v->len >= f->size)
        return cs_yamlnode_error(c, v, "'%s' must be at most %zu characters, got %zu", f->name,
                                 f->size - 1, v->len);
    memcpy(dst, v->text, v->len + 1);
    return 0;
}

static int read_int(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *dst,
                    const char *expect)
{
    char gbuf[80];
    long long x;
    if (parse_int(v->text, &x))
        return cs_yamlnode_error(c, v, "'%s' must be %s, got %s", f->name, expect,
                                 got(v, gbuf, sizeof gbuf));
    if (!in_range(f, (double)x) || x > INT_MAX || x < INT_MIN)
        return cs_yamlnode_error(c, v, "'%s' must be %s, got %s", f->name, expect, v->text);
    int xi = (int)x;
    memcpy(dst, &xi, sizeof xi);
    return 0;
}

/* Numbers, sizes, rates and times: a double in the field's range. */
static int read_real(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *dst,
                     const char *expect)
{
    char gbuf[80], rbuf[64], err[200];
    double x;
    if (read_number(f, v, &x, err, sizeof err)) {
        if (f->kind == CS_YF_NUMBER)
            return cs_yamlnode_error(c, v, "'%s' must be %s, got %s", f->name, expect,
                                     got(v, gbuf, sizeof gbuf));
        return cs_yamlnode_error(c, v, "'%s': %s", f->name, err);
    }
    if (!in_range(f, x)) {
        range_text(f, 0, rbuf, sizeof rbuf);
        if (f->kind == CS_YF_NUMBER)
            return cs_yamlnode_error(c, v, "'%s' must be %s, got %s", f->name, rbuf, v->text);
        return cs_yamlnode_error(c, v, "'%s' must be %s %s, got %s", f->name, kind_text(f->kind),
                                 rbuf, v->text);
    }
    memcpy(dst, &x, sizeof x);
    return 0;
}

static int read_bool(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *dst,
                     const char *expect)
{
    static const char *const t[] = {"true", "True", "TRUE"}, *const fl[] = {"false", "False",
                                                                            "FALSE"};
    char gbuf[80];
    (void)expect;
    for (int i = 0; i < 3; i++) {
        int b = -1;
        if (!strcmp(v->text, t[i])) b = 1;
        if (!strcmp(v->text, fl[i])) b = 0;
        if (b >= 0) {
            memcpy(dst, &b, sizeof b);
            return 0;
        }
    }
    return cs_yamlnode_error(c, v, "'%s' must be true or false, got %s", f->name,
                             got(v, gbuf, sizeof gbuf));
}

static int read_enum(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *dst,
                     const char *expect)
{
    char gbuf[80];
    size_t n = 0;
    while (f->names[n]) n++;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(v->text, f->names[i])) {
            int xi = (int)i;
            memcpy(dst, &xi, sizeof xi);
            return 0;
        }
    }
    const char *sug = cs_yamlnode_suggest(v->text, f->names, n);
    char tail[96] = "";
    if (sug) snprintf(tail, sizeof tail, " (did you mean '%s'?)", sug);
    return cs_yamlnode_error(c, v, "'%s' must be %s, got %s%s", f->name, expect,
                             got(v, gbuf, sizeof gbuf), tail);
}

/* Indexed by cs_yfield_kind; NULL for the kinds that are not scalars. */
static const scalar_reader scalar_readers[] = {
    [CS_YF_STRING] = read_string, [CS_YF_INT] = read_int,   [CS_YF_NUMBER] = read_real,
    [CS_YF_SIZE] = read_real,     [CS_YF_RATE] = read_real, [CS_YF_TIME] = read_real,
    [CS_YF_BOOL] = read_bool,     [CS_YF_ENUM] = read_enum, [CS_YF_MAPPING] = NULL,
    [CS_YF_CUSTOM] = NULL,
};
_Static_assert(sizeof scalar_readers / sizeof *scalar_readers == CS_YF_CUSTOM + 1,
               "one entry per field kind");

int cs_yamlnode_read(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *dst)
{
    char gbuf[80], expect[256];
    scalar_reader rd = (unsigned)f->kind <= CS_YF_CUSTOM ? scalar_readers[f->kind] : NULL;
    if (!rd) CS_PANIC("cs_yamlnode_read: field '%s' is not a scalar kind", f->name);
    expect_text(f, expect, sizeof expect);
    if (v->kind != CS_YNODE_SCALAR || cs_yamlnode_is_null(v))
        return cs_yamlnode_error(c, v, "'%s' must be %s, got %s", f->name, expect,
                                 got(v, gbuf, sizeof gbuf));
    if (strlen(v->text) != v->len)
        return cs_yamlnode_error(c, v, "'%s' contains a NUL character", f->name);
    return rd(c, f, v, dst, expect);
}

static void child_path(const char *path, const char *name, char *buf, size_t len)
{
    if (path[0])
        snprintf(buf, len, "%s.%s", path, name);
    else
        snprintf(buf, len, "%s", name);
}

/* The index of key k in names[0..n), or an "unknown key" error naming
 * where (with a did-you-mean). */
static int key_index(const cs_yctx *c, const cs_ynode *k, const char *const *names, size_t n,
                     const char *where, size_t *out)
{
    size_t j = 0;
    while (j < n && strcmp(k->text, names[j])) j++;
    if (j == n) {
        char tail[512];
        suggest_tail(k->text, names, n, tail, sizeof tail);
        return cs_yamlnode_error(c, k, "unknown key '%.80s' in %s%s", k->text, where, tail);
    }
    *out = j;
    return 0;
}

int cs_yamlnode_apply(const cs_yctx *c, const cs_ynode *map, const char *path,
                      const cs_yfield *table, void *obj)
{
    const char *where = path[0] ? path : c->root;
    char gbuf[80];
    if (!map || map->kind != CS_YNODE_MAPPING || cs_yamlnode_is_null(map))
        return cs_yamlnode_error(c, map, "expected a mapping for %s, got %s", where,
                                 got(map, gbuf, sizeof gbuf));

    const char *names[CS_YAML_MAX_FIELDS];
    size_t nf = 0;
    while (table[nf].name) {
        CS_ASSERT(nf < CS_YAML_MAX_FIELDS);
        names[nf] = table[nf].name;
        nf++;
    }
    for (size_t i = 0; i < map->n; i++) {
        size_t j = 0;
        int rc = key_index(c, map->items[2 * i], names, nf, where, &j);
        if (rc) return rc;
    }

    for (const cs_yfield *f = table; f->name; f++) {
        const cs_ynode *v = cs_yamlnode_find(map, f->name);
        int rc = 0;
        if (!v) {
            if (f->flags & CS_YF_REQUIRED)
                return cs_yamlnode_error(c, map, "missing required key '%s' in %s", f->name, where);
            if (f->missing) rc = f->missing(c, f, map, obj);
            if (rc) return rc;
            continue;
        }
        switch (f->kind) {
        case CS_YF_MAPPING: {
            if (v->kind != CS_YNODE_MAPPING)
                return cs_yamlnode_error(c, v, "'%s' must be a mapping, got %s", f->name,
                                         got(v, gbuf, sizeof gbuf));
            char sub[256];
            child_path(path, f->name, sub, sizeof sub);
            rc = cs_yamlnode_apply(c, v, sub, f->sub, (char *)obj + f->offset);
            break;
        }
        case CS_YF_CUSTOM:
            rc = f->fn(c, f, v, obj);
            break;
        default:
            rc = cs_yamlnode_read(c, f, v, (char *)obj + f->offset);
            break;
        }
        if (rc) return rc;
    }
    return 0;
}

int cs_yamlnode_each_key(const cs_yctx *c, const cs_ynode *v, const char *name, const char *path,
                         const char *const *names, size_t n, cs_yamlnode_each_fn fn, void *ud)
{
    char gbuf[80];
    if (v->kind != CS_YNODE_MAPPING)
        return cs_yamlnode_error(c, v, "'%s' must be a mapping, got %s", name,
                                 got(v, gbuf, sizeof gbuf));
    for (size_t i = 0; i < v->n; i++) {
        size_t j = 0;
        int rc = key_index(c, v->items[2 * i], names, n, path, &j);
        if (!rc) rc = fn(c, j, v->items[2 * i + 1], ud);
        if (rc) return rc;
    }
    return 0;
}
