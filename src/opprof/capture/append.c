/* append.c - one finished capture's contents added to another, unfinished
 * one, its times moved by an offset: the flight recorder joins the steps of
 * its ring into the capture it saves. Names, call sites, shapes, categories
 * and threads are interned again in the destination; nesting and owners are
 * left to opprof_capture_finish. */
#include "capture/capture.h"

#include <string.h>

typedef struct maps {
    uint32_t *name;   /* src name -> dst name + 1 (0: not yet) */
    uint32_t *site;   /* src site (1-based) -> dst site + 1 */
    uint32_t *thread; /* src thread -> dst thread */
} maps;

static int map_name(opprof_capture *dst, const opprof_capture *src, maps *m, uint32_t name, uint32_t *out) {
    if (!m->name[name]) {
        uint32_t id;
        const char *text = src->names[name];
        if (opprof__capture_intern(dst, text, strlen(text), &id)) return OPPROF_ENOMEM;
        m->name[name] = id + 1;
    }
    *out = m->name[name] - 1;
    return 0;
}

static int map_site(opprof_capture *dst, const opprof_capture *src, maps *m, uint32_t site, uint32_t *out) {
    if (site == 0 || site > src->n_sites) return *out = 0, 0;
    if (!m->site[site - 1]) {
        const opprof_site *s = &src->sites[site - 1];
        uint32_t shapes = 0, id;
        if (s->shapes && opprof__capture_intern_shapes(dst, &src->shapes[s->shapes - 1], &shapes)) return OPPROF_ENOMEM;
        if (opprof__capture_intern_site(dst, s->file, s->function, s->line, shapes, s->native_stack, &id))
            return OPPROF_ENOMEM;
        m->site[site - 1] = id + 1;
    }
    *out = m->site[site - 1] - 1;
    return 0;
}

static int map_threads(opprof_capture *dst, const opprof_capture *src, maps *m) {
    for (size_t i = 0; i < src->n_threads; i++) {
        const opprof_thread_info *t = &src->threads[i];
        size_t j = 0;
        while (j < dst->n_threads && (dst->threads[j].tid != t->tid || dst->threads[j].pid != t->pid)) j++;
        if (j == dst->n_threads) {
            uint32_t index;
            if (opprof_capture_add_thread(dst, t->tid, t->name, &index)) return OPPROF_ENOMEM;
            dst->threads[index] = *t;
        } else if (!dst->threads[j].name[0]) {
            memcpy(dst->threads[j].name, t->name, sizeof t->name); /* named later */
        }
        m->thread[i] = (uint32_t)j;
    }
    return 0;
}

static int append_events(opprof_capture *dst, const opprof_capture *src, maps *m, int64_t offset) {
    if (opprof__grow_pages((void **)&dst->events, &dst->cap_events, dst->n_events + src->n_events, sizeof *dst->events))
        return OPPROF_ENOMEM;
    for (size_t i = 0; i < src->n_events; i++) {
        opprof_event e = src->events[i];
        uint32_t name, site;
        if (map_name(dst, src, m, e.name, &name) || map_site(dst, src, m, e.site, &site)) return OPPROF_ENOMEM;
        uint8_t category = 0;
        if (e.category) category = opprof__capture_category_index(dst, src->names[src->category_names[e.category]]);
        e.name = name;
        e.site = site;
        e.category = category;
        e.thread = m->thread[e.thread];
        e.parent = -1;
        e.start_ns += offset;
        dst->events[dst->n_events++] = e;
    }
    return 0;
}

static int append_marks(opprof_capture *dst, const opprof_capture *src, maps *m, int64_t offset, size_t first_event) {
    if (opprof__grow_pages((void **)&dst->marks, &dst->cap_marks, dst->n_marks + src->n_marks, sizeof *dst->marks))
        return OPPROF_ENOMEM;
    for (size_t k = 0; k < src->n_marks; k++) {
        opprof_mark mk = src->marks[k];
        if (map_name(dst, src, m, mk.name, &mk.name)) return OPPROF_ENOMEM;
        if (mk.kind == OPPROF_MARK_ARG_STR && map_name(dst, src, m, mk.value.str, &mk.value.str)) return OPPROF_ENOMEM;
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
            if (map_name(dst, src, m, frames[k], &ids[k])) return OPPROF_ENOMEM;
            where[k] = UINT32_MAX;
            if (sources && sources[k] != UINT32_MAX && map_name(dst, src, m, sources[k], &where[k])) return OPPROF_ENOMEM;
        }
        int rc = opprof__capture_add_sample_ids(dst, m->thread[sm->thread], sm->ts_ns + offset, ids, sources ? where : NULL,
                                                n < 4096 ? n : 4096);
        if (rc) return rc;
    }
    for (size_t j = 0; j < src->n_off_cpu; j++) {
        const opprof_off_cpu *o = &src->off_cpu[j];
        int rc = opprof_capture_add_off_cpu(dst, m->thread[o->thread], o->start_ns + offset, o->duration_ns, o->preempted);
        if (rc) return rc;
    }
    return 0;
}

/* A warning the destination does not have yet. */
static int append_warnings(opprof_capture *dst, const opprof_capture *src) {
    for (size_t i = 0; i < src->n_warnings; i++) {
        bool seen = false;
        for (size_t j = 0; j < dst->n_warnings && !seen; j++) seen = strcmp(dst->warnings[j], src->warnings[i]) == 0;
        if (!seen && opprof_capture_add_warning(dst, src->warnings[i])) return OPPROF_ENOMEM;
    }
    return 0;
}

int opprof__capture_append(opprof_capture *dst, const opprof_capture *src, int64_t offset_ns) {
    if (!dst || !src || dst->finished || dst->n_events + src->n_events > INT32_MAX) return OPPROF_EINVAL;
    maps m = {opprof__calloc(src->n_names + 1, sizeof *m.name), opprof__calloc(src->n_sites + 1, sizeof *m.site),
              opprof__calloc(src->n_threads + 1, sizeof *m.thread)};
    size_t first_event = dst->n_events;
    int rc = !m.name || !m.site || !m.thread ? OPPROF_ENOMEM : map_threads(dst, src, &m);
    if (!rc) rc = append_events(dst, src, &m, offset_ns);
    if (!rc) rc = append_marks(dst, src, &m, offset_ns, first_event);
    if (!rc) rc = append_memory(dst, src, &m, offset_ns);
    if (!rc) rc = append_samples(dst, src, &m, offset_ns);
    if (!rc) rc = append_warnings(dst, src);
    if (!rc) dst->info.dropped_events += src->info.dropped_events; /* counts of one process: no overflow */
    if (!rc) dst->info.samples_lost += src->info.samples_lost;
    opprof__free(m.name);
    opprof__free(m.site);
    opprof__free(m.thread);
    return rc;
}

size_t opprof__capture_bytes(const opprof_capture *c) {
    size_t n = sizeof *c + c->cap_events * sizeof *c->events + c->cap_mem * sizeof *c->mem +
               c->cap_marks * sizeof *c->marks + c->cap_threads * sizeof *c->threads + c->cap_sites * sizeof *c->sites +
               c->cap_shapes * sizeof *c->shapes + c->cap_names * sizeof *c->names;
    return n + c->name_bytes + 16 * c->n_names; /* and each name's allocator header, roughly */
}
