/* internal.h - nn's private declarations. */
#ifndef NN_INTERNAL_H
#define NN_INTERNAL_H

#include <nn/nn.h>
#include <opprof/opprof.h>

#define NN__HIDDEN __attribute__((visibility("hidden")))

struct nn_storage {
    int refcount; /* atomic */
    size_t bytes;
    float *data;
};

/* alloc.c: every tensor buffer goes through here and is reported to opprof. */
NN__HIDDEN nn_storage *nn__storage_new(size_t bytes);
NN__HIDDEN void nn__storage_retain(nn_storage *s);
NN__HIDDEN void nn__storage_release(nn_storage *s);

/* tensor.c */
/* A contiguous tensor with fresh storage, allocated inside the calling
 * operator's event (no aten::empty of its own). */
NN__HIDDEN int nn__tensor_new(nn_tensor **out, int ndim, const int64_t *shape);
/* A view sharing t's storage. */
NN__HIDDEN int nn__tensor_view(const nn_tensor *t, nn_tensor **out);
NN__HIDDEN int nn__check_shape(int ndim, const int64_t *shape);

/* gemm.c: C[M,N] = A[M,K] * op(B) + beta * C, row-major; B is [K,N] with
 * leading dimension ldb, or [N,K] when trans_b. */
NN__HIDDEN void nn__sgemm(int m, int n, int k, const float *a, int lda, const float *b, int ldb,
                          int trans_b, float beta, float *c, int ldc);
NN__HIDDEN void nn__gemm_set_threads(int n);

/* rng.c */
NN__HIDDEN uint64_t nn__rng_next(void);
NN__HIDDEN double nn__rng_uniform(void); /* [0, 1) */

#endif
