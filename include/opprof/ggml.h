/*
 * opprof/ggml.h - ggml's operators as opprof ranges, on the threads that
 * compute them (library opprof_ggml; CMake: opprof::ggml; pkg-config:
 * opprof-ggml).
 *
 *   #include <opprof/ggml.h>
 *   opprof_ggml_attach();                // once, while no graph computes
 *   ... opprof_session_start, then ggml_graph_compute / ggml_backend_graph_compute
 *       as before, opprof_session_step per token or batch ...
 *   opprof_ggml_detach();
 *
 * Each node that ggml's CPU backend computes while a window records becomes,
 * on every thread of the pool that computes a part of it, a range
 * "ggml::MUL_MAT" (kind cpu_op; unary and GLU ops by their own name,
 * "ggml::SILU"), all parts of one node's run marked with one id
 * (opprof_range_part_of): the tables count one call per node run and show
 * its wall time, threads, imbalance and wait. The first thread's part
 * carries the node's tensor name (argument "name"), the nodes fused with it
 * ("fused", when ggml computed several at once), its FLOPs
 * (opprof_ggml_flops) and bytes (its inputs' and output's), and, when the
 * session records shapes, its inputs' shapes and types ("f32", "q8_0", ...:
 * opprof_input). Each graph's compute is a range "ggml::graph_compute" on the
 * calling thread. A thread's time between its parts of two nodes of one graph
 * (the barrier after each node) is a range "ggml::between_ops" of that thread.
 * Worker threads are named "ggml-cpu N" in traces.
 *
 * The schedule is ggml's own: the hook is called by ggml-cpu's graph loop
 * before and after each node (no eval callback, which makes ggml compute node
 * by node). That hook is not in upstream ggml: src/ggml/ggml-cpu-hook.patch
 * adds it (19 lines of ggml-cpu.c and ggml-cpu.h); scripts/ggml.sh builds a
 * ggml with it. Outside a window a node costs one load and a branch a thread.
 */
#ifndef OPPROF_GGML_H
#define OPPROF_GGML_H

#include <stdint.h>

#include <opprof/opprof.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_tensor;

/** Install the hook in ggml's CPU backend (ggml_cpu_set_hook). Call it while
 *  no graph computes; a second call changes nothing. Returns 0, OPPROF_ENOMEM
 *  when the ops' names could not be made, OPPROF_EVERSION when the ggml found
 *  has another layout of its ops than the headers this adapter was built with
 *  (ggml 0.22's: probed by the names of ops at their places), or
 *  (libopprof_ggml_record.so, the preloaded form of `opprof record --ggml`)
 *  OPPROF_ENOENT when the program has no ggml with the hook and every function
 *  the adapter calls. */
OPPROF_API int opprof_ggml_attach(void);
/** Remove the hook (while no graph computes). No effect when not attached. */
OPPROF_API void opprof_ggml_detach(void);
/** The FLOPs that opprof counts for one run of `node`: MUL_MAT and
 *  MUL_MAT_ID 2·K·(elements of the output), K the rows' length (ne[0] of
 *  src[0]); OUT_PROD 2·(elements of src[0] along ne[1])·(elements of the
 *  output); ADD, ADD1, SUB, MUL, DIV, SCALE, SQR, SQRT and ADD_ID the output's
 *  elements; FLASH_ATTN_EXT its two products, 2·n_kv·(D_k + D_v) for each
 *  query of each head; every other op 0 (as PyTorch counts only its matrix
 *  and elementwise operators). */
OPPROF_API int64_t opprof_ggml_flops(const struct ggml_tensor *node);
/** The bytes that opprof counts for one run of `node`: what it touches, each
 *  input read once and its output written once (a model from the shapes, not
 *  measured traffic); GET_ROWS the rows it reads of its table (not the table),
 *  SET_ROWS the rows it writes (its output is a view of the whole table). */
OPPROF_API int64_t opprof_ggml_bytes(const struct ggml_tensor *node);
/** The name opprof gives a node's range: "ggml::MUL_MAT", "ggml::SILU";
 *  a string kept for the life of the process. */
OPPROF_API const char *opprof_ggml_op_name(const struct ggml_tensor *node);

#ifdef __cplusplus
}
#endif

#endif /* OPPROF_GGML_H */
