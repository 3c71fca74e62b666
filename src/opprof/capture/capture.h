/* capture/capture.h - the capture layer: the capture's own structure and
 * the builders that the recorder and the reader fill it through (names,
 * categories, warnings, call sites, shapes), nesting (capture/nesting.c).
 * Above the base layer only. */
#ifndef OPPROF_CAPTURE_LAYER_H
#define OPPROF_CAPTURE_LAYER_H

#include "base/base.h"

/* ---- capture (capture/capture.c) ---- */
/* An aggregate row (a layer of TensorRT's profile): name, calls, time in all. */
OPPROF__HIDDEN int opprof__capture_add_aggregate(opprof_capture *c, const char *name, size_t len, bool device,
                                                 int64_t calls, int64_t total_ns);
/* Demangle the C++ names (opprof_capture_finish does, once). */
OPPROF__HIDDEN int opprof__capture_demangle(opprof_capture *c);
/* The family of a producer's operator names (OPPROF_PRODUCERS); static. */
OPPROF__HIDDEN const char *opprof__producer_family(opprof_producer producer);
/* The producer whose opprof_producer_name is name, or -1. */
OPPROF__HIDDEN int opprof__producer_of_name(const char *name);
/* The name `name` (if an event has it) was demangled from `mangled` (a trace's opprof_mangled_names). */
OPPROF__HIDDEN int opprof__capture_set_mangled(opprof_capture *c, const char *name, const char *mangled);
struct opprof_capture {
    opprof_capture_info info;
    char host_name[256]; /* the machine's, as the trace says it (Kineto's "host_name"); "" */
    opprof_event *events;
    size_t n_events, cap_events;
    opprof_memory_event *mem;
    size_t n_mem, cap_mem;
    opprof_thread_info *threads;
    size_t n_threads, cap_threads;
    /* names: interned strings, looked up by a hash table */
    char **names;
    size_t n_names, cap_names;
    size_t name_bytes; /* the names' text, for opprof__capture_bytes */
    opprof__index name_index;
    char **mangled; /* per name below n_mangled: its C++ mangled form when names[i] was
                       demangled (opprof__capture_demangle), else NULL */
    size_t n_mangled;
    char **warnings;
    size_t n_warnings, cap_warnings;
    bool warning_lost;           /* one could not be kept (out of memory): a reader fails rather than drop it */
    opprof__index warning_index; /* the warnings by text: each is said once */
    /* call sites and input shapes, interned; index i lives at [i - 1] */
    opprof_site *sites;
    size_t n_sites, cap_sites;
    uint64_t sites_full; /* sites past OPPROF_MAX_SITES, left unknown */
    opprof__index site_index;
    opprof_shapes *shapes;
    size_t n_shapes, cap_shapes;
    opprof__index shape_index;
    uint32_t category_names[256]; /* event.category k (1..255) is names[category_names[k]] */
    uint32_t n_categories;
    opprof_mark *marks; /* counters, instants, args, flows, async, FLOPs, bytes */
    size_t n_marks, cap_marks;
    /* by event below n_spilled: the id of the arguments that the read set
       aside for it (opprof_read_options.spill_args), or -1; NULL when none
       was. 8 bytes an event instead of a mark's 32: a Kineto event has a set. */
    int64_t *spilled;
    size_t n_spilled, cap_spilled;
    opprof_aggregate_row *aggregates; /* rows of a profile without a timeline */
    size_t n_aggregates, cap_aggregates;
    opprof_sample *samples; /* capture/samples.c */
    size_t n_samples, cap_samples;
    uint32_t *frames; /* every stack's frames (name ids, innermost first), one after another */
    size_t n_frames, cap_frames;
    uint32_t *frame_sources; /* parallel to frames: name id of "file:line", or UINT32_MAX; NULL
                                while no frame has one (cap_frames entries when not NULL) */
    uint32_t *stack_first;   /* stack k's frames are frames[stack_first[k] .. stack_first[k + 1]) */
    size_t n_stacks, cap_stack_first;
    opprof__index stack_index;
    opprof_off_cpu *off_cpu;
    size_t n_off_cpu, cap_off_cpu;
    opprof_machine *machine;  /* the ceilings of the machine it ran on, or NULL */
    bool merge_only_children; /* PyTorch's _remove_dup_nodes (traces of other tools) */
    bool pids_as_read;        /* its threads' pids are a trace's: pid 0 is a process of its own */
    int finish_threads;       /* the threads finish may use: 1, or 0 for a helper where it helps */
    bool finished;
};

/* A stable merge sort, generic over the element's "before" relation (a
 * function `fn` of this file: the capture layer's sorts). */
#define DEFINE_MERGE_SORT(fn, type, before)                                                          \
    static int fn(type *items, size_t n) {                                                           \
        size_t i = 1;                                                                                \
        while (i < n && !before(&items[i], &items[i - 1])) i++;                                      \
        if (i >= n) return 0; /* already sorted */                                                   \
        type *tmp = opprof__alloc(n * sizeof *tmp);                                                  \
        if (!tmp) return OPPROF_ENOMEM;                                                              \
        /* runs of 16 by insertion (stable), then merges of runs */                                  \
        for (size_t lo = 0; lo < n; lo += 16) {                                                      \
            size_t hi = lo + 16 < n ? lo + 16 : n;                                                   \
            for (size_t j = lo + 1; j < hi; j++) {                                                   \
                if (!before(&items[j], &items[j - 1])) continue;                                     \
                type moving = items[j];                                                              \
                size_t k = j;                                                                        \
                for (; k > lo && before(&moving, &items[k - 1]); k--) items[k] = items[k - 1];       \
                items[k] = moving;                                                                   \
            }                                                                                        \
        }                                                                                            \
        type *src = items, *dst = tmp;                                                               \
        for (size_t width = 16; width < n; width *= 2) {                                             \
            for (size_t lo = 0; lo < n; lo += 2 * width) {                                           \
                size_t mid = lo + width < n ? lo + width : n;                                        \
                size_t hi = lo + 2 * width < n ? lo + 2 * width : n;                                 \
                size_t a = lo, b = mid, k = lo;                                                      \
                while (a < mid && b < hi) dst[k++] = before(&src[b], &src[a]) ? src[b++] : src[a++]; \
                while (a < mid) dst[k++] = src[a++];                                                 \
                while (b < hi) dst[k++] = src[b++];                                                  \
            }                                                                                        \
            type *swap = src;                                                                        \
            src = dst;                                                                               \
            dst = swap;                                                                              \
        }                                                                                            \
        if (src != items) memcpy(items, src, n * sizeof *items);                                     \
        opprof__free(tmp);                                                                           \
        return 0;                                                                                    \
    }

/* The marks that are arguments (and FLOPs, bytes), by event: those of event
 * e are order[first[e]] .. order[first[e + 1] - 1]. Empty (NULLs) when there
 * are none. */
typedef struct opprof__arg_index {
    uint32_t *first, *order;
    size_t n_order;
} opprof__arg_index;
OPPROF__HIDDEN int opprof__arg_index_build(opprof__arg_index *x, const opprof_capture *c);
OPPROF__HIDDEN void opprof__arg_index_free(opprof__arg_index *x);

/* The shortest duration among the `max` longest events, as a bound that keeps
 * at most `max` events (those at least as long); 0 when all fit. A caller
 * lasts at least as long as what it calls: every event kept has its callers.
 * (capture/capture.c; the HTML timeline's and the trace's size limits) */
/* A time a capture can hold: within +-OPPROF_MAX_TIME_NS of its start. */
static inline bool opprof__time_in_range(int64_t ns) { return ns >= -OPPROF_MAX_TIME_NS && ns <= OPPROF_MAX_TIME_NS; }
OPPROF__HIDDEN int64_t opprof__capture_longest_bound(const opprof_capture *c, size_t max);

/* ---- mark kinds (<opprof/mark_kinds.h>) ---- */
/* The kind belongs to its range (an argument, FLOPs, bytes). */
static inline bool opprof__mark_of_range(uint32_t kind) {
    switch (kind) {
#define OPPROF__OF_RANGE(name, value, phase, of_range, has_id, category) \
    case value: return of_range;
        OPPROF_MARK_KINDS(OPPROF__OF_RANGE)
#undef OPPROF__OF_RANGE
    default: return false;
    }
}
/* The Chrome phase a kind is written as (0: inside its range's event). */
static inline char opprof__mark_phase(uint32_t kind) {
    switch (kind) {
#define OPPROF__PHASE(name, value, phase, of_range, has_id, category) \
    case value: return phase;
        OPPROF_MARK_KINDS(OPPROF__PHASE)
#undef OPPROF__PHASE
    default: return 0;
    }
}
/* The kind written as a phase (-1: none). */
static inline int opprof__mark_of_phase(char ph) {
#define OPPROF__OF_PHASE(name, value, phase, of_range, has_id, category) \
    if (phase && ph == phase) return value;
    OPPROF_MARK_KINDS(OPPROF__OF_PHASE)
#undef OPPROF__OF_PHASE
    return -1;
}
/* The kind's value is an id that pairs it with other marks (flows, async ranges). */
static inline bool opprof__mark_has_id(uint32_t kind) {
    switch (kind) {
#define OPPROF__HAS_ID(name, value, phase, of_range, has_id, category) \
    case value: return has_id;
        OPPROF_MARK_KINDS(OPPROF__HAS_ID)
#undef OPPROF__HAS_ID
    default: return false;
    }
}
/* The "cat" of a kind's events. */
static inline const char *opprof__mark_category(uint32_t kind) {
    switch (kind) {
#define OPPROF__CATEGORY(name, value, phase, of_range, has_id, category) \
    case value: return category;
        OPPROF_MARK_KINDS(OPPROF__CATEGORY)
#undef OPPROF__CATEGORY
    default: return "";
    }
}

/* ---- device activities ---- */
/* A thread's process as a trace says it: its pid, or the capture's when it
 * has none in a capture built by hand. In a capture read from a trace, pid 0
 * is a process of that trace's (Kineto's "GPU 0", a trace event with no
 * "pid"), never the capture's. The one rule of both writers. */
static inline int64_t opprof__thread_pid(const opprof_capture *c, uint32_t thread) {
    const opprof_thread_info *th = &c->threads[thread];
    return th->pid || c->pids_as_read ? th->pid : c->info.pid;
}
/* A device activity: no CPU time, no place in the CPU tree; its `parent` is
 * the operator that launched it. */
static inline bool opprof__is_device(const opprof_event *e) {
    return e->kind == OPPROF_KIND_DEVICE || e->kind == OPPROF_KIND_DEVICE_ANNOTATION;
}
/* *index: the index (1..255) of a category for opprof_event.category; 0 when
 * the capture already has 255 of them. 0, or OPPROF_ENOMEM. */
OPPROF__HIDDEN int opprof__capture_category_index(opprof_capture *c, const char *category, uint8_t *index);
/* The arguments set aside for `event` (opprof_read_options.spill_args):
 * their id kept, or, when the event already keeps one (a child merged into
 * it), an OPPROF_SPILLED_ARGS_ARG mark of the event (capture/capture.c). */
OPPROF__HIDDEN int opprof__capture_set_spilled(opprof_capture *c, size_t event, int64_t id);
/* spilled made as long as the events (-1 for those past its end), so that
 * it can follow their reordering; 0 at once when no set was kept. */
OPPROF__HIDDEN int opprof__capture_cover_spilled(opprof_capture *c);
/* Intern a name; *id receives its index. */
OPPROF__HIDDEN int opprof__capture_intern(opprof_capture *c, const char *name, size_t len, uint32_t *id);
OPPROF__HIDDEN int opprof__capture_warnf(opprof_capture *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Intern input shapes (unused entries must be zero); *index >= 1. */
OPPROF__HIDDEN int opprof__capture_intern_shapes(opprof_capture *c, const opprof_shapes *shapes, uint32_t *index);
/* Intern a call site (file/function/native may be NULL) with a shapes index; *site >= 1. */
OPPROF__HIDDEN int opprof__capture_intern_site(opprof_capture *c, const char *file, const char *function, uint32_t line,
                                               uint32_t shapes, const char *native, uint32_t *site);
/* Add a finished capture's events, marks, memory events, samples, off-CPU
 * times, warnings and dropped counts to an unfinished one, its times moved by offset_ns
 * (capture/append.c). */
OPPROF__HIDDEN int opprof__capture_append(opprof_capture *dst, const opprof_capture *src, int64_t offset_ns);
/* The same without the threads, warnings and counts: src's events, marks,
 * memory events, samples and off-CPU times, its thread i being dst's
 * thread[i]. src's names, shapes, sites and categories are interned in its
 * order: what was new in src gets the ids it would have had if src's events
 * had been added to dst one by one. `names`, when not NULL, gives the name
 * that src's name i stands for where names[i] is not NULL (the placeholders
 * of a trace's second half, trace/reader_split.c). */
OPPROF__HIDDEN int opprof__capture_append_mapped(opprof_capture *dst, const opprof_capture *src, int64_t offset_ns,
                                                 const uint32_t *thread, const char *const *names);
/* The numbers of opprof_flight_info, as its traces (JSON's "opprof_flight",
 * Perfetto's "flight_" notes) and summary.json name them: one list. */
#define OPPROF__FLIGHT_NUMBERS(X)                                                                 \
    X(trigger_step)                                                                               \
    X(trigger_step_ns) X(median_step_ns) X(median_of) X(first_step) X(last_step) X(steps_dropped) \
        X(triggers_suppressed) X(saves_failed)
/* Add a sample whose frames (and sources: NULL, none) are name ids already
 * (capture/samples.c); a source is UINT32_MAX where unknown. */
OPPROF__HIDDEN int opprof__capture_add_sample_ids(opprof_capture *c, uint32_t thread, int64_t ts_ns,
                                                  const uint32_t *ids, const uint32_t *sources, size_t n);
/* The same in two steps, for readers that meet one stack many times: the
 * stack's index (added if new), then a sample of it. */
OPPROF__HIDDEN int opprof__capture_intern_stack(opprof_capture *c, const uint32_t *ids, const uint32_t *sources,
                                                size_t n, uint32_t *stack);
OPPROF__HIDDEN int opprof__capture_add_sample_stack(opprof_capture *c, uint32_t thread, int64_t ts_ns, uint32_t stack);
/* The samples' and off-CPU times' order, at finish. */
OPPROF__HIDDEN int opprof__capture_sort_samples(opprof_capture *c);
OPPROF__HIDDEN void opprof__capture_free_samples(opprof_capture *c);
/* The bytes a capture holds (its arrays and strings), roughly. */
OPPROF__HIDDEN size_t opprof__capture_bytes(const opprof_capture *c);
/* The names of dtypes by code, for recorded shapes; code 0 is "" (not a tensor). */
OPPROF__HIDDEN const char *opprof__dtype_name(unsigned code);
OPPROF__HIDDEN unsigned opprof__dtype_code(const char *name);

#endif /* OPPROF_CAPTURE_LAYER_H */
