/* test_gemm.c - nn's matrix-product kernels, each forced in turn: every one
 * this CPU runs matches float64 on odd shapes; nn's own kernels (avx512,
 * avx2, scalar) give exactly the bits of the documented order, which this
 * test computes on its own (s = fmaf(a, b, s) along K, + C, + bias), on any
 * thread count; auto's choice and its errors. */
#include "check.h"

#include <math.h>
#include <nn/nn.h>
#include <stdlib.h>
#include <unistd.h>

static bool is_own(const char *kernel) {
    return !strcmp(kernel, "avx512") || !strcmp(kernel, "avx2") || !strcmp(kernel, "scalar") || !strcmp(kernel, "auto");
}

/* The documented order, one element at a time. bias: [N] or NULL; c_old:
 * [M, N] or NULL. w is [N, K] (y = x w^T), or b is [K, N] when w is NULL. */
static float ordered(const nn_tensor *x, const nn_tensor *w, const nn_tensor *b, const float *c_old, const float *bias,
                     int64_t i, int64_t j) {
    int64_t k = x->shape[1], n = w ? w->shape[0] : b->shape[1];
    float s = 0.0f;
    for (int64_t p = 0; p < k; p++)
        s = fmaf(x->data[i * x->strides[0] + p * x->strides[1]], w ? w->data[j * k + p] : b->data[p * n + j], s);
    if (c_old) s = s + c_old[i * n + j];
    if (bias) s = s + bias[j];
    return s;
}

/* Worst |got - exact| / sum |terms| against float64. */
static double worst_error(const nn_tensor *x, const nn_tensor *w, const float *c_old, const float *bias,
                          const nn_tensor *y) {
    int64_t m = x->shape[0], k = x->shape[1], n = w->shape[0];
    double worst = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0, mag = 0;
            for (int64_t p = 0; p < k; p++) {
                double t = (double)x->data[i * k + p] * w->data[j * k + p];
                acc += t;
                mag += fabs(t);
            }
            if (c_old) acc += c_old[i * n + j], mag += fabs(c_old[i * n + j]);
            if (bias) acc += bias[j], mag += fabs(bias[j]);
            worst = fmax(worst, fabs(y->data[i * n + j] - acc) / (mag > 0 ? mag : 1));
        }
    return worst;
}

/* Counts elements of y that differ from the documented order's bits. */
static int64_t bits_off(const nn_tensor *x, const nn_tensor *w, const nn_tensor *b, const float *c_old,
                        const float *bias, const nn_tensor *y) {
    int64_t off = 0, n = y->shape[1];
    for (int64_t i = 0; i < y->shape[0]; i++)
        for (int64_t j = 0; j < n; j++) {
            float want = ordered(x, w, b, c_old, bias, i, j);
            off += memcmp(&want, &y->data[i * n + j], sizeof want) != 0;
        }
    return off;
}

/* [M, K] x [N, K]^T (+ bias) through nn_linear (B transposed: packed into
 * panels), nn_mm on a contiguous [K, N] (plain rows) and nn_addmm with a
 * full [M, N] bias (accumulating onto C), on 1 and 2 threads. */
static void check_shape(const char *kernel, int64_t m, int64_t k, int64_t n) {
    nn_tensor *x, *w, *bias, *wt, *full, *y;
    CHECK_INT(nn_tensor_randn(&x, 2, (int64_t[]){m, k}), 0);
    CHECK_INT(nn_tensor_randn(&w, 2, (int64_t[]){n, k}), 0);
    CHECK_INT(nn_tensor_randn(&bias, 1, (int64_t[]){n}), 0);
    CHECK_INT(nn_tensor_randn(&full, 2, (int64_t[]){m, n}), 0);
    CHECK_INT(nn_t(w, &wt), 0);
    nn_tensor *b_rows; /* w^T, contiguous */
    CHECK_INT(nn_contiguous(wt, &b_rows), 0);
    for (int threads = 1; threads <= 2; threads++) {
        nn_set_num_threads(threads);
        CHECK_INT(nn_linear(x, w, bias, &y), 0);
        double err = worst_error(x, w, NULL, bias->data, y);
        if (err >= 1e-5)
            fprintf(stderr, "%s %lldx%lldx%lld linear: error %g\n", kernel, (long long)m, (long long)k, (long long)n,
                    err);
        CHECK(err < 1e-5);
        if (is_own(kernel)) CHECK_INT(bits_off(x, w, NULL, NULL, bias->data, y), 0);
        nn_tensor_free(y);

        CHECK_INT(nn_mm(x, b_rows, &y), 0);
        CHECK(worst_error(x, w, NULL, NULL, y) < 1e-5);
        if (is_own(kernel)) CHECK_INT(bits_off(x, NULL, b_rows, NULL, NULL, y), 0);
        nn_tensor_free(y);

        CHECK_INT(nn_addmm(full, x, b_rows, &y), 0);
        CHECK(worst_error(x, w, full->data, NULL, y) < 1e-5);
        if (is_own(kernel)) CHECK_INT(bits_off(x, NULL, b_rows, full->data, NULL, y), 0);
        nn_tensor_free(y);
    }
    nn_set_num_threads(1);
    nn_tensor_free(x);
    nn_tensor_free(w);
    nn_tensor_free(bias);
    nn_tensor_free(full);
    nn_tensor_free(wt);
    nn_tensor_free(b_rows);
}

/* Shapes around every edge: one row, rows not a multiple of any tile (6, 8,
 * 12) and enough of them to split across threads by rows, few rows and
 * enough work to split by columns, columns with vector and panel tails,
 * K = 1, and the seed's two layers. */
static const int64_t SHAPES[][3] = {{1, 3, 5},     {1, 256, 512},   {2, 7, 33},     {5, 64, 100},
                                    {13, 1, 47},   {33, 17, 9},     {97, 300, 130}, {130, 1, 70},
                                    {4, 512, 600}, {128, 256, 512}, {128, 512, 64}, {61, 129, 257}};

static void check_kernel(const char *kernel) {
    for (size_t s = 0; s < sizeof SHAPES / sizeof *SHAPES; s++)
        check_shape(kernel, SHAPES[s][0], SHAPES[s][1], SHAPES[s][2]);
}

static bool cpu_has(const char *kernel) {
    __builtin_cpu_init();
    if (!strcmp(kernel, "avx512")) return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    if (!strcmp(kernel, "avx2")) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return true;
}

/* NN_GEMM is read at the first product: a wrong name is reported, and auto used. */
static void check_env_message(void) {
    setenv("NN_GEMM", "sse9", 1);
    fflush(stderr);
    int saved = dup(2);
    FILE *cap = tmpfile();
    dup2(fileno(cap), 2);
    const char *setting = nn_gemm_kernel();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char text[512] = {0};
    rewind(cap);
    size_t got = fread(text, 1, sizeof text - 1, cap);
    fclose(cap);
    CHECK(got > 0);
    CHECK(strstr(text, "NN_GEMM=sse9: not a kernel") != NULL);
    CHECK_STR(setting, "auto");
    unsetenv("NN_GEMM");
}

TEST_CASE(every_kernel) {
    check_env_message();
    nn_manual_seed(11);
    int ran = 0;
    for (int i = 0; nn_gemm_kernel_name(i); i++) {
        const char *kernel = nn_gemm_kernel_name(i);
        int rc = nn_gemm_set_kernel(kernel);
        CHECK_INT(rc, cpu_has(kernel) ? 0 : NN_ENOTSUP);
        if (rc) continue;
        CHECK_STR(nn_gemm_kernel(), kernel);
        nn_gemm_choice c;
        CHECK_INT(nn_gemm_choice_for(128, 512, 256, &c), 0);
        CHECK_STR(c.kernel, kernel);
        check_kernel(kernel);
        ran++;
    }
    CHECK(ran >= 3); /* scalar, xsmm and openblas run everywhere */
    printf("test_gemm: %d kernels ran on this CPU\n", ran);
}

TEST_CASE(auto_choice) {
    /* auto: one of nn's own kernels, measured; the same bits as any other */
    CHECK_INT(nn_gemm_set_kernel(NULL), 0);
    CHECK_STR(nn_gemm_kernel(), "auto");
    nn_gemm_choice c;
    CHECK_INT(nn_gemm_choice_for(128, 512, 256, &c), 0);
    CHECK(is_own(c.kernel));
    if (cpu_has("avx2")) CHECK(c.gflops > 0);
    check_kernel("auto"); /* bits_off checks auto's choices against the order */

    CHECK_INT(nn_gemm_set_kernel("sse9"), NN_EINVAL);
    CHECK_INT(nn_gemm_set_kernel(""), NN_EINVAL);
    CHECK_STR(nn_gemm_kernel(), "auto"); /* a refused name changes nothing */
    CHECK_INT(nn_gemm_choice_for(0, 4, 4, &c), NN_EINVAL);
    CHECK_INT(nn_gemm_choice_for(4, 4, (int64_t)1 << 40, &c), NN_EINVAL);
    CHECK_INT(nn_gemm_choice_for(4, 4, 4, NULL), NN_EINVAL);
    CHECK(nn_gemm_kernel_name(-1) == NULL);
    CHECK_STR(nn_strerror(NN_ENOTSUP), "not supported on this machine");
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_gemm"); }
