/* flops.c - FLOPs of an operator from its input shapes, for the operators
 * whose formula PyTorch's profiler knows (with_flops). */
#include "analysis/analysis.h"

#include <string.h>

static int64_t numel(const opprof_shapes *s, int i) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim[i]; d++) n *= s->dims[i][d];
    return n;
}

static const char *const FLOPS_OPS[] = {"aten::addmm", "aten::mm",   "aten::bmm", "aten::add", "aten::add_",
                                        "aten::mul",   "aten::mul_", "Gemm",      "FusedGemm", "MatMul"};

/* ONNX Runtime's Gemm as its profile records it: A [M, K] and, the weight being an
 * initializer that the profile leaves out, either B [K, N] or the bias [N]: M, K, N
 * (0 when the shapes do not say). */
static bool onnx_gemm(const opprof_shapes *s, int64_t *m, int64_t *k, int64_t *n) {
    if (s->n_inputs < 2 || s->ndim[0] != 2) return false;
    *m = s->dims[0][0], *k = s->dims[0][1];
    if (s->ndim[1] == 2 && s->dims[1][0] == *k)
        *n = s->dims[1][1];
    else if (s->ndim[1] == 1)
        *n = s->dims[1][0];
    else
        return false;
    return true;
}

bool opprof__counts_flops(const char *name) {
    for (size_t i = 0; i < sizeof FLOPS_OPS / sizeof *FLOPS_OPS; i++)
        if (strcmp(name, FLOPS_OPS[i]) == 0) return true;
    return false;
}

int64_t opprof_flops(const char *name, const opprof_shapes *s) {
    if (!name || !s) return 0;
    /* addmm(bias, a [M, K], b [K, N]); mm(a [M, K], b [K, N]); bmm(a [B, M, K], b [B, K, N]) */
    if (strcmp(name, "aten::addmm") == 0 && s->n_inputs >= 3 && s->ndim[1] == 2 && s->ndim[2] == 2)
        return 2 * s->dims[1][0] * s->dims[1][1] * s->dims[2][1];
    if (strcmp(name, "aten::mm") == 0 && s->n_inputs >= 2 && s->ndim[0] == 2 && s->ndim[1] == 2)
        return 2 * s->dims[0][0] * s->dims[0][1] * s->dims[1][1];
    if (strcmp(name, "aten::bmm") == 0 && s->n_inputs >= 2 && s->ndim[0] == 3 && s->ndim[1] == 3)
        return 2 * s->dims[0][0] * s->dims[0][1] * s->dims[0][2] * s->dims[1][2];
    if ((strcmp(name, "aten::add") == 0 || strcmp(name, "aten::add_") == 0 || strcmp(name, "aten::mul") == 0 ||
         strcmp(name, "aten::mul_") == 0) &&
        s->n_inputs >= 1)
        return numel(s, 0);
    int64_t m, k, n;
    if ((!strcmp(name, "Gemm") || !strcmp(name, "FusedGemm") || !strcmp(name, "MatMul")) && onnx_gemm(s, &m, &k, &n))
        return 2 * m * k * n;
    return 0;
}

/* ---- bytes: the compulsory traffic of a call ----
 * Leaves only, as FLOPs are: aten::relu is aten::clamp_min inside (PyTorch's
 * CPU dispatch), so it has no model of its own, or its traffic would be
 * counted twice in the time above roof. */

static const char *const ELEMENTWISE_OPS[] = {
    "aten::add",     "aten::add_", "aten::mul",  "aten::mul_",  "aten::sub",
    "aten::sub_",    "aten::div",  "aten::div_", "aten::clamp", "aten::clamp_min",
    "aten::sigmoid", "aten::tanh", "aten::gelu", "aten::copy_", "Relu",
    "Add",           "Mul",        "Sub",        "Div",         "Sigmoid",
    "Tanh",          "Gelu",       "Clip"}; /* ONNX Runtime's */

static int64_t element_size(const char *dtype) {
    if (!dtype[0] || strstr(dtype, "float") || !strcmp(dtype, "int")) return 4;
    if (strstr(dtype, "double") || strstr(dtype, "long")) return 8;
    if (strstr(dtype, "Half") || strstr(dtype, "BFloat16") || strstr(dtype, "short")) return 2;
    if (strstr(dtype, "bool") || strstr(dtype, "char")) return 1;
    return 4;
}

/* The tensor inputs' bytes (an input without dimensions and dtype is a scalar). */
static int64_t inputs_bytes(const opprof_shapes *s) {
    int64_t total = 0;
    for (int i = 0; i < s->n_inputs; i++)
        if (s->ndim[i] > 0) total += numel(s, i) * element_size(s->dtype[i]);
    return total;
}

bool opprof__counts_bytes(const char *name) {
    if (!strcmp(name, "aten::addmm") || !strcmp(name, "aten::mm") || !strcmp(name, "aten::bmm") ||
        !strcmp(name, "Gemm") || !strcmp(name, "FusedGemm") || !strcmp(name, "MatMul"))
        return true;
    for (size_t i = 0; i < sizeof ELEMENTWISE_OPS / sizeof *ELEMENTWISE_OPS; i++)
        if (!strcmp(name, ELEMENTWISE_OPS[i])) return true;
    return false;
}

int64_t opprof_bytes(const char *name, const opprof_shapes *s) {
    if (!name || !s || s->n_inputs < 1 || !opprof__counts_bytes(name)) return 0;
    int64_t out = 0, m, k, n;
    if ((!strcmp(name, "Gemm") || !strcmp(name, "FusedGemm") || !strcmp(name, "MatMul")) && onnx_gemm(s, &m, &k, &n)) {
        int64_t size = element_size(s->dtype[0]);
        int64_t weight = s->ndim[1] == 2 ? 0 : k * n * size; /* the initializer the profile leaves out */
        return inputs_bytes(s) + weight + m * n * size;
    }
    if (!strcmp(name, "aten::addmm") && s->n_inputs >= 3 && s->ndim[1] == 2 && s->ndim[2] == 2)
        out = s->dims[1][0] * s->dims[2][1] * element_size(s->dtype[1]);
    else if (!strcmp(name, "aten::mm") && s->n_inputs >= 2 && s->ndim[0] == 2 && s->ndim[1] == 2)
        out = s->dims[0][0] * s->dims[1][1] * element_size(s->dtype[0]);
    else if (!strcmp(name, "aten::bmm") && s->n_inputs >= 2 && s->ndim[0] == 3 && s->ndim[1] == 3)
        out = s->dims[0][0] * s->dims[0][1] * s->dims[1][2] * element_size(s->dtype[0]);
    else if (strcmp(name, "aten::addmm") && strcmp(name, "aten::mm") && strcmp(name, "aten::bmm") &&
             strcmp(name, "Gemm") && strcmp(name, "FusedGemm") && strcmp(name, "MatMul") && s->ndim[0] > 0)
        out = numel(s, 0) * element_size(s->dtype[0]);
    else
        return 0; /* a product whose shapes are not its own */
    return inputs_bytes(s) + out;
}
