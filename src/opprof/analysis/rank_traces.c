/* rank_traces.c - where a distributed run's captures are: DIR/rank-K/, as
 * profile_cpu --parallel writes them, each rank's last capture the one to
 * compare or merge. */
#define _GNU_SOURCE
#include "analysis/analysis.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The step number in "NAME-step-N.json", or -1. */
static long step_of(const char *name) {
    const char *s = strstr(name, "-step-");
    return s ? strtol(s + 6, NULL, 10) : -1;
}

/* The last capture in a rank's directory: the highest step, then the last name. */
static int last_trace(const char *rank_dir, char *path, size_t cap) {
    DIR *d = opendir(rank_dir);
    if (!d) return -errno;
    char best[256] = "";
    long best_step = -2;
    bool best_perfetto = false;
    for (struct dirent *e; (e = readdir(d));) {
        bool perfetto;
        if (!opprof_trace_file_stem(e->d_name, &perfetto) || strlen(e->d_name) >= sizeof best) continue;
        long step = step_of(e->d_name);
        /* the highest step; of one step, the JSON; then the last name */
        if (step > best_step || (step == best_step && best_perfetto && !perfetto) ||
            (step == best_step && perfetto == best_perfetto && strcmp(e->d_name, best) > 0)) {
            best_perfetto = perfetto;
            best_step = step;
            snprintf(best, sizeof best, "%s", e->d_name);
        }
    }
    closedir(d);
    if (!best[0]) return -ENOENT;
    int n = snprintf(path, cap, "%s/%s", rank_dir, best);
    return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int opprof_ranks_trace_path(const char *dir, int rank, char *path, size_t size) {
    if (!dir || !path || size == 0 || rank < 0) return OPPROF_EINVAL;
    char rank_dir[4096];
    struct stat st;
    int n = snprintf(rank_dir, sizeof rank_dir, "%s/rank-%d", dir, rank);
    if (n < 0 || (size_t)n >= sizeof rank_dir) return -ENAMETOOLONG;
    if (stat(rank_dir, &st) != 0) return -errno;
    if (!S_ISDIR(st.st_mode)) return -ENOTDIR;
    int rc = last_trace(rank_dir, path, size);
    return rc == -ENOENT ? OPPROF_EFORMAT : rc;
}
