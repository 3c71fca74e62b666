/* quiet_write.h - what opprof writes inside a program (a file, a message on
 * stderr) raises no signal there. A write into a pipe that nobody reads
 * raises SIGPIPE, and one past the program's file size limit (ulimit -f)
 * SIGXFSZ: either kills a program that does not handle it, so that a capture
 * would change its exit status. While opprof writes, its thread blocks both;
 * the write fails instead (EPIPE, EFBIG), and a signal it raised is taken
 * back before the thread's mask is restored (one that was pending before is
 * the program's, and stays). Shared by libopprof (base/file.c, its messages)
 * and libopprof_record.so (src/preload), which cannot reach libopprof's
 * hidden functions. The functions need signal.h's POSIX part: a file that
 * calls them defines _GNU_SOURCE first; the struct alone needs nothing. */
#ifndef OPPROF_QUIET_WRITE_H
#define OPPROF_QUIET_WRITE_H

#include <stdbool.h>

typedef struct opprof__quiet {
    bool masked;                     /* the signals blocked here; old_mask to restore */
    bool pending_before[2];          /* SIGXFSZ, SIGPIPE pending already: not ours to take */
    unsigned long long old_mask[16]; /* the thread's sigset_t */
} opprof__quiet;

#if defined(_GNU_SOURCE) || defined(_POSIX_C_SOURCE)
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

_Static_assert(sizeof(sigset_t) <= sizeof((opprof__quiet *)0)->old_mask, "opprof__quiet.old_mask holds a sigset_t");

#define OPPROF__WRITE_SIGNALS \
    { SIGXFSZ, SIGPIPE }

static inline void opprof__quiet_begin(opprof__quiet *q) {
    const int opprof__write_signals[2] = OPPROF__WRITE_SIGNALS;
    sigset_t set, pending;
    sigemptyset(&set);
    for (int k = 0; k < 2; k++) sigaddset(&set, opprof__write_signals[k]);
    q->masked = pthread_sigmask(SIG_BLOCK, &set, (sigset_t *)(void *)q->old_mask) == 0;
    bool known = q->masked && sigpending(&pending) == 0;
    for (int k = 0; k < 2; k++) q->pending_before[k] = known && sigismember(&pending, opprof__write_signals[k]);
}

static inline void opprof__quiet_end(opprof__quiet *q) {
    const int opprof__write_signals[2] = OPPROF__WRITE_SIGNALS;
    if (!q->masked) return;
    sigset_t pending;
    const struct timespec now = {0, 0};
    for (int k = 0; k < 2; k++) {
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, opprof__write_signals[k]);
        if (!q->pending_before[k] && sigpending(&pending) == 0 && sigismember(&pending, opprof__write_signals[k]))
            sigtimedwait(&one, NULL, &now);
    }
    pthread_sigmask(SIG_SETMASK, (const sigset_t *)(const void *)q->old_mask, NULL);
    q->masked = false;
}

/* The file that fd 2 was when the program started, taken by a constructor of
 * each library (OPPROF__STDERR_AT_START, once in each). A program started
 * with stderr closed (`prog 2>&-`) that opens a file of its own gets fd 2:
 * opprof's last line ("1 capture(s) written") went into that file. A message
 * is written only while fd 2 is still the file it started as. */
typedef struct opprof__stderr_id {
    bool known, open;
    unsigned long long dev, ino;
} opprof__stderr_id;
static inline opprof__stderr_id opprof__stderr_now(void) {
    struct stat st;
    opprof__stderr_id id = {true, fstat(2, &st) == 0, 0, 0};
    if (id.open) id.dev = (unsigned long long)st.st_dev, id.ino = (unsigned long long)st.st_ino;
    return id;
}
extern opprof__stderr_id opprof__stderr_at_start;
#define OPPROF__STDERR_AT_START                                                        \
    opprof__stderr_id opprof__stderr_at_start;                                         \
    __attribute__((constructor(101))) static void opprof__take_stderr_at_start(void) { \
        opprof__stderr_at_start = opprof__stderr_now();                                \
    }
static inline bool opprof__stderr_is_the_programs(void) {
    opprof__stderr_id start = opprof__stderr_at_start, now = opprof__stderr_now();
    return !start.known || (start.open && now.open && start.dev == now.dev && start.ino == now.ino);
}

/* fprintf(stderr, ...), quietly: opprof's messages inside a program, while
 * stderr is still the program's. */
__attribute__((format(printf, 1, 2))) static inline void opprof__say(const char *format, ...) {
    if (!opprof__stderr_is_the_programs()) return;
    opprof__quiet q;
    opprof__quiet_begin(&q);
    va_list ap;
    va_start(ap, format);
    vfprintf(stderr, format, ap);
    va_end(ap);
    fflush(stderr);
    opprof__quiet_end(&q);
}
#endif

#endif
