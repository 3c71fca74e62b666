/* session.c - the schedule, step() and its transitions, captures to callbacks.
 * Transitions follow torch.profiler.profile: a window opens when the action
 * becomes RECORD or RECORD_AND_SAVE, and closes (capture handed to
 * on_trace_ready) when RECORD_AND_SAVE ends or the action falls back to
 * NONE/WARMUP, or at stop. */
#define _GNU_SOURCE /* secure_getenv */
#include "record/record.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct opprof_session {
    opprof_config cfg;
    unsigned forks; /* g_forks when it started: another value, it is a parent's, copied by fork */
    int64_t step_num;
    opprof_action action;
    bool stopped;
    bool window_open;
    int64_t window_base_ns; /* wall clock of the window's start */
    opprof_range step_range;
    int captures;             /* atomic: the flight recorder's saver counts too */
    opprof__flight *flight;   /* config.flight.keep_steps > 0 */
    opprof__sampler *sampler; /* config.sample_hz or .off_cpu */
    char sampler_note[256];   /* why there are no samples, or a clamped rate: said in every capture */
    int64_t window_mono;      /* CLOCK_MONOTONIC at the window's open */
    opprof_capture **kept;    /* without on_trace_ready: captures not yet taken, oldest first */
    size_t kept_count, kept_cap;
    int callback_failures;
    int lost_captures;
    double overhead_range_ns, overhead_memory_ns;
    opprof_machine *machine; /* opprof_session_set_machine: given to every capture */
};

static pthread_mutex_t g_session_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_kept_lock = PTHREAD_MUTEX_INITIALIZER;   /* a session's kept captures */
static pthread_mutex_t g_flight_lock = PTHREAD_MUTEX_INITIALIZER; /* g_flight */
static opprof__flight *g_flight; /* the active session's flight recorder, for opprof_trigger */
static int g_active;             /* atomic */

/* The calling thread holds the session lock: a signal handler that would
 * wait for a save (autostart/'s) must not, or the save would wait for it. */
__thread int opprof__in_session __attribute__((tls_model("initial-exec")));

static void session_lock(void) {
    pthread_mutex_lock(&g_session_lock);
    __atomic_store_n(&opprof__in_session, 1, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void session_unlock(void) {
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&opprof__in_session, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&g_session_lock);
}

/* ---- fork: a child records nothing unless asked ----
 * A child forked without exec has a copy of the parent's session, but not its
 * threads (the recorder's, the saver, the sampler's): in the child that
 * session is stopped and records nothing (its steps, dumps and stop say
 * OPPROF_ESTOPPED, its free frees nothing that the parent's threads hold),
 * and the locks are the child's own. A session the child starts records. */
static unsigned g_forks; /* forks this process is the child of */

static bool inherited(const opprof_session *s) { return s->forks != __atomic_load_n(&g_forks, __ATOMIC_ACQUIRE); }

static void forked_child(void) {
    __atomic_add_fetch(&g_forks, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_init(&g_session_lock, NULL);
    pthread_mutex_init(&g_kept_lock, NULL);
    pthread_mutex_init(&g_flight_lock, NULL);
    g_flight = NULL;
    __atomic_store_n(&opprof__in_session, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_active, 0, __ATOMIC_RELEASE);
    opprof__recorder_forget_after_fork();
}

static void register_fork_handler(void) { pthread_atfork(NULL, NULL, forked_child); }

static const opprof_srcloc STEP_LOC = {
    "ProfilerStep#%lld", "opprof_session_step", __FILE__, __LINE__, OPPROF_KIND_STEP, NULL};

bool opprof_is_active(void) { return __atomic_load_n(&g_active, __ATOMIC_ACQUIRE) != 0; }

void (*opprof__before_session_start)(void);

/* The allocator cannot change under a session: its chunks were allocated by the old one. */
int opprof_set_allocator(const opprof_allocator *allocator) {
    if (opprof_is_active()) return OPPROF_EACTIVE;
    return opprof__allocator_set(allocator);
}

/* ---- categories: the filter of OPPROF_SCOPE_IN's ranges ---- */

uint32_t opprof__category_gen = 1; /* call sites start at 0: they ask once */
static char g_categories[1024];    /* ",io,net," or "" (every category); under g_session_lock */

bool opprof_category_enabled(const char *category) {
    if (!category) return true;
    session_lock();
    bool on = !g_categories[0];
    if (!on) {
        char key[140];
        snprintf(key, sizeof key, ",%.128s,", category);
        on = strstr(g_categories, key) != NULL;
    }
    session_unlock();
    return on;
}

/* The session's filter: its config's, else OPPROF_CATEGORIES, else none. */
static void categories_set(const char *list) {
    if (!list) list = secure_getenv("OPPROF_CATEGORIES");
    if (list && *list)
        snprintf(g_categories, sizeof g_categories, ",%s,", list);
    else
        g_categories[0] = '\0';
    __atomic_add_fetch(&opprof__category_gen, 1, __ATOMIC_RELEASE);
}

opprof_config opprof_config_default(void) {
    opprof_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.activities = OPPROF_ACTIVITY_CPU;
    cfg.record_steps = true;
    return cfg;
}

static bool schedule_is_zero(const opprof_schedule *s) {
    return !s->skip_first && !s->wait && !s->warmup && !s->active && !s->repeat;
}

int opprof_schedule_check(const opprof_schedule *s) {
    if (!s) return OPPROF_EINVAL;
    if (s->skip_first < 0 || s->wait < 0 || s->warmup < 0 || s->active < 0 || s->repeat < 0) return OPPROF_EINVAL;
    if (schedule_is_zero(s)) return 0;
    if (s->active < 1) return OPPROF_ESCHEDULE;
    return 0;
}

opprof_action opprof_schedule_action(const opprof_schedule *s, int64_t step) {
    if (schedule_is_zero(s)) return OPPROF_ACTION_RECORD;
    if (step < s->skip_first) return OPPROF_ACTION_NONE;
    step -= s->skip_first;
    int64_t cycle = (int64_t)s->wait + s->warmup + s->active;
    if (s->repeat > 0 && step / cycle >= s->repeat) return OPPROF_ACTION_NONE;
    int64_t m = step % cycle;
    if (m < s->wait) return OPPROF_ACTION_NONE;
    if (m < s->wait + s->warmup) return OPPROF_ACTION_WARMUP;
    if (m < cycle - 1) return OPPROF_ACTION_RECORD;
    return OPPROF_ACTION_RECORD_AND_SAVE;
}

const char *opprof_action_name(opprof_action a) {
    switch (a) {
    case OPPROF_ACTION_NONE: return "NONE";
    case OPPROF_ACTION_WARMUP: return "WARMUP";
    case OPPROF_ACTION_RECORD: return "RECORD";
    case OPPROF_ACTION_RECORD_AND_SAVE: return "RECORD_AND_SAVE";
    }
    return "?";
}

static bool is_recording(opprof_action a) { return a == OPPROF_ACTION_RECORD || a == OPPROF_ACTION_RECORD_AND_SAVE; }

static void window_open(opprof_session *s) {
    opprof__recorder_config rc = {.profile_memory = s->cfg.profile_memory,
                                  .record_shapes = s->cfg.record_shapes,
                                  .with_stack = s->cfg.with_stack,
                                  .with_native_stack = s->cfg.with_native_stack,
                                  .max_events = s->cfg.max_events};
    s->window_base_ns = opprof__realtime_ns();
    s->window_mono = opprof__monotonic_ns();
    opprof__recorder_window_open(&rc);
    opprof__sampler_window_mark(s->sampler, true);
    s->window_open = true;
}

/* Without on_trace_ready, the session keeps each capture for
 * opprof_session_take_capture. */
static int keep_capture(opprof_session *s, opprof_capture *cap) {
    pthread_mutex_lock(&g_kept_lock);
    int rc = 0;
    if (s->kept_count == s->kept_cap) {
        size_t cap_n = s->kept_cap ? s->kept_cap * 2 : 4;
        opprof_capture **grown = opprof__realloc(s->kept, cap_n * sizeof *grown);
        if (!grown) {
            opprof_capture_free(cap);
            __atomic_add_fetch(&s->lost_captures, 1, __ATOMIC_RELAXED);
            rc = OPPROF_ENOMEM;
        } else {
            s->kept = grown;
            s->kept_cap = cap_n;
        }
    }
    if (!rc) s->kept[s->kept_count++] = cap;
    pthread_mutex_unlock(&g_kept_lock);
    return rc;
}

int opprof_session_take_capture(opprof_session *s, opprof_capture **out) {
    if (!s || !out) return OPPROF_EINVAL;
    pthread_mutex_lock(&g_kept_lock);
    *out = NULL;
    if (s->kept_count) {
        *out = s->kept[0];
        memmove(s->kept, s->kept + 1, (s->kept_count - 1) * sizeof *s->kept);
        s->kept_count--;
    }
    pthread_mutex_unlock(&g_kept_lock);
    return 0;
}

/* A capture to on_trace_ready, or kept: the session's or the flight
 * recorder's (on its saver thread). */
static int deliver(opprof_capture *cap, void *ctx) {
    opprof_session *s = ctx;
    __atomic_add_fetch(&s->captures, 1, __ATOMIC_RELAXED);
    if (!s->cfg.on_trace_ready) return keep_capture(s, cap);
    int rc = s->cfg.on_trace_ready(cap, s->cfg.user_data);
    opprof_capture_free(cap);
    if (rc < 0) {
        __atomic_add_fetch(&s->callback_failures, 1, __ATOMIC_RELAXED);
        return OPPROF_ECALLBACK;
    }
    return 0;
}

/* Close the window and build its capture. */
static int window_capture(opprof_session *s, opprof_capture **out) {
    uint64_t end = opprof__recorder_window_close();
    int64_t end_mono = opprof__monotonic_ns();
    opprof__sampler_window_mark(s->sampler, false);
    s->window_open = false;
    opprof_capture *cap = NULL;
    int rc = opprof__recorder_snapshot(&cap, opprof__recorder_window_start_ticks(), end, s->sampler, s->window_mono,
                                       end_mono);
    if (rc) {
        __atomic_add_fetch(&s->lost_captures, 1, __ATOMIC_RELAXED);
        return rc;
    }
    cap->info.step_num = s->step_num;
    cap->info.pid = (int64_t)getpid();
    cap->info.base_time_ns = s->window_base_ns;
    cap->info.schedule = s->cfg.schedule;
    cap->info.profile_memory = s->cfg.profile_memory;
    /* to the 0.01 ns a trace writes: a capture and its trace read back
     * estimate the same profiler cost, to the bit */
    cap->info.overhead_range_ns = round(s->overhead_range_ns * 100.0) / 100.0;
    cap->info.record_shapes = s->cfg.record_shapes;
    cap->info.with_stack = s->cfg.with_stack;
    cap->info.with_flops = s->cfg.with_flops;
    cap->info.rank = s->cfg.rank;
    struct rusage ru; /* a flight recorder's step: its save asks, off the program's thread */
    if (!s->flight && getrusage(RUSAGE_SELF, &ru) == 0) cap->info.process_peak_rss_bytes = (int64_t)ru.ru_maxrss * 1024;
    cap->info.overhead_memory_event_ns = s->overhead_memory_ns;
    if (s->machine && opprof_capture_set_machine(cap, s->machine))
        opprof__capture_warnf(cap, "the machine's ceilings could not be kept (out of memory)");
    int failures = __atomic_load_n(&s->callback_failures, __ATOMIC_RELAXED);
    int lost = __atomic_load_n(&s->lost_captures, __ATOMIC_RELAXED);
    if (failures) opprof__capture_warnf(cap, "%d earlier on_trace_ready call(s) of this session failed", failures);
    if (s->sampler_note[0]) opprof__capture_warnf(cap, "%s%s", s->sampler ? "" : "no samples: ", s->sampler_note);
    if (cap->info.samples_lost)
        opprof__capture_warnf(cap,
                              "%llu sample(s) lost: the kernel's buffer was full (a rate too high for this machine?)",
                              (unsigned long long)cap->info.samples_lost);
    if (lost) opprof__capture_warnf(cap, "%d earlier capture(s) of this session were lost (out of memory)", lost);
    *out = cap;
    return 0;
}

/* Close the window, build the capture, hand it to the callback. */
static int window_close_and_save(opprof_session *s) {
    opprof_capture *cap;
    int rc = window_capture(s, &cap);
    return rc ? rc : deliver(cap, s);
}

/* Flight recorder: the step that ended becomes a capture of the ring, and
 * the next one records at once. */
static int flight_step(opprof_session *s, bool last) {
    uint64_t start = opprof__recorder_window_start_ticks();
    opprof_capture *cap;
    int rc = window_capture(s, &cap);
    if (!last) window_open(s);
    if (!rc) opprof__flight_step(s->flight, cap, s->step_num, start);
    return rc;
}

/* Apply the transition from `prev` to `next`; `final` at stop. */
static int transit(opprof_session *s, opprof_action prev, opprof_action next, bool final) {
    int rc = 0;
    bool was = is_recording(prev);
    bool will = !final && is_recording(next);
    if (was && (!will || prev == OPPROF_ACTION_RECORD_AND_SAVE)) rc = window_close_and_save(s);
    if (will && !s->window_open) window_open(s);
    return rc;
}

/* The capture reports its own cost: time 1024 ranges and memory events
 * through the real hot path, best of 3 rounds, in a window of their own that
 * the next window discards, once per session. 4096 a round took 2.5 ms of
 * every profiled process's start on a 2-vCPU VM (perf, 30 starts of
 * bench_record_toy under --memory), most of it the first touch of their
 * buffers; 1024 give the same costs (22-24 ns a range, 11-12 ns a memory
 * event, either way) for 0.6 ms. */
static int calibrate(opprof_session *s) {
    static const opprof_srcloc loc = {"opprof::calibration",       "calibrate", __FILE__, __LINE__,
                                      OPPROF_KIND_USER_ANNOTATION, NULL};
    enum { N = 1024 };
    opprof__recorder_config rc = {.profile_memory = true, .max_events = 0};
    double best_range = 1e30, best_memory = 1e30;
    for (int round = 0; round < 3; round++) { /* a window each: later rounds reuse the buffers */
        opprof__recorder_window_open(&rc);
        int64_t t0 = opprof__monotonic_ns();
        for (int i = 0; i < N; i++) opprof__range_end(opprof__range_begin(&loc)); /* the macros' path */
        int64_t t1 = opprof__monotonic_ns();
        for (int i = 0; i < N; i++) opprof__record_memory(&loc, i & 1 ? -1 : 1, -1);
        int64_t t2 = opprof__monotonic_ns();
        bool clean = opprof__recorder_thread_clean();
        opprof__recorder_window_close();
        if (!clean) return OPPROF_ENOMEM; /* buffers could not be allocated */
        if ((double)(t1 - t0) / N < best_range) best_range = (double)(t1 - t0) / N;
        if ((double)(t2 - t1) / N < best_memory) best_memory = (double)(t2 - t1) / N;
    }
    s->overhead_range_ns = best_range;
    s->overhead_memory_ns = best_memory;
    return 0;
}

static void open_step_range(opprof_session *s) {
    if (s->cfg.record_steps)
        s->step_range = opprof_range_beginf(&STEP_LOC, "ProfilerStep#%lld", (long long)s->step_num);
}

/* On another thread than the step's (OPPROF_TRACE's save on its watcher
 * after SIGINT, exit() called on a worker), the step is left to the capture,
 * which ends it at the stop (snapshot.c); ended here, it was "a range end
 * called on another thread than its begin" and "a range still open". */
static void close_step_range(opprof_session *s) {
    if (opprof__range_is_this_threads(s->step_range)) opprof_range_end(s->step_range);
    s->step_range = 0;
}

int opprof_session_start(opprof_session **out, const opprof_config *config) {
    if (!out || !config) return OPPROF_EINVAL;
    *out = NULL;
    if (config->activities & ~(unsigned)OPPROF_ACTIVITY_CPU) return OPPROF_EACTIVITY;
    int rc = opprof_schedule_check(&config->schedule);
    if (rc) return rc;
    if (opprof_flight_check(&config->flight, NULL, 0) ||
        (config->flight.keep_steps && !schedule_is_zero(&config->schedule)))
        return OPPROF_EINVAL;
    const opprof_rank *r = &config->rank;
    if (memchr(r->backend, 0, sizeof r->backend) == NULL || r->clock_uncertainty_ns < 0 ||
        (r->backend[0] && (r->world_size < 1 || r->rank < 0 || r->rank >= r->world_size)))
        return OPPROF_EINVAL;
    if (config->sample_hz < 0 || config->sample_hz > 1000000) return OPPROF_EINVAL;
    void (*before)(void) = opprof__before_session_start;
    if (before) before(); /* OPPROF_TRACE's session, if any, stops and is saved */
    static pthread_once_t fork_handler = PTHREAD_ONCE_INIT;
    pthread_once(&fork_handler, register_fork_handler);
    opprof_session *s = opprof__calloc(1, sizeof *s);
    if (!s) return OPPROF_ENOMEM;
    s->cfg = *config;
    s->forks = __atomic_load_n(&g_forks, __ATOMIC_ACQUIRE);
    session_lock();
    if (g_active) {
        session_unlock();
        opprof__free(s);
        return OPPROF_EACTIVE;
    }
    __atomic_store_n(&g_active, 1, __ATOMIC_RELEASE);
    categories_set(s->cfg.categories);
    s->cfg.categories = NULL; /* the caller's string is not kept */
    opprof__clock_init();
    if (calibrate(s) != 0) {
        __atomic_store_n(&g_active, 0, __ATOMIC_RELEASE);
        session_unlock();
        opprof__free(s);
        return OPPROF_ENOMEM;
    }
    opprof__flight_sink sink = {deliver, s};
    if (s->cfg.flight.keep_steps && opprof__flight_new(&s->flight, &s->cfg.flight, &sink)) {
        __atomic_store_n(&g_active, 0, __ATOMIC_RELEASE);
        session_unlock();
        opprof__free(s);
        return OPPROF_ENOMEM;
    }
    s->cfg.flight.range_name = NULL; /* the caller's string is not kept (the recorder has a copy) */
    pthread_mutex_lock(&g_flight_lock);
    g_flight = s->flight;
    pthread_mutex_unlock(&g_flight_lock);
    if (s->cfg.sample_hz || s->cfg.off_cpu) /* a failure is said in every capture; recording goes on */
        opprof__sampler_start(&s->sampler, s->cfg.sample_hz, s->cfg.sample_dwarf, s->cfg.off_cpu, s->sampler_note,
                              sizeof s->sampler_note);
    s->action = opprof_schedule_action(&s->cfg.schedule, 0);
    transit(s, OPPROF_ACTION_NONE, s->action, false);
    open_step_range(s);
    session_unlock();
    *out = s;
    return 0;
}

/* Lock a session that still runs and close its step's range; or say why not
 * (and hold no lock). */
static int enter_running(opprof_session *s) {
    if (!s) return OPPROF_EINVAL;
    if (inherited(s)) return OPPROF_ESTOPPED;
    session_lock();
    if (s->stopped) {
        session_unlock();
        return OPPROF_ESTOPPED;
    }
    close_step_range(s);
    return 0;
}

int opprof_session_step(opprof_session *s) {
    int entered = enter_running(s);
    if (entered) return entered;
    opprof_action prev = s->action;
    int rc = s->flight ? flight_step(s, false) : 0;
    s->step_num++;
    s->action = opprof_schedule_action(&s->cfg.schedule, s->step_num);
    if (!schedule_is_zero(&s->cfg.schedule)) rc = transit(s, prev, s->action, false);
    open_step_range(s);
    session_unlock();
    return rc;
}

int opprof_session_stop(opprof_session *s) {
    int entered = enter_running(s);
    if (entered) return entered;
    int rc = 0;
    if (s->flight) {
        pthread_mutex_lock(&g_flight_lock);
        g_flight = NULL;
        pthread_mutex_unlock(&g_flight_lock);
        rc = flight_step(s, true);
        opprof__flight_stop(s->flight); /* every save written */
    } else {
        rc = transit(s, s->action, OPPROF_ACTION_NONE, true);
    }
    if (s->window_open) { /* cannot happen; keep the recorder closed regardless */
        opprof__recorder_window_close();
        s->window_open = false;
    }
    s->stopped = true;
    opprof__sampler_stop(s->sampler);
    s->sampler = NULL;
    opprof__spare_stop();   /* the window is closed: no thread takes a spare */
    g_categories[0] = '\0'; /* no session, no filter */
    __atomic_add_fetch(&opprof__category_gen, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&g_active, 0, __ATOMIC_RELEASE);
    session_unlock();
    return rc;
}

void opprof_session_free(opprof_session *s) {
    if (!s || inherited(s)) return; /* the parent's copy: its threads are not here to join */
    if (!s->stopped) opprof_session_stop(s);
    opprof__flight_free(s->flight);
    opprof__free(s->machine);
    for (size_t i = 0; i < s->kept_count; i++) opprof_capture_free(s->kept[i]);
    opprof__free(s->kept);
    opprof__free(s);
}

int64_t opprof_session_step_num(const opprof_session *s) { return s ? s->step_num : -1; }

int opprof_session_capture_count(const opprof_session *s) {
    return s ? __atomic_load_n(&s->captures, __ATOMIC_RELAXED) : 0;
}

int opprof_session_dump(opprof_session *s, const char *reason) {
    if (!s) return OPPROF_EINVAL;
    if (inherited(s)) return OPPROF_ESTOPPED;
    session_lock();
    int rc = s->stopped ? OPPROF_ESTOPPED : !s->flight ? OPPROF_EINVAL : opprof__flight_dump(s->flight, reason);
    session_unlock();
    return rc;
}

int opprof_trigger(const char *reason) {
    pthread_mutex_lock(&g_flight_lock);
    int rc = g_flight ? 0 : opprof_is_active() ? OPPROF_EINVAL : OPPROF_ESTOPPED;
    if (g_flight) opprof__flight_trigger(g_flight, reason);
    pthread_mutex_unlock(&g_flight_lock);
    return rc;
}

int opprof_session_flight_stats(opprof_session *s, opprof_flight_stats *out) {
    if (!s || !out) return OPPROF_EINVAL;
    memset(out, 0, sizeof *out);
    if (!s->flight) return OPPROF_EINVAL;
    opprof__flight_stats(s->flight, out);
    return 0;
}

int opprof_session_set_machine(opprof_session *s, const opprof_machine *m) {
    if (!s || (m && (m->threads < 1 || m->threads > OPPROF_MACHINE_MAX_THREADS))) return OPPROF_EINVAL;
    opprof_machine *copy = m ? opprof__alloc(sizeof *copy) : NULL;
    if (m && !copy) return OPPROF_ENOMEM;
    if (copy) *copy = *m;
    opprof__free(s->machine); /* the thread that steps the session, between steps (opprof.h) */
    s->machine = copy;
    return 0;
}
