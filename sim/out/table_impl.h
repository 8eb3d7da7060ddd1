/* SPDX-License-Identifier: MIT */
/*
 * table_impl.h - internal to the table module and its writers: the
 * document and table bodies, and the writer interface (one cs__writer per
 * format, listed in table.c's writer array indexed by cs_format).
 *
 * Invariants: every row of a table has spec.ncols cells; a cell's value
 * matches its column's kind (checked when it is given); a view has no
 * cells of its own, and its columns match their source columns' kinds; a
 * part is one of a note, a table or a group.
 */
#ifndef CS_TABLE_IMPL_H
#define CS_TABLE_IMPL_H

#include "out/table.h"

typedef struct cs__cell {
    int set; /* 0: absent */
    double num;
    long long i; /* CS_CELL_INT; CS_CELL_BOOL as 0/1 */
    char *str;   /* CS_CELL_STR, owned */
} cs__cell;

struct cs_table {
    cs_table_spec spec;
    cs__cell *cells; /* nrows x spec.ncols */
    size_t nrows, cap;
    size_t next;          /* the next cell of the last row */
    const cs_table *src;  /* a view: the table whose cells it shows */
    size_t *map;          /* a view: column c shows src's column map[c] */
    int some_rows;        /* a view of src's rows first .. first + count - 1 only */
    size_t first, count;
};

typedef struct cs__part {
    cs_table *table; /* or */
    cs_buf note;     /* people only; or */
    cs_doc *group;   /* tree only, named */
    char *name;
} cs__part;

struct cs_doc {
    cs__part *parts;
    size_t n, cap;
};

/* A format: its name and audience, and how it renders. begin and end may
 * be NULL; part gets the k-th part shown to this writer (k from 0). */
typedef struct cs__writer {
    const char *name;
    unsigned audience; /* one CS_FOR_* */
    void (*begin)(cs_buf *b);
    void (*part)(cs_buf *b, const cs__part *p, size_t k);
    void (*end)(cs_buf *b);
} cs__writer;

/* One per row of out/formats.def, defined in table_<file>.c. */
#define CS_FORMAT(id, file) extern const cs__writer cs__writer_##file;
#include "out/formats.def"
#undef CS_FORMAT

/* The audiences that see part p. */
unsigned cs__part_audience(const cs__part *p);
/* Whether audience a sees column c. */
int cs__col_shown(const cs_col *c, unsigned a);
/* The rows of t (a view: its source's), and the cell at (row, col). */
size_t cs__table_nrows(const cs_table *t);
const cs__cell *cs__table_cell(const cs_table *t, size_t row, size_t col);
/* Whether a number cell is printable (set and finite). */
int cs__cell_finite(const cs__cell *v);
/* Appends a set number or integer cell with its column's format. */
void cs__cell_number(cs_buf *b, const cs_col *c, const cs__cell *v);

#endif
