/*
 * bench_gemm - the evidence behind gemm.c's choice: the seed's two products
 * (C = X W^T, 128x256x512 and 128x512x64, float32, one thread) through nn
 * (libxsmm JIT on the packed weight) and through OpenBLAS's cblas_sgemm on
 * the same operands, in the same run.
 *
 *   build/bin/bench_gemm [--json]
 */
#include "bench_util.h"

#include <cblas.h>
#include <nn/nn.h>

static double median_us(double *t, int n) { return bench_stats_of(t, n).median; }

int main(int argc, char **argv) {
    bool json = argc > 1 && !strcmp(argv[1], "--json");
    const int reps = 300;
    const int shapes[2][3] = {{128, 256, 512}, {128, 512, 64}};
    double nn_g[2], blas_g[2];
    nn_set_num_threads(1);
    openblas_set_num_threads(1);
    for (int s = 0; s < 2; s++) {
        int m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
        nn_tensor *x, *w, *wt_packed, *c;
        nn_tensor_randn(&x, 2, (int64_t[]){m, k});
        nn_tensor_randn(&w, 2, (int64_t[]){n, k});
        nn_tensor_randn(&wt_packed, 2, (int64_t[]){k, n});
        float *out = aligned_alloc(64, (size_t)m * n * sizeof(float));
        double t[300];
        for (int r = 0; r < reps + 10; r++) {
            int64_t t0 = bench_now_ns();
            nn_mm(x, wt_packed, &c);
            if (r >= 10) t[r - 10] = (double)(bench_now_ns() - t0) / 1e3;
            nn_tensor_free(c);
        }
        nn_g[s] = 2.0 * m * n * k / median_us(t, reps) / 1e3;
        for (int r = 0; r < reps + 10; r++) {
            int64_t t0 = bench_now_ns();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x->data, k, w->data, k, 0.0f, out, n);
            if (r >= 10) t[r - 10] = (double)(bench_now_ns() - t0) / 1e3;
        }
        blas_g[s] = 2.0 * m * n * k / median_us(t, reps) / 1e3;
        free(out);
        nn_tensor_free(x);
        nn_tensor_free(w);
        nn_tensor_free(wt_packed);
    }
    const char *core = getenv("OPENBLAS_CORETYPE");
    if (json) {
        printf("{\n  \"nn_gflops\": [%.6g, %.6g],\n  \"openblas_gflops\": [%.6g, %.6g],\n", nn_g[0], nn_g[1], blas_g[0],
               blas_g[1]);
        printf("  \"ratio_vs_openblas\": [%.4f, %.4f],\n  \"openblas_coretype\": \"%s\"\n}\n", nn_g[0] / blas_g[0],
               nn_g[1] / blas_g[1], core ? core : "auto");
        return 0;
    }
    printf("float32 GEMM, C = X W^T, one thread (OPENBLAS_CORETYPE=%s)\n", core ? core : "auto");
    for (int s = 0; s < 2; s++)
        printf("  %dx%dx%d   nn (libxsmm) %6.1f GFLOP/s   OpenBLAS %6.1f GFLOP/s   ratio %.2f\n", shapes[s][0],
               shapes[s][1], shapes[s][2], nn_g[s], blas_g[s], nn_g[s] / blas_g[s]);
    return 0;
}
