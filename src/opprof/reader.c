/* reader.c - Chrome trace files to captures, streaming: the meaning of a
 * trace's values (events, phases, categories, args, Kineto's and opprof's
 * metadata) over the JSON lexer of json_lex.c, which reads the text. Each
 * event object is parsed into the few fields a capture keeps; everything
 * else is validated and skipped; checks that need the whole trace (opprof
 * check) run at the end. */
#define _GNU_SOURCE
#include "json_lex.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the parser ---- */

typedef struct xrecord { /* complete event, for the checks */
    uint32_t thread, name;
    int64_t start, end, offset, line, column;
} xrecord;

typedef struct begun { /* a "B" event waiting for its "E" */
    uint32_t thread;
    int32_t outer;         /* the one open before it on its thread, or -1 */
    uint8_t cat;        /* cat_class */
    int64_t ts, offset, line, column;
    char *name;            /* owned */
} begun;

typedef struct mrecord { /* memory event with a total, for the checks */
    int64_t ts, bytes, total, offset, line, column;
    uint32_t thread;
} mrecord;

/* Valid events that become no part of a capture, counted by kind. */
enum { UNUSED_FLOW, UNUSED_ASYNC, UNUSED_COUNTER, UNUSED_INSTANT, UNUSED_OBJECT, UNUSED_OTHER_PHASE, UNUSED_SPAN,
       UNUSED_PYTHON, UNUSED_FILTERED, UNUSED_KINDS };
static const char *const UNUSED_NAMES[UNUSED_KINDS] = {
    "flow events (s/t/f)", "async events (b/n/e, S/T/p/F)", "counter samples (C)", "instant events (i)",
    "object events (N/O/D)", "events of other phases (P/R/V/v/c)", "Kineto spans (cat Trace)",
    "Python function events (left out, as key_averages does)", "events PyTorch's key_averages leaves out by name"};

typedef struct parser {
    opprof__json lx;       /* first: a lexer callback gets its parser back from it */
    opprof_read_error *err;
    const opprof_read_options *opt;
    opprof_capture *cap;
    opprof__index thread_index; /* (pid, tid) -> the capture's thread */
    uint32_t last_thread;       /* the capture's thread + 1 of the last hit */
    char **string_ids;     /* string pids/tids ("CPU functions") */
    size_t n_string_ids, cap_string_ids;
    xrecord *xs;
    size_t n_xs, cap_xs;
    mrecord *ms;
    size_t n_ms, cap_ms;
    begun *begins;         /* "B" events not yet ended; a stack per thread through `outer` */
    size_t n_begins, cap_begins;
    int32_t *innermost;    /* capture thread -> its innermost open "B", or -1 */
    size_t cap_innermost;
    int64_t min_ts, max_ts; /* the earliest time, the latest end */
    uint64_t problems;
    opprof__link *links;   /* operators, runtime calls and device activities, by their ids */
    size_t n_links, cap_links;
    bool ours;             /* the trace names opprof_version: opprof wrote it */
    uint64_t unused[UNUSED_KINDS]; /* valid events that are no part of the capture, by kind */
} parser;

#define HERE(p) OPPROF__JSON_HERE(&(p)->lx)
#define FAIL(p, ...) opprof__json_fail_at(&(p)->lx, HERE(p), __VA_ARGS__)
#define KEY_IS(k, n, lit) ((n) == sizeof(lit) - 1 && memcmp((k), (lit), sizeof(lit) - 1) == 0)


/* ---- problems (opprof check) ---- */

static void vproblem(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, va_list ap) {
    p->problems++;
    if (!p->opt || !p->opt->on_problem) return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    opprof_trace_problem pr = {.offset = offset, .line = line, .column = column, .message = msg};
    p->opt->on_problem(p->opt->ctx, &pr);
}

/* The checks that need the whole trace (records kept for each event). */
static bool whole_checks(const parser *p) { return p->opt && p->opt->on_problem && !p->opt->events_only; }

/* A problem at an offset in the current window. */
static void problem_at(parser *p, int64_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem_at(parser *p, int64_t offset, const char *fmt, ...) {
    int64_t line = 0, column = 0;
    if (offset >= 0) opprof__json_locate(&p->lx, offset, &line, &column);
    va_list ap;
    va_start(ap, fmt);
    vproblem(p, offset, line, column, fmt, ap);
    va_end(ap);
}

/* A problem found after parsing, at a place remembered while parsing. */
static void problem_placed(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void problem_placed(parser *p, int64_t offset, int64_t line, int64_t column, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vproblem(p, offset, line, column, fmt, ap);
    va_end(ap);
}

/* ---- events ---- */

enum { HAS_TS = 1, HAS_DUR = 2, HAS_NAME = 4, HAS_PH = 8, HAS_BYTES = 16, HAS_TOTAL = 32 };

/* What an event's "cat" says it is (Kineto's categories, PyTorch 1.8 to 2.x). */
typedef enum cat_class {
    CAT_OTHER = 0,          /* no category, or one of another tool: a CPU operator */
    CAT_CPU_OP,             /* "cpu_op", "Operator" */
    CAT_USER,               /* "user_annotation" */
    CAT_RUNTIME,            /* "cuda_runtime", "cuda_driver", "Runtime", "mtia_runtime": CPU rows */
    CAT_DEVICE,             /* kernels, copies, sets, syncs on a device */
    CAT_DEVICE_ANNOTATION,  /* "gpu_user_annotation": a device row, never in totals */
    CAT_SPAN,               /* "Trace": Kineto's own span, never a row */
    CAT_PYTHON              /* "python_function": left out, as key_averages does */
} cat_class;

typedef struct event {
    char ph;
    char ph_text[8];
    uint8_t cat;        /* cat_class */
    bool mtia;          /* the category names MTIA */
    bool memory_name;   /* name == "[memory]" */
    int have;
    int64_t pid, tid;
    int64_t ts, dur;
    int64_t bytes, addr, total;
    char *name;         /* copy (owned by parser scratch) */
    size_t name_cap;
    char *arg_name;     /* args.name of "M" events */
    size_t arg_name_cap;
    bool bad_type;
    const char *bad_field;
    bool has_dims, has_types;
    opprof_shapes shapes; /* args "Input Dims" and "Input type" */
    char *frame;          /* the first frame of args "Call stack" */
    size_t frame_cap;
    int64_t ext_id, corr_id; /* args "External id" ("external id": ext_lower), "correlation"; -1 */
    bool ext_lower;
    int64_t device_type;     /* args "Device Type" of memory events (0: CPU) */
    int64_t device_id;       /* args "Device Id" (-1: none) */
    /* opprof's own traces: the arguments, ids and scopes its marks were written as */
    int n_args;
    struct {
        char key[48];
        char str[128];
        uint8_t kind; /* OPPROF_MARK_ARG_INT, _DOUBLE, _STR */
        int64_t i;
        double d;
    } args[8];
    uint64_t id;             /* "id" of flow and async events */
    char category[64];       /* opprof's traces: a range's category ("cat" after its kind) */
    char scope;              /* "s" of instants: 't', 'p', 'g' */
} event;

static int copy_into(char **dst, size_t *cap, const char *src, size_t n) {
    if (n + 1 > *cap) {
        size_t c = *cap ? *cap : 64;
        while (c < n + 1) c *= 2;
        char *s = opprof__realloc(*dst, c);
        if (!s) return OPPROF_ENOMEM;
        *dst = s;
        *cap = c;
    }
    memcpy(*dst, src, n);
    (*dst)[n] = '\0';
    return 0;
}

static int number_field(parser *p, event *e, int64_t *out, const char *field, bool as_time);

/* An id (pid/tid): an integer, or a string mapped to a stable negative id. */
static int parse_id(parser *p, event *e, int64_t *out, const char *field) {
    int c = opprof__json_skip_ws(&p->lx);
    if (c == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        /* "7" is thread 7 (PyTorch 1.9 writes operators' tids as strings and
         * memory events' as numbers) */
        char *end;
        errno = 0;
        long long v = p->lx.s_len && p->lx.s_len < 19 && p->lx.s[0] >= '0' && p->lx.s[0] <= '9' ? strtoll(p->lx.s, &end, 10) : -1;
        if (v >= 0 && !errno && end == p->lx.s + p->lx.s_len) {
            *out = v;
            return 0;
        }
        for (size_t i = 0; i < p->n_string_ids; i++)
            if (strcmp(p->string_ids[i], p->lx.s) == 0) {
                *out = -(int64_t)i - 1;
                return 0;
            }
        if (opprof__grow((void **)&p->string_ids, &p->cap_string_ids, p->n_string_ids + 1, sizeof(char *)))
            return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "ids");
        char *copy = opprof__strdup(p->lx.s);
        if (!copy) return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "ids");
        p->string_ids[p->n_string_ids++] = copy;
        *out = -(int64_t)p->n_string_ids;
        return 0;
    }
    return number_field(p, e, out, field, false);
}

/* A numeric field: an integer (int_field), or microseconds kept as
 * nanoseconds (time_field); another type or an out-of-range value marks the
 * event bad (a problem for `opprof check`), and the value is skipped. */
static int number_field(parser *p, event *e, int64_t *out, const char *field, bool as_time) {
    int c = opprof__json_skip_ws(&p->lx);
    if (c != '-' && (c < '0' || c > '9')) {
        e->bad_type = true;
        e->bad_field = field;
        return opprof__json_skip(&p->lx);
    }
    opprof__json_number n;
    if (opprof__json_parse_number(&p->lx, &n)) return OPPROF_EFORMAT;
    /* times within +-2^61 ns (73 years): shifted starts plus durations never overflow */
    bool ok = as_time ? n.ns_ok && n.ns <= (INT64_C(1) << 61) && n.ns >= -(INT64_C(1) << 61) : n.is_int;
    if (!ok) {
        e->bad_type = true;
        e->bad_field = field;
    }
    *out = as_time ? n.ns : n.as_int;
    return 0;
}

static int time_field(parser *p, event *e, int64_t *out, const char *field) {
    return number_field(p, e, out, field, true);
}

static int int_field(parser *p, event *e, int64_t *out, const char *field) {
    return number_field(p, e, out, field, false);
}


typedef struct dims_ctx {
    event *e;
    int input;
    bool list; /* the input is a list of tensors: no dims kept */
} dims_ctx;

/* "Input Dims" of PyTorch 1.8 to 2.x: a list per input, of integers for a
 * tensor; an input may also be a list of lists (a tensor list), an empty
 * list or a scalar. What is not a tensor's dims is kept as no dims, never a
 * problem: PyTorch wrote it. */
static int on_dim(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    dims_ctx *d = ctx;
    int c = opprof__json_skip_ws(&p->lx);
    if (c != '-' && (c < '0' || c > '9')) {
        if (d->input < OPPROF_MAX_INPUTS) d->e->shapes.ndim[d->input] = 0; /* a list of tensors */
        d->list = true;
        return opprof__json_skip(&p->lx);
    }
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    if (!v.is_int || d->list) return 0;
    if (d->input < OPPROF_MAX_INPUTS && index < OPPROF_MAX_INPUT_DIMS) {
        d->e->shapes.dims[d->input][index] = v.as_int;
        d->e->shapes.ndim[d->input] = index + 1;
    }
    return 0;
}

static int on_input_dims(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    event *e = ctx;
    if (index < OPPROF_MAX_INPUTS) e->shapes.n_inputs = index + 1;
    if (opprof__json_skip_ws(&p->lx) != '[') return opprof__json_skip(&p->lx); /* a scalar: no dims */
    dims_ctx d = {e, index, false};
    return opprof__json_array(&p->lx, on_dim, &d);
}

static int on_input_type(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    event *e = ctx;
    if (opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
    if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
    if (index < OPPROF_MAX_INPUTS) {
        size_t len = p->lx.s_len < sizeof e->shapes.dtype[0] - 1 ? p->lx.s_len : sizeof e->shapes.dtype[0] - 1;
        memcpy(e->shapes.dtype[index], p->lx.s, len);
        e->shapes.dtype[index][len] = '\0';
    }
    return 0;
}

/* The ids that link a device activity to the operator that launched it, and a
 * memory event's device: integers where given (another type is ignored, as
 * PyTorch ignores what it cannot use). */
static int id_arg(parser *p, event *e, const char *k, size_t n) {
    int c = opprof__json_skip_ws(&p->lx);
    if (c != '-' && (c < '0' || c > '9')) return opprof__json_skip(&p->lx);
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    if (!v.is_int) return 0;
    if (KEY_IS(k, n, "correlation"))
        e->corr_id = v.as_int;
    else if (KEY_IS(k, n, "Device Type"))
        e->device_type = v.as_int;
    else if (KEY_IS(k, n, "Device Id"))
        e->device_id = v.as_int;
    else {
        e->ext_id = v.as_int;
        e->ext_lower = k[0] == 'e';
    }
    return 0;
}

/* An argument that opprof wrote (opprof_range_arg_*, FLOPs, bytes, a
 * counter's value): kept, to become a mark of the capture. */
static int own_arg(parser *p, event *e, const char *k, size_t n) {
    int c = opprof__json_skip_ws(&p->lx);
    __typeof__(e->args[0]) *a = &e->args[e->n_args];
    if (c == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        size_t len = p->lx.s_len < sizeof a->str - 1 ? p->lx.s_len : sizeof a->str - 1;
        memcpy(a->str, p->lx.s, len);
        a->str[len] = '\0';
        a->kind = OPPROF_MARK_ARG_STR;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        opprof__json_number v;
        if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
        a->kind = v.is_int ? OPPROF_MARK_ARG_INT : OPPROF_MARK_ARG_DOUBLE;
        a->i = v.as_int;
        a->d = opprof__json_number_value(&v);
    } else {
        return opprof__json_skip(&p->lx);
    }
    memcpy(a->key, k, n);
    a->key[n] = '\0';
    e->n_args++;
    return 0;
}

static int on_args_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    event *e = ctx;
    if (KEY_IS(k, n, "Input Dims")) {
        if (opprof__json_skip_ws(&p->lx) != '[') return opprof__json_skip(&p->lx);
        e->has_dims = true;
        return opprof__json_array(&p->lx, on_input_dims, e);
    }
    if (KEY_IS(k, n, "Input type")) {
        if (opprof__json_skip_ws(&p->lx) != '[') return opprof__json_skip(&p->lx);
        e->has_types = true;
        return opprof__json_array(&p->lx, on_input_type, e);
    }
    if (KEY_IS(k, n, "Call stack")) {
        if (opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        const char *semi = memchr(p->lx.s, ';', p->lx.s_len);
        size_t len = semi ? (size_t)(semi - p->lx.s) : p->lx.s_len;
        return copy_into(&e->frame, &e->frame_cap, p->lx.s, len) ? opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "args") : 0;
    }
    if (KEY_IS(k, n, "Bytes")) {
        e->have |= HAS_BYTES;
        return int_field(p, e, &e->bytes, "args.Bytes");
    }
    if (KEY_IS(k, n, "Addr")) return int_field(p, e, &e->addr, "args.Addr");
    if (KEY_IS(k, n, "External id") || KEY_IS(k, n, "external id") || KEY_IS(k, n, "correlation") ||
        KEY_IS(k, n, "Device Type") || KEY_IS(k, n, "Device Id"))
        return id_arg(p, e, k, n);
    if (KEY_IS(k, n, "Total Allocated")) {
        e->have |= HAS_TOTAL;
        return int_field(p, e, &e->total, "args.Total Allocated");
    }
    if (KEY_IS(k, n, "name") || KEY_IS(k, n, "labels")) { /* of thread_name, process_labels */
        if (opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        return copy_into(&e->arg_name, &e->arg_name_cap, p->lx.s, p->lx.s_len) ? opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "args")
                                                                             : 0;
    }
    if (p->ours && e->n_args < (int)(sizeof e->args / sizeof *e->args) && n < sizeof e->args[0].key)
        return own_arg(p, e, k, n);
    return opprof__json_skip(&p->lx);
}

/* Kineto's categories: what is a CPU row, a device row, or no row. */
static cat_class classify(const char *c, size_t n, bool *mtia) {
#define CAT(lit, cls) {lit, sizeof lit - 1, cls}
    static const struct { const char *name; size_t len; cat_class cls; } known[] = {
        CAT("cpu_op", CAT_CPU_OP),        CAT("Operator", CAT_CPU_OP),     CAT("user_annotation", CAT_USER),
        CAT("cuda_runtime", CAT_RUNTIME),  CAT("cuda_driver", CAT_RUNTIME), CAT("Runtime", CAT_RUNTIME),
        CAT("mtia_runtime", CAT_RUNTIME),  CAT("kernel", CAT_DEVICE),       CAT("gpu_memcpy", CAT_DEVICE),
        CAT("gpu_memset", CAT_DEVICE),     CAT("cuda_sync", CAT_DEVICE),    CAT("Kernel", CAT_DEVICE),
        CAT("Memcpy", CAT_DEVICE),         CAT("Memset", CAT_DEVICE),       CAT("mtia_ccp_events", CAT_DEVICE),
        CAT("gpu_user_annotation", CAT_DEVICE_ANNOTATION),                  CAT("Trace", CAT_SPAN),
        CAT("python_function", CAT_PYTHON)};
#undef CAT
    *mtia = n >= 4 && memcmp(c, "mtia", 4) == 0;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (known[i].len == n && known[i].name[0] == c[0] && memcmp(known[i].name, c, n) == 0) return known[i].cls;
    return CAT_OTHER;
}

static int on_event_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    event *e = ctx;
    switch (n) {
    case 1:
        if (KEY_IS(k, n, "s") && opprof__json_skip_ws(&p->lx) == '"') { /* an instant's scope */
            if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
            e->scope = p->lx.s_len == 1 ? p->lx.s[0] : 't';
            return 0;
        }
        break;
    case 2:
        if (KEY_IS(k, n, "id")) { /* of a flow or async event: a number (opprof writes those) */
            int64_t id = 0;
            int c = opprof__json_skip_ws(&p->lx);
            if (c != '-' && (c < '0' || c > '9')) return opprof__json_skip(&p->lx);
            opprof__json_number v;
            if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
            if (v.is_int) id = v.as_int;
            e->id = (uint64_t)id;
            return 0;
        }
        if (KEY_IS(k, n, "ph")) {
            if (opprof__json_skip_ws(&p->lx) != '"') {
                e->bad_type = true;
                e->bad_field = "ph";
                return opprof__json_skip(&p->lx);
            }
            if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
            e->have |= HAS_PH;
            e->ph = p->lx.s_len == 1 ? p->lx.s[0] : '?';
            size_t n_ph = p->lx.s_len < sizeof e->ph_text - 1 ? p->lx.s_len : sizeof e->ph_text - 1;
            memcpy(e->ph_text, p->lx.s, n_ph);
            e->ph_text[n_ph] = '\0';
            return 0;
        }
        if (KEY_IS(k, n, "ts")) {
            e->have |= HAS_TS;
            return time_field(p, e, &e->ts, "ts");
        }
        break;
    case 3:
        if (KEY_IS(k, n, "dur")) {
            e->have |= HAS_DUR;
            return time_field(p, e, &e->dur, "dur");
        }
        if (KEY_IS(k, n, "pid")) return parse_id(p, e, &e->pid, "pid");
        if (KEY_IS(k, n, "tid")) return parse_id(p, e, &e->tid, "tid");
        if (KEY_IS(k, n, "cat")) {
            if (opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
            if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
            /* Chrome's list "user_annotation,io": the first names the kind,
             * the rest (opprof's traces) the range's own category */
            const char *comma = memchr(p->lx.s, ',', p->lx.s_len);
            size_t first = comma ? (size_t)(comma - p->lx.s) : p->lx.s_len;
            e->cat = (uint8_t)classify(p->lx.s, first, &e->mtia);
            e->category[0] = '\0';
            if (comma && p->ours) {
                size_t len = p->lx.s_len - first - 1 < sizeof e->category - 1 ? p->lx.s_len - first - 1 : sizeof e->category - 1;
                memcpy(e->category, comma + 1, len);
                e->category[len] = '\0';
            }
            return 0;
        }
        break;
    case 4:
        if (KEY_IS(k, n, "name")) {
            if (opprof__json_skip_ws(&p->lx) != '"') {
                e->bad_type = true;
                e->bad_field = "name";
                return opprof__json_skip(&p->lx);
            }
            if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
            e->have |= HAS_NAME;
            e->memory_name = p->lx.s_len == 8 && memcmp(p->lx.s, "[memory]", 8) == 0;
            return copy_into(&e->name, &e->name_cap, p->lx.s, p->lx.s_len) ? opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "name") : 0;
        }
        if (KEY_IS(k, n, "args")) {
            if (opprof__json_skip_ws(&p->lx) != '{') return opprof__json_skip(&p->lx);
            return opprof__json_object(&p->lx, on_args_key, e);
        }
        break;
    default: break;
    }
    return opprof__json_skip(&p->lx);
}

static uint64_t thread_hash(int64_t pid, int64_t tid) {
    uint64_t h = ((uint64_t)pid * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)tid * 0xC2B2AE3D27D4EB4Full);
    return h ^ (h >> 29);
}

static uint64_t thread_hash_of(const void *ctx, uint32_t item) {
    const opprof_thread_info *t = &((const opprof_capture *)ctx)->threads[item];
    return thread_hash(t->pid, t->tid);
}

static bool thread_equal(const void *ctx, uint32_t item, const void *key) {
    const opprof_thread_info *t = &((const opprof_capture *)ctx)->threads[item];
    const int64_t *k = key;
    return t->pid == k[0] && t->tid == k[1];
}

/* The capture's thread of (pid, tid), added when new: a hash table, since a
 * hostile file may name millions of threads. */
static int thread_of(parser *p, int64_t pid, int64_t tid, uint32_t *index) {
    opprof_capture *c = p->cap;
    if (p->last_thread) {
        const opprof_thread_info *last = &c->threads[p->last_thread - 1];
        if (last->pid == pid && last->tid == tid) {
            *index = p->last_thread - 1;
            return 0;
        }
    }
    if (opprof__index_reserve(&p->thread_index, c->n_threads, thread_hash_of, c))
        return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "threads");
    int64_t key[2] = {pid, tid};
    size_t k = opprof__index_probe(&p->thread_index, thread_hash(pid, tid), key, thread_equal, c);
    if (!p->thread_index.slots[k]) {
        if (c->n_threads > UINT16_MAX) return FAIL(p, "more than 65536 threads (pid, tid pairs): not supported");
        /* a tid written as a string ("stream 7") names its track until a
         * thread_name says otherwise */
        const char *label = tid < 0 && (size_t)(-tid - 1) < p->n_string_ids ? p->string_ids[-tid - 1] : "";
        int rc = opprof_capture_add_thread(c, tid, label, index);
        if (rc) return opprof__json_fail_code(&p->lx, rc, "threads");
        if (pid != 0 && c->info.pid == 0) c->info.pid = pid;
        c->threads[*index].pid = pid;
        p->thread_index.slots[k] = *index + 1;
    }
    *index = p->thread_index.slots[k] - 1;
    p->last_thread = *index + 1;
    return 0;
}

/* Add a complete event (an "X", or a "B" and its "E"); `e`, when given,
 * carries its call site and input shapes. line and column: the event's
 * place when it is before the cursor (-1: at offset). */
static int add_complete(parser *p, uint32_t thread, const char *name, uint8_t cat, int64_t ts, int64_t dur,
                        int64_t offset, int64_t line, int64_t column, event *e) {
    opprof_kind kind = cat == CAT_DEVICE              ? OPPROF_KIND_DEVICE
                       : cat == CAT_DEVICE_ANNOTATION ? OPPROF_KIND_DEVICE_ANNOTATION
                       : strncmp(name, "ProfilerStep#", 13) == 0 ? OPPROF_KIND_STEP
                       : cat == CAT_USER                        ? OPPROF_KIND_USER_ANNOTATION
                                                                : OPPROF_KIND_CPU_OP;
    int rc = opprof_capture_add_event(p->cap, thread, name, kind, ts, dur);
    if (rc) return opprof__json_fail_code(&p->lx, rc, "events");
    if (e) {
        if (kind == OPPROF_KIND_DEVICE || kind == OPPROF_KIND_DEVICE_ANNOTATION) {
            snprintf(p->cap->info.device_name, sizeof p->cap->info.device_name, "%s", e->mtia ? "MTIA" : "CUDA");
        }
        int role = kind == OPPROF_KIND_DEVICE ? OPPROF__LINK_DEVICE
                   : cat == CAT_RUNTIME       ? OPPROF__LINK_RUNTIME
                   : cat == CAT_CPU_OP || cat == CAT_OTHER ? OPPROF__LINK_OP
                                                           : -1;
        if (role >= 0 && (e->ext_id >= 0 || e->corr_id >= 0)) {
            if (opprof__grow((void **)&p->links, &p->cap_links, p->n_links + 1, sizeof *p->links))
                return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "device links");
            p->links[p->n_links++] = (opprof__link){(uint32_t)(p->cap->n_events - 1), (uint8_t)role, e->ext_lower,
                                                    (uint16_t)thread, ts, ts + dur, e->ext_id, e->corr_id};
        }
    }
    if (e && (e->has_dims || (e->frame && e->frame[0]))) {
        /* "file(line): function" */
        char *file = NULL, *function = NULL;
        unsigned long site_line = 0;
        if (e->frame && e->frame[0]) {
            char *open = strrchr(e->frame, '(');
            char *close = open ? strstr(open, "): ") : NULL;
            if (open && close) {
                *open = '\0';
                site_line = strtoul(open + 1, NULL, 10);
                file = e->frame;
                function = close + 3;
            } else {
                function = e->frame;
            }
        }
        if (e->has_dims) {
            p->cap->info.record_shapes = true;
            for (int k = 0; k < e->shapes.n_inputs; k++)
                if (!e->has_types) snprintf(e->shapes.dtype[k], sizeof e->shapes.dtype[k], "float");
        }
        if (file) p->cap->info.with_stack = true;
        if (opprof_capture_set_last_site(p->cap, file, function, (uint32_t)site_line, e->has_dims ? &e->shapes : NULL))
            return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "sites");
    }
    if (ts < p->min_ts) p->min_ts = ts;
    if (ts + dur > p->max_ts) p->max_ts = ts + dur;
    if (whole_checks(p) && kind != OPPROF_KIND_DEVICE && kind != OPPROF_KIND_DEVICE_ANNOTATION) {
        if (opprof__grow((void **)&p->xs, &p->cap_xs, p->n_xs + 1, sizeof *p->xs))
            return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "checks");
        xrecord *x = &p->xs[p->n_xs++];
        *x = (xrecord){thread, p->cap->events[p->cap->n_events - 1].name, ts, ts + dur, offset, line, column};
        if (line < 0) opprof__json_locate(&p->lx, offset, &x->line, &x->column);
    }
    return 0;
}

/* "B" and "E" events: an "E" ends the innermost "B" still open on its thread
 * (as Chrome's viewer pairs them), making one complete event. Their names
 * and categories come from the "B"; other arguments are not read. */
static int push_begin(parser *p, uint32_t thread, const event *e, int64_t offset) {
    if (opprof__grow((void **)&p->begins, &p->cap_begins, p->n_begins + 1, sizeof *p->begins))
        return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "begin events");
    size_t old_cap = p->cap_innermost;
    if (opprof__grow((void **)&p->innermost, &p->cap_innermost, (size_t)thread + 1, sizeof *p->innermost))
        return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "begin events");
    for (size_t i = old_cap; i < p->cap_innermost; i++) p->innermost[i] = -1;
    if (p->n_begins >= INT32_MAX) return FAIL(p, "more than 2^31 begin events open at once: not supported");
    size_t len = strlen(e->name);
    char *name = opprof__alloc(len + 1);
    if (!name) return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "begin events");
    memcpy(name, e->name, len + 1);
    begun *b = &p->begins[p->n_begins];
    *b = (begun){thread, p->innermost[thread], e->cat, e->ts, offset, 0, 0, name};
    opprof__json_locate(&p->lx, offset, &b->line, &b->column);
    p->innermost[thread] = (int32_t)p->n_begins++;
    return 0;
}

static int pop_begin(parser *p, uint32_t thread, int64_t ts, int64_t offset) {
    int32_t i = thread < p->cap_innermost ? p->innermost[thread] : -1;
    if (i < 0) {
        problem_at(p, offset, "end event without a begin event open on its thread");
        return 0;
    }
    begun *b = &p->begins[i];
    p->innermost[thread] = b->outer;
    int rc = 0;
    if (ts < b->ts)
        problem_at(p, offset, "end event of '%s' (line %lld) is earlier than its begin", b->name, (long long)b->line);
    else
        rc = add_complete(p, thread, b->name, b->cat, b->ts, ts - b->ts, b->offset, b->line, b->column, NULL);
    opprof__free(b->name);
    b->name = NULL;
    /* The stack's top is the last slot when threads do not interleave. */
    while (p->n_begins && !p->begins[p->n_begins - 1].name) p->n_begins--;
    return rc;
}

/* "B" events never ended: read as lasting to the trace's end, as Chrome's
 * viewer shows them ("did not finish"), and said in the capture's warnings:
 * a trace cut short by its writer is valid. */
static int unended_begins(parser *p) {
    size_t count = 0;
    const char *first = NULL;
    for (size_t i = 0; i < p->n_begins; i++) {
        begun *b = &p->begins[i];
        if (!b->name) continue;
        int64_t end = p->max_ts > b->ts ? p->max_ts : b->ts;
        int rc = add_complete(p, b->thread, b->name, b->cat, b->ts, end - b->ts, b->offset, b->line, b->column, NULL);
        if (rc) return rc;
        if (!count++) first = opprof_capture_name(p->cap, p->cap->events[p->cap->n_events - 1].name);
    }
    if (count &&
        opprof__capture_warnf(p->cap, "%zu begin event(s) never ended (first: '%s'): read as lasting to the trace's end",
                              count, first))
        return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "warnings");
    return 0;
}

static void free_begins(parser *p) {
    for (size_t i = 0; i < p->n_begins; i++)
        if (p->begins[i].name) opprof__free(p->begins[i].name);
    opprof__free(p->begins);
    opprof__free(p->innermost);
}

/* Every phase of the Trace Event Format, legacy async (S T p F) and context
 * events included: a phase opprof does not read is not a problem. */
static const char KNOWN_PHASES[] = "BEXiICbnestfPONDMVvRcSTpF()";

/* Names PyTorch's key_averages leaves out (torch/autograd/profiler.py). */
static bool filtered_name(const char *name) {
    if (name[0] != '[' && name[0] != 'p' && name[0] != 'a') return false; /* what the names below start with */
    static const char *const names[] = {"[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
                                        "profiler::_record_function_enter_new", "profiler::_record_function_exit",
                                        "aten::is_leaf", "aten::output_nr", "aten::_version"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name, names[i]) == 0) return true;
    return false;
}

/* What opprof wrote of its capture's marks, read back: an event's
 * arguments (FLOPs and bytes among them) when `event` >= 0, else the event
 * itself (a counter sample, an instant, a flow or async edge). */
static int own_marks(parser *p, event *e, uint32_t thread, int32_t of_event) {
    opprof_mark m = {.ts_ns = e->ts, .thread = thread, .event = of_event};
    const char *name = e->name, *str = NULL;
    if (of_event < 0) {
        if (e->ph == 'C') {
            if (e->args[0].kind == OPPROF_MARK_ARG_STR) return 0;
            m.kind = OPPROF_MARK_COUNTER;
            m.value.d = e->args[0].d;
        } else if (e->ph == 'i' || e->ph == 'I') {
            m.kind = OPPROF_MARK_INSTANT;
            m.value.i = e->scope == 'g' ? OPPROF_INSTANT_GLOBAL : e->scope == 'p' ? OPPROF_INSTANT_PROCESS
                                                                                   : OPPROF_INSTANT_THREAD;
        } else {
            m.kind = e->ph == 's'   ? OPPROF_MARK_FLOW_BEGIN
                     : e->ph == 'f' ? OPPROF_MARK_FLOW_END
                     : e->ph == 'b' ? OPPROF_MARK_ASYNC_BEGIN
                                    : OPPROF_MARK_ASYNC_END;
            m.value.id = e->id;
        }
        if (e->ts < p->min_ts) p->min_ts = e->ts;
        return opprof_capture_add_mark(p->cap, &m, name, NULL) ? opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "marks") : 0;
    }
    m.ts_ns = 0;
    for (int k = 0; k < e->n_args; k++) {
        name = e->args[k].key;
        m.kind = e->args[k].kind;
        m.value.i = e->args[k].i;
        str = e->args[k].str;
        if (m.kind == OPPROF_MARK_ARG_DOUBLE) m.value.d = e->args[k].d;
        if (m.kind == OPPROF_MARK_ARG_INT && (!strcmp(name, "flops") || !strcmp(name, "bytes")))
            m.kind = name[0] == 'f' ? OPPROF_MARK_FLOPS : OPPROF_MARK_BYTES;
        if (opprof_capture_add_mark(p->cap, &m, name, str)) return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "marks");
    }
    return 0;
}

static int take_complete(parser *p, event *e, int64_t offset) {
    if ((e->have & (HAS_NAME | HAS_TS | HAS_DUR)) != (HAS_NAME | HAS_TS | HAS_DUR)) {
        problem_at(p, offset, "complete event without %s", !(e->have & HAS_NAME) ? "\"name\""
                                                            : !(e->have & HAS_TS) ? "\"ts\""
                                                                                  : "\"dur\"");
        return 0;
    }
    if (e->dur < 0) {
        problem_at(p, offset, "complete event '%s' has a negative duration", e->name);
        return 0;
    }
    /* Kineto's own span and Python functions are no rows (as in PyTorch) */
    if (e->cat == CAT_SPAN || e->cat == CAT_PYTHON || filtered_name(e->name)) {
        p->unused[e->cat == CAT_SPAN ? UNUSED_SPAN : e->cat == CAT_PYTHON ? UNUSED_PYTHON : UNUSED_FILTERED]++;
        return 0;
    }
    uint32_t thread;
    if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
    if (add_complete(p, thread, e->name, e->cat, e->ts, e->dur, offset, -1, -1, e)) return OPPROF_EFORMAT;
    if (e->category[0] && opprof_capture_set_last_category(p->cap, e->category))
        return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "categories");
    return p->ours && e->n_args ? own_marks(p, e, thread, (int32_t)(p->cap->n_events - 1)) : 0;
}

/* "i"/"I": Kineto's [memory] events; opprof's own instants. */
static int take_instant(parser *p, event *e, int64_t offset) {
    uint32_t thread;
    if (!e->memory_name) {
        if (p->ours && (e->have & (HAS_NAME | HAS_TS)) == (HAS_NAME | HAS_TS)) {
            if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
            return own_marks(p, e, thread, -1);
        }
        p->unused[UNUSED_INSTANT]++;
        return 0;
    }
    if (!(e->have & HAS_TS) || !(e->have & HAS_BYTES)) {
        problem_at(p, offset, "memory event without %s", !(e->have & HAS_TS) ? "\"ts\"" : "args \"Bytes\"");
        return 0;
    }
    if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
    if (opprof_capture_add_memory(p->cap, thread, e->ts, (uint64_t)e->addr, e->bytes,
                                  (e->have & HAS_TOTAL) ? e->total : -1))
        return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "memory events");
    p->cap->mem[p->cap->n_mem - 1].device_type = (int32_t)e->device_type;
    p->cap->mem[p->cap->n_mem - 1].device_id = (int32_t)e->device_id;
    if (e->ts < p->min_ts) p->min_ts = e->ts;
    if (e->ts > p->max_ts) p->max_ts = e->ts;
    p->cap->info.profile_memory = true;
    if (whole_checks(p) && (e->have & HAS_TOTAL)) {
        if (opprof__grow((void **)&p->ms, &p->cap_ms, p->n_ms + 1, sizeof *p->ms))
            return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "checks");
        mrecord *m = &p->ms[p->n_ms++];
        *m = (mrecord){e->ts, e->bytes, e->total, offset, 0, 0, thread};
        opprof__json_locate(&p->lx, offset, &m->line, &m->column);
    }
    return 0;
}

/* "M": thread names; opprof merge's process labels ("rank K"). */
static int take_metadata(parser *p, event *e) {
    if ((e->have & HAS_NAME) && strcmp(e->name, "thread_name") == 0 && e->arg_name) {
        uint32_t thread;
        if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
        snprintf(p->cap->threads[thread].name, sizeof p->cap->threads[thread].name, "%s", e->arg_name);
    }
    if ((e->have & HAS_NAME) && strcmp(e->name, "process_labels") == 0 && e->arg_name)
        for (size_t t = 0; t < p->cap->n_threads; t++)
            if (p->cap->threads[t].pid == e->pid)
                snprintf(p->cap->threads[t].process, sizeof p->cap->threads[t].process, "%s", e->arg_name);
    return 0;
}

/* Counters, flows, async events: opprof's own become marks; others are counted. */
static int take_mark(parser *p, event *e) {
    uint32_t thread = 0;
    if (e->ph == 'C') {
        /* opprof writes its memory events again as a counter track, for Perfetto */
        if (p->ours && (e->have & HAS_NAME) && strcmp(e->name, "Allocated bytes") == 0) return 0;
        if (p->ours && (e->have & (HAS_NAME | HAS_TS)) == (HAS_NAME | HAS_TS) && e->n_args) {
            /* a counter is the process's: its first thread carries it */
            if (!p->cap->n_threads && thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
            return own_marks(p, e, thread, -1);
        }
        p->unused[UNUSED_COUNTER]++;
        return 0;
    }
    if (p->ours && (e->have & (HAS_NAME | HAS_TS)) == (HAS_NAME | HAS_TS)) {
        if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
        return own_marks(p, e, thread, -1);
    }
    p->unused[e->ph == 's' || e->ph == 'f' ? UNUSED_FLOW : UNUSED_ASYNC]++;
    return 0;
}

static int take_event(parser *p, event *e, int64_t offset) {
    if (!(e->have & HAS_PH)) {
        problem_at(p, offset, "event without \"ph\"");
        return 0;
    }
    if (e->bad_type) {
        problem_at(p, offset, "event field \"%s\" has the wrong type or is out of range", e->bad_field);
        return 0;
    }
    if ((e->have & HAS_TS) && e->ph != 'M' && e->ts > p->max_ts) p->max_ts = e->ts; /* the trace's end: its latest time */
    uint32_t thread;
    switch (e->ph) {
    case 'X': return take_complete(p, e, offset);
    case 'B':
        if ((e->have & (HAS_NAME | HAS_TS)) != (HAS_NAME | HAS_TS)) {
            problem_at(p, offset, "begin event without %s", !(e->have & HAS_NAME) ? "\"name\"" : "\"ts\"");
            return 0;
        }
        if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
        return push_begin(p, thread, e, offset);
    case 'E':
        if (!(e->have & HAS_TS)) {
            problem_at(p, offset, "end event without \"ts\"");
            return 0;
        }
        if (thread_of(p, e->pid, e->tid, &thread)) return OPPROF_EFORMAT;
        return pop_begin(p, thread, e->ts, offset);
    case 'i':
    case 'I': return take_instant(p, e, offset);
    case 'M': return take_metadata(p, e);
    case 'C':
    case 's':
    case 'f':
    case 'b':
    case 'e': return take_mark(p, e);
    default:
        if (e->ph == '?' || !strchr(KNOWN_PHASES, e->ph)) {
            problem_at(p, offset, "unknown phase \"%s\"", e->ph_text);
            return 0;
        }
        p->unused[strchr("stf", e->ph)        ? UNUSED_FLOW
                  : strchr("bneSTpF", e->ph)  ? UNUSED_ASYNC
                  : strchr("NOD", e->ph)      ? UNUSED_OBJECT
                                              : UNUSED_OTHER_PHASE]++;
        return 0;
    }
}

static int parse_events(parser *p) {
    event e;
    memset(&e, 0, sizeof e);
    int more = opprof__json_open(&p->lx, '[', ']', "an array of events");
    while (more == 1) {
        if (opprof__json_skip_ws(&p->lx) != '{') {
            more = FAIL(p, "expected an event object");
            break;
        }
        int64_t offset = HERE(p);
        e.have = 0;
        e.bad_type = false;
        e.cat = CAT_OTHER;
        e.mtia = e.memory_name = e.ext_lower = false;
        e.ext_id = e.corr_id = -1;
        e.device_type = 0;
        e.device_id = -1;
        e.n_args = 0;
        e.category[0] = '\0';
        e.id = 0;
        e.scope = 't';
        e.pid = e.tid = 0;
        e.ts = e.dur = e.bytes = e.addr = 0;
        e.total = -1;
        if (e.arg_name) e.arg_name[0] = '\0';
        if (e.frame) e.frame[0] = '\0';
        if (e.has_dims || e.has_types) memset(&e.shapes, 0, sizeof e.shapes);
        e.has_dims = e.has_types = false;
        if ((more = opprof__json_object(&p->lx, on_event_key, &e))) break;
        if (e.arg_name && !e.arg_name[0]) {
            opprof__free(e.arg_name);
            e.arg_name = NULL;
            e.arg_name_cap = 0;
        }
        if ((more = take_event(p, &e, offset))) break;
        more = opprof__json_next(&p->lx, ']', "after an event");
    }
    opprof__free(e.name);
    opprof__free(e.arg_name);
    opprof__free(e.frame);
    return more < 0 ? more : 0;
}

static int on_warning(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    (void)ctx;
    (void)index;
    if (opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
    if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
    return opprof_capture_add_warning(p->cap, p->lx.s) ? opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, "warnings") : 0;
}

/* "distributedInfo": {"backend", "rank", "world_size"} as Kineto writes it,
 * and opprof's clock alignment; other keys are skipped. */
static int on_distributed_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    opprof_rank *r = ctx;
    int c = opprof__json_skip_ws(&p->lx);
    if (KEY_IS(k, n, "backend") && c == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        snprintf(r->backend, sizeof r->backend, "%s", p->lx.s);
        return 0;
    }
    bool num = c == '-' || (c >= '0' && c <= '9');
    if (!num) return opprof__json_skip(&p->lx);
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    int64_t i = v.is_int ? v.as_int : (int64_t)opprof__json_number_value(&v);
    if (KEY_IS(k, n, "rank")) r->rank = (int32_t)i;
    if (KEY_IS(k, n, "world_size")) r->world_size = (int32_t)i;
    if (KEY_IS(k, n, "clock_offset_ns")) r->clock_offset_ns = i;
    if (KEY_IS(k, n, "clock_uncertainty_ns")) r->clock_uncertainty_ns = i;
    return 0;
}

typedef struct top {
    bool saw_events;
} top;

static int on_top_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    top *t = ctx;
    opprof_capture_info *info = &p->cap->info;
    if (KEY_IS(k, n, "traceEvents")) {
        t->saw_events = true;
        return parse_events(p);
    }
    if (KEY_IS(k, n, "opprof_version")) p->ours = true;
    int c = opprof__json_skip_ws(&p->lx);
    bool num = c == '-' || (c >= '0' && c <= '9');
    if (num && (KEY_IS(k, n, "baseTimeNanoseconds") || KEY_IS(k, n, "step_num") || KEY_IS(k, n, "dropped_events") ||
                KEY_IS(k, n, "profile_memory") || KEY_IS(k, n, "overhead_range_ns") ||
                KEY_IS(k, n, "overhead_memory_event_ns"))) {
        opprof__json_number v;
        if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
        if (KEY_IS(k, n, "baseTimeNanoseconds")) info->base_time_ns = v.is_int ? v.as_int : 0;
        if (KEY_IS(k, n, "step_num")) info->step_num = v.is_int ? v.as_int : -1;
        if (KEY_IS(k, n, "dropped_events")) info->dropped_events = v.is_int && v.as_int > 0 ? (uint64_t)v.as_int : 0;
        if (KEY_IS(k, n, "profile_memory")) info->profile_memory = opprof__json_number_value(&v) != 0;
        if (KEY_IS(k, n, "overhead_range_ns")) info->overhead_range_ns = opprof__json_number_value(&v);
        if (KEY_IS(k, n, "overhead_memory_event_ns")) info->overhead_memory_event_ns = opprof__json_number_value(&v);
        return 0;
    }
    if (KEY_IS(k, n, "warnings") && c == '[') return opprof__json_array(&p->lx, on_warning, NULL);
    if (KEY_IS(k, n, "distributedInfo") && c == '{') {
        if (opprof__json_object(&p->lx, on_distributed_key, &info->rank)) return OPPROF_EFORMAT;
        if (!info->rank.backend[0]) snprintf(info->rank.backend, sizeof info->rank.backend, "unknown");
        return 0;
    }
    return opprof__json_skip(&p->lx);
}

/* ---- checks that need the whole trace ---- */

static int xrecord_cmp(const void *a, const void *b) {
    const xrecord *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int mrecord_cmp(const void *a, const void *b) {
    const mrecord *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static void check_whole(parser *p) {
    if (!whole_checks(p)) return;
    /* Complete events that overlap without nesting, per thread. */
    if (p->n_xs > 1) qsort(p->xs, p->n_xs, sizeof *p->xs, xrecord_cmp);
    size_t *stack = NULL, depth = 0, cap = 0;
    for (size_t i = 0; i < p->n_xs; i++) {
        const xrecord *x = &p->xs[i];
        if (i && x->thread != p->xs[i - 1].thread) depth = 0;
        while (depth && p->xs[stack[depth - 1]].end <= x->start) depth--;
        if (depth && x->end > p->xs[stack[depth - 1]].end) {
            const xrecord *outer = &p->xs[stack[depth - 1]];
            problem_placed(p, x->offset, x->line, x->column,
                           "complete event '%s' overlaps '%s' (line %lld) without nesting on its thread",
                           opprof_capture_name(p->cap, x->name), opprof_capture_name(p->cap, outer->name),
                           (long long)outer->line);
            continue;
        }
        if (opprof__grow((void **)&stack, &cap, depth + 1, sizeof *stack)) break;
        stack[depth++] = i;
    }
    opprof__free(stack);
    /* Memory totals: each total = the previous total + this event's bytes. */
    if (p->n_ms > 1) qsort(p->ms, p->n_ms, sizeof *p->ms, mrecord_cmp);
    for (size_t i = 1; i < p->n_ms; i++) {
        const mrecord *a = &p->ms[i - 1], *b = &p->ms[i];
        int64_t sum;
        if (__builtin_add_overflow(a->total, b->bytes, &sum) || sum != b->total)
            problem_placed(p, b->offset, b->line, b->column,
                           "memory totals do not add up: Total Allocated %lld after %lld, but Bytes is %lld",
                           (long long)b->total, (long long)a->total, (long long)b->bytes);
    }
    if (p->cap->info.dropped_events)
        problem_at(p, -1, "%llu events were dropped when recording (over the capture's event budget)",
                   (unsigned long long)p->cap->info.dropped_events);
}

/* ---- driver ---- */

static int parse_document(parser *p) {
    int c = opprof__json_skip_ws(&p->lx);
    if (c == -2) return OPPROF_EFORMAT;
    if (c == -1) return FAIL(p, "the file is empty: not JSON");
    if (c == '[') {
        if (parse_events(p)) return OPPROF_EFORMAT;
    } else if (c == '{') {
        top t = {0};
        if (opprof__json_object(&p->lx, on_top_key, &t)) return OPPROF_EFORMAT;
        if (!t.saw_events) return opprof__json_fail_at(&p->lx, 0, "not a trace: the object has no \"traceEvents\" array");
    } else {
        return FAIL(p, "not a trace: expected '{' or '[' at the start, found '%c'", c);
    }
    c = opprof__json_skip_ws(&p->lx);
    if (c == -2) return OPPROF_EFORMAT;
    if (c != -1) return FAIL(p, "unexpected data after the end of the trace");
    return 0;
}

static void shift_times(opprof_capture *c, int64_t origin) {
    for (size_t i = 0; i < c->n_events; i++) c->events[i].start_ns -= origin;
    for (size_t j = 0; j < c->n_mem; j++) c->mem[j].ts_ns -= origin;
    for (size_t k = 0; k < c->n_marks; k++)
        if (c->marks[k].event < 0) c->marks[k].ts_ns -= origin;
    c->info.base_time_ns += origin;
}

/* The trace in the lexer, opened (open_rc: how opening went), to a capture. */
static int read_trace(parser *p, int open_rc, const opprof_read_options *options, opprof_capture **out,
                      opprof_read_error *error) {
    opprof_read_error local;
    p->err = error ? error : &local;
    memset(p->err, 0, sizeof *p->err);
    p->err->offset = -1;
    p->lx.err = p->err; /* the lexer's errors and the reader's are one */
    p->opt = options;
    p->min_ts = INT64_MAX;
    p->max_ts = INT64_MIN;
    int rc = open_rc ? open_rc : opprof_capture_new(&p->cap);
    if (rc) {
        p->err->code = rc;
        snprintf(p->err->message, sizeof p->err->message, "%s", opprof_strerror(rc));
    }
    if (!rc) {
        p->cap->info.step_num = -1;
        rc = parse_document(p);
    }
    if (!rc) rc = unended_begins(p);
    if (!rc) {
        if (p->min_ts != INT64_MAX) shift_times(p->cap, p->min_ts);
        check_whole(p);
        /* traces of other tools: PyTorch's rule merges an only child named as its parent */
        p->cap->merge_only_children = !p->ours;
        rc = opprof__link_devices(p->cap, p->links, p->n_links);
        if (rc) opprof__json_fail_code(&p->lx, rc, "device activities");
    }
    if (!rc && options && options->on_unused)
        for (int k = 0; k < UNUSED_KINDS; k++)
            if (p->unused[k]) options->on_unused(options->ctx, UNUSED_NAMES[k], p->unused[k]);
    if (!rc) {
        rc = opprof_capture_finish(p->cap);
        if (rc) opprof__json_fail_code(&p->lx, rc, "building the capture");
    }
    opprof__json_close(&p->lx);
    opprof__index_free(&p->thread_index);
    for (size_t i = 0; i < p->n_string_ids; i++) opprof__free(p->string_ids[i]);
    opprof__free(p->string_ids);
    opprof__free(p->xs);
    opprof__free(p->ms);
    opprof__free(p->links);
    free_begins(p);
    if (rc) {
        if (p->err->code == 0) {
            p->err->code = rc;
            snprintf(p->err->message, sizeof p->err->message, "%s", opprof_strerror(rc));
        }
        opprof_capture_free(p->cap);
        return p->err->code;
    }
    *out = p->cap;
    return 0;
}

int opprof_capture_read(const char *path, const opprof_read_options *options, opprof_capture **out,
                        opprof_read_error *error) {
    if (!path || !out) return OPPROF_EINVAL;
    parser p;
    memset(&p, 0, sizeof p);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc = fd < 0 ? -errno : opprof__json_open_file(&p.lx, fd, options);
    return read_trace(&p, rc, options, out, error);
}

int opprof_capture_read_buffer(const void *data, size_t len, const opprof_read_options *options,
                               opprof_capture **out, opprof_read_error *error) {
    if ((!data && len) || !out) return OPPROF_EINVAL;
    parser p;
    memset(&p, 0, sizeof p);
    int rc = opprof__json_open_buffer(&p.lx, data, len, options);
    return read_trace(&p, rc, options, out, error);
}
