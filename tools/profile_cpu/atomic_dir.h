/* atomic_dir.h - an output directory that appears whole or not at all: filled
 * as a temporary sibling, then renamed into place (atomic_dir.c). Used by
 * profile_cpu for a run and, under --parallel, for the ranks' run. */
#ifndef PROFILE_CPU_OUTDIR_H
#define PROFILE_CPU_OUTDIR_H

#include <stddef.h>

/** OUTDIR must not exist; makes its temporary sibling "OUTDIR.tmp.XXXXXX"
 *  into workdir. 0, or 1 after saying why on stderr. */
int outdir_begin(const char *outdir, char *workdir, size_t size);
/** Renames workdir (made with a plain directory's mode) to OUTDIR (never
 *  over an existing one). 0, or 1 after saying why and removing workdir. */
int outdir_publish(const char *workdir, const char *outdir);
/** Removes a directory and everything under it. */
void outdir_remove(const char *dir);

#endif
