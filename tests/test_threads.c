/* test_threads.c - 8 threads recording 1 M ranges each at once: every event
 * in the capture, each range nested on its own thread's track. Built and run
 * under ThreadSanitizer by .ci/run as well. */
#include "check.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <pthread.h>
#include <stdlib.h>

enum { THREADS = 8, RANGES = 1000000 };

static pthread_barrier_t start_line;

static void *worker(void *arg) {
    (void)arg;
    pthread_barrier_wait(&start_line);
    for (int i = 0; i < RANGES / 2; i++) {
        {
            OPPROF_SCOPE("outer");
            { OPPROF_OP_SCOPE("inner"); }
        }
    }
    return NULL;
}

typedef struct result {
    size_t events, threads, per_thread[THREADS + 1];
    size_t bad_parents, wrong_nesting;
    uint64_t dropped;
} result;

static int check_capture(const opprof_capture *c, void *user) {
    result *r = user;
    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    opprof_capture_threads(c, &r->threads);
    r->events = n;
    r->dropped = opprof_capture_get_info(c).dropped_events;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].thread <= THREADS) r->per_thread[ev[i].thread]++;
        const char *name = opprof_capture_name(c, ev[i].name);
        if (strcmp(name, "inner") == 0) {
            /* an inner's parent: an outer of the same thread that contains it */
            if (ev[i].parent < 0) {
                r->bad_parents++;
                continue;
            }
            const opprof_event *p = &ev[ev[i].parent];
            if (p->thread != ev[i].thread || strcmp(opprof_capture_name(c, p->name), "outer") != 0) r->bad_parents++;
            if (p->start_ns > ev[i].start_ns || p->start_ns + p->duration_ns < ev[i].start_ns + ev[i].duration_ns)
                r->wrong_nesting++;
        } else if (ev[i].parent >= 0) {
            r->bad_parents++; /* outers are top level */
        }
    }
    return 0;
}

TEST_CASE(threads_record_at_once_without_loss) {
    result r = {0};
    opprof_config cfg = opprof_config_default();
    cfg.on_trace_ready = check_capture;
    cfg.user_data = &r;
    cfg.record_steps = false;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    pthread_t th[THREADS];
    pthread_barrier_init(&start_line, NULL, THREADS);
    for (int i = 0; i < THREADS; i++) CHECK_INT(pthread_create(&th[i], NULL, worker, NULL), 0);
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_session_free(s);
    pthread_barrier_destroy(&start_line);
    CHECK_INT(r.events, (size_t)THREADS * RANGES);
    CHECK_INT(r.dropped, 0);
    CHECK_INT(r.bad_parents, 0);
    CHECK_INT(r.wrong_nesting, 0);
    size_t with_events = 0;
    for (size_t t = 0; t < r.threads; t++) {
        if (r.per_thread[t] == 0) continue;
        with_events++;
        CHECK_INT(r.per_thread[t], RANGES);
    }
    CHECK_INT(with_events, THREADS);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_threads"); }
