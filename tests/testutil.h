/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - what the Check suites (tests/test-<module>.c) share: running
 * a suite, loading a preset cluster, model or topology that the test needs
 * (a load that fails fails the test, naming the preset), checking a
 * loader's diagnostic (code, file:line:column, message), editing a YAML
 * text, string-contains asserts, whole files and scratch directories, and
 * a small deterministic random generator.
 *
 * Every helper that checks something does it with ck_assert_msg, so a
 * failure fails the calling test; the assert macros expand at the caller
 * and report its file:line. Tests run from the project root (meson's
 * workdir), so relative paths name files of the source tree.
 */
#ifndef CS_TESTUTIL_H
#define CS_TESTUTIL_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "coll/topology.h"
#include "config/config.h"
#include "train/model.h"
#include "train/training.h"

/* Binary sizes in bytes, as doubles. */
#define KiB 1024.0
#define MiB (1024.0 * KiB)
#define GiB (1024.0 * MiB)
#define TiB (1024.0 * GiB)

/* Runs every test of s (CK_NORMAL output) and frees the runner, which owns
 * s. Returns EXIT_SUCCESS, or EXIT_FAILURE when a test failed: main's exit
 * status. cs_test_run forks per test unless CK_FORK=no; cs_test_run_forked
 * always forks (for tests that must die in a child). */
int cs_test_run(Suite *s);
int cs_test_run_forked(Suite *s);

/* A preset (or file) cluster or model, a cluster from YAML text read as
 * if from file `origin`, or a rank layout; a load that fails fails the
 * test with the diagnostic (and the text). */
cs_cluster cs_test_cluster(const char *spec);
cs_cluster cs_test_cluster_yaml(const char *origin, const char *text);
cs_model cs_test_model(const char *spec);
cs_topology cs_test_topology(const cs_cluster *c, int ranks, int nodes);

/* A training run to build: cluster, model, settings (strategy s's
 * defaults) and `ranks` ranks on the fewest nodes, from presets. */
typedef struct cs_test_setup {
    cs_cluster c;
    cs_model m;
    cs_training t;
    cs_topology topo;
} cs_test_setup;
void cs_test_setup_make(cs_test_setup *s, const char *cluster, const char *model, cs_strategy st,
                        int ranks);

/* A loader's outcome rc with d; `what` (printf format and arguments)
 * names the case in the messages, e.g. ("line %d", __LINE__).
 * cs_test_diag_ok: rc is 0. cs_test_diag_error: rc and d->code are
 * CS_ECONFIG, d is at file:line:column and its message contains text. */
void cs_test_diag_ok(int rc, const cs_diag *d, const char *what, ...);
void cs_test_diag_error(int rc, const cs_diag *d, const char *file, int line, int column,
                        const char *text, const char *what, ...);

/* base with the first occurrence of from replaced by to; an empty from
 * appends to. Fails the test when from is not in base. Caller frees. */
char *cs_test_replace(const char *base, const char *from, const char *to);

/* hay (which may be NULL: then it fails) contains / lacks needle. */
#define CS_ASSERT_CONTAINS(hay, needle)                                                            \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        ck_assert_msg(h_ && strstr(h_, n_), "'%s' lacks '%s'", h_ ? h_ : "(null)", n_);           \
    } while (0)
#define CS_ASSERT_LACKS(hay, needle)                                                               \
    do {                                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                                    \
        ck_assert_msg(h_ && !strstr(h_, n_), "'%s' holds '%s'", h_ ? h_ : "(null)", n_);          \
    } while (0)

/* The whole file, NUL-terminated (caller frees); *len (when len is not
 * NULL) excludes the NUL. Fails the test when it cannot be read. */
char *cs_test_slurp(const char *path, size_t *len);

/* Writes text to path (replacing it); fails the test when it cannot. */
void cs_test_write(const char *path, const char *text);

/* A new empty directory under /tmp (caller frees the name), and its
 * removal with the files in it (not recursive). */
char *cs_test_tmpdir(void);
void cs_test_rmdir(const char *dir);

/* Knuth's MMIX LCG: the same seed gives the same numbers on every host;
 * next returns the top 31 bits, the good ones. */
typedef struct cs_test_lcg {
    uint64_t s;
} cs_test_lcg;
uint32_t cs_test_lcg_next(cs_test_lcg *g);

#endif
