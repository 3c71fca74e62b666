/* bench_timer - how well the benchmark timer measures a statement of known
 * duration on this machine (the accuracy that make test does not assert:
 * a busy machine changes it). A statement spins on CLOCK_MONOTONIC for d;
 * each of blocked_autorange, timeit and adaptive_autorange measures it, 7
 * times; reported: the median relative error of each, and what an empty
 * statement measures. `--json` for machines. */
#include "bench_util.h"

#include <opprof/timer.h>

static void spin(void *ctx) {
    int64_t until = bench_now_ns() + *(const int64_t *)ctx;
    while (bench_now_ns() < until) {}
}

static void empty(void *ctx) { (void)ctx; }

enum { ROUNDS = 7 };

/* The median over ROUNDS of |measured - d| / d for one method. */
static double error_of(int method, int64_t d_ns) {
    opprof_timer t = opprof_timer_default();
    t.stmt = spin;
    t.ctx = &d_ns;
    double err[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        opprof_measurement *m = NULL;
        int rc = method == 0   ? opprof_timer_blocked_autorange(&t, 0.2, &m)
                 : method == 1 ? opprof_timer_timeit(&t, 20, &m)
                               : opprof_timer_adaptive_autorange(&t, 0.1, 0.01, 1.0, &m);
        err[i] = rc ? NAN : fabs(m->median - (double)d_ns * 1e-9) / ((double)d_ns * 1e-9);
        opprof_measurement_free(m);
    }
    return bench_stats_of(err, ROUNDS).median;
}

int main(int argc, char **argv) {
    bool json = argc > 1 && strcmp(argv[1], "--json") == 0;
    double blocked = error_of(0, 200000), timeit = error_of(1, 50000), adaptive = error_of(2, 50000);
    opprof_timer e = opprof_timer_default();
    e.stmt = empty;
    double runs[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        opprof_measurement *m = NULL;
        runs[i] = opprof_timer_blocked_autorange(&e, 0.05, &m) ? NAN : m->median * 1e9;
        opprof_measurement_free(m);
    }
    double empty_ns = bench_stats_of(runs, ROUNDS).median;
    if (json) {
        printf("{\"blocked_autorange_200us_rel_error\": %.5f, \"timeit_50us_rel_error\": %.5f, "
               "\"adaptive_autorange_50us_rel_error\": %.5f, \"empty_statement_ns\": %.3f}\n",
               blocked, timeit, adaptive, empty_ns);
    } else {
        printf("spin of 200 us, blocked_autorange(0.2 s): median error %.2f %%\n", blocked * 100);
        printf("spin of 50 us, timeit(20):                median error %.2f %%\n", timeit * 100);
        printf("spin of 50 us, adaptive_autorange:        median error %.2f %%\n", adaptive * 100);
        printf("empty statement:                          %.3f ns a run\n", empty_ns);
    }
    return 0;
}
