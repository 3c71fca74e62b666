/* exec.h - `opprof record` across exec (exec.c). */
#ifndef OPPROF_PRELOAD_EXEC_H
#define OPPROF_PRELOAD_EXEC_H

#include <stdbool.h>
#include <stddef.h>

/* The file where a child of the process that record started names each
 * program it execs, one a line: OPPROF_RECORD_EXITED's path and ".ran"
 * (opprof record reads it, then removes it). False without
 * OPPROF_RECORD_EXITED or when `size` is short. Async-signal-safe. */
bool opprof__child_ran_path(char *path, size_t size);

#endif
