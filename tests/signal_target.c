/* signal_target.c - a program whose signal handler calls its own
 * (instrumented) functions, which allocate, for test_record_cli: built with
 * -finstrument-functions, run under `opprof record --functions --memory`. A
 * second thread sends SIGUSR1 to the main thread 1500 times, each once the
 * last was handled, while the main thread calls and allocates in a loop until
 * all are handled (it had ended its loop before the first one came, alone,
 * and after 36 under opprof); the
 * handler lands anywhere, inside opprof's recording too. Prints "done: N
 * signals handled" when it ends as it should. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;
static volatile sig_atomic_t stop;
static int handled; /* atomic */

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
    for (int k = 0; k < 1500; k++) { /* each one handled before the next (a pending one takes no second) */
        pthread_kill(*(pthread_t *)main_thread, SIGUSR1);
        while (__atomic_load_n(&handled, __ATOMIC_RELAXED) <= k) sched_yield();
    }
    stop = 1;
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
    for (int i = 0; !stop || i < 200000; i++) leaf(i); /* until every signal is sent */
    pthread_join(t, NULL);
    printf("done: %d signals handled\n", __atomic_load_n(&handled, __ATOMIC_RELAXED));
    return 0;
}
