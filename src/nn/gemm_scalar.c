/* gemm_scalar.c - gemm_kernel.inc one float at a time, with fmaf: the
 * kernel for CPUs without AVX2 and the reference the vector kernels must
 * match bit for bit (tests/test_forward.c). */
#include "kernels.h"

#include <math.h>

#define GEMM_BLOCK nn__gemm_block_scalar
#define KERNEL_TARGET
#define VEC float
#define LANES 1
#define VZERO() 0.0f
#define VLOAD(p) (*(p))
#define VSTORE(p, v) (*(p) = (v))
#define VBCAST(x) (x)
#define VADD(a, b) ((a) + (b))
#define VFMA(a, b, c) fmaf(a, b, c)
#define TILE_ROWS 6
#define WIDE_VECS 8
#include "gemm_kernel.inc"
