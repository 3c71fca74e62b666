/* slowdown.c - the test-only switches that make one operator slower by a
 * known share of its own time (nn_debug_slow_down) or its next call slower
 * by a known time (nn_debug_delay_next), for benches and tests that check a
 * comparison or a flight recorder detects a change it was given. Off, they
 * cost an operator two relaxed loads. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

static _Atomic(const char *) slowed_op;
static _Atomic(double) slowed_fraction;
static _Atomic(const char *) delayed_op;
static _Atomic(int64_t) delayed_ns;

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int nn_debug_slow_down(const char *op, double fraction) {
    if (op && (!(fraction >= 0 && fraction <= 100) || (strcmp(op, "aten::addmm") && strcmp(op, "aten::clamp_min"))))
        return NN_EINVAL; /* the operators that obey: ops.c */
    atomic_store(&slowed_fraction, op ? fraction : 0);
    atomic_store(&slowed_op, op && fraction > 0 ? op : NULL);
    return 0;
}

int nn_debug_delay_next(const char *op, int64_t ns) {
    if (op && ns < 0) return NN_EINVAL;
    atomic_store(&delayed_ns, op ? ns : 0);
    atomic_store(&delayed_op, op && ns > 0 ? op : NULL);
    return 0;
}

int64_t nn__slowdown_start(const char *op) {
    const char *slowed = atomic_load_explicit(&slowed_op, memory_order_relaxed);
    const char *delayed = atomic_load_explicit(&delayed_op, memory_order_relaxed);
    return (slowed && !strcmp(slowed, op)) || (delayed && !strcmp(delayed, op)) ? now_ns() : 0;
}

void nn__slowdown_finish(int64_t started) {
    if (!started) return;
    int64_t end = now_ns();
    double fraction = atomic_load_explicit(&slowed_op, memory_order_relaxed) ? atomic_load(&slowed_fraction) : 0;
    int64_t until = end + (int64_t)((double)(end - started) * fraction);
    const char *delayed = atomic_load(&delayed_op);
    if (delayed && atomic_compare_exchange_strong(&delayed_op, &delayed, NULL)) until += atomic_load(&delayed_ns);
    volatile uint64_t work = 0;
    while (now_ns() < until) /* busy, as the operator's own work is */
        for (int i = 0; i < 64; i++) work = work * 6364136223846793005u + 1;
}
