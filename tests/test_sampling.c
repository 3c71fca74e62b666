/* test_sampling.c - native samples and off-CPU times: `opprof record
 * --sample` ranks an unchanged -O2 program's functions (weights 4 : 2 : 1,
 * the order only: never a share), profile_cpu's aten::addmm row names a
 * function of nn's matrix product as its top native frame and `stacks
 * --samples` nests the native frames under the operators, a range that
 * sleeps shows at least half its sleep off the CPU, samples survive the
 * trace, a process that may not open perf events records without samples
 * and says why, and bad input is said. */
#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "testutil.h"

static char dir[256];

/* `opprof record` preloads its library: not in sanitizer builds, whose
 * runtime must come first in a process (tests/CMakeLists.txt). */
#if OPPROF_TEST_PRELOAD
/* The self samples of `name` in a native-functions table, or -1. */
static long self_samples(const char *table, const char *name) {
    size_t n = strlen(name);
    for (const char *at = strstr(table, name); at; at = strstr(at + 1, name))
        if ((at == table || at[-1] == ' ' || at[-1] == '\n') && at[n] == ' ') return strtol(at + n, NULL, 10);
    return -1;
}

TEST_CASE(record_ranks_functions) {
    char *out = NULL;
    CHECK_INT(run_commandf(&out, "'%s/opprof' record --sample -o '%s/rec' -- '%s/../tests/sample_target' 8 2>&1",
                           bin_dir(), dir, bin_dir()),
              0);
    const char *functions = strstr(out, "Function  Self samples");
    CHECK(functions != NULL);
    if (!functions) functions = "";
    long four = self_samples(functions, "weight_four"), two = self_samples(functions, "weight_two"),
         one = self_samples(functions, "weight_one");
    CHECK(one > 0);
    CHECK(four > two); /* 2x apart each, about 460 samples: 5 standard deviations apart; the order, not the shares */
    CHECK(two > one);
    CHECK_CONTAINS(out, "Native functions by their samples:");
    free(out);
    /* the time off the CPU: the program's sleep */
    CHECK_INT(run_commandf(&out, "'%s/opprof' report --cpu-time --samples '%s/rec/trace-step-0.json'", bin_dir(), dir),
              0);
    CHECK_CONTAINS(out, "Off CPU");
    CHECK_CONTAINS(out, "Top native frame");
    free(out);
    /* the saved trace read back: its native functions by samples, in the report and in the HTML */
    CHECK_INT(run_commandf(&out, "'%s/opprof' report '%s/rec/trace-step-0.json' 2>/dev/null", bin_dir(), dir), 0);
    CHECK_CONTAINS(out, "Function  Self samples");
    CHECK_CONTAINS(out, "weight_four");
    CHECK_CONTAINS(out, "Native functions by their samples:");
    free(out);
    /* and for a script: report --json's "functions", the same rows as numbers */
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' report --json '%s/rec/trace-step-0.json' 2>/dev/null | python3 -c \"import "
                           "json,sys; f=json.load(sys.stdin)['functions']; w={r['name']: r for r in f}; "
                           "print(w['weight_four']['self_samples'] > w['weight_one']['self_samples'] > 0, "
                           "f[0]['self_samples'] >= f[-1]['self_samples'], 'hottest_line' in f[0])\"",
                           bin_dir(), dir),
              0);
    CHECK_STR(out, "True True True\n");
    free(out);
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' html '%s/rec/trace-step-0.json' '%s/rec.html' && grep -c "
                           "'<table class=\"sortable\" id=\"functions\">' '%s/rec.html'",
                           bin_dir(), dir, dir, dir),
              0);
    CHECK_CONTAINS(out, "1");
    free(out);
    char path[600];
    snprintf(path, sizeof path, "%s/rec/trace-step-0.html", dir); /* record's own report too */
    out = read_text(path);
    CHECK_CONTAINS(out, "<h2>Native functions by samples");
    CHECK_CONTAINS(out, ">weight_four<");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' record --sample=0 -o '%s/rec0' -- true 2>&1", bin_dir(), dir), 64);
    CHECK_CONTAINS(out, "--sample takes HZ[,fp|dwarf]");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' record --sample=100,sometimes -o '%s/rec0' -- true 2>&1", bin_dir(), dir),
              64);
    free(out);
    /* `--sample 250 CMD`: the rate, not a command named 250 (a wrong one is said as for --sample=) */
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' record --sample 250 -o '%s/rec250' true >/dev/null 2>&1 && "
                           "grep -o '\"period_ns\": [0-9]*' '%s/rec250/trace-step-0.json'",
                           bin_dir(), dir, dir),
              0);
    CHECK_CONTAINS(out, "\"period_ns\": 4000000");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' record --sample 0 -o '%s/rec0' true 2>&1", bin_dir(), dir), 64);
    CHECK_CONTAINS(out, "--sample takes HZ[,fp|dwarf], a rate in Hz from 1 to 1000000, not '0'");
    free(out);
}

/* The program has no frame pointers: a frame-pointer walk loses the leaves'
 * caller, DWARF unwinding of the copied stack finds it (main) for every one. */
TEST_CASE(dwarf_mode_keeps_callers) {
    char *out = NULL;
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' record --sample=1000,dwarf -o '%s/dwarf' -- '%s/../tests/sample_target' 2 "
                           ">/dev/null 2>&1 && '%s/opprof' stacks --samples '%s/dwarf/trace-step-0.json'",
                           bin_dir(), dir, bin_dir(), bin_dir(), dir),
              0);
    CHECK_CONTAINS(out, ";main;weight_four ");
    CHECK_CONTAINS(out, ";main;weight_two ");
    for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (!strncmp(line, "ProfilerStep*;", 14) && strstr(line, "weight_") &&
            strstr(line, "weight_") < strchr(line, '\n'))
            CHECK(strstr(line, ";main;weight_") != NULL && strstr(line, ";main;weight_") < strchr(line, '\n'));
    free(out);
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' record --sample=1000 -o '%s/fp' -- '%s/../tests/sample_target' 2 >/dev/null "
                           "2>&1 && '%s/opprof' stacks --samples '%s/fp/trace-step-0.json'",
                           bin_dir(), dir, bin_dir(), bin_dir(), dir),
              0);
    CHECK(strstr(out, ";main;weight_four ") == NULL); /* what DWARF mode is for */
    free(out);
}
#endif

TEST_CASE(profile_cpu_gemm_frame) {
    char *out = NULL;
    CHECK_INT(
        run_commandf(&out,
                     "'%s/profile_cpu' --quiet --batch 512 --steps 40 --wait 0 --warmup 1 --active 39 --sample 2000 "
                     "'%s/pc'",
                     bin_dir(), dir),
        0);
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' report --samples \"$(ls '%s'/pc/cpu-step-*.json)\"", bin_dir(), dir), 0);
    const char *row = strstr(out, "aten::addmm ");
    CHECK(row != NULL);
    char cell[192] = "", frame[128] = "";
    if (row) { /* the row's last cell: cells are apart by two spaces or more */
        const char *end = strchr(row, '\n');
        const char *p = end;
        while (p > row && p[-1] == ' ') p--;
        const char *q = p;
        while (q - 1 > row && !(q[-1] == ' ' && q[-2] == ' ')) q--;
        snprintf(cell, sizeof cell, "%.*s", (int)(p - q), q);
        snprintf(frame, sizeof frame, "%.*s", (int)strcspn(cell, " "), cell);
    }
    free(out);
    /* "FUNCTION (FILE:LINE)": the kernel's hottest line, from nn's debug information */
    CHECK_CONTAINS(cell, " (gemm_kernel.inc:");
    /* that frame is under nn's matrix product in the folded samples */
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' stacks --samples \"$(ls '%s'/pc/cpu-step-*.json)\" | grep ';aten::addmm;'",
                           bin_dir(), dir),
              0);
    CHECK_CONTAINS(out, "forward;aten::linear;aten::addmm;");
    CHECK_CONTAINS(out, "nn__sgemm;");
    char inner[160], last[160]; /* the frame, innermost or under the frames inlined into it */
    snprintf(inner, sizeof inner, ";%s;", frame);
    snprintf(last, sizeof last, ";%s ", frame);
    CHECK(frame[0] && (strstr(out, inner) || strstr(out, last)));
    free(out);
    /* the HTML report draws the samples' flame graph, the native frames under the operators */
    CHECK_INT(run_commandf(&out,
                           "'%s/opprof' html \"$(ls '%s'/pc/cpu-step-*.json)\" '%s/pc.html' && grep -c "
                           "'Flame graph of the samples' '%s/pc.html'",
                           bin_dir(), dir, dir, dir),
              0);
    CHECK_STR(out, "1\n");
    free(out);
}

static void sleep_ms(int ms) {
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

static const opprof_srcloc SLEEP = {"sleeping", "test", __FILE__, __LINE__, OPPROF_KIND_USER_ANNOTATION, NULL};

static opprof_capture *sleep_capture(int hz) {
    opprof_config cfg = opprof_config_default();
    cfg.sample_hz = hz;
    cfg.off_cpu = true;
    opprof_session *s = NULL;
    if (opprof_session_start(&s, &cfg)) return NULL;
    opprof_range r = opprof_range_begin(&SLEEP);
    sleep_ms(40);
    opprof_range_end(r);
    opprof_session_stop(s);
    opprof_capture *c = NULL;
    opprof_session_take_capture(s, &c);
    opprof_session_free(s);
    return c;
}

TEST_CASE(sleeping_range_off_cpu) {
    opprof_capture *c = sleep_capture(0);
    CHECK(c != NULL);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].key, "sleeping")) CHECK(rows[i].off_cpu_ns >= 20000000); /* half its 40 ms */
    size_t threads = 0; /* the sampler's drainer, asleep between drains, is opprof's and not there */
    const opprof_thread_info *info = opprof_capture_threads(c, &threads);
    for (size_t k = 0; k < threads; k++) CHECK(strncmp(info[k].name, "opprof", 6) != 0);
    CHECK(threads >= 1);
    char *text = NULL;
    CHECK_INT(opprof_averages_table_to_string(avg, &(opprof_table_options){.cpu_time = true}, &text), 0);
    CHECK_CONTAINS(text, "Off CPU");
    CHECK_CONTAINS(text, "spent a quarter or more of their time off the CPU");
    opprof_free(text);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

/* In this process: a leaf built without a frame pointer, sampled in DWARF
 * mode, keeps its caller. */
static volatile double g_sink;

__attribute__((noinline, optimize("omit-frame-pointer"))) static void busy_leaf(long n) {
    double x = 0;
    for (long i = 0; i < n; i++) x += (double)(i & 7) * 0.5;
    g_sink += x;
}

__attribute__((noinline)) static void busy_caller(void) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do { /* 100 ms of CPU however slow the build */
        busy_leaf(1000000);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    } while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 100000000L);
}

TEST_CASE(dwarf_in_process) {
    opprof_config cfg = opprof_config_default();
    cfg.sample_hz = 2000;
    cfg.sample_dwarf = true;
    opprof_session *s = NULL;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    busy_caller();
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *c = NULL;
    opprof_session_take_capture(s, &c);
    char *text = NULL;
    CHECK_INT(opprof_capture_stacks_to_string(c, OPPROF_STACKS_SAMPLES, &text), 0);
    CHECK_CONTAINS(text, ";dwarf_in_process;busy_caller;busy_leaf"); /* busy_leaf may be a clone (.constprop) */
    opprof_free(text);
    opprof_capture_free(c);
    opprof_session_free(s);
}

/* A thread that runs less than the period between samples is never sampled
 * (each thread's clock starts anew: perf record misses it too): 400 threads
 * of 0.2 ms of CPU each, one after another, and the capture says how little
 * of the threads' CPU time its samples cover; 100 ms on one thread says
 * nothing of it. */
static void *short_work(void *arg) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    do {
        busy_leaf(2000);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    } while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 200000L);
    return arg;
}

static bool says_coverage(void (*work)(void)) {
    opprof_config cfg = opprof_config_default();
    cfg.sample_hz = 1000;
    opprof_session *s = NULL;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    work();
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *c = NULL;
    opprof_session_take_capture(s, &c);
    size_t n = 0;
    const char *const *warnings = c ? opprof_capture_warnings(c, &n) : NULL;
    bool said = false;
    for (size_t k = 0; k < n; k++) said |= strstr(warnings[k], "the samples cover ") != NULL;
    opprof_capture_free(c);
    opprof_session_free(s);
    return said;
}

static void short_threads(void) {
    for (int k = 0; k < 400; k++) {
        pthread_t t;
        CHECK_INT(pthread_create(&t, NULL, short_work, NULL), 0);
        pthread_join(t, NULL);
    }
}

TEST_CASE(short_threads_said_unsampled) {
    CHECK(says_coverage(short_threads));
    CHECK(!says_coverage(busy_caller));
}

/* The times off the CPU as `opprof sql`'s thread_state, trace_processor's
 * table: a row each, in time order across threads, "R+" preempted, "S"
 * blocked. */
TEST_CASE(off_cpu_times_in_sql) {
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_new(&c), 0);
    uint32_t main_thread, worker;
    CHECK_INT(opprof_capture_add_thread(c, 7, "main", &main_thread), 0);
    CHECK_INT(opprof_capture_add_thread(c, 9, "worker", &worker), 0);
    CHECK_INT(opprof_capture_add_event(c, main_thread, "outer", OPPROF_KIND_USER_ANNOTATION, 0, 10000), 0);
    CHECK_INT(opprof_capture_add_off_cpu(c, worker, 5000, 2000, true), 0);
    CHECK_INT(opprof_capture_add_off_cpu(c, main_thread, 1000, 500, false), 0);
    CHECK_INT(opprof_capture_add_off_cpu(c, main_thread, 6000, 100, true), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    char path[512], *out = NULL;
    snprintf(path, sizeof path, "%s/off.json", dir);
    CHECK_INT(opprof_capture_chrome_write(c, path), 0);
    CHECK_INT(
        run_commandf(&out,
                     "'%s/opprof' sql '%s' 'SELECT ts - (SELECT min(ts) FROM thread_state) AS t, dur, tid, state, "
                     "cpu FROM thread_state JOIN thread USING (utid) ORDER BY thread_state.id' 2>/dev/null",
                     bin_dir(), path),
        0);
    CHECK_STR(out, "\"t\",\"dur\",\"tid\",\"state\",\"cpu\"\n0,500,7,\"S\",\"[NULL]\"\n"
                   "4000,2000,9,\"R+\",\"[NULL]\"\n5000,100,7,\"R+\",\"[NULL]\"\n");
    free(out);
    opprof_capture_free(c);
}

/* Samples, stacks, owners and off-CPU times read back from the trace. */
TEST_CASE(samples_round_trip) {
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_new(&c), 0);
    uint32_t t;
    CHECK_INT(opprof_capture_add_thread(c, 7, "main", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "outer", OPPROF_KIND_USER_ANNOTATION, 0, 10000), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "aten::addmm", OPPROF_KIND_CPU_OP, 1000, 5000), 0);
    const char *deep[] = {"kernel_tile", "gemm", "main"}, *shallow[] = {"main"};
    CHECK_INT(opprof_capture_add_sample(c, t, 2000, deep, 3), 0);
    CHECK_INT(opprof_capture_add_sample(c, t, 3000, deep, 3), 0);
    CHECK_INT(opprof_capture_add_sample(c, t, 8000, shallow, 1), 0);
    CHECK_INT(opprof_capture_add_sample(c, t, 20000, shallow, 1), 0); /* outside every range */
    CHECK_INT(opprof_capture_add_off_cpu(c, t, 6500, 1000, false), 0);
    CHECK_INT(opprof_capture_add_off_cpu(c, t, 7, -1, false), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_add_sample(c, 5, 1, shallow, 1), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_finish(c), 0);
    char path[512], *a = NULL, *b = NULL;
    snprintf(path, sizeof path, "%s/samples.json", dir);
    CHECK_INT(opprof_capture_chrome_write(c, path), 0);
    opprof_capture *back = NULL;
    CHECK_INT(opprof_capture_read(path, NULL, &back, NULL), 0);
    CHECK_INT(opprof_capture_stacks_to_string(c, OPPROF_STACKS_SAMPLES, &a), 0);
    CHECK_INT(opprof_capture_stacks_to_string(back, OPPROF_STACKS_SAMPLES, &b), 0);
    CHECK_STR(b, a);
    CHECK_CONTAINS(a, "outer;aten::addmm;main;gemm;kernel_tile 2\n");
    CHECK_CONTAINS(a, "outer;main 1\n");
    CHECK(a && !strncmp(a, "main 1\n", 7)); /* outside every range: the native frames alone */
    opprof_free(a);
    opprof_free(b);
    size_t n_off;
    const opprof_off_cpu *off = opprof_capture_off_cpu(back, &n_off);
    CHECK_INT(n_off, 1);
    if (n_off) CHECK_INT(off[0].duration_ns, 1000);
    int64_t *event_off = NULL;
    CHECK_INT(opprof_capture_event_off_cpu(back, &event_off), 0);
    size_t ne;
    const opprof_event *ev = opprof_capture_events(back, &ne);
    for (size_t i = 0; i < ne; i++)
        CHECK_INT(event_off[i], !strcmp(opprof_capture_name(back, ev[i].name), "outer") ? 1000 : 0);
    opprof_free(event_off);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(back, &avg), 0);
    size_t nr;
    const opprof_average_row *rows = opprof_averages_rows(avg, &nr);
    for (size_t i = 0; i < nr; i++)
        if (!strcmp(rows[i].key, "aten::addmm")) {
            CHECK_INT(rows[i].samples, 2);
            CHECK_STR(rows[i].top_frame, "kernel_tile");
        } else {
            CHECK_INT(rows[i].samples, 1);
            CHECK_INT(rows[i].total_samples, 3);
        }
    opprof_averages_free(avg);
    opprof_capture_free(back);
    opprof_capture_free(c);
}

/* The source of the innermost frame of the only stack with one, or "". */
static const char *first_source(const opprof_capture *c) {
    for (uint32_t k = 0; k < opprof_capture_stack_count(c); k++) {
        size_t n;
        const uint32_t *src = opprof_capture_stack_sources(c, k, &n);
        if (src && n && src[0] != UINT32_MAX) return opprof_capture_name(c, src[0]);
    }
    return "";
}

/* Frames' sources (file:line) kept through the Chrome trace. */
TEST_CASE(sources_round_trip) {
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_new(&c), 0);
    uint32_t t;
    CHECK_INT(opprof_capture_add_thread(c, 7, "main", &t), 0);
    const char *frames[] = {"kernel_tile", "main"}, *sources[] = {"gemm_kernel.inc:42", NULL};
    CHECK_INT(opprof_capture_add_sample_at(c, t, 2000, frames, sources, 2), 0);
    CHECK_INT(opprof_capture_add_sample(c, t, 3000, frames, 2), 0); /* the same frames, no source: another stack */
    CHECK_INT(opprof_capture_finish(c), 0);
    CHECK_INT(opprof_capture_stack_count(c), 2);
    CHECK_STR(first_source(c), "gemm_kernel.inc:42");
    char path[512];
    snprintf(path, sizeof path, "%s/sources.json", dir);
    CHECK_INT(opprof_capture_chrome_write(c, path), 0);
    opprof_capture *back = NULL;
    CHECK_INT(opprof_capture_read(path, NULL, &back, NULL), 0);
    CHECK_INT(opprof_capture_stack_count(back), 2);
    CHECK_STR(first_source(back), "gemm_kernel.inc:42");
    opprof_capture_free(back);
    /* and through Perfetto's format: a frame's source_path_iid and line_number */
    snprintf(path, sizeof path, "%s/sources.pftrace", dir);
    CHECK_INT(opprof_capture_perfetto_write(c, path), 0);
    char *out = NULL;
    CHECK_INT(run_commandf(&out,
                           "zcat '%s/tests/fixtures/perfetto/perfetto_trace.proto.gz' > '%s/perfetto_trace.proto' && "
                           "protoc --decode=perfetto.protos.Trace --proto_path='%s' perfetto_trace.proto < '%s' | "
                           "grep -e 'line_number: 42' -e 'str: \"gemm_kernel.inc\"' | sort | uniq -c | tr -s ' '",
                           getenv("OPPROF_SOURCE_DIR"), dir, dir, path),
              0);
    CHECK_STR(out, " 1 line_number: 42\n 1 str: \"gemm_kernel.inc\"\n");
    free(out);
    back = NULL;
    CHECK_INT(opprof_capture_read(path, NULL, &back, NULL), 0);
    CHECK_INT(opprof_capture_stack_count(back), 2);
    CHECK_STR(first_source(back), "gemm_kernel.inc:42");
    opprof_capture_free(back);
    opprof_capture_free(c);
}

/* The trace-event format's own samples, as speedscope's multi-thread example
 * writes them: "sf" ids into "stackFrames" (numbers, parents as numbers),
 * "ts" as a string, no "pid" (the thread of that tid), a "cpu", "name" and
 * "weight" of their own (refused: "ts is not a number"). */
TEST_CASE(trace_event_format_samples_read) {
    static const char trace[] =
        "{\"traceEvents\": [{\"ph\":\"X\",\"name\":\"frame\",\"pid\":3,\"tid\":7,\"ts\":100,\"dur\":10}],\n"
        " \"stackFrames\": {\"1\": {\"name\": \"main\", \"category\": \"x\"}, \"2\": {\"name\": \"work\", \"parent\": 1}},\n"
        " \"samples\": [{\"cpu\": 0, \"tid\": 7, \"ts\": \"101.5\", \"name\": \"cycles\", \"sf\": 2, \"weight\": 1},\n"
        "             {\"cpu\": 1, \"tid\": 7, \"ts\": \"102\", \"name\": \"cycles\", \"sf\": 1, \"weight\": 1}]}";
    opprof_capture *c = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read_buffer(trace, strlen(trace), NULL, &c, &err), 0);
    if (!c) {
        fprintf(stderr, "%s\n", err.message);
        return;
    }
    size_t n;
    const opprof_sample *sm = opprof_capture_samples(c, &n);
    CHECK_INT(n, 2);
    if (n == 2) CHECK_INT(sm[1].ts_ns - sm[0].ts_ns, 500);
    char *text = NULL;
    CHECK_INT(opprof_capture_stacks_to_string(c, OPPROF_STACKS_SAMPLES, &text), 0);
    CHECK_STR(text, "frame;main;work 1\nframe;main 1\n"); /* on the thread of tid 7, pid 3 */
    opprof_free(text);
    opprof_capture_free(c);
}

/* Chrome's own CPU profiles: keys in any order (args first), ids as "0x1",
 * nodes linked by "children", the chunk on another thread than its Profile,
 * another event's args.data that is no profile's. */
TEST_CASE(chrome_profiles_read) {
    static const char trace[] =
        "{\"traceEvents\": [\n"
        "{\"args\":{\"data\":{\"frame\":\"F1\"}},\"ph\":\"X\",\"name\":\"task\",\"pid\":5,\"tid\":9,\"ts\":1000,\"dur\":200},\n"
        "{\"args\":{\"data\":{\"startTime\":1000}},\"cat\":\"disabled-by-default-v8.cpu_profiler\",\"id\":\"0x1\","
        "\"name\":\"Profile\",\"ph\":\"P\",\"pid\":5,\"tid\":9,\"ts\":1000},\n"
        "{\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":["
        "{\"callFrame\":{\"functionName\":\"(root)\",\"url\":\"\",\"lineNumber\":-1},\"id\":1,\"children\":[2]},"
        "{\"callFrame\":{\"functionName\":\"main\",\"url\":\"app.js\",\"lineNumber\":9},\"id\":2,\"children\":[3]},"
        "{\"callFrame\":{\"functionName\":\"work\",\"url\":\"app.js\",\"lineNumber\":19},\"id\":3}],"
        "\"samples\":[3,3,2]},\"timeDeltas\":[100,50,25]}},\"cat\":\"disabled-by-default-v8.cpu_profiler\","
        "\"id\":\"0x1\",\"name\":\"ProfileChunk\",\"ph\":\"P\",\"pid\":5,\"tid\":77,\"ts\":1300}\n"
        "]}";
    opprof_capture *c = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read_buffer(trace, strlen(trace), NULL, &c, &err), 0);
    if (!c) return;
    char *text = NULL;
    CHECK_INT(opprof_capture_stacks_to_string(c, OPPROF_STACKS_SAMPLES, &text), 0);
    CHECK_STR(text, "task;main;work 2\ntask;main 1\n"); /* 1100 and 1150 in work, 1175 in main: all in task */
    opprof_free(text);
    CHECK_STR(first_source(c), "app.js:20");
    size_t n;
    const opprof_sample *sm = opprof_capture_samples(c, &n);
    CHECK_INT(n, 3);
    if (n == 3) CHECK_INT(sm[2].ts_ns - sm[0].ts_ns, 75000);
    opprof_capture_free(c);
}

TEST_CASE(bad_chrome_profiles_said) {
#define PROFILE_HEAD                                                                               \
    "{\"traceEvents\": [{\"ph\":\"P\",\"name\":\"Profile\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":5," \
    "\"args\":{\"data\":{\"startTime\":5}}},"
#define CHUNK(nodes, samples)                                                               \
    "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":6,"        \
    "\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":[" nodes "],\"samples\":[" samples "]}," \
    "\"timeDeltas\":[1]}}}]}"
#define NODE(id, parent, name) "{\"id\":" #id ",\"parent\":" #parent ",\"callFrame\":{\"functionName\":\"" name "\"}}"
    static const char *const cases[][2] = {
        {PROFILE_HEAD CHUNK("{\"callFrame\":{\"functionName\":\"f\"}}", "1"), "a node has no positive \"id\""},
        {PROFILE_HEAD CHUNK("{\"id\":2}", "2"), "a node's callFrame has no functionName"},
        {PROFILE_HEAD CHUNK(NODE(2, 3, "a") "," NODE(3, 2, "b"), "2"), "or its nodes loop"},
        {PROFILE_HEAD CHUNK("{\"id\":2,\"parent\":3,\"opprof_range\":1,\"callFrame\":{\"functionName\":\"a\"}},"
                            "{\"id\":3,\"parent\":2,\"opprof_range\":1,\"callFrame\":{\"functionName\":\"b\"}}",
                            "2"),
         "or its nodes loop"}, /* a loop of range nodes, which no frame counts: found by the fuzzer */
        {PROFILE_HEAD CHUNK(NODE(2, 0, "a") "," NODE(2, 0, "b"), "2"), "gives node 2 twice"},
        {PROFILE_HEAD CHUNK(NODE(2, 0, "a"), "\"x\""), "samples are not node ids"},
    };
#undef NODE
#undef CHUNK
#undef PROFILE_HEAD
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        opprof_capture *c = NULL;
        opprof_read_error err;
        CHECK_INT(opprof_capture_read_buffer(cases[i][0], strlen(cases[i][0]), NULL, &c, &err), OPPROF_EFORMAT);
        CHECK_CONTAINS(err.message, cases[i][1]);
        CHECK(c == NULL);
    }
    /* samples naming nodes that no chunk gives (Chrome 141's profile cut short,
     * which Perfetto and speedscope open): read, those samples left out and counted */
    static const char cut[] = "{\"traceEvents\": [{\"ph\":\"P\",\"name\":\"Profile\",\"id\":1,\"pid\":1,\"tid\":1,"
                              "\"ts\":5,\"args\":{\"data\":{\"startTime\":5}}},"
                              "{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":6,"
                              "\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":[{\"id\":1,\"parent\":0,\"callFrame\":"
                              "{\"functionName\":\"(root)\"}},{\"id\":2,\"parent\":1,\"callFrame\":{\"functionName\":"
                              "\"f\"}}],\"samples\":[2,9,2,752]},\"timeDeltas\":[1,1,1,1]}}}]}";
    opprof_capture *cutc = NULL;
    CHECK_INT(opprof_capture_read_buffer(cut, strlen(cut), NULL, &cutc, NULL), 0);
    if (cutc) {
        size_t n, nw;
        opprof_capture_samples(cutc, &n);
        CHECK_INT(n, 2);
        const char *const *w = opprof_capture_warnings(cutc, &nw);
        bool said = false;
        for (size_t i = 0; i < nw; i++)
            said |= strstr(w[i], "2 of its 4 samples name a node that it does not give") != NULL;
        CHECK(said);
        opprof_capture_free(cutc);
    }
    /* a chunk without its Profile: read, its samples left out and said */
    static const char orphan[] =
        "{\"traceEvents\": [{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"id\":4,\"pid\":1,\"tid\":1,"
        "\"ts\":6,\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":[{\"id\":1,\"callFrame\":"
        "{\"functionName\":\"f\"}}],\"samples\":[1]},\"timeDeltas\":[1]}}}]}";
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read_buffer(orphan, strlen(orphan), NULL, &c, NULL), 0);
    if (c) {
        size_t n, nw;
        opprof_capture_samples(c, &n);
        CHECK_INT(n, 0);
        const char *const *w = opprof_capture_warnings(c, &nw);
        CHECK(nw >= 1 && w && strstr(w[nw - 1], "no \"Profile\" event") &&
              strstr(w[nw - 1], "its 1 samples are left out"));
        opprof_capture_free(c);
    }
}

/* Samples and off-CPU times in Perfetto's format: PerfSample packets with
 * interned callstacks (protoc decodes them with Perfetto's schema), a counter
 * track per thread; read back, the same stacks and off-CPU times. */
TEST_CASE(samples_in_pftrace) {
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_new(&c), 0);
    uint32_t t;
    CHECK_INT(opprof_capture_add_thread(c, 7, "main", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "outer", OPPROF_KIND_USER_ANNOTATION, 0, 10000), 0);
    const char *deep[] = {"kernel_tile", "gemm", "main"}, *shallow[] = {"main"};
    CHECK_INT(opprof_capture_add_sample(c, t, 2000, deep, 3), 0);
    CHECK_INT(opprof_capture_add_sample(c, t, 3000, deep, 3), 0);
    CHECK_INT(opprof_capture_add_sample(c, t, 8000, shallow, 1), 0);
    CHECK_INT(opprof_capture_add_off_cpu(c, t, 4000, 1500, true), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    char path[512], *a = NULL, *b = NULL, *out = NULL;
    snprintf(path, sizeof path, "%s/samples.pftrace", dir);
    CHECK_INT(opprof_capture_perfetto_write(c, path), 0);
    CHECK_INT(run_commandf(&out,
                           "zcat '%s/tests/fixtures/perfetto/perfetto_trace.proto.gz' > '%s/perfetto_trace.proto' && "
                           "protoc --decode=perfetto.protos.Trace --proto_path='%s' perfetto_trace.proto < '%s' | "
                           "grep -c -e 'perf_sample {' -e 'callstacks {' -e 'frames {'",
                           getenv("OPPROF_SOURCE_DIR"), dir, dir, path),
              0);
    CHECK_STR(out, "8\n"); /* 3 samples, 2 callstacks, 3 frames */
    free(out);
    opprof_capture *back = NULL;
    CHECK_INT(opprof_capture_read(path, NULL, &back, NULL), 0);
    CHECK_INT(opprof_capture_stacks_to_string(c, OPPROF_STACKS_SAMPLES, &a), 0);
    CHECK_INT(opprof_capture_stacks_to_string(back, OPPROF_STACKS_SAMPLES, &b), 0);
    CHECK_STR(b, a);
    opprof_free(a);
    opprof_free(b);
    size_t n;
    const opprof_off_cpu *off = opprof_capture_off_cpu(back, &n);
    CHECK_INT(n, 1);
    if (n) {
        CHECK_INT(off[0].start_ns, 4000);
        CHECK_INT(off[0].duration_ns, 1500);
        CHECK(off[0].preempted);
    }
    opprof_capture_free(back);
    opprof_capture_free(c);
}

TEST_CASE(bad_sample_input_said) {
    static const char *const cases[][2] = {
        {"{\"traceEvents\": [], \"stackFrames\": {}, \"samples\": [{\"pid\": 1, \"tid\": 1, \"ts\": 1, \"sf\": \"9\"}]}",
         "frame '9' is not in stackFrames"},
        {"{\"traceEvents\": [], \"stackFrames\": {\"1\": {\"name\": \"a\", \"parent\": \"1\"}}, \"samples\": [{\"pid\": 1, "
         "\"tid\": 1, \"ts\": 1, \"sf\": \"1\"}]}",
         "frames that loop"},
        {"{\"traceEvents\": [], \"stackFrames\": {\"1\": {\"parent\": \"2\"}}}", "frame '1' has no name"},
        {"{\"traceEvents\": [], \"samples\": [{\"pid\": 1, \"ts\": 1}]}", "lacks \"tid\" or \"ts\""},
        {"{\"traceEvents\": [], \"opprof_off_cpu\": [{\"pid\": 1, \"tid\": 1, \"ts\": 1}]}",
         "lacks \"pid\", \"tid\", \"ts\" or \"dur\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        opprof_capture *c = NULL;
        opprof_read_error err;
        CHECK_INT(opprof_capture_read_buffer(cases[i][0], strlen(cases[i][0]), NULL, &c, &err), OPPROF_EFORMAT);
        CHECK_CONTAINS(err.message, cases[i][1]);
        CHECK(c == NULL);
    }
    char *out = NULL;
    CHECK_INT(run_commandf(&out, "'%s/profile_cpu' --sample 0 '%s/bad' 2>&1", bin_dir(), dir), 64);
    CHECK_CONTAINS(out, "--sample");
    free(out);
    CHECK_INT(run_commandf(&out,
                           "OPPROF_TRACE='%s/env' OPPROF_SAMPLE=often '%s/../tests/autostart_target' steps 1 2>&1", dir,
                           bin_dir()),
              0);
    CHECK_CONTAINS(out, "OPPROF_SAMPLE");
    free(out);
    opprof_session *s = NULL;
    opprof_config cfg = opprof_config_default();
    cfg.sample_hz = -1;
    CHECK_INT(opprof_session_start(&s, &cfg), OPPROF_EINVAL);
}

/* A rate above the kernel's limit is clamped, and said. */
TEST_CASE(rate_clamped) {
    long max = 0;
    FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
    if (f && fscanf(f, "%ld", &max) != 1) max = 0;
    if (f) fclose(f);
    opprof_capture *c = sleep_capture(max > 0 && max < 1000000 ? (int)max + 1 : 1000000);
    CHECK(c != NULL);
    size_t n;
    const char *const *w = opprof_capture_warnings(c, &n);
    bool said = false;
    for (size_t i = 0; i < n; i++)
        said |= strstr(w[i], "the kernel's limit") != NULL || strstr(w[i], "no samples:") != NULL;
    CHECK(said);
    opprof_capture_free(c);
}

/* perf_event_open refused (as in a seccomp'd container): recording goes on,
 * and the capture says why it has no samples. */
static void refuse_perf_events(void) {
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof filter / sizeof *filter, filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) _exit(3);
}

TEST_CASE(no_permission_said) {
    pid_t child = fork();
    if (child == 0) {
        refuse_perf_events();
        opprof_capture *c = sleep_capture(1000);
        if (!c) _exit(4);
        size_t n, n_samples, ne;
        const char *const *w = opprof_capture_warnings(c, &n);
        opprof_capture_samples(c, &n_samples);
        opprof_capture_events(c, &ne);
        int said = 0;
        for (size_t i = 0; i < n; i++) said += strstr(w[i], "no samples: perf_event_open was refused") != NULL;
        _exit(said == 1 && n_samples == 0 && ne >= 1 ? 0 : 5);
    }
    int status = -1;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK_INT(WEXITSTATUS(status), 0);
}

static int run_all(int argc, char **argv) {
    if (!make_temp_dir(dir, sizeof dir)) return 1;
    int rc = check_main(argc, argv, "test_sampling");
    remove_tree(dir);
    return rc;
}

int main(int argc, char **argv) { return run_all(argc, argv); }
