/* kernels.h - nn's own matrix-product kernels: the problem they take and the
 * one summation order they share.
 *
 * Every kernel computes each element of C the same way:
 *     s = 0; for p = 0 .. K-1: s = fma(A[i,p], B[p,j], s)   (one rounding each)
 *     s = s + C_old[i,j]   when accumulating
 *     s = s + bias[j]      when there is a bias
 * so the AVX-512, AVX2 and scalar kernels, any tile shape, any split across
 * threads give the same bits: choosing among them by speed changes nothing
 * else. */
#ifndef NN_KERNELS_H
#define NN_KERNELS_H

#include "internal.h"

typedef struct nn__gemm_problem {
    int m, n, k;
    const float *a; /* [M, K], row-major, leading dimension lda */
    int lda;
    /* B[p, j] is at b + (j / NN__PANEL) * b_panel_stride + p * b_row_step +
     * j % NN__PANEL: a row-major [K, N] matrix (panel stride NN__PANEL, row
     * step ldb) or panels (nn__pack_panels: panel stride K * NN__PANEL, row
     * step NN__PANEL), which a tile reads as one sequential stream. */
    const float *b;
    size_t b_row_step, b_panel_stride;
    const float *bias; /* [N], added last; or NULL */
    int accumulate;    /* add C's old value to the sum (before the bias) */
    float *c;          /* [M, N], row-major, leading dimension ldc */
    int ldc;
} nn__gemm_problem;

static inline const float *nn__gemm_b_at(const nn__gemm_problem *g, int p, int j) {
    return g->b + (size_t)(j / NN__PANEL) * g->b_panel_stride + (size_t)p * g->b_row_step + j % NN__PANEL;
}

/* Computes C[row0:row1, col0:col1]; the ranges are inside the problem. */
typedef void nn__gemm_block_fn(const nn__gemm_problem *g, int row0, int row1, int col0, int col1);

/* gemm_choice.c: the kernels, and which one runs a problem. */
enum {
    NN__K_AUTO = -1,
    NN__K_AVX512,
    NN__K_AVX2,
    NN__K_SCALAR,
    NN__K_OWN = 3,
    NN__K_XSMM = 3,
    NN__K_OPENBLAS,
    NN__K_COUNT
};
typedef struct nn__gemm_choice {
    int m, n, k, kernel;
    double gflops; /* measured by auto, one thread; 0 when set by hand */
} nn__gemm_choice;
NN__HIDDEN extern nn__gemm_block_fn *const nn__gemm_own_kernels[NN__K_OWN];
/* The kernel for g: the one set by hand, or auto's for g's shape (measured
 * now when new: NN_ENOMEM if there is no scratch memory to measure in). */
NN__HIDDEN int nn__gemm_choose(const nn__gemm_problem *g, nn__gemm_choice *out);
NN__HIDDEN const char *nn__gemm_kernel_name(int id);

NN__HIDDEN void nn__gemm_block_avx512(const nn__gemm_problem *g, int row0, int row1, int col0, int col1);
NN__HIDDEN void nn__gemm_block_avx2(const nn__gemm_problem *g, int row0, int row1, int col0, int col1);
NN__HIDDEN void nn__gemm_block_scalar(const nn__gemm_problem *g, int row0, int row1, int col0, int col1);

#endif
