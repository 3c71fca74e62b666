/*
 * bench_forward - the seed's forward pass (256 -> 512 -> 64) with the profiler
 * off, against the machine's limits and its peers, all in one run:
 *   - batch 128 is compute bound: the limit is the float32 FMA peak of the
 *     best instruction set (measured here, one core and both cores);
 *   - batch 1 is bound by reading the 0.66 MB of weights: the limit is the
 *     read bandwidth of a buffer that size, read again and again;
 *   - 1 and 2 threads; the GEMM kernel that nn chose for each layer, and
 *     every kernel's GFLOP/s on each layer (NN_GEMM forces one for the
 *     forward passes);
 *   - PyTorch from Python and libtorch from C++, one thread, when installed:
 *     7 rounds of the peers then nn, the ratio the median of the rounds'
 *     pairs with its interval.
 *
 * --isa avx2 measures an AVX2 machine on an AVX-512 one: nn's AVX2 kernel,
 * the AVX2 FMA peak as the bound, OpenBLAS (and so PyTorch) and libxsmm
 * told to use their AVX2 (Haswell) code.
 *
 *   build/bin/bench_forward [--json] [--reps N] [--isa avx2|avx512]
 */
#include "limits.h"

#include <nn/nn.h>

enum { IN = 256, HIDDEN = 512, OUT = 64, BIG = 128 };

typedef struct batch_result {
    int batch;
    bench_stats t1, t2;                /* forward, 1 and 2 threads, us */
    double torch_py, torch_cpp;        /* peers' medians over the rounds, us (NAN: absent) */
    bench_ratio vs_torch, vs_libtorch; /* peer / nn, interleaved rounds */
    nn_gemm_choice layer[2];           /* what auto chose for each layer */
} batch_result;

typedef struct machine {
    const char *isa;
    double peak, peak_avx512, peak_avx2, peak_2threads; /* GFLOP/s */
    double read_gbps;                                   /* weights-sized buffer */
} machine;

static void die(const char *what, int rc) {
    fprintf(stderr, "bench_forward: %s: %s\n", what, nn_strerror(rc));
    exit(1);
}

static nn_module *seed_model(void) {
    nn_manual_seed(7);
    nn_module *layers[3], *model;
    int rc = nn_linear_new(&layers[0], IN, HIDDEN);
    if (!rc) rc = nn_relu_new(&layers[1]);
    if (!rc) rc = nn_linear_new(&layers[2], HIDDEN, OUT);
    if (!rc) rc = nn_sequential_new(&model, layers, 3);
    if (rc) die("model", rc);
    return model;
}

/* Median/IQR of `reps` single forward passes, in microseconds. */
static bench_stats time_forward(nn_module *model, const nn_tensor *x, int reps) {
    double *t = malloc((size_t)reps * sizeof *t);
    for (int i = 0; i < reps + 20; i++) {
        nn_tensor *y;
        int64_t t0 = bench_now_ns();
        int rc = nn_module_forward(model, x, &y);
        if (i >= 20) t[i - 20] = (double)(bench_now_ns() - t0) / 1e3;
        if (rc) die("forward", rc);
        nn_tensor_free(y);
    }
    bench_stats s = bench_stats_of(t, reps);
    free(t);
    return s;
}

/* GFLOP/s of aten::mm [m, k] x [k, n] with contiguous operands (median). */
static double mm_gflops(int m, int k, int n, int reps) {
    nn_tensor *a, *b, *c;
    if (nn_tensor_randn(&a, 2, (int64_t[]){m, k}) || nn_tensor_randn(&b, 2, (int64_t[]){k, n})) die("mm", NN_ENOMEM);
    double *t = malloc((size_t)reps * sizeof *t);
    for (int i = 0; i < reps + 10; i++) {
        int64_t t0 = bench_now_ns();
        int rc = nn_mm(a, b, &c);
        if (i >= 10) t[i - 10] = (double)(bench_now_ns() - t0) / 1e3;
        if (rc) die("mm", rc);
        nn_tensor_free(c);
    }
    double us = bench_stats_of(t, reps).median;
    free(t);
    nn_tensor_free(a);
    nn_tensor_free(b);
    return 2.0 * m * n * k / us / 1e3;
}

static const char *TORCH_SCRIPT =
    "import sys, time, torch\n"
    "torch.manual_seed(7); torch.set_num_threads(1)\n"
    "m = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 64)).eval()\n"
    "reps, batch = int(sys.argv[1]), int(sys.argv[2])\n"
    "x = torch.randn(batch, 256)\n"
    "with torch.inference_mode():\n"
    "    for _ in range(50): m(x)\n"
    "    ts = []\n"
    "    for _ in range(reps):\n"
    "        t = time.perf_counter_ns(); m(x); ts.append(time.perf_counter_ns() - t)\n"
    "ts.sort(); print('median_us: %f' % (ts[len(ts) // 2] / 1e3))\n";

/* PyTorch (Python) and libtorch (C++) on the same model and batch, one
 * thread: each one's median, us (NAN: absent). */
static void run_peers(int batch, int reps, double *torch_py, double *torch_cpp) {
    char cmd[8400];
    *torch_py = *torch_cpp = NAN;
    if (bench_have_torch()) {
        char path[] = "/tmp/opprof-bench-torch-XXXXXX";
        int fd = mkstemp(path);
        if (fd >= 0 && write(fd, TORCH_SCRIPT, strlen(TORCH_SCRIPT)) == (ssize_t)strlen(TORCH_SCRIPT)) {
            snprintf(cmd, sizeof cmd, "%s /usr/bin/python3 %s %d %d 2>/dev/null", bench_openblas_env(), path, reps,
                     batch);
            if (!bench_run_peer(cmd, "median_us", torch_py)) *torch_py = NAN;
        }
        if (fd >= 0) close(fd);
        unlink(path);
    }
    char exe[4200];
    snprintf(exe, sizeof exe, "%s/torch_forward", bench_self_dir());
    if (access(exe, X_OK) == 0) {
        snprintf(cmd, sizeof cmd, "%s '%s' %d %d 2>/dev/null", bench_openblas_env(), exe, reps, batch);
        if (!bench_run_peer(cmd, "median_us", torch_cpp)) *torch_cpp = NAN;
    }
}

enum { ROUNDS = 7 };

/* The median of the values that are not NAN (NAN if none). */
static double median_of(const double *v, int n) {
    double kept[ROUNDS];
    int k = 0;
    for (int i = 0; i < n && k < ROUNDS; i++)
        if (!isnan(v[i])) kept[k++] = v[i];
    return k ? bench_stats_of(kept, k).median : NAN;
}

static batch_result run_batch(nn_module *model, int batch, int reps) {
    batch_result r = {.batch = batch};
    nn_tensor *x;
    int rc = nn_tensor_randn(&x, 2, (int64_t[]){batch, IN});
    if (!rc) rc = nn_gemm_choice_for(batch, HIDDEN, IN, &r.layer[0]);
    if (!rc) rc = nn_gemm_choice_for(batch, OUT, HIDDEN, &r.layer[1]);
    if (rc) die("input", rc);
    nn_set_num_threads(1);
    r.t1 = time_forward(model, x, reps);
    nn_set_num_threads(2);
    r.t2 = time_forward(model, x, reps);
    nn_set_num_threads(1);
    /* the peers' ratios: ROUNDS interleaved pairs (PyTorch, libtorch, nn), each a median of reps */
    double py[ROUNDS], cpp[ROUNDS], ours[ROUNDS];
    for (int k = 0; k < ROUNDS; k++) {
        run_peers(batch, reps, &py[k], &cpp[k]);
        ours[k] = isnan(py[k]) && isnan(cpp[k]) ? NAN : time_forward(model, x, reps).median;
    }
    nn_tensor_free(x);
    r.vs_torch = bench_ratio_of(py, ours, ROUNDS);
    r.vs_libtorch = bench_ratio_of(cpp, ours, ROUNDS);
    r.torch_py = median_of(py, ROUNDS);
    r.torch_cpp = median_of(cpp, ROUNDS);
    return r;
}

/* The FMA peaks: best of the start and the end of the run (a clock that
 * ramps or a neighbour that comes and goes would lower one of them). */
static void measure_peaks(machine *m) {
    double avx512 = limits_fma_gflops(LIMITS_AVX512, 5), avx2 = limits_fma_gflops(LIMITS_AVX2, 5);
    if (avx512 > m->peak_avx512) m->peak_avx512 = avx512;
    if (avx2 > m->peak_avx2) m->peak_avx2 = avx2;
    m->peak = !strcmp(m->isa, "avx512") ? m->peak_avx512 : m->peak_avx2;
}

static machine measure_machine(bool only_avx2) {
    limits_isa best = limits_has(LIMITS_AVX512) && !only_avx2 ? LIMITS_AVX512 : LIMITS_AVX2;
    machine m = {.isa = !limits_has(LIMITS_AVX2) ? "none" : best == LIMITS_AVX512 ? "avx512" : "avx2"};
    limits_fma_gflops(LIMITS_AVX2, 10); /* warm-up: the clock settles */
    measure_peaks(&m);
    m.peak_2threads = limits_fma_gflops_threads(best, 2);
    m.read_gbps = limits_read_gbps((size_t)(IN * HIDDEN + HIDDEN + HIDDEN * OUT + OUT) * sizeof(float));
    return m;
}

static const double FLOPS_PER_ROW = 2.0 * (IN * HIDDEN + HIDDEN * OUT);
static const double WEIGHT_BYTES = (IN * HIDDEN + HIDDEN + HIDDEN * OUT + OUT) * 4.0;

/* Every kernel this CPU runs, on both layers at batch 128: GFLOP/s. */
static int measure_kernels(const char **names, double (*gflops)[2], int reps) {
    int n = 0;
    const char *forced = nn_gemm_kernel();
    for (int i = 0; nn_gemm_kernel_name(i); i++) {
        const char *name = nn_gemm_kernel_name(i);
        if (!strcmp(name, "scalar") || nn_gemm_set_kernel(name) != 0) continue;
        names[n] = name;
        gflops[n][0] = mm_gflops(BIG, IN, HIDDEN, reps);
        gflops[n][1] = mm_gflops(BIG, HIDDEN, OUT, reps);
        n++;
    }
    nn_gemm_set_kernel(forced);
    return n;
}

static void json_batch(const batch_result *r, const machine *m, bool last) {
    double bound = r->batch == 1 ? WEIGHT_BYTES / m->read_gbps / 1e3 : FLOPS_PER_ROW * r->batch / m->peak / 1e3;
    printf("  \"batch_%d\": {\n", r->batch);
    bench_json_number(stdout, "forward_us_median", r->t1.median, false);
    bench_json_number(stdout, "forward_us_iqr", r->t1.iqr, false);
    bench_json_number(stdout, "forward_gflops", FLOPS_PER_ROW * r->batch / r->t1.median / 1e3, false);
    bench_json_number(stdout, r->batch == 1 ? "bandwidth_bound_us" : "forward_bound_us", bound, false);
    bench_json_number(stdout, "fraction_of_bound", bound / r->t1.median, false);
    bench_json_number(stdout, "forward_2threads_us_median", r->t2.median, false);
    bench_json_number(stdout, "threads2_speedup", r->t1.median / r->t2.median, false);
    bench_json_number(stdout, "torch_forward_us_median", r->torch_py, false);
    bench_json_number(stdout, "libtorch_forward_us_median", r->torch_cpp, false);
    bench_json_ratio(stdout, "ratio_vs_torch", r->vs_torch, false);
    bench_json_ratio(stdout, "ratio_vs_libtorch", r->vs_libtorch, false);
    printf("    \"kernels\": [\"%s\", \"%s\"],\n", r->layer[0].kernel, r->layer[1].kernel);
    printf("    \"kernels_measured_gflops\": [%.6g, %.6g]\n", r->layer[0].gflops, r->layer[1].gflops);
    printf("  }%s\n", last ? "" : ",");
}

static void print_json(const machine *m, const batch_result *b128, const batch_result *b1, const char **names,
                       double (*gf)[2], int n_kernels) {
    printf("{\n  \"isa\": \"%s\",\n  \"gemm_kernel_setting\": \"%s\",\n", m->isa, nn_gemm_kernel());
    bench_json_number(stdout, "peak_gflops", m->peak, false);
    bench_json_number(stdout, "peak_gflops_avx512", m->peak_avx512, false);
    bench_json_number(stdout, "peak_gflops_avx2", m->peak_avx2, false);
    bench_json_number(stdout, "peak_gflops_2threads", m->peak_2threads, false);
    bench_json_number(stdout, "read_gbps_weights", m->read_gbps, false);
    bench_json_number(stdout, "weights_bytes", WEIGHT_BYTES, false);
    /* the batch-128 figures at the top level too, as before */
    bench_json_number(stdout, "forward_us_median", b128->t1.median, false);
    bench_json_number(stdout, "forward_bound_us", FLOPS_PER_ROW * BIG / m->peak / 1e3, false);
    printf("  \"gemm_gflops_by_kernel\": {");
    for (int i = 0; i < n_kernels; i++) printf("%s\"%s\": [%.6g, %.6g]", i ? ", " : "", names[i], gf[i][0], gf[i][1]);
    printf("},\n  \"gemm_fraction_of_peak_by_kernel\": {");
    for (int i = 0; i < n_kernels; i++) {
        double peak = !strcmp(names[i], "avx2") ? m->peak_avx2 : m->peak;
        printf("%s\"%s\": [%.4f, %.4f]", i ? ", " : "", names[i], gf[i][0] / peak, gf[i][1] / peak);
    }
    printf("},\n");
    json_batch(b128, m, false);
    json_batch(b1, m, true);
    printf("}\n");
}

static void text_batch(const batch_result *r, const machine *m) {
    double bound = r->batch == 1 ? WEIGHT_BYTES / m->read_gbps / 1e3 : FLOPS_PER_ROW * r->batch / m->peak / 1e3;
    printf("batch %d (kernels: %s, %s)\n", r->batch, r->layer[0].kernel, r->layer[1].kernel);
    printf("  bound (%s)       %8.1f us\n", r->batch == 1 ? "read weights" : "FMA peak    ", bound);
    printf("  nn, 1 thread             %8.1f us median (IQR %.1f us, %d runs) = %.0f%% of the bound\n", r->t1.median,
           r->t1.iqr, r->t1.n, 100 * bound / r->t1.median);
    printf("  nn, 2 threads            %8.1f us median -> %.2fx one thread\n", r->t2.median,
           r->t1.median / r->t2.median);
    char ratio[96];
    bench_ratio_text(r->vs_torch, ratio, sizeof ratio);
    if (!isnan(r->torch_py))
        printf("  PyTorch (Python)         %8.1f us median -> nn is %s faster\n", r->torch_py, ratio);
    bench_ratio_text(r->vs_libtorch, ratio, sizeof ratio);
    if (!isnan(r->torch_cpp))
        printf("  libtorch (C++)           %8.1f us median -> nn is %s faster\n", r->torch_cpp, ratio);
}

static void print_text(const machine *m, const batch_result *b128, const batch_result *b1, const char **names,
                       double (*gf)[2], int n_kernels) {
    printf("seed's forward pass, %d -> %d -> %d, profiler off, GEMM kernel setting: %s\n", IN, HIDDEN, OUT,
           nn_gemm_kernel());
    printf("  FMA peak, one core: %.1f GFLOP/s AVX-512, %.1f AVX2; both cores (%s): %.1f\n", m->peak_avx512,
           m->peak_avx2, m->isa, m->peak_2threads);
    printf("  reading the %.2f MB of weights again and again: %.1f GB/s\n", WEIGHT_BYTES / 1e6, m->read_gbps);
    for (int i = 0; i < n_kernels; i++) {
        double peak = !strcmp(names[i], "avx2") ? m->peak_avx2 : m->peak;
        printf("  GEMM %-9s %dx%dx%d %6.1f GFLOP/s (%3.0f%%)   %dx%dx%d %6.1f GFLOP/s (%3.0f%%)\n", names[i], BIG, IN,
               HIDDEN, gf[i][0], 100 * gf[i][0] / peak, BIG, HIDDEN, OUT, gf[i][1], 100 * gf[i][1] / peak);
    }
    text_batch(b128, m);
    text_batch(b1, m);
    if (!bench_have_torch()) printf("PyTorch not installed (scripts/deps.sh --bench)\n");
}

int main(int argc, char **argv) {
    bool json = false, only_avx2 = false;
    int reps = 400;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--isa") && i + 1 < argc && !strcmp(argv[i + 1], "avx2") && ++i)
            only_avx2 = true;
        else if (!strcmp(argv[i], "--isa") && i + 1 < argc && !strcmp(argv[i + 1], "avx512") && ++i)
            only_avx2 = false;
        else {
            fprintf(stderr, "usage: bench_forward [--json] [--reps N] [--isa avx2|avx512]\n");
            return 64;
        }
    }
    if (reps < 10) reps = 10;
    if (only_avx2) { /* before nn starts libxsmm; the peers inherit OpenBLAS's */
        setenv("LIBXSMM_TARGET", "hsw", 1);
        setenv("OPENBLAS_CORETYPE", "HASWELL", 1);
        int rc = nn_gemm_set_kernel("avx2");
        if (rc) die("--isa avx2", rc);
    }
    machine m = measure_machine(only_avx2);
    nn_module *model = seed_model();
    batch_result b128 = run_batch(model, BIG, reps), b1 = run_batch(model, 1, reps * 10);
    const char *names[8];
    double gf[8][2];
    int n_kernels = measure_kernels(names, gf, reps);
    measure_peaks(&m);
    if (json)
        print_json(&m, &b128, &b1, names, gf, n_kernels);
    else
        print_text(&m, &b128, &b1, names, gf, n_kernels);
    nn_module_free(model);
    return 0;
}
