/* test_nn.c - the tensor runtime: results against a float64 reference,
 * views, errors, memory accounting, determinism. */
#include "check.h"

#include <math.h>
#include <nn/nn.h>
#include <stdlib.h>

/* max relative error of y = relu?(x @ w^T + b) against float64. */
static double linear_error(const nn_tensor *x, const nn_tensor *w, const nn_tensor *b, const nn_tensor *y, int relu) {
    int64_t m = x->shape[0], k = x->shape[1], n = w->shape[0];
    double worst = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = b ? b->data[j] : 0.0, mag = b ? fabs(b->data[j]) : 0.0;
            for (int64_t p = 0; p < k; p++) {
                acc += (double)x->data[i * k + p] * w->data[j * k + p];
                mag += fabs((double)x->data[i * k + p] * w->data[j * k + p]);
            }
            if (relu && acc < 0) acc = 0;
            double err = fabs(y->data[i * n + j] - acc) / (mag > 1e-30 ? mag : 1.0);
            if (err > worst) worst = err;
        }
    return worst;
}

/* The inputs of every case: x [37, 53], w [29, 53], b [29], seeded. */
static void inputs(nn_tensor **x, nn_tensor **w, nn_tensor **b) {
    nn_manual_seed(7);
    CHECK_INT(nn_tensor_randn(x, 2, (int64_t[]){37, 53}), 0);
    CHECK_INT(nn_tensor_randn(w, 2, (int64_t[]){29, 53}), 0);
    CHECK_INT(nn_tensor_randn(b, 1, (int64_t[]){29}), 0);
}

static void free_inputs(nn_tensor *x, nn_tensor *w, nn_tensor *b) {
    nn_tensor_free(x);
    nn_tensor_free(w);
    nn_tensor_free(b);
}

/* linear, relu, linear without bias (an mm), views that share storage,
 * addmm on a transposed and a contiguous weight, as_strided. */
TEST_CASE(linear_relu_and_views) {
    nn_tensor *x, *w, *b, *y;
    inputs(&x, &w, &b);
    CHECK_INT(nn_linear(x, w, b, &y), 0);
    CHECK_INT(y->ndim, 2);
    CHECK_INT(y->shape[0], 37);
    CHECK_INT(y->shape[1], 29);
    CHECK(linear_error(x, w, b, y, 0) < 1e-5);
    nn_tensor *r;
    CHECK_INT(nn_relu(y, &r), 0);
    int negatives = 0;
    for (int64_t i = 0; i < nn_tensor_numel(r); i++) {
        negatives += r->data[i] < 0;
        CHECK(r->data[i] == (y->data[i] > 0 ? y->data[i] : 0.0f));
    }
    CHECK_INT(negatives, 0);
    nn_tensor_free(r);
    nn_tensor_free(y);

    /* Linear without bias is an mm. */
    CHECK_INT(nn_linear(x, w, NULL, &y), 0);
    CHECK(linear_error(x, w, NULL, y, 0) < 1e-5);
    nn_tensor_free(y);

    /* Views share storage: t() of t() reads the original. */
    nn_tensor *wt, *wtt;
    CHECK_INT(nn_t(w, &wt), 0);
    CHECK_INT(wt->shape[0], 53);
    CHECK_INT(wt->shape[1], 29);
    CHECK_INT(wt->strides[0], 1);
    CHECK_INT(wt->strides[1], 53);
    CHECK(!nn_tensor_is_contiguous(wt));
    CHECK(wt->storage == w->storage);
    CHECK_INT(nn_t(wt, &wtt), 0);
    CHECK(nn_tensor_equal(wtt, w));
    /* addmm with a non-transposed contiguous b, and with a strided copy. */
    nn_tensor *wtc;
    CHECK_INT(nn_contiguous(wt, &wtc), 0);
    CHECK(nn_tensor_is_contiguous(wtc));
    CHECK(nn_tensor_equal(wtc, wt));
    nn_tensor *y1, *y2;
    CHECK_INT(nn_addmm(b, x, wt, &y1), 0);
    CHECK_INT(nn_addmm(b, x, wtc, &y2), 0);
    CHECK(linear_error(x, w, b, y1, 0) < 1e-5);
    CHECK(linear_error(x, w, b, y2, 0) < 1e-5);
    nn_tensor_free(y1);
    nn_tensor_free(y2);
    /* An as_strided view of every other column, then a product on it. */
    nn_tensor *half;
    CHECK_INT(nn_as_strided(x, 2, (int64_t[]){37, 26}, (int64_t[]){53, 2}, 1, &half), 0);
    CHECK(half->data[0] == x->data[1]);
    CHECK(nn_tensor_get(half, (int64_t[]){2, 3}) == x->data[2 * 53 + 1 + 6]);
    /* ... out of the storage is refused. */
    nn_tensor *oob = NULL;
    CHECK_INT(nn_as_strided(x, 2, (int64_t[]){37, 54}, (int64_t[]){53, 1}, 0, &oob), NN_EINVAL);
    CHECK(oob == NULL);
    nn_tensor_free(half);
    nn_tensor_free(wt);
    nn_tensor_free(wtt);
    nn_tensor_free(wtc);
    free_inputs(x, w, b);
}

TEST_CASE(shape_errors) {
    nn_tensor *x, *w, *b, *y, *wt;
    inputs(&x, &w, &b);
    CHECK_INT(nn_t(w, &wt), 0);
    CHECK_INT(nn_linear(wt, w, b, &y), NN_ESHAPE);
    nn_tensor *b_bad;
    CHECK_INT(nn_tensor_zeros(&b_bad, 1, (int64_t[]){5}), 0);
    for (int i = 0; i < 5; i++) CHECK(b_bad->data[i] == 0.0f);
    CHECK_INT(nn_linear(x, w, b_bad, &y), NN_ESHAPE);
    CHECK_INT(nn_addmm(b_bad, x, wt, &y), NN_ESHAPE);
    CHECK_INT(nn_mm(x, x, &y), NN_ESHAPE);
    CHECK_INT(nn_transpose(x, 0, 2, &y), NN_EINVAL);
    CHECK_INT(nn_t(b, &y), NN_EINVAL);
    CHECK_INT(nn_tensor_empty(&y, 5, (int64_t[]){1, 1, 1, 1, 1}), NN_EINVAL);
    CHECK_INT(nn_tensor_empty(&y, 1, (int64_t[]){-1}), NN_EINVAL);
    CHECK_STR(nn_strerror(NN_ESHAPE), "tensor shapes do not match the operation");
    nn_tensor_free(b_bad);
    nn_tensor_free(wt);
    free_inputs(x, w, b);
}

/* NaN goes through ReLU as in PyTorch. */
TEST_CASE(relu_passes_nan) {
    nn_tensor *nanin, *nanout;
    float vals[20];
    for (int i = 0; i < 20; i++) vals[i] = (float)(i - 10);
    vals[3] = NAN;
    vals[17] = NAN;
    CHECK_INT(nn_tensor_from_data(&nanin, 1, (int64_t[]){20}, vals), 0);
    CHECK_INT(nn_relu(nanin, &nanout), 0);
    CHECK(isnan(nanout->data[3]) && isnan(nanout->data[17]));
    CHECK(nanout->data[0] == 0.0f && nanout->data[19] == 9.0f);
    nn_tensor_free(nanin);
    nn_tensor_free(nanout);
}

/* Memory accounting: storage goes with the last view. */
TEST_CASE(memory_goes_with_the_last_view) {
    int64_t before = nn_memory_allocated();
    nn_tensor *big;
    CHECK_INT(nn_tensor_empty(&big, 2, (int64_t[]){100, 10}), 0);
    CHECK_INT(nn_memory_allocated() - before, 4000);
    nn_tensor *view;
    CHECK_INT(nn_t(big, &view), 0);
    nn_tensor_free(big);
    CHECK_INT(nn_memory_allocated() - before, 4000);
    nn_tensor_free(view);
    CHECK_INT(nn_memory_allocated() - before, 0);
    CHECK(nn_memory_peak() >= 4000);
}

/* Modules: the seed's model; seeded init is reproducible; intermediates freed. */
TEST_CASE(modules_seeded_and_reproducible) {
    nn_tensor *x, *w, *b;
    inputs(&x, &w, &b);
    nn_module *layers[3], *model;
    nn_manual_seed(7);
    CHECK_INT(nn_linear_new(&layers[0], 53, 40), 0);
    CHECK_INT(nn_relu_new(&layers[1]), 0);
    CHECK_INT(nn_linear_new(&layers[2], 40, 6), 0);
    CHECK_INT(nn_sequential_new(&model, layers, 3), 0);
    nn_module_eval(model);
    nn_tensor *w0 = nn_module_parameter(model, "0.weight");
    CHECK(w0 && w0->shape[0] == 40 && w0->shape[1] == 53);
    CHECK(nn_module_parameter(model, "2.bias") != NULL);
    CHECK(nn_module_parameter(model, "1.weight") == NULL);
    CHECK(nn_module_parameter(model, "3.weight") == NULL);
    float bound = 1.0f / sqrtf(53.0f);
    float lo = 1, hi = -1;
    for (int64_t i = 0; i < nn_tensor_numel(w0); i++) {
        lo = fminf(lo, w0->data[i]);
        hi = fmaxf(hi, w0->data[i]);
    }
    CHECK(lo >= -bound && hi < bound && lo < -0.8f * bound && hi > 0.8f * bound);
    int64_t live = nn_memory_allocated();
    nn_tensor *out1, *out2;
    CHECK_INT(nn_module_forward(model, x, &out1), 0);
    CHECK_INT(nn_memory_allocated() - live, 37 * 6 * 4); /* only the output stays */
    CHECK_INT(nn_module_forward(model, x, &out2), 0);
    CHECK(nn_tensor_equal(out1, out2)); /* bit-identical between runs */
    nn_tensor *h, *hr, *ref;
    CHECK_INT(nn_linear(x, w0, nn_module_parameter(model, "0.bias"), &h), 0);
    CHECK_INT(nn_relu(h, &hr), 0);
    CHECK_INT(nn_linear(hr, nn_module_parameter(model, "2.weight"), nn_module_parameter(model, "2.bias"), &ref), 0);
    CHECK(nn_tensor_equal(out1, ref));
    nn_tensor_free(h);
    nn_tensor_free(hr);
    nn_tensor_free(ref);
    nn_tensor_free(out1);
    nn_tensor_free(out2);
    /* The same seed gives the same model. */
    nn_manual_seed(7);
    nn_module *again;
    CHECK_INT(nn_linear_new(&again, 53, 40), 0);
    CHECK(nn_tensor_equal(nn_module_parameter(again, "weight"), w0));
    nn_module_free(again);
    nn_module_free(model);

    CHECK_INT(nn_sequential_new(NULL, NULL, 0), NN_EINVAL);
    nn_set_num_threads(0);
    CHECK_INT(nn_get_num_threads(), 1);
    free_inputs(x, w, b);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_nn"); }
