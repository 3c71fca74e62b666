/* test_flight_cli.c - the flight recorder from outside the library:
 * OPPROF_FLIGHT for an OPPROF_TRACE program (a trigger saved with its
 * predecessors, nothing saved leaves no directory, bad settings said and
 * nothing recorded), the dump signal and `opprof dump PID` on a running
 * program, and `profile_cpu --flight` on a run with slowed steps (slowed far
 * above the noise: a normal step would have to stall 1000 times its median to
 * be saved). */
#include "check.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

static char dir[256];

static char *listing(const char *sub) {
    char *out = NULL;
    run_commandf(&out, "ls -A '%s/%s' 2>&1", dir, sub);
    return out;
}

/* A program's own trigger: its step and the 2 before it, saved as it runs. */
TEST_CASE(program_trigger_saved) {
    char *out = NULL;
    CHECK_INT(run_commandf(&out,
                           "OPPROF_TRACE='%s/t' OPPROF_FLIGHT=10 OPPROF_FLIGHT_BEFORE=2 '%s/../tests/autostart_target' "
                           "trigger 30 12 2>&1",
                           dir, bin_dir()),
              0);
    CHECK_CONTAINS(out, "trigger 0");
    CHECK_CONTAINS(out, "opprof: flight recorder: 1 capture(s) written to");
    free(out);
    out = listing("t");
    CHECK_STR(out, "flight-001-step-12.flight.txt\nflight-001-step-12.html\nflight-001-step-12.json\n"
                   "flight-001-step-12.memory.txt\nflight-001-step-12.time.txt\n");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' report '%s/t/flight-001-step-12.json'", bin_dir(), dir), 0);
    CHECK_CONTAINS(out, "Flight recorder: asked by the program");
    CHECK_CONTAINS(out, "Holds steps 10 to 12");
    CHECK_CONTAINS(out, "Step 12 against the median of the other 2 step(s)");
    free(out);
    CHECK_INT(run_commandf(&out, "grep -c ProfilerStep '%s/t/flight-001-step-12.json'", dir), 0);
    CHECK_STR(out, "3\n");
    free(out);
}

/* DIR replaced by a symlink while the program runs: the next save is not
 * written through it (the saves followed the path), and says why. */
TEST_CASE(saves_never_follow_a_replaced_directory) {
    char *out = NULL;
    CHECK_INT(run_commandf(NULL, "mkdir -p '%s/elsewhere'", dir), 0);
    CHECK_INT(
        run_commandf(
            &out,
            "OPPROF_TRACE='%s/s' OPPROF_FLIGHT=10 OPPROF_FLIGHT_BEFORE=0 OPPROF_FLIGHT_COOLDOWN=0 '%s/../tests/autostart_target' "
            "swapdir '%s/s' '%s/elsewhere' 2>&1",
            dir, bin_dir(), dir, dir),
        0);
    CHECK_CONTAINS(out, "is no longer the directory opprof made (a symlink now): the capture is not written");
    free(out);
    out = listing("elsewhere");
    CHECK_STR(out, ""); /* nothing written through the symlink */
    free(out);
    out = listing("s.moved");
    CHECK_CONTAINS(out, "flight-001-step-1.json"); /* the first save, before the swap */
    free(out);
}

/* A file size limit (ulimit -f 12: 12 KiB) that the trace fits and the HTML
 * report does not: the program ends as it would alone (opprof's write raised
 * SIGXFSZ, which killed it: exit 153), the trace and tables are kept and the
 * missing report is said; at exit and in a flight save alike. */
TEST_CASE(file_size_limit_keeps_the_program_and_its_trace) {
    static const struct {
        const char *name, *env, *args, *trace;
    } runs[] = {
        {"fsize", "", "steps 20", "trace-step-20.json"},
        {"fsize-flight", "OPPROF_FLIGHT=10 OPPROF_FLIGHT_BEFORE=2", "trigger 30 12", "flight-001-step-12.json"},
    };
    for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
        char *out = NULL;
        CHECK_INT(run_commandf(&out,
                               "bash -c \"ulimit -f 12; OPPROF_TRACE='%s/%s' %s '%s/../tests/autostart_target' %s; "
                               "echo status \\$?\" 2>&1",
                               dir, runs[k].name, runs[k].env, bin_dir(), runs[k].args),
                  0);
        CHECK_CONTAINS(out, "status 0");
        CHECK_CONTAINS(out, ".html': File too large (its trace is whole and kept");
        CHECK_CONTAINS(out, "1 capture(s) written to");
        CHECK_CONTAINS(out, "(1 of them without all their files: said above)");
        free(out);
        out = listing(runs[k].name);
        CHECK_CONTAINS(out, runs[k].trace);
        CHECK(out && !strstr(out, ".html") && !strstr(out, ".tmp.")); /* no partial file */
        free(out);
        CHECK_INT(run_commandf(&out, "'%s/opprof' report '%s/%s/%s' 2>&1", bin_dir(), dir, runs[k].name, runs[k].trace),
                  0);
        CHECK_CONTAINS(out, "Self CPU time total");
        free(out);
    }
}

TEST_CASE(nothing_saved_no_directory) {
    char *out = NULL;
    CHECK_INT(run_commandf(&out, "OPPROF_TRACE='%s/none' OPPROF_FLIGHT=5 '%s/../tests/autostart_target' steps 20 2>&1",
                           dir, bin_dir()),
              0);
    CHECK_CONTAINS(out, "no step was saved (no trigger)");
    free(out);
    out = listing("none");
    CHECK_CONTAINS(out, "No such file or directory");
    free(out);
}

/* Each bad setting is named with what it accepts; the program runs as without opprof. */
TEST_CASE(bad_settings_said) {
    static const char *const cases[][2] = {
        {"OPPROF_FLIGHT=0", "OPPROF_FLIGHT='0': not N[,Ts][,MMiB]"},
        {"OPPROF_FLIGHT=10,3parsecs", "not N[,Ts][,MMiB]"},
        {"OPPROF_FLIGHT=10 OPPROF_FLIGHT_TRIGGER=0.5x", "K must be above 1"},
        {"OPPROF_FLIGHT=10 OPPROF_FLIGHT_TRIGGER=fast", "'fast': not a trigger"},
        {"OPPROF_FLIGHT=10 OPPROF_FLIGHT_TRIGGER='a>1ms,b>2ms'", "a second range bound"},
        {"OPPROF_FLIGHT=10 OPPROF_FLIGHT_COOLDOWN=soon", "OPPROF_FLIGHT_COOLDOWN='soon': not a duration"},
        {"OPPROF_FLIGHT=10 OPPROF_FLIGHT_SIGNAL=KILL", "OPPROF_FLIGHT_SIGNAL='KILL': not USR1, USR2"},
        {"OPPROF_FLIGHT=10 OPPROF_FLIGHT_BEFORE=-1", "OPPROF_FLIGHT_BEFORE='-1': not a whole number"},
        {"OPPROF_FLIGHT=3 OPPROF_FLIGHT_BEFORE=3", "before + 1 + after <= keep_steps"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out = NULL;
        CHECK_INT(run_commandf(&out, "OPPROF_TRACE='%s/bad' %s '%s/../tests/autostart_target' steps 3 2>&1", dir,
                               cases[i][0], bin_dir()),
                  0);
        CHECK_CONTAINS(out, cases[i][1]);
        CHECK_CONTAINS(out, "nothing is recorded");
        free(out);
        out = listing("bad");
        CHECK_CONTAINS(out, "No such file or directory");
        free(out);
    }
}

/* A running program: SIGUSR2 saves its ring, `opprof dump PID` too (and
 * prints the files); SIGTERM then ends it by the signal, as without opprof. */
TEST_CASE(signal_and_dump) {
    char *out = NULL;
    run_commandf(
        &out,
        "OPPROF_TRACE='%s/run' OPPROF_FLIGHT=6 '%s/../tests/autostart_target' flight 20 > '%s/ready' 2>'%s/err' & "
        "pid=$!; for i in $(seq 1000); do grep -q ready '%s/ready' 2>/dev/null && break; sleep 0.01; done; "
        "kill -USR2 $pid; for i in $(seq 1000); do ls '%s/run' 2>/dev/null | grep -q 'flight-001.*json' && break; "
        "sleep 0.01; done; '%s/opprof' dump $pid; echo \"dump $?\"; kill -TERM $pid; wait $pid; echo \"status $?\"",
        dir, bin_dir(), dir, dir, dir, dir, bin_dir());
    CHECK_CONTAINS(out, "/run/flight-002-step-");
    CHECK_CONTAINS(out, "dump 0");
    CHECK_CONTAINS(out, "status 143");
    free(out);
    out = listing("run");
    CHECK_CONTAINS(out, "flight-001-step-");
    CHECK_CONTAINS(out, "flight-002-step-");
    free(out);
    CHECK_INT(run_commandf(&out, "cat '%s/run'/flight-001-*.flight.txt", dir), 0);
    CHECK_CONTAINS(out, "Flight recorder: signal SIGUSR2 (dump)");
    CHECK_CONTAINS(out, "A dump: no step triggered it.");
    free(out);
    /* its 6 steps, whole */
    CHECK_INT(run_commandf(&out, "grep -c '\"ProfilerStep#' '%s/run'/flight-002-*.json", dir), 0);
    CHECK_STR(out, "6\n");
    free(out);
    CHECK_INT(run_commandf(&out, "cat '%s/err'", dir), 0);
    CHECK_CONTAINS(out, "opprof: flight recorder: 2 capture(s) written to");
    free(out);
}

TEST_CASE(dump_refuses) {
    char *out = NULL;
    /* a program without a flight recorder is not signalled: it goes on */
    CHECK_INT(
        run_commandf(&out,
                     "'%s/../tests/autostart_target' wait > '%s/ready2' & pid=$!; "
                     "for i in $(seq 500); do grep -q ready '%s/ready2' 2>/dev/null && break; sleep 0.01; done; "
                     "'%s/opprof' dump $pid 2>&1; echo \"dump $?\"; kill -0 $pid && echo alive; kill $pid; wait $pid",
                     bin_dir(), dir, dir, bin_dir()),
        143);
    CHECK_CONTAINS(out, "has no flight recorder");
    CHECK_CONTAINS(out, "dump 1");
    CHECK_CONTAINS(out, "alive");
    free(out);
    /* a flight recorder that did not start (a bad trigger, a bad OPPROF_FLIGHT, DIR existing):
     * the program does not catch the signal, which would end it (exit 140) */
    const char *unstarted[] = {"OPPROF_FLIGHT=6 OPPROF_FLIGHT_TRIGGER=bogus", "OPPROF_FLIGHT=abc",
                               "OPPROF_FLIGHT=6 OPPROF_TRACE_EXISTS=1"};
    for (int i = 0; i < 3; i++) {
        CHECK_INT(
            run_commandf(&out,
                         "mkdir -p '%s/exists'; OPPROF_TRACE='%s/%s' %s '%s/../tests/autostart_target' wait "
                         "> '%s/ready-%d' 2>/dev/null & pid=$!; "
                         "for i in $(seq 500); do grep -q ready '%s/ready-%d' 2>/dev/null && break; sleep 0.01; done; "
                         "'%s/opprof' dump $pid 2>&1; echo \"dump $?\"; kill -0 $pid && echo alive; kill $pid; "
                         "wait $pid",
                         dir, dir, i == 2 ? "exists" : "unstarted", unstarted[i], bin_dir(), dir, i, dir, i, bin_dir()),
            143);
        CHECK_CONTAINS(out, "its flight recorder did not start");
        CHECK_CONTAINS(out, "dump 1");
        CHECK_CONTAINS(out, "alive");
        free(out);
    }
    CHECK_INT(run_commandf(&out, "'%s/opprof' dump 2>&1", bin_dir()), 64);
    CHECK_CONTAINS(out, "dump takes one PID");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' dump x1 2>&1", bin_dir()), 64);
    CHECK_CONTAINS(out, "'x1' is not a process id");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' dump --timeout soon 1 2>&1", bin_dir()), 64);
    CHECK_CONTAINS(out, "--timeout takes a duration");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' dump 2147483646 2>&1", bin_dir()), 1);
    CHECK_CONTAINS(out, "no process 2147483646");
    free(out);
}

/* Exactly the slowed steps are saved, each with its reason and 4 predecessors. */
TEST_CASE(profile_cpu_slow_steps) {
    char *out = NULL;
    CHECK_INT(run_commandf(&out,
                           "'%s/profile_cpu' --quiet --batch 32 --steps 90 --flight 30 --flight-trigger 1000x "
                           "--flight-cooldown 0 --slow-steps 40,75 --slow-by 5000x '%s/pc' 2>&1",
                           bin_dir(), dir),
              0);
    free(out);
    out = listing("pc");
    CHECK_STR(out, "cpu-step-40.flight.txt\ncpu-step-40.json\ncpu-step-40.memory.txt\ncpu-step-40.time.txt\n"
                   "cpu-step-75.flight.txt\ncpu-step-75.json\ncpu-step-75.memory.txt\ncpu-step-75.time.txt\n"
                   "summary.json\n");
    free(out);
    for (int k = 0; k < 2; k++) {
        int step = k ? 75 : 40;
        CHECK_INT(run_commandf(&out, "cat '%s/pc/cpu-step-%d.flight.txt'", dir, step), 0);
        char want[128];
        snprintf(want, sizeof want, "Flight recorder: step %d took ", step);
        CHECK_CONTAINS(out, want);
        snprintf(want, sizeof want, "Holds steps %d to %d", step - 4, step);
        CHECK_CONTAINS(out, want);
        CHECK_CONTAINS(out, "aten::addmm"); /* where the time went */
        /* first what the program waited for: the step's duration, then the rows, the slowed one first */
        const char *duration = out ? strstr(out, "(step duration)") : NULL,
                   *addmm = out ? strstr(out, "aten::addmm") : NULL;
        CHECK(duration && addmm && duration < addmm);
        CHECK(addmm && !strstr(out, "self CPU time"));
        free(out);
    }
    CHECK_INT(run_commandf(&out, "grep -o '\"trigger_step\": [0-9]*' '%s/pc/summary.json'", dir), 0);
    CHECK_STR(out, "\"trigger_step\": 40\n\"trigger_step\": 75\n");
    free(out);
    /* bad options are said */
    CHECK_INT(run_commandf(&out, "'%s/profile_cpu' --flight 5 --flight-before 5 '%s/pc2' 2>&1", bin_dir(), dir), 64);
    CHECK_CONTAINS(out, "before + 1 + after <= keep_steps");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/profile_cpu' --flight many '%s/pc2' 2>&1", bin_dir(), dir), 64);
    CHECK_CONTAINS(out, "--flight many");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/profile_cpu' --slow-steps 1,a '%s/pc2' 2>&1", bin_dir(), dir), 64);
    CHECK_CONTAINS(out, "not a comma-separated list");
    free(out);
}

static int run_all(int argc, char **argv) {
    if (!make_temp_dir(dir, sizeof dir)) return 1;
    int rc = check_main(argc, argv, "test_flight_cli");
    remove_tree(dir);
    return rc;
}

int main(int argc, char **argv) { return run_all(argc, argv); }
