/* spare_chunks.c - recording chunks populated ahead, on a helper thread.
 *
 * A stream's second chunk on is a mapping populated whole (alloc.c): the
 * kernel clears its 2 MiB then, on the thread that records. On these VMs the
 * clear was 80 % of what a malloc+free pair added under `record --memory`
 * (perf: clear_page_erms), since the host backs a guest's page at its first
 * touch. Here the next chunk is made while the current one fills: a thread
 * that needs one takes a spare of its length when one is ready and asks for
 * the next; the helper (started at the first ask, where a second CPU can run
 * it) maps and populates it. A thread that finds none populates its own, as
 * before. At most SPARES chunks wait (4 MiB); they are kept for the next
 * window, as a stream keeps its chunks.
 *
 * The helper, "opprof-spares", blocks every signal (helper_thread.c) and
 * records nothing. In a
 * child just forked it does not exist: the child starts its own at its next
 * ask, and keeps the spares it inherited. */
#define _GNU_SOURCE
#include "base/base.h"

#include <pthread.h>
#include <sched.h>

enum { SPARES = 2 };

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_asked = PTHREAD_COND_INITIALIZER;
static char *g_spare[SPARES]; /* under g_lock */
static size_t g_count;        /* spares ready; all of g_length bytes */
static size_t g_length;       /* the length last asked for; 0: none */
static bool g_started;        /* the helper runs (or could not be started: g_failed) */
static bool g_failed;
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;

static void *populate_ahead(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "opprof-spares"); /* what top and gdb show */
    /* a CPU's idle time only: where the scheduler put it beside the program's
     * thread, it took that thread's CPU (loops of 6 M functions waited up to
     * 125 ms of 270) */
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &(struct sched_param){0});
    pthread_mutex_lock(&g_lock);
    for (;;) {
        while (!g_length || g_count == SPARES) pthread_cond_wait(&g_asked, &g_lock);
        size_t length = g_length;
        pthread_mutex_unlock(&g_lock);
        char *made = opprof__map_populated(length);
        pthread_mutex_lock(&g_lock);
        if (!made) {
            g_length = 0; /* out of memory: the next ask tries again */
        } else if (length == g_length && g_count < SPARES) {
            g_spare[g_count++] = made;
        } else {
            opprof__unmap_populated(made, length);
        }
    }
    return NULL;
}

static void lock_for_fork(void) { pthread_mutex_lock(&g_lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&g_lock); }
static void forked_child(void) {
    pthread_mutex_init(&g_lock, NULL);
    pthread_cond_init(&g_asked, NULL);
    g_started = g_failed = false;
}
static void register_fork_handlers(void) { pthread_atfork(lock_for_fork, unlock_after_fork, forked_child); }

/* Never waits for the lock: the helper, which runs when a CPU is idle, may
 * hold it while the program's threads keep every CPU busy. */
char *opprof__spare_take(size_t length) {
    pthread_once(&g_fork_once, register_fork_handlers);
    if (pthread_mutex_trylock(&g_lock) != 0) return NULL;
    char *taken = NULL;
    if (g_count && g_length == length) {
        taken = g_spare[--g_count];
    } else {
        for (size_t i = 0; i < g_count; i++) opprof__unmap_populated(g_spare[i], g_length);
        g_count = 0;
    }
    g_length = length;
    if (!g_started && !g_failed) {
        pthread_t helper;
        g_started = opprof__usable_cpus() >= 2 && opprof__helper_start(&helper, populate_ahead, NULL) == 0;
        if (g_started)
            pthread_detach(helper);
        else
            g_failed = true;
    }
    pthread_cond_signal(&g_asked);
    pthread_mutex_unlock(&g_lock);
    return taken;
}
