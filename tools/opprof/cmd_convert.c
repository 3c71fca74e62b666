/* cmd_convert.c - `opprof convert IN OUT`: any trace opprof reads, written as
 * Perfetto's native format (OUT.pftrace) or as a Chrome trace (OUT.json,
 * OUT.json.gz). */
#define _GNU_SOURCE
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char HELP[] = "Write TRACE (any trace opprof reads: opprof's, PyTorch's, another trace-event\n"
                           "writer's; plain or gzip) as OUT, in the format OUT's name says:\n"
                           "  *.pftrace, *.perfetto-trace   Perfetto's native protobuf trace (ui.perfetto.dev)\n"
                           "  *.pftrace.gz                   the same, gzip-compressed\n"
                           "  *.json                         a Chrome trace (Kineto's JSON object form)\n"
                           "  *.json.gz                      the same, gzip-compressed\n"
                           "OUT appears whole or not at all.\n";

#define CONVERT_OPTIONS(X) /* none */
TOOL_OPTIONS(CONVERT_OPTIONS);

static int run(int argc, char **argv) {
    if (tool_next_option(argc, argv, OPTIONS) != TOOL_OPTIONS_END) return TOOL_EXIT_USAGE; /* getopt said which */
    if (optind != argc - 2) return tool_usage_error("convert", "convert takes a TRACE and an OUT file");
    const char *in = argv[optind], *out = argv[optind + 1];
    if (tool_format_of(out) == TOOL_FORMAT_UNKNOWN)
        return tool_usage_error("convert",
                                "OUT's name must end in .pftrace, .pftrace.gz, .perfetto-trace, .json "
                                "or .json.gz, not '%s'",
                                out);
    opprof_capture *cap;
    int rc = tool_load_to_write(in, &cap);
    if (rc) return rc;
    rc = tool_need_timeline(in, cap, "convert");
    if (!rc) rc = tool_write_trace(cap, out);
    opprof_capture_free(cap);
    return rc;
}

static const char EXAMPLES[] =
    "  opprof convert trace.json trace.pftrace  # Perfetto's native format (3 to 14 times smaller)\n"
    "  opprof convert trace.pftrace trace.json.gz\n";

TOOL_COMMAND(convert, "convert TRACE OUT.pftrace|OUT.pftrace.gz|OUT.json|OUT.json.gz",
             "write a trace as Perfetto's native format or as a Chrome trace", NULL);
