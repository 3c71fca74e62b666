/* record/record.h - the recording layer: the recorder's windows and the
 * capture built from its buffers, for the session (record/session.c). The
 * recorder's own state is record/recorder_state.h, seen only by this layer.
 * Above the capture layer. */
#ifndef OPPROF_RECORD_LAYER_H
#define OPPROF_RECORD_LAYER_H

#include "capture/capture.h"

/* ---- recorder (record/recorder.c, record/snapshot.c), used by record/session.c ---- */
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
/* In a child just forked (pthread_atfork's child handler): the window is
 * closed without waiting for threads that exist only in the parent, and the
 * thread list's lock is the child's own. */
OPPROF__HIDDEN void opprof__recorder_forget_after_fork(void);
/* Copy the current window's events into a new capture (finished), with the
 * sampler's samples of [t0, t1) (CLOCK_MONOTONIC; sampler NULL: none). */
typedef struct opprof__sampler opprof__sampler;
OPPROF__HIDDEN int opprof__recorder_snapshot(opprof_capture **out, uint64_t window_start_ticks,
                                             uint64_t window_end_ticks, opprof__sampler *sampler, int64_t t0,
                                             int64_t t1);
OPPROF__HIDDEN uint64_t opprof__recorder_window_start_ticks(void);
/* The calling thread recorded in the current window and dropped nothing. */
OPPROF__HIDDEN bool opprof__recorder_thread_clean(void);
/* The range was begun on the calling thread (0: none, false). */
OPPROF__HIDDEN bool opprof__range_is_this_threads(opprof_range range);

/* ---- the flight recorder (record/flight.c, record/flight_save.c) ---- */
typedef struct opprof__flight opprof__flight;
/* Where saves go, called on the saver thread: on_trace_ready's rule (the
 * capture is the sink's to free). */
typedef struct opprof__flight_sink {
    int (*deliver)(opprof_capture *capture, void *ctx);
    void *ctx;
} opprof__flight_sink;
OPPROF__HIDDEN int opprof__flight_new(opprof__flight **out, const opprof_flight *cfg, const opprof__flight_sink *sink);
/* A step ended: its capture (taken over), number and window start. */
OPPROF__HIDDEN void opprof__flight_step(opprof__flight *f, opprof_capture *step, int64_t step_num,
                                        uint64_t start_ticks);
OPPROF__HIDDEN int opprof__flight_dump(opprof__flight *f, const char *reason);
OPPROF__HIDDEN void opprof__flight_trigger(opprof__flight *f, const char *reason);
OPPROF__HIDDEN void opprof__flight_stats(opprof__flight *f, opprof_flight_stats *out);
/* Queue the saves still waiting for steps, write every queued save, end the saver. */
OPPROF__HIDDEN void opprof__flight_stop(opprof__flight *f);
OPPROF__HIDDEN void opprof__flight_free(opprof__flight *f);

/* ---- the sampler (record/sampler.c): perf events, off the recording path ---- */
/* Sample every thread (new ones too) every 1/hz of its CPU time (0: no samples)
 * and record switches (off_cpu). A failure's reason, or a clamped rate, goes
 * into note (a sentence for the captures' warnings). */
OPPROF__HIDDEN int opprof__sampler_start(opprof__sampler **out, int hz, bool dwarf, bool off_cpu, char *note,
                                         size_t note_size);
OPPROF__HIDDEN void opprof__sampler_stop(opprof__sampler *s);
/* The samples and off-CPU times of [t0, t1) (CLOCK_MONOTONIC ns) into the
 * capture, its times from t0; what came before is dropped. NULL: none. */
OPPROF__HIDDEN int opprof__sampler_collect(opprof__sampler *s, opprof_capture *c, int64_t t0, int64_t t1);
OPPROF__HIDDEN int64_t opprof__sampler_period_ns(const opprof__sampler *s);
/* A window opens, or closes: the process's CPU time then, its helpers' aside,
 * against which collect weighs the window's samples (opprof's building and
 * writing of captures, between a close and the next open, are not the
 * program's). NULL: nothing. */
OPPROF__HIDDEN void opprof__sampler_window_mark(opprof__sampler *s, bool open);
/* Debug information of a code address (record/sources.c, libdw). */
typedef struct opprof__code_frame {
    char name[256];   /* "" for the holding function: opprof_symbolize names it */
    char source[256]; /* "file:line", or "" */
    bool inlined;
} opprof__code_frame;
/* The frames at ip, the address of an instruction (a caller's: its return
 * address - 1), innermost first: the functions inlined there, then the one
 * that holds it; at most max, their number (>= 1 when max is). */
OPPROF__HIDDEN size_t opprof__code_frames(uint64_t ip, opprof__code_frame *frames, size_t max);

/* The process's modules in one libdw session (record/sources.c), locked:
 * reported again first when ip (0: none) is in none of them. NULL when
 * libdw could not report them; unlock in either case. */
struct Dwfl;
OPPROF__HIDDEN struct Dwfl *opprof__dwfl_lock(uint64_t ip);
OPPROF__HIDDEN void opprof__dwfl_unlock(void);

/* DWARF mode (record/unwind.c): a sample's copied user stack and registers
 * (those of opprof__unwind_regs_mask, packed in the mask's order). */
typedef struct opprof__stack_copy {
    uint64_t mask;
    const unsigned char *regs;
    const unsigned char *stack;
    uint64_t size, sp; /* the copy's bytes, from the stack pointer up */
} opprof__stack_copy;
OPPROF__HIDDEN uint64_t opprof__unwind_regs_mask(void);
/* The return addresses of the copied stack, innermost (the sampled IP) first. */
OPPROF__HIDDEN size_t opprof__unwind(const opprof__stack_copy *sc, uint64_t *ips, size_t max);

/* The calling thread is inside the session's lock (record/session.c): a
 * signal handler that waits for the session to be saved must not wait then. */
extern OPPROF__HIDDEN __thread int opprof__in_session;

/* Called by opprof_session_start before it starts a session: a layer above
 * registers itself here (OPPROF_TRACE's session yields, autostart/). NULL: none. */
extern OPPROF__HIDDEN void (*opprof__before_session_start)(void);

#endif /* OPPROF_RECORD_LAYER_H */
