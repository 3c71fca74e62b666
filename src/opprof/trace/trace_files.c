/* trace_files.c - which files of a directory are traces: the one rule, for
 * every place that looks for traces in a directory (a rank's, diff --stat's
 * sides). The names the tools write: NAME.json, NAME.pftrace, and either
 * gzip-compressed (.gz); not a summary (summary.json, ranks.json), a hidden
 * file, or a file being written (".tmp." in its name). */
#include "trace/trace.h"

#include <string.h>

static bool ends_with(const char *s, size_t n, const char *tail) {
    size_t t = strlen(tail);
    return n > t && !strcmp(s + n - t, tail);
}

/* JSON first: of one capture written in both forms, the JSON is the one read. */
static const char *const TRACE_SUFFIXES[] = {".json", ".json.gz", ".pftrace", ".pftrace.gz"};
enum { FIRST_PERFETTO = 2 };

size_t opprof_trace_file_stem(const char *name, bool *perfetto) {
    if (perfetto) *perfetto = false;
    if (!name || name[0] == '.' || strstr(name, ".tmp.")) return 0;
    if (!strcmp(name, "summary.json") || !strcmp(name, "ranks.json")) return 0;
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof TRACE_SUFFIXES / sizeof *TRACE_SUFFIXES; i++)
        if (ends_with(name, n, TRACE_SUFFIXES[i])) {
            if (perfetto) *perfetto = i >= FIRST_PERFETTO;
            return n - strlen(TRACE_SUFFIXES[i]);
        }
    return 0;
}

bool opprof_is_trace_file_name(const char *name) { return opprof_trace_file_stem(name, NULL) > 0; }
