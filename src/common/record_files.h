/* record_files.h - the files by which `opprof record`, the preload it puts
 * into the program (src/preload/exec.c) and the program's OPPROF_TRACE
 * session (src/opprof/autostart/autostart.c) tell each other what happened
 * in processes that cannot call one another. Three binaries, one spelling.
 *
 * Beside record's OPPROF_RECORD_EXITED file:
 * - EXITED + RECORD_RAN_SUFFIX: the programs that children of the profiled
 *   process ran without the profile, one a line;
 * - EXITED + RECORD_TOOK_SUFFIX: the program that a child of the profiled
 *   process ran with the profile (made with O_EXCL: one at a time), a line;
 *   ".took2" ... the same one level down: a program that a child of that
 *   program ran (a wrapper within a wrapper: `timeout 60 sh -c 'prog'`),
 *   its capture DIR.opprof-child.opprof-child (record_took_suffix);
 *   then RECORD_MOVED_LINE when the profiled process made its capture DIR,
 *   or RECORD_NOTHING_LINE when that program recorded nothing but its steps
 *   and left no capture (it told by OPPROF_RECORD_FILES, the same path);
 * - the claim + RECORD_GIVEN_BACK_SUFFIX: the claim of such a program, given
 *   back at its exit (renamed), so that the next program run at its level
 *   takes the profile (the `prog` of `sh -c 'date; prog'`, run after `date`
 *   ended); record reads the last one given back where no claim is left;
 * - the claim + RECORD_KEPT_SUFFIX: the claim of a program whose capture is
 *   its level's DIR (below), given back at its exit too, with a line of its
 *   CPU time (RECORD_CPU_LINE, ns: its own and its children's since its
 *   start), so that the programs run after it at its level take the profile
 *   in turn: each one's capture replaces the kept one when it took more CPU
 *   time, and is dropped otherwise (`sh -c 'date; prog'` under --memory,
 *   where `date` allocates: the program is the one that took the time);
 * - a claim's RECORD_EXEC_LINE: the program that its holder exec'd (`env
 *   X=1 prog`), one a line, which record names with the first;
 * - a claim's RECORD_PID_LINE: its holder's process id, written when its
 *   session starts; a child that finds the claim held by a process that
 *   has ended (without its exit handlers: a dash shell ends by _exit, and
 *   make runs each recipe line that has a redirection by /bin/sh) sets it
 *   aside as the claim + RECORD_EXITED_SUFFIX and takes the profile in
 *   turn; the level above settles what that process's children left
 *   (autostart's settle_levels_left_by_exit);
 * - the claim + RECORD_DROPPED_SUFFIX: the programs whose captures were
 *   dropped so (a kept one replaced, or one of less CPU time), one a line.
 * Beside OPPROF_TRACE's DIR:
 * - DIR + RECORD_CHILD_SUFFIX: that program's capture (its own OPPROF_TRACE).
 *   The profiled process puts it in DIR's place at its exit when it recorded
 *   no range of its own and its children took more CPU time than it did: it
 *   was a wrapper that forks (`time prog`, `sh -c 'prog; x'`, `timeout`);
 *   one level down, DIR + RECORD_CHILD_SUFFIX twice, and so on. A process
 *   adopts the shallowest capture below its own that its children made (one
 *   there when its session began is that of a program run before it at its
 *   level; a shell that ends by _exit adopts none: the one above it does);
 *   where a capture is kept at its level, the wrapper and its children's CPU
 *   time against the kept one's decide, as for any program run in turn. */
#ifndef OPPROF_COMMON_RECORD_FILES_H
#define OPPROF_COMMON_RECORD_FILES_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#define RECORD_RAN_SUFFIX ".ran"
#define RECORD_TOOK_SUFFIX ".took"
#define RECORD_CHILD_SUFFIX ".opprof-child"
#define RECORD_GIVEN_BACK_SUFFIX "-given-back"
#define RECORD_KEPT_SUFFIX "-kept"
#define RECORD_DROPPED_SUFFIX "-dropped"
#define RECORD_CPU_LINE "cpu_ns "
#define RECORD_EXEC_LINE "exec "
#define RECORD_PID_LINE "pid "
#define RECORD_EXITED_SUFFIX "-exited"
#define RECORD_MOVED_LINE "moved to DIR\n"
#define RECORD_NOTHING_LINE "recorded nothing but its steps\n"
/* The deepest level at which a child takes a profile of its own. */
#define RECORD_LEVELS 4

/* The level of OPPROF_TRACE's DIR: how many RECORD_CHILD_SUFFIXes end it
 * (0: the profiled process's, 1: its child's...). */
static inline int record_child_level(const char *dir) {
    size_t n = strlen(dir), k = strlen(RECORD_CHILD_SUFFIX);
    int level = 0;
    while (n >= k && !memcmp(dir + n - k, RECORD_CHILD_SUFFIX, k)) n -= k, level++;
    return level;
}

/* The claim file's suffix of a child at `level` (1 to RECORD_LEVELS), NULL past them. */
static inline const char *record_took_suffix(int level) {
    static const char *const suffix[RECORD_LEVELS] = {RECORD_TOOK_SUFFIX, RECORD_TOOK_SUFFIX "2",
                                                      RECORD_TOOK_SUFFIX "3", RECORD_TOOK_SUFFIX "4"};
    return level >= 1 && level <= RECORD_LEVELS ? suffix[level - 1] : NULL;
}

/* A child of the profiled process took the profile (record's files at
 * `files`, NULL: none): its claim is held, or was kept or dropped at its
 * exit. The profiled process, a wrapper then, leaves the saying to it. */
static inline bool record_child_took_profile(const char *files) {
    static const char *const claims[] = {RECORD_TOOK_SUFFIX, RECORD_TOOK_SUFFIX RECORD_KEPT_SUFFIX,
                                         RECORD_TOOK_SUFFIX RECORD_DROPPED_SUFFIX};
    char path[4200];
    size_t n = files ? strlen(files) : 0;
    for (size_t k = 0; n && k < sizeof claims / sizeof *claims; k++) {
        if (n + strlen(claims[k]) >= sizeof path) return false;
        memcpy(path, files, n);
        strcpy(path + n, claims[k]);
        if (access(path, F_OK) == 0) return true;
    }
    return false;
}

/* The claim file at `path` is held by a process that has ended (its
 * RECORD_PID_LINE names no process): true. No allocation and no stdio: a
 * vfork child calls it. */
static inline bool record_claim_holder_ended(const char *path) {
    char text[2048];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (fd >= 0) close(fd);
    text[n > 0 ? n : 0] = '\0';
    const char *at = strstr(text, "\n" RECORD_PID_LINE);
    long pid = 0;
    for (at = at ? at + 1 + strlen(RECORD_PID_LINE) : ""; *at >= '0' && *at <= '9'; at++) pid = pid * 10 + (*at - '0');
    return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* OPPROF_TRACE's DIR under the working directory of now, where it is
 * relative, into out: a program, or a wrapper that starts it (`sh -c 'cd
 * sub && prog'`), may change its directory before its capture is written.
 * DIR as it is where that directory cannot be told or the whole does not
 * fit. No allocation (the program's allocator may be the one recorded). */
static inline void record_absolute_dir(const char *dir, char *out, size_t size) {
    char cwd[4096];
    size_t n = dir[0] != '/' && getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0, len = strlen(dir);
    if (n + 1 + len >= size) n = 0;
    if (len >= size) len = size - 1;
    if (n) memcpy(out, cwd, n);
    if (n && cwd[n - 1] != '/') out[n++] = '/'; /* "/" ends with its own */
    memcpy(out + n, dir, len);
    out[n + len] = '\0';
}

#endif
