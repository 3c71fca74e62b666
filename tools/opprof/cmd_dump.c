/* cmd_dump.c - `opprof dump PID`: a running OPPROF_TRACE program's flight
 * recorder saves the steps it holds. The program's environment says whether
 * it has one, its dump signal and its directory (a signal sent to a program
 * without the recorder would end it, so dump refuses); dump sends the signal
 * and waits until the save is in the directory, then names its files. */
#define _GNU_SOURCE
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char HELP[] = "Ask the flight recorder of a running program (started with OPPROF_TRACE=DIR and\n"
                           "OPPROF_FLIGHT=N) to save the steps it holds: dump sends the program its dump signal\n"
                           "(OPPROF_FLIGHT_SIGNAL, SIGUSR2 by default), waits until the save is in DIR, and prints\n"
                           "its files. A program without a flight recorder is refused, never signalled.\n";

#define DUMP_OPTIONS(X) X(TIMEOUT, "timeout", "DUR", "how long to wait for the save (default 10s)")
TOOL_OPTIONS(DUMP_OPTIONS);

typedef struct target {
    char flight[64], signal[32], dir[4096], cwd[4096];
    bool has_flight, has_trace;
} target;

/* The program's environment at its start: /proc/PID/environ. */
static int read_target(long pid, target *t) {
    char path[64], *env = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    FILE *f = fopen(path, "re");
    if (!f) return -errno;
    size_t cap = 0;
    int err = 0;
    for (int c; !err && (c = getc(f)) != EOF;) {
        if (len + 1 >= cap) {
            char *grown = realloc(env, cap = cap ? cap * 2 : 65536);
            if (!grown)
                err = -ENOMEM;
            else
                env = grown;
        }
        if (!err) env[len++] = (char)c;
    }
    if (!err && ferror(f)) err = -EIO;
    fclose(f);
    if (env) env[len] = '\0'; /* the last variable ends too */
    for (size_t i = 0; !err && i < len; i += strlen(env + i) + 1) {
        const char *v = env + i;
        if (!strncmp(v, "OPPROF_FLIGHT=", 14)) t->has_flight = snprintf(t->flight, sizeof t->flight, "%s", v + 14) >= 0;
        if (!strncmp(v, "OPPROF_FLIGHT_SIGNAL=", 21)) snprintf(t->signal, sizeof t->signal, "%s", v + 21);
        if (!strncmp(v, "OPPROF_TRACE=", 13)) t->has_trace = snprintf(t->dir, sizeof t->dir, "%s", v + 13) >= 0;
    }
    free(env);
    snprintf(path, sizeof path, "/proc/%ld/cwd", pid);
    ssize_t n = readlink(path, t->cwd, sizeof t->cwd - 1);
    t->cwd[n > 0 ? n : 0] = '\0';
    return err;
}

/* Whether process pid catches sig (/proc/PID/status, SigCgt): the flight
 * recorder catches its dump signal once it has started; a program whose
 * recorder did not start (a bad OPPROF_FLIGHT_TRIGGER, an existing DIR)
 * would be ended by it. */
static bool catches(long pid, int sig) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", pid);
    FILE *f = fopen(path, "re");
    unsigned long long mask = 0;
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f)) found = sscanf(line, "SigCgt: %llx", &mask) == 1;
    if (f) fclose(f);
    return found && sig >= 1 && sig <= 64 && (mask >> (sig - 1) & 1);
}

/* The highest save number K of DIR's flight-K-... files, and whether one is being written. */
static int last_save(const char *dir, bool *writing) {
    int last = 0;
    *writing = false;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        int k;
        if (sscanf(e->d_name, "flight-%d-", &k) == 1 && k > last) last = k;
        if (strstr(e->d_name, ".tmp.")) *writing = true;
    }
    if (d) closedir(d);
    return last;
}

static void print_save(const char *dir, int k) {
    char prefix[32];
    snprintf(prefix, sizeof prefix, "flight-%03d-", k);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (!strncmp(e->d_name, prefix, strlen(prefix))) printf("%s/%s\n", dir, e->d_name);
    if (d) closedir(d);
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Wait for a save numbered above `before` and for its files to be whole. */
static int wait_save(const char *dir, int before, int64_t timeout_ns) {
    int64_t until = now_ns() + timeout_ns, quiet_since = 0;
    struct timespec pause = {0, 5000000};
    for (;;) {
        bool writing;
        int last = last_save(dir, &writing);
        if (last > before && !writing) {
            if (!quiet_since) quiet_since = now_ns();
            if (now_ns() - quiet_since >= 200000000) return last; /* its other files written too */
        } else {
            quiet_since = 0;
        }
        if (now_ns() > until) return last > before ? last : 0;
        nanosleep(&pause, NULL);
    }
}

static int run(int argc, char **argv) {
    int64_t timeout = 10000000000;
    for (int c; (c = tool_next_option(argc, argv, OPTIONS)) != TOOL_OPTIONS_END;) {
        if (c != OPT_TIMEOUT) return TOOL_EXIT_USAGE;
        if (opprof_parse_duration_ns(optarg, &timeout) || timeout <= 0)
            return tool_usage_error("dump", "--timeout takes a duration (\"10s\", \"500ms\"), not '%s'", optarg);
    }
    if (optind != argc - 1) return tool_usage_error("dump", "dump takes one PID");
    char *end;
    long pid = strtol(argv[optind], &end, 10);
    if (!*argv[optind] || *end || pid < 1) return tool_usage_error("dump", "'%s' is not a process id", argv[optind]);
    target t = {0};
    int rc = read_target(pid, &t);
    if (rc == -ENOENT) return fprintf(stderr, "opprof: dump: no process %ld\n", pid), TOOL_EXIT_FAILED;
    if (rc) {
        fprintf(stderr, "opprof: dump: cannot read the environment of process %ld: %s\n", pid, opprof_strerror(rc));
        return TOOL_EXIT_UNREADABLE;
    }
    if (!t.has_flight || !t.has_trace) {
        fprintf(stderr,
                "opprof: dump: process %ld has no flight recorder (its environment has no %s): it is not "
                "signalled, as the signal could end it\n",
                pid, t.has_trace ? "OPPROF_FLIGHT" : "OPPROF_TRACE");
        return TOOL_EXIT_FAILED;
    }
    int sig = SIGUSR2;
    if (t.signal[0] && (opprof_parse_dump_signal(t.signal, &sig) || sig == 0)) {
        fprintf(stderr, "opprof: dump: process %ld takes no dump signal (OPPROF_FLIGHT_SIGNAL=%s)\n", pid, t.signal);
        return TOOL_EXIT_FAILED;
    }
    if (!catches(pid, sig)) {
        fprintf(stderr,
                "opprof: dump: process %ld does not catch %s, so its flight recorder did not start (see its "
                "stderr: a bad OPPROF_FLIGHT or OPPROF_FLIGHT_TRIGGER, or an existing DIR): it is not "
                "signalled, as the signal would end it\n",
                pid, strsignal(sig));
        return TOOL_EXIT_FAILED;
    }
    char dir[8200];
    snprintf(dir, sizeof dir, "%s%s%s", t.dir[0] == '/' ? "" : t.cwd, t.dir[0] == '/' ? "" : "/", t.dir);
    bool writing;
    int before = last_save(dir, &writing);
    if (kill((pid_t)pid, sig) != 0) {
        fprintf(stderr, "opprof: dump: cannot signal process %ld: %s\n", pid, strerror(errno));
        return TOOL_EXIT_FAILED;
    }
    int k = wait_save(dir, before, timeout);
    if (!k) {
        fprintf(stderr,
                "opprof: dump: no save appeared in %s within %.1f s (a dump saves the steps that have "
                "ended: has the program ended one?)\n",
                dir, (double)timeout / 1e9);
        return TOOL_EXIT_FAILED;
    }
    print_save(dir, k);
    return TOOL_EXIT_OK;
}

static const char EXAMPLES[] =
    "  opprof dump 12345                        # save the steps that PID's flight recorder holds\n"
    "  opprof dump 12345 --timeout 5s\n";

TOOL_COMMAND(dump, "dump PID [OPTIONS]",
             "save the steps that a running program's flight recorder holds (OPPROF_FLIGHT)", NULL);
