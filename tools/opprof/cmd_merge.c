/* cmd_merge.c - `opprof merge`: the traces of several ranks on one timeline. */
#define _GNU_SOURCE
#include "tool.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char HELP[] =
    "One trace from the traces of several ranks (opprof's rank-K/ captures, or PyTorch's\n"
    "per-rank Kineto traces; gzip accepted), read as streams: memory stays small.\n"
    "Timestamps move onto rank 0's clock with each trace's distributedInfo clock offset;\n"
    "each rank's processes are labelled \"rank K\". OUT appears whole or not at all.\n";

static int run(int argc, char **argv) {
    static const struct option longs[] = {{"output", required_argument, 0, 'o'}, {0, 0, 0, 0}};
    const char *out = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "o:", longs, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        default: return TOOL_EXIT_USAGE;
        }
    }
    if (!out || optind >= argc) {
        return tool_usage_error("merge", "merge takes traces and -o OUT");
    }
    opprof_merge_result res;
    opprof_read_error err;
    int rc = opprof_merge_traces((const char *const *)argv + optind, (size_t)(argc - optind), out, &res, &err);
    if (rc) {
        fprintf(stderr, "opprof: merge: %s\n", err.message[0] ? err.message : opprof_strerror(rc));
        return TOOL_EXIT_UNREADABLE;
    }
    fprintf(stderr, "opprof: %d traces, %lld events merged into %s\n", res.inputs, (long long)res.events, out);
    return 0;
}

TOOL_COMMAND(merge, "merge TRACE... -o OUT.json",
             "the traces of several ranks on one timeline", NULL);
