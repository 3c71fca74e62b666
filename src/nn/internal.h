/* internal.h - nn's private declarations. */
#ifndef NN_INTERNAL_H
#define NN_INTERNAL_H

#include <nn/nn.h>
#include <opprof/opprof.h>

#define NN__HIDDEN __attribute__((visibility("hidden")))

struct nn_storage {
    int refcount;    /* atomic */
    size_t bytes;    /* as asked */
    size_t capacity; /* as allocated (64-byte multiple) */
    float *data;
};

/* alloc.c: every allocation of nn goes through the hook (nn_set_allocator). */
NN__HIDDEN void *nn__alloc(size_t size);
NN__HIDDEN void *nn__calloc(size_t count, size_t size);
NN__HIDDEN void nn__free(void *ptr); /* the block keeps its size; NULL: nothing */
/* every tensor buffer goes through here and is reported to opprof. */
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

/* gemm.c: C[M,N] = A[M,K] * B (+ C when beta is 1) (+ bias[N] on every
 * row); row-major; B is [K,N] with leading dimension ldb, or [N,K] when
 * trans_b; b_panels, when given, holds B packed by nn__pack_panels and is
 * what nn's kernels read (libxsmm and OpenBLAS read b). NN_ENOMEM when a
 * copy cannot be made (C untouched). */
NN__HIDDEN int nn__sgemm(int m, int n, int k, const float *a, int lda, const float *b, int ldb, int trans_b,
                         const float *b_panels, const float *bias, float beta, float *c, int ldc);
NN__HIDDEN void nn__gemm_set_threads(int n);
/* B in panels: NN__PANEL columns each, a contiguous [K, NN__PANEL] block (the
 * last padded with zeros); its size in floats, and the packing of
 * B[p, j] = src[p*step_p + j*step_j]. */
enum { NN__PANEL = 32 }; /* 2 AVX-512 or 4 AVX2 vectors */
static inline size_t nn__panels_size(int k, int n) {
    return (size_t)(n + NN__PANEL - 1) / NN__PANEL * NN__PANEL * (size_t)k;
}
NN__HIDDEN void nn__pack_panels(const float *src, size_t step_p, size_t step_j, int k, int n, float *panels);

/* threads.c: run fn(ctx, task, n_tasks) for every task in [0, n_tasks), the
 * caller taking part; returns when all are done. */
NN__HIDDEN void nn__parallel_for(int n_tasks, void (*fn)(void *ctx, int task, int n_tasks), void *ctx);

/* ops.c: aten::linear with the same events, but nn's kernels read
 * `w_panels` (nn__pack_weight) when it is given. */
NN__HIDDEN int nn__linear(const nn_tensor *x, const nn_tensor *w, const nn_tensor *w_panels, const nn_tensor *b,
                          nn_tensor **out);
/* record_shapes: describe the current operator's inputs (NULL: a scalar). */
NN__HIDDEN void nn__record_inputs(int n, const nn_tensor *const *inputs);
/* nn_debug_slow_down: a start (0 when `op` is not slowed), and at the end
 * of the operator's work the extra busy time. */
NN__HIDDEN int64_t nn__slowdown_start(const char *op);
NN__HIDDEN void nn__slowdown_finish(int64_t started);
/* W^T ([out, in] weights) in the kernels' panels, as a 1-D tensor of
 * nn__panels_size(in, out) floats, made outside any operator. */
NN__HIDDEN int nn__pack_weight(const nn_tensor *w, nn_tensor **out);

/* rng.c */
NN__HIDDEN uint64_t nn__rng_next(void);
NN__HIDDEN double nn__rng_uniform(void); /* [0, 1) */

#endif
