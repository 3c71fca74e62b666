/* helper_thread.c - a thread of opprof's own beside the program's (the
 * watcher, the sampler's drainer, the flight saver; work that splits in two:
 * a large trace's second half, a large sort, started only where a second CPU
 * can run it): started with every signal blocked, so that the program's
 * signals are never delivered to it. */
#define _GNU_SOURCE
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int opprof__usable_cpus(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

/* opprof's helpers that run now, a slot each: their thread ids (0: none),
 * which the sampler drops the samples and the times off the CPU of (the
 * watcher's whole run asleep was a thread of the program's name). A slot is
 * taken by the start (taken: its function and argument, no allocation: an
 * allocator the program set may hold a helper's first call), its tid set by
 * the helper, and given back when it returns. Past OWN_MAX at once, a helper
 * runs unknown. */
enum { OWN_MAX = 64 };
static struct own_slot {
    int taken;   /* atomic */
    int32_t tid; /* atomic */
    void *(*run)(void *);
    void *arg;
    pthread_t *handle; /* the starter's, which it joins; NULL: detached */
    /* pausing (opprof_threads_pause): what the helper waits on now (atomic),
     * that the pause wakes it; paused: its thread ended at a wait, gone_tid's */
    pthread_cond_t *waits_on;
    pthread_mutex_t *waits_lock;
    sem_t *wakes_by;
    int paused; /* atomic: RUNNING... below */
    int32_t gone_tid;
} g_own[OWN_MAX];

/* A slot's pause: its thread runs; ended at a pause point; being started
 * again by a resume; or could not be (its work stops; no join). */
enum { RUNNING, PAUSED, RESTARTING, NOT_STARTED };
static __thread struct own_slot *t_slot; /* a helper's own */
static int g_pausing;                    /* atomic: helpers end their thread at their next wait */

static void *helper_main(void *p) {
    struct own_slot *slot = p;
    t_slot = slot;
    pthread_setname_np(pthread_self(), "opprof"); /* what top and gdb show; a helper may name itself further */
    opprof__c_numbers_begin();                    /* for its whole run: a new thread has the program's locale */
    __atomic_store_n(&slot->tid, (int32_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    void *result = slot->run(slot->arg);
    __atomic_store_n(&slot->tid, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->taken, 0, __ATOMIC_RELEASE);
    return result;
}

bool opprof__is_own_thread(int32_t tid) {
    for (int k = 0; k < OWN_MAX; k++)
        if (__atomic_load_n(&g_own[k].tid, __ATOMIC_ACQUIRE) == tid) return true;
    return false;
}

/* The number after `field` in text, or -1. */
static long status_number(const char *text, const char *field) {
    const char *at = strstr(text, field);
    if (!at) return -1;
    at += strlen(field);
    while (*at == ' ' || *at == '\t') at++;
    long v = -1;
    for (; *at >= '0' && *at <= '9'; at++) v = (v < 0 ? 0 : v * 10) + (*at - '0');
    return v;
}

bool opprof__only_helpers_left(void) {
    char text[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return false;
    text[n] = '\0';
    const char *state = strstr(text, "\nState:"), *line = state ? state + 7 : NULL; /* the main thread's */
    while (line && (*line == ' ' || *line == '\t')) line++;
    if (!line || *line != 'Z') return false; /* the main thread runs */
    long threads = status_number(text, "\nThreads:"), helpers = 0;
    for (int k = 0; k < OWN_MAX; k++) helpers += __atomic_load_n(&g_own[k].taken, __ATOMIC_ACQUIRE) != 0;
    return threads == helpers + 1; /* the main thread's zombie, and the helpers */
}

void opprof__end_if_only_helpers_left(void) {
    static int ending; /* atomic: one helper calls exit, the others wait on as they were */
    if (opprof__only_helpers_left() && !__atomic_exchange_n(&ending, 1, __ATOMIC_ACQ_REL)) exit(0);
}

struct timespec opprof__helper_deadline(void) {
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    at.tv_nsec += OPPROF__HELPER_WATCH_MS * 1000000L;
    if (at.tv_nsec >= 1000000000L) at.tv_sec++, at.tv_nsec -= 1000000000L;
    return at;
}

/* ---- pausing: the process of the program's threads alone for a moment ---- */

void opprof__helper_pause_point(pthread_mutex_t *held) {
    struct own_slot *slot = t_slot;
    if (!slot || !__atomic_load_n(&g_pausing, __ATOMIC_SEQ_CST)) return;
    int32_t tid = __atomic_load_n(&slot->tid, __ATOMIC_ACQUIRE);
    __atomic_store_n(&slot->gone_tid, tid, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->paused, PAUSED, __ATOMIC_SEQ_CST);
    int paused = PAUSED;
    /* a resume that began meanwhile (a pause given up) may not have seen it: it runs on */
    if (!__atomic_load_n(&g_pausing, __ATOMIC_SEQ_CST) &&
        __atomic_compare_exchange_n(&slot->paused, &paused, RUNNING, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return;
    __atomic_store_n(&slot->tid, 0, __ATOMIC_RELEASE);
    if (held) pthread_mutex_unlock(held);
    pthread_detach(pthread_self()); /* no one joins this thread: the starter's handle gets the next one's */
    pthread_exit(NULL);
}

bool opprof__helpers_paused(void) { return __atomic_load_n(&g_pausing, __ATOMIC_SEQ_CST) != 0; }

void opprof__helper_wakes_by(sem_t *sem) {
    if (t_slot) __atomic_store_n(&t_slot->wakes_by, sem, __ATOMIC_SEQ_CST);
}

/* The thread a slot paused has ended, and the kernel has let its task go. */
static bool gone(struct own_slot *slot) {
    char task[64];
    snprintf(task, sizeof task, "/proc/self/task/%d", (int)__atomic_load_n(&slot->gone_tid, __ATOMIC_ACQUIRE));
    return access(task, F_OK) != 0;
}

static void wake(struct own_slot *slot) {
    pthread_mutex_t *lock = __atomic_load_n(&slot->waits_lock, __ATOMIC_SEQ_CST);
    pthread_cond_t *cond = __atomic_load_n(&slot->waits_on, __ATOMIC_SEQ_CST);
    if (lock && cond) {
        pthread_mutex_lock(lock); /* the helper looks at g_pausing under it before it waits */
        pthread_cond_broadcast(cond);
        pthread_mutex_unlock(lock);
    }
    sem_t *sem = __atomic_load_n(&slot->wakes_by, __ATOMIC_SEQ_CST);
    if (sem) sem_post(sem);
}

enum { PAUSE_WAIT_MS = 2000 };

int opprof_threads_pause(void) {
    __atomic_store_n(&g_pausing, 1, __ATOMIC_SEQ_CST);
    for (int k = 0; k < OWN_MAX; k++)
        if (__atomic_load_n(&g_own[k].taken, __ATOMIC_ACQUIRE) && g_own[k].tid != (int32_t)syscall(SYS_gettid))
            wake(&g_own[k]);
    for (int ms = 0; ms < PAUSE_WAIT_MS; ms++) {
        bool all = true;
        for (int k = 0; k < OWN_MAX && all; k++)
            all = !__atomic_load_n(&g_own[k].taken, __ATOMIC_ACQUIRE) ||
                  (__atomic_load_n(&g_own[k].paused, __ATOMIC_SEQ_CST) == PAUSED && gone(&g_own[k]));
        if (all) return 0;
        nanosleep(&(struct timespec){0, 1000000L}, NULL);
    }
    opprof_threads_resume(); /* one that does not pause (a trace's second half being read) */
    return OPPROF_EBUSY;
}

static int start_thread(struct own_slot *slot) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    int rc = pthread_create(&t, NULL, helper_main, slot);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0 && slot->handle) *slot->handle = t;
    if (rc == 0 && !slot->handle) pthread_detach(t);
    return rc;
}

void opprof_threads_resume(void) {
    __atomic_store_n(&g_pausing, 0, __ATOMIC_SEQ_CST);
    for (int k = 0; k < OWN_MAX; k++) {
        struct own_slot *slot = &g_own[k];
        int paused = PAUSED;
        if (!__atomic_load_n(&slot->taken, __ATOMIC_ACQUIRE) ||
            !__atomic_compare_exchange_n(&slot->paused, &paused, RESTARTING, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
            continue;
        while (!gone(slot)) nanosleep(&(struct timespec){0, 1000000L}, NULL); /* its thread is leaving */
        __atomic_store_n(&slot->paused, start_thread(slot) == 0 ? RUNNING : NOT_STARTED, __ATOMIC_SEQ_CST);
    }
}

void opprof__helper_join(pthread_t *thread) {
    for (int k = 0; k < OWN_MAX; k++)
        if (g_own[k].handle == thread && __atomic_load_n(&g_own[k].taken, __ATOMIC_ACQUIRE) &&
            __atomic_load_n(&g_own[k].paused, __ATOMIC_SEQ_CST) == NOT_STARTED) { /* no thread to join */
            g_own[k].paused = RUNNING;
            __atomic_store_n(&g_own[k].taken, 0, __ATOMIC_RELEASE);
            return;
        }
    pthread_join(*thread, NULL);
}

void opprof__helper_wait(pthread_cond_t *cond, pthread_mutex_t *lock) {
    struct own_slot *slot = t_slot;
    if (slot) {
        __atomic_store_n(&slot->waits_on, cond, __ATOMIC_SEQ_CST);
        __atomic_store_n(&slot->waits_lock, lock, __ATOMIC_SEQ_CST);
    }
    opprof__helper_pause_point(lock);
    struct timespec at = opprof__helper_deadline();
    int rc = pthread_cond_clockwait(cond, lock, CLOCK_MONOTONIC, &at);
    opprof__helper_pause_point(lock);
    if (rc != ETIMEDOUT) return;
    pthread_mutex_unlock(lock); /* exit's handlers may need it (a session's stop) */
    opprof__end_if_only_helpers_left();
    pthread_mutex_lock(lock);
}

static struct own_slot *take_slot(void *(*run)(void *), void *arg, pthread_t *thread) {
    for (int k = 0; k < OWN_MAX; k++) {
        int free_slot = 0;
        if (__atomic_compare_exchange_n(&g_own[k].taken, &free_slot, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            struct own_slot *slot = &g_own[k];
            slot->run = run, slot->arg = arg, slot->handle = thread;
            __atomic_store_n(&slot->waits_on, NULL, __ATOMIC_SEQ_CST);
            __atomic_store_n(&slot->waits_lock, NULL, __ATOMIC_SEQ_CST);
            __atomic_store_n(&slot->wakes_by, NULL, __ATOMIC_SEQ_CST);
            __atomic_store_n(&slot->paused, RUNNING, __ATOMIC_SEQ_CST);
            return slot;
        }
    }
    return NULL;
}

/* A fork's child has the thread that forked alone: no helper of the
 * parent's runs there (a pause in it waited for them, only_helpers_left
 * counted them). */
static void forked_child(void) {
    memset(g_own, 0, sizeof g_own);
    g_pausing = 0;
}
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;
static void register_fork_handler(void) { pthread_atfork(NULL, NULL, forked_child); }

int opprof__helper_start(pthread_t *thread, void *(*run)(void *), void *arg) {
    pthread_once(&g_fork_once, register_fork_handler);
    struct own_slot *slot = take_slot(run, arg, thread);
    int rc = 0;
    if (slot) {
        rc = start_thread(slot);
        if (rc) __atomic_store_n(&slot->taken, 0, __ATOMIC_RELEASE);
    } else {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pthread_t t;
        rc = pthread_create(thread ? thread : &t, NULL, run, arg);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc == 0 && !thread) pthread_detach(t);
    }
    return rc ? -rc : 0;
}
