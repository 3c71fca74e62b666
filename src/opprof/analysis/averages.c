/* averages.c - key averages: events grouped by name (and input shapes, and
 * call stack), self time, memory, peak memory, FLOPs.
 *
 * One pass over the events and one over the memory events, reading the
 * parents and owners that tree.c computed:
 *   self time:  each event adds its duration to its group's self and total,
 *               and subtracts it from its parent's group's self;
 *   memory:     each memory event adds its bytes to its owner's group's self
 *               memory, and to the CPU memory of the owner and every ancestor.
 */
#include "analysis/analysis.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_STACK = 16 };

struct opprof_averages {
    opprof_average_row *rows;
    size_t n_rows;
    char *text; /* keys, shapes and stacks, NUL-separated */
    size_t text_size;
    int64_t self_total_ns;
    int64_t self_device_total_ns;
    char device_name[16];
    bool device_memory;   /* memory events of a device other than the CPU */
    bool profile_memory;  /* memory was recorded: the capture has memory events */
    bool flops_recorded;  /* with_flops, or operators stated FLOPs or bytes */
    int64_t *children;    /* per row: the events nested directly in its events */
    int64_t *model_bytes; /* per row: opprof_bytes of its calls */
    double range_cost_ns; /* the capture's measured cost of one range (begin + end), 0: unknown */
    bool by_shape, by_layer;
    int stack_n;
    uint64_t dropped_events;
    size_t n_warnings;
    char **warnings; /* the capture's warnings, copied */
    opprof_producer producer;
    int64_t unended_ns, duration_ns;   /* the longest begin never ended, and the capture's span */
    opprof__distributions dist;        /* with options->distributions, else steps 0 */
    int64_t samples, sample_period_ns; /* the capture's samples and their period */
    bool off_cpu;                      /* the capture has off-CPU times */
    bool parallel;                     /* some operator ran as parts on several threads */
    double step_bytes;                 /* opprof__averages_step_bytes */
};

/* ---- keys and groups ---- */

static const char STEP_PREFIX[] = "ProfilerStep#";
static const char STEP_KEY[] = "ProfilerStep*";

static const char *key_of(const char *name) {
    return strncmp(name, STEP_PREFIX, sizeof STEP_PREFIX - 1) == 0 ? STEP_KEY : name;
}

typedef struct group {
    opprof_average_row row;
    int64_t model_bytes; /* opprof_bytes of its calls (the roofline's bytes where none were stated) */
    int64_t children;    /* events nested directly in this group's events: each one's recording cost
                            lands in this group's self time */
    int64_t first_start;
    uint32_t first_thread;
    size_t first_index;
    uint32_t index;                   /* in the builder, before make_rows keeps the groups that have events */
    uint32_t top_source;              /* name id of the top frame's most sampled "file:line", or UINT32_MAX */
    double longest_parts, mean_parts; /* parallel runs: their longest parts and mean parts, summed */
    /* the extended key */
    uint32_t name_group;
    uint32_t shapes;
    int32_t layer; /* grouped by layer, else -1 */
    int n_frames;
    uint32_t frames[MAX_STACK]; /* site indexes; compared by file, function, line */
} group;

typedef struct builder {
    const opprof_capture *c;
    group *groups;
    size_t n, cap;
    opprof__index index; /* extended keys */
} builder;

static int group_compare(const void *pa, const void *pb) {
    const group *a = pa, *b = pb;
    if (a->first_start != b->first_start) return a->first_start < b->first_start ? -1 : 1;
    if (a->first_thread != b->first_thread) return a->first_thread < b->first_thread ? -1 : 1;
    return a->first_index < b->first_index ? -1 : a->first_index > b->first_index;
}

static bool same_frame(const opprof_capture *c, uint32_t a, uint32_t b) {
    const opprof_site *x = opprof_capture_site(c, a), *y = opprof_capture_site(c, b);
    return x->file == y->file && x->function == y->function && x->line == y->line;
}

static uint64_t frame_hash(const opprof_capture *c, uint32_t site) {
    const opprof_site *s = opprof_capture_site(c, site);
    return ((uintptr_t)s->file * 31 + (uintptr_t)s->function) * 1000003u + s->line;
}

static OPPROF__HASH uint64_t key_hash(const builder *b, const group *g) {
    uint64_t h = opprof__hash_pair(opprof__hash_pair(g->name_group, g->shapes), (uint32_t)g->layer);
    for (int i = 0; i < g->n_frames; i++) h = (h ^ frame_hash(b->c, g->frames[i])) * 0x100000001B3ull;
    return h;
}

static bool same_key(const builder *b, const group *x, const group *y) {
    if (x->name_group != y->name_group || x->shapes != y->shapes || x->layer != y->layer || x->n_frames != y->n_frames)
        return false;
    for (int i = 0; i < x->n_frames; i++)
        if (!same_frame(b->c, x->frames[i], y->frames[i])) return false;
    return true;
}

static uint64_t group_hash_of(const void *ctx, uint32_t item) {
    const builder *b = ctx;
    return key_hash(b, &b->groups[item]);
}

static bool group_equal(const void *ctx, uint32_t item, const void *key) {
    const builder *b = ctx;
    return same_key(b, &b->groups[item], key);
}

/* The group of an extended key (added when new). */
static int find_group(builder *b, const group *key, uint32_t *out) {
    size_t k;
    int64_t found = opprof__index_lookup(&b->index, b->n, group_hash_of, group_equal, b, key_hash(b, key), key, &k);
    if (found) return found < 0 ? OPPROF_ENOMEM : (*out = (uint32_t)found - 1, 0);
    if (opprof__grow((void **)&b->groups, &b->cap, b->n + 1, sizeof *b->groups)) return OPPROF_ENOMEM;
    b->groups[b->n] = *key;
    b->index.slots[k] = (uint32_t)b->n + 1;
    *out = (uint32_t)b->n++;
    return 0;
}

/* Text for a row's key, shapes and stack, appended to `sb`; offsets saved. */
static void frame_text(const opprof_capture *c, uint32_t site, opprof__strbuf *sb) {
    const opprof_site *s = opprof_capture_site(c, site);
    opprof__sb_printf(sb, "%s(%u): %s", s->file ? s->file : "?", s->line, s->function ? s->function : "?");
}

int opprof_capture_averages(const opprof_capture *c, opprof_averages **out) {
    return opprof_capture_averages_ex(c, NULL, out);
}

/* ---- one build: groups, then times, pools, memory, samples, time off the CPU ---- */

/* One build of key averages: the groups and what maps events to them. */
typedef struct work {
    const opprof_capture *c;
    const opprof_event *ev;
    size_t n_names, n_events, n_name_groups;
    bool by_shape, by_layer, extended;
    int stack_n;
    builder b;
    uint32_t *name_group;     /* name -> its group; ProfilerStep#N names share one */
    uint32_t *device_group;   /* device activities: [2 * name + (annotation)] -> group, or NULL */
    uint32_t *group_of_event; /* extended keys: event -> group */
    int32_t *layer_of_event;  /* grouped by layer: each event's, -1: none */
    uint8_t *flops_name;    /* names whose FLOPs opprof_flops counts (bit 0), whose bytes opprof_bytes models (bit 1) */
    int64_t *peaks;         /* per event, or NULL without memory */
    uint32_t *row_of_group; /* after make_rows: a group's row (UINT32_MAX: none) */
    opprof__parallel_runs runs; /* operators computed by several threads */
    opprof_averages *avg;
} work;

static bool is_device(const opprof_event *e) {
    return e->kind == OPPROF_KIND_DEVICE || e->kind == OPPROF_KIND_DEVICE_ANNOTATION;
}

static uint32_t name_group_of(const work *w, size_t i) {
    const opprof_event *e = &w->ev[i];
    return w->device_group && is_device(e) ? w->device_group[2 * e->name + (e->kind == OPPROF_KIND_DEVICE_ANNOTATION)]
                                           : w->name_group[e->name];
}

static uint32_t group_index_of(const work *w, size_t i) {
    return w->extended ? w->group_of_event[i] : name_group_of(w, i);
}

static group *group_of(const work *w, size_t i) { return &w->b.groups[group_index_of(w, i)]; }

static int new_group(work *w, const char *key, uint32_t *out) {
    if (opprof__grow((void **)&w->b.groups, &w->b.cap, w->b.n + 1, sizeof *w->b.groups)) return OPPROF_ENOMEM;
    memset(&w->b.groups[w->b.n], 0, sizeof *w->b.groups);
    w->b.groups[w->b.n].row.key = key;
    w->b.groups[w->b.n].layer = -1;
    w->b.groups[w->b.n].name_group = (uint32_t)w->b.n;
    *out = (uint32_t)w->b.n++;
    return 0;
}

/* Names to their base group; device activities get groups of their own,
 * apart from CPU events of the same name (PyTorch's key includes the device
 * type: a kernel and the operator of its name, nccl:all_reduce on the CPU and
 * on the GPU). */
static int name_groups(work *w) {
    const opprof_capture *c = w->c;
    uint32_t step_group = UINT32_MAX;
    for (size_t i = 0; i < w->n_names; i++) {
        const char *key = key_of(c->names[i]);
        w->flops_name[i] = (uint8_t)(opprof__counts_flops(c->names[i]) | opprof__counts_bytes(c->names[i]) << 1);
        if (key == STEP_KEY && step_group != UINT32_MAX) {
            w->name_group[i] = step_group;
        } else {
            if (new_group(w, key, &w->name_group[i])) return OPPROF_ENOMEM;
            w->b.groups[w->name_group[i]].row.mangled = opprof_capture_mangled_name(c, (uint32_t)i);
            if (key == STEP_KEY) step_group = w->name_group[i];
        }
    }
    if (c->info.device_name[0]) {
        w->device_group = opprof__alloc(2 * (w->n_names ? w->n_names : 1) * sizeof *w->device_group);
        if (!w->device_group) return OPPROF_ENOMEM;
        for (size_t k = 0; k < 2 * w->n_names; k++) w->device_group[k] = UINT32_MAX;
        uint32_t device_step[2] = {UINT32_MAX, UINT32_MAX}; /* ProfilerStep* of activities, of annotations */
        for (size_t i = 0; i < w->n_events; i++) {
            const opprof_event *e = &w->ev[i];
            if (!is_device(e)) continue;
            int annotation = e->kind == OPPROF_KIND_DEVICE_ANNOTATION;
            uint32_t *slot = &w->device_group[2 * e->name + annotation];
            if (*slot != UINT32_MAX) continue;
            /* renamed before grouping, as the CPU's: GPU-side ProfilerStep#N are one row */
            const char *key = key_of(c->names[e->name]);
            if (key == STEP_KEY && device_step[annotation] != UINT32_MAX) {
                *slot = device_step[annotation];
            } else {
                if (new_group(w, key, slot)) return OPPROF_ENOMEM;
                if (key == STEP_KEY) device_step[annotation] = *slot;
            }
        }
    }
    w->n_name_groups = w->b.n;
    return 0;
}

int32_t opprof_tensor_name_layer(const char *name) {
    if (!name) return -1;
    const char *suffix = strstr(name, " ("); /* ggml's " (view)", " (permuted)", " (copy of x)"... */
    size_t len = suffix ? (size_t)(suffix - name) : strlen(name), digits = 0;
    while (digits < len && name[len - 1 - digits] >= '0' && name[len - 1 - digits] <= '9') digits++;
    size_t stem = len - digits; /* the name before the number */
    if (!digits || digits > 6) return -1;
    bool dash = stem >= 2 && name[stem - 1] == '-';                                  /* "ffn_gate-7" */
    bool underscore_l = stem >= 3 && name[stem - 1] == 'l' && name[stem - 2] == '_'; /* "cache_k_l3" */
    if (!dash && !underscore_l) return -1;
    int32_t layer = 0;
    for (size_t k = stem; k < len; k++) layer = layer * 10 + (name[k] - '0');
    return layer;
}

/* Grouped by layer: each event's layer, from the tensor its "name" argument
 * names, or its "layer" argument (the ggml adapter's, for a node whose name
 * gives none: the layer of its inputs); a run's key part (which its parts'
 * group follows: join_parts) takes the layer that any of its parts names
 * (ggml describes a node on one part). */
static int event_layers(work *w) {
    const opprof_capture *c = w->c;
    w->layer_of_event = opprof__alloc((w->n_events ? w->n_events : 1) * sizeof *w->layer_of_event);
    if (!w->layer_of_event) return OPPROF_ENOMEM;
    for (size_t i = 0; i < w->n_events; i++) w->layer_of_event[i] = -1;
    for (size_t k = 0; k < c->n_marks; k++) {
        const opprof_mark *m = &c->marks[k];
        if (m->event < 0 || (size_t)m->event >= w->n_events) continue;
        bool named = m->kind == OPPROF_MARK_ARG_STR && strcmp(c->names[m->name], "name") == 0;
        bool given = m->kind == OPPROF_MARK_ARG_INT && strcmp(c->names[m->name], "layer") == 0;
        int32_t layer = named ? opprof_tensor_name_layer(c->names[m->value.str])
                        : given && m->value.i >= 0 && m->value.i < INT32_MAX ? (int32_t)m->value.i
                                                                             : -1;
        if (layer < 0) continue;
        w->layer_of_event[m->event] = layer;
        uint32_t run = w->runs.run_of_event ? w->runs.run_of_event[m->event] : UINT32_MAX;
        if (run != UINT32_MAX) w->layer_of_event[w->runs.runs[run].key_event] = layer;
    }
    return 0;
}

/* Grouped by input shape, layer or call stack: the name groups stay (possibly
 * empty); each event's extended key finds or makes its group. */
static int extended_groups(work *w) {
    for (size_t g = 0; g < w->n_name_groups; g++) w->b.groups[g].n_frames = -1; /* never matched */
    for (size_t i = 0; i < w->n_events; i++) {
        group key;
        memset(&key, 0, sizeof key);
        key.name_group = name_group_of(w, i);
        key.row.key = w->b.groups[key.name_group].row.key;
        key.row.mangled = w->b.groups[key.name_group].row.mangled;
        key.first_start = INT64_MAX;
        if (w->by_shape) key.shapes = opprof_capture_site(w->c, w->ev[i].site)->shapes;
        key.layer = w->by_layer ? w->layer_of_event[i] : -1;
        for (int32_t e = (int32_t)i; e >= 0 && key.n_frames < w->stack_n; e = w->ev[e].parent)
            if (w->ev[e].site && opprof_capture_site(w->c, w->ev[e].site)->file)
                key.frames[key.n_frames++] = w->ev[e].site;
        int rc = find_group(&w->b, &key, &w->group_of_event[i]);
        if (rc) return rc;
    }
    return 0;
}

static void first_seen(group *g, const opprof_event *e, size_t i, bool ties_by_thread) {
    if (e->start_ns < g->first_start || g->row.calls == 1 ||
        (ties_by_thread && e->start_ns == g->first_start && e->thread < g->first_thread)) {
        g->first_start = e->start_ns;
        g->first_thread = e->thread;
        g->first_index = i;
    }
}

/* A device row has no CPU time; a kernel's time also goes to the operator
 * that launched it, and to its subtree (device_subtree). */
static void add_device_event(work *w, size_t i, group *g, int64_t *device_subtree) {
    const opprof_event *e = &w->ev[i];
    g->row.device = true;
    OPPROF__SAT_ADD(g->row.self_device_ns, e->duration_ns);
    OPPROF__SAT_ADD(g->row.total_device_ns, e->duration_ns);
    if (e->kind == OPPROF_KIND_DEVICE) {
        OPPROF__SAT_ADD(w->avg->self_device_total_ns, e->duration_ns);
        if (e->parent >= 0) {
            OPPROF__SAT_ADD(group_of(w, (size_t)e->parent)->row.self_device_ns, e->duration_ns);
            OPPROF__SAT_ADD(device_subtree[e->parent], e->duration_ns);
        }
    }
    first_seen(g, e, i, false);
}

/* Calls, self and total time, peak memory, FLOPs; device time of each CPU
 * event's subtree, summed children to parents in one backward pass. */
static int add_times(work *w) {
    int64_t *device_subtree = NULL;
    if (w->c->info.device_name[0] &&
        !(device_subtree = opprof__calloc(w->n_events ? w->n_events : 1, sizeof *device_subtree)))
        return OPPROF_ENOMEM;
    for (size_t i = 0; i < w->n_events; i++) {
        const opprof_event *e = &w->ev[i];
        group *g = group_of(w, i);
        g->row.calls++;
        if (is_device(e)) {
            add_device_event(w, i, g, device_subtree);
            continue;
        }
        OPPROF__SAT_ADD(g->row.total_ns, e->duration_ns);
        OPPROF__SAT_ADD(g->row.self_ns, e->duration_ns);
        OPPROF__SAT_ADD(g->row.wall_ns, e->duration_ns);
        if (g->row.threads < 1) g->row.threads = 1;
        if (e->parent >= 0) {
            group *parent = group_of(w, (size_t)e->parent);
            OPPROF__SAT_SUB(parent->row.self_ns, e->duration_ns);
            parent->children++;
        }
        first_seen(g, e, i, true);
        if (w->peaks && w->peaks[i] > g->row.peak_mem) g->row.peak_mem = w->peaks[i];
        if ((w->flops_name[e->name] & 1) && e->site) {
            const opprof_shapes *sh = opprof_capture_shapes(w->c, opprof_capture_site(w->c, e->site)->shapes);
            OPPROF__SAT_ADD(g->row.flops, opprof_flops(w->c->names[e->name], sh));
        }
        if ((w->flops_name[e->name] & 2) && e->site) {
            const opprof_shapes *sh = opprof_capture_shapes(w->c, opprof_capture_site(w->c, e->site)->shapes);
            OPPROF__SAT_ADD(g->model_bytes, opprof_bytes(w->c->names[e->name], sh));
        }
    }
    for (size_t after = w->n_events; device_subtree && after > 0; after--) { /* last first */
        size_t i = after - 1;
        if (is_device(&w->ev[i])) continue;
        if (w->ev[i].parent >= 0) OPPROF__SAT_ADD(device_subtree[w->ev[i].parent], device_subtree[i]);
        OPPROF__SAT_ADD(group_of(w, i)->row.total_device_ns, device_subtree[i]);
    }
    opprof__free(device_subtree);
    /* FLOPs and bytes that operators stated themselves (opprof_range_flops/_bytes) */
    for (size_t k = 0; k < w->c->n_marks; k++) {
        const opprof_mark *m = &w->c->marks[k];
        if (m->event < 0 || (m->kind != OPPROF_MARK_FLOPS && m->kind != OPPROF_MARK_BYTES)) continue;
        group *g = group_of(w, (size_t)m->event);
        if (m->kind == OPPROF_MARK_FLOPS)
            OPPROF__SAT_ADD(g->row.flops, m->value.i);
        else
            OPPROF__SAT_ADD(g->row.bytes, m->value.i);
    }
    return 0;
}

/* Parallel runs: the parts of a run are one call, its wall time its span;
 * grouped by input shape or stack, every part joins the key part's group. */
static void join_parts(work *w) {
    if (!w->runs.n_runs || !w->extended) return;
    for (size_t i = 0; i < w->n_events; i++) {
        uint32_t run = w->runs.run_of_event[i];
        if (run != UINT32_MAX) w->group_of_event[i] = w->group_of_event[w->runs.runs[run].key_event];
    }
}

static void add_parallel(work *w) {
    for (size_t k = 0; k < w->runs.n_runs; k++) {
        const opprof__parallel_run *r = &w->runs.runs[k];
        group *g = group_of(w, r->key_event);
        int64_t span = r->end_ns - r->start_ns;
        g->row.calls -= (int64_t)r->parts - 1;
        OPPROF__SAT_SUB(g->row.wall_ns, r->sum_ns);
        OPPROF__SAT_ADD(g->row.wall_ns, span);
        OPPROF__SAT_ADD(g->row.wait_ns, (int64_t)r->parts * span - r->sum_ns);
        if ((int32_t)r->threads > g->row.threads) g->row.threads = (int32_t)r->threads;
        g->longest_parts += (double)r->max_ns;
        g->mean_parts += (double)r->sum_ns / (double)r->parts;
    }
    for (size_t g = 0; g < w->b.n; g++)
        if (w->b.groups[g].mean_parts > 0)
            w->b.groups[g].row.imbalance = w->b.groups[g].longest_parts / w->b.groups[g].mean_parts;
}

/* Rows of a profile without a timeline: calls and time, self and wall alike. */
static void add_aggregates(work *w) {
    for (size_t k = 0; k < w->c->n_aggregates; k++) {
        const opprof_aggregate_row *a = &w->c->aggregates[k];
        group *g = &w->b.groups[w->name_group[a->name]];
        if (!g->row.calls) {
            g->first_start = INT64_MIN;
            g->first_index = k;
        }
        g->row.calls += a->calls > 0 ? a->calls : 1; /* a row is at least one call: kept */
        if (a->device) {
            g->row.device = true;
            OPPROF__SAT_ADD(g->row.self_device_ns, a->total_ns);
            OPPROF__SAT_ADD(g->row.total_device_ns, a->total_ns);
            OPPROF__SAT_ADD(w->avg->self_device_total_ns, a->total_ns);
            continue;
        }
        OPPROF__SAT_ADD(g->row.total_ns, a->total_ns);
        OPPROF__SAT_ADD(g->row.self_ns, a->total_ns);
        OPPROF__SAT_ADD(g->row.wall_ns, a->total_ns);
        if (g->row.threads < 1) g->row.threads = 1;
    }
}

/* CPU Mem (and device memory): bytes of each event's subtree, summed
 * children to parents in one backward pass (parents precede children):
 * O(events), however deep the nesting. */
static int add_memory(work *w) {
    size_t n = w->n_events ? w->n_events : 1;
    bool devices = false; /* a device's memory: a second subtree sum */
    for (size_t j = 0; j < w->c->n_mem && !devices; j++) devices = w->c->mem[j].device_type != 0;
    /* the peaks' array, done with once add_times has read it, holds the sums: its pages are
     * already the process's (a fresh array's cost a fault each) */
    size_t bytes = (devices ? 2 * n : n) * sizeof(int64_t);
    int64_t *subtree = w->peaks ? opprof__realloc(w->peaks, bytes) : opprof__alloc(bytes);
    if (!subtree) return OPPROF_ENOMEM;
    w->peaks = NULL;
    memset(subtree, 0, bytes);
    int64_t *device = devices ? subtree + n : NULL;
    for (size_t j = 0; j < w->c->n_mem; j++) {
        const opprof_memory_event *m = &w->c->mem[j];
        if (m->owner < 0) continue;
        group *g = group_of(w, (size_t)m->owner);
        if (m->device_type != 0) {
            OPPROF__SAT_ADD(g->row.self_device_mem, m->bytes);
            OPPROF__SAT_ADD(device[m->owner], m->bytes);
            w->avg->device_memory = true;
        } else {
            OPPROF__SAT_ADD(g->row.self_cpu_mem, m->bytes);
            OPPROF__SAT_ADD(subtree[m->owner], m->bytes);
        }
    }
    for (size_t after = w->n_events; after > 0; after--) { /* last first */
        size_t i = after - 1;
        if (is_device(&w->ev[i])) continue;
        group *g = group_of(w, i);
        if (w->ev[i].parent >= 0) OPPROF__SAT_ADD(subtree[w->ev[i].parent], subtree[i]);
        OPPROF__SAT_ADD(g->row.cpu_mem, subtree[i]);
        if (!devices) continue;
        if (w->ev[i].parent >= 0) OPPROF__SAT_ADD(device[w->ev[i].parent], device[i]);
        OPPROF__SAT_ADD(g->row.device_mem, device[i]);
    }
    opprof__free(subtree);
    return 0;
}

/* Samples: each one's owner's group counts it as self, the owner's subtree
 * (a backward pass, parents before children) as total. A group's top frame
 * is the function that most of its self samples were in (their innermost
 * frame that is not an inlined one: an intrinsic or a small helper inlined
 * into a kernel names the kernel), with the source line most of those
 * samples were at, when debug information gave one. */
typedef struct group_frame {
    uint32_t group, frame, source;
} group_frame;

static int by_group_frame(const void *a, const void *b) {
    const group_frame *x = a, *y = b;
    if (x->group != y->group) return (x->group > y->group) - (x->group < y->group);
    if (x->frame != y->frame) return (x->frame > y->frame) - (x->frame < y->frame);
    return (x->source > y->source) - (x->source < y->source);
}

static void top_frames(work *w, group_frame *gf, size_t n) {
    qsort(gf, n, sizeof *gf, by_group_frame);
    int64_t best = 0;
    for (size_t i = 0, run; i < n; i += run) { /* one run per (group, frame) */
        int64_t best_source = 0;
        uint32_t source = UINT32_MAX;
        for (size_t j = i, sub; j < n && gf[j].group == gf[i].group && gf[j].frame == gf[i].frame; j += sub) {
            for (sub = 1; j + sub < n && !by_group_frame(&gf[j], &gf[j + sub]);) sub++;
            if (gf[j].source != UINT32_MAX && (int64_t)sub > best_source)
                best_source = (int64_t)sub, source = gf[j].source;
        }
        for (run = 1; i + run < n && gf[i + run].group == gf[i].group && gf[i + run].frame == gf[i].frame;) run++;
        if (i == 0 || gf[i].group != gf[i - 1].group) best = 0;
        if ((int64_t)run > best) {
            best = (int64_t)run;
            w->b.groups[gf[i].group].row.top_frame = w->c->names[gf[i].frame];
            w->b.groups[gf[i].group].top_source = source;
        }
    }
}

static bool inlined(const char *name) {
    size_t n = strlen(name), k = sizeof " [inlined]" - 1;
    return n > k && memcmp(name + n - k, " [inlined]", k) == 0;
}

static int add_samples(work *w) {
    const opprof_capture *c = w->c;
    int64_t *subtree = opprof__calloc(w->n_events ? w->n_events : 1, sizeof *subtree);
    group_frame *gf = opprof__alloc((c->n_samples ? c->n_samples : 1) * sizeof *gf);
    if (!subtree || !gf) {
        opprof__free(subtree);
        opprof__free(gf);
        return OPPROF_ENOMEM;
    }
    size_t n_gf = 0;
    for (size_t k = 0; k < c->n_samples; k++) {
        const opprof_sample *sm = &c->samples[k];
        if (sm->owner < 0) continue;
        group *g = group_of(w, (size_t)sm->owner);
        g->row.samples++;
        subtree[sm->owner]++;
        size_t n_frames, f = 0;
        const uint32_t *frames = opprof_capture_stack(c, sm->stack, &n_frames);
        const uint32_t *sources = opprof_capture_stack_sources(c, sm->stack, &n_frames);
        while (f + 1 < n_frames && inlined(c->names[frames[f]])) f++;
        if (n_frames)
            gf[n_gf++] =
                (group_frame){group_index_of(w, (size_t)sm->owner), frames[f], sources ? sources[f] : UINT32_MAX};
    }
    for (size_t after = w->n_events; after > 0; after--) {
        size_t i = after - 1;
        if (w->ev[i].parent >= 0 && !is_device(&w->ev[i])) subtree[w->ev[i].parent] += subtree[i];
        group_of(w, i)->row.total_samples += subtree[i];
    }
    top_frames(w, gf, n_gf);
    opprof__free(subtree);
    opprof__free(gf);
    return 0;
}

/* Off the CPU: each event's time off within its span, to its group (total)
 * and, less its children's, as self. */
static int add_off_cpu(work *w) {
    int64_t *off = NULL;
    int rc = opprof_capture_event_off_cpu(w->c, &off);
    if (rc) return rc;
    for (size_t i = 0; i < w->n_events; i++) {
        if (is_device(&w->ev[i])) continue;
        group *g = group_of(w, i);
        OPPROF__SAT_ADD(g->row.off_cpu_ns, off[i]);
        OPPROF__SAT_ADD(g->row.self_off_cpu_ns, off[i]);
        if (w->ev[i].parent >= 0) OPPROF__SAT_SUB(group_of(w, (size_t)w->ev[i].parent)->row.self_off_cpu_ns, off[i]);
    }
    opprof_free(off);
    return 0;
}

/* ---- rows ---- */

/* The groups that have events become rows, in first-seen order (first_index
 * differs between groups, so an unstable sort is deterministic), with their
 * texts: key, then shapes and stack when grouped by them. */
/* The texts of a row, one after the other in the averages' text. */
enum { TEXT_KEY, TEXT_SHAPES, TEXT_STACK, TEXT_TOP, TEXT_MANGLED, TEXTS };

/* The step's footprint: the rows' bytes (stated, else modelled) over the steps. */
static void step_bytes(opprof_averages *avg) {
    double bytes = 0;
    int64_t steps = 0;
    for (size_t i = 0; i < avg->n_rows; i++) {
        const opprof_average_row *r = &avg->rows[i];
        bytes += (double)(r->bytes > 0 ? r->bytes : avg->model_bytes[i]);
        if (!r->device && strcmp(r->key, STEP_KEY) == 0) steps += r->calls;
    }
    avg->step_bytes = bytes / (double)(steps > 0 ? steps : 1);
}

static int make_rows(work *w) {
    builder *b = &w->b;
    size_t kept = 0;
    for (size_t g = 0; g < b->n; g++) {
        b->groups[g].index = (uint32_t)g;
        if (b->groups[g].row.calls) b->groups[kept++] = b->groups[g];
    }
    if (kept > 1) qsort(b->groups, kept, sizeof *b->groups, group_compare);
    w->row_of_group = opprof__alloc((b->n ? b->n : 1) * sizeof *w->row_of_group);
    if (!w->row_of_group) return OPPROF_ENOMEM;
    for (size_t g = 0; g < b->n; g++) w->row_of_group[g] = UINT32_MAX;
    for (size_t g = 0; g < kept; g++) w->row_of_group[b->groups[g].index] = (uint32_t)g;
    size_t n_offsets = kept ? kept : 1;
    size_t *offsets = opprof__alloc(n_offsets * TEXTS * sizeof *offsets);
    opprof_averages *avg = w->avg;
    avg->rows = opprof__alloc(n_offsets * sizeof *avg->rows);
    opprof__strbuf text = {0};
    char buf[1024];
    for (size_t g = 0; offsets && g < kept; g++) {
        const group *gr = &b->groups[g];
        offsets[TEXTS * g + TEXT_KEY] = text.len;
        opprof__sb_put(&text, gr->row.key, strlen(gr->row.key) + 1);
        offsets[TEXTS * g + TEXT_MANGLED] = text.len;
        if (gr->row.mangled) opprof__sb_put(&text, gr->row.mangled, strlen(gr->row.mangled) + 1);
        offsets[TEXTS * g + TEXT_TOP] = text.len;
        if (gr->row.top_frame && gr->top_source != UINT32_MAX)
            opprof__sb_printf(&text, "%s (%s)", gr->row.top_frame, w->c->names[gr->top_source]),
                opprof__sb_put(&text, "", 1);
        else if (gr->row.top_frame)
            opprof__sb_put(&text, gr->row.top_frame, strlen(gr->row.top_frame) + 1);
        offsets[TEXTS * g + TEXT_SHAPES] = text.len;
        if (w->by_shape) {
            opprof_shapes_format(opprof_capture_shapes(w->c, gr->shapes), buf, sizeof buf);
            opprof__sb_put(&text, buf, strlen(buf) + 1);
        }
        offsets[TEXTS * g + TEXT_STACK] = text.len;
        for (int f = 0; w->stack_n > 0 && f < gr->n_frames; f++) {
            if (f) opprof__sb_put(&text, "\n", 1);
            frame_text(w->c, gr->frames[f], &text);
        }
        if (w->stack_n > 0) opprof__sb_put(&text, "", 1);
    }
    avg->children = opprof__alloc(n_offsets * sizeof *avg->children);
    avg->model_bytes = opprof__alloc(n_offsets * sizeof *avg->model_bytes);
    int rc = !offsets || !avg->rows || !avg->children || !avg->model_bytes || text.error ? OPPROF_ENOMEM : 0;
    for (size_t g = 0; !rc && g < kept; g++) {
        avg->children[g] = b->groups[g].children;
        avg->model_bytes[g] = b->groups[g].model_bytes;
        avg->rows[g] = b->groups[g].row;
        avg->rows[g].key = text.data + offsets[TEXTS * g + TEXT_KEY];
        avg->rows[g].mangled = b->groups[g].row.mangled ? text.data + offsets[TEXTS * g + TEXT_MANGLED] : NULL;
        avg->rows[g].top_frame = b->groups[g].row.top_frame ? text.data + offsets[TEXTS * g + TEXT_TOP] : NULL;
        avg->rows[g].input_shapes = w->by_shape ? text.data + offsets[TEXTS * g + TEXT_SHAPES] : NULL;
        avg->rows[g].layer = b->groups[g].layer;
        avg->rows[g].stack = w->stack_n > 0 ? text.data + offsets[TEXTS * g + TEXT_STACK] : NULL;
        OPPROF__SAT_ADD(avg->self_total_ns, b->groups[g].row.self_ns);
    }
    if (!rc) {
        avg->text = text.data;
        avg->text_size = text.cap;
        avg->n_rows = kept;
        step_bytes(avg);
    } else { /* the rows go here: n_rows does not say their size yet */
        opprof__sb_free(&text);
        opprof__free(avg->rows);
        opprof__free(avg->children);
        opprof__free(avg->model_bytes);
        avg->rows = NULL;
        avg->children = NULL;
        avg->model_bytes = NULL;
    }
    opprof__free(offsets);
    return rc;
}

/* Each row's times per step and per call (group_of is no longer valid:
 * make_rows kept the groups with events). */
static int add_distributions(work *w) {
    uint32_t *row_of_event = opprof__alloc((w->n_events ? w->n_events : 1) * sizeof *row_of_event);
    if (!row_of_event) return OPPROF_ENOMEM;
    for (size_t i = 0; i < w->n_events; i++) row_of_event[i] = w->row_of_group[group_index_of(w, i)];
    int rc = opprof__distributions_build(w->c, row_of_event, w->avg->n_rows, &w->runs, &w->avg->dist);
    opprof__free(row_of_event);
    return rc;
}

static void work_free(work *w) {
    opprof__free(w->row_of_group);
    opprof__free(w->name_group);
    opprof__free(w->device_group);
    opprof__free(w->group_of_event);
    opprof__free(w->layer_of_event);
    opprof__free(w->flops_name);
    opprof_free(w->peaks);
    opprof__free(w->b.groups);
    opprof__index_free(&w->b.index);
    opprof__parallel_runs_free(&w->runs);
    opprof_averages_free(w->avg);
}

/* ---- the API ---- */

/* The capture's warnings, for the table's footer and its JSON. */
static int copy_warnings(opprof_averages *avg, const opprof_capture *c) {
    if (!c->n_warnings) return 0;
    avg->warnings = opprof__calloc(c->n_warnings, sizeof *avg->warnings);
    if (!avg->warnings) return OPPROF_ENOMEM;
    for (size_t i = 0; i < c->n_warnings; i++, avg->n_warnings++)
        if (!(avg->warnings[i] = opprof__strdup(c->warnings[i]))) return OPPROF_ENOMEM;
    return 0;
}

int opprof_capture_averages_ex(const opprof_capture *c, const opprof_averages_options *options, opprof_averages **out) {
    if (!c || !out) return OPPROF_EINVAL;
    int stack_n = options ? options->group_by_stack_n : 0;
    if (stack_n < 0) return OPPROF_EINVAL;
    work w = {.c = c, .ev = c->events, .n_names = c->n_names, .n_events = c->n_events, .b = {.c = c}};
    w.by_shape = options && options->group_by_input_shape;
    w.by_layer = options && options->group_by_layer;
    w.stack_n = stack_n > MAX_STACK ? MAX_STACK : stack_n;
    w.extended = w.by_shape || w.by_layer || w.stack_n > 0;
    w.name_group = opprof__alloc((w.n_names ? w.n_names : 1) * sizeof *w.name_group);
    w.flops_name = opprof__calloc(w.n_names ? w.n_names : 1, 1);
    w.avg = opprof__calloc(1, sizeof *w.avg);
    if (w.extended) w.group_of_event = opprof__alloc((w.n_events ? w.n_events : 1) * sizeof *w.group_of_event);
    int rc = w.name_group && w.flops_name && w.avg && (!w.extended || w.group_of_event) ? 0 : OPPROF_ENOMEM;
    if (!rc && c->n_mem) rc = opprof_capture_peak_memory(c, &w.peaks);
    if (!rc) rc = opprof__parallel_runs_build(c, &w.runs);
    if (!rc) rc = name_groups(&w);
    if (!rc && w.by_layer) rc = event_layers(&w);
    if (!rc && w.extended) rc = extended_groups(&w);
    if (!rc) join_parts(&w);
    if (!rc) rc = add_times(&w);
    if (!rc) add_parallel(&w);
    if (!rc) add_aggregates(&w);
    if (!rc && c->n_mem) rc = add_memory(&w);
    if (!rc && c->n_samples) rc = add_samples(&w);
    if (!rc && c->n_off_cpu) rc = add_off_cpu(&w);
    if (!rc) rc = make_rows(&w);
    if (!rc && options && options->distributions) rc = add_distributions(&w);
    if (!rc) {
        opprof_averages *avg = w.avg;
        /* Columns follow what was recorded: memory when there are memory
         * events (a session with profile_memory that saw no allocation shows
         * none), FLOPs when asked for or stated by an operator. */
        avg->profile_memory = c->info.profile_memory && c->n_mem > 0;
        avg->flops_recorded = c->info.with_flops;
        avg->range_cost_ns = c->info.overhead_range_ns > 0 ? c->info.overhead_range_ns : 0;
        for (size_t k = 0; k < c->n_marks && !avg->flops_recorded; k++)
            avg->flops_recorded = c->marks[k].kind == OPPROF_MARK_FLOPS || c->marks[k].kind == OPPROF_MARK_BYTES;
        snprintf(avg->device_name, sizeof avg->device_name, "%s", c->info.device_name);
        avg->by_shape = w.by_shape;
        for (size_t r = 0; w.by_layer && r < avg->n_rows && !avg->by_layer; r++) /* a Layer column where one is named */
            avg->by_layer = avg->rows[r].layer >= 0;
        avg->stack_n = w.stack_n;
        avg->dropped_events = c->info.dropped_events;
        avg->producer = c->info.producer;
        avg->unended_ns = c->info.unended_ns;
        avg->duration_ns = c->info.duration_ns;
        avg->samples = (int64_t)c->n_samples;
        avg->sample_period_ns = c->info.sample_period_ns;
        avg->off_cpu = c->info.off_cpu || c->n_off_cpu;
        avg->parallel = w.runs.n_runs > 0;
        rc = copy_warnings(avg, c);
        if (!rc) {
            *out = avg;
            w.avg = NULL; /* else work_free frees it, once */
        }
    }
    work_free(&w);
    return rc;
}

void opprof_averages_free(opprof_averages *avg) {
    if (!avg) return;
    for (size_t i = 0; i < avg->n_warnings; i++) opprof__free(avg->warnings[i]);
    opprof__free(avg->warnings);
    opprof__free(avg->rows);
    opprof__free(avg->model_bytes);
    opprof__free(avg->children);
    opprof__free(avg->text);
    opprof__distributions_free(&avg->dist);
    opprof__free(avg);
}

size_t opprof_averages_steps(const opprof_averages *avg) { return avg ? avg->dist.steps : 0; }

int opprof_averages_row_distributions(const opprof_averages *avg, size_t row, opprof_row_distributions *out) {
    if (!avg || !out || row >= avg->n_rows || !avg->dist.steps) return OPPROF_EINVAL;
    *out = avg->dist.rows[row];
    return 0;
}

int opprof_averages_row_step_self(const opprof_averages *avg, size_t row, double *out) {
    if (!avg || !out || row >= avg->n_rows || !avg->dist.steps) return OPPROF_EINVAL;
    opprof__distributions_row_steps(&avg->dist, row, out);
    return 0;
}

int opprof_averages_row_step_wall(const opprof_averages *avg, size_t row, double *out) {
    if (!avg || !out || row >= avg->n_rows || !avg->dist.steps) return OPPROF_EINVAL;
    return opprof__distributions_row_walls(&avg->dist, row, out) ? 0 : OPPROF_ENOENT;
}

int opprof_averages_step_self_totals(const opprof_averages *avg, double *out) {
    if (!avg || !out || !avg->dist.steps) return OPPROF_EINVAL;
    memcpy(out, avg->dist.step_totals, avg->dist.steps * sizeof *out);
    return 0;
}

int opprof_averages_step_durations(const opprof_averages *avg, double *out) {
    if (!avg || !out || !avg->dist.steps) return OPPROF_EINVAL;
    memcpy(out, avg->dist.step_durations, avg->dist.steps * sizeof *out);
    return 0;
}

const opprof__distributions *opprof__averages_distributions(const opprof_averages *avg) { return &avg->dist; }

const opprof_average_row *opprof_averages_rows(const opprof_averages *avg, size_t *count) {
    if (count) *count = avg ? avg->n_rows : 0;
    return avg ? avg->rows : NULL;
}

int64_t opprof_averages_self_total_ns(const opprof_averages *avg) { return avg ? avg->self_total_ns : 0; }
int64_t opprof_averages_self_device_total_ns(const opprof_averages *avg) { return avg ? avg->self_device_total_ns : 0; }
const char *opprof_averages_device_name(const opprof_averages *avg) { return avg ? avg->device_name : ""; }
bool opprof__averages_device_memory(const opprof_averages *avg) { return avg->device_memory; }

/* Accessors for table.c and summary.c. */
bool opprof__averages_profile_memory(const opprof_averages *avg) { return avg->profile_memory; }
bool opprof__averages_flops_recorded(const opprof_averages *avg) { return avg->flops_recorded; }
bool opprof__averages_parallel(const opprof_averages *avg) { return avg->parallel; }

double opprof__averages_profiler_cost_ns(const opprof_averages *avg, const opprof_average_row *row) {
    size_t i = (size_t)(row - avg->rows);
    OPPROF__ASSERT(i < avg->n_rows);
    return avg->range_cost_ns * (double)avg->children[i];
}

double opprof__averages_range_cost_ns(const opprof_averages *avg) { return avg->range_cost_ns; }
uint64_t opprof__averages_dropped(const opprof_averages *avg) { return avg->dropped_events; }
size_t opprof__averages_warnings(const opprof_averages *avg) { return avg->n_warnings; }
const char *opprof__averages_warning(const opprof_averages *avg, size_t i) {
    return i < avg->n_warnings ? avg->warnings[i] : NULL;
}
opprof_producer opprof__averages_producer(const opprof_averages *avg) { return avg->producer; }
double opprof__averages_unended_share(const opprof_averages *avg) {
    if (!avg->unended_ns) return 0;
    return avg->duration_ns > 0 ? (double)avg->unended_ns / (double)avg->duration_ns : 1;
}
bool opprof__averages_by_shape(const opprof_averages *avg) { return avg->by_shape; }
bool opprof__averages_by_layer(const opprof_averages *avg) { return avg->by_layer; }
int opprof__averages_stack_n(const opprof_averages *avg) { return avg->stack_n; }

int64_t opprof_averages_sample_count(const opprof_averages *avg) { return avg ? avg->samples : 0; }
int64_t opprof_averages_sample_period_ns(const opprof_averages *avg) { return avg ? avg->sample_period_ns : 0; }
bool opprof_averages_off_cpu(const opprof_averages *avg) { return avg && avg->off_cpu; }

double opprof__averages_step_bytes(const opprof_averages *avg) { return avg ? avg->step_bytes : 0; }

int64_t opprof__averages_model_bytes(const opprof_averages *avg, const opprof_average_row *row) {
    size_t i = (size_t)(row - avg->rows);
    return avg && avg->model_bytes && i < avg->n_rows ? avg->model_bytes[i] : 0;
}
