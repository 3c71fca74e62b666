/* test_handoff.c - no capture is lost: a session without on_trace_ready keeps
 * its captures for opprof_session_take_capture, and the directory handler
 * writes each one to a file of its own. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <sys/stat.h>
#include <unistd.h>

static void record_steps(opprof_session *s, int steps) {
    for (int i = 0; i < steps; i++) {
        { OPPROF_SCOPE("work_%d", i); }
        opprof_session_step(s);
    }
}

static size_t event_count(const opprof_capture *c) {
    size_t n = 0;
    opprof_capture_events(c, &n);
    return n;
}

TEST_CASE(kept_without_callback) {
    opprof_config cfg = opprof_config_default();
    cfg.schedule = (opprof_schedule){.wait = 1, .active = 1, .repeat = 3};
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    opprof_capture *c = (opprof_capture *)&cfg; /* must become NULL */
    CHECK_INT(opprof_session_take_capture(s, &c), 0);
    CHECK(c == NULL);
    record_steps(s, 4); /* windows at steps 1 and 3 */
    CHECK_INT(opprof_session_capture_count(s), 2);
    CHECK_INT(opprof_session_take_capture(s, &c), 0);
    CHECK(c != NULL);
    if (c) {
        CHECK_INT(opprof_capture_get_info(c).step_num, 2); /* the step number when it ended */
        CHECK_INT(event_count(c), 2);                      /* ProfilerStep#1 and work_1 */
        opprof_capture_free(c);
    }
    record_steps(s, 2); /* window at step 5 */
    CHECK_INT(opprof_session_stop(s), 0);
    int64_t steps[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        CHECK_INT(opprof_session_take_capture(s, &c), 0);
        CHECK(c != NULL);
        if (c) steps[i] = opprof_capture_get_info(c).step_num;
        opprof_capture_free(c);
    }
    CHECK_INT(steps[0], 4);
    CHECK_INT(steps[1], 6);
    CHECK_INT(opprof_session_take_capture(s, &c), 0);
    CHECK(c == NULL);
    CHECK_INT(opprof_session_take_capture(NULL, &c), OPPROF_EINVAL);
    CHECK_INT(opprof_session_take_capture(s, NULL), OPPROF_EINVAL);
    opprof_session_free(s);

    /* Captures never taken are freed with the session (the sanitizer build
     * reports a leak otherwise). */
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    record_steps(s, 4);
    opprof_session_free(s);
}

static int count_files(const char *dir, const char *suffix) {
    char cmd[512], out[64];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c -- '%s$'", dir, suffix);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    int n = fgets(out, sizeof out, p) ? atoi(out) : -1;
    pclose(p);
    return n;
}

TEST_CASE(dir_handler) {
    char tmp[] = "/tmp/opprof-handoff-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    char dir[256];
    snprintf(dir, sizeof dir, "%s/traces", tmp);

    /* Plain: three captures, three names, each one a trace that reads back. */
    opprof_trace_dir out = {.dir = dir, .worker_name = "worker/0"};
    opprof_config cfg = opprof_config_default();
    cfg.schedule = (opprof_schedule){.active = 1, .repeat = 3};
    cfg.on_trace_ready = opprof_trace_dir_handler;
    cfg.user_data = &out;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    record_steps(s, 3);
    opprof_session_free(s);
    CHECK_INT(out.written, 3);
    CHECK_INT(count_files(dir, ".pt.trace.json"), 3);
    char expect[512];
    snprintf(expect, sizeof expect, "%s/worker_0.step-3.pt.trace.json", dir);
    CHECK_STR(out.last_path, expect);
    opprof_capture *back = NULL;
    CHECK_INT(opprof_capture_read(out.last_path, NULL, &back, NULL), 0);
    CHECK_INT(back ? event_count(back) : 0, 2);
    opprof_capture_free(back);

    /* The same names again: none is overwritten, ".1" is added. */
    out.written = 0;
    cfg.schedule.repeat = 1;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    record_steps(s, 1);
    opprof_session_free(s);
    CHECK_INT(out.written, 1);
    snprintf(expect, sizeof expect, "%s/worker_0.step-1.1.pt.trace.json", dir);
    CHECK_STR(out.last_path, expect);
    CHECK_INT(count_files(dir, ".pt.trace.json"), 4);

    /* gzip, default worker name HOST_PID: the reader takes it back. */
    opprof_trace_dir gz = {.dir = dir, .use_gzip = true};
    cfg.user_data = &gz;
    cfg.schedule.repeat = 2;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    record_steps(s, 2);
    opprof_session_free(s);
    CHECK_INT(gz.written, 2);
    CHECK_INT(count_files(dir, ".pt.trace.json.gz"), 2);
    char pid[64];
    snprintf(pid, sizeof pid, "_%lld.step-2.pt.trace.json.gz", (long long)getpid());
    CHECK_CONTAINS(gz.last_path, pid);
    back = NULL;
    CHECK_INT(opprof_capture_read(gz.last_path, NULL, &back, NULL), 0);
    CHECK_INT(back ? event_count(back) : 0, 2);
    opprof_capture_free(back);
    CHECK_INT(count_files(dir, "XXXXXX"), 0); /* no temporary left */

    /* A directory that cannot be made: the step says the callback failed,
     * the error is the system's. */
    char file_as_dir[512];
    snprintf(file_as_dir, sizeof file_as_dir, "%s/worker_0.step-1.pt.trace.json/sub", dir);
    opprof_trace_dir bad = {.dir = file_as_dir};
    cfg.user_data = &bad;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    { OPPROF_SCOPE("lost?"); }
    CHECK_INT(opprof_session_step(s), OPPROF_ECALLBACK);
    opprof_session_free(s);
    CHECK_INT(bad.written, 0);
    opprof_trace_dir none = {0};
    CHECK_INT(opprof_trace_dir_handler(back, &none), OPPROF_EINVAL);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    CHECK_INT(system(cmd), 0);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_handoff"); }
