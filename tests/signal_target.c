/* signal_target.c - a program whose signal handler calls its own
 * (instrumented) functions, which allocate, for test_record_cli: built with
 * -finstrument-functions, run under `opprof record --functions --memory`. The
 * main thread calls and allocates in a loop of LOOP calls; a second thread
 * sends it SIGUSR1 SIGNALS times, spread over the loop (the next one once the
 * loop has gone LOOP / SIGNALS calls further) and each once the last was
 * handled (a pending signal takes no second), after a spin of its own
 * length, so that it lands among the calls that follow. The handler lands anywhere,
 * inside opprof's recording too. (Sent all at once, they had come after the
 * loop ended, alone, or 36 of them under opprof.) Prints "done: N signals
 * handled" when it ends as it should. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;
enum { LOOP = 200000, SIGNALS = 1500 };
static int handled, progress, stop; /* atomic */

static __attribute__((noinline)) void in_handler(void) {
    char *p = malloc(24);
    if (p) p[0] = 1;
    sink += p ? p[0] : 0;
    free(p);
}

static void on_usr1(int sig) {
    (void)sig;
    __atomic_add_fetch(&handled, 1, __ATOMIC_RELAXED);
    in_handler();
}

static __attribute__((noinline)) void leaf(int i) {
    char *p = malloc((size_t)(16 + i % 64));
    if (p) memset(p, i, 16);
    sink += p ? p[1] : 0;
    free(p);
}

static void *pester(void *main_thread) {
    for (int k = 0; k < SIGNALS; k++) {
        while (__atomic_load_n(&progress, __ATOMIC_RELAXED) < k * (LOOP / SIGNALS)) sched_yield();
        for (volatile int spin = 0; spin < k * 7919 % 4000; spin++) { /* somewhere in the calls that follow */
        }
        pthread_kill(*(pthread_t *)main_thread, SIGUSR1);
        while (__atomic_load_n(&handled, __ATOMIC_RELAXED) <= k) sched_yield();
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    return NULL;
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t self = pthread_self(), t;
    if (pthread_create(&t, NULL, pester, &self)) return 1;
    for (int i = 0; i < LOOP; i++) {
        leaf(i);
        __atomic_store_n(&progress, i + 1, __ATOMIC_RELAXED);
    }
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) sched_yield(); /* the last ones, if any */
    pthread_join(t, NULL);
    printf("done: %d signals handled\n", __atomic_load_n(&handled, __ATOMIC_RELAXED));
    return 0;
}
