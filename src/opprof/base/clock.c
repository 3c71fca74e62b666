/* clock.c - timestamps for the hot path: the TSC where the CPU says it is
 * invariant (constant and non-stop), calibrated against CLOCK_MONOTONIC
 * over the span it converts (opprof__ns_per_tick); CLOCK_MONOTONIC itself
 * elsewhere. */
#define _GNU_SOURCE
#include "base/base.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define OPPROF__HAVE_TSC 1
#else
#define OPPROF__HAVE_TSC 0
#endif

int opprof__use_tsc;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int64_t g_anchor_ns; /* CLOCK_MONOTONIC and the TSC read together at setup */
static uint64_t g_anchor_ticks;

int64_t opprof__monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void opprof__cpu_ns(bool thread, int64_t cpu[2]) {
    struct timespec t;
    struct rusage ru;
    cpu[0] = clock_gettime(thread ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID, &t) == 0
                 ? (int64_t)t.tv_sec * 1000000000 + t.tv_nsec
                 : 0;
    cpu[1] = getrusage(thread ? RUSAGE_THREAD : RUSAGE_SELF, &ru) == 0
                 ? (int64_t)ru.ru_utime.tv_sec * 1000000000 + (int64_t)ru.ru_utime.tv_usec * 1000
                 : 0;
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

/* CLOCK_MONOTONIC and the TSC at one instant: the tick halfway between two
 * TSC reads around the clock's, of the closest pair of 3. */
static void read_pair(int64_t *ns, uint64_t *ticks) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t a = __rdtsc();
        int64_t t = opprof__monotonic_ns();
        uint64_t b = __rdtsc();
        if (b >= a && b - a < best) best = b - a, *ns = t, *ticks = a + (b - a) / 2;
    }
}
#endif

static void clock_setup(void) {
    static const char *const clocks[] = {"tsc", "monotonic"};
    bool monotonic = opprof__env_choice("OPPROF_CLOCK", clocks, 2, 0) == 1;
#if OPPROF__HAVE_TSC
    if (!monotonic && tsc_is_invariant()) {
        read_pair(&g_anchor_ns, &g_anchor_ticks);
        opprof__use_tsc = 1;
    }
#else
    (void)monotonic;
#endif
}

void opprof__clock_init(void) { pthread_once(&g_once, clock_setup); }

uint64_t opprof__ticks_fallback(void) { return (uint64_t)opprof__monotonic_ns(); }

/* Calibrated when asked, not at setup (a 20 ms wait at each program's start,
 * before): the TSC against CLOCK_MONOTONIC from the setup's pair to one read
 * now. Every tick converted is from before this call (a capture's, a
 * flight save's), so each lies inside that span, and its error in
 * nanoseconds stays that of the two pairs, whatever the span's length. */
double opprof__ns_per_tick(void) {
#if OPPROF__HAVE_TSC
    if (!opprof__use_tsc) return 1.0;
    int64_t ns;
    uint64_t ticks;
    read_pair(&ns, &ticks);
    if (ticks <= g_anchor_ticks || ns <= g_anchor_ns)
        return 1.0 / 3.0; /* no span yet, so no tick to convert but these: a 3 GHz TSC's rate */
    return (double)(ns - g_anchor_ns) / (double)(ticks - g_anchor_ticks);
#else
    return 1.0;
#endif
}
