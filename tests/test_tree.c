/* test_tree.c - nesting, self time and memory attribution on hand-built
 * event lists. */
#include "check.h"
#include "rows.h"

#include <opprof/capture.h>

static int parent_name(const opprof_capture *c, size_t i, char *buf, size_t size) {
    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    if (ev[i].parent < 0) return snprintf(buf, size, "-");
    return snprintf(buf, size, "%s", opprof_capture_name(c, ev[ev[i].parent].name));
}

/* A capture of 90,000 events on three threads, added in a shuffled order:
 * large enough that finish may sort on two threads. Event k (its rank j on
 * its thread) starts at j / 4 * 10 and lasts 8, 5, 5 or 2 (ranks 1 and 2 of
 * each four alike). They come out by thread, start and longer first, alike
 * ones in the order added, and each one's argument (the position it was
 * added at) still points at it. */
enum { LARGE_N = 90000 };
static const uint32_t LARGE_PER_THREAD[3] = {45000, 30000, 15000};
static const int64_t LARGE_DURATION[4] = {8, 5, 5, 2};

static uint32_t thread_of_rank(uint32_t k, uint32_t *j) {
    uint32_t t = k < LARGE_PER_THREAD[0] ? 0 : k < LARGE_PER_THREAD[0] + LARGE_PER_THREAD[1] ? 1 : 2;
    *j = k - (t > 0 ? LARGE_PER_THREAD[0] : 0) - (t > 1 ? LARGE_PER_THREAD[1] : 0);
    return t;
}

static void large_capture_sorts_as_a_small_one_check(void) {
    opprof_capture *c;
    uint32_t th[3], j;
    CHECK_INT(opprof_capture_new(&c), 0);
    for (int t = 0; t < 3; t++) CHECK_INT(opprof_capture_add_thread(c, 100 + t, "", &th[t]), 0);
    uint32_t *order = malloc(LARGE_N * sizeof *order); /* order[a]: the event added at position a */
    for (uint32_t k = 0; k < LARGE_N; k++) order[k] = k;
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (uint32_t k = LARGE_N - 1; k > 0; k--) { /* Fisher-Yates */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t r = (uint32_t)(x % (k + 1)), tmp = order[k];
        order[k] = order[r];
        order[r] = tmp;
    }
    for (uint32_t a = 0; a < LARGE_N; a++) {
        uint32_t t = thread_of_rank(order[a], &j);
        CHECK_INT(
            opprof_capture_add_event(c, th[t], "op", OPPROF_KIND_CPU_OP, (int64_t)(j / 4) * 10, LARGE_DURATION[j % 4]),
            0);
        opprof_mark m = {.kind = OPPROF_MARK_ARG_INT, .thread = th[t], .event = (int32_t)a, .value.i = a};
        CHECK_INT(opprof_capture_add_mark(c, &m, "added", NULL), 0);
    }
    CHECK_INT(opprof_capture_finish(c), 0);
    size_t n, n_marks, misplaced = 0, lost = 0, unstable = 0;
    const opprof_event *ev = opprof_capture_events(c, &n);
    const opprof_mark *marks = opprof_capture_marks(c, &n_marks);
    CHECK_INT(n, LARGE_N);
    CHECK_INT(n_marks, LARGE_N);
    int64_t *added_at = malloc(LARGE_N * sizeof *added_at); /* by each event's argument */
    for (size_t i = 0; i < LARGE_N; i++) added_at[i] = -1;
    for (size_t m = 0; m < n_marks; m++)
        if (marks[m].event >= 0 && marks[m].event < LARGE_N) added_at[marks[m].event] = marks[m].value.i;
    for (uint32_t i = 0; i < LARGE_N && n == LARGE_N; i++) {
        uint32_t t = thread_of_rank(i, &j), alike = i - j % 4 + 1; /* ranks 1 and 2: alike + 0, + 1 */
        misplaced += ev[i].thread != th[t] || ev[i].start_ns != (int64_t)(j / 4) * 10 ||
                     ev[i].duration_ns != LARGE_DURATION[j % 4];
        if (added_at[i] < 0) {
            lost++;
            continue;
        }
        uint32_t k = order[added_at[i]]; /* the event its argument was added with */
        lost += j % 4 == 1 || j % 4 == 2 ? k != alike && k != alike + 1 : k != i;
        unstable += j % 4 == 1 && added_at[i + 1] >= 0 && added_at[i] > added_at[i + 1];
    }
    CHECK_INT(misplaced, 0);
    CHECK_INT(lost, 0);
    CHECK_INT(unstable, 0);
    free(added_at);
    free(order);
    opprof_capture_free(c);
}

/* Parents by time on each thread, marks that follow their events through the
 * sort, memory owners and running totals, self times and key averages. */
TEST_CASE(nesting_self_time_and_memory) {
    opprof_capture *c;
    uint32_t t0, t1;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 10, "main", &t0), 0);
    CHECK_INT(opprof_capture_add_thread(c, 11, "worker", &t1), 0);
    /* Added out of order on purpose: finish sorts. Thread 0:
     *   A [0,100)  > B [10,40) > C [20,30)
     *              > D [40,90)            (starts where B ends: a sibling)
     *   E [100,110)                       (starts where A ends: top level)
     * Thread 1: A [5,50) (same name, other thread: not a child of anything). */
    CHECK_INT(opprof_capture_add_event(c, t0, "D", OPPROF_KIND_CPU_OP, 40, 50), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "C", OPPROF_KIND_CPU_OP, 20, 10), 0);
    CHECK_INT(opprof_capture_add_event(c, t1, "A", OPPROF_KIND_USER_ANNOTATION, 5, 45), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "A", OPPROF_KIND_USER_ANNOTATION, 0, 100), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "B", OPPROF_KIND_CPU_OP, 10, 30), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "E", OPPROF_KIND_CPU_OP, 100, 10), 0);
    /* Same start as its parent, shorter: still a child (longer sorts first). */
    CHECK_INT(opprof_capture_add_event(c, t0, "F", OPPROF_KIND_CPU_OP, 40, 5), 0);
    /* Memory: in C, in B after C, in D, in A between children, outside all, on thread 1. */
    CHECK_INT(opprof_capture_add_memory(c, t0, 25, 1, 1000, -1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t0, 35, 2, 300, -1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t0, 60, 1, -1000, -1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t0, 95, 2, -300, -1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t0, 200, 3, 64, -1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t1, 7, 4, 4096, -1), 0);
    /* Arguments of D (added first) and of B (fifth): they follow their events through the sort. */
    opprof_mark flops = {.kind = OPPROF_MARK_FLOPS, .thread = t0, .event = 0, .value.i = 4000};
    opprof_mark batch = {.kind = OPPROF_MARK_ARG_INT, .thread = t0, .event = 4, .value.i = 32};
    CHECK_INT(opprof_capture_add_mark(c, &flops, "flops", NULL), 0);
    CHECK_INT(opprof_capture_add_mark(c, &batch, "batch", NULL), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    CHECK_INT(opprof_capture_finish(c), OPPROF_EINVAL); /* once */

    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    CHECK_INT(n, 7);
    char got[256] = "", buf[32];
    for (size_t i = 0; i < n; i++) {
        parent_name(c, i, buf, sizeof buf);
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s<%s ", opprof_capture_name(c, ev[i].name), buf);
    }
    CHECK_STR(got, "A<- B<A C<B D<A F<D E<- A<- ");
    const opprof_mark *marks = opprof_capture_marks(c, &n);
    CHECK_INT(n, 2);
    for (size_t k = 0; k < n; k++) {
        CHECK(marks[k].event >= 0);
        const char *of = marks[k].event >= 0 ? opprof_capture_name(c, ev[marks[k].event].name) : "-";
        CHECK_STR(of, marks[k].kind == OPPROF_MARK_FLOPS ? "D" : "B");
    }

    /* Memory owners and running totals (in time order across threads). */
    const opprof_memory_event *m = opprof_capture_memory_events(c, &n);
    CHECK_INT(n, 6);
    const char *owners[6];
    for (size_t j = 0; j < n; j++) owners[j] = m[j].owner < 0 ? "-" : opprof_capture_name(c, ev[m[j].owner].name);
    CHECK_STR(owners[0], "C");
    CHECK_STR(owners[1], "B");
    CHECK_STR(owners[2], "D");
    CHECK_STR(owners[3], "A");
    CHECK_STR(owners[4], "-");
    CHECK_STR(owners[5], "A"); /* thread 1's A */
    CHECK_INT(m[5].thread, t1);
    CHECK_INT(m[5].total_allocated, 4096);        /* t=7: first in time */
    CHECK_INT(m[0].total_allocated, 4096 + 1000); /* t=25 */
    CHECK_INT(m[4].total_allocated, 4096 + 64);   /* t=200, last */

    opprof_averages *avg;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    const opprof_average_row *r;
    /* A: two calls (one per thread), total 145; self = 100-30-50 + 45 = 65. */
    r = row(avg, "A");
    CHECK(r);
    if (r) {
        CHECK_INT(r->calls, 2);
        CHECK_INT(r->total_ns, 145);
        CHECK_INT(r->self_ns, 65);
        CHECK_INT(r->self_cpu_mem, -300 + 4096);
        CHECK_INT(r->cpu_mem, 1000 + 300 - 1000 - 300 + 4096);
    }
    r = row(avg, "B");
    if (r) {
        CHECK_INT(r->self_ns, 20);
        CHECK_INT(r->total_ns, 30);
        CHECK_INT(r->self_cpu_mem, 300);
        CHECK_INT(r->cpu_mem, 1300);
    }
    r = row(avg, "C");
    if (r) {
        CHECK_INT(r->self_ns, 10);
        CHECK_INT(r->self_cpu_mem, 1000);
        CHECK_INT(r->cpu_mem, 1000);
    }
    r = row(avg, "D");
    if (r) {
        CHECK_INT(r->self_ns, 45);
        CHECK_INT(r->self_cpu_mem, -1000);
    }
    r = row(avg, "F");
    if (r) CHECK_INT(r->self_ns, 5);
    r = row(avg, "E");
    if (r) CHECK_INT(r->self_ns, 10);
    /* Self times add up to the time covered by top-level events. */
    CHECK_INT(opprof_averages_self_total_ns(avg), 100 + 10 + 45);
    /* First-seen order: A (t=0), B, C, A@t1 merges into A, D/F at 40, E. */
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    CHECK_STR(rows[0].key, "A");
    CHECK_STR(rows[1].key, "B");
    CHECK_STR(rows[n - 1].key, "E");
    opprof_averages_free(avg);
    size_t nw;
    opprof_capture_warnings(c, &nw);
    CHECK_INT(nw, 0);
    opprof_capture_free(c);
}

/* Overlap without nesting, PyTorch's rule (_populate_cpu_children): Q
 * starts in P and ends after it, so it is not P's child and keeps its
 * whole duration; R, inside both P and Q by time, is the child of Q (P
 * was closed when Q did not fit in it); a warning counts Q. */
TEST_CASE(overlap_without_nesting) {
    opprof_capture *c;
    uint32_t t0;
    size_t n, nw;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "", &t0), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "P", OPPROF_KIND_CPU_OP, 0, 50), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "Q", OPPROF_KIND_CPU_OP, 40, 30), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "R", OPPROF_KIND_CPU_OP, 45, 2), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    const opprof_event *ev = opprof_capture_events(c, &n);
    CHECK_INT(ev[1].parent, -1);
    CHECK_INT(ev[1].duration_ns, 30);
    CHECK_INT(ev[2].parent, 1);
    const char *const *w = opprof_capture_warnings(c, &nw);
    CHECK_INT(nw, 1);
    if (nw) CHECK_CONTAINS(w[0], "1 event(s) overlapped an enclosing event without nesting; each was counted whole");
    opprof_capture_free(c);
}

/* Frees of unknown size take the size of the allocation at their address
 * before them; one of a block from before the capture counts 0, said. */
TEST_CASE(frees_of_unknown_size) {
    opprof_capture *c;
    uint32_t t0, t1;
    size_t nw;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "", &t0), 0);
    CHECK_INT(opprof_capture_add_thread(c, 2, "", &t1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t0, 10, 0x10, 100, -1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t1, 20, 0x10, OPPROF_FREE_UNKNOWN_SIZE, -1), 0); /* another thread */
    CHECK_INT(opprof_capture_add_memory(c, t0, 30, 0x10, 40, -1), 0);                       /* reused address */
    CHECK_INT(opprof_capture_add_memory(c, t0, 40, 0x10, OPPROF_FREE_UNKNOWN_SIZE, -1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t0, 50, 0x20, OPPROF_FREE_UNKNOWN_SIZE, -1), 0); /* before the capture */
    CHECK_INT(opprof_capture_finish(c), 0);
    {
        size_t nm;
        const opprof_memory_event *mm = opprof_capture_memory_events(c, &nm);
        long long sizes[5] = {0}, total_last = 0;
        for (size_t k = 0; k < nm && k < 5; k++) sizes[mm[k].ts_ns / 10 - 1] = mm[k].bytes;
        for (size_t k = 0; k < nm; k++)
            if (mm[k].ts_ns == 50) total_last = mm[k].total_allocated;
        CHECK_INT(sizes[1], -100);
        CHECK_INT(sizes[3], -40);
        CHECK_INT(sizes[4], 0);
        CHECK_INT(total_last, 0); /* 100 - 100 + 40 - 40 + 0 */
        const char *const *fw = opprof_capture_warnings(c, &nw);
        CHECK_INT(nw, 1);
        if (nw) CHECK_CONTAINS(fw[0], "1 free(s) of blocks allocated before the capture");
    }
    opprof_capture_free(c);
}

TEST_CASE(bad_input_to_the_builder) {
    opprof_capture *c;
    uint32_t t0;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_event(c, 0, "x", OPPROF_KIND_CPU_OP, 0, 1), OPPROF_EINVAL); /* no thread */
    CHECK_INT(opprof_capture_add_thread(c, 1, NULL, &t0), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "x", OPPROF_KIND_CPU_OP, 0, -1), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_add_event(c, t0, NULL, OPPROF_KIND_CPU_OP, 0, 1), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_add_memory(c, 7, 0, 0, 1, -1), OPPROF_EINVAL);
    /* marks and categories: a thread, a kind, an event and names that exist */
    opprof_mark bad = {.kind = OPPROF_MARK_COUNTER, .thread = 9, .event = -1};
    CHECK_INT(opprof_capture_add_mark(c, &bad, "n", NULL), OPPROF_EINVAL); /* no such thread */
    bad.thread = t0;
    bad.kind = 99;
    CHECK_INT(opprof_capture_add_mark(c, &bad, "n", NULL), OPPROF_EINVAL); /* no such kind */
    bad.kind = OPPROF_MARK_ARG_INT;
    bad.event = 5;
    CHECK_INT(opprof_capture_add_mark(c, &bad, "n", NULL), OPPROF_EINVAL); /* no such event */
    bad.kind = OPPROF_MARK_ARG_STR;
    bad.event = -1;
    CHECK_INT(opprof_capture_add_mark(c, &bad, "n", NULL), OPPROF_EINVAL); /* a string argument without its string */
    CHECK_INT(opprof_capture_add_mark(c, &bad, NULL, "s"), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_set_last_category(c, "io"), OPPROF_EINVAL); /* no event yet */
    CHECK(opprof_capture_category(c, NULL) == NULL);
    CHECK_INT(opprof_capture_finish(c), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "late", OPPROF_KIND_CPU_OP, 0, 1), OPPROF_EINVAL);
    opprof_capture_free(c);
    opprof_capture_free(NULL);
}

/* diff: rows by the largest change of self time; new and gone operators;
 * notes on configurations that differ; text, JSON and HTML. */
TEST_CASE(diff_of_two_captures) {
    uint32_t t0, t1;
    opprof_capture *before, *after;
    opprof_capture_new(&before);
    opprof_capture_new(&after);
    opprof_capture_add_thread(before, 1, "", &t0);
    opprof_capture_add_thread(after, 1, "", &t0);
    opprof_capture_add_thread(after, 2, "", &t1);
    opprof_capture_add_event(before, t0, "small", OPPROF_KIND_CPU_OP, 0, 100);
    opprof_capture_add_event(before, t0, "big", OPPROF_KIND_CPU_OP, 200, 1000);
    opprof_capture_add_event(before, t0, "gone", OPPROF_KIND_CPU_OP, 2000, 50);
    opprof_capture_add_event(after, t0, "small", OPPROF_KIND_CPU_OP, 0, 130);
    opprof_capture_add_event(after, t0, "big", OPPROF_KIND_CPU_OP, 200, 400);
    opprof_capture_add_event(after, t0, "new", OPPROF_KIND_CPU_OP, 2000, 70);
    opprof_capture_finish(before);
    opprof_capture_finish(after);
    char *text = NULL;
    CHECK_INT(opprof_capture_diff_to_string(before, after, -1, OPPROF_DIFF_TEXT, &text), 0);
    const char *big = strstr(text, "big"), *newp = strstr(text, " new "), *gone = strstr(text, "gone"),
               *small = strstr(text, "small");
    CHECK(big && newp && gone && small && big < newp && newp < gone && gone < small); /* 600, 70, 50, 30 */
    CHECK_CONTAINS(text, "0.40x");
    CHECK_CONTAINS(text, "Self CPU time total: 1.150us before, 0.600us after (-47.83%)");
    CHECK_CONTAINS(text, "Note: thread tracks differ: 1 before, 2 after");
    /* one column model: the text's cells are the JSON's values, formatted */
    CHECK(strstr(text, "-600.000ns") == NULL);
    CHECK_CONTAINS(text, "-0.600us"); /* big's change */
    CHECK_CONTAINS(text, "+0.070us"); /* new's */
    const char *new_row = strstr(text, " new "), *end = new_row ? strchr(new_row, '\n') : NULL;
    const char *ratio = new_row ? strstr(new_row + 4, " new ") : NULL;
    CHECK(ratio && end && ratio < end); /* the new operator's ratio cell says "new" */
    CHECK_CONTAINS(text, "gone");
    opprof_free(text);
    CHECK_INT(opprof_capture_diff_to_string(before, after, 1, OPPROF_DIFF_JSON, &text), 0);
    CHECK_CONTAINS(text, "\"name\": \"big\", \"calls_before\": 1, \"calls_after\": 1, \"self_cpu_us_before\": 1, "
                         "\"self_cpu_us_after\": 0.4, \"self_cpu_us_delta\": -0.6, \"self_ratio\": 0.4");
    CHECK(strstr(text, "\"small\"") == NULL); /* row limit 1 */
    opprof_free(text);
    CHECK_INT(opprof_capture_diff_to_string(before, after, -1, OPPROF_DIFF_JSON, &text), 0);
    CHECK_CONTAINS(text, "\"name\": \"new\", \"calls_before\": null, \"calls_after\": 1, \"self_cpu_us_before\": null");
    CHECK_CONTAINS(text, "\"self_ratio\": null, \"total_cpu_us_before\": null");
    CHECK_CONTAINS(text, "\"present\": \"after\"");
    CHECK_CONTAINS(text, "\"totals\": {\"self_cpu_us_before\": 1.15, \"self_cpu_us_after\": 0.6}");
    opprof_free(text);
    CHECK_INT(opprof_capture_diff_to_string(before, after, -1, OPPROF_DIFF_HTML, &text), 0);
    CHECK_CONTAINS(text, "<table class=\"facts\"><tr><th></th><th>before</th><th>after</th></tr>");
    CHECK_CONTAINS(text, "<tr><td>events</td><td>3</td><td>3</td></tr>");
    CHECK_CONTAINS(text, "<td data-v=\"big\" title=\"big\">big</td>");
    CHECK_CONTAINS(text, "<td data-v=\"0.4\">0.40x</td>");  /* ratio: sorts by its value */
    CHECK_CONTAINS(text, "<td data-v=\"1e+300\">new</td>"); /* a new operator sorts above every ratio */
    opprof_free(text);
    opprof_capture_free(before);
    opprof_capture_free(after);
}

TEST_CASE(large_capture_sorts_as_a_small_one) { large_capture_sorts_as_a_small_one_check(); }

int main(int argc, char **argv) { return check_main(argc, argv, "test_tree"); }
