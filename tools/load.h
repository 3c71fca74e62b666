/* load.h - what the commands of tools/opprof.c share (load.c). */
#ifndef OPPROF_TOOLS_LOAD_H
#define OPPROF_TOOLS_LOAD_H

#include <opprof/capture.h>

#include <stdbool.h>
#include <stdint.h>

enum { EXIT_PROBLEMS = 1, EXIT_UNREADABLE = 2, EXIT_USAGE = 64 };

/** A progress bar on stderr, for files over 100 MB read on a terminal. */
typedef struct progress {
    const char *path;
    bool enabled;
    double started;
} progress;
void opprof_tool_progress_init(progress *pr, const char *path);
/** The reader's on_progress, with a progress as ctx. */
void opprof_tool_on_progress(void *ctx, int64_t done, int64_t total);

/** Read a trace; on failure print why (file, position, reason) and return
 *  EXIT_UNREADABLE. Events the reader could not use are never dropped
 *  silently: their count and the first reason go to stderr, and a trace with
 *  problems and no event at all is an error. */
int opprof_tool_load(const char *path, opprof_capture **out);

/** Say why `path` could not be written (and where, when not obvious). */
void opprof_tool_write_error(const char *path, int rc);

#endif
