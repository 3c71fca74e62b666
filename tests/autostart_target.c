/* autostart_target.c - a program that never calls the session API: ranges
 * and OPPROF_STEP() only, for test_autostart (OPPROF_TRACE=DIR).
 *   autostart_target steps N   N steps of work_<i>, then exit
 *   autostart_target wait      "ready" on stdout, then work until a signal
 *   autostart_target env       whether OPPROF_TRACE is still in its environment
 *   autostart_target closefds FILE   closes descriptors 3..1023 (as daemons do),
 *                              opens FILE (which takes descriptor 3), then "ready"
 *                              and work until a signal; FILE must stay empty
 *   autostart_target fork      a child (forked, no exec) works and exits; then
 *                              the parent's 2 steps: its pid on stdout
 *   autostart_target quit N    N steps, then _exit(5): no exit handler runs
 *   autostart_target trigger N K...  N steps; opprof_trigger() in steps K...
 *   autostart_target flight N  steps of 1 ms, "ready" on stdout after N of them, then on
 *                              for a minute at most (the test signals it)
 *   autostart_target inputs    one operator that describes its inputs (a q8_0 [4, 8] and a
 *                              float [8]) and states its FLOPs
 *   autostart_target swapdir DIR OTHER  a flight save asked in step 1; once it is in DIR,
 *                              DIR is moved to DIR.moved and made a symlink to OTHER; a
 *                              second save asked in step 3; then exit
 *   autostart_target chdir DIR 2 steps, then the working directory changed to DIR,
 *                              then 1 step and exit
 *   autostart_target mkdir DIR another process's doing, mid-run: DIR made
 *                              (empty), a file put in it, then 2 steps and exit */
#define _POSIX_C_SOURCE 200809L
#include <opprof/opprof.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

static void work(int i) {
    OPPROF_SCOPE("work_%d", i % 8);
    for (int k = 0; k < 2000; k++) sink += k * 0.5;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "steps") == 0) {
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) {
            work(i);
            OPPROF_STEP();
        }
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "inputs") == 0) {
        OPPROF_OP_SCOPE("my::qgemv");
        opprof_input in[2] = {{2, (const int64_t[]){4, 8}, "q8_0"}, {1, (const int64_t[]){8}, "float"}};
        opprof_set_inputs(2, in);
        opprof_range_flops(64);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "quit") == 0) {
        for (int i = 0; i < atoi(argv[2]); i++) {
            work(i);
            OPPROF_STEP();
        }
        _exit(5);
    }
    if (argc == 3 && strcmp(argv[1], "chdir") == 0) {
        for (int i = 0; i < 3; i++) {
            if (i == 2 && chdir(argv[2]) != 0) return 3;
            work(i);
            OPPROF_STEP();
        }
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "swapdir") == 0) {
        char first[4200], moved[4200];
        snprintf(first, sizeof first, "%s/flight-001-step-1.json", argv[2]);
        snprintf(moved, sizeof moved, "%s.moved", argv[2]);
        for (int i = 0; i < 6; i++) {
            work(i);
            if (i == 1 || i == 3) opprof_trigger("asked by the program");
            OPPROF_STEP();
            struct timespec pause = {0, 1000000};
            for (int wait = 0; i == 1 && wait < 20000 && access(first, F_OK) != 0; wait++) nanosleep(&pause, NULL);
            if (i == 1 && (rename(argv[2], moved) != 0 || symlink(argv[3], argv[2]) != 0)) return 3;
        }
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "trigger") == 0) {
        for (int i = 0; i < atoi(argv[2]); i++) {
            work(i);
            for (int k = 3; k < argc; k++)
                if (atoi(argv[k]) == i) printf("trigger %d\n", opprof_trigger("asked by the program"));
            OPPROF_STEP();
        }
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "flight") == 0) {
        struct timespec pause = {0, 1000000};
        for (int i = 0; i < 60000; i++) {
            work(i);
            nanosleep(&pause, NULL);
            OPPROF_STEP();
            if (i + 1 == atoi(argv[2])) {
                puts("ready");
                fflush(stdout);
            }
        }
        return 3;
    }
    if (argc == 2 && strcmp(argv[1], "fork") == 0) {
        work(0);
        pid_t child = fork();
        if (child < 0) return 2;
        if (child == 0) {
            for (int i = 0; i < 3; i++) work(i);
            exit(0); /* atexit handlers run in the child too */
        }
        int status;
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) return 2;
        for (int i = 0; i < 2; i++) {
            work(i);
            OPPROF_STEP();
        }
        printf("parent %ld\n", (long)getpid());
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "mkdir") == 0) {
        work(0);
        char path[4200];
        snprintf(path, sizeof path, "%s/theirs.txt", argv[2]);
        if (mkdir(argv[2], 0755) != 0 || close(open(path, O_WRONLY | O_CREAT, 0644)) != 0) return 2;
        for (int i = 0; i < 2; i++) {
            work(i);
            OPPROF_STEP();
        }
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "env") == 0) { /* what a program it starts would inherit */
        printf("OPPROF_TRACE %s\n", getenv("OPPROF_TRACE") ? "inherited" : "not inherited");
        return 0;
    }
    int closefds = argc == 3 && strcmp(argv[1], "closefds") == 0;
    if (closefds) {
        for (int fd = 3; fd < 1024; fd++) close(fd);
        if (open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644) < 0) return 2;
    }
    if ((argc == 2 && strcmp(argv[1], "wait") == 0) || closefds) {
        puts("ready");
        fflush(stdout);
        struct timespec pause = {0, 1000000};
        for (int i = 0; i < 60000; i++) { /* a minute at most: the test signals it long before */
            work(i);
            nanosleep(&pause, NULL);
        }
        return 3;
    }
    fprintf(stderr, "usage: autostart_target steps N | wait\n");
    return 64;
}
