/* cmd_record.c - `opprof record`: profile a program without changing it.
 *
 *   opprof record [--memory] [--functions] [--step FUNCTION] [-o DIR] -- CMD [ARGS...]
 *
 * Runs CMD with libopprof_record.so preloaded and OPPROF_TRACE=DIR: its
 * allocations become memory events (--memory) and, when it was compiled with
 * -finstrument-functions, its functions become ranges (--functions); every
 * thread has its own track. DIR appears whole when CMD ends, also by SIGINT
 * or SIGTERM (which reach CMD: opprof waits for it). Then the table of self
 * CPU time is printed on stderr. The exit status is CMD's (128 + N when signal N ended
 * it), 64 on bad usage, 127 when CMD cannot be run. */
#define _GNU_SOURCE
#include "tool.h"

#include "../../src/common/record_files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char HELP[] = "Profile CMD without changing it: libopprof_record.so is preloaded and records\n";

#define RECORD_OPTIONS(X)                                                                                    \
    X(MEMORY, "memory", NULL,                                                                                \
      "every malloc, calloc, realloc, free, aligned allocation and C++ new/delete,\n"                        \
      "attributed to the open range or function (Self CPU Mem, Peak Mem)")                                   \
    X(FUNCTIONS, "functions", NULL,                                                                          \
      "every function of a program compiled with -finstrument-functions, as a\n"                             \
      "range named from its ELF symbols (static functions too); bounded: each\n"                             \
      "function's first 100000 calls are ranges, the rest counted and said at exit\n"                        \
      "(OPPROF_FUNCTION_CALLS=N), a capture holds at most 8388608 ranges in memory\n"                        \
      "(OPPROF_MAX_EVENTS=N, 256 MiB) and its trace the 2000000 longest (--max-events)")                     \
    X(SAMPLE, "sample", "[=HZ[,dwarf]]",                                                                     \
      "sample every thread's native call stack HZ times a second of its CPU\n"                               \
      "time (default 1000; `--sample HZ CMD` too; perf events, no change to CMD;\n"                          \
      "dwarf: unwind a copy of the stack, so that code without frame pointers keeps\n"                       \
      "its callers): the table gains Samples and Top native frame columns and the\n"                         \
      "native functions by samples; times off the CPU too (report --cpu-time,\n"                             \
      "stacks --samples)")                                                                                   \
    X(GGML, "ggml", NULL,                                                                                    \
      "each op of the program's ggml (its CPU backend, built with opprof's hook:\n"                          \
      "src/ggml/ggml-cpu-hook.patch) on the threads that compute it, as the ggml\n"                          \
      "adapter records them (ggml::MUL_MAT, wall time, threads, FLOPs; shapes with\n"                        \
      "--record-shapes); with --step ggml_graph_compute, each graph a step")                                 \
    X(RECORD_SHAPES, "record-shapes", NULL,                                                                  \
      "the input shapes that operators describe (opprof_set_inputs: nn's, the ggml\n"                        \
      "adapter's), the tables' FLOPs from them (OPPROF_RECORD_SHAPES=1)")                                    \
    X(STEP, "step", "FUNCTION",                                                                              \
      "each call of FUNCTION begins a step (ProfilerStep#N; the run before the\n"                            \
      "first call is step 0), so that the flight recorder (OPPROF_FLIGHT) and\n"                             \
      "`diff --stat` see the program's iterations: calls from another object\n"                              \
      "(a shared library's exported function, as llama_decode), or every call with\n"                        \
      "--functions in a program built with -finstrument-functions")                                          \
    X(ROOFLINE, "roofline", NULL,                                                                            \
      "the captures carry this machine's ceilings (FMA peak, each cache level's and\n"                       \
      "DRAM's bandwidth), taken before CMD runs from the user's cache of them, else\n"                       \
      "measured then (about 2 s a thread the first time) and kept: `report --roofline`\n"                    \
      "of the capture then needs no --machine")                                                              \
    X(OUTPUT, "o|output", "DIR", "where the capture goes (a new directory; default opprof-record-TIME)")     \
    X(OUTPUTS, "outputs", "LIST",                                                                            \
      "what each capture becomes: trace, tables, html (default these three),\n"                              \
      "perfetto (trace-step-N.pftrace: Perfetto's native format)")                                           \
    X(NO_HTML, "no-html", NULL, "--outputs trace,tables (the report is most of the exit's work)")            \
    X(GZIP, "gzip", NULL, "the trace gzip-compressed (trace-step-N.json.gz; every opprof command reads it)") \
    X(MAX_EVENTS, "max-events", "N",                                                                         \
      "the trace holds the N longest ranges, with a note (the tables and the report\n"                       \
      "are made from all of them)")                                                                          \
    X(TEXT_1, NULL, NULL,                                                                                    \
      "Ranges of a program linked with opprof are recorded too. DIR holds trace-step-N.json\n"               \
      "(Perfetto), .time.txt and .memory.txt tables and .html, whole or not at all, also when\n"             \
      "SIGINT or SIGTERM ends CMD. The self CPU time table is printed on stderr (CMD's stdout is\n"          \
      "CMD's alone). Its exit status is CMD's (128 + N for signal N).")
TOOL_OPTIONS(RECORD_OPTIONS);

/* --functions' default budgets: ranges held in memory (32 bytes each), and in the trace. */
#define FUNCTIONS_MAX_EVENTS "8388608"
#define FUNCTIONS_TRACE_EVENTS "2000000"

/* A library beside this program's libraries: ../<libdir> of the installed
 * tree, or ../lib of the build tree. */
static int find_library(const char *file, char *out, size_t size) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = '\0';
    static const char *const dirs[] = {OPPROF_RECORD_LIBDIR, "lib"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        snprintf(out, size, "%s/../%s/%s", exe, dirs[i], file);
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
    while (f && fgets(line, sizeof line, f)) fputs(line, stderr); /* CMD's stdout stays CMD's */
    if (f) fclose(f);
}

/* What `opprof record` was asked for. */
typedef struct record_options {
    bool memory, functions, gzip, shapes, ggml, roofline;
    const char *sample_hz;  /* OPPROF_SAMPLE; NULL: no samples */
    const char *outputs;    /* OPPROF_OUTPUTS; NULL: all */
    const char *max_events; /* OPPROF_TRACE_EVENTS; NULL: every event */
    const char *step;       /* OPPROF_STEP_FUNCTION; NULL: no steps of CMD's own */
    char dir[4096];
} record_options;

static bool is_count(const char *s) {
    char *end;
    long long v = strtoll(s, &end, 10);
    return *s && !*end && v >= 1;
}

/* "trace,tables,html" or some of them (what OPPROF_OUTPUTS takes). */
static bool is_output_list(const char *list) {
    if (!*list) return false;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        if (!((n == 5 && !strncmp(p, "trace", 5)) || (n == 6 && !strncmp(p, "tables", 6)) ||
              (n == 4 && !strncmp(p, "html", 4)) || (n == 8 && !strncmp(p, "perfetto", 8))))
            return false;
        p += n + (p[n] == ',');
    }
    return true;
}

/* The options before CMD; an exit status when they are wrong, else -1. */
static int parse(int argc, char **argv, record_options *ro) {
    int c;
    while ((c = tool_next_option_in_order(argc, argv, OPTIONS)) != TOOL_OPTIONS_END) {
        switch (c) {
        case OPT_MEMORY: ro->memory = true; break;
        case OPT_FUNCTIONS: ro->functions = true; break;
        case OPT_OUTPUT: snprintf(ro->dir, sizeof ro->dir, "%s", optarg); break;
        case OPT_OUTPUTS: ro->outputs = optarg; break;
        case OPT_NO_HTML: ro->outputs = "trace,tables"; break;
        case OPT_GZIP: ro->gzip = true; break;
        case OPT_RECORD_SHAPES: ro->shapes = true; break;
        case OPT_GGML: ro->ggml = true; break;
        case OPT_ROOFLINE: ro->roofline = true; break;
        case OPT_STEP:
            if (!*optarg || strpbrk(optarg, " \t\n"))
                return tool_usage_error("record", "--step takes a function's name, not '%s'", optarg);
            ro->step = optarg;
            break;
        case OPT_SAMPLE: {
            int hz;
            bool dwarf;
            ro->sample_hz = optarg ? optarg : "1000";
            /* `--sample 250 CMD` as `perf record -F 250 CMD` has it: a rate, when a command follows */
            if (!optarg && optind + 1 < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9')
                ro->sample_hz = argv[optind++];
            if (opprof_parse_sample(ro->sample_hz, &hz, &dwarf))
                return tool_usage_error(
                    "record", "--sample takes HZ[,fp|dwarf], a rate in Hz from 1 to 1000000, not '%s'", ro->sample_hz);
            break;
        }
        case OPT_MAX_EVENTS:
            if (!is_count(optarg))
                return tool_usage_error("record", "--max-events takes a number >= 1, not '%s'", optarg);
            ro->max_events = optarg;
            break;
        default: fputs("Run 'opprof record --help' for the options.\n", stderr); return TOOL_EXIT_USAGE;
        }
    }
    if (ro->outputs && !is_output_list(ro->outputs))
        return tool_usage_error("record", "--outputs takes a list of trace, tables, html, perfetto, not '%s'",
                                ro->outputs);
    if (optind >= argc) {
        fprintf(stderr, "opprof record: no command to run (opprof record [options] -- CMD [ARGS...])\n");
        return TOOL_EXIT_USAGE;
    }
    if (!ro->dir[0]) {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(ro->dir, sizeof ro->dir, "opprof-record-%Y%m%d-%H%M%S", &tm);
    }
    struct stat st;
    char child[sizeof ro->dir + 16]; /* where a child of CMD's capture goes (src/common/record_files.h) */
    snprintf(child, sizeof child, "%s" RECORD_CHILD_SUFFIX, ro->dir);
    const char *there = lstat(ro->dir, &st) == 0 ? ro->dir : lstat(child, &st) == 0 ? child : NULL;
    if (there) {
        fprintf(stderr, "opprof record: '%s' exists; name a new directory with -o (nothing was run)\n", there);
        return TOOL_EXIT_USAGE;
    }
    return -1;
}

/* In the child: the environment of OPPROF_TRACE and the preload, then CMD.
 * `said`: a close-on-exec pipe that learns, by a byte, that CMD could not run
 * (CMD never sees it). */
static void run_child(const record_options *ro, const char *ld_preload, char **cmd, int said, const char *exited,
                      const char *machine) {
    char dir[sizeof ro->dir + 4096]; /* absolute: a wrapper that changes directory writes where record looks */
    record_absolute_dir(ro->dir, dir, sizeof dir);
    setenv("OPPROF_TRACE", dir, 1);
    if (machine[0]) setenv("OPPROF_MACHINE_FILE", machine, 1); /* --roofline: the captures carry it */
    setenv("LD_PRELOAD", ld_preload, 1);
    char pid[24]; /* the process profiled, across the execs of a wrapper (src/preload/exec.c) */
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    setenv("OPPROF_RECORD_PID", pid, 1);
    if (exited[0]) setenv("OPPROF_RECORD_EXITED", exited, 1); /* the preload writes it when CMD's exit handlers run */
    setenv("OPPROF_RECORD_MEMORY", ro->memory ? "1" : "0", 1);
    setenv("OPPROF_RECORD_FUNCTIONS", ro->functions ? "1" : "0", 1);
    if (ro->outputs) setenv("OPPROF_OUTPUTS", ro->outputs, 1);
    if (ro->gzip) setenv("OPPROF_GZIP", "1", 1);
    if (ro->sample_hz) setenv("OPPROF_SAMPLE", ro->sample_hz, 1);
    if (ro->max_events) setenv("OPPROF_TRACE_EVENTS", ro->max_events, 1);
    if (ro->functions) { /* bounded by default, in memory and on disk; the user's own values stand */
        setenv("OPPROF_MAX_EVENTS", FUNCTIONS_MAX_EVENTS, 0);
        if (!ro->max_events) setenv("OPPROF_TRACE_EVENTS", FUNCTIONS_TRACE_EVENTS, 0);
    }
    if (ro->step) setenv("OPPROF_STEP_FUNCTION", ro->step, 1);
    if (ro->shapes) setenv("OPPROF_RECORD_SHAPES", "1", 1);
    execvp(cmd[0], cmd);
    fprintf(stderr, "opprof record: cannot run '%s': %s\n", cmd[0], strerror(errno));
    if (write(said, "x", 1) < 0) { /* the parent then says that no capture was written too: no worse */
    }
    _exit(TOOL_EXIT_CANNOT_RUN);
}

/* --roofline: this machine's ceilings, before CMD runs (from the user's cache,
 * else measured and kept: opprof_machine_cached), into a file of their own
 * that the captures copy (OPPROF_MACHINE_FILE); said on stderr. */
static int machine_file(char *path, size_t size) {
    opprof_machine m;
    char said[4400];
    cpu_set_t set; /* the CPUs CMD may run on (taskset): its threads' roofs */
    long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cpus < 1 ? 1 : cpus > OPPROF_MACHINE_MAX_THREADS ? OPPROF_MACHINE_MAX_THREADS : (int)cpus;
    int rc = opprof_machine_cached(threads, &m, said, sizeof said);
    if (rc) {
        fprintf(stderr, "opprof record: --roofline: the ceilings could not be measured: %s (nothing was run)\n",
                opprof_strerror(rc));
        return rc;
    }
    fprintf(stderr, "opprof record: %s\n", said);
    char *json = NULL;
    snprintf(path, size, "/tmp/opprof-record-machine-XXXXXX");
    int fd = mkstemp(path);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
    rc = !f ? -errno : opprof_machine_json_to_string(&m, &json) ? OPPROF_ENOMEM : fputs(json, f) < 0 ? OPPROF_EIO : 0;
    if (f && fclose(f) != 0 && !rc) rc = -errno;
    if (!f && fd >= 0) close(fd);
    opprof_free(json);
    if (rc) {
        fprintf(stderr, "opprof record: --roofline: cannot write '%s': %s (nothing was run)\n", path,
                opprof_strerror(rc));
        if (fd >= 0) unlink(path);
        path[0] = '\0';
    }
    return rc;
}

/* CMD's file, as execvp would find it (PATH when it names no directory). */
static bool find_program(const char *cmd, char *path, size_t size) {
    if (strchr(cmd, '/')) return snprintf(path, size, "%s", cmd) < (int)size;
    const char *dirs = getenv("PATH");
    for (const char *p = dirs ? dirs : "/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(path, size, "%.*s/%s", (int)n, n ? p : ".", cmd);
        if (access(path, X_OK) == 0) return true;
        p += n + (p[n] == ':');
    }
    return false;
}

/* A setuid or setgid program of another user runs with LD_PRELOAD and every OPPROF_ variable
 * ignored (the loader's rule, and opprof's): say so, then run it as asked. */
static void say_if_setuid(const char *cmd) {
    char path[4096];
    struct stat st;
    if (!find_program(cmd, path, sizeof path) || stat(path, &st) != 0) return;
    bool secure =
        ((st.st_mode & S_ISUID) && st.st_uid != getuid()) || ((st.st_mode & S_ISGID) && st.st_gid != getgid());
    if (secure) /* the kernel runs it as another user: AT_SECURE */
        fprintf(stderr,
                "opprof record: '%s' is setuid or setgid: the loader ignores LD_PRELOAD for it and opprof "
                "ignores OPPROF_TRACE, so nothing of it can be recorded (profile a copy without the bit)\n",
                path);
}

/* A child's capture directory at `level` (DIR + RECORD_CHILD_SUFFIX, level times) into out. */
static void child_dir(const record_options *ro, int level, char *out, size_t size) {
    size_t n = (size_t)snprintf(out, size, "%s", ro->dir);
    for (int k = 0; k < level && n < size; k++) n += (size_t)snprintf(out + n, size - n, "%s", RECORD_CHILD_SUFFIX);
}

/* DIR is not there, but the capture of the program that a child of CMD ran
 * is (CMD ended before it could take it, by _exit or a signal; or one level
 * below, where that child was a wrapper too: the shallowest there): it
 * becomes DIR, and CMD's own twin goes when empty. True when it did.
 * (Before the children are named.) */
static bool keep_child_capture(const record_options *ro, pid_t pid) {
    char child[sizeof ro->dir + 16 * RECORD_LEVELS], twin[sizeof ro->dir + 32];
    bool kept = false;
    for (int level = 1; level <= RECORD_LEVELS && !kept; level++) {
        child_dir(ro, level, child, sizeof child);
        kept = renameat2(AT_FDCWD, child, AT_FDCWD, ro->dir, RENAME_NOREPLACE) == 0;
    }
    if (!kept) return false;
    snprintf(twin, sizeof twin, "%s.opprof-%ld", ro->dir, (long)pid);
    rmdir(twin);
    return true; /* said by say_children_ran */
}

/* The empty twins that children which took a profile of their own left
 * (DIR.opprof-child.opprof-PID, or a level below: a shell's session, ended
 * by _exit) go once the run is over; one that holds files stays. */
static void remove_children_twins(const record_options *ro) {
    char dir[sizeof ro->dir], path[sizeof ro->dir + 512], prefix[512];
    snprintf(prefix, sizeof prefix, "%s", tool_dir_of(ro->dir, dir, sizeof dir));
    size_t n = strlen(prefix), k = strlen(RECORD_CHILD_SUFFIX);
    DIR *d = opendir(dir);
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        const char *at = e->d_name + n;
        if (strncmp(e->d_name, prefix, n) || strncmp(at, RECORD_CHILD_SUFFIX, k)) continue;
        while (!strncmp(at, RECORD_CHILD_SUFFIX, k)) at += k;
        if (strncmp(at, ".opprof-", 8) || at[8] < '0' || at[8] > '9') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        rmdir(path);
    }
    if (d) closedir(d);
}

/* The first line of EXITED + suffix (src/common/record_files.h) into
 * `first`, the file removed; the number of lines; *moved: one is
 * RECORD_MOVED_LINE; *nothing: one is RECORD_NOTHING_LINE. */
static size_t read_record_file(const char *exited, const char *suffix, char *first, size_t size, bool *moved,
                               bool *nothing) {
    char path[128];
    snprintf(path, sizeof path, "%s%s", exited, suffix);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = 0, k = strlen(RECORD_EXEC_LINE);
    char original[256] = "";
    for (char line[4096]; fgets(line, sizeof line, f); n++) {
        if (!n) snprintf(first, size, "%.*s", (int)strcspn(line, "\n"), line);
        if (!n) snprintf(original, sizeof original, "%s", first);
        if (n && !strncmp(line, RECORD_EXEC_LINE, k)) /* the claim's holder exec'd it: the last one named */
            snprintf(first, size, "%.*s (exec'd by %s)", (int)strcspn(line + k, "\n"), line + k, original);
        if (moved && !strcmp(line, RECORD_MOVED_LINE)) *moved = true;
        if (nothing && !strcmp(line, RECORD_NOTHING_LINE)) *nothing = true;
    }
    fclose(f);
    unlink(path);
    return n;
}

/* What a level's claim file says: the program that took the profile there,
 * whether its capture was moved up (RECORD_MOVED_LINE) or there was none
 * (RECORD_NOTHING_LINE). */
typedef struct took_level {
    char name[256];
    size_t lines;
    bool moved, nothing;
    char dropped[256]; /* the first program whose capture was dropped at this level */
    size_t n_dropped;
    char unsaved[256]; /* one that took the profile after the kept one and never saved */
} took_level;

/* What record's files say of `level` (record_files.h), read and removed:
 * the claim still held, else the one kept, else the last given back; and
 * the programs whose captures were dropped. */
static void read_level(const char *exited, int level, took_level *l) {
    char given_back[64], kept_as[64], dropped_as[64];
    snprintf(given_back, sizeof given_back, "%s%s", record_took_suffix(level), RECORD_GIVEN_BACK_SUFFIX);
    snprintf(kept_as, sizeof kept_as, "%s%s", record_took_suffix(level), RECORD_KEPT_SUFFIX);
    snprintf(dropped_as, sizeof dropped_as, "%s%s", record_took_suffix(level), RECORD_DROPPED_SUFFIX);
    took_level back = {0}, kept = {0};
    back.lines = read_record_file(exited, given_back, back.name, sizeof back.name, NULL, &back.nothing);
    kept.lines = read_record_file(exited, kept_as, kept.name, sizeof kept.name, &kept.moved, NULL);
    l->lines = read_record_file(exited, record_took_suffix(level), l->name, sizeof l->name, &l->moved, &l->nothing);
    if (l->lines && kept.lines) /* it holds the claim still: ended without its exit handlers */
        snprintf(kept.unsaved, sizeof kept.unsaved, "%s", l->name);
    if (!l->lines || kept.lines) *l = kept.lines ? kept : back;
    l->n_dropped = read_record_file(exited, dropped_as, l->dropped, sizeof l->dropped, NULL, NULL);
    char set_aside[128]; /* a claim whose holder had ended, taken in turn: the level above settled it */
    snprintf(set_aside, sizeof set_aside, "%s%s%s", exited, record_took_suffix(level), RECORD_EXITED_SUFFIX);
    unlink(set_aside);
}

/* The programs of the levels above `level`, as ", through sh, bash" says them, into out. */
static void through(const took_level *lv, int level, char *out, size_t size) {
    size_t n = 0;
    out[0] = '\0';
    for (int k = 1; k < level && n < size; k++)
        n += (size_t)snprintf(out + n, size - n, "%s%s", k == 1 ? " (through " : ", ", lv[k].name);
    if (level > 1 && n < size) snprintf(out + n, size - n, ")");
}

/* The programs that CMD's children ran: the first one at each level took a
 * profile of its own (a wrapper that forks: `time prog`; one within it:
 * `timeout 60 sh -c prog`), whose capture autostart put in DIR's place, or
 * left beside, or which recorded nothing but its steps; the others are not
 * profiled. True when it said why DIR is no child's (one recorded nothing). */
static bool say_children_ran(const char *exited, const record_options *ro, const char *cmd, bool adopted) {
    took_level lv[RECORD_LEVELS + 1] = {0};
    char ran[256] = "", child[sizeof ro->dir + 16 * RECORD_LEVELS], via[1100];
    struct stat st;
    bool any_moved = adopted, said_nothing = false, dir_there = stat(ro->dir, &st) == 0;
    int into_dir = 0;         /* the deepest level whose capture is DIR now */
    bool left_beside = false; /* a level's capture stayed beside DIR: none below it went further up */
    for (int k = 1; k <= RECORD_LEVELS; k++) {
        took_level *l = &lv[k];
        read_level(exited, k, l);
        any_moved |= l->moved;
        child_dir(ro, k, child, sizeof child);
        left_beside |= lstat(child, &st) == 0;
        if (l->lines && !l->nothing && !left_beside) into_dir = k;
    }
    size_t ran_n = read_record_file(exited, RECORD_RAN_SUFFIX, ran, sizeof ran, NULL, NULL);
    bool wrappers_own = dir_there && !any_moved; /* CMD wrote DIR itself */
    for (int k = 1; k <= RECORD_LEVELS; k++) {
        if (!lv[k].lines) continue;
        through(lv, k, via, sizeof via);
        child_dir(ro, k, child, sizeof child);
        if (lv[k].nothing) {
            fprintf(stderr,
                    "opprof record: %s ran %s in a child process%s, which took the profile and recorded nothing but "
                    "its steps, so it left no capture%s%s%s: opprof sees into a program that calls it (OPPROF_ "
                    "macros, nn, ggml with --ggml) and, with --sample, --memory or --functions, into any\n",
                    cmd, lv[k].name, via, wrappers_own ? " (the one in '" : "", wrappers_own ? ro->dir : "",
                    wrappers_own ? "' is the wrapper's own)" : "");
            said_nothing = true;
        } else if (lstat(child, &st) == 0) {
            fprintf(stderr, "opprof record: %s ran %s in a child process%s, whose capture is '%s'\n", cmd, lv[k].name,
                    via, child);
        } else if (k == into_dir && any_moved && dir_there) {
            fprintf(stderr, "opprof record: the capture in '%s' is that of %s, which %s ran in a child process%s\n",
                    ro->dir, lv[k].name, cmd, via);
        }
        if (lv[k].unsaved[0])
            fprintf(stderr,
                    "opprof record: %s, which %s ran after it%s, took the profile in turn and ended without its exit "
                    "handlers (by a signal, or _exit), so it left no capture\n",
                    lv[k].unsaved, cmd, via);
        if (lv[k].n_dropped && !lv[k].nothing)
            fprintf(stderr,
                    "opprof record: %zu other program(s) that %s ran one after another in child processes%s took the "
                    "profile in turn and less CPU time than %s (the first: %s): their captures were dropped\n",
                    lv[k].n_dropped, cmd, via, lv[k].name, lv[k].dropped);
    }
    if (ran_n)
        fprintf(stderr,
                "opprof record: %zu %sprogram(s) ran in child processes under %s (the first: %s), which are not "
                "profiled: record profiles the program it starts, what that program execs (env, taskset, sh -c "
                "'exec prog') and, of the programs that its children run one after another, the one that takes "
                "the most CPU time (time prog; sh -c 'date; prog'), or theirs (timeout sh -c prog); a program "
                "started while another held the profile runs without; to profile another, put record inside the "
                "wrapper (sh -c 'a; opprof record -- prog')\n",
                ran_n, lv[1].lines ? "more " : "", cmd, ran);
    return said_nothing && !dir_there;
}

/* Why CMD left no capture, each cause its own words. `started`: its session
 * made its directory (so the preload was loaded). */
static void say_lost(const record_options *ro, const char *cmd, int status, bool started, bool exited) {
    const char *flight = getenv("OPPROF_FLIGHT");
    if (WIFSIGNALED(status))
        fprintf(stderr,
                "opprof record: %s was killed by SIG%s: its exit handlers did not run, so the capture being "
                "recorded is lost (nothing was written into '%s')\n",
                cmd, sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?", ro->dir);
    else if (exited && flight &&
             *flight) /* the flight recorder said why it saved nothing (no trigger, a bad setting) */
        return;
    else if (exited) /* its exit handlers ran: opprof said why above (nothing recorded, OPPROF_TRACE ignored) */
        fprintf(stderr, "opprof record: %s ended normally and wrote no capture into '%s': opprof's reason is above\n",
                cmd, ro->dir);
    else if (started)
        fprintf(stderr,
                "opprof record: %s wrote no capture into '%s': it ended by _exit (a shell does: `sh -c "
                "'exec PROG'` hands PROG the profile)\n",
                cmd, ro->dir);
    else
        fprintf(stderr,
                "opprof record: %s wrote no capture into '%s': it never loaded libopprof_record.so (it is "
                "statically linked, or setuid) or ended by _exit before its start\n",
                cmd, ro->dir);
}

/* CMD ended without its exit handlers (by _exit, by SIGKILL, or never
 * loading the preload: a static binary). OPPROF_TRACE's twin DIR.opprof-PID
 * may hold the captures of steps already saved, each file whole: they become
 * DIR; an empty twin is removed. True when DIR is there now. */
static bool keep_twin(const record_options *ro, pid_t pid, const char *cmd, int status, bool exited, bool said) {
    char twin[4200];
    snprintf(twin, sizeof twin, "%s.opprof-%ld", ro->dir, (long)pid);
    DIR *d = opendir(twin);
    size_t files = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) files += e->d_name[0] != '.';
    if (d) closedir(d);
    if (d && files && renameat2(AT_FDCWD, twin, AT_FDCWD, ro->dir, RENAME_NOREPLACE) == 0) {
        fprintf(stderr,
                "opprof record: %s ended without its exit handlers (by _exit or SIGKILL): the capture being "
                "recorded is lost; the %zu file(s) of the steps saved before are in '%s'\n",
                cmd, files, ro->dir);
        return true;
    }
    if (d && !files) rmdir(twin);
    if (!said) say_lost(ro, cmd, status, d != NULL, exited);
    return false;
}

static int run(int argc, char **argv) {
    record_options ro = {0};
    int bad = parse(argc, argv, &ro);
    if (bad >= 0) return bad;
    say_if_setuid(argv[optind]);
    char preload[4300], ggml[4300] = "";
    if (find_library("libopprof_record.so", preload, sizeof preload)) {
        fprintf(stderr, "opprof record: libopprof_record.so not found beside this opprof's libraries\n");
        return TOOL_EXIT_CANNOT_RUN;
    }
    if (ro.ggml && find_library("libopprof_ggml_record.so", ggml, sizeof ggml)) {
        fprintf(stderr, "opprof record: --ggml: libopprof_ggml_record.so not found beside this opprof's libraries "
                        "(opprof built with -DOPPROF_GGML=OFF?)\n");
        return TOOL_EXIT_CANNOT_RUN;
    }
    const char *old = getenv("LD_PRELOAD");
    char ld_preload[13200];
    snprintf(ld_preload, sizeof ld_preload, "%s%s%s%s%s", preload, ggml[0] ? ":" : "", ggml, old && *old ? ":" : "",
             old && *old ? old : "");
    int said[2];
    if (pipe2(said, O_CLOEXEC) != 0) {
        fprintf(stderr, "opprof record: cannot make a pipe: %s\n", strerror(errno));
        return TOOL_EXIT_CANNOT_RUN;
    }
    char machine[64] = "";
    if (ro.roofline && machine_file(machine, sizeof machine)) {
        close(said[0]);
        close(said[1]);
        return TOOL_EXIT_FAILED;
    }
    char exited[64] = "/tmp/opprof-record-exited-XXXXXX"; /* empty: CMD ended without its exit handlers */
    int efd = mkstemp(exited);
    if (efd < 0)
        exited[0] = '\0';
    else
        close(efd);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "opprof record: cannot fork: %s\n", strerror(errno));
        close(said[0]);
        close(said[1]);
        return TOOL_EXIT_CANNOT_RUN;
    }
    if (pid == 0) run_child(&ro, ld_preload, argv + optind, said[1], exited, machine);
    close(said[1]);
    /* SIGINT and SIGTERM sent to opprof are passed on (CMD saves DIR on either;
     * from a terminal it gets SIGINT twice, which changes nothing) */
    g_child = pid;
    signal(SIGINT, forward);
    signal(SIGTERM, forward);
    /* what record says next goes where CMD's stderr went: a pipe that nobody
     * reads any more (`2>&1 | head`) fails the write, and the exit status
     * stays CMD's (not set before the fork: CMD would inherit it) */
    signal(SIGPIPE, SIG_IGN);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    char byte;
    ssize_t got;
    while ((got = read(said[0], &byte, 1)) < 0 && errno == EINTR) {}
    close(said[0]);
    struct stat st;
    bool handlers_ran = exited[0] && stat(exited, &st) == 0 && st.st_size > 0;
    bool adopted = got != 1 && stat(ro.dir, &st) != 0 && keep_child_capture(&ro, pid);
    bool explained = exited[0] && say_children_ran(exited, &ro, argv[optind], adopted);
    if (exited[0]) unlink(exited);
    remove_children_twins(&ro);
    if (machine[0]) unlink(machine);
    if (got == 1) return TOOL_EXIT_CANNOT_RUN; /* CMD never ran: said already, nothing to keep */
    if (stat(ro.dir, &st) == 0 || keep_twin(&ro, pid, argv[optind], status, handlers_ran, explained))
        print_table(ro.dir);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : TOOL_EXIT_CANNOT_RUN;
}

static const char EXAMPLES[] =
    "  opprof record -- ./program args                    # ranges of a program linked with opprof\n"
    "  opprof record --sample -o DIR -- ./program         # where the time goes, native functions\n"
    "  opprof record --memory --functions -- ./instrumented   # built with -finstrument-functions\n"
    "  opprof record --ggml --step llama_decode -- ./llama-cli -m model.gguf   # llama.cpp, unchanged\n";

TOOL_COMMAND(record, "record [OPTIONS] -- CMD [ARGS...]",
             "profile a program without changing it (--memory, --functions, --sample, --ggml)", NULL);
