/* test_autostart.c - OPPROF_TRACE=DIR profiles a program that has no session
 * code (autostart_target): DIR appears whole at exit and on SIGINT, with
 * OPPROF_SCHEDULE's steps; an existing DIR and a bad schedule are said. */
#include "check.h"
#include "testutil.h"

#include <stdlib.h>

static char dir[256];

static int target(const char *env, const char *args, char **out) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s '%s/../tests/autostart_target' %s", env, bin_dir(), args);
    return run_command(cmd, out);
}

static char *listing(const char *path) {
    char cmd[1024], *out = NULL;
    snprintf(cmd, sizeof cmd, "ls -A '%s'", path);
    run_command(cmd, &out);
    return out;
}

/* Run the target in the background as `prefix autostart_target args`, wait
 * for its "ready", then the shell's `signals` ($pid is the target), wait for
 * it and say "status N"; what it all printed. */
static char *signalled(const char *prefix, const char *args, const char *signals) {
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "%s '%s/../tests/autostart_target' %s > '%s/ready' & pid=$!; "
             "for i in $(seq 500); do grep -q ready '%s/ready' 2>/dev/null && break; sleep 0.01; done; "
             "%s; wait $pid; echo \"status $?\"; rm -f '%s/ready'",
             prefix, bin_dir(), args, dir, dir, signals, dir);
    run_command(cmd, &out);
    return out;
}

/* OPPROF_RECORD_SHAPES=1: the inputs an operator describes are kept, quantized types too;
 * without it, the capture says they were not. */
static void shapes_from_the_environment_check(void) {
    char env[600], path[700], *out = NULL;
    snprintf(env, sizeof env, "OPPROF_TRACE='%s/shapes' OPPROF_RECORD_SHAPES=1 OPPROF_OUTPUTS=trace", dir);
    CHECK_INT(target(env, "inputs", &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/shapes/trace-step-0.json", dir);
    char *trace = read_text(path);
    CHECK_CONTAINS(trace, "\"Input Dims\":[[4,8],[8]],\"Input type\":[\"q8_0\",\"float\"]");
    free(trace);
    snprintf(env, sizeof env, "OPPROF_TRACE='%s/no_shapes' OPPROF_OUTPUTS=trace", dir);
    CHECK_INT(target(env, "inputs", &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/no_shapes/trace-step-0.json", dir);
    trace = read_text(path);
    CHECK_CONTAINS(trace,
                   "1 operator(s) described their inputs (opprof_set_inputs) while the session recorded no shapes");
    free(trace);
}

TEST_CASE(from_start_to_exit) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char env[1024], path[1024], cmd[2048], *out = NULL;
    /* From start to exit: one capture, the ranges in it, nothing left over. */
    snprintf(env, sizeof env, "OPPROF_TRACE='%s/all'", dir);
    CHECK_INT(target(env, "steps 3", &out), 0);
    CHECK_CONTAINS(out, "opprof: 1 capture(s) written to");
    free(out);
    out = listing(dir);
    CHECK_STR(out, "all\n"); /* no temporary twin left */
    free(out);
    out = listing(strcat(strcpy(path, dir), "/all"));
    CHECK_STR(out, "trace-step-3.html\ntrace-step-3.json\ntrace-step-3.memory.txt\ntrace-step-3.time.txt\n");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' report '%s/all/trace-step-3.json' --sort none", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "work_0");
    CHECK_CONTAINS(out, "work_2");
    CHECK_CONTAINS(out, "ProfilerStep*");
    free(out);
    remove_tree(dir);
}

TEST_CASE(a_schedule) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char env[1024], path[1024], *out = NULL;
    /* A schedule: wait 0, warmup 0, active 1, repeat 2 -> two captures. */
    snprintf(env, sizeof env, "OPPROF_SCHEDULE=0,0,1,2 OPPROF_TRACE='%s/steps'", dir);
    CHECK_INT(target(env, "steps 5", &out), 0);
    CHECK_CONTAINS(out, "opprof: 2 capture(s) written to");
    free(out);
    out = listing(strcat(strcpy(path, dir), "/steps"));
    CHECK_CONTAINS(out, "trace-step-1.json\n");
    CHECK_CONTAINS(out, "trace-step-2.json\n");
    free(out);
    remove_tree(dir);
}

TEST_CASE(sigint_ends_it_whole) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[2048], *out = NULL;
    /* SIGINT: the program ends by the signal, DIR is whole. (A background
     * job of a script starts with SIGINT ignored: env gives it the default,
     * as a terminal's foreground program has.) */
    snprintf(
        cmd, sizeof cmd,
        "OPPROF_TRACE='%s/interrupted' env --default-signal=INT '%s/../tests/autostart_target' wait > '%s/ready' & "
        "pid=$!; "
        "for i in $(seq 500); do grep -q ready '%s/ready' 2>/dev/null && break; sleep 0.01; done; "
        "kill -INT $pid; wait $pid; echo \"status $?\"",
        dir, bin_dir(), dir, dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "status 130"); /* 128 + SIGINT: ended by the signal, as without opprof */
    CHECK_CONTAINS(out, "opprof: 1 capture(s) written to");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' check '%s/interrupted/trace-step-0.json'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    out = listing(dir);
    CHECK(out && !strstr(out, ".opprof-")); /* no twin left */
    free(out);
    remove_tree(dir);
}

TEST_CASE(fork_without_exec) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char path[1024], cmd[2048], *out = NULL;
    /* fork without exec: the child's exit publishes nothing; the parent's
     * capture is the directory's */
    /* (LeakSanitizer's exit check can deadlock in a child forked from a
     * threaded process, opprof or not: off for this program in sanitizer builds) */
    snprintf(cmd, sizeof cmd,
             "ASAN_OPTIONS=detect_leaks=0 OPPROF_TRACE='%s/forked' '%s/../tests/autostart_target' fork", dir,
             bin_dir());
    CHECK_INT(run_command(cmd, &out), 0);
    long parent = out && strstr(out, "parent ") ? atol(strstr(out, "parent ") + 7) : -1;
    CHECK_CONTAINS(out, "opprof: 1 capture(s) written to"); /* once: not the child's */
    CHECK(out && !strstr(out, "no capture written"));
    free(out);
    out = listing(strcat(strcpy(path, dir), "/forked"));
    CHECK_CONTAINS(out, ".json\n");
    free(out);
    snprintf(cmd, sizeof cmd, "grep -o '\"pid\": *[0-9]*' '%s/forked/'*.json | head -1 | tr -dc 0-9", dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_INT(out ? atol(out) : -2, parent); /* the parent's process */
    free(out);
    remove_tree(dir);
}

TEST_CASE(dir_made_meanwhile) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char path[1024], cmd[2048], *out = NULL;
    /* DIR made by another process during the run: left as it is, the
     * capture in DIR.1, and said */
    snprintf(cmd, sizeof cmd, "OPPROF_TRACE='%s/raced' '%s/../tests/autostart_target' mkdir '%s/raced'", dir, bin_dir(),
             dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "raced' appeared while the program ran");
    CHECK_CONTAINS(out, "the capture is in '");
    free(out);
    out = listing(strcat(strcpy(path, dir), "/raced"));
    CHECK_STR(out, "theirs.txt\n"); /* theirs, untouched */
    free(out);
    out = listing(strcat(strcpy(path, dir), "/raced.1"));
    CHECK_CONTAINS(out, ".json\n"); /* the capture, whole */
    free(out);
    remove_tree(dir);
}

TEST_CASE(a_program_that_changes_its_directory) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char path[1024], cmd[2048], *out = NULL;
    /* OPPROF_TRACE relative, the program in another directory at its exit: the
     * capture where DIR named it at the start, said by that name */
    snprintf(path, sizeof path, "%s/elsewhere", dir);
    CHECK(mkdir(path, 0777) == 0);
    snprintf(cmd, sizeof cmd, "cd '%s' && OPPROF_TRACE=run '%s/../tests/autostart_target' chdir elsewhere", dir,
             bin_dir());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "opprof: 1 capture(s) written to run/");
    free(out);
    out = listing(strcat(strcpy(path, dir), "/run"));
    CHECK_CONTAINS(out, "trace-step-3.json\n");
    free(out);
    out = listing(strcat(strcpy(path, dir), "/elsewhere"));
    CHECK_STR(out, ""); /* nothing where the program went */
    free(out);
    remove_tree(dir);
}

TEST_CASE(sigterm_ends_it) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char env[1024], *out = NULL;
    /* SIGTERM: ended by it (143), not by the program's own exit */
    snprintf(env, sizeof env, "OPPROF_TRACE='%s/terminated'", dir);
    out = signalled(env, "wait", "kill -TERM $pid");
    CHECK_CONTAINS(out, "status 143");
    CHECK_CONTAINS(out, "opprof: 1 capture(s) written to");
    free(out);
    remove_tree(dir);
}

TEST_CASE(sigint_ignored_stays_ignored) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char env[1024], *out = NULL;
    /* SIGINT ignored from the start (a script's background job, nohup): still
     * ignored, as without opprof; SIGTERM then ends it */
    snprintf(env, sizeof env, "OPPROF_TRACE='%s/ignoring'", dir);
    out = signalled(env, "wait", "kill -INT $pid; sleep 0.2; kill -0 $pid && echo alive; kill -TERM $pid");
    CHECK_CONTAINS(out, "alive\n");
    CHECK_CONTAINS(out, "status 143");
    free(out);
    remove_tree(dir);
}

TEST_CASE(a_daemon_that_closes_descriptors) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char env[1024], path[1024], *out = NULL;
    /* A program that closes every descriptor it did not open (as daemons do),
     * then opens a file of its own: SIGINT still saves and ends it, and not a
     * byte of opprof's lands in its file. */
    snprintf(env, sizeof env, "OPPROF_TRACE='%s/daemon' env --default-signal=INT", dir);
    snprintf(path, sizeof path, "closefds '%s/own.txt'", dir);
    out = signalled(env, path, "kill -INT $pid");
    CHECK_CONTAINS(out, "status 130");
    CHECK_CONTAINS(out, "opprof: 1 capture(s) written to");
    snprintf(path, sizeof path, "%s/own.txt", dir);
    char *own = read_text(path);
    CHECK(own && !*own); /* its own file: empty */
    free(own);
    free(out);
    remove_tree(dir);
}

TEST_CASE(an_existing_dir) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char env[1024], path[1024], *out = NULL;
    snprintf(path, sizeof path, "%s/all", dir);
    CHECK_INT(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/all/theirs.txt", dir);
    FILE *theirs = fopen(path, "w");
    if (theirs) fclose(theirs);
    /* An existing DIR: said, nothing recorded, the program runs as usual. */
    snprintf(env, sizeof env, "OPPROF_TRACE='%s/all'", dir);
    CHECK_INT(target(env, "steps 1", &out), 0);
    CHECK_CONTAINS(out, "ignored: it exists; name a new directory");
    free(out);
    out = listing(strcat(strcpy(path, dir), "/all"));
    CHECK_STR(out, "theirs.txt\n"); /* theirs, untouched */
    free(out);
    remove_tree(dir);
}

TEST_CASE(a_bad_schedule) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char env[1024], *out = NULL;
    /* A bad schedule: said, then from start to exit. */
    snprintf(env, sizeof env, "OPPROF_SCHEDULE=1,x OPPROF_TRACE='%s/bad'", dir);
    CHECK_INT(target(env, "steps 2", &out), 0);
    CHECK_CONTAINS(out, "OPPROF_SCHEDULE='1,x' ignored");
    CHECK_CONTAINS(out, "opprof: 1 capture(s) written to");
    free(out);
    remove_tree(dir);
}

TEST_CASE(a_dir_without_its_parent) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char *out = NULL;
    /* A DIR whose parent does not exist: said, and the program runs as usual. */
    CHECK_INT(target("OPPROF_TRACE=/nonexistent/parent/dir", "steps 1", &out), 0);
    CHECK_CONTAINS(out, "OPPROF_TRACE='/nonexistent/parent/dir' ignored: cannot create");
    free(out);
    remove_tree(dir);
}

TEST_CASE(not_passed_on) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char env[1024], *out = NULL;
    /* The programs it starts are not profiled: OPPROF_TRACE is not passed on. */
    snprintf(env, sizeof env, "OPPROF_TRACE='%s/env'", dir);
    CHECK_INT(target(env, "env", &out), 0);
    CHECK_CONTAINS(out, "OPPROF_TRACE not inherited");
    free(out);
    remove_tree(dir);
}

TEST_CASE(sigkill_leaves_a_twin_named_next_time) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char env[1024], *out = NULL;
    /* SIGKILL leaves the twin DIR.opprof-PID (no handler can run); the next
     * run with the same DIR names it and what it holds, and runs as usual. */
    snprintf(env, sizeof env, "OPPROF_SCHEDULE=0,0,1,0 OPPROF_TRACE='%s/killed'", dir);
    out = signalled(env, "wait", "sleep 0.3; kill -KILL $pid");
    CHECK_CONTAINS(out, "status 137");
    free(out);
    out = listing(dir);
    CHECK_CONTAINS(out, "killed.opprof-");
    CHECK(!strstr(out, "killed\n"));
    free(out);
    CHECK_INT(target(env, "steps 1", &out), 0);
    CHECK_CONTAINS(out, "killed.opprof-");
    CHECK_CONTAINS(out, "which ended without saving it (killed by SIGKILL, or ended by _exit or abort)");
    CHECK_CONTAINS(out, "no saved step in it; remove it");
    CHECK_CONTAINS(out, "capture(s) written to");
    free(out);
    remove_tree(dir);
}

TEST_CASE(dead_writers_partial_files_removed) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char path[1024], cmd[2048], env[1024], *out = NULL;
    snprintf(env, sizeof env, "OPPROF_TRACE='%s/all'", dir);
    CHECK_INT(target(env, "steps 3", &out), 0);
    free(out);
    /* A partial file that a dead writer left (PATH.tmp.PID.XXXXXX) is removed
     * when the same PATH is written; a live writer's is not. */
    snprintf(path, sizeof path, "%s/merged.json.tmp.999999999.abcdef", dir); /* above any pid_max */
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/merged.json.tmp.1.abcdef", dir); /* pid 1: alive */
    f = fopen(path, "w");
    if (f) fclose(f);
    snprintf(cmd, sizeof cmd, "'%s/opprof' merge -o '%s/merged.json' '%s/all/trace-step-3.json'", bin_dir(), dir, dir);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    out = listing(dir);
    CHECK_CONTAINS(out, "merged.json\n");
    CHECK(!strstr(out, "merged.json.tmp.999999999"));
    CHECK_CONTAINS(out, "merged.json.tmp.1.abcdef");
    free(out);
    remove_tree(dir);
}

TEST_CASE(nothing_without_opprof_trace) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char *out = NULL;
    /* Without OPPROF_TRACE, nothing at all. */
    CHECK_INT(target("", "steps 2", &out), 0);
    CHECK_STR(out, "");
    free(out);
    out = listing(dir);
    CHECK_STR(out, ""); /* nothing written */
    free(out);
    remove_tree(dir);
}

TEST_CASE(shapes_from_the_environment) { shapes_from_the_environment_check(); }

int main(int argc, char **argv) { return check_main(argc, argv, "test_autostart"); }
