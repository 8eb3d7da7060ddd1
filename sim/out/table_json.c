/* SPDX-License-Identifier: MIT */
/*
 * table_json.c - the `json` format: one object holding the document's tree
 * parts in order, each on its own line two blanks in. A fields table
 * (CS_TABLE_FIELDS) gives its one row's cells as members on that line; any
 * other table is a member named after it whose value is an array of row
 * objects, one per line four blanks in:
 *
 *   {
 *     "title": "...",
 *     "rows": [
 *       {"op": "all_reduce", "ranks": 8, "time_us": 12.3456}
 *     ]
 *   }
 *
 * Keys are column names; strings are escaped (base/buf.h); numbers use the
 * column's format, null when not finite; an absent cell has no member.
 */
#include "out/table_impl.h"

static void value(cs_buf *b, const cs_col *c, const cs__cell *v)
{
    if (c->kind == CS_CELL_STR) cs_buf_json_string(b, v->str);
    else if (c->kind == CS_CELL_BOOL) cs_buf_printf(b, "%s", v->i ? "true" : "false");
    else if (c->kind == CS_CELL_NUM && !cs__cell_finite(v)) cs_buf_printf(b, "null");
    else cs__cell_number(b, c, v);
}

/* The present cells of row r as members "key": value, joined by ", ". */
static void members(cs_buf *b, const cs_table *t, size_t r)
{
    int first = 1;
    for (size_t c = 0; c < t->spec.ncols; c++) {
        const cs_col *col = &t->spec.cols[c];
        const cs__cell *v = cs__table_cell(t, r, c);
        if (!v->set || !cs__col_shown(col, CS_FOR_TREE)) continue;
        if (!first) cs_buf_printf(b, ", ");
        first = 0;
        cs_buf_json_string(b, col->name);
        cs_buf_printf(b, ": ");
        value(b, col, v);
    }
}

static void json_begin(cs_buf *b) { cs_buf_printf(b, "{\n  "); }

static void json_part(cs_buf *b, const cs__part *p, size_t k)
{
    CS_ASSERT(p->table);
    const cs_table *t = p->table;
    if (k) cs_buf_printf(b, ",\n  ");
    if (t->spec.flags & CS_TABLE_FIELDS) {
        CS_ASSERT(cs__table_nrows(t) == 1);
        members(b, t, 0);
        return;
    }
    cs_buf_json_string(b, t->spec.name);
    cs_buf_printf(b, ": [");
    for (size_t r = 0; r < cs__table_nrows(t); r++) {
        cs_buf_printf(b, "%s\n    {", r ? "," : "");
        members(b, t, r);
        cs_buf_printf(b, "}");
    }
    cs_buf_printf(b, "\n  ]");
}

static void json_end(cs_buf *b) { cs_buf_printf(b, "\n}\n"); }

const cs__writer cs__writer_json = {"json", CS_FOR_TREE, json_begin, json_part, json_end};
