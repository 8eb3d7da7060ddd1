/* SPDX-License-Identifier: MIT */
/*
 * test-yamlnode.c - the YAML node tree and the table-driven schema walker.
 *
 * Tree: scalars (plain and quoted, null spellings), mappings, sequences,
 * the 1-based line:column every node keeps, lookups; parse errors with
 * their line:column (syntax, duplicate keys naming the first, aliases, a
 * second document, non-scalar keys, nesting too deep), an empty text.
 * Walker: every field kind (strings, integers, numbers with open and
 * closed ranges, sizes / rates / times with units, booleans, enums),
 * nested mappings, custom and missing handlers, table order, unknown keys
 * with did-you-mean or the list, required keys reported at their mapping,
 * each_key. Suggestions: the edit distance against a plain recursive
 * reference on many pairs, and a deliberately wrong reference
 * (substitution costing 2) that the comparison must catch.
 */
#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/yamlnode.h"
#include "testutil.h"

static cs_ynode *parse_ok(const char *text)
{
    cs_diag d;
    cs_diag_clear(&d);
    cs_ynode *root = NULL;
    cs_test_diag_ok(cs_yamlnode_parse("t.yaml", text, strlen(text), &root, &d), &d, "'%s'", text);
    return root;
}

/* Parses text, expecting CS_ECONFIG at line:column with needle in it. */
static void parse_fails(const char *text, int line, int column, const char *needle)
{
    cs_diag d;
    cs_diag_clear(&d);
    cs_ynode *root = (cs_ynode *)1;
    int rc = cs_yamlnode_parse("bad.yaml", text, strlen(text), &root, &d);
    cs_test_diag_error(rc, &d, "bad.yaml", line, column, needle, "'%s'", text);
    ck_assert_ptr_null(root);
}

/* ---- the tree -------------------------------------------------------------------- */

START_TEST(tree_nodes_and_marks)
{
    cs_ynode *root = parse_ok("a: 1\n"
                              "b: 'quoted'\n"
                              "c:\n"
                              "  - x\n"
                              "  - {k: v}\n"
                              "d: ~\n"
                              "e:\n"
                              "f: \"\"\n");
    ck_assert_int_eq(root->kind, CS_YNODE_MAPPING);
    ck_assert_int_eq((int)root->n, 6);
    ck_assert_int_eq(root->line, 1);
    ck_assert_int_eq(root->column, 1);
    const cs_ynode *a = cs_yamlnode_find(root, "a");
    ck_assert_str_eq(a->text, "1");
    ck_assert_int_eq(a->plain, 1);
    ck_assert_int_eq(a->line, 1);
    ck_assert_int_eq(a->column, 4);
    const cs_ynode *b = cs_yamlnode_find(root, "b");
    ck_assert_str_eq(b->text, "quoted");
    ck_assert_int_eq(b->plain, 0);
    ck_assert_int_eq((int)b->len, 6);
    const cs_ynode *c = cs_yamlnode_find(root, "c");
    ck_assert_int_eq(c->kind, CS_YNODE_SEQUENCE);
    ck_assert_int_eq((int)c->n, 2);
    ck_assert_int_eq(c->items[0]->line, 4);
    ck_assert_int_eq(c->items[0]->column, 5);
    ck_assert_int_eq(c->items[1]->kind, CS_YNODE_MAPPING);
    ck_assert_int_eq(c->items[1]->line, 5);
    ck_assert_int_eq(c->items[1]->column, 5);
    ck_assert_str_eq(cs_yamlnode_find(c->items[1], "k")->text, "v");
    /* key i and value i */
    ck_assert_str_eq(cs_yamlnode_key(root, 2)->text, "c");
    ck_assert_ptr_eq(cs_yamlnode_value(root, 2), c);
    ck_assert_int_eq(cs_yamlnode_key(root, 2)->line, 3);
    ck_assert_int_eq(cs_yamlnode_key(root, 2)->column, 1);
    /* nulls: ~, empty, but not a quoted empty string */
    ck_assert(cs_yamlnode_is_null(cs_yamlnode_find(root, "d")));
    ck_assert(cs_yamlnode_is_null(cs_yamlnode_find(root, "e")));
    ck_assert(!cs_yamlnode_is_null(cs_yamlnode_find(root, "f")));
    ck_assert(!cs_yamlnode_is_null(a));
    ck_assert_ptr_null(cs_yamlnode_find(root, "zz"));
    ck_assert_ptr_null(cs_yamlnode_find(c, "x")); /* not a mapping */
    ck_assert_str_eq(cs_yamlnode_describe(root), "a mapping");
    ck_assert_str_eq(cs_yamlnode_describe(c), "a sequence");
    ck_assert_str_eq(cs_yamlnode_describe(a), "a scalar");
    ck_assert_str_eq(cs_yamlnode_describe(cs_yamlnode_find(root, "d")), "an empty value");
    ck_assert_str_eq(cs_yamlnode_describe(NULL), "an empty value");
    cs_yamlnode_free(root);
    /* null spellings */
    static const char *const nulls[] = {"x: null\n", "x: Null\n", "x: NULL\n", "x: ~\n"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++) {
        root = parse_ok(nulls[i]);
        ck_assert_msg(cs_yamlnode_is_null(cs_yamlnode_find(root, "x")), "%s", nulls[i]);
        cs_yamlnode_free(root);
    }
    root = parse_ok("x: 'null'\n");
    ck_assert(!cs_yamlnode_is_null(cs_yamlnode_find(root, "x")));
    cs_yamlnode_free(root);
    /* no document at all */
    cs_diag d;
    root = (cs_ynode *)1;
    ck_assert_int_eq(cs_yamlnode_parse("e.yaml", "", 0, &root, &d), 0);
    ck_assert_ptr_null(root);
    root = (cs_ynode *)1;
    ck_assert_int_eq(cs_yamlnode_parse("e.yaml", "# only a comment\n", 17, &root, &d), 0);
    ck_assert_ptr_null(root);
}
END_TEST

START_TEST(tree_parse_errors)
{
    parse_fails("a: 1\nb: 2\na: 3\n", 3, 1, "duplicate key 'a' (first defined at line 1, column 1)");
    parse_fails("a: &x 1\nb: *x\n", 2, 4, "aliases (*x)");
    parse_fails("a: 1\n---\nb: 2\n", 2, 1, "a second one");
    parse_fails("? [1, 2]\n: v\n", 1, 3, "mapping keys must be scalars, got a sequence");
    parse_fails("a: [1, 2\n", 2, 1, "invalid YAML");
    parse_fails("a:\n  b: 1\n c: 2\n", 3, 2, "invalid YAML");
    parse_fails("a: \"\\q\"\n", 1, 5, "unknown escape character");
    /* 65 nested flow sequences */
    char deep[200];
    memset(deep, '[', 65);
    memset(deep + 65, ']', 65);
    deep[130] = '\n';
    deep[131] = 0;
    parse_fails(deep, 1, 65, "nesting deeper than 64 levels");
}
END_TEST

/* ---- the walker ------------------------------------------------------------------- */

typedef struct inner {
    int k;
    double t;
} inner;

typedef struct obj {
    char name[8];
    int count;
    double frac, ratio, size, rate, time;
    int flag, color;
    inner in;
    int custom_seen, missing_seen;
} obj;

static const char *const colors[] = {"red", "green", "blue", NULL};

static int custom_fn(const cs_yctx *c, const cs_yfield *f, const cs_ynode *v, void *o)
{
    (void)c;
    (void)f;
    ((obj *)o)->custom_seen = v->kind == CS_YNODE_SEQUENCE ? (int)v->n : -1;
    return 0;
}

static int missing_fn(const cs_yctx *c, const cs_yfield *f, const cs_ynode *map, void *o)
{
    (void)f;
    obj *ob = o;
    ob->missing_seen = 1;
    /* a later row may depend on an earlier one: count was read first */
    if (ob->count > 5) return cs_yamlnode_error(c, map, "count %d needs 'opt'", ob->count);
    return 0;
}

static const cs_yfield inner_fields[] = {
    {.name = "k", .kind = CS_YF_INT, .offset = offsetof(inner, k), .flags = CS_YF_REQUIRED,
     .lo = 0, .hi = 9},
    {.name = "t", .kind = CS_YF_TIME, .offset = offsetof(inner, t), .flags = CS_YF_NO_HI},
    {.name = NULL},
};

static const cs_yfield fields[] = {
    {.name = "name", .kind = CS_YF_STRING, .offset = offsetof(obj, name), .size = 8},
    {.name = "count", .kind = CS_YF_INT, .offset = offsetof(obj, count),
     .flags = CS_YF_REQUIRED, .lo = 1, .hi = 10},
    {.name = "frac", .kind = CS_YF_NUMBER, .offset = offsetof(obj, frac),
     .flags = CS_YF_LO_OPEN, .lo = 0, .hi = 1},
    {.name = "ratio", .kind = CS_YF_NUMBER, .offset = offsetof(obj, ratio), .flags = CS_YF_NO_HI,
     .lo = 1},
    {.name = "size", .kind = CS_YF_SIZE, .offset = offsetof(obj, size),
     .flags = CS_YF_LO_OPEN | CS_YF_NO_HI},
    {.name = "rate", .kind = CS_YF_RATE, .offset = offsetof(obj, rate),
     .flags = CS_YF_LO_OPEN | CS_YF_NO_HI},
    {.name = "time", .kind = CS_YF_TIME, .offset = offsetof(obj, time), .flags = CS_YF_NO_HI},
    {.name = "flag", .kind = CS_YF_BOOL, .offset = offsetof(obj, flag)},
    {.name = "color", .kind = CS_YF_ENUM, .offset = offsetof(obj, color), .names = colors},
    {.name = "inner", .kind = CS_YF_MAPPING, .offset = offsetof(obj, in), .sub = inner_fields},
    {.name = "list", .kind = CS_YF_CUSTOM, .fn = custom_fn},
    {.name = "opt", .kind = CS_YF_BOOL, .offset = offsetof(obj, flag), .missing = missing_fn},
    {.name = NULL},
};

/* Applies fields to text; rc, with d filled. */
static int walk(const char *text, obj *o, cs_diag *d)
{
    cs_diag_clear(d);
    cs_ynode *root = NULL;
    int rc = cs_yamlnode_parse("w.yaml", text, strlen(text), &root, d);
    ck_assert_int_eq(rc, 0);
    cs_yctx c = {.origin = "w.yaml", .root = "thing", .d = d};
    memset(o, 0, sizeof *o);
    rc = cs_yamlnode_apply(&c, root, "", fields, o);
    cs_yamlnode_free(root);
    return rc;
}

START_TEST(walker_reads_every_kind)
{
    obj o;
    cs_diag d;
    int rc = walk("name: abc\n"
                  "count: 3\n"
                  "frac: 0.25\n"
                  "ratio: 1.5e3\n"
                  "size: 80GiB\n"
                  "rate: 400Gbps\n"
                  "time: 3us\n"
                  "flag: True\n"
                  "color: blue\n"
                  "inner: {k: 9, t: 1.5ms}\n"
                  "list: [1, 2, 3]\n",
                  &o, &d);
    ck_assert_msg(rc == 0, "%d:%d: %s", d.line, d.column, d.message);
    ck_assert_str_eq(o.name, "abc");
    ck_assert_int_eq(o.count, 3);
    ck_assert_double_eq(o.frac, 0.25);
    ck_assert_double_eq(o.ratio, 1500);
    ck_assert_double_eq(o.size, 80.0 * 1024 * 1024 * 1024);
    ck_assert_double_eq_tol(o.rate, 50e9, 1e-3);
    ck_assert_double_eq_tol(o.time, 3e-6, 1e-18);
    ck_assert_int_eq(o.flag, 1);
    ck_assert_int_eq(o.color, 2);
    ck_assert_int_eq(o.in.k, 9);
    ck_assert_double_eq_tol(o.in.t, 1.5e-3, 1e-15);
    ck_assert_int_eq(o.custom_seen, 3);
    ck_assert_int_eq(o.missing_seen, 1); /* 'opt' absent: its handler ran */
    /* 'opt' present: no missing handler; booleans in three spellings */
    rc = walk("count: 1\nopt: FALSE\n", &o, &d);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(o.missing_seen, 0);
    ck_assert_int_eq(o.flag, 0);
}
END_TEST

START_TEST(walker_errors_name_line_and_column)
{
    static const struct {
        const char *text;
        int line, column;
        const char *message;
    } cases[] = {
        {"count: 3\ncolour: red\n", 2, 1,
         "unknown key 'colour' in thing (did you mean 'color'?)"},
        {"count: 3\nzzzzzzzz: 1\n", 2, 1,
         "unknown key 'zzzzzzzz' in thing (expected one of: name, count, frac, ratio, size, "
         "rate, time, flag, color, inner, list, opt)"},
        {"name: x\n", 1, 1, "missing required key 'count' in thing"},
        {"count: 3\ninner: {t: 1us}\n", 2, 8, "missing required key 'k' in inner"},
        {"count: 3\ninner: {k: 1, qqqq: 2}\n", 2, 15,
         "unknown key 'qqqq' in inner (expected one of: k, t)"},
        {"count: 11\n", 1, 8, "'count' must be an integer in 1..10, got 11"},
        {"count: 2.5\n", 1, 8, "'count' must be an integer in 1..10, got '2.5'"},
        {"count: 99999999999999999999\n", 1, 8, "'count' must be an integer in 1..10"},
        {"count:\n", 1, 7, "'count' must be an integer in 1..10, got an empty value"},
        {"count: [1]\n", 1, 8, "'count' must be an integer in 1..10, got a sequence"},
        {"count: 1\nfrac: 0\n", 2, 7, "'frac' must be in (0, 1], got 0"},
        {"count: 1\nfrac: 1.5\n", 2, 7, "'frac' must be in (0, 1], got 1.5"},
        {"count: 1\nfrac: lots\n", 2, 7, "'frac' must be a number in (0, 1], got 'lots'"},
        {"count: 1\nratio: -3\n", 2, 8, "'ratio' must be >= 1, got -3"},
        {"count: 1\nsize: 0\n", 2, 7, "'size' must be a size > 0, got 0"},
        {"count: 1\nsize: 12 parsecs\n", 2, 7, "'size': "},
        {"count: 1\nrate: 5furlongs\n", 2, 7, "'rate': "},
        {"count: 1\ntime: soon\n", 2, 7, "'time': "},
        {"count: 1\nflag: yes\n", 2, 7, "'flag' must be true or false, got 'yes'"},
        {"count: 1\ncolor: gren\n", 2, 8,
         "'color' must be one of red, green, blue, got 'gren' (did you mean 'green'?)"},
        {"count: 1\ncolor: purple\n", 2, 8, "'color' must be one of red, green, blue, got 'purple'"},
        {"count: 1\nname: ''\n", 2, 7, "'name' must be a non-empty string"},
        {"count: 1\nname: abcdefgh\n", 2, 7, "'name' must be at most 7 characters, got 8"},
        {"count: 1\ninner: 3\n", 2, 8, "'inner' must be a mapping, got '3'"},
        {"count: 7\n", 1, 1, "count 7 needs 'opt'"},
        {"- 1\n", 1, 1, "expected a mapping for thing, got a sequence"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        obj o;
        cs_diag d;
        int rc = walk(cases[k].text, &o, &d);
        ck_assert_msg(rc == CS_ECONFIG, "case %zu accepted", k);
        ck_assert_str_eq(d.file, "w.yaml");
        ck_assert_msg(d.line == cases[k].line && d.column == cases[k].column,
                      "case %zu: %d:%d, want %d:%d (%s)", k, d.line, d.column, cases[k].line,
                      cases[k].column, d.message);
        ck_assert_msg(!strncmp(d.message, cases[k].message, strlen(cases[k].message)),
                      "case %zu: '%s', want '%s'", k, d.message, cases[k].message);
    }
}
END_TEST

static int each_fn(const cs_yctx *c, size_t index, const cs_ynode *value, void *ud)
{
    (void)c;
    int *seen = ud;
    seen[index] = atoi(value->text);
    return 0;
}

START_TEST(walker_each_key)
{
    static const char *const names[] = {"ring", "tree"};
    cs_ynode *root = parse_ok("e: {tree: 2, ring: 1}\nf: {ring: 1, rnig: 2}\ng: 5\n");
    cs_diag d;
    cs_yctx c = {.origin = "k.yaml", .root = "x", .d = &d};
    int seen[2] = {0, 0};
    ck_assert_int_eq(cs_yamlnode_each_key(&c, cs_yamlnode_find(root, "e"), "e", "x.e", names, 2,
                                          each_fn, seen), 0);
    ck_assert_int_eq(seen[0], 1);
    ck_assert_int_eq(seen[1], 2);
    ck_assert_int_eq(cs_yamlnode_each_key(&c, cs_yamlnode_find(root, "f"), "f", "x.f", names, 2,
                                          each_fn, seen), CS_ECONFIG);
    ck_assert_str_eq(d.message, "unknown key 'rnig' in x.f (did you mean 'ring'?)");
    ck_assert_int_eq(d.line, 2);
    ck_assert_int_eq(d.column, 14);
    ck_assert_int_eq(cs_yamlnode_each_key(&c, cs_yamlnode_find(root, "g"), "g", "x.g", names, 2,
                                          each_fn, seen), CS_ECONFIG);
    ck_assert_str_eq(d.message, "'g' must be a mapping, got '5'");
    /* cs_yamlnode_read reuses the checks for one scalar */
    cs_yfield f = {.name = "v", .kind = CS_YF_TIME, .flags = CS_YF_NO_HI};
    double t;
    ck_assert_int_eq(cs_yamlnode_read(&c, &f, cs_yamlnode_find(root, "g"), &t), 0);
    ck_assert_double_eq(t, 5);
    cs_yamlnode_free(root);
}
END_TEST

/* ---- suggestions -------------------------------------------------------------------- */

/* Levenshtein by plain recursion (exponential; short strings only).
 * sub is the substitution cost: 1 is the reference, 2 a deliberate fault. */
static int ref_distance(const char *a, const char *b, int sub)
{
    if (!*a) return (int)strlen(b);
    if (!*b) return (int)strlen(a);
    int best = ref_distance(a + 1, b + 1, sub) + (*a != *b ? sub : 0);
    int del = ref_distance(a + 1, b, sub) + 1, ins = ref_distance(a, b + 1, sub) + 1;
    if (del < best) best = del;
    if (ins < best) best = ins;
    return best;
}

START_TEST(edit_distance_against_reference)
{
    static const char *const words[] = {"",     "a",     "ab",     "ba",     "abc",  "ring",
                                        "rnig", "tree",  "trees",  "nvls",   "ll128", "ll",
                                        "simple", "sample", "gpu",  "gpus_per_node"};
    size_t n = sizeof words / sizeof words[0];
    int faulty_differs = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            if (strlen(words[i]) + strlen(words[j]) > 16) continue;
            int got = cs_yamlnode_edit_distance(words[i], words[j]);
            ck_assert_msg(got == ref_distance(words[i], words[j], 1), "d('%s', '%s') = %d",
                          words[i], words[j], got);
            faulty_differs |= got != ref_distance(words[i], words[j], 2);
        }
    /* the comparison can fail: a reference with the wrong cost is caught */
    ck_assert_msg(faulty_differs, "a faulty reference went unnoticed");
    /* suggestions: within max(2, len / 3), ties to the earlier candidate */
    static const char *const cands[] = {"nodes", "gpus_per_node", "gpu", "intra", "inter"};
    ck_assert_str_eq(cs_yamlnode_suggest("node", cands, 5), "nodes");
    ck_assert_str_eq(cs_yamlnode_suggest("gpus_pre_node", cands, 5), "gpus_per_node");
    ck_assert_str_eq(cs_yamlnode_suggest("intr", cands, 5), "intra"); /* tie: intra first */
    ck_assert_ptr_null(cs_yamlnode_suggest("bandwidth", cands, 5));
    ck_assert_ptr_null(cs_yamlnode_suggest("x", cands, 0));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("yamlnode");
    TCase *tt = tcase_create("tree");
    tcase_add_test(tt, tree_nodes_and_marks);
    tcase_add_test(tt, tree_parse_errors);
    suite_add_tcase(s, tt);
    TCase *tw = tcase_create("walker");
    tcase_add_test(tw, walker_reads_every_kind);
    tcase_add_test(tw, walker_errors_name_line_and_column);
    tcase_add_test(tw, walker_each_key);
    suite_add_tcase(s, tw);
    TCase *tg = tcase_create("suggest");
    tcase_add_test(tg, edit_distance_against_reference);
    suite_add_tcase(s, tg);
    return cs_test_run(s);
}
