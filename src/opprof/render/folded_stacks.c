/* folded_stacks.c - folded stacks (flamegraph.pl, speedscope): one line per
 * node of the stack tree (analysis/stack_tree.c), its path of names and its
 * self time or its own allocations. */
#include "render/render.h"

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

int opprof_capture_stacks_to_string(const opprof_capture *c, opprof_stacks_metric metric, char **out_text) {
    if (!c || !out_text || (metric != OPPROF_STACKS_SELF_TIME && metric != OPPROF_STACKS_ALLOCATED_BYTES))
        return OPPROF_EINVAL;
    tree t;
    int rc = opprof__stack_tree_build(c, &t);
    if (rc) return rc;
    /* the value of a line: self time, or the bytes its events allocated */
    int64_t *value = opprof__calloc(t.n ? t.n : 1, sizeof *value);
    if (!value) rc = OPPROF_ENOMEM;
    for (size_t k = 0; k < t.n && !rc; k++)
        if (metric == OPPROF_STACKS_SELF_TIME) value[k] = t.nodes[k].self_ns / 1000 + (t.nodes[k].self_ns % 1000 >= 500); /* integer microseconds */
    if (!rc && metric == OPPROF_STACKS_ALLOCATED_BYTES)
        for (size_t j = 0; j < c->n_mem; j++)
            if (c->mem[j].owner >= 0 && c->mem[j].bytes > 0) OPPROF__SAT_ADD(value[t.node_of_event[c->mem[j].owner]], c->mem[j].bytes);
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
