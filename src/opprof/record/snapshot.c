/* snapshot.c - a capture built from the recorder's buffers: each thread's
 * ranges, memory events, marks, shapes and native stacks, in order; names
 * interned (static names by their address first), call sites symbolized
 * with dladdr, misuse turned into warnings. Buffers past the retained
 * chunks are freed as they are copied when the close handshake allows it. */
#define _GNU_SOURCE
#include "record/recorder_state.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- collection ---- */

typedef struct name_cache {
    const char **keys; /* static name pointers */
    uint32_t *ids;
    size_t size; /* power of two */
    size_t used;
} name_cache;

/* Intern a static name, looked up by its address first (call sites repeat). */
static OPPROF__HASH int intern_static(opprof_capture *c, name_cache *nc, const char *name, uint32_t *id) {
    if (nc->used * 4 >= nc->size * 3) return opprof__capture_intern(c, name, strlen(name), id);
    size_t h = ((uintptr_t)name >> 3) * 0x9E3779B97F4A7C15ull;
    for (size_t i = h & (nc->size - 1);; i = (i + 1) & (nc->size - 1)) {
        if (nc->keys[i] == name) {
            *id = nc->ids[i];
            return 0;
        }
        if (!nc->keys[i]) {
            int rc = opprof__capture_intern(c, name, strlen(name), id);
            if (rc) return rc;
            nc->keys[i] = name;
            nc->ids[i] = *id;
            nc->used++;
            return 0;
        }
    }
}

static int64_t to_ns(uint64_t ticks, uint64_t origin, double ns_per_tick) {
    if (ticks <= origin) return 0;
    return (int64_t)((double)(ticks - origin) * ns_per_tick + 0.5);
}

/* Free a chain of chunks. */
static void free_chain(chunk *ch) {
    while (ch) {
        chunk *next = ch->next;
        opprof__free_chunk(ch);
        ch = next;
    }
}

/* Keep the first g_retain_chunks chunks of a stream for the next window and
 * free the rest (only when the close handshake makes that safe). */
static void trim_stream(stream *s) {
    if (g_membarrier != 1) return;
    chunk *ch = s->head;
    for (size_t i = 1; ch && i < g_retain_chunks; i++) ch = ch->next;
    if (ch) {
        free_chain(ch->next);
        ch->next = NULL;
    }
    s->tail = NULL; /* the owner resets its cursor when it next records */
    s->at->next = s->at->limit = NULL;
}

/* Sites: (call site, shapes) pairs, looked up through a small cache. */
typedef struct site_cache {
    const opprof_srcloc *loc;
    uint32_t shapes, site;
} site_cache;

static int site_of(opprof_capture *c, site_cache *cache, const opprof_srcloc *loc, uint32_t shapes, const char *native,
                   uint32_t *site) {
    if (native) return opprof__capture_intern_site(c, loc->file, loc->function, loc->line, shapes, native, site);
    site_cache *e = &cache[(((uintptr_t)loc >> 4) ^ shapes * 31u) & 255];
    if (e->loc == loc && e->shapes == shapes && e->site) {
        *site = e->site;
        return 0;
    }
    int rc = opprof__capture_intern_site(c, loc->file, loc->function, loc->line, shapes, NULL, site);
    if (!rc) *e = (site_cache){loc, shapes, *site};
    return rc;
}

/* "symbol+0x1f (libfoo.so);..." for a native stack, with dladdr; the
 * frames up to the last one inside opprof itself are left out. */
static void native_text(const native_slot *ns, opprof__strbuf *sb) {
    Dl_info self;
    const void *self_base = dladdr((void *)(uintptr_t)native_text, &self) ? self.dli_fbase : NULL;
    uint64_t first = 0;
    for (uint64_t i = 0; i < ns->n && i < 4; i++) {
        Dl_info info;
        if (dladdr(ns->frames[i], &info) && info.dli_fbase == self_base) first = i + 1;
    }
    for (uint64_t i = first; i < ns->n; i++) {
        Dl_info info;
        const char *module = "?", *symbol = NULL;
        uintptr_t offset = (uintptr_t)ns->frames[i];
        if (dladdr(ns->frames[i], &info) && info.dli_fname) {
            const char *slash = strrchr(info.dli_fname, '/');
            module = slash ? slash + 1 : info.dli_fname;
            if (info.dli_sname) {
                symbol = info.dli_sname;
                offset = (uintptr_t)ns->frames[i] - (uintptr_t)info.dli_saddr;
            } else {
                offset = (uintptr_t)ns->frames[i] - (uintptr_t)info.dli_fbase;
            }
        }
        opprof__sb_printf(sb, "%s%s+0x%lx (%s)", i > first ? ";" : "", symbol ? symbol : "", (unsigned long)offset,
                          module);
    }
}

static int shapes_of(opprof_capture *c, const shape_slot *sh, uint32_t *index) {
    opprof_shapes s;
    memset(&s, 0, sizeof s);
    s.n_inputs = sh->n_inputs;
    int used = 0;
    for (int i = 0; i < sh->n_inputs; i++) {
        s.ndim[i] = sh->ndim[i];
        for (int d = 0; d < sh->ndim[i]; d++) s.dims[i][d] = sh->dims[used + d];
        used += sh->ndim[i];
        snprintf(s.dtype[i], sizeof s.dtype[i], "%s", opprof__dtype_name(sh->dtype[i]));
    }
    return opprof__capture_intern_shapes(c, &s, index);
}

/* The thread's marks into the capture: times in ns, arguments to their events. */
static int collect_marks(opprof_capture *c, opprof__thread *t, uint32_t thread, size_t event_base, size_t n_ranges,
                         uint64_t start, double npt) {
    size_t count = LOAD(&t->marks.at->count);
    if (!count) return 0;
    if (opprof__grow_pages((void **)&c->marks, &c->cap_marks, c->n_marks + count, sizeof *c->marks))
        return OPPROF_ENOMEM;
    stream_walk w = stream_walk_start(t->marks.head, sizeof(mark_slot));
    for (size_t i = 0; i < count; i++) {
        const mark_slot *s = stream_walk_at(&w, i, sizeof(mark_slot));
        bool of_range = opprof__mark_of_range(s->kind);
        if (of_range && s->ts >= n_ranges) continue; /* its range was dropped */
        opprof_mark k = {.ts_ns = of_range ? 0 : to_ns(s->ts, start, npt),
                         .kind = s->kind,
                         .thread = thread,
                         .event = of_range ? (int32_t)(event_base + s->ts) : -1};
        memcpy(&k.value, &s->value, sizeof k.value);
        if (opprof__capture_intern(c, s->name, strlen(s->name), &k.name)) return OPPROF_ENOMEM;
        if (s->kind == OPPROF_MARK_ARG_STR) {
            const char *str = (const char *)(uintptr_t)s->value;
            if (opprof__capture_intern(c, str, strlen(str), &k.value.str)) return OPPROF_ENOMEM;
        }
        c->marks[c->n_marks++] = k;
    }
    return 0;
}

/* A thread's memory events, in order, from its m published slots (an event
 * with its allocator's total takes two: opprof.h). Their owners are linked by
 * opprof_capture_finish from the times in nanoseconds, by the rule a trace
 * read back follows too, so that a capture and its trace agree even where a
 * clock's granularity makes times equal. */
static void collect_memory(opprof_capture *c, opprof__thread *t, uint32_t thread_index, size_t m, uint64_t start,
                           double npt) {
    stream_walk w = stream_walk_start(t->memory.head, sizeof(mem_slot));
    for (size_t i = 0; i < m; i++) {
        const mem_slot *s = stream_walk_at(&w, i, sizeof(mem_slot));
        opprof_memory_event *me = &c->mem[c->n_mem++];
        me->ts_ns = to_ns(s->ts & ~OPPROF__MEMORY_TOTAL_NEXT, start, npt);
        me->addr = s->addr;
        me->bytes = s->bytes;
        me->total_allocated = -1;
        if ((s->ts & OPPROF__MEMORY_TOTAL_NEXT) && i + 1 < m)
            me->total_allocated = ((const mem_slot *)stream_walk_at(&w, ++i, sizeof(mem_slot)))->bytes;
        me->thread = thread_index;
        me->owner = -1;
        me->device_type = 0; /* the CPU */
        me->device_id = -1;
    }
    trim_stream(&t->memory);
}

/* Where the shape and native-stack records of a thread are read from: they
 * are in the order of their ranges' sequence numbers. */
typedef struct site_cursor {
    size_t n_shapes, next_shape, n_natives, next_native;
    const chunk *shape_chunk, *native_chunk;
    opprof__strbuf native;
    site_cache cache[256];
} site_cursor;

/* The site of range number i (its call site, input shapes, native stack). */
static int site_of_range(opprof_capture *c, site_cursor *sc, const slot *s, size_t i, uint32_t *site) {
    uint32_t shapes = 0;
    int rc = 0;
    while (sc->next_shape < sc->n_shapes) {
        const shape_slot *sh = (const shape_slot *)sc->shape_chunk->data + sc->next_shape % CHUNK_SHAPES;
        if (sh->seq > i) break;
        if (sh->seq == i && (rc = shapes_of(c, sh, &shapes))) return rc;
        sc->next_shape++;
        if (sc->next_shape % CHUNK_SHAPES == 0 && sc->next_shape < sc->n_shapes)
            sc->shape_chunk = sc->shape_chunk->next;
    }
    const char *native_stack = NULL;
    while (sc->next_native < sc->n_natives) {
        const native_slot *ns = (const native_slot *)sc->native_chunk->data + sc->next_native % CHUNK_SHAPES;
        if (ns->seq > i) break;
        if (ns->seq == i) {
            sc->native.len = 0;
            native_text(ns, &sc->native);
            if (sc->native.error) return sc->native.error;
            native_stack = sc->native.data;
        }
        sc->next_native++;
        if (sc->next_native % CHUNK_SHAPES == 0 && sc->next_native < sc->n_natives)
            sc->native_chunk = sc->native_chunk->next;
    }
    return site_of(c, sc->cache, s->loc, shapes, native_stack, site);
}

/* One range as an event; an open one ends at the window's end, said but for
 * the session's step, which a stop on another thread leaves to this end. */
static int range_event(opprof_capture *c, name_cache *nc, const slot *s, uint32_t thread_index, uint64_t start,
                       uint64_t end, double npt, uint64_t *open_count, const char **open_name) {
    uint64_t e_end = LOAD_RELAXED(&s->end);
    if (e_end == 0 || e_end > end) {
        e_end = end;
        if (s->loc->kind != OPPROF_KIND_STEP && !*open_name) *open_name = s->name;
        *open_count += s->loc->kind != OPPROF_KIND_STEP;
    }
    uint32_t id;
    int rc = s->name == s->loc->name ? intern_static(c, nc, s->name, &id)
                                     : opprof__capture_intern(c, s->name, strlen(s->name), &id);
    if (rc) return rc;
    opprof_event *ev = &c->events[c->n_events++];
    ev->start_ns = to_ns(s->begin, start, npt);
    ev->duration_ns = to_ns(e_end, start, npt) - ev->start_ns;
    if (ev->duration_ns < 0) ev->duration_ns = 0;
    ev->name = id;
    ev->thread = (uint32_t)thread_index;
    ev->parent = -1;
    ev->kind = (uint8_t)s->loc->kind;
    uint8_t category = 0;
    rc = s->loc->category ? opprof__capture_category_index(c, s->loc->category, &category) : 0;
    ev->category = category;
    ev->site = 0;
    return rc;
}

static int collect_thread(opprof_capture *c, opprof__thread *t, name_cache *nc, uint64_t start, uint64_t end,
                          double npt, uint64_t *open_count, const char **open_name) {
    bool want_sites = g_window_cfg.with_stack || g_window_cfg.record_shapes || g_window_cfg.with_native_stack;
    uint32_t thread_index;
    int rc = opprof_capture_add_thread(c, t->tid, t->name, &thread_index);
    if (rc) return rc;
    c->threads[thread_index].pid = (int64_t)getpid();
    size_t n = LOAD(&t->ranges.at->count), m = LOAD(&t->memory.at->count);
    size_t event_base = c->n_events; /* this thread's range with sequence number s is event_base + s */
    rc = opprof__grow_pages((void **)&c->events, &c->cap_events, c->n_events + n, sizeof(opprof_event));
    if (!rc) rc = opprof__grow_pages((void **)&c->mem, &c->cap_mem, c->n_mem + m, sizeof(opprof_memory_event));
    if (rc) return rc;
    collect_memory(c, t, thread_index, m, start, npt);

    site_cursor *sc = want_sites ? opprof__calloc(1, sizeof *sc) : NULL;
    if (want_sites && !sc) return OPPROF_ENOMEM;
    if (sc) {
        sc->n_shapes = LOAD(&t->shapes.at->count);
        sc->shape_chunk = t->shapes.head;
        sc->n_natives = LOAD(&t->natives.at->count);
        sc->native_chunk = t->natives.head;
    }
    /* Ranges, chunk by chunk; chunks past the retained ones are freed as
     * soon as they are converted, so memory peaks at the capture's size. */
    bool can_free = g_membarrier == 1;
    chunk *keep_last = NULL, *ch = t->ranges.head;
    size_t chunk_no = 0, k = 0, items = ch ? chunk_items(ch, sizeof(slot)) : 0;
    for (size_t i = 0; i < n && !rc; i++, k++) {
        if (k == items) {
            chunk *next = ch->next;
            if (can_free && chunk_no >= g_retain_chunks)
                opprof__free_chunk(ch);
            else
                keep_last = ch;
            ch = next;
            chunk_no++;
            OPPROF__ASSERT(ch != NULL); /* the published count never runs past the chain */
            items = chunk_items(ch, sizeof(slot));
            k = 0;
        }
        const slot *s = (const slot *)ch->data + k;
        rc = range_event(c, nc, s, thread_index, start, end, npt, open_count, open_name);
        uint32_t site = 0;
        if (!rc && sc && !(rc = site_of_range(c, sc, s, i, &site))) c->events[c->n_events - 1].site = site;
    }
    if (sc) {
        opprof__sb_free(&sc->native);
        opprof__free(sc);
    }
    if (!rc) rc = collect_marks(c, t, thread_index, event_base, n, start, npt);
    trim_stream(&t->marks);
    trim_stream(&t->shapes);
    trim_stream(&t->natives);
    if (can_free && chunk_no >= g_retain_chunks && n) {
        /* The chain from the retained ones on has been freed up to `ch`. */
        if (keep_last) keep_last->next = NULL;
        free_chain(ch);
        if (!keep_last) t->ranges.head = NULL;
        t->ranges.tail = NULL;
        t->ranges.at->next = t->ranges.at->limit = NULL;
    } else {
        trim_stream(&t->ranges);
    }
    return rc;
}

/* A misuse in words, for a warning: which range, on which thread, when. */
typedef struct misuse_where {
    char context[300]; /* "'inner' closed when 'outer' ended, " */
    char place[160];   /* "thread 'worker-1' (tid 1234) at 12.345 us" */
} misuse_where;

static void where_of(misuse_where *w, const opprof__thread *t, int kind, uint64_t start, double npt) {
    const misuse *m = &t->first_misuse[kind];
    const char *name = m->name ? m->name : "", *other = m->other ? m->other : "";
    if (kind == MISUSE_OUT_OF_ORDER_END)
        snprintf(w->context, sizeof w->context, "'%.120s' closed when '%.120s' ended, ", name, other);
    else if (kind == MISUSE_UNMATCHED_END && *other)
        snprintf(w->context, sizeof w->context, "inside '%.120s', ", other);
    else if (*name)
        snprintf(w->context, sizeof w->context, "'%.120s', ", name);
    double us = m->ticks > start ? (double)to_ns(m->ticks, start, npt) / 1e3 : 0.0;
    snprintf(w->place, sizeof w->place, "thread '%.63s' (tid %lld) at %.3f us", t->name[0] ? t->name : "?",
             (long long)t->tid, us);
}

int opprof__recorder_snapshot(opprof_capture **out, uint64_t start, uint64_t end, opprof__sampler *sampler, int64_t t0,
                              int64_t t1) {
    opprof_capture *c;
    int rc = opprof_capture_new(&c);
    if (rc) return rc;
    double npt = opprof__ns_per_tick();
    uint64_t epoch = LOAD(&g_epoch);
    uint64_t dropped = 0, misused[MISUSE_KINDS] = {0}, open_count = 0, reentered = 0;
    const char *open_name = NULL;
    misuse_where where[MISUSE_KINDS];
    memset(where, 0, sizeof where);
    name_cache nc = {0};
    nc.size = 1024;
    nc.keys = opprof__calloc(nc.size, sizeof *nc.keys);
    nc.ids = opprof__calloc(nc.size, sizeof *nc.ids);
    if (!nc.keys || !nc.ids) rc = OPPROF_ENOMEM;

    pthread_mutex_lock(&g_threads_lock);
    /* The list is newest first; collect oldest first so the main thread leads. */
    size_t count = 0;
    for (opprof__thread *t = g_threads; t; t = t->next_all) count++;
    opprof__thread **order = rc ? NULL : opprof__calloc(count ? count : 1, sizeof *order);
    if (!rc && !order) rc = OPPROF_ENOMEM;
    if (!rc) {
        size_t i = count;
        for (opprof__thread *t = g_threads; t; t = t->next_all) order[--i] = t;
        for (i = 0; i < count && !rc; i++) {
            opprof__thread *t = order[i];
            if (LOAD(&t->epoch) != epoch) continue;
            dropped += LOAD_RELAXED(&t->dropped);
            for (int k = 0; k < MISUSE_KINDS; k++) {
                uint64_t n = LOAD_RELAXED(&t->misused[k]);
                if (!misused[k] && n) where_of(&where[k], t, k, start, npt);
                misused[k] += n;
            }
            reentered += LOAD_RELAXED(&t->reentered);
            rc = collect_thread(c, t, &nc, start, end, npt, &open_count, &open_name);
        }
    }
    pthread_mutex_unlock(&g_threads_lock);
    opprof__free(order);
    opprof__free(nc.keys);
    opprof__free(nc.ids);
    if (rc) {
        opprof_capture_free(c);
        return rc;
    }
    c->info.dropped_events = dropped + misused[MISUSE_TOO_DEEP] + reentered + LOAD_RELAXED(&g_lost);
    c->info.profile_memory = LOAD_RELAXED(&g_memory) || c->n_mem > 0;
    uint64_t foreign = LOAD_RELAXED(&g_foreign_end), inputs = LOAD_RELAXED(&g_inputs_unrecorded);
    if (inputs)
        opprof__capture_warnf(c,
                              "%llu operator(s) described their inputs (opprof_set_inputs) while the session "
                              "recorded no shapes: set record_shapes (OPPROF_RECORD_SHAPES=1, opprof record "
                              "--record-shapes) to keep them",
                              (unsigned long long)inputs);
    static const char *const MISUSE_WHAT[] = {
#define MISUSE_WORDS(name, what) what,
        RECORDER_MISUSES(MISUSE_WORDS)
#undef MISUSE_WORDS
    };
    for (int k = 0; k < MISUSE_KINDS; k++)
        if (misused[k])
            opprof__capture_warnf(c, "%llu %s (first: %s%s)", (unsigned long long)misused[k], MISUSE_WHAT[k],
                                  where[k].context, where[k].place);
    if (foreign)
        opprof__capture_warnf(c,
                              "%llu range end(s) called on another thread than their begin; ignored (first: "
                              "on tid %lld)",
                              (unsigned long long)foreign, (long long)LOAD_RELAXED(&g_foreign_tid));
    if (reentered)
        opprof__capture_warnf(c,
                              "%llu record(s) made by a signal handler while its thread was recording were "
                              "dropped (recording is not reentrant; counted among the dropped events)",
                              (unsigned long long)reentered);
    if (open_count)
        opprof__capture_warnf(c,
                              "%llu range(s) still open at the end of the capture (first: '%s'); "
                              "cut at the capture's end",
                              (unsigned long long)open_count, open_name);
    c->info.duration_ns = to_ns(end, start, npt);
    rc = opprof__sampler_collect(sampler, c, t0, t1);
    if (!rc) rc = opprof_capture_finish(c);
    if (rc) {
        opprof_capture_free(c);
        return rc;
    }
    *out = c;
    return 0;
}
