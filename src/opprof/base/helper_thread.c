/* helper_thread.c - a thread of opprof's own beside the program's (the
 * watcher, the sampler's drainer, the flight saver; work that splits in two:
 * a large trace's second half, a large sort, started only where a second CPU
 * can run it): started with every signal blocked, so that the program's
 * signals are never delivered to it. */
#define _GNU_SOURCE
#include "base/base.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

int opprof__usable_cpus(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

int opprof__helper_start(pthread_t *thread, void *(*run)(void *), void *arg) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(thread, NULL, run, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc ? -rc : 0;
}
