/* SPDX-License-Identifier: MIT */
/*
 * yamlnode.c - libyaml events -> a tree of marked nodes, and the schema
 * walker that turns a mapping into struct fields with precise messages.
 *
 * Parsing uses libyaml's event API with an explicit stack (depth capped at
 * CS_YAML_MAX_DEPTH so freeing, which recurses, stays bounded). Every node
 * is linked into the tree the moment it is created, so on any error one
 * cs_yamlnode_free(root) releases everything. Aliases are rejected rather
 * than expanded: config files do not need them, and rejecting them rules out
 * cycles and exponential "billion laughs" expansion. Duplicate keys are
 * found with a linear scan of the keys already seen, O(n^2) per mapping,
 * which is fine for hand-written files of a few dozen keys.
 * The walker reads fields in table order (not document order) so that
 * later rows can range-check against earlier ones (e.g. a node index
 * against `nodes`). No global state.
 */
#include "base/yamlnode.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/units.h"

#define CS_YAML_MAX_DEPTH  64
#define CS_YAML_MAX_FIELDS 64

/* ---- tree ---- */

void cs_yamlnode_free(cs_ynode *n)
{
    if (!n) return;
    for (size_t i = 0; i < n->n_items; i++) cs_yamlnode_free(n->items[i]);
    free(n->items);
    free(n->text);
    free(n);
}

const cs_ynode *cs_yamlnode_key(const cs_ynode *map, size_t i)
{
    CS_ASSERT(map->kind == CS_YNODE_MAPPING && i < map->n);
    return map->items[2 * i];
}

const cs_ynode *cs_yamlnode_value(const cs_ynode *map, size_t i)
{
    CS_ASSERT(map->kind == CS_YNODE_MAPPING && i < map->n);
    return map->items[2 * i + 1];
}

const cs_ynode *cs_yamlnode_find(const cs_ynode *map, const char *key)
{
    if (!map || map->kind != CS_YNODE_MAPPING) return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (!strcmp(map->items[2 * i]->text, key)) return map->items[2 * i + 1];
    return NULL;
}

int cs_yamlnode_is_null(const cs_ynode *n)
{
    if (!n || n->kind != CS_YNODE_SCALAR || !n->plain) return 0;
    return !strcmp(n->text, "") || !strcmp(n->text, "~") || !strcmp(n->text, "null") ||
           !strcmp(n->text, "Null") || !strcmp(n->text, "NULL");
}

const char *cs_yamlnode_describe(const cs_ynode *n)
{
    if (!n || cs_yamlnode_is_null(n)) return "an empty value";
    switch (n->kind) {
    case CS_YNODE_MAPPING:
        return "a mapping";
    case CS_YNODE_SEQUENCE:
        return "a sequence";
    default:
        return "a scalar";
    }
}

/* "'text'" for scalars, otherwise the kind; for "got ..." in messages. */
static const char *got(const cs_ynode *n, char *buf, size_t len)
{
    if (n && n->kind == CS_YNODE_SCALAR && !cs_yamlnode_is_null(n)) {
        snprintf(buf, len, "'%.60s%s'", n->text, n->len > 60 ? "..." : "");
        return buf;
    }
    return cs_yamlnode_describe(n);
}

/* ---- parser ---- */

typedef struct builder {
    cs_ynode *root;
    cs_ynode *stack[CS_YAML_MAX_DEPTH];
    size_t depth;
    int documents;
} builder;

static int error_at(const char *origin, cs_diag *d, int line, int column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int error_at(const char *origin, cs_diag *d, int line, int column, const char *fmt, ...)
{
    char msg[sizeof d->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cs_diag_set(d, CS_ECONFIG, origin, line, column, "%s", msg);
}

static void push_item(cs_ynode *parent, cs_ynode *child)
{
    size_t k = parent->n_items;
    /* Capacity doubles at powers of two, so it is always >= k + 1 here. */
    if ((k & (k - 1)) == 0)
        parent->items = cs_xrealloc(parent->items, (k ? 2 * k : 2) * sizeof *parent->items);
    parent->items[parent->n_items++] = child;
}

/* Links a new node under the top of the stack (or as root). In a mapping
 * an odd n_items means the node is a key awaiting its value; n counts only
 * complete pairs, so lookups never see a half pair while freeing does. */
static int attach(builder *b, cs_ynode *node, const char *origin, cs_diag *d)
{
    if (b->depth == 0) {
        b->root = node;
        return 0;
    }
    cs_ynode *parent = b->stack[b->depth - 1];
    push_item(parent, node);
    if (parent->kind == CS_YNODE_SEQUENCE) {
        parent->n = parent->n_items;
        return 0;
    }
    if ((parent->n_items & 1) == 0) { /* the value: the pair is complete */
        parent->n = parent->n_items / 2;
        return 0;
    }
    if (node->kind != CS_YNODE_SCALAR)
        return error_at(origin, d, node->line, node->column, "mapping keys must be scalars, got %s",
                        cs_yamlnode_describe(node));
    for (size_t i = 0; i < parent->n; i++) {
        const cs_ynode *k = parent->items[2 * i];
        if (k->len == node->len && !memcmp(k->text, node->text, k->len))
            return error_at(origin, d, node->line, node->column,
                            "duplicate key '%.80s' (first defined at line %d, column %d)",
                            node->text, k->line, k->column);
    }
    return 0;
}

static cs_ynode *new_node(cs_ynode_kind kind, yaml_mark_t mark)
{
    cs_ynode *n = cs_xcalloc(1, sizeof *n);
    n->kind = kind;
    n->line = (int)mark.line + 1;
    n->column = (int)mark.column + 1;
    return n;
}

/* Line/column of a byte offset (libyaml's reader errors carry only that). */
static void offset_mark(const char *text, size_t len, size_t off, int *line, int *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static int syntax_error(const yaml_parser_t *p, const char *origin, const char *text, size_t len,
                        cs_diag *d)
{
    if (p->error == YAML_MEMORY_ERROR) CS_PANIC("out of memory in libyaml");
    const char *problem = p->problem ? p->problem : "unknown problem";
    if (p->error == YAML_READER_ERROR) {
        int line, col;
        offset_mark(text, len, p->problem_offset, &line, &col);
        return error_at(origin, d, line, col, "invalid YAML: %s", problem);
    }
    int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
    if (p->context)
        return error_at(origin, d, line, col, "invalid YAML: %s (%s at line %d, column %d)",
                        problem, p->context, (int)p->context_mark.line + 1,
                        (int)p->context_mark.column + 1);
    return error_at(origin, d, line, col, "invalid YAML: %s", problem);
}

static int on_event(builder *b, const yaml_event_t *ev, const char *origin, cs_diag *d)
{
    cs_ynode *n;
    int rc;
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (b->documents++)
            return error_at(origin, d, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
                            "expected a single YAML document, found a second one");
        return 0;
    case YAML_ALIAS_EVENT:
        return error_at(origin, d, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
                        "YAML aliases (*%s) are not supported here; write the value out",
                        (const char *)ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        n = new_node(CS_YNODE_SCALAR, ev->start_mark);
        n->len = ev->data.scalar.length;
        n->text = cs_xmalloc(n->len + 1);
        memcpy(n->text, ev->data.scalar.value, n->len);
        n->text[n->len] = '\0';
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        return attach(b, n, origin, d);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        n = new_node(ev->type == YAML_MAPPING_START_EVENT ? CS_YNODE_MAPPING : CS_YNODE_SEQUENCE,
                     ev->start_mark);
        rc = attach(b, n, origin, d);
        if (rc) return rc;
        if (b->depth == CS_YAML_MAX_DEPTH)
            return error_at(origin, d, n->line, n->column, "nesting deeper than %d levels",
                            CS_YAML_MAX_DEPTH);
        b->stack[b->depth++] = n;
        return 0;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        CS_ASSERT(b->depth > 0);
        b->depth--;
        return 0;
    default:
        return 0;
    }
}

int cs_yamlnode_parse(const char *origin, const char *text, size_t len, cs_ynode **root, cs_diag *d)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) CS_PANIC("out of memory in libyaml");
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    builder b;
    memset(&b, 0, sizeof b);
    int rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = syntax_error(&p, origin, text, len, d);
            break;
        }
        int end = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(&b, &ev, origin, d);
        yaml_event_delete(&ev);
        if (rc || end) break;
    }
    yaml_parser_delete(&p);
    if (rc) {
        cs_yamlnode_free(b.root);
        *root = NULL;
        return rc;
    }
    *root = b.root;
    return 0;
}

/* ---- suggestions ---- */

int cs_yamlnode_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int *row = cs_xmalloc((lb + 1) * sizeof *row);
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0]; /* D[i-1][j-1] */
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j]; /* D[i-1][j] */
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    int dist = row[lb];
    free(row);
    return dist;
}

const char *cs_yamlnode_suggest(const char *s, const char *const *cands, size_t n)
{
    int limit = (int)(strlen(s) / 3);
    if (limit < 2) limit = 2;
    const char *best = NULL;
    int best_d = INT_MAX;
    for (size_t i = 0; i < n; i++) {
        int dist = cs_yamlnode_edit_distance(s, cands[i]);
        if (dist < best_d) best = cands[i], best_d = dist;
    }
    return best_d <= limit ? best : NULL;
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

/* ---- walker ---- */

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

int cs_yamlnode_read(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *dst)
{
    char gbuf[80], rbuf[64];
    char expect[256];
    if (f->kind == CS_YF_INT || f->kind == CS_YF_NUMBER) {
        range_text(f, f->kind == CS_YF_INT, rbuf, sizeof rbuf);
        snprintf(expect, sizeof expect, "%s %s", kind_text(f->kind), rbuf);
    } else if (f->kind == CS_YF_ENUM) {
        size_t used = (size_t)snprintf(expect, sizeof expect, "one of ");
        for (size_t i = 0; f->names[i] && used < sizeof expect; i++)
            used += (size_t)snprintf(expect + used, sizeof expect - used, "%s%s", i ? ", " : "",
                                     f->names[i]);
    } else {
        snprintf(expect, sizeof expect, "%s", kind_text(f->kind));
    }
    if (v->kind != CS_YNODE_SCALAR || cs_yamlnode_is_null(v))
        return cs_yamlnode_error(c, v, "'%s' must be %s, got %s", f->name, expect,
                                 got(v, gbuf, sizeof gbuf));
    if (strlen(v->text) != v->len)
        return cs_yamlnode_error(c, v, "'%s' contains a NUL character", f->name);

    switch (f->kind) {
    case CS_YF_STRING:
        if (v->len == 0) return cs_yamlnode_error(c, v, "'%s' must be a non-empty string", f->name);
        if (v->len >= f->size)
            return cs_yamlnode_error(c, v, "'%s' must be at most %zu characters, got %zu", f->name,
                                     f->size - 1, v->len);
        memcpy(dst, v->text, v->len + 1);
        return 0;
    case CS_YF_INT: {
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
    case CS_YF_NUMBER:
    case CS_YF_SIZE:
    case CS_YF_RATE:
    case CS_YF_TIME: {
        double x;
        char err[200];
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
            return cs_yamlnode_error(c, v, "'%s' must be %s %s, got %s", f->name,
                                     kind_text(f->kind), rbuf, v->text);
        }
        memcpy(dst, &x, sizeof x);
        return 0;
    }
    case CS_YF_BOOL: {
        static const char *const t[] = {"true", "True", "TRUE"}, *const fl[] = {"false", "False",
                                                                                "FALSE"};
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
    case CS_YF_ENUM: {
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
    default:
        CS_PANIC("cs_yamlnode_read: field '%s' is not a scalar kind", f->name);
    }
}

static void child_path(const char *path, const char *name, char *buf, size_t len)
{
    if (path[0])
        snprintf(buf, len, "%s.%s", path, name);
    else
        snprintf(buf, len, "%s", name);
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
        const cs_ynode *k = map->items[2 * i];
        size_t j = 0;
        while (j < nf && strcmp(k->text, names[j])) j++;
        if (j == nf) {
            char tail[512];
            suggest_tail(k->text, names, nf, tail, sizeof tail);
            return cs_yamlnode_error(c, k, "unknown key '%.80s' in %s%s", k->text, where, tail);
        }
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
        const cs_ynode *k = v->items[2 * i];
        size_t j = 0;
        while (j < n && strcmp(k->text, names[j])) j++;
        if (j == n) {
            char tail[512];
            suggest_tail(k->text, names, n, tail, sizeof tail);
            return cs_yamlnode_error(c, k, "unknown key '%.80s' in %s%s", k->text, path, tail);
        }
        int rc = fn(c, j, v->items[2 * i + 1], ud);
        if (rc) return rc;
    }
    return 0;
}
