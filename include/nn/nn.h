/*
 * nn.h - a small float32 tensor runtime for CPU inference, instrumented for
 * opprof: every operator is an operator event named as PyTorch names it
 * (aten::linear > aten::t > aten::transpose > aten::as_strided, aten::addmm,
 * aten::relu > aten::clamp_min, aten::empty), and every tensor buffer is
 * reported to the profiler when it is allocated and freed.
 *
 *   nn_manual_seed(7);
 *   nn_module *model;
 *   nn_module *layers[3];
 *   nn_linear_new(&layers[0], 256, 512);
 *   nn_relu_new(&layers[1]);
 *   nn_linear_new(&layers[2], 512, 64);
 *   nn_sequential_new(&model, layers, 3);       // takes the layers
 *   nn_tensor *x, *y;
 *   nn_tensor_randn(&x, 2, (int64_t[]){128, 256});
 *   nn_module_forward(model, x, &y);             // y: 128 x 64, caller frees
 *   nn_tensor_free(y); nn_tensor_free(x); nn_module_free(model);
 *
 * Errors: 0 or a negative NN_E... code; nn_strerror() names it.
 * Ownership: a function that fills `nn_tensor **out` gives the caller a tensor
 * to release with nn_tensor_free(); on an error *out is NULL. Views (aten::t, transpose, as_strided)
 * share their base's storage, which lives until its last tensor is freed.
 * Threads: the functions may be called from several threads on different
 * tensors; the random generator and the thread count are process-wide.
 */
#ifndef NN_NN_H
#define NN_NN_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <opprof/opprof.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(NN_BUILDING) && defined(__GNUC__)
#define NN_API __attribute__((visibility("default")))
#else
#define NN_API
#endif

/* ---- errors ---- */
#define NN_ERRNO_MAP(XX)                                          \
    XX(EINVAL, -EINVAL, "invalid argument")                       \
    XX(ENOMEM, -ENOMEM, "out of memory")                          \
    XX(ENOENT, -ENOENT, "no such file or directory")              \
    XX(ENOTSUP, -ENOTSUP, "not supported on this machine")        \
    XX(ESHAPE, -6001, "tensor shapes do not match the operation") \
    XX(EFORMAT, -6002, "malformed tensor file")                   \
    XX(EMISSING, -6003, "tensor not found in the file")           \
    XX(EDTYPE, -6004, "unsupported tensor dtype")                 \
    XX(EMPI, -6005, "an MPI call failed")

typedef enum nn_error {
#define NN__ERR_ENUM(name, value, text) NN_##name = (value),
    NN_ERRNO_MAP(NN__ERR_ENUM)
#undef NN__ERR_ENUM
} nn_error;

/** A sentence for an error code (static); the system's text for other -errno. */
NN_API const char *nn_strerror(int code);

/* ---- tensors ---- */
#define NN_MAX_DIMS 4

typedef struct nn_storage nn_storage; /* reference-counted buffer */

/** A float32 tensor: a view of a storage. Read its fields freely; change them
 *  only through nn functions. Row-major contiguous unless a view says other. */
typedef struct nn_tensor {
    float *data; /* first element of this view */
    int64_t shape[NN_MAX_DIMS];
    int64_t strides[NN_MAX_DIMS]; /* in elements */
    int ndim;
    nn_storage *storage;
} nn_tensor;

/** A new uninitialised contiguous tensor (operator aten::empty). */
NN_API int nn_tensor_empty(nn_tensor **out, int ndim, const int64_t *shape);
/** A new tensor of zeros (aten::zeros). */
NN_API int nn_tensor_zeros(nn_tensor **out, int ndim, const int64_t *shape);
/** A new tensor of standard normal values from the process generator (aten::randn). */
NN_API int nn_tensor_randn(nn_tensor **out, int ndim, const int64_t *shape);
/** A new tensor of values uniform in [low, high) (aten::uniform_). */
NN_API int nn_tensor_uniform(nn_tensor **out, int ndim, const int64_t *shape, float low, float high);
/** A new contiguous tensor holding a copy of `data` (numel floats). */
NN_API int nn_tensor_from_data(nn_tensor **out, int ndim, const int64_t *shape, const float *data);
/** Release a tensor; its storage goes when no view uses it. NULL is accepted. */
NN_API void nn_tensor_free(nn_tensor *t);

NN_API int64_t nn_tensor_numel(const nn_tensor *t);
NN_API bool nn_tensor_is_contiguous(const nn_tensor *t);
/** True when shapes match and every element is bit-identical. */
NN_API bool nn_tensor_equal(const nn_tensor *a, const nn_tensor *b);
/** Element at a multi-index (ndim indices). */
NN_API float nn_tensor_get(const nn_tensor *t, const int64_t *index);

/* ---- operators (each is an opprof operator event) ---- */

/** out = x @ w^T + b (aten::linear). x: [M, K], w: [N, K], b: [N] or NULL. */
NN_API int nn_linear(const nn_tensor *x, const nn_tensor *w, const nn_tensor *b, nn_tensor **out);
/** out = bias + a @ b (aten::addmm). a: [M, K], b: [K, N] (any strides),
 *  bias: [N] (broadcast over rows) or [M, N]. */
NN_API int nn_addmm(const nn_tensor *bias, const nn_tensor *a, const nn_tensor *b, nn_tensor **out);
/** out = a @ b (aten::mm). */
NN_API int nn_mm(const nn_tensor *a, const nn_tensor *b, nn_tensor **out);
/** Transposed view of a 2-D tensor (aten::t). */
NN_API int nn_t(const nn_tensor *t, nn_tensor **out);
/** View with dims d0 and d1 swapped (aten::transpose). */
NN_API int nn_transpose(const nn_tensor *t, int d0, int d1, nn_tensor **out);
/** View with the given shape, strides (elements) and offset from t->data
 *  (aten::as_strided). The view must stay inside t's storage. */
NN_API int nn_as_strided(const nn_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                         nn_tensor **out);
/** max(x, 0) (aten::relu, which runs aten::clamp_min). */
NN_API int nn_relu(const nn_tensor *x, nn_tensor **out);
/** max(x, min) (aten::clamp_min). */
NN_API int nn_clamp_min(const nn_tensor *x, float min, nn_tensor **out);
/** A contiguous copy (aten::contiguous > aten::clone); a contiguous input is
 *  copied too. */
NN_API int nn_contiguous(const nn_tensor *x, nn_tensor **out);

/** For tests and benches only: every call of operator `op` (its opprof name:
 *  "aten::addmm" or "aten::clamp_min", the ones that obey) then spends
 *  `fraction` (0.05: 5 %) of its own time again, busy on the CPU, inside its
 *  range. NULL or 0: off. The string must outlive the setting. NN_EINVAL for
 *  another operator or a fraction outside [0, 100]. */
NN_API int nn_debug_slow_down(const char *op, double fraction);
/** For tests and benches: the next call of operator `op` (the same names)
 *  lasts `ns` nanoseconds longer, busy, then the switch is off again. NULL
 *  or 0 turns it off; NN_EINVAL for a negative ns. */
NN_API int nn_debug_delay_next(const char *op, int64_t ns);

/* ---- modules ---- */
typedef struct nn_module nn_module;

/** Linear(in, out) with PyTorch's default initialisation: weight and bias
 *  uniform in +-1/sqrt(in_features), from the process generator. */
NN_API int nn_linear_new(nn_module **out, int64_t in_features, int64_t out_features);
NN_API int nn_relu_new(nn_module **out);
/** A Sequential that takes ownership of `count` modules (freed even on error). */
NN_API int nn_sequential_new(nn_module **out, nn_module **modules, size_t count);
/** Run the module on x; *out is the caller's. Sequential frees each
 *  intermediate as soon as the next module has used it. */
NN_API int nn_module_forward(nn_module *m, const nn_tensor *x, nn_tensor **out);
/** Inference mode (the default for this runtime: there is no autograd);
 *  kept for parity with model.eval(). */
NN_API void nn_module_eval(nn_module *m);
NN_API void nn_module_free(nn_module *m);
/** A parameter by PyTorch's state_dict name ("weight", "0.weight", "2.bias"),
 *  or NULL. The tensor belongs to the module. After writing into a parameter's
 *  data, call nn_module_parameters_changed(). */
NN_API nn_tensor *nn_module_parameter(nn_module *m, const char *name);
/** The i-th module of a Sequential (as model[i]), or NULL; it belongs to m. */
NN_API nn_module *nn_module_child(nn_module *m, size_t i);
/** Tell the module that parameters were written: Linear keeps its weight also
 *  transposed and packed for the matrix product, and repacks it here. */
NN_API int nn_module_parameters_changed(nn_module *m);

/* ---- safetensors files ----
 * The usual file of model weights: an 8-byte little-endian header length, a
 * JSON header {name: {"dtype", "shape", "data_offsets": [begin, end]}}, then
 * the raw data. Only F32 tensors are read. On error, `message` (when not
 * NULL) receives a sentence naming the file and the tensor, and nothing has
 * changed. */

/** Load every parameter of `m` by its state_dict name ("0.weight", ...).
 *  Errors: -errno (file), NN_EFORMAT (truncated file, header not JSON,
 *  offsets outside the data or not matching the shape), NN_EMISSING,
 *  NN_ESHAPE (shape differs from the model's), NN_EDTYPE. All tensors are
 *  checked and read before any parameter is written. */
NN_API int nn_module_load_safetensors(nn_module *m, const char *path, char *message, size_t size);
/** Read one tensor; *out is the caller's. Errors as above. */
NN_API int nn_tensor_load_safetensors(const char *path, const char *name, nn_tensor **out, char *message, size_t size);
/** Write one tensor as a safetensors file (atomically: a temporary file is
 *  renamed into place). */
NN_API int nn_tensor_save_safetensors(const char *path, const char *name, const nn_tensor *t, char *message,
                                      size_t size);

/* ---- process settings ---- */

/** Replace nn's allocator (NULL restores the C library's): every allocation
 *  of nn (tensors, buffers, modules, scratch) goes through it. Set it before
 *  making tensors: a block is freed through the allocator that made it.
 *  (Libraries below nn, libxsmm and OpenBLAS, allocate on their own.) */
NN_API int nn_set_allocator(const opprof_allocator *allocator);

/** Seed the process generator (as torch.manual_seed). The default seed is 0. */
NN_API void nn_manual_seed(uint64_t seed);
/** Threads used by matrix products; n < 1 means 1. The default is 1. */
NN_API void nn_set_num_threads(int n);
NN_API int nn_get_num_threads(void);

/* ---- matrix products ----
 * nn multiplies matrices with its own register-tiled kernels, "avx512" (tiles
 * of 12 x 32), "avx2" (6 x 16, with FMA) and "scalar"; all three sum every
 * element in one order (s = fma(a, b, s) along K, then + C, then + bias), so
 * they give the same bits. "auto", the default, times the own kernels that
 * this CPU runs on the first product of each shape (about a millisecond) and
 * keeps the fastest for that shape. "xsmm" (libxsmm's JIT) and "openblas"
 * run only when asked: they round differently. The environment variable
 * NN_GEMM=<name> sets the kernel at the first product (an unknown or
 * unsupported name is reported on stderr and auto is used). */

/** The i-th kernel's name, i = 0, 1, ...: "avx512", "avx2", "scalar",
 *  "xsmm", "openblas"; NULL past the last. */
NN_API const char *nn_gemm_kernel_name(int i);
/** Use this kernel from now on for every product (NULL or "auto": choose by
 *  measurement). NN_EINVAL: not a kernel's name; NN_ENOTSUP: this CPU cannot
 *  run it (avx512 and avx2 need those instructions). */
NN_API int nn_gemm_set_kernel(const char *name);
/** "auto" or the kernel set by nn_gemm_set_kernel / NN_GEMM (static string). */
NN_API const char *nn_gemm_kernel(void);

typedef struct nn_gemm_choice {
    const char *kernel; /* the kernel that runs this shape (static string) */
    double gflops;      /* what auto measured for it, one thread; 0 when set by hand */
} nn_gemm_choice;
/** The kernel that runs C[m, n] = A[m, k] B[k, n] (measuring now if auto has
 *  not met the shape yet). NN_EINVAL: a size < 1 or > INT32_MAX; NN_ENOMEM.
 *  (A product whose shape auto cannot measure for want of memory fails with
 *  NN_ENOMEM too, and is measured again next time.) */
NN_API int nn_gemm_choice_for(int64_t m, int64_t n, int64_t k, nn_gemm_choice *out);

/** Give back the buffers that nn keeps for reuse after tensors are freed
 *  (freed tensors' buffers are cached by size, up to 64 of them and 256 MiB:
 *  an inference loop allocates the same sizes every pass). */
NN_API void nn_release_cached_memory(void);

/** Bytes of tensor storage alive now, and the most alive at once since start. */
NN_API int64_t nn_memory_allocated(void);
NN_API int64_t nn_memory_peak(void);

#ifdef __cplusplus
}
#endif
#endif /* NN_NN_H */
