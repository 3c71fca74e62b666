/* stack_tree.c - each event's path of names from the outermost range,
 * interned as a tree of nodes with its self and total time summed per node:
 * what folded stacks (render/folded_stacks.c) and the HTML report's flame
 * graph are drawn from. */
#include "analysis/analysis.h"

#include <string.h>

typedef opprof__stack_node node;
typedef opprof__stack_tree tree;

static uint64_t node_hash(int32_t parent, uint32_t name) { return opprof__hash_pair((uint32_t)parent, name); }

typedef struct node_key {
    int32_t parent;
    uint32_t name;
} node_key;

static uint64_t node_hash_of(const void *ctx, uint32_t item) {
    const node *nd = &((const tree *)ctx)->nodes[item];
    return node_hash(nd->parent, nd->name);
}

static bool node_equal(const void *ctx, uint32_t item, const void *key) {
    const node *nd = &((const tree *)ctx)->nodes[item];
    const node_key *k = key;
    return nd->parent == k->parent && nd->name == k->name;
}

static int node_of(tree *t, int32_t parent, uint32_t name, int32_t *out) {
    node_key key = {parent, name};
    size_t k;
    int64_t found = opprof__index_lookup(&t->index, t->n, node_hash_of, node_equal, t, node_hash(parent, name), &key, &k);
    if (found) return found < 0 ? OPPROF_ENOMEM : (*out = (int32_t)found - 1, 0);
    if (opprof__grow((void **)&t->nodes, &t->cap, t->n + 1, sizeof *t->nodes)) return OPPROF_ENOMEM;
    t->nodes[t->n] = (node){parent, name, parent >= 0 ? t->nodes[parent].depth + 1 : 1, 0, 0};
    t->index.slots[k] = (uint32_t)t->n + 1;
    *out = (int32_t)t->n++;
    return 0;
}

static bool is_step(const char *name) { return strncmp(name, "ProfilerStep#", 13) == 0; }

const char *opprof__stack_name(const opprof_capture *c, uint32_t name) {
    return is_step(c->names[name]) ? "ProfilerStep*" : c->names[name];
}

int opprof__stack_tree_build(const opprof_capture *c, opprof__stack_tree *t) {
    memset(t, 0, sizeof *t);
    uint32_t step_name = UINT32_MAX; /* the name every step's frame takes */
    size_t n = c->n_events;
    t->n_events = n;
    t->node_of_event = opprof__alloc((n ? n : 1) * sizeof *t->node_of_event);
    int rc = t->node_of_event ? 0 : OPPROF_ENOMEM;
    /* parents come before their children: one pass builds the paths */
    for (size_t i = 0; i < n && !rc; i++) {
        if (opprof__is_device(&c->events[i])) { /* CPU stacks only */
            t->node_of_event[i] = -1;
            continue;
        }
        int32_t parent = c->events[i].parent >= 0 ? t->node_of_event[c->events[i].parent] : -1;
        uint32_t name = c->events[i].name;
        if (c->events[i].kind == OPPROF_KIND_STEP || is_step(c->names[name])) {
            if (step_name == UINT32_MAX) step_name = name;
            name = step_name;
        }
        rc = node_of(t, parent, name, &t->node_of_event[i]);
    }
    for (size_t i = 0; i < n && !rc; i++) {
        if (t->node_of_event[i] < 0) continue;
        node *nd = &t->nodes[t->node_of_event[i]];
        OPPROF__SAT_ADD(nd->self_ns, c->events[i].duration_ns);
        OPPROF__SAT_ADD(nd->total_ns, c->events[i].duration_ns);
        if (c->events[i].parent >= 0)
            OPPROF__SAT_SUB(t->nodes[t->node_of_event[c->events[i].parent]].self_ns, c->events[i].duration_ns);
    }
    if (rc) opprof__stack_tree_free(t);
    return rc;
}

void opprof__stack_tree_free(opprof__stack_tree *t) {
    opprof__free(t->node_of_event);
    opprof__free(t->nodes);
    opprof__index_free(&t->index);
    memset(t, 0, sizeof *t);
}

