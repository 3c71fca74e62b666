/* gemm_avx2.c - gemm_kernel.inc for AVX2 + FMA: tiles of 6 rows x 16 columns
 * (12 accumulators: 2 FMA pipes x 4-5 cycles of latency, 16 ymm registers). */
#include "kernels.h"

#include <math.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define GEMM_BLOCK nn__gemm_block_avx2
#define KERNEL_TARGET __attribute__((target("avx2,fma")))
#define VEC __m256
#define LANES 8
#define VZERO() _mm256_setzero_ps()
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps(p, v)
#define VBCAST(x) _mm256_set1_ps(x)
#define VADD(a, b) _mm256_add_ps(a, b)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define TILE_ROWS 6
#define WIDE_VECS 12 /* 96 columns per row: 12 chains, slack over 2 pipes x 4 cycles */
#include "gemm_kernel.inc"
#else
void nn__gemm_block_avx2(const nn__gemm_problem *g, int row0, int row1, int col0, int col1) {
    nn__gemm_block_scalar(g, row0, row1, col0, col1); /* never chosen: not x86-64 */
}
#endif
