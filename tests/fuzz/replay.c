/* SPDX-License-Identifier: MIT */
/*
 * replay.c - main() for a fuzz target built without libFuzzer: runs
 * LLVMFuzzerTestOneInput once per file named on the command line (a
 * directory: every file under it, sorted), so seed corpora and
 * inputs fuzzing found replay as an ordinary test in every build (and
 * under valgrind). Prints how many inputs ran; a crash is the failure.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/textfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    char *text;
    size_t len;
    cs_diag d;
    if (cs_textfile_read(path, "input", &text, &len, &d)) {
        fprintf(stderr, "replay: %s: %s\n", path, d.message);
        return -1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)text, len);
    free(text);
    return 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path);

/* Every file under dir (recursively, as libFuzzer reads a corpus), in
 * name order; -1 on an error. */
static int run_dir(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp) return -1;
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(dp));) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) names = cs_xrealloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
        size_t l = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = cs_xmalloc(l);
        snprintf(names[n++], l, "%s/%s", dir, e->d_name);
    }
    closedir(dp);
    qsort(names, n, sizeof *names, by_name);
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        if (count >= 0) {
            int r = run_path(names[i]);
            count = r < 0 ? -1 : count + r;
        }
        free(names[i]);
    }
    free(names);
    return count;
}

/* A file, a directory, or (anything else) nothing: the count run, or -1. */
static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: no such file or directory\n", path);
        return -1;
    }
    return S_ISDIR(st.st_mode) ? run_dir(path) : S_ISREG(st.st_mode) ? run_file(path) : 0;
}

int main(int argc, char **argv)
{
    int total = 0;
    for (int i = 1; i < argc; i++) {
        int r = run_path(argv[i]);
        if (r < 0) return 1;
        total += r;
    }
    printf("replay: %d inputs\n", total);
    return 0;
}
