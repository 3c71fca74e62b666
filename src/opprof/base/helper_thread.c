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
#include <signal.h>
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
} g_own[OWN_MAX];

static void *helper_main(void *p) {
    struct own_slot *slot = p;
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

void opprof__helper_wait(pthread_cond_t *cond, pthread_mutex_t *lock) {
    struct timespec at = opprof__helper_deadline();
    if (pthread_cond_clockwait(cond, lock, CLOCK_MONOTONIC, &at) != ETIMEDOUT) return;
    pthread_mutex_unlock(lock); /* exit's handlers may need it (a session's stop) */
    opprof__end_if_only_helpers_left();
    pthread_mutex_lock(lock);
}

static struct own_slot *take_slot(void *(*run)(void *), void *arg) {
    for (int k = 0; k < OWN_MAX; k++) {
        int free_slot = 0;
        if (__atomic_compare_exchange_n(&g_own[k].taken, &free_slot, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            g_own[k].run = run, g_own[k].arg = arg;
            return &g_own[k];
        }
    }
    return NULL;
}

int opprof__helper_start(pthread_t *thread, void *(*run)(void *), void *arg) {
    struct own_slot *slot = take_slot(run, arg);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = slot ? pthread_create(thread, NULL, helper_main, slot) : pthread_create(thread, NULL, run, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc && slot) __atomic_store_n(&slot->taken, 0, __ATOMIC_RELEASE);
    return rc ? -rc : 0;
}
