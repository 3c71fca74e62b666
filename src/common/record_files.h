/* record_files.h - the files by which `opprof record`, the preload it puts
 * into the program (src/preload/exec.c) and the program's OPPROF_TRACE
 * session (src/opprof/autostart/autostart.c) tell each other what happened
 * in processes that cannot call one another. Three binaries, one spelling.
 *
 * Beside record's OPPROF_RECORD_EXITED file:
 * - EXITED + RECORD_RAN_SUFFIX: the programs that children of the profiled
 *   process ran without the profile, one a line;
 * - EXITED + RECORD_TOOK_SUFFIX: the program that a child of the profiled
 *   process ran with the profile (made with O_EXCL: one per record), a line;
 *   then RECORD_MOVED_LINE when the profiled process made its capture DIR.
 * Beside OPPROF_TRACE's DIR:
 * - DIR + RECORD_CHILD_SUFFIX: that program's capture (its own OPPROF_TRACE).
 *   The profiled process puts it in DIR's place at its exit when it recorded
 *   no range of its own and its children took more CPU time than it did: it
 *   was a wrapper that forks (`time prog`, `sh -c 'prog; x'`, `timeout`). */
#ifndef OPPROF_COMMON_RECORD_FILES_H
#define OPPROF_COMMON_RECORD_FILES_H

#define RECORD_RAN_SUFFIX ".ran"
#define RECORD_TOOK_SUFFIX ".took"
#define RECORD_CHILD_SUFFIX ".opprof-child"
#define RECORD_MOVED_LINE "moved to DIR\n"

#endif
