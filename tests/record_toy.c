/* record_toy.c - a program that knows nothing of opprof, compiled with
 * -finstrument-functions, for test_record_cli (`opprof record`): known call
 * counts and known allocations.
 *   record_toy        leaf x 12 (through mid x 6), grow x 3 (3 x 1000 bytes
 *                     kept until exit, then freed), a worker thread calling
 *                     leaf x 4
 *   record_toy wait   "ready" on stdout, then calls mid until a signal
 *   record_toy budget N   leaf x N on a thread that ends, then x N on a thread
 *                     still running at exit, then x N on main: one at a time
 *   record_toy run PROG ARGS...   mid x 2, then PROG in a child process, waited
 *                     for: a program that runs another, as system() does
 *   record_toy mallocs N   N x malloc(64) + free: memory events over several
 *                     of the recorder's chunks
 *   record_toy longjmp N   N x (jumper: setjmp, then down 5 x down and a
 *                     longjmp out of them all), each followed by leaf
 *   record_toy pthread_exit   a thread that ends by pthread_exit inside
 *                     quits (inside its thread function), joined; then leaf
 *   record_toy descriptors   opens /dev/null until its RLIMIT_NOFILE is
 *                     full, keeps them all, then mid x 2; exit status 4
 *   record_toy output FILE   FILE made and "data" written to it, kept open
 *                     (with stderr closed, it is fd 2), then mid x 2
 *   record_toy namespaces   unshare(CLONE_NEWUSER), then setns (nstype 0)
 *                     into the user namespace a child made: "unshare: ok",
 *                     "setns: ok" or their errors; then a thread calls leaf
 *                     x 4 and main mid x 2
 *   record_toy numbers   opens /dev/null twice, before and after a thread
 *                     ran, and prints the descriptors it got ("3 4" when
 *                     0-2 alone are open), then mid x 2
 *   record_toy locale NAME   setlocale(LC_ALL, NAME), "1.5" printed in it
 *                     (de_DE's: "1,5"), then mid x 2
 *   record_toy quick_exit N   mid x 2, then quick_exit(N)
 *   record_toy main_exits   main ends by pthread_exit; a thread it started
 *                     then calls mid x 2 and prints "worker done": the
 *                     process ends with it, exit status 0
 *   record_toy reserve MB   mid x 2, then one malloc of MB MiB (untouched):
 *                     "malloc of MB MiB: ok" (exit 0) or "...: failed" (1) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <setjmp.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <semaphore.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile long sink;

static __attribute__((noinline)) long leaf(long x) { return sink += x; }

static __attribute__((noinline)) long mid(long x) { return leaf(x) + leaf(x + 1); }

static void *kept[3];

static __attribute__((noinline)) void grow(int i) {
    kept[i] = malloc(1000);
    memset(kept[i], i, 1000);
}

static void *worker(void *arg) {
    (void)arg;
    for (int i = 0; i < 4; i++) leaf(i);
    return NULL;
}

static long g_calls;
static sem_t g_called;

static void *calls_leaf(void *arg) {
    (void)arg;
    for (long i = 0; i < g_calls; i++) leaf(i);
    return NULL;
}

/* Not instrumented: no range stays open while it waits for the exit. */
static __attribute__((no_instrument_function)) void *calls_leaf_then_waits(void *arg) {
    calls_leaf(arg);
    sem_post(&g_called);
    for (;;) pause();
    return NULL;
}

static int budget(long n) {
    g_calls = n;
    sem_init(&g_called, 0, 0);
    pthread_t ends, waits;
    pthread_create(&ends, NULL, calls_leaf, NULL);
    pthread_join(ends, NULL);
    pthread_create(&waits, NULL, calls_leaf_then_waits, NULL);
    while (sem_wait(&g_called) != 0) {}
    calls_leaf(NULL);
    printf("leaf called %ld times\n", 3 * n);
    return 0;
}

static jmp_buf g_jump;

/* n more calls of itself, then a longjmp out of all of them: no exit of any runs */
static __attribute__((noinline)) void down(int n) {
    sink += n;
    if (n > 0)
        down(n - 1);
    else if (n == 0)
        longjmp(g_jump, 1);
}

static __attribute__((noinline)) void jumper(long i) {
    if (!setjmp(g_jump)) down(5);
    sink += i;
}

static __attribute__((noinline)) void quits(void) {
    sink++;
    pthread_exit(NULL);
}

static void *ends_inside(void *arg) {
    quits();
    return arg;
}

/* record_toy main_exits: the thread left once main has ended. */
static void *after_main(void *arg) {
    struct timespec pause = {0, 20000000}; /* main's pthread_exit first */
    nanosleep(&pause, NULL);
    for (int i = 0; i < 2; i++) mid(i);
    puts("worker done");
    return arg;
}

static int run(char **argv) {
    for (int i = 0; i < 2; i++) mid(i);
    pid_t pid = fork();
    if (pid == 0) {
        execvp(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child ended with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

/* The namespaces mode: what unshare and setns gave, said. */
static bool write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY);
    bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    if (fd >= 0) close(fd);
    return ok;
}

static int namespaces(void) {
    char uid_map[32], gid_map[32];
    snprintf(uid_map, sizeof uid_map, "0 %d 1", (int)geteuid());
    snprintf(gid_map, sizeof gid_map, "0 %d 1", (int)getegid());
    printf("unshare: %s\n", unshare(CLONE_NEWUSER) == 0 ? "ok" : strerror(errno));
    /* as `unshare -r`: this user is root inside, so that a child can make one more */
    if (!write_file("/proc/self/setgroups", "deny") || !write_file("/proc/self/uid_map", uid_map) ||
        !write_file("/proc/self/gid_map", gid_map))
        return 1;
    int ready[2];
    if (pipe(ready)) return 1;
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        char made = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
        if (write(ready[1], &made, 1) == 1) pause();
        _exit(0);
    }
    char made = 'n', path[64];
    if (child < 0 || read(ready[0], &made, 1) != 1 || made != 'y') return 1;
    snprintf(path, sizeof path, "/proc/%d/ns/user", (int)child);
    int fd = open(path, O_RDONLY);
    printf("setns: %s\n", fd >= 0 && setns(fd, 0) == 0 ? "ok" : strerror(errno));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0) return 1;
    for (int i = 0; i < 2; i++) mid(i);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "run") == 0) return run(argv + 2);
    if (argc == 3 && strcmp(argv[1], "budget") == 0) return budget(atol(argv[2]));
    if (argc == 3 && strcmp(argv[1], "mallocs") == 0) {
        for (long i = 0, n = atol(argv[2]); i < n; i++) {
            void *volatile p = malloc(64);
            free(p);
        }
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "longjmp") == 0) {
        for (long i = 0, n = atol(argv[2]); i < n; i++) {
            jumper(i);
            leaf(i);
        }
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "pthread_exit") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, ends_inside, NULL);
        pthread_join(t, NULL);
        leaf(1);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "output") == 0) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, "data\n", 5) != 5) return 1;
        for (int i = 0; i < 2; i++) mid(i);
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "namespaces") == 0) return namespaces();
    if (argc == 2 && strcmp(argv[1], "numbers") == 0) {
        int first = open("/dev/null", O_RDONLY);
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0 || pthread_join(t, NULL) != 0) return 1;
        int second = open("/dev/null", O_RDONLY);
        printf("%d %d\n", first, second);
        for (int i = 0; i < 2; i++) mid(i);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "locale") == 0) {
        if (!setlocale(LC_ALL, argv[2])) return 1;
        printf("%.1f\n", 1.5);
        for (int i = 0; i < 2; i++) mid(i);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "quick_exit") == 0) {
        for (int i = 0; i < 2; i++) mid(i);
        quick_exit(atoi(argv[2]));
    }
    if (argc == 2 && strcmp(argv[1], "main_exits") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, after_main, NULL);
        pthread_exit(NULL);
    }
    if (argc == 3 && strcmp(argv[1], "reserve") == 0) {
        for (int i = 0; i < 2; i++) mid(i);
        long mb = atol(argv[2]);
        void *volatile p = malloc((size_t)mb << 20);
        printf("malloc of %ld MiB: %s\n", mb, p ? "ok" : "failed");
        free(p);
        return p ? 0 : 1;
    }
    if (argc == 2 && strcmp(argv[1], "descriptors") == 0) {
        long held = 0;
        while (open("/dev/null", O_RDONLY) >= 0) held++;
        for (int i = 0; i < 2; i++) mid(i);
        printf("descriptors full: %s\n", held > 0 ? "yes" : "no");
        return 4;
    }
    if (argc == 2 && strcmp(argv[1], "wait") == 0) {
        puts("ready");
        fflush(stdout);
        struct timespec pause = {0, 1000000};
        for (int i = 0; i < 60000; i++) {
            mid(i);
            nanosleep(&pause, NULL);
        }
        return 3;
    }
    for (int i = 0; i < 6; i++) mid(i);
    for (int i = 0; i < 3; i++) grow(i);
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    for (int i = 0; i < 3; i++) free(kept[i]);
    printf("sum %ld\n", (long)sink);
    return 0;
}
