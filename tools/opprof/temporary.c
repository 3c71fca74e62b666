/* temporary.c - a command's own temporary file (opprof sql's FILE.tmp.PID,
 * opprof merge's OUT.merging-PID.json), which can be as large as its output:
 * removed when SIGINT, SIGTERM or SIGHUP stops the command (which then ends
 * as the signal does), and, when SIGKILL left it (no handler runs), by the
 * next run beside it once its process is gone. */
#define _GNU_SOURCE
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int STOP_SIGNALS[] = {SIGINT, SIGTERM, SIGHUP};
#define N_STOP_SIGNALS (sizeof STOP_SIGNALS / sizeof *STOP_SIGNALS)
static char g_path[4096]; /* the temporary, for remove_on_stop; "" none */
static struct sigaction g_before[N_STOP_SIGNALS];

static void remove_on_stop(int sig) {
    if (g_path[0]) unlink(g_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

void tool_temporary_guard(const char *path) {
    snprintf(g_path, sizeof g_path, "%s", path);
    struct sigaction on = {.sa_handler = remove_on_stop};
    sigemptyset(&on.sa_mask);
    for (size_t k = 0; k < N_STOP_SIGNALS; k++) {
        sigaction(STOP_SIGNALS[k], NULL, &g_before[k]);
        if (g_before[k].sa_handler != SIG_IGN) sigaction(STOP_SIGNALS[k], &on, NULL);
    }
}

void tool_temporary_unguard(void) {
    for (size_t k = 0; k < N_STOP_SIGNALS; k++) sigaction(STOP_SIGNALS[k], &g_before[k], NULL);
    g_path[0] = '\0';
}

void tool_temporary_sweep(const char *path, const char *infix) {
    char dir[4096];
    const char *base = tool_dir_of(path, dir, sizeof dir);
    DIR *d = opendir(dir);
    size_t n = strlen(base), m = strlen(infix);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strncmp(e->d_name, base, n) || strncmp(e->d_name + n, infix, m)) continue;
        char *end;
        long pid = strtol(e->d_name + n + m, &end, 10);
        if (end == e->d_name + n + m || (*end && *end != '.') || pid <= 0) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to know */
        unlinkat(dirfd(d), e->d_name, 0);
    }
    if (d) closedir(d);
}
