/* parallel.c - operators computed by a thread pool: the ranges marked
 * `part_of` (opprof_range_part_of) with the same id and name are the parts
 * of one run; a run's wall time runs from its first part's start to its last
 * part's end. Read from the capture's argument marks, so that a live capture
 * and its trace read back give the same runs. */
#include "analysis/analysis.h"

#include <stdlib.h>
#include <string.h>

typedef struct part {
    uint64_t id;
    uint32_t name;
    uint32_t event;
} part;

static int part_before(const void *pa, const void *pb) {
    const part *a = pa, *b = pb;
    if (a->name != b->name) return a->name < b->name ? -1 : 1;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return (a->event > b->event) - (a->event < b->event);
}

/* The name index of the key, or UINT32_MAX when no mark can carry it. */
static uint32_t key_name(const opprof_capture *c) {
    for (size_t i = 0; i < c->n_names; i++)
        if (strcmp(c->names[i], OPPROF_PART_OF_KEY) == 0) return (uint32_t)i;
    return UINT32_MAX;
}

/* The parts, sorted by (name, id, event): NULL with *n = 0 when there are none. */
static int collect_parts(const opprof_capture *c, part **out, size_t *n) {
    *out = NULL;
    *n = 0;
    uint32_t key = key_name(c);
    if (key == UINT32_MAX) return 0;
    size_t count = 0;
    for (size_t k = 0; k < c->n_marks; k++)
        count += c->marks[k].kind == OPPROF_MARK_ARG_INT && c->marks[k].name == key && c->marks[k].event >= 0;
    if (!count) return 0;
    part *p = opprof__alloc(count * sizeof *p);
    if (!p) return OPPROF_ENOMEM;
    size_t used = 0;
    for (size_t k = 0; k < c->n_marks; k++) {
        const opprof_mark *m = &c->marks[k];
        if (m->kind != OPPROF_MARK_ARG_INT || m->name != key || m->event < 0) continue;
        const opprof_event *e = &c->events[m->event];
        if (e->kind == OPPROF_KIND_DEVICE || e->kind == OPPROF_KIND_DEVICE_ANNOTATION) continue;
        p[used++] = (part){(uint64_t)m->value.i, e->name, (uint32_t)m->event};
    }
    qsort(p, used, sizeof *p, part_before);
    /* an event marked twice with one id is one part */
    size_t kept = 0;
    for (size_t i = 0; i < used; i++)
        if (!kept || p[kept - 1].event != p[i].event || p[kept - 1].id != p[i].id) p[kept++] = p[i];
    *out = p;
    *n = kept;
    return 0;
}

/* The run's key part: the first one that carries input shapes (an engine
 * may describe its inputs on one part only), else the first. */
static uint32_t key_part(const opprof_capture *c, const part *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const opprof_site *s = opprof_capture_site(c, c->events[p[i].event].site);
        if (s && s->shapes) return p[i].event;
    }
    return p[0].event;
}

int opprof__parallel_runs_build(const opprof_capture *c, opprof__parallel_runs *out) {
    memset(out, 0, sizeof *out);
    part *p;
    size_t n;
    int rc = collect_parts(c, &p, &n);
    if (rc || !n) return rc;
    out->run_of_event = opprof__alloc(c->n_events * sizeof *out->run_of_event);
    out->runs = opprof__alloc(n * sizeof *out->runs);
    if (!out->run_of_event || !out->runs) {
        opprof__free(p);
        opprof__parallel_runs_free(out);
        return OPPROF_ENOMEM;
    }
    for (size_t i = 0; i < c->n_events; i++) out->run_of_event[i] = UINT32_MAX;
    for (size_t i = 0, len; i < n; i += len) {
        for (len = 1; i + len < n && p[i + len].name == p[i].name && p[i + len].id == p[i].id;) len++;
        opprof__parallel_run r = {.start_ns = INT64_MAX, .end_ns = INT64_MIN, .parts = (uint32_t)len};
        for (size_t k = i; k < i + len; k++) {
            const opprof_event *e = &c->events[p[k].event];
            /* parts in event order: a thread's events are together */
            if (k == i || c->events[p[k - 1].event].thread != e->thread) r.threads++;
            int64_t end = e->start_ns + e->duration_ns;
            if (e->start_ns < r.start_ns) r.start_ns = e->start_ns;
            if (end > r.end_ns) r.end_ns = end;
            OPPROF__SAT_ADD(r.sum_ns, e->duration_ns);
            if (e->duration_ns > r.max_ns) r.max_ns = e->duration_ns;
            out->run_of_event[p[k].event] = (uint32_t)out->n_runs;
        }
        r.key_event = key_part(c, p + i, len);
        out->runs[out->n_runs++] = r;
    }
    opprof__free(p);
    return 0;
}

void opprof__parallel_runs_free(opprof__parallel_runs *r) {
    opprof__free(r->runs);
    opprof__free(r->run_of_event);
    memset(r, 0, sizeof *r);
}
