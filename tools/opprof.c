/*
 * opprof - read any capture back: report it, check it, diff it.
 *
 *   opprof report TRACE [--sort KEY] [--row-limit N] [--memory] [--json]
 *                 [--group-by-input-shape] [--group-by-stack N] [--peak-memory] [--flops]
 *   opprof stacks TRACE [--memory]
 *   opprof html TRACE OUT.html
 *   opprof check TRACE [--json] [--max-problems N]
 *   opprof diff BEFORE AFTER [--row-limit N] [--json | --html OUT.html]
 *   opprof merge TRACE... -o OUT.json
 *   opprof report --ranks DIR [--json]
 *
 * TRACE is a Chrome trace (ours, PyTorch's export_chrome_trace, or PyTorch's
 * legacy array form), plain or gzip-compressed.
 *
 * Exit status: 0 success (check: no problem), 1 check found problems,
 * 2 a file cannot be read or is not a trace (or, for html, cannot be
 * written), 64 bad usage.
 */
#define _GNU_SOURCE
#include <opprof/capture.h>
#include <opprof/opprof.h>

#include "load.h"
#include "ranks.h"
#include "record.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *USAGE =
    "usage: opprof COMMAND [options] FILE...\n"
    "\n"
    "commands:\n"
    "  report TRACE        the key averages table of a trace (as key_averages().table())\n"
    "  stacks TRACE        folded stacks of a trace for flamegraph.pl and speedscope\n"
    "  html TRACE OUT      a self-contained HTML report: table, flame graph, timeline, memory\n"
    "  check TRACE         validate a trace and list every problem with its position\n"
    "  diff BEFORE AFTER   compare two traces operator by operator\n"
    "  merge TRACE... -o OUT  the traces of several ranks on one timeline\n"
    "  report --ranks DIR  compare the ranks of DIR/rank-K/ (profile_cpu --parallel)\n"
    "  record -- CMD       profile a program without changing it (--memory, --functions)\n"
    "\n"
    "TRACE: a Chrome trace JSON file (opprof's, PyTorch's export_chrome_trace, or PyTorch's\n"
    "legacy array form), plain or gzip-compressed.\n"
    "Run 'opprof COMMAND --help' for a command's options.\n"
    "Exit status: 0 success, 1 check found problems, 2 a file cannot be read or is not a\n"
    "trace (html: or OUT cannot be written), 64 bad usage.\n";

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "opprof: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(run 'opprof --help')\n");
    return EXIT_USAGE;
}

static int parse_count(const char *text, const char *flag, int *out) {
    char *end;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < -1 || v > 1000000000) {
        fprintf(stderr, "opprof: %s takes an integer, not '%s'\n", flag, text);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* ---- report ---- */

static int cmd_report(int argc, char **argv) {
    static const struct option longs[] = {{"sort", required_argument, 0, 's'},
                                          {"row-limit", required_argument, 0, 'n'},
                                          {"memory", no_argument, 0, 'm'},
                                          {"json", no_argument, 0, 'j'},
                                          {"group-by-input-shape", no_argument, 0, 'g'},
                                          {"group-by-stack", required_argument, 0, 'k'},
                                          {"peak-memory", no_argument, 0, 'p'},
                                          {"flops", no_argument, 0, 'f'},
                                          {"ranks", no_argument, 0, 'r'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    opprof_sort_key sort = OPPROF_SORT_SELF_CPU_TIME;
    int row_limit = 100;
    bool json = false, ranks = false;
    opprof_averages_options group = {0};
    opprof_table_options table = {0};
    int c;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case 's':
            if (opprof_sort_key_parse(optarg, &sort))
                return usage_error("unknown sort key '%s' (run 'opprof report --help' for the keys)", optarg);
            break;
        case 'n':
            if (parse_count(optarg, "--row-limit", &row_limit)) return EXIT_USAGE;
            break;
        case 'm': sort = OPPROF_SORT_SELF_CPU_MEMORY; break;
        case 'j': json = true; break;
        case 'g': group.group_by_input_shape = true; break;
        case 'k':
            if (parse_count(optarg, "--group-by-stack", &group.group_by_stack_n) || group.group_by_stack_n < 1)
                return usage_error("--group-by-stack takes a number of frames >= 1, not '%s'", optarg);
            break;
        case 'p': table.peak_memory = true; break;
        case 'f': table.flops = true; break;
        case 'r': ranks = true; break;
        case 'h':
            printf("usage: opprof report TRACE [--sort KEY] [--row-limit N] [--memory] [--json]\n"
                   "                           [--group-by-input-shape] [--group-by-stack N] [--peak-memory] [--flops]\n\n"
                   "The key averages table of a trace, in PyTorch's layout.\n"
                   "  --sort KEY       self_cpu_time_total (default), cpu_time_total, cpu_time,\n"
                   "                   self_cpu_memory_usage, cpu_memory_usage, cpu_memory_peak, count,\n"
                   "                   flops, self_device_time_total, device_time_total, device_time,\n"
                   "                   self_device_memory_usage, device_memory_usage (also as PyTorch's\n"
                   "                   self_cuda_... names), none\n"
                   "  --row-limit N    rows to print (default 100; -1 or 0: all)\n"
                   "  --memory         sort by self CPU memory (the seed's memory table)\n"
                   "  --group-by-input-shape  one row per (name, input shapes) (traces with \"Input Dims\")\n"
                   "  --group-by-stack N      one row per (name, top N call sites) (traces with \"Call stack\")\n"
                   "  --peak-memory    a Peak Mem column (sort key cpu_memory_peak)\n"
                   "  --flops          Total FLOPs and GFLOP/s columns (sort key flops)\n"
                   "  --json           the table's rows as JSON (the same columns; raw values)\n"
                   "       opprof report --ranks DIR [--json]\n"
                   "  --ranks          DIR holds rank-0/, rank-1/... (profile_cpu --parallel): per operator,\n"
                   "                   min / median / max self time across ranks and the slowest rank; per\n"
                   "                   rank, communication against compute, and the skew of collective starts\n");
            return 0;
        default: return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) return usage_error(ranks ? "report --ranks takes one DIR%s" : "report takes one TRACE%s", "");
    if (ranks) return opprof_ranks_report(argv[optind], json);
    opprof_capture *cap;
    int rc = opprof_tool_load(argv[optind], &cap);
    if (rc) return rc;
    opprof_averages *avg = NULL;
    char *text = NULL;
    table.sort = sort;
    table.row_limit = row_limit;
    rc = opprof_capture_averages_ex(cap, &group, &avg);
    if (!rc)
        rc = json ? opprof_averages_json_to_string(avg, &table, &text) : opprof_averages_table_to_string(avg, &table, &text);
    if (rc)
        fprintf(stderr, "opprof: %s: %s\n", argv[optind], opprof_strerror(rc));
    else
        fputs(text, stdout);
    opprof_free(text);
    opprof_averages_free(avg);
    opprof_capture_free(cap);
    return rc ? EXIT_UNREADABLE : 0;
}

/* ---- stacks ---- */

static int cmd_stacks(int argc, char **argv) {
    static const struct option longs[] = {{"memory", no_argument, 0, 'm'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    opprof_stacks_metric metric = OPPROF_STACKS_SELF_TIME;
    int c;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case 'm': metric = OPPROF_STACKS_ALLOCATED_BYTES; break;
        case 'h':
            printf("usage: opprof stacks TRACE [--memory]\n\n"
                   "Folded stacks on stdout: 'outer;inner;op COUNT' lines for flamegraph.pl and\n"
                   "speedscope. COUNT is self CPU time in integer microseconds, or with --memory the\n"
                   "bytes each frame allocated itself.\n");
            return 0;
        default: return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) return usage_error("stacks takes one TRACE%s", "");
    opprof_capture *cap;
    int rc = opprof_tool_load(argv[optind], &cap);
    if (rc) return rc;
    char *text = NULL;
    rc = opprof_capture_stacks_to_string(cap, metric, &text);
    if (rc)
        fprintf(stderr, "opprof: %s: %s\n", argv[optind], opprof_strerror(rc));
    else
        fputs(text, stdout);
    opprof_free(text);
    opprof_capture_free(cap);
    return rc ? EXIT_UNREADABLE : 0;
}

/* ---- html ---- */

static int cmd_html(int argc, char **argv) {
    static const struct option longs[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case 'h':
            printf("usage: opprof html TRACE OUT.html\n\n"
                   "Write a self-contained HTML report of TRACE (no network, no other file): the\n"
                   "capture's facts and warnings, the key averages (click a column to sort), a flame\n"
                   "graph of total CPU time, a timeline with a track per thread, and the memory\n"
                   "allocated over time with its peak. OUT appears whole or not at all.\n");
            return 0;
        default: return EXIT_USAGE;
        }
    }
    if (optind != argc - 2) return usage_error("html takes a TRACE and an OUT file%s", "");
    opprof_capture *cap;
    int rc = opprof_tool_load(argv[optind], &cap);
    if (rc) return rc;
    rc = opprof_capture_html_write(cap, argv[optind + 1]);
    if (rc) opprof_tool_write_error(argv[optind + 1], rc);
    opprof_capture_free(cap);
    return rc ? EXIT_UNREADABLE : 0;
}

/* ---- check ---- */

typedef struct checker {
    const char *path;
    bool json;
    int max;
    long count;
    progress pr;
} checker;

/* A JSON string literal, escaped by the library (as its own outputs are). */
static void print_json_string(const char *s) {
    char *quoted = NULL;
    if (opprof_json_string_to_string(s, &quoted) == 0) fputs(quoted, stdout);
    else fputs("null", stdout);
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

static void check_progress(void *ctx, int64_t done, int64_t total) { opprof_tool_on_progress(&((checker *)ctx)->pr, done, total); }

static int cmd_check(int argc, char **argv) {
    static const struct option longs[] = {{"json", no_argument, 0, 'j'},
                                          {"max-problems", required_argument, 0, 'n'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    checker ck = {.max = 1000};
    int c;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case 'j': ck.json = true; break;
        case 'n':
            if (parse_count(optarg, "--max-problems", &ck.max)) return EXIT_USAGE;
            break;
        case 'h':
            printf("usage: opprof check TRACE [--json] [--max-problems N]\n\n"
                   "Validate a trace; list each problem as FILE:LINE:COLUMN: message (byte offset):\n"
                   "not JSON, unknown phases, missing or mistyped fields, negative durations,\n"
                   "complete events that overlap without nesting on a thread, memory totals that do\n"
                   "not add up, events dropped at record time.\n"
                   "  --max-problems N  print at most N problems (default 1000; -1: all); all are counted\n"
                   "  --json            {\"file\", \"readable\", \"problems\": [...], \"problem_count\", \"events\"}\n"
                   "Exit status: 0 clean, 1 problems, 2 unreadable, 64 bad usage.\n");
            return 0;
        default: return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) return usage_error("check takes one TRACE%s", "");
    ck.path = argv[optind];
    opprof_tool_progress_init(&ck.pr, ck.path);
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
        printf("  \"events\": %zu\n}\n", events);
    } else if (rc) {
        if (err.line > 0)
            printf("%s:%lld:%lld: %s (byte %lld)\n", ck.path, (long long)err.line, (long long)err.column, err.message,
                   (long long)err.offset);
        else
            printf("%s: %s\n", ck.path, err.message);
    } else {
        if (ck.max >= 0 && ck.count > ck.max) printf("... %ld more problem(s) not shown\n", ck.count - ck.max);
        printf("%s: %zu events, %ld problem(s)\n", ck.path, events, ck.count);
    }
    opprof_capture_free(cap);
    if (rc) return EXIT_UNREADABLE;
    return ck.count ? EXIT_PROBLEMS : 0;
}

/* ---- diff ---- */

static int cmd_diff(int argc, char **argv) {
    static const struct option longs[] = {{"row-limit", required_argument, 0, 'n'},
                                          {"json", no_argument, 0, 'j'},
                                          {"html", required_argument, 0, 'H'},
                                          {"help", no_argument, 0, 'h'},
                                          {0, 0, 0, 0}};
    int row_limit = 30;
    bool json = false;
    const char *html = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "h", longs, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (parse_count(optarg, "--row-limit", &row_limit)) return EXIT_USAGE;
            break;
        case 'j': json = true; break;
        case 'H': html = optarg; break;
        case 'h':
            printf("usage: opprof diff BEFORE AFTER [--row-limit N] [--json | --html OUT.html]\n\n"
                   "Compare two traces per operator: calls, self and total CPU time, self CPU memory,\n"
                   "before and after, the change and the ratio, sorted by the largest change in self\n"
                   "time; totals; notes where the two captures' configurations differ.\n"
                   "  --row-limit N   rows to print (default 30; -1 or 0: all)\n"
                   "  --json          the comparison as JSON\n"
                   "  --html OUT      write it as a self-contained HTML page (a sortable table with\n"
                   "                  before/after bars) to OUT instead\n");
            return 0;
        default: return EXIT_USAGE;
        }
    }
    if (optind != argc - 2) return usage_error("diff takes two traces, BEFORE and AFTER%s", "");
    if (json && html) return usage_error("diff takes --json or --html, not both%s", "");
    opprof_capture *before = NULL, *after = NULL;
    int rc = opprof_tool_load(argv[optind], &before);
    if (!rc) rc = opprof_tool_load(argv[optind + 1], &after);
    if (rc) {
        opprof_capture_free(before);
        return rc;
    }
    char *text = NULL;
    opprof_diff_format format = html ? OPPROF_DIFF_HTML : json ? OPPROF_DIFF_JSON : OPPROF_DIFF_TEXT;
    int err = opprof_capture_diff_to_string(before, after, row_limit, format, &text);
    if (err)
        fprintf(stderr, "opprof: diff: %s\n", opprof_strerror(err));
    else if (html && (err = opprof_write_text_file(html, text)))
        opprof_tool_write_error(html, err);
    else if (!html)
        fputs(text, stdout);
    opprof_free(text);
    opprof_capture_free(before);
    opprof_capture_free(after);
    return err ? EXIT_UNREADABLE : 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(USAGE, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("opprof %s\n", opprof_version());
        return 0;
    }
    argv[1] = argv[0]; /* getopt sees the command's options only */
    if (!strcmp(cmd, "report")) return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "check")) return cmd_check(argc - 1, argv + 1);
    if (!strcmp(cmd, "stacks")) return cmd_stacks(argc - 1, argv + 1);
    if (!strcmp(cmd, "html")) return cmd_html(argc - 1, argv + 1);
    if (!strcmp(cmd, "diff")) return cmd_diff(argc - 1, argv + 1);
    if (!strcmp(cmd, "record")) return opprof_cmd_record(argc - 1, argv + 1);
    if (!strcmp(cmd, "merge")) return opprof_cmd_merge(argc - 1, argv + 1);
    return usage_error("unknown command '%s'", cmd);
}
