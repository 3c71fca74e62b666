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
 * before. At most SPARES chunks of each length wait (4 MiB for ranges'); they
 * are kept for the next window, as a stream keeps its chunks, until the
 * session stops: then the helper ends (joined: no thread of opprof's outlives
 * its session) and the spares are given back.
 *
 * The helper, "opprof-spares", blocks every signal (helper_thread.c) and
 * records nothing. In a child just forked it does not exist: the child starts
 * its own at its next ask, and keeps the spares it inherited. */
#define _GNU_SOURCE
#include "base/base.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

/* A stream's chunks have one length (ranges, memory events and marks share
 * theirs; shapes and native stacks have their own): a pool each, up to
 * LENGTHS, so that streams that alternate do not take each other's. */
enum { SPARES = 2, LENGTHS = 4 };

typedef struct pool {
    size_t length; /* 0: unused */
    size_t count;  /* spares ready */
    char *spare[SPARES];
} pool;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_asked = PTHREAD_COND_INITIALIZER;
static pool g_pools[LENGTHS]; /* under g_lock */
static pthread_t g_helper;
static bool g_started; /* the helper runs (or could not be started: g_failed) */
static bool g_failed;
static bool g_stopping; /* the helper is asked to end (opprof__spare_stop) */
static bool g_resting;  /* a mapping failed: no more until the next ask */
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;
static int64_t g_ended_cpu_ns[2];   /* atomic: helpers that ended, [0] all their CPU time, [1] its user part */
static int64_t g_running_cpu_ns[2]; /* atomic: the running one's, after its last mapping */

int64_t opprof__spare_helper_cpu_ns(bool user) {
    return __atomic_load_n(&g_ended_cpu_ns[user], __ATOMIC_ACQUIRE) +
           __atomic_load_n(&g_running_cpu_ns[user], __ATOMIC_ACQUIRE);
}

/* A pool that wants a spare, or NULL. */
static pool *wanting(void) {
    if (g_resting) return NULL;
    for (int k = 0; k < LENGTHS; k++)
        if (g_pools[k].length && g_pools[k].count < SPARES) return &g_pools[k];
    return NULL;
}

static void *populate_ahead(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "opprof-spares"); /* what top and gdb show */
    /* a CPU's idle time only: where the scheduler put it beside the program's
     * thread, it took that thread's CPU (loops of 6 M functions waited up to
     * 125 ms of 270) */
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &(struct sched_param){0});
    for (int k = 0; k < 2; k++) /* a helper before this one that opprof_threads_pause ended: its time is done */
        __atomic_add_fetch(&g_ended_cpu_ns[k], __atomic_exchange_n(&g_running_cpu_ns[k], 0, __ATOMIC_ACQ_REL),
                           __ATOMIC_ACQ_REL);
    pthread_mutex_lock(&g_lock);
    for (;;) {
        pool *p;
        while (!g_stopping && !(p = wanting())) opprof__helper_wait(&g_asked, &g_lock);
        if (g_stopping) break;
        size_t length = p->length;
        pthread_mutex_unlock(&g_lock);
        char *made = opprof__map_populated(length);
        int64_t cpu[2];
        opprof__cpu_ns(true, cpu);
        for (int k = 0; k < 2; k++) __atomic_store_n(&g_running_cpu_ns[k], cpu[k], __ATOMIC_RELEASE);
        pthread_mutex_lock(&g_lock);
        if (made && p->length == length && p->count < SPARES)
            p->spare[p->count++] = made;
        else if (made)
            opprof__unmap_populated(made, length);
        else
            g_resting = true; /* out of memory: the next ask tries again */
    }
    pthread_mutex_unlock(&g_lock);
    int64_t cpu[2];
    opprof__cpu_ns(true, cpu);
    for (int k = 0; k < 2; k++) {
        __atomic_add_fetch(&g_ended_cpu_ns[k], cpu[k], __ATOMIC_ACQ_REL);
        __atomic_store_n(&g_running_cpu_ns[k], 0, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* The pool of `length`: its own, else an unused one, else the first (its
 * spares given back). */
static pool *pool_of(size_t length) {
    pool *unused = NULL;
    for (int k = 0; k < LENGTHS; k++) {
        if (g_pools[k].length == length) return &g_pools[k];
        if (!g_pools[k].length && !unused) unused = &g_pools[k];
    }
    pool *p = unused ? unused : &g_pools[0];
    for (size_t i = 0; i < p->count; i++) opprof__unmap_populated(p->spare[i], p->length);
    *p = (pool){.length = length};
    return p;
}

static void lock_for_fork(void) { pthread_mutex_lock(&g_lock); }
static void unlock_after_fork(void) { pthread_mutex_unlock(&g_lock); }
/* The child's one thread is the one that forked, which holds the lock
 * (lock_for_fork): it unlocks it; the helper is not there (a cond that it
 * waited on is made anew). */
static void forked_child(void) {
    pthread_cond_init(&g_asked, NULL);
    memset(g_ended_cpu_ns, 0, sizeof g_ended_cpu_ns); /* the child's CPU time starts at 0, its helpers' too */
    memset(g_running_cpu_ns, 0, sizeof g_running_cpu_ns);
    g_started = g_failed = g_stopping = g_resting = false;
    pthread_mutex_unlock(&g_lock);
}
static void register_fork_handlers(void) { pthread_atfork(lock_for_fork, unlock_after_fork, forked_child); }

/* A spare of `length`, the lock held (and given back here); the next one asked for. */
static char *take_locked(size_t length) {
    pool *p = pool_of(length);
    char *taken = p->count ? p->spare[--p->count] : NULL;
    g_resting = false;
    if (!g_started && !g_failed) {
        g_started = opprof__usable_cpus() >= 2 && opprof__helper_start(&g_helper, populate_ahead, NULL) == 0;
        g_failed = !g_started;
    }
    pthread_cond_signal(&g_asked);
    pthread_mutex_unlock(&g_lock);
    return taken;
}

__thread int opprof__own_allocations;

/* Never waits for the lock: the helper, which runs when a CPU is idle, may
 * hold it while the program's threads keep every CPU busy. Called inside a
 * record: pthread_atfork and pthread_create allocate (opprof__own_allocations). */
char *opprof__spare_take(size_t length) {
    opprof__own_allocations++;
    pthread_once(&g_fork_once, register_fork_handlers);
    char *taken = pthread_mutex_trylock(&g_lock) == 0 ? take_locked(length) : NULL;
    opprof__own_allocations--;
    return taken;
}

void opprof__spare_stop(void) {
    pthread_mutex_lock(&g_lock);
    bool started = g_started;
    g_stopping = true;
    pthread_cond_signal(&g_asked);
    pthread_mutex_unlock(&g_lock);
    if (started) opprof__helper_join(&g_helper);
    pthread_mutex_lock(&g_lock);
    for (int k = 0; k < LENGTHS; k++) {
        for (size_t i = 0; i < g_pools[k].count; i++) opprof__unmap_populated(g_pools[k].spare[i], g_pools[k].length);
        g_pools[k] = (pool){0};
    }
    g_started = g_failed = g_stopping = g_resting = false;
    pthread_mutex_unlock(&g_lock);
}
