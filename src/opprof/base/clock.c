/* clock.c - timestamps for the hot path: the TSC where the CPU says it is
 * invariant (constant and non-stop), calibrated against CLOCK_MONOTONIC;
 * CLOCK_MONOTONIC itself elsewhere. */
#define _GNU_SOURCE
#include "base/base.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define OPPROF__HAVE_TSC 1
#else
#define OPPROF__HAVE_TSC 0
#endif

int opprof__use_tsc;
static double g_ns_per_tick = 1.0;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

int64_t opprof__monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t opprof__realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#if OPPROF__HAVE_TSC
static int tsc_is_invariant(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1; /* invariant TSC */
}
#endif

static void clock_setup(void) {
    static const char *const clocks[] = {"tsc", "monotonic"};
    bool monotonic = opprof__env_choice("OPPROF_CLOCK", clocks, 2, 0) == 1;
#if OPPROF__HAVE_TSC
    if (!monotonic && tsc_is_invariant()) {
        /* Calibrate over ~20 ms: error well under 0.1 %. */
        int64_t t0 = opprof__monotonic_ns();
        uint64_t c0 = __rdtsc();
        int64_t t1;
        do {
            t1 = opprof__monotonic_ns();
        } while (t1 - t0 < 20000000);
        uint64_t c1 = __rdtsc();
        if (c1 > c0) {
            g_ns_per_tick = (double)(t1 - t0) / (double)(c1 - c0);
            opprof__use_tsc = 1;
        }
    }
#else
    (void)monotonic;
#endif
}

void opprof__clock_init(void) { pthread_once(&g_once, clock_setup); }

uint64_t opprof__ticks_fallback(void) { return (uint64_t)opprof__monotonic_ns(); }

double opprof__ns_per_tick(void) { return g_ns_per_tick; }
