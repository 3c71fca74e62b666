/* ggml_target.c - a ggml program that knows nothing of opprof, for
 * `opprof record --ggml` (test_ggml): N computes of softmax(W x + b) on a pool
 * of 2 threads, then a checksum of the output, so that a test sees it run as
 * without opprof.
 *   ggml_target N */
#include <ggml-cpu.h>
#include <ggml.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3;
    struct ggml_init_params ip = {16u << 20, NULL, false};
    struct ggml_context *ctx = ggml_init(ip);
    struct ggml_tensor *w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 128, 64),
                       *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 128, 16);
    struct ggml_tensor *b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 16);
    for (int64_t i = 0; i < ggml_nelements(w); i++) ((float *)w->data)[i] = (float)(i % 13) / 13.0f - 0.5f;
    for (int64_t i = 0; i < ggml_nelements(x); i++) ((float *)x->data)[i] = (float)(i % 7) / 7.0f;
    for (int64_t i = 0; i < ggml_nelements(b); i++) ((float *)b->data)[i] = 0.01f * (float)(i % 5);
    struct ggml_tensor *y = ggml_soft_max(ctx, ggml_add(ctx, ggml_mul_mat(ctx, w, x), b));
    struct ggml_cgraph *graph = ggml_new_graph(ctx);
    ggml_build_forward_expand(graph, y);
    struct ggml_cplan plan = ggml_graph_plan(graph, 2, NULL);
    plan.work_data = malloc(plan.work_size ? plan.work_size : 1);
    for (int i = 0; i < n; i++) ggml_graph_compute(graph, &plan);
    double sum = 0;
    for (int64_t i = 0; i < ggml_nelements(y); i++) sum += ((float *)y->data)[i] * (double)(i % 11);
    printf("ggml_target: %d computes, checksum %.9f\n", n, sum);
    free(plan.work_data);
    ggml_free(ctx);
    return 0;
}
