/* cmd_html.c - `opprof html`: the HTML report of any trace. */
#define _GNU_SOURCE
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char HELP[] = "Write a self-contained HTML report of TRACE (no network, no other file): the\n"
                           "capture's facts and warnings, the key averages (click a column to sort), a flame\n"
                           "graph of total CPU time, a timeline with a track per thread, and the memory\n"
                           "allocated over time with its peak. OUT appears whole or not at all.\n";

#define HTML_OPTIONS(X)                                                        \
    X(MACHINE, "machine", "FILE",                                              \
      "a roofline chart after the table, against that machine's ceilings\n"    \
      "(opprof machine --json): a dot per operator with FLOPs; a trace that\n" \
      "carries its machine (profile_cpu --roofline) has the chart without it")
TOOL_OPTIONS(HTML_OPTIONS);

static int run(int argc, char **argv) {
    const char *machine_path = NULL;
    for (int c; (c = tool_next_option(argc, argv, OPTIONS)) != TOOL_OPTIONS_END;) {
        if (c != OPT_MACHINE) return TOOL_EXIT_USAGE; /* getopt said which */
        machine_path = optarg;
    }
    opprof_machine machine;
    if (optind != argc - 2) return tool_usage_error("html", "html takes a TRACE and an OUT file");
    const char *trace = argv[optind], *out = argv[optind + 1];
    opprof_capture *cap;
    char *page = NULL;
    int rc = tool_load(trace, &cap);
    if (rc) return rc;
    const opprof_machine *use = NULL; /* --machine's, else the trace's own; without both: no chart */
    if (machine_path || opprof_capture_machine(cap)) {
        rc = tool_machine_for(machine_path, cap, &machine);
        if (rc) {
            opprof_capture_free(cap);
            return rc;
        }
        use = &machine;
    }
    rc = opprof_capture_html_roofline_to_string(cap, use, &page);
    opprof_capture_free(cap);
    return tool_emit(trace, rc, page, out);
}

static const char EXAMPLES[] = "  opprof html trace.json report.html       # then open report.html in a browser\n";

TOOL_COMMAND(html, "html TRACE OUT.html [OPTIONS]",
             "a self-contained HTML report: table, flame graph, timeline, memory", NULL);
