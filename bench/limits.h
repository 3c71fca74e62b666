/* limits.h - the machine's own limits, measured, for benchmarks to state
 * their figures against: the float32 FMA peak per instruction set (one core
 * and every core at once) and the read bandwidth of a buffer read again and
 * again (the limit of a loop that re-reads the same weights). */
#ifndef OPPROF_BENCH_LIMITS_H
#define OPPROF_BENCH_LIMITS_H

#include "bench_util.h"

#include <pthread.h>

#if defined(__x86_64__)
#include <immintrin.h>

/* Twelve independent FMA chains, all kept live and summed at the end: two FMA
 * pipes of 4-cycle latency need at least 8 in flight. Distinct starting
 * values, or the compiler merges the chains. */
#define LIMITS_FMA_LOOP(VEC, SET1, FMA, ADD, LANES, ITER, OUT)                                        \
    do {                                                                                              \
        VEC a0 = SET1(0.10f), a1 = SET1(0.11f), a2 = SET1(0.12f), a3 = SET1(0.13f), a4 = SET1(0.14f), \
            a5 = SET1(0.15f), a6 = SET1(0.16f), a7 = SET1(0.17f), a8 = SET1(0.18f), a9 = SET1(0.19f), \
            a10 = SET1(0.20f), a11 = SET1(0.21f);                                                     \
        const VEC b = SET1(0.9999f), c = SET1(1e-4f);                                                 \
        int64_t t0 = bench_now_ns();                                                                  \
        for (long i = 0; i < (ITER); i++) {                                                           \
            a0 = FMA(a0, b, c);                                                                       \
            a1 = FMA(a1, b, c);                                                                       \
            a2 = FMA(a2, b, c);                                                                       \
            a3 = FMA(a3, b, c);                                                                       \
            a4 = FMA(a4, b, c);                                                                       \
            a5 = FMA(a5, b, c);                                                                       \
            a6 = FMA(a6, b, c);                                                                       \
            a7 = FMA(a7, b, c);                                                                       \
            a8 = FMA(a8, b, c);                                                                       \
            a9 = FMA(a9, b, c);                                                                       \
            a10 = FMA(a10, b, c);                                                                     \
            a11 = FMA(a11, b, c);                                                                     \
            __asm__ volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));        \
        }                                                                                             \
        int64_t t1 = bench_now_ns();                                                                  \
        VEC s = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));                    \
        s = ADD(s, ADD(ADD(a8, a9), ADD(a10, a11)));                                                  \
        float out[LANES];                                                                             \
        memcpy(out, &s, sizeof out);                                                                  \
        if (out[0] == 12345.0f) puts("");                                                             \
        (OUT) = (double)(ITER)*12 * (LANES)*2 / (double)(t1 - t0);                                    \
    } while (0)

enum { LIMITS_FMA_ITERATIONS = 10000000 };

__attribute__((target("avx512f"))) static double limits_fma_once_avx512(void) {
    double g;
    LIMITS_FMA_LOOP(__m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, 16, LIMITS_FMA_ITERATIONS, g);
    return g;
}

__attribute__((target("avx2,fma"))) static double limits_fma_once_avx2(void) {
    double g;
    LIMITS_FMA_LOOP(__m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, 8, LIMITS_FMA_ITERATIONS, g);
    return g;
}
#endif

typedef enum limits_isa { LIMITS_AVX2, LIMITS_AVX512 } limits_isa;

static inline bool limits_has(limits_isa isa) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return isa == LIMITS_AVX512 ? __builtin_cpu_supports("avx512f") != 0
                                : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    (void)isa;
    return false;
#endif
}

/* GFLOP/s of one core with this ISA, best of `reps` (0 when absent). */
static inline double limits_fma_gflops(limits_isa isa, int reps) {
    double best = 0;
#if defined(__x86_64__)
    if (!limits_has(isa)) return 0;
    for (int r = 0; r < reps; r++) {
        double g = isa == LIMITS_AVX512 ? limits_fma_once_avx512() : limits_fma_once_avx2();
        if (g > best) best = g;
    }
#else
    (void)isa, (void)reps;
#endif
    return best;
}

typedef struct limits_fma_job {
    limits_isa isa;
    double gflops;
} limits_fma_job;

static void *limits_fma_thread(void *arg) {
    limits_fma_job *j = arg;
    j->gflops = limits_fma_gflops(j->isa, 3);
    return NULL;
}

/* GFLOP/s of `threads` cores at once (each runs the loop; the sum). */
static inline double limits_fma_gflops_threads(limits_isa isa, int threads) {
    pthread_t t[64];
    limits_fma_job j[64];
    if (threads > 64) threads = 64;
    for (int i = 0; i < threads; i++) {
        j[i] = (limits_fma_job){.isa = isa};
        pthread_create(&t[i], NULL, limits_fma_thread, &j[i]);
    }
    double sum = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        sum += j[i].gflops;
    }
    return sum;
}

/* One pass summing the buffer with 4 vector accumulators (loads, not adds,
 * are the limit); returns the sum so that the pass is not optimized away. */
#define LIMITS_READ_PASS(NAME, TARGET, LANES)                                  \
    TARGET static float NAME(const float *buf, size_t n) {                     \
        typedef float vec __attribute__((vector_size(LANES * 4), aligned(4))); \
        vec s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};                            \
        for (size_t i = 0; i + 4 * LANES <= n; i += 4 * LANES) {               \
            s0 += *(const vec *)(buf + i);                                     \
            s1 += *(const vec *)(buf + i + LANES);                             \
            s2 += *(const vec *)(buf + i + 2 * LANES);                         \
            s3 += *(const vec *)(buf + i + 3 * LANES);                         \
        }                                                                      \
        vec s = (s0 + s1) + (s2 + s3);                                         \
        return s[0];                                                           \
    }
#if defined(__x86_64__)
LIMITS_READ_PASS(limits_read_pass_avx512, __attribute__((target("avx512f"))), 16)
LIMITS_READ_PASS(limits_read_pass_avx2, __attribute__((target("avx2"))), 8)
#endif
LIMITS_READ_PASS(limits_read_pass_plain, , 4)

/* GB/s of reading a `bytes` buffer again and again, widest vectors, best of
 * 2,000 passes: the limit of a loop that re-reads the same weights. */
static inline double limits_read_gbps(size_t bytes) {
    size_t n = bytes / sizeof(float);
    float *buf = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64);
    for (size_t i = 0; i < n; i++) buf[i] = (float)(i & 7);
    float (*pass_fn)(const float *, size_t) = limits_read_pass_plain;
#if defined(__x86_64__)
    if (limits_has(LIMITS_AVX512))
        pass_fn = limits_read_pass_avx512;
    else if (limits_has(LIMITS_AVX2))
        pass_fn = limits_read_pass_avx2;
#endif
    double best = 0;
    float sink = 0;
    for (int pass = 0; pass < 2000; pass++) {
        int64_t t0 = bench_now_ns();
        sink += pass_fn(buf, n);
        int64_t t1 = bench_now_ns();
        double gbps = (double)bytes / (double)(t1 - t0);
        if (pass > 0 && gbps > best) best = gbps;
    }
    if (sink == 1234.5f) puts("");
    free(buf);
    return best;
}

#endif
