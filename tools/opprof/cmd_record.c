/* cmd_record.c - `opprof record`: profile a program without changing it.
 *
 *   opprof record [--memory] [--functions] [-o DIR] -- CMD [ARGS...]
 *
 * Runs CMD with libopprof_record.so preloaded and OPPROF_TRACE=DIR: its
 * allocations become memory events (--memory) and, when it was compiled with
 * -finstrument-functions, its functions become ranges (--functions); every
 * thread has its own track. DIR appears whole when CMD ends, also by SIGINT
 * or SIGTERM (which reach CMD: opprof waits for it). Then the table of self
 * CPU time is printed. The exit status is CMD's (128 + N when signal N ended
 * it), 64 on bad usage, 127 when CMD cannot be run. */
#define _GNU_SOURCE
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char HELP[] =
    "Profile CMD without changing it: libopprof_record.so is preloaded and records\n"
    "  --memory     every malloc, calloc, realloc, free, aligned allocation and C++ new/delete,\n"
    "               attributed to the open range or function (Self CPU Mem, Peak Mem)\n"
    "  --functions  every function of a program compiled with -finstrument-functions, as a\n"
    "               range named from its ELF symbols (static functions too)\n"
    "  -o DIR       where the capture goes (a new directory; default opprof-record-TIME)\n"
    "Ranges of a program linked with opprof are recorded too. DIR holds trace-step-N.json\n"
    "(Perfetto), .time.txt and .memory.txt tables and .html, whole or not at all, also when\n"
    "SIGINT or SIGTERM ends CMD. Its exit status is CMD's (128 + N for signal N).\n";

/* libopprof_record.so beside this program's libraries: ../<libdir> of the
 * installed tree, or ../lib of the build tree. */
static int find_preload(char *out, size_t size) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    static const char *const dirs[] = {OPPROF_RECORD_LIBDIR, "lib"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        snprintf(out, size, "%s/../%s/libopprof_record.so", exe, dirs[i]);
        if (access(out, R_OK) == 0) return 0;
    }
    return -1;
}

static volatile sig_atomic_t g_child;

static void forward(int sig) {
    if (g_child > 0) kill((pid_t)g_child, sig);
}

/* The self-CPU-time table of the capture in DIR (the last step's: names
 * compare as strings, and steps as numbers, so the longest then greatest). */
static void print_table(const char *dir) {
    DIR *d = opendir(dir);
    char last[512] = "";
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        size_t n = strlen(e->d_name), m = strlen(last);
        if (strstr(e->d_name, ".time.txt") && (n > m || (n == m && strcmp(e->d_name, last) > 0)))
            snprintf(last, sizeof last, "%s", e->d_name);
    }
    if (d) closedir(d);
    if (!last[0]) return;
    char path[4600];
    snprintf(path, sizeof path, "%s/%s", dir, last);
    FILE *f = fopen(path, "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) fputs(line, stdout);
    if (f) fclose(f);
}

static int run(int argc, char **argv) {
    static const struct option longs[] = {{"memory", no_argument, 0, 'm'},
                                          {"functions", no_argument, 0, 'f'},
                                          {"output", required_argument, 0, 'o'},
                                          {0, 0, 0, 0}};
    bool memory = false, functions = false;
    char dir[4096] = "";
    int c;
    while ((c = getopt_long(argc, argv, "+o:", longs, NULL)) != -1) {
        switch (c) {
        case 'm': memory = true; break;
        case 'f': functions = true; break;
        case 'o': snprintf(dir, sizeof dir, "%s", optarg); break;
        default: fputs("Run 'opprof record --help' for the options.\n", stderr); return TOOL_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "opprof record: no command to run (opprof record [options] -- CMD [ARGS...])\n");
        return TOOL_EXIT_USAGE;
    }
    if (!dir[0]) {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(dir, sizeof dir, "opprof-record-%Y%m%d-%H%M%S", &tm);
    }
    struct stat st;
    if (lstat(dir, &st) == 0) {
        fprintf(stderr, "opprof record: '%s' exists; name a new directory with -o (nothing was run)\n", dir);
        return TOOL_EXIT_USAGE;
    }
    char preload[4300];
    if (find_preload(preload, sizeof preload)) {
        fprintf(stderr, "opprof record: libopprof_record.so not found beside this opprof's libraries\n");
        return TOOL_EXIT_CANNOT_RUN;
    }
    const char *old = getenv("LD_PRELOAD");
    char ld_preload[8800];
    snprintf(ld_preload, sizeof ld_preload, "%s%s%s", preload, old && *old ? ":" : "", old && *old ? old : "");

    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "opprof record: cannot fork: %s\n", strerror(errno));
        return TOOL_EXIT_CANNOT_RUN;
    }
    if (pid == 0) {
        setenv("OPPROF_TRACE", dir, 1);
        setenv("LD_PRELOAD", ld_preload, 1);
        setenv("OPPROF_RECORD_MEMORY", memory ? "1" : "0", 1);
        setenv("OPPROF_RECORD_FUNCTIONS", functions ? "1" : "0", 1);
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "opprof record: cannot run '%s': %s\n", argv[optind], strerror(errno));
        _exit(TOOL_EXIT_CANNOT_RUN);
    }
    /* SIGINT and SIGTERM sent to opprof are passed on (CMD saves DIR on either;
     * from a terminal it gets SIGINT twice, which changes nothing) */
    g_child = pid;
    signal(SIGINT, forward);
    signal(SIGTERM, forward);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (stat(dir, &st) == 0)
        print_table(dir);
    else
        fprintf(stderr, "opprof record: %s wrote no capture into '%s': a statically linked program does not load "
                        "libopprof_record.so (link it dynamically), and a program killed by SIGKILL saves "
                        "nothing\n", argv[optind], dir);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : TOOL_EXIT_CANNOT_RUN;
}

TOOL_COMMAND(record, "record [--memory] [--functions] [-o DIR] -- CMD [ARGS...]",
             "profile a program without changing it (--memory, --functions)", NULL);
