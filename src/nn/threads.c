/* threads.c - a small persistent pool for splitting one operator's work.
 *
 * The caller publishes a job and runs tasks itself; workers join the job under
 * the pool's lock, take tasks with an atomic counter, and leave under the
 * lock. The caller returns only when every task is done and every worker that
 * joined has left, so the job (on the caller's stack) is never touched after.
 * Workers spin briefly before sleeping, so back-to-back operators do not pay
 * a wake-up each. */
#include "internal.h"

#include <pthread.h>

enum { MAX_WORKERS = 63, SPIN = 20000 };

typedef struct job {
    void (*fn)(void *ctx, int task, int n_tasks);
    void *ctx;
    int n_tasks;
    int next_task;    /* atomic */
    int remaining;    /* atomic: tasks not finished */
    int participants; /* workers inside the job (under the lock) */
} job;

typedef struct pool {
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    int workers;         /* started */
    unsigned generation; /* atomic: bumped for each job */
    job *current;        /* under the lock; NULL between jobs */
} pool;

static pool g_pool = {
    .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};
static pthread_mutex_t g_run_lock = PTHREAD_MUTEX_INITIALIZER; /* one job at a time */

static void run_tasks(job *j) {
    for (;;) {
        int t = __atomic_fetch_add(&j->next_task, 1, __ATOMIC_ACQ_REL);
        if (t >= j->n_tasks) return;
        j->fn(j->ctx, t, j->n_tasks);
        __atomic_sub_fetch(&j->remaining, 1, __ATOMIC_ACQ_REL);
    }
}

static void *worker_main(void *arg) {
    pool *p = arg;
    unsigned seen = __atomic_load_n(&p->generation, __ATOMIC_ACQUIRE);
    opprof_thread_set_name("nn-worker");
    for (;;) {
        for (int spins = 0; __atomic_load_n(&p->generation, __ATOMIC_ACQUIRE) == seen && spins < SPIN; spins++) {
#if defined(__x86_64__)
            __builtin_ia32_pause();
#endif
        }
        pthread_mutex_lock(&p->lock);
        while (__atomic_load_n(&p->generation, __ATOMIC_ACQUIRE) == seen) pthread_cond_wait(&p->wake, &p->lock);
        seen = __atomic_load_n(&p->generation, __ATOMIC_ACQUIRE);
        job *j = p->current;
        if (j) j->participants++;
        pthread_mutex_unlock(&p->lock);
        if (!j) continue; /* woke after that job was over */
        run_tasks(j);
        pthread_mutex_lock(&p->lock);
        if (--j->participants == 0) pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->lock);
    }
    return NULL;
}

/* Start workers up to `wanted` (they sleep when idle; never stopped). */
static int ensure_workers(pool *p, int wanted) {
    if (wanted > MAX_WORKERS) wanted = MAX_WORKERS;
    while (p->workers < wanted) {
        pthread_t th;
        if (pthread_create(&th, NULL, worker_main, p) != 0) break;
        pthread_detach(th);
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
    job j = {.fn = fn, .ctx = ctx, .n_tasks = n_tasks, .next_task = 0, .remaining = n_tasks, .participants = 0};
    pthread_mutex_lock(&p->lock);
    if (ensure_workers(p, n_tasks - 1) > 0) {
        p->current = &j;
        __atomic_add_fetch(&p->generation, 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&p->wake);
    }
    pthread_mutex_unlock(&p->lock);
    run_tasks(&j); /* with no worker at all, the caller does every task */
    for (int spins = 0; __atomic_load_n(&j.remaining, __ATOMIC_ACQUIRE) != 0 && spins < SPIN * 10; spins++) {
#if defined(__x86_64__)
        __builtin_ia32_pause();
#endif
    }
    pthread_mutex_lock(&p->lock);
    p->current = NULL; /* late wakers find no job */
    /* Every task not done is held by a participant, who signals on leaving. */
    while (j.participants > 0) pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_mutex_unlock(&g_run_lock);
}
