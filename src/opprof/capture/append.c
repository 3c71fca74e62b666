/* append.c - one capture's contents added to another, unfinished one, its
 * times moved by an offset: the flight recorder joins the steps of its ring
 * into the capture it saves, and the reader joins the half of a trace that
 * its second thread read. Names, shapes, call sites and categories are
 * interned again in the destination, each in the source's order (so that a
 * trace read in two halves gives the ids it gives read whole); nesting and
 * owners are left to opprof_capture_finish. */
#include "capture/capture.h"

#include <string.h>

typedef struct maps {
    uint32_t *name;         /* src name -> dst name */
    uint32_t *site;         /* src site - 1 -> dst site (1-based; 0: unknown) */
    uint32_t *shapes;       /* src shapes - 1 -> dst shapes (1-based) */
    uint8_t category[256];  /* src category -> dst category */
    const uint32_t *thread; /* src thread -> dst thread */
} maps;

/* Every name (or the one it stands for), shape, site and category of src
 * into dst, in src's order. */
static int map_all(opprof_capture *dst, const opprof_capture *src, const char *const *names, maps *m) {
    for (size_t i = 0; i < src->n_names; i++) {
        const char *name = names && names[i] ? names[i] : src->names[i];
        if (opprof__capture_intern(dst, name, strlen(name), &m->name[i])) return OPPROF_ENOMEM;
    }
    for (size_t i = 0; i < src->n_shapes; i++)
        if (opprof__capture_intern_shapes(dst, &src->shapes[i], &m->shapes[i])) return OPPROF_ENOMEM;
    for (size_t i = 0; i < src->n_sites; i++) {
        const opprof_site *s = &src->sites[i];
        uint32_t shapes = s->shapes ? m->shapes[s->shapes - 1] : 0;
        if (opprof__capture_intern_site(dst, s->file, s->function, s->line, shapes, s->native_stack, &m->site[i]))
            return OPPROF_ENOMEM;
    }
    for (uint32_t k = 1; k <= src->n_categories; k++)
        if (opprof__capture_category_index(dst, src->names[src->category_names[k]], &m->category[k]))
            return OPPROF_ENOMEM;
    return 0;
}

/* src's threads found in dst by (pid, tid), or added: a thread named only
 * in src is named so. Hashed: a capture may hold thousands of threads. */
static uint64_t thread_hash(int64_t pid, int64_t tid) { return opprof__hash_pair((uint64_t)pid, (uint64_t)tid); }
static uint64_t thread_hash_of(const void *ctx, uint32_t item) {
    const opprof_thread_info *t = &((const opprof_capture *)ctx)->threads[item];
    return thread_hash(t->pid, t->tid);
}
static bool thread_equal(const void *ctx, uint32_t item, const void *key) {
    const opprof_thread_info *t = &((const opprof_capture *)ctx)->threads[item], *k = key;
    return t->pid == k->pid && t->tid == k->tid;
}

static int map_threads(opprof_capture *dst, const opprof_capture *src, uint32_t *thread) {
    opprof__index index = {0};
    int rc = 0;
    for (size_t i = 0; i < src->n_threads && !rc; i++) {
        const opprof_thread_info *t = &src->threads[i];
        size_t slot;
        int64_t found = opprof__index_lookup(&index, dst->n_threads, thread_hash_of, thread_equal, dst,
                                             thread_hash(t->pid, t->tid), t, &slot);
        if (found < 0) rc = OPPROF_ENOMEM;
        if (found > 0) {
            thread[i] = (uint32_t)found - 1;
            if (!dst->threads[thread[i]].name[0]) memcpy(dst->threads[thread[i]].name, t->name, sizeof t->name);
        } else if (!rc && !(rc = opprof_capture_add_thread(dst, t->tid, t->name, &thread[i]))) {
            dst->threads[thread[i]] = *t;
            index.slots[slot] = thread[i] + 1;
        }
    }
    opprof__index_free(&index);
    return rc;
}

static int append_events(opprof_capture *dst, const opprof_capture *src, maps *m, int64_t offset) {
    if (opprof__grow_pages((void **)&dst->events, &dst->cap_events, dst->n_events + src->n_events, sizeof *dst->events))
        return OPPROF_ENOMEM;
    for (size_t i = 0; i < src->n_events; i++) {
        opprof_event e = src->events[i];
        e.name = m->name[e.name];
        e.site = e.site && e.site <= src->n_sites ? m->site[e.site - 1] : 0;
        e.category = m->category[e.category];
        e.thread = m->thread[e.thread];
        e.parent = -1;
        e.start_ns += offset;
        dst->events[dst->n_events++] = e;
    }
    return 0;
}

/* The ids of src's arguments set aside, after dst's events (-1 where none). */
static int append_spilled(opprof_capture *dst, const opprof_capture *src, size_t first_event) {
    if (!src->n_spilled) return 0;
    OPPROF__ASSERT(dst->n_spilled <= first_event);
    size_t end = first_event + src->n_spilled;
    if (opprof__grow_pages((void **)&dst->spilled, &dst->cap_spilled, end, sizeof *dst->spilled)) return OPPROF_ENOMEM;
    while (dst->n_spilled < first_event) dst->spilled[dst->n_spilled++] = -1;
    memcpy(dst->spilled + first_event, src->spilled, src->n_spilled * sizeof *src->spilled);
    dst->n_spilled = end;
    return 0;
}

static int append_marks(opprof_capture *dst, const opprof_capture *src, maps *m, int64_t offset, size_t first_event) {
    if (opprof__grow_pages((void **)&dst->marks, &dst->cap_marks, dst->n_marks + src->n_marks, sizeof *dst->marks))
        return OPPROF_ENOMEM;
    for (size_t k = 0; k < src->n_marks; k++) {
        opprof_mark mk = src->marks[k];
        mk.name = m->name[mk.name];
        if (mk.kind == OPPROF_MARK_ARG_STR) mk.value.str = m->name[mk.value.str];
        mk.thread = m->thread[mk.thread];
        if (mk.event >= 0)
            mk.event += (int32_t)first_event;
        else
            mk.ts_ns += offset;
        dst->marks[dst->n_marks++] = mk;
    }
    return 0;
}

static int append_memory(opprof_capture *dst, const opprof_capture *src, maps *m, int64_t offset) {
    if (opprof__grow_pages((void **)&dst->mem, &dst->cap_mem, dst->n_mem + src->n_mem, sizeof *dst->mem))
        return OPPROF_ENOMEM;
    for (size_t j = 0; j < src->n_mem; j++) {
        opprof_memory_event me = src->mem[j];
        me.thread = m->thread[me.thread];
        me.owner = -1;
        me.ts_ns += offset;
        dst->mem[dst->n_mem++] = me;
    }
    return 0;
}

static int append_samples(opprof_capture *dst, const opprof_capture *src, maps *m, int64_t offset) {
    uint32_t ids[4096], where[4096];
    for (size_t j = 0; j < src->n_samples; j++) {
        const opprof_sample *sm = &src->samples[j];
        size_t n;
        const uint32_t *frames = opprof_capture_stack(src, sm->stack, &n);
        const uint32_t *sources = opprof_capture_stack_sources(src, sm->stack, &n);
        for (size_t k = 0; k < n && k < 4096; k++) {
            ids[k] = m->name[frames[k]];
            where[k] = sources && sources[k] != UINT32_MAX ? m->name[sources[k]] : UINT32_MAX;
        }
        int rc = opprof__capture_add_sample_ids(dst, m->thread[sm->thread], sm->ts_ns + offset, ids,
                                                sources ? where : NULL, n < 4096 ? n : 4096);
        if (rc) return rc;
    }
    for (size_t j = 0; j < src->n_off_cpu; j++) {
        const opprof_off_cpu *o = &src->off_cpu[j];
        int rc =
            opprof_capture_add_off_cpu(dst, m->thread[o->thread], o->start_ns + offset, o->duration_ns, o->preempted);
        if (rc) return rc;
    }
    return 0;
}

/* src's warnings, each that the destination does not have yet (add_warning keeps one of each). */
static int append_warnings(opprof_capture *dst, const opprof_capture *src) {
    for (size_t i = 0; i < src->n_warnings; i++)
        if (opprof_capture_add_warning(dst, src->warnings[i])) return OPPROF_ENOMEM;
    return 0;
}

int opprof__capture_append_mapped(opprof_capture *dst, const opprof_capture *src, int64_t offset_ns,
                                  const uint32_t *thread, const char *const *names) {
    if (!dst || !src || dst->finished || dst->n_events + src->n_events > INT32_MAX) return OPPROF_EINVAL;
    maps m = {.name = opprof__calloc(src->n_names + 1, sizeof *m.name),
              .site = opprof__calloc(src->n_sites + 1, sizeof *m.site),
              .shapes = opprof__calloc(src->n_shapes + 1, sizeof *m.shapes),
              .thread = thread};
    size_t first_event = dst->n_events;
    int rc = !m.name || !m.site || !m.shapes ? OPPROF_ENOMEM : map_all(dst, src, names, &m);
    if (!rc) rc = append_events(dst, src, &m, offset_ns);
    if (!rc) dst->pids_as_read |= src->pids_as_read; /* its threads' pids, as they came */
    if (!rc) rc = append_spilled(dst, src, first_event);
    if (!rc) rc = append_marks(dst, src, &m, offset_ns, first_event);
    if (!rc) rc = append_memory(dst, src, &m, offset_ns);
    if (!rc) rc = append_samples(dst, src, &m, offset_ns);
    opprof__free(m.name);
    opprof__free(m.site);
    opprof__free(m.shapes);
    return rc;
}

int opprof__capture_append(opprof_capture *dst, const opprof_capture *src, int64_t offset_ns) {
    if (!dst || !src || dst->finished) return OPPROF_EINVAL;
    uint32_t *thread = opprof__calloc(src->n_threads + 1, sizeof *thread);
    int rc = !thread ? OPPROF_ENOMEM : map_threads(dst, src, thread);
    if (!rc) rc = opprof__capture_append_mapped(dst, src, offset_ns, thread, NULL);
    if (!rc) rc = append_warnings(dst, src);
    if (!rc) dst->info.dropped_events += src->info.dropped_events; /* counts of one process: no overflow */
    if (!rc) dst->info.samples_lost += src->info.samples_lost;
    opprof__free(thread);
    return rc;
}

size_t opprof__capture_bytes(const opprof_capture *c) {
    size_t n = sizeof *c + c->cap_events * sizeof *c->events + c->cap_mem * sizeof *c->mem +
               c->cap_marks * sizeof *c->marks + c->cap_threads * sizeof *c->threads + c->cap_sites * sizeof *c->sites +
               c->cap_shapes * sizeof *c->shapes + c->cap_names * sizeof *c->names;
    return n + c->name_bytes + 16 * c->n_names; /* and each name's allocator header, roughly */
}
