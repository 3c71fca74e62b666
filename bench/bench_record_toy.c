/* record_toy - the program bench_record profiles without changing it: built
 * with -finstrument-functions, it makes a known number of function calls or
 * allocations.
 *   bench_record_toy calls N    N x mid(), each calling leaf() twice: 3N functions
 *   bench_record_toy mallocs N  N x malloc(64) + free
 * It prints "loop_s: S", the time of the loop alone: what recording costs,
 * apart from what a tool does at exit (writing its files); and "loop_cpu_s:
 * S", the CPU time of its thread in the loop (the rest: waiting), and
 * "loop_process_cpu_s: S", of all its threads (a tool's own threads too);
 * "start_cpu_s: S", the process's CPU time when main begins (the loader's
 * and the constructors': a tool's start). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile long sink;

__attribute__((noinline)) static long leaf(long x) { return sink += x; }
__attribute__((noinline)) static long mid(long x) { return leaf(x) + leaf(x + 1); }

int main(int argc, char **argv) {
    if (argc != 3) return 64;
    long n = atol(argv[2]);
    struct timespec t0, t1, c0, c1, p0, p1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p0);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (strcmp(argv[1], "calls") == 0) {
        for (long i = 0; i < n; i++) mid(i);
    } else {
        for (long i = 0; i < n; i++) {
            void *volatile p = malloc(64);
            free(p);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p1);
    printf("start_cpu_s: %.9f\n", (double)p0.tv_sec + (double)p0.tv_nsec * 1e-9);
    printf("loop_s: %.9f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
    printf("loop_cpu_s: %.9f\n", (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9);
    printf("loop_process_cpu_s: %.9f\n", (double)(p1.tv_sec - p0.tv_sec) + (double)(p1.tv_nsec - p0.tv_nsec) * 1e-9);
    return (int)(sink & 0);
}
