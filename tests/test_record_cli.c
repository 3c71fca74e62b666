/* test_record_cli.c - `opprof record` on a program that knows nothing of
 * opprof (record_toy, compiled with -finstrument-functions): a row per
 * function with the calls the toy makes, the bytes each function allocated,
 * threads on their own tracks; SIGINT still leaves the directory whole;
 * usage errors; --roofline's captures carry the machine's cached profile. */
#include "check.h"
#include "testutil.h"

#include "../src/common/record_files.h"

#include <math.h>
#include <opprof/capture.h>
#include <stdlib.h>
#include <yajl/yajl_tree.h>

static char dir[256];

static const char *toy(void) {
    static char path[1024];
    snprintf(path, sizeof path, "%s/../tests/record_toy", bin_dir());
    return path;
}

/* The row of `name` in `opprof report --json` of the capture. */
static yajl_val row_of(yajl_val root, const char *name) {
    const char *rows_path[] = {"rows", NULL};
    yajl_val rows = yajl_tree_get(root, rows_path, yajl_t_array);
    for (size_t i = 0; rows && i < rows->u.array.len; i++) {
        const char *np[] = {"name", NULL};
        yajl_val n = yajl_tree_get(rows->u.array.values[i], np, yajl_t_string);
        const char *s = n ? YAJL_GET_STRING(n) : NULL;
        if (s && strcmp(s, name) == 0) return rows->u.array.values[i];
    }
    return NULL;
}

static long long field(yajl_val row, const char *key) {
    const char *p[] = {key, NULL};
    yajl_val v = row ? yajl_tree_get(row, p, yajl_t_number) : NULL;
    return v ? YAJL_GET_INTEGER(v) : -1;
}

/* --memory --functions on the toy: its calls, its kept blocks, its threads. */
TEST_CASE(functions_memory_and_threads) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;

    snprintf(cmd, sizeof cmd, "'%s/opprof' record --memory --functions -o '%s/run' -- '%s'", bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "sum 42"); /* the program ran as without opprof */
    CHECK_CONTAINS(out, "Self CPU time total");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' report --json --row-limit 0 --sort none '%s/run/trace-step-0.json'",
             bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    char err[256];
    yajl_val root = out ? yajl_tree_parse(out, err, sizeof err) : NULL;
    CHECK(root != NULL);
    /* the calls the toy makes: mid 6 x 2 leaf, the worker 4 leaf */
    CHECK_INT(field(row_of(root, "leaf"), "calls"), 16);
    CHECK_INT(field(row_of(root, "mid"), "calls"), 6);
    CHECK_INT(field(row_of(root, "grow"), "calls"), 3);
    CHECK_INT(field(row_of(root, "worker"), "calls"), 1);
    CHECK_INT(field(row_of(root, "main"), "calls"), 1);
    /* grow allocated 3 blocks of 1000 bytes and kept them (the program frees them at the end) */
    CHECK_INT(field(row_of(root, "grow"), "self_cpu_bytes"), 3 * 1000);
    CHECK_INT(field(row_of(root, "leaf"), "self_cpu_bytes"), 0);
    yajl_tree_free(root);
    free(out);
    /* threads on their own tracks: the main thread and the worker */
    snprintf(cmd, sizeof cmd, "grep -c '\"thread_name\"' '%s/run/trace-step-0.json'", dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK(out && atoi(out) >= 2);
    free(out);
    remove_tree(dir);
}

/* The budget of --functions over threads: one that ended, one still running
 * at exit, and main, calling leaf 100 times each, one after the other, with a
 * budget of 150: exactly the first 150 calls are ranges, and the 150 others
 * are said at exit, none counted twice or lost with the threads' claims. */
TEST_CASE(budget_over_threads) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char *out = NULL;
    CHECK_INT(run_commandf(&out,
                           "OPPROF_FUNCTION_CALLS=150 '%s/opprof' record --functions -o '%s/run' -- '%s' budget 100",
                           bin_dir(), dir, toy()),
              0);
    CHECK_CONTAINS(out, "leaf called 300 times");
    CHECK_CONTAINS(out, ": 150 call(s) of 1 function(s) not recorded, past each function's first 150");
    CHECK_CONTAINS(out, "most called leaf (300 calls)");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' report --json --row-limit 0 --sort none '%s/run/trace-step-0.json'",
                           bin_dir(), dir),
              0);
    char err[256];
    yajl_val root = out ? yajl_tree_parse(out, err, sizeof err) : NULL;
    CHECK(root != NULL);
    CHECK_INT(field(row_of(root, "leaf"), "calls"), 150);
    yajl_tree_free(root);
    free(out);
    remove_tree(dir);
}

/* SIGINT to opprof record: passed on; the program ends by it, DIR is whole,
 * and says nothing of opprof's own step */
TEST_CASE(sigint_passed_on) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "env --default-signal=INT '%s/opprof' record --functions -o '%s/stopped' -- '%s' wait > '%s/ready' 2>&1 & "
             "pid=$!; "
             "for i in $(seq 500); do grep -q ready '%s/ready' 2>/dev/null && break; sleep 0.01; done; "
             "kill -INT $pid; wait $pid; echo \"status $?\"",
             bin_dir(), dir, toy(), dir, dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "status 130");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' report '%s/stopped/trace-step-0.json'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "mid");
    CHECK(out && !strstr(out, "another thread than their begin"));
    free(out);
    /* with no range of the program's open, the capture has no warning: the step
       that the save on the watcher thread ends was "a range end called on another
       thread than its begin" and "a range still open at the end" */
    snprintf(cmd, sizeof cmd,
             "env --default-signal=INT '%s/opprof' record --memory -o '%s/quiet' -- '%s' wait > '%s/ready2' 2>&1 & "
             "pid=$!; "
             "for i in $(seq 500); do grep -q ready '%s/ready2' 2>/dev/null && break; sleep 0.01; done; "
             "kill -INT $pid; wait $pid; echo \"status $?\"; '%s/opprof' report '%s/quiet/trace-step-0.json' 2>&1",
             bin_dir(), dir, toy(), dir, dir, bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "status 130");
    CHECK_CONTAINS(out, "ProfilerStep*");
    CHECK(out && !strstr(out, "Warnings"));
    free(out);
    remove_tree(dir);
}

/* The allocator's contract kept: new throws bad_alloc and calls the
 * new_handler, nothrow returns NULL, pvalloc, calloc, reallocarray and
 * aligned_alloc refuse what they must; the same output as a plain run. */
TEST_CASE(allocator_contract_kept) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    char *plain = NULL;
    snprintf(cmd, sizeof cmd, "'%s/../tests/alloc_contract'", bin_dir());
    CHECK_INT(run_command(cmd, &plain), 0);
    CHECK_CONTAINS(plain, "new: threw bad_alloc\n");
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record --memory -o '%s/contract' -- '%s/../tests/alloc_contract' 2>/dev/null", bin_dir(), dir,
             bin_dir());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK(plain && out && strncmp(out, plain, strlen(plain)) == 0); /* the program's lines, then the table */
    if (plain && out && strncmp(out, plain, strlen(plain)) != 0)
        fprintf(stderr, "plain:\n%s\nrecorded:\n%s\n", plain, out);
    free(plain);
    free(out);
    remove_tree(dir);
}

/* Memory events over several chunks, on a machine where opprof's helper
 * starts (at the first chunk it is asked for, inside a record): the helper's
 * start allocates, and that allocation was taken for the program's, made by
 * a signal handler inside a record: "1 record(s) made by a signal handler
 * ... dropped" in every such capture. opprof's own allocations are not the
 * program's: nothing dropped, no warning. */
TEST_CASE(own_allocations_not_the_programs) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --memory --no-html -o '%s/own' -- '%s' mallocs 200000 2>&1",
             bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK(out && !strstr(out, "Dropped events"));
    CHECK(out && !strstr(out, "signal handler"));
    free(out);
    snprintf(cmd, sizeof cmd, "grep -o '\"dropped_events\": *[0-9]*' '%s/own/trace-step-0.json'", dir);
    run_command(cmd, &out);
    CHECK_STR(out, "\"dropped_events\": 0\n");
    free(out);
    remove_tree(dir);
}

TEST_CASE(signal_handlers_that_record) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    /* A signal handler that calls instrumented code that allocates, landing
     * anywhere (inside opprof's recording too): never a crash, a deadlock or a
     * corrupted event; what the handler records while its thread is inside a
     * record is dropped and counted. Three runs: each must hold. */
    for (int run = 0; run < 3; run++) {
        snprintf(cmd, sizeof cmd,
                 "timeout 120 '%s/opprof' record --functions --memory -o '%s/signal%d' -- '%s/../tests/signal_target'",
                 bin_dir(), dir, run, bin_dir());
        CHECK_INT(run_command(cmd, &out), 0);
        CHECK_CONTAINS(out, "done: 1500 signals handled\n");
        free(out);
        snprintf(cmd, sizeof cmd, "grep -c '\"Bytes\":0,' '%s/signal%d/trace-step-0.json'", dir, run);
        run_command(cmd, &out);
        CHECK_STR(out, "0\n"); /* no memory event torn into a zero-byte one */
        free(out);
        /* no range ended twice: a handler that came between the exit hook's
         * depth and its slot ended the handler's range again (1 run in 18) */
        snprintf(cmd, sizeof cmd, "grep -c 'without a matching open range' '%s/signal%d/trace-step-0.json'", dir, run);
        run_command(cmd, &out);
        CHECK_STR(out, "0\n");
        free(out);
    }
    remove_tree(dir);
}

TEST_CASE(a_program_that_ends_by_exit) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    /* A program that ends by _exit (no exit handler runs): the steps saved
     * before are kept as DIR, the temporary twin never left behind; with
     * nothing saved, no DIR and no twin; its status either way is its own */
    snprintf(cmd, sizeof cmd,
             "OPPROF_SCHEDULE=0,0,1,0 '%s/opprof' record -o '%s/quit' -- '%s/../tests/autostart_target' quit 3",
             bin_dir(), dir, bin_dir());
    CHECK_INT(run_command(cmd, &out), 5);
    CHECK_CONTAINS(out, "ended without its exit handlers (by _exit or SIGKILL)");
    free(out);
    snprintf(cmd, sizeof cmd, "ls '%s/quit'; ls -d '%s'/quit.opprof-* 2>/dev/null | wc -l", dir, dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "trace-step-2.json\n"); /* saved before _exit */
    CHECK(out && strstr(out, "\n0\n"));         /* no twin left */
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record -o '%s/quit0' -- '%s/../tests/autostart_target' quit 0", bin_dir(),
             dir, bin_dir());
    CHECK_INT(run_command(cmd, &out), 5);
    CHECK_CONTAINS(out, "wrote no capture into");
    free(out);
    snprintf(cmd, sizeof cmd, "ls -d '%s'/quit0* 2>/dev/null | wc -l", dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_STR(out, "0\n");
    free(out);
    remove_tree(dir);
}

/* The report of a capture's trace, for CHECK_CONTAINS. */
static char *report_of(const char *capture) {
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/opprof' report --json --row-limit 0 '%s/%s/trace-step-0.json'", bin_dir(), dir,
             capture);
    CHECK_INT(run_command(cmd, &out), 0);
    return out;
}

static bool exists_in_dir(const char *name) {
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return lstat(path, &st) == 0;
}

/* A wrapper that forks (`timeout 60 prog`; dash's `sh -c 'prog; ...'`) runs
 * the program in a child: its first child to exec takes a profile, which
 * becomes DIR since the wrapper recorded no range; the exit status stays the
 * wrapper's; a second program run after it takes the profile in turn, and
 * the one of less CPU time is named as dropped. A wrapper that execs
 * (`sh -c 'exec prog'`) hands it the profile itself. */
TEST_CASE(a_wrapper_that_forks) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/forks' -- sh -c \"'%s'; exit 3\" 2>&1", bin_dir(),
             dir, toy());
    CHECK_INT(run_command(cmd, &out), 3);
    CHECK_CONTAINS(out, "sum 42");
    CHECK_CONTAINS(out, "opprof record: the capture in '");
    CHECK_CONTAINS(out, "record_toy, which sh ran in a child process");
    CHECK(out && !strstr(out, "not profiled"));
    free(out);
    CHECK_CONTAINS(out = report_of("forks"), "\"name\": \"leaf\"");
    free(out);
    CHECK(!exists_in_dir("forks" RECORD_CHILD_SUFFIX));
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/timeout' -- timeout 60 '%s' 2>&1", bin_dir(), dir,
             toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "record_toy, which timeout ran in a child process");
    CHECK(out && !strstr(out, "called no instrumented function")); /* nothing said of the wrapper */
    CHECK(out && !strstr(out, "capture(s) written to"));           /* nor by the child, of a place it leaves */
    free(out);
    CHECK_CONTAINS(out = report_of("timeout"), "\"name\": \"leaf\"");
    free(out);
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record --functions -o '%s/two' -- sh -c \"'%s'; '%s' >/dev/null; true\" 2>&1", bin_dir(), dir,
             toy(), toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "opprof record: 1 other program(s) that sh ran one after another in child processes took the "
                        "profile in turn and less CPU time than ");
    CHECK_CONTAINS(out, "record_toy): their captures were dropped");
    CHECK(out && !strstr(out, "not profiled"));
    free(out);
    CHECK_CONTAINS(out = report_of("two"), "\"name\": \"leaf\"");
    free(out);
    /* bash passes on the environment it was started with (main's envp), OPPROF_TRACE too */
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record --functions -o '%s/bash' -- bash -c 'v=$(\"%s\"); echo \"[$v]\"' 2>&1", bin_dir(), dir,
             toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "[sum 42]");
    CHECK_CONTAINS(out, "record_toy, which bash ran in a child process");
    free(out);
    /* ...and the programs run after it get none of record's variables from it */
    snprintf(
        cmd, sizeof cmd,
        "'%s/opprof' record --functions -o '%s/bash2' -- bash -c '\"%s\"; echo trace=$(env | grep -c ^OPPROF_TRACE=)' 2>&1",
        bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "trace=0");
    free(out);
    CHECK_CONTAINS(out = report_of("bash"), "\"name\": \"leaf\"");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/execs' -- sh -c \"exec '%s'\" 2>&1", bin_dir(),
             dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "sum 42");
    CHECK(out && !strstr(out, "in a child process") && !strstr(out, "in child processes"));
    free(out);
    CHECK_CONTAINS(out = report_of("execs"), "\"name\": \"leaf\"");
    free(out);
    remove_tree(dir);
}

/* A helper that a wrapper runs before the program (`sh -c 'date; prog'`,
 * a make recipe's `mkdir -p out`) records nothing but its steps, and gives
 * the profile back at its exit: the program after it takes it, one level
 * down too (`timeout 60 sh -c 'date; prog'`), and nothing is said of the
 * helper. Helpers alone: the last one is named as having recorded nothing. */
TEST_CASE(a_helper_before_the_program) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/helper' -- sh -c \"/bin/true; '%s'; exit 3\" 2>&1",
             bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 3);
    CHECK_CONTAINS(out, "sum 42");
    CHECK_CONTAINS(out, "opprof record: the capture in '");
    CHECK_CONTAINS(out, "record_toy, which sh ran in a child process\n");
    CHECK(out && !strstr(out, "not profiled") && !strstr(out, "recorded nothing"));
    free(out);
    CHECK_CONTAINS(out = report_of("helper"), "\"name\": \"leaf\"");
    free(out);
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record --functions -o '%s/deeper' -- timeout 60 sh -c \"/bin/true; '%s'\" 2>&1", bin_dir(),
             dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "record_toy, which timeout ran in a child process (through sh)");
    CHECK(out && !strstr(out, "not profiled") && !strstr(out, "recorded nothing"));
    free(out);
    CHECK_CONTAINS(out = report_of("deeper"), "\"name\": \"leaf\"");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/helpers' -- sh -c '/bin/true; /bin/echo x' 2>&1",
             bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out,
                   "opprof record: sh ran /bin/echo in a child process, which took the profile and recorded nothing");
    CHECK(out && !strstr(out, "/bin/true") && !strstr(out, "not profiled"));
    free(out);
    CHECK(!exists_in_dir("helpers"));
    remove_tree(dir);
}

/* A wrapper's child that took the profile and recorded nothing but its
 * steps (no option that sees into it) leaves no capture, and record says
 * so, and that DIR is the wrapper's own where the wrapper wrote one; it
 * said the shell "ended by _exit" and offered `exec`, which gives the same
 * nothing. The exit status stays the wrapper's. */
TEST_CASE(a_wrappers_child_that_records_nothing) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/opprof' record -o '%s/plain' -- sh -c \"'%s'; exit 3\" 2>&1", bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 3);
    CHECK_CONTAINS(out, "sum 42");
    CHECK_CONTAINS(out, "record_toy in a child process, which took the profile and recorded nothing but its steps, "
                        "so it left no capture: opprof sees into");
    CHECK(out && !strstr(out, "_exit") && !strstr(out, "wrapper's own"));
    free(out);
    CHECK(!exists_in_dir("plain"));
    snprintf(cmd, sizeof cmd, "'%s/opprof' record -o '%s/timed' -- timeout 60 '%s' 2>&1", bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "so it left no capture (the one in '");
    CHECK_CONTAINS(out, "timed' is the wrapper's own)");
    free(out);
    CHECK(exists_in_dir("timed"));
    remove_tree(dir);
}

/* A wrapper within a wrapper that forks (`timeout 60 sh -c 'a; prog; b'`,
 * the way benchmarks are run): the inner shell takes the profile, and so
 * does the first program it runs, one level down (DIR.opprof-child twice);
 * the shell ends by _exit, and timeout, the wrapper, makes that capture
 * DIR; record names the program and the shell between; the program run
 * after it takes the profile in turn, and one of the two is named as
 * dropped; no twin stays. Before, the program was
 * named as not profiled and DIR was timeout's own. bash, which ends by exit,
 * moves it up itself. */
/* The `ls` after "LEFT" in out names no child's directory (no twin stayed). */
static bool no_child_dir_left(const char *out) {
    const char *left = out ? strstr(out, "LEFT") : NULL;
    return left && !strstr(left, RECORD_CHILD_SUFFIX);
}

TEST_CASE(a_wrapper_within_a_wrapper) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record --functions -o '%s/nested' -- timeout 60 sh -c \"true; '%s'; '%s' >/dev/null; "
             "exit 4\" 2>&1; echo LEFT; ls -A '%s'",
             bin_dir(), dir, toy(), toy(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "sum 42");
    CHECK_CONTAINS(out, "record_toy, which timeout ran in a child process (through sh)");
    CHECK_CONTAINS(out, "opprof record: 1 other program(s) that timeout ran one after another in child processes "
                        "(through sh) took the profile in turn");
    CHECK(out && !strstr(out, "not profiled"));
    CHECK(no_child_dir_left(out));
    free(out);
    CHECK_CONTAINS(out = report_of("nested"), "\"name\": \"leaf\"");
    free(out);
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record --functions -o '%s/bash' -- timeout 60 bash -c \"'%s'; exit 5\" 2>&1; "
             "echo status=$?; echo LEFT; ls -A '%s'",
             bin_dir(), dir, toy(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "status=5"); /* the wrapper's */
    CHECK_CONTAINS(out, "record_toy, which timeout ran in a child process (through bash)");
    CHECK(no_child_dir_left(out) && !strstr(out, "not profiled"));
    free(out);
    CHECK_CONTAINS(out = report_of("bash"), "\"name\": \"leaf\"");
    free(out);
    remove_tree(dir);
}

/* A helper that records something too (`sh -c 'ls; prog'` under --memory:
 * ls allocates) takes the profile, gives it back at its exit with its
 * capture kept, and the program after it takes it in turn: of the two, the
 * one that took more CPU time keeps DIR, in either order, and the other is
 * named as dropped. Before, ls kept the profile and the program ran
 * without. A capture dropped is never written: no file of it stays. */
TEST_CASE(the_program_of_most_cpu_time_keeps_the_profile) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    const char *orders[] = {"/bin/ls / >/dev/null; '%s' mallocs 300000", "'%s' mallocs 300000; /bin/ls / >/dev/null"};
    for (int k = 0; k < 2; k++) {
        char inner[1024], cmd[4096], name[32], *out = NULL;
        snprintf(inner, sizeof inner, orders[k], toy());
        snprintf(name, sizeof name, "order%d", k);
        snprintf(cmd, sizeof cmd,
                 "'%s/opprof' record --memory --outputs tables -o '%s/%s' -- sh -c \"%s\" 2>&1; echo LEFT; ls -A '%s'",
                 bin_dir(), dir, name, inner, dir);
        CHECK_INT(run_command(cmd, &out), 0);
        CHECK_CONTAINS(out, "record_toy, which sh ran in a child process\n");
        CHECK_CONTAINS(out, "opprof record: 1 other program(s) that sh ran one after another in child processes took "
                            "the profile in turn and less CPU time than ");
        CHECK_CONTAINS(out, "record_toy (the first: /bin/ls): their captures were dropped\n");
        CHECK(out && !strstr(out, "not profiled") && !strstr(out, "recorded nothing"));
        CHECK(no_child_dir_left(out) && !strstr(strstr(out, "LEFT"), ".opprof-"));
        free(out);
        char path[4200];
        snprintf(path, sizeof path, "%s/%s/trace-step-0.memory.txt", dir, name);
        CHECK_CONTAINS(out = read_text(path), "ProfilerStep*");
        free(out);
    }
    /* one that takes it after the kept one and is killed holds it still: the kept one is DIR, said */
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record --memory --outputs tables -o '%s/killed' -- sh -c \"'%s' mallocs 300000; "
             "sh -c 'kill -9 \\$\\$'; true\" 2>&1",
             bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "record_toy, which sh ran in a child process\n");
    CHECK_CONTAINS(out, "sh, which sh ran after it, took the profile in turn and ended without its exit handlers");
    free(out);
    remove_tree(dir);
}

/* `opprof sql DIR` of a memory capture: how many memory events it holds. */
static long memory_events(const char *capture) {
    char *out = NULL;
    long n = -1;
    if (run_commandf(&out, "'%s/opprof' sql --mode list '%s' 'SELECT count(*) FROM memory' 2>/dev/null", bin_dir(),
                     capture) == 0 &&
        out)
        sscanf(out, "%*[^\n]\n%ld", &n);
    free(out);
    return n;
}

/* A wrapper (timeout) run after a program whose capture is kept at its
 * level: the program that the wrapper runs keeps the profile when the two
 * took more CPU time than the kept one (`mkdir out; timeout 600 ./bench`),
 * or goes with its wrapper, nothing left. It left the wrapper's own capture
 * as DIR and the program's beside, or said "cannot move ... File exists".
 * A capture that a program run before left beside DIR is no later one's
 * child's: a program that ran none no longer takes it for its own. */
/* `opprof record --memory` of `SHELL -c "INNER"` into DIR/name (shell_memory_capture;
 * sh_memory_capture: dash's sh): it ends with status 0, says `said` and
 * `also`, leaves nothing beside DIR (no .opprof- directory) and says
 * nothing of "cannot move", "not profiled" or "was left by", and DIR holds
 * `events` memory events (the program's capture, not another's). */
static void shell_memory_capture(const char *shell, const char *name, const char *inner, const char *said,
                                 const char *also, long events) {
    char cmd[8192], path[4200], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record --memory --outputs perfetto -o '%s/%s' -- %s -c \"%s\" 2>&1; echo LEFT; ls -A '%s'",
             bin_dir(), dir, name, shell, inner, dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, said);
    CHECK_CONTAINS(out, also);
    CHECK(out && !strstr(out, "cannot move") && !strstr(out, "not profiled") && !strstr(out, "was left by") &&
          !strstr(strstr(out, "LEFT"), ".opprof-"));
    free(out);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK(memory_events(path) == events);
}

static void sh_memory_capture(const char *name, const char *inner, const char *said, const char *also, long events) {
    shell_memory_capture("sh", name, inner, said, also, events);
}

/* Two programs run one after the other, each by a wrapper (bash that runs
 * it in a child), the second one a level deeper (`bash -c 'a'; bash -c
 * "bash -c 'b'"`, as pyenv's shims run their helpers before python): the
 * first one's capture, kept at its level, was moved up by its wrapper, and
 * its claim at that level was taken for the second one's. Its wrapper
 * then said "cannot move ... No such file or directory", DIR held a
 * bash's capture (1,225 memory events) and the program's was left beside.
 * DIR is the second program's (the more CPU time), nothing beside. */
TEST_CASE(programs_run_by_wrappers_at_two_depths) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char inner[4096];
    snprintf(inner, sizeof inner,
             "bash -c '%s mallocs 1000 >/dev/null; true'; bash -c \\\"bash -c '%s mallocs 300000 >/dev/null; "
             "true'; true\\\"; true",
             toy(), toy());
    shell_memory_capture("bash", "depths", inner,
                         "record_toy, which bash ran in a child process (through /usr/bin/bash, /usr/bin/bash)\n",
                         "their captures were dropped\n", 600000);
    remove_tree(dir);
}

TEST_CASE(a_wrapper_after_a_kept_program) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char inner[4096], cmd[4096], *out = NULL;
    snprintf(inner, sizeof inner, "/bin/ls / >/dev/null; timeout 60 '%s' mallocs 300000 >/dev/null", toy());
    sh_memory_capture("adopted", inner, "record_toy, which sh ran in a child process (through /usr/bin/timeout)\n",
                      "less CPU time than /usr/bin/timeout (the first: /bin/ls): their captures were dropped\n",
                      600000);
    /* the wrapper of less CPU time: its program's capture goes with it (2 M pairs: four times ls's and timeout's) */
    snprintf(inner, sizeof inner, "'%s' mallocs 2000000 >/dev/null; timeout 60 /bin/ls / >/dev/null", toy());
    sh_memory_capture("dropped", inner, "record_toy, which sh ran in a child process\n",
                      "record_toy (the first: /usr/bin/timeout): their captures were dropped\n", 4000000);
    /* a program that runs one that records keeps its own (its ranges), its child's beside; the next one ran none */
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record --functions --outputs tables -o '%s/beside' -- sh -c \"'%s' run '%s' >/dev/null; "
             "'%s' >/dev/null\" 2>&1",
             bin_dir(), dir, toy(), toy(), toy());
    CHECK_INT(run_command(cmd, &out), 0);
    const char *own = out ? strstr(out, "has its own capture") : NULL;
    CHECK(own && !strstr(own + 1, "has its own capture") && !strstr(out, "cannot move"));
    CHECK_CONTAINS(out, "whose capture is '");
    free(out);
    /* one that execs its program is named with it (record named env); an exec that fails names nothing */
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record --memory --outputs tables -o '%s/execd' -- sh -c \"/bin/ls / >/dev/null; env X=1 "
             "'%s' mallocs 300000 >/dev/null\" 2>&1",
             bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "record_toy (exec'd by /usr/bin/env), which sh ran in a child process\n");
    free(out);
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record --memory --outputs tables -o '%s/failed' -- sh -c \"'%s' mallocs 300000 "
             ">/dev/null; sh -c 'exec /' 2>/dev/null; true\" 2>&1",
             bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "sh, which sh ran after it, took the profile in turn and ended without its exit handlers");
    CHECK(out && !strstr(out, "exec'd by"));
    free(out);
    remove_tree(dir);
}

/* `opprof sql` (mode `mode`: csv, list) of the capture of `opprof record
 * OPTIONS -- record_toy ARGS` in DIR/name: QUERY's output. */
static char *sql_of_toy(const char *options, const char *args, const char *name, const char *mode, const char *query) {
    char *out = NULL;
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' record %s -o '%s/%s' -- '%s' %s >/dev/null 2>&1 && '%s/opprof' sql --mode %s "
                           "'%s/%s' \"%s\" 2>/dev/null",
                           bin_dir(), options, dir, name, toy(), args, bin_dir(), mode, dir, name, query),
              0);
    return out;
}

/* --functions through longjmp (libpng's and libjpeg's error paths): the
 * calls it jumps out of run no exit, and end at the next call or return of
 * the function that set the jump. Each later call nested in them: 1,000
 * rounds gave 171 jumpers at depth 1,022, 1,021 downs, and thousands dropped. */
TEST_CASE(functions_left_by_longjmp) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char *out = NULL;
    out = sql_of_toy("--functions --outputs trace", "longjmp 1000", "jumps", "csv",
                     "SELECT name, count(*), max(depth) FROM slice GROUP BY name ORDER BY name");
    CHECK_STR(out, "\"name\",\"count(*)\",\"max(depth)\"\n\"ProfilerStep#0\",1,0\n\"down\",6000,8\n"
                   "\"jumper\",1000,2\n\"leaf\",1000,2\n\"main\",1,1\n");
    free(out);
    remove_tree(dir);
}

/* A thread that ends by pthread_exit inside its ranges: they end with it,
 * before main's next call (they lasted until the capture's end). */
TEST_CASE(ranges_end_with_their_thread) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char *out = NULL;
    out = sql_of_toy("--functions --outputs trace", "pthread_exit", "exits", "list",
                     "SELECT name, ts + dur <= (SELECT ts FROM slice WHERE name = 'leaf') FROM slice WHERE name IN "
                     "('ends_inside', 'quits') ORDER BY name");
    CHECK_STR(out, "name|ts + dur <= (SELECT ts FROM slice WHERE name = 'leaf')\nends_inside|1\nquits|1\n");
    free(out);
    remove_tree(dir);
}

/* An exec wrapper that changes the environment it passes on: `env
 * LD_PRELOAD=libjemalloc.so prog` (how allocators are swapped under
 * inference benchmarks) replaced record's library, `env -u LD_PRELOAD` and
 * `env -i` removed it (env -i also its own variables, before its exec): the
 * program ran without, its capture lost, and record blamed _exit or static
 * linking. The program's capture is DIR; record's library comes first, the
 * program's own after it. */
TEST_CASE(an_exec_wrapper_that_changes_the_environment) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char lib[4200], cmd[16384], path[4200], *out = NULL;
    snprintf(lib, sizeof lib, "%s/../tests/libstep_lib.so", bin_dir());
    const char *wrappers[] = {"env LD_PRELOAD='%s'", "env -u LD_PRELOAD", "env -i",
                              "sh -c 'ls / >/dev/null; env -i \"$0\" \"$@\"'"};
    for (int k = 0; k < 4; k++) {
        char wrapper[4400];
        snprintf(wrapper, sizeof wrapper, wrappers[k], lib);
        snprintf(path, sizeof path, "%s/w%d", dir, k);
        snprintf(cmd, sizeof cmd,
                 "'%s/opprof' record --memory --outputs perfetto -o '%s' -- %s '%s' mallocs 300000 2>&1", bin_dir(),
                 path, wrapper, toy());
        CHECK_INT(run_command(cmd, &out), 0);
        CHECK(out && !strstr(out, "wrote no capture"));
        free(out);
        CHECK(memory_events(path) == 600000);
    }
    snprintf(cmd, sizeof cmd, "'%s/opprof' record -o '%s/shown' -- env LD_PRELOAD='%s' /usr/bin/env 2>/dev/null",
             bin_dir(), dir, lib);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "libopprof_record.so:");
    CHECK_CONTAINS(out, "libstep_lib.so\n");
    free(out);
    remove_tree(dir);
}

/* A program that ends holding every descriptor its RLIMIT_NOFILE allows.
 * Its capture was lost, said to be "no longer the directory opprof made
 * (not a directory now)", and record blamed a program that "never loaded
 * libopprof_record.so". Under a soft limit, opprof lifts it for its save at
 * the end and puts it back: the capture is whole. Under a full hard limit,
 * nothing can be opened: both say so. Output and status are the program's. */
TEST_CASE(a_program_that_ends_with_no_descriptor_left) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[8192], *out = NULL, *plain = NULL;
    snprintf(cmd, sizeof cmd, "ulimit -Hn");
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK(out && (!strcmp(out, "unlimited\n") || atol(out) > 64)); /* room to lift a soft limit of 64 */
    free(out);
    snprintf(cmd, sizeof cmd, "ulimit -Sn 64 && '%s' descriptors", toy());
    CHECK_INT(run_command(cmd, &plain), 4);
    CHECK_STR(plain, "descriptors full: yes\n");
    snprintf(cmd, sizeof cmd,
             "ulimit -Sn 64 && '%s/opprof' record --functions -o '%s/soft' -- '%s' descriptors 2>'%s/err'", bin_dir(),
             dir, toy(), dir);
    CHECK_INT(run_command(cmd, &out), 4);
    CHECK_STR(out, plain);
    free(out);
    CHECK_CONTAINS(out = report_of("soft"), "\"mid\"");
    free(out);
    snprintf(cmd, sizeof cmd,
             "ulimit -n 64 && '%s/opprof' record --functions -o '%s/hard' -- '%s' descriptors 2>&1 >/dev/null",
             bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 4);
    CHECK_CONTAINS(out, "Too many open files (the program holds every descriptor that its hard RLIMIT_NOFILE allows)");
    CHECK_CONTAINS(out, "ended normally and wrote no capture into");
    CHECK(out && !strstr(out, "never loaded") && !strstr(out, "not a directory"));
    free(out);
    CHECK(!exists_in_dir("hard"));
    free(plain);
    remove_tree(dir);
}

/* `opprof record MODE -o DIR/NAMEK -- record_toy ARGS` for each of the n
 * modes, after `shell &&` when not NULL (a ulimit): the program's output
 * and status (0) are `plain`'s, and its capture's report names each of
 * `reported` (NULL-terminated). */
static void like_its_plain_run(const char *shell, const char *args, const char *const *modes, int n, const char *plain,
                               const char *name, const char *const *reported) {
    for (int k = 0; k < n; k++) {
        char cmd[8192], capture[64], *out = NULL;
        snprintf(capture, sizeof capture, "%s%d", name, k);
        snprintf(cmd, sizeof cmd, "%s%s'%s/opprof' record %s -o '%s/%s' -- '%s' %s 2>/dev/null", shell ? shell : "",
                 shell ? " && " : "", bin_dir(), modes[k], dir, capture, toy(), args);
        CHECK_INT(run_command(cmd, &out), 0);
        CHECK_STR(out, plain);
        free(out);
        out = report_of(capture);
        for (const char *const *r = reported; *r; r++) CHECK_CONTAINS(out, *r);
        free(out);
    }
}

/* A program under an address-space limit (`ulimit -v`, RLIMIT_AS) that
 * allocates most of it. opprof reserved a region of 1 GiB for its threads'
 * blocks (never written, but counted): under 600 MB it could not start
 * ("out of memory", no capture), under 1.3 GB the program's own malloc of
 * 1,000 MiB failed where it succeeded without. The program's output and status
 * are now its own, and its capture is whole, under each way of recording. */
TEST_CASE(a_program_under_an_address_space_limit) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    const struct { long limit_kb, malloc_mb; } cases[] = {{600000, 400}, {1300000, 1000}};
    const char *modes[] = {"", "--memory", "--functions --memory", "--sample"};
    for (int c = 0; c < 2; c++) {
        char cmd[8192], *plain = NULL, said[64];
        snprintf(cmd, sizeof cmd, "ulimit -v %ld && '%s' reserve %ld", cases[c].limit_kb, toy(), cases[c].malloc_mb);
        CHECK_INT(run_command(cmd, &plain), 0);
        snprintf(said, sizeof said, "malloc of %ld MiB: ok\n", cases[c].malloc_mb);
        CHECK_STR(plain, said);
        char shell[64], args[64], name[32];
        snprintf(shell, sizeof shell, "ulimit -v %ld", cases[c].limit_kb);
        snprintf(args, sizeof args, "reserve %ld", cases[c].malloc_mb);
        snprintf(name, sizeof name, "limited%d-", c);
        like_its_plain_run(shell, args, modes, 4, plain, name, (const char *const[]){"\"rows\"", NULL});
        free(plain);
    }
    remove_tree(dir);
}

/* A program started with stderr closed (`prog 2>&-`) whose first file gets
 * fd 2: opprof's last line ("1 capture(s) written to ...") went into that
 * file. It holds what the program wrote and nothing else; the capture is
 * whole. */
TEST_CASE(a_program_started_with_stderr_closed) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[8192], path[4200], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/closed' -- '%s' output '%s/data.txt' 2>&-",
             bin_dir(), dir, toy(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/data.txt", dir);
    out = read_text(path);
    CHECK_STR(out, "data\n");
    free(out);
    CHECK_CONTAINS(out = report_of("closed"), "\"mid\"");
    free(out);
    remove_tree(dir);
}

/* A program's files keep the descriptors they get without opprof: the
 * sampler's perf events, opened before main, took 3 and 4, and the
 * program's first file got 5. Under each way of recording, the numbers the
 * program prints are its plain run's, and its capture is whole. */
TEST_CASE(a_program_whose_files_keep_their_numbers) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[8192], *plain = NULL;
    snprintf(cmd, sizeof cmd, "'%s' numbers", toy());
    CHECK_INT(run_command(cmd, &plain), 0);
    CHECK(plain && strlen(plain) > 2);
    const char *modes[] = {"", "--memory", "--functions --memory", "--sample", "--sample=500,dwarf --functions"};
    like_its_plain_run(NULL, "numbers", modes, 5, plain, "numbers", (const char *const[]){"\"rows\"", NULL});
    free(plain);
    remove_tree(dir);
}

/* A program that makes a user namespace (`unshare -r`, bubblewrap, rootless
 * containers) or joins one: the kernel gives it only to a process of one
 * thread, and opprof's watcher made every recorded one two: "unshare
 * failed: Invalid argument". opprof's threads end for the call and start
 * again: under each way of recording, the program says what its plain run
 * says, its capture is whole, and what it records after the call too (the
 * worker's leaf, main's mid). */
TEST_CASE(a_program_that_makes_a_user_namespace) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[8192], *out = NULL, *plain = NULL;
    snprintf(cmd, sizeof cmd, "'%s' namespaces", toy());
    CHECK_INT(run_command(cmd, &plain), 0);
    CHECK_STR(plain, "unshare: ok\nsetns: ok\n"); /* the host gives user namespaces */
    const char *modes[] = {"--functions", "--functions --memory", "--functions --sample",
                           "--functions --sample=500,dwarf"};
    like_its_plain_run(NULL, "namespaces", modes, 4, plain, "ns", (const char *const[]){"\"mid\"", "\"leaf\"", NULL});
    snprintf(cmd, sizeof cmd, "'%s/opprof' record -o '%s/wrapped' -- unshare -r '%s' 2>&1", bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK(out && !strstr(out, "unshare failed"));
    free(out);
    free(plain);
    remove_tree(dir);
}

/* A program that sets a locale whose decimal point is a comma (a user's
 * de_DE, by setlocale(LC_ALL, "")): opprof's trace inside it was no JSON
 * ("ts": 0,5) and its tables said "100,00%". They are C's now; the
 * program's own printf keeps its comma. The locale is compiled here
 * (localedef, Debian's locales). */
TEST_CASE(a_program_with_a_decimal_comma) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[8192], path[4200], *out = NULL;
    snprintf(cmd, sizeof cmd, "mkdir '%s/loc' && localedef -i de_DE -f UTF-8 '%s/loc/de_DE.UTF-8' 2>&1", dir, dir);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    snprintf(cmd, sizeof cmd,
             "LOCPATH='%s/loc' '%s/opprof' record --functions --memory --outputs trace,tables,html -o '%s/comma' -- "
             "'%s' locale de_DE.UTF-8 2>/dev/null",
             dir, bin_dir(), dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_STR(out, "1,5\n"); /* the program's own numbers: its locale's */
    free(out);
    CHECK_CONTAINS(out = report_of("comma"), "\"mid\""); /* the trace reads as JSON */
    free(out);
    snprintf(path, sizeof path, "%s/comma/trace-step-0.time.txt", dir);
    out = read_text(path);
    CHECK_CONTAINS(out, "100.00%");
    CHECK(out && !strstr(out, "100,00%"));
    free(out);
    remove_tree(dir);
}

/* quick_exit runs the at_quick_exit handlers, not atexit's: the capture was
 * lost ("it ended by _exit"). opprof saves in both; the status is the
 * program's. */
TEST_CASE(a_program_that_ends_by_quick_exit) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[8192], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/quick' -- '%s' quick_exit 7 2>&1", bin_dir(), dir,
             toy());
    CHECK_INT(run_command(cmd, &out), 7);
    CHECK(out && !strstr(out, "wrote no capture"));
    free(out);
    CHECK_CONTAINS(out = report_of("quick"), "\"mid\"");
    free(out);
    remove_tree(dir);
}

/* A program whose main thread ends by pthread_exit ends, by exit(0), when
 * its last thread does. opprof's watcher thread kept it running for ever:
 * `opprof record` waited with it (here, until timeout's 60 s). Now the
 * process ends with its last thread, with its capture, under each way of
 * recording. */
TEST_CASE(a_program_whose_main_thread_ends_first) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    const char *modes[] = {"--functions", "--functions --memory", "--functions --sample"};
    for (int k = 0; k < 3; k++) {
        char cmd[8192], *out = NULL, name[32];
        snprintf(name, sizeof name, "ended%d", k);
        snprintf(cmd, sizeof cmd, "timeout 60 '%s/opprof' record %s -o '%s/%s' -- '%s' main_exits 2>/dev/null",
                 bin_dir(), modes[k], dir, name, toy());
        CHECK_INT(run_command(cmd, &out), 0);
        CHECK_STR(out, "worker done\n");
        free(out);
        CHECK_CONTAINS(out = report_of(name), "\"mid\"");
        free(out);
    }
    remove_tree(dir);
}

/* make's recipe of several lines, each run by its own child: mkdir (which
 * allocates, so its capture is kept), a line that /bin/sh runs (a
 * redirection; dash ends by _exit, so it never gives its claim back), the
 * program with a redirection (sh forks it), and another such line. The
 * program's capture, of the most CPU time, is DIR: the claim of a shell that
 * had ended is taken in turn (the program ran without, and DIR was none),
 * and the level above settles what such a shell left (DIR was mkdir's, the
 * program's beside). */
TEST_CASE(a_make_recipe_of_several_lines) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], path[4200], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && printf 'run:\\n\\tmkdir -p out\\n\\techo start > out/a.txt\\n\\t%s mallocs 1000000 > "
             "out/x.txt\\n\\techo done > out/b.txt\\n' > Makefile && '%s/opprof' record --memory --outputs perfetto "
             "-o '%s/made' -- make -s run 2>&1; echo LEFT; ls -A '%s'",
             dir, toy(), bin_dir(), dir, dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "record_toy, which make ran in a child process (through /bin/sh)\n");
    CHECK_CONTAINS(out, "(the first: /usr/bin/mkdir): their captures were dropped\n");
    CHECK(out && !strstr(out, "was left by") && !strstr(strstr(out, "LEFT"), ".opprof-"));
    free(out);
    snprintf(path, sizeof path, "%s/made", dir);
    CHECK(memory_events(path) == 2000000);
    /* the program after a shell that ended by _exit takes the profile */
    char inner[4096];
    snprintf(inner, sizeof inner, "sh -c 'echo x > /dev/null; true'; '%s' mallocs 300000 >/dev/null", toy());
    sh_memory_capture("after", inner, "record_toy, which sh ran in a child process\n", "", 600000);
    remove_tree(dir);
}

/* Every memory event of a program that allocates 100,000 times is in its
 * capture (its .pftrace, the smaller trace): the capture's array of them,
 * 9.6 MB made at once at the exit, is a mapping of its own on huge pages
 * since 2026-12-07 (it faulted 4 KiB at a time), and nothing of it is lost. */
TEST_CASE(every_memory_event_of_a_large_capture) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char *out = NULL;
    out = sql_of_toy("--memory --outputs perfetto", "mallocs 100000", "many", "csv",
                     "SELECT count(*), sum(bytes), sum(bytes = 64), sum(bytes = -64) FROM memory");
    CHECK_STR(out, "\"count(*)\",\"sum(bytes)\",\"sum(bytes = 64)\",\"sum(bytes = -64)\"\n200000,0,100000,100000\n");
    free(out);
    remove_tree(dir);
}

/* A wrapper that runs the program by posix_spawn (GNU make's recipes,
 * ninja, Rust's Command): the C library execs in a child of its own, which
 * the exec wrappers do not reach; the program's capture is DIR, as a forking
 * wrapper's. A second program spawned takes the profile in turn. It recorded
 * the wrapper alone, and said the program called no instrumented function. */
/* cmd (a record of record_toy under wrappers) ends with status 0 and
 * says `said`, and DIR `name` holds the toy's leaf range. */
static void toys_capture_said(const char *cmd, const char *name, const char *said) {
    char *out = NULL;
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, said);
    free(out);
    CHECK_CONTAINS(out = report_of(name), "\"name\": \"leaf\"");
    free(out);
}

TEST_CASE(a_wrapper_that_spawns) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/spawns' -- '%s/../tests/spawn_target' 1 '%s' 2>&1",
             bin_dir(), dir, bin_dir(), toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "sum 42");
    CHECK_CONTAINS(out, "tests/record_toy, which ");
    CHECK_CONTAINS(out, "tests/spawn_target ran in a child process");
    CHECK(out && !strstr(out, "called no instrumented function"));
    free(out);
    CHECK_CONTAINS(out = report_of("spawns"), "\"name\": \"leaf\"");
    free(out);
    CHECK(!exists_in_dir("spawns" RECORD_CHILD_SUFFIX));
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/twice' -- '%s/../tests/spawn_target' 2 '%s' 2>&1",
             bin_dir(), dir, bin_dir(), toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "1 other program(s) that ");
    CHECK_CONTAINS(out, "tests/spawn_target ran one after another in child processes took the profile in turn");
    free(out);
    CHECK_CONTAINS(out = report_of("twice"), "\"name\": \"leaf\"");
    free(out);
    /* a level down, spawned then forked (make's `sh -c 'a && prog'`) and forked then spawned */
    snprintf(
        cmd, sizeof cmd,
        "'%s/opprof' record --functions -o '%s/spawn-sh' -- '%s/../tests/spawn_target' 1 sh -c \"true; '%s'\" 2>&1",
        bin_dir(), dir, bin_dir(), toy());
    toys_capture_said(cmd, "spawn-sh", "tests/spawn_target ran in a child process (through sh)");
    snprintf(
        cmd, sizeof cmd,
        "'%s/opprof' record --functions -o '%s/sh-spawn' -- sh -c \"'%s/../tests/spawn_target' 1 '%s'; true\" 2>&1",
        bin_dir(), dir, bin_dir(), toy());
    toys_capture_said(cmd, "sh-spawn", "which sh ran in a child process (through ");
    remove_tree(dir);
}

/* -o DIR relative, and a wrapper that changes directory before it runs
 * the program (`sh -c 'cd sub && prog'`, or with exec): the capture is DIR
 * where record was started, nothing in sub. It went to sub/, and record
 * said that sh ended by _exit. */
TEST_CASE(a_wrapper_that_changes_directory) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s/sub", dir);
    CHECK(mkdir(cmd, 0777) == 0);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/opprof' record --functions -o forks -- sh -c \"cd sub && '%s'\" 2>&1",
             dir, bin_dir(), toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "record_toy, which sh ran in a child process");
    free(out);
    CHECK_CONTAINS(out = report_of("forks"), "\"name\": \"leaf\"");
    free(out);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && '%s/opprof' record --functions -o execs -- sh -c \"cd sub && exec '%s'\" 2>&1", dir, bin_dir(),
             toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "sum 42");
    free(out);
    CHECK_CONTAINS(out = report_of("execs"), "\"name\": \"leaf\"");
    free(out);
    snprintf(cmd, sizeof cmd, "ls -A '%s/sub'", dir);
    run_command(cmd, &out);
    CHECK_STR(out, ""); /* nothing where the program went */
    free(out);
    remove_tree(dir);
}

/* A program that records ranges of its own and runs another (system(), a
 * helper) keeps DIR; the child's capture stays beside it, said. */
TEST_CASE(a_program_that_runs_another) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o '%s/own' -- '%s' run '%s' 2>&1", bin_dir(), dir, toy(),
             toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "child ended with 0");
    CHECK_CONTAINS(out, "has its own capture in '");
    CHECK_CONTAINS(out, "own" RECORD_CHILD_SUFFIX "'; this process's is '");
    CHECK_CONTAINS(out, "(it recorded ranges of its own)");
    CHECK_CONTAINS(out, "record_toy in a child process, whose capture is '");
    free(out);
    CHECK_CONTAINS(out = report_of("own"), "\"name\": \"mid\"");
    CHECK(out && !strstr(out, "\"name\": \"grow\"")); /* the child's function, not the parent's */
    free(out);
    CHECK_CONTAINS(out = report_of("own" RECORD_CHILD_SUFFIX), "\"name\": \"grow\"");
    free(out);
    /* the child's place is taken: record runs nothing */
    snprintf(cmd, sizeof cmd, "%s/own", dir);
    remove_tree(cmd);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record -o '%s/own' -- true 2>&1", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK_CONTAINS(out, "own" RECORD_CHILD_SUFFIX "' exists; name a new directory");
    free(out);
    remove_tree(dir);
}

/* elfutils is loaded when first needed: a profiled process that names no
 * function from ELF symbols and takes no sample never maps libdw; one that
 * cannot load it (OPPROF_LIBDW) says so and names functions by module and
 * offset, its capture whole. */
TEST_CASE(libdw_loaded_when_needed) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' record -o '%s/plain' -- sh -c 'echo maps $(grep -c libdw /proc/$$/maps)' 2>&1", bin_dir(),
             dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "maps 0");
    free(out);
    snprintf(cmd, sizeof cmd,
             "OPPROF_LIBDW=/nonexistent/libdw.so.1 '%s/opprof' record --functions -o '%s/nodw' -- '%s' 2>&1", bin_dir(),
             dir, toy());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "sum 42");
    CHECK_CONTAINS(out, "opprof: elfutils: cannot load /nonexistent/libdw.so.1 (");
    CHECK_CONTAINS(out, "function names from ELF symbols are left out");
    CHECK_CONTAINS(out, "record_toy+0x");
    free(out);
    CHECK_CONTAINS(out = report_of("nodw"), "record_toy+0x");
    free(out);
    remove_tree(dir);
}

/* usage: an unknown option, no command, an existing DIR, a command that cannot run */
TEST_CASE(usage_errors) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s/run", dir);
    mkdir(cmd, 0755);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --bogus -- true", bin_dir());
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK_CONTAINS(out, "Run 'opprof record --help' for the options.");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --memory", bin_dir());
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK_CONTAINS(out, "no command to run");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record -o '%s/run' -- true", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK_CONTAINS(out, "exists; name a new directory");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record -o '%s/none' -- /nonexistent/program", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 127);
    CHECK_CONTAINS(out, "cannot run '/nonexistent/program'");
    CHECK(out && !strstr(out, "wrote no capture")); /* one message: CMD never ran */
    free(out);
    remove_tree(dir);
}

/* The user's cache (OPPROF_MACHINE_CACHE, under dir) seeded with this machine's one-thread
 * profile as if measured before: an FMA peak of `gflops`, each level's bandwidth `gbs` / its
 * rank; its path in path. */
static void seed_cache(double gflops, double gbs, char *path, size_t size) {
    char cache[1024], cmd[4096];
    snprintf(cache, sizeof cache, "%s/machine-cache", dir);
    setenv("OPPROF_MACHINE_CACHE", cache, 1);
    CHECK_INT(opprof_machine_cache_path(1, path, size), 0);
    opprof_machine m;
    CHECK_INT(opprof_machine_identify(&m), 0);
    m.threads = 1;
    m.by_threads[0].threads = 1;
    m.by_threads[0].fma_peak_gflops = gflops;
    static const char *const levels[] = {"L1", "L2", "LLC", "DRAM"};
    for (int l = 0; l < 4; l++) {
        snprintf(m.by_threads[0].levels[l].name, sizeof m.by_threads[0].levels[l].name, "%s", levels[l]);
        m.by_threads[0].levels[l].bytes = l < 3 ? (int64_t)32768 << (4 * l) : 0;
        m.by_threads[0].levels[l].load_gbs = m.by_threads[0].levels[l].copy_gbs = gbs / (l + 1);
    }
    char *json = NULL;
    CHECK_INT(opprof_machine_json_to_string(&m, &json), 0);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cat > '%s'", cache, path);
    FILE *w = popen(cmd, "w");
    CHECK(w != NULL);
    if (w) {
        fputs(json ? json : "", w);
        CHECK_INT(pclose(w), 0);
    }
    opprof_free(json);
}

/* --roofline: the captures carry this machine's profile from the user's cache, taken before
 * CMD runs (one CPU given: the cache's one-thread profile, seeded here as if measured before) */
TEST_CASE(roofline_from_the_users_cache) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], *out = NULL, path[1500];
    seed_cache(100, 50, path, sizeof path);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && taskset -c 0 '%s/opprof' record --roofline -o roof -- '%s/first_capture' "
             "2>&1 >/dev/null && '%s/opprof' report --roofline roof/trace-step-0.json 2>&1",
             dir, bin_dir(), bin_dir(), bin_dir()); /* first_capture writes its files where it runs */
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "measured on this CPU before");
    CHECK_CONTAINS(out, "the roofs are those of the machine the trace was recorded on");
    CHECK_CONTAINS(out, "1 thread 100.0 GFLOP/s");
    free(out);
    /* profile_cpu --roofline takes the same cache */
    snprintf(cmd, sizeof cmd,
             "'%s/profile_cpu' --threads 1 --roofline '%s/pc' 2>&1 >/dev/null && "
             "'%s/opprof' report --roofline '%s/pc/cpu-step-4.json' 2>&1",
             bin_dir(), dir, bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "profile_cpu: the machine's ceilings from");
    CHECK_CONTAINS(out, "1 thread 100.0 GFLOP/s");
    free(out);
    unsetenv("OPPROF_MACHINE_CACHE");
    remove_tree(dir);
}

/* The FMA peak and each level's load bandwidth of a trace's machine (one thread), into v[5];
 * 0 when it has none. */
static int machine_of(const char *trace, double v[5]) {
    opprof_capture *c = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read(trace, NULL, &c, &err), 0);
    const opprof_machine *m = c ? opprof_capture_machine(c) : NULL;
    if (m) {
        v[0] = m->by_threads[0].fma_peak_gflops;
        for (int l = 0; l < 4; l++) v[1 + l] = m->by_threads[0].levels[l].load_gbs;
    }
    opprof_capture_free(c);
    return m != NULL;
}

/* The end of a long run measures the machine again, DRAM aside, and keeps the best of each
 * ceiling, in the capture and in the cache (OPPROF_MACHINE_REMEASURE_AFTER=0: every run is long); a short run,
 * or one that says never (-1), keeps the start's. The cache is seeded with ceilings far below
 * any machine's (0.01 GFLOP/s, 0.04 GB/s and less), so that what was measured shows whatever
 * the load. */
TEST_CASE(roofline_best_of_the_start_and_the_end) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cmd[4096], path[1500], trace[1200];
    static const char *const after[] = {"-1", "10", "0"};
    for (int k = 0; k < 3; k++) {
        seed_cache(0.01, 0.04, path, sizeof path);
        snprintf(cmd, sizeof cmd,
                 "cd '%s' && OPPROF_MACHINE_REMEASURE_AFTER=%s taskset -c 0 '%s/opprof' record --roofline "
                 "-o end%d -- '%s/first_capture' >/dev/null 2>&1",
                 dir, after[k], bin_dir(), k, bin_dir());
        CHECK_INT(system(cmd), 0);
        snprintf(trace, sizeof trace, "%s/end%d/trace-step-0.json", dir, k);
        double v[5] = {0}, cached[5] = {0};
        CHECK(machine_of(trace, v));
        opprof_machine m;
        CHECK_INT(opprof_machine_read(path, &m, NULL), 0);
        cached[0] = m.by_threads[0].fma_peak_gflops;
        for (int l = 0; l < 4; l++) cached[1 + l] = m.by_threads[0].levels[l].load_gbs;
        for (int f = 0; f < 5; f++) {
            double seeded = f ? 0.04 / f : 0.01;
            /* the start's, as the cache had them (DRAM's always: it is never measured in the program,
             * whose memory its buffer of 16 LLCs is not to take); the JSON writes 3 decimals */
            if (k < 2 || f == 4) {
                CHECK(fabs(v[f] - seeded) < 0.001);
                CHECK(fabs(cached[f] - seeded) < 0.001);
            } else { /* measured again: every figure a real one, the cache's the same */
                CHECK(v[f] > 1);
                CHECK(fabs(cached[f] - v[f]) < 0.001);
            }
        }
    }
    /* a threshold that is no number: said, and the default kept */
    char *out = NULL;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && OPPROF_MACHINE_REMEASURE_AFTER=soon taskset -c 0 '%s/opprof' record --roofline -o bad -- "
             "'%s/first_capture' 2>&1 >/dev/null",
             dir, bin_dir(), bin_dir());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "OPPROF_MACHINE_REMEASURE_AFTER='soon' ignored: not a whole number from -1 to");
    free(out);
    unsetenv("OPPROF_MACHINE_CACHE");
    remove_tree(dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_record_cli"); }
