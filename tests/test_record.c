/* test_record.c - live recording: nesting, names, threads, memory events,
 * budget, and misuse reported as warnings. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct saved {
    opprof_capture *copy_of_names; /* unused */
    int calls;
    size_t events, memory;
    uint64_t dropped;
    char names[2048];
    char warnings[2048];
    char table[8192];
    int threads;
    int nested_ok;
} saved;

/* Flatten the capture into strings the checks can read. */
static int on_ready(const opprof_capture *cap, void *user) {
    saved *s = user;
    s->calls++;
    size_t n, m, nt, nw;
    const opprof_event *ev = opprof_capture_events(cap, &n);
    opprof_capture_memory_events(cap, &m);
    opprof_capture_threads(cap, &nt);
    s->events = n;
    s->memory = m;
    s->threads = (int)nt;
    s->dropped = opprof_capture_get_info(cap).dropped_events;
    s->names[0] = '\0';
    for (size_t i = 0; i < n && i < 40; i++) {
        const char *parent = ev[i].parent < 0 ? "-" : opprof_capture_name(cap, ev[ev[i].parent].name);
        snprintf(s->names + strlen(s->names), sizeof s->names - strlen(s->names), "%s<%s ",
                 opprof_capture_name(cap, ev[i].name), parent);
    }
    const char *const *w = opprof_capture_warnings(cap, &nw);
    s->warnings[0] = '\0';
    for (size_t i = 0; i < nw; i++)
        snprintf(s->warnings + strlen(s->warnings), sizeof s->warnings - strlen(s->warnings), "%s|", w[i]);
    opprof_averages *avg;
    char *table = NULL;
    if (opprof_capture_averages(cap, &avg) == 0 &&
        opprof_averages_table_to_string(avg, &(opprof_table_options){.sort = OPPROF_SORT_NONE, .row_limit = -1},
                                        &table) == 0)
        snprintf(s->table, sizeof s->table, "%s", table);
    opprof_free(table);
    opprof_averages_free(avg);
    /* Each event's parent is on its own thread and contains it. */
    s->nested_ok = 1;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].parent < 0) continue;
        const opprof_event *p = &ev[ev[i].parent];
        if (p->thread != ev[i].thread || p->start_ns > ev[i].start_ns ||
            p->start_ns + p->duration_ns < ev[i].start_ns + ev[i].duration_ns)
            s->nested_ok = 0;
    }
    return 0;
}

/* A session with memory events, no steps, whose captures go to ready(user). */
static opprof_session *start_with(int (*ready)(const opprof_capture *, void *), void *user, opprof_schedule sched,
                                  uint64_t max_events) {
    opprof_config cfg = opprof_config_default();
    cfg.schedule = sched;
    cfg.on_trace_ready = ready;
    cfg.user_data = user;
    cfg.profile_memory = true;
    cfg.max_events = max_events;
    cfg.record_steps = false;
    opprof_session *session = NULL;
    CHECK_INT(opprof_session_start(&session, &cfg), 0);
    return session;
}

static opprof_session *start(saved *s, opprof_schedule sched, uint64_t max_events) {
    memset(s, 0, sizeof *s);
    return start_with(on_ready, s, sched, max_events);
}

enum { THREADS = 4, PER_THREAD = 20000 };

static void *worker(void *arg) {
    char name[16];
    snprintf(name, sizeof name, "worker-%d", (int)(intptr_t)arg);
    opprof_thread_set_name(name);
    for (int i = 0; i < PER_THREAD / 2; i++) {
        {
            OPPROF_SCOPE("outer");
            {
                OPPROF_OP_SCOPE("inner");
                OPPROF_MEMORY((void *)(intptr_t)(i + 1), 16, -1);
            }
        }
    }
    return NULL;
}

/* A thread of this process is named `name` (/proc/self/task/TID/comm). */
static bool thread_named(const char *name) {
    DIR *d = opendir("/proc/self/task");
    bool found = false;
    for (struct dirent *e; d && !found && (e = readdir(d));) {
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f))
            found = strncmp(comm, name, strlen(name)) == 0 && comm[strlen(name)] == '\n';
        if (f) fclose(f);
    }
    if (d) closedir(d);
    return found;
}

/* Ranges and memory events over several chunks, then the same in a child
 * forked after it (each on a new thread): each capture whole and nested,
 * whichever thread made its chunks; where a second CPU can run it, the helper
 * that makes them ahead ("opprof-spares") runs while the session records, in
 * the parent and again in the child, and ends with the session. */
enum { MANY = 5 * 65536 };
static bool g_two_cpus;
static int record_many(saved *s) {
    opprof_session *session = start(s, (opprof_schedule){0}, 0);
    for (int i = 0; i < MANY / 2; i++) {
        OPPROF_SCOPE("outer");
        OPPROF_OP_SCOPE("inner");
        OPPROF_MEMORY((void *)(intptr_t)(i + 1), 16, -1);
    }
    bool helper_while_recording = thread_named("opprof-spares");
    opprof_session_stop(session);
    opprof_session_free(session);
    bool whole = s->calls == 1 && s->events == MANY && s->memory == MANY / 2 && s->nested_ok && s->dropped == 0;
    return !whole ? 1 : helper_while_recording != g_two_cpus ? 2 : thread_named("opprof-spares") ? 3 : 0;
}

/* record_many on a thread of its own: a new thread's buffers are new (a
 * thread keeps its chunks from one session to the next, and a forked child
 * the forking thread's). */
static void *record_many_on_a_thread(void *s) { return (void *)(intptr_t)record_many(s); }
static int record_many_anew(saved *s) {
    pthread_t t;
    void *rc = (void *)(intptr_t)-1;
    if (pthread_create(&t, NULL, record_many_on_a_thread, s) == 0) pthread_join(t, &rc);
    return (int)(intptr_t)rc;
}

TEST_CASE(chunks_made_ahead) {
    /* each stream keeps one chunk between sessions (read at this process's
     * first window: ctest runs each case alone), so that the child's thread
     * needs new ones too */
    setenv("OPPROF_RETAIN_CHUNKS", "1", 1);
    cpu_set_t set;
    CHECK_INT(sched_getaffinity(0, sizeof set, &set), 0);
    g_two_cpus = CPU_COUNT(&set) >= 2;
    saved *s = calloc(1, sizeof *s);
    CHECK_INT(record_many_anew(s), 0); /* 1: the capture, 2: the helper while recording, 3: after */
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) _exit(record_many_anew(s));
    int status = -1;
    CHECK_INT(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));
    CHECK_INT(WEXITSTATUS(status), 0); /* the same, in the child */
    free(s);
}

/* Not under ThreadSanitizer: its runtime's own thread keeps such a process
 * alive with or without opprof (a plain -fsanitize=thread program whose
 * main thread ends by pthread_exit never ends), so there is no plain
 * behaviour to keep. */
#ifndef __SANITIZE_THREAD__
/* A program that runs its own session and ends its main thread by
 * pthread_exit, the session still running, its worker last: the process
 * ends with that worker, by exit(0). The thread that makes chunks ahead
 * (opprof's, every signal blocked) kept it alive for ever, SIGTERM pending.
 * Waited for 60 s at most, then killed: the status and the worker's line. */
static void *record_then_say_done(void *arg) {
    for (int i = 0; i < 200000; i++) {
        OPPROF_SCOPE("w");
    }
    return write(*(int *)arg, "worker done\n", 12) == 12 ? NULL : arg;
}

TEST_CASE(a_main_thread_that_ends_first_with_the_session_running) {
    int out[2];
    CHECK_INT(pipe(out), 0);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        close(out[0]);
        opprof_config cfg = opprof_config_default();
        opprof_session *s = NULL;
        pthread_t t;
        if (opprof_session_start(&s, &cfg) || pthread_create(&t, NULL, record_then_say_done, &out[1])) _exit(3);
        pthread_exit(NULL);
    }
    close(out[1]);
    int status = -1;
    pid_t ended = 0;
    for (int tenths = 0; tenths < 600 && (ended = waitpid(child, &status, WNOHANG)) == 0; tenths++)
        nanosleep(&(struct timespec){0, 100000000L}, NULL);
    if (ended == 0) { /* still running: a hang */
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
    }
    CHECK_INT(ended, child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char said[64] = "";
    ssize_t n = read(out[0], said, sizeof said - 1);
    said[n > 0 ? n : 0] = '\0';
    CHECK_STR(said, "worker done\n");
    close(out[0]);
}
#endif

/* opprof's threads in the process: those of /proc/self/task whose name
 * begins "opprof" (every helper names itself so). Other threads (OpenBLAS's
 * pool, linked into some builds) are the program's. */
static long opprof_threads_now(void) {
    long n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300];
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        char *comm = read_text(path);
        n += comm && !strncmp(comm, "opprof", 6);
        free(comm);
    }
    if (d) closedir(d);
    return n;
}

static int count_events(const opprof_capture *c, void *user) {
    opprof_capture_events(c, (size_t *)user);
    return 0;
}

/* opprof_threads_pause: no thread of opprof's left (the kernel's condition
 * for a new user namespace is a process of one thread), then every helper
 * back and the session whole: the ranges before and after are in its
 * capture. */
TEST_CASE(threads_paused_and_resumed) {
    size_t events = 0;
    opprof_config cfg = opprof_config_default();
    cfg.on_trace_ready = count_events;
    cfg.user_data = &events;
    opprof_session *s = NULL;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    for (int i = 0; i < 200000; i++) {
        OPPROF_SCOPE("before");
    }
    cpu_set_t set;
    CHECK_INT(sched_getaffinity(0, sizeof set, &set), 0);
    if (CPU_COUNT(&set) >= 2) CHECK(opprof_threads_now() >= 1); /* the thread that makes chunks ahead runs */
    CHECK_INT(opprof_threads_pause(), 0);
    CHECK_INT(opprof_threads_now(), 0);
    opprof_threads_resume();
    for (int i = 0; i < 200000; i++) {
        OPPROF_SCOPE("after");
    }
    CHECK_INT(opprof_threads_pause(), 0); /* again: the helpers started anew pause too */
    CHECK_INT(opprof_threads_now(), 0);
    opprof_threads_resume();
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_session_free(s);
    CHECK(events >= 400000);
}

static int keep_native(const opprof_capture *c, void *user) {
    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    const opprof_site *site = n ? opprof_capture_site(c, ev[0].site) : NULL;
    snprintf(user, 4096, "%s", site && site->native_stack ? site->native_stack : "");
    return 0;
}

static opprof_range begun_elsewhere;
static void *end_elsewhere(void *arg) {
    (void)arg;
    opprof_range_end(begun_elsewhere);
    return NULL;
}

static int first_duration(const opprof_capture *cap, void *user) {
    size_t n;
    const opprof_event *ev = opprof_capture_events(cap, &n);
    *(int64_t *)user = n ? ev[0].duration_ns : -1;
    return 0;
}

static int64_t monotonic_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Nanoseconds from the TSC, calibrated against CLOCK_MONOTONIC when a capture
 * is made (no wait at start): a range around a 30 ms sleep lasts at least the
 * sleep and at most what CLOCK_MONOTONIC saw around it, within 0.5 %, in the
 * process's first session and in one a while later. */
TEST_CASE(timestamps_in_nanoseconds) {
    for (int round = 0; round < 2; round++) {
        int64_t duration = -1;
        opprof_config cfg = opprof_config_default();
        cfg.on_trace_ready = first_duration;
        cfg.user_data = &duration;
        cfg.record_steps = false;
        opprof_session *session = NULL;
        CHECK_INT(opprof_session_start(&session, &cfg), 0);
        int64_t t0 = monotonic_now();
        opprof_range r = OPPROF_BEGIN("sleep");
        struct timespec pause = {0, 30000000};
        while (nanosleep(&pause, &pause) != 0) {}
        OPPROF_END(r);
        int64_t t1 = monotonic_now();
        CHECK_INT(opprof_session_stop(session), 0);
        opprof_session_free(session);
        CHECK(duration >= (int64_t)(30000000 * 0.995));
        CHECK(duration <= (int64_t)((double)(t1 - t0) * 1.005));
    }
}

TEST_CASE(nesting_names_and_scopes) {
    saved s;
    opprof_session *session;
    /* Nothing is recorded without a session. */
    CHECK(opprof_range_begin(&(opprof_srcloc){"x", "f", "file", 1, 0, NULL}) == 0);

    /* Nesting, formatted names, scopes. */
    session = start(&s, (opprof_schedule){0}, 0);
    for (int i = 0; i < 2; i++) {
        {
            OPPROF_SCOPE("batch_%d", i);
            OPPROF_SCOPE("scope");
            {
                OPPROF_OP_SCOPE("op");
                OPPROF_MEMORY(&s, 100, -1);
            }
            opprof_record_memory(&s, -100, -1);
        }
    }
    opprof_range r = OPPROF_BEGIN("explicit");
    OPPROF_END(r);
    CHECK_INT(opprof_session_stop(session), 0);
    opprof_session_free(session);
    CHECK_INT(s.calls, 1);
    CHECK_STR(s.names, "batch_0<- scope<batch_0 op<scope batch_1<- scope<batch_1 op<scope explicit<- ");
    CHECK_INT(s.memory, 4);
    CHECK_STR(s.warnings, "");
    CHECK(s.nested_ok);
    CHECK_CONTAINS(s.table, "  op  ");

    /* Recording stops outside the window: a range begun after stop is not kept. */
    CHECK(OPPROF_BEGIN("late") == 0);
}

TEST_CASE(threads_that_come_and_go) {
    saved s;
    opprof_session *session;
    /* Threads that start and exit during a capture keep their events, each
     * on its own track, with its name. */
    session = start(&s, (opprof_schedule){0}, 0);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    opprof_session_free(session);
    CHECK_INT(s.events, THREADS * PER_THREAD);
    CHECK_INT(s.memory, THREADS * PER_THREAD / 2);
    CHECK_INT(s.threads, THREADS);
    CHECK(s.nested_ok);
    CHECK_INT(s.dropped, 0);
}

TEST_CASE(budget_drops_and_counts) {
    saved s;
    opprof_session *session;
    /* A budget: events past it are dropped and counted; the table says so. */
    session = start(&s, (opprof_schedule){0}, 100);
    for (int i = 0; i < 150; i++) {
        { OPPROF_SCOPE("r"); }
    }
    opprof_session_free(session);
    CHECK_INT(s.events, 100);
    CHECK_INT(s.dropped, 50);
    CHECK_CONTAINS(s.table, "Dropped events: 50 ");
}

TEST_CASE(misuse_said) {
    saved s;
    opprof_session *session;
    /* Misuse: end without begin, end on another thread, end out of order,
     * left open at stop. Each is a warning; the capture stays well nested. */
    session = start(&s, (opprof_schedule){0}, 0);
    opprof_range a = OPPROF_BEGIN("a");
    opprof_range b = OPPROF_BEGIN("b");
    OPPROF_END(a); /* closes b too */
    OPPROF_END(b); /* already closed: unmatched */
    OPPROF_END(a); /* twice */
    begun_elsewhere = OPPROF_BEGIN("cross");
    pthread_t other;
    pthread_create(&other, NULL, end_elsewhere, NULL);
    pthread_join(other, NULL);
    OPPROF_END(begun_elsewhere);
    (void)OPPROF_BEGIN("left-open");
    opprof_session_free(session);
    CHECK_CONTAINS(s.warnings, "2 range end(s) without a matching open range");
    CHECK_CONTAINS(s.warnings, "1 range end(s) called on another thread than their begin");
    CHECK_CONTAINS(s.warnings, "1 range(s) closed early because an enclosing range ended first (first: 'b' "
                               "closed when 'a' ended, thread '");
    CHECK_CONTAINS(s.warnings, "2 range end(s) without a matching open range on their thread (first: thread '");
    CHECK_CONTAINS(s.warnings, "called on another thread than their begin; ignored (first: on tid ");
    {
        char tid[64];
        snprintf(tid, sizeof tid, "(tid %lld) at ", (long long)gettid());
        CHECK_CONTAINS(s.warnings, tid);
    }
    CHECK_CONTAINS(s.warnings, "1 range(s) still open at the end of the capture (first: 'left-open')");
    CHECK(s.nested_ok);
    CHECK_CONTAINS(s.table, "Warnings: 4 ");
    CHECK_STR(s.names, "a<- b<a cross<- left-open<- ");
}

TEST_CASE(inline_path_and_functions_share_state) {
    saved s;
    opprof_session *session;
    /* The macros' inline path and the functions share their state: a handle
     * from one is ended by the other. */
    session = start(&s, (opprof_schedule){0}, 0);
    {
        static const opprof_srcloc fn_loc = {"by function", "main", __FILE__, __LINE__, OPPROF_KIND_USER_ANNOTATION,
                                             NULL};
        opprof_range outer = OPPROF_BEGIN("by macro");
        opprof_range inner = opprof_range_begin(&fn_loc);
        opprof_range innermost = OPPROF_BEGIN("macro again");
        opprof_range_end(innermost);
        OPPROF_END(inner);
        opprof_range_end(outer);
        opprof_range after = opprof_range_begin(&fn_loc);
        OPPROF_END(after);
    }
    opprof_session_free(session);
    CHECK_STR(s.names, "by macro<- by function<by macro macro again<by function by function<- ");
    CHECK_STR(s.warnings, "");
}

TEST_CASE(too_deep_dropped) {
    saved s;
    opprof_session *session;
    /* More than 1024 ranges open on a thread: the deeper ones are dropped,
     * counted, and their ends ignored. */
    session = start(&s, (opprof_schedule){0}, 0);
    {
        enum { DEEP = 1030 };
        static opprof_range open_ranges[DEEP];
        for (int i = 0; i < DEEP; i++) open_ranges[i] = OPPROF_BEGIN("deep");
        for (int i = DEEP - 1; i >= 0; i--) OPPROF_END(open_ranges[i]);
        CHECK(open_ranges[1023] != 0);
        CHECK(open_ranges[1024] == 0);
    }
    opprof_session_free(session);
    CHECK_INT(s.events, 1024);
    CHECK_INT(s.dropped, 6);
    CHECK_CONTAINS(s.warnings, "6 range(s) dropped: more than 1024 ranges open on one thread (first: 'deep', thread '");
    CHECK(s.nested_ok);
}

TEST_CASE(range_across_windows) {
    saved s;
    opprof_session *session;
    /* A range begun in one window and ended in the next: the first capture
     * cuts it at its end and says so; the second writes nothing of it (the
     * first window's buffers may be gone). */
    session = start(&s, (opprof_schedule){.active = 1, .repeat = 2}, 0);
    {
        opprof_range spanning = OPPROF_BEGIN("spanning");
        opprof_range spanning_inner = OPPROF_BEGIN("spanning inner");
        { OPPROF_SCOPE("inside first"); }
        CHECK_INT(opprof_session_step(session), 0);
        CHECK_INT(s.calls, 1);
        CHECK_STR(s.names, "spanning<- spanning inner<spanning inside first<spanning inner ");
        CHECK_CONTAINS(s.warnings, "2 range(s) still open at the end of the capture (first: 'spanning')");
        OPPROF_END(spanning_inner); /* the thread's first record in this window */
        { OPPROF_SCOPE("inside second"); }
        OPPROF_END(spanning); /* after one: the thread's buffers are this window's */
        CHECK_INT(opprof_session_step(session), 0);
        CHECK_INT(s.calls, 2);
        CHECK_STR(s.names, "inside second<- ");
        CHECK_STR(s.warnings, "");
    }
    opprof_session_free(session);
}

/* Memory events with and without their allocator's total, through the
 * inline path and the library's function, over several chunks (an event with
 * a total takes two slots, which may straddle two chunks): every event comes
 * back with its address, size and total; an unknown total is the running sum. */
enum { TOTALS = 200000 };
typedef struct totals_seen {
    size_t n, wrong;
    uint64_t dropped;
    int64_t first_wrong, last_total;
} totals_seen;
static int64_t totals_bytes(int i) { return 8 + i % 5; }
static int64_t totals_given(int i) { return i % 3 ? (int64_t)i * 10 : -1; }
static int check_totals(const opprof_capture *cap, void *user) {
    totals_seen *seen = user;
    const opprof_memory_event *m = opprof_capture_memory_events(cap, &seen->n);
    seen->dropped = opprof_capture_get_info(cap).dropped_events;
    int64_t sum = 0;
    seen->first_wrong = -1;
    for (size_t i = 0; i < seen->n; i++) {
        sum += totals_bytes((int)i);
        int64_t want = totals_given((int)i) >= 0 ? totals_given((int)i) : sum;
        bool ok = m[i].addr == i + 1 && m[i].bytes == totals_bytes((int)i) && m[i].total_allocated == want &&
                  (i == 0 || m[i].ts_ns >= m[i - 1].ts_ns);
        if (!ok && !seen->wrong++) seen->first_wrong = (int64_t)i;
        seen->last_total = m[i].total_allocated;
    }
    return 0;
}
static opprof_session *start_totals(totals_seen *seen, uint64_t max_events) {
    memset(seen, 0, sizeof *seen);
    return start_with(check_totals, seen, (opprof_schedule){0}, max_events);
}

TEST_CASE(memory_totals_exact_over_chunks) {
    totals_seen seen;
    opprof_session *session = start_totals(&seen, 0);
    for (int i = 0; i < TOTALS; i++) {
        void *addr = (void *)(intptr_t)(i + 1);
        if (i % 2)
            opprof_record_memory(addr, totals_bytes(i), totals_given(i));
        else
            OPPROF_MEMORY(addr, totals_bytes(i), totals_given(i));
    }
    opprof_session_free(session);
    CHECK_INT(seen.n, TOTALS);
    CHECK_INT(seen.wrong, 0);
    CHECK_INT(seen.first_wrong, -1);
    CHECK_INT(seen.dropped, 0);
}

/* At the event budget's edge, an event whose total finds no room is kept
 * without it (its total: the running sum) and the drop counted. Claims from
 * a budget of 4 come one slot at a time: event 0 takes one slot, event 1 two,
 * event 2 the last one and none for its total. */
TEST_CASE(memory_total_past_the_budget) {
    totals_seen seen;
    opprof_session *session = start_totals(&seen, 4);
    for (int i = 0; i < 3; i++) OPPROF_MEMORY((void *)(intptr_t)(i + 1), totals_bytes(i), totals_given(i));
    opprof_session_free(session);
    CHECK_INT(seen.n, 3);
    CHECK_INT(seen.dropped, 1);
    CHECK_INT(seen.wrong, 1);
    CHECK_INT(seen.first_wrong, 2);
    CHECK_INT(seen.last_total, totals_bytes(0) + totals_bytes(1) + totals_bytes(2));
}

TEST_CASE(memory_off) {
    saved s;
    opprof_session *session;
    /* Memory off: no memory events even if the runtime reports them. */
    memset(&s, 0, sizeof s);
    opprof_config cfg = opprof_config_default();
    cfg.on_trace_ready = on_ready;
    cfg.user_data = &s;
    CHECK_INT(opprof_session_start(&session, &cfg), 0);
    {
        OPPROF_SCOPE("m");
        OPPROF_MEMORY(&s, 8, -1);
    }
    opprof_session_free(session);
    CHECK_INT(s.memory, 0);
    CHECK_INT(s.events, 2); /* m and ProfilerStep#0 */
    CHECK_STR(s.names, "ProfilerStep#0<- m<ProfilerStep#0 ");
}

TEST_CASE(native_stacks) {
    /* with_native_stack: each range carries its native call stack, innermost
     * first, symbolized; this executable's frames name its module. */
    {
        static char native[4096];
        native[0] = '\0';
        opprof_config ncfg = opprof_config_default();
        ncfg.record_steps = false;
        ncfg.with_native_stack = true;
        ncfg.on_trace_ready = keep_native;
        ncfg.user_data = native;
        opprof_session *ns;
        CHECK_INT(opprof_session_start(&ns, &ncfg), 0);
        { OPPROF_SCOPE("with native stack"); }
        opprof_session_free(ns);
        CHECK_CONTAINS(native, "(test_record"); /* test_record or test_record_no_inline */
        CHECK_CONTAINS(native, "__libc_start");
        if (strstr(native, "opprof_range_begin")) fprintf(stderr, "native stack: %s\n", native);
        CHECK(strstr(native, "opprof_range_begin") == NULL); /* opprof's own frames are skipped */
    }
}

TEST_CASE(categories) {
    /* Categories: with a filter, only its categories' ranges and ranges
     * without one; the category reaches the trace and comes back. */
    for (int pass = 0; pass < 2; pass++) {
        opprof_config ccfg = opprof_config_default();
        ccfg.record_steps = false;
        if (pass == 0)
            ccfg.categories = "io,net";
        else
            setenv("OPPROF_CATEGORIES", "compute", 1); /* the environment's, when the config has none */
        opprof_session *cs;
        CHECK_INT(opprof_session_start(&cs, &ccfg), 0);
        for (int i = 0; i < 2; i++) { /* twice: the second asks each call site's cached answer */
            { OPPROF_SCOPE_IN("io", "read_%d", i); }
            { OPPROF_OP_SCOPE_IN("compute", "matmul"); }
            { OPPROF_SCOPE("plain"); }
        }
        CHECK_INT(opprof_session_stop(cs), 0);
        opprof_capture *cc = NULL;
        CHECK_INT(opprof_session_take_capture(cs, &cc), 0);
        char seen[256] = "";
        size_t cn = 0;
        const opprof_event *cev = cc ? opprof_capture_events(cc, &cn) : NULL;
        for (size_t i = 0; i < cn; i++) {
            const char *cat = opprof_capture_category(cc, &cev[i]);
            snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s[%s] ", opprof_capture_name(cc, cev[i].name),
                     cat ? cat : "-");
        }
        CHECK_STR(seen, pass == 0 ? "read_0[io] plain[-] read_1[io] plain[-] "
                                  : "matmul[compute] plain[-] matmul[compute] plain[-] ");
        if (pass == 0 && cc) { /* through a trace and back */
            char trace[] = "/tmp/opprof-categories-XXXXXX";
            int fd = mkstemp(trace);
            if (fd >= 0) close(fd);
            CHECK_INT(opprof_capture_chrome_write(cc, trace), 0);
            char *text = read_text(trace);
            CHECK_CONTAINS(text, "\"cat\":\"user_annotation,io\",\"name\":\"read_0\"");
            free(text);
            opprof_capture *back = NULL;
            CHECK_INT(opprof_capture_read(trace, NULL, &back, NULL), 0);
            const opprof_event *bev = back ? opprof_capture_events(back, &cn) : NULL;
            CHECK(bev && cn == 4 && opprof_capture_category(back, &bev[0]) &&
                  !strcmp(opprof_capture_category(back, &bev[0]), "io") && bev[0].kind == OPPROF_KIND_USER_ANNOTATION);
            opprof_capture_free(back);
            unlink(trace);
        }
        opprof_capture_free(cc);
        opprof_session_free(cs);
    }
    unsetenv("OPPROF_CATEGORIES");
    CHECK(opprof_category_enabled("anything")); /* the next session's filter: none yet */
}

TEST_CASE(dtypes_in_shapes) {
    /* dtypes in shapes: the common names, short ones and PyTorch's spellings. */
    {
        static char dtypes[256];
        dtypes[0] = '\0';
        opprof_config dcfg = opprof_config_default();
        dcfg.record_steps = false;
        dcfg.record_shapes = true;
        opprof_session *ds;
        CHECK_INT(opprof_session_start(&ds, &dcfg), 0);
        static const int64_t d1[] = {4};
        const opprof_input in[8] = {{1, d1, "bf16"},      {1, d1, "int8"},     {1, d1, "uint8"}, {1, d1, "f64"},
                                    {1, d1, "c10::Half"}, {1, d1, "long int"}, {1, d1, "bool"},  {1, d1, "int32"}};
        {
            OPPROF_OP_SCOPE("typed");
            opprof_set_inputs(8, in);
        }
        CHECK_INT(opprof_session_stop(ds), 0);
        opprof_capture *dc = NULL;
        CHECK_INT(opprof_session_take_capture(ds, &dc), 0);
        size_t dn = 0;
        const opprof_event *dev = dc ? opprof_capture_events(dc, &dn) : NULL;
        const opprof_site *dsite = dn ? opprof_capture_site(dc, dev[0].site) : NULL;
        const opprof_shapes *dsh = dsite ? opprof_capture_shapes(dc, dsite->shapes) : NULL;
        for (int i = 0; dsh && i < dsh->n_inputs; i++)
            snprintf(dtypes + strlen(dtypes), sizeof dtypes - strlen(dtypes), "%s ", dsh->dtype[i]);
        CHECK_STR(dtypes, "bfloat16 int8 uint8 double half long bool int ");
        opprof_capture_free(dc);
        opprof_session_free(ds);
    }
}

TEST_CASE(bad_configurations) {
    opprof_session *session;
    opprof_config cfg = opprof_config_default();
    /* Bad configurations. */
    cfg.activities = 4;
    CHECK_INT(opprof_session_start(&session, &cfg), OPPROF_EACTIVITY);
    CHECK_INT(opprof_session_start(NULL, &cfg), OPPROF_EINVAL);
    CHECK_INT(opprof_session_step(NULL), OPPROF_EINVAL);
    CHECK_STR(opprof_strerror(-ENOSPC), "no space left on device");
    CHECK_STR(opprof_strerror(-ENOTDIR), "not a directory");
    CHECK_STR(opprof_strerror(-EXDEV), "Invalid cross-device link"); /* not in the table: the system's */
    CHECK_STR(opprof_err_name(0), "OPPROF_OK");
    CHECK_STR(opprof_err_name(OPPROF_EROFS), "OPPROF_EROFS");
    CHECK_STR(opprof_err_name(-EXDEV), "EXDEV");
    CHECK_STR(opprof_err_name(-5999), "OPPROF_UNKNOWN");
    CHECK_STR(opprof_err_name(7), "OPPROF_UNKNOWN");
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_record"); }
