/* ranks.c - the captures of a distributed run: `opprof merge` puts them on
 * one timeline, `opprof report --ranks` compares them. */
#define _GNU_SOURCE
#include "ranks.h"

#include "load.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int opprof_cmd_merge(int argc, char **argv) {
    static const struct option longs[] = {{"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *out = NULL;
    int c;
    while ((c = getopt_long(argc, argv, "ho:", longs, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'h':
            printf("usage: opprof merge TRACE... -o OUT.json\n\n"
                   "One trace from the traces of several ranks (opprof's rank-K/ captures, or PyTorch's\n"
                   "per-rank Kineto traces; gzip accepted), read as streams: memory stays small.\n"
                   "Timestamps move onto rank 0's clock with each trace's distributedInfo clock offset;\n"
                   "each rank's processes are labelled \"rank K\". OUT appears whole or not at all.\n");
            return 0;
        default: return EXIT_USAGE;
        }
    }
    if (!out || optind >= argc) {
        fprintf(stderr, "opprof: merge takes traces and -o OUT\n(run 'opprof merge --help')\n");
        return EXIT_USAGE;
    }
    opprof_merge_result res;
    opprof_read_error err;
    int rc = opprof_merge_traces((const char *const *)argv + optind, (size_t)(argc - optind), out, &res, &err);
    if (rc) {
        fprintf(stderr, "opprof: merge: %s\n", err.message[0] ? err.message : opprof_strerror(rc));
        return EXIT_UNREADABLE;
    }
    fprintf(stderr, "opprof: %d traces, %lld events merged into %s\n", res.inputs, (long long)res.events, out);
    return 0;
}

/* ---- report --ranks ---- */

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
            return EXIT_UNREADABLE;
        }
        (*n)++;
    }
    if (*n == 0) {
        fprintf(stderr, "opprof: %s: no rank-0/ directory (as profile_cpu --parallel writes)\n", dir);
        return EXIT_UNREADABLE;
    }
    return 0;
}

int opprof_ranks_report(const char *dir, bool json) {
    char (*paths)[4096] = calloc(MAX_RANKS, sizeof *paths);
    opprof_capture **caps = calloc(MAX_RANKS, sizeof *caps);
    int n = 0, rc = paths && caps ? rank_traces(dir, paths, &n) : EXIT_UNREADABLE;
    for (int k = 0; k < n && !rc; k++) rc = opprof_tool_load(paths[k], &caps[k]);
    opprof_ranks *ranks = NULL;
    char *text = NULL;
    if (!rc) {
        int err = opprof_ranks_analyze(caps, (size_t)n, &ranks);
        if (!err) err = json ? opprof_ranks_json_to_string(ranks, &text) : opprof_ranks_table_to_string(ranks, &text);
        if (err) {
            fprintf(stderr, "opprof: %s: %s\n", dir, opprof_strerror(err));
            rc = EXIT_UNREADABLE;
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
