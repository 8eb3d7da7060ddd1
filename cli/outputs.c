/* SPDX-License-Identifier: MIT */
/*
 * outputs.c - a command's outputs written as one (outputs.h), and the
 * SIGINT / SIGTERM / SIGHUP handler that removes the temporaries of an
 * interrupted run.
 *
 * Invariant: a file is in the handler's list from before it is created
 * until after it is renamed or removed, so a signal at any moment leaves
 * no "*.collsim-tmp.PID" behind (the handler's unlink of a name already
 * renamed fails harmlessly). The handler only calls unlink, signal and
 * raise (async-signal-safe), then dies of the signal as it would have.
 * The list holds pointers the owners keep alive; a slot is cleared
 * (set to NULL) before its string is freed.
 */
#include "outputs.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* ---- the temporaries a signal removes ---------------------------------------- */

#define MAX_TEMPS 32

static const char *volatile temps[MAX_TEMPS];
static volatile sig_atomic_t ntemps;

static void on_signal(int sig)
{
    for (sig_atomic_t i = 0; i < ntemps; i++)
        if (temps[i]) unlink(temps[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void handlers_install(void)
{
    static int installed;
    if (installed) return;
    installed = 1;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        /* an ignored signal (nohup) stays ignored */
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

void cs_cli_temp_register(const char *tmp)
{
    handlers_install();
    for (sig_atomic_t i = 0; i < ntemps; i++)
        if (!temps[i]) {
            temps[i] = tmp;
            return;
        }
    CS_ASSERT(ntemps < MAX_TEMPS);
    temps[ntemps] = tmp;
    ntemps = ntemps + 1;
}

void cs_cli_temp_forget(const char *tmp)
{
    for (sig_atomic_t i = 0; i < ntemps; i++)
        if (temps[i] == tmp) temps[i] = NULL;
}

/* ---- the set ----------------------------------------------------------------- */

int cs_cli_outputs_check(const char *cmd, const char *const *paths, size_t n)
{
    cs_diag d;
    cs_diag_clear(&d);
    for (size_t i = 0; i < n; i++) {
        if (!paths[i]) continue;
        if (cs_buf_check_path(paths[i], &d)) return cs_cli_fail(&d);
        struct stat a, b;
        for (size_t j = 0; j < i; j++) {
            if (!paths[j]) continue;
            int same = !strcmp(paths[i], paths[j]) && strcmp(paths[i], "-");
            if (!same && stat(paths[i], &a) == 0 && stat(paths[j], &b) == 0)
                same = a.st_dev == b.st_dev && a.st_ino == b.st_ino && S_ISREG(a.st_mode);
            if (same) return cs_cli_usage(cmd, "two outputs are the same file '%s'", paths[i]);
        }
    }
    return -1;
}

int cs_cli_outputs_add(cs_cli_outputs *s, const cs_buf *b, const char *path, cs_diag *d)
{
    CS_ASSERT(s->n < CS_CLI_MAX_OUTPUTS);
    int k = s->n++;
    s->o[k].path = path;
    s->o[k].b = b;
    s->o[k].tmp = NULL;
    s->o[k].in_place = cs_buf_in_place(path);
    if (s->o[k].in_place) return 0;
    char *tmp = cs_buf_temp_name(path);
    cs_cli_temp_register(tmp);
    s->o[k].tmp = tmp;
    int rc = cs_buf_write_temp(b, tmp, path, d);
    if (rc) {
        cs_cli_temp_forget(tmp);
        free(tmp);
        s->o[k].tmp = NULL;
    }
    return rc;
}

static void drop(cs_cli_outputs *s, int k, int remove_it)
{
    if (!s->o[k].tmp) return;
    if (remove_it) remove(s->o[k].tmp);
    cs_cli_temp_forget(s->o[k].tmp);
    free(s->o[k].tmp);
    s->o[k].tmp = NULL;
}

int cs_cli_outputs_commit(cs_cli_outputs *s, cs_diag *d)
{
    int rc = 0;
    for (int k = 0; k < s->n; k++) {
        if (!s->o[k].tmp) continue;
        if (rc == 0 && rename(s->o[k].tmp, s->o[k].path) != 0)
            rc = cs_diag_set(d, CS_EIO, s->o[k].path, 0, 0, "cannot write output file: %s",
                             strerror(errno));
        drop(s, k, rc != 0);
    }
    for (int k = 0; k < s->n && rc == 0; k++)
        if (s->o[k].in_place) rc = cs_buf_write_in_place(s->o[k].b, s->o[k].path, d);
    s->n = 0;
    return rc;
}

void cs_cli_outputs_abort(cs_cli_outputs *s)
{
    for (int k = 0; k < s->n; k++) drop(s, k, 1);
    s->n = 0;
}

int cs_cli_outputs_write(const cs_buf *const *bufs, const char *const *paths, size_t n,
                         cs_diag *d)
{
    cs_cli_outputs s = {0};
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) rc = cs_cli_outputs_add(&s, bufs[i], paths[i], d);
    if (rc) {
        cs_cli_outputs_abort(&s);
        return rc;
    }
    return cs_cli_outputs_commit(&s, d);
}
