/* test_parallel.c - operators computed by a thread pool (opprof_range_part_of)
 * and ranges known after the fact (opprof_range_begin_at/_end_at): a run of
 * parts is one call with its wall time, threads, imbalance and wait, the same
 * from a trace as from a live capture. */
#include "check.h"
#include "rows.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <math.h>
#include <pthread.h>
#include <string.h>

/* Run 1: parts [0, 100) on thread 1 and [10, 70) on thread 2 (span 100, sum
 * 160, longest 100, mean 80); run 2: [200, 260) on both (span 60, sum 120).
 * Only the first part of run 1 has input shapes. */
static const char TRACE[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"name\":\"pool::gemm\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100,"
    "\"args\":{\"part_of\":1,\"Input Dims\":[[4,8]],\"Input type\":[\"q8_0\"]}},"
    "{\"ph\":\"X\",\"name\":\"pool::gemm\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":2,\"ts\":10,\"dur\":60,\"args\":{\"part_of\":1}},"
    "{\"ph\":\"X\",\"name\":\"pool::gemm\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":60,\"args\":{\"part_of\":2}},"
    "{\"ph\":\"X\",\"name\":\"pool::gemm\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":2,\"ts\":200,\"dur\":60,\"args\":{\"part_of\":2}},"
    "{\"ph\":\"X\",\"name\":\"other\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":300,\"dur\":5}"
    "]}";

static void check_runs(const opprof_averages *avg) {
    const opprof_average_row *g = row(avg, "pool::gemm"), *o = row(avg, "other");
    CHECK(g && o);
    if (!g || !o) return;
    CHECK_INT(g->calls, 2);
    CHECK_INT(g->total_ns, 280000);
    CHECK_INT(g->wall_ns, 160000);
    CHECK_INT(g->wait_ns, 40000);
    CHECK_INT(g->threads, 2);
    CHECK(fabs(g->imbalance - 160.0 / 140.0) < 1e-9);
    CHECK_INT(o->calls, 1);
    CHECK_INT(o->wall_ns, 5000);
    CHECK_INT(o->threads, 1);
    CHECK(o->imbalance == 0);
}

TEST_CASE(runs_from_a_trace) {
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read_buffer(TRACE, sizeof TRACE - 1, NULL, &c, NULL), 0);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    check_runs(avg);
    opprof_table_options o = {.sort = OPPROF_SORT_SELF_CPU_TIME};
    char *text = NULL, *json = NULL;
    CHECK_INT(opprof_averages_table_to_string(avg, &o, &text), 0);
    CHECK_CONTAINS(text, "Wall total");
    CHECK_CONTAINS(text, "Imbalance");
    CHECK_CONTAINS(text, "1.14x");
    CHECK_INT(opprof_averages_json_to_string(avg, &o, &json), 0);
    CHECK_CONTAINS(json, "\"wall_us\": 160");
    CHECK_CONTAINS(json, "\"wait_us\": 40");
    CHECK_CONTAINS(json, "\"threads\": 2");
    opprof_free(text);
    opprof_free(json);
    opprof_averages_free(avg);

    /* by input shape: every part joins the run's described part */
    opprof_averages_options by_shape = {.group_by_input_shape = true};
    CHECK_INT(opprof_capture_averages_ex(c, &by_shape, &avg), 0);
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    int64_t gemm_calls = 0, described = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].key, "pool::gemm") == 0) {
            gemm_calls += rows[i].calls;
            if (strcmp(rows[i].input_shapes, "[[4, 8]]") == 0) described = rows[i].calls;
        }
    CHECK_INT(gemm_calls, 2);
    CHECK_INT(described, 1);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

/* Without parts, no wall-time column. */
TEST_CASE(no_parts_no_columns) {
    static const char plain[] =
        "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":10}]}";
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read_buffer(plain, sizeof plain - 1, NULL, &c, NULL), 0);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    char *text = NULL;
    opprof_table_options o = {.sort = OPPROF_SORT_SELF_CPU_TIME};
    CHECK_INT(opprof_averages_table_to_string(avg, &o, &text), 0);
    CHECK(text && !strstr(text, "Wall total"));
    opprof_free(text);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

static opprof_capture *record(void (*body)(void)) {
    opprof_config cfg = opprof_config_default();
    cfg.record_steps = false;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    body();
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_session_take_capture(s, &c), 0);
    opprof_session_free(s);
    return c;
}

static const opprof_event *event_named(const opprof_capture *c, const char *name, size_t *index) {
    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(opprof_capture_name(c, ev[i].name), name) == 0) {
            if (index) *index = i;
            return &ev[i];
        }
    return NULL;
}

/* A range begun after its start: it encloses what ran since, and takes its arguments. */
static void late_range(void) {
    opprof_time t0 = opprof_now();
    {
        OPPROF_SCOPE("inside");
    }
    opprof_range r = opprof_range_begin_at(OPPROF_SRCLOC("late", OPPROF_KIND_CPU_OP), t0);
    CHECK(r != 0);
    opprof_range_flops(1234);
    opprof_range_end_at(r, opprof_now());
    /* an end before its begin ends at the begin; a start before the window at its opening */
    opprof_time before = opprof_now();
    opprof_range z = opprof_range_begin_at(OPPROF_SRCLOC("zero", OPPROF_KIND_CPU_OP), opprof_now());
    opprof_range_end_at(z, before);
    opprof_range e = opprof_range_begin_at(OPPROF_SRCLOC("early", OPPROF_KIND_CPU_OP), 1);
    opprof_range_end_at(e, opprof_now());
    opprof_range_end_at(0, opprof_now()); /* nothing */
    /* an end to come ends now: what the thread records next starts after it */
    opprof_range f = opprof_range_begin_at(OPPROF_SRCLOC("future", OPPROF_KIND_CPU_OP), opprof_now());
    opprof_range_end_at(f, opprof_now() + (1ull << 40));
    {
        OPPROF_SCOPE("after");
    }
}

TEST_CASE(ranges_after_the_fact) {
    opprof_capture *c = record(late_range);
    size_t late_i = 0;
    const opprof_event *late = event_named(c, "late", &late_i), *inside = event_named(c, "inside", NULL);
    const opprof_event *zero = event_named(c, "zero", NULL), *early = event_named(c, "early", NULL);
    CHECK(late && inside && zero && early);
    if (late && inside && zero && early) {
        CHECK(late->start_ns <= inside->start_ns);
        CHECK(late->start_ns + late->duration_ns >= inside->start_ns + inside->duration_ns);
        CHECK_INT(inside->parent, (int64_t)late_i);
        CHECK_INT(zero->duration_ns, 0);
        CHECK(early->start_ns >= 0);
    }
    const opprof_event *future = event_named(c, "future", NULL), *after = event_named(c, "after", NULL);
    CHECK(future && after);
    if (future && after) CHECK(future->start_ns + future->duration_ns <= after->start_ns);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    const opprof_average_row *r = row(avg, "late");
    CHECK(r && r->flops == 1234);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

static pthread_barrier_t g_start;

static void *part(void *arg) {
    pthread_barrier_wait(&g_start); /* both parts are recorded in the window */
    OPPROF_OP_SCOPE("pool::op");
    opprof_range_part_of((uint64_t)(uintptr_t)arg);
    return NULL;
}

static void two_runs_on_two_threads(void) {
    for (uintptr_t id = 1; id <= 2; id++) {
        pthread_t t[2];
        pthread_barrier_init(&g_start, NULL, 2);
        for (int i = 0; i < 2; i++) CHECK_INT(pthread_create(&t[i], NULL, part, (void *)id), 0);
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&g_start);
    }
}

TEST_CASE(parts_on_threads) {
    opprof_capture *c = record(two_runs_on_two_threads);
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    const opprof_average_row *r = row(avg, "pool::op");
    CHECK(r != NULL);
    if (r) {
        CHECK_INT(r->calls, 2);
        CHECK_INT(r->threads, 2);
        CHECK(r->wall_ns >= r->total_ns / 2); /* a run's span is at least its longest part */
        CHECK_INT(r->wait_ns, 2 * r->wall_ns - r->total_ns);
    }
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_parallel"); }
