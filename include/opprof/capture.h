/*
 * capture.h - what a capture holds and what it becomes: averages, PyTorch-style
 * tables, Chrome/Perfetto traces, summary.json.
 *
 * A capture is the one exchange type of opprof: a live session hands one to
 * on_trace_ready, and a capture can also be built event by event (tests, trace
 * readers). Once finished it is read-only and may be read from several threads.
 *
 * Times are integer nanoseconds from the capture's start; tables and traces
 * print microseconds, as PyTorch does. Memory is in bytes, signed (a free is
 * negative).
 *
 * NULL, one rule for all: an accessor (a function that returns a value, not
 * an error code) given a NULL capture, averages or ranks returns what an
 * empty one holds: 0, a zero struct, NULL for arrays and strings ("" for
 * names that are always strings, as the device's), and a count of 0. A
 * function that returns an error code returns OPPROF_EINVAL for a NULL
 * argument it needs. The *_free functions take NULL and do nothing.
 */
#ifndef OPPROF_CAPTURE_H
#define OPPROF_CAPTURE_H

#include <opprof/opprof.h>
#include <opprof/mark_kinds.h>
#include <opprof/stats.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Capture contents                                                          */
/* ------------------------------------------------------------------------- */

/** What an engine added to its ranges (opprof.h's counters, instants,
 *  arguments, flows, async ranges, FLOPs and bytes): the kinds of
 *  <opprof/mark_kinds.h>'s list, with what each value holds. */
typedef enum opprof_mark_kind {
#define OPPROF__MARK_KIND_ENUM(name, value, phase, of_range, has_id, category) OPPROF_MARK_##name = value,
    OPPROF_MARK_KINDS(OPPROF__MARK_KIND_ENUM)
#undef OPPROF__MARK_KIND_ENUM
        OPPROF_MARK_KIND_COUNT /* one past the last kind */
} opprof_mark_kind;

typedef struct opprof_mark {
    int64_t ts_ns;   /* from the capture's start (arguments, FLOPs, bytes: 0) */
    uint32_t kind;   /* opprof_mark_kind */
    uint32_t name;   /* name or key: opprof_capture_name */
    uint32_t thread; /* index into opprof_capture_threads() */
    int32_t event;   /* arguments, FLOPs, bytes: their event; else -1 */
    union {
        int64_t i;
        double d;
        uint64_t id;
        uint32_t str;
    } value;
} opprof_mark;

/** The most threads, and call sites, that a capture holds: 2^24 - 1 each
 *  (an event keeps each index in 24 bits, so that it stays 32 bytes). */
#define OPPROF_MAX_THREADS ((1u << 24) - 1)
#define OPPROF_MAX_SITES ((1u << 24) - 1)

/** A range or operator: a complete event ("ph":"X" in a trace). 32 bytes. */
typedef struct opprof_event {
    int64_t start_ns;      /* from the capture's start */
    int64_t duration_ns;   /* >= 0 */
    uint32_t name;         /* index for opprof_capture_name() */
    int32_t parent;        /* index of the enclosing event on the same thread, or -1; for a
                              device activity (OPPROF_KIND_DEVICE): the CPU operator that
                              launched it, or -1 */
    uint32_t site : 24;    /* call site and input shapes: opprof_capture_site(); 0 = unknown */
    uint32_t category : 8; /* 0: none; else see opprof_capture_category() */
    uint32_t thread : 24;  /* index into opprof_capture_threads() */
    uint32_t kind : 8;     /* opprof_kind */
} opprof_event;

/** Input shapes of an operator call (record_shapes). */
typedef struct opprof_shapes {
    int n_inputs;
    int ndim[OPPROF_MAX_INPUTS];
    int64_t dims[OPPROF_MAX_INPUTS][OPPROF_MAX_INPUT_DIMS];
    char dtype[OPPROF_MAX_INPUTS][16]; /* "" for a non-tensor input */
} opprof_shapes;

/** Where an event was begun, and with which input shapes. */
typedef struct opprof_site {
    const char *file;     /* NULL when unknown */
    const char *function; /* NULL when unknown */
    uint32_t line;
    uint32_t shapes;          /* index for opprof_capture_shapes(); 0 = none recorded */
    const char *native_stack; /* with_native_stack: "symbol+0x1f (libfoo.so);..." innermost
                                 first, else NULL */
} opprof_site;

/** An allocation (bytes > 0) or free (bytes < 0). */
typedef struct opprof_memory_event {
    int64_t ts_ns;
    uint64_t addr;
    int64_t bytes;
    int64_t total_allocated; /* the allocator's live bytes after the event */
    uint32_t thread;
    int32_t owner;       /* index of the innermost event open at ts_ns, or -1 */
    int32_t device_type; /* where the memory is, as Kineto numbers it: 0 CPU, 1 CUDA... */
    int32_t device_id;   /* which device of that type (-1: the CPU, or unknown) */
} opprof_memory_event;

typedef struct opprof_thread_info {
    int64_t tid;      /* the system's thread id */
    char name[64];    /* "" when unknown */
    int64_t pid;      /* its process (a merged trace has one or more per rank) */
    char process[32]; /* the process's label ("rank 1" in a merged trace), or "" */
    bool device;      /* a device's track: its process is labelled as one ("GPU 0", "MTIA 17"),
                         so its events are device activities */
} opprof_thread_info;

/** A native call-stack sample (opprof_config.sample_hz): when, on which
 *  thread, which call stack, and the innermost event of its thread open at
 *  its time (computed by opprof_capture_finish: the same rule as memory
 *  events' owners). */
typedef struct opprof_sample {
    int64_t ts_ns;
    uint32_t thread;
    uint32_t stack; /* opprof_capture_stack() */
    int32_t owner;  /* an event index, or -1: outside every range */
    int32_t pad;
} opprof_sample;

/** A time its thread spent off the CPU (opprof_config.off_cpu): switched
 *  out at start_ns, back in duration_ns later. */
typedef struct opprof_off_cpu {
    int64_t start_ns, duration_ns;
    uint32_t thread;
    bool preempted; /* switched out while it could run (preempted), else it blocked
                       (sleep, I/O, a lock, a page fault's wait) */
} opprof_off_cpu;

/** A flight recorder's save (opprof_flight): why it was made and what it holds. */
typedef struct opprof_flight_info {
    char reason[128];              /* "step 1834 took 2.9x the median of 50 steps"...; "" when the
                                      capture is not a flight recorder's save */
    int64_t trigger_step;          /* the triggering step's number; -1 for a dump */
    int64_t trigger_step_ns;       /* its duration (0 for a dump) */
    int64_t median_step_ns;        /* the rolling median of the steps before it (0: unknown) */
    int32_t median_of;             /* how many steps that median is of */
    int64_t first_step, last_step; /* the steps the capture holds */
    uint64_t steps_dropped;        /* steps the ring had dropped (whole) when it was saved */
    uint64_t triggers_suppressed;  /* triggers the cool-down suppressed since the last save */
    uint64_t saves_failed;         /* earlier saves whose on_trace_ready failed */
} opprof_flight_info;

/** Facts about a capture as a whole. */
/** Who wrote a trace read back: each producer's rules apply to its traces.
 *  The list, one entry a producer: X(ID, value, name as said, family), where
 *  the family is the vocabulary of its operators' names: `opprof diff` pairs
 *  two traces of different families layer by layer (nn speaks PyTorch's).
 *  Expanded into opprof_producer, opprof_producer_name and diff's pairing.
 *  - OPPROF: opprof (or a capture recorded here)
 *  - KINETO: PyTorch 1.8 and later (Kineto): PyTorch's rules
 *  - PYTORCH_LEGACY: PyTorch's legacy exporter ("pid": "CPU functions"): PyTorch's rules
 *  - OTHER: any other Chrome trace-event writer: the format's own meaning (B/E
 *    stacks, X nesting, recursion kept)
 *  - ONNXRUNTIME: ONNX Runtime's profile (enable_profiling): rows by operator
 *    type, runs as steps, start-up apart (docs/TRACE_FORMAT.md)
 *  - TENSORRT: TensorRT's per-layer profile (trtexec --exportProfile): aggregate
 *    rows, no timeline
 *  - TENSORFLOW: TensorFlow 1.x's timeline (Timeline.generate_chrome_trace_format):
 *    device streams counted once, host launch and device time apart, runs as steps */
#define OPPROF_PRODUCERS(X)                                      \
    X(OPPROF, 0, "opprof", "PyTorch")                            \
    X(KINETO, 1, "PyTorch (Kineto)", "PyTorch")                  \
    X(PYTORCH_LEGACY, 2, "PyTorch (legacy exporter)", "PyTorch") \
    X(OTHER, 3, "another trace-event writer", "trace events")    \
    X(ONNXRUNTIME, 4, "ONNX Runtime", "ONNX")                    \
    X(TENSORRT, 5, "TensorRT (per-layer profile)", "TensorRT")   \
    X(TENSORFLOW, 6, "TensorFlow (timeline)", "TensorFlow")      \
    OPPROF_EXTRA_PRODUCERS(X)
/* A build may add producers of its own (tests/extra_producer.h does); none. */
#ifndef OPPROF_EXTRA_PRODUCERS
#define OPPROF_EXTRA_PRODUCERS(X)
#endif
typedef enum opprof_producer {
#define OPPROF__PRODUCER_ENUM(id, value, name, family) OPPROF_PRODUCER_##id = value,
    OPPROF_PRODUCERS(OPPROF__PRODUCER_ENUM)
#undef OPPROF__PRODUCER_ENUM
} opprof_producer;
/** "opprof", "PyTorch (Kineto)", "PyTorch (legacy exporter)", "ONNX Runtime",
 *  "TensorRT (per-layer profile)", "TensorFlow (timeline)" or "another
 *  trace-event writer"; static. */
OPPROF_API const char *opprof_producer_name(opprof_producer producer);

typedef struct opprof_capture_info {
    int64_t step_num; /* the session's step number when it ended (-1 if none) */
    int64_t pid;
    int64_t base_time_ns;                       /* wall clock (ns since 1970) of the capture's start */
    int64_t duration_ns;                        /* from the capture's start to its end */
    uint64_t dropped_events;                    /* events past the budget, not recorded */
    bool profile_memory;                        /* memory events were recorded */
    opprof_schedule schedule;                   /* the session's schedule */
    double overhead_range_ns;                   /* measured cost of one range (begin + end) on this
                                                   machine when the session started; 0 if unknown */
    double overhead_memory_event_ns;            /* ... of one memory event */
    bool record_shapes, with_stack, with_flops; /* the session's options */
    int64_t process_peak_rss_bytes;             /* the process's peak resident memory at the capture's end, or 0 */
    char device_name[16];                       /* traces with device activities: "CUDA" (ROCm too, as Kineto
                                                   labels it) or "MTIA", as PyTorch names its columns; else "" */
    opprof_rank rank;                           /* the session's (config.rank) or the trace's "distributedInfo";
                                                   backend "" when not distributed */
    opprof_producer producer;                   /* who wrote the trace it was read from (OPPROF when recorded) */
    int64_t unended_ns;                         /* traces read back: the longest time given to a begin event that
                                                   never ended (read as lasting to the trace's end), 0 if none */
    opprof_flight_info flight;                  /* a flight recorder's save: its reason and steps */
    int64_t sample_period_ns;                   /* sampling (opprof_config.sample_hz): the CPU time between two
                                                   samples of a thread; 0: not sampled */
    bool off_cpu;                               /* switches were recorded (opprof_config.off_cpu): off-CPU times */
    uint64_t samples_lost;                      /* samples the kernel could not hand over (its buffer was full) */
    int64_t aggregate_runs;                     /* an aggregate profile's runs ("count": the iterations that its
                                                   totals add up), its steps; 0: none */
    int read_threads;                           /* traces read back: the threads that read it (2: the event array
                                                   in two halves, opprof_read_options.threads); 0 when recorded */
    char trace_format[8];                       /* traces read back: "json", or "proto" for a Perfetto trace
                                                   (.pftrace), gzip or not, as trace_processor's trace_type
                                                   names them; "" when recorded */
} opprof_capture_info;

/** The capture's facts. */
OPPROF_API opprof_capture_info opprof_capture_get_info(const opprof_capture *capture);
/** The events, sorted by thread, then start time, then longer first (parents
 *  before their children). *count receives their number. */
OPPROF_API const opprof_event *opprof_capture_events(const opprof_capture *capture, size_t *count);
/** The category that traces give an event of this kind, as Kineto names
 *  them: "cpu_op", "kernel" (a device activity), "gpu_user_annotation" or
 *  "user_annotation" (ranges and steps); static. */
OPPROF_API const char *opprof_kind_category(opprof_kind kind);
/** The category of an event (OPPROF_SCOPE_IN), or NULL. */
OPPROF_API const char *opprof_capture_category(const opprof_capture *capture, const opprof_event *event);
/** Set the category of the event added last (traces read back): 0, or
 *  OPPROF_ENOMEM (the event then has none); past 255 categories, none. */
OPPROF_API int opprof_capture_set_last_category(opprof_capture *capture, const char *category);
/** The marks, by thread then time (arguments, FLOPs and bytes: by event). */
OPPROF_API const opprof_mark *opprof_capture_marks(const opprof_capture *capture, size_t *count);
/** The id of the arguments that the read gave opprof_read_options.spill_args
 *  for an event (its first set: others are OPPROF_SPILLED_ARGS_ARG marks of
 *  the event), or -1 when it set none aside. */
OPPROF_API int64_t opprof_capture_spilled_set(const opprof_capture *capture, size_t event);
/** The memory events, sorted by thread then time. */
OPPROF_API const opprof_memory_event *opprof_capture_memory_events(const opprof_capture *capture, size_t *count);
OPPROF_API const opprof_thread_info *opprof_capture_threads(const opprof_capture *capture, size_t *count);
/** An event's name; NULL for an index out of range. Owned by the capture. */
OPPROF_API const char *opprof_capture_name(const opprof_capture *capture, uint32_t name);
/** C++ names are demangled when a capture is finished (opprof_demangle, within
 *  its bounds: "engine::step<float>(...)" for "_ZN6engine4stepIfEE..."),
 *  in every table, trace, flame graph and report; this is the name's mangled
 *  form, or NULL when it was not demangled. Valid while the capture lives. */
OPPROF_API const char *opprof_capture_mangled_name(const opprof_capture *capture, uint32_t name);

/** A row of a profile that holds totals, no timeline (TensorRT's `trtexec
 *  --exportProfile`: a layer's runs and time): key averages count it as
 *  `calls` calls of `total_ns` in all, self time and wall time alike, on the
 *  device when `device` (the capture's device then names the columns). */
typedef struct opprof_aggregate_row {
    uint32_t name; /* opprof_capture_name */
    bool device;   /* device time (TensorRT's layers: CUDA events around each) */
    int64_t calls;
    int64_t total_ns;
} opprof_aggregate_row;
/** The capture's aggregate rows (none for a timeline), valid while it lives. */
OPPROF_API const opprof_aggregate_row *opprof_capture_aggregate_rows(const opprof_capture *capture, size_t *count);
/** The number of distinct names. */
OPPROF_API size_t opprof_capture_name_count(const opprof_capture *capture);
/** A call site (0 is the unknown site: NULL file and function); NULL if out of range. */
OPPROF_API const opprof_site *opprof_capture_site(const opprof_capture *capture, uint32_t site);
/** Input shapes by index (0: none); NULL if out of range or 0. */
OPPROF_API const opprof_shapes *opprof_capture_shapes(const opprof_capture *capture, uint32_t shapes);
/** "[[128, 256], [512, 256], [512]]": shapes as PyTorch prints input_shapes
 *  ("[]" for none). buf gets at most size bytes, NUL included. */
OPPROF_API void opprof_shapes_format(const opprof_shapes *shapes, char *buf, size_t size);
/** The FLOPs of one call of `name` with `shapes` (NULL: 0): aten::addmm and
 *  aten::mm 2*M*K*N, aten::bmm 2*B*M*K*N, aten::add, aten::mul and their
 *  in-place forms the elements of input 0; ONNX Runtime's Gemm, FusedGemm and
 *  MatMul 2*M*K*N (N from B, or from the bias where its profile leaves the
 *  weight out); every other operator 0 (as PyTorch: aten::linear's FLOPs are
 *  counted in the aten::addmm inside it). */
OPPROF_API int64_t opprof_flops(const char *name, const opprof_shapes *shapes);
/** The compulsory traffic of one call of `name` with `shapes` (NULL: 0):
 *  each tensor input read once and the output written once, in bytes (the
 *  element size from each input's dtype; float32 where none is given):
 *  aten::addmm, aten::mm, aten::bmm (output M x N), and the elementwise
 *  operators (aten::add, aten::mul, aten::sub, aten::div and their in-place
 *  forms, aten::clamp_min, aten::clamp, aten::sigmoid, aten::tanh,
 *  aten::gelu, aten::copy_; output the size of input 0); 0 for every other
 *  operator (aten::relu is aten::clamp_min inside: leaves only, as FLOPs);
 *  ONNX Runtime's Gemm, FusedGemm, MatMul (with the weight its profile leaves
 *  out) and elementwise nodes (Relu, Add, Mul, Sub, Div, Sigmoid, Tanh, Gelu, Clip).
 *  A model from shapes, not measured traffic. */
OPPROF_API int64_t opprof_bytes(const char *name, const opprof_shapes *shapes);
/** For each event, the peak of allocated bytes reached while it ran, relative
 *  to the level at its start (>= 0): an array of opprof_capture_events' count,
 *  the caller's (opprof_free). All zero when no memory was recorded. */
OPPROF_API int opprof_capture_peak_memory(const opprof_capture *capture, int64_t **out_peaks);
/** The samples, by thread then time. */
OPPROF_API const opprof_sample *opprof_capture_samples(const opprof_capture *capture, size_t *count);
/** A sample's call stack: its frames' names (opprof_capture_name), innermost
 *  first; *count receives their number. NULL for a stack out of range. */
OPPROF_API const uint32_t *opprof_capture_stack(const opprof_capture *capture, uint32_t stack, size_t *count);
/** The source of each frame of a stack (opprof_capture_stack's order): the
 *  name id (opprof_capture_name) of "file:line", or UINT32_MAX where unknown;
 *  NULL when no frame of the capture has a source (no debug information). */
OPPROF_API const uint32_t *opprof_capture_stack_sources(const opprof_capture *capture, uint32_t stack, size_t *count);
/** The number of distinct call stacks. */
OPPROF_API size_t opprof_capture_stack_count(const opprof_capture *capture);
/** The times off the CPU, by thread then start. */
OPPROF_API const opprof_off_cpu *opprof_capture_off_cpu(const opprof_capture *capture, size_t *count);
/** Each event's time off the CPU within its span (opprof_capture_events'
 *  order), ns: an array the caller frees (opprof_free); all zero without
 *  off-CPU times. */
OPPROF_API int opprof_capture_event_off_cpu(const opprof_capture *capture, int64_t **out_ns);
/** The warnings that the capture carries (misuse of ranges, unfinished
 *  ranges, lost captures), each a sentence. Owned by the capture. */
OPPROF_API const char *const *opprof_capture_warnings(const opprof_capture *capture, size_t *count);

/* ------------------------------------------------------------------------- */
/* Building a capture by hand                                                */
/* ------------------------------------------------------------------------- */

/** A new empty capture, owned by the caller (opprof_capture_free). */
OPPROF_API int opprof_capture_new(opprof_capture **out);
OPPROF_API void opprof_capture_free(opprof_capture *capture);
/** Set the facts of the capture (pid, step_num, base time, dropped events,
 *  profile_memory, schedule). duration_ns is computed by finish. */
OPPROF_API void opprof_capture_set_info(opprof_capture *capture, const opprof_capture_info *info);
/** Add a thread; *index receives its index. The name is copied. */
OPPROF_API int opprof_capture_add_thread(opprof_capture *capture, int64_t tid, const char *name, uint32_t *index);
/** Times in a capture: within +-2^61 ns (73 years) of its start, so that
 *  every sum of a start and a duration fits, and every capture survives its
 *  own trace read back (the reader takes the same range). */
#define OPPROF_MAX_TIME_NS (INT64_C(1) << 61)
/** Add an event (name copied). OPPROF_EINVAL for a bad thread index, a
 *  negative duration, or a start or end beyond OPPROF_MAX_TIME_NS. */
OPPROF_API int opprof_capture_add_event(opprof_capture *capture, uint32_t thread, const char *name, opprof_kind kind,
                                        int64_t start_ns, int64_t duration_ns);
/** Give the event added last a call site (strings copied; file or function
 *  may be NULL) and input shapes (NULL: none). */
OPPROF_API int opprof_capture_set_last_site(opprof_capture *capture, const char *file, const char *function,
                                            uint32_t line, const opprof_shapes *shapes);
/** Add a memory event. total_allocated -1: computed as the running sum.
 *  OPPROF_EINVAL for a bad thread index or a time beyond OPPROF_MAX_TIME_NS. */
OPPROF_API int opprof_capture_add_memory(opprof_capture *capture, uint32_t thread, int64_t ts_ns, uint64_t addr,
                                         int64_t bytes, int64_t total_allocated);
/** Add a sample: its frames' names, innermost first (copied, interned). */
OPPROF_API int opprof_capture_add_sample(opprof_capture *capture, uint32_t thread, int64_t ts_ns,
                                         const char *const *frames, size_t n_frames);
/** The same with each frame's source, "file:line" (NULL: sources unknown;
 *  a NULL entry: that frame's). */
OPPROF_API int opprof_capture_add_sample_at(opprof_capture *capture, uint32_t thread, int64_t ts_ns,
                                            const char *const *frames, const char *const *sources, size_t n_frames);
/** Add a time off the CPU. OPPROF_EINVAL for a bad thread, a negative duration
 *  or a time beyond OPPROF_MAX_TIME_NS. */
OPPROF_API int opprof_capture_add_off_cpu(opprof_capture *capture, uint32_t thread, int64_t start_ns,
                                          int64_t duration_ns, bool preempted);
/** Add a warning sentence (copied, its control characters written as the
 *  escapes \n, \t, \x1b, \u009b: a terminal that prints it takes no
 *  command from it); a sentence the capture has already is kept once. */
OPPROF_API int opprof_capture_add_warning(opprof_capture *capture, const char *text);
/** Add a mark (`m`'s name and value.str are set from `name` and `str`). */
OPPROF_API int opprof_capture_add_mark(opprof_capture *capture, const opprof_mark *m, const char *name,
                                       const char *str);
/**
 * Sort the events and compute nesting: each event's parent is the innermost
 * event of the same thread that contains it; each memory event's owner is the
 * innermost event open at its time. Events that overlap without nesting are
 * cut to their parent's end and a warning says so. Call once after adding.
 */
OPPROF_API int opprof_capture_finish(opprof_capture *capture);

/* ------------------------------------------------------------------------- */
/* Averages (key_averages)                                                   */
/* ------------------------------------------------------------------------- */

typedef struct opprof_averages opprof_averages;

/** One row of key averages: all events of one key. */
typedef struct opprof_average_row {
    const char *key;     /* the name; ProfilerStep#N rows merge as "ProfilerStep*" */
    const char *mangled; /* a demangled C++ name's mangled form, or NULL */
    int64_t calls;
    int64_t self_ns;          /* durations minus direct children's */
    int64_t total_ns;         /* durations */
    int64_t cpu_mem;          /* net bytes allocated inside, children included */
    int64_t self_cpu_mem;     /* net bytes allocated inside, children excluded */
    int64_t peak_mem;         /* the largest peak of one call: allocated bytes above the
                                 level at its start (see opprof_capture_peak_memory) */
    int64_t flops;            /* FLOPs of all calls (opprof_flops, or opprof_range_flops) */
    int64_t bytes;            /* bytes moved of all calls (opprof_range_bytes), else 0 */
    int64_t self_device_ns;   /* traces with device activities (PyTorch's "Self CUDA"): for an
                                 operator, the activities it launched itself; for an activity,
                                 its duration */
    int64_t total_device_ns;  /* ... and of its children ("CUDA total") */
    int64_t device_mem;       /* device memory (memory events of a device other than the CPU):
                                 net bytes inside, children included ("CUDA Mem") */
    int64_t self_device_mem;  /* ... children excluded ("Self CUDA Mem") */
    bool device;              /* a row of device activities (kernels...), no CPU time */
    const char *input_shapes; /* "[[128, 256], ...]" when grouped by input shape, else NULL */
    const char *stack;        /* the top frames, innermost first, one per line
                                 ("profile_cpu.c(312): run"), when grouped by stack, else NULL */
    int64_t samples;          /* native samples (opprof_capture_samples) in its calls' self time */
    int64_t total_samples;    /* ... in its calls, children included */
    const char *top_frame;    /* the innermost frame most of its self samples were in, or NULL */
    int64_t off_cpu_ns;       /* time off the CPU within its calls (opprof_capture_off_cpu) */
    int64_t self_off_cpu_ns;  /* ... less its children's */
    /* Operators computed by several threads (opprof_range_part_of): a call is one
     * run of parts; total_ns sums the parts' thread time, wall_ns their spans. */
    int64_t wall_ns;  /* each call's first start to last end, summed (CPU rows:
                         total_ns where no call has parts) */
    int64_t wait_ns;  /* within its calls' wall times, the time each part's thread
                         was not in the part, summed over parts (barriers, skew) */
    int32_t threads;  /* the most threads one call ran on (1 for plain calls) */
    double imbalance; /* the longest part over the parts' mean, weighted by the
                         runs' wall times; 0 when no call has parts */
    int32_t layer;    /* grouped by layer: the layer its tensor is named for
                         (opprof_tensor_name_layer), -1: none or not grouped */
} opprof_average_row;

typedef struct opprof_averages_options {
    bool group_by_input_shape; /* one row per (name, input shapes) */
    int group_by_stack_n;      /* > 0: one row per (name, top N call sites); at most 16 */
    bool distributions;        /* also each row's times per step and per call, and their
                                  distributions (opprof_averages_row_distributions) */
    bool group_by_layer;       /* one row per (name, layer): the layer of the tensor that a
                                  call's "name" argument names (ggml's nodes, as llama.cpp
                                  names them: "ffn_gate-7"); a run of parts on several
                                  threads takes the layer that any of its parts names */
} opprof_averages_options;

/** The layer that a tensor's name is for, as llama.cpp names a layer's tensors:
 *  "ffn_gate-7" and "Kcur-0 (view) (permuted)" are 7 and 0 (a suffix "-N" once
 *  ggml's " (view)"-like suffixes are set aside), "cache_k_l3" is 3 ("_lN");
 *  -1 for a name of no layer ("inp_embd", "node_12", "result_output") or NULL. */
OPPROF_API int32_t opprof_tensor_name_layer(const char *name);

/** Group the capture's events by name. *out is owned by the caller
 *  (opprof_averages_free); it does not refer to the capture afterwards. */
OPPROF_API int opprof_capture_averages(const opprof_capture *capture, opprof_averages **out);
/** The same with grouping options (NULL: by name). */
OPPROF_API int opprof_capture_averages_ex(const opprof_capture *capture, const opprof_averages_options *options,
                                          opprof_averages **out);
OPPROF_API void opprof_averages_free(opprof_averages *averages);
/** The rows in first-seen order (by the start of each key's first event). */
OPPROF_API const opprof_average_row *opprof_averages_rows(const opprof_averages *averages, size_t *count);
/** The samples of the capture (in rows or outside every range), and the CPU
 *  time between two samples of a thread (0: not sampled). */
OPPROF_API int64_t opprof_averages_sample_count(const opprof_averages *averages);
OPPROF_API int64_t opprof_averages_sample_period_ns(const opprof_averages *averages);
/** The capture recorded its threads' times off the CPU. */
OPPROF_API bool opprof_averages_off_cpu(const opprof_averages *averages);
/** The sum of self time over all rows (the table's "Self CPU time total"). */
OPPROF_API int64_t opprof_averages_self_total_ns(const opprof_averages *averages);
/** The sum of device activities' time ("Self CUDA time total"); 0 without them. */
OPPROF_API int64_t opprof_averages_self_device_total_ns(const opprof_averages *averages);
/** The device's name in column titles ("CUDA", "MTIA"), or "" when the capture
 *  has no device activity (then no device column is shown). */
OPPROF_API const char *opprof_averages_device_name(const opprof_averages *averages);

/** A row's times as distributions (averages built with `distributions`).
 *  A step is a ProfilerStep#N range: an event belongs to the step that was
 *  open at its start (on any thread); events outside every step are in no
 *  step's sample. A capture without steps is one step, the whole capture. A
 *  row's time in a step where it did not run is 0. Times in nanoseconds. */
typedef struct opprof_row_distributions {
    opprof_distribution step_self, step_total; /* per step: the sums of its calls' times in it */
    opprof_distribution call_self, call_total; /* per call */
} opprof_row_distributions;

/** The number of steps of the distributions (>= 1), or 0 when the averages
 *  were built without them. */
OPPROF_API size_t opprof_averages_steps(const opprof_averages *averages);
/** Row `row`'s distributions. OPPROF_EINVAL: no such row, or built without them. */
OPPROF_API int opprof_averages_row_distributions(const opprof_averages *averages, size_t row,
                                                 opprof_row_distributions *out);
/** Row `row`'s self time in each step: opprof_averages_steps values (ns)
 *  into out. OPPROF_EINVAL: no such row, or built without distributions. */
OPPROF_API int opprof_averages_row_step_self(const opprof_averages *averages, size_t row, double *out);
/** Row `row`'s wall time in each step (opprof_averages_steps values, ns): a
 *  run of parts over a pool (opprof_range_part_of) counts its span once, any
 *  other call its duration. OPPROF_ENOENT: the capture has no runs of parts;
 *  OPPROF_EINVAL: no such row, or built without distributions. */
OPPROF_API int opprof_averages_row_step_wall(const opprof_averages *averages, size_t row, double *out);
/** The self time of every CPU row in each step (the table's "Self CPU time
 *  total", step by step) into out (opprof_averages_steps values). */
OPPROF_API int opprof_averages_step_self_totals(const opprof_averages *averages, double *out);
/** Each step's wall time, ns (ProfilerStep#N's duration; a capture without
 *  steps is one step, its duration) into out (opprof_averages_steps values):
 *  what a user waits for, which self CPU time summed over a pool's threads is
 *  not. OPPROF_EINVAL: built without distributions. */
OPPROF_API int opprof_averages_step_durations(const opprof_averages *averages, double *out);

/** Sort keys, as key_averages().table(sort_by=...) names them: the one list,
 *  that the enum, the names, the sort itself and `opprof report --help` are
 *  expanded from (a new key is one line).
 *  X(NAME, "PyTorch's name", "its older name" or NULL, the opprof_average_row
 *  field sorted by, 1 when divided by the calls) */
#define OPPROF_SORT_KEYS(X)                                                                         \
    X(SELF_CPU_TIME, "self_cpu_time_total", NULL, self_ns, 0)                                       \
    X(CPU_TIME_TOTAL, "cpu_time_total", NULL, total_ns, 0)                                          \
    X(CPU_TIME_AVG, "cpu_time", NULL, total_ns, 1)                                                  \
    X(SELF_CPU_MEMORY, "self_cpu_memory_usage", NULL, self_cpu_mem, 0)                              \
    X(CPU_MEMORY, "cpu_memory_usage", NULL, cpu_mem, 0)                                             \
    X(COUNT, "count", NULL, calls, 0)                                                               \
    X(PEAK_MEMORY, "cpu_memory_peak", NULL, peak_mem, 0) /* opprof's */                             \
    X(FLOPS, "flops", NULL, flops, 0)                                                               \
    X(SELF_DEVICE_TIME, "self_device_time_total", "self_cuda_time_total", self_device_ns, 0)        \
    X(DEVICE_TIME_TOTAL, "device_time_total", "cuda_time_total", total_device_ns, 0)                \
    X(DEVICE_TIME_AVG, "device_time", "cuda_time", total_device_ns, 1)                              \
    X(SELF_DEVICE_MEMORY, "self_device_memory_usage", "self_cuda_memory_usage", self_device_mem, 0) \
    X(DEVICE_MEMORY, "device_memory_usage", "cuda_memory_usage", device_mem, 0)                     \
    /* opprof's: the roofline's time above roof, computed by a view with a machine            \
     * (opprof_averages_roofline_to_string; its field unused); without one, first-seen order */     \
    X(TIME_ABOVE_ROOF, "time_above_roof", NULL, total_ns, 0)

typedef enum opprof_sort_key {
    OPPROF_SORT_NONE = 0, /* first-seen order ("none") */
#define OPPROF__SORT_KEY_ENUM(name, pytorch, older, field, per_call) OPPROF_SORT_##name,
    OPPROF_SORT_KEYS(OPPROF__SORT_KEY_ENUM)
#undef OPPROF__SORT_KEY_ENUM
        OPPROF_SORT_KEY_COUNT /* one past the last key */
} opprof_sort_key;

/** Parse PyTorch's name of a sort key. OPPROF_EINVAL if unknown. */
OPPROF_API int opprof_sort_key_parse(const char *name, opprof_sort_key *out);
/** PyTorch's name of a sort key ("" for OPPROF_SORT_NONE). */
OPPROF_API const char *opprof_sort_key_name(opprof_sort_key key);

/*
 * Outputs follow one naming rule:
 *   opprof_THING_FORM_to_string(thing, ..., char **out_text)   text the caller frees with opprof_free
 *   opprof_THING_FORM_write(thing, ..., const char *path)       a file, whole or not at all
 *   opprof_THING_FORM_write_stream(thing, FILE *out, ...)      a stream
 * FORM is table, json, html, chrome, stacks, diff or text.
 */

/** What a table shows, beyond PyTorch's default columns. Columns follow what
 *  was recorded: the memory columns only when the capture has memory events,
 *  the FLOPs columns (and GB/s, when bytes were stated) whenever FLOPs were
 *  recorded (with_flops, opprof_range_flops, opprof_range_bytes), `flops` or
 *  not. */
/* ------------------------------------------------------------------------- */
/* The machine's ceilings and each row against them (the roofline)           */
/* ------------------------------------------------------------------------- */

/** The most thread counts a machine profile holds, and its memory levels. */
#define OPPROF_MACHINE_MAX_THREADS 16
#define OPPROF_MACHINE_LEVELS 4

/** A memory level: "L1", "L2", "LLC" or "DRAM", its size (sysfs, per core for
 *  L1 and L2, the whole cache for the LLC; 0 for DRAM), and the bandwidth of
 *  a stream that loads (sums) a buffer of it and of one that copies it (its
 *  reads and writes counted), in GB/s (1e9 bytes per second), all threads. */
typedef struct opprof_machine_level {
    char name[8];
    int64_t bytes;
    double load_gbs, copy_gbs;
} opprof_machine_level;

/** The ceilings with `threads` threads, each on a buffer of its own. */
typedef struct opprof_machine_ceilings {
    int threads;
    double fma_peak_gflops; /* float32 FMAs of the ISA, all threads */
    opprof_machine_level levels[OPPROF_MACHINE_LEVELS];
} opprof_machine_ceilings;

/** A machine profile (`opprof machine --json`): the CPU, the ISA whose FMAs
 *  were measured ("AVX-512", "AVX2", "scalar": the widest the CPU has), and
 *  the ceilings for 1..threads threads. */
typedef struct opprof_machine {
    char cpu[128];
    char isa[16];
    int threads;
    opprof_machine_ceilings by_threads[OPPROF_MACHINE_MAX_THREADS];
} opprof_machine;

/** Measure this machine's ceilings for 1..threads threads (1 to
 *  OPPROF_MACHINE_MAX_THREADS; about two seconds a thread count): each
 *  figure the best of nine runs of about 15 ms (a busy host lowers some). */
OPPROF_API int opprof_machine_measure(int threads, opprof_machine *out);
/** The same, quicker (a capture's start: a fraction of a second, which
 *  bench_roofline times): each figure the best of three runs of about 3 ms.
 *  Both stream DRAM through a buffer of 16 LLCs (at most 1 GiB), made once a
 *  measurement. Lower than opprof_machine_measure's on a busy host, never
 *  higher: keep the best of several (opprof_machine_keep_best). */
OPPROF_API int opprof_machine_measure_quick(int threads, opprof_machine *out);
/** Each figure of *into the larger of its own and other's, for the thread
 *  counts both have (a roof is the best the machine was seen to do: "best
 *  of the start and the end" of a long capture). OPPROF_EFORMAT when the two
 *  are not of the same CPU and ISA (into unchanged). */
OPPROF_API int opprof_machine_keep_best(opprof_machine *into, const opprof_machine *other);
/** This machine's CPU and ISA as a profile says them, without measuring
 *  (the ceilings are left 0). */
OPPROF_API int opprof_machine_identify(opprof_machine *out);
/** The profile of this machine for 1..threads threads from the user's cache
 *  of them, else measured (opprof_machine_measure_quick) and kept there for
 *  the next time. The cache is a file per CPU (its model and flags), ISA, thread
 *  count and opprof version: opprof_machine_cache_path says which, under
 *  $OPPROF_MACHINE_CACHE, else $XDG_CACHE_HOME/opprof, else ~/.cache/opprof.
 *  A cache file that is not such a profile of this CPU and ISA (corrupt,
 *  another machine's, fewer threads) is never trusted: measured again and
 *  replaced. *said (said_size bytes; NULL: none) gets one sentence on where
 *  the profile came from, with any cache file it ignored or could not
 *  write: a measurement stands even when it cannot be kept. */
OPPROF_API int opprof_machine_cached(int threads, opprof_machine *out, char *said, size_t said_size);
/** The cache file of this machine's profile for `threads` threads (see
 *  opprof_machine_cached); OPPROF_ENOENT when there is no cache directory
 *  ($HOME unset), OPPROF_EINVAL for a bad argument. */
OPPROF_API int opprof_machine_cache_path(int threads, char *path, size_t path_size);
/** The end of a long capture: this machine measured again as
 *  opprof_machine_measure_quick does, DRAM aside (made to run inside the
 *  program, it takes no buffer past the LLC's: DRAM's figures stay), for
 *  machine->threads; each figure of *machine the best of the two, kept in the
 *  user's cache too (a cache file holds the best seen). OPPROF_EFORMAT,
 *  *machine unchanged, when it is another CPU's or ISA's profile: figures of
 *  two machines never mix. */
OPPROF_API int opprof_machine_remeasure(opprof_machine *machine);
/** The profile as JSON: "cpu", "isa", "threads", "fma_peak_gflops" and
 *  "levels" (the most threads'), then "by_threads" (each count's). The
 *  caller frees *out_text (opprof_free). */
OPPROF_API int opprof_machine_json_to_string(const opprof_machine *machine, char **out_text);
typedef struct opprof_read_error opprof_read_error; /* below, with the trace reader */
/** Read a profile that opprof_machine_json_to_string wrote. OPPROF_EFORMAT
 *  (why and where in *err) for anything else: a profile is never guessed. */
OPPROF_API int opprof_machine_read(const char *path, opprof_machine *out, opprof_read_error *err);
/** The ceilings for `threads` threads: that count's, else the largest below
 *  it (never above: a roof too high is a wrong one); NULL for an empty profile. */
OPPROF_API const opprof_machine_ceilings *opprof_machine_for_threads(const opprof_machine *machine, int threads);

typedef struct opprof_table_options {
    opprof_sort_key sort;
    int row_limit;      /* <= 0: every row */
    bool peak_memory;   /* a "Peak Mem" column after "Self CPU Mem" (memory captures) */
    bool flops;         /* PyTorch's "Total MFLOPs"-style column, then "GFLOP/s" (total
                           FLOPs over total CPU time), even when none were recorded */
    bool profiler_cost; /* a "Profiler (est.)" column: the profiler's own cost estimated in
                           each row's self time (the events nested in it, each at the range
                           cost the capture measured at start). Without it, the table still
                           says under it which rows' self time that cost is most of. */
    bool samples;       /* "Samples", "Samples %" (of all samples) and "Top native frame":
                           each row's self samples and the function most of them were in
                           (captures with samples) */
    bool cpu_time;      /* "Off CPU" and "On CPU total": each row's time off and on the CPU
                           within its CPU total (captures with off-CPU times) */
    bool stats;         /* "Self min", "Self med", "Self p90", "Self p99", "Self max",
                           "Self IQR" and "Self CV": the distribution of each row's self
                           time per step (per call when the capture has fewer than 2
                           steps; a line under the table says which). Needs averages
                           built with `distributions` (else OPPROF_EINVAL). The JSON of
                           averages built with them always has every row's
                           "distributions" (per step and per call, self and total). */
} opprof_table_options;

/**
 * key_averages().table(sort_by, row_limit) in PyTorch's layout: dash line,
 * header, dash line, rows sorted descending (ties keep first-seen order),
 * dash line, "Self CPU time total: ...". Columns in PyTorch's order: name,
 * CPU times, device times (with device activities), CPU Mem and Self CPU Mem
 * (when memory was recorded), Peak Mem (options), "# of Calls", "Input
 * Shapes" (grouped by shape), "Source Location" (grouped by stack: one frame
 * per line, left-aligned, then an empty line), "Total <unit>FLOPs", GFLOP/s
 * and GB/s (options). When events were dropped or warnings exist, a line
 * after the footer says how many. options NULL: OPPROF_EINVAL.
 */
OPPROF_API int opprof_averages_table_to_string(const opprof_averages *averages, const opprof_table_options *options,
                                               char **out_text);
/** The rows of the same table as JSON: "columns" (key and title of each
 *  column shown, in order), "rows" (per row, each column's key with its raw
 *  value: times in microseconds, shares as fractions, bytes, counts, FLOPs;
 *  null where the table shows "--"; "device" on traces with device
 *  activities), the totals. The table and these rows agree cell for cell:
 *  the same options show the same columns and rows (test_render). */
OPPROF_API int opprof_averages_json_to_string(const opprof_averages *averages, const opprof_table_options *options,
                                              char **out_text);

/** A row against its roof. The model: the row's FLOPs (opprof_flops or its
 *  ranges' own) and bytes (opprof_range_bytes, or the compulsory traffic of
 *  its input shapes: each input read once, the output written once: a model,
 *  not measured traffic), over its wall time, on the ceilings of the threads
 *  it ran on; its working set (bytes per call) names the level whose
 *  bandwidth bounds it. */
typedef struct opprof_roofline {
    bool modelled;        /* false: no FLOPs and no bytes ("no model") */
    double intensity;     /* FLOPs per byte (NAN without bytes) */
    double gflops, gbs;   /* attained */
    int level;            /* index into the ceilings' levels */
    bool compute_bound;   /* FLOPs / peak >= bytes / bandwidth */
    double roof_ns;       /* max(FLOPs / peak, bytes / bandwidth of its level) */
    double roof_percent;  /* roof_ns over its time, x 100 (above 100: a roof exceeded) */
    double above_roof_ns; /* its time minus roof_ns: the most a faster kernel gains */
} opprof_roofline;
/** Row `row` of averages against `machine` (its threads' ceilings). */
OPPROF_API opprof_roofline opprof_averages_roofline(const opprof_averages *averages, size_t row,
                                                    const opprof_machine *machine);
/** What if some operators took another time: each step replayed with them
 *  changed (analysis/whatif.c: nesting honoured; a run over a pool ends with
 *  its latest part). A change, as `--what-if` writes it: NAME=roof (its roof
 *  on a machine's ceilings: the call's FLOPs and bytes), NAME=0.5x (scaled),
 *  NAME=+20us or NAME=-20us (ns, us, ms added). */
typedef enum opprof_what_if_kind { OPPROF_WHAT_IF_ROOF, OPPROF_WHAT_IF_SCALE, OPPROF_WHAT_IF_ADD } opprof_what_if_kind;
typedef struct opprof_what_if_change {
    char name[128];
    opprof_what_if_kind kind;
    double value; /* SCALE: the factor; ADD: ns */
} opprof_what_if_change;
/** Parse "NAME=CHANGE[,NAME=CHANGE...]", appending to out (at most max,
 *  *n counting them); OPPROF_EINVAL with the reason in why. */
OPPROF_API int opprof_what_if_parse(const char *text, opprof_what_if_change *out, size_t max, size_t *n, char *why,
                                    size_t why_size);
typedef struct opprof_what_if_result {
    size_t steps;                               /* ProfilerStep#N ranges replayed (a capture without: 1, itself) */
    double measured_step_ns;                    /* their median, as measured */
    double predicted_step_ns;                   /* ... replayed with the changes */
    double replay_error_percent;                /* the replay without changes against the measured median */
    size_t changed_calls;                       /* calls that a change applied to */
    size_t unmodelled_calls;                    /* ... of them, "=roof" without FLOPs or bytes: unchanged */
    double changed_before_ns, changed_after_ns; /* those calls' time, measured and replayed */
} opprof_what_if_result;
/** Replay a finished capture's steps with `changes` (machine: for "=roof";
 *  may be NULL without one). OPPROF_EINVAL: "=roof" without a machine. */
OPPROF_API int opprof_capture_what_if(const opprof_capture *capture, const opprof_machine *machine,
                                      const opprof_what_if_change *changes, size_t n_changes,
                                      opprof_what_if_result *out);

/** The machine a capture ran on (its session's opprof_session_set_machine,
 *  or a trace's "opprof_machine"), written into its trace and read back;
 *  NULL when none was given. Owned by the capture. */
OPPROF_API const opprof_machine *opprof_capture_machine(const opprof_capture *capture);
/** The name of the host the capture ran on, as its trace says it (Kineto's
 *  "host_name", kept by opprof's traces read from one), or NULL when it does
 *  not; owned by the capture. opprof does not record its own host's name. */
OPPROF_API const char *opprof_capture_host_name(const opprof_capture *capture);
/** Give a capture its machine (copied; NULL: none). */
OPPROF_API int opprof_capture_set_machine(opprof_capture *capture, const opprof_machine *machine);

/** The table (json false) or its JSON rows with the roofline's columns after
 *  the others: "Bytes", "FLOPs/B", "Bound" ("compute", "L1", "L2", "LLC",
 *  "DRAM", or "no model"), "% of roof", "Above roof" (JSON "bytes",
 *  "arithmetic_intensity", "bound", "roof_percent", "time_above_roof_us";
 *  the FLOPs columns too), and under the table the time above roof of the
 *  modelled rows and the self time of the others, per step. */
OPPROF_API int opprof_averages_roofline_to_string(const opprof_averages *averages, const opprof_table_options *options,
                                                  const opprof_machine *machine, bool json, char **out_text);

/**
 * A self-contained HTML report of the capture (one file: no network, no other
 * file): its facts (start, duration, events, threads, the profiler's measured
 * cost, peak RSS, dropped events, warnings); the key averages as a table that
 * sorts by any column when its header is clicked (first by self CPU time);
 * a flame graph of total CPU time (SVG, roots on top, one box per path of
 * names, hover for total, share and self time, click to zoom into a box);
 * a timeline of every event, a track per thread, drawn on a canvas by an
 * embedded script (wheel or W/S zoom, drag or A/D pan, a search box, tracks
 * that can be hidden, a click shows an event's details), with the memory
 * total and counters on the same time axis (past OPPROF_REPORT_EVENTS events,
 * default 2,000,000, the timeline holds the longest ones, with their callers,
 * and says so: a browser takes 6 s and 1 GB for 6 M events, 0.6 s for the
 * 0.78 M of them it then holds); and, for memory captures, the
 * bytes allocated over time with the peak marked. Names are escaped (for
 * HTML, or for a script). *out_text: free with opprof_free.
 */
OPPROF_API int opprof_capture_html_to_string(const opprof_capture *capture, char **out_text);
/** The same, written atomically to `path` (a temporary file, then rename). */
OPPROF_API int opprof_capture_html_write(const opprof_capture *capture, const char *path);
/** The same report with a roofline chart after the table (log-log: FLOPs per
 *  byte, GFLOP/s; each level's ceiling and the FMA peak as lines; a dot per
 *  row with FLOPs, sized by its time, its row on hover) against `machine`
 *  (NULL: none). */
OPPROF_API int opprof_capture_html_roofline_to_string(const opprof_capture *capture, const opprof_machine *machine,
                                                      char **out_text);
OPPROF_API int opprof_capture_html_roofline_write(const opprof_capture *capture, const opprof_machine *machine,
                                                  const char *path);

/** Free memory that opprof returned (tables, strings). NULL is accepted. */
OPPROF_API void opprof_free(void *ptr);

/** `text` as a JSON string literal, quotes included, escaped as every opprof
 *  output escapes: ", \ and control characters; valid UTF-8 passes through,
 *  invalid bytes become U+FFFD. For tools that write JSON of their own
 *  around opprof's. *out_text: free with opprof_free. */
OPPROF_API int opprof_json_string_to_string(const char *text, char **out_text);

/** PyTorch's time format of a duration in microseconds: "12.345us",
 *  "1.030ms", "2.500s". buf gets at most size bytes, NUL included. */
OPPROF_API void opprof_format_time_us(double us, char *buf, size_t size);
/** PyTorch's (2.x) memory format: "592 B", "576.00 KB", "-1.00 MB", "1.50 GB". */
OPPROF_API void opprof_format_memory(int64_t bytes, char *buf, size_t size);

/* ------------------------------------------------------------------------- */
/* Comparing two captures                                                    */
/* ------------------------------------------------------------------------- */

typedef enum opprof_diff_format {
    OPPROF_DIFF_TEXT = 0, /* a table in the style of the averages table */
    OPPROF_DIFF_JSON = 1, /* {"rows": [...], "totals": {...}, "notes": [...]} */
    OPPROF_DIFF_HTML = 2  /* a self-contained page: totals, notes, the rows as a table
                             that sorts by a click, with before/after bars of self time */
} opprof_diff_format;

/**
 * A flight recorder's save explained (opprof_flight): its reason, the steps
 * it holds, and its triggering step against the median of the other steps it
 * holds, row by row (self CPU time per step), the largest changes first, at
 * most row_limit rows (< 0: all) and the total. *out_text: opprof_free.
 * OPPROF_EINVAL when the capture is not a flight recorder's save.
 */
OPPROF_API int opprof_capture_flight_to_string(const opprof_capture *capture, int row_limit, char **out_text);
/** Native functions by their samples (a sampled capture): self samples (the
 *  innermost frame), total samples (on the stack), each as a share and as the
 *  CPU time it stands for (samples x the period), the most self samples
 *  first, at most row_limit rows (<= 0: all). OPPROF_EINVAL without samples.
 *  *out_text: opprof_free. */
OPPROF_API int opprof_capture_functions_to_string(const opprof_capture *capture, int row_limit, char **out_text);
/** The same rows as a JSON array: [{"name", "self_samples", "self_percent",
 *  "self_est_us", "total_samples", "total_percent", "total_est_us",
 *  "hottest_line" ("file:line" or null)}], what `opprof report --json` gives
 *  as "functions". *out_text: opprof_free. */
OPPROF_API int opprof_capture_functions_json_to_string(const opprof_capture *capture, int row_limit, char **out_text);

/**
 * Compare two captures operator by operator: calls, self and total CPU time,
 * self CPU memory, before and after, the change and the ratio (after /
 * before), rows sorted by the largest absolute change in self time; totals;
 * and a note for each difference of configuration that makes the comparison
 * uneven (thread tracks, schedule, memory recording, dropped events,
 * warnings). row_limit <= 0 prints every row. *out_text is freed with
 * opprof_free. OPPROF_EINVAL for an unknown format.
 */
OPPROF_API int opprof_capture_diff_to_string(const opprof_capture *before, const opprof_capture *after, int row_limit,
                                             opprof_diff_format format, char **out_text);

/** How the rows of two captures are paired. Whatever the pairing, each side's
 *  times are its means per step (its ProfilerStep#N ranges, an aggregate
 *  profile's runs; a capture without steps is one), so that captures of
 *  different step counts compare. */
typedef enum opprof_diff_match {
    OPPROF_DIFF_MATCH_AUTO = 0,  /* by layer when the two runtimes name operators differently
                                    (ONNX Runtime or TensorRT against PyTorch or nn), else by name */
    OPPROF_DIFF_MATCH_NAME = 1,  /* rows of the same name */
    OPPROF_DIFF_MATCH_LAYERS = 2 /* the same model's layers, in order, each side's operators read as
                                    classes of work (aten::linear = Gemm, FusedGemm = aten::linear +
                                    aten::relu...: docs/TRACE_FORMAT.md, "Across runtimes") */
} opprof_diff_match;
typedef struct opprof_diff_options {
    int row_limit; /* <= 0: every row */
    opprof_diff_format format;
    opprof_diff_match match;
} opprof_diff_options;
/** opprof_capture_diff_to_string with options (NULL: every row, text, auto). */
OPPROF_API int opprof_capture_diff_to_string_ex(const opprof_capture *before, const opprof_capture *after,
                                                const opprof_diff_options *options, char **out_text);

/* ------------------------------------------------------------------------- */
/* Comparing with confidence (`opprof diff --stat`)                          */
/* ------------------------------------------------------------------------- */

/*
 * Each side is one capture or several (a directory of traces): each row's
 * self time step by step (opprof_row_distributions) is its sample, the
 * steps of a side's captures put end to end, and a capture without
 * ProfilerStep ranges one step. The comparison of a row is the shift of its
 * per-step self time (opprof_shift_of, <opprof/stats.h>): Hodges-Lehmann with
 * its Mann-Whitney interval, significant when its Holm-corrected p-value
 * (over the rows compared and the total: the self time of every CPU row, per
 * step) is below alpha, so that all the table flags is wrong with a
 * probability of alpha at most. A gate (opprof_stat_gate_check) is a test of
 * its own.
 */
typedef struct opprof_stat_options {
    double alpha;  /* significance level, in (0, 0.5]; 0: 0.05. Intervals at 1 - alpha */
    double detect; /* the change (a fraction) that a side's noise is judged against: the
                      steps needed to detect it are given (0: 0.05) */
} opprof_stat_options;

typedef struct opprof_stat_row {
    const char *key;                     /* "total" for the total */
    bool device;                         /* a row of device activities (their time) */
    opprof_distribution before, after;   /* its self time per step, ns */
    opprof_shift shift;                  /* after - before, ns */
    double change, change_lo, change_hi; /* shift and interval / before's median; NAN when that
                                            median is 0 */
    double p_adjusted;                   /* Holm over the rows, the total and the step */
    bool significant;                    /* p_adjusted < alpha */
    double spread;                       /* the larger IQR / median of the two sides */
    size_t steps_needed;                 /* per side, to detect `detect` with power 0.8 at that
                                            spread's upper 80 % bound (x (1 + 0.73 / sqrt(n)),
                                            n the smaller side's steps: opprof_steps_needed),
                                            at alpha / (rows + 2)
                                            (the first step of Holm's correction); 0 when both
                                            medians are 0 */
} opprof_stat_row;

typedef struct opprof_stat_diff opprof_stat_diff;

/** Compare n_before captures with n_after (>= 1 each). *out: the caller's
 *  (opprof_stat_diff_free); it does not refer to the captures. OPPROF_EINVAL
 *  for no capture on a side or options out of range. */
OPPROF_API int opprof_stat_diff_new(const opprof_capture *const *before, size_t n_before,
                                    const opprof_capture *const *after, size_t n_after,
                                    const opprof_stat_options *options, opprof_stat_diff **out);
/** The same with the rows grouped (NULL: by name): group_by_layer gives a row per
 *  (name, layer), keyed "NAME (layer N)" (and "NAME (layer N) (wall)" for a pool's
 *  operator), the layer of the tensor each call names (opprof_tensor_name_layer);
 *  calls of no layer keep "NAME". Grouping by shapes or stacks: OPPROF_EINVAL. */
OPPROF_API int opprof_stat_diff_new_ex(const opprof_capture *const *before, size_t n_before,
                                       const opprof_capture *const *after, size_t n_after,
                                       const opprof_stat_options *options, const opprof_averages_options *grouping,
                                       opprof_stat_diff **out);
OPPROF_API void opprof_stat_diff_free(opprof_stat_diff *diff);
/** The rows: significant ones first, each group by the size of its shift. */
OPPROF_API const opprof_stat_row *opprof_stat_diff_rows(const opprof_stat_diff *diff, size_t *count);
OPPROF_API const opprof_stat_row *opprof_stat_diff_total(const opprof_stat_diff *diff);
/** The step duration: each step's wall time (key "step"), compared as the rows
 *  are. Where an operator runs over a thread pool, its self CPU time sums the
 *  threads' parts and rises when the work is split over more threads, while the
 *  step, the time the user waits for, falls: this row says which it is. */
OPPROF_API const opprof_stat_row *opprof_stat_diff_step_duration(const opprof_stat_diff *diff);
/** The row of a key ("total": the total; "step": the step duration; a CPU row
 *  before a device row of the same name), or NULL. */
OPPROF_API const opprof_stat_row *opprof_stat_diff_find(const opprof_stat_diff *diff, const char *key);
/** Steps and captures of each side. */
OPPROF_API void opprof_stat_diff_sides(const opprof_stat_diff *diff, size_t steps[2], size_t captures[2]);
/** The comparison as text (a table, the total, the noise notes), JSON or
 *  HTML (format as for opprof_capture_diff_to_string). *out_text: opprof_free. */
OPPROF_API int opprof_stat_diff_to_string(const opprof_stat_diff *diff, int row_limit, opprof_diff_format format,
                                          char **out_text);

/** A CI gate: "KEY > +3%" fails when KEY's change is significant and above
 *  +3 % (the point estimate); "KEY < -3%" when significant and below -3 %.
 *  KEY is a row's name or "total"; the bound a percentage. */
typedef struct opprof_stat_gate {
    char key[512];
    bool above;   /* '>'; else '<' */
    double bound; /* a fraction: 0.03 */
} opprof_stat_gate;
/** Parse a gate. OPPROF_EINVAL (with why, a sentence) when it is not one. */
OPPROF_API int opprof_stat_gate_parse(const char *text, opprof_stat_gate *out, char *why, size_t why_size);
/** Check a gate, one of n_gates (>= 1) that a run checks: *tripped when its
 *  row's change is beyond its bound and significant as a test of its own,
 *  one-sided in the gate's direction (p_greater for '>', p_less for '<',
 *  below alpha / n_gates: a gate names its row and its direction before the
 *  data is seen, so it is one test, not one of every row compared; the
 *  gates share alpha);
 *  why: a sentence either way. OPPROF_ENOENT when no side has the key. */
OPPROF_API int opprof_stat_gate_check(const opprof_stat_diff *diff, const opprof_stat_gate *gate, size_t n_gates,
                                      bool *tripped, char *why, size_t why_size);

/* ------------------------------------------------------------------------- */
/* Files                                                                     */
/* ------------------------------------------------------------------------- */

/*
 * Every writer writes to a temporary file in the destination's directory,
 * flushes it and renames it into place: on failure no partial file remains
 * and the return value is -errno (OPPROF_ENOSPC, OPPROF_EACCES, ...).
 */

/** Write the capture as a Chrome trace (Kineto's JSON object form) that
 *  Perfetto and chrome://tracing open. */
OPPROF_API int opprof_capture_chrome_write(const opprof_capture *capture, const char *path);
/** How opprof_capture_chrome_write_ex writes a trace. {0}: as
 *  opprof_capture_chrome_write. */
typedef struct opprof_chrome_options {
    bool gzip;         /* gzip-compressed (name the file .json.gz; every reader of opprof's takes it) */
    size_t max_events; /* 0: every range; else at most this many, the longest (a caller lasts at
                          least as long as what it calls, so each one kept has its callers).
                          Memory events, counters and marks are all kept; the trace's warnings
                          say how many ranges were left out and from what duration. */
} opprof_chrome_options;
/** opprof_capture_chrome_write with options (NULL: none). */
OPPROF_API int opprof_capture_chrome_write_ex(const opprof_capture *capture, const char *path,
                                              const opprof_chrome_options *options);
/** Write the capture as a Chrome trace to an open stream (no temporary file). */
OPPROF_API int opprof_capture_chrome_write_stream(const opprof_capture *capture, FILE *out, const char *trace_name);
/** Write the capture as a Perfetto trace in Perfetto's native protobuf format
 *  (perfetto_trace.proto's Trace: TracePackets of track descriptors and
 *  track events; name the file .pftrace): ui.perfetto.dev and Perfetto's
 *  trace processor open it. Processes and threads are tracks; ranges and
 *  operators are slices with interned names and categories, their input
 *  shapes, call stack and arguments as debug annotations; each allocator's
 *  total is a counter track, whose samples carry each memory event's bytes,
 *  address and thread; counters, instants, flows and async ranges are events
 *  of their own; the capture's facts are the annotations of an instant
 *  "opprof capture" at its start. Atomic, as the other writers. */
OPPROF_API int opprof_capture_perfetto_write(const opprof_capture *capture, const char *path);
/** How opprof_capture_perfetto_write_ex writes. {0}: as opprof_capture_perfetto_write. */
typedef struct opprof_perfetto_options {
    bool gzip; /* gzip-compressed (name the file .pftrace.gz: Perfetto and opprof read it) */
} opprof_perfetto_options;
/** opprof_capture_perfetto_write with options (NULL: none). */
OPPROF_API int opprof_capture_perfetto_write_ex(const opprof_capture *capture, const char *path,
                                                const opprof_perfetto_options *options);
/** The same to an open stream. */
OPPROF_API int opprof_capture_perfetto_write_stream(const opprof_capture *capture, FILE *out);
/** What a folded-stacks file counts. */
typedef enum opprof_stacks_metric {
    OPPROF_STACKS_SELF_TIME = 0,   /* self CPU time, integer microseconds */
    OPPROF_STACKS_ALLOCATED_BYTES, /* bytes allocated by each frame itself (frees not counted) */
    OPPROF_STACKS_SAMPLES          /* native samples: the ranges and operators open at each
                                      sample, then its native frames, outermost first
                                      ("ProfilerStep*;forward;aten::addmm;addmm;gemm_kernel 12") */
} opprof_stacks_metric;

/** Write folded stacks for flamegraph.pl and speedscope: one line per stack
 *  of range and operator names, outermost first, joined by ';', a space and
 *  an integer count ("batch_2;forward;aten::linear;aten::addmm 312").
 *  Stacks whose count rounds to 0 are left out. ';' in names becomes ':'. */
OPPROF_API int opprof_capture_stacks_write(const opprof_capture *capture, const char *path,
                                           opprof_stacks_metric metric);
/** The same into a string (opprof_free). */
OPPROF_API int opprof_capture_stacks_to_string(const opprof_capture *capture, opprof_stacks_metric metric,
                                               char **out_text);

/** Write a string to a file, atomically as above. */
OPPROF_API int opprof_write_text_file(const char *path, const char *text);

/*
 * A ready-made on_trace_ready, as PyTorch's tensorboard_trace_handler: each
 * capture becomes a Chrome trace in `dir` (created if missing, one level),
 * named WORKER.step-N.pt.trace.json (".gz" with use_gzip), where WORKER is
 * worker_name or "HOST_PID" and N the capture's step number; ".1", ".2"...
 * come before ".pt" when the name is taken, so no capture overwrites another.
 * Each file is written atomically (see above).
 *
 *   opprof_trace_dir out = {.dir = "traces", .use_gzip = true};
 *   cfg.on_trace_ready = opprof_trace_dir_handler;
 *   cfg.user_data = &out;          // must outlive the session
 *
 * Returns 0 or a negative code (the session then counts a callback failure).
 */
typedef struct opprof_trace_dir {
    const char *dir;         /* the directory; required */
    const char *worker_name; /* NULL: "HOST_PID" ('/' becomes '_') */
    bool use_gzip;           /* gzip-compressed (the reader takes both) */
    char last_path[4096];    /* out: the path of the last file written */
    int written;             /* out: files written so far */
} opprof_trace_dir;

OPPROF_API int opprof_trace_dir_handler(const opprof_capture *capture, void *trace_dir);

/* ------------------------------------------------------------------------- */
/* Reading traces                                                            */
/* ------------------------------------------------------------------------- */

/*
 * A Chrome trace file becomes a capture: Kineto's object form
 * ({"traceEvents": [...], ...}, ours and PyTorch's export_chrome_trace) or the
 * array form of PyTorch's legacy export ([{"name", "ph", "ts", ...}, ...]),
 * plain or gzip-compressed (detected from the content). So does a Perfetto
 * trace that opprof wrote (opprof_capture_perfetto_write, detected from its
 * first bytes): it reads as the Chrome trace of the same capture would
 * (decoded into it, then read by the rules below); another writer's is
 * refused with OPPROF_EFORMAT, the packet, its byte and the reason in the
 * error's message. The reader streams:
 * memory grows with the events kept, not with the file's text.
 *
 * Kept: complete events ("ph":"X": name, cat, pid, tid, ts, dur), begin/end
 * pairs ("ph":"B" then "E" on the same pid and tid, as Chrome's tracing and
 * many C and C++ profilers write them: an "E" ends the innermost "B" still
 * open on its thread, and the pair is one complete event named and
 * categorized by its "B"; other args of B/E are not read), memory instants
 * ("name":"[memory]": args Bytes, Addr, Total Allocated), thread and process
 * names ("ph":"M"), and the metadata that opprof writes (baseTimeNanoseconds,
 * step_num, dropped_events, warnings, profile_memory). Other phases
 * (counters, flows, other instants) are skipped. Each (pid, tid) pair becomes
 * a thread of the capture.
 */

/** Where and why a read failed (yyjson style). */
typedef struct opprof_read_error {
    int code;       /* 0, -errno, OPPROF_EFORMAT (syntax, limits), OPPROF_ENOMEM */
    int64_t offset; /* byte offset in the (uncompressed) text, -1 if none */
    int64_t line;   /* 1-based, 0 if none */
    int64_t column; /* 1-based byte column, 0 if none */
    char message[256];
} opprof_read_error;

/** A problem found in a trace that still parses (see opprof_read_options). */
typedef struct opprof_trace_problem {
    int64_t offset, line, column; /* of the event concerned, or -1/0/0 */
    const char *message;          /* valid during the callback */
    bool assumed;                 /* read as its writers mean it, with a warning, nothing left
                                     out: not JSON (an event array left open or with a trailing
                                     comma, a time written as a string), or a begin event never
                                     ended (read as lasting to the trace's end) */
} opprof_trace_problem;

/** One argument given to opprof_read_options.spill_args, valid during the call. */
typedef struct opprof_spilled_arg {
    const char *key; /* flattened as Perfetto's JSON importer flattens them ("grid[0]") */
    uint32_t kind;   /* OPPROF_MARK_ARG_INT (i), OPPROF_MARK_ARG_DOUBLE (d), OPPROF_MARK_ARG_STR (str) */
    int64_t i;
    double d;
    const char *str;
} opprof_spilled_arg;

typedef struct opprof_read_options {
    /* Called for each problem of a trace that parses: unknown phase, missing
     * or mistyped fields, negative durations, "E" events without an open "B"
     * on their thread or earlier than it, "B" events never ended (not read),
     * complete events that overlap
     * without nesting on a thread, memory totals that do not add up, events
     * dropped at record time. NULL: such events are skipped silently (the
     * capture's warnings still count them). */
    void (*on_problem)(void *ctx, const opprof_trace_problem *problem);
    void *ctx;
    /* Called now and then with the bytes read so far (compressed bytes for a
     * gzip file) and the file's size. */
    void (*on_progress)(void *ctx, int64_t bytes_read, int64_t file_size);
    /* Called once a trace is read, for each kind of valid event that is no
     * part of a capture (flows, counters, instants, async events, Kineto's
     * span, Python functions, the names PyTorch leaves out...), with their
     * number: `kind` names them ("flow events (s/t/f)"). Metadata events and
     * opprof's own memory counter are not counted. */
    void (*on_unused)(void *ctx, const char *kind, uint64_t count);
    int max_depth;      /* nesting limit of JSON values; 0: 64 */
    bool events_only;   /* with on_problem: only the problems of single events (what
                           leaves an event out), not the checks that need the whole
                           trace (overlaps, memory totals, which cost memory a complete
                           event): what `opprof report` wants, `opprof check` not */
    int64_t max_string; /* longest string accepted, bytes; 0: 1 MiB */
    /* Threads that read a plain (not gzip) trace file: 0, two when the
     * trace is 32 MiB or more and two CPUs are usable, else one; 1: one;
     * 2: two whatever the size (tests). The second reads the event array's
     * second half into a capture of its own, joined where the first half
     * ends; the capture, its warnings, the problems and their order, and the
     * errors are the same as one thread's (a second half that depends on the
     * first, an "E" whose "B" is before it say, is read again by the first).
     * Two apply only with events_only or without on_problem (opprof check
     * needs the whole trace in one). */
    int threads;
    /* ONNX Runtime's profiles: rows by node name ("/fc1/Gemm") instead of operator
     * type (FusedGemm, Conv; the node then the argument "node"). */
    bool by_node;
    /* Every writer's counters, instants, flows, async ranges, arguments (numbers
     * and strings) and categories kept as marks, as opprof's own are (`opprof
     * sql`'s tables); otherwise only opprof's are, and the others counted as
     * unused. The tables and reports are the same either way. A complete
     * event's thread clock ("tts", "tdur", as Chrome writes them) becomes two of
     * its integer arguments in ns, OPPROF_THREAD_TS_ARG and OPPROF_THREAD_DUR_ARG. */
    bool keep_marks;
    /* Every writer's counters, instants, flows and async ranges kept as marks,
     * as opprof's own are, but not its arguments nor its categories: what a
     * trace written again from the capture must not lose (`opprof convert`,
     * `opprof merge -o OUT.pftrace`). Implied by keep_marks. */
    bool keep_event_marks;
    /* With keep_marks, another writer's arguments given to this callback as
     * each event is read (a "B"'s with its "E"'s, at the "E"), not kept in
     * the capture: a large trace's arguments need not be in memory at once
     * (`opprof sql` writes them to its database as they come). The event keeps
     * the id the callback returned (>= 0) instead: opprof_capture_spilled_set;
     * the few that reports read stay arguments as well (flops, bytes, "name",
     * "layer", OPPROF_PART_OF_KEY). An event that the read leaves out takes
     * its id with it, so an id that no event keeps is of no event; one that it
     * merges into its parent gives its id to the parent, as an integer
     * argument OPPROF_SPILLED_ARGS_ARG where the parent keeps one already. A
     * negative return (an opprof error code: OPPROF_ENOSPC...) fails the
     * read. With two `threads` it is called from both at once: `part` is 0
     * for the first (the only one's) and 1 for the second half's events, and
     * ids must not repeat across parts. opprof's own traces keep theirs. */
    int64_t (*spill_args)(void *spill_ctx, int part, const opprof_spilled_arg *args, size_t n);
    void *spill_ctx;
} opprof_read_options;
#define OPPROF_THREAD_TS_ARG "opprof:tts"
#define OPPROF_THREAD_DUR_ARG "opprof:tdur"
#define OPPROF_SPILLED_ARGS_ARG "opprof:spilled"
/* keep_marks: a flow bound to its event (the Trace Event Format's v2 flows:
 * "bind_id" with "flow_out", "flow_in" or both) as an integer argument of
 * the event, its bind_id the value: the flow leaves it, enters it, or both. */
#define OPPROF_FLOW_OUT_ARG "opprof:flow_out"
#define OPPROF_FLOW_IN_ARG "opprof:flow_in"
#define OPPROF_FLOW_STEP_ARG "opprof:flow_step"

/** Whether a file's name (no directory) is a trace's, as the tools write them
 *  and as directories are searched for them (ranks, diff --stat): NAME.json,
 *  NAME.pftrace, either with .gz; not summary.json, ranks.json, a hidden file
 *  or one being written (".tmp."). */
OPPROF_API bool opprof_is_trace_file_name(const char *name);
/** The length of a trace file name's stem ("cpu-step-4" of "cpu-step-4.pftrace"),
 *  0 when it is no trace's name; *perfetto (may be NULL) says whether it is a
 *  .pftrace. A capture written in both forms is one capture: its JSON is read. */
OPPROF_API size_t opprof_trace_file_stem(const char *name, bool *perfetto);

/**
 * Read a trace file into a new capture (the caller's: opprof_capture_free).
 * Returns 0, or a negative code with *error filled (when not NULL): the file
 * cannot be opened or read (-errno), it is not JSON or breaks a limit
 * (OPPROF_EFORMAT, with the offset, line and column), out of memory.
 * options may be NULL.
 */
OPPROF_API int opprof_capture_read(const char *path, const opprof_read_options *options, opprof_capture **out,
                                   opprof_read_error *error);
/** The same from a buffer in memory (len bytes; gzip accepted too). */
OPPROF_API int opprof_capture_read_buffer(const void *data, size_t len, const opprof_read_options *options,
                                          opprof_capture **out, opprof_read_error *error);

/* ------------------------------------------------------------------------- */
/* Merging per-rank traces                                                   */
/* ------------------------------------------------------------------------- */

typedef struct opprof_merge_result {
    int inputs;
    int64_t events;       /* read from the inputs and written */
    int64_t base_time_ns; /* of the merged trace: the earliest start, on rank 0's clock */
} opprof_merge_result;

/**
 * Merge traces of several processes (opprof's per-rank captures, or
 * PyTorch's per-rank Kineto traces; gzip accepted) into one trace at
 * out_path, streaming: memory stays bounded whatever the inputs' sizes.
 *   - Each input's events move onto rank 0's clock: its baseTimeNanoseconds
 *     minus its "distributedInfo" clock_offset_ns (0 when absent), all
 *     relative to the earliest start.
 *   - Each rank gets its own processes: pid (slot + 1) * 100000 + the pid's
 *     index in its trace, labelled "rank K" and sorted by rank; the slot is
 *     the rank when the inputs' ranks are distinct, else the input's index.
 *   - Flow and async ids are made distinct per rank.
 * The file appears whole or not at all. Errors: OPPROF_EINVAL, -errno,
 * OPPROF_EFORMAT (error->message names the file and the byte), OPPROF_ENOMEM.
 */
OPPROF_API int opprof_merge_traces(const char *const *paths, size_t n, const char *out_path,
                                   opprof_merge_result *result, opprof_read_error *error);

/* ------------------------------------------------------------------------- */
/* Ranks compared                                                            */
/* ------------------------------------------------------------------------- */

typedef struct opprof_ranks opprof_ranks;

/**
 * Compare one capture per rank of a distributed run (the captures' rank
 * facts, or their order when they have none):
 *   - per operator: self time on each rank, its min, median and max, and the
 *     slowest rank (the straggler for that operator);
 *   - per rank: busy time (self time of every row), time in communication
 *     (rows named mpi::..., c10d::..., nccl..., gloo..., or a collective's
 *     name such as allreduce, all_gather, broadcast) and in compute;
 *   - the collectives of the ranks matched by position (the i-th outermost
 *     collective of each rank), their starts moved onto rank 0's clock with
 *     each capture's clock offset: the skew (last start - first) and, per
 *     rank, the time it waited for the last rank and how often it was last.
 * *out is the caller's (opprof_ranks_free); it does not refer to the captures.
 */
OPPROF_API int opprof_ranks_analyze(opprof_capture *const *captures, size_t n, opprof_ranks **out);
/** The text report: the operators' table, the ranks' table, the skew line. */
OPPROF_API int opprof_ranks_table_to_string(const opprof_ranks *ranks, char **out_text);
/** The same as JSON. */
OPPROF_API int opprof_ranks_json_to_string(const opprof_ranks *ranks, char **out_text);
OPPROF_API void opprof_ranks_free(opprof_ranks *ranks);
/** The path of rank `rank`'s last capture under dir: dir/rank-K/, the trace
 *  (*.json or *.json.gz, not summary.json) with the highest "-step-N", as
 *  profile_cpu --parallel writes them. -ENOENT: no dir/rank-K; OPPROF_EFORMAT:
 *  no trace in it; -ENAMETOOLONG: the path does not fit in size. */
OPPROF_API int opprof_ranks_trace_path(const char *dir, int rank, char *path, size_t size);

/* ------------------------------------------------------------------------- */
/* summary.json                                                              */
/* ------------------------------------------------------------------------- */

/*
 * profile_cpu's summary.json: {"opprof": version, <fields set by the caller in
 * order>, "captures": [{"step", "operators": [{"name", "calls", "self_cpu_us",
 * "total_cpu_us", "self_cpu_bytes", "self_cpu_per_step"}], "dropped_events", "warnings"}]}.
 */
typedef struct opprof_summary opprof_summary;

OPPROF_API int opprof_summary_new(opprof_summary **out);
OPPROF_API void opprof_summary_free(opprof_summary *summary);
/** Add a top-level field (key and value copied). */
OPPROF_API int opprof_summary_set_string(opprof_summary *summary, const char *key, const char *value);
OPPROF_API int opprof_summary_set_int(opprof_summary *summary, const char *key, int64_t value);
OPPROF_API int opprof_summary_set_int_array(opprof_summary *summary, const char *key, const int64_t *values,
                                            size_t count);
/** Add a capture's entry: its step, its averages in first-seen order (with
 *  "self_cpu_per_step", each operator's self time per step, when the averages
 *  were built with distributions), its dropped events and warnings. The
 *  summary keeps copies. */
OPPROF_API int opprof_summary_add_capture(opprof_summary *summary, const opprof_capture *capture,
                                          const opprof_averages *averages);
/** The summary as JSON text (2-space indent); caller frees with opprof_free. */
OPPROF_API int opprof_summary_json_to_string(const opprof_summary *summary, char **out_text);
/** Write the summary to a file, atomically. */
OPPROF_API int opprof_summary_json_write(const opprof_summary *summary, const char *path);

#ifdef __cplusplus
}
#endif
#endif /* OPPROF_CAPTURE_H */
