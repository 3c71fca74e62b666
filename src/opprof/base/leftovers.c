/* base/leftovers.c - temporaries that an earlier process left behind: a
 * process killed by SIGKILL, or one that ended by _exit or abort, runs no
 * exit handler, so its temporary file or directory stays. Their names carry
 * the writer's pid (PATH + infix + PID + rest), so the next run can tell
 * them from a live writer's: an entry whose pid is no live process is left
 * over. A reused pid makes one look alive; it is then left alone. */
#define _GNU_SOURCE
#include "base/base.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static bool process_alive(long pid) { return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH); }

/* The pid that `name` carries after prefix + infix, or -1. */
static long writer_pid(const char *name, const char *prefix, size_t prefix_len, const char *infix) {
    size_t infix_len = strlen(infix);
    if (strncmp(name, prefix, prefix_len) != 0 || strncmp(name + prefix_len, infix, infix_len) != 0) return -1;
    const char *digits = name + prefix_len + infix_len;
    char *end;
    errno = 0;
    long pid = strtol(digits, &end, 10);
    if (end == digits || errno || pid <= 0 || (*end != '\0' && *end != '.')) return -1;
    return pid;
}

int opprof__leftovers(const char *path, const char *infix, opprof__leftover_fn found, void *user) {
    /* fixed buffers, no allocation: a best-effort sweep that a failing
     * allocator must not turn into a failed write (a path past PATH_MAX
     * is not swept) */
    char dir[PATH_MAX], entry[PATH_MAX];
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dir_len = slash ? (size_t)(slash - path) : 1;
    if (dir_len >= sizeof dir) return 0;
    if (!slash)
        memcpy(dir, ".", 2);
    else if (dir_len == 0)
        memcpy(dir, "/", 2);
    else
        memcpy(dir, path, dir_len), dir[dir_len] = '\0';
    DIR *d = opendir(dir);
    if (!d) return 0;
    int count = 0;
    for (struct dirent *e; (e = readdir(d));) {
        long pid = writer_pid(e->d_name, base, strlen(base), infix);
        if (pid < 0 || process_alive(pid)) continue;
        if (snprintf(entry, sizeof entry, "%s/%s", dir, e->d_name) >= (int)sizeof entry) continue;
        found(entry, pid, user);
        count++;
    }
    closedir(d);
    return count;
}
