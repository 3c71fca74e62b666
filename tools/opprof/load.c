/* load.c - reading a trace for a command of tools/opprof/: a progress bar
 * on a terminal for large files, the reader's problems counted and the first
 * one said, and the reasons a file cannot be written. */
#define _GNU_SOURCE
#include "tool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- progress on stderr, for large files on a terminal ---- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tool_on_progress(void *ctx, int64_t done, int64_t total) {
    tool_progress *pr = ctx;
    if (!pr->enabled || total <= 0) return;
    int width = 30, filled = (int)((double)done / (double)total * width);
    if (filled > width) filled = width;
    double rate = (double)done / 1e6 / (now_s() - pr->started + 1e-9);
    fprintf(stderr, "\r%s [%.*s%*s] %3d%% %.0f MB/s", pr->path, filled, "##############################",
            width - filled, "", (int)(100.0 * (double)done / (double)total), rate);
    if (done >= total) fprintf(stderr, "\n");
}

void tool_progress_init(tool_progress *pr, const char *path) {
    struct stat st;
    pr->path = path;
    pr->enabled = isatty(2) && stat(path, &st) == 0 && st.st_size > 100 * 1000 * 1000;
    pr->started = now_s();
}

/* Problems met while loading: counted, the first kept for the message. */
typedef struct load_problems {
    tool_progress pr;
    long count;
    char first[600];
    char unused[1024];        /* "9096 flow events (s/t/f), 2 instant events (i/I/R)" */
    tool_load_counts *counts; /* NULL, or the counts for the caller */
} load_problems;

static void load_unused(void *ctx, const char *kind, uint64_t count) {
    load_problems *lp = ctx;
    if (lp->counts && lp->counts->n_unused < TOOL_LOAD_UNUSED_KINDS) {
        tool_load_unused *u = &lp->counts->unused[lp->counts->n_unused++];
        snprintf(u->kind, sizeof u->kind, "%s", kind);
        u->count = count;
    }
    size_t n = strlen(lp->unused);
    snprintf(lp->unused + n, sizeof lp->unused - n, "%s%llu %s", n ? ", " : "", (unsigned long long)count, kind);
}

static void load_progress(void *ctx, int64_t done, int64_t total) {
    tool_on_progress(&((load_problems *)ctx)->pr, done, total);
}

static void load_problem(void *ctx, const opprof_trace_problem *p) {
    load_problems *lp = ctx;
    if (p->assumed) return; /* read, and said by the capture's warnings */
    if (lp->count++ == 0) {
        if (p->line > 0)
            snprintf(lp->first, sizeof lp->first, "line %lld, column %lld: %s", (long long)p->line,
                     (long long)p->column, p->message);
        else
            snprintf(lp->first, sizeof lp->first, "%s", p->message);
    }
}

/* Read a trace; on failure print why (file, position, reason). Events the
 * reader could not use are never dropped silently: their count and the first
 * reason go to stderr, and a trace with problems and no event at all is an
 * error. */
int tool_load(const char *path, opprof_capture **out) { return tool_load_by(path, false, out); }

int tool_need_timeline(const char *path, const opprof_capture *cap, const char *command) {
    size_t events = 0, rows = 0;
    opprof_capture_events(cap, &events);
    opprof_capture_aggregate_rows(cap, &rows);
    if (events || !rows) return 0;
    fprintf(stderr, "opprof: %s: %s, a table without a timeline: %s has no events to write (report and diff read it)\n",
            path, opprof_producer_name(opprof_capture_get_info(cap).producer), command);
    return TOOL_EXIT_UNREADABLE;
}

/* How a command reads: ONNX Runtime's rows by node, every writer's marks
 * kept (event marks only, or all and counted), arguments set aside. */
typedef struct load_how {
    bool by_node, event_marks;
    tool_load_counts *counts; /* non-NULL: keep_marks, and the counts */
    const tool_spill *spill;  /* NULL: none */
} load_how;
static int load(const char *path, const load_how *how, opprof_capture **out);

int tool_load_by(const char *path, bool by_node, opprof_capture **out) {
    return load(path, &(load_how){.by_node = by_node}, out);
}

int tool_load_to_write(const char *path, opprof_capture **out) {
    return load(path, &(load_how){.event_marks = true}, out);
}

int tool_load_counted(const char *path, tool_load_counts *counts, const tool_spill *spill, opprof_capture **out) {
    return load(path, &(load_how){.counts = counts, .spill = spill}, out);
}

static int load_file(const char *path, const load_how *how, opprof_capture **out);

static int load(const char *path, const load_how *how, opprof_capture **out) {
    char *owned = NULL;
    const char *trace = path;
    int rc = tool_trace_of(path, &owned, &trace);
    if (rc == 0) rc = load_file(trace, how, out);
    free(owned);
    return rc;
}

static int load_file(const char *path, const load_how *how, opprof_capture **out) {
    tool_load_counts *counts = how->counts;
    bool event_marks = how->event_marks;
    load_problems lp = {.count = 0, .unused = "", .counts = counts};
    if (counts) *counts = (tool_load_counts){0};
    tool_progress_init(&lp.pr, path);
    opprof_read_options opt = {.on_progress = load_progress,
                               .on_problem = load_problem,
                               .on_unused = load_unused,
                               .ctx = &lp,
                               .events_only = true,
                               .by_node = how->by_node,
                               .keep_marks = counts != NULL,
                               .keep_event_marks = event_marks,
                               /* arguments given as they are read (opprof sql): one thread reads,
                                  as the sets they become are numbered in its order, and two would
                                  hold the second half's events twice where they join (a 1 GB Kineto
                                  trace's peak 300 MB, not 220) */
                               .threads = how->spill ? 1 : 0,
                               .spill_args = how->spill ? how->spill->args : NULL,
                               .spill_ctx = how->spill ? how->spill->ctx : NULL};
    opprof_read_error err;
    int rc = opprof_capture_read(path, &opt, out, &err);
    if (rc) {
        if (err.line > 0)
            fprintf(stderr, "opprof: %s:%lld:%lld: %s (byte %lld)\n", path, (long long)err.line, (long long)err.column,
                    err.message, (long long)err.offset);
        else
            fprintf(stderr, "opprof: %s: %s\n", path, err.message);
        return TOOL_EXIT_UNREADABLE;
    }
    if (lp.unused[0])
        fprintf(stderr, "opprof: %s: %s: %s\n", path, event_marks ? "not written again" : "not in the tables",
                lp.unused);
    if (counts) {
        counts->problems = lp.count;
        snprintf(counts->first_problem, sizeof counts->first_problem, "%s", lp.first);
    }
    if (lp.count == 0) return 0;
    size_t events = 0, memory = 0;
    opprof_capture_events(*out, &events);
    opprof_capture_memory_events(*out, &memory);
    fprintf(stderr, "opprof: %s: %ld problem(s); the events concerned are left out (first: %s)\n", path, lp.count,
            lp.first);
    if (events == 0 && memory == 0) {
        fprintf(stderr, "opprof: %s: no event could be read; run 'opprof check %s' for every problem\n", path, path);
        opprof_capture_free(*out);
        *out = NULL;
        return TOOL_EXIT_UNREADABLE;
    }
    fprintf(stderr, "opprof: run 'opprof check %s' for every problem\n", path);
    return 0;
}

/* A file could not be written: the system's reason, and where it arose when
 * that is not obvious (files are written as a temporary beside OUT, then
 * renamed, so a directory that takes no new file fails even for an OUT that
 * exists, e.g. under /proc). */
const char *tool_dir_of(const char *path, char *dir, size_t size) {
    snprintf(dir, size, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        snprintf(dir, size, ".");
    const char *last = strrchr(path, '/');
    return last ? last + 1 : path;
}

void tool_write_error(const char *path, int rc) {
    char dir[4096];
    tool_dir_of(path, dir, sizeof dir);
    struct stat st;
    if (rc == -ENOENT && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        fprintf(stderr, "opprof: cannot write '%s': %s (the directory '%s' exists but takes no new file)\n", path,
                opprof_strerror(rc), dir);
    else
        fprintf(stderr, "opprof: cannot write '%s': %s\n", path, opprof_strerror(rc));
}

int tool_emit(const char *what, int rc, char *text, const char *out_path) {
    if (rc)
        fprintf(stderr, "opprof: %s: %s\n", what, opprof_strerror(rc));
    else if (out_path && (rc = opprof_write_text_file(out_path, text)))
        tool_write_error(out_path, rc);
    else if (!out_path)
        fputs(text, stdout);
    opprof_free(text);
    return rc ? TOOL_EXIT_UNREADABLE : TOOL_EXIT_OK;
}

int tool_memstream_close(FILE *f, char **text) {
    if (fclose(f) == 0 && *text) return 0;
    free(*text);
    *text = NULL;
    return OPPROF_ENOMEM;
}

enum { WARNINGS_SHOWN = 3 };

void tool_say_warnings(const char *path, const opprof_capture *cap, bool all) {
    opprof_producer producer = opprof_capture_get_info(cap).producer;
    if (producer != OPPROF_PRODUCER_OPPROF)
        fprintf(stderr, "opprof: %s: written by %s, read by its rules\n", path, opprof_producer_name(producer));
    size_t n;
    const char *const *w = opprof_capture_warnings(cap, &n);
    if (!n) return;
    fprintf(stderr, "opprof: %s: %zu warning(s):\n", path, n);
    size_t shown = all || n <= WARNINGS_SHOWN ? n : WARNINGS_SHOWN;
    for (size_t i = 0; i < shown; i++) fprintf(stderr, "  - %s\n", w[i]);
    if (shown < n) fprintf(stderr, "  ... %zu more (--warnings lists them all)\n", n - shown);
}

static bool ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), m = strlen(tail);
    return n > m && !strcmp(s + n - m, tail);
}

tool_trace_format tool_format_of(const char *path) {
    return ends_with(path, ".pftrace.gz")                                      ? TOOL_FORMAT_PERFETTO_GZ
           : ends_with(path, ".pftrace") || ends_with(path, ".perfetto-trace") ? TOOL_FORMAT_PERFETTO
           : ends_with(path, ".json.gz")                                       ? TOOL_FORMAT_JSON_GZ
           : ends_with(path, ".json")                                          ? TOOL_FORMAT_JSON
                                                                               : TOOL_FORMAT_UNKNOWN;
}

int tool_write_trace(const opprof_capture *cap, const char *path) {
    tool_trace_format f = tool_format_of(path);
    opprof_chrome_options o = {.gzip = f == TOOL_FORMAT_JSON_GZ};
    opprof_perfetto_options po = {.gzip = f == TOOL_FORMAT_PERFETTO_GZ};
    int rc = f == TOOL_FORMAT_PERFETTO || f == TOOL_FORMAT_PERFETTO_GZ
                 ? opprof_capture_perfetto_write_ex(cap, path, &po)
                 : opprof_capture_chrome_write_ex(cap, path, &o);
    if (!rc) return 0;
    tool_write_error(path, rc);
    return TOOL_EXIT_UNREADABLE;
}

/* The ceilings: --machine's file (refused whole when it is not a profile), or this
 * machine's measured now (said: the trace may have run elsewhere). */
int tool_load_machine(const char *path, opprof_machine *m) {
    if (path) {
        opprof_read_error err;
        int rc = opprof_machine_read(path, m, &err);
        if (rc == 0) return 0;
        if (err.line > 0)
            fprintf(stderr, "opprof: %s:%lld:%lld: %s\n", path, (long long)err.line, (long long)err.column,
                    err.message);
        else
            fprintf(stderr, "opprof: %s: %s\n", path, err.message[0] ? err.message : opprof_strerror(rc));
        return TOOL_EXIT_UNREADABLE;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = cpus < 1 ? 1 : cpus > OPPROF_MACHINE_MAX_THREADS ? OPPROF_MACHINE_MAX_THREADS : (int)cpus;
    char said[4400];
    int rc = opprof_machine_cached(threads, m, said, sizeof said); /* measured once per CPU, then kept */
    if (rc)
        fprintf(stderr, "opprof: the ceilings could not be measured: %s\n", opprof_strerror(rc));
    else
        fprintf(stderr, "opprof: the roofs are this machine's (--machine FILE: another's): %s\n", said);
    return rc ? TOOL_EXIT_FAILED : 0;
}

int tool_machine_for(const char *path, const opprof_capture *cap, opprof_machine *m) {
    const opprof_machine *own = opprof_capture_machine(cap);
    if (path || !own) return tool_load_machine(path, m);
    *m = *own;
    fprintf(stderr, "opprof: the roofs are those of the machine the trace was recorded on (%s, %s)\n", own->cpu,
            own->isa);
    return 0;
}
