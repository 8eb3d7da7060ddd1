/* SPDX-License-Identifier: MIT */
/*
 * plot_gnuplot.c - finding gnuplot on PATH (as execvp would) and running
 * it on a script with posix_spawn: stdin and stdout on /dev/null, stderr
 * kept in a file so a failure can quote gnuplot's own error line.
 */
#include "out/plot_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

char *cs__gnuplot_find(void)
{
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    const char *p = path;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char *cand = cs_xmalloc(len + 16);
        if (len == 0) snprintf(cand, len + 16, "./gnuplot");
        else snprintf(cand, len + 16, "%.*s/gnuplot", (int)len, p);
        struct stat st;
        if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) return cand;
        free(cand);
        if (!end) return NULL;
        p = end + 1;
    }
}

/* gnuplot's error line ('"plots.gp" line N: message', not a warning), else
 * the last line it printed. */
static void first_error_line(const char *errfile, char *out, size_t len)
{
    snprintf(out, len, "no message");
    FILE *f = fopen(errfile, "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        size_t l = strspn(line, " \t^");
        if (!line[l]) continue;
        l = strlen(line);
        if (l >= len) l = len - 1;
        memcpy(out, line, l);
        out[l] = 0;
        if (strstr(line, "\" line ") && !strstr(line, "warning:")) break;
    }
    fclose(f);
}

int cs__gnuplot_run(const char *exe, const char *script, const char *errfile, char *msg,
                    size_t len)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {(char *)"gnuplot", (char *)script, NULL};
    pid_t pid;
    int e = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e) {
        snprintf(msg, len, "cannot run %s: %s", exe, strerror(e));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(msg, len, "waiting for gnuplot: %s", strerror(errno));
            return -1;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    char line[400];
    first_error_line(errfile, line, sizeof line);
    if (WIFEXITED(status))
        snprintf(msg, len, "gnuplot failed (exit %d): %s", WEXITSTATUS(status), line);
    else
        snprintf(msg, len, "gnuplot killed by signal %d: %s", WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                 line);
    return -1;
}
