/* folded_stacks.c - folded stacks (flamegraph.pl, speedscope): one line per
 * node of the stack tree (analysis/stack_tree.c), its path of names and its
 * self time or its own allocations; or one line per (node, native stack) of
 * the samples, the native frames under the node's path. */
#include "render/render.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_FRAMES = 256 }; /* frames written per line: deeper stacks are cut at the root */

typedef opprof__stack_node node;
typedef opprof__stack_tree tree;

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
    while (k > 0) {
        k--;
        put_name(sb, opprof__stack_name(c, t->nodes[chain[k]].name));
        if (k) opprof__sb_put(sb, ";", 1);
    }
}

typedef struct node_stack {
    int32_t node; /* -1: outside every range */
    uint32_t stack;
} node_stack;

static int by_node_stack(const void *a, const void *b) {
    const node_stack *x = a, *y = b;
    return x->node != y->node ? (x->node > y->node) - (x->node < y->node)
                              : (x->stack > y->stack) - (x->stack < y->stack);
}

/* Samples: counted by (node of their owner, native stack). */
static int sample_lines(opprof__strbuf *sb, const opprof_capture *c, const tree *t) {
    node_stack *v = opprof__alloc((c->n_samples ? c->n_samples : 1) * sizeof *v);
    if (!v) return OPPROF_ENOMEM;
    for (size_t j = 0; j < c->n_samples; j++)
        v[j] = (node_stack){c->samples[j].owner >= 0 ? t->node_of_event[c->samples[j].owner] : -1, c->samples[j].stack};
    qsort(v, c->n_samples, sizeof *v, by_node_stack);
    for (size_t j = 0, run; j < c->n_samples; j += run) {
        for (run = 1; j + run < c->n_samples && !by_node_stack(&v[j], &v[j + run]);) run++;
        size_t n;
        const uint32_t *frames = opprof_capture_stack(c, v[j].stack, &n);
        if (v[j].node >= 0) put_path(sb, c, t, v[j].node);
        for (size_t k = n; k > 0; k--) { /* outermost first */
            if (v[j].node >= 0 || k < n) opprof__sb_put(sb, ";", 1);
            put_name(sb, c->names[frames[k - 1]]);
        }
        if (!n && v[j].node < 0) opprof__sb_puts(sb, "[unknown]");
        opprof__sb_printf(sb, " %zu\n", run);
    }
    opprof__free(v);
    return 0;
}

int opprof_capture_stacks_to_string(const opprof_capture *c, opprof_stacks_metric metric, char **out_text) {
    if (!c || !out_text ||
        (metric != OPPROF_STACKS_SELF_TIME && metric != OPPROF_STACKS_ALLOCATED_BYTES &&
         metric != OPPROF_STACKS_SAMPLES))
        return OPPROF_EINVAL;
    tree t;
    int rc = opprof__stack_tree_build(c, &t);
    if (rc) return rc;
    if (metric == OPPROF_STACKS_SAMPLES) {
        opprof__strbuf sb = {0};
        rc = opprof__sb_finish(&sb, sample_lines(&sb, c, &t), out_text);
        opprof__stack_tree_free(&t);
        return rc;
    }
    /* the value of a line: self time, or the bytes its events allocated */
    int64_t *value = opprof__calloc(t.n ? t.n : 1, sizeof *value);
    if (!value) rc = OPPROF_ENOMEM;
    for (size_t k = 0; k < t.n && !rc; k++)
        if (metric == OPPROF_STACKS_SELF_TIME)
            value[k] = t.nodes[k].self_ns / 1000 + (t.nodes[k].self_ns % 1000 >= 500); /* integer microseconds */
    if (!rc && metric == OPPROF_STACKS_ALLOCATED_BYTES)
        for (size_t j = 0; j < c->n_mem; j++)
            if (c->mem[j].owner >= 0 && c->mem[j].bytes > 0)
                OPPROF__SAT_ADD(value[t.node_of_event[c->mem[j].owner]], c->mem[j].bytes);
    opprof__strbuf sb = {0};
    for (size_t k = 0; k < t.n && !rc; k++) {
        if (value[k] <= 0) continue;
        put_path(&sb, c, &t, (int32_t)k);
        opprof__sb_printf(&sb, " %lld\n", (long long)value[k]);
    }
    rc = opprof__sb_finish(&sb, rc, out_text);
    opprof__free(value);
    opprof__stack_tree_free(&t);
    return rc;
}

int opprof_capture_stacks_write(const opprof_capture *c, const char *path, opprof_stacks_metric metric) {
    char *text = NULL;
    int rc = opprof_capture_stacks_to_string(c, metric, &text);
    if (!rc) rc = opprof_write_text_file(path, text);
    opprof_free(text);
    return rc;
}
