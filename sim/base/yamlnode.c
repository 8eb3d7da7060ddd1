/* SPDX-License-Identifier: MIT */
/*
 * yamlnode.c - libyaml events -> a tree of marked nodes, and the
 * did-you-mean suggestions; the schema walker is yamlschema.c.
 *
 * Parsing uses libyaml's event API with an explicit stack (depth capped at
 * CS_YAML_MAX_DEPTH so freeing, which recurses, stays bounded). Every node
 * is linked into the tree the moment it is created, so on any error one
 * cs_yamlnode_free(root) releases everything. Aliases are rejected rather
 * than expanded: config files do not need them, and rejecting them rules out
 * cycles and exponential "billion laughs" expansion. Duplicate keys are
 * found with a linear scan of the keys already seen, O(n^2) per mapping,
 * which is fine for hand-written files of a few dozen keys.
 * No global state.
 */
#include "base/yamlnode.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define CS_YAML_MAX_DEPTH  64

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

int cs_yamlnode_parse_mapping(const char *origin, const char *text, size_t len,
                              const char *empty_msg, const char *kind_fmt, cs_ynode **root,
                              cs_diag *d)
{
    cs_ynode *r = NULL;
    *root = NULL;
    int rc = cs_yamlnode_parse(origin, text, len, &r, d);
    if (rc) return rc;
    if (!r || cs_yamlnode_is_null(r))
        rc = cs_diag_set(d, CS_ECONFIG, origin, r ? r->line : 1, r ? r->column : 1, "%s",
                         empty_msg);
    else if (r->kind != CS_YNODE_MAPPING)
        rc = cs_diag_set(d, CS_ECONFIG, origin, r->line, r->column, kind_fmt,
                         cs_yamlnode_describe(r));
    if (rc) {
        cs_yamlnode_free(r);
        return rc;
    }
    *root = r;
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
