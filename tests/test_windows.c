/* test_windows.c - windows open and close while threads record: the close
 * handshake under load. Four threads record nested ranges and memory events
 * without pause while the main thread steps a schedule through 40 windows;
 * each thread keeps one chunk a stream between windows
 * (OPPROF_RETAIN_CHUNKS=1), so every snapshot also frees chunks while it
 * converts them. Every capture must be well formed: ranges nested on their
 * own thread, each memory event owned by an operator of its thread that
 * contains it, nothing dropped. Built and run under ThreadSanitizer and
 * AddressSanitizer by .ci/run as well. */
#include "check.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

enum { THREADS = 4, WINDOWS = 40 };

static int stop; /* atomic */

static void *worker(void *arg) {
    char *block = arg;
    long i = 0;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        {
            OPPROF_SCOPE("outer");
            {
                OPPROF_OP_SCOPE("inner");
                OPPROF_MEMORY(block + (i & 63), 64, -1);
            }
            OPPROF_MEMORY(block + (i & 63), -64, -1);
            opprof_range explicit_range = OPPROF_BEGIN("explicit_%ld", i & 3);
            OPPROF_END(explicit_range);
        }
        i++;
    }
    return NULL;
}

typedef struct totals {
    int captures, empty_captures;
    size_t events, memory_events, bad_nesting, bad_owner, unowned, past_end;
    uint64_t dropped;
} totals;

static int check_capture(const opprof_capture *c, void *user) {
    totals *t = user;
    size_t n, m;
    const opprof_event *ev = opprof_capture_events(c, &n);
    const opprof_memory_event *mem = opprof_capture_memory_events(c, &m);
    t->captures++;
    if (n == 0) t->empty_captures++;
    t->events += n;
    t->memory_events += m;
    t->dropped += opprof_capture_get_info(c).dropped_events;
    int64_t duration = opprof_capture_get_info(c).duration_ns;
    for (size_t i = 0; i < n; i++)
        if (ev[i].start_ns + ev[i].duration_ns > duration) t->past_end++;
    for (size_t j = 0; j < m; j++)
        if (mem[j].ts_ns > duration) t->past_end++;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].parent < 0) continue;
        const opprof_event *p = &ev[ev[i].parent];
        if (p->thread != ev[i].thread || p->start_ns > ev[i].start_ns ||
            p->start_ns + p->duration_ns < ev[i].start_ns + ev[i].duration_ns)
            t->bad_nesting++;
    }
    for (size_t j = 0; j < m; j++) {
        if (mem[j].owner < 0) {
            t->unowned++; /* an event of a range begun before the window opened */
            continue;
        }
        const opprof_event *o = &ev[mem[j].owner];
        if (o->thread != mem[j].thread || o->start_ns > mem[j].ts_ns || o->start_ns + o->duration_ns < mem[j].ts_ns)
            t->bad_owner++;
    }
    return 0;
}

TEST_CASE(windows_back_to_back_while_threads_record) {
    setenv("OPPROF_RETAIN_CHUNKS", "1", 1);
    totals t = {0};
    opprof_config cfg = opprof_config_default();
    cfg.schedule = (opprof_schedule){.wait = 1, .active = 1, .repeat = WINDOWS};
    cfg.profile_memory = true;
    cfg.on_trace_ready = check_capture;
    cfg.user_data = &t;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);

    static char blocks[THREADS][64];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) CHECK_INT(pthread_create(&th[i], NULL, worker, blocks[i]), 0);
    for (int step = 0; step < 2 * WINDOWS; step++) {
        nanosleep(&(struct timespec){0, 3000000}, NULL); /* 3 ms a step: chunks fill up */
        CHECK_INT(opprof_session_step(s), 0);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_session_free(s);

    CHECK_INT(t.captures, WINDOWS);
    CHECK_INT(t.empty_captures, 0);
    CHECK(t.events > (size_t)WINDOWS * THREADS);
    CHECK(t.memory_events > 0);
    CHECK_INT(t.bad_nesting, 0);
    CHECK_INT(t.bad_owner, 0);
    CHECK_INT(t.past_end, 0); /* the capture's end follows every timestamp in it */
    CHECK_INT(t.dropped, 0);
    fprintf(stderr, "test_windows: %d captures, %zu events, %zu memory events (%zu before their window's ranges)\n",
            t.captures, t.events, t.memory_events, t.unowned);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_windows"); }
