/* tensor.c - tensors: creation, views, comparison. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int nn__check_shape(int ndim, const int64_t *shape) {
    if (ndim < 0 || ndim > NN_MAX_DIMS || (ndim && !shape)) return NN_EINVAL;
    int64_t numel = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) return NN_EINVAL;
        if (shape[i] && numel > INT64_MAX / 4 / shape[i]) return NN_ENOMEM;
        numel *= shape[i];
    }
    return 0;
}

int nn__tensor_new(nn_tensor **out, int ndim, const int64_t *shape) {
    int rc = nn__check_shape(ndim, shape);
    if (rc) return rc;
    nn_tensor *t = nn__calloc(1, sizeof *t);
    if (!t) return NN_ENOMEM;
    t->ndim = ndim;
    int64_t stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        t->shape[i] = shape[i];
        t->strides[i] = stride;
        stride *= shape[i];
    }
    t->storage = nn__storage_new((size_t)stride * sizeof(float));
    if (!t->storage) {
        nn__free(t);
        return NN_ENOMEM;
    }
    t->data = t->storage->data;
    *out = t;
    return 0;
}

int nn__tensor_view(const nn_tensor *src, nn_tensor **out) {
    nn_tensor *t = nn__alloc(sizeof *t);
    if (!t) return NN_ENOMEM;
    *t = *src;
    nn__storage_retain(t->storage);
    *out = t;
    return 0;
}

void nn_tensor_free(nn_tensor *t) {
    if (!t) return;
    nn__storage_release(t->storage);
    nn__free(t);
}

/* What a factory writes into its new tensor's n values. */
typedef struct fill {
    enum { FILL_NONE, FILL_ZEROS, FILL_NORMAL, FILL_UNIFORM } how;
    float low, high; /* FILL_UNIFORM */
} fill;

/* Box-Muller: two normals from two uniforms in (0, 1]. */
static void fill_normal(float *d, int64_t n) {
    for (int64_t i = 0; i < n; i += 2) {
        double u1 = 1.0 - nn__rng_uniform(), u2 = nn__rng_uniform();
        double r = sqrt(-2.0 * log(u1)), theta = 2.0 * 3.14159265358979323846 * u2;
        d[i] = (float)(r * cos(theta));
        if (i + 1 < n) d[i + 1] = (float)(r * sin(theta));
    }
}

/* A new tensor of that shape, filled; on any error, *out is NULL. The
 * caller's operator range encloses it. */
static int new_filled(nn_tensor **out, int ndim, const int64_t *shape, fill f) {
    *out = NULL;
    int rc = nn__tensor_new(out, ndim, shape);
    if (rc) return rc;
    float *d = (*out)->data;
    int64_t n = nn_tensor_numel(*out);
    switch (f.how) {
    case FILL_NONE: break;
    case FILL_ZEROS: memset(d, 0, (size_t)n * sizeof(float)); break;
    case FILL_NORMAL: fill_normal(d, n); break;
    case FILL_UNIFORM:
        for (int64_t i = 0; i < n; i++) d[i] = (float)(f.low + (f.high - f.low) * nn__rng_uniform());
        break;
    }
    return 0;
}

int nn_tensor_empty(nn_tensor **out, int ndim, const int64_t *shape) {
    if (!out) return NN_EINVAL;
    OPPROF_OP_SCOPE("aten::empty");
    return new_filled(out, ndim, shape, (fill){.how = FILL_NONE});
}

int nn_tensor_zeros(nn_tensor **out, int ndim, const int64_t *shape) {
    if (!out) return NN_EINVAL;
    OPPROF_OP_SCOPE("aten::zeros");
    return new_filled(out, ndim, shape, (fill){.how = FILL_ZEROS});
}

int nn_tensor_randn(nn_tensor **out, int ndim, const int64_t *shape) {
    if (!out) return NN_EINVAL;
    OPPROF_OP_SCOPE("aten::randn");
    return new_filled(out, ndim, shape, (fill){.how = FILL_NORMAL});
}

int nn_tensor_uniform(nn_tensor **out, int ndim, const int64_t *shape, float low, float high) {
    if (!out) return NN_EINVAL;
    *out = NULL;
    if (!(low <= high)) return NN_EINVAL;
    OPPROF_OP_SCOPE("aten::uniform_");
    return new_filled(out, ndim, shape, (fill){.how = FILL_UNIFORM, .low = low, .high = high});
}

/* The copy is outside the range, as before: aten::empty, then the data. */
int nn_tensor_from_data(nn_tensor **out, int ndim, const int64_t *shape, const float *data) {
    if (!out) return NN_EINVAL;
    *out = NULL;
    if (!data) return NN_EINVAL;
    int rc;
    {
        OPPROF_OP_SCOPE("aten::empty");
        rc = new_filled(out, ndim, shape, (fill){.how = FILL_NONE});
    }
    if (!rc) memcpy((*out)->data, data, (size_t)nn_tensor_numel(*out) * sizeof(float));
    return rc;
}

int64_t nn_tensor_numel(const nn_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

bool nn_tensor_is_contiguous(const nn_tensor *t) {
    int64_t stride = 1;
    for (int i = t->ndim - 1; i >= 0; i--) {
        if (t->shape[i] != 1 && t->strides[i] != stride) return false;
        stride *= t->shape[i];
    }
    return true;
}

float nn_tensor_get(const nn_tensor *t, const int64_t *index) {
    int64_t off = 0;
    for (int i = 0; i < t->ndim; i++) off += index[i] * t->strides[i];
    return t->data[off];
}

bool nn_tensor_equal(const nn_tensor *a, const nn_tensor *b) {
    if (!a || !b || a->ndim != b->ndim) return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return false;
    int64_t n = nn_tensor_numel(a);
    int64_t idx[NN_MAX_DIMS] = {0};
    for (int64_t k = 0; k < n; k++) {
        float x = nn_tensor_get(a, idx), y = nn_tensor_get(b, idx);
        if (memcmp(&x, &y, sizeof x) != 0) return false;
        for (int d = a->ndim - 1; d >= 0; d--) {
            if (++idx[d] < a->shape[d]) break;
            idx[d] = 0;
        }
    }
    return true;
}
