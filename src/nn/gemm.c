/* gemm.c - runs a matrix product: B laid out for the kernels, the work split
 * across threads, the kernel that gemm_choice.c names.
 *
 * Work is split by rows of C (by columns when there are too few rows); each
 * element is summed the same way on any thread, so the result is
 * bit-identical whatever nn_set_num_threads says. */
#include "kernels.h"

#include <cblas.h>
#include <libxsmm.h>
#include <pthread.h>
#include <string.h>

static int g_threads = 1;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void gemm_init(void) {
    libxsmm_init();
    openblas_set_num_threads(1); /* nn splits the work itself */
}

void nn__gemm_set_threads(int n) { g_threads = n < 1 ? 1 : n; }

void nn__pack_panels(const float *src, size_t step_p, size_t step_j, int k, int n, float *panels) {
    for (int j0 = 0; j0 < n; j0 += NN__PANEL) {
        float *panel = panels + (size_t)j0 * k;
        int width = n - j0 < NN__PANEL ? n - j0 : NN__PANEL;
        for (int p = 0; p < k; p++) {
            float *row = panel + (size_t)p * NN__PANEL;
            for (int j = 0; j < width; j++) row[j] = src[(size_t)p * step_p + (size_t)(j0 + j) * step_j];
            for (int j = width; j < NN__PANEL; j++) row[j] = 0.0f;
        }
    }
}

/* ---- an own kernel on the threads ---- */

typedef struct split {
    const nn__gemm_problem *g;
    nn__gemm_block_fn *fn;
    int by_rows, per_task;
} split;

static void run_part(void *ctx, int task, int n_tasks) {
    const split *s = ctx;
    (void)n_tasks;
    int total = s->by_rows ? s->g->m : s->g->n;
    int first = task * s->per_task, last = first + s->per_task < total ? first + s->per_task : total;
    if (s->by_rows)
        s->fn(s->g, first, last, 0, s->g->n);
    else
        s->fn(s->g, 0, s->g->m, first, last);
}

static int tasks_for(const nn__gemm_problem *g) {
    return (double)g->m * g->n * g->k < (1 << 20) ? 1 : g_threads; /* too small to split */
}

static void run_own(const nn__gemm_problem *g, nn__gemm_block_fn *fn) {
    int tasks = tasks_for(g);
    split s = {.g = g, .fn = fn, .by_rows = g->m >= 8 * tasks};
    /* Rows evenly (a short tile at the end of a part costs less than a part
     * one tile longer than the others); columns in whole panels. */
    int unit = s.by_rows ? 1 : NN__PANEL, total = s.by_rows ? g->m : g->n;
    int units = (total + unit - 1) / unit;
    if (tasks > units) tasks = units;
    s.per_task = (units + tasks - 1) / tasks * unit;
    nn__parallel_for((total + s.per_task - 1) / s.per_task, run_part, &s);
}

/* ---- libxsmm and OpenBLAS, when set by hand ----
 * They take B as blocks of columns, each a row-major [K, width] matrix: a
 * plain B is one block (leading dimension its row step), panels are a block
 * each (leading dimension NN__PANEL). A bias is laid down first (onto C when
 * accumulating) and the product added onto it. */

typedef struct col_block {
    int j0, width, ld;
    const float *b;
} col_block;

/* Plain rows are at least N long; panel rows are NN__PANEL long. */
static bool plain_rows(const nn__gemm_problem *g) { return g->b_row_step >= (size_t)g->n; }

static int col_blocks(const nn__gemm_problem *g) { return plain_rows(g) ? 1 : (g->n + NN__PANEL - 1) / NN__PANEL; }

static col_block col_block_at(const nn__gemm_problem *g, int i) {
    if (plain_rows(g)) return (col_block){0, g->n, (int)g->b_row_step, g->b};
    int j0 = i * NN__PANEL;
    return (col_block){j0, g->n - j0 < NN__PANEL ? g->n - j0 : NN__PANEL, NN__PANEL,
                       g->b + (size_t)i * g->b_panel_stride};
}

static void lay_bias(const nn__gemm_problem *g, int row0, int row1) {
    for (int i = row0; g->bias && i < row1; i++)
        for (int j = 0; j < g->n; j++) {
            float *c = g->c + (size_t)i * g->ldc + j;
            *c = (g->accumulate ? *c : 0.0f) + g->bias[j];
        }
}

enum { BLOCK_ROWS = 32 }; /* rows of C per libxsmm call */

static libxsmm_smmfunction xsmm_kernel(const nn__gemm_problem *g, col_block blk, int rows) {
    const float alpha = 1.0f, beta = g->accumulate || g->bias ? 1.0f : 0.0f;
    const libxsmm_blasint lda_x = blk.ld, ldb_x = g->lda, ldc_x = g->ldc;
    const int flags = beta == 0.0f ? LIBXSMM_GEMM_FLAG_BETA_0 : 0;
    return libxsmm_smmdispatch(blk.width, rows, g->k, &lda_x, &ldb_x, &ldc_x, &alpha, &beta, &flags, NULL);
}

/* In libxsmm's column-major view C^T = B^T A^T: rows of C are its columns. */
static void xsmm_part(const nn__gemm_problem *g, int row0, int row1, int col0, int col1) {
    (void)col0, (void)col1;
    lay_bias(g, row0, row1);
    for (int row = row0; row < row1; row += BLOCK_ROWS) {
        int rows = row1 - row < BLOCK_ROWS ? row1 - row : BLOCK_ROWS;
        for (int i = 0; i < col_blocks(g); i++) {
            col_block blk = col_block_at(g, i);
            libxsmm_smmfunction f = xsmm_kernel(g, blk, rows);
            if (f)
                f(blk.b, g->a + (size_t)row * g->lda, g->c + (size_t)row * g->ldc + blk.j0);
            else { /* the JIT declines (not seen for float32 on x86-64): C holds what to add onto */
                nn__gemm_problem onto = *g;
                onto.accumulate = g->accumulate || g->bias != NULL;
                onto.bias = NULL;
                nn__gemm_block_scalar(&onto, row, row + rows, blk.j0, blk.j0 + blk.width);
            }
        }
    }
}

static void run_openblas(const nn__gemm_problem *g) {
    lay_bias(g, 0, g->m);
    float beta = g->accumulate || g->bias ? 1.0f : 0.0f;
    openblas_set_num_threads(g_threads);
    for (int i = 0; i < col_blocks(g); i++) {
        col_block blk = col_block_at(g, i);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g->m, blk.width, g->k, 1.0f, g->a, g->lda, blk.b, blk.ld,
                    beta, g->c + blk.j0, g->ldc);
    }
    openblas_set_num_threads(1);
}

int nn__sgemm(int m, int n, int k, const float *a, int lda, const float *b, int ldb, int trans_b, const float *b_panels,
              const float *bias, float beta, float *c, int ldc) {
    pthread_once(&g_once, gemm_init);
    nn__gemm_problem g = {
        .m = m, .n = n, .k = k, .a = a, .lda = lda, .bias = bias, .accumulate = beta != 0.0f, .c = c, .ldc = ldc};
    float *packed = NULL;
    if (!b_panels && trans_b) { /* B^T's columns are strided: into panels */
        if (!(packed = nn__alloc(nn__panels_size(k, n) * sizeof(float)))) return NN_ENOMEM;
        nn__pack_panels(b, 1, (size_t)ldb, k, n, packed);
        b_panels = packed;
    }
    g.b = b_panels ? b_panels : b;
    g.b_row_step = b_panels ? NN__PANEL : (size_t)ldb;
    g.b_panel_stride = b_panels ? (size_t)k * NN__PANEL : NN__PANEL;
    nn__gemm_choice ch;
    if (nn__gemm_choose(&g, &ch) != 0) {
        nn__free(packed);
        return NN_ENOMEM;
    }
    if (ch.kernel == NN__K_XSMM) {
        split s = {.g = &g, .fn = xsmm_part, .by_rows = 1};
        int tasks = tasks_for(&g), blocks = (m + BLOCK_ROWS - 1) / BLOCK_ROWS;
        s.per_task = (blocks + tasks - 1) / tasks * BLOCK_ROWS; /* whole blocks: few kernel shapes */
        nn__parallel_for((m + s.per_task - 1) / s.per_task, run_part, &s);
    } else if (ch.kernel == NN__K_OPENBLAS) {
        run_openblas(&g);
    } else {
        run_own(&g, nn__gemm_own_kernels[ch.kernel]);
    }
    nn__free(packed);
    return 0;
}
