/* SPDX-License-Identifier: MIT */
/*
 * json.c - recursive-descent JSON reader (see json.h). One pass over the
 * text, O(length); every error names the position where it was found.
 */
#include "json.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct parser {
    const char *s;
    size_t len, pos;
    int line, col;
    const char *file;
    cs_diag *d;
} parser;

static int fail(parser *p, const char *fmt, const char *arg)
{
    cs_diag_set(p->d, CS_ECONFIG, p->file, p->line, p->col, fmt, arg);
    return CS_ECONFIG;
}

static int peek(const parser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }

static void advance(parser *p)
{
    if (p->pos >= p->len) return;
    if (p->s[p->pos] == '\n') {
        p->line++;
        p->col = 1;
    } else {
        p->col++;
    }
    p->pos++;
}

static void skip_ws(parser *p)
{
    for (int c = peek(p); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek(p)) advance(p);
}

static cs_json *new_value(parser *p, cs_json_type t)
{
    cs_json *v = cs_xcalloc(1, sizeof *v);
    v->type = t;
    v->line = p->line;
    v->column = p->col;
    return v;
}

static const char *what(int c)
{
    static char buf[16];
    if (c < 0) return "end of input";
    if (c >= 0x20 && c < 0x7f) snprintf(buf, sizeof buf, "'%c'", c);
    else snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
}

static int parse_value(parser *p, cs_json **out, int depth);

static int hex4(parser *p, unsigned *u)
{
    *u = 0;
    for (int i = 0; i < 4; i++) {
        int c = peek(p);
        if (c < 0 || !isxdigit(c)) return fail(p, "expected 4 hex digits after \\u, got %s", what(c));
        *u = *u * 16 + (unsigned)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
        advance(p);
    }
    return 0;
}

static void put_utf8(char **buf, size_t *n, size_t *cap, unsigned cp)
{
    if (*n + 5 > *cap) *buf = cs_xrealloc(*buf, *cap = 2 * *cap + 8);
    char *b = *buf;
    if (cp < 0x80) b[(*n)++] = (char)cp;
    else if (cp < 0x800) {
        b[(*n)++] = (char)(0xc0 | (cp >> 6));
        b[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        b[(*n)++] = (char)(0xe0 | (cp >> 12));
        b[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        b[(*n)++] = (char)(0xf0 | (cp >> 18));
        b[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        b[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        b[(*n)++] = (char)(0x80 | (cp & 0x3f));
    }
}

/* At the opening quote; stores a malloc'ed string. */
static int parse_string(parser *p, char **out)
{
    size_t n = 0, cap = 32;
    char *b = cs_xmalloc(cap);
    advance(p); /* " */
    for (;;) {
        int c = peek(p);
        if (c < 0) {
            free(b);
            return fail(p, "%s", "unterminated string");
        }
        if (c == '"') {
            advance(p);
            break;
        }
        if (c < 0x20) {
            free(b);
            return fail(p, "control character %s in string (escape it)", what(c));
        }
        if (c == '\\') {
            advance(p);
            int e = peek(p);
            unsigned cp = 0;
            switch (e) {
            case '"': cp = '"'; break;
            case '\\': cp = '\\'; break;
            case '/': cp = '/'; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u': {
                advance(p);
                if (hex4(p, &cp)) {
                    free(b);
                    return CS_ECONFIG;
                }
                if (cp >= 0xd800 && cp < 0xdc00) {
                    unsigned lo;
                    if (peek(p) != '\\') goto bad_surrogate;
                    advance(p);
                    if (peek(p) != 'u') goto bad_surrogate;
                    advance(p);
                    if (hex4(p, &lo)) {
                        free(b);
                        return CS_ECONFIG;
                    }
                    if (lo < 0xdc00 || lo > 0xdfff) goto bad_surrogate;
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                } else if (cp >= 0xdc00 && cp < 0xe000) {
                    goto bad_surrogate;
                }
                if (cp == 0) {
                    free(b);
                    return fail(p, "%s", "\\u0000 is not allowed in strings");
                }
                put_utf8(&b, &n, &cap, cp);
                continue;
            }
            default: free(b); return fail(p, "invalid escape \\%s in string", what(e));
            }
            advance(p);
            put_utf8(&b, &n, &cap, cp);
            continue;
        }
        if (n + 2 > cap) b = cs_xrealloc(b, cap *= 2);
        b[n++] = (char)c;
        advance(p);
    }
    b[n] = 0;
    *out = b;
    return 0;
bad_surrogate:
    free(b);
    return fail(p, "%s", "unpaired UTF-16 surrogate in \\u escape");
}

static int parse_number(parser *p, cs_json *v)
{
    size_t start = p->pos;
    if (peek(p) == '-') advance(p);
    if (peek(p) == '0') advance(p);
    else if (peek(p) >= '1' && peek(p) <= '9')
        while (peek(p) >= '0' && peek(p) <= '9') advance(p);
    else return fail(p, "expected a digit, got %s", what(peek(p)));
    if (peek(p) == '.') {
        advance(p);
        if (!(peek(p) >= '0' && peek(p) <= '9'))
            return fail(p, "expected a digit after '.', got %s", what(peek(p)));
        while (peek(p) >= '0' && peek(p) <= '9') advance(p);
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        advance(p);
        if (peek(p) == '+' || peek(p) == '-') advance(p);
        if (!(peek(p) >= '0' && peek(p) <= '9'))
            return fail(p, "expected a digit in the exponent, got %s", what(peek(p)));
        while (peek(p) >= '0' && peek(p) <= '9') advance(p);
    }
    char buf[64];
    size_t n = p->pos - start;
    if (n >= sizeof buf) return fail(p, "%s", "number too long");
    memcpy(buf, p->s + start, n);
    buf[n] = 0;
    v->number = strtod(buf, NULL);
    return 0;
}

static int literal(parser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n))
        return fail(p, "unexpected %s (expected a value)", what(peek(p)));
    for (size_t i = 0; i < n; i++) advance(p);
    return 0;
}

static void push(cs_json *v, size_t *cap, cs_json *item, char *key)
{
    if (v->n == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        v->items = cs_xrealloc(v->items, *cap * sizeof *v->items);
        if (v->type == CS_JSON_OBJECT) v->keys = cs_xrealloc(v->keys, *cap * sizeof *v->keys);
    }
    v->items[v->n] = item;
    if (v->type == CS_JSON_OBJECT) v->keys[v->n] = key;
    v->n++;
}

static int parse_container(parser *p, cs_json *v, int depth)
{
    int obj = v->type == CS_JSON_OBJECT;
    int close = obj ? '}' : ']';
    size_t cap = 0;
    advance(p);
    skip_ws(p);
    if (peek(p) == close) {
        advance(p);
        return 0;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(p);
        if (obj) {
            if (peek(p) != '"') return fail(p, "expected a member name in quotes, got %s", what(peek(p)));
            int kl = p->line, kc = p->col;
            if (parse_string(p, &key)) return CS_ECONFIG;
            for (size_t i = 0; i < v->n; i++)
                if (!strcmp(v->keys[i], key)) {
                    p->line = kl;
                    p->col = kc;
                    int rc = fail(p, "duplicate member '%s'", key);
                    free(key);
                    return rc;
                }
            skip_ws(p);
            if (peek(p) != ':') {
                free(key);
                return fail(p, "expected ':' after a member name, got %s", what(peek(p)));
            }
            advance(p);
        }
        cs_json *item = NULL;
        if (parse_value(p, &item, depth + 1)) {
            free(key);
            return CS_ECONFIG;
        }
        push(v, &cap, item, key);
        skip_ws(p);
        int c = peek(p);
        if (c == ',') {
            advance(p);
            continue;
        }
        if (c == close) {
            advance(p);
            return 0;
        }
        return fail(p, obj ? "expected ',' or '}', got %s" : "expected ',' or ']', got %s", what(c));
    }
}

static int parse_value(parser *p, cs_json **out, int depth)
{
    skip_ws(p);
    if (depth > MAX_DEPTH) return fail(p, "%s", "nesting deeper than 64 levels");
    int c = peek(p);
    cs_json *v;
    int rc;
    switch (c) {
    case '{': v = new_value(p, CS_JSON_OBJECT); rc = parse_container(p, v, depth); break;
    case '[': v = new_value(p, CS_JSON_ARRAY); rc = parse_container(p, v, depth); break;
    case '"': v = new_value(p, CS_JSON_STRING); rc = parse_string(p, &v->string); break;
    case 't': v = new_value(p, CS_JSON_BOOL); v->boolean = 1; rc = literal(p, "true"); break;
    case 'f': v = new_value(p, CS_JSON_BOOL); rc = literal(p, "false"); break;
    case 'n': v = new_value(p, CS_JSON_NULL); rc = literal(p, "null"); break;
    default:
        if (c == '-' || (c >= '0' && c <= '9')) {
            v = new_value(p, CS_JSON_NUMBER);
            rc = parse_number(p, v);
            break;
        }
        return fail(p, "unexpected %s (expected a value)", what(c));
    }
    if (rc) {
        cs_json_free(v);
        return rc;
    }
    *out = v;
    return 0;
}

int cs_json_parse(const char *text, size_t len, const char *file, cs_json **out, cs_diag *d)
{
    parser p = {text, len, 0, 1, 1, file, d};
    *out = NULL;
    cs_json *v;
    if (parse_value(&p, &v, 0)) return CS_ECONFIG;
    skip_ws(&p);
    if (p.pos != p.len) {
        cs_json_free(v);
        return fail(&p, "unexpected %s after the JSON value", what(peek(&p)));
    }
    *out = v;
    return 0;
}

void cs_json_free(cs_json *v)
{
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) {
        cs_json_free(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    free(v);
}

const cs_json *cs_json_get(const cs_json *v, const char *key)
{
    if (!v || v->type != CS_JSON_OBJECT) return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(v->keys[i], key)) return v->items[i];
    return NULL;
}

const char *cs_json_type_name(cs_json_type t)
{
    static const char *const names[] = {"null", "boolean", "number", "string", "array", "object"};
    return names[t];
}
