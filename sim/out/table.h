/* SPDX-License-Identifier: MIT */
/*
 * table.h - the table type every report renders through, and the output
 * formats: one writer per format (table_text.c, table_csv.c, table_json.c),
 * one row each in the writer array of table.c.
 *
 * A report is a document (cs_doc): an ordered list of parts, each meant
 * for an audience. A part is a note (text for people), a table of named,
 * typed columns (cs_col) and rows of cells, or a view: other columns over
 * a table's rows (a layout for people of a table made for data: a subset,
 * in another order, with other widths and precisions). A format's writer serves one
 * audience and renders the parts (and columns) meant for it, in order:
 *   people (table): notes verbatim, tables aligned in columns;
 *   flat (csv):     the one flat table, a header line, then its rows;
 *   tree (json):    an object of the tree parts: a fields table's one row
 *                   as members on one line, an object table's row as a
 *                   member "name" holding one object (null without a
 *                   row), any other table as a member "name" holding an
 *                   array of row objects, a group as a member "name"
 *                   holding an object of the group's own tree parts.
 * A report says what it shows to whom, never which format it writes:
 * adding a format is one writer file and one row.
 *
 * Cells: a number, printed with its column's printf format; NaN and
 * infinities are "-" in text, empty in CSV, null in JSON. An integer. A
 * string: CSV-quoted when it holds a comma, quote, CR or LF (always for
 * CS_COL_QUOTE), inner quotes doubled; JSON-escaped. A bool: true/false
 * in text and JSON, 1/0 in CSV. Or absent: "-" in text, empty in CSV, no
 * member in JSON (a CS_COL_NULL column: null). A text line (headings, units, a row) ends at its last
 * present cell, so a trailing absent cell costs no blanks.
 *
 * Ownership: a cs_doc owns its tables and the strings copied into cells;
 * the columns (cs_col arrays) are the caller's and must outlive the doc
 * (they are static tables in practice). Out of memory aborts.
 */
#ifndef CS_TABLE_H
#define CS_TABLE_H

#include <stddef.h>

#include "base/buf.h"

/* The output formats, one writer each (out/formats.def; the --format
 * names are the writers': table, csv, json, in this order). */
typedef enum cs_format {
#define CS_FORMAT(id, file) CS_FORMAT_##id,
#include "out/formats.def"
#undef CS_FORMAT
    CS_FORMAT_COUNT
} cs_format;

/* The --format name of f. */
const char *cs_format_name(cs_format f);
/* Parses a --format name (case-insensitive); returns 0 or CS_EINVAL. */
int cs_format_parse(const char *s, cs_format *out);

/* Who a part or column is for; a writer serves one of them. */
enum {
    CS_FOR_PEOPLE = 1, /* aligned text */
    CS_FOR_FLAT = 2,   /* one flat table (CSV) */
    CS_FOR_TREE = 4,   /* a nested document (JSON) */
    CS_FOR_DATA = CS_FOR_FLAT | CS_FOR_TREE
};

typedef enum cs_cell_kind { CS_CELL_NUM, CS_CELL_INT, CS_CELL_STR, CS_CELL_BOOL } cs_cell_kind;

/* Column flags. */
enum {
    CS_COL_LEFT = 1,      /* text: values and heading left-aligned (default right) */
    CS_COL_HEAD_LEFT = 2, /* text: the heading left-aligned, the values not */
    CS_COL_CLIP = 4,      /* text: strings cut to the width */
    CS_COL_QUOTE = 8,     /* CSV: always quoted (free text) */
    CS_COL_NULL = 16      /* JSON: an absent cell is a member holding null */
};

typedef struct cs_col {
    const char *name; /* CSV header, JSON key, text heading (NULL: no heading) */
    cs_cell_kind kind;
    const char *fmt;  /* CS_CELL_NUM: printf format of one double ("%.4f") */
    int width;        /* text: minimum width, padded with blanks (0: none) */
    const char *unit; /* text: the second heading line ("(us)"; NULL: none) */
    const char *sep;  /* text: what precedes the column (NULL: one blank) */
    unsigned flags;   /* CS_COL_* */
    unsigned only;    /* the audiences (CS_FOR_*) that see it; 0: every one */
    const char *of;   /* a view's column: the source column it shows (NULL: same name) */
} cs_col;

/* Initializers for the common columns (any field may be designated
 * instead): data columns by name, and a view's number column by heading,
 * source column, format, width and unit. */
#define CS_COL_NUM(col, format) {.name = (col), .kind = CS_CELL_NUM, .fmt = (format)}
#define CS_COL_INT(col) {.name = (col), .kind = CS_CELL_INT}
#define CS_COL_STR(col) {.name = (col), .kind = CS_CELL_STR}
#define CS_COL_BOOL(col) {.name = (col), .kind = CS_CELL_BOOL}
#define CS_VIEW_NUM(head, src, format, w, u)                                                       \
    {.name = (head), .of = (src), .kind = CS_CELL_NUM, .fmt = (format), .width = (w), .unit = (u)}

/* Table flags. */
enum {
    CS_TABLE_FIELDS = 1, /* one row of document fields: JSON members inline */
    CS_TABLE_HASH = 2,   /* text: heading lines start "# ", rows "  " */
    CS_TABLE_OBJECT = 4  /* JSON: at most one row, a member holding it as an object */
};

typedef struct cs_table_spec {
    const char *name; /* JSON member holding the rows ("rows") */
    const cs_col *cols;
    size_t ncols;
    unsigned audience; /* CS_FOR_* */
    unsigned flags;    /* CS_TABLE_* */
} cs_table_spec;

typedef struct cs_doc cs_doc;
typedef struct cs_table cs_table;

/* ---- documents ----------------------------------------------------------- */

/* A new empty document; free it with cs_doc_free. */
cs_doc *cs_doc_new(void);
/* The version of every JSON output's layout (docs/json-output.md): raised
 * when a member is renamed, removed or changes meaning; adding members
 * keeps it. */
#define CS_JSON_VERSION 1
/* A new document whose JSON begins with "format": "collsim-<format>"
 * (memory, simulate, collective, ...) and "version": CS_JSON_VERSION,
 * so a reader can tell the outputs apart and refuse a layout it does
 * not know; other formats do not show them. */
cs_doc *cs_doc_new_as(const char *format);
/* The same with a layout of its own version (a format whose layout moved
 * on alone). */
cs_doc *cs_doc_new_versioned(const char *format, int version);
void cs_doc_free(cs_doc *doc);
/* Appends text for people (a note; consecutive notes join). */
void cs_doc_note(cs_doc *doc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a table (the spec is copied; its columns are not). The doc owns
 * the table: it lives until cs_doc_free. */
cs_table *cs_doc_table(cs_doc *doc, const cs_table_spec *spec);
/* Appends a view of src's rows (those it has when the doc is written):
 * each column of spec shows the column of src named by its `of` (or its
 * name), of the same kind, whatever that column's audience; a number
 * column gives its own format. Rows cannot be added to a view. */
cs_table *cs_doc_view(cs_doc *doc, const cs_table *src, const cs_table_spec *spec);
/* The same for rows first .. first + n - 1 of src only (src must have
 * them when the doc is written). */
cs_table *cs_doc_view_rows(cs_doc *doc, const cs_table *src, const cs_table_spec *spec,
                           size_t first, size_t n);
/* Appends one member of the tree on its own line: a table of the one
 * column col (CS_TABLE_FIELDS, seen by the tree alone), its row begun;
 * the caller adds the cell. col must outlive doc. */
cs_table *cs_doc_field(cs_doc *doc, const cs_col *col);
/* Appends a group, seen by the tree alone: a member NAME (copied)
 * holding an object of the parts added to the group it returns, as to a
 * doc. doc owns the group: it lives until cs_doc_free(doc). */
cs_doc *cs_doc_group(cs_doc *doc, const char *name);
/* Appends doc rendered as format f to b. */
void cs_doc_write(cs_buf *b, const cs_doc *doc, cs_format f);

/* ---- rows: cells are given in column order -------------------------------- */

/* Starts a new row (every cell absent until given). */
void cs_table_row(cs_table *t);
/* The next cell of the current row; its column must be of that kind. */
void cs_table_num(cs_table *t, double v);
void cs_table_int(cs_table *t, long long v);
void cs_table_str(cs_table *t, const char *s); /* copied */
void cs_table_bool(cs_table *t, int v);
/* Leaves the next cell absent. */
void cs_table_skip(cs_table *t);
size_t cs_table_rows(const cs_table *t);

#endif
