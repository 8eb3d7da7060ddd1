/* SPDX-License-Identifier: MIT */
/*
 * json.h - a small strict JSON (RFC 8259) reader for the schedules that
 * `collsim simulate --emit-schedule` writes: a tree of values, each with
 * the line and column it starts at, so a bad schedule is reported as
 * FILE:LINE:COLUMN like the simulator's YAML errors.
 *
 * Objects keep their members in file order (lookup is a linear scan: the
 * schedule's objects have a dozen keys); duplicate keys are errors.
 * Nesting is limited to 64 levels. Numbers are doubles. Strings are
 * NUL-terminated UTF-8 (\u escapes decoded, surrogate pairs joined; a
 * \u0000 escape is rejected so strings stay C strings).
 */
#ifndef CS_HW_JSON_H
#define CS_HW_JSON_H

#include <stddef.h>

#include "base/error.h"

typedef enum cs_json_type {
    CS_JSON_NULL,
    CS_JSON_BOOL,
    CS_JSON_NUMBER,
    CS_JSON_STRING,
    CS_JSON_ARRAY,
    CS_JSON_OBJECT
} cs_json_type;

typedef struct cs_json cs_json;
struct cs_json {
    cs_json_type type;
    int line, column;   /* 1-based position of the value's first character */
    int boolean;
    double number;
    char *string;       /* CS_JSON_STRING */
    size_t n;           /* array items or object members */
    cs_json **items;    /* values */
    char **keys;        /* object member names (NULL for arrays) */
};

/* Parses text[0..len) into *out (caller frees with cs_json_free). Returns 0
 * or CS_ECONFIG with d = {file, line, column, message}. */
int cs_json_parse(const char *text, size_t len, const char *file, cs_json **out, cs_diag *d);
void cs_json_free(cs_json *v);

/* The member named key of an object, or NULL (also when v is not an object). */
const cs_json *cs_json_get(const cs_json *v, const char *key);
const char *cs_json_type_name(cs_json_type t);

#endif
