/* SPDX-License-Identifier: MIT */
/*
 * yamlnode.h - a YAML document as a small tree of nodes that remember where
 * they were written, and a table-driven schema walker over it.
 *
 * Internal to the library (the cluster, model and scenario schemas); the
 * tree is yamlnode.c, the walker yamlschema.c.
 * The tree keeps libyaml's start marks as 1-based line/column so every
 * message can say file:line:column. A schema is a static array of
 * cs_yfield rows (key name, kind, offset into the target object, flags,
 * range); cs_yamlnode_apply checks a mapping against it: unknown keys
 * (with a did-you-mean), missing required keys (reported at the mapping),
 * wrong kinds, ranges, enums. Duplicate keys are rejected while parsing.
 */
#ifndef CS_YAMLNODE_H
#define CS_YAMLNODE_H

#include <stddef.h>

#include "base/error.h"

typedef enum cs_ynode_kind { CS_YNODE_SCALAR, CS_YNODE_MAPPING, CS_YNODE_SEQUENCE } cs_ynode_kind;

typedef struct cs_ynode cs_ynode;
struct cs_ynode {
    cs_ynode_kind kind;
    int line, column; /* 1-based start mark */
    /* Scalars: the value, NUL-terminated, len bytes; plain = unquoted. */
    char *text;
    size_t len;
    int plain;
    /* Sequences: n items. Mappings: n pairs, key i = items[2i] (always a
     * scalar, keys unique), value i = items[2i + 1]. */
    size_t n;
    cs_ynode **items;
    size_t n_items; /* internal: entries in items (a key may await its value) */
};

/* Parses one YAML document. Returns 0 and *root (caller frees with
 * cs_yamlnode_free; NULL when the text holds no document at all), or
 * CS_ECONFIG with d filled (origin:line:column, libyaml's problem text).
 * Aliases are rejected; more than one document is an error. */
int cs_yamlnode_parse(const char *origin, const char *text, size_t len, cs_ynode **root,
                      cs_diag *d);
void cs_yamlnode_free(cs_ynode *n);
/* Parses one document that must be a mapping at the top level: 0 and
 * *root (caller frees with cs_yamlnode_free), or CS_ECONFIG with d set:
 * empty_msg for an empty document (at its start, else 1:1), kind_fmt
 * (one %s: what was found) when the top level is not a mapping. */
int cs_yamlnode_parse_mapping(const char *origin, const char *text, size_t len,
                              const char *empty_msg, const char *kind_fmt, cs_ynode **root,
                              cs_diag *d);

/* Mapping access: key/value of pair i, or the value of key (NULL if absent). */
const cs_ynode *cs_yamlnode_key(const cs_ynode *map, size_t i);
const cs_ynode *cs_yamlnode_value(const cs_ynode *map, size_t i);
const cs_ynode *cs_yamlnode_find(const cs_ynode *map, const char *key);
/* 1 for a plain empty, "~" or "null" scalar. */
int cs_yamlnode_is_null(const cs_ynode *n);
/* "a scalar", "a mapping", "a sequence", "an empty value" for messages. */
const char *cs_yamlnode_describe(const cs_ynode *n);

/* Levenshtein distance (insert, delete, substitute all cost 1). */
int cs_yamlnode_edit_distance(const char *a, const char *b);
/* The candidate closest to s if within max(2, strlen(s) / 3), else NULL.
 * Ties go to the earlier candidate. */
const char *cs_yamlnode_suggest(const char *s, const char *const *cands, size_t n);

/* ---- schema walker ---- */

/* Where messages go: origin names the text, root names the top mapping in
 * messages ("cluster"). */
typedef struct cs_yctx {
    const char *origin;
    const char *root;
    cs_diag *d;
} cs_yctx;

/* Sets d to CS_ECONFIG at node `at` (its mark; 0:0 if NULL) and returns it. */
int cs_yamlnode_error(const cs_yctx *c, const cs_ynode *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

typedef enum cs_yfield_kind {
    CS_YF_STRING,  /* char[size] */
    CS_YF_INT,     /* int in [lo, hi] */
    CS_YF_NUMBER,  /* double, range from lo/hi/flags */
    CS_YF_SIZE,    /* double bytes (units.h), range as NUMBER */
    CS_YF_RATE,    /* double bytes/s */
    CS_YF_TIME,    /* double seconds */
    CS_YF_BOOL,    /* int 0/1 from true/false */
    CS_YF_ENUM,    /* int: index into names */
    CS_YF_MAPPING, /* nested table sub, on the same object */
    CS_YF_CUSTOM,  /* fn does everything */
} cs_yfield_kind;

#define CS_YF_REQUIRED 1u
#define CS_YF_LO_OPEN  2u /* value must be > lo rather than >= lo */
#define CS_YF_HI_OPEN  4u /* value must be < hi rather than <= hi */
#define CS_YF_NO_HI    8u /* no upper bound (hi ignored) */

typedef struct cs_yfield cs_yfield;
/* obj is the object the table describes (not obj + offset). For `missing`
 * v is the mapping the key is absent from. */
typedef int (*cs_yfield_fn)(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *obj);

struct cs_yfield {
    const char *name; /* NULL ends a table */
    cs_yfield_kind kind;
    size_t offset; /* of the target inside obj */
    unsigned flags;
    double lo, hi;
    size_t size;              /* CS_YF_STRING: buffer size incl. NUL */
    const char *const *names; /* CS_YF_ENUM: NULL-terminated */
    const cs_yfield *sub;     /* CS_YF_MAPPING */
    cs_yfield_fn fn;          /* CS_YF_CUSTOM */
    cs_yfield_fn missing;     /* optional: called when the key is absent */
    const void *ext;          /* optional: the owning table's own data (a writer's) */
};

/* Checks map against table and stores values into obj. path is the
 * dotted name of map for messages ("" = c->root). Unknown keys are
 * reported first (document order), then fields are read in table order, so
 * a later row may depend on an earlier one. Returns 0 or CS_ECONFIG. */
int cs_yamlnode_apply(const cs_yctx *c, const cs_ynode *map, const char *path,
                      const cs_yfield *table, void *obj);

/* Reads one scalar-kind field (STRING..ENUM) from v into dst (the target
 * itself, not obj). Lets custom handlers reuse the checks and messages. */
int cs_yamlnode_read(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *dst);

/* For mappings keyed by a closed set of names (e.g. "ring", "tree"):
 * checks v is a mapping (named `name` in messages, `path` for unknown-key
 * messages) and calls fn(c, index, value, ud) per pair, in document order. */
typedef int (*cs_yamlnode_each_fn)(const cs_yctx *c, size_t index, const cs_ynode *value, void *ud);
int cs_yamlnode_each_key(const cs_yctx *c, const cs_ynode *v, const char *name, const char *path,
                         const char *const *names, size_t n, cs_yamlnode_each_fn fn, void *ud);

#endif
