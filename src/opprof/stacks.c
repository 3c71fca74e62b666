/* stacks.c - folded stacks (flamegraph.pl, speedscope): each event's path of
 * names from the outermost range, interned as a tree of nodes, with its self
 * time or its own allocations summed per node. */
#include "internal.h"

#include <string.h>

enum { MAX_FRAMES = 256 }; /* frames written per line: deeper stacks are cut at the root */

typedef struct node {
    int32_t parent; /* node index, -1 for a root */
    uint32_t name;
    uint32_t depth; /* 1 for a root */
    int64_t value;
} node;

typedef struct tree {
    node *nodes;
    size_t n, cap;
    uint32_t *table; /* (parent, name) -> node index + 1 */
    size_t table_size;
} tree;

static uint64_t node_hash(int32_t parent, uint32_t name) {
    return ((uint64_t)(uint32_t)parent * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)name * 0xC2B2AE3D27D4EB4Full);
}

static int node_of(tree *t, int32_t parent, uint32_t name, int32_t *out) {
    if ((t->n + 1) * 2 > t->table_size) {
        size_t size = t->table_size ? t->table_size * 2 : 256;
        uint32_t *tab = opprof__calloc(size, sizeof *tab);
        if (!tab) return OPPROF_ENOMEM;
        for (size_t i = 0; i < t->n; i++) {
            size_t k = node_hash(t->nodes[i].parent, t->nodes[i].name) & (size - 1);
            while (tab[k]) k = (k + 1) & (size - 1);
            tab[k] = (uint32_t)i + 1;
        }
        opprof__dealloc(t->table, t->table_size * sizeof *t->table);
        t->table = tab;
        t->table_size = size;
    }
    size_t k = node_hash(parent, name) & (t->table_size - 1);
    for (; t->table[k]; k = (k + 1) & (t->table_size - 1)) {
        const node *nd = &t->nodes[t->table[k] - 1];
        if (nd->parent == parent && nd->name == name) {
            *out = (int32_t)t->table[k] - 1;
            return 0;
        }
    }
    if (opprof__grow((void **)&t->nodes, &t->cap, t->n + 1, sizeof *t->nodes)) return OPPROF_ENOMEM;
    t->nodes[t->n] = (node){parent, name, parent >= 0 ? t->nodes[parent].depth + 1 : 1, 0};
    t->table[k] = (uint32_t)t->n + 1;
    *out = (int32_t)t->n++;
    return 0;
}

static void put_name(opprof__strbuf *sb, const char *name) {
    for (const char *p = name; *p; p++) {
        char ch = *p == ';' ? ':' : (*p == '\n' || *p == '\r') ? ' ' : *p;
        opprof__sb_put(sb, &ch, 1);
    }
}

/* The path of node n, outermost first; past MAX_FRAMES, the outer frames are
 * replaced by one "[N frames]" frame (a hostile trace can nest millions deep). */
static void put_path(opprof__strbuf *sb, const opprof_capture *c, const tree *t, int32_t n) {
    int32_t chain[MAX_FRAMES];
    int k = 0;
    uint32_t depth = t->nodes[n].depth;
    for (int32_t x = n; x >= 0 && k < MAX_FRAMES - (depth > MAX_FRAMES); x = t->nodes[x].parent) chain[k++] = x;
    if (depth > (uint32_t)k) opprof__sb_printf(sb, "[%u frames];", depth - (uint32_t)k);
    while (k-- > 0) {
        put_name(sb, c->names[t->nodes[chain[k]].name]);
        if (k) opprof__sb_put(sb, ";", 1);
    }
}

int opprof_capture_stacks(const opprof_capture *c, opprof_stacks_metric metric, char **out_text) {
    if (!c || !out_text || (metric != OPPROF_STACKS_SELF_TIME && metric != OPPROF_STACKS_ALLOCATED_BYTES))
        return OPPROF_EINVAL;
    tree t = {0};
    size_t n = c->n_events;
    int32_t *node_of_event = opprof__alloc((n ? n : 1) * sizeof *node_of_event);
    int rc = node_of_event ? 0 : OPPROF_ENOMEM;
    /* parents come before their children: one pass builds the paths */
    for (size_t i = 0; i < n && !rc; i++) {
        int32_t parent = c->events[i].parent >= 0 ? node_of_event[c->events[i].parent] : -1;
        rc = node_of(&t, parent, c->events[i].name, &node_of_event[i]);
    }
    if (!rc) {
        if (metric == OPPROF_STACKS_SELF_TIME) {
            for (size_t i = 0; i < n; i++) {
                t.nodes[node_of_event[i]].value += c->events[i].duration_ns;
                if (c->events[i].parent >= 0) t.nodes[node_of_event[c->events[i].parent]].value -= c->events[i].duration_ns;
            }
        } else {
            for (size_t j = 0; j < c->n_mem; j++)
                if (c->mem[j].owner >= 0 && c->mem[j].bytes > 0) t.nodes[node_of_event[c->mem[j].owner]].value += c->mem[j].bytes;
        }
    }
    opprof__strbuf sb = {0};
    for (size_t k = 0; k < t.n && !rc; k++) {
        int64_t v = t.nodes[k].value;
        if (metric == OPPROF_STACKS_SELF_TIME) v = (v + 500) / 1000; /* integer microseconds */
        if (v <= 0) continue;
        put_path(&sb, c, &t, (int32_t)k);
        opprof__sb_printf(&sb, " %lld\n", (long long)v);
    }
    if (!rc) rc = sb.error;
    if (!rc) {
        *out_text = opprof__public_string(sb.data ? sb.data : "", sb.len);
        if (!*out_text) rc = OPPROF_ENOMEM;
    }
    opprof__sb_free(&sb);
    opprof__dealloc(node_of_event, (n ? n : 1) * sizeof *node_of_event);
    opprof__dealloc(t.nodes, t.cap * sizeof *t.nodes);
    opprof__dealloc(t.table, t.table_size * sizeof *t.table);
    return rc;
}

int opprof_capture_write_stacks(const opprof_capture *c, const char *path, opprof_stacks_metric metric) {
    char *text = NULL;
    int rc = opprof_capture_stacks(c, metric, &text);
    if (!rc) rc = opprof_write_text_file(path, text);
    opprof_free(text);
    return rc;
}
