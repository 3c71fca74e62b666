/* reader_runtimes.c - other runtimes' profiles read by their own rules.
 *
 * ONNX Runtime (SessionOptions.enable_profiling; docs/TRACE_FORMAT.md):
 * a bare array of complete events of three categories.
 *   "Node"     one per node run: "<node>_kernel_time" with args.op_name (the
 *              operator type after ORT's fusions: FusedGemm, Conv), provider,
 *              input_type_shape [{"float": [1, 256]}, ...] and
 *              thread_scheduling_stats (kept as pool_run, pool_wait,
 *              pool_distribution, pool_sub_threads); ORT 0.4 adds "<node>_fence_before" and
 *              "_fence_after" without a provider.
 *   "Session"  model_loading_uri and session_initialization (start-up),
 *              model_run around each run, SequentialExecutor::Execute inside.
 *   "Kernel"   a GPU kernel (CUDA, ROCm): a device activity.
 * Rows are by operator type, as ORT's own tool groups them
 * (onnxruntime/python/tools/transformers/profile_result_processor.py,
 * "Grouped by operator": the Node events with a provider, by op_name), the
 * node's name kept as the argument "node" (rows by node with --group-by
 * node); each model_run is a step (ProfilerStep#N); start-up is no row and
 * is said apart (a warning: the totals are the runs'); fences are no rows
 * either (ORT's tool counts them in a column of their own), their count and
 * time said.
 *
 * TensorFlow's timeline (tensorflow/python/client/timeline.py,
 * generate_chrome_trace_format): ops are "cat": "Op" complete events named by
 * op type, args.name the node; a process per device: "/job:.../device:GPU:0
 * Compute" holds the host's launches, "/device:GPU:0/stream:N Compute" and
 * ".../memcpy Compute" the device's work (device rows, each linked to the
 * host launch of its node before it: the launch's CPU time and its device
 * time as PyTorch's CPU and CUDA columns), "/device:GPU:0/stream:all
 * Compute" every stream's work again (left out: counted once). A run is the
 * host ops from one occurrence of the first op's node to the next: each run
 * a step (ProfilerStep#N), so that merged runs read as steps.
 *
 * TensorRT's per-layer profile (trtexec --exportProfile, its
 * samples/common/sampleReporting.cpp): an array of objects without "ph",
 * first {"count": RUNS}, then a layer a row {"name", "timeMs" (over every
 * run), "averageMs", "medianMs", "percentage"}: aggregate rows (no
 * timeline), RUNS calls each, RUNS the capture's steps. */
#define _GNU_SOURCE /* qsort_r */
#include "trace/reader_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool ends_with(const char *s, size_t n, const char *suffix) {
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

uint8_t opprof__reader_runtime_category(const char *cat, size_t n) {
    if (n == 2 && memcmp(cat, "Op", 2) == 0) return RT_TF_OP;
    if (n == 4 && memcmp(cat, "Node", 4) == 0) return RT_ORT_NODE;
    if (n == 7 && memcmp(cat, "Session", 7) == 0) return RT_ORT_SESSION;
    return RT_NONE;
}

/* args.input_type_shape: [{"float": [128, 256]}, {"int64": [2]}, ...] */
typedef struct shape_ctx {
    event *e;
    int input;
} shape_ctx;

static int on_shape_dim(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    shape_ctx *s = ctx;
    int c = opprof__json_skip_ws(&p->lx);
    if (c != '-' && (c < '0' || c > '9')) return opprof__json_skip(&p->lx);
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    if (v.is_int && s->input < OPPROF_MAX_INPUTS && index < OPPROF_MAX_INPUT_DIMS) {
        s->e->shapes.dims[s->input][index] = v.as_int;
        s->e->shapes.ndim[s->input] = index + 1;
    }
    return 0;
}

static int on_shape_type(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    shape_ctx *s = ctx;
    if (opprof__json_skip_ws(&p->lx) != '[') return opprof__json_skip(&p->lx);
    if (s->input < OPPROF_MAX_INPUTS) {
        opprof__copy_text(s->e->shapes.dtype[s->input], sizeof s->e->shapes.dtype[s->input], k, n);
    }
    return opprof__json_array(&p->lx, on_shape_dim, s);
}

static int on_input_shape(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    event *e = ctx;
    if (opprof__json_skip_ws(&p->lx) != '{') return opprof__json_skip(&p->lx);
    if (index < OPPROF_MAX_INPUTS) e->shapes.n_inputs = index + 1;
    shape_ctx s = {e, index};
    return opprof__json_object(&p->lx, on_shape_type, &s);
}

/* A string argument kept for the event's marks (at most its slots). */
static int keep_string(parser *p, event *e, const char *key) {
    if (opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
    if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
    if (!p->lx.s_len) return 0;
    return opprof__reader_arg_add(&e->args, key, strlen(key), OPPROF_MARK_ARG_STR, p->lx.s, p->lx.s_len)
               ? 0
               : opprof__reader_no_memory(p, "args");
}

/* An integer argument kept for the event's marks. */
static int keep_int(parser *p, event *e, const char *key, int64_t v) {
    event_arg *a = opprof__reader_arg_add(&e->args, key, strlen(key), OPPROF_MARK_ARG_INT, NULL, 0);
    if (!a) return opprof__reader_no_memory(p, "args");
    a->i = v;
    return 0;
}

/* args.thread_scheduling_stats (ORT 1.1x and later, with an intra-op pool):
 * {"main_thread": {"Run": .., "Wait": .., "Distribution": .., ...},
 *  "sub_threads": {"<thread id>": {"num_run": .., "core": ..}, ...}}: the main
 * thread's numbers as ORT's thread pool profiler keeps them (pool_run,
 * pool_wait, pool_distribution) and the threads that ran a part
 * (pool_sub_threads). */
static int on_main_thread_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    event *e = ctx;
    int c = opprof__json_skip_ws(&p->lx);
    const char *key = KEY_IS(k, n, "Run")            ? "pool_run"
                      : KEY_IS(k, n, "Wait")         ? "pool_wait"
                      : KEY_IS(k, n, "Distribution") ? "pool_distribution"
                                                     : NULL;
    if (!key || (c != '-' && (c < '0' || c > '9'))) return opprof__json_skip(&p->lx);
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    return v.is_int ? keep_int(p, e, key, v.as_int) : 0;
}

static int on_sub_thread(opprof__json *lx, void *ctx, const char *k, size_t n) {
    (void)k, (void)n;
    (*(int64_t *)ctx)++;
    return opprof__json_skip(&((parser *)lx)->lx);
}

static int on_pool_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    event *e = ctx;
    if (opprof__json_skip_ws(&p->lx) != '{') return opprof__json_skip(&p->lx);
    if (KEY_IS(k, n, "main_thread")) return opprof__json_object(&p->lx, on_main_thread_key, e);
    if (!KEY_IS(k, n, "sub_threads")) return opprof__json_skip(&p->lx);
    int64_t threads = 0;
    if (opprof__json_object(&p->lx, on_sub_thread, &threads)) return OPPROF_EFORMAT;
    return keep_int(p, e, "pool_sub_threads", threads);
}

int opprof__reader_runtime_arg(parser *p, event *e, const char *k, size_t n) {
    if (e->runtime != RT_ORT_NODE) return 1;
    if (KEY_IS(k, n, "op_name")) {
        if (opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        opprof__copy_text(e->op_name, sizeof e->op_name, p->lx.s, p->lx.s_len);
        return 0;
    }
    if (KEY_IS(k, n, "provider")) return keep_string(p, e, "provider");
    if (KEY_IS(k, n, "thread_scheduling_stats")) /* an object, or "" without a pool */
        return opprof__json_skip_ws(&p->lx) == '{' ? opprof__json_object(&p->lx, on_pool_key, e)
                                                   : opprof__json_skip(&p->lx);
    if (KEY_IS(k, n, "input_type_shape")) {
        if (opprof__json_skip_ws(&p->lx) != '[') return opprof__json_skip(&p->lx);
        e->has_dims = e->has_types = true;
        return opprof__json_array(&p->lx, on_input_shape, e);
    }
    return 1;
}

static bool is_startup(const char *name) {
    return !strcmp(name, "model_loading_uri") || !strcmp(name, "model_loading_array") ||
           !strcmp(name, "model_loading_from_saved_proto") || !strcmp(name, "session_initialization");
}

/* The event's name becomes `name` (the parser's copy). */
static int rename_event(parser *p, event *e, const char *name) {
    size_t len = strlen(name);
    if (len + 1 > e->name_cap) {
        char *bigger = opprof__realloc(e->name, len + 1);
        if (!bigger) return opprof__reader_no_memory(p, "names");
        e->name = bigger;
        e->name_cap = len + 1;
    }
    memmove(e->name, name, len + 1);
    e->name_len = len;
    return 0;
}

static int session_event(parser *p, event *e) {
    if (is_startup(e->name)) {
        opprof__sb_printf(&p->rt.startup, "%s%s %.3f ms", p->rt.startup.len ? ", " : "", e->name, (double)e->dur / 1e6);
        return p->rt.startup.error ? opprof__reader_no_memory(p, "start-up") : 1;
    }
    e->cat = CAT_USER;
    if (strcmp(e->name, "model_run") != 0) return 0; /* the executor's span: a range */
    char step[48];
    snprintf(step, sizeof step, "ProfilerStep#%llu", (unsigned long long)p->rt.runs++);
    return rename_event(p, e, step);
}

static int node_event(parser *p, event *e) {
    if (ends_with(e->name, e->name_len, "_fence_before") || ends_with(e->name, e->name_len, "_fence_after")) {
        p->rt.fences++;
        p->rt.fence_us += e->dur / 1000;
        return 1;
    }
    size_t node_len = ends_with(e->name, e->name_len, "_kernel_time") ? e->name_len - 12 : e->name_len;
    if (!p->rt.by_node && e->op_name[0]) { /* the row is the operator type's, whatever slots are left */
        if (!opprof__reader_arg_add(&e->args, "node", 4, OPPROF_MARK_ARG_STR, e->name, node_len))
            return opprof__reader_no_memory(p, "args");
        e->cat = CAT_CPU_OP;
        return rename_event(p, e, e->op_name);
    }
    e->cat = CAT_CPU_OP;
    e->name[node_len] = '\0';
    e->name_len = node_len;
    return 0;
}

/* A TensorFlow op: a row as any, its node kept for the links. */
static int tf_event(parser *p, event *e) {
    p->rt.tf = true;
    const char *node = e->arg_name && e->arg_name[0] ? e->arg_name : e->name;
    if (opprof__grow((void **)&p->rt.tf_ops, &p->rt.cap_tf_ops, p->rt.n_tf_ops + 1, sizeof *p->rt.tf_ops))
        return opprof__reader_no_memory(p, "ops");
    p->rt.tf_ops[p->rt.n_tf_ops++] = (struct tf_op){(uint32_t)p->cap->n_events, opprof__hash_bytes(node, strlen(node))};
    return 0;
}

int opprof__reader_runtime_event(parser *p, event *e) {
    if (e->runtime == RT_NONE || p->ours) return 0;
    if (e->runtime == RT_TF_OP) return tf_event(p, e);
    p->rt.ort = true;
    return e->runtime == RT_ORT_SESSION ? session_event(p, e) : node_event(p, e);
}

int opprof__reader_runtime_key(parser *p, event *e, const char *k, size_t n) {
    bool count = KEY_IS(k, n, "count"), time = KEY_IS(k, n, "timeMs");
    if (!count && !time) return 1;
    int c = opprof__json_skip_ws(&p->lx);
    if (c != '-' && (c < '0' || c > '9')) return opprof__json_skip(&p->lx);
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    if (count && v.is_int && v.as_int >= 0) {
        e->layer |= LAYER_COUNT;
        e->layer_count = v.as_int;
    } else if (time && opprof__json_number_value(&v) >= 0) {
        e->layer |= LAYER_TIME;
        e->layer_ms = opprof__json_number_value(&v);
    }
    return 0;
}

int opprof__reader_runtime_row(parser *p, event *e, int64_t offset) {
    (void)offset;
    if (e->layer == LAYER_COUNT && !(e->have & HAS_NAME)) { /* {"count": RUNS} */
        p->rt.trt = true;
        p->rt.trt_runs = e->layer_count;
        return 1;
    }
    if (!(e->layer & LAYER_TIME) || !(e->have & HAS_NAME)) return 0;
    p->rt.trt = true;
    double ns = e->layer_ms * 1e6;
    int64_t total = ns < 9.2e18 ? (int64_t)(ns + 0.5) : INT64_MAX;
    int rc = opprof__capture_add_aggregate(p->cap, e->name, e->name_len, true, p->rt.trt_runs, total);
    if (!rc) snprintf(p->cap->info.device_name, sizeof p->cap->info.device_name, "CUDA");
    return rc ? opprof__json_fail_code(&p->lx, rc, "layers") : 1;
}

int opprof__reader_runtime_finish(parser *p) {
    if (p->rt.trt) p->cap->info.aggregate_runs = p->rt.trt_runs;
    if (!p->rt.ort) return 0;
    int rc = 0;
    if (p->rt.startup.len)
        rc = opprof__capture_warnf(p->cap, "ONNX Runtime's start-up, not in the totals (the runs are): %s",
                                   p->rt.startup.data);
    if (!rc && p->rt.fences)
        rc = opprof__capture_warnf(p->cap,
                                   "ONNX Runtime's fences (%llu, %.3f ms in all, before and after its kernels) "
                                   "are no rows: ORT's own tool counts them apart",
                                   (unsigned long long)p->rt.fences, (double)p->rt.fence_us / 1e3);
    return rc ? opprof__json_fail_code(&p->lx, rc, "warnings") : 0;
}

/* ---- TensorFlow: stream:all left out, device ops linked, runs as steps ---- */

/* The events of an aggregate stream's process removed (before finish: marks
 * and links move with their events). */
static int drop_aggregates(parser *p) {
    opprof_capture *c = p->cap;
    bool any = false;
    for (size_t i = 0; i < p->n_labels && !any; i++) any = p->labels[i].aggregate;
    if (!any) return 0;
    uint32_t *to = opprof__alloc((c->n_events ? c->n_events : 1) * sizeof *to);
    if (!to) return OPPROF_ENOMEM;
    size_t kept = 0, spilled_kept = 0;
    for (size_t i = 0; i < c->n_events; i++) {
        bool drop = opprof__reader_aggregate_pid(p, c->threads[c->events[i].thread].pid);
        to[i] = drop ? UINT32_MAX : (uint32_t)kept;
        if (drop) {
            p->rt.tf_aggregate++;
            continue;
        }
        if (i < c->n_spilled) c->spilled[spilled_kept++] = c->spilled[i];
        c->events[kept++] = c->events[i];
    }
    c->n_events = kept;
    c->n_spilled = spilled_kept; /* the ids that follow their events */
    size_t m = 0;
    for (size_t k = 0; k < c->n_marks; k++)
        if (c->marks[k].event < 0 || to[c->marks[k].event] != UINT32_MAX) {
            if (c->marks[k].event >= 0) c->marks[k].event = (int32_t)to[c->marks[k].event];
            c->marks[m++] = c->marks[k];
        }
    c->n_marks = m;
    size_t l = 0;
    for (size_t k = 0; k < p->n_links; k++)
        if (to[p->links[k].event] != UINT32_MAX) p->links[k].event = to[p->links[k].event], p->links[l++] = p->links[k];
    p->n_links = l;
    size_t t = 0;
    for (size_t k = 0; k < p->rt.n_tf_ops; k++)
        if (to[p->rt.tf_ops[k].event] != UINT32_MAX)
            p->rt.tf_ops[k].event = to[p->rt.tf_ops[k].event], p->rt.tf_ops[t++] = p->rt.tf_ops[k];
    p->rt.n_tf_ops = t;
    opprof__free(to);
    return 0;
}

static int by_node_then_start(const void *a, const void *b, void *capture) {
    const opprof_capture *c = capture;
    const struct tf_op *x = a, *y = b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    int64_t sx = c->events[x->event].start_ns, sy = c->events[y->event].start_ns;
    return (sx > sy) - (sx < sy);
}

static bool on_device(const opprof_capture *c, const struct tf_op *o) {
    return c->threads[c->events[o->event].thread].device;
}

/* Each device op to its node's latest host launch before it, as Kineto's
 * External id links them (trace/device_links.c). */
static int link_ops(parser *p) {
    opprof_capture *c = p->cap;
    struct tf_op *ops = p->rt.tf_ops;
    size_t n = p->rt.n_tf_ops;
    qsort_r(ops, n, sizeof *ops, by_node_then_start, c);
    for (size_t i = 0, len; i < n; i += len) {
        for (len = 1; i + len < n && ops[i + len].node == ops[i].node;) len++;
        int64_t host = -1; /* the latest host launch of the node so far, in start order */
        for (size_t k = i; k < i + len; k++) {
            if (!on_device(c, &ops[k])) {
                host = ops[k].event;
                continue;
            }
            if (host < 0) continue;
            if (opprof__grow((void **)&p->links, &p->cap_links, p->n_links + 2, sizeof *p->links)) return OPPROF_ENOMEM;
            int64_t id = INT64_MIN / 4 + host; /* an id of the reader's own, apart from any trace's */
            p->links[p->n_links++] = (opprof__link){(uint32_t)host, OPPROF__LINK_OP, false, id, -1};
            p->links[p->n_links++] = (opprof__link){ops[k].event, OPPROF__LINK_DEVICE, true, id, -1};
        }
    }
    return 0;
}

static int by_start(const void *a, const void *b, void *capture) {
    const opprof_capture *c = capture;
    int64_t sx = c->events[*(const uint32_t *)a].start_ns, sy = c->events[*(const uint32_t *)b].start_ns;
    return (sx > sy) - (sx < sy);
}

/* The runs: from each occurrence of the first host op's node to the next, a
 * step on the first op's thread; the last to the trace's end. */
static int runs_as_steps(parser *p) {
    opprof_capture *c = p->cap;
    size_t n_host = 0;
    uint32_t *host = opprof__alloc((p->rt.n_tf_ops ? p->rt.n_tf_ops : 1) * sizeof *host);
    uint64_t *node = opprof__alloc((c->n_events ? c->n_events : 1) * sizeof *node);
    if (!host || !node) {
        opprof__free(host);
        opprof__free(node);
        return OPPROF_ENOMEM;
    }
    for (size_t k = 0; k < p->rt.n_tf_ops; k++) {
        node[p->rt.tf_ops[k].event] = p->rt.tf_ops[k].node;
        if (!on_device(c, &p->rt.tf_ops[k])) host[n_host++] = p->rt.tf_ops[k].event;
    }
    qsort_r(host, n_host, sizeof *host, by_start, c);
    int64_t end = 0;
    for (size_t i = 0; i < c->n_events; i++)
        if (c->events[i].start_ns + c->events[i].duration_ns > end)
            end = c->events[i].start_ns + c->events[i].duration_ns;
    int rc = 0;
    uint32_t thread = n_host ? c->events[host[0]].thread : 0;
    for (size_t k = 0, run = 0; !rc && k < n_host; k++) {
        if (node[host[k]] != node[host[0]]) continue;
        int64_t start = c->events[host[k]].start_ns, stop = end;
        for (size_t j = k + 1; j < n_host; j++)
            if (node[host[j]] == node[host[0]]) {
                stop = c->events[host[j]].start_ns;
                break;
            }
        char name[48];
        snprintf(name, sizeof name, "ProfilerStep#%zu", run++);
        rc = opprof_capture_add_event(c, thread, name, OPPROF_KIND_STEP, start, stop - start);
    }
    opprof__free(host);
    opprof__free(node);
    return rc;
}

int opprof__reader_runtime_links(parser *p) {
    if (!p->rt.tf) return 0;
    int rc = drop_aggregates(p);
    if (!rc) rc = link_ops(p);
    if (!rc) rc = runs_as_steps(p);
    if (!rc && p->rt.tf_aggregate)
        rc = opprof__capture_warnf(p->cap,
                                   "TensorFlow's stream:all (%llu events: every device stream's ops again) "
                                   "left out, each op's device time counted once",
                                   (unsigned long long)p->rt.tf_aggregate);
    return rc ? opprof__json_fail_code(&p->lx, rc, "TensorFlow's ops") : 0;
}

int opprof__reader_runtime_join(parser *p, parser *half, size_t first_event) {
    p->rt.tf |= half->rt.tf;
    if (half->rt.n_tf_ops) {
        if (opprof__grow((void **)&p->rt.tf_ops, &p->rt.cap_tf_ops, p->rt.n_tf_ops + half->rt.n_tf_ops,
                         sizeof *p->rt.tf_ops))
            return OPPROF_ENOMEM;
        for (size_t k = 0; k < half->rt.n_tf_ops; k++) {
            struct tf_op o = half->rt.tf_ops[k];
            o.event += (uint32_t)first_event;
            p->rt.tf_ops[p->rt.n_tf_ops++] = o;
        }
    }
    p->rt.ort |= half->rt.ort;
    p->rt.trt |= half->rt.trt;
    p->rt.runs += half->rt.runs;
    p->rt.fences += half->rt.fences;
    p->rt.fence_us += half->rt.fence_us;
    if (half->rt.startup.len)
        opprof__sb_printf(&p->rt.startup, "%s%s", p->rt.startup.len ? ", " : "", half->rt.startup.data);
    return p->rt.startup.error ? OPPROF_ENOMEM : 0;
}

void opprof__reader_runtime_free(parser *p) {
    opprof__sb_free(&p->rt.startup);
    opprof__free(p->rt.tf_ops);
    p->rt.tf_ops = NULL;
    p->rt.n_tf_ops = p->rt.cap_tf_ops = 0;
}
