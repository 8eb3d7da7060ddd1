/* SPDX-License-Identifier: MIT */
/*
 * table.c - documents, tables and their cells (table.h), and the writer
 * array: one row per output format, indexed by cs_format. The names that
 * cs_format_parse accepts are the writers' names.
 *
 * Cells are stored row-major, ncols per row; a row starts absent and its
 * cells are given in column order (cs_table_num, ...), each checked
 * against its column's kind. A view stores only which source column each
 * of its columns shows (looked up by name once, when it is made). Rendering belongs to the writers
 * (table_text.c, table_csv.c, table_json.c); this file only walks the
 * parts each writer's audience sees.
 */
#include "out/table_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const cs__writer *const writers[CS_FORMAT_COUNT] = {
#define CS_FORMAT(id, file) [CS_FORMAT_##id] = &cs__writer_##file,
#include "out/formats.def"
#undef CS_FORMAT
};

const char *cs_format_name(cs_format f)
{
    CS_ASSERT(f >= 0 && f < CS_FORMAT_COUNT);
    return writers[f]->name;
}

int cs_format_parse(const char *s, cs_format *out)
{
    for (int i = 0; i < CS_FORMAT_COUNT; i++)
        if (!strcasecmp(s, writers[i]->name)) {
            *out = (cs_format)i;
            return 0;
        }
    return CS_EINVAL;
}

/* ---- documents ----------------------------------------------------------- */

cs_doc *cs_doc_new(void) { return cs_xcalloc(1, sizeof(cs_doc)); }

cs_doc *cs_doc_new_as(const char *format) { return cs_doc_new_versioned(format, CS_JSON_VERSION); }

cs_table *cs_doc_field(cs_doc *doc, const cs_col *col)
{
    cs_table *t = cs_doc_table(doc, &(cs_table_spec){NULL, col, 1, CS_FOR_TREE, CS_TABLE_FIELDS});
    cs_table_row(t);
    return t;
}

cs_doc *cs_doc_new_versioned(const char *format, int version)
{
    static const cs_col cols[] = {CS_COL_STR("format"), CS_COL_INT("version")};
    cs_doc *doc = cs_doc_new();
    cs_table *t = cs_doc_table(doc, &(cs_table_spec){NULL, cols, 2, CS_FOR_TREE, CS_TABLE_FIELDS});
    char name[64];
    snprintf(name, sizeof name, "collsim-%s", format);
    cs_table_row(t);
    cs_table_str(t, name);
    cs_table_int(t, version);
    return doc;
}

static void table_free(cs_table *t)
{
    for (size_t i = 0; i < t->nrows * t->spec.ncols; i++) free(t->cells[i].str);
    free(t->cells);
    free(t->map);
    free(t);
}

void cs_doc_free(cs_doc *doc)
{
    if (!doc) return;
    for (size_t i = 0; i < doc->n; i++) {
        if (doc->parts[i].table) table_free(doc->parts[i].table);
        cs_buf_free(&doc->parts[i].note);
        cs_doc_free(doc->parts[i].group);
        free(doc->parts[i].name);
    }
    free(doc->parts);
    free(doc);
}

static cs__part *add_part(cs_doc *doc)
{
    if (doc->n == doc->cap) {
        doc->cap = doc->cap ? 2 * doc->cap : 8;
        doc->parts = cs_xrealloc(doc->parts, doc->cap * sizeof *doc->parts);
    }
    cs__part *p = &doc->parts[doc->n++];
    *p = (cs__part){0};
    return p;
}

void cs_doc_note(cs_doc *doc, const char *fmt, ...)
{
    cs__part *last = doc->n ? &doc->parts[doc->n - 1] : NULL;
    cs__part *p = last && !last->table && !last->group ? last : add_part(doc);
    va_list ap;
    va_start(ap, fmt);
    cs_buf_vprintf(&p->note, fmt, ap);
    va_end(ap);
}

cs_table *cs_doc_table(cs_doc *doc, const cs_table_spec *spec)
{
    CS_ASSERT(spec->cols && spec->ncols > 0 && spec->audience);
    cs_table *t = cs_xcalloc(1, sizeof *t);
    t->spec = *spec;
    add_part(doc)->table = t;
    return t;
}

cs_table *cs_doc_view_rows(cs_doc *doc, const cs_table *src, const cs_table_spec *spec,
                           size_t first, size_t n)
{
    cs_table *t = cs_doc_view(doc, src, spec);
    t->some_rows = 1;
    t->first = first;
    t->count = n;
    return t;
}

cs_table *cs_doc_view(cs_doc *doc, const cs_table *src, const cs_table_spec *spec)
{
    CS_ASSERT(!src->src);
    cs_table *t = cs_doc_table(doc, spec);
    t->src = src;
    t->map = cs_xmalloc(spec->ncols * sizeof *t->map);
    for (size_t c = 0; c < spec->ncols; c++) {
        const cs_col *col = &spec->cols[c];
        const char *want = col->of ? col->of : col->name;
        size_t k = 0;
        while (k < src->spec.ncols && strcmp(src->spec.cols[k].name, want)) k++;
        if (k == src->spec.ncols) CS_PANIC("view column '%s': no such column", want);
        CS_ASSERT(src->spec.cols[k].kind == col->kind && (col->kind != CS_CELL_NUM || col->fmt));
        t->map[c] = k;
    }
    return t;
}

cs_doc *cs_doc_group(cs_doc *doc, const char *name)
{
    cs__part *p = add_part(doc);
    p->name = cs_xstrdup(name);
    return p->group = cs_doc_new();
}

unsigned cs__part_audience(const cs__part *p)
{
    return p->table ? p->table->spec.audience : p->group ? CS_FOR_TREE : CS_FOR_PEOPLE;
}

void cs_doc_write(cs_buf *b, const cs_doc *doc, cs_format f)
{
    CS_ASSERT(f >= 0 && f < CS_FORMAT_COUNT);
    const cs__writer *w = writers[f];
    if (w->begin) w->begin(b);
    size_t k = 0;
    for (size_t i = 0; i < doc->n; i++) {
        const cs__part *p = &doc->parts[i];
        if (cs__part_audience(p) & w->audience) w->part(b, p, k++);
    }
    if (w->end) w->end(b);
}

/* ---- rows and cells ------------------------------------------------------ */

void cs_table_row(cs_table *t)
{
    CS_ASSERT(!t->src);
    size_t nc = t->spec.ncols;
    if (t->nrows == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->cells = cs_xrealloc(t->cells, t->cap * nc * sizeof *t->cells);
    }
    for (size_t c = 0; c < nc; c++) t->cells[t->nrows * nc + c] = (cs__cell){0};
    t->nrows++;
    t->next = 0;
}

/* The next cell of the current row, of a column of kind k. */
static cs__cell *next_cell(cs_table *t, cs_cell_kind k)
{
    CS_ASSERT(t->nrows > 0 && t->next < t->spec.ncols);
    CS_ASSERT(t->spec.cols[t->next].kind == k);
    cs__cell *v = &t->cells[(t->nrows - 1) * t->spec.ncols + t->next++];
    v->set = 1;
    return v;
}

void cs_table_num(cs_table *t, double v) { next_cell(t, CS_CELL_NUM)->num = v; }
void cs_table_int(cs_table *t, long long v) { next_cell(t, CS_CELL_INT)->i = v; }
void cs_table_str(cs_table *t, const char *s) { next_cell(t, CS_CELL_STR)->str = cs_xstrdup(s); }
void cs_table_bool(cs_table *t, int v) { next_cell(t, CS_CELL_BOOL)->i = v != 0; }

void cs_table_skip(cs_table *t)
{
    CS_ASSERT(t->nrows > 0 && t->next < t->spec.ncols);
    t->next++;
}

size_t cs_table_rows(const cs_table *t) { return cs__table_nrows(t); }

/* ---- shared by the writers ----------------------------------------------- */

int cs__col_shown(const cs_col *c, unsigned a) { return !c->only || (c->only & a); }

size_t cs__table_nrows(const cs_table *t)
{
    if (!t->src) return t->nrows;
    if (!t->some_rows) return t->src->nrows;
    CS_ASSERT(t->first + t->count <= t->src->nrows);
    return t->count;
}

const cs__cell *cs__table_cell(const cs_table *t, size_t row, size_t col)
{
    CS_ASSERT(col < t->spec.ncols);
    if (t->src) return cs__table_cell(t->src, t->first + row, t->map[col]);
    CS_ASSERT(row < t->nrows);
    return &t->cells[row * t->spec.ncols + col];
}

int cs__cell_finite(const cs__cell *v) { return v->set && isfinite(v->num); }

void cs__cell_number(cs_buf *b, const cs_col *c, const cs__cell *v)
{
    if (c->kind == CS_CELL_NUM) cs_buf_printf(b, c->fmt, v->num);
    else cs_buf_printf(b, "%lld", v->i);
}
