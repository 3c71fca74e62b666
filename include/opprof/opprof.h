/*
 * opprof.h - the profiler: configuration, session, schedule, ranges, memory events.
 *
 * This header is the reference manual of the recording side of opprof. What a
 * capture becomes (tables, traces, summaries) is in <opprof/capture.h>.
 *
 *   opprof_config cfg = opprof_config_default();
 *   cfg.schedule = (opprof_schedule){ .wait = 1, .warmup = 1, .active = 2, .repeat = 1 };
 *   cfg.profile_memory = true;
 *   cfg.on_trace_ready = save_trace;       // called with each finished capture
 *   opprof_session *s;
 *   int rc = opprof_session_start(&s, &cfg);   // 0, or a negative OPPROF_E... code
 *   for (int step = 0; step < 6; step++) {
 *       {
 *           OPPROF_SCOPE("batch_%d", step);
 *           OPPROF_SCOPE("forward");      // both end at the closing brace
 *           work();
 *       }
 *       opprof_session_step(s);
 *   }
 *   opprof_session_stop(s);
 *   opprof_session_free(s);
 *
 * Threads: every function here may be called from any thread. Ranges and memory
 * events are recorded into a buffer of the calling thread without locks; the
 * session functions (start, step, stop) take a lock and are meant for one
 * controlling thread. One session may be active in a process at a time.
 * A signal handler may record: a record it makes while its thread is inside
 * one (interrupted in a range's begin or end, a memory event...) is dropped
 * and counted (the capture's warnings say how many); nothing is corrupted.
 *
 * Compilers: the recording macros need GNU C, as GCC (5 and later) and Clang
 * accept it in any -std (C11 with -std=c11 too): the cleanup attribute (a
 * scope ends its range however its block is left), statement expressions,
 * __thread and __COUNTER__. The declarations alone are ISO C11; a compiler
 * without these extensions can call the functions (opprof_range_begin and
 * opprof_range_end) or build with OPPROF_ENABLE=0. The library itself is
 * built as ISO C11 (CMAKE_C_EXTENSIONS OFF) and uses the extensions only
 * through this header.
 *
 * Compile-time switch: define OPPROF_ENABLE to 0 before including this header
 * and every OPPROF_ macro compiles to nothing: its arguments are not evaluated
 * (see "Recording macros" below).
 *
 * Environment, read once, by the first session. An invalid value is said on
 * stderr (the variable, the value, what is accepted, what is used instead)
 * and ignored:
 *   OPPROF_CLOCK=tsc|monotonic  timestamps from the TSC (default, where the
 *                             kernel trusts it) or from CLOCK_MONOTONIC (every
 *                             record then takes the library's path: a range
 *                             costs about 2.5 times as much; bench_overhead).
 *   OPPROF_RETAIN_CHUNKS=N    2 MiB buffers each stream of a thread keeps for
 *                             the next window, 1 to 1048576 (default 32: 64 MiB);
 *                             the rest is given back when a capture is taken.
 */
#ifndef OPPROF_OPPROF_H
#define OPPROF_OPPROF_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(OPPROF_BUILDING) && defined(__GNUC__)
#define OPPROF_API __attribute__((visibility("default")))
#else
#define OPPROF_API
#endif

/* Every inline helper of these headers: never instrumented, so that a program
 * built with -finstrument-functions sees its own functions, not opprof's
 * (the library itself is built without the flag). */
#if defined(__GNUC__) || defined(__clang__)
#define OPPROF__NOINSTR __attribute__((no_instrument_function))
#else
#define OPPROF__NOINSTR
#endif

#define OPPROF_VERSION_MAJOR 0
#define OPPROF_VERSION_MINOR 6
#define OPPROF_VERSION_PATCH 0
#define OPPROF_VERSION_STRING "0.6.0"

/** The library's version, "MAJOR.MINOR.PATCH". */
OPPROF_API const char *opprof_version(void);

/* ------------------------------------------------------------------------- */
/* Errors                                                                    */
/* ------------------------------------------------------------------------- */

/*
 * Every function that can fail returns 0 on success or a negative code.
 * Codes that come from the system keep errno's meaning (OPPROF_ENOENT is
 * -ENOENT, and any other -errno may be returned by a file operation);
 * opprof's own codes lie below -4095.
 */
#define OPPROF_ERRNO_MAP(XX)                                                      \
    XX(EINVAL, -EINVAL, "invalid argument")                                       \
    XX(ENOMEM, -ENOMEM, "out of memory")                                          \
    XX(ENOENT, -ENOENT, "no such file or directory")                              \
    XX(EEXIST, -EEXIST, "file exists")                                            \
    XX(EACCES, -EACCES, "permission denied")                                      \
    XX(ENOSPC, -ENOSPC, "no space left on device")                                \
    XX(EIO, -EIO, "input/output error")                                           \
    XX(EPERM, -EPERM, "operation not permitted")                                  \
    XX(ENOTDIR, -ENOTDIR, "not a directory")                                      \
    XX(EISDIR, -EISDIR, "is a directory")                                         \
    XX(EROFS, -EROFS, "read-only file system")                                    \
    XX(EBUSY, -EBUSY, "device or resource busy")                                  \
    XX(ENAMETOOLONG, -ENAMETOOLONG, "file name too long")                         \
    XX(ESCHEDULE, -5001, "invalid schedule: active must be at least 1")           \
    XX(EACTIVE, -5002, "a profiler session is already active in this process")    \
    XX(ESTOPPED, -5003, "the profiler session is stopped")                        \
    XX(ECALLBACK, -5004, "the on_trace_ready callback failed")                    \
    XX(EFORMAT, -5005, "malformed input")                                         \
    XX(EACTIVITY, -5006, "unsupported activity: only OPPROF_ACTIVITY_CPU exists") \
    XX(EVERSION, -5007, "another version than the one it was built for")

typedef enum opprof_error {
#define OPPROF__ERR_ENUM(name, value, text) OPPROF_##name = (value),
    OPPROF_ERRNO_MAP(OPPROF__ERR_ENUM)
#undef OPPROF__ERR_ENUM
} opprof_error;

/** A sentence for an error code; for an unknown negative code, the system's
 *  strerror() of its errno. Never NULL; the string is static. */
OPPROF_API const char *opprof_strerror(int code);
/** The code's name: "OPPROF_OK" for 0, "OPPROF_ESCHEDULE", "OPPROF_ENOENT"...;
 *  for another system code, the system's name of its errno ("EXDEV");
 *  "OPPROF_UNKNOWN" otherwise. Never NULL; static. */
OPPROF_API const char *opprof_err_name(int code);

/* ------------------------------------------------------------------------- */
/* Allocator                                                                 */
/* ------------------------------------------------------------------------- */

/*
 * One allocator for everything opprof allocates (buffers, captures, strings).
 * realloc(ctx, NULL, 0, n) allocates, realloc(ctx, p, old, 0) frees, and
 * realloc(ctx, p, old, n) grows or shrinks. old is always the size this hook
 * was given for p (opprof keeps each block's size beside it), so an arena or
 * a pool may rely on it.
 * Set it once, before any other opprof call: memory is given back through the
 * allocator in place when it is freed, and threads keep recording buffers
 * from one session to the next. The default uses the C library (and mmap for
 * large buffers).
 */
typedef struct opprof_allocator {
    void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t new_size);
    void *ctx;
} opprof_allocator;

/** Replace opprof's allocator (NULL restores the default). Returns OPPROF_EACTIVE
 *  while a session is active. */
OPPROF_API int opprof_set_allocator(const opprof_allocator *allocator);

/* ------------------------------------------------------------------------- */
/* Configuration                                                             */
/* ------------------------------------------------------------------------- */

typedef struct opprof_capture opprof_capture; /* see <opprof/capture.h> */
typedef struct opprof_session opprof_session;

/** What to record; only the CPU exists. */
enum { OPPROF_ACTIVITY_CPU = 1u << 0 };

/*
 * Which steps to record, as torch.profiler.schedule. For step s (counted from 0
 * at session start, advanced by opprof_session_step):
 *   s < skip_first                      -> NONE
 *   s -= skip_first; cycle = wait + warmup + active
 *   repeat > 0 and s / cycle >= repeat  -> NONE
 *   s % cycle < wait                    -> NONE
 *   s % cycle < wait + warmup           -> WARMUP   (not recorded)
 *   s % cycle < cycle - 1               -> RECORD
 *   else                                -> RECORD_AND_SAVE
 * A capture is handed to on_trace_ready when RECORD_AND_SAVE ends, and at
 * session stop if recording. repeat = 0 repeats forever.
 * An all-zero schedule means "no schedule": record everything from start to
 * stop, one capture at stop (as torch.profiler.profile without schedule).
 * Any other schedule with active = 0 is refused with OPPROF_ESCHEDULE.
 */
typedef struct opprof_schedule {
    int skip_first;
    int wait;
    int warmup;
    int active;
    int repeat;
} opprof_schedule;

typedef enum opprof_action {
    OPPROF_ACTION_NONE = 0,
    OPPROF_ACTION_WARMUP,
    OPPROF_ACTION_RECORD,
    OPPROF_ACTION_RECORD_AND_SAVE
} opprof_action;

/** The action of a schedule for step `step` (>= 0), per the rule above.
 *  The all-zero schedule gives RECORD for every step. */
OPPROF_API opprof_action opprof_schedule_action(const opprof_schedule *schedule, int64_t step);
/** 0 if the schedule is valid, else OPPROF_ESCHEDULE (active = 0 in a non-zero
 *  schedule) or OPPROF_EINVAL (a negative field). */
OPPROF_API int opprof_schedule_check(const opprof_schedule *schedule);
/** "NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE". */
OPPROF_API const char *opprof_action_name(opprof_action action);

/*
 * Called with each finished capture, on the thread that called
 * opprof_session_step() or opprof_session_stop(). The capture belongs to the
 * session and is freed when the callback returns: copy out what you keep.
 * Return 0, or a negative code: the failure is counted in the session's
 * warnings and opprof_session_step/stop return OPPROF_ECALLBACK.
 * Without a callback (NULL), the session keeps every capture until
 * opprof_session_take_capture() takes it: nothing recorded is thrown away.
 * opprof_trace_dir_handler (<opprof/capture.h>) is a ready-made callback
 * that writes each capture into a directory.
 */
typedef int (*opprof_trace_ready_fn)(const opprof_capture *capture, void *user_data);

/** One process of a distributed run (Kineto's "distributedInfo"): the
 *  captures of a session carry it, opprof merge aligns the ranks' clocks with it. */
typedef struct opprof_rank {
    char backend[16];             /* "mpi", "nccl", ...; "" when not distributed */
    int32_t rank, world_size;     /* this process, and how many there are */
    int64_t clock_offset_ns;      /* this rank's wall clock (CLOCK_REALTIME) minus rank 0's */
    int64_t clock_uncertainty_ns; /* the offset is right within +- this (half the best round trip) */
} opprof_rank;

/*
 * The flight recorder: recording is always on, the session keeps the last
 * steps in bounded memory, and a slow step is saved together with the steps
 * before it. Each step is closed into a capture of its own at its end (the
 * ring holds those), so a range that spans a step boundary is cut there, as
 * at the edge of any window. A save concatenates the steps it needs and
 * hands the capture to on_trace_ready on the recorder's own thread (not the
 * program's: the callback must be thread-safe against the program's own use
 * of its user_data), or keeps it for opprof_session_take_capture.
 * The ring keeps the last keep_steps steps, fewer if keep_seconds or keep_mib
 * says so (whichever comes first); older steps are dropped whole and counted.
 * A step triggers a save when it is slower than slower_than_median times the
 * median of the median_of steps before it (once 8 of them, or median_of if
 * fewer, have been seen), or than slower_than_ns, or when a range named
 * range_name lasted longer than range_bound_ns, or when opprof_trigger() was
 * called during it. The save holds the triggering step, the `before` steps
 * before it that the ring still has, and the `after` steps that follow it.
 * At most one save starts per cooldown_ms; the triggers it suppresses are
 * counted in the next save. At most 64 triggered saves wait for the saver
 * thread: past that (a storm of triggers faster than saves are written),
 * the least slow of them is dropped, or the new one when it is no slower,
 * and counted as suppressed: what is kept is the slowest steps.
 * opprof_session_dump() saves the ring as it is (a dump is never dropped).
 */
typedef struct opprof_flight {
    int keep_steps;            /* N >= 1 turns the flight recorder on; 0: off */
    double keep_seconds;       /* also drop steps older than this (0: no bound) */
    double keep_mib;           /* also keep the ring's captures under this size (0: no bound) */
    double slower_than_median; /* k > 1: the rolling-median rule; 0: off */
    int median_of;             /* W: steps in the rolling median (>= 1) */
    int64_t slower_than_ns;    /* a step longer than this triggers; 0: off */
    const char *range_name;    /* with range_bound_ns: a range of this name longer than it
                                  triggers (copied at start); NULL: off */
    int64_t range_bound_ns;
    int before;                /* K steps saved before the triggering one */
    int after;                 /* J steps saved after it */
    int64_t cooldown_ms;       /* at most one save per this interval; 0: none */
    int64_t (*clock_ns)(void); /* the clock the step rules read; NULL: CLOCK_MONOTONIC.
                                  Tests inject one to make slow steps exactly. */
} opprof_flight;

/** The flight recorder's defaults, still off (keep_steps 0): median_of 50,
 *  before 4, after 0, cooldown_ms 1000, no trigger rule. */
OPPROF_API opprof_flight opprof_flight_default(void);
/** 0 if `flight` is valid (or off), else OPPROF_EINVAL with a sentence in
 *  why (at most why_size bytes; why may be NULL) that names the field and
 *  what it accepts. */
OPPROF_API int opprof_flight_check(const opprof_flight *flight, char *why, size_t why_size);
/** Set keep_steps, keep_seconds and keep_mib from OPPROF_FLIGHT's form
 *  "N[,Ts][,MMiB]" ("200", "200,30s", "500,10s,64MiB"). OPPROF_EINVAL with a
 *  sentence in why when the text is not of that form. */
OPPROF_API int opprof_flight_parse_keep(opprof_flight *flight, const char *text, char *why, size_t why_size);
/** Set the trigger rules from OPPROF_FLIGHT_TRIGGER's comma-separated list:
 *  "Kx" (slower_than_median = K), a duration (slower_than_ns: "50ms"), and
 *  "NAME>DURATION" (range_name and range_bound_ns: "request>20ms"; range_name
 *  is then allocated: opprof_free it once the session has started, which
 *  copies it). OPPROF_EINVAL with a sentence in why for a bad rule. */
OPPROF_API int opprof_flight_parse_triggers(opprof_flight *flight, const char *text, char *why, size_t why_size);
/** A duration with its unit, "250ms", "1.5s", "800us", "20000ns", or "0",
 *  into *out nanoseconds. OPPROF_EINVAL otherwise. */
OPPROF_API int opprof_parse_duration_ns(const char *text, int64_t *out);
/** OPPROF_FLIGHT_SIGNAL's value: "USR2" or "SIGUSR2", "USR1", a real-time
 *  signal's number (SIGRTMIN to SIGRTMAX), or "none" (0) into *out.
 *  OPPROF_EINVAL otherwise. */
OPPROF_API int opprof_parse_dump_signal(const char *text, int *out);
/** OPPROF_SAMPLE's value: "HZ", "HZ,fp" or "HZ,dwarf" (HZ from 1 to
 *  1000000) into *hz and *dwarf. OPPROF_EINVAL otherwise. */
OPPROF_API int opprof_parse_sample(const char *text, int *hz, bool *dwarf);

typedef struct opprof_config {
    unsigned activities;      /* OPPROF_ACTIVITY_CPU */
    opprof_schedule schedule; /* all zero: record from start to stop */
    opprof_trace_ready_fn on_trace_ready;
    void *user_data;        /* passed to on_trace_ready */
    bool profile_memory;    /* record allocations and frees */
    bool record_shapes;     /* keep operators' input shapes (opprof_set_inputs) */
    bool with_stack;        /* traces carry each event's "Call stack" (call sites of
                               the event and its enclosing ranges) */
    bool with_flops;        /* tables show FLOPs (needs record_shapes) */
    bool with_native_stack; /* also the native call stack of each range (glibc's
                               backtrace at begin, about 12 frames, symbolized with
                               dladdr at capture time: exported symbols only; link
                               executables with -rdynamic to see theirs). Costs
                               about 1 us a range: see bench_overhead */
    bool record_steps;      /* a ProfilerStep#N range around each step (default true) */
    uint64_t max_events;    /* event budget of one capture; 0 = unlimited.
                               Events past it are dropped and counted. */
    const char *categories; /* "io,net": record only ranges of these categories
                               (and those without one); NULL: OPPROF_CATEGORIES
                               from the environment, or every category */
    opprof_rank rank;       /* distributed runs: this process's rank (backend "":
                               not distributed); nn_mpi_rank fills it for MPI */
    int sample_hz;          /* > 0: sample every thread's native call stack every
                               1/sample_hz of its CPU time (perf events: the kernel's
                               frame-pointer walk), symbolized at capture time. Without
                               permission for perf events, recording goes on without
                               samples and each capture says why */
    bool sample_dwarf;      /* with sample_hz: each sample's user stack (8 KiB) and
                               registers are copied by the kernel and unwound with
                               DWARF unwind tables (libunwind), so that functions
                               built without frame pointers keep their callers */
    bool off_cpu;           /* record when each thread leaves and regains the CPU
                               (switch records): every event's time off the CPU */
    opprof_flight flight;   /* the flight recorder (keep_steps > 0): the schedule
                               must then be all zero */
} opprof_config;

/** The defaults: CPU, no schedule, no callback, memory off, record_steps on. */
OPPROF_API opprof_config opprof_config_default(void);

/* ------------------------------------------------------------------------- */
/* Session                                                                   */
/* ------------------------------------------------------------------------- */

/**
 * Start profiling with a copy of *config. On success *out is a session that the
 * caller owns (free it with opprof_session_free). Errors: OPPROF_EINVAL (NULL
 * argument, negative field, a rank outside [0, world_size) or an unterminated
 * backend), OPPROF_ESCHEDULE, OPPROF_EACTIVITY, OPPROF_EACTIVE (another
 * session is active), OPPROF_ENOMEM.
 * Opens ProfilerStep#0 when config->record_steps.
 * Fork: a child forked without exec records nothing unless asked. In the
 * child, a session that the parent started is stopped (opprof_session_step,
 * _stop and _dump return OPPROF_ESTOPPED; opprof_session_free leaves its
 * memory, which the parent's threads held, as it is); the child may start a
 * session of its own.
 */
OPPROF_API int opprof_session_start(opprof_session **out, const opprof_config *config);

/**
 * Mark the end of a step, as torch.profiler.profile.step(): closes
 * ProfilerStep#k, advances the step number, applies the schedule's transition
 * (a capture that ends is handed to on_trace_ready here), opens
 * ProfilerStep#k+1. Returns 0, OPPROF_ESTOPPED, OPPROF_ENOMEM (capture lost,
 * counted in warnings), or OPPROF_ECALLBACK.
 */
OPPROF_API int opprof_session_step(opprof_session *session);

/** Stop profiling; a capture in progress is handed to on_trace_ready.
 *  Calling it twice returns OPPROF_ESTOPPED the second time. */
OPPROF_API int opprof_session_stop(opprof_session *session);

/** Free a session (stops it first if needed). NULL is accepted. */
OPPROF_API void opprof_session_free(opprof_session *session);

/**
 * opprof's own threads (the watcher of OPPROF_TRACE and `opprof record`, the
 * sampler's drainer, the flight recorder's saver, the thread that makes
 * chunks ahead) end at their next wait, so that the process has the
 * program's threads alone: the kernel refuses unshare(CLONE_NEWUSER) and
 * setns into a user namespace (EINVAL) to a process of more than one
 * thread. opprof_threads_resume starts them again. Nothing recorded is lost;
 * while they are paused, nothing is saved (SIGINT's or SIGTERM's save is
 * made once the watcher is back, which then ends the process by the
 * signal). libopprof_record.so wraps unshare and setns with these. 0, or
 * OPPROF_EBUSY when one did not end within 2 s (a trace being read on a
 * second thread): then every one runs on.
 */
OPPROF_API int opprof_threads_pause(void);
OPPROF_API void opprof_threads_resume(void);

/** The current step number (0 at start, +1 per opprof_session_step). */
OPPROF_API int64_t opprof_session_step_num(const opprof_session *session);

/**
 * Take the oldest capture that a session without on_trace_ready kept (also
 * after opprof_session_stop). On success (0) *out is that capture, which the
 * caller now owns (opprof_capture_free), or NULL when no capture waits.
 * Captures never taken are freed with the session. OPPROF_EINVAL for NULL.
 */
OPPROF_API int opprof_session_take_capture(opprof_session *session, opprof_capture **out);

/**
 * Flight recorder: save the steps that the ring holds now (the step in
 * progress is not among them), with `reason` (copied; NULL: "dump"), as one
 * capture, off the calling thread. Callable from any thread, not from a
 * signal handler. OPPROF_EINVAL without a flight recorder, OPPROF_ESTOPPED
 * once stopped.
 */
OPPROF_API int opprof_session_dump(opprof_session *session, const char *reason);

/**
 * Flight recorder: the step in progress of the active session triggers a
 * save when it ends, with `reason` (copied; NULL: "opprof_trigger"). Callable
 * from any thread, not from a signal handler. OPPROF_ESTOPPED without an
 * active session, OPPROF_EINVAL when it has no flight recorder.
 */
OPPROF_API int opprof_trigger(const char *reason);

/** Flight recorder: the steps it has dropped from its ring, the saves it
 *  has written (or will), failed and suppressed (cool-down, or dropped from
 *  a full queue of saves), and the steps it holds. */
typedef struct opprof_flight_stats {
    uint64_t steps_dropped, saves, saves_failed, triggers_suppressed;
    int steps_held;
} opprof_flight_stats;
OPPROF_API int opprof_session_flight_stats(opprof_session *session, opprof_flight_stats *out);

/** The number of captures finished so far (handed to on_trace_ready or kept). */
OPPROF_API int opprof_session_capture_count(const opprof_session *session);
/** The ceilings of this machine (opprof_machine_measure, <opprof/capture.h>),
 *  copied into every capture the session makes from now on, so that its
 *  traces carry the machine they ran on (`report --roofline` reads them).
 *  NULL: none. From the thread that steps the session, between steps. */
typedef struct opprof_machine opprof_machine;
OPPROF_API int opprof_session_set_machine(opprof_session *session, const opprof_machine *machine);

/*
 * Profiling without session code: run any program linked with opprof with
 *   OPPROF_TRACE=DIR        record from start to exit; at exit (also on SIGINT
 *                           or SIGTERM) DIR appears whole, with each capture's
 *                           trace-step-N.json and its .time.txt and .memory.txt
 *                           tables (DIR must not exist: otherwise said, and
 *                           nothing is recorded)
 *   OPPROF_SCHEDULE=wait,warmup,active,repeat[,skip_first]
 *                           steps by the schedule, each step ended by
 *                           opprof_step() (or OPPROF_STEP())
 *   OPPROF_FLIGHT=N[,Ts][,MMiB]
 *                           a flight recorder (opprof_flight) instead: DIR is
 *                           made at start and each save appears in it as
 *                           flight-K-step-N.*; OPPROF_FLIGHT_TRIGGER ("2x",
 *                           "50ms", "request>20ms"), OPPROF_FLIGHT_BEFORE,
 *                           _AFTER, _MEDIAN_OF, _COOLDOWN and _SIGNAL (the dump
 *                           signal, USR2 by default: `opprof dump PID`)
 * A program that starts its own session takes over: OPPROF_TRACE's session
 * stops and is saved first. The programs it starts are not profiled
 * (OPPROF_TRACE is taken out of its environment).
 */
/** End a step of OPPROF_TRACE's session, as opprof_session_step. Returns
 *  OPPROF_ESTOPPED when there is none (OPPROF_TRACE unset, or stopped). */
OPPROF_API int opprof_step(void);

/** A C++ symbol demangled ("_ZN11AccumulatorIdE3addEd" -> "Accumulator<double>::add(double)";
 *  a " [inlined]" or "+0x1f" after it is kept), by c++filt's rules (libiberty's
 *  demangler); the caller frees it (opprof_free). NULL when `name` is not a
 *  mangled name, or is beyond the bounds that keep untrusted names cheap: a
 *  symbol over 4096 bytes, or a demangled text over 65536 (a few hundred
 *  crafted bytes can expand exponentially); time and memory stay linear in them. */
OPPROF_API char *opprof_demangle(const char *name);
/** The name of the function at a code address, from the ELF symbols of the
 *  object that holds it (static functions too), into name (at most name_size
 *  bytes); module (may be NULL) gets the object's file name ("libnn.so.0.6",
 *  "(executable)"). Without a symbol: "module+0xOFFSET" and OPPROF_ENOENT;
 *  in no loaded object (not code): "0x..." and OPPROF_EINVAL. Thread-safe. */
OPPROF_API int opprof_symbolize(const void *addr, char *name, size_t name_size, char *module, size_t module_size);

/** True while a session is active in this process (started, not stopped). */
OPPROF_API bool opprof_is_active(void);

/* ------------------------------------------------------------------------- */
/* Ranges                                                                    */
/* ------------------------------------------------------------------------- */

/** The kind of a range: a user annotation (record_function) or an operator. */
typedef enum opprof_kind {
    OPPROF_KIND_USER_ANNOTATION = 0,  /* trace category "user_annotation" */
    OPPROF_KIND_CPU_OP = 1,           /* trace category "cpu_op" */
    OPPROF_KIND_STEP = 2,             /* ProfilerStep#N, category "user_annotation" */
    OPPROF_KIND_DEVICE = 3,           /* read from traces: a device activity (kernel, memcpy,
                                         memset, sync); no CPU time */
    OPPROF_KIND_DEVICE_ANNOTATION = 4 /* read from traces: "gpu_user_annotation", a device
                                        range, never counted in device totals */
} opprof_kind;

/**
 * A call site. Each OPPROF_ macro puts one in static storage, so recording
 * passes a pointer. `name` is the range's name, or a printf format for the
 * *_f functions. All strings must outlive the process's use of opprof
 * (string literals).
 */
typedef struct opprof_srcloc {
    const char *name;
    const char *function;
    const char *file;
    uint32_t line;
    uint32_t kind;        /* opprof_kind */
    const char *category; /* OPPROF_SCOPE_IN's category, or NULL */
} opprof_srcloc;

/*
 * Categories: OPPROF_SCOPE_IN("io", "read_%d", i) puts a range in category
 * "io" (the trace's "cat" becomes "user_annotation,io"). With a filter
 * (opprof_config.categories, or OPPROF_CATEGORIES=io,net in the environment)
 * only ranges of the listed categories and ranges without one are recorded;
 * a range of another category costs what a range outside a window costs
 * (each call site remembers the filter's answer).
 */
/** True if ranges of `category` are recorded now (no filter: always). */
OPPROF_API bool opprof_category_enabled(const char *category);
/* Bumped when the filter changes: call sites ask again. */
extern OPPROF_API uint32_t opprof__category_gen;

/** A handle from a begin call, given back to the matching end call. 0 means
 *  "not recorded" (profiler off, outside the window, or dropped). */
typedef uint64_t opprof_range;

/** Begin a range named loc->name on this thread. Cheap when not recording. */
OPPROF_API opprof_range opprof_range_begin(const opprof_srcloc *loc);
/** Begin a range named by printf(format, ...); `loc` is its call site (its
 *  name is the format). The name is formatted only when recording; at most
 *  255 bytes of it are kept. */
OPPROF_API opprof_range opprof_range_beginf(const opprof_srcloc *loc, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** End the range that `range` began. It must be the innermost open range of
 *  the calling thread; otherwise the misuse is counted in the capture's
 *  warnings and the ranges opened inside it are closed here. */
OPPROF_API void opprof_range_end(opprof_range range);

/*
 * Ranges known after the fact, and operators computed by a thread pool.
 *
 * An engine that learns a range's start or end only later (a callback after
 * the work, a queue's timestamps) gives the times itself, taken earlier with
 * opprof_now() on the recorder's clock:
 *
 *   opprof_time t0 = opprof_now();
 *   ... the work ...
 *   opprof_range r = opprof_range_begin_at(OPPROF_SRCLOC("my::op", OPPROF_KIND_CPU_OP), t0);
 *   opprof_range_flops(flops);                 // arguments attach to it, as to any range
 *   opprof_range_end_at(r, opprof_now());
 *
 * One operator computed by N threads of a pool is N ranges, one on each
 * thread that computed a part, each marked with the same operator id: the
 * tables count one call, and show its wall time (first part's start to last
 * part's end), the threads it ran on, the imbalance of its parts (the
 * longest part over their mean) and the time threads waited within it (wall
 * time less each part's, summed over the parts):
 *
 *   // on each worker, for its share of operator run number `id`
 *   OPPROF_OP_SCOPE("ggml::MUL_MAT");
 *   opprof_range_part_of(id);
 *   ... this thread's rows ...
 */
/** A time on the recorder's clock (opaque ticks; compare, never convert). */
typedef uint64_t opprof_time;
/** Now, on the recorder's clock. Meaningful while a window records. */
OPPROF_API opprof_time opprof_now(void);
/** Begin, on the calling thread, a range that started at `start` (an earlier
 *  opprof_now(); a time before the window opened counts from its opening, a
 *  time to come counts as now). It is then the thread's innermost open range,
 *  as after opprof_range_begin. */
OPPROF_API opprof_range opprof_range_begin_at(const opprof_srcloc *loc, opprof_time start);
/** End `range` at `end` (not before its start, and a time to come counts as
 *  now), with every check of opprof_range_end. */
OPPROF_API void opprof_range_end_at(opprof_range range, opprof_time end);
/** The argument key of opprof_range_part_of in traces ("args": {"part_of": id}). */
#define OPPROF_PART_OF_KEY "part_of"
/** Mark the innermost open range of this thread as one part of the parallel
 *  operator run `op_id` (non-zero, one id per run of the operator, the same
 *  on every thread that computes a part of it; at most 2^53, so that a JSON
 *  reader keeps it exact). Parts of one id and one name are one call. */
OPPROF_API void opprof_range_part_of(uint64_t op_id);

/* ------------------------------------------------------------------------- */
/* Input shapes                                                              */
/* ------------------------------------------------------------------------- */

#define OPPROF_MAX_INPUTS 8     /* inputs kept per operator */
#define OPPROF_MAX_INPUT_DIMS 8 /* dimensions kept per input */

/** One input of an operator: its dims and dtype name ("float", "double",
 *  "int", "long", "half", "bool", "bfloat16", "int8", "uint8", "int16",
 *  "uint16", "uint32", "uint64", "complex64", "complex128", "float8_e4m3fn",
 *  "float8_e5m2", "int4", "uint4"; ggml's quantized types by ggml's names:
 *  "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1", "q2_K" to "q8_K", "iq2_xxs",
 *  "iq2_xs", "iq3_xxs", "iq1_s", "iq4_nl", "iq3_s", "iq2_s", "iq4_xs", "iq1_m",
 *  "tq1_0", "tq2_0", "mxfp4"; also spelled f32, f64, f16, bf16, int32, int64,
 *  i8, u8, i16, u16... and as PyTorch's "Input type" writes them: c10::Half,
 *  c10::BFloat16, signed char, unsigned char, long int; other names are kept
 *  as "unknown"). A
 *  dtype of NULL means "not a tensor" (kept as an empty shape, as PyTorch
 *  lists scalars). */
typedef struct opprof_input {
    int ndim;
    const int64_t *dims;
    const char *dtype;
} opprof_input;

/** True while a window records with record_shapes: an operator may skip
 *  building its inputs' description otherwise. */
OPPROF_API bool opprof_recording_shapes(void);
/** Attach the inputs' shapes to the innermost open range of this thread
 *  (copied now: nothing of the inputs is kept), as an operator does right
 *  after it begins. No effect when no range is open or the session does not
 *  record shapes. Inputs past OPPROF_MAX_INPUTS, and dimensions past 12 in
 *  all, are not kept. */
OPPROF_API void opprof_set_inputs(int n_inputs, const opprof_input *inputs);

/* ------------------------------------------------------------------------- */
/* Memory events                                                             */
/* ------------------------------------------------------------------------- */

/**
 * Record an allocation (bytes > 0) or a free (bytes < 0) of `addr`, attributed
 * to the innermost open range of the calling thread. total_allocated is the
 * allocator's count of live bytes after this event, or -1 when unknown (opprof
 * then reports the running sum of the window). Cheap when not recording or
 * when profile_memory is off. OPPROF_MEMORY (below) does the same inline.
 */
OPPROF_API void opprof_record_memory(const void *addr, int64_t bytes, int64_t total_allocated);

/** The `bytes` of a free whose size the hook does not know (free() has no
 *  size): the capture takes it from the allocation of the same address
 *  before it; a block allocated before the capture counts 0 (said in the
 *  capture's warnings). */
#define OPPROF_FREE_UNKNOWN_SIZE INT64_MIN

/* ------------------------------------------------------------------------- */
/* Counters, instants, arguments, flows, async ranges, user FLOPs            */
/* ------------------------------------------------------------------------- */

/*
 * What an engine adds to its ranges (Tracy's, Perfetto's and NVTX's verbs).
 * Each is recorded only inside a window (outside, one load and a branch: the
 * macros check first), costs about one timestamp plus a few nanoseconds
 * (bench_overhead), and lands in the capture (opprof_capture_marks), the
 * Chrome trace, the HTML report and the tables. Names and keys must outlive
 * the capture's end (string literals); string values are copied.
 *
 *   OPPROF_COUNTER("kv_cache_bytes", bytes);   // a counter track, "ph":"C"
 *   OPPROF_INSTANT("token");                   // a mark on this thread, "ph":"i"
 *   {
 *       OPPROF_OP_SCOPE("my::int8_gemm");
 *       opprof_range_arg_int("layer", 3);      // args of the innermost range
 *       opprof_range_flops(2 * m * n * k);     // its FLOPs and bytes: the FLOPs,
 *       opprof_range_bytes(m * k + k * n);     // GFLOP/s and GB/s columns
 *       ...
 *   }
 *   opprof_flow_begin(request_id);             // an arrow from the enclosing range here
 *   opprof_flow_end(request_id);               // ... to the enclosing range on another thread
 *   opprof_async_begin("request", id);         // a range that may end on another thread,
 *   opprof_async_end("request", id);           // on its own track ("b"/"e")
 */
typedef enum opprof_instant_scope {
    OPPROF_INSTANT_THREAD = 0, /* "s":"t" */
    OPPROF_INSTANT_PROCESS,    /* "s":"p" */
    OPPROF_INSTANT_GLOBAL      /* "s":"g" */
} opprof_instant_scope;

/** A sample of the process-wide counter `name`. */
OPPROF_API void opprof_counter_int(const char *name, int64_t value);
OPPROF_API void opprof_counter_double(const char *name, double value);
/** An instant event on this thread (scope: how far Perfetto draws it). */
OPPROF_API void opprof_instant(const char *name, opprof_instant_scope scope);
/** An argument of the innermost open range of this thread (no effect without
 *  one). The string value is copied (at most 255 bytes). */
OPPROF_API void opprof_range_arg_int(const char *key, int64_t value);
OPPROF_API void opprof_range_arg_double(const char *key, double value);
OPPROF_API void opprof_range_arg_str(const char *key, const char *value);
/** FLOPs and bytes moved by the innermost open range: added to its row's
 *  FLOPs (any operator, not only aten::'s) and shown as GFLOP/s and GB/s. */
OPPROF_API void opprof_range_flops(int64_t flops);
OPPROF_API void opprof_range_bytes(int64_t bytes);
/** A flow: begun inside a range on one thread, ended inside a range on
 *  another; Perfetto draws an arrow between the two ranges. */
OPPROF_API void opprof_flow_begin(uint64_t id);
OPPROF_API void opprof_flow_end(uint64_t id);
/** An async range, begun and ended on any threads, matched by (name, id). */
OPPROF_API void opprof_async_begin(const char *name, uint64_t id);
OPPROF_API void opprof_async_end(const char *name, uint64_t id);

/** Give the calling thread a name for its track in traces (copied, at most 63
 *  bytes). Without it, the thread's name from the system is used. */
OPPROF_API void opprof_thread_set_name(const char *name);

/* The macros' inline fast path: the recorder's ABI, apart from this manual. */
#include <opprof/inline.h>

/* ------------------------------------------------------------------------- */
/* Macros                                                                    */
/* ------------------------------------------------------------------------- */

#define OPPROF__CAT2(a, b) a##b
#define OPPROF__CAT(a, b) OPPROF__CAT2(a, b)
#define OPPROF__FIRST(first, ...) first
/* 1 when called with one argument, N when called with more (up to 16). */
#define OPPROF__ARITY(...) OPPROF__ARITY_N(__VA_ARGS__, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, 1, _)
#define OPPROF__ARITY_N(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, n, ...) n

/*
 * A range's name, or its printf format, is a string literal: the call site
 * keeps it for every call. A name computed at run time is written
 * OPPROF_SCOPE("%s", name) (copied at each call). C refuses any other name
 * (a static initializer must be constant); C++ would keep the first call's
 * name silently, so there a name that is not a character array is refused at
 * compile time, with this rule in the message.
 */
#if defined(__cplusplus)
extern "C++" {
template <typename T> struct opprof__literal_name { static const bool value = false; };
template <__SIZE_TYPE__ N> struct opprof__literal_name<const char (&)[N]> { static const bool value = true; };
}
#define OPPROF__CHECK_LITERAL(name_)                                                                   \
    static_assert(opprof__literal_name<decltype((name_))>::value,                                      \
                  "opprof: a range's name must be a string literal (the call site keeps it for every " \
                  "call); for a name computed at run time write OPPROF_SCOPE(\"%s\", name)");
#else
#define OPPROF__CHECK_LITERAL(name_)
#endif

/** A pointer to a static call-site record of kind `kind` named `name`. */
#define OPPROF_SRCLOC(name_, kind_)                                                                             \
    __extension__({                                                                                             \
        OPPROF__CHECK_LITERAL(name_)                                                                            \
        static const opprof_srcloc opprof__loc = {(name_), __func__, __FILE__, (uint32_t)__LINE__, (kind_), 0}; \
        &opprof__loc;                                                                                           \
    })

#define OPPROF__BEGIN_1(kind, name) \
    (OPPROF__RECORDING() ? opprof__range_begin(OPPROF_SRCLOC(name, kind)) : (opprof_range)0)
#define OPPROF__BEGIN_N(kind, ...)                                                                              \
    (OPPROF__RECORDING() ? opprof_range_beginf(OPPROF_SRCLOC(OPPROF__FIRST(__VA_ARGS__, _), kind), __VA_ARGS__) \
                         : (opprof_range)0)
/* OPPROF_SCOPE_IN's: a call site with a category, and its cached filter answer. */
#define OPPROF__SRCLOC_IN(name_, kind_, cat_)                                                                        \
    __extension__({                                                                                                  \
        OPPROF__CHECK_LITERAL(name_)                                                                                 \
        static const opprof_srcloc opprof__loc = {(name_), __func__, __FILE__, (uint32_t)__LINE__, (kind_), (cat_)}; \
        &opprof__loc;                                                                                                \
    })
#define OPPROF__CATEGORY_ON(cat)                                                                  \
    __extension__({                                                                               \
        static uint32_t opprof__seen;                                                             \
        static int opprof__on;                                                                    \
        uint32_t opprof__g = __atomic_load_n(&opprof__category_gen, __ATOMIC_ACQUIRE);            \
        if (__builtin_expect(__atomic_load_n(&opprof__seen, __ATOMIC_ACQUIRE) != opprof__g, 0)) { \
            __atomic_store_n(&opprof__on, opprof_category_enabled(cat), __ATOMIC_RELAXED);        \
            __atomic_store_n(&opprof__seen, opprof__g, __ATOMIC_RELEASE);                         \
        }                                                                                         \
        __atomic_load_n(&opprof__on, __ATOMIC_RELAXED);                                           \
    })
#define OPPROF__BEGIN_IN_1(kind, cat, name) opprof__range_begin(OPPROF__SRCLOC_IN(name, kind, cat))
#define OPPROF__BEGIN_IN_N(kind, cat, ...) \
    opprof_range_beginf(OPPROF__SRCLOC_IN(OPPROF__FIRST(__VA_ARGS__, _), kind, cat), __VA_ARGS__)
#define OPPROF__BEGIN_IN(kind, cat, ...)                                                      \
    (OPPROF__RECORDING() && OPPROF__CATEGORY_ON(cat)                                          \
         ? OPPROF__CAT(OPPROF__BEGIN_IN_, OPPROF__ARITY(__VA_ARGS__))(kind, cat, __VA_ARGS__) \
         : (opprof_range)0)
#define OPPROF__BEGIN(kind, ...) OPPROF__CAT(OPPROF__BEGIN_, OPPROF__ARITY(__VA_ARGS__))(kind, __VA_ARGS__)

static inline OPPROF__NOINSTR void opprof__range_cleanup(opprof_range *range) {
    if (*range) opprof__range_end(*range);
}

/* OPPROF_COUNTER's two kinds of value (C's _Generic picks one). */
static inline OPPROF__NOINSTR void opprof__counter_i(const char *name, int64_t v) { opprof_counter_int(name, v); }
static inline OPPROF__NOINSTR void opprof__counter_d(const char *name, double v) { opprof_counter_double(name, v); }

/* Compiled out, the macros name their arguments without evaluating them
 * (sizeof), so a variable used only there raises no "unused" warning, and a
 * format is still checked against its arguments. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 1, 2)))
#endif
static inline OPPROF__NOINSTR int
opprof__format_unused(const char *format, ...) {
    (void)format;
    return 0;
}
#define OPPROF__CONSUME_1(name) ((void)sizeof(name))
#define OPPROF__CONSUME_N(...) ((void)sizeof(opprof__format_unused(__VA_ARGS__)))
#define OPPROF__CONSUME(...) OPPROF__CAT(OPPROF__CONSUME_, OPPROF__ARITY(__VA_ARGS__))(__VA_ARGS__)

/*
 * Recording macros. Each names a range "name", or formats its name as
 * printf("batch_%d", i) does (only while recording; at most 255 bytes kept).
 *
 *   OPPROF_SCOPE("name");      a user annotation from here to the end of the
 *   OPPROF_OP_SCOPE("name");   enclosing block (an operator: category cpu_op),
 *                              ended however the block is left: its end,
 *                              break, continue, return, goto out of it.
 *   opprof_range r = OPPROF_BEGIN("name");  ...  OPPROF_END(r);
 *                              explicit begin and end, for ranges that do
 *                              not follow a block (OPPROF_OP_BEGIN: operator).
 *   OPPROF_MEMORY(addr, bytes, total)       what an allocator's hook calls.
 *
 *   for (int i = 0; i < n; i++) {
 *       OPPROF_SCOPE("iter_%d", i);
 *       if (skip(i)) continue;     // ends the range, then continues: plain C
 *       work(i);
 *   }
 *
 * The scope forms are declarations, so the control flow of the code around
 * them is exactly C's, profiled or not: there is no hidden loop or if. A
 * goto must not jump into a block past an OPPROF_SCOPE (it would skip the
 * declaration: clang refuses to compile it, gcc warns with
 * -Wjump-misses-init).
 *
 * With OPPROF_ENABLE=0 every macro compiles to an expression that evaluates
 * nothing: OPPROF_BEGIN gives 0, and the arguments are only named, never
 * evaluated. Code that builds with -Wall -Wextra -Werror builds in both modes.
 *
 * There is no block form (OPPROF_RANGE("x") { ... } in versions before 0.2):
 * C has no statement that scopes a variable to a block without being a
 * loop, which captures break and continue, or an if, which captures an
 * else. Using that old form is a compile-time error that says what to use.
 */
#if OPPROF_ENABLE
#define OPPROF_SCOPE(...) OPPROF__SCOPE(__COUNTER__, OPPROF_KIND_USER_ANNOTATION, __VA_ARGS__)
#define OPPROF_OP_SCOPE(...) OPPROF__SCOPE(__COUNTER__, OPPROF_KIND_CPU_OP, __VA_ARGS__)
#define OPPROF__SCOPE(n, kind, ...)                                                                      \
    opprof_range OPPROF__CAT(opprof__scope, n) __attribute__((cleanup(opprof__range_cleanup), unused)) = \
        OPPROF__BEGIN(kind, __VA_ARGS__)
#define OPPROF_BEGIN(...) OPPROF__BEGIN(OPPROF_KIND_USER_ANNOTATION, __VA_ARGS__)
#define OPPROF_OP_BEGIN(...) OPPROF__BEGIN(OPPROF_KIND_CPU_OP, __VA_ARGS__)
/** OPPROF_SCOPE_IN("category", "name"...), OPPROF_OP_SCOPE_IN: a scope in a category. */
#define OPPROF_SCOPE_IN(cat, ...) OPPROF__SCOPE_IN(__COUNTER__, OPPROF_KIND_USER_ANNOTATION, cat, __VA_ARGS__)
#define OPPROF_OP_SCOPE_IN(cat, ...) OPPROF__SCOPE_IN(__COUNTER__, OPPROF_KIND_CPU_OP, cat, __VA_ARGS__)
#define OPPROF__SCOPE_IN(n, kind, cat, ...)                                                              \
    opprof_range OPPROF__CAT(opprof__scope, n) __attribute__((cleanup(opprof__range_cleanup), unused)) = \
        OPPROF__BEGIN_IN(kind, cat, __VA_ARGS__)
#define OPPROF_END(range)                            \
    do {                                             \
        opprof_range opprof__e = (range);            \
        if (opprof__e) opprof__range_end(opprof__e); \
    } while (0)
/** OPPROF_STEP(): the end of a step of OPPROF_TRACE's session (opprof_step). */
#define OPPROF_STEP() ((void)opprof_step())
/** OPPROF_COUNTER(name, value): an integer or floating-point sample. */
#ifdef __cplusplus
#define OPPROF_COUNTER(name, value)                                              \
    do {                                                                         \
        if (OPPROF__RECORDING()) opprof_counter_double((name), (double)(value)); \
    } while (0)
#else
#define OPPROF_COUNTER(name, value)                         \
    do {                                                    \
        if (OPPROF__RECORDING())                            \
            _Generic((value), float                         \
                     : opprof__counter_d, double            \
                     : opprof__counter_d, long double       \
                     : opprof__counter_d, default           \
                     : opprof__counter_i)((name), (value)); \
    } while (0)
#endif
/** OPPROF_INSTANT(name): an instant event on this thread; _PROCESS, _GLOBAL. */
#define OPPROF_INSTANT(name)                                                    \
    do {                                                                        \
        if (OPPROF__RECORDING()) opprof_instant((name), OPPROF_INSTANT_THREAD); \
    } while (0)
#define OPPROF_INSTANT_PROCESS(name)                                             \
    do {                                                                         \
        if (OPPROF__RECORDING()) opprof_instant((name), OPPROF_INSTANT_PROCESS); \
    } while (0)
#define OPPROF_INSTANT_GLOBAL(name)                                             \
    do {                                                                        \
        if (OPPROF__RECORDING()) opprof_instant((name), OPPROF_INSTANT_GLOBAL); \
    } while (0)
/** OPPROF_MEMORY(addr, bytes, total_allocated): opprof_record_memory, with
 *  the inline fast path; what an allocator's hook should call. */
#define OPPROF_MEMORY(addr, bytes, total_allocated)                                         \
    do {                                                                                    \
        if (OPPROF__RECORDING()) opprof__record_memory((addr), (bytes), (total_allocated)); \
    } while (0)
#else
#define OPPROF_SCOPE(...) OPPROF__CONSUME(__VA_ARGS__)
#define OPPROF_OP_SCOPE(...) OPPROF__CONSUME(__VA_ARGS__)
#define OPPROF_SCOPE_IN(cat, ...) ((void)sizeof(cat), OPPROF__CONSUME(__VA_ARGS__))
#define OPPROF_OP_SCOPE_IN(cat, ...) ((void)sizeof(cat), OPPROF__CONSUME(__VA_ARGS__))
#define OPPROF_BEGIN(...) (OPPROF__CONSUME(__VA_ARGS__), (opprof_range)0)
#define OPPROF_OP_BEGIN(...) (OPPROF__CONSUME(__VA_ARGS__), (opprof_range)0)
#define OPPROF_END(range) ((void)sizeof(range))
#define OPPROF_STEP() ((void)0)
#define OPPROF_COUNTER(name, value) ((void)sizeof(name), (void)sizeof(value))
#define OPPROF_INSTANT(name) ((void)sizeof(name))
#define OPPROF_INSTANT_PROCESS(name) ((void)sizeof(name))
#define OPPROF_INSTANT_GLOBAL(name) ((void)sizeof(name))
#define OPPROF_MEMORY(addr, bytes, total_allocated) \
    ((void)sizeof(addr), (void)sizeof(bytes), (void)sizeof(total_allocated))
#endif

/* The block form of versions before 0.2, refused with a message. */
#ifdef __cplusplus
#define OPPROF__REMOVED(what) static_assert(false, what)
#else
#define OPPROF__REMOVED(what) _Static_assert(0, what)
#endif
#define OPPROF_RANGE(...) \
    OPPROF__REMOVED("OPPROF_RANGE(...) { } was removed: write OPPROF_SCOPE(...); inside the block")
#define OPPROF_OP(...) OPPROF__REMOVED("OPPROF_OP(...) { } was removed: write OPPROF_OP_SCOPE(...); inside the block")

#ifdef __cplusplus
}
#endif
#endif /* OPPROF_OPPROF_H */
