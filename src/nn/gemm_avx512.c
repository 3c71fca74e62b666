/* gemm_avx512.c - gemm_kernel.inc for AVX-512F: tiles of 12 rows x 32 columns
 * (24 accumulators + 2 rows of B + 1 broadcast of the 32 zmm registers; 2 FMA
 * pipes x 4 cycles of latency need 8). Measured on Zen 5 with the guide's
 * shapes (bench_forward, NN_GEMM=avx512): 12 rows 168.9 us, 8 rows 174.9 us,
 * 6 rows 181.4 us. */
#include "kernels.h"

#include <math.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define GEMM_BLOCK nn__gemm_block_avx512
#define KERNEL_TARGET __attribute__((target("avx512f,fma")))
#define VEC __m512
#define LANES 16
#define VZERO() _mm512_setzero_ps()
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps(p, v)
#define VBCAST(x) _mm512_set1_ps(x)
#define VADD(a, b) _mm512_add_ps(a, b)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define TILE_ROWS 12
#define WIDE_VECS 8
#include "gemm_kernel.inc"
#else
void nn__gemm_block_avx512(const nn__gemm_problem *g, int row0, int row1, int col0, int col1) {
    nn__gemm_block_scalar(g, row0, row1, col0, col1); /* never chosen: not x86-64 */
}
#endif
