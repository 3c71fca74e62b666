/* ops.c - operators, each an opprof operator event named as PyTorch names it.
 * An operator allocates its output inside its own event, so the bytes are
 * attributed to it (as PyTorch's structured kernels do). */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* record_shapes: the operator's inputs as PyTorch lists them; NULL stands
 * for a non-tensor argument (a scalar, a dim), which prints as []. */
void nn__record_inputs(int n, const nn_tensor *const *inputs) {
    if (!opprof_recording_shapes()) return;
    opprof_input in[OPPROF_MAX_INPUTS];
    if (n > OPPROF_MAX_INPUTS) n = OPPROF_MAX_INPUTS;
    for (int i = 0; i < n; i++)
        in[i] = inputs[i] ? (opprof_input){inputs[i]->ndim, inputs[i]->shape, "float"} : (opprof_input){0, NULL, NULL};
    opprof_set_inputs(n, in);
}

int nn_as_strided(const nn_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                  nn_tensor **out) {
    if (out) *out = NULL; /* on any error, *out is NULL */
    if (!t || !out || !strides || nn__check_shape(ndim, shape)) return NN_EINVAL;
    *out = NULL; /* on any error, *out is NULL */
    /* The view must stay inside the storage. */
    int64_t lo = (int64_t)(t->data - t->storage->data) + offset, hi = lo;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) {
            hi = lo - 1;
            break;
        }
        if (strides[i] < 0) return NN_EINVAL;
        hi += (shape[i] - 1) * strides[i];
    }
    if (lo < 0 || hi >= (int64_t)(t->storage->bytes / sizeof(float))) return NN_EINVAL;
    int rc = NN_EINVAL;
    {
        OPPROF_OP_SCOPE("aten::as_strided");
        nn__record_inputs(4, (const nn_tensor *[]){t, NULL, NULL, NULL});
        rc = nn__tensor_view(t, out);
        if (!rc) {
            nn_tensor *v = *out;
            v->ndim = ndim;
            v->data = t->data + offset;
            for (int i = 0; i < ndim; i++) {
                v->shape[i] = shape[i];
                v->strides[i] = strides[i];
            }
        }
    }
    return rc;
}

int nn_transpose(const nn_tensor *t, int d0, int d1, nn_tensor **out) {
    if (!t || !out || d0 < 0 || d1 < 0 || d0 >= t->ndim || d1 >= t->ndim) return NN_EINVAL;
    *out = NULL; /* on any error, *out is NULL */
    int rc = NN_EINVAL;
    {
        OPPROF_OP_SCOPE("aten::transpose");
        nn__record_inputs(3, (const nn_tensor *[]){t, NULL, NULL});
        int64_t shape[NN_MAX_DIMS], strides[NN_MAX_DIMS];
        memcpy(shape, t->shape, sizeof shape);
        memcpy(strides, t->strides, sizeof strides);
        shape[d0] = t->shape[d1];
        shape[d1] = t->shape[d0];
        strides[d0] = t->strides[d1];
        strides[d1] = t->strides[d0];
        rc = nn_as_strided(t, t->ndim, shape, strides, 0, out);
    }
    return rc;
}

int nn_t(const nn_tensor *t, nn_tensor **out) {
    if (!t || !out || t->ndim != 2) return NN_EINVAL;
    *out = NULL; /* on any error, *out is NULL */
    int rc = NN_EINVAL;
    {
        OPPROF_OP_SCOPE("aten::t");
        nn__record_inputs(1, (const nn_tensor *[]){t});
        rc = nn_transpose(t, 0, 1, out);
    }
    return rc;
}

/* Copy a strided 2-D tensor into a contiguous buffer. */
static void copy_2d(const nn_tensor *t, float *dst) {
    for (int64_t i = 0; i < t->shape[0]; i++)
        for (int64_t j = 0; j < t->shape[1]; j++)
            dst[i * t->shape[1] + j] = t->data[i * t->strides[0] + j * t->strides[1]];
}

int nn_contiguous(const nn_tensor *x, nn_tensor **out) {
    if (!x || !out) return NN_EINVAL;
    *out = NULL; /* on any error, *out is NULL */
    int rc = NN_EINVAL;
    {
        OPPROF_OP_SCOPE("aten::clone");
        nn__record_inputs(1, (const nn_tensor *[]){x});
        rc = nn__tensor_new(out, x->ndim, x->shape);
        if (!rc) {
            int64_t n = nn_tensor_numel(x), idx[NN_MAX_DIMS] = {0};
            for (int64_t k = 0; k < n; k++) {
                (*out)->data[k] = nn_tensor_get(x, idx);
                for (int d = x->ndim - 1; d >= 0; d--) {
                    if (++idx[d] < x->shape[d]) break;
                    idx[d] = 0;
                }
            }
        }
    }
    return rc;
}

/* out (contiguous [M,N]) = a @ b (+ out when beta is 1) (+ bias), for any
 * strides of a and b; b_panels, when given, holds b in the kernels' panels
 * (nn__pack_weight). Temporary copies (not tensors, not reported) only when a
 * layout is not one that the GEMM takes directly. */
static int matmul_into(const nn_tensor *a, const nn_tensor *b, const float *b_panels, const float *bias, float beta,
                       nn_tensor *out) {
    int m = (int)a->shape[0], k = (int)a->shape[1], n = (int)b->shape[1];
    const float *pa = a->data, *pb = b->data;
    float *copy_a = NULL, *copy_b = NULL;
    int lda, ldb, trans_b;
    if (a->strides[1] == 1 && a->strides[0] >= k) {
        lda = (int)a->strides[0];
    } else {
        if (!(copy_a = nn__alloc((size_t)m * k * sizeof(float)))) return NN_ENOMEM;
        copy_2d(a, copy_a);
        pa = copy_a;
        lda = k;
    }
    if (b->strides[1] == 1 && b->strides[0] >= n) {
        ldb = (int)b->strides[0];
        trans_b = 0;
    } else if (b->strides[0] == 1 && b->strides[1] >= k) {
        ldb = (int)b->strides[1]; /* b is the transpose of a row-major [N, K] */
        trans_b = 1;
    } else {
        if (!(copy_b = nn__alloc((size_t)k * n * sizeof(float)))) {
            nn__free(copy_a);
            return NN_ENOMEM;
        }
        copy_2d(b, copy_b);
        pb = copy_b;
        ldb = n;
        trans_b = 0;
    }
    int rc = nn__sgemm(m, n, k, pa, lda, pb, ldb, trans_b, b_panels, bias, beta, out->data, n);
    nn__free(copy_a);
    nn__free(copy_b);
    return rc;
}

static int check_matmul(const nn_tensor *a, const nn_tensor *b) {
    if (!a || !b || a->ndim != 2 || b->ndim != 2) return NN_EINVAL;
    if (a->shape[1] != b->shape[0]) return NN_ESHAPE;
    if (a->shape[0] > INT32_MAX || a->shape[1] > INT32_MAX || b->shape[1] > INT32_MAX) return NN_EINVAL;
    return 0;
}

/* aten::addmm; `b_panels`, when given, holds b in the kernels' panels. */
static int addmm(const nn_tensor *bias, const nn_tensor *a, const nn_tensor *b, const float *b_panels,
                 nn_tensor **out) {
    if (!out) return NN_EINVAL;
    *out = NULL; /* on any error, *out is NULL */
    int rc = check_matmul(a, b);
    if (rc) return rc;
    int64_t m = a->shape[0], n = b->shape[1];
    if (!bias) return NN_EINVAL;
    bool row_bias = bias->ndim == 1 && bias->shape[0] == n;
    bool full_bias = bias->ndim == 2 && bias->shape[0] == m && bias->shape[1] == n;
    if (!row_bias && !full_bias) return NN_ESHAPE;
    {
        OPPROF_OP_SCOPE("aten::addmm");
        int64_t slowed = nn__slowdown_start("aten::addmm");
        nn__record_inputs(5, (const nn_tensor *[]){bias, a, b, NULL, NULL}); /* beta, alpha */
        rc = nn__tensor_new(out, 2, (int64_t[]){m, n});
        if (rc) return rc;
        /* A contiguous row bias goes to the GEMM, which adds it to each sum;
         * any other bias fills the output first and the GEMM adds onto it. */
        const float *row = row_bias && bias->strides[0] == 1 ? bias->data : NULL;
        if (!row) {
            float *c = (*out)->data;
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++)
                    c[i * n + j] = row_bias ? bias->data[j * bias->strides[0]]
                                            : bias->data[i * bias->strides[0] + j * bias->strides[1]];
        }
        rc = matmul_into(a, b, b_panels, row, row ? 0.0f : 1.0f, *out);
        if (rc) {
            nn_tensor_free(*out);
            *out = NULL;
        }
        nn__slowdown_finish(slowed);
    }
    return rc;
}

int nn_addmm(const nn_tensor *bias, const nn_tensor *a, const nn_tensor *b, nn_tensor **out) {
    return addmm(bias, a, b, NULL, out);
}

/* aten::mm; `b_panels` as in addmm. */
static int mm(const nn_tensor *a, const nn_tensor *b, const float *b_panels, nn_tensor **out) {
    if (!out) return NN_EINVAL;
    *out = NULL; /* on any error, *out is NULL */
    *out = NULL; /* on any error, *out is NULL */
    int rc = check_matmul(a, b);
    if (rc) return rc;
    {
        OPPROF_OP_SCOPE("aten::mm");
        nn__record_inputs(2, (const nn_tensor *[]){a, b});
        rc = nn__tensor_new(out, 2, (int64_t[]){a->shape[0], b->shape[1]});
        if (rc) return rc;
        rc = matmul_into(a, b, b_panels, NULL, 0.0f, *out);
        if (rc) {
            nn_tensor_free(*out);
            *out = NULL;
        }
    }
    return rc;
}

int nn_mm(const nn_tensor *a, const nn_tensor *b, nn_tensor **out) { return mm(a, b, NULL, out); }

int nn__linear(const nn_tensor *x, const nn_tensor *w, const nn_tensor *w_panels, const nn_tensor *b, nn_tensor **out) {
    if (!x || !w || !out || x->ndim != 2 || w->ndim != 2) return NN_EINVAL;
    *out = NULL; /* on any error, *out is NULL */
    if (x->shape[1] != w->shape[1]) return NN_ESHAPE;
    if (b && (b->ndim != 1 || b->shape[0] != w->shape[0])) return NN_ESHAPE;
    if (w_panels && (w_panels->ndim != 1 || w->shape[0] > INT32_MAX || w->shape[1] > INT32_MAX ||
                     (size_t)w_panels->shape[0] != nn__panels_size((int)w->shape[1], (int)w->shape[0])))
        return NN_EINVAL;
    int rc = NN_EINVAL;
    {
        OPPROF_OP_SCOPE("aten::linear");
        nn__record_inputs(3, (const nn_tensor *[]){x, w, b});
        nn_tensor *wt;
        rc = nn_t(w, &wt);
        if (rc) return rc;
        const float *panels = w_panels ? w_panels->data : NULL;
        rc = b ? addmm(b, x, wt, panels, out) : mm(x, wt, panels, out);
        nn_tensor_free(wt);
    }
    return rc;
}

int nn_linear(const nn_tensor *x, const nn_tensor *w, const nn_tensor *b, nn_tensor **out) {
    return nn__linear(x, w, NULL, b, out);
}

int nn__pack_weight(const nn_tensor *w, nn_tensor **out) {
    if (!w || w->ndim != 2 || w->shape[0] > INT32_MAX || w->shape[1] > INT32_MAX) return NN_EINVAL;
    *out = NULL; /* on any error, *out is NULL */
    int n = (int)w->shape[0], k = (int)w->shape[1];
    int rc = nn__tensor_new(out, 1, (int64_t[]){(int64_t)nn__panels_size(k, n)});
    if (rc) return rc;
    /* the product reads B = W^T: B[p, j] = W[j, p] */
    nn__pack_panels(w->data, (size_t)w->strides[1], (size_t)w->strides[0], k, n, (*out)->data);
    return 0;
}

/* max(x, lo) with NaN passing through, as in PyTorch: MAXPS returns its
 * second operand when either is NaN, so x goes second. */
#if defined(__x86_64__)
__attribute__((target("avx512f"))) static void clamp_min_avx512(const float *restrict x, float *restrict y, int64_t n,
                                                                float lo) {
    const __m512 vlo = _mm512_set1_ps(lo);
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        _mm512_storeu_ps(y + i, _mm512_max_ps(vlo, _mm512_loadu_ps(x + i)));
        _mm512_storeu_ps(y + i + 16, _mm512_max_ps(vlo, _mm512_loadu_ps(x + i + 16)));
        _mm512_storeu_ps(y + i + 32, _mm512_max_ps(vlo, _mm512_loadu_ps(x + i + 32)));
        _mm512_storeu_ps(y + i + 48, _mm512_max_ps(vlo, _mm512_loadu_ps(x + i + 48)));
    }
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_max_ps(vlo, _mm512_loadu_ps(x + i)));
    if (i < n) {
        __mmask16 tail = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, tail, _mm512_max_ps(vlo, _mm512_maskz_loadu_ps(tail, x + i)));
    }
}

__attribute__((target("avx2"))) static void clamp_min_avx2(const float *restrict x, float *restrict y, int64_t n,
                                                           float lo) {
    const __m256 vlo = _mm256_set1_ps(lo);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_max_ps(vlo, _mm256_loadu_ps(x + i)));
    for (; i < n; i++) y[i] = x[i] < lo ? lo : x[i];
}
#endif

static void clamp_min_kernel(const float *restrict x, float *restrict y, int64_t n, float lo) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) {
        clamp_min_avx512(x, y, n, lo);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        clamp_min_avx2(x, y, n, lo);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) y[i] = x[i] < lo ? lo : x[i];
}

int nn_clamp_min(const nn_tensor *x, float min, nn_tensor **out) {
    if (!x || !out) return NN_EINVAL;
    *out = NULL; /* on any error, *out is NULL */
    int rc = NN_EINVAL;
    {
        OPPROF_OP_SCOPE("aten::clamp_min");
        int64_t slowed = nn__slowdown_start("aten::clamp_min");
        nn__record_inputs(2, (const nn_tensor *[]){x, NULL});
        rc = nn__tensor_new(out, x->ndim, x->shape);
        if (rc) return rc;
        if (nn_tensor_is_contiguous(x)) {
            clamp_min_kernel(x->data, (*out)->data, nn_tensor_numel(x), min);
        } else {
            int64_t n = nn_tensor_numel(x), idx[NN_MAX_DIMS] = {0};
            for (int64_t k = 0; k < n; k++) {
                float v = nn_tensor_get(x, idx);
                (*out)->data[k] = v < min ? min : v;
                for (int d = x->ndim - 1; d >= 0; d--) {
                    if (++idx[d] < x->shape[d]) break;
                    idx[d] = 0;
                }
            }
        }
        nn__slowdown_finish(slowed);
    }
    return rc;
}

int nn_relu(const nn_tensor *x, nn_tensor **out) {
    if (!x || !out) return NN_EINVAL;
    *out = NULL; /* on any error, *out is NULL */
    int rc = NN_EINVAL;
    {
        OPPROF_OP_SCOPE("aten::relu");
        nn__record_inputs(1, (const nn_tensor *[]){x});
        rc = nn_clamp_min(x, 0.0f, out);
    }
    return rc;
}
