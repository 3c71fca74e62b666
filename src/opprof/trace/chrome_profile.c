/* chrome_profile.c - a capture's samples as Chrome's CPU profiles, the form
 * that Chrome's tracing, DevTools and speedscope import: per thread, a
 * "Profile" event (ph "P", its start) and a "ProfileChunk" holding the
 * profile's nodes, one node id per sample and the time deltas between them.
 *
 * A node is a frame under its parent: from the root, the ranges and
 * operators open at the sample (its owner and the owner's parents, marked
 * "opprof_range"), then the native frames, outermost first, each with its
 * source file and line (callFrame url and lineNumber, 0-based) when known.
 * The reader (trace/reader_samples.c) keeps the native frames and finds the
 * owners again by time. */
#include "trace/json_out.h"

#include <stdint.h>
#include <stdlib.h>

enum { MAX_RANGES = 256 }; /* ranges above a sample's native frames; deeper ones are cut at the root */

typedef struct node {
    uint32_t parent; /* node id; the root (id 1) has 0 */
    uint32_t name;   /* name id */
    uint32_t source; /* name id of "file:line", or UINT32_MAX */
    uint32_t range;  /* 1: a range or operator, 0: a native frame */
} node;

typedef struct profile {
    node *nodes; /* node id k is nodes[k - 1] */
    size_t n, cap;
    opprof__index index;
    uint32_t *ids; /* each sample's node */
    size_t n_ids, cap_ids;
} profile;

static OPPROF__HASH uint64_t hash_node(const node *k) {
    uint64_t h = (uint64_t)k->parent * 0x9E3779B97F4A7C15ull ^ (uint64_t)k->name * 0xC2B2AE3D27D4EB4Full;
    h ^= ((uint64_t)k->source << 1 | k->range) * 0x165667B19E3779F9ull;
    return h ^ (h >> 31);
}

static uint64_t node_hash_of(const void *ctx, uint32_t item) { return hash_node(&((const profile *)ctx)->nodes[item]); }

static bool node_equal(const void *ctx, uint32_t item, const void *key) {
    const node *a = &((const profile *)ctx)->nodes[item], *b = key;
    return a->parent == b->parent && a->name == b->name && a->source == b->source && a->range == b->range;
}

/* The id of the node (parent, name, source, range), added if new; 0: no memory. */
static uint32_t child(profile *pf, uint32_t parent, uint32_t name, uint32_t source, uint32_t range) {
    node key = {parent, name, source, range};
    size_t slot;
    int64_t found = opprof__index_lookup(&pf->index, pf->n, node_hash_of, node_equal, pf, hash_node(&key), &key, &slot);
    if (found) return found < 0 ? 0 : (uint32_t)found;
    if (opprof__grow((void **)&pf->nodes, &pf->cap, pf->n + 1, sizeof *pf->nodes)) return 0;
    pf->nodes[pf->n] = key;
    pf->index.slots[slot] = (uint32_t)++pf->n;
    return (uint32_t)pf->n;
}

/* The node of one sample: its owner's ranges from the outermost, then its frames. */
static uint32_t node_of(profile *pf, const opprof_capture *c, const opprof_sample *sm) {
    int32_t chain[MAX_RANGES];
    int k = 0;
    for (int32_t e = sm->owner; e >= 0 && k < MAX_RANGES; e = c->events[e].parent) chain[k++] = e;
    uint32_t id = 1;
    while (id && k > 0) {
        const opprof_event *e = &c->events[chain[--k]];
        id = child(pf, id, e->name, UINT32_MAX, 1);
    }
    size_t n;
    const uint32_t *frames = opprof_capture_stack(c, sm->stack, &n);
    const uint32_t *sources = opprof_capture_stack_sources(c, sm->stack, &n);
    for (size_t f = n; id && f > 0; f--) id = child(pf, id, frames[f - 1], sources ? sources[f - 1] : UINT32_MAX, 0);
    return id;
}

static void out_source(out *o, const opprof_capture *c, uint32_t source) {
    char file[512];
    long line = source == UINT32_MAX ? 0 : opprof__source_parts(c->names[source], file, sizeof file);
    if (line <= 0) {
        OUT_LIT(o, "\"url\":\"\",\"lineNumber\":-1");
        return;
    }
    OUT_LIT(o, "\"url\":");
    out_json_string(o, file);
    OUT_LIT(o, ",\"lineNumber\":");
    out_i64(o, line - 1);
}

static void write_nodes(out *o, const opprof_capture *c, const opprof__strbuf *names, const size_t *offset,
                        const profile *pf) {
    OUT_LIT(o, "{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"scriptId\":\"0\",\"url\":\"\","
               "\"lineNumber\":-1,\"columnNumber\":-1}}");
    for (size_t k = 1; k < pf->n; k++) {
        const node *nd = &pf->nodes[k];
        OUT_LIT(o, ",\n{\"id\":");
        out_i64(o, (int64_t)k + 1);
        OUT_LIT(o, ",\"parent\":");
        out_i64(o, nd->parent);
        if (nd->range) OUT_LIT(o, ",\"opprof_range\":1");
        OUT_LIT(o, ",\"callFrame\":{\"functionName\":");
        out_name(o, names, offset, nd->name);
        OUT_LIT(o, ",\"scriptId\":\"0\",");
        out_source(o, c, nd->source);
        OUT_LIT(o, ",\"columnNumber\":-1}}");
    }
}

/* One thread's two events; its samples are samples[first, last). */
static void write_thread(out *o, const opprof_capture *c, const opprof__strbuf *names, const size_t *offset,
                         profile *pf, size_t first, size_t last) {
    const opprof_sample *s = c->samples;
    const opprof_thread_info *th = &c->threads[s[first].thread];
    OUT_LIT(o, "{\"ph\":\"P\",\"cat\":\"disabled-by-default-v8.cpu_profiler\",\"name\":\"Profile\",\"id\":");
    out_i64(o, (int64_t)s[first].thread + 1);
    out_place(o, th->pid, &th->tid, s[first].ts_ns);
    OUT_LIT(o, ",\"args\":{\"data\":{\"startTime\":");
    out_us(o, s[first].ts_ns);
    OUT_LIT(o, "}}},\n{\"ph\":\"P\",\"cat\":\"disabled-by-default-v8.cpu_profiler\",\"name\":\"ProfileChunk\",\"id\":");
    out_i64(o, (int64_t)s[first].thread + 1);
    out_place(o, th->pid, &th->tid, s[last - 1].ts_ns);
    OUT_LIT(o, ",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":[\n");
    write_nodes(o, c, names, offset, pf);
    OUT_LIT(o, "],\n\"samples\":[");
    for (size_t j = 0; j < pf->n_ids; j++) {
        if (j) OUT_LIT(o, ",");
        out_i64(o, pf->ids[j]);
    }
    OUT_LIT(o, "]},\n\"timeDeltas\":[");
    for (size_t j = first; j < last; j++) {
        if (j > first) OUT_LIT(o, ",");
        out_us(o, s[j].ts_ns - s[j > first ? j - 1 : j].ts_ns);
    }
    OUT_LIT(o, "],\"endTime\":");
    out_us(o, s[last - 1].ts_ns);
    OUT_LIT(o, "}}}");
}

void opprof__chrome_write_profiles(out *o, const opprof_capture *c, const opprof__strbuf *names, const size_t *offset,
                                   bool *first) {
    uint32_t root_name = 0; /* the root is written by hand: its key only needs to be unique */
    for (size_t i = 0, last; i < c->n_samples && !o->error; i = last) {
        for (last = i + 1; last < c->n_samples && c->samples[last].thread == c->samples[i].thread;) last++;
        profile pf = {0};
        bool ok = child(&pf, 0, root_name, UINT32_MAX, 1) == 1 &&
                  !opprof__grow((void **)&pf.ids, &pf.cap_ids, last - i, sizeof *pf.ids);
        for (size_t j = i; ok && j < last; j++) ok = (pf.ids[pf.n_ids++] = node_of(&pf, c, &c->samples[j])) != 0;
        if (!ok) o->error = OPPROF_ENOMEM;
        if (ok) {
            if (!*first) OUT_LIT(o, ",\n");
            *first = false;
            write_thread(o, c, names, offset, &pf, i, last);
        }
        opprof__free(pf.nodes);
        opprof__free(pf.ids);
        opprof__index_free(&pf.index);
    }
}
