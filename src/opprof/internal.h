/* internal.h - opprof's private declarations, shared by its source files. */
#ifndef OPPROF_INTERNAL_H
#define OPPROF_INTERNAL_H

#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <stdarg.h>
#include <stdio.h>

#define OPPROF__HIDDEN __attribute__((visibility("hidden")))

/* ---- allocator (alloc.c) ----
 * Every block opprof allocates goes through the hook of opprof_set_allocator
 * and carries its size: it is freed or grown by its pointer alone (the hook
 * is told the size it gave, always). */
OPPROF__HIDDEN void *opprof__alloc(size_t size);
OPPROF__HIDDEN void *opprof__calloc(size_t count, size_t size);
OPPROF__HIDDEN void *opprof__realloc(void *ptr, size_t new_size); /* ptr NULL: allocates */
OPPROF__HIDDEN void opprof__free(void *ptr);                       /* NULL: nothing */
OPPROF__HIDDEN char *opprof__strdup(const char *s);
/* The recorder's chunks, 64-byte aligned: mmap'd with the default allocator,
 * through the hook otherwise. The allocator must not change while chunks live
 * (it cannot: it is refused while a session is active). populate: map every
 * page now, in one call, rather than one fault at a time. */
OPPROF__HIDDEN void *opprof__alloc_chunk(size_t size, bool populate);
OPPROF__HIDDEN void opprof__free_chunk(void *ptr);
/* opprof__grow for large arrays: pages that mremap moves without copying;
 * freed with opprof__free_pages. */
OPPROF__HIDDEN int opprof__grow_pages(void **array, size_t *capacity, size_t need, size_t elem);
OPPROF__HIDDEN void opprof__free_pages(void *ptr);
/* A string returned through the public API (freed with opprof_free). */
OPPROF__HIDDEN char *opprof__public_string(const char *data, size_t len);

/* Sums of values read from files wrap instead of overflowing (undefined in C). */
#define OPPROF__WRAP_ADD(acc, v) ((acc) = (int64_t)((uint64_t)(acc) + (uint64_t)(v)))
#define OPPROF__WRAP_SUB(acc, v) ((acc) = (int64_t)((uint64_t)(acc) - (uint64_t)(v)))

/* Grow an array of `elem` bytes to hold at least `need` elements. */
OPPROF__HIDDEN int opprof__grow(void **array, size_t *capacity, size_t need, size_t elem);

/* ---- growing string (strbuf.c) ---- */
typedef struct opprof__strbuf {
    char *data;
    size_t len, cap;
    int error; /* sticky: first failure */
} opprof__strbuf;
OPPROF__HIDDEN void opprof__sb_put(opprof__strbuf *sb, const char *s, size_t n);
OPPROF__HIDDEN void opprof__sb_puts(opprof__strbuf *sb, const char *s);
OPPROF__HIDDEN void opprof__sb_printf(opprof__strbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
OPPROF__HIDDEN void opprof__sb_repeat(opprof__strbuf *sb, char c, size_t n);
/* Numbers as JSON and the traces write them, without printf: the text is
 * written backwards to end just before `end` (room: OPPROF__NUMBER_TEXT), and
 * its first character is returned. int: "-123"; us: nanoseconds as
 * microseconds with three decimals, 12345 -> "12.345". */
enum { OPPROF__NUMBER_TEXT = 32 };
OPPROF__HIDDEN char *opprof__int_text(int64_t v, char *end);
OPPROF__HIDDEN char *opprof__us_text(int64_t ns, char *end);
OPPROF__HIDDEN void opprof__sb_int(opprof__strbuf *sb, int64_t v);
OPPROF__HIDDEN void opprof__sb_us(opprof__strbuf *sb, int64_t ns);
/* A JSON string literal with quotes, escaping ", \ and control characters;
 * valid UTF-8 passes through, invalid bytes become U+FFFD. */
OPPROF__HIDDEN void opprof__sb_json_string(opprof__strbuf *sb, const char *s);
/* Text for HTML (element text or a quoted attribute): & < > " ' escaped. */
OPPROF__HIDDEN void opprof__sb_html(opprof__strbuf *sb, const char *s);
/* The first `max` bytes of s for HTML, "..." when cut (never inside a UTF-8
 * sequence; at most 255 bytes kept). */
OPPROF__HIDDEN void opprof__sb_html_cut(opprof__strbuf *sb, const char *s, size_t max);
OPPROF__HIDDEN void opprof__sb_free(opprof__strbuf *sb);
/* The one ending of a function that returns text: when rc is 0 (and the
 * buffer had no error), *out becomes a public string (opprof_free); the
 * buffer is freed either way. Returns the first error. */
OPPROF__HIDDEN int opprof__sb_finish(opprof__strbuf *sb, int rc, char **out);
/* text_table.c: n_rows x n_cols cells (row-major) under their titles, as
 * PyTorch lays its tables out; 0, or the buffer's error. */
OPPROF__HIDDEN int opprof__text_table(opprof__strbuf *sb, const char *const *titles, size_t n_cols,
                                      const char *const *cells, size_t n_rows);

/* ---- OPPROF_TRACE (autostart.c) ---- */
/* A program that starts its own session takes over from OPPROF_TRACE's: that
 * one stops and is saved first. */
OPPROF__HIDDEN void opprof__autostart_yield(void);

/* ---- environment (env.c) ---- */
/* The index of the variable's value among choices; fallback when unset or
 * not among them (said on stderr). */
OPPROF__HIDDEN int opprof__env_choice(const char *name, const char *const *choices, int count, int fallback);
/* A whole number in [lo, hi]; fallback when unset or invalid (said on stderr). */
OPPROF__HIDDEN long long opprof__env_int(const char *name, long long lo, long long hi, long long fallback);

/* ---- files (file.c) ---- */
/* Atomic file: open a temporary in path's directory; commit renames it. */
typedef struct opprof__file {
    FILE *fp;
    char *path;     /* path_len + 1 bytes */
    char *tmp_path; /* path_len + 16 bytes */
    size_t path_len;
    bool created;   /* tmp_path exists on disk */
} opprof__file;
OPPROF__HIDDEN int opprof__file_open(opprof__file *f, const char *path);
/* Flush, fsync, close and rename; on any failure removes the temporary. */
OPPROF__HIDDEN int opprof__file_commit(opprof__file *f);
OPPROF__HIDDEN void opprof__file_abort(opprof__file *f);

/* ---- clock (clock.c) ---- */
OPPROF__HIDDEN void opprof__clock_init(void);
/* Ticks: the TSC where it is invariant, else CLOCK_MONOTONIC nanoseconds.
 * Inline: it is half the cost of a range. */
extern OPPROF__HIDDEN int opprof__use_tsc;
/* ... and the kernel trusts it (see clock.c): a thread's reads never go
 * back, so the inline path may skip the per-thread monotonic guard. */
extern OPPROF__HIDDEN int opprof__tsc_monotonic;
OPPROF__HIDDEN uint64_t opprof__ticks_fallback(void);
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t opprof__ticks(void) {
    if (__builtin_expect(opprof__use_tsc, 1)) return __rdtsc();
    return opprof__ticks_fallback();
}
/* The same, read only once the loads before it have completed (rdtsc is
 * not ordered with them otherwise; lfence waits for them). */
static inline uint64_t opprof__ticks_fenced(void) {
    _mm_lfence();
    return opprof__ticks();
}
#else
static inline uint64_t opprof__ticks(void) { return opprof__ticks_fallback(); }
static inline uint64_t opprof__ticks_fenced(void) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return opprof__ticks();
}
#endif
OPPROF__HIDDEN double opprof__ns_per_tick(void);
OPPROF__HIDDEN int64_t opprof__monotonic_ns(void);
OPPROF__HIDDEN int64_t opprof__realtime_ns(void);

/* ---- the one hash table (index.c) ----
 * Slots hold an item's index + 1 (0: empty); the items are the caller's. To
 * find or add: reserve room for one more item, probe for the key, then use
 * the item in slots[k] or append the key and set slots[k] = its index + 1. */
typedef struct opprof__index {
    uint32_t *slots;
    size_t size; /* a power of two, or 0 before the first reserve */
} opprof__index;
typedef uint64_t (*opprof__index_hash_fn)(const void *ctx, uint32_t item);
typedef bool (*opprof__index_equal_fn)(const void *ctx, uint32_t item, const void *key);
/* Room for count + 1 items (count are in the table): rehashes with hash_of. */
OPPROF__HIDDEN int opprof__index_reserve(opprof__index *ix, size_t count, opprof__index_hash_fn hash_of,
                                         const void *ctx);
/* The slot of key (hash: the same function of it as hash_of of an equal item). */
static inline size_t opprof__index_probe(const opprof__index *ix, uint64_t hash, const void *key,
                                         opprof__index_equal_fn equal, const void *ctx) {
    size_t mask = ix->size - 1, k = (size_t)hash & mask;
    while (ix->slots[k] && !equal(ctx, ix->slots[k] - 1, key)) k = (k + 1) & mask;
    return k;
}
OPPROF__HIDDEN void opprof__index_free(opprof__index *ix);

/* ---- capture (capture.c) ---- */
struct opprof_capture {
    opprof_capture_info info;
    opprof_event *events;
    size_t n_events, cap_events;
    opprof_memory_event *mem;
    size_t n_mem, cap_mem;
    opprof_thread_info *threads;
    size_t n_threads, cap_threads;
    /* names: interned strings, looked up by a hash table */
    char **names;
    size_t n_names, cap_names;
    opprof__index name_index;
    char **warnings;
    size_t n_warnings, cap_warnings;
    /* call sites and input shapes, interned; index i lives at [i - 1] */
    opprof_site *sites;
    size_t n_sites, cap_sites;
    opprof__index site_index;
    opprof_shapes *shapes;
    size_t n_shapes, cap_shapes;
    opprof__index shape_index;
    uint32_t category_names[256]; /* event.category k (1..255) is names[category_names[k]] */
    uint32_t n_categories;
    opprof_mark *marks;       /* counters, instants, args, flows, async, FLOPs, bytes */
    size_t n_marks, cap_marks;
    bool merge_only_children; /* PyTorch's _remove_dup_nodes (traces of other tools) */
    bool finished;
};

/* The marks that are arguments (and FLOPs, bytes), by event: those of event
 * e are order[first[e]] .. order[first[e + 1] - 1]. Empty (NULLs) when there
 * are none. */
typedef struct opprof__arg_index {
    uint32_t *first, *order;
    size_t n_order;
} opprof__arg_index;
OPPROF__HIDDEN int opprof__arg_index_build(opprof__arg_index *x, const opprof_capture *c);
OPPROF__HIDDEN void opprof__arg_index_free(opprof__arg_index *x);

/* ---- device activities (device.c) ---- */
/* A device activity: no CPU time, no place in the CPU tree; its `parent` is
 * the operator that launched it. */
static inline bool opprof__is_device(const opprof_event *e) {
    return e->kind == OPPROF_KIND_DEVICE || e->kind == OPPROF_KIND_DEVICE_ANNOTATION;
}
/* What links a device activity to the CPU operator that launched it. */
enum { OPPROF__LINK_OP, OPPROF__LINK_RUNTIME, OPPROF__LINK_DEVICE };
typedef struct opprof__link {
    uint32_t event;   /* index in the capture, before opprof_capture_finish */
    uint8_t role;     /* OPPROF__LINK_* */
    bool ext_lower;   /* the activity's id is "external id" (PyTorch 1.8/1.9) */
    uint16_t thread;
    int64_t start, end;
    int64_t ext, corr; /* "External id" / "external id", "correlation"; -1: none */
} opprof__link;
/* Set each device activity's `parent` to its launching operator (an index
 * before finish; opprof_capture_finish keeps it through its sort), or -1.
 * Sorts `links`. */
OPPROF__HIDDEN int opprof__link_devices(opprof_capture *c, opprof__link *links, size_t n);
/* The index (1..255) of a category for opprof_event.category; 0 when the
 * capture already has 255 of them. */
OPPROF__HIDDEN uint8_t opprof__capture_category_index(opprof_capture *c, const char *category);
/* Intern a name; *id receives its index. */
OPPROF__HIDDEN int opprof__capture_intern(opprof_capture *c, const char *name, size_t len, uint32_t *id);
OPPROF__HIDDEN int opprof__capture_warnf(opprof_capture *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Intern input shapes (unused entries must be zero); *index >= 1. */
OPPROF__HIDDEN int opprof__capture_intern_shapes(opprof_capture *c, const opprof_shapes *shapes, uint32_t *index);
/* Intern a call site (file/function/native may be NULL) with a shapes index; *site >= 1. */
OPPROF__HIDDEN int opprof__capture_intern_site(opprof_capture *c, const char *file, const char *function,
                                               uint32_t line, uint32_t shapes, const char *native, uint32_t *site);
/* The names of dtypes by code, for recorded shapes; code 0 is "" (not a tensor). */
OPPROF__HIDDEN const char *opprof__dtype_name(unsigned code);
OPPROF__HIDDEN unsigned opprof__dtype_code(const char *name);

/* ---- averages (averages.c), for table.c and summary.c ---- */
OPPROF__HIDDEN bool opprof__averages_profile_memory(const opprof_averages *avg);
OPPROF__HIDDEN bool opprof__averages_device_memory(const opprof_averages *avg);
OPPROF__HIDDEN uint64_t opprof__averages_dropped(const opprof_averages *avg);
OPPROF__HIDDEN size_t opprof__averages_warnings(const opprof_averages *avg);
OPPROF__HIDDEN bool opprof__averages_by_shape(const opprof_averages *avg);
OPPROF__HIDDEN int opprof__averages_stack_n(const opprof_averages *avg);
/* flops.c: whether opprof_flops counts an operator of this name. */
OPPROF__HIDDEN bool opprof__counts_flops(const char *name);

/* ---- recorder (record.c), used by session.c ---- */
typedef struct opprof__recorder_config {
    bool profile_memory;
    bool record_shapes;
    bool with_stack;
    bool with_native_stack;
    uint64_t max_events;
} opprof__recorder_config;
/* Begin a new recording window (new epoch); threads reset their buffers lazily. */
OPPROF__HIDDEN void opprof__recorder_window_open(const opprof__recorder_config *cfg);
/* Stop recording; events already written stay readable. */
OPPROF__HIDDEN uint64_t opprof__recorder_window_close(void);
/* Copy the current window's events into a new capture (finished). */
OPPROF__HIDDEN int opprof__recorder_snapshot(opprof_capture **out, uint64_t window_start_ticks,
                                             uint64_t window_end_ticks);
OPPROF__HIDDEN uint64_t opprof__recorder_window_start_ticks(void);
/* The calling thread recorded in the current window and dropped nothing. */
OPPROF__HIDDEN bool opprof__recorder_thread_clean(void);

/* ---- stack tree (stacks.c): events merged by their path of names ---- */
typedef struct opprof__stack_node {
    int32_t parent;   /* node index, -1 for a root */
    uint32_t name;
    uint32_t depth;   /* 1 for a root */
    int64_t self_ns;  /* durations of its events minus their children's */
    int64_t total_ns; /* durations of its events */
} opprof__stack_node;
typedef struct opprof__stack_tree {
    opprof__stack_node *nodes; /* in first-seen order: a parent before its children */
    size_t n, cap;
    opprof__index index;       /* (parent, name) -> node */
    int32_t *node_of_event;    /* n_events entries */
    size_t n_events;
} opprof__stack_tree;
/* The paths merge the steps, as the tables do: every ProfilerStep#N is one
 * frame, named by opprof__stack_name ("ProfilerStep*"). */
OPPROF__HIDDEN int opprof__stack_tree_build(const opprof_capture *c, opprof__stack_tree *t);
OPPROF__HIDDEN const char *opprof__stack_name(const opprof_capture *c, uint32_t name);
/* ---- HTML pages (html.c) ---- */
/* html_timeline.c: the explorable timeline's section and data; the viewer
 * script (report.js), once per page, after the sections. */
OPPROF__HIDDEN int opprof__html_timeline(opprof__strbuf *sb, const opprof_capture *c);
OPPROF__HIDDEN void opprof__html_report_script(opprof__strbuf *sb);
/* The head of an opprof page (style included) up to <body><h1>title</h1>;
 * the tail with the sorting script. Tables of class "sortable" sort by a
 * click on a header; cells sort by their data-v, as text under a <th
 * data-text="1">, else as numbers. */
OPPROF__HIDDEN void opprof__html_begin(opprof__strbuf *sb, const char *title);
OPPROF__HIDDEN void opprof__html_end(opprof__strbuf *sb);
/* A table's name cell: the whole name to sort by and on hover, shown cut to
 * 80 characters (a kernel's 300-character name leaves the numbers on screen). */
OPPROF__HIDDEN void opprof__html_name_cell(opprof__strbuf *sb, const char *name);
OPPROF__HIDDEN void opprof__stack_tree_free(opprof__stack_tree *t);

#endif /* OPPROF_INTERNAL_H */
