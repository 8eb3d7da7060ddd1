/* SPDX-License-Identifier: MIT */
/*
 * yamlwriter.c - block-style YAML out, with a source text's comments kept
 * where the values did not change.
 *
 * Attaching comments: the source's node tree gives every key (and sequence
 * item) a path and the line and column it starts on. Lines are then read
 * in order: a content line belongs to the outermost key starting on it
 * (or, for a line continuing a flow collection, to the previous line's
 * key); its trailing comment is that key's; comment lines directly below a
 * trailing comment and aligned with it continue it; other comment lines
 * lead the next key. A '#' starts a comment at the start of a line or
 * after a blank, outside quotes (a quote opens a quoted scalar only where
 * a value starts). Comment lines before the first key are the head, those
 * after the last the tail. Cost: O(lines x keys) to attach, O(keys) per
 * lookup: cluster files hold a few hundred keys at most.
 * Writing: each key is one line at 2 x depth spaces; a key's trailing
 * comment keeps its source column when the line is shorter, else follows
 * after one blank, and its continuation lines align under it.
 */
#include "config/yamlwriter.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lines of text ---- */

typedef struct lines {
    char **s;
    int n, cap;
} lines;

static void lines_add(lines *l, const char *s, size_t len)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4;
        l->s = cs_xrealloc(l->s, (size_t)l->cap * sizeof *l->s);
    }
    char *c = cs_xmalloc(len + 1);
    memcpy(c, s, len);
    c[len] = 0;
    l->s[l->n++] = c;
}

static void lines_free(lines *l)
{
    for (int i = 0; i < l->n; i++) free(l->s[i]);
    free(l->s);
    memset(l, 0, sizeof *l);
}

/* ---- the source ---- */

typedef struct entry {
    char *path;
    const cs_ynode *value;
    int line, column;  /* of the key, or of the item */
    lines lead, cont;  /* comment lines above; continuations of trail */
    char *trail;       /* "# ..." after the key on its line, or NULL */
    int trail_col;     /* its 1-based column */
} entry;

struct cs__ysrc {
    cs_ynode *root;
    entry *e;
    size_t n, cap;
    lines head, tail;
};

static void add_entry(cs__ysrc *s, const char *path, const cs_ynode *at, const cs_ynode *value)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->e = cs_xrealloc(s->e, s->cap * sizeof *s->e);
    }
    s->e[s->n++] = (entry){.path = cs_xstrdup(path), .value = value, .line = at->line,
                           .column = at->column};
}

/* Entries for every key and item under node n (at path), pre-order. */
static void collect(cs__ysrc *s, const cs_ynode *n, const char *path)
{
    char sub[256];
    if (n->kind == CS_YNODE_MAPPING)
        for (size_t i = 0; i < n->n; i++) {
            const cs_ynode *k = cs_yamlnode_key(n, i);
            snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", k->text);
            add_entry(s, sub, k, cs_yamlnode_value(n, i));
            collect(s, cs_yamlnode_value(n, i), sub);
        }
    else if (n->kind == CS_YNODE_SEQUENCE)
        for (size_t i = 0; i < n->n; i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            add_entry(s, sub, n->items[i], n->items[i]);
            collect(s, n->items[i], sub);
        }
}

/* Byte index of the '#' that starts a comment in line[0, len), or -1. */
static int comment_start(const char *line, size_t len)
{
    char quote = 0, prev = 0; /* prev: last non-blank outside quotes */
    for (size_t i = 0; i < len; i++) {
        char ch = line[i];
        if (quote) {
            if (ch == quote && !(quote == '"' && i > 0 && line[i - 1] == '\\')) quote = 0;
            continue;
        }
        if (ch == '#' && (i == 0 || isspace((unsigned char)line[i - 1]))) return (int)i;
        if ((ch == '\'' || ch == '"') && (!prev || strchr(":-[{,?", prev))) quote = ch;
        if (!isspace((unsigned char)ch)) prev = ch;
    }
    return -1;
}

/* The entry whose key starts on line, outermost (smallest column) first;
 * -1 if none. */
static int owner_of(const cs__ysrc *s, int line)
{
    int best = -1;
    for (size_t i = 0; i < s->n; i++)
        if (s->e[i].line == line && (best < 0 || s->e[i].column < s->e[best].column)) best = (int)i;
    return best;
}

/* What attaching carries from line to line. */
typedef struct attach_state {
    int seen_key;  /* a content line was met */
    int owner;     /* entry of the last content line */
    int cont_col;  /* '#' column the next comment line continues, 0 none */
    lines pending; /* comment lines awaiting the next key */
} attach_state;

static void comment_only(cs__ysrc *s, attach_state *st, const char *c, size_t clen, int col)
{
    if (!st->seen_key) lines_add(&s->head, c, clen);
    else if (st->cont_col && col == st->cont_col && st->owner >= 0)
        lines_add(&s->e[st->owner].cont, c, clen);
    else {
        lines_add(&st->pending, c, clen);
        st->cont_col = 0;
    }
}

static void content(cs__ysrc *s, attach_state *st, int lineno, const char *c, size_t clen, int col)
{
    int own = owner_of(s, lineno);
    st->seen_key = 1;
    if (own >= 0)
        for (int i = 0; i < st->pending.n; i++)
            lines_add(&s->e[own].lead, st->pending.s[i], strlen(st->pending.s[i]));
    lines_free(&st->pending);
    if (own < 0) own = st->owner;
    st->owner = own;
    st->cont_col = 0;
    if (!c || own < 0) return;
    entry *e = &s->e[own];
    if (e->trail) lines_add(&e->cont, c, clen);
    else {
        e->trail = cs_xmalloc(clen + 1);
        memcpy(e->trail, c, clen);
        e->trail[clen] = 0;
        e->trail_col = col;
    }
    st->cont_col = col;
}

static void attach_comments(cs__ysrc *s, const char *text, size_t len)
{
    attach_state st = {.owner = -1};
    int lineno = 0;
    for (size_t pos = 0; pos < len;) {
        const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + (nl ? 1 : 0);
        lineno++;
        while (ll && isspace((unsigned char)line[ll - 1])) ll--;
        size_t lead = 0;
        while (lead < ll && isspace((unsigned char)line[lead])) lead++;
        int cs = comment_start(line, ll);
        if (lead == ll) {
            st.cont_col = 0;
            if (!st.seen_key) lines_add(&s->head, "", 0);
        } else if (cs == (int)lead)
            comment_only(s, &st, line + cs, ll - (size_t)cs, cs + 1);
        else
            content(s, &st, lineno, cs >= 0 ? line + cs : NULL, cs >= 0 ? ll - (size_t)cs : 0,
                    cs + 1);
    }
    while (s->head.n && !s->head.s[s->head.n - 1][0]) free(s->head.s[--s->head.n]);
    s->tail = st.pending;
}

cs__ysrc *cs__ysrc_new(const char *text, size_t len)
{
    cs_diag d;
    cs_ynode *root = NULL;
    if (cs_yamlnode_parse("source", text, len, &root, &d) || !root) return NULL;
    if (root->kind != CS_YNODE_MAPPING) {
        cs_yamlnode_free(root);
        return NULL;
    }
    cs__ysrc *s = cs_xcalloc(1, sizeof *s);
    s->root = root;
    collect(s, root, "");
    attach_comments(s, text, len);
    return s;
}

void cs__ysrc_free(cs__ysrc *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->e[i].path);
        free(s->e[i].trail);
        lines_free(&s->e[i].lead);
        lines_free(&s->e[i].cont);
    }
    free(s->e);
    lines_free(&s->head);
    lines_free(&s->tail);
    cs_yamlnode_free(s->root);
    free(s);
}

static const entry *find(const cs__ysrc *s, const char *path)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (!strcmp(s->e[i].path, path)) return &s->e[i];
    return NULL;
}

/* ---- the writer ---- */

/* Paths are short (the schema nests 5 deep); a longer one is a bug. */
static void sub_path(const cs__yw *w, const char *rel, char *buf, size_t len)
{
    if (snprintf(buf, len, "%s%s%s", w->path, w->path[0] && rel[0] != '[' ? "." : "", rel) >=
        (int)len)
        CS_PANIC("YAML path too long: %s.%s", w->path, rel);
}

static void indent(cs__yw *w)
{
    cs_buf_printf(w->b, "%*s", 2 * w->depth, "");
}

/* One line: indent + body, with the source comments of path (unchanged)
 * or the note (changed). */
static void put_line(cs__yw *w, const char *path, const char *body, int changed)
{
    const entry *e = changed ? NULL : find(w->src, path);
    char nb[256];
    const char *note = changed && w->note ? w->note(w->ud, path, nb, sizeof nb) : NULL;
    for (int i = 0; e && i < e->lead.n; i++) {
        indent(w);
        cs_buf_printf(w->b, "%s\n", e->lead.s[i]);
    }
    size_t start = w->b->len;
    indent(w);
    cs_buf_printf(w->b, "%s", body);
    if (e && e->trail) {
        int col = (int)(w->b->len - start), pad = e->trail_col - 1 - col;
        if (pad < 1) pad = 1;
        cs_buf_printf(w->b, "%*s%s", pad, "", e->trail);
        for (int i = 0; i < e->cont.n; i++)
            cs_buf_printf(w->b, "\n%*s%s", col + pad, "", e->cont.s[i]);
    } else if (note && note[0]) {
        cs_buf_printf(w->b, "   # %s", note);
    }
    cs_buf_printf(w->b, "\n");
}

static void put_lines(cs__yw *w, const lines *l)
{
    for (int i = 0; i < l->n; i++) cs_buf_printf(w->b, "%s\n", l->s[i]);
}

void cs__yw_head(cs__yw *w)
{
    if (w->src) put_lines(w, &w->src->head);
}

void cs__yw_tail(cs__yw *w)
{
    if (w->src) put_lines(w, &w->src->tail);
}

void cs__yw_blank(cs__yw *w)
{
    cs_buf_printf(w->b, "\n");
}

void cs__yw_scalar(cs__yw *w, const char *key, const char *value, int changed)
{
    char path[sizeof w->path], body[512];
    sub_path(w, key, path, sizeof path);
    snprintf(body, sizeof body, "%s: %s", key, value);
    put_line(w, path, body, changed);
}

void cs__yw_begin(cs__yw *w, const char *key, int changed)
{
    char path[sizeof w->path], body[128];
    sub_path(w, key, path, sizeof path);
    snprintf(body, sizeof body, "%s:", key);
    put_line(w, path, body, changed);
    snprintf(w->path, sizeof w->path, "%s", path);
    w->depth++;
    w->items = 0;
}

void cs__yw_end(cs__yw *w)
{
    char *dot = strrchr(w->path, '.');
    if (dot) *dot = 0;
    else w->path[0] = 0;
    w->depth--;
}

void cs__yw_item(cs__yw *w, const char *flow, int changed)
{
    char path[sizeof w->path], body[512];
    char index[16];
    snprintf(index, sizeof index, "[%d]", w->items++);
    sub_path(w, index, path, sizeof path);
    snprintf(body, sizeof body, "- %s", flow);
    put_line(w, path, body, changed);
}

const char *cs__yw_source(const cs__yw *w, const char *rel, char *buf, size_t len)
{
    char path[sizeof w->path];
    sub_path(w, rel, path, sizeof path);
    const entry *e = find(w->src, path);
    if (!e || e->value->kind != CS_YNODE_SCALAR) return NULL;
    if (e->value->plain) snprintf(buf, len, "%s", e->value->text);
    else cs__yw_quote(e->value->text, buf, len);
    return buf;
}

int cs__yw_has(const cs__yw *w, const char *rel)
{
    char path[sizeof w->path];
    sub_path(w, rel, path, sizeof path);
    return cs__yw_has_path(w, path);
}

int cs__yw_has_path(const cs__yw *w, const char *path)
{
    return find(w->src, path) != NULL;
}

int cs__yw_commented(const cs__yw *w, const char *rel)
{
    char path[sizeof w->path];
    sub_path(w, rel, path, sizeof path);
    size_t n = strlen(path);
    for (size_t i = 0; w->src && i < w->src->n; i++) {
        const entry *e = &w->src->e[i];
        if (strncmp(e->path, path, n) || (e->path[n] != '.' && e->path[n] != '[')) continue;
        if (e->lead.n || e->trail) return 1;
    }
    return 0;
}

/* ---- scalars ---- */

static int plain_ok(const char *s)
{
    static const char *const words[] = {"", "~", "null", "Null", "NULL"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (!strcmp(s, words[i])) return 0;
    size_t n = strlen(s);
    if (isspace((unsigned char)s[0]) || isspace((unsigned char)s[n - 1])) return 0;
    if (strchr("-?:,[]{}#&*!|>'\"%@`", s[0])) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f || strchr(",[]{}", ch)) return 0;
        if ((ch == ':' || ch == '#') && (i + 1 == n || s[i + 1] == ' ' || (i && s[i - 1] == ' ')))
            return 0;
    }
    return 1;
}

void cs__yw_quote(const char *s, char *buf, size_t len)
{
    if (plain_ok(s)) {
        snprintf(buf, len, "%s", s);
        return;
    }
    size_t k = 0;
    if (k + 1 < len) buf[k++] = '"';
    for (const char *p = s; *p && k + 3 < len; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '"' || ch == '\\') {
            buf[k++] = '\\';
            buf[k++] = (char)ch;
        } else if (ch < 0x20 && k + 5 < len) {
            k += (size_t)snprintf(buf + k, len - k, "\\x%02x", ch);
        } else if (ch >= 0x20) {
            buf[k++] = (char)ch;
        }
    }
    if (k + 1 < len) buf[k++] = '"';
    buf[k < len ? k : len - 1] = 0;
}

/* ---- values of schema fields ---- */

/* Reads text back as field kind k would (no range), into *x. */
static int read_back(cs_yfield_kind k, const char *text, double *x)
{
    cs_diag d;
    cs_yctx c = {.origin = "", .root = "", .d = &d};
    cs_yfield f = {.name = "v", .kind = k, .flags = CS_YF_NO_HI, .lo = -INFINITY};
    cs_ynode n = {.kind = CS_YNODE_SCALAR, .line = 1, .column = 1, .text = (char *)text,
                  .len = strlen(text), .plain = 1};
    return cs_yamlnode_read(&c, &f, &n, x);
}

/* The shortest "%.Ng<unit>" of v x mult (or a neighbour of it: the
 * reader divides by the unit, which may not undo the product) that reads
 * back (x scale) as v, without an exponent where plain digits do (whole
 * numbers, 30 not 3e+01); -1 if none does. */
static int shortest(cs_yfield_kind k, double v, double mult, double scale, const char *unit,
                    char *buf, size_t len)
{
    double u0 = v / scale * mult, x;
    if (u0 == floor(u0) && fabs(u0) < 1e15) {
        snprintf(buf, len, "%.0f%s", u0, unit);
        if (!read_back(k, buf, &x) && x * scale == v) return 0;
    }
    for (int prec = 1; prec <= 17; prec++) {
        double u = nextafter(nextafter(u0, -INFINITY), -INFINITY);
        for (int step = 0; step < 5; step++, u = nextafter(u, INFINITY)) {
            snprintf(buf, len, "%.*g%s", prec, u, unit);
            /* %g's exponent where plain digits read as well (30, not 3e+01) */
            if (strchr(buf, 'e') && fabs(u0) >= 1e-4 && fabs(u0) < 1e15) continue;
            if (!read_back(k, buf, &x) && x * scale == v) return 0;
        }
    }
    return -1;
}

/* Units a value may be written in, preferred first (a later one only
 * where it is shorter): rates in GB/s or B/s, times in us, ns, ms or s. */
static const struct unit {
    cs_yfield_kind kind;
    const char *name;
    double mult; /* value in this unit = value x mult */
} units[] = {
    {CS_YF_RATE, "GB/s", 1e-9}, {CS_YF_TIME, "us", 1e6}, {CS_YF_TIME, "ns", 1e9},
    {CS_YF_TIME, "ms", 1e3}, /* sizes binary first: GPU memories, NCCL buffers */
    {CS_YF_SIZE, "GiB", 1.0 / 1073741824.0}, {CS_YF_SIZE, "MiB", 1.0 / 1048576.0},
    {CS_YF_SIZE, "KiB", 1.0 / 1024.0}, {CS_YF_SIZE, "GB", 1e-9}, {CS_YF_SIZE, "MB", 1e-6}};

/* The shortest exact text of the number v of kind k. */
static void number_text(cs_yfield_kind k, double v, double scale, char *buf, size_t len)
{
    char best[64] = "", c[64];
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        const struct unit *u = &units[i];
        if (u->kind == k && !shortest(k, v, u->mult, scale, u->name, c, sizeof c) &&
            (!best[0] || strlen(c) < strlen(best) ||
             (strlen(c) == strlen(best) && !strchr(c, '.') && strchr(best, '.'))))
            snprintf(best, sizeof best, "%s", c); /* shorter; as long: whole (512KiB, not 0.5MiB) */
    }
    if ((!best[0] || strlen(best) > 12) && !shortest(k, v, 1, scale, "", c, sizeof c) &&
        (!best[0] || strlen(c) < strlen(best)))
        snprintf(best, sizeof best, "%s", c);
    if (!best[0]) CS_PANIC("cs__yw_value: %.17g does not read back exactly", v);
    snprintf(buf, len, "%s", best);
}

void cs__yw_value(const cs_yfield *f, const void *p, double scale, char *buf, size_t len)
{
    int i;
    switch (f->kind) {
    case CS_YF_STRING: cs__yw_quote(p, buf, len); return;
    case CS_YF_INT:
        memcpy(&i, p, sizeof i);
        snprintf(buf, len, "%d", i);
        return;
    case CS_YF_BOOL:
        memcpy(&i, p, sizeof i);
        snprintf(buf, len, "%s", i ? "true" : "false");
        return;
    case CS_YF_ENUM:
        memcpy(&i, p, sizeof i);
        snprintf(buf, len, "%s", f->names[i]);
        return;
    default: break;
    }
    double v;
    memcpy(&v, p, sizeof v);
    number_text(f->kind, v, scale, buf, len);
}

int cs__yw_same_value(const cs_yfield *f, const void *a, const void *b)
{
    switch (f->kind) {
    case CS_YF_STRING: return !strcmp(a, b);
    case CS_YF_INT:
    case CS_YF_BOOL:
    case CS_YF_ENUM: return !memcmp(a, b, sizeof(int));
    default: {
        double x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return x == y;
    }
    }
}

/* v (x scale) in the unit the source spelled its value in ("400Gbps":
 * Gbps, "80GiB": GiB), exactly, into buf; -1 when the source has no unit
 * there or no text in that unit reads back as v. */
static int in_source_unit(const cs_yfield *f, const char *src, double v, double scale, char *buf,
                          size_t len)
{
    const char *u = src; /* past the number; an 'e' is the exponent's only if digits follow */
    while (*u && (isdigit((unsigned char)*u) || strchr("+-.eE", *u))) u++;
    while (u > src && (u[-1] == 'e' || u[-1] == 'E')) u--;
    if (!*u || u == src || strlen(u) > 8) return -1;
    char one[16];
    double unit_value;
    snprintf(one, sizeof one, "1%s", u);
    if (read_back(f->kind, one, &unit_value) || !(unit_value > 0)) return -1;
    return shortest(f->kind, v, 1.0 / unit_value, scale, u, buf, len);
}

void cs__yw_field(cs__yw *w, const cs_yfield *f, const char *key, const void *p, const void *bp,
                  double scale)
{
    int changed = bp && !cs__yw_same_value(f, p, bp);
    char buf[256], src[256];
    const char *spelt = cs__yw_source(w, key, src, sizeof src);
    const char *text = changed ? NULL : spelt;
    double v;
    if (!text && spelt && (f->kind == CS_YF_SIZE || f->kind == CS_YF_RATE || f->kind == CS_YF_TIME)) {
        memcpy(&v, p, sizeof v); /* a changed number: in the input's unit if it had one */
        if (!in_source_unit(f, spelt, v, scale, buf, sizeof buf)) text = buf;
    }
    if (!text) {
        cs__yw_value(f, p, scale, buf, sizeof buf);
        text = buf;
    }
    cs__yw_scalar(w, key, text, changed);
}

/* ---- tables ---- */

static const void *at(const void *obj, size_t off)
{
    return obj ? (const char *)obj + off : NULL;
}

void cs__yw_table(cs__yw *w, const cs_yfield *table, const void *obj, const void *base)
{
    for (const cs_yfield *f = table; f->name; f++) {
        const cs__yrow *x = f->ext;
        if (x && x->present && !x->present(obj)) continue;
        switch (f->kind) {
        case CS_YF_MAPPING:
            if (w->depth == 0) cs__yw_blank(w);
            cs__yw_begin(w, f->name, 0);
            cs__yw_table(w, f->sub, at(obj, f->offset), at(base, f->offset));
            cs__yw_end(w);
            break;
        case CS_YF_CUSTOM: x->put(w, f, obj, base); break;
        default: cs__yw_field(w, f, f->name, at(obj, f->offset), at(base, f->offset), 1.0); break;
        }
    }
}

const char *cs__yw_table_diff(const cs_yfield *table, const void *a, const void *b,
                              const char *path, char *buf, size_t len)
{
    for (const cs_yfield *f = table; f->name; f++) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", f->name);
        const cs__yrow *x = f->ext;
        int same;
        switch (f->kind) {
        case CS_YF_MAPPING:
            if (cs__yw_table_diff(f->sub, at(a, f->offset), at(b, f->offset), sub, buf, len))
                return buf;
            continue;
        case CS_YF_CUSTOM: same = x->same(f, a, b); break;
        default: same = cs__yw_same_value(f, at(a, f->offset), at(b, f->offset)); break;
        }
        if (!same) {
            snprintf(buf, len, "%s", sub);
            return buf;
        }
    }
    return NULL;
}
