/* read_one.h - one input through the trace reader with the checks on, and
 * the analysis, folded stacks, HTML report and HTML diff (against itself) of
 * what it read: shared by the fuzzer and the corpus test. */
#ifndef OPPROF_TESTS_READ_ONE_H
#define OPPROF_TESTS_READ_ONE_H

#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static inline void read_one_ignore(void *ctx, const opprof_trace_problem *p) {
    (void)ctx;
    (void)p;
}

/* 0 when the input read as a trace, else the reader's error code. */
static inline int read_one(const uint8_t *data, size_t size, opprof_read_error *err) {
    opprof_read_options opt = {.on_problem = read_one_ignore, .max_string = 4096, .max_depth = 32};
    opprof_capture *c = NULL;
    int rc = opprof_capture_read_buffer(data, size, &opt, &c, err);
    if (rc == 0) {
        opprof_averages *avg;
        char *text = NULL;
        if (opprof_capture_averages(c, &avg) == 0) {
            opprof_averages_table_to_string(
                avg, &(opprof_table_options){.sort = OPPROF_SORT_SELF_CPU_TIME, .row_limit = 20}, &text);
            opprof_free(text);
            opprof_averages_free(avg);
        }
        text = NULL;
        opprof_capture_stacks_to_string(c, OPPROF_STACKS_SELF_TIME, &text); /* hostile names and nesting */
        opprof_free(text);
        text = NULL;
        opprof_capture_html_to_string(c, &text);
        opprof_free(text);
        text = NULL;
        opprof_capture_diff_to_string(c, c, 20, OPPROF_DIFF_HTML, &text);
        opprof_free(text);
        opprof_capture_free(c);
    }
    return rc;
}

/* ---- one thread against two ---- */

typedef struct read_said {
    char *text;
    size_t len;
} read_said;

static inline void read_say(void *ctx, const opprof_trace_problem *p) {
    read_said *s = ctx;
    char line[700];
    int n = snprintf(line, sizeof line, "%lld %lld:%lld %s%s\n", (long long)p->offset, (long long)p->line,
                     (long long)p->column, p->message, p->assumed ? " (assumed)" : "");
    char *t = realloc(s->text, s->len + (size_t)n + 1);
    if (!t) return;
    memcpy(t + s->len, line, (size_t)n + 1);
    s->text = t;
    s->len += (size_t)n;
}

/* The file at path read with `opt` (its problems said when opt.on_problem
 * is set, which this replaces), as text: the code, the error and its place,
 * the problems in order, the capture written back and its operators' table
 * (device times included: which device links decide). The caller frees it;
 * *rc: the read's code, *read_by: the threads that read it (0 on an error). */
static inline char *read_as_text(const char *path, opprof_read_options opt, int *rc, int *read_by) {
    read_said s = {calloc(1, 1), 0};
    if (opt.on_problem) {
        opt.on_problem = read_say;
        opt.ctx = &s;
    }
    opprof_capture *c = NULL;
    opprof_read_error err;
    *rc = opprof_capture_read(path, &opt, &c, &err);
    char *all = NULL, *table = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&all, &len);
    if (!out) abort();
    fprintf(out, "rc %d, %s at %lld %lld:%lld\n%s", *rc, *rc ? err.message : "", *rc ? (long long)err.offset : 0,
            *rc ? (long long)err.line : 0, *rc ? (long long)err.column : 0, s.text ? s.text : "");
    *read_by = *rc ? 0 : opprof_capture_get_info(c).read_threads;
    opprof_averages *avg = NULL;
    if (!*rc && opprof_capture_averages(c, &avg) == 0) {
        opprof_averages_table_to_string(avg, &(opprof_table_options){.sort = OPPROF_SORT_SELF_CPU_TIME}, &table);
        opprof_averages_free(avg);
    }
    if (!*rc) opprof_capture_chrome_write_stream(c, out, NULL);
    fprintf(out, "%s", table ? table : "");
    opprof_free(table);
    opprof_capture_free(*rc ? NULL : c);
    fclose(out);
    free(s.text);
    return all;
}

/* The input as a file (in memory) read on one thread and on two, with the
 * fuzzer's limits: 0 when both give the same, 1 when they differ (both
 * texts to stderr); *joined: the second thread's half was taken. */
static inline int read_both_ways(const uint8_t *data, size_t size, int *joined) {
    int fd = memfd_create("opprof-read-both", MFD_CLOEXEC);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size) abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    opprof_read_options opt = {.on_problem = read_say, .events_only = true, .max_string = 4096, .max_depth = 32};
    int one_rc, one_by, two_rc, two_by;
    opt.threads = 1;
    char *one = read_as_text(path, opt, &one_rc, &one_by);
    opt.threads = 2;
    char *two = read_as_text(path, opt, &two_rc, &two_by);
    int differ = strcmp(one, two) != 0;
    if (differ) fprintf(stderr, "one thread:\n%s\ntwo threads:\n%s\n", one, two);
    *joined = two_by == 2;
    free(one);
    free(two);
    close(fd);
    return differ;
}

/* ---- a round trip: written as .pftrace and as JSON, read back ---- */

/* What the tables and stacks of c say (the reader's limits' capture). */
static inline char *read_seen(const opprof_capture *c) {
    opprof_averages *avg = NULL;
    char *table = NULL, *stacks = NULL, *all = NULL;
    if (opprof_capture_averages(c, &avg) == 0) {
        opprof_averages_table_to_string(avg, &(opprof_table_options){.sort = OPPROF_SORT_SELF_CPU_TIME}, &table);
        opprof_averages_free(avg);
    }
    opprof_capture_stacks_to_string(c, OPPROF_STACKS_SELF_TIME, &stacks);
    size_t n_samples;
    opprof_capture_samples(c, &n_samples);
    if (asprintf(&all, "%zu samples\n%s\n%s", n_samples, table ? table : "", stacks ? stacks : "") < 0) abort();
    opprof_free(table);
    opprof_free(stacks);
    return all;
}

/* c written as .pftrace (pftrace) or JSON, read back with the same options. */
static inline opprof_capture *read_back(const opprof_capture *c, bool pftrace, const opprof_read_options *opt) {
    char *bytes = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&bytes, &size);
    if (!mem) abort();
    int rc = pftrace ? opprof_capture_perfetto_write_stream(c, mem) : opprof_capture_chrome_write_stream(c, mem, NULL);
    fclose(mem);
    opprof_capture *back = NULL;
    opprof_read_error err;
    if (!rc) rc = opprof_capture_read_buffer(bytes, size, opt, &back, &err);
    if (rc) fprintf(stderr, "written as %s, read back: %s\n", pftrace ? ".pftrace" : "JSON", rc ? err.message : "");
    free(bytes);
    return back;
}

/* The input, when it reads, gives the same tables and stacks read back
 * from the .pftrace and from the JSON that opprof writes of it: 0, else 1
 * (what differs to stderr). */
static inline int round_trip_differs(const uint8_t *data, size_t size) {
    opprof_read_options opt = {.on_problem = read_one_ignore, .max_string = 4096, .max_depth = 32};
    opprof_capture *c = NULL;
    opprof_read_error err;
    if (opprof_capture_read_buffer(data, size, &opt, &c, &err) != 0) return 0;
    char *before = read_seen(c);
    int differ = 0;
    for (int pftrace = 0; pftrace < 2; pftrace++) {
        opprof_capture *back = read_back(c, pftrace, &opt);
        char *after = back ? read_seen(back) : NULL;
        if (!after || strcmp(before, after)) {
            fprintf(stderr, "read:\n%s\nback from %s:\n%s\n", before, pftrace ? ".pftrace" : "JSON",
                    after ? after : "(refused)");
            differ = 1;
        }
        free(after);
        opprof_capture_free(back);
    }
    free(before);
    opprof_capture_free(c);
    return differ;
}

#endif
