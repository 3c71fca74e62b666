/* test_engine.c - the recording API on a real engine shape (examples/engine:
 * a scheduler thread, two workers, a custom int8 operator): its trace holds
 * the counter samples, the instants, each request's flow from a "schedule"
 * range on one thread to a "serve" range on another, the async ranges, the
 * arguments on the right ranges, and a FLOPs / GFLOP/s / GB/s row for the
 * custom operator; the reader takes it back with its marks, and the HTML
 * report draws the counter. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <stdbool.h>
#include <stdlib.h>
#include <yajl/yajl_tree.h>

enum { REQUESTS = 6, TOKENS = 4 };

static yajl_val get(yajl_val v, const char *key, yajl_type t) {
    const char *p[] = {key, NULL};
    return v ? yajl_tree_get(v, p, t) : NULL;
}

static const char *str(yajl_val v, const char *key) {
    yajl_val s = get(v, key, yajl_t_string);
    return s ? YAJL_GET_STRING(s) : "";
}

static long long num(yajl_val v, const char *key) {
    yajl_val n = get(v, key, yajl_t_number);
    return n ? YAJL_GET_INTEGER(n) : -1;
}

static double dnum(yajl_val v, const char *key) {
    yajl_val n = get(v, key, yajl_t_number);
    return n ? YAJL_GET_DOUBLE(n) : -1;
}

/* The X event named `name` on thread `tid` that contains time `ts`, or NULL. */
static yajl_val slice_at(yajl_val events, const char *name, long long tid, double ts) {
    for (size_t i = 0; i < events->u.array.len; i++) {
        yajl_val e = events->u.array.values[i];
        if (strcmp(str(e, "ph"), "X") || strcmp(str(e, "name"), name) || num(e, "tid") != tid) continue;
        double s = dnum(e, "ts"), d = dnum(e, "dur");
        if (s <= ts && ts <= s + d) return e;
    }
    return NULL;
}

/* The engine run into DIR/run (dir: a new temporary directory); path: its trace. */
static void engine_run(char *dir, size_t dir_size, char *path, size_t path_size) {
    char cmd[2048], *out = NULL;
    CHECK(make_temp_dir(dir, dir_size) != NULL);
    snprintf(cmd, sizeof cmd, "'%s/engine' '%s/run'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "my::int8_gemm");
    free(out);
    snprintf(path, path_size, "%s/run/engine.json", dir);
}

/* The trace has every mark the engine made: counters, instants of each
 * scope, FLOPs and bytes, arguments, flows across threads, async ranges. */
TEST_CASE(trace_has_every_mark) {
    char dir[256], path[512];
    engine_run(dir, sizeof dir, path, sizeof path);
    char *text = read_text(path), err[256];
    yajl_val root = text ? yajl_tree_parse(text, err, sizeof err) : NULL;
    CHECK(root != NULL);
    yajl_val events = get(root, "traceEvents", yajl_t_array);
    CHECK(events != NULL);
    int counters = 0, tokens = 0, arrivals = 0, gemm = 0, serve_args = 0, flows_ok = 0, async_b = 0, async_e = 0;
    long long last_kv = 0;
    for (size_t i = 0; events && i < events->u.array.len; i++) {
        yajl_val e = events->u.array.values[i];
        const char *ph = str(e, "ph"), *name = str(e, "name");
        yajl_val args = get(e, "args", yajl_t_object);
        if (!strcmp(ph, "C") && !strcmp(name, "kv_cache_bytes")) {
            counters++;
            long long v = num(args, "kv_cache_bytes");
            if (v > last_kv) last_kv = v;
        }
        if (!strcmp(ph, "i") && !strcmp(name, "token")) tokens += !strcmp(str(e, "s"), "t");
        if (!strcmp(ph, "i") && !strcmp(name, "request arrived")) arrivals += !strcmp(str(e, "s"), "p");
        if (!strcmp(ph, "X") && !strcmp(name, "my::int8_gemm"))
            gemm += num(args, "flops") == 2LL * 8 * 64 * 64 && num(args, "bytes") == 8 * 64 + 64 * 64 + 8 * 64 * 4;
        if (!strcmp(ph, "X") && !strcmp(name, "serve"))
            serve_args += num(args, "request") >= 1 && num(args, "request") <= REQUESTS &&
                          !strcmp(str(args, "model"), "toy-int8");
        if (!strcmp(ph, "b") && !strcmp(name, "request")) async_b++;
        if (!strcmp(ph, "e") && !strcmp(name, "request")) async_e++;
        if (!strcmp(ph, "s")) { /* its "f": same id, bound to a "serve" slice on another thread */
            long long id = num(e, "id"), tid = num(e, "tid");
            bool bound = slice_at(events, "schedule", tid, dnum(e, "ts")) != NULL;
            for (size_t j = 0; j < events->u.array.len; j++) {
                yajl_val f = events->u.array.values[j];
                if (strcmp(str(f, "ph"), "f") || num(f, "id") != id) continue;
                if (bound && num(f, "tid") != tid && !strcmp(str(f, "bp"), "e") &&
                    slice_at(events, "serve", num(f, "tid"), dnum(f, "ts")))
                    flows_ok++;
            }
        }
    }
    CHECK_INT(counters, REQUESTS * TOKENS);
    CHECK_INT(last_kv, REQUESTS * TOKENS * 2 * 64 * 2);
    CHECK_INT(tokens, REQUESTS * TOKENS);
    CHECK_INT(arrivals, REQUESTS);
    CHECK_INT(gemm, REQUESTS * TOKENS);
    CHECK_INT(serve_args, REQUESTS);
    CHECK_INT(flows_ok, REQUESTS);
    CHECK_INT(async_b, REQUESTS);
    CHECK_INT(async_e, REQUESTS);
    yajl_tree_free(root);
    free(text);
    remove_tree(dir);
}

/* the custom operator's row: its FLOPs, GFLOP/s and GB/s, from the trace read
 * back; the marks kept when read, and valid */
TEST_CASE(marks_read_back) {
    char dir[256], cmd[2048], path[512], *out = NULL;
    engine_run(dir, sizeof dir, path, sizeof path);
    snprintf(cmd, sizeof cmd, "'%s/opprof' report --flops '%s' | grep 'my::int8_gemm'", bin_dir(), path);
    CHECK_INT(run_command(cmd, &out), 0);
    char name[64], flops[32], gflops[32], gbs[32];
    int calls = 0;
    if (out && sscanf(out, "%63s %*s %*s %*s %*s %*s %d %31s %31s %31s", name, &calls, flops, gflops, gbs) == 5) {
        CHECK_INT(calls, REQUESTS * TOKENS);
        CHECK_STR(flops, "1.573"); /* 24 x 65536 FLOPs, in MFLOPs */
        CHECK(atof(gflops) > 0 && atof(gbs) > 0);
    } else {
        CHECK(!"the my::int8_gemm row has calls, FLOPs, GFLOP/s and GB/s");
    }
    free(out);
    /* read back, the marks are kept: a trace written again has them too */
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read(path, NULL, &c, NULL), 0);
    size_t n_marks = 0;
    const opprof_mark *m = c ? opprof_capture_marks(c, &n_marks) : NULL;
    int kinds[OPPROF_MARK_ASYNC_END + 1] = {0};
    for (size_t k = 0; k < n_marks; k++) kinds[m[k].kind]++;
    CHECK_INT(kinds[OPPROF_MARK_COUNTER], REQUESTS * TOKENS);
    CHECK_INT(kinds[OPPROF_MARK_INSTANT], REQUESTS * TOKENS + REQUESTS);
    CHECK_INT(kinds[OPPROF_MARK_FLOPS], REQUESTS * TOKENS);
    CHECK_INT(kinds[OPPROF_MARK_BYTES], REQUESTS * TOKENS);
    CHECK_INT(kinds[OPPROF_MARK_ARG_STR], REQUESTS);
    CHECK_INT(kinds[OPPROF_MARK_ARG_DOUBLE], REQUESTS * TOKENS);
    CHECK_INT(kinds[OPPROF_MARK_FLOW_BEGIN], REQUESTS);
    CHECK_INT(kinds[OPPROF_MARK_FLOW_END], REQUESTS);
    CHECK_INT(kinds[OPPROF_MARK_ASYNC_BEGIN], REQUESTS);
    opprof_capture_free(c);
    snprintf(cmd, sizeof cmd, "'%s/opprof' check '%s'", bin_dir(), path);
    CHECK_INT(run_command(cmd, &out), 0); /* every phase it wrote is valid */
    free(out);
    remove_tree(dir);
}

/* the HTML report draws the counter and shows arguments on hover */
TEST_CASE(html_draws_the_counter) {
    char dir[256], path[512];
    engine_run(dir, sizeof dir, path, sizeof path);
    snprintf(path, sizeof path, "%s/run/engine.html", dir);
    char *text = read_text(path);
    CHECK_CONTAINS(text, "<h2>Counter <span class=\"note\">kv_cache_bytes (24 samples");
    CHECK_CONTAINS(text, "model=toy-int8");
    free(text);
    remove_tree(dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_engine"); }
