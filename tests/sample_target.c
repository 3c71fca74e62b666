/* sample_target.c - an unchanged program for `opprof record --sample`: no
 * opprof call, built -O2 (no frame pointers); three leaf functions whose CPU
 * times are 4 : 2 : 1 (loops of 4, 2 and 1 times as many iterations, each
 * its own constants so that the compiler keeps three functions), run in
 * turns, then a sleep.
 *
 *   sample_target [SCALE]    SCALE x 10 million iterations for the lightest
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <time.h>

static volatile double sink;

__attribute__((noinline)) void weight_four(long n) {
    double x = 0;
    for (long i = 0; i < 4 * n; i++) x += (double)(i & 7) * 0.25;
    sink += x;
}

__attribute__((noinline)) void weight_two(long n) {
    double x = 0;
    for (long i = 0; i < 2 * n; i++) x += (double)(i & 3) * 0.5;
    sink += x;
}

__attribute__((noinline)) void weight_one(long n) {
    double x = 0;
    for (long i = 0; i < n; i++) x += (double)(i & 1) * 0.75;
    sink += x;
}

int main(int argc, char **argv) {
    long n = (argc > 1 ? atol(argv[1]) : 3) * 10000000L;
    for (int round = 0; round < 4; round++) { /* in turns: no drift favours one */
        weight_one(n / 4);
        weight_four(n / 4);
        weight_two(n / 4);
    }
    struct timespec pause = {0, 20000000};
    nanosleep(&pause, NULL);
    return 0;
}
