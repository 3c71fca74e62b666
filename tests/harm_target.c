/* harm_target.c - ordinary programs that a profiler must leave as they are
 * (issue 50), one mode each; each prints what it saw and exits 0 when the
 * program ran as it would alone:
 *
 *   harm_target address N     calls step_work (libstep_lib.so) N times, directly and through
 *                             its address; built -fno-pie -no-pie, so that &step_work is the
 *                             program's canonical PLT entry
 *   harm_target alarm N       a SIGALRM handler, every 200 us, calls step_work too
 *   harm_target mutex N       N pthread_mutex_lock/unlock pairs
 *   harm_target sigwait       SIGHUP, SIGUSR1 and SIGUSR2 blocked and taken with sigwait
 *                             (a daemon's reload), each sent to the process
 *   harm_target handler MS    a SIGALRM handler every 100 us for MS ms, every fourth one
 *                             longer than that (the signal is blocked in its handler, so the
 *                             kernel gives the next one to a thread that does not block it):
 *                             counts deliveries to a thread other than main's (the only
 *                             thread the program started), and deliveries that overlap
 *   harm_target files DIR     closes descriptors 3-1023, writes DIR/a and DIR/b with stdio,
 *                             exits without fclose (exit flushes them)
 *   harm_target fork N        4 threads allocate in a loop while N children, forked one after
 *                             the other, each call step_work 100 times and exit
 *
 * Knows nothing of opprof. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double step_work(int iteration, double x, int slow_ms);

static volatile sig_atomic_t g_in_handler, g_overlaps, g_elsewhere, g_handled;
static pid_t g_main_tid;

static void ticker(int usec) {
    struct itimerval t = {{0, usec}, {0, usec}};
    setitimer(ITIMER_REAL, &t, NULL);
}

static int address(int n) {
    double (*volatile fn)(int, double, int) = &step_work;
    double x = 1.0;
    for (int i = 1; i <= n; i++) x = (i % 2 ? step_work : fn)(i, x, 0);
    printf("address: %d calls, %.9f\n", n, x);
    return 0;
}

static void on_alarm_work(int sig) {
    (void)sig;
    g_handled++;
    (void)step_work(0, 1.0, 0);
}

static int alarm_mode(int n) {
    signal(SIGALRM, on_alarm_work);
    ticker(200);
    double x = 1.0;
    for (int i = 1; i <= n; i++) x = step_work(i, x, 0);
    ticker(0);
    printf("alarm: %d calls, %.9f\n", n, x);
    return 0;
}

static int mutex_mode(int n) {
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    long held = 0;
    for (int i = 0; i < n; i++) {
        pthread_mutex_lock(&m);
        held++;
        pthread_mutex_unlock(&m);
    }
    printf("mutex: %ld\n", held);
    return 0;
}

static int sigwait_mode(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    const int sigs[] = {SIGHUP, SIGUSR1, SIGUSR2};
    for (int i = 0; i < 3; i++) {
        kill(getpid(), sigs[i]);
        int got = 0;
        if (sigwait(&set, &got) != 0 || got != sigs[i]) return 1;
        printf("sigwait: took %s\n", strsignal(got));
    }
    return 0;
}

static void on_alarm_count(int sig) {
    (void)sig;
    if (g_in_handler) g_overlaps++;
    g_in_handler = 1;
    if ((pid_t)syscall(SYS_gettid) != g_main_tid) g_elsewhere++;
    if (g_handled++ % 4 == 0) { /* every fourth runs 150 us: the next tick comes meanwhile */
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        do clock_gettime(CLOCK_MONOTONIC, &now);
        while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 150000);
    }
    g_in_handler = 0;
}

static int handler_mode(int ms) {
    g_main_tid = (pid_t)syscall(SYS_gettid);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm_count;
    sigaction(SIGALRM, &sa, NULL);
    ticker(100);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    volatile double acc = 0;
    do {
        for (int i = 0; i < 10000; i++) acc += i * 1e-9;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
    ticker(0);
    printf("handler: %s on other threads, %d overlapping\n", g_elsewhere ? "some" : "none", (int)g_overlaps);
    return g_elsewhere || g_overlaps;
}

static int files_mode(const char *dir) {
    for (int fd = 3; fd < 1024; fd++) close(fd);
    char path[4096];
    snprintf(path, sizeof path, "%s/a", dir);
    FILE *a = fopen(path, "w");
    snprintf(path, sizeof path, "%s/b", dir);
    FILE *b = fopen(path, "w");
    if (!a || !b) return 1;
    for (int i = 0; i < 1000; i++) fprintf(a, "a line %d\n", i), fprintf(b, "b line %d\n", i);
    printf("files: written\n");
    exit(0); /* no fclose: exit flushes both */
}

static volatile int g_stop;

static void *allocate(void *arg) {
    (void)arg;
    while (!g_stop) free(malloc(64 + (size_t)(rand() % 4096)));
    return NULL;
}

static int fork_mode(int n) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, allocate, NULL);
    int ok = 0;
    for (int c = 0; c < n; c++) {
        double x = step_work(c, 1.0, 0);
        pid_t pid = fork();
        if (pid == 0) {
            for (int i = 0; i < 100; i++) x = step_work(i, x, 0);
            free(malloc(100));
            _exit(x > 0 ? 0 : 1);
        }
        int st = 0;
        ok += pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    g_stop = 1;
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    printf("fork: %d of %d children exited 0\n", ok, n);
    return ok != n;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    const char *arg = argc > 2 ? argv[2] : "";
    if (!strcmp(mode, "address")) return address(atoi(arg));
    if (!strcmp(mode, "alarm")) return alarm_mode(atoi(arg));
    if (!strcmp(mode, "mutex")) return mutex_mode(atoi(arg));
    if (!strcmp(mode, "sigwait")) return sigwait_mode();
    if (!strcmp(mode, "handler")) return handler_mode(atoi(arg));
    if (!strcmp(mode, "files")) return files_mode(arg);
    if (!strcmp(mode, "fork")) return fork_mode(atoi(arg));
    fprintf(stderr, "harm_target: address|alarm|mutex|fork N, sigwait, handler MS, files DIR\n");
    return 64;
}
