/* capture.c - the capture: storage, name interning, building by hand. */
#include "internal.h"

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
    for (size_t i = 0; i < c->n_names; i++) opprof__dealloc(c->names[i], strlen(c->names[i]) + 1);
    for (size_t i = 0; i < c->n_warnings; i++)
        opprof__dealloc(c->warnings[i], strlen(c->warnings[i]) + 1);
    opprof__dealloc(c->names, c->cap_names * sizeof *c->names);
    opprof__dealloc(c->name_table, c->name_table_size * sizeof *c->name_table);
    opprof__dealloc(c->warnings, c->cap_warnings * sizeof *c->warnings);
    opprof__free_pages(c->events, c->cap_events * sizeof *c->events);
    opprof__free_pages(c->mem, c->cap_mem * sizeof *c->mem);
    opprof__dealloc(c->threads, c->cap_threads * sizeof *c->threads);
    opprof__dealloc(c, sizeof *c);
}

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static int rehash(opprof_capture *c) {
    size_t size = c->name_table_size ? c->name_table_size * 2 : 256;
    uint32_t *table = opprof__calloc(size, sizeof *table);
    if (!table) return OPPROF_ENOMEM;
    for (size_t id = 0; id < c->n_names; id++) {
        size_t i = hash_bytes(c->names[id], strlen(c->names[id])) & (size - 1);
        while (table[i]) i = (i + 1) & (size - 1);
        table[i] = (uint32_t)id + 1;
    }
    opprof__dealloc(c->name_table, c->name_table_size * sizeof *c->name_table);
    c->name_table = table;
    c->name_table_size = size;
    return 0;
}

int opprof__capture_intern(opprof_capture *c, const char *name, size_t len, uint32_t *id) {
    if ((c->n_names + 1) * 2 > c->name_table_size) {
        int rc = rehash(c);
        if (rc) return rc;
    }
    size_t mask = c->name_table_size - 1;
    for (size_t i = hash_bytes(name, len) & mask;; i = (i + 1) & mask) {
        uint32_t slot = c->name_table[i];
        if (!slot) {
            if (opprof__grow((void **)&c->names, &c->cap_names, c->n_names + 1, sizeof *c->names))
                return OPPROF_ENOMEM;
            char *copy = opprof__alloc(len + 1);
            if (!copy) return OPPROF_ENOMEM;
            memcpy(copy, name, len);
            copy[len] = '\0';
            c->names[c->n_names] = copy;
            c->name_table[i] = (uint32_t)++c->n_names;
            *id = slot = (uint32_t)c->n_names - 1;
            return 0;
        }
        const char *have = c->names[slot - 1];
        if (strncmp(have, name, len) == 0 && have[len] == '\0') {
            *id = slot - 1;
            return 0;
        }
    }
}

int opprof__capture_warnf(opprof_capture *c, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return opprof_capture_add_warning(c, buf);
}

int opprof_capture_add_warning(opprof_capture *c, const char *text) {
    if (!c || !text) return OPPROF_EINVAL;
    if (opprof__grow((void **)&c->warnings, &c->cap_warnings, c->n_warnings + 1, sizeof *c->warnings))
        return OPPROF_ENOMEM;
    char *copy = opprof__strdup(text);
    if (!copy) return OPPROF_ENOMEM;
    c->warnings[c->n_warnings++] = copy;
    return 0;
}

void opprof_capture_set_info(opprof_capture *c, const opprof_capture_info *info) {
    if (c && info) c->info = *info;
}

int opprof_capture_add_thread(opprof_capture *c, int64_t tid, const char *name, uint32_t *index) {
    if (!c || c->finished) return OPPROF_EINVAL;
    if (opprof__grow((void **)&c->threads, &c->cap_threads, c->n_threads + 1, sizeof *c->threads))
        return OPPROF_ENOMEM;
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

int opprof_capture_add_event(opprof_capture *c, uint32_t thread, const char *name, opprof_kind kind,
                             int64_t start_ns, int64_t duration_ns) {
    if (!c || !name || c->finished || thread >= c->n_threads || duration_ns < 0)
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

int opprof_capture_add_memory(opprof_capture *c, uint32_t thread, int64_t ts_ns, uint64_t addr,
                              int64_t bytes, int64_t total_allocated) {
    if (!c || c->finished || thread >= c->n_threads) return OPPROF_EINVAL;
    if (opprof__grow_pages((void **)&c->mem, &c->cap_mem, c->n_mem + 1, sizeof *c->mem))
        return OPPROF_ENOMEM;
    c->mem[c->n_mem++] = (opprof_memory_event){.ts_ns = ts_ns,
                                               .addr = addr,
                                               .bytes = bytes,
                                               .total_allocated = total_allocated,
                                               .thread = thread,
                                               .owner = -1};
    return 0;
}

/* ---- accessors ---- */

opprof_capture_info opprof_capture_get_info(const opprof_capture *c) { return c->info; }

const opprof_event *opprof_capture_events(const opprof_capture *c, size_t *count) {
    if (count) *count = c->n_events;
    return c->events;
}

const opprof_memory_event *opprof_capture_memory_events(const opprof_capture *c, size_t *count) {
    if (count) *count = c->n_mem;
    return c->mem;
}

const opprof_thread_info *opprof_capture_threads(const opprof_capture *c, size_t *count) {
    if (count) *count = c->n_threads;
    return c->threads;
}

const char *opprof_capture_name(const opprof_capture *c, uint32_t name) {
    return name < c->n_names ? c->names[name] : NULL;
}

size_t opprof_capture_name_count(const opprof_capture *c) { return c->n_names; }

const char *const *opprof_capture_warnings(const opprof_capture *c, size_t *count) {
    if (count) *count = c->n_warnings;
    return (const char *const *)c->warnings;
}
