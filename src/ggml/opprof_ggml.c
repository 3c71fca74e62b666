/* opprof_ggml.c - ggml's CPU backend through its graph loop's hook
 * (src/ggml/ggml-cpu-hook.patch): each thread's part of each node is a range
 * of that thread, marked as a part of the node's run. See opprof/ggml.h.
 *
 * A run's id is the graph's serial number (taken when the graph begins, on
 * the calling thread, before the pool's workers start) and the node's index.
 * Serials are kept per graph in a small table, so that graphs computed at
 * once by different threads keep their own. */
#define _GNU_SOURCE
#include <opprof/ggml.h>    /* built as a user of opprof: the recording macros' inline path */
#include <opprof/capture.h> /* opprof_tensor_name_layer */

#include <ggml-cpu.h>
#include <ggml.h>

/* Built for `opprof record --ggml` (libopprof_ggml_record.so, preloaded into a
 * program that was not changed): ggml is the program's own, found where it is
 * loaded, so every ggml function is a weak reference (none is resolved: NULL)
 * and attaching says so rather than failing to load. */
#if defined(OPPROF_GGML_WEAK)
#pragma weak ggml_cpu_set_hook
#pragma weak ggml_op_name
#pragma weak ggml_unary_op_name
#pragma weak ggml_glu_op_name
#pragma weak ggml_get_unary_op
#pragma weak ggml_get_glu_op
#pragma weak ggml_graph_node
#pragma weak ggml_n_dims
#pragma weak ggml_nbytes
#pragma weak ggml_nelements
#pragma weak ggml_type_name
/* every one that the adapter calls: a ggml without one (an older one, without
 * the GLU ops) is not attached to, rather than called through NULL before main */
#define GGML_FOUND()                                                                                     \
    (ggml_cpu_set_hook && ggml_op_name && ggml_unary_op_name && ggml_glu_op_name && ggml_get_unary_op && \
     ggml_get_glu_op && ggml_graph_node && ggml_n_dims && ggml_nbytes && ggml_nelements && ggml_type_name)
#else
#define GGML_FOUND() 1
#endif

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GRAPH_SLOTS = 64, NODE_BITS = 20 };
#define EXPORT __attribute__((visibility("default"))) /* opprof/ggml.h's functions */

/* One call site per op, unary op and GLU op: their names live as long as the process. */
typedef struct op_sites {
    opprof_srcloc op[GGML_OP_COUNT], unary[GGML_UNARY_OP_COUNT], glu[GGML_GLU_OP_COUNT];
} op_sites;

static op_sites *g_sites;
static pthread_once_t g_sites_once = PTHREAD_ONCE_INIT;
static int g_sites_rc;
static const opprof_srcloc g_graph_site = {
    "ggml::graph_compute", "ggml_graph_compute", __FILE__, __LINE__, OPPROF_KIND_USER_ANNOTATION, NULL};
/* A thread's time from the end of its part of a node to the start of its part
 * of the next node of the same graph: the barrier after each node, the hook. */
static const opprof_srcloc g_between_site = {
    "ggml::between_ops", "ggml_graph_compute_thread", __FILE__, __LINE__, OPPROF_KIND_USER_ANNOTATION, NULL};
static struct {
    struct ggml_cgraph *graph; /* atomic */
    uint64_t serial;           /* atomic; written before `graph` */
} g_graphs[GRAPH_SLOTS];
static uint64_t g_serial; /* atomic */
static pthread_mutex_t g_attach_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_attached;

/* What a thread is computing: the range of its part, the graph's range; when
 * its last part ended, and the serial of the graph of its part. */
static __thread opprof_range t_part, t_graph;
static __thread int t_named;
static __thread opprof_time t_part_end;
static __thread uint64_t t_part_serial;

static size_t slot_of(const struct ggml_cgraph *graph) { return ((uintptr_t)graph >> 6) % GRAPH_SLOTS; }

static int sites_fill(void) {
    op_sites *s = calloc(1, sizeof *s);
    if (!s) return OPPROF_ENOMEM;
    char buf[96];
#define SITE(dst, text)                                                                                          \
    do {                                                                                                         \
        snprintf(buf, sizeof buf, "ggml::%s", (text));                                                           \
        (dst) = (opprof_srcloc){strdup(buf), "ggml_compute_forward", "ggml-cpu.c", 0, OPPROF_KIND_CPU_OP, NULL}; \
        if (!(dst).name) return free(s), OPPROF_ENOMEM; /* the names made so far: kept */                        \
    } while (0)
    for (int i = 0; i < GGML_OP_COUNT; i++) SITE(s->op[i], ggml_op_name((enum ggml_op)i));
    for (int i = 0; i < GGML_UNARY_OP_COUNT; i++) SITE(s->unary[i], ggml_unary_op_name((enum ggml_unary_op)i));
    for (int i = 0; i < GGML_GLU_OP_COUNT; i++) SITE(s->glu[i], ggml_glu_op_name((enum ggml_glu_op)i));
#undef SITE
    g_sites = s;
    return 0;
}

/* The ggml found has the ops' layout this adapter was built for: ops whose
 * names read back at their places in the headers' enums (another ggml's
 * enums would give every node another op's name). */
static bool same_layout(void) {
#define OP(e, prefix) \
    { (int)(e), #e + sizeof(prefix) - 1 }
    static const struct {
        int value;
        const char *name;
    } ops[] = {OP(GGML_OP_ADD, "GGML_OP_"),      OP(GGML_OP_MUL_MAT, "GGML_OP_"),
               OP(GGML_OP_GET_ROWS, "GGML_OP_"), OP(GGML_OP_SET_ROWS, "GGML_OP_"),
               OP(GGML_OP_SOFT_MAX, "GGML_OP_"), OP(GGML_OP_FLASH_ATTN_EXT, "GGML_OP_"),
               OP(GGML_OP_GLU, "GGML_OP_")},
      unary[] = {OP(GGML_UNARY_OP_SILU, "GGML_UNARY_OP_"), OP(GGML_UNARY_OP_GELU, "GGML_UNARY_OP_")},
      glu[] = {OP(GGML_GLU_OP_SWIGLU, "GGML_GLU_OP_")};
#undef OP
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (strcmp(ggml_op_name((enum ggml_op)ops[i].value), ops[i].name)) return false;
    for (size_t i = 0; i < sizeof unary / sizeof *unary; i++)
        if (strcmp(ggml_unary_op_name((enum ggml_unary_op)unary[i].value), unary[i].name)) return false;
    for (size_t i = 0; i < sizeof glu / sizeof *glu; i++)
        if (strcmp(ggml_glu_op_name((enum ggml_glu_op)glu[i].value), glu[i].name)) return false;
    return true;
}

static void sites_once(void) { g_sites_rc = same_layout() ? sites_fill() : OPPROF_EVERSION; }

/* The call sites, made once (0), or OPPROF_ENOMEM. */
static int sites_make(void) {
    pthread_once(&g_sites_once, sites_once);
    return g_sites_rc;
}

static const opprof_srcloc *site_of(const struct ggml_tensor *node) {
    if (node->op == GGML_OP_UNARY) {
        int u = (int)ggml_get_unary_op(node);
        if (u >= 0 && u < GGML_UNARY_OP_COUNT) return &g_sites->unary[u];
    } else if (node->op == GGML_OP_GLU) {
        int g = (int)ggml_get_glu_op(node);
        if (g >= 0 && g < GGML_GLU_OP_COUNT) return &g_sites->glu[g];
    }
    return &g_sites->op[(int)node->op < GGML_OP_COUNT ? (int)node->op : GGML_OP_NONE];
}

EXPORT const char *opprof_ggml_op_name(const struct ggml_tensor *node) {
    if (!node || sites_make()) return "ggml::?";
    return site_of(node)->name;
}

EXPORT int64_t opprof_ggml_flops(const struct ggml_tensor *node) {
    if (!node) return 0;
    int64_t out = ggml_nelements(node);
    switch (node->op) {
    case GGML_OP_MUL_MAT:
    case GGML_OP_MUL_MAT_ID: return node->src[0] ? 2 * node->src[0]->ne[0] * out : 0;
    case GGML_OP_OUT_PROD: return node->src[0] ? 2 * node->src[0]->ne[1] * out : 0;
    case GGML_OP_ADD:
    case GGML_OP_ADD1:
    case GGML_OP_ADD_ID:
    case GGML_OP_SUB:
    case GGML_OP_MUL:
    case GGML_OP_DIV:
    case GGML_OP_SCALE:
    case GGML_OP_SQR:
    case GGML_OP_SQRT: return out;
    case GGML_OP_FLASH_ATTN_EXT: { /* Q·Kᵀ and P·V for every query of every head */
        const struct ggml_tensor *q = node->src[0], *k = node->src[1], *v = node->src[2];
        if (!q || !k || !v) return 0;
        return 2 * k->ne[1] * (q->ne[0] + v->ne[0]) * q->ne[1] * q->ne[2] * q->ne[3];
    }
    default: return 0;
    }
}

EXPORT int64_t opprof_ggml_bytes(const struct ggml_tensor *node) {
    if (!node) return 0;
    const struct ggml_tensor *a = node->src[0], *b = node->src[1];
    switch (node->op) {
    case GGML_OP_GET_ROWS: /* the rows it reads of the table, not the table */
        if (a && b) return ggml_nelements(b) * (int64_t)a->nb[1] + (int64_t)ggml_nbytes(b) + (int64_t)ggml_nbytes(node);
        break;
    case GGML_OP_SET_ROWS: /* the rows it writes, the output being a view of the whole table */
        if (a && b) return ggml_nelements(b) * (int64_t)node->nb[1] + (int64_t)ggml_nbytes(a) + (int64_t)ggml_nbytes(b);
        break;
    default: break;
    }
    int64_t bytes = (int64_t)ggml_nbytes(node);
    for (int s = 0; s < GGML_MAX_SRC && node->src[s]; s++) bytes += (int64_t)ggml_nbytes(node->src[s]);
    return bytes;
}

/* The first thread's part says what the node is: its name, the nodes fused
 * with it, FLOPs, bytes and (when recorded) its inputs. */
static void describe(struct ggml_cgraph *graph, int first, int n_nodes) {
    int64_t flops = 0, bytes = 0;
    for (int k = first; k < first + n_nodes; k++) {
        const struct ggml_tensor *t = ggml_graph_node(graph, k);
        flops += opprof_ggml_flops(t);
        bytes += opprof_ggml_bytes(t);
    }
    const struct ggml_tensor *node = ggml_graph_node(graph, first);
    if (node->name[0]) opprof_range_arg_str("name", node->name);
    /* A node whose name gives no layer ("node_21": llama.cpp's flash attention)
     * is of the layer of the state it reads: an input that the graph does not
     * compute (a leaf, or a view of one: "cache_k_l0 (view)"), not an activation. */
    if (opprof_tensor_name_layer(node->name) < 0)
        for (int s = 0; s < GGML_MAX_SRC && node->src[s]; s++) {
            const struct ggml_tensor *src = node->src[s], *base = src->view_src ? src->view_src : src;
            int32_t layer = base->op == GGML_OP_NONE ? opprof_tensor_name_layer(src->name) : -1;
            if (layer >= 0) {
                opprof_range_arg_int("layer", layer);
                break;
            }
        }
    if (n_nodes > 1) opprof_range_arg_int("fused", n_nodes);
    if (flops) opprof_range_flops(flops);
    opprof_range_bytes(bytes);
    if (!opprof_recording_shapes()) return;
    opprof_input in[OPPROF_MAX_INPUTS];
    int64_t dims[OPPROF_MAX_INPUTS][GGML_MAX_DIMS];
    int n = 0;
    for (int s = 0; s < GGML_MAX_SRC && node->src[s] && n < OPPROF_MAX_INPUTS; s++, n++) {
        const struct ggml_tensor *src = node->src[s];
        int nd = ggml_n_dims(src); /* PyTorch's order: the outermost first */
        for (int d = 0; d < nd; d++) dims[n][d] = src->ne[nd - 1 - d];
        in[n] = (opprof_input){nd, dims[n], ggml_type_name(src->type)};
    }
    opprof_set_inputs(n, in);
}

static uint64_t serial_of(const struct ggml_cgraph *graph) {
    size_t k = slot_of(graph);
    uint64_t serial = __atomic_load_n(&g_graphs[k].serial, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&g_graphs[k].graph, __ATOMIC_ACQUIRE) == graph ? serial : 0;
}

static void on_graph(enum ggml_cpu_hook_event event, struct ggml_cgraph *graph) {
    if (event == GGML_CPU_GRAPH_BEGIN) {
        size_t k = slot_of(graph);
        uint64_t serial = __atomic_add_fetch(&g_serial, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&g_graphs[k].serial, serial, __ATOMIC_RELEASE);
        __atomic_store_n(&g_graphs[k].graph, graph, __ATOMIC_RELEASE);
        t_graph = OPPROF__RECORDING() ? opprof__range_begin(&g_graph_site) : 0;
    } else {
        opprof__range_end(t_graph);
        t_graph = 0;
    }
}

static void hook(enum ggml_cpu_hook_event event, struct ggml_cgraph *graph, int node, int n_nodes, int ith, int nth,
                 void *user_data) {
    (void)nth, (void)user_data;
    if (event == GGML_CPU_GRAPH_BEGIN || event == GGML_CPU_GRAPH_END) {
        on_graph(event, graph);
        return;
    }
    if (event == GGML_CPU_NODE_BEGIN) {
        if (!OPPROF__RECORDING()) return;
        if (ith > 0 && !t_named) {
            char name[32];
            snprintf(name, sizeof name, "ggml-cpu %d", ith);
            opprof_thread_set_name(name);
            t_named = 1;
        }
        uint64_t serial = serial_of(graph);                  /* once a node: its end takes it from here */
        if (t_part_end && serial && serial == t_part_serial) /* since its part of the node before */
            opprof_range_end_at(opprof_range_begin_at(&g_between_site, t_part_end), opprof_now());
        t_part_serial = serial;
        t_part = opprof__range_begin(site_of(ggml_graph_node(graph, node)));
        return;
    }
    if (!t_part) return;
    opprof_range_part_of((t_part_serial << NODE_BITS) | (((uint64_t)node + 1) & ((1u << NODE_BITS) - 1)));
    if (ith == 0) describe(graph, node, n_nodes);
    opprof__range_end(t_part);
    t_part = 0;
    t_part_end = opprof_now();
}

EXPORT int opprof_ggml_attach(void) {
    if (!GGML_FOUND()) return OPPROF_ENOENT;
    pthread_mutex_lock(&g_attach_lock);
    int rc = sites_make();
    if (!rc && !g_attached) {
        ggml_cpu_set_hook(hook, NULL);
        g_attached = 1;
    }
    pthread_mutex_unlock(&g_attach_lock);
    return rc;
}

EXPORT void opprof_ggml_detach(void) {
    if (!GGML_FOUND()) return;
    pthread_mutex_lock(&g_attach_lock);
    if (g_attached) ggml_cpu_set_hook(NULL, NULL);
    g_attached = 0;
    pthread_mutex_unlock(&g_attach_lock);
}
