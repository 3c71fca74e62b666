/* trace/reader_state.h - what the reader's files share: the parser over the
 * JSON lexer, the event being read, and the records kept for opprof check.
 * Seen by trace/reader*.c only. */
#ifndef OPPROF_READER_STATE_H
#define OPPROF_READER_STATE_H

#include "trace/json_lex.h"

/* ---- the parser ---- */

/* A complete event for the checks: its index in the capture (times, name
 * and thread are there) and its place. 24 bytes (was 48). */
typedef struct xrecord {
    int64_t offset, column;
    uint32_t event;
    uint32_t line; /* past 2^32 - 1 lines: that */
} xrecord;

/* An argument kept of an event (opprof's own; every writer's with keep_marks),
 * its key and string at offsets into its event's text (NUL-terminated). */
typedef struct event_arg {
    uint32_t key, str; /* str: of OPPROF_MARK_ARG_STR */
    uint8_t kind;      /* OPPROF_MARK_ARG_INT, _DOUBLE, _STR */
    bool flattened;    /* from true or false, or inside an array or object: no counter's value */
    int64_t i;
    double d;
} event_arg;

/* An event's arguments: as many as it gives, their text in one buffer. */
typedef struct event_args {
    event_arg *at;
    int n, cap;
    char *text;
    size_t text_len, text_cap;
} event_args;

typedef struct begun { /* a "B" event waiting for its "E" */
    uint32_t thread;
    int32_t outer; /* the one open before it on its thread, or -1 */
    uint8_t cat;   /* cat_class */
    int64_t ts, offset, line, column;
    int64_t tts;     /* its thread clock's time (keep_marks: "tts"), or -1 */
    uint64_t bind_id; /* its flow (v2), as event.bind_id and event.bound */
    uint8_t bound;
    char *name;      /* owned */
    event_args args; /* a copy of its arguments kept, owned (text in the same block); n 0: none */
} begun;

/* A memory event with a total, for the checks: its index in the capture
 * and its place. 24 bytes (was 56). */
typedef struct mrecord {
    int64_t offset, column;
    uint32_t mem;
    uint32_t line;
} mrecord;

/* Valid events that become no part of a capture, counted by kind, and the
 * words the reader's on_unused says them with: X(NAME, WORDS). */
#define UNUSED_EVENT_KINDS(X)                                            \
    X(FLOW, "flow events (s/t/f)")                                       \
    X(ASYNC, "async events (b/n/e, S/T/p/F)")                            \
    X(COUNTER, "counter samples (C)")                                    \
    X(INSTANT, "instant events (i/I/R)")                                 \
    X(OBJECT, "object events (N/O/D)")                                   \
    X(OTHER_PHASE, "events of other phases (P/V/v/c)")                   \
    X(SPAN, "Kineto spans (cat Trace)")                                  \
    X(PYTHON, "Python function events (left out, as key_averages does)") \
    X(FILTERED, "events PyTorch's key_averages leaves out by name")        \
    X(COUNTER_VALUE, "counter values that are no number (C: true, false, arrays, objects, words)") \
    X(BOUND_FLOW, "flows bound to events (bind_id; in opprof sql, those without flow_in or flow_out)")
enum {
#define UNUSED_ENUM(name, words) UNUSED_##name,
    UNUSED_EVENT_KINDS(UNUSED_ENUM)
#undef UNUSED_ENUM
    UNUSED_KINDS
};

typedef struct parser {
    opprof__json lx; /* first: a lexer callback gets its parser back from it */
    opprof_read_error *err;
    const opprof_read_options *opt;
    opprof_capture *cap;
    opprof__index thread_index; /* (pid, tid) -> the capture's thread */
    uint32_t last_thread;       /* the capture's thread + 1 of the last hit */
    char **string_ids;          /* string pids/tids ("CPU functions") */
    size_t n_string_ids, cap_string_ids;
    opprof__index string_index; /* string id -> its index: hostile traces name millions */
    struct process_label {
        int64_t pid;
        char text[32];
        char device[8]; /* "GPU", "MTIA"...: a device's process (Kineto's "GPU 0", "MTIA 17"), else "" */
        bool aggregate; /* TensorFlow's "/device:GPU:0/stream:all": its streams' events again */
    } * labels;         /* process_labels and process_name, applied at the end */
    size_t n_labels, cap_labels;
    opprof__index label_index; /* pid -> its label */
    xrecord *xs;
    size_t n_xs, cap_xs;
    mrecord *ms;
    size_t n_ms, cap_ms;
    begun *begins; /* "B" events not yet ended; a stack per thread through `outer` */
    size_t n_begins, cap_begins;
    int32_t *innermost; /* capture thread -> its innermost open "B", or -1 */
    size_t cap_innermost;
    int64_t min_ts, max_ts; /* the earliest time, the latest end */
    uint64_t problems;
    opprof__link *links; /* operators, runtime calls and device activities, by their ids */
    size_t n_links, cap_links;
    bool ours;                 /* the trace names opprof_version: opprof wrote it */
    bool translated;           /* the JSON is a .pftrace's translation: its places are none of the file's */
    char device_said[16];      /* its "opprof_device_name" ("MTIA"), which decides over the categories */
    int read_from;             /* its "opprof_read_from": the producer of the trace opprof converted, + 1; 0: none */
    bool keep_marks;           /* opprof_read_options.keep_marks: every writer's marks kept as ours */
    bool keep_event_marks;     /* ...its counters, instants, flows and async ranges (keep_marks too) */
    opprof_spilled_arg *spilled; /* scratch: an event's arguments as spill_args takes them */
    size_t cap_spilled;
    struct runtime_state {     /* other runtimes' rules (trace/reader_runtimes.c) */
        bool ort;              /* events of ONNX Runtime's categories were read */
        bool by_node;          /* ONNX Runtime's nodes are rows by node name (--group-by node) */
        bool trt;              /* rows of TensorRT's per-layer profile were read */
        bool tf;               /* TensorFlow's timeline: ops ("cat": "Op") were read */
        uint64_t tf_aggregate; /* its stream:all events, left out */
        struct tf_op {         /* each op: its event, node (args.name) */
            uint32_t event;
            uint64_t node;
        } * tf_ops;
        size_t n_tf_ops, cap_tf_ops;
        int64_t trt_runs; /* its "count" */
        uint64_t runs, fences;
        int64_t fence_us;
        opprof__strbuf startup; /* "name 1.234 ms, ..." of ORT's session start-up */
    } rt;
    opprof__strbuf mangled;          /* "opprof_mangled_names": name, mangled name, ... each ending in '\0' */
    bool kineto;                     /* Kineto's top-level keys or categories: PyTorch 1.8 and later */
    bool legacy_pytorch;             /* "pid": "CPU functions": PyTorch's legacy exporter */
    bool array_form;                 /* the trace is a bare event array ("[...]") */
    uint64_t string_times;           /* "ts" or "dur" written as strings, read as numbers */
    int64_t first_string_time;       /* the line of the first */
    uint64_t unused[UNUSED_KINDS];   /* valid events that are no part of the capture, by kind */
    struct sample_reader *samples;   /* "stackFrames" and "samples" until the end (trace/reader_samples.c) */
    struct profile_reader *profiles; /* Chrome's CPU profiles until the end (trace/reader_profiles.c) */
    uint64_t unmatched_ends;         /* "E" events with no "B" open on their thread */
    struct held_end {                /* a second thread's "E" with no "B" open on its thread in the half: a
                                        placeholder event that the join completes with the first half's "B" */
        uint32_t event, thread;      /* the placeholder, its thread (the half's) */
        int64_t ts;
    } * held_ends;
    size_t n_held_ends, cap_held_ends;
    int64_t string_base; /* ids written as strings are string_base - 1, - 2...: 0, or a second thread's */
    bool odd_ids;        /* a pid or tid below INT64_MIN / 4, where a second thread's string ids are */
    bool is_half;        /* the second thread's reader (trace/reader_split.c) */
    uint32_t *named;     /* ... the threads a "thread_name" named, in order */
    size_t n_named, cap_named;
    const char *path;            /* the plain file read (opprof_capture_read), for a second thread; or NULL */
    uint64_t file_dev, file_ino; /* ... the file that path named when it was opened */
    struct split *split;         /* the second thread reading the event array's second half (trace/reader_split.c) */
    int64_t split_at;            /* an event at or past this offset asks opprof__reader_split_reached */
} parser;
typedef struct split split;

#define HERE(p) OPPROF__JSON_HERE(&(p)->lx)
#define FAIL(p, ...) opprof__json_fail_at(&(p)->lx, HERE(p), __VA_ARGS__)

enum {
    HAS_TS = 1,
    HAS_DUR = 2,
    HAS_NAME = 4,
    HAS_PH = 8,
    HAS_BYTES = 16,
    HAS_TOTAL = 32,
    HAS_TTS = 64,
    HAS_TDUR = 128
};

/* A flow bound to its event (the Trace Event Format's v2 flows): event.bound. */
enum { BOUND_ID = 1, BOUND_IN = 2, BOUND_OUT = 4 };

/* What an event's "cat" says it is (Kineto's categories, PyTorch 1.8 to 2.x). */
typedef enum cat_class {
    CAT_OTHER = 0,         /* no category, or one of another tool: a CPU operator */
    CAT_CPU_OP,            /* "cpu_op", "Operator" */
    CAT_USER,              /* "user_annotation" */
    CAT_RUNTIME,           /* "cuda_runtime", "cuda_driver", "Runtime", "mtia_runtime": CPU rows */
    CAT_DEVICE,            /* kernels, copies, sets, syncs on a device */
    CAT_DEVICE_ANNOTATION, /* "gpu_user_annotation": a device row, never in totals */
    CAT_SPAN,              /* "Trace": Kineto's own span, never a row */
    CAT_PYTHON             /* "python_function": left out, as key_averages does */
} cat_class;

typedef struct event {
    char ph;
    char ph_text[8];
    uint8_t cat;      /* cat_class */
    bool mtia;        /* the category names MTIA */
    bool memory_name; /* name == "[memory]" */
    int have;
    int64_t pid, tid;
    int64_t ts, dur;
    int64_t bytes, addr, total;
    char *name; /* copy (owned by parser scratch) */
    size_t name_len, name_cap;
    char *arg_name; /* args.name of "M" events */
    size_t arg_name_cap;
    bool bad_type;
    const char *bad_field;
    const char *bad_why; /* NULL: "has the wrong type or is out of range" */
    bool has_dims, has_types;
    opprof_shapes shapes; /* args "Input Dims" and "Input type" */
    char *frame;          /* the first frame of args "Call stack" */
    size_t frame_cap;
    int64_t ext_id, corr_id; /* args "External id" ("external id": ext_lower), "correlation"; -1 */
    bool ext_lower;
    int64_t device_type; /* args "Device Type" of memory events (0: CPU) */
    int64_t device_id;   /* args "Device Id" (-1: none) */
    /* opprof's own traces: the arguments, ids and scopes its marks were written as; with
     * keep_marks every writer's, flattened as Perfetto's JSON importer flattens them */
    event_args args;
    char *flat_key; /* scratch: the key of a flattened argument being read */
    size_t flat_key_cap;
    int64_t tts, tdur; /* keep_marks: "tts" and "tdur", the thread clock's (HAS_TTS, HAS_TDUR) */
    uint64_t id;       /* "id" of flow, async and profile events: a number, or a string's
                          hexadecimal ("0x1f") or decimal number, or else its hash */
    bool has_id;
    uint64_t bind_id; /* "bind_id": the flow (v2) bound to this event, read as "id" is */
    uint8_t bound;    /* BOUND_ID when it has one, BOUND_IN ("flow_in"), BOUND_OUT ("flow_out") */
    char category[64];   /* opprof's traces: a range's category ("cat" after its kind) */
    uint8_t runtime;     /* another runtime's own category (trace/reader_runtimes.c), RT_NONE */
    char op_name[64];    /* ONNX Runtime: a node's operator type (args.op_name) */
    uint8_t layer;       /* TensorRT's per-layer profile: LAYER_... of the keys read */
    int64_t layer_count; /* "count" */
    double layer_ms;     /* "timeMs": the layer's time over every run */
    char scope;          /* "s" of instants: 't', 'p', 'g' */
} event;

/* The reader's one way out of memory: the error, naming what was being
 * kept ("begin events"), at the lexer's place. */
static inline int opprof__reader_no_memory(parser *p, const char *what) {
    return opprof__json_fail_code(&p->lx, OPPROF_ENOMEM, what);
}

/* ---- problems and whole-trace checks (trace/reader_checks.c) ---- */
/* A problem at an offset in the current window (opprof check). */
OPPROF__HIDDEN void opprof__reader_problem_at(parser *p, int64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A problem found after parsing, at a place remembered while parsing. */
OPPROF__HIDDEN void opprof__reader_problem_placed(parser *p, int64_t offset, int64_t line, int64_t column,
                                                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* The checks that need the whole trace are asked for (records kept for each event). */
OPPROF__HIDDEN bool opprof__reader_whole_checks(const parser *p);
/* A place read by an assumption (not JSON, but what its writers mean): a
 * problem for check marked `assumed`, and, when `warning`, the capture's
 * warning "line L: what". */
OPPROF__HIDDEN void opprof__reader_assumed(parser *p, int64_t offset, bool warning, const char *what);
/* The same at a place remembered while parsing, without a warning. */
OPPROF__HIDDEN void opprof__reader_assumed_placed(parser *p, int64_t offset, int64_t line, int64_t column,
                                                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Run them, once the events are read. */
OPPROF__HIDDEN void opprof__reader_check_whole(parser *p);

/* ---- other runtimes' rules (trace/reader_runtimes.c) ---- */
enum { RT_NONE = 0, RT_ORT_SESSION, RT_ORT_NODE, RT_TF_OP };
enum { LAYER_COUNT = 1, LAYER_TIME = 2 };
/* A key of an event object that is a runtime's own (TensorRT's "count",
 * "timeMs"): 0 or an error when taken, 1 when not its. */
OPPROF__HIDDEN int opprof__reader_runtime_key(parser *p, event *e, const char *k, size_t n);
/* An object of the event array without "ph": a runtime's row (1 when taken),
 * 0 when it is none, or an error. */
OPPROF__HIDDEN int opprof__reader_runtime_row(parser *p, event *e, int64_t offset);
/* The runtime a raw category ("cat") belongs to, RT_NONE for others. */
OPPROF__HIDDEN uint8_t opprof__reader_runtime_category(const char *cat, size_t n);
/* An argument of a runtime's event: 0 or an error when taken, 1 when not its. */
OPPROF__HIDDEN int opprof__reader_runtime_arg(parser *p, event *e, const char *k, size_t n);
/* A complete event of a runtime's: renamed and classed by its rules; 1 when
 * it is no row (counted or said apart), 0 when it goes on, or an error. */
OPPROF__HIDDEN int opprof__reader_runtime_event(parser *p, event *e);
/* After the events: the producer's facts (warnings said apart). */
OPPROF__HIDDEN int opprof__reader_runtime_finish(parser *p);
/* After the labels, before the device links: TensorFlow's device ops linked
 * to their host launch (by node), its runs made steps. */
OPPROF__HIDDEN int opprof__reader_runtime_links(parser *p);
/* The second thread's half joined: its counts added. */
OPPROF__HIDDEN int opprof__reader_runtime_join(parser *p, parser *half, size_t first_event);
OPPROF__HIDDEN void opprof__reader_runtime_free(parser *p);

/* ---- one event's fields (trace/reader_fields.c) ---- */
/* A pid or tid written as a string that is no number ("stream 7"): its
 * number, -1 for the first distinct one seen, -2 for the next... (below
 * p->string_base, which is 0 but for a second thread); and back. */
OPPROF__HIDDEN int opprof__reader_string_id(parser *p, const char *text, size_t len, int64_t *out);
OPPROF__HIDDEN const char *opprof__reader_string_of(const parser *p, int64_t id);
/* The 1-based index of an id among p's string ids, 0 when it is none. */
OPPROF__HIDDEN int64_t opprof__reader_string_index(const parser *p, int64_t id);
/* ---- an event's arguments (trace/reader_args.c) ---- */
/* An argument added: its key and (OPPROF_MARK_ARG_STR) string copied, the
 * value left for the caller; NULL when out of memory. */
OPPROF__HIDDEN event_arg *opprof__reader_arg_add(event_args *a, const char *key, size_t key_len, uint8_t kind,
                                                 const char *str, size_t str_len);
/* The key and string of an argument. */
static inline const char *opprof__reader_arg_key(const event_args *a, const event_arg *arg) {
    return a->text + arg->key;
}
static inline const char *opprof__reader_arg_str(const event_args *a, const event_arg *arg) {
    return arg->kind == OPPROF_MARK_ARG_STR ? a->text + arg->str : NULL;
}
/* `to` made a copy of `from` in one block (free `to->at`). */
OPPROF__HIDDEN int opprof__reader_args_copy(event_args *to, const event_args *from);
/* A number read (opprof__json_parse_number) as an argument KEY; NULL when out of memory. */
OPPROF__HIDDEN event_arg *opprof__reader_arg_number(event_args *a, const char *key, size_t key_len,
                                                    const opprof__json_number *v);
/* The value at the lexer as an argument KEY, any value, flattened: KEY.MEMBER,
 * KEY[i]; null left out, true and false 1 and 0. */
OPPROF__HIDDEN int opprof__reader_arg_flat(parser *p, event *e, const char *key, size_t key_len);
/* "PREFIX[i]", or "PREFIX[i][j]" when j >= 0, into key (room: the prefix and
 * 48 bytes): its length. Without printf: a Kineto operator has one a dimension. */
OPPROF__HIDDEN size_t opprof__reader_index_key(char *key, const char *prefix, int i, int j);

/* The lexer's callback for each key of an event object. */
OPPROF__HIDDEN int opprof__reader_event_key(opprof__json *lx, void *ctx, const char *k, size_t n);

/* ---- phases and the event array (trace/reader_phases.c) ---- */
/* The "traceEvents" array (or the legacy form's top-level array). */
OPPROF__HIDDEN int opprof__reader_parse_events(parser *p);
/* The events from the one the lexer is at (more: 1) to the array's end. */
OPPROF__HIDDEN int opprof__reader_parse_items(parser *p, int more);
/* The capture's thread of (pid, tid), added when new. */
OPPROF__HIDDEN int opprof__reader_thread_of(parser *p, int64_t pid, int64_t tid, uint32_t *index);
/* ... or -1 when the capture has no such thread (nothing added). */
OPPROF__HIDDEN int64_t opprof__reader_find_thread(parser *p, int64_t pid, int64_t tid);
/* What a complete event of this category and name is. */
OPPROF__HIDDEN opprof_kind opprof__reader_complete_kind(uint8_t cat, const char *name);
/* The innermost "B" still open on a thread (-1: none), and taking it off. */
OPPROF__HIDDEN int32_t opprof__reader_open_begin(const parser *p, uint32_t thread);
OPPROF__HIDDEN void opprof__reader_close_begin(parser *p, uint32_t thread);
/* trace/reader_samples.c: the top-level keys of samples ("stackFrames",
 * "samples") and of opprof's off-CPU times ("opprof_off_cpu",
 * "opprof_sampling"); 1 when the key is none of them. */
OPPROF__HIDDEN int opprof__reader_sample_key(parser *p, const char *k, size_t n);
/* The samples read, their stacks resolved, into the capture; then freed. */
OPPROF__HIDDEN int opprof__reader_samples_finish(parser *p);
OPPROF__HIDDEN void opprof__reader_samples_free(parser *p);
/* trace/reader_profiles.c: an event's args.data, kept until its phase is known. */
OPPROF__HIDDEN int opprof__reader_profile_data(parser *p);
/* Phase "P": a "Profile" or "ProfileChunk" takes the kept data; others are unused. */
OPPROF__HIDDEN int opprof__reader_take_profile(parser *p, event *e, int64_t offset);
/* Kept data that no profile event took, dropped (after every event). */
OPPROF__HIDDEN void opprof__reader_profile_drop(parser *p);
/* The profiles' samples into the capture; then freed. */
OPPROF__HIDDEN int opprof__reader_profiles_finish(parser *p);
OPPROF__HIDDEN void opprof__reader_profiles_free(parser *p);
/* Whether any CPU profile event was read. */
OPPROF__HIDDEN bool opprof__reader_profiles_seen(const parser *p);
/* "B" events never ended: completed at the trace's end, each a problem. */
OPPROF__HIDDEN int opprof__reader_unended_begins(parser *p);
OPPROF__HIDDEN void opprof__reader_free_begins(parser *p);
/* ---- processes' labels (trace/reader_labels.c) ---- */
/* A process's "process_labels" (is_label) or "process_name" text: the label
 * names its track; either may say the process is a device. */
OPPROF__HIDDEN int opprof__reader_set_label(parser *p, int64_t pid, const char *text, bool is_label);
/* The labels on every thread of their processes; a device's events become
 * device rows. */
OPPROF__HIDDEN void opprof__reader_apply_labels(parser *p);
/* The process is TensorFlow's aggregate of its device streams (stream:all). */
OPPROF__HIDDEN bool opprof__reader_aggregate_pid(parser *p, int64_t pid);
/* The labels that q read (a later part of the trace) onto p's, as if p had
 * read them; ids[k]: p's id of q's string id q->string_base - (k + 1). */
OPPROF__HIDDEN int opprof__reader_join_labels(parser *p, const parser *q, const int64_t *ids);

/* ---- two threads (trace/reader_split.c) ---- */
/* At the event array's first event: a second thread starts on its second
 * half when the trace is a plain file worth it (opprof_read_options.threads)
 * and no check needs the whole trace; p->split_at is then where to ask. */
OPPROF__HIDDEN void opprof__reader_split_start(parser *p);
/* At an event that starts at or past p->split_at: 1 when the second half
 * joined (the lexer is past the array), 0 to read on (p->split_at moved),
 * or a negative code. */
OPPROF__HIDDEN int opprof__reader_split_reached(parser *p, int64_t offset);
/* The second thread stopped, joined and its half dropped (if any). */
OPPROF__HIDDEN void opprof__reader_split_end(parser *p);
/* What a parser holds, freed (not its lexer nor its capture). */
OPPROF__HIDDEN void opprof__reader_free_parser(parser *p);

#endif /* OPPROF_READER_STATE_H */
