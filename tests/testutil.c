/* SPDX-License-Identifier: MIT */
/*
 * testutil.c - the helpers every Check suite links (see testutil.h). They
 * assert rather than return errors: a helper that cannot do its part fails
 * the test that called it.
 */
#include "testutil.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- running a suite ---- */

static int run(Suite *s, enum fork_status fork)
{
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, fork);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

int cs_test_run(Suite *s)
{
    return run(s, CK_FORK_GETENV);
}

int cs_test_run_forked(Suite *s)
{
    return run(s, CK_FORK);
}

/* ---- presets ---- */

/* Fails the test when rc is not 0, with d formatted after `what`. */
static void loaded(int rc, const cs_diag *d, const char *what, const char *text)
{
    if (rc == 0) return;
    char buf[1024];
    cs_diag_format(d, buf, sizeof buf);
    ck_abort_msg("%s: %s%s%s", what, buf, text ? "\n" : "", text ? text : "");
}

cs_cluster cs_test_cluster(const char *spec)
{
    cs_cluster c;
    cs_diag d;
    loaded(cs_config_cluster(spec, &c, &d), &d, spec, NULL);
    return c;
}

cs_cluster cs_test_cluster_yaml(const char *origin, const char *text)
{
    cs_cluster c;
    cs_diag d;
    loaded(cs_config_load_cluster_string(origin, text, strlen(text), &c, &d), &d, origin, text);
    return c;
}

cs_model cs_test_model(const char *spec)
{
    cs_model m;
    cs_diag d;
    loaded(cs_model_load(spec, &m, &d), &d, spec, NULL);
    return m;
}

void cs_test_setup_make(cs_test_setup *s, const char *cluster, const char *model, cs_strategy st,
                        int ranks)
{
    s->c = cs_test_cluster(cluster);
    s->m = cs_test_model(model);
    cs_training_defaults(&s->t, st);
    s->topo = cs_test_topology(&s->c, ranks, 0);
}

cs_topology cs_test_topology(const cs_cluster *c, int ranks, int nodes)
{
    cs_topology t;
    cs_diag d;
    int rc = cs_topology_build(c, ranks, nodes, &t, &d);
    ck_assert_msg(rc == 0, "%d ranks on %d nodes of %s: %s", ranks, nodes, c->name, d.message);
    return t;
}

/* ---- loader diagnostics ---- */

void cs_test_diag_ok(int rc, const cs_diag *d, const char *what, ...)
{
    char w[256];
    va_list ap;
    va_start(ap, what);
    vsnprintf(w, sizeof w, what, ap);
    va_end(ap);
    loaded(rc, d, w, NULL);
}

void cs_test_diag_error(int rc, const cs_diag *d, const char *file, int line, int column,
                        const char *text, const char *what, ...)
{
    char w[256], buf[1024];
    va_list ap;
    va_start(ap, what);
    vsnprintf(w, sizeof w, what, ap);
    va_end(ap);
    cs_diag_format(d, buf, sizeof buf);
    ck_assert_msg(rc == CS_ECONFIG, "%s: want CS_ECONFIG, got %d (%s)", w, rc, buf);
    ck_assert_msg(d->code == CS_ECONFIG, "%s: diag code %d", w, d->code);
    ck_assert_msg(!strcmp(d->file, file), "%s: file '%s', want '%s'", w, d->file, file);
    ck_assert_msg(d->line == line && d->column == column, "%s: at %d:%d, want %d:%d (%s)", w,
                  d->line, d->column, line, column, buf);
    ck_assert_msg(strstr(d->message, text) != NULL, "%s: message '%s' lacks '%s'", w, d->message,
                  text);
}

/* ---- strings ---- */

char *cs_test_replace(const char *base, const char *from, const char *to)
{
    const char *at = from[0] ? strstr(base, from) : base + strlen(base);
    ck_assert_msg(at != NULL, "'%s' not in the base text", from);
    size_t pre = (size_t)(at - base), fl = strlen(from), tl = strlen(to);
    char *s = malloc(strlen(base) - fl + tl + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, base, pre);
    memcpy(s + pre, to, tl);
    strcpy(s + pre + tl, at + fl);
    return s;
}

/* ---- files ---- */

char *cs_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s (tests run from the project root)", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    ck_assert_msg(n >= 0, "cannot size %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_SET), 0);
    char *s = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    if (len) *len = (size_t)n;
    return s;
}

void cs_test_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
}

char *cs_test_tmpdir(void)
{
    char tmpl[] = "/tmp/collsim-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmpl));
    char *dir = strdup(tmpl);
    ck_assert_ptr_nonnull(dir);
    return dir;
}

void cs_test_rmdir(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp) return;
    struct dirent *e;
    char p[1024];
    while ((e = readdir(dp)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            remove(p);
        }
    closedir(dp);
    rmdir(dir);
}

/* ---- random numbers ---- */

uint32_t cs_test_lcg_next(cs_test_lcg *g)
{
    g->s = g->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(g->s >> 33);
}
