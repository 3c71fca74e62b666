/* clock.c - timestamps for the hot path: the TSC where the CPU says it is
 * invariant (constant and non-stop), calibrated against CLOCK_MONOTONIC;
 * CLOCK_MONOTONIC itself elsewhere. */
#define _GNU_SOURCE
#include "base/base.h"

#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define OPPROF__HAVE_TSC 1
#else
#define OPPROF__HAVE_TSC 0
#endif

int opprof__use_tsc;
int opprof__tsc_monotonic;
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

/* The kernel offers "tsc" as a clocksource only if it found the TSCs of all
 * CPUs in step (no warp between them) and keeps watching them: then the
 * reads of one thread never go back, even when it moves between CPUs. */
static int kernel_trusts_tsc(void) {
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/available_clocksource", "r");
    if (!f) return 0;
    char line[256], *save = NULL;
    int found = 0;
    if (fgets(line, sizeof line, f))
        for (char *word = strtok_r(line, " \n", &save); word; word = strtok_r(NULL, " \n", &save))
            if (strcmp(word, "tsc") == 0) found = 1;
    fclose(f);
    return found;
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
            opprof__tsc_monotonic = kernel_trusts_tsc();
        }
    }
#else
    (void)monotonic;
#endif
}

void opprof__clock_init(void) { pthread_once(&g_once, clock_setup); }

uint64_t opprof__ticks_fallback(void) { return (uint64_t)opprof__monotonic_ns(); }

double opprof__ns_per_tick(void) { return g_ns_per_tick; }
