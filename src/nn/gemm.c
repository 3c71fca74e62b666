/* gemm.c - the one place that chooses how a matrix product runs.
 *
 * libxsmm's JIT kernels first (measured: 176 GFLOP/s on both of the seed's
 * shapes, one core, against 135 for OpenBLAS 0.3.21 tuned for SkylakeX and
 * 33 for the same OpenBLAS as it detects this CPU; docs/DEPENDENCIES.md).
 * libxsmm takes B as a contiguous row-major [K, N] matrix (a JIT kernel does
 * not transpose its A operand): a transposed B is packed first. OpenBLAS's
 * CBLAS runs what libxsmm declines. Work is split across threads by rows of
 * A, so every element is summed in the same order on any thread count: the
 * result is bit-identical whatever nn_set_num_threads says. */
#include "internal.h"

#include <cblas.h>
#include <libxsmm.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int g_threads = 1;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void gemm_init(void) {
    libxsmm_init();
    openblas_set_num_threads(1); /* nn splits the work itself */
}

void nn__gemm_set_threads(int n) { g_threads = n < 1 ? 1 : n; }
int nn__gemm_threads(void) { return g_threads; }

enum { BLOCK_ROWS = 32 }; /* rows of C per kernel call: the bias rows stay in cache */

typedef struct job {
    int m, n, k, lda, ldb, ldc, rows_per_task;
    float beta;
    const float *a, *b, *bias;
    float *c;
} job;

static libxsmm_smmfunction dispatch(const job *j, int rows, float beta) {
    const float alpha = 1.0f;
    const libxsmm_blasint lda_x = j->ldb, ldb_x = j->lda, ldc_x = j->ldc;
    const int flags = beta == 0.0f ? LIBXSMM_GEMM_FLAG_BETA_0 : 0;
    return libxsmm_smmdispatch(j->n, rows, j->k, &lda_x, &ldb_x, &ldc_x, &alpha, &beta, &flags, NULL);
}

/* One task: rows [first, first + rows) of C, in blocks. In libxsmm's
 * column-major view C^T = B^T A^T, rows of C are columns:
 * kernel(B, A + row*lda, C + row*ldc). Kernels are cached by libxsmm. */
static void run_rows(void *ctx, int task, int n_tasks) {
    const job *j = ctx;
    (void)n_tasks;
    int first = task * j->rows_per_task;
    int last = first + j->rows_per_task < j->m ? first + j->rows_per_task : j->m;
    float beta = j->bias ? 1.0f : j->beta;
    for (int row = first; row < last; row += BLOCK_ROWS) {
        int rows = last - row < BLOCK_ROWS ? last - row : BLOCK_ROWS;
        float *c = j->c + (size_t)row * j->ldc;
        if (j->bias)
            for (int r = 0; r < rows; r++) memcpy(c + (size_t)r * j->ldc, j->bias, (size_t)j->n * sizeof(float));
        libxsmm_smmfunction f = dispatch(j, rows, beta);
        f(j->b, j->a + (size_t)row * j->lda, c);
    }
}

/* C = A B (+ bias | + beta C) with B row-major [K, N]; 0 if done. */
static int gemm_xsmm(const job *proto) {
    job j = *proto;
    if (!j.bias && j.beta != 0.0f && j.beta != 1.0f) return -1;
    float beta = j.bias ? 1.0f : j.beta;
    if (!dispatch(&j, BLOCK_ROWS < j.m ? BLOCK_ROWS : j.m, beta)) return -1; /* JIT declines */
    if (j.m % BLOCK_ROWS && !dispatch(&j, j.m % BLOCK_ROWS, beta)) return -1;
    int tasks = g_threads;
    int blocks = (j.m + BLOCK_ROWS - 1) / BLOCK_ROWS;
    if ((double)j.m * j.n * j.k < (1 << 20)) tasks = 1; /* too small to split */
    if (tasks > blocks) tasks = blocks;
    /* Whole blocks per task, so the kernels' shapes stay few. */
    j.rows_per_task = (blocks + tasks - 1) / tasks * BLOCK_ROWS;
    tasks = (j.m + j.rows_per_task - 1) / j.rows_per_task;
    nn__parallel_for(tasks, run_rows, &j);
    return 0;
}

void nn__sgemm(int m, int n, int k, const float *a, int lda, const float *b, int ldb, int trans_b,
               const float *bias, float beta, float *c, int ldc) {
    pthread_once(&g_once, gemm_init);
    job j = {.m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc, .beta = beta, .a = a, .b = b,
             .bias = bias, .c = c};
    if (!trans_b) {
        if (gemm_xsmm(&j) == 0) return;
    } else {
        /* Pack B^T ([N, K] rows) into [K, N] rows for the JIT kernel. */
        float *packed = nn__alloc((size_t)k * n * sizeof(float));
        if (packed) {
            for (int i = 0; i < n; i++)
                for (int p = 0; p < k; p++) packed[(size_t)p * n + i] = b[(size_t)i * ldb + p];
            j.b = packed;
            j.ldb = n;
            int rc = gemm_xsmm(&j);
            nn__free(packed, (size_t)k * n * sizeof(float));
            if (rc == 0) return;
        }
    }
    if (bias) {
        for (int r = 0; r < m; r++) memcpy(c + (size_t)r * ldc, bias, (size_t)n * sizeof(float));
        beta = 1.0f;
    }
    openblas_set_num_threads(g_threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb,
                beta, c, ldc);
    openblas_set_num_threads(1);
}
