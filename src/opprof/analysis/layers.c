/* layers.c - the same model in two runtimes, paired layer by layer.
 *
 * Each side's operators are read as classes of work (docs/TRACE_FORMAT.md,
 * "Across runtimes"): PyTorch's and nn's aten::linear, ONNX Runtime's Gemm
 * and MatMul are `linear`; ORT's FusedGemm is `linear` then `activation` (a
 * Gemm that ORT fused with the activation after it); aten::relu, Relu,
 * Sigmoid... are `activation`; and so on. Within a step, a side's layers are
 * its outermost classified operators in order of start (aten::addmm inside
 * aten::linear is the linear's). The first step of each side is aligned
 * class by class: an operator that stands for several classes takes as many
 * of the other side's operators as cover the same classes (FusedGemm takes
 * aten::linear and aten::relu); an activation or a layout change (ORT's
 * ReorderInput/Output, TensorFlow's BiasAdd) that has no counterpart joins the layer it is in. The
 * alignment stops at the first classes that differ; what is left is paired
 * by name. Each layer is then measured in every step of each side that has
 * the first step's sequence of operators, and its time per step is the mean:
 * a row keyed "L<k> <ops before> | <ops after>" on both sides, one call per
 * step. */
#define _GNU_SOURCE /* qsort_r */
#include "analysis/analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CLASSES = 3, KEY_BYTES = 240 };

typedef enum layer_class {
    CLS_NONE,
    CLS_LINEAR,
    CLS_CONV,
    CLS_ACTIVATION,
    CLS_POOL,
    CLS_RESHAPE,
    CLS_SOFTMAX,
    CLS_ADD,
    CLS_MUL,
    CLS_NORM,
    CLS_LAYOUT,
    CLS_BIAS
} layer_class;

/* The map: an operator's name, the classes of work it stands for. */
static const struct {
    const char *name;
    layer_class classes[MAX_CLASSES];
} MAP[] = {
    {"aten::linear", {CLS_LINEAR}},
    {"aten::addmm", {CLS_LINEAR}},
    {"aten::mm", {CLS_LINEAR}},
    {"aten::matmul", {CLS_LINEAR}},
    {"aten::bmm", {CLS_LINEAR}},
    {"Gemm", {CLS_LINEAR}},
    {"MatMul", {CLS_LINEAR}},
    {"FusedMatMul", {CLS_LINEAR}},
    {"FusedGemm", {CLS_LINEAR, CLS_ACTIVATION}},
    {"aten::conv2d", {CLS_CONV}},
    {"aten::convolution", {CLS_CONV}},
    {"aten::_convolution", {CLS_CONV}},
    {"Conv", {CLS_CONV}},
    {"FusedConv", {CLS_CONV, CLS_ACTIVATION}},
    {"aten::relu", {CLS_ACTIVATION}},
    {"aten::relu_", {CLS_ACTIVATION}},
    {"aten::clamp_min", {CLS_ACTIVATION}},
    {"aten::sigmoid", {CLS_ACTIVATION}},
    {"aten::tanh", {CLS_ACTIVATION}},
    {"aten::gelu", {CLS_ACTIVATION}},
    {"aten::silu", {CLS_ACTIVATION}},
    {"Relu", {CLS_ACTIVATION}},
    {"Sigmoid", {CLS_ACTIVATION}},
    {"Tanh", {CLS_ACTIVATION}},
    {"Gelu", {CLS_ACTIVATION}},
    {"FastGelu", {CLS_ACTIVATION}},
    {"aten::max_pool2d", {CLS_POOL}},
    {"aten::avg_pool2d", {CLS_POOL}},
    {"aten::adaptive_avg_pool2d", {CLS_POOL}},
    {"MaxPool", {CLS_POOL}},
    {"AveragePool", {CLS_POOL}},
    {"GlobalAveragePool", {CLS_POOL}},
    {"aten::flatten", {CLS_RESHAPE}},
    {"aten::view", {CLS_RESHAPE}},
    {"aten::reshape", {CLS_RESHAPE}},
    {"Flatten", {CLS_RESHAPE}},
    {"Reshape", {CLS_RESHAPE}},
    {"aten::softmax", {CLS_SOFTMAX}},
    {"aten::_softmax", {CLS_SOFTMAX}},
    {"Softmax", {CLS_SOFTMAX}},
    {"aten::add", {CLS_ADD}},
    {"aten::add_", {CLS_ADD}},
    {"Add", {CLS_ADD}},
    {"aten::mul", {CLS_MUL}},
    {"Mul", {CLS_MUL}},
    {"aten::layer_norm", {CLS_NORM}},
    {"LayerNormalization", {CLS_NORM}},
    {"aten::batch_norm", {CLS_NORM}},
    {"BatchNormalization", {CLS_NORM}},
    {"ReorderInput", {CLS_LAYOUT}},
    {"ReorderOutput", {CLS_LAYOUT}},
    {"BiasAdd", {CLS_BIAS}}, /* TensorFlow's linear is MatMul then BiasAdd: the bias joins its layer */
    {"Conv2D", {CLS_CONV}},
    {"AvgPool", {CLS_POOL}},
    {"Relu6", {CLS_ACTIVATION}},
    {"Elu", {CLS_ACTIVATION}},
    {"AddV2", {CLS_ADD}},
    {"FusedBatchNormV3", {CLS_NORM}},
    {"_FusedMatMul", {CLS_LINEAR, CLS_ACTIVATION}},
    {"_FusedConv2D", {CLS_CONV, CLS_ACTIVATION}},
};

static const layer_class *classes_of(const char *name) {
    for (size_t i = 0; i < sizeof MAP / sizeof *MAP; i++)
        if (!strcmp(MAP[i].name, name)) return MAP[i].classes;
    return NULL;
}

static int n_classes(const layer_class *c) {
    int n = 0;
    while (n < MAX_CLASSES && c[n] != CLS_NONE) n++;
    return n;
}

/* One side: its steps, each a run of its layer operators (event indexes). */
typedef struct side {
    const opprof_capture *c;
    const layer_class **by_name; /* each name's classes (NULL: none), looked up once */
    uint32_t *ops;               /* every step's outermost classified operators, in start order */
    size_t *first;               /* step s: ops[first[s] .. first[s + 1]) */
    size_t n_steps;
    bool *like_first; /* step s holds the first step's operators, by name, in order: its times count */
} side;

static bool is_cpu(const opprof_event *e) {
    return e->kind == OPPROF_KIND_CPU_OP || e->kind == OPPROF_KIND_USER_ANNOTATION;
}

/* The layer operators: classified events with no classified ancestor, in
 * one pass (a parent comes before its children in the capture's order). */
static int mark_outermost(const side *s, bool *out) {
    const opprof_event *ev = s->c->events;
    bool *under = opprof__alloc((s->c->n_events + 1) * sizeof *under); /* a classified event encloses it */
    if (!under) return OPPROF_ENOMEM;
    for (size_t i = 0; i < s->c->n_events; i++) {
        int32_t p = ev[i].parent;
        under[i] = p >= 0 && (under[p] || s->by_name[ev[p].name]);
        out[i] = is_cpu(&ev[i]) && s->by_name[ev[i].name] && !under[i];
    }
    opprof__free(under);
    return 0;
}

/* The classes of the side's layer operator number `op`. */
static const layer_class *op_classes(const side *s, size_t op) { return s->by_name[s->c->events[s->ops[op]].name]; }

static int by_start(const void *a, const void *b, void *ctx) {
    const opprof_capture *c = ctx;
    const opprof_event *x = &c->events[*(const uint32_t *)a], *y = &c->events[*(const uint32_t *)b];
    if (x->start_ns != y->start_ns) return x->start_ns < y->start_ns ? -1 : 1;
    return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

static int side_build(side *s, const opprof_capture *c) {
    s->c = c;
    s->by_name = opprof__alloc((c->n_names ? c->n_names : 1) * sizeof *s->by_name);
    if (!s->by_name) return OPPROF_ENOMEM;
    for (size_t i = 0; i < c->n_names; i++) s->by_name[i] = classes_of(c->names[i]);
    size_t n_steps = 0, n_ops = 0;
    for (size_t i = 0; i < c->n_events; i++) n_steps += c->events[i].kind == OPPROF_KIND_STEP;
    uint32_t *steps = opprof__alloc((n_steps ? n_steps : 1) * sizeof *steps);
    s->ops = opprof__alloc((c->n_events ? c->n_events : 1) * sizeof *s->ops);
    s->first = opprof__alloc((n_steps + 2) * sizeof *s->first);
    if (!steps || !s->ops || !s->first) {
        opprof__free(steps);
        return OPPROF_ENOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < c->n_events; i++)
        if (c->events[i].kind == OPPROF_KIND_STEP) steps[k++] = (uint32_t)i;
    qsort_r(steps, n_steps, sizeof *steps, by_start, (void *)c);
    bool *outer = opprof__alloc((c->n_events + 1) * sizeof *outer);
    if (!outer || mark_outermost(s, outer)) {
        opprof__free(outer);
        opprof__free(steps);
        return OPPROF_ENOMEM;
    }
    for (size_t i = 0; i < c->n_events; i++)
        if (outer[i]) s->ops[n_ops++] = (uint32_t)i;
    opprof__free(outer);
    qsort_r(s->ops, n_ops, sizeof *s->ops, by_start, (void *)c);
    /* the ops of each step (a capture without steps is one) */
    s->n_steps = n_steps ? n_steps : 1;
    for (size_t st = 0, at = 0; st < s->n_steps; st++) {
        int64_t end = n_steps ? c->events[steps[st]].start_ns + c->events[steps[st]].duration_ns : INT64_MAX;
        int64_t begin = n_steps ? c->events[steps[st]].start_ns : INT64_MIN;
        while (at < n_ops && c->events[s->ops[at]].start_ns < begin) at++; /* before the first step: none */
        s->first[st] = at;
        while (at < n_ops && c->events[s->ops[at]].start_ns < end) at++;
        s->first[st + 1] = at;
    }
    opprof__free(steps);
    /* which steps repeat the first one's operators: compared once, not once a layer */
    s->like_first = opprof__alloc(s->n_steps * sizeof *s->like_first);
    if (!s->like_first) return OPPROF_ENOMEM;
    size_t len = s->first[1] - s->first[0];
    for (size_t st = 0; st < s->n_steps; st++) {
        bool same = s->first[st + 1] - s->first[st] == len;
        for (size_t j = 0; j < len && same; j++)
            same = c->events[s->ops[s->first[st] + j]].name == c->events[s->ops[s->first[0] + j]].name;
        s->like_first[st] = same;
    }
    return 0;
}

static void side_free(side *s) {
    opprof__free(s->like_first);
    opprof__free(s->by_name);
    opprof__free(s->ops);
    opprof__free(s->first);
}

/* One aligned layer: a range of each side's first step's operators. */
typedef struct layer {
    size_t a0, a1, b0, b1;
} layer;

/* A queue of classes still to match on one side. */
typedef struct queue {
    layer_class c[4 * MAX_CLASSES];
    int n;
} queue;

static void push(queue *q, const side *s, size_t op) {
    const layer_class *c = op_classes(s, op);
    for (int i = 0; i < n_classes(c) && q->n < (int)(sizeof q->c / sizeof *q->c); i++) q->c[q->n++] = c[i];
}

static void pop(queue *q) { memmove(q->c, q->c + 1, (size_t)--q->n * sizeof *q->c); }

static bool absorbable(layer_class c) { return c == CLS_ACTIVATION || c == CLS_LAYOUT || c == CLS_BIAS; }

static layer_class head_of(const side *s, size_t op) {
    const layer_class *c = op_classes(s, op);
    return c[0];
}

/* After a whole layer: an activation or layout change that only one side has
 * next joins it. */
static void absorb_after(const side *s, size_t *k, size_t end, const side *other, size_t ok, size_t oend) {
    while (*k < end && absorbable(head_of(s, *k)) && n_classes(op_classes(s, *k)) == 1 &&
           !(ok < oend && head_of(other, ok) == head_of(s, *k)))
        (*k)++;
}

/* After a whole layer: a bias that one runtime adds apart (TensorFlow's
 * BiasAdd) joins it first, before the activations are weighed. */
static void absorb_bias(const side *s, size_t *k, size_t end) {
    while (*k < end && head_of(s, *k) == CLS_BIAS && n_classes(op_classes(s, *k)) == 1) (*k)++;
}

/* Align the first steps, layer by layer, until classes differ: the layers. */
static size_t align(const side *a, const side *b, layer *out) {
    size_t i = a->first[0], ie = a->first[1], j = b->first[0], je = b->first[1], n = 0;
    while (i < ie && j < je) {
        layer l = {i, 0, j, 0};
        queue qa = {{0}, 0}, qb = {{0}, 0};
        push(&qa, a, i++);
        push(&qb, b, j++);
        for (;;) {
            if (qa.n && qb.n) {
                if (qa.c[0] == qb.c[0]) {
                    pop(&qa), pop(&qb);
                } else if (absorbable(qa.c[0])) {
                    pop(&qa);
                } else if (absorbable(qb.c[0])) {
                    pop(&qb);
                } else {
                    return n; /* the classes differ: the alignment stops here */
                }
                continue;
            }
            if (!qa.n && !qb.n) break; /* the layer is whole */
            /* one side has classes left: the other's next operator must go on with them */
            queue *left = qa.n ? &qa : &qb, *done = qa.n ? &qb : &qa;
            const side *ds = qa.n ? b : a;
            size_t *dk = qa.n ? &j : &i, de = qa.n ? je : ie;
            if (absorbable(left->c[0])) {
                pop(left);
            } else if (*dk < de && head_of(ds, *dk) == left->c[0]) {
                push(done, ds, (*dk)++);
            } else {
                return n;
            }
        }
        absorb_bias(a, &i, ie);
        absorb_bias(b, &j, je);
        absorb_after(a, &i, ie, b, j, je);
        absorb_after(b, &j, je, a, i, ie);
        l.a1 = i, l.b1 = j;
        out[n++] = l;
    }
    return n;
}

/* "aten::linear+aten::relu": the names of a side's operators in a layer. */
static void names_of(const side *s, size_t from, size_t to, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = from; k < to && used + 1 < size; k++) {
        int w =
            snprintf(buf + used, size - used, "%s%s", k > from ? "+" : "", s->c->names[s->c->events[s->ops[k]].name]);
        if (w < 0) break;
        used += (size_t)w < size - used ? (size_t)w : size - used - 1;
    }
}

/* A layer's mean time per step on one side: the steps whose operators are
 * the first step's, by name, one after the other. */
static int64_t layer_mean(const side *s, size_t from, size_t to) {
    int64_t sum = 0, steps = 0;
    for (size_t st = 0; st < s->n_steps; st++) {
        if (!s->like_first[st]) continue;
        for (size_t k = from; k < to; k++)
            OPPROF__SAT_ADD(sum, s->c->events[s->ops[s->first[st] + (k - s->first[0])]].duration_ns);
        steps++;
    }
    return steps ? sum / steps : 0;
}

int opprof__layers_build(const opprof_capture *before, const opprof_capture *after, opprof__layers *out) {
    memset(out, 0, sizeof *out);
    side a = {0}, b = {0}; /* both freed below, built or not */
    int rc = side_build(&a, before);
    if (!rc) rc = side_build(&b, after);
    size_t most = rc ? 0 : (a.first[1] - a.first[0]) + 1;
    layer *ls = rc ? NULL : opprof__alloc(most * sizeof *ls);
    if (!rc && !ls) rc = OPPROF_ENOMEM;
    size_t n = rc ? 0 : align(&a, &b, ls);
    if (!rc && n) {
        out->before = opprof__calloc(n, sizeof *out->before);
        out->after = opprof__calloc(n, sizeof *out->after);
        out->keys = opprof__alloc(n * KEY_BYTES);
        if (!out->before || !out->after || !out->keys) rc = OPPROF_ENOMEM;
    }
    for (size_t k = 0; !rc && k < n; k++) {
        char na[96], nb[96];
        names_of(&a, ls[k].a0, ls[k].a1, na, sizeof na);
        names_of(&b, ls[k].b0, ls[k].b1, nb, sizeof nb);
        char *key = out->keys + k * KEY_BYTES;
        snprintf(key, KEY_BYTES, "L%zu %s | %s", k + 1, na, nb);
        int64_t tb = layer_mean(&a, ls[k].a0, ls[k].a1), ta = layer_mean(&b, ls[k].b0, ls[k].b1);
        out->before[k] =
            (opprof_average_row){.key = key, .calls = 1, .self_ns = tb, .total_ns = tb, .wall_ns = tb, .threads = 1};
        out->after[k] =
            (opprof_average_row){.key = key, .calls = 1, .self_ns = ta, .total_ns = ta, .wall_ns = ta, .threads = 1};
    }
    if (!rc) {
        out->n = n;
        out->paired_ops_before = n ? ls[n - 1].a1 - a.first[0] : 0;
        out->paired_ops_after = n ? ls[n - 1].b1 - b.first[0] : 0;
        out->ops_before = a.first[1] - a.first[0];
        out->ops_after = b.first[1] - b.first[0];
    }
    opprof__free(ls);
    side_free(&a);
    side_free(&b);
    if (rc) opprof__layers_free(out);
    return rc;
}

void opprof__layers_free(opprof__layers *l) {
    opprof__free(l->before);
    opprof__free(l->after);
    opprof__free(l->keys);
    memset(l, 0, sizeof *l);
}
