/* cmd_check.c - `opprof check`: every problem of a trace with its place,
 * as text or JSON. */
#define _GNU_SOURCE
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char HELP[] = "Validate a trace; list each problem as FILE:LINE:COLUMN: message (byte offset):\n"
                           "not JSON, unknown phases, missing or mistyped fields, negative durations,\n"
                           "complete events that overlap without nesting on a thread, memory totals that do\n"
                           "not add up, events dropped at record time.\n";

#define CHECK_OPTIONS(X)                                                                                      \
    X(MAX_PROBLEMS, "max-problems", "N", "print at most N problems (default 1000; -1: all); all are counted") \
    X(JSON, "json", NULL, "{\"file\", \"readable\", \"problems\": [...], \"problem_count\", \"events\"}")
TOOL_OPTIONS(CHECK_OPTIONS);

typedef struct checker {
    const char *path;
    bool json;
    int max;
    long count;
    tool_progress pr;
} checker;

/* A JSON string literal, escaped by the library (as its own outputs are). */
static void print_json_string(const char *s) {
    char *quoted = NULL;
    if (opprof_json_string_to_string(s, &quoted) == 0)
        fputs(quoted, stdout);
    else
        fputs("null", stdout);
    opprof_free(quoted);
}

static void on_problem(void *ctx, const opprof_trace_problem *p) {
    checker *ck = ctx;
    ck->count++;
    if (ck->max >= 0 && ck->count > ck->max) return;
    if (ck->json) {
        printf("%s    {\"offset\": %lld, \"line\": %lld, \"column\": %lld, \"message\": ", ck->count > 1 ? ",\n" : "",
               (long long)p->offset, (long long)p->line, (long long)p->column);
        print_json_string(p->message);
        printf("}");
    } else if (p->line > 0) {
        printf("%s:%lld:%lld: %s (byte %lld)\n", ck->path, (long long)p->line, (long long)p->column, p->message,
               (long long)p->offset);
    } else {
        printf("%s: %s\n", ck->path, p->message);
    }
}

static void check_progress(void *ctx, int64_t done, int64_t total) {
    tool_on_progress(&((checker *)ctx)->pr, done, total);
}

static int run(int argc, char **argv) {
    checker ck = {.max = 1000};
    int c;
    while ((c = tool_next_option(argc, argv, OPTIONS)) != TOOL_OPTIONS_END) {
        switch (c) {
        case OPT_JSON: ck.json = true; break;
        case OPT_MAX_PROBLEMS:
            if (tool_parse_count(optarg, "--max-problems", &ck.max)) return TOOL_EXIT_USAGE;
            break;
        default: return TOOL_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) return tool_usage_error("check", "check takes one TRACE");
    char *owned = NULL;
    if (tool_trace_of(argv[optind], &owned, &ck.path)) return TOOL_EXIT_UNREADABLE;
    tool_progress_init(&ck.pr, ck.path);
    if (ck.json) {
        printf("{\n  \"file\": ");
        print_json_string(ck.path);
        printf(",\n  \"problems\": [\n");
    }
    opprof_read_options opt = {.on_problem = on_problem, .on_progress = check_progress, .ctx = &ck};
    opprof_read_error err;
    opprof_capture *cap = NULL;
    int rc = opprof_capture_read(ck.path, &opt, &cap, &err);
    size_t events = 0;
    if (cap) opprof_capture_events(cap, &events);
    if (ck.json) {
        printf("%s  ],\n  \"problem_count\": %ld,\n  \"readable\": %s,\n", ck.count ? "\n" : "", ck.count,
               rc ? "false" : "true");
        if (rc) {
            printf("  \"error\": {\"offset\": %lld, \"line\": %lld, \"column\": %lld, \"message\": ",
                   (long long)err.offset, (long long)err.line, (long long)err.column);
            print_json_string(err.message);
            printf("},\n");
        }
        printf("  \"events\": %zu", events);
        if (cap) printf(",\n  \"producer\": \"%s\"", opprof_producer_name(opprof_capture_get_info(cap).producer));
        printf("\n}\n");
    } else if (rc) {
        if (err.line > 0)
            printf("%s:%lld:%lld: %s (byte %lld)\n", ck.path, (long long)err.line, (long long)err.column, err.message,
                   (long long)err.offset);
        else
            printf("%s: %s\n", ck.path, err.message);
    } else {
        if (ck.max >= 0 && ck.count > ck.max) printf("... %ld more problem(s) not shown\n", ck.count - ck.max);
        printf("%s: %zu events, %ld problem(s); written by %s\n", ck.path, events, ck.count,
               opprof_producer_name(opprof_capture_get_info(cap).producer));
    }
    opprof_capture_free(cap);
    free(owned);
    if (rc) return TOOL_EXIT_UNREADABLE;
    return ck.count ? TOOL_EXIT_FAILED : 0;
}

static const char EXAMPLES[] =
    "  opprof check trace.json                  # every problem as FILE:LINE:COLUMN: message\n"
    "  opprof check --json --max-problems 20 trace.json.gz\n";

TOOL_COMMAND(check, "check TRACE [OPTIONS]", "validate a trace and list every problem with its position", NULL);
