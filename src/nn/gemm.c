/* gemm.c - the one place that chooses how matrix products run.
 * Today: OpenBLAS's cblas_sgemm (see docs/DEPENDENCIES.md for the measured
 * choice). Every operator reaches it through nn__sgemm. */
#include "internal.h"

#include <cblas.h>

static int g_threads = 1;
static int g_threads_applied;

void nn__gemm_set_threads(int n) {
    g_threads = n < 1 ? 1 : n;
    g_threads_applied = 0;
}

void nn__sgemm(int m, int n, int k, const float *a, int lda, const float *b, int ldb, int trans_b,
               float beta, float *c, int ldc) {
    if (!g_threads_applied) {
        openblas_set_num_threads(g_threads);
        g_threads_applied = 1;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b,
                ldb, beta, c, ldc);
}
