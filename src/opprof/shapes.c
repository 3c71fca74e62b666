/* shapes.c - input shapes: dtype names, PyTorch's printed form, FLOPs; and
 * each event's peak memory. */
#include "internal.h"

#include <string.h>

static const char *const DTYPES[] = {"", "float", "double", "int", "long", "half", "bool", "bfloat16", "int8",
                                     "uint8", "int16", "unknown"};

/* Other spellings of the same types: short ones, and PyTorch's "Input type". */
static const struct {
    const char *alias;
    unsigned code;
} DTYPE_ALIASES[] = {{"f32", 1},         {"float32", 1},   {"f64", 2},      {"float64", 2},
                     {"int32", 3},       {"i32", 3},       {"int64", 4},    {"i64", 4},
                     {"long int", 4},    {"f16", 5},       {"float16", 5},  {"c10::Half", 5},
                     {"bf16", 7},        {"c10::BFloat16", 7},              {"i8", 8},
                     {"signed char", 8}, {"u8", 9},        {"unsigned char", 9},
                     {"short int", 10},  {"i16", 10}};

const char *opprof__dtype_name(unsigned code) { return code < sizeof DTYPES / sizeof *DTYPES ? DTYPES[code] : "unknown"; }

unsigned opprof__dtype_code(const char *name) {
    if (!name) return 0;
    if (name[0] == 'f' && strcmp(name, "float") == 0) return 1; /* the common case first */
    for (unsigned i = 1; i + 1 < sizeof DTYPES / sizeof *DTYPES; i++)
        if (strcmp(name, DTYPES[i]) == 0) return i;
    for (size_t i = 0; i < sizeof DTYPE_ALIASES / sizeof *DTYPE_ALIASES; i++)
        if (strcmp(name, DTYPE_ALIASES[i].alias) == 0) return DTYPE_ALIASES[i].code;
    return (unsigned)(sizeof DTYPES / sizeof *DTYPES) - 1;
}

void opprof_shapes_format(const opprof_shapes *s, char *buf, size_t size) {
    opprof__strbuf sb = {0};
    opprof__sb_puts(&sb, "[");
    for (int i = 0; s && i < s->n_inputs; i++) {
        opprof__sb_puts(&sb, i ? ", [" : "[");
        for (int d = 0; d < s->ndim[i]; d++) opprof__sb_printf(&sb, "%s%lld", d ? ", " : "", (long long)s->dims[i][d]);
        opprof__sb_puts(&sb, "]");
    }
    opprof__sb_puts(&sb, "]");
    snprintf(buf, size, "%s", sb.data && !sb.error ? sb.data : "[]");
    opprof__sb_free(&sb);
}

static int64_t numel(const opprof_shapes *s, int i) {
    int64_t n = 1;
    for (int d = 0; d < s->ndim[i]; d++) n *= s->dims[i][d];
    return n;
}

static const char *const FLOPS_OPS[] = {"aten::addmm", "aten::mm", "aten::bmm", "aten::add", "aten::add_", "aten::mul",
                                        "aten::mul_"};

bool opprof__counts_flops(const char *name) {
    for (size_t i = 0; i < sizeof FLOPS_OPS / sizeof *FLOPS_OPS; i++)
        if (strcmp(name, FLOPS_OPS[i]) == 0) return true;
    return false;
}

int64_t opprof_flops(const char *name, const opprof_shapes *s) {
    if (!name || !s) return 0;
    /* addmm(bias, a [M, K], b [K, N]); mm(a [M, K], b [K, N]); bmm(a [B, M, K], b [B, K, N]) */
    if (strcmp(name, "aten::addmm") == 0 && s->n_inputs >= 3 && s->ndim[1] == 2 && s->ndim[2] == 2)
        return 2 * s->dims[1][0] * s->dims[1][1] * s->dims[2][1];
    if (strcmp(name, "aten::mm") == 0 && s->n_inputs >= 2 && s->ndim[0] == 2 && s->ndim[1] == 2)
        return 2 * s->dims[0][0] * s->dims[0][1] * s->dims[1][1];
    if (strcmp(name, "aten::bmm") == 0 && s->n_inputs >= 2 && s->ndim[0] == 3 && s->ndim[1] == 3)
        return 2 * s->dims[0][0] * s->dims[0][1] * s->dims[0][2] * s->dims[1][2];
    if ((strcmp(name, "aten::add") == 0 || strcmp(name, "aten::add_") == 0 || strcmp(name, "aten::mul") == 0 ||
         strcmp(name, "aten::mul_") == 0) &&
        s->n_inputs >= 1)
        return numel(s, 0);
    return 0;
}

/* An event's base is the level when it starts (per thread, events and memory
 * events in time order); its peak is the highest total of the memory events
 * of its subtree, carried from children to parents in one backward pass:
 * O(events + memory events), however deep the nesting. */
int opprof_capture_peak_memory(const opprof_capture *c, int64_t **out_peaks) {
    if (!c || !out_peaks) return OPPROF_EINVAL;
    size_t n = c->n_events;
    int64_t *base = opprof__alloc((n ? n : 1) * sizeof *base);
    int64_t *peak = opprof__alloc((n ? n : 1) * sizeof *peak);
    if (!base || !peak) {
        opprof__dealloc(base, (n ? n : 1) * sizeof *base);
        opprof__dealloc(peak, (n ? n : 1) * sizeof *peak);
        return OPPROF_ENOMEM;
    }
    size_t j = 0;
    for (size_t i = 0; i < n;) {
        uint32_t thread = c->events[i].thread;
        while (j < c->n_mem && c->mem[j].thread < thread) j++;
        /* the level before the thread's first memory event (the CPU's memory:
         * a device's has a total of its own) */
        size_t first = j;
        while (first < c->n_mem && c->mem[first].thread == thread && c->mem[first].device_type != 0) first++;
        int64_t level = first < c->n_mem && c->mem[first].thread == thread
                            ? (int64_t)((uint64_t)c->mem[first].total_allocated - (uint64_t)c->mem[first].bytes)
                            : 0;
        for (; i < n && c->events[i].thread == thread; i++) {
            while (j < c->n_mem && c->mem[j].thread == thread && c->mem[j].ts_ns < c->events[i].start_ns) {
                if (c->mem[j].device_type == 0) level = c->mem[j].total_allocated;
                j++;
            }
            base[i] = peak[i] = level;
        }
        while (j < c->n_mem && c->mem[j].thread == thread) j++;
    }
    for (size_t k = 0; k < c->n_mem; k++) {
        int32_t o = c->mem[k].owner;
        if (o >= 0 && c->mem[k].device_type == 0 && c->mem[k].total_allocated > peak[o])
            peak[o] = c->mem[k].total_allocated;
    }
    for (size_t i = n; i-- > 0;) {
        int32_t p = c->events[i].parent;
        if (p >= 0 && !opprof__is_device(&c->events[i]) && peak[i] > peak[p]) peak[p] = peak[i];
    }
    for (size_t i = 0; i < n; i++)
        peak[i] = peak[i] > base[i] ? (int64_t)((uint64_t)peak[i] - (uint64_t)base[i]) : 0;
    opprof__dealloc(base, (n ? n : 1) * sizeof *base);
    /* hand it out as a public block (opprof_free) */
    char *block = opprof__public_string((const char *)peak, (n ? n : 1) * sizeof *peak);
    opprof__dealloc(peak, (n ? n : 1) * sizeof *peak);
    if (!block) return OPPROF_ENOMEM;
    *out_peaks = (int64_t *)(void *)block;
    return 0;
}
