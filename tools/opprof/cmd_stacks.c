/* cmd_stacks.c - `opprof stacks`: folded stacks of a trace. */
#define _GNU_SOURCE
#include "tool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char HELP[] = "Folded stacks on stdout: 'outer;inner;op COUNT' lines for flamegraph.pl and\n"
                           "speedscope. COUNT is self CPU time in integer microseconds, or:\n";

#define STACKS_OPTIONS(X)                                                   \
    X(MEMORY, "memory", NULL, "the bytes each frame allocated itself")      \
    X(SAMPLES, "samples", NULL,                                             \
      "the native samples: the ranges and operators open at each sample,\n" \
      "then its native frames (a sampled trace)")
TOOL_OPTIONS(STACKS_OPTIONS);

static int run(int argc, char **argv) {
    opprof_stacks_metric metric = OPPROF_STACKS_SELF_TIME;
    for (int c; (c = tool_next_option(argc, argv, OPTIONS)) != TOOL_OPTIONS_END;) {
        switch (c) {
        case OPT_MEMORY: metric = OPPROF_STACKS_ALLOCATED_BYTES; break;
        case OPT_SAMPLES: metric = OPPROF_STACKS_SAMPLES; break;
        default: return TOOL_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) return tool_usage_error("stacks", "stacks takes one TRACE");
    opprof_capture *cap;
    int rc = tool_load(argv[optind], &cap);
    if (!rc && (rc = tool_need_timeline(argv[optind], cap, "stacks"))) opprof_capture_free(cap);
    if (rc) return rc;
    char *text = NULL;
    size_t n_samples;
    opprof_capture_samples(cap, &n_samples);
    if (metric == OPPROF_STACKS_SAMPLES && !n_samples)
        fprintf(stderr, "opprof: %s: the trace has no samples (record with --sample, or OPPROF_SAMPLE=HZ)\n",
                argv[optind]);
    rc = opprof_capture_stacks_to_string(cap, metric, &text);
    opprof_capture_free(cap);
    return tool_emit(argv[optind], rc, text, NULL);
}

static const char EXAMPLES[] =
    "  opprof stacks trace.json > trace.folded            # flamegraph.pl trace.folded > flame.svg\n"
    "  opprof stacks --samples trace.json                 # the native samples' stacks\n";

TOOL_COMMAND(stacks, "stacks TRACE [OPTIONS]", "folded stacks of a trace for flamegraph.pl and speedscope", NULL);
