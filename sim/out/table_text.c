/* SPDX-License-Identifier: MIT */
/*
 * table_text.c - the `table` format, for people: notes verbatim; a table
 * as a heading line (column names), a units line when a column has a unit,
 * then one line per row, each cell padded to its column's width (right-
 * aligned unless CS_COL_LEFT) and preceded by its column's separator.
 *
 * With CS_TABLE_HASH the heading lines start "# " and the rows "  " (the
 * nccl-tests look); otherwise lines start at the margin. A line ends at its
 * last present cell: a column without a unit at the end of the units line,
 * or an absent cell at the end of a row, adds no blanks; a heading or
 * units line with nothing in it is left out. An absent cell
 * or a number that is not finite inside a row reads "-".
 */
#include "out/table_impl.h"

#include <string.h>

typedef enum line_kind { LINE_HEADING, LINE_UNITS, LINE_ROW } line_kind;

static int present(const cs_table *t, line_kind k, size_t row, size_t c)
{
    const cs_col *col = &t->spec.cols[c];
    if (!cs__col_shown(col, CS_FOR_PEOPLE)) return 0;
    if (k == LINE_HEADING) return col->name != NULL;
    if (k == LINE_UNITS) return col->unit != NULL;
    return cs__table_cell(t, row, c)->set;
}

/* The text of one row cell into tmp. */
static void cell_text(cs_buf *tmp, const cs_col *col, const cs__cell *v)
{
    if (!v->set || (col->kind == CS_CELL_NUM && !cs__cell_finite(v))) cs_buf_printf(tmp, "-");
    else if (col->kind == CS_CELL_STR) cs_buf_printf(tmp, "%s", v->str);
    else if (col->kind == CS_CELL_BOOL) cs_buf_printf(tmp, "%s", v->i ? "true" : "false");
    else cs__cell_number(tmp, col, v);
}

static void line(cs_buf *b, const cs_table *t, line_kind k, size_t row)
{
    size_t nc = t->spec.ncols, end = 0;
    for (size_t c = 0; c < nc; c++)
        if (present(t, k, row, c)) end = c + 1;
    if (k != LINE_ROW && end == 0) return;
    int hash = (t->spec.flags & CS_TABLE_HASH) != 0;
    cs_buf_printf(b, "%s", !hash ? "" : k == LINE_ROW ? "  " : "# ");
    cs_buf tmp = {0};
    int first = 1;
    for (size_t c = 0; c < end; c++) {
        const cs_col *col = &t->spec.cols[c];
        if (!cs__col_shown(col, CS_FOR_PEOPLE)) continue;
        if (!first) cs_buf_printf(b, "%s", col->sep ? col->sep : " ");
        first = 0;
        tmp.len = 0;
        int left = (col->flags & CS_COL_LEFT) != 0;
        if (k == LINE_ROW) {
            cell_text(&tmp, col, cs__table_cell(t, row, c));
            if ((col->flags & CS_COL_CLIP) && col->width > 0 && tmp.len > (size_t)col->width)
                tmp.len = (size_t)col->width;
        } else {
            const char *s = k == LINE_HEADING ? col->name : col->unit;
            cs_buf_printf(&tmp, "%s", s ? s : "");
            left = left || (col->flags & CS_COL_HEAD_LEFT);
        }
        cs_buf_printf(b, left ? "%-*.*s" : "%*.*s", col->width, (int)tmp.len,
                      tmp.data ? tmp.data : "");
    }
    cs_buf_free(&tmp);
    cs_buf_printf(b, "\n");
}

static void text_part(cs_buf *b, const cs__part *p, size_t k)
{
    (void)k;
    if (!p->table) {
        if (p->note.len) cs_buf_printf(b, "%.*s", (int)p->note.len, p->note.data);
        return;
    }
    const cs_table *t = p->table;
    line(b, t, LINE_HEADING, 0);
    line(b, t, LINE_UNITS, 0);
    for (size_t r = 0; r < cs__table_nrows(t); r++) line(b, t, LINE_ROW, r);
}

const cs__writer cs__writer_text = {"table", CS_FOR_PEOPLE, NULL, text_part, NULL};
