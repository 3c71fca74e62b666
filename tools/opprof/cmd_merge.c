/* cmd_merge.c - `opprof merge`: the traces of several ranks on one timeline. */
#define _GNU_SOURCE
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char HELP[] = "One trace from the traces of several ranks (opprof's rank-K/ captures, or PyTorch's\n"
                           "per-rank Kineto traces; gzip accepted), read as streams: memory stays small.\n"
                           "Timestamps move onto rank 0's clock with each trace's distributedInfo clock offset;\n"
                           "each rank's processes are labelled \"rank K\". OUT appears whole or not at all.\n"
                           "OUT.json streams (memory stays small whatever the traces' sizes); OUT.pftrace\n"
                           "(Perfetto's native format, .pftrace.gz gzip-compressed) is the merged trace read as\n"
                           "a capture, then written: memory near the merged capture's size, and a merged JSON\n"
                           "beside OUT while it is made (removed after, or when a signal stops the merge).\n";

#define MERGE_OPTIONS(X) X(OUTPUT, "o|output", "OUT", "the merged trace: OUT.json, OUT.pftrace or OUT.pftrace.gz")
TOOL_OPTIONS(MERGE_OPTIONS);

/* Merge into a JSON beside out, then write that as out's format. */
static int merge_via_json(const char *const *inputs, size_t n, const char *out, opprof_merge_result *res) {
    size_t len = strlen(out) + 32;
    char *tmp = malloc(len);
    if (!tmp) return tool_usage_error("merge", "out of memory");
    snprintf(tmp, len, "%s.merging-%ld.json", out, (long)getpid());
    tool_temporary_sweep(out, ".merging-");
    tool_temporary_guard(tmp);
    opprof_read_error err;
    int rc = opprof_merge_traces(inputs, n, tmp, res, &err);
    if (rc) { /* the error may name the merged JSON: say which OUT it was for */
        fprintf(stderr, "opprof: merge into %s: %s\n", out, err.message[0] ? err.message : opprof_strerror(rc));
        tool_temporary_unguard();
        free(tmp);
        return TOOL_EXIT_UNREADABLE;
    }
    opprof_capture *cap = NULL;
    rc = tool_load_to_write(tmp, &cap);
    if (!rc) rc = tool_write_trace(cap, out);
    opprof_capture_free(cap);
    unlink(tmp);
    tool_temporary_unguard();
    free(tmp);
    return rc;
}

static int merge(char **traces, size_t n, const char *out, tool_trace_format f) {
    const char *const *inputs = (const char *const *)traces;
    opprof_merge_result res;
    opprof_read_error err;
    int rc;
    if (f != TOOL_FORMAT_JSON) {
        if ((rc = merge_via_json(inputs, n, out, &res))) return rc;
    } else if ((rc = opprof_merge_traces(inputs, n, out, &res, &err))) {
        fprintf(stderr, "opprof: merge: %s\n", err.message[0] ? err.message : opprof_strerror(rc));
        return TOOL_EXIT_UNREADABLE;
    }
    fprintf(stderr, "opprof: %d traces, %lld events merged into %s\n", res.inputs, (long long)res.events, out);
    return 0;
}

static int run(int argc, char **argv) {
    const char *out = NULL;
    int c;
    while ((c = tool_next_option(argc, argv, OPTIONS)) != TOOL_OPTIONS_END) {
        switch (c) {
        case OPT_OUTPUT: out = optarg; break;
        default: return TOOL_EXIT_USAGE;
        }
    }
    if (!out || optind >= argc) {
        return tool_usage_error("merge", "merge takes traces and -o OUT");
    }
    tool_trace_format f = tool_format_of(out);
    if (f == TOOL_FORMAT_UNKNOWN || f == TOOL_FORMAT_JSON_GZ)
        return tool_usage_error(
            "merge", "OUT's name must end in .json, .pftrace, .pftrace.gz or .perfetto-trace, not '%s'", out);
    char **traces = NULL; /* each directory its traces (a run's rank-K/) */
    size_t n = 0;
    int rc = tool_expand_traces((const char *const *)argv + optind, (size_t)(argc - optind), &traces, &n);
    if (rc == 0) rc = merge(traces, n, out, f);
    tool_free_list(traces, n);
    return rc;
}

static const char EXAMPLES[] =
    "  opprof merge rank-0.json rank-1.json -o merged.json   # the ranks on one timeline\n"
    "  opprof merge runs/rank-*.json -o merged.pftrace\n"
    "  opprof merge run/ -o merged.json                     # every trace in run/ and below\n";

TOOL_COMMAND(merge, "merge TRACE... [OPTIONS]", "the traces of several ranks on one timeline", NULL);
