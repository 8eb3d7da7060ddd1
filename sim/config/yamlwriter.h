/* SPDX-License-Identifier: MIT */
/*
 * yamlwriter.h - internal to sim/config: writing block-style YAML one key
 * at a time, keeping the comments a source text had for the keys whose
 * values did not change.
 *
 * A source (cs__ysrc) is a YAML text read once into its node tree and its
 * comments, each attached to a key path ("gpu.tflops.fp64",
 * "des.links[0]"): the comment lines above a key, the comment after it on
 * its line, and the comment lines that continue that one (aligned under
 * it); the lines before the first key are the head, those after the last
 * the tail. The writer (cs__yw) emits keys under a current path; a key
 * written unchanged gets its source comments (and, through
 * cs__yw_source, its source spelling), a changed one the caller's note.
 */
#ifndef CS_YAMLWRITER_H
#define CS_YAMLWRITER_H

#include <stddef.h>

#include "base/buf.h"
#include "base/yamlnode.h"

/* ---- a source's comments ---- */

typedef struct cs__ysrc cs__ysrc;
/* Reads text; NULL when it does not parse or holds no mapping. Free with
 * cs__ysrc_free. */
cs__ysrc *cs__ysrc_new(const char *text, size_t len);
void cs__ysrc_free(cs__ysrc *s);

/* ---- the writer ---- */

/* The comment (without '#') for a key whose value changed, at its dotted
 * path, written into buf; NULL or "" for none. */
typedef const char *(*cs__ynote_fn)(void *ud, const char *path, char *buf, size_t len);

typedef struct cs__yw {
    cs_buf *b;
    const cs__ysrc *src; /* may be NULL: no comments */
    cs__ynote_fn note;   /* may be NULL */
    void *ud;
    int depth;           /* mappings open: lines are indented 2 x depth */
    char path[256];      /* dotted path of the mapping open ("" at the top) */
    int items;           /* items written in the sequence open */
} cs__yw;

/* The source's head (comment lines before its first key) and tail. */
void cs__yw_head(cs__yw *w);
void cs__yw_tail(cs__yw *w);
void cs__yw_blank(cs__yw *w);

/* "key: value" (value already in YAML form: cs__yw_quote). */
void cs__yw_scalar(cs__yw *w, const char *key, const char *value, int changed);
/* "key:" opening a block mapping or sequence under the current path;
 * cs__yw_end closes it. */
void cs__yw_begin(cs__yw *w, const char *key, int changed);
void cs__yw_end(cs__yw *w);
/* "- flow" as the next item of the sequence open (path "seq[i]"). */
void cs__yw_item(cs__yw *w, const char *flow, int changed);

/* The source's value at rel (a dotted path under the current one) in YAML
 * form into buf, if it is a scalar there; else NULL. */
const char *cs__yw_source(const cs__yw *w, const char *rel, char *buf, size_t len);
/* 1 if the source has the key rel (or the whole path path); 1 if it has
 * comments on keys below rel (which a flow mapping could not keep). */
int cs__yw_has(const cs__yw *w, const char *rel);
int cs__yw_has_path(const cs__yw *w, const char *path);
int cs__yw_commented(const cs__yw *w, const char *rel);

/* s as a YAML scalar: plain where that reads back the same string, else
 * double-quoted. */
void cs__yw_quote(const char *s, char *buf, size_t len);

/* ---- schema tables (base/yamlnode.h) written and compared ---- */

/* The value of a scalar-kind field (STRING..ENUM) stored at p, as YAML
 * that cs_yamlnode_read gives back exactly (doubles: the stored value is
 * the read one x scale). */
void cs__yw_value(const cs_yfield *f, const void *p, double scale, char *buf, size_t len);
/* 1 if the scalar-kind values at a and b are the same. */
int cs__yw_same_value(const cs_yfield *f, const void *a, const void *b);
/* "key: value" of the scalar-kind field f stored at p; bp, the value it
 * came from (may be NULL), tells whether it changed. Unchanged values keep
 * their source spelling. */
void cs__yw_field(cs__yw *w, const cs_yfield *f, const char *key, const void *p, const void *bp,
                  double scale);

/* What the generic walk needs beyond a row (cs_yfield.ext of CS_YF_CUSTOM
 * rows, and of optional mappings). */
typedef struct cs__yrow {
    /* CS_YF_CUSTOM: writes the row (base may be NULL), compares it */
    void (*put)(cs__yw *w, const cs_yfield *f, const void *obj, const void *base);
    int (*same)(const cs_yfield *f, const void *a, const void *b);
    /* optional: 0 when the row has nothing to write */
    int (*present)(const void *obj);
    const void *data; /* the hooks' own (a grid's shape) */
} cs__yrow;

/* Writes every row of table for obj (a mapping at the writer's path), in
 * table order; base (may be NULL) is what obj was derived from. */
void cs__yw_table(cs__yw *w, const cs_yfield *table, const void *obj, const void *base);
/* The dotted path (under path) of the first row whose values differ
 * between a and b, into buf; NULL when none does. */
const char *cs__yw_table_diff(const cs_yfield *table, const void *a, const void *b,
                              const char *path, char *buf, size_t len);

#endif
