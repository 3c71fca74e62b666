/* test_flight.c - the flight recorder: its settings, the rules that trigger
 * a save, the steps a save holds, the ring's bounds, the cool-down, failed
 * saves, dumps from another thread, and a save read back from its traces.
 * The rules read an injected clock, so every slow step is slow exactly. */
#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int64_t g_now; /* the injected clock, ns; atomic (a dump thread reads nothing of it) */
static int64_t fake_clock(void) { return __atomic_load_n(&g_now, __ATOMIC_RELAXED); }

static const opprof_srcloc WORK = {"work", "run", __FILE__, __LINE__, OPPROF_KIND_CPU_OP, NULL};
static const opprof_srcloc REQUEST = {"request", "run", __FILE__, __LINE__, OPPROF_KIND_USER_ANNOTATION, NULL};

static opprof_config flight_config(int keep, double k) {
    opprof_config cfg = opprof_config_default();
    cfg.flight = opprof_flight_default();
    cfg.flight.keep_steps = keep;
    cfg.flight.slower_than_median = k;
    cfg.flight.cooldown_ms = 0;
    cfg.flight.clock_ns = fake_clock;
    return cfg;
}

/* Run `steps` steps; step i lasts ms[i] on the injected clock (1 ms when
 * ms is NULL or ms[i] is 0), and records a "work" operator and a "request". */
static void run_steps(opprof_session *s, int steps, const int *ms) {
    for (int i = 0; i < steps; i++) {
        opprof_range r = opprof_range_begin(&REQUEST);
        opprof_range_end(opprof_range_begin(&WORK));
        opprof_range_end(r);
        __atomic_add_fetch(&g_now, (int64_t)(ms && ms[i] ? ms[i] : 1) * 1000000, __ATOMIC_RELAXED);
        CHECK_INT(opprof_session_step(s), 0);
    }
}

/* The ProfilerStep numbers a capture holds, in order, as "3,4,5". */
static void steps_of(const opprof_capture *c, char *out, size_t size) {
    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *name = opprof_capture_name(c, ev[i].name);
        if (strncmp(name, "ProfilerStep#", 13) == 0)
            snprintf(out + strlen(out), size - strlen(out), "%s%s", out[0] ? "," : "", name + 13);
    }
}

static int take_all(opprof_session *s, opprof_capture **out, int max) {
    int n = 0;
    opprof_capture *c;
    while (n < max && opprof_session_take_capture(s, &c) == 0 && c) out[n++] = c;
    return n;
}

TEST_CASE(settings_checked) {
    char why[256];
    opprof_flight f = opprof_flight_default();
    CHECK_INT(opprof_flight_check(&f, why, sizeof why), 0); /* off */
    f.keep_steps = 10;
    CHECK_INT(opprof_flight_check(&f, why, sizeof why), 0);
    f.keep_steps = -1;
    CHECK_INT(opprof_flight_check(&f, why, sizeof why), OPPROF_EINVAL);
    CHECK_CONTAINS(why, "keep_steps");
    f = opprof_flight_default();
    f.keep_steps = 10;
    f.slower_than_median = 0.5;
    CHECK_INT(opprof_flight_check(&f, why, sizeof why), OPPROF_EINVAL);
    CHECK_CONTAINS(why, "above 1");
    f.slower_than_median = 2;
    f.before = 9;
    f.after = 1;
    CHECK_INT(opprof_flight_check(&f, why, sizeof why), OPPROF_EINVAL);
    CHECK_CONTAINS(why, "before + 1 + after <= keep_steps");
    f.before = 4;
    f.after = 0;
    f.median_of = 0;
    CHECK_INT(opprof_flight_check(&f, why, sizeof why), OPPROF_EINVAL);
    CHECK_CONTAINS(why, "median_of");
    f.median_of = 50;
    f.range_name = "request";
    CHECK_INT(opprof_flight_check(&f, why, sizeof why), OPPROF_EINVAL); /* no bound */
    CHECK_CONTAINS(why, "range_bound_ns");
    f.range_bound_ns = 1000;
    f.keep_seconds = -1;
    CHECK_INT(opprof_flight_check(&f, why, sizeof why), OPPROF_EINVAL);
    CHECK_INT(opprof_flight_check(NULL, why, sizeof why), OPPROF_EINVAL);
    /* the session refuses bad settings, and a schedule beside a flight recorder */
    opprof_config cfg = flight_config(10, 0.5);
    opprof_session *s = NULL;
    CHECK_INT(opprof_session_start(&s, &cfg), OPPROF_EINVAL);
    cfg = flight_config(10, 2);
    cfg.schedule.active = 1;
    CHECK_INT(opprof_session_start(&s, &cfg), OPPROF_EINVAL);
    CHECK(s == NULL);
    /* and without a flight recorder, its calls say so */
    cfg = opprof_config_default();
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    CHECK_INT(opprof_session_dump(s, NULL), OPPROF_EINVAL);
    CHECK_INT(opprof_trigger(NULL), OPPROF_EINVAL);
    opprof_session_free(s);
    CHECK_INT(opprof_trigger(NULL), OPPROF_ESTOPPED);
}

/* Two slow steps among 100 of 1 ms: exactly two saves, each the slow step
 * and the four before it. */
TEST_CASE(slow_steps_saved_with_predecessors) {
    int ms[100] = {0};
    ms[30] = 5;
    ms[71] = 3;
    ms[5] = 9; /* before 8 steps of history: the median rule waits */
    opprof_config cfg = flight_config(20, 2.5);
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    run_steps(s, 100, ms);
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *caps[8];
    int n = take_all(s, caps, 8);
    CHECK_INT(n, 2);
    char steps[256];
    for (int i = 0; i < n; i++) {
        opprof_capture_info info = opprof_capture_get_info(caps[i]);
        int slow = i == 0 ? 30 : 71;
        CHECK_INT(info.flight.trigger_step, slow);
        CHECK_INT(info.step_num, slow);
        CHECK_INT(info.flight.first_step, slow - 4);
        CHECK_INT(info.flight.last_step, slow);
        CHECK_INT(info.flight.trigger_step_ns, ms[slow] * 1000000LL);
        CHECK_INT(info.flight.median_step_ns, 1000000);
        CHECK_INT(info.flight.median_of, i == 0 ? 30 : 50); /* the steps before it, up to 50 */
        CHECK_CONTAINS(info.flight.reason, i == 0 ? "5.00x the median" : "3.00x the median");
        steps_of(caps[i], steps, sizeof steps);
        CHECK_STR(steps, i == 0 ? "26,27,28,29,30" : "67,68,69,70,71");
        /* each step's operators are there, in its step */
        size_t ne;
        const opprof_event *ev = opprof_capture_events(caps[i], &ne);
        int work = 0;
        for (size_t e = 0; e < ne; e++) work += strcmp(opprof_capture_name(caps[i], ev[e].name), "work") == 0;
        CHECK_INT(work, 5);
        opprof_capture_free(caps[i]);
    }
    opprof_flight_stats st;
    CHECK_INT(opprof_session_flight_stats(s, &st), 0);
    CHECK_INT(st.saves, 2);
    CHECK_INT(st.steps_dropped, 101 - 20); /* 101 steps (the last ended by stop), 20 kept */
    CHECK_INT(st.steps_held, 20);
    opprof_session_free(s);
}

TEST_CASE(absolute_bound_range_bound_and_trigger) {
    int ms[40] = {0};
    ms[12] = 30;
    opprof_config cfg = flight_config(10, 0);
    cfg.flight.slower_than_ns = 20 * 1000000LL;
    cfg.flight.range_name = "request";
    cfg.flight.range_bound_ns = 3600LL * 1000000000; /* no request is that long */
    cfg.flight.before = 2;
    cfg.flight.after = 2;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    run_steps(s, 20, ms);
    CHECK_INT(opprof_trigger("the program asked"), 0); /* during step 20 */
    run_steps(s, 5, NULL);
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *caps[4];
    int n = take_all(s, caps, 4);
    CHECK_INT(n, 2);
    char steps[256];
    steps_of(caps[0], steps, sizeof steps);
    CHECK_STR(steps, "10,11,12,13,14"); /* 2 before, 2 after */
    CHECK_CONTAINS(opprof_capture_get_info(caps[0]).flight.reason, "over the bound of 20.000 ms");
    steps_of(caps[1], steps, sizeof steps);
    CHECK_STR(steps, "18,19,20,21,22");
    CHECK_STR(opprof_capture_get_info(caps[1]).flight.reason, "the program asked");
    for (int i = 0; i < n; i++) opprof_capture_free(caps[i]);
    opprof_session_free(s);

    /* a named range over its bound */
    cfg.flight.slower_than_ns = 0;
    cfg.flight.range_bound_ns = 1; /* every request: the first triggers, the rest are suppressed */
    cfg.flight.after = 0;
    cfg.flight.cooldown_ms = 1000;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    run_steps(s, 10, NULL);
    CHECK_INT(opprof_session_stop(s), 0);
    n = take_all(s, caps, 4);
    CHECK_INT(n, 1);
    CHECK_CONTAINS(opprof_capture_get_info(caps[0]).flight.reason, "range 'request' lasted");
    CHECK_INT(opprof_capture_get_info(caps[0]).flight.trigger_step, 0);
    opprof_flight_stats st;
    opprof_session_flight_stats(s, &st);
    CHECK_INT(st.triggers_suppressed, 9); /* steps 1..9 (the one that stop ended has no request) */
    opprof_capture_free(caps[0]);
    opprof_session_free(s);
}

/* A storm: one save per cool-down, the next save counts what was suppressed. */
TEST_CASE(cooldown_suppresses_and_counts) {
    int ms[60] = {0};
    ms[20] = ms[22] = ms[24] = 10; /* they end 11 and 22 ms after step 20 */
    ms[50] = 10;                   /* 57 ms after it */
    opprof_config cfg = flight_config(30, 3);
    cfg.flight.cooldown_ms = 30;
    cfg.flight.before = 0;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    run_steps(s, 60, ms);
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *caps[4];
    int n = take_all(s, caps, 4);
    CHECK_INT(n, 2);
    CHECK_INT(opprof_capture_get_info(caps[0]).flight.trigger_step, 20);
    CHECK_INT(opprof_capture_get_info(caps[0]).flight.triggers_suppressed, 0);
    CHECK_INT(opprof_capture_get_info(caps[1]).flight.trigger_step, 50);
    CHECK_INT(opprof_capture_get_info(caps[1]).flight.triggers_suppressed, 2);
    for (int i = 0; i < n; i++) opprof_capture_free(caps[i]);
    opprof_session_free(s);
}

/* The ring keeps at most N steps, and fewer under keep_seconds; a dump
 * saves what it holds, whole steps only. */
TEST_CASE(ring_bounds_and_dump) {
    opprof_config cfg = flight_config(10, 0);
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    run_steps(s, 25, NULL);
    CHECK_INT(opprof_session_dump(s, "asked"), 0);
    CHECK_INT(opprof_session_stop(s), 0);
    CHECK_INT(opprof_session_dump(s, NULL), OPPROF_ESTOPPED);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_session_take_capture(s, &c), 0);
    CHECK(c != NULL);
    char steps[256];
    steps_of(c, steps, sizeof steps);
    CHECK_STR(steps, "15,16,17,18,19,20,21,22,23,24");
    opprof_capture_info info = opprof_capture_get_info(c);
    CHECK_STR(info.flight.reason, "asked");
    CHECK_INT(info.flight.trigger_step, -1);
    CHECK_INT(info.flight.steps_dropped, 15);
    CHECK_INT(info.step_num, 24);
    /* the steps sit one after the other on the capture's clock */
    size_t ne;
    const opprof_event *ev = opprof_capture_events(c, &ne);
    int64_t prev_end = -1;
    for (size_t i = 0; i < ne; i++)
        if (!strncmp(opprof_capture_name(c, ev[i].name), "ProfilerStep#", 13)) {
            CHECK(ev[i].start_ns >= prev_end);
            prev_end = ev[i].start_ns + ev[i].duration_ns;
        }
    CHECK(prev_end <= info.duration_ns);
    opprof_capture_free(c);
    opprof_session_free(s);

    cfg.flight.keep_seconds = 0.0045; /* 4.5 ms of 1 ms steps: the newest 4 */
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    run_steps(s, 12, NULL);
    CHECK_INT(opprof_session_dump(s, NULL), 0);
    CHECK_INT(opprof_session_stop(s), 0);
    CHECK_INT(opprof_session_take_capture(s, &c), 0);
    steps_of(c, steps, sizeof steps);
    CHECK_STR(steps, "8,9,10,11");
    CHECK_STR(opprof_capture_get_info(c).flight.reason, "dump");
    opprof_capture_free(c);
    opprof_session_free(s);

    cfg.flight.keep_seconds = 0;
    cfg.flight.keep_mib = 1e-6; /* a byte: only the newest step stays */
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    run_steps(s, 5, NULL);
    CHECK_INT(opprof_session_dump(s, NULL), 0);
    CHECK_INT(opprof_session_stop(s), 0);
    CHECK_INT(opprof_session_take_capture(s, &c), 0);
    steps_of(c, steps, sizeof steps);
    CHECK_STR(steps, "4");
    opprof_capture_free(c);
    opprof_session_free(s);
}

static int g_calls;
static int fail_first(const opprof_capture *c, void *ud) {
    (void)c;
    (void)ud;
    return g_calls++ == 0 ? OPPROF_ENOSPC : 0;
}
static opprof_capture *g_last;
static int keep_last(const opprof_capture *c, void *ud) {
    opprof_capture_info info = opprof_capture_get_info(c);
    opprof_capture *copy;
    opprof_capture_new(&copy);
    opprof_capture_set_info(copy, &info);
    opprof_capture_finish(copy);
    opprof_capture_free(g_last);
    g_last = copy;
    return fail_first(c, ud);
}

/* A save that fails loses no later one, and the next says why. */
TEST_CASE(failed_save_said_in_the_next) {
    int ms[40] = {0};
    ms[15] = ms[30] = 10;
    opprof_config cfg = flight_config(10, 3);
    cfg.on_trace_ready = keep_last;
    g_calls = 0;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    run_steps(s, 40, ms);
    CHECK_INT(opprof_session_stop(s), 0);
    CHECK_INT(g_calls, 2);
    CHECK(g_last != NULL);
    CHECK_INT(opprof_capture_get_info(g_last).flight.saves_failed, 1);
    CHECK_INT(opprof_capture_get_info(g_last).flight.trigger_step, 30);
    opprof_flight_stats st;
    opprof_session_flight_stats(s, &st);
    CHECK_INT(st.saves_failed, 1);
    opprof_capture_free(g_last);
    g_last = NULL;
    opprof_session_free(s);
}

static void *dumper(void *arg) {
    opprof_session *s = arg;
    for (int i = 0; i < 20; i++) {
        opprof_session_dump(s, "from a thread");
        usleep(200);
    }
    return NULL;
}

/* Dumps from another thread while the program steps (run under TSan in CI). */
TEST_CASE(dump_from_another_thread) {
    opprof_config cfg = flight_config(8, 0);
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    pthread_t t;
    pthread_create(&t, NULL, dumper, s);
    run_steps(s, 400, NULL);
    pthread_join(t, NULL);
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *c;
    int n = 0;
    while (opprof_session_take_capture(s, &c) == 0 && c) {
        opprof_capture_info info = opprof_capture_get_info(c);
        char steps[256];
        steps_of(c, steps, sizeof steps);
        /* whole steps, consecutive, at most the ring's 8 */
        CHECK(info.flight.last_step - info.flight.first_step < 8);
        int count = 0;
        for (const char *p = steps; *p; p++) count += *p == ',';
        if (steps[0]) CHECK_INT(count + 1, info.flight.last_step - info.flight.first_step + 1);
        opprof_capture_free(c);
        n++;
    }
    CHECK(n >= 1 && n <= 20);
    opprof_session_free(s);
}

/* A save's facts survive its traces, JSON and Perfetto's. */
TEST_CASE(save_read_back_from_traces) {
    int ms[20] = {0};
    ms[12] = 4;
    opprof_config cfg = flight_config(10, 2);
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    run_steps(s, 20, ms);
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_session_take_capture(s, &c), 0);
    CHECK(c != NULL);
    char dir[] = "/tmp/opprof_flight_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    const char *names[] = {"save.json", "save.pftrace"};
    for (int k = 0; k < 2; k++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        CHECK_INT(k ? opprof_capture_perfetto_write(c, path) : opprof_capture_chrome_write(c, path), 0);
        opprof_capture *back = NULL;
        CHECK_INT(opprof_capture_read(path, NULL, &back, NULL), 0);
        opprof_flight_info a = opprof_capture_get_info(c).flight, b = opprof_capture_get_info(back).flight;
        CHECK_STR(b.reason, a.reason);
        CHECK_INT(b.trigger_step, 12);
        CHECK_INT(b.trigger_step_ns, a.trigger_step_ns);
        CHECK_INT(b.median_step_ns, a.median_step_ns);
        CHECK_INT(b.median_of, a.median_of);
        CHECK_INT(b.first_step, 8);
        CHECK_INT(b.last_step, 12);
        char steps[256];
        steps_of(back, steps, sizeof steps);
        CHECK_STR(steps, "8,9,10,11,12");
        opprof_capture_free(back);
        unlink(path);
    }
    rmdir(dir);
    opprof_capture_free(c);
    opprof_session_free(s);
}

/* The bytes opprof holds, through an allocator that counts them; frees on any
 * thread but the program's sleep, as a saver that lags behind would. */
static int64_t g_live; /* atomic */
static pthread_t g_program;

static void *counting_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    (void)ctx;
    if (ptr && new_size == 0 && !pthread_equal(pthread_self(), g_program)) usleep(20);
    void *p = NULL;
    if (new_size == 0)
        free(ptr);
    else if (!(p = realloc(ptr, new_size)))
        return NULL;
    __atomic_add_fetch(&g_live, (int64_t)new_size - (int64_t)(ptr ? old_size : 0), __ATOMIC_RELAXED);
    return p;
}

/* 10^5 steps through a ring of 20, the saver slowed: what opprof holds stays
 * what the ring keeps (it grew by a step's capture, about 8 KB, each step
 * once a wake-up of the saver was missed). */
TEST_CASE(memory_bounded_by_what_is_kept) {
    g_program = pthread_self();
    opprof_allocator counting = {counting_realloc, NULL};
    CHECK_INT(opprof_set_allocator(&counting), 0);
    opprof_config cfg = flight_config(20, 0);
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    run_steps(s, 20000, NULL);
    int64_t early = __atomic_load_n(&g_live, __ATOMIC_RELAXED);
    run_steps(s, 80000, NULL);
    int64_t late = __atomic_load_n(&g_live, __ATOMIC_RELAXED);
    opprof_flight_stats st;
    CHECK_INT(opprof_session_flight_stats(s, &st), 0);
    CHECK_INT(st.steps_dropped, 100000 - 20);
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_session_free(s);
    CHECK(late - early < 8 * 1024 * 1024);
    if (late - early >= 8 * 1024 * 1024)
        fprintf(stderr, "held %lld bytes more after 80000 steps\n", (long long)(late - early));
    CHECK_INT(opprof_set_allocator(NULL), 0);
}

/* The saver held in its first save (a gate in the allocator of every thread
 * but the program's), so that the saves a storm of triggers queues wait. */
static int g_gate; /* 1: armed, 2: a saver is in it, 3: open */
static void *gated_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    (void)ctx;
    (void)old_size;
    if (!pthread_equal(pthread_self(), g_program)) {
        int armed = 1;
        __atomic_compare_exchange_n(&g_gate, &armed, 2, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(&g_gate, __ATOMIC_SEQ_CST) == 2) usleep(100);
    }
    if (new_size == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, new_size);
}

static int by_ms_desc(const void *a, const void *b) { return ((const int *)b)[0] - ((const int *)a)[0]; }

/* Every step triggers (slower than 1 ns, no cool-down) while the saver is
 * held in the first save: the queue keeps the 64 slowest steps' saves and
 * drops the rest, counted as suppressed (it held every one: 20,000 steps
 * were 20,001 saves and 110 s at exit). */
TEST_CASE(trigger_storm_keeps_the_slowest) {
    enum { STEPS = 1000, QUEUED = 64 };
    static int ms[STEPS], order[STEPS - 1][2];
    for (int i = 0; i < STEPS; i++) ms[i] = 1 + (i * 7919) % STEPS; /* each duration once */
    g_program = pthread_self();
    __atomic_store_n(&g_gate, 1, __ATOMIC_SEQ_CST);
    opprof_allocator gated = {gated_realloc, NULL};
    CHECK_INT(opprof_set_allocator(&gated), 0);
    opprof_config cfg = flight_config(30, 0);
    cfg.flight.slower_than_ns = 1;
    cfg.flight.before = 0;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    run_steps(s, 1, ms);
    while (__atomic_load_n(&g_gate, __ATOMIC_SEQ_CST) != 2) usleep(100); /* the saver holds the first save */
    run_steps(s, STEPS - 1, ms + 1);
    opprof_flight_stats st;
    CHECK_INT(opprof_session_flight_stats(s, &st), 0);
    CHECK_INT(st.saves, 1 + QUEUED);
    CHECK_INT(st.triggers_suppressed, STEPS - 1 - QUEUED);
    __atomic_store_n(&g_gate, 3, __ATOMIC_SEQ_CST);
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *caps[STEPS];
    int n = take_all(s, caps, STEPS);
    CHECK_INT(n, 1 + QUEUED);
    /* the first save's step, then the 64 slowest of the others, in the order they came */
    int64_t first = n ? opprof_capture_get_info(caps[0]).flight.trigger_step : -1;
    for (int i = 1; i < STEPS; i++) order[i - 1][0] = ms[i], order[i - 1][1] = i;
    qsort(order, STEPS - 1, sizeof order[0], by_ms_desc);
    bool kept[STEPS] = {false};
    for (int k = 0; k < QUEUED; k++) kept[order[k][1]] = true;
    int want = 1;
    for (int i = 1; i < STEPS && want < n; i++)
        if (kept[i]) CHECK_INT(opprof_capture_get_info(caps[want++]).flight.trigger_step, first + i);
    CHECK_INT(want, n);
    for (int i = 0; i < n; i++) opprof_capture_free(caps[i]);
    opprof_session_free(s);
    CHECK_INT(opprof_set_allocator(NULL), 0);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_flight"); }
