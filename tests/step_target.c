/* step_target.c - a program that knows nothing of opprof: N iterations, each
 * one call of step_work (libstep_lib.so), the call number SLOW slowed by
 * 40 ms; prints what it computed, so that a test sees its output unchanged.
 *
 *   step_target N [SLOW]
 */
#include <stdio.h>
#include <stdlib.h>

double step_work(int iteration, double x, int slow_ms);

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10, slow = argc > 2 ? atoi(argv[2]) : -1;
    double x = 1.0;
    for (int i = 1; i <= n; i++) x = step_work(i, x, i == slow ? 40 : 0);
    printf("step_target: %d calls, %.9f\n", n, x);
    return 0;
}
