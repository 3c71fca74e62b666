/* cmd_diff.c - `opprof diff`: two traces compared operator by operator. */
#define _GNU_SOURCE
#include "tool.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char HELP[] =
    "Compare two traces per operator: calls, self and total CPU time, self CPU memory,\n"
    "and self device time (Self CUDA...) when both traces have it, before and after, the\n"
    "change and the ratio, sorted by the largest change in self time (CPU or device);\n"
    "kernels are rows of their own; totals; notes where the two captures' configurations\n"
    "differ.\n"
    "  --row-limit N   rows to print (default 30; -1 or 0: all)\n"
    "  --json          the comparison as JSON\n"
    "  --html OUT      write it as a self-contained HTML page (a sortable table with\n"
    "                  before/after bars) to OUT instead\n";

static int run(int argc, char **argv) {
    static const struct option longs[] = {{"row-limit", required_argument, 0, 'n'},
                                          {"json", no_argument, 0, 'j'},
                                          {"html", required_argument, 0, 'H'},
                                          {0, 0, 0, 0}};
    int row_limit = 30;
    bool json = false;
    const char *html = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (tool_parse_count(optarg, "--row-limit", &row_limit)) return TOOL_EXIT_USAGE;
            break;
        case 'j': json = true; break;
        case 'H': html = optarg; break;
        default: return TOOL_EXIT_USAGE;
        }
    }
    if (optind != argc - 2) return tool_usage_error("diff", "diff takes two traces, BEFORE and AFTER");
    if (json && html) return tool_usage_error("diff", "diff takes --json or --html, not both");
    opprof_capture *before = NULL, *after = NULL;
    int rc = tool_load(argv[optind], &before);
    if (!rc) rc = tool_load(argv[optind + 1], &after);
    if (rc) {
        opprof_capture_free(before);
        return rc;
    }
    char *text = NULL;
    opprof_diff_format format = html ? OPPROF_DIFF_HTML : json ? OPPROF_DIFF_JSON : OPPROF_DIFF_TEXT;
    rc = opprof_capture_diff_to_string(before, after, row_limit, format, &text);
    opprof_capture_free(before);
    opprof_capture_free(after);
    return tool_emit("diff", rc, text, html);
}

TOOL_COMMAND(diff, "diff BEFORE AFTER [--row-limit N] [--json | --html OUT.html]",
             "compare two traces operator by operator", NULL);
