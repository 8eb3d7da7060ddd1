/* SPDX-License-Identifier: MIT */
/*
 * table_csv.c - the `csv` format: the document's one flat table, a header
 * line of column names, then one line per row (RFC 4180: fields joined by
 * commas, lines ended by LF).
 *
 * A string is quoted when it holds a comma, a quote, CR or LF, or always
 * for a CS_COL_QUOTE column, with inner quotes doubled; absent cells and
 * numbers that are not finite are empty fields; a bool is 1 or 0. A flat
 * document holds one table: a second one is a caller's error.
 */
#include "out/table_impl.h"

#include <string.h>

static void field(cs_buf *b, const cs_col *c, const cs__cell *v)
{
    if (!v->set || (c->kind == CS_CELL_NUM && !cs__cell_finite(v))) return;
    if (c->kind != CS_CELL_STR) {
        cs__cell_number(b, c, v);
        return;
    }
    if (!(c->flags & CS_COL_QUOTE) && !v->str[strcspn(v->str, ",\"\r\n")]) {
        cs_buf_printf(b, "%s", v->str);
        return;
    }
    cs_buf_printf(b, "\"");
    for (const char *s = v->str; *s; s++) cs_buf_printf(b, *s == '"' ? "\"\"" : "%c", *s);
    cs_buf_printf(b, "\"");
}

static void csv_part(cs_buf *b, const cs__part *p, size_t k)
{
    CS_ASSERT(k == 0 && p->table); /* one flat table per document */
    const cs_table *t = p->table;
    const cs_col *cols = t->spec.cols;
    int first = 1;
    for (size_t c = 0; c < t->spec.ncols; c++)
        if (cs__col_shown(&cols[c], CS_FOR_FLAT)) {
            cs_buf_printf(b, "%s%s", first ? "" : ",", cols[c].name);
            first = 0;
        }
    cs_buf_printf(b, "\n");
    for (size_t r = 0; r < cs__table_nrows(t); r++) {
        first = 1;
        for (size_t c = 0; c < t->spec.ncols; c++) {
            if (!cs__col_shown(&cols[c], CS_FOR_FLAT)) continue;
            if (!first) cs_buf_printf(b, ",");
            first = 0;
            field(b, &cols[c], cs__table_cell(t, r, c));
        }
        cs_buf_printf(b, "\n");
    }
}

const cs__writer cs__writer_csv = {"csv", CS_FOR_FLAT, NULL, csv_part, NULL};
