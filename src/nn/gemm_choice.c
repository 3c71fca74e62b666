/* gemm_choice.c - which kernel runs a matrix product: the one set by
 * nn_gemm_set_kernel or NN_GEMM, or auto's choice for the shape.
 *
 * auto times nn's own kernels that this CPU runs on the first product of
 * each shape and keeps the fastest. They sum every element in one order
 * (kernels.h), so the choice changes the speed and nothing else; libxsmm and
 * OpenBLAS round differently and run only when asked. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#define _GNU_SOURCE             /* secure_getenv */
#include "kernels.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const KERNEL_NAMES[NN__K_COUNT] = {"avx512", "avx2", "scalar", "xsmm", "openblas"};
nn__gemm_block_fn *const nn__gemm_own_kernels[NN__K_OWN] = {nn__gemm_block_avx512, nn__gemm_block_avx2,
                                                            nn__gemm_block_scalar};

static int g_forced = NN__K_AUTO; /* under g_lock */
static pthread_once_t g_env_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* auto's choices per shape; when full, the oldest is replaced. */
enum { CHOICES = 32 };
static nn__gemm_choice g_choices[CHOICES];
static int g_n_choices, g_next_choice;

static bool runs_here(int id) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (id == NN__K_AVX512) return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    if (id == NN__K_AVX2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    if (id == NN__K_AVX512 || id == NN__K_AVX2) return false;
#endif
    return id >= 0 && id < NN__K_COUNT;
}

enum { NOT_A_KERNEL = -2 };

static int kernel_id(const char *name) {
    if (!name || !strcmp(name, "auto")) return NN__K_AUTO;
    for (int i = 0; i < NN__K_COUNT; i++)
        if (!strcmp(name, KERNEL_NAMES[i])) return i;
    return NOT_A_KERNEL;
}

static void read_env(void) {
    const char *env = secure_getenv("NN_GEMM");
    if (!env || !*env) return;
    int id = kernel_id(env);
    if (id == NOT_A_KERNEL || (id != NN__K_AUTO && !runs_here(id)))
        fprintf(stderr, "nn: NN_GEMM=%s: %s (auto, avx512, avx2, scalar, xsmm, openblas); using auto\n", env,
                id == NOT_A_KERNEL ? "not a kernel" : "this CPU cannot run it");
    else
        g_forced = id;
}

const char *nn__gemm_kernel_name(int id) { return id >= 0 && id < NN__K_COUNT ? KERNEL_NAMES[id] : "auto"; }

const char *nn_gemm_kernel_name(int i) { return i >= 0 && i < NN__K_COUNT ? KERNEL_NAMES[i] : NULL; }

int nn_gemm_set_kernel(const char *name) {
    pthread_once(&g_env_once, read_env);
    int id = kernel_id(name);
    if (id == NOT_A_KERNEL) return NN_EINVAL;
    if (id != NN__K_AUTO && !runs_here(id)) return NN_ENOTSUP;
    pthread_mutex_lock(&g_lock);
    g_forced = id;
    pthread_mutex_unlock(&g_lock);
    return 0;
}

const char *nn_gemm_kernel(void) {
    pthread_once(&g_env_once, read_env);
    pthread_mutex_lock(&g_lock);
    int id = g_forced;
    pthread_mutex_unlock(&g_lock);
    return nn__gemm_kernel_name(id);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* GFLOP/s of one own kernel on a corner of the problem (at most 48 x 512 of
 * C, all of K: about a millisecond at most), best of 3 after a warm-up,
 * written to scratch. */
static double time_kernel(int id, const nn__gemm_problem *g, float *scratch, int rows, int cols) {
    nn__gemm_problem t = *g;
    t.bias = NULL;
    t.accumulate = 0;
    t.c = scratch;
    t.ldc = cols;
    double best = 1e30;
    for (int rep = 0; rep < 4; rep++) {
        double t0 = now_s();
        nn__gemm_own_kernels[id](&t, 0, rows, 0, cols);
        double dt = now_s() - t0;
        if (rep > 0 && dt < best) best = dt;
    }
    return 2.0 * rows * cols * g->k / (best > 0 ? best : 1e-9) / 1e9;
}

/* 0, or NN_ENOMEM (no scratch to measure in: nothing is chosen). */
static int measure(const nn__gemm_problem *g, nn__gemm_choice *out) {
    nn__gemm_choice c = {.m = g->m, .n = g->n, .k = g->k, .kernel = NN__K_SCALAR, .gflops = 0};
    *out = c;
    if (!runs_here(NN__K_AVX512) && !runs_here(NN__K_AVX2)) return 0;
    int rows = g->m < 48 ? g->m : 48, cols = g->n < 512 ? g->n : 512;
    float *scratch = nn__alloc((size_t)rows * cols * sizeof(float));
    if (!scratch) return NN_ENOMEM;
    for (int id = NN__K_AVX512; id <= NN__K_AVX2; id++) {
        if (!runs_here(id)) continue;
        double gf = time_kernel(id, g, scratch, rows, cols);
        if (gf > c.gflops) {
            c.gflops = gf;
            c.kernel = id;
        }
    }
    nn__free(scratch);
    *out = c;
    return 0;
}

int nn__gemm_choose(const nn__gemm_problem *g, nn__gemm_choice *out) {
    pthread_once(&g_env_once, read_env);
    pthread_mutex_lock(&g_lock);
    nn__gemm_choice c = {.m = g->m, .n = g->n, .k = g->k, .kernel = g_forced, .gflops = 0};
    int rc = 0;
    if (g_forced == NN__K_AUTO) {
        int i = 0;
        while (i < g_n_choices && (g_choices[i].m != g->m || g_choices[i].n != g->n || g_choices[i].k != g->k)) i++;
        if (i < g_n_choices) {
            c = g_choices[i];
        } else if ((rc = measure(g, &c)) == 0) {
            g_choices[g_next_choice] = c;
            g_next_choice = (g_next_choice + 1) % CHOICES;
            if (g_n_choices < CHOICES) g_n_choices++;
        }
    }
    pthread_mutex_unlock(&g_lock);
    *out = c;
    return rc;
}

int nn_gemm_choice_for(int64_t m, int64_t n, int64_t k, nn_gemm_choice *out) {
    if (!out || m < 1 || n < 1 || k < 1 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) return NN_EINVAL;
    size_t panels = nn__panels_size((int)k, (int)n);
    size_t bytes = ((size_t)m * k + panels + (size_t)m * n) * sizeof(float);
    float *buf = nn__calloc(1, bytes);
    if (!buf) return NN_ENOMEM;
    /* the layout a Linear layer's product reads: B in panels */
    nn__gemm_problem g = {.m = (int)m,
                          .n = (int)n,
                          .k = (int)k,
                          .a = buf,
                          .lda = (int)k,
                          .b = buf + m * k,
                          .b_row_step = NN__PANEL,
                          .b_panel_stride = (size_t)k * NN__PANEL,
                          .c = buf + m * k + panels,
                          .ldc = (int)n};
    nn__gemm_choice c;
    int rc = nn__gemm_choose(&g, &c);
    nn__free(buf);
    if (rc) return rc;
    out->kernel = nn__gemm_kernel_name(c.kernel);
    out->gflops = c.gflops;
    return 0;
}
