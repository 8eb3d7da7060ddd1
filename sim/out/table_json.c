/* SPDX-License-Identifier: MIT */
/*
 * table_json.c - the `json` format: one object holding the document's tree
 * parts in order, each on its own line two blanks in. A fields table
 * (CS_TABLE_FIELDS) gives its one row's cells as members on that line; any
 * other table is a member named after it whose value is an array of row
 * objects, one per line four blanks in; an object table (CS_TABLE_OBJECT)
 * is a member holding its one row as an object, or null; a group is a
 * member holding an object of its own tree parts, each two blanks further
 * in:
 *
 *   {
 *     "title": "...",
 *     "rows": [
 *       {"op": "all_reduce", "ranks": 8, "time_us": 12.3456}
 *     ]
 *   }
 *
 * Keys are column names; strings are escaped (base/buf.h); numbers use the
 * column's format, null when not finite; an absent cell has no member
 * (null for a CS_COL_NULL column).
 */
#include "out/table_impl.h"

static void value(cs_buf *b, const cs_col *c, const cs__cell *v)
{
    if (c->kind == CS_CELL_STR) cs_buf_json_string(b, v->str);
    else if (c->kind == CS_CELL_BOOL) cs_buf_printf(b, "%s", v->i ? "true" : "false");
    else if (c->kind == CS_CELL_NUM && !cs__cell_finite(v)) cs_buf_printf(b, "null");
    else cs__cell_number(b, c, v);
}

/* The present cells of row r as members "key": value, joined by ", " (an
 * absent cell of a CS_COL_NULL column as null). */
static void members(cs_buf *b, const cs_table *t, size_t r)
{
    int first = 1;
    for (size_t c = 0; c < t->spec.ncols; c++) {
        const cs_col *col = &t->spec.cols[c];
        const cs__cell *v = cs__table_cell(t, r, c);
        if (!cs__col_shown(col, CS_FOR_TREE) || (!v->set && !(col->flags & CS_COL_NULL))) continue;
        if (!first) cs_buf_printf(b, ", ");
        first = 0;
        cs_buf_json_string(b, col->name);
        cs_buf_printf(b, ": ");
        if (v->set) value(b, col, v);
        else cs_buf_printf(b, "null");
    }
}

/* A line break and the indent of the given depth (the document's own
 * members: depth 1). */
static void newline(cs_buf *b, int depth) { cs_buf_printf(b, "\n%*s", 2 * depth, ""); }

static void table(cs_buf *b, const cs_table *t, int depth)
{
    size_t n = cs__table_nrows(t);
    if (t->spec.flags & CS_TABLE_FIELDS) {
        CS_ASSERT(n == 1);
        members(b, t, 0);
        return;
    }
    cs_buf_json_string(b, t->spec.name);
    if (t->spec.flags & CS_TABLE_OBJECT) {
        CS_ASSERT(n <= 1);
        cs_buf_printf(b, ": %s", n ? "{" : "null");
        if (n) members(b, t, 0);
        cs_buf_printf(b, "%s", n ? "}" : "");
        return;
    }
    cs_buf_printf(b, ": [");
    for (size_t r = 0; r < n; r++) {
        cs_buf_printf(b, "%s", r ? "," : "");
        newline(b, depth + 1);
        cs_buf_printf(b, "{");
        members(b, t, r);
        cs_buf_printf(b, "}");
    }
    newline(b, depth);
    cs_buf_printf(b, "]");
}

/* The k-th tree part of an object at depth, after its k - 1 others. */
static void part_at(cs_buf *b, const cs__part *p, size_t k, int depth)
{
    if (k) {
        cs_buf_printf(b, ",");
        newline(b, depth);
    }
    if (p->table) {
        table(b, p->table, depth);
        return;
    }
    CS_ASSERT(p->group);
    const cs_doc *g = p->group;
    cs_buf_json_string(b, p->name);
    cs_buf_printf(b, ": {");
    newline(b, depth + 1);
    for (size_t i = 0, n = 0; i < g->n; i++)
        if (cs__part_audience(&g->parts[i]) & CS_FOR_TREE) part_at(b, &g->parts[i], n++, depth + 1);
    newline(b, depth);
    cs_buf_printf(b, "}");
}

static void json_begin(cs_buf *b) { cs_buf_printf(b, "{\n  "); }

static void json_part(cs_buf *b, const cs__part *p, size_t k) { part_at(b, p, k, 1); }

static void json_end(cs_buf *b) { cs_buf_printf(b, "\n}\n"); }

const cs__writer cs__writer_json = {"json", CS_FOR_TREE, json_begin, json_part, json_end};
