/* test_record_steps.c - `opprof record --step FUNCTION` on programs that know
 * nothing of opprof: step_target calls step_work of libstep_lib.so once an
 * iteration (through its PLT); record_toy (-finstrument-functions) calls its
 * static `mid` directly. One step begins at each call; the flight recorder
 * saves the slowed call's step; the program's output is its own. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>

static char dir[256];

static const char *target(const char *name) {
    static char path[2][1024];
    static int k;
    k ^= 1;
    snprintf(path[k], sizeof path[k], "%s/../tests/%s", bin_dir(), name);
    return path[k];
}

/* The ProfilerStep#N events of the trace in `run` (trace-step-N.json, N its last step). */
static int64_t steps_in(const char *run) {
    char *found = NULL, path[1200];
    CHECK_INT(run_commandf(&found, "ls '%s' | grep '^trace-step-[0-9]*\\.json$'", run), 0);
    snprintf(path, sizeof path, "%s/%.*s", run, found ? (int)strcspn(found, "\n") : 0, found ? found : "");
    free(found);
    opprof_capture *c = NULL;
    int rc = opprof_capture_read(path, NULL, &c, NULL);
    CHECK_INT(rc, 0);
    size_t n = 0, steps = 0;
    const opprof_event *ev = opprof_capture_events(c, &n);
    for (size_t i = 0; i < n; i++) steps += strncmp(opprof_capture_name(c, ev[i].name), "ProfilerStep#", 13) == 0;
    opprof_capture_free(c);
    return (int64_t)steps;
}

TEST_CASE(a_step_per_call) {
    char *plain = NULL, *out = NULL, *err = NULL, path[600];
    CHECK_INT(run_commandf(&plain, "'%s' 12", target("step_target")), 0);
    /* the program's stdout is its own: the table goes to stderr */
    CHECK_INT(run_commandf(&out, "'%s/opprof' record --step step_work -o '%s/run' -- '%s' 12 2>'%s/err'", bin_dir(),
                           dir, target("step_target"), dir),
              0);
    CHECK_STR(out, plain);
    snprintf(path, sizeof path, "%s/err", dir);
    err = read_text(path);
    CHECK_CONTAINS(err, "Self CPU time total");
    snprintf(path, sizeof path, "%s/run", dir);
    CHECK_INT(steps_in(path), 12 + 1); /* step 0: the run up to the first call */
    free(plain);
    free(out);
    free(err);
}

/* A function called directly inside its own object, in a program built with
 * -finstrument-functions: with --functions, each entry (record_toy calls mid 6 times). */
TEST_CASE(instrumented_static_function) {
    char *out = NULL, path[600];
    CHECK_INT(run_commandf(&out, "'%s/opprof' record --functions --step mid -o '%s/toy' -- '%s'", bin_dir(), dir,
                           target("record_toy")),
              0);
    snprintf(path, sizeof path, "%s/toy", dir);
    CHECK_INT(steps_in(path), 6 + 1);
    free(out);
}

/* The same under a schedule: the entries step while no window records yet
 * (wait, warmup), so the window opens (it never stepped, and recorded nothing). */
TEST_CASE(instrumented_static_function_under_a_schedule) {
    char *out = NULL, path[600];
    CHECK_INT(run_commandf(&out,
                           "OPPROF_SCHEDULE=1,1,2,1 '%s/opprof' record --functions --step mid -o '%s/toy-sched' -- "
                           "'%s' 2>&1",
                           bin_dir(), dir, target("record_toy")),
              0);
    CHECK(out && !strstr(out, "wrote no capture"));
    free(out);
    snprintf(path, sizeof path, "%s/toy-sched", dir);
    CHECK_INT(steps_in(path), 2); /* the active steps 2 and 3 */
}

/* Under the flight recorder, the slowed call's step is saved, with the steps before it. */
TEST_CASE(flight_saves_the_slow_call) {
    char *out = NULL;
    CHECK_INT(run_commandf(&out,
                           "OPPROF_FLIGHT=100 OPPROF_FLIGHT_TRIGGER=40ms OPPROF_FLIGHT_COOLDOWN=0 '%s/opprof' record "
                           "--step step_work --outputs trace -o '%s/flight' -- '%s' 30 20 && ls '%s/flight'",
                           bin_dir(), dir, target("step_target"), dir),
              0);
    CHECK_CONTAINS(out,
                   "-step-20.json"); /* call 20 began step 20 (another step slowed by the machine may come first) */
    free(out);
}

TEST_CASE(said_when_no_call_is_seen) {
    char *out = NULL;
    CHECK_INT(run_commandf(&out, "'%s/opprof' record --step no_such_function -o '%s/none' -- '%s' 3", bin_dir(), dir,
                           target("step_target")),
              0);
    CHECK_CONTAINS(out, "--step no_such_function: no function of that name is exported");
    free(out);
    CHECK_INT(
        run_commandf(&out, "'%s/opprof' record --step '' -o '%s/bad' -- '%s' 3", bin_dir(), dir, target("step_target")),
        64);
    CHECK_CONTAINS(out, "--step takes a function's name");
    free(out);
}

int main(int argc, char **argv) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    int rc = check_main(argc, argv, "test_record_steps");
    remove_tree(dir);
    return rc;
}
