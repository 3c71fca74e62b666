/* fake_ggml.c - a libggml that `opprof record --ggml` must not trust: built
 * as libfake_ggml_partial.so, it has the CPU hook but not the GLU functions
 * (an older ggml: the adapter called through NULL before main); as
 * libfake_ggml_other.so (FAKE_GGML_WHOLE), every function the adapter calls,
 * but its ops numbered otherwise (another ggml version). Nothing computes. */
#include <stddef.h>

typedef void (*hook_fn)(void);
static hook_fn g_hook;

__attribute__((visibility("default"))) void ggml_cpu_set_hook(hook_fn fn, void *user) {
    (void)user;
    g_hook = fn;
}
__attribute__((visibility("default"))) const char *ggml_op_name(int op) { return op == 0 ? "NONE" : "SOMETHING_ELSE"; }
__attribute__((visibility("default"))) void *ggml_graph_node(void *graph, int i) {
    (void)graph, (void)i;
    return NULL;
}
#if defined(FAKE_GGML_WHOLE)
__attribute__((visibility("default"))) const char *ggml_unary_op_name(int op) { return op ? "U" : "ABS"; }
__attribute__((visibility("default"))) const char *ggml_glu_op_name(int op) { return op ? "G" : "REGLU"; }
__attribute__((visibility("default"))) int ggml_get_unary_op(const void *t) { return t ? 0 : 0; }
__attribute__((visibility("default"))) int ggml_get_glu_op(const void *t) { return t ? 0 : 0; }
__attribute__((visibility("default"))) int ggml_n_dims(const void *t) { return t ? 1 : 0; }
__attribute__((visibility("default"))) size_t ggml_nbytes(const void *t) { return t ? 4 : 0; }
__attribute__((visibility("default"))) long ggml_nelements(const void *t) { return t ? 1 : 0; }
__attribute__((visibility("default"))) const char *ggml_type_name(int type) { return type ? "?" : "f32"; }
#endif
