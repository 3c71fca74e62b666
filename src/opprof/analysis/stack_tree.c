/* stack_tree.c - each event's path of names from the outermost range,
 * interned as a tree of nodes with its self and total time summed per node:
 * what folded stacks (render/folded_stacks.c) and the HTML report's flame
 * graph are drawn from; and the tree of the samples, each one's native
 * frames under its owner's path, its time the sampling period. */
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
    int64_t found =
        opprof__index_lookup(&t->index, t->n, node_hash_of, node_equal, t, node_hash(parent, name), &key, &k);
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

/* Add one sample: its frames (innermost first) under node `at` (-1: a root). */
static int add_sample(tree *t, int32_t at, const uint32_t *frames, size_t n, int64_t period) {
    for (size_t k = n; k > 0; k--) /* outermost first */
        if (node_of(t, at, frames[k - 1], &at)) return OPPROF_ENOMEM;
    if (at < 0) return 0;
    OPPROF__SAT_ADD(t->nodes[at].self_ns, period);
    for (int32_t x = at; x >= 0; x = t->nodes[x].parent) OPPROF__SAT_ADD(t->nodes[x].total_ns, period);
    return 0;
}

int opprof__sample_tree_build(const opprof_capture *c, opprof__stack_tree *t) {
    memset(t, 0, sizeof *t);
    tree events;
    int rc = opprof__stack_tree_build(c, &events);
    if (rc) return rc;
    int32_t *map = opprof__alloc((events.n ? events.n : 1) * sizeof *map); /* events' node -> this tree's */
    if (!map) rc = OPPROF_ENOMEM;
    for (size_t i = 0; i < events.n && !rc; i++) /* parents first */
        rc = node_of(t, events.nodes[i].parent >= 0 ? map[events.nodes[i].parent] : -1, events.nodes[i].name, &map[i]);
    int64_t period = c->info.sample_period_ns > 0 ? c->info.sample_period_ns : 1;
    for (size_t j = 0; j < c->n_samples && !rc; j++) {
        const opprof_sample *sm = &c->samples[j];
        int32_t owner = sm->owner >= 0 ? events.node_of_event[sm->owner] : -1;
        size_t n;
        const uint32_t *frames = opprof_capture_stack(c, sm->stack, &n);
        rc = add_sample(t, owner >= 0 ? map[owner] : -1, frames, n, period);
    }
    opprof__free(map);
    opprof__stack_tree_free(&events);
    if (rc) opprof__stack_tree_free(t);
    return rc;
}

void opprof__stack_tree_free(opprof__stack_tree *t) {
    opprof__free(t->node_of_event);
    opprof__free(t->nodes);
    opprof__index_free(&t->index);
    memset(t, 0, sizeof *t);
}
