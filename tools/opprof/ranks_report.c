/* ranks_report.c - `opprof report --ranks DIR`: the ranks of a distributed
 * run (DIR/rank-K/, each rank's last capture) compared. */
#define _GNU_SOURCE
#include "tool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_RANKS = 4096 };

/* DIR/rank-K's last capture for K = 0, 1, ... until one is missing. */
static int rank_traces(const char *dir, char (*paths)[4096], int *n) {
    *n = 0;
    for (int k = 0; k < MAX_RANKS; k++) {
        int rc = opprof_ranks_trace_path(dir, k, paths[k], sizeof paths[k]);
        if (rc == -ENOENT) break;
        if (rc) {
            fprintf(stderr, "opprof: %s/rank-%d: %s\n", dir, k,
                    rc == OPPROF_EFORMAT ? "no trace (*.json) in it" : opprof_strerror(rc));
            return TOOL_EXIT_UNREADABLE;
        }
        (*n)++;
    }
    if (*n == 0) {
        fprintf(stderr, "opprof: %s: no rank-0/ directory (as profile_cpu --parallel writes)\n", dir);
        return TOOL_EXIT_UNREADABLE;
    }
    return 0;
}

int tool_ranks_report(const char *dir, bool json) {
    char(*paths)[4096] = calloc(MAX_RANKS, sizeof *paths);
    opprof_capture **caps = calloc(MAX_RANKS, sizeof *caps);
    int n = 0, rc = paths && caps ? rank_traces(dir, paths, &n) : TOOL_EXIT_UNREADABLE;
    for (int k = 0; k < n && !rc; k++) rc = tool_load(paths[k], &caps[k]);
    opprof_ranks *ranks = NULL;
    char *text = NULL;
    if (!rc) {
        int err = opprof_ranks_analyze(caps, (size_t)n, &ranks);
        if (!err) err = json ? opprof_ranks_json_to_string(ranks, &text) : opprof_ranks_table_to_string(ranks, &text);
        if (err) {
            fprintf(stderr, "opprof: %s: %s\n", dir, opprof_strerror(err));
            rc = TOOL_EXIT_UNREADABLE;
        } else {
            fputs(text, stdout);
        }
    }
    opprof_free(text);
    opprof_ranks_free(ranks);
    for (int k = 0; caps && k < n; k++) opprof_capture_free(caps[k]);
    free(caps);
    free(paths);
    return rc;
}
