/* averages.c - key averages: events grouped by name, self time and memory.
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

struct opprof_averages {
    opprof_average_row *rows;
    size_t n_rows;
    char *keys;          /* all keys, NUL-separated */
    size_t keys_size;
    int64_t self_total_ns;
    bool profile_memory;
    uint64_t dropped_events;
    size_t n_warnings;
};

/* Sums of values read from files wrap instead of overflowing (undefined in C). */
#define ADD(acc, v) ((acc) = (int64_t)((uint64_t)(acc) + (uint64_t)(v)))
#define SUB(acc, v) ((acc) = (int64_t)((uint64_t)(acc) - (uint64_t)(v)))

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
} group;

static int group_compare(const void *pa, const void *pb) {
    const group *a = pa, *b = pb;
    if (a->first_start != b->first_start) return a->first_start < b->first_start ? -1 : 1;
    if (a->first_thread != b->first_thread) return a->first_thread < b->first_thread ? -1 : 1;
    return a->first_index < b->first_index ? -1 : a->first_index > b->first_index;
}

int opprof_capture_averages(const opprof_capture *c, opprof_averages **out) {
    if (!c || !out) return OPPROF_EINVAL;
    int rc = OPPROF_ENOMEM;
    size_t n_names = c->n_names;
    uint32_t *group_of_name = opprof__alloc((n_names ? n_names : 1) * sizeof *group_of_name);
    group *groups = NULL;
    size_t n_groups = 0, cap_groups = 0;
    opprof_averages *avg = opprof__calloc(1, sizeof *avg);
    if (!group_of_name || !avg) goto fail;

    /* Names to groups: ProfilerStep#N names share one group. */
    uint32_t step_group = UINT32_MAX;
    for (size_t i = 0; i < n_names; i++) {
        const char *key = key_of(c->names[i]);
        if (key == STEP_KEY && step_group != UINT32_MAX) {
            group_of_name[i] = step_group;
            continue;
        }
        if (opprof__grow((void **)&groups, &cap_groups, n_groups + 1, sizeof *groups)) goto fail;
        memset(&groups[n_groups], 0, sizeof *groups);
        groups[n_groups].row.key = key;
        groups[n_groups].first_start = INT64_MAX;
        if (key == STEP_KEY) step_group = (uint32_t)n_groups;
        group_of_name[i] = (uint32_t)n_groups++;
    }

    const opprof_event *ev = c->events;
    for (size_t i = 0; i < c->n_events; i++) {
        group *g = &groups[group_of_name[ev[i].name]];
        g->row.calls++;
        ADD(g->row.total_ns, ev[i].duration_ns);
        ADD(g->row.self_ns, ev[i].duration_ns);
        if (ev[i].parent >= 0) SUB(groups[group_of_name[ev[ev[i].parent].name]].row.self_ns, ev[i].duration_ns);
        if (ev[i].start_ns < g->first_start ||
            (ev[i].start_ns == g->first_start && ev[i].thread < g->first_thread)) {
            g->first_start = ev[i].start_ns;
            g->first_thread = ev[i].thread;
            g->first_index = i;
        }
    }
    for (size_t j = 0; j < c->n_mem; j++) {
        int32_t o = c->mem[j].owner;
        if (o < 0) continue;
        ADD(groups[group_of_name[ev[o].name]].row.self_cpu_mem, c->mem[j].bytes);
        for (int32_t a = o; a >= 0; a = ev[a].parent) ADD(groups[group_of_name[ev[a].name]].row.cpu_mem, c->mem[j].bytes);
    }

    /* Keep groups that have events, in first-seen order (keys are distinct:
     * first_index differs, so an unstable sort is deterministic). */
    size_t kept = 0;
    for (size_t g = 0; g < n_groups; g++)
        if (groups[g].row.calls) groups[kept++] = groups[g];
    n_groups = kept;
    if (n_groups > 1) qsort(groups, n_groups, sizeof *groups, group_compare);

    size_t keys_size = 0;
    for (size_t g = 0; g < n_groups; g++) keys_size += strlen(groups[g].row.key) + 1;
    avg->rows = opprof__alloc((n_groups ? n_groups : 1) * sizeof *avg->rows);
    avg->keys = opprof__alloc(keys_size ? keys_size : 1);
    if (!avg->rows || !avg->keys) goto fail;
    avg->keys_size = keys_size ? keys_size : 1;
    char *k = avg->keys;
    for (size_t g = 0; g < n_groups; g++) {
        avg->rows[g] = groups[g].row;
        size_t len = strlen(groups[g].row.key) + 1;
        memcpy(k, groups[g].row.key, len);
        avg->rows[g].key = k;
        k += len;
        ADD(avg->self_total_ns, groups[g].row.self_ns);
    }
    avg->n_rows = n_groups;
    avg->profile_memory = c->info.profile_memory;
    avg->dropped_events = c->info.dropped_events;
    avg->n_warnings = c->n_warnings;
    rc = 0;
    *out = avg;
    avg = NULL;
fail:
    opprof__dealloc(group_of_name, (n_names ? n_names : 1) * sizeof *group_of_name);
    opprof__dealloc(groups, cap_groups * sizeof *groups);
    opprof_averages_free(avg);
    return rc;
}

void opprof_averages_free(opprof_averages *avg) {
    if (!avg) return;
    opprof__dealloc(avg->rows, (avg->n_rows ? avg->n_rows : 1) * sizeof *avg->rows);
    opprof__dealloc(avg->keys, avg->keys_size);
    opprof__dealloc(avg, sizeof *avg);
}

const opprof_average_row *opprof_averages_rows(const opprof_averages *avg, size_t *count) {
    if (count) *count = avg->n_rows;
    return avg->rows;
}

int64_t opprof_averages_self_total_ns(const opprof_averages *avg) { return avg->self_total_ns; }

/* Accessors for table.c and summary.c. */
bool opprof__averages_profile_memory(const opprof_averages *avg) { return avg->profile_memory; }
uint64_t opprof__averages_dropped(const opprof_averages *avg) { return avg->dropped_events; }
size_t opprof__averages_warnings(const opprof_averages *avg) { return avg->n_warnings; }
