/* reader_fields.c - one event object's fields: numbers and ids, names,
 * categories, args (shapes, call stacks, ids, opprof's own marks). */
#define _GNU_SOURCE
#include "trace/reader_state.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
static bool keep_all_args(const parser *p);
static int also_int_arg(parser *p, event *e, const char *k, size_t n, int64_t value);

/* A pid or tid written as a string that is no number: string_base - 1 for
 * the first distinct one, string_base - 2 for the next... */
int opprof__reader_string_id(parser *p, const char *text, size_t len, int64_t *out) {
    size_t slot;
    opprof__index_text key = {text, len};
    int64_t found =
        opprof__index_lookup(&p->string_index, p->n_string_ids, opprof__index_text_hash, opprof__index_text_equal,
                             p->string_ids, opprof__hash_bytes(text, len), &key, &slot);
    if (found < 0) return OPPROF_ENOMEM;
    if (found) {
        *out = p->string_base - found;
        return 0;
    }
    if (opprof__grow((void **)&p->string_ids, &p->cap_string_ids, p->n_string_ids + 1, sizeof(char *)))
        return OPPROF_ENOMEM;
    char *copy = opprof__public_string(text, len);
    if (!copy) return OPPROF_ENOMEM;
    p->string_ids[p->n_string_ids++] = copy;
    p->string_index.slots[slot] = (uint32_t)p->n_string_ids;
    *out = p->string_base - (int64_t)p->n_string_ids;
    return 0;
}

int64_t opprof__reader_string_index(const parser *p, int64_t id) {
    if (id >= p->string_base || id < p->string_base - (int64_t)p->n_string_ids) return 0;
    return p->string_base - id;
}

const char *opprof__reader_string_of(const parser *p, int64_t id) {
    int64_t k = opprof__reader_string_index(p, id);
    return k ? p->string_ids[k - 1] : NULL;
}

/* An id (pid/tid): an integer, or a string mapped to a stable negative id. */
static int parse_id(parser *p, event *e, int64_t *out, const char *field) {
    int c = opprof__json_skip_ws(&p->lx);
    if (c == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        /* "7" is thread 7 (PyTorch 1.9 writes operators' tids as strings and
         * memory events' as numbers) */
        char *end;
        errno = 0;
        long long v =
            p->lx.s_len && p->lx.s_len < 19 && p->lx.s[0] >= '0' && p->lx.s[0] <= '9' ? strtoll(p->lx.s, &end, 10) : -1;
        if (v >= 0 && !errno && end == p->lx.s + p->lx.s_len) {
            *out = v;
            return 0;
        }
        if (out == &e->pid && KEY_IS(p->lx.s, p->lx.s_len, "CPU functions")) p->legacy_pytorch = true;
        if (opprof__reader_string_id(p, p->lx.s, p->lx.s_len, out)) return opprof__reader_no_memory(p, "ids");
        return 0;
    }
    int rc = number_field(p, e, out, field, false);
    if (*out < INT64_MIN / 4) p->odd_ids = true; /* a number where a second thread's string ids are */
    return rc;
}

/* A time written as a string ("ts": "1234.5", as Hermes writes them): read
 * as the number it holds, counted for one warning and each placed for
 * check; a string that holds no number marks the event bad. */
static int string_time(parser *p, event *e, int64_t *out, const char *field) {
    int64_t offset = HERE(p);
    if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
    if (opprof__micros_to_ns(p->lx.s, p->lx.s_len, out) || !opprof__time_in_range(*out)) {
        e->bad_type = true;
        e->bad_field = field;
        return 0;
    }
    if (p->string_times++ == 0) {
        int64_t column;
        opprof__json_locate(&p->lx, offset, &p->first_string_time, &column);
    }
    opprof__reader_assumed(p, offset, false, "a time written as a string: read as the number it holds");
    return 0;
}

/* A numeric field: an integer (int_field), or microseconds kept as
 * nanoseconds (time_field); another type or an out-of-range value marks the
 * event bad (a problem for `opprof check`), and the value is skipped. */
static int number_field(parser *p, event *e, int64_t *out, const char *field, bool as_time) {
    int c = opprof__json_skip_ws(&p->lx);
    if (c == '"' && as_time) return string_time(p, e, out, field);
    if (c != '-' && (c < '0' || c > '9')) {
        e->bad_type = true;
        e->bad_field = field;
        return opprof__json_skip(&p->lx);
    }
    opprof__json_number n;
    if (opprof__json_parse_number(&p->lx, &n)) return OPPROF_EFORMAT;
    /* times within a capture's range: shifted starts plus durations never overflow */
    bool ok = as_time ? n.ns_ok && opprof__time_in_range(n.ns) : n.is_int;
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

/* "tts", "tdur": the thread clock's time (Perfetto's thread_ts, thread_dur),
 * kept for `opprof sql`; a value that is no time is left out, as Perfetto
 * does, and the event stays good. */
static int thread_time_field(parser *p, event *e, int64_t *out, int flag) {
    int c = opprof__json_skip_ws(&p->lx);
    if (!p->keep_marks || (c != '-' && (c < '0' || c > '9'))) return opprof__json_skip(&p->lx);
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    if (v.ns_ok && opprof__time_in_range(v.ns)) {
        *out = v.ns;
        e->have |= flag;
    }
    return 0;
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
    char key[64];
    size_t key_len = keep_all_args(p) ? opprof__reader_index_key(key, "Input Dims", d->input, index) : 0;
    int c = opprof__json_skip_ws(&p->lx);
    if (c != '-' && (c < '0' || c > '9')) {
        if (d->input < OPPROF_MAX_INPUTS) d->e->shapes.ndim[d->input] = 0; /* a list of tensors */
        d->list = true;
        return key_len ? opprof__reader_arg_flat(p, d->e, key, key_len) : opprof__json_skip(&p->lx);
    }
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    if (key_len && !opprof__reader_arg_number(&d->e->args, key, key_len, &v)) /* as an argument too */
        return opprof__reader_no_memory(p, "args");
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
    if (opprof__json_skip_ws(&p->lx) != '[') { /* a scalar: no dims */
        if (!keep_all_args(p)) return opprof__json_skip(&p->lx);
        char key[64];
        return opprof__reader_arg_flat(p, e, key, opprof__reader_index_key(key, "Input Dims", index, -1));
    }
    dims_ctx d = {e, index, false};
    return opprof__json_array(&p->lx, on_dim, &d);
}

static int on_input_type(opprof__json *lx, void *ctx, int index) {
    parser *p = (parser *)lx;
    event *e = ctx;
    char key[64];
    size_t key_len = keep_all_args(p) ? opprof__reader_index_key(key, "Input type", index, -1) : 0;
    if (opprof__json_skip_ws(&p->lx) != '"')
        return key_len ? opprof__reader_arg_flat(p, e, key, key_len) : opprof__json_skip(&p->lx);
    if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
    if (key_len && !opprof__reader_arg_add(&e->args, key, key_len, OPPROF_MARK_ARG_STR, p->lx.s, p->lx.s_len))
        return opprof__reader_no_memory(p, "args");
    if (index < OPPROF_MAX_INPUTS) {
        opprof__copy_text(e->shapes.dtype[index], sizeof e->shapes.dtype[index], p->lx.s, p->lx.s_len);
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
    int rc = also_int_arg(p, e, k, n, v.as_int);
    if (rc) return rc;
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

/* keep_marks on another writer's trace (`opprof sql`): its arguments kept
 * whole, as Perfetto keeps them, those whose value a field takes too. */
static bool keep_all_args(const parser *p) { return p->keep_marks && !p->ours; }

/* An integer that a field took (an id, bytes), kept as an argument too. */
static int also_int_arg(parser *p, event *e, const char *k, size_t n, int64_t value) {
    if (!keep_all_args(p)) return 0;
    event_arg *a = opprof__reader_arg_add(&e->args, k, strnlen(k, n), OPPROF_MARK_ARG_INT, NULL, 0);
    if (!a) return opprof__reader_no_memory(p, "args");
    a->i = value;
    return 0;
}

/* An integer field of args (int_field), kept as an argument too when it was one. */
static int int_arg_field(parser *p, event *e, const char *k, size_t n, int64_t *out, const char *field) {
    bool was_bad = e->bad_type;
    int rc = int_field(p, e, out, field);
    if (rc || (e->bad_type && !was_bad)) return rc;
    return also_int_arg(p, e, k, n, *out);
}

static int on_args_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
    parser *p = (parser *)lx;
    event *e = ctx;
    int runtime = opprof__reader_runtime_arg(p, e, k, n);
    if (runtime != 1) return runtime;
    if (KEY_IS(k, n, "Input Dims")) {
        if (opprof__json_skip_ws(&p->lx) != '[')
            return keep_all_args(p) ? opprof__reader_arg_flat(p, e, k, n) : opprof__json_skip(&p->lx);
        e->has_dims = true;
        return opprof__json_array(&p->lx, on_input_dims, e);
    }
    if (KEY_IS(k, n, "Input type")) {
        if (opprof__json_skip_ws(&p->lx) != '[')
            return keep_all_args(p) ? opprof__reader_arg_flat(p, e, k, n) : opprof__json_skip(&p->lx);
        e->has_types = true;
        return opprof__json_array(&p->lx, on_input_type, e);
    }
    if (KEY_IS(k, n, "Call stack")) {
        if (opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        if (keep_all_args(p) && !opprof__reader_arg_add(&e->args, k, n, OPPROF_MARK_ARG_STR, p->lx.s, p->lx.s_len))
            return opprof__reader_no_memory(p, "args");
        const char *semi = memchr(p->lx.s, ';', p->lx.s_len);
        size_t len = semi ? (size_t)(semi - p->lx.s) : p->lx.s_len;
        return copy_into(&e->frame, &e->frame_cap, p->lx.s, len) ? opprof__reader_no_memory(p, "args") : 0;
    }
    if (KEY_IS(k, n, "Bytes")) {
        e->have |= HAS_BYTES;
        return int_arg_field(p, e, k, n, &e->bytes, "args.Bytes");
    }
    if (KEY_IS(k, n, "Addr")) return int_arg_field(p, e, k, n, &e->addr, "args.Addr");
    if (KEY_IS(k, n, "External id") || KEY_IS(k, n, "external id") || KEY_IS(k, n, "correlation") ||
        KEY_IS(k, n, "Device Type") || KEY_IS(k, n, "Device Id"))
        return id_arg(p, e, k, n);
    if (KEY_IS(k, n, "Total Allocated")) {
        e->have |= HAS_TOTAL;
        return int_arg_field(p, e, k, n, &e->total, "args.Total Allocated");
    }
    if (KEY_IS(k, n, "data") && opprof__json_skip_ws(&p->lx) == '{') return opprof__reader_profile_data(p);
    if (KEY_IS(k, n, "name") || KEY_IS(k, n, "labels")) { /* of thread_name, process_labels */
        if (opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        if (copy_into(&e->arg_name, &e->arg_name_cap, p->lx.s, p->lx.s_len)) return opprof__reader_no_memory(p, "args");
        /* an operator's "name" (ggml's tensor) is also one of its arguments; a metadata event's is not used as one */
        if (KEY_IS(k, n, "name") && (p->ours || p->keep_marks) &&
            !opprof__reader_arg_add(&e->args, k, n, OPPROF_MARK_ARG_STR, p->lx.s, p->lx.s_len))
            return opprof__reader_no_memory(p, "args");
        return 0;
    }
    /* opprof's own arguments; from any writer, the parts of a parallel operator (opprof.h) */
    if (p->ours || p->keep_event_marks || KEY_IS(k, n, OPPROF_PART_OF_KEY)) /* keep_event_marks: a counter's */
        return opprof__reader_arg_flat(p, e, k, strnlen(k, n));
    return opprof__json_skip(&p->lx);
}

/* Kineto's categories: what is a CPU row, a device row, or no row. */
static cat_class classify(const char *c, size_t n, bool *mtia) {
#define CAT(lit, cls) \
    { lit, sizeof lit - 1, cls }
    static const struct {
        const char *name;
        size_t len;
        cat_class cls;
    } known[] = {CAT("cpu_op", CAT_CPU_OP),
                 CAT("Operator", CAT_CPU_OP),
                 CAT("user_annotation", CAT_USER),
                 CAT("cuda_runtime", CAT_RUNTIME),
                 CAT("cuda_driver", CAT_RUNTIME),
                 CAT("Runtime", CAT_RUNTIME),
                 CAT("mtia_runtime", CAT_RUNTIME),
                 CAT("kernel", CAT_DEVICE),
                 CAT("gpu_memcpy", CAT_DEVICE),
                 CAT("gpu_memset", CAT_DEVICE),
                 CAT("cuda_sync", CAT_DEVICE),
                 CAT("Kernel", CAT_DEVICE),
                 CAT("Memcpy", CAT_DEVICE),
                 CAT("Memset", CAT_DEVICE),
                 CAT("mtia_ccp_events", CAT_DEVICE),
                 CAT("cuda_profiler_range", CAT_DEVICE), /* CUPTI's range profiler: one per kernel, on the device */
                 CAT("gpu_user_annotation", CAT_DEVICE_ANNOTATION),
                 CAT("Trace", CAT_SPAN),
                 CAT("python_function", CAT_PYTHON)};
#undef CAT
    *mtia = n >= 4 && memcmp(c, "mtia", 4) == 0;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (known[i].len == n && known[i].name[0] == c[0] && memcmp(known[i].name, c, n) == 0) return known[i].cls;
    return CAT_OTHER;
}

/* A field that must be a string: 1 when read (p->lx.s), 0 when of another
 * type (noted in e, skipped), or the lexer's error. */
static int string_field(parser *p, event *e, const char *field) {
    if (opprof__json_skip_ws(&p->lx) != '"') {
        e->bad_type = true;
        e->bad_field = field;
        return opprof__json_skip(&p->lx); /* 0, or an error (negative) */
    }
    return opprof__json_string(&p->lx) ? OPPROF_EFORMAT : 1;
}

/* "name": kept (copied), "[memory]" noted; one holding \u0000 is refused,
 * said: names are C strings everywhere. */
static int name_field(parser *p, event *e) {
    int got = string_field(p, e, "name");
    if (got <= 0) return got;
    e->have |= HAS_NAME;
    /* only a decoded string (an escape) can hold a NUL: the lexer's plain runs stop at control bytes */
    if (p->lx.s == p->lx.str && memchr(p->lx.s, '\0', p->lx.s_len)) {
        e->bad_type = true;
        e->bad_field = "name";
        e->bad_why = "holds \\u0000, which no name can keep: the event is left out";
    }
    e->memory_name = p->lx.s_len == 8 && memcmp(p->lx.s, "[memory]", 8) == 0;
    if (copy_into(&e->name, &e->name_cap, p->lx.s, p->lx.s_len)) return opprof__reader_no_memory(p, "name");
    e->name_len = p->lx.s_len;
    return 0;
}

/* "id" and "bind_id": a number (opprof writes those), or a string: "0x1f"
 * (Chrome's), a decimal number, or else its hash; *has when there is one. */
static int id_value(parser *p, uint64_t *id, bool *has) {
    int c = opprof__json_skip_ws(&p->lx);
    if (c == '"') {
        if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
        const char *s = p->lx.s;
        size_t len = p->lx.s_len, i = 0;
        int base = len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') ? 16 : 10;
        uint64_t v = 0;
        for (i = base == 16 ? 2 : 0; i < len && i < 18; i++) {
            int d = s[i] >= '0' && s[i] <= '9'                               ? s[i] - '0'
                    : base == 16 && (s[i] | 32) >= 'a' && (s[i] | 32) <= 'f' ? (s[i] | 32) - 'a' + 10
                                                                             : -1;
            if (d < 0) break;
            v = v * (uint64_t)base + (uint64_t)d;
        }
        *id = len && i == len ? v : opprof__hash_bytes(s, len);
        *has = true;
        return 0;
    }
    if (c != '-' && (c < '0' || c > '9')) return opprof__json_skip(&p->lx);
    opprof__json_number v;
    if (opprof__json_parse_number(&p->lx, &v)) return OPPROF_EFORMAT;
    *id = v.is_int ? (uint64_t)v.as_int : 0;
    *has = v.is_int;
    return 0;
}

/* "bind_id", "flow_in", "flow_out": a flow bound to the event (v2). */
static int bound_field(parser *p, event *e, uint8_t flag) {
    if (flag == BOUND_ID) {
        bool has = false;
        int rc = id_value(p, &e->bind_id, &has);
        if (has) e->bound |= BOUND_ID;
        return rc;
    }
    if (opprof__json_skip_ws(&p->lx) == 't') e->bound |= flag;
    return opprof__json_skip(&p->lx);
}

int opprof__reader_event_key(opprof__json *lx, void *ctx, const char *k, size_t n) {
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
        if (KEY_IS(k, n, "id")) return id_value(p, &e->id, &e->has_id); /* of a flow, async or profile event */
        if (KEY_IS(k, n, "ph")) {
            int got = string_field(p, e, "ph");
            if (got <= 0) return got;
            e->have |= HAS_PH;
            e->ph = p->lx.s_len == 1 ? p->lx.s[0] : '?';
            opprof__copy_text(e->ph_text, sizeof e->ph_text, p->lx.s, p->lx.s_len);
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
        if (KEY_IS(k, n, "tts")) return thread_time_field(p, e, &e->tts, HAS_TTS);
        if (KEY_IS(k, n, "pid")) return parse_id(p, e, &e->pid, "pid");
        if (KEY_IS(k, n, "tid")) return parse_id(p, e, &e->tid, "tid");
        if (KEY_IS(k, n, "cat")) {
            if (opprof__json_skip_ws(&p->lx) != '"') return opprof__json_skip(&p->lx);
            if (opprof__json_string(&p->lx)) return OPPROF_EFORMAT;
            /* Chrome's list "user_annotation,io": the first names the kind,
             * the rest (opprof's traces) the range's own category */
            size_t first = 0; /* a category is a few bytes: no call to memchr */
            while (first < p->lx.s_len && p->lx.s[first] != ',') first++;
            const char *comma = first < p->lx.s_len ? p->lx.s + first : NULL;
            e->cat = (uint8_t)classify(p->lx.s, first, &e->mtia);
            e->runtime = opprof__reader_runtime_category(p->lx.s, first);
            if (e->cat != CAT_OTHER) p->kineto = true; /* no other writer uses Kineto's categories */
            e->category[0] = '\0';
            if (p->keep_marks && !p->ours) { /* another writer's category, whole, as Perfetto keeps it */
                opprof__copy_text(e->category, sizeof e->category, p->lx.s, p->lx.s_len);
            } else if (comma && p->ours) {
                opprof__copy_text(e->category, sizeof e->category, comma + 1, p->lx.s_len - first - 1);
            }
            return 0;
        }
        break;
    case 4:
        if (KEY_IS(k, n, "tdur")) return thread_time_field(p, e, &e->tdur, HAS_TDUR);
        if (KEY_IS(k, n, "name")) return name_field(p, e);
        if (KEY_IS(k, n, "args")) {
            if (opprof__json_skip_ws(&p->lx) != '{') return opprof__json_skip(&p->lx);
            return opprof__json_object(&p->lx, on_args_key, e);
        }
        break;
    case 7:
        if (KEY_IS(k, n, "bind_id")) return bound_field(p, e, BOUND_ID);
        if (KEY_IS(k, n, "flow_in")) return bound_field(p, e, BOUND_IN);
        break;
    case 8:
        if (KEY_IS(k, n, "flow_out")) return bound_field(p, e, BOUND_OUT);
        break;
    default: break;
    }
    int runtime = opprof__reader_runtime_key(p, e, k, n);
    if (runtime != 1) return runtime;
    return opprof__json_skip(&p->lx);
}
