/* cmd_html.c - `opprof html`: the HTML report of any trace. */
#define _GNU_SOURCE
#include "tool.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char HELP[] =
    "Write a self-contained HTML report of TRACE (no network, no other file): the\n"
    "capture's facts and warnings, the key averages (click a column to sort), a flame\n"
    "graph of total CPU time, a timeline with a track per thread, and the memory\n"
    "allocated over time with its peak. OUT appears whole or not at all.\n";

static int run(int argc, char **argv) {
    static const struct option longs[] = {{0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        default: return TOOL_EXIT_USAGE;
        }
    }
    if (optind != argc - 2) return tool_usage_error("html", "html takes a TRACE and an OUT file");
    opprof_capture *cap;
    int rc = tool_load(argv[optind], &cap);
    if (rc) return rc;
    rc = opprof_capture_html_write(cap, argv[optind + 1]);
    if (rc) tool_write_error(argv[optind + 1], rc);
    opprof_capture_free(cap);
    return rc ? TOOL_EXIT_UNREADABLE : 0;
}

const tool_command tool_cmd_html = {
    .name = "html",
    .synopsis = "html TRACE OUT.html",
    .summary = "a self-contained HTML report: table, flame graph, timeline, memory",
    .help = HELP,
    .run = run,
};
