/*
 * bench_forward - the seed's forward pass (batch 128, 256 -> 512 -> 64) with
 * the profiler off: median and IQR, GFLOP/s, per-layer GEMM GFLOP/s, at 1 and
 * 2 threads, against the machine's measured FMA peak and, in the same run,
 * PyTorch from Python and libtorch from C++ when they are installed.
 *
 *   build/bin/bench_forward [--json] [--reps N]
 */
#include "bench_util.h"

#include <nn/nn.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static const int BATCH = 128, IN = 256, HIDDEN = 512, OUT = 64;

/* Twelve independent FMA chains, all kept live and summed at the end: the
 * machine's float32 FMA rate (two FMA ports of 4-cycle latency need >= 8). */
#define FMA12(fma)                                                                     \
    a0 = fma(a0, b, c); a1 = fma(a1, b, c); a2 = fma(a2, b, c); a3 = fma(a3, b, c);    \
    a4 = fma(a4, b, c); a5 = fma(a5, b, c); a6 = fma(a6, b, c); a7 = fma(a7, b, c);    \
    a8 = fma(a8, b, c); a9 = fma(a9, b, c); a10 = fma(a10, b, c); a11 = fma(a11, b, c)
#if defined(__x86_64__)
__attribute__((target("avx512f"))) static double fma_peak_avx512(void) {
    /* distinct starting values, or the compiler merges the chains */
    __m512 a0 = _mm512_set1_ps(0.10f), a1 = _mm512_set1_ps(0.11f), a2 = _mm512_set1_ps(0.12f),
           a3 = _mm512_set1_ps(0.13f), a4 = _mm512_set1_ps(0.14f), a5 = _mm512_set1_ps(0.15f),
           a6 = _mm512_set1_ps(0.16f), a7 = _mm512_set1_ps(0.17f), a8 = _mm512_set1_ps(0.18f),
           a9 = _mm512_set1_ps(0.19f), a10 = _mm512_set1_ps(0.20f), a11 = _mm512_set1_ps(0.21f);
    const __m512 b = _mm512_set1_ps(0.9999f), c = _mm512_set1_ps(1e-4f);
    const long iterations = 20000000;
    int64_t t0 = bench_now_ns();
    for (long i = 0; i < iterations; i++) { FMA12(_mm512_fmadd_ps); }
    int64_t t1 = bench_now_ns();
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                             _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    if (_mm512_reduce_add_ps(s) == 12345.0f) puts("");
    return (double)iterations * 12 * 16 * 2 / (double)(t1 - t0);
}

__attribute__((target("avx2,fma"))) static double fma_peak_avx2(void) {
    /* distinct starting values, or the compiler merges the chains */
    __m256 a0 = _mm256_set1_ps(0.10f), a1 = _mm256_set1_ps(0.11f), a2 = _mm256_set1_ps(0.12f),
           a3 = _mm256_set1_ps(0.13f), a4 = _mm256_set1_ps(0.14f), a5 = _mm256_set1_ps(0.15f),
           a6 = _mm256_set1_ps(0.16f), a7 = _mm256_set1_ps(0.17f), a8 = _mm256_set1_ps(0.18f),
           a9 = _mm256_set1_ps(0.19f), a10 = _mm256_set1_ps(0.20f), a11 = _mm256_set1_ps(0.21f);
    const __m256 b = _mm256_set1_ps(0.9999f), c = _mm256_set1_ps(1e-4f);
    const long iterations = 20000000;
    int64_t t0 = bench_now_ns();
    for (long i = 0; i < iterations; i++) { FMA12(_mm256_fmadd_ps); }
    int64_t t1 = bench_now_ns();
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    float out[8];
    _mm256_storeu_ps(out, s);
    if (out[0] + out[7] == 12345.0f) puts("");
    return (double)iterations * 12 * 8 * 2 / (double)(t1 - t0);
}
#endif

static double fma_peak_gflops(void) {
    double best = 0;
#if defined(__x86_64__)
    __builtin_cpu_init();
    for (int r = 0; r < 3; r++) {
        double g = __builtin_cpu_supports("avx512f") ? fma_peak_avx512()
                   : __builtin_cpu_supports("avx2")  ? fma_peak_avx2()
                                                     : 0.0;
        if (g > best) best = g;
    }
#endif
    return best;
}

static void die(const char *what, int rc) {
    fprintf(stderr, "bench_forward: %s: %s\n", what, nn_strerror(rc));
    exit(1);
}

/* Median/IQR of `reps` single forward passes, in microseconds. */
static bench_stats time_forward(nn_module *model, const nn_tensor *x, int reps) {
    double *t = malloc((size_t)reps * sizeof *t);
    for (int i = 0; i < 20; i++) {
        nn_tensor *y;
        nn_module_forward(model, x, &y);
        nn_tensor_free(y);
    }
    for (int i = 0; i < reps; i++) {
        nn_tensor *y;
        int64_t t0 = bench_now_ns();
        int rc = nn_module_forward(model, x, &y);
        t[i] = (double)(bench_now_ns() - t0) / 1e3;
        if (rc) die("forward", rc);
        nn_tensor_free(y);
    }
    bench_stats s = bench_stats_of(t, reps);
    free(t);
    return s;
}

/* Median time of aten::mm on contiguous operands, microseconds. */
static double time_mm(const nn_tensor *a, const nn_tensor *b, int reps) {
    double *t = malloc((size_t)reps * sizeof *t);
    for (int i = 0; i < reps + 10; i++) {
        nn_tensor *c;
        int64_t t0 = bench_now_ns();
        int rc = nn_mm(a, b, &c);
        if (i >= 10) t[i - 10] = (double)(bench_now_ns() - t0) / 1e3;
        if (rc) die("mm", rc);
        nn_tensor_free(c);
    }
    double m = bench_stats_of(t, reps).median;
    free(t);
    return m;
}

static const char *TORCH_SCRIPT =
    "import sys, time, torch\n"
    "torch.manual_seed(7); torch.set_num_threads(1)\n"
    "m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 64)).eval()\n"
    "x = torch.randn(128, 256)\n"
    "reps = int(sys.argv[1])\n"
    "with torch.inference_mode():\n"
    "    for _ in range(50): m(x)\n"
    "    ts = []\n"
    "    for _ in range(reps):\n"
    "        t = time.perf_counter_ns(); m(x); ts.append(time.perf_counter_ns() - t)\n"
    "ts.sort(); print('median_us: %f' % (ts[len(ts) // 2] / 1e3))\n";

int main(int argc, char **argv) {
    bool json = false;
    int reps = 400;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_forward [--json] [--reps N]\n");
            return 2;
        }
    }
    if (reps < 10) reps = 10;

    double peak = fma_peak_gflops();

    nn_manual_seed(7);
    nn_module *layers[3], *model;
    int rc = nn_linear_new(&layers[0], IN, HIDDEN);
    if (!rc) rc = nn_relu_new(&layers[1]);
    if (!rc) rc = nn_linear_new(&layers[2], HIDDEN, OUT);
    if (!rc) rc = nn_sequential_new(&model, layers, 3);
    if (rc) die("model", rc);
    nn_tensor *x, *h, *w1t, *w2t;
    if ((rc = nn_tensor_randn(&x, 2, (int64_t[]){BATCH, IN})) || (rc = nn_tensor_randn(&h, 2, (int64_t[]){BATCH, HIDDEN})) ||
        (rc = nn_tensor_randn(&w1t, 2, (int64_t[]){IN, HIDDEN})) || (rc = nn_tensor_randn(&w2t, 2, (int64_t[]){HIDDEN, OUT})))
        die("inputs", rc);
    const double flops1 = 2.0 * BATCH * IN * HIDDEN, flops2 = 2.0 * BATCH * HIDDEN * OUT;
    const double flops = flops1 + flops2;

    nn_set_num_threads(1);
    bench_stats f1 = time_forward(model, x, reps);
    double g1 = flops1 / time_mm(x, w1t, reps) / 1e3, g2 = flops2 / time_mm(h, w2t, reps) / 1e3;
    double mm1_1t = time_mm(x, w1t, reps);
    nn_set_num_threads(2);
    bench_stats f2 = time_forward(model, x, reps);
    double mm1_2t = time_mm(x, w1t, reps);
    nn_set_num_threads(1);

    /* Peers, in the same run, under the same settings (one thread, inference). */
    double torch_py = NAN, torch_cpp = NAN;
    char cmd[8192];
    if (bench_have_torch()) {
        char path[] = "/tmp/opprof-bench-torch-XXXXXX";
        int fd = mkstemp(path);
        if (fd >= 0 && write(fd, TORCH_SCRIPT, strlen(TORCH_SCRIPT)) == (ssize_t)strlen(TORCH_SCRIPT)) {
            snprintf(cmd, sizeof cmd, "%s /usr/bin/python3 %s %d 2>/dev/null", bench_openblas_env(), path, reps);
            if (!bench_run_peer(cmd, "median_us", &torch_py)) torch_py = NAN;
        }
        if (fd >= 0) close(fd);
        unlink(path);
    }
    snprintf(cmd, sizeof cmd, "%s/torch_forward", bench_self_dir());
    if (access(cmd, X_OK) == 0) {
        char run[8400];
        snprintf(run, sizeof run, "%s '%s' %d 2>/dev/null", bench_openblas_env(), cmd, reps);
        if (!bench_run_peer(run, "median_us", &torch_cpp)) torch_cpp = NAN;
    }

    double gflops = flops / f1.median / 1e3;
    double ratio_py = torch_py / f1.median, ratio_cpp = torch_cpp / f1.median;
    double speedup2 = mm1_1t / mm1_2t;
    double bound_us = flops / peak / 1e3;
    if (json) {
        printf("{\n");
        bench_json_number(stdout, "forward_us_median", f1.median, false);
        bench_json_number(stdout, "forward_us_iqr", f1.iqr, false);
        bench_json_number(stdout, "forward_gflops", gflops, false);
        bench_json_number(stdout, "forward_2threads_us_median", f2.median, false);
        bench_json_number(stdout, "torch_forward_us_median", torch_py, false);
        bench_json_number(stdout, "libtorch_forward_us_median", torch_cpp, false);
        bench_json_number(stdout, "ratio_vs_torch", ratio_py, false);
        bench_json_number(stdout, "ratio_vs_libtorch", ratio_cpp, false);
        bench_json_number(stdout, "peak_gflops", peak, false);
        bench_json_number(stdout, "forward_bound_us", bound_us, false);
        printf("  \"gemm_gflops\": [%.6g, %.6g],\n", g1, g2);
        printf("  \"gemm_fraction_of_peak\": [%.4f, %.4f],\n", g1 / peak, g2 / peak);
        bench_json_number(stdout, "threads2_speedup", speedup2, true);
        printf("}\n");
        return 0;
    }
    printf("seed's forward pass, batch %d, %d -> %d -> %d, %.1f MFLOP, profiler off\n", BATCH, IN, HIDDEN, OUT,
           flops / 1e6);
    printf("  FMA peak (measured)      %8.1f GFLOP/s   -> forward cannot take less than %.1f us\n", peak, bound_us);
    printf("  nn, 1 thread             %8.1f us median (IQR %.1f us, %d runs)  %.1f GFLOP/s\n", f1.median, f1.iqr,
           f1.n, gflops);
    printf("  nn, 2 threads            %8.1f us median (IQR %.1f us)\n", f2.median, f2.iqr);
    printf("  GEMM %dx%dx%d            %8.1f GFLOP/s (%.0f%% of peak)\n", BATCH, IN, HIDDEN, g1, 100 * g1 / peak);
    printf("  GEMM %dx%dx%d             %8.1f GFLOP/s (%.0f%% of peak)\n", BATCH, HIDDEN, OUT, g2, 100 * g2 / peak);
    printf("  GEMM %dx%dx%d, 2 threads %8.2fx faster than 1 thread\n", BATCH, IN, HIDDEN, speedup2);
    if (!isnan(torch_py))
        printf("  PyTorch (Python)         %8.1f us median  -> nn is %.2fx faster\n", torch_py, ratio_py);
    else
        printf("  PyTorch (Python)         not installed (apt-get install python3-torch)\n");
    if (!isnan(torch_cpp))
        printf("  libtorch (C++)           %8.1f us median  -> nn is %.2fx faster\n", torch_cpp, ratio_cpp);
    else
        printf("  libtorch (C++)           not built (apt-get install libtorch-dev, then rebuild)\n");
    nn_tensor_free(x);
    nn_tensor_free(h);
    nn_tensor_free(w1t);
    nn_tensor_free(w2t);
    nn_module_free(model);
    return 0;
}
