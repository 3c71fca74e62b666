/* signal_target.c - a program whose signal handler calls its own
 * (instrumented) functions, which allocate, for test_record_cli: built with
 * -finstrument-functions, run under `opprof record --functions --memory`. A
 * second thread sends SIGUSR1 to the main thread 20000 times while the main
 * thread calls and allocates in a loop; the handler lands anywhere, inside
 * opprof's recording too. Prints "done" when it ends as it should. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;
static volatile sig_atomic_t stop;

static __attribute__((noinline)) void in_handler(void) {
    char *p = malloc(24);
    if (p) p[0] = 1;
    sink += p ? p[0] : 0;
    free(p);
}

static void on_usr1(int sig) {
    (void)sig;
    in_handler();
}

static __attribute__((noinline)) void leaf(int i) {
    char *p = malloc((size_t)(16 + i % 64));
    if (p) memset(p, i, 16);
    sink += p ? p[1] : 0;
    free(p);
}

static void *pester(void *main_thread) {
    for (int k = 0; k < 20000 && !stop; k++) pthread_kill(*(pthread_t *)main_thread, SIGUSR1);
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
    for (int i = 0; i < 200000; i++) leaf(i);
    stop = 1;
    pthread_join(t, NULL);
    puts("done");
    return 0;
}
