/* threads.c - a small persistent pool for splitting one operator's work.
 * The caller runs task 0 itself; workers take the others. Workers spin
 * briefly before sleeping so that back-to-back operators do not pay a wake-up. */
#include "internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

enum { MAX_WORKERS = 63, SPIN = 20000 };

typedef struct pool {
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    int workers;            /* started */
    unsigned generation;    /* atomic: bumped for each job */
    int remaining;          /* atomic: tasks not finished */
    int next_task;          /* atomic */
    int n_tasks;
    void (*fn)(void *ctx, int task, int n_tasks);
    void *ctx;
    pthread_t threads[MAX_WORKERS];
} pool;

static pool g_pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};
static pthread_mutex_t g_run_lock = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */

static void run_tasks(pool *p) {
    for (;;) {
        int t = __atomic_fetch_add(&p->next_task, 1, __ATOMIC_ACQ_REL);
        if (t >= p->n_tasks) return;
        p->fn(p->ctx, t, p->n_tasks);
        if (__atomic_sub_fetch(&p->remaining, 1, __ATOMIC_ACQ_REL) == 0) {
            pthread_mutex_lock(&p->lock);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->lock);
        }
    }
}

static void *worker_main(void *arg) {
    pool *p = arg;
    unsigned seen = 0;
    opprof_thread_set_name("nn-worker");
    for (;;) {
        unsigned gen;
        int spins = 0;
        while ((gen = __atomic_load_n(&p->generation, __ATOMIC_ACQUIRE)) == seen && spins < SPIN) {
            spins++;
#if defined(__x86_64__)
            __builtin_ia32_pause();
#endif
        }
        if (gen == seen) {
            pthread_mutex_lock(&p->lock);
            while ((gen = __atomic_load_n(&p->generation, __ATOMIC_ACQUIRE)) == seen)
                pthread_cond_wait(&p->wake, &p->lock);
            pthread_mutex_unlock(&p->lock);
        }
        seen = gen;
        run_tasks(p);
    }
    return NULL;
}

/* Start workers up to `wanted` (never stops them: they sleep when idle). */
static int ensure_workers(pool *p, int wanted) {
    if (wanted > MAX_WORKERS) wanted = MAX_WORKERS;
    while (p->workers < wanted) {
        if (pthread_create(&p->threads[p->workers], NULL, worker_main, p) != 0) break;
        pthread_detach(p->threads[p->workers]);
        p->workers++;
    }
    return p->workers;
}

void nn__parallel_for(int n_tasks, void (*fn)(void *ctx, int task, int n_tasks), void *ctx) {
    if (n_tasks <= 1) {
        fn(ctx, 0, 1);
        return;
    }
    pthread_mutex_lock(&g_run_lock);
    pool *p = &g_pool;
    pthread_mutex_lock(&p->lock);
    int workers = ensure_workers(p, n_tasks - 1);
    pthread_mutex_unlock(&p->lock);
    if (workers == 0) { /* no thread could start: do it all here */
        for (int t = 0; t < n_tasks; t++) fn(ctx, t, n_tasks);
        pthread_mutex_unlock(&g_run_lock);
        return;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->n_tasks = n_tasks;
    __atomic_store_n(&p->next_task, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&p->remaining, n_tasks, __ATOMIC_RELAXED);
    pthread_mutex_lock(&p->lock);
    __atomic_add_fetch(&p->generation, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    run_tasks(p);
    int spins = 0;
    while (__atomic_load_n(&p->remaining, __ATOMIC_ACQUIRE) != 0 && spins++ < SPIN * 10) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
    }
    pthread_mutex_lock(&p->lock);
    while (__atomic_load_n(&p->remaining, __ATOMIC_ACQUIRE) != 0) pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&g_run_lock);
}
