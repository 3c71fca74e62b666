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
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) : 0;
    const char *base = slash ? slash + 1 : path;
    char *dir = opprof__alloc(dir_len + 2);
    if (!dir) return OPPROF_ENOMEM;
    if (slash)
        memcpy(dir, path, dir_len ? dir_len : 1), dir[dir_len ? dir_len : 1] = '\0';
    else
        memcpy(dir, ".", 2);
    DIR *d = opendir(dir);
    int count = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        long pid = writer_pid(e->d_name, base, strlen(base), infix);
        if (pid < 0 || process_alive(pid)) continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *entry = opprof__alloc(n);
        if (!entry) break;
        snprintf(entry, n, "%s/%s", dir, e->d_name);
        found(entry, pid, user);
        opprof__free(entry);
        count++;
    }
    if (d) closedir(d);
    opprof__free(dir);
    return count;
}
