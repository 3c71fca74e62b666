/* test_harm.c - `opprof record` leaves a program as it would be alone (issue
 * 50): its output, its files, its signals and its exit status. Each case runs
 * harm_target (tests/harm_target.c) plain and under record, and compares. A
 * hang is a failure, not a stuck suite: every recorded run is under
 * `timeout 120` (exit 124) and a CPU-time limit that a spinning child inherits. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>

static char dir[256];

static const char *target(void) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/../tests/harm_target", bin_dir());
    return path;
}

/* The program's stdout under `opprof record OPTIONS -o DIR/NAME`, its status in *rc. */
static char *recorded(int *rc, const char *options, const char *name, const char *args) {
    char *out = NULL;
    *rc =
        run_commandf(&out, "ulimit -t 60; timeout -k 10 120 '%s/opprof' record %s -o '%s/%s' -- '%s' %s 2>'%s/%s.err'",
                     bin_dir(), options, dir, name, target(), args, dir, name);
    return out;
}

static char *plain(const char *args) {
    char *out = NULL;
    CHECK_INT(run_commandf(&out, "'%s' %s 2>/dev/null", target(), args), 0);
    return out;
}

static char *err_of(const char *name) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s.err", dir, name);
    return read_text(path);
}

/* The ProfilerStep#N events of DIR/NAME's last trace. */
static int64_t steps_in(const char *name) {
    char *found = NULL, path[1200];
    CHECK_INT(run_commandf(&found, "ls '%s/%s' | grep '^trace-step-[0-9]*\\.json$'", dir, name), 0);
    snprintf(path, sizeof path, "%s/%s/%.*s", dir, name, found ? (int)strcspn(found, "\n") : 0, found ? found : "");
    free(found);
    opprof_capture *c = NULL;
    if (opprof_capture_read(path, NULL, &c, NULL) != 0) return -1;
    size_t n = 0, steps = 0;
    const opprof_event *ev = opprof_capture_events(c, &n);
    for (size_t i = 0; i < n; i++) steps += strncmp(opprof_capture_name(c, ev[i].name), "ProfilerStep#", 13) == 0;
    opprof_capture_free(c);
    return (int64_t)steps;
}

/* A program built -fno-pie that takes &step_work: dlsym gives the program's
 * canonical PLT entry, whose slot is the one redirected. Each call is a step
 * and step_work runs (it looped through the trampoline forever). */
TEST_CASE(step_of_a_function_whose_address_is_taken) {
    int rc = 0;
    char *want = plain("address 10"), *got = recorded(&rc, "--step step_work", "address", "address 10");
    CHECK_INT(rc, 0);
    CHECK_STR(got, want);
    CHECK_INT(steps_in("address"), 10 + 1);
    free(want);
    free(got);
}

/* A signal handler that calls FUNCTION while a step is being made on its
 * thread: the call runs, without a step (it deadlocked on the session's lock). */
TEST_CASE(step_reentered_from_a_signal_handler) {
    int rc = 0;
    char *want = plain("alarm 3000"), *got = recorded(&rc, "--step step_work", "alarm", "alarm 3000");
    CHECK_INT(rc, 0);
    CHECK_STR(got, want);
    free(want);
    free(got);
}

/* FUNCTION is one that making a step calls itself: the inner calls are no steps
 * (pthread_mutex_lock overflowed the stack, pthread_mutex_unlock hung). */
TEST_CASE(step_of_a_function_that_opprof_calls) {
    const char *functions[] = {"pthread_mutex_lock", "pthread_mutex_unlock"};
    for (int i = 0; i < 2; i++) {
        int rc = 0;
        char options[100];
        snprintf(options, sizeof options, "--step %s", functions[i]);
        char *got = recorded(&rc, options, functions[i], "mutex 1000");
        CHECK_INT(rc, 0);
        CHECK_STR(got, "mutex: 1000\n");
        free(got);
    }
}

/* A daemon blocks SIGHUP, SIGUSR1 and SIGUSR2 and takes them with sigwait:
 * opprof's threads, started before main, must not take them (SIGHUP killed the
 * program, exit 129). With and without the sampler's thread. */
TEST_CASE(signals_a_program_waits_for) {
    const char *options[] = {"", "--sample"};
    for (int i = 0; i < 2; i++) {
        int rc = 0;
        char name[32];
        snprintf(name, sizeof name, "sigwait-%d", i);
        char *got = recorded(&rc, options[i], name, "sigwait");
        CHECK_INT(rc, 0);
        CHECK_CONTAINS(got, "took Hangup");
        CHECK_CONTAINS(got, "took User defined signal 1");
        CHECK_CONTAINS(got, "took User defined signal 2");
        free(got);
    }
}

/* A one-thread program's SIGALRM handler runs on that thread, never on one of
 * opprof's, and never overlaps itself. */
TEST_CASE(handler_runs_on_the_program_thread) {
    int rc = 0;
    char *got = recorded(&rc, "--sample", "handler", "handler 300");
    CHECK_INT(rc, 0);
    CHECK_CONTAINS(got, "handler: none on other threads, 0 overlapping");
    free(got);
}

/* A program that closes every descriptor and opens files in their place: the
 * sampler must not close them at exit (the second file was left empty). */
TEST_CASE(files_opened_in_place_of_closed_descriptors) {
    char args[400], path[600];
    snprintf(args, sizeof args, "files '%s'", dir);
    int rc = 0;
    char *got = recorded(&rc, "--sample", "files", args);
    CHECK_INT(rc, 0);
    CHECK_STR(got, "files: written\n");
    free(got);
    const char *names[] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *text = read_text(path);
        CHECK(text != NULL);
        size_t lines = 0;
        for (const char *p = text; p && *p; p++) lines += *p == '\n';
        CHECK_INT(lines, 1000);
        free(text);
    }
    char *err = err_of("files");
    CHECK(err != NULL);
    free(err);
}

/* Children forked while 4 threads allocate, each calling FUNCTION, under the
 * flight recorder with --memory: a child records nothing (13 of 15 hung,
 * waiting for a parent's thread to leave its record). */
TEST_CASE(forked_children_record_nothing) {
    int rc = 0;
    char *out = NULL;
    rc = run_commandf(&out,
                      "ulimit -t 60; OPPROF_FLIGHT=20 timeout -k 10 120 '%s/opprof' record --memory --step "
                      "step_work -o '%s/fork' -- '%s' fork 15 2>'%s/fork.err'",
                      bin_dir(), dir, target(), dir);
    CHECK_INT(rc, 0);
    CHECK_STR(out, "fork: 15 of 15 children exited 0\n");
    free(out);
}

/* A wrapper that replaces itself with the program (env, taskset, nice, a
 * shell's exec) hands it the profile: the program's steps are in DIR (the
 * capture was lost, blamed on _exit). */
TEST_CASE(exec_wrappers_keep_the_capture) {
    const char *wrappers[] = {"env X=1", "taskset -c 0", "nice -n 1", "sh -c 'exec \"$0\" \"$@\"'"};
    char *want = plain("address 5");
    for (int i = 0; i < 4; i++) {
        char name[32], *out = NULL;
        snprintf(name, sizeof name, "wrapped-%d", i);
        CHECK_INT(run_commandf(&out,
                               "timeout 120 '%s/opprof' record --step step_work -o '%s/%s' -- %s '%s' address 5 "
                               "2>'%s/%s.err'",
                               bin_dir(), dir, name, wrappers[i], target(), dir, name),
                  0);
        CHECK_STR(out, want);
        CHECK_INT(steps_in(name), 5 + 1);
        free(out);
    }
    free(want);
}

/* A program that the profiled program starts while another of its level
 * holds the profile (each level's programs take it one after another: the
 * one of most CPU time keeps it) runs without opprof: no preload, no
 * OPPROF_RECORD_ variable, none of record's notes. Here timeout holds it
 * (until the file "free" is there) while the shell runs env; the shell
 * waits by its builtins alone, which run no program. */
TEST_CASE(children_run_without_opprof) {
    char *out = NULL;
    const char *shell = "timeout 60 sh -c \"touch \\\"$1/held\\\"; while [ ! -e \\\"$1/free\\\" ]; do :; done\" "
                        "sh \"$1\" & while [ ! -e \"$1/held\" ]; do :; done; env; touch \"$1/free\"; wait; "
                        "exec \"$0\" mutex 3";
    CHECK_INT(run_commandf(&out,
                           "timeout 120 '%s/opprof' record --memory -o '%s/kids' -- sh -c '%s' '%s' '%s' "
                           "2>'%s/kids.err'",
                           bin_dir(), dir, shell, target(), dir, dir),
              0);
    CHECK_CONTAINS(out, "mutex: 3");
    CHECK(out && strstr(out, "PATH=") && !strstr(out, "OPPROF_RECORD_") && !strstr(out, "libopprof_record"));
    free(out);
    /* DIR is harm_target's own (it recorded): timeout's capture stays beside it, and the one of
     * timeout's `touch` (two levels down), moved into timeout's, was said to be DIR */
    char path[4200];
    snprintf(path, sizeof path, "%s/kids.err", dir);
    CHECK_CONTAINS(out = read_text(path), "ran /usr/bin/timeout in a child process, whose capture is '");
    CHECK(out && !strstr(out, "the capture in '"));
    free(out);
}

/* Each lost capture says its own cause: a signal, a shell's _exit; a flight
 * recorder that saved nothing, or a schedule that recorded nothing, says so
 * itself, and record adds nothing wrong (it blamed _exit or static linking). */
TEST_CASE(lost_captures_name_their_cause) {
    char *out = NULL;
    /* record's own child (the suite runs other harm_targets beside it), within 60 s */
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' record -o '%s/killed' -- sh -c 'exec \"$0\" alarm 1000000' '%s' 2>&1 & "
                           "rec=$!; for i in $(seq 600); do pkill -KILL -P $rec -x harm_target && break; sleep 0.1; "
                           "done; wait $rec",
                           bin_dir(), dir, target()),
              128 + 9);
    CHECK_CONTAINS(out, "was killed by SIGKILL: its exit handlers did not run");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' record -o '%s/shell' -- sh -c 'true' 2>&1", bin_dir(), dir), 0);
    CHECK_CONTAINS(out, "it ended by _exit (a shell does");
    free(out);
    CHECK_INT(run_commandf(&out, "OPPROF_FLIGHT=5 '%s/opprof' record -o '%s/calm' -- '%s' mutex 3 2>&1", bin_dir(), dir,
                           target()),
              0);
    CHECK_CONTAINS(out, "no step was saved (no trigger)");
    CHECK(out && !strstr(out, "exit handlers") && !strstr(out, "wrote no capture"));
    free(out);
    CHECK_INT(run_commandf(&out, "OPPROF_SCHEDULE=100,1,1,1 '%s/opprof' record -o '%s/quiet' -- '%s' mutex 3 2>&1",
                           bin_dir(), dir, target()),
              0);
    CHECK_CONTAINS(out, "(nothing was recorded)");
    CHECK_CONTAINS(out, "ended normally and wrote no capture");
    CHECK(out && !strstr(out, "_exit"));
    free(out);
}

/* Two functions whose names differ past byte 200 are two rows, named whole. */
TEST_CASE(long_function_names_kept_whole) {
    char *out = NULL, path[700];
    CHECK_INT(run_commandf(&out, "'%s/opprof' record --functions -o '%s/long' -- '%s/../tests/long_names' 2>/dev/null",
                           bin_dir(), dir, bin_dir()),
              0);
    CHECK_STR(out, "long_names: 26\n");
    free(out);
    snprintf(path, sizeof path, "%s/long/trace-step-0.json", dir);
    CHECK_INT(run_commandf(&out, "'%s/opprof' report --json '%s'", bin_dir(), path), 0);
    char stem[300] = "";
    for (int i = 0; i < 8; i++) strcat(stem, "template_heavy_function_name_");
    char one[400], two[400];
    snprintf(one, sizeof one, "\"name\": \"%sone\"", stem);
    snprintf(two, sizeof two, "\"name\": \"%stwo\"", stem);
    CHECK_CONTAINS(out, one);
    CHECK_CONTAINS(out, two);
    free(out);
}

/* --ggml on a ggml that lacks functions the adapter calls, or numbers its ops
 * otherwise: not attached, said, and the program runs (it crashed before main). */
TEST_CASE(ggml_not_trusted_blindly) {
    const char *kinds[] = {"partial", "other"};
    const char *said[] = {"no ggml with opprof's CPU hook", "numbers its ops otherwise than the ggml 0.22"};
    for (int i = 0; i < 2; i++) {
        char *out = NULL;
        CHECK_INT(run_commandf(&out,
                               "timeout 120 '%s/opprof' record --ggml -o '%s/fake-%s' -- "
                               "'%s/../tests/fake_ggml_%s_target' 2>&1",
                               bin_dir(), dir, kinds[i], bin_dir(), kinds[i]),
                  0);
        CHECK_CONTAINS(out, "fake ggml program: ran");
        CHECK_CONTAINS(out, said[i]);
        free(out);
    }
}

int main(int argc, char **argv) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    int rc = check_main(argc, argv, "test_harm");
    remove_tree(dir);
    return rc;
}
