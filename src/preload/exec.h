/* exec.h - `opprof record` across exec and fork (exec.c). */
#ifndef OPPROF_PRELOAD_EXEC_H
#define OPPROF_PRELOAD_EXEC_H

#include <stdbool.h>

/* A child of this process (the one record profiles) ran a program with a
 * profile of its own: this process was a wrapper that forks (`time prog`),
 * and what it did not record is not worth a word. */
bool opprof__child_took_profile(void);

#endif
