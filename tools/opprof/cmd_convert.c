/* cmd_convert.c - `opprof convert IN OUT`: any trace opprof reads, written as
 * Perfetto's native format (OUT.pftrace) or as a Chrome trace (OUT.json,
 * OUT.json.gz). */
#define _GNU_SOURCE
#include "tool.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char HELP[] =
    "Write TRACE (any trace opprof reads: opprof's, PyTorch's, another trace-event\n"
    "writer's; plain or gzip) as OUT, in the format OUT's name says:\n"
    "  *.pftrace, *.perfetto-trace   Perfetto's native protobuf trace (ui.perfetto.dev)\n"
    "  *.pftrace.gz                   the same, gzip-compressed\n"
    "  *.json                         a Chrome trace (Kineto's JSON object form)\n"
    "  *.json.gz                      the same, gzip-compressed\n"
    "OUT appears whole or not at all.\n";

static bool ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), m = strlen(tail);
    return n > m && !strcmp(s + n - m, tail);
}

static int run(int argc, char **argv) {
    static const struct option no_options[] = {{0, 0, 0, 0}};
    if (getopt_long(argc, argv, "", no_options, NULL) != -1) return TOOL_EXIT_USAGE; /* getopt said which */
    if (optind != argc - 2) return tool_usage_error("convert", "convert takes a TRACE and an OUT file");
    const char *in = argv[optind], *out = argv[optind + 1];
    bool perfetto_gz = ends_with(out, ".pftrace.gz");
    bool perfetto = perfetto_gz || ends_with(out, ".pftrace") || ends_with(out, ".perfetto-trace");
    bool gzip = ends_with(out, ".json.gz"), json = gzip || ends_with(out, ".json");
    if (!perfetto && !json)
        return tool_usage_error("convert", "OUT's name must end in .pftrace, .pftrace.gz, .perfetto-trace, .json "
                                           "or .json.gz, not '%s'", out);
    opprof_capture *cap;
    int rc = tool_load(in, &cap);
    if (rc) return rc;
    opprof_chrome_options o = {.gzip = gzip};
    opprof_perfetto_options po = {.gzip = perfetto_gz};
    rc = perfetto ? opprof_capture_perfetto_write_ex(cap, out, &po) : opprof_capture_chrome_write_ex(cap, out, &o);
    opprof_capture_free(cap);
    if (rc) {
        tool_write_error(out, rc);
        return TOOL_EXIT_UNREADABLE;
    }
    return 0;
}

TOOL_COMMAND(convert, "convert TRACE OUT.pftrace|OUT.pftrace.gz|OUT.json|OUT.json.gz",
             "write a trace as Perfetto's native format or as a Chrome trace", NULL);
