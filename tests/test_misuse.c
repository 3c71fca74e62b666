/* test_misuse.c - bad use of the profiler is reported, never fatal: each
 * case leaves a warning in the capture (table footer, trace metadata,
 * summary.json), and the trace it writes passes `opprof check`. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <pthread.h>
#include <stdlib.h>

static char dir[256];
static int captures;

/* Write the capture's trace and summary; check them. */
static int save(const opprof_capture *c, void *user) {
    const char *expect = user;
    char trace[600], summary[600], cmd[2000], *out = NULL;
    snprintf(trace, sizeof trace, "%s/trace%d.json", dir, captures);
    snprintf(summary, sizeof summary, "%s/summary%d.json", dir, captures);
    captures++;
    CHECK_INT(opprof_capture_chrome_write(c, trace), 0);
    opprof_summary *s;
    opprof_averages *avg;
    opprof_summary_new(&s);
    opprof_capture_averages(c, &avg);
    opprof_summary_add_capture(s, c, avg);
    CHECK_INT(opprof_summary_json_write(s, summary), 0);
    char *table = NULL;
    opprof_averages_table_to_string(avg, &(opprof_table_options){.sort = OPPROF_SORT_NONE, .row_limit = -1}, &table);
    CHECK_CONTAINS(table, "Warnings: ");
    opprof_free(table);
    opprof_averages_free(avg);
    opprof_summary_free(s);
    char *text = read_text(summary);
    CHECK_CONTAINS(text, expect);
    free(text);
    text = read_text(trace);
    CHECK_CONTAINS(text, expect);
    free(text);
    snprintf(cmd, sizeof cmd, "'%s/opprof' check '%s'", bin_dir(), trace);
    CHECK_INT(run_command(cmd, &out), 0); /* valid JSON, proper nesting */
    free(out);
    return 0;
}

static opprof_session *start(const char *expect) {
    opprof_config cfg = opprof_config_default();
    cfg.on_trace_ready = save;
    cfg.user_data = (void *)expect;
    cfg.record_steps = false; /* ProfilerStep#N would enclose, and close, what is left open */
    opprof_session *s = NULL;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    return s;
}

static opprof_range shared;
static void *end_elsewhere(void *arg) {
    (void)arg;
    OPPROF_END(shared);
    return NULL;
}

static int fail_first(const opprof_capture *c, void *user) {
    static int calls;
    (void)user;
    if (calls++ == 0) return -1;
    return save(c, "1 earlier on_trace_ready call(s) of this session failed");
}

/* Each case its own directory (cases share nothing); removed at exit. */
static void cleanup(void) {
    if (dir[0]) remove_tree(dir);
}
static void need_dir(void) {
    if (dir[0]) return;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    atexit(cleanup);
}

/* One misuse in a session of its own: exactly one capture, carrying `expect`. */
#define MISUSE_CASE(name, expect, body)    \
    TEST_CASE(name) {                      \
        need_dir();                        \
        int before = captures;             \
        opprof_session *s = start(expect); \
        body;                              \
        opprof_session_free(s);            \
        CHECK_INT(captures - before, 1);   \
    }

/* A range ended that was never begun (or twice). */
MISUSE_CASE(unmatched_end, "range end(s) without a matching open range", {
    opprof_range r = OPPROF_BEGIN("once");
    OPPROF_END(r);
    OPPROF_END(r);
    CHECK_INT(opprof_session_stop(s), 0);
})

/* A range ended on another thread. */
MISUSE_CASE(end_on_another_thread, "called on another thread than their begin", {
    shared = OPPROF_BEGIN("crossing");
    pthread_t th;
    pthread_create(&th, NULL, end_elsewhere, NULL);
    pthread_join(th, NULL);
})

/* A range left open at stop: cut at the capture's end. */
MISUSE_CASE(left_open, "still open at the end of the capture (first: 'left open')",
            { (void)OPPROF_BEGIN("left open"); })

/* An enclosing range ended first: the inner one is closed with it. */
MISUSE_CASE(enclosing_ended_first, "closed early because an enclosing range ended first", {
    opprof_range outer = OPPROF_BEGIN("outer");
    (void)OPPROF_BEGIN("inner");
    OPPROF_END(outer);
})

/* A callback that fails: step() says so, the next capture carries it. */
TEST_CASE(failing_callback) {
    need_dir();
    int before = captures;
    opprof_session *s;
    opprof_config cfg = opprof_config_default();
    cfg.schedule = (opprof_schedule){.active = 1, .repeat = 2};
    cfg.on_trace_ready = fail_first;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    CHECK_INT(opprof_session_step(s), OPPROF_ECALLBACK); /* the first capture's callback fails */
    CHECK_INT(opprof_session_step(s), 0);                /* the second one reports it */
    opprof_session_free(s);
    CHECK_INT(captures - before, 1);
}

/* A session started twice, and a step outside a session: errors, no harm. */
TEST_CASE(session_misuse) {
    opprof_session *s;
    opprof_config cfg = opprof_config_default();
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    opprof_session *again = NULL;
    CHECK_INT(opprof_session_start(&again, &cfg), OPPROF_EACTIVE);
    CHECK(again == NULL);
    CHECK_INT(opprof_session_stop(s), 0);
    CHECK_INT(opprof_session_step(s), OPPROF_ESTOPPED);
    CHECK_INT(opprof_session_step(NULL), OPPROF_EINVAL);
    CHECK_INT(opprof_session_stop(s), OPPROF_ESTOPPED);
    opprof_session_free(s);
    CHECK_STR(opprof_strerror(OPPROF_EACTIVE), "a profiler session is already active in this process");
}

/* A bad OPPROF_RETAIN_CHUNKS is said, and the default kept: the run works. */
TEST_CASE(bad_retain_chunks) {
    need_dir();
    static const char *const bad_values[] = {"12x", "0", "-3", "99999999", ""};
    for (size_t i = 0; i < sizeof bad_values / sizeof *bad_values; i++) {
        char cmd[2000], expect[200], *out = NULL;
        snprintf(cmd, sizeof cmd, "OPPROF_RETAIN_CHUNKS='%s' '%s/profile_cpu' --quiet '%s/retain%zu'", bad_values[i],
                 bin_dir(), dir, i);
        CHECK_INT(run_command(cmd, &out), 0);
        snprintf(expect, sizeof expect,
                 "opprof: OPPROF_RETAIN_CHUNKS='%s' ignored: not a whole number from 1 to 1048576; using 32",
                 bad_values[i]);
        CHECK_CONTAINS(out, expect);
        free(out);
    }
}

/* OPPROF_CLOCK the same way: said, then the default. */
TEST_CASE(bad_clock) {
    need_dir();
    char cmd[2000], *out = NULL;
    snprintf(cmd, sizeof cmd, "OPPROF_CLOCK=bogus '%s/profile_cpu' --quiet '%s/clock'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "opprof: OPPROF_CLOCK='bogus' ignored: not one of tsc, monotonic; using tsc");
    free(out);
    snprintf(cmd, sizeof cmd, "OPPROF_CLOCK=monotonic '%s/profile_cpu' --quiet '%s/clock2'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK(strstr(out, "OPPROF_CLOCK") == NULL);
    free(out);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_misuse"); }
