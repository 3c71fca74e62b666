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
#include "internal.h"

#include <stdlib.h>
#include <string.h>

enum { MAX_STACK = 16 };

struct opprof_averages {
    opprof_average_row *rows;
    size_t n_rows;
    char *text;          /* keys, shapes and stacks, NUL-separated */
    size_t text_size;
    int64_t self_total_ns;
    int64_t self_device_total_ns;
    char device_name[16];
    bool device_memory;  /* memory events of a device other than the CPU */
    bool profile_memory;
    bool by_shape;
    int stack_n;
    uint64_t dropped_events;
    size_t n_warnings;
};


static const char STEP_PREFIX[] = "ProfilerStep#";
static const char STEP_KEY[] = "ProfilerStep*";

static const char *key_of(const char *name) {
    return strncmp(name, STEP_PREFIX, sizeof STEP_PREFIX - 1) == 0 ? STEP_KEY : name;
}

typedef struct group {
    opprof_average_row row;
    int64_t first_start;
    uint32_t first_thread;
    size_t first_index;
    /* the extended key */
    uint32_t name_group;
    uint32_t shapes;
    int n_frames;
    uint32_t frames[MAX_STACK]; /* site indexes; compared by file, function, line */
} group;

typedef struct builder {
    const opprof_capture *c;
    group *groups;
    size_t n, cap;
    uint32_t *table; /* extended keys: index + 1 */
    size_t table_size;
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

static uint64_t key_hash(const builder *b, const group *g) {
    uint64_t h = (uint64_t)g->name_group * 0x9E3779B97F4A7C15ull ^ g->shapes * 0xC2B2AE3D27D4EB4Full;
    for (int i = 0; i < g->n_frames; i++) h = (h ^ frame_hash(b->c, g->frames[i])) * 0x100000001B3ull;
    return h;
}

static bool same_key(const builder *b, const group *x, const group *y) {
    if (x->name_group != y->name_group || x->shapes != y->shapes || x->n_frames != y->n_frames) return false;
    for (int i = 0; i < x->n_frames; i++)
        if (!same_frame(b->c, x->frames[i], y->frames[i])) return false;
    return true;
}

/* The group of an extended key (added when new). */
static int find_group(builder *b, const group *key, uint32_t *out) {
    if ((b->n + 1) * 2 > b->table_size) {
        size_t size = b->table_size ? b->table_size * 2 : 256;
        uint32_t *t = opprof__calloc(size, sizeof *t);
        if (!t) return OPPROF_ENOMEM;
        for (size_t i = 0; i < b->n; i++) {
            size_t k = key_hash(b, &b->groups[i]) & (size - 1);
            while (t[k]) k = (k + 1) & (size - 1);
            t[k] = (uint32_t)i + 1;
        }
        opprof__dealloc(b->table, b->table_size * sizeof *b->table);
        b->table = t;
        b->table_size = size;
    }
    size_t k = key_hash(b, key) & (b->table_size - 1);
    for (; b->table[k]; k = (k + 1) & (b->table_size - 1))
        if (same_key(b, &b->groups[b->table[k] - 1], key)) {
            *out = b->table[k] - 1;
            return 0;
        }
    if (opprof__grow((void **)&b->groups, &b->cap, b->n + 1, sizeof *b->groups)) return OPPROF_ENOMEM;
    b->groups[b->n] = *key;
    b->table[k] = (uint32_t)b->n + 1;
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

int opprof_capture_averages_ex(const opprof_capture *c, const opprof_averages_options *options, opprof_averages **out) {
    if (!c || !out) return OPPROF_EINVAL;
    bool by_shape = options && options->group_by_input_shape;
    int stack_n = options ? options->group_by_stack_n : 0;
    if (stack_n < 0) return OPPROF_EINVAL;
    if (stack_n > MAX_STACK) stack_n = MAX_STACK;
    bool extended = by_shape || stack_n > 0;
    int rc = OPPROF_ENOMEM;
    size_t n_names = c->n_names, n_events = c->n_events;
    uint32_t *name_group = opprof__alloc((n_names ? n_names : 1) * sizeof *name_group);
    uint32_t *group_of_event = extended ? opprof__alloc((n_events ? n_events : 1) * sizeof *group_of_event) : NULL;
    uint8_t *flops_name = opprof__calloc(n_names ? n_names : 1, 1);
    int64_t *peaks = NULL;
    uint32_t *device_group = NULL; /* device activities' groups: [2 * name + (annotation)] */
    builder b = {.c = c};
    opprof__strbuf text = {0};
    size_t *offsets = NULL, n_offsets = 1;
    opprof_averages *avg = opprof__calloc(1, sizeof *avg);
    if (!name_group || !avg || !flops_name || (extended && !group_of_event)) goto fail;
    if (c->n_mem && (rc = opprof_capture_peak_memory(c, &peaks))) goto fail;
    rc = OPPROF_ENOMEM;

    /* Names to their base group: ProfilerStep#N names share one. */
    uint32_t step_group = UINT32_MAX;
    for (size_t i = 0; i < n_names; i++) {
        const char *key = key_of(c->names[i]);
        flops_name[i] = opprof__counts_flops(c->names[i]);
        if (key == STEP_KEY && step_group != UINT32_MAX) {
            name_group[i] = step_group;
            continue;
        }
        if (opprof__grow((void **)&b.groups, &b.cap, b.n + 1, sizeof *b.groups)) goto fail;
        memset(&b.groups[b.n], 0, sizeof *b.groups);
        b.groups[b.n].row.key = key;
        b.groups[b.n].name_group = (uint32_t)b.n;
        if (key == STEP_KEY) step_group = (uint32_t)b.n;
        name_group[i] = (uint32_t)b.n++;
    }
    size_t n_name_groups = b.n;

    const opprof_event *ev = c->events;
    /* Device activities are rows of their own, apart from CPU events of the
     * same name (PyTorch's key includes the device type): a kernel and the
     * operator of its name, nccl:all_reduce on the CPU and on the GPU. */
    if (c->info.device_name[0]) {
        device_group = opprof__alloc(2 * (n_names ? n_names : 1) * sizeof *device_group);
        if (!device_group) goto fail;
        for (size_t k = 0; k < 2 * n_names; k++) device_group[k] = UINT32_MAX;
        for (size_t i = 0; i < n_events; i++) {
            if (ev[i].kind != OPPROF_KIND_DEVICE && ev[i].kind != OPPROF_KIND_DEVICE_ANNOTATION) continue;
            uint32_t *slot = &device_group[2 * ev[i].name + (ev[i].kind == OPPROF_KIND_DEVICE_ANNOTATION)];
            if (*slot != UINT32_MAX) continue;
            if (opprof__grow((void **)&b.groups, &b.cap, b.n + 1, sizeof *b.groups)) goto fail;
            memset(&b.groups[b.n], 0, sizeof *b.groups);
            b.groups[b.n].row.key = key_of(c->names[ev[i].name]);
            b.groups[b.n].name_group = (uint32_t)b.n;
            *slot = (uint32_t)b.n++;
        }
        n_name_groups = b.n;
    }
#define NAME_GROUP(i)                                                                                    \
    (device_group && (ev[(i)].kind == OPPROF_KIND_DEVICE || ev[(i)].kind == OPPROF_KIND_DEVICE_ANNOTATION) \
         ? device_group[2 * ev[(i)].name + (ev[(i)].kind == OPPROF_KIND_DEVICE_ANNOTATION)]               \
         : name_group[ev[(i)].name])
    if (extended) {
        /* The name groups stay (possibly empty); extended keys follow them. */
        for (size_t g = 0; g < n_name_groups; g++) b.groups[g].n_frames = -1; /* never matched */
        for (size_t i = 0; i < n_events; i++) {
            group key;
            memset(&key, 0, sizeof key);
            key.row.key = b.groups[NAME_GROUP(i)].row.key;
            key.name_group = NAME_GROUP(i);
            key.first_start = INT64_MAX;
            if (by_shape) key.shapes = opprof_capture_site(c, ev[i].site)->shapes;
            for (int32_t e = (int32_t)i; e >= 0 && key.n_frames < stack_n; e = ev[e].parent)
                if (ev[e].site && opprof_capture_site(c, ev[e].site)->file) key.frames[key.n_frames++] = ev[e].site;
            if ((rc = find_group(&b, &key, &group_of_event[i]))) goto fail;
        }
        rc = OPPROF_ENOMEM;
    }
#define GROUP_OF(i) (extended ? group_of_event[(i)] : NAME_GROUP(i))

    /* Device time of each CPU event's subtree: its launches, then children
     * to parents in one backward pass (as CPU memory below). */
    int64_t *device_subtree = NULL;
    if (c->info.device_name[0]) {
        device_subtree = opprof__calloc(n_events ? n_events : 1, sizeof *device_subtree);
        if (!device_subtree) goto fail;
    }
    for (size_t i = 0; i < n_events; i++) {
        group *g = &b.groups[GROUP_OF(i)];
        g->row.calls++;
        if (ev[i].kind == OPPROF_KIND_DEVICE || ev[i].kind == OPPROF_KIND_DEVICE_ANNOTATION) {
            /* a device row: no CPU time; a kernel's time also goes to its launcher */
            g->row.device = true;
            OPPROF__WRAP_ADD(g->row.self_device_ns, ev[i].duration_ns);
            OPPROF__WRAP_ADD(g->row.total_device_ns, ev[i].duration_ns);
            if (ev[i].kind == OPPROF_KIND_DEVICE) {
                OPPROF__WRAP_ADD(avg->self_device_total_ns, ev[i].duration_ns);
                if (ev[i].parent >= 0) {
                    OPPROF__WRAP_ADD(b.groups[GROUP_OF(ev[i].parent)].row.self_device_ns, ev[i].duration_ns);
                    OPPROF__WRAP_ADD(device_subtree[ev[i].parent], ev[i].duration_ns);
                }
            }
            if (ev[i].start_ns < g->first_start || g->row.calls == 1) {
                g->first_start = ev[i].start_ns;
                g->first_thread = ev[i].thread;
                g->first_index = i;
            }
            continue;
        }
        OPPROF__WRAP_ADD(g->row.total_ns, ev[i].duration_ns);
        OPPROF__WRAP_ADD(g->row.self_ns, ev[i].duration_ns);
        if (ev[i].parent >= 0) OPPROF__WRAP_SUB(b.groups[GROUP_OF(ev[i].parent)].row.self_ns, ev[i].duration_ns);
        if (ev[i].start_ns < g->first_start || g->row.calls == 1 ||
            (ev[i].start_ns == g->first_start && ev[i].thread < g->first_thread)) {
            g->first_start = ev[i].start_ns;
            g->first_thread = ev[i].thread;
            g->first_index = i;
        }
        if (peaks && peaks[i] > g->row.peak_mem) g->row.peak_mem = peaks[i];
        if (flops_name[ev[i].name] && ev[i].site) {
            const opprof_shapes *sh = opprof_capture_shapes(c, opprof_capture_site(c, ev[i].site)->shapes);
            OPPROF__WRAP_ADD(g->row.flops, opprof_flops(c->names[ev[i].name], sh));
        }
    }
    /* FLOPs and bytes that operators stated themselves (opprof_range_flops/_bytes) */
    for (size_t k = 0; k < c->n_marks; k++) {
        const opprof_mark *m = &c->marks[k];
        if (m->event < 0 || (m->kind != OPPROF_MARK_FLOPS && m->kind != OPPROF_MARK_BYTES)) continue;
        group *g = &b.groups[GROUP_OF(m->event)];
        if (m->kind == OPPROF_MARK_FLOPS)
            OPPROF__WRAP_ADD(g->row.flops, m->value.i);
        else
            OPPROF__WRAP_ADD(g->row.bytes, m->value.i);
    }
    if (device_subtree) {
        for (size_t i = n_events; i-- > 0;) {
            if (ev[i].kind == OPPROF_KIND_DEVICE || ev[i].kind == OPPROF_KIND_DEVICE_ANNOTATION) continue;
            if (ev[i].parent >= 0) OPPROF__WRAP_ADD(device_subtree[ev[i].parent], device_subtree[i]);
            OPPROF__WRAP_ADD(b.groups[GROUP_OF(i)].row.total_device_ns, device_subtree[i]);
        }
        opprof__dealloc(device_subtree, (n_events ? n_events : 1) * sizeof *device_subtree);
    }
    if (c->n_mem) {
        /* CPU Mem (and device memory): bytes of each event's subtree, summed
         * children to parents in one backward pass (parents precede
         * children): O(events), however deep the nesting. */
        int64_t *subtree = opprof__calloc(2 * (n_events ? n_events : 1), sizeof *subtree);
        if (!subtree) goto fail;
        int64_t *device = subtree + (n_events ? n_events : 1);
        for (size_t j = 0; j < c->n_mem; j++) {
            int32_t o = c->mem[j].owner;
            if (o < 0) continue;
            if (c->mem[j].device_type != 0) {
                OPPROF__WRAP_ADD(b.groups[GROUP_OF(o)].row.self_device_mem, c->mem[j].bytes);
                OPPROF__WRAP_ADD(device[o], c->mem[j].bytes);
                avg->device_memory = true;
                continue;
            }
            OPPROF__WRAP_ADD(b.groups[GROUP_OF(o)].row.self_cpu_mem, c->mem[j].bytes);
            OPPROF__WRAP_ADD(subtree[o], c->mem[j].bytes);
        }
        for (size_t i = n_events; i-- > 0;) {
            if (ev[i].kind == OPPROF_KIND_DEVICE || ev[i].kind == OPPROF_KIND_DEVICE_ANNOTATION) continue;
            if (ev[i].parent >= 0) {
                OPPROF__WRAP_ADD(subtree[ev[i].parent], subtree[i]);
                OPPROF__WRAP_ADD(device[ev[i].parent], device[i]);
            }
            OPPROF__WRAP_ADD(b.groups[GROUP_OF(i)].row.cpu_mem, subtree[i]);
            OPPROF__WRAP_ADD(b.groups[GROUP_OF(i)].row.device_mem, device[i]);
        }
        opprof__dealloc(subtree, 2 * (n_events ? n_events : 1) * sizeof *subtree);
    }
#undef GROUP_OF
#undef NAME_GROUP
    opprof__dealloc(device_group, 2 * (n_names ? n_names : 1) * sizeof *device_group);
    device_group = NULL;

    /* Keep groups that have events, in first-seen order (first_index differs
     * between groups, so an unstable sort is deterministic). */
    size_t kept = 0;
    for (size_t g = 0; g < b.n; g++)
        if (b.groups[g].row.calls) b.groups[kept++] = b.groups[g];
    if (kept > 1) qsort(b.groups, kept, sizeof *b.groups, group_compare);

    /* Row texts: key, then shapes and stack when grouped by them. */
    n_offsets = kept ? kept : 1;
    offsets = opprof__alloc(n_offsets * 3 * sizeof *offsets);
    if (!offsets) goto fail;
    char buf[1024];
    for (size_t g = 0; g < kept; g++) {
        const group *gr = &b.groups[g];
        offsets[3 * g] = text.len;
        opprof__sb_put(&text, gr->row.key, strlen(gr->row.key) + 1);
        offsets[3 * g + 1] = text.len;
        if (by_shape) {
            opprof_shapes_format(opprof_capture_shapes(c, gr->shapes), buf, sizeof buf);
            opprof__sb_put(&text, buf, strlen(buf) + 1);
        }
        offsets[3 * g + 2] = text.len;
        if (stack_n > 0) {
            for (int f = 0; f < gr->n_frames; f++) {
                if (f) opprof__sb_put(&text, "\n", 1);
                frame_text(c, gr->frames[f], &text);
            }
            opprof__sb_put(&text, "", 1);
        }
    }
    if (text.error) goto fail;
    avg->rows = opprof__alloc((kept ? kept : 1) * sizeof *avg->rows);
    if (!avg->rows) goto fail;
    for (size_t g = 0; g < kept; g++) {
        avg->rows[g] = b.groups[g].row;
        avg->rows[g].key = text.data + offsets[3 * g];
        avg->rows[g].input_shapes = by_shape ? text.data + offsets[3 * g + 1] : NULL;
        avg->rows[g].stack = stack_n > 0 ? text.data + offsets[3 * g + 2] : NULL;
        OPPROF__WRAP_ADD(avg->self_total_ns, b.groups[g].row.self_ns);
    }
    avg->text = text.data;
    avg->text_size = text.cap;
    text = (opprof__strbuf){0};
    avg->n_rows = kept;
    avg->profile_memory = c->info.profile_memory;
    snprintf(avg->device_name, sizeof avg->device_name, "%s", c->info.device_name);
    avg->by_shape = by_shape;
    avg->stack_n = stack_n;
    avg->dropped_events = c->info.dropped_events;
    avg->n_warnings = c->n_warnings;
    rc = 0;
    *out = avg;
    avg = NULL;
fail:
    opprof__dealloc(name_group, (n_names ? n_names : 1) * sizeof *name_group);
    if (device_group) opprof__dealloc(device_group, 2 * (n_names ? n_names : 1) * sizeof *device_group);
    opprof__dealloc(group_of_event, (n_events ? n_events : 1) * sizeof *group_of_event);
    opprof__dealloc(flops_name, n_names ? n_names : 1);
    opprof_free(peaks);
    opprof__dealloc(b.groups, b.cap * sizeof *b.groups);
    opprof__dealloc(b.table, b.table_size * sizeof *b.table);
    opprof__dealloc(offsets, n_offsets * 3 * sizeof *offsets);
    opprof__sb_free(&text);
    opprof_averages_free(avg);
    return rc;
}

void opprof_averages_free(opprof_averages *avg) {
    if (!avg) return;
    opprof__dealloc(avg->rows, (avg->n_rows ? avg->n_rows : 1) * sizeof *avg->rows);
    opprof__dealloc(avg->text, avg->text_size);
    opprof__dealloc(avg, sizeof *avg);
}

const opprof_average_row *opprof_averages_rows(const opprof_averages *avg, size_t *count) {
    if (count) *count = avg->n_rows;
    return avg->rows;
}

int64_t opprof_averages_self_total_ns(const opprof_averages *avg) { return avg->self_total_ns; }
int64_t opprof_averages_self_device_total_ns(const opprof_averages *avg) { return avg ? avg->self_device_total_ns : 0; }
const char *opprof_averages_device_name(const opprof_averages *avg) { return avg ? avg->device_name : ""; }
bool opprof__averages_device_memory(const opprof_averages *avg) { return avg->device_memory; }

/* Accessors for table.c and summary.c. */
bool opprof__averages_profile_memory(const opprof_averages *avg) { return avg->profile_memory; }
uint64_t opprof__averages_dropped(const opprof_averages *avg) { return avg->dropped_events; }
size_t opprof__averages_warnings(const opprof_averages *avg) { return avg->n_warnings; }
bool opprof__averages_by_shape(const opprof_averages *avg) { return avg->by_shape; }
int opprof__averages_stack_n(const opprof_averages *avg) { return avg->stack_n; }
