/* test_forward.c - the seed's forward pass (128 x 256 -> 512 -> 64, and
 * batch 1) against a float64 reference, on 1 and 2 threads, with every GEMM
 * kernel this CPU runs forced one by one; bit-identical between runs. */
#include "check.h"

#include <math.h>
#include <nn/nn.h>
#include <stdlib.h>
#include <string.h>

/* relu(x W1^T + b1) W2^T + b2 in float64; returns the worst relative error of
 * y, relative to the magnitude of the sum of products of each element. */
static double worst_error(const nn_tensor *x, nn_module *m, const nn_tensor *y) {
    const nn_tensor *w1 = nn_module_parameter(m, "0.weight"), *b1 = nn_module_parameter(m, "0.bias");
    const nn_tensor *w2 = nn_module_parameter(m, "2.weight"), *b2 = nn_module_parameter(m, "2.bias");
    int64_t M = x->shape[0], K = x->shape[1], H = w1->shape[0], N = w2->shape[0];
    double *h = malloc((size_t)(M * H) * sizeof *h);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < H; j++) {
            double acc = b1->data[j];
            for (int64_t p = 0; p < K; p++) acc += (double)x->data[i * K + p] * w1->data[j * K + p];
            h[i * H + j] = acc > 0 ? acc : 0;
        }
    double worst = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double acc = b2->data[j], mag = fabs(b2->data[j]);
            for (int64_t p = 0; p < H; p++) {
                acc += h[i * H + p] * w2->data[j * H + p];
                mag += fabs(h[i * H + p] * w2->data[j * H + p]);
            }
            double err = fabs(y->data[i * N + j] - acc) / mag;
            if (err > worst) worst = err;
        }
    free(h);
    return worst;
}

/* The seed's forward on 1 and 2 threads with the kernel in use: within 1e-5
 * of float64, bit-identical between runs and between thread counts. Returns
 * the 1-thread output. */
static nn_tensor *check_forward(const char *kernel, nn_module *m, const nn_tensor *x) {
    nn_tensor *first[3] = {0};
    for (int threads = 1; threads <= 2; threads++) {
        nn_set_num_threads(threads);
        nn_tensor *a, *b;
        CHECK_INT(nn_module_forward(m, x, &a), 0);
        CHECK_INT(nn_module_forward(m, x, &b), 0);
        double err = worst_error(x, m, a);
        if (err >= 1e-5) fprintf(stderr, "%s, %d thread(s): relative error %g\n", kernel, threads, err);
        CHECK(err < 1e-5);
        CHECK(nn_tensor_equal(a, b)); /* bit-identical between runs */
        first[threads] = a;
        nn_tensor_free(b);
    }
    /* Work is split by rows, summed in one order: threads do not change bits. */
    if (strcmp(kernel, "openblas")) CHECK(nn_tensor_equal(first[1], first[2]));
    nn_set_num_threads(1);
    nn_tensor_free(first[2]);
    return first[1];
}

/* auto, then every kernel this CPU runs, forced one by one; nn's own
 * kernels (and auto, which picks among them) give the same bits. */
TEST_CASE(every_kernel_gives_the_same_forward) {
    nn_manual_seed(7);
    nn_module *l[3], *m;
    CHECK_INT(nn_linear_new(&l[0], 256, 512), 0);
    CHECK_INT(nn_relu_new(&l[1]), 0);
    CHECK_INT(nn_linear_new(&l[2], 512, 64), 0);
    CHECK_INT(nn_sequential_new(&m, l, 3), 0);
    nn_tensor *x, *x1;
    CHECK_INT(nn_tensor_randn(&x, 2, (int64_t[]){128, 256}), 0);
    CHECK_INT(nn_tensor_randn(&x1, 2, (int64_t[]){1, 256}), 0); /* batch 1: the wide tiles */
    nn_tensor *own = check_forward("auto", m, x), *own1 = check_forward("auto", m, x1);
    int forced = 0;
    for (int i = 0; nn_gemm_kernel_name(i); i++) {
        const char *kernel = nn_gemm_kernel_name(i);
        if (nn_gemm_set_kernel(kernel) != 0) continue; /* not on this CPU: test_gemm checks which */
        forced++;
        nn_tensor *y = check_forward(kernel, m, x), *y1 = check_forward(kernel, m, x1);
        if (!strcmp(kernel, "avx512") || !strcmp(kernel, "avx2") || !strcmp(kernel, "scalar")) {
            CHECK(nn_tensor_equal(y, own));
            CHECK(nn_tensor_equal(y1, own1));
        }
        nn_tensor_free(y);
        nn_tensor_free(y1);
    }
    CHECK(forced >= 3);
    CHECK_INT(nn_gemm_set_kernel("auto"), 0);
    nn_tensor_free(own);
    nn_tensor_free(own1);
    nn_tensor_free(x);
    nn_tensor_free(x1);
    nn_module_free(m);
}

/* Odd sizes: rows not a multiple of the GEMM's block, tiny and large K, on
 * one thread and two, against sums in double. */
TEST_CASE(odd_sizes_against_double_sums) {
    nn_manual_seed(7);
    int64_t shapes[][3] = {{1, 3, 5}, {33, 17, 9}, {97, 300, 130}, {130, 1, 70}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        nn_tensor *a, *w, *b, *y;
        nn_tensor_randn(&a, 2, (int64_t[]){shapes[s][0], shapes[s][1]});
        nn_tensor_randn(&w, 2, (int64_t[]){shapes[s][2], shapes[s][1]});
        nn_tensor_randn(&b, 1, (int64_t[]){shapes[s][2]});
        for (int threads = 1; threads <= 2; threads++) {
            nn_set_num_threads(threads);
            CHECK_INT(nn_linear(a, w, b, &y), 0);
            double worst = 0;
            for (int64_t i = 0; i < shapes[s][0]; i++)
                for (int64_t j = 0; j < shapes[s][2]; j++) {
                    double acc = b->data[j], mag = fabs(b->data[j]);
                    for (int64_t p = 0; p < shapes[s][1]; p++) {
                        acc += (double)a->data[i * shapes[s][1] + p] * w->data[j * shapes[s][1] + p];
                        mag += fabs((double)a->data[i * shapes[s][1] + p] * w->data[j * shapes[s][1] + p]);
                    }
                    worst = fmax(worst, fabs(y->data[i * shapes[s][2] + j] - acc) / mag);
                }
            CHECK(worst < 1e-5);
            nn_tensor_free(y);
        }
        nn_tensor_free(a);
        nn_tensor_free(w);
        nn_tensor_free(b);
    }
    nn_set_num_threads(1);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_forward"); }
