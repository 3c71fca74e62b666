/* capture.c - the capture: storage, name interning, building by hand. */
#define _GNU_SOURCE
#include "capture/capture.h"

#include <string.h>

int opprof_capture_new(opprof_capture **out) {
    if (!out) return OPPROF_EINVAL;
    opprof_capture *c = opprof__calloc(1, sizeof *c);
    if (!c) return OPPROF_ENOMEM;
    c->info.step_num = -1;
    *out = c;
    return 0;
}

void opprof_capture_free(opprof_capture *c) {
    if (!c) return;
    opprof__free(c->machine);
    for (size_t i = 0; i < c->n_names; i++) opprof__free(c->names[i]);
    for (size_t i = 0; i < c->n_mangled; i++) opprof__free(c->mangled[i]);
    opprof__free(c->mangled);
    for (size_t i = 0; i < c->n_warnings; i++) opprof__free(c->warnings[i]);
    opprof__free(c->names);
    opprof__index_free(&c->name_index);
    opprof__free(c->warnings);
    opprof__index_free(&c->warning_index);
    opprof__free_pages(c->events, c->cap_events * sizeof *c->events);
    opprof__free_pages(c->mem, c->cap_mem * sizeof *c->mem);
    opprof__free_pages(c->marks, c->cap_marks * sizeof *c->marks);
    opprof__free_pages(c->spilled, c->cap_spilled * sizeof *c->spilled);
    opprof__capture_free_samples(c);
    opprof__free(c->threads);
    opprof__free(c->aggregates);
    opprof__free(c->sites);
    opprof__index_free(&c->site_index);
    opprof__free(c->shapes);
    opprof__index_free(&c->shape_index);
    opprof__free(c);
}

int opprof__capture_intern(opprof_capture *c, const char *name, size_t len, uint32_t *id) {
    opprof__index_text key = {name, len};
    size_t k;
    int64_t found = opprof__index_lookup(&c->name_index, c->n_names, opprof__index_text_hash, opprof__index_text_equal,
                                         c->names, opprof__hash_bytes(name, len), &key, &k);
    if (found) return found < 0 ? OPPROF_ENOMEM : (*id = (uint32_t)found - 1, 0);
    if (opprof__grow((void **)&c->names, &c->cap_names, c->n_names + 1, sizeof *c->names)) return OPPROF_ENOMEM;
    char *copy = opprof__alloc(len + 1);
    if (!copy) return OPPROF_ENOMEM;
    memcpy(copy, name, len);
    copy[len] = '\0';
    c->names[c->n_names] = copy;
    c->name_bytes += len + 1;
    c->name_index.slots[k] = (uint32_t)++c->n_names;
    *id = (uint32_t)c->n_names - 1;
    return 0;
}

/* C++ names demangled in place, their mangled forms kept; the names' index
 * made again from the new texts (a name demangled to another name's text
 * keeps its own id). */
int opprof__capture_demangle(opprof_capture *c) {
    bool any = false;
    for (size_t i = 0; i < c->n_names && !any; i++) any = opprof__is_mangled(c->names[i]);
    if (!any) return 0;
    if (c->mangled) return 0; /* done once: a capture is finished once */
    if (!(c->mangled = opprof__calloc(c->n_names, sizeof *c->mangled))) return OPPROF_ENOMEM;
    c->n_mangled = c->n_names;
    for (size_t i = 0; i < c->n_names; i++) {
        char *text = opprof__demangle(c->names[i]);
        if (!text) continue;
        c->name_bytes += strlen(text) - strlen(c->names[i]);
        c->mangled[i] = c->names[i];
        c->names[i] = text;
    }
    opprof__index_free(&c->name_index);
    memset(&c->name_index, 0, sizeof c->name_index);
    for (size_t i = 0; i < c->n_names; i++) {
        opprof__index_text key = {c->names[i], strlen(c->names[i])};
        size_t k;
        int64_t found = opprof__index_lookup(&c->name_index, i, opprof__index_text_hash, opprof__index_text_equal,
                                             c->names, opprof__hash_bytes(key.s, key.len), &key, &k);
        if (found < 0) return OPPROF_ENOMEM;
        if (!found) c->name_index.slots[k] = (uint32_t)i + 1;
    }
    return 0;
}

int opprof__capture_set_mangled(opprof_capture *c, const char *name, const char *mangled) {
    opprof__index_text key = {name, strlen(name)};
    size_t k;
    int64_t found = opprof__index_lookup(&c->name_index, c->n_names, opprof__index_text_hash, opprof__index_text_equal,
                                         c->names, opprof__hash_bytes(key.s, key.len), &key, &k);
    if (found <= 0) return found < 0 ? OPPROF_ENOMEM : 0; /* a name no event has: nothing to say */
    if (c->n_mangled < c->n_names) {
        char **grown = opprof__realloc(c->mangled, c->n_names * sizeof *grown);
        if (!grown) return OPPROF_ENOMEM;
        memset(grown + c->n_mangled, 0, (c->n_names - c->n_mangled) * sizeof *grown);
        c->mangled = grown;
        c->n_mangled = c->n_names;
    }
    char *copy = opprof__strdup(mangled);
    if (!copy) return OPPROF_ENOMEM;
    opprof__free(c->mangled[found - 1]);
    c->mangled[found - 1] = copy;
    return 0;
}

int opprof__capture_add_aggregate(opprof_capture *c, const char *name, size_t len, bool device, int64_t calls,
                                  int64_t total_ns) {
    uint32_t id;
    if (opprof__capture_intern(c, name, len, &id)) return OPPROF_ENOMEM;
    if (opprof__grow((void **)&c->aggregates, &c->cap_aggregates, c->n_aggregates + 1, sizeof *c->aggregates))
        return OPPROF_ENOMEM;
    c->aggregates[c->n_aggregates++] = (opprof_aggregate_row){id, device, calls, total_ns};
    return 0;
}

const opprof_aggregate_row *opprof_capture_aggregate_rows(const opprof_capture *c, size_t *count) {
    if (count) *count = c ? c->n_aggregates : 0;
    return c ? c->aggregates : NULL;
}

const char *opprof_capture_mangled_name(const opprof_capture *c, uint32_t name) {
    return c && name < c->n_mangled ? c->mangled[name] : NULL;
}

int opprof__capture_warnf(opprof_capture *c, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return opprof_capture_add_warning(c, buf);
}

/* A warning said again (a trace read back says its capture's warnings, and
 * the reader finds the same again) is kept once. */
static int add_warning_shown(opprof_capture *c, const char *text) {
    opprof__index_text key = {text, strlen(text)};
    size_t slot;
    int64_t have =
        opprof__index_lookup(&c->warning_index, c->n_warnings, opprof__index_text_hash, opprof__index_text_equal,
                             c->warnings, opprof__hash_bytes(text, key.len), &key, &slot);
    if (have < 0) return OPPROF_ENOMEM;
    if (have > 0) return 0;
    if (opprof__grow((void **)&c->warnings, &c->cap_warnings, c->n_warnings + 1, sizeof *c->warnings))
        return OPPROF_ENOMEM;
    char *copy = opprof__strdup(text);
    if (!copy) return OPPROF_ENOMEM;
    c->warnings[c->n_warnings++] = copy;
    c->warning_index.slots[slot] = (uint32_t)c->n_warnings;
    return 0;
}

/* Its control characters shown as escapes (opprof__show_controls): a
 * warning read back from a trace is printed as the trace gave it. */
int opprof_capture_add_warning(opprof_capture *c, const char *text) {
    if (!c || !text) return OPPROF_EINVAL;
    size_t size = 4 * strlen(text) + 1;
    char *shown = opprof__alloc(size);
    int rc = shown ? 0 : OPPROF_ENOMEM;
    if (shown) {
        memcpy(shown, text, strlen(text) + 1);
        opprof__show_controls(shown, size);
        rc = add_warning_shown(c, shown);
    }
    opprof__free(shown);
    if (rc == OPPROF_ENOMEM) c->warning_lost = true;
    return rc;
}

void opprof_capture_set_info(opprof_capture *c, const opprof_capture_info *info) {
    if (c && info) c->info = *info;
}

/* The producers' facts by value (OPPROF_PRODUCERS). */
static const struct {
    const char *name, *family;
} PRODUCERS[] = {
#define PRODUCER_FACTS(id, value, name, family) [value] = {name, family},
    OPPROF_PRODUCERS(PRODUCER_FACTS)
#undef PRODUCER_FACTS
};

/* A value outside the list (a newer writer's) is another trace-event writer. */
static unsigned producer_at(opprof_producer producer) {
    unsigned v = (unsigned)producer;
    return v < sizeof PRODUCERS / sizeof *PRODUCERS && PRODUCERS[v].name ? v : (unsigned)OPPROF_PRODUCER_OTHER;
}

const char *opprof_kind_category(opprof_kind kind) {
    return kind == OPPROF_KIND_CPU_OP              ? "cpu_op"
           : kind == OPPROF_KIND_DEVICE            ? "kernel"
           : kind == OPPROF_KIND_DEVICE_ANNOTATION ? "gpu_user_annotation"
                                                   : "user_annotation";
}

const char *opprof_producer_name(opprof_producer producer) { return PRODUCERS[producer_at(producer)].name; }

const char *opprof__producer_family(opprof_producer producer) { return PRODUCERS[producer_at(producer)].family; }

int opprof__producer_of_name(const char *name) {
    for (unsigned v = 0; v < sizeof PRODUCERS / sizeof *PRODUCERS; v++)
        if (PRODUCERS[v].name && !strcmp(PRODUCERS[v].name, name)) return (int)v;
    return -1;
}

int opprof_capture_add_thread(opprof_capture *c, int64_t tid, const char *name, uint32_t *index) {
    if (!c || c->finished || c->n_threads >= OPPROF_MAX_THREADS) return OPPROF_EINVAL;
    if (opprof__grow((void **)&c->threads, &c->cap_threads, c->n_threads + 1, sizeof *c->threads)) return OPPROF_ENOMEM;
    opprof_thread_info *t = &c->threads[c->n_threads];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    if (name) {
        size_t n = strlen(name);
        if (n >= sizeof t->name) n = sizeof t->name - 1;
        memcpy(t->name, name, n);
    }
    if (index) *index = (uint32_t)c->n_threads;
    c->n_threads++;
    return 0;
}

int opprof_capture_add_event(opprof_capture *c, uint32_t thread, const char *name, opprof_kind kind, int64_t start_ns,
                             int64_t duration_ns) {
    if (!c || !name || c->finished || thread >= c->n_threads || duration_ns < 0 || !opprof__time_in_range(start_ns) ||
        duration_ns > OPPROF_MAX_TIME_NS || !opprof__time_in_range(start_ns + duration_ns))
        return OPPROF_EINVAL;
    if (opprof__grow_pages((void **)&c->events, &c->cap_events, c->n_events + 1, sizeof *c->events))
        return OPPROF_ENOMEM;
    uint32_t id;
    int rc = opprof__capture_intern(c, name, strlen(name), &id);
    if (rc) return rc;
    c->events[c->n_events++] = (opprof_event){.start_ns = start_ns,
                                              .duration_ns = duration_ns,
                                              .name = id,
                                              .thread = thread,
                                              .parent = -1,
                                              .kind = (uint8_t)kind};
    return 0;
}

int opprof_capture_add_memory(opprof_capture *c, uint32_t thread, int64_t ts_ns, uint64_t addr, int64_t bytes,
                              int64_t total_allocated) {
    if (!c || c->finished || thread >= c->n_threads || !opprof__time_in_range(ts_ns)) return OPPROF_EINVAL;
    if (opprof__grow_pages((void **)&c->mem, &c->cap_mem, c->n_mem + 1, sizeof *c->mem)) return OPPROF_ENOMEM;
    c->mem[c->n_mem++] = (opprof_memory_event){.device_id = -1,
                                               .ts_ns = ts_ns,
                                               .addr = addr,
                                               .bytes = bytes,
                                               .total_allocated = total_allocated,
                                               .thread = thread,
                                               .owner = -1};
    return 0;
}

/* ---- accessors ---- */

opprof_capture_info opprof_capture_get_info(const opprof_capture *c) { return c ? c->info : (opprof_capture_info){0}; }

const opprof_event *opprof_capture_events(const opprof_capture *c, size_t *count) {
    if (count) *count = c ? c->n_events : 0;
    return c ? c->events : NULL;
}

int opprof__capture_category_index(opprof_capture *c, const char *category, uint8_t *index) {
    uint32_t id;
    *index = 0;
    if (opprof__capture_intern(c, category, strlen(category), &id)) return OPPROF_ENOMEM;
    for (uint32_t k = 1; k <= c->n_categories; k++)
        if (c->category_names[k] == id) return *index = (uint8_t)k, 0;
    if (c->n_categories >= 255) return 0;
    c->category_names[++c->n_categories] = id;
    *index = (uint8_t)c->n_categories;
    return 0;
}

const char *opprof_capture_category(const opprof_capture *c, const opprof_event *e) {
    if (!c || !e || !e->category || e->category > c->n_categories) return NULL;
    return c->names[c->category_names[e->category]];
}

int opprof_capture_set_last_category(opprof_capture *c, const char *category) {
    if (!c || !category || c->finished || !c->n_events) return OPPROF_EINVAL;
    uint8_t index;
    int rc = opprof__capture_category_index(c, category, &index);
    c->events[c->n_events - 1].category = index;
    return rc;
}

const opprof_mark *opprof_capture_marks(const opprof_capture *c, size_t *count) {
    if (count) *count = c ? c->n_marks : 0;
    return c ? c->marks : NULL;
}

int opprof_capture_add_mark(opprof_capture *c, const opprof_mark *m, const char *name, const char *str) {
    if (!c || !m || !name || c->finished || m->thread >= c->n_threads || m->kind >= OPPROF_MARK_KIND_COUNT ||
        (m->kind == OPPROF_MARK_ARG_STR && !str) || m->event >= (int64_t)c->n_events ||
        !opprof__time_in_range(m->ts_ns))
        return OPPROF_EINVAL;
    if (opprof__grow_pages((void **)&c->marks, &c->cap_marks, c->n_marks + 1, sizeof *c->marks)) return OPPROF_ENOMEM;
    opprof_mark k = *m;
    uint32_t id;
    if (opprof__capture_intern(c, name, strlen(name), &k.name)) return OPPROF_ENOMEM;
    if (m->kind == OPPROF_MARK_ARG_STR) {
        if (opprof__capture_intern(c, str, strlen(str), &id)) return OPPROF_ENOMEM;
        k.value.str = id;
    }
    c->marks[c->n_marks++] = k;
    return 0;
}

/* ---- arguments set aside (opprof_read_options.spill_args) ---- */

static int spilled_up_to(opprof_capture *c, size_t n) {
    if (n <= c->n_spilled) return 0;
    if (opprof__grow_pages((void **)&c->spilled, &c->cap_spilled, n, sizeof *c->spilled)) return OPPROF_ENOMEM;
    while (c->n_spilled < n) c->spilled[c->n_spilled++] = -1;
    return 0;
}

int opprof__capture_set_spilled(opprof_capture *c, size_t event, int64_t id) {
    OPPROF__ASSERT(event < c->n_events && id >= 0);
    if (spilled_up_to(c, event + 1)) return OPPROF_ENOMEM;
    if (c->spilled[event] < 0) {
        c->spilled[event] = id;
        return 0;
    }
    opprof_mark m = {
        .kind = OPPROF_MARK_ARG_INT, .thread = c->events[event].thread, .event = (int32_t)event, .value.i = id};
    return opprof_capture_add_mark(c, &m, OPPROF_SPILLED_ARGS_ARG, NULL);
}

int opprof__capture_cover_spilled(opprof_capture *c) { return c->spilled ? spilled_up_to(c, c->n_events) : 0; }

int64_t opprof_capture_spilled_set(const opprof_capture *c, size_t event) {
    return c && event < c->n_spilled ? c->spilled[event] : -1;
}

/* The marks that are arguments, by event: a counting sort (first[e] ..
 * first[e + 1] index `order`). Empty when there are none. */
void opprof__arg_index_free(opprof__arg_index *x) {
    opprof__free(x->first);
    opprof__free(x->order);
    *x = (opprof__arg_index){0};
}

int opprof__arg_index_build(opprof__arg_index *x, const opprof_capture *c) {
    *x = (opprof__arg_index){0};
    for (size_t k = 0; k < c->n_marks; k++) x->n_order += c->marks[k].event >= 0;
    if (!x->n_order) return 0;
    x->first = opprof__calloc(c->n_events + 2, sizeof *x->first);
    x->order = opprof__alloc(x->n_order * sizeof *x->order);
    if (!x->first || !x->order) {
        opprof__arg_index_free(x);
        return OPPROF_ENOMEM;
    }
    for (size_t k = 0; k < c->n_marks; k++)
        if (c->marks[k].event >= 0) x->first[c->marks[k].event + 2]++;
    for (size_t e = 2; e < c->n_events + 2; e++) x->first[e] += x->first[e - 1];
    for (size_t k = 0; k < c->n_marks; k++)
        if (c->marks[k].event >= 0) x->order[x->first[c->marks[k].event + 1]++] = (uint32_t)k;
    return 0;
}

const opprof_memory_event *opprof_capture_memory_events(const opprof_capture *c, size_t *count) {
    if (count) *count = c ? c->n_mem : 0;
    return c ? c->mem : NULL;
}

const opprof_thread_info *opprof_capture_threads(const opprof_capture *c, size_t *count) {
    if (count) *count = c ? c->n_threads : 0;
    return c ? c->threads : NULL;
}

const char *opprof_capture_name(const opprof_capture *c, uint32_t name) {
    return c && name < c->n_names ? c->names[name] : NULL;
}

size_t opprof_capture_name_count(const opprof_capture *c) { return c ? c->n_names : 0; }

const char *const *opprof_capture_warnings(const opprof_capture *c, size_t *count) {
    if (count) *count = c ? c->n_warnings : 0;
    return c ? (const char *const *)c->warnings : NULL;
}

/* ---- sites and shapes ---- */

static OPPROF__HASH uint64_t hash_mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001B3ull + (v >> 29); }

/* Over the used part only, a word at a time (interned shapes are zeroed past
 * it, so equal shapes are equal structs): hashing all 676 bytes a byte at a
 * time was 18 % of reading a PyTorch trace with "Input Dims". */
static uint64_t shapes_hash(const opprof_shapes *s) {
    uint64_t h = hash_mix(1469598103934665603ull, (uint64_t)s->n_inputs);
    for (int i = 0; i < s->n_inputs && i < OPPROF_MAX_INPUTS; i++) {
        h = hash_mix(h, (uint64_t)s->ndim[i]);
        for (int d = 0; d < s->ndim[i] && d < OPPROF_MAX_INPUT_DIMS; d++) h = hash_mix(h, (uint64_t)s->dims[i][d]);
        uint64_t w[2];
        memcpy(w, s->dtype[i], sizeof w);
        h = hash_mix(hash_mix(h, w[0]), w[1]);
    }
    return h ^ (h >> 31);
}

static uint64_t site_hash(const opprof_site *s) {
    uint64_t h = 1469598103934665603ull;
    h = hash_mix(h, (uintptr_t)s->file);
    h = hash_mix(h, (uintptr_t)s->function);
    h = hash_mix(h, s->line);
    h = hash_mix(h, (uintptr_t)s->native_stack);
    return hash_mix(h, s->shapes);
}

static uint64_t shapes_hash_of(const void *ctx, uint32_t item) {
    return shapes_hash(&((const opprof_capture *)ctx)->shapes[item]);
}
static bool shapes_equal(const void *ctx, uint32_t item, const void *key) {
    return memcmp(&((const opprof_capture *)ctx)->shapes[item], key, sizeof(opprof_shapes)) == 0;
}
static uint64_t site_hash_of(const void *ctx, uint32_t item) {
    return site_hash(&((const opprof_capture *)ctx)->sites[item]);
}
static bool site_equal(const void *ctx, uint32_t item, const void *key) {
    return memcmp(&((const opprof_capture *)ctx)->sites[item], key, sizeof(opprof_site)) == 0;
}

int opprof__capture_intern_shapes(opprof_capture *c, const opprof_shapes *shapes, uint32_t *index) {
    if (opprof__grow((void **)&c->shapes, &c->cap_shapes, c->n_shapes + 1, sizeof *c->shapes) ||
        opprof__index_reserve(&c->shape_index, c->n_shapes, shapes_hash_of, c))
        return OPPROF_ENOMEM;
    size_t k = opprof__index_probe(&c->shape_index, shapes_hash(shapes), shapes, shapes_equal, c);
    if (!c->shape_index.slots[k]) {
        c->shapes[c->n_shapes++] = *shapes;
        c->shape_index.slots[k] = (uint32_t)c->n_shapes;
    }
    *index = c->shape_index.slots[k]; /* 1-based, as sites' shapes */
    return 0;
}

int opprof__capture_intern_site(opprof_capture *c, const char *file, const char *function, uint32_t line,
                                uint32_t shapes, const char *native, uint32_t *site) {
    opprof_site key;
    memset(&key, 0, sizeof key);
    uint32_t id;
    if (file) {
        if (opprof__capture_intern(c, file, strlen(file), &id)) return OPPROF_ENOMEM;
        key.file = c->names[id];
    }
    if (function) {
        if (opprof__capture_intern(c, function, strlen(function), &id)) return OPPROF_ENOMEM;
        key.function = c->names[id];
    }
    if (native) {
        if (opprof__capture_intern(c, native, strlen(native), &id)) return OPPROF_ENOMEM;
        key.native_stack = c->names[id];
    }
    key.line = line;
    key.shapes = shapes;
    if (opprof__grow((void **)&c->sites, &c->cap_sites, c->n_sites + 1, sizeof *c->sites) ||
        opprof__index_reserve(&c->site_index, c->n_sites, site_hash_of, c))
        return OPPROF_ENOMEM;
    size_t k = opprof__index_probe(&c->site_index, site_hash(&key), &key, site_equal, c);
    if (!c->site_index.slots[k] && c->n_sites >= OPPROF_MAX_SITES) {
        /* an event holds 24 bits of site: past them, call sites are unknown, and said once */
        if (!c->sites_full++)
            opprof__capture_warnf(c, "more than %u distinct call sites: the events of the others have no site",
                                  OPPROF_MAX_SITES);
        *site = 0;
        return 0;
    }
    if (!c->site_index.slots[k]) {
        c->sites[c->n_sites++] = key;
        c->site_index.slots[k] = (uint32_t)c->n_sites;
    }
    *site = c->site_index.slots[k]; /* 1-based: 0 is "unknown" */
    return 0;
}

const opprof_site *opprof_capture_site(const opprof_capture *c, uint32_t site) {
    static const opprof_site unknown = {NULL, NULL, 0, 0, NULL};
    if (site == 0) return &unknown;
    return c && site <= c->n_sites ? &c->sites[site - 1] : NULL;
}

const opprof_shapes *opprof_capture_shapes(const opprof_capture *c, uint32_t shapes) {
    return c && shapes >= 1 && shapes <= c->n_shapes ? &c->shapes[shapes - 1] : NULL;
}

int opprof_capture_set_last_site(opprof_capture *c, const char *file, const char *function, uint32_t line,
                                 const opprof_shapes *shapes) {
    if (!c || c->finished || c->n_events == 0) return OPPROF_EINVAL;
    uint32_t shapes_index = 0;
    if (shapes) {
        if (shapes->n_inputs < 0 || shapes->n_inputs > OPPROF_MAX_INPUTS) return OPPROF_EINVAL;
        opprof_shapes clean;
        memset(&clean, 0, sizeof clean);
        clean.n_inputs = shapes->n_inputs;
        for (int i = 0; i < shapes->n_inputs; i++) {
            if (shapes->ndim[i] < 0 || shapes->ndim[i] > OPPROF_MAX_INPUT_DIMS) return OPPROF_EINVAL;
            clean.ndim[i] = shapes->ndim[i];
            memcpy(clean.dims[i], shapes->dims[i], (size_t)shapes->ndim[i] * sizeof(int64_t));
            memcpy(clean.dtype[i], shapes->dtype[i], strnlen(shapes->dtype[i], sizeof clean.dtype[i] - 1));
        }
        if (opprof__capture_intern_shapes(c, &clean, &shapes_index)) return OPPROF_ENOMEM;
    }
    uint32_t site;
    if (opprof__capture_intern_site(c, file, function, line, shapes_index, NULL, &site)) return OPPROF_ENOMEM;
    c->events[c->n_events - 1].site = site;
    return 0;
}

/* ---- the longest events ---- */

/* The k-th largest (0-based) of v[0, n), v reordered: a quickselect whose
 * pivots are the median of three positions drawn by an LCG (no input makes
 * it quadratic but by chance). */
static OPPROF__HASH int64_t kth_largest(int64_t *v, size_t n, size_t k) {
    uint64_t seed = 0x9E3779B97F4A7C15ull ^ n;
    size_t lo = 0, hi = n; /* the answer is in v[lo, hi) */
    while (hi - lo > 1) {
        size_t at[3];
        for (int j = 0; j < 3; j++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            at[j] = lo + (size_t)((seed >> 33) % (hi - lo));
        }
        int64_t x = v[at[0]], y = v[at[1]], z = v[at[2]];
        int64_t pivot = x > y ? (y > z ? y : x > z ? z : x) : (x > z ? x : y > z ? z : y);
        size_t big = lo, mid = lo, small = hi; /* three-way: > pivot, == pivot, < pivot */
        while (mid < small) {
            int64_t t = v[mid];
            if (t > pivot) {
                v[mid++] = v[big];
                v[big++] = t;
            } else if (t < pivot) {
                v[mid] = v[--small];
                v[small] = t;
            } else {
                mid++;
            }
        }
        if (k < big)
            hi = big;
        else if (k < mid)
            return pivot;
        else
            lo = mid;
    }
    return v[lo];
}

/* The least duration whose events are at most max: one more than the
 * (max + 1)-th longest (a bisection over durations, 30 passes over every
 * event, was a twelfth of `opprof record`'s exit). */
int64_t opprof__capture_longest_bound(const opprof_capture *c, size_t max) {
    if (c->n_events <= max) return 0;
    int64_t *d = opprof__alloc(c->n_events * sizeof *d);
    if (!d) { /* no memory for the copy: the bisection, slower, in place */
        int64_t lo = 0, hi = 0;
        for (size_t i = 0; i < c->n_events; i++)
            if (c->events[i].duration_ns > hi) hi = c->events[i].duration_ns;
        for (hi++; hi - lo > 1;) {
            int64_t mid = lo + (hi - lo) / 2, n = 0;
            for (size_t i = 0; i < c->n_events; i++) n += c->events[i].duration_ns >= mid;
            *((size_t)n <= max ? &hi : &lo) = mid;
        }
        return hi;
    }
    for (size_t i = 0; i < c->n_events; i++) d[i] = c->events[i].duration_ns;
    int64_t bound = kth_largest(d, c->n_events, max) + 1;
    opprof__free(d);
    return bound;
}

int opprof_capture_set_machine(opprof_capture *c, const opprof_machine *m) {
    if (!c || (m && (m->threads < 1 || m->threads > OPPROF_MACHINE_MAX_THREADS))) return OPPROF_EINVAL;
    if (!m) {
        opprof__free(c->machine);
        c->machine = NULL;
        return 0;
    }
    if (!c->machine && !(c->machine = opprof__alloc(sizeof *c->machine))) return OPPROF_ENOMEM;
    *c->machine = *m;
    return 0;
}

const opprof_machine *opprof_capture_machine(const opprof_capture *c) { return c ? c->machine : NULL; }

const char *opprof_capture_host_name(const opprof_capture *c) { return c && c->host_name[0] ? c->host_name : NULL; }
