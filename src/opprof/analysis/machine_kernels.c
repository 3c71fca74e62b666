/* machine_kernels.c - the loops that measure a core's ceilings: float32
 * FMAs in independent chains (enough to cover the FMA units' latency), and
 * streams that load (folded by XOR) or copy a buffer, one per ISA: AVX-512, AVX2
 * with FMA, scalar. Each is compiled for its ISA alone (target attributes)
 * and chosen at run time by what the CPU has. See analysis/machine.c. */
#include "analysis/analysis.h"

#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* Chains per loop: FMA latency 4-5 cycles x 2 units on the cores we meet. */
enum { CHAINS = 12 };

#if defined(__x86_64__)
__attribute__((target("avx512f"))) static double fma_avx512(int64_t iters) {
    __m512 acc[CHAINS], b = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    for (int k = 0; k < CHAINS; k++) acc[k] = _mm512_set1_ps((float)k);
    for (int64_t i = 0; i < iters; i++) {
#pragma GCC unroll 12 /* the chains in registers, not in memory */
        for (int k = 0; k < CHAINS; k++) acc[k] = _mm512_fmadd_ps(acc[k], b, c);
    }
    __m512 sum = acc[0];
    for (int k = 1; k < CHAINS; k++) sum = _mm512_add_ps(sum, acc[k]);
    return (double)_mm512_reduce_add_ps(sum);
}

__attribute__((target("avx2,fma"))) static double fma_avx2(int64_t iters) {
    __m256 acc[CHAINS], b = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    for (int k = 0; k < CHAINS; k++) acc[k] = _mm256_set1_ps((float)k);
    for (int64_t i = 0; i < iters; i++) {
#pragma GCC unroll 12
        for (int k = 0; k < CHAINS; k++) acc[k] = _mm256_fmadd_ps(acc[k], b, c);
    }
    __m256 sum = acc[0];
    for (int k = 1; k < CHAINS; k++) sum = _mm256_add_ps(sum, acc[k]);
    float out[8];
    _mm256_storeu_ps(out, sum);
    return (double)(out[0] + out[7]);
}

/* Loads: each one folded into one of 8 accumulators by an integer XOR,
 * which more ports execute than a float add (a float add's 1 to 2 a cycle
 * held the loads under the L1's rate: 0.62-0.84x likwid-bench's load_avx512
 * on a Zen AVX-512 host, while our copy matched it); the result only keeps
 * the loads from being optimized away. */
__attribute__((target("avx512f"))) static double load_avx512(const float *buf, size_t n, int64_t passes) {
    __m512i a[8];
    for (int k = 0; k < 8; k++) a[k] = _mm512_setzero_si512();
    for (int64_t p = 0; p < passes; p++)
        for (size_t i = 0; i + 128 <= n; i += 128) {
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++)
                a[k] = _mm512_xor_si512(a[k], _mm512_load_si512((const void *)(buf + i + 16 * k)));
        }
    for (int k = 1; k < 8; k++) a[0] = _mm512_xor_si512(a[0], a[k]);
    return (double)_mm512_reduce_add_epi32(a[0]);
}

__attribute__((target("avx2"))) static double load_avx2(const float *buf, size_t n, int64_t passes) {
    __m256i a[8];
    for (int k = 0; k < 8; k++) a[k] = _mm256_setzero_si256();
    for (int64_t p = 0; p < passes; p++)
        for (size_t i = 0; i + 64 <= n; i += 64) {
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++)
                a[k] = _mm256_xor_si256(a[k], _mm256_load_si256((const __m256i *)(buf + i + 8 * k)));
        }
    for (int k = 1; k < 8; k++) a[0] = _mm256_xor_si256(a[0], a[k]);
    int out[8];
    _mm256_storeu_si256((__m256i *)out, a[0]);
    return (double)(out[0] ^ out[7]);
}

__attribute__((target("avx512f"))) static void copy_avx512(float *dst, const float *src, size_t n) {
    for (size_t i = 0; i + 128 <= n; i += 128) {
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) _mm512_store_ps(dst + i + 16 * k, _mm512_load_ps(src + i + 16 * k));
    }
}

__attribute__((target("avx2"))) static void copy_avx2(float *dst, const float *src, size_t n) {
    for (size_t i = 0; i + 64 <= n; i += 64) {
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) _mm256_store_ps(dst + i + 8 * k, _mm256_load_ps(src + i + 8 * k));
    }
}
#endif

static double fma_scalar(int64_t iters) {
    float acc[CHAINS];
    for (int k = 0; k < CHAINS; k++) acc[k] = (float)k;
    for (int64_t i = 0; i < iters; i++) {
#pragma GCC unroll 12
        for (int k = 0; k < CHAINS; k++) acc[k] = acc[k] * 0.999999f + 1e-7f;
    }
    double sum = 0;
    for (int k = 0; k < CHAINS; k++) sum += acc[k];
    return sum;
}

static double load_scalar(const float *buf, size_t n, int64_t passes) {
    float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (int64_t p = 0; p < passes; p++)
        for (size_t i = 0; i + 4 <= n; i += 4) a0 += buf[i], a1 += buf[i + 1], a2 += buf[i + 2], a3 += buf[i + 3];
    return (double)(a0 + a1 + a2 + a3);
}

static void copy_scalar(float *dst, const float *src, size_t n) { memcpy(dst, src, n * sizeof *src); }

opprof__machine_isa opprof__machine_best_isa(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return OPPROF__ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return OPPROF__ISA_AVX2;
#endif
    return OPPROF__ISA_SCALAR;
}

double opprof__machine_fma_flops_per_iter(opprof__machine_isa isa) {
    return isa == OPPROF__ISA_AVX512 ? CHAINS * 16 * 2 : isa == OPPROF__ISA_AVX2 ? CHAINS * 8 * 2 : CHAINS * 2;
}

double opprof__machine_fma(opprof__machine_isa isa, int64_t iters) {
#if defined(__x86_64__)
    if (isa == OPPROF__ISA_AVX512) return fma_avx512(iters);
    if (isa == OPPROF__ISA_AVX2) return fma_avx2(iters);
#endif
    return fma_scalar(iters);
}

double opprof__machine_load(opprof__machine_isa isa, const float *buf, size_t n, int64_t passes) {
#if defined(__x86_64__)
    if (isa == OPPROF__ISA_AVX512) return load_avx512(buf, n, passes);
    if (isa == OPPROF__ISA_AVX2) return load_avx2(buf, n, passes);
#endif
    return load_scalar(buf, n, passes);
}

void opprof__machine_copy(opprof__machine_isa isa, float *dst, const float *src, size_t n) {
#if defined(__x86_64__)
    if (isa == OPPROF__ISA_AVX512) return copy_avx512(dst, src, n);
    if (isa == OPPROF__ISA_AVX2) return copy_avx2(dst, src, n);
#endif
    copy_scalar(dst, src, n);
}
