/* test_merge.c - opprof_merge_traces and `opprof merge`: PyTorch's own
 * per-rank Kineto traces and opprof's captures onto one timeline (each rank
 * its processes, timestamps moved by base time and clock offset, flow ids
 * kept apart), the files it refuses and the output it never leaves half
 * written; the cross-rank analysis on captures made here. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>

static const char *GLOO = "tests/fixtures/real-traces/hta__cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz";
static const char *NCCL = "tests/fixtures/real-traces/hta__nccl_parser_config__nccl_data.json.gz";

static void fixture(char *buf, size_t size, const char *rel) { snprintf(buf, size, "%s/%s", source_dir(), rel); }

static size_t count_events(const opprof_capture *c) {
    size_t n;
    opprof_capture_events(c, &n);
    return n;
}

/* A small trace of ours: rank `rank`, base time `base_ns`, clock offset
 * `offset_ns`, one "step" range at ts 10 us with a nested "op", then `tail`
 * (events, at least one): by default a flow with id 7. */
static const char FLOW[] = "  {\"ph\": \"s\", \"name\": \"hand\", \"id\": 7, \"pid\": 42, \"tid\": 1, \"ts\": 11.5}\n";

static void write_rank_trace_with(const char *path, int rank, long long base_ns, long long offset_ns,
                                  const char *tail) {
    FILE *f = fopen(path, "w");
    fprintf(
        f,
        "{\"schemaVersion\": 1, \"opprof_version\": \"x\", \"distributedInfo\": {\"backend\": \"mpi\", \"rank\": %d, "
        "\"world_size\": 2, \"clock_offset_ns\": %lld, \"clock_uncertainty_ns\": 50},\n"
        " \"traceEvents\": [\n"
        "  {\"ph\": \"X\", \"name\": \"step\", \"pid\": 42, \"tid\": 1, \"ts\": 10.000, \"dur\": 5.5},\n"
        "  {\"ph\": \"X\", \"name\": \"op\", \"pid\": 42, \"tid\": 1, \"ts\": 11.250, \"dur\": 1},\n"
        "%s ], \"baseTimeNanoseconds\": %lld}\n",
        rank, offset_ns, tail, base_ns);
    fclose(f);
}

static void write_rank_trace(const char *path, int rank, long long base_ns, long long offset_ns) {
    write_rank_trace_with(path, rank, base_ns, offset_ns, FLOW);
}

static const opprof_event *find(const opprof_capture *c, const char *name, int64_t pid, int nth) {
    size_t n;
    const opprof_event *ev = opprof_capture_events(c, &n);
    size_t n_threads;
    const opprof_thread_info *threads = opprof_capture_threads(c, &n_threads);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(opprof_capture_name(c, ev[i].name), name) && threads[ev[i].thread].pid == pid && nth-- == 0)
            return &ev[i];
    return NULL;
}

TEST_CASE(alignment) {
    char dir[256];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char a[4200], b[4200], out[4200];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    snprintf(out, sizeof out, "%s/merged.json", dir);
    /* rank 1's clock runs 2 us ahead of rank 0's; it started 3 us (its clock) after */
    write_rank_trace(a, 0, 1000000000000LL, 0);
    write_rank_trace(b, 1, 1000000003000LL, 2000);
    const char *paths[] = {a, b};
    opprof_merge_result res;
    opprof_read_error err;
    CHECK_INT(opprof_merge_traces(paths, 2, out, &res, &err), 0);
    CHECK_INT(res.inputs, 2);
    CHECK_INT(res.events, 6);
    CHECK_INT(res.base_time_ns, 1000000000000LL);
    opprof_capture *c;
    CHECK_INT(opprof_capture_read(out, NULL, &c, &err), 0);
    if (!c) return;
    const opprof_event *s0 = find(c, "step", 100000, 0), *s1 = find(c, "step", 200000, 0);
    CHECK(s0 && s1);
    /* rank 1: 3 us later on its clock, 2 us of which is its clock's lead: 1 us later than rank 0 */
    if (s0 && s1) CHECK_INT(s1->start_ns - s0->start_ns, 1000);
    const opprof_event *op1 = find(c, "op", 200000, 0);
    CHECK(op1 && op1->parent >= 0 && s1 && op1->parent == (int32_t)(s1 - opprof_capture_events(c, &(size_t){0})));
    size_t n_threads;
    const opprof_thread_info *threads = opprof_capture_threads(c, &n_threads);
    CHECK_INT(n_threads, 2);
    if (n_threads == 2) CHECK_STR(threads[1].process, "rank 1");
    opprof_capture_info info = opprof_capture_get_info(c);
    CHECK_STR(info.rank.backend, "mpi");
    CHECK_INT(info.rank.world_size, 2);
    opprof_capture_free(c);
    /* flows: the same id on two ranks becomes two ids */
    char *text = read_text(out);
    CHECK(text && strstr(text, "\"id\":28672") && strstr(text, "\"id\":28673")); /* (7 << 12) | rank */
    CHECK(text && strstr(text, "\"labels\":\"rank 1\""));
    CHECK(text && strstr(text, "\"file\": \"a.json\"")); /* relative to the merged file */
    free(text);
    remove_tree(dir);
}

/* One sample, 0.25 us after its profile's start at 11.5 us: inside "op". */
static const char SAMPLE[] =
    "  {\"ph\": \"P\", \"name\": \"Profile\", \"id\": 1, \"pid\": 42, \"tid\": 1, \"ts\": 11.500,"
    " \"args\": {\"data\": {\"startTime\": 11.500}}},\n"
    "  {\"ph\": \"P\", \"name\": \"ProfileChunk\", \"id\": 1, \"pid\": 42, \"tid\": 1, \"ts\": 11.750,"
    " \"args\": {\"data\": {\"cpuProfile\": {\"nodes\": [{\"id\": 1, \"callFrame\": {\"functionName\": \"(root)\"}},"
    " {\"id\": 2, \"parent\": 1, \"callFrame\": {\"functionName\": \"kernel\"}}], \"samples\": [2]},"
    " \"timeDeltas\": [0.25]}}}\n";

/* Samples (Chrome's CPU profiles) move with their rank's events: each rank's
 * one sample, 0.5 us into its "op", is 0.5 us into it after the merge; and
 * `opprof merge -o OUT.pftrace` gives the tables of the merged JSON, leaving
 * no file of its own beside OUT. */
TEST_CASE(samples_and_pftrace) {
    char dir[256];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char a[4200], b[4200], out[4200], pf[4200];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    snprintf(out, sizeof out, "%s/merged.json", dir);
    snprintf(pf, sizeof pf, "%s/merged.pftrace", dir);
    write_rank_trace_with(a, 0, 1000000000000LL, 0, SAMPLE);
    write_rank_trace_with(b, 1, 1000000003000LL, 2000, SAMPLE);
    const char *paths[] = {a, b};
    opprof_merge_result res;
    opprof_read_error err;
    CHECK_INT(opprof_merge_traces(paths, 2, out, &res, &err), 0);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read(out, NULL, &c, &err), 0);
    if (!c) return;
    size_t n;
    const opprof_sample *sm = opprof_capture_samples(c, &n);
    const opprof_event *ev = opprof_capture_events(c, &(size_t){0});
    CHECK_INT(n, 2);
    for (size_t k = 0; k < n; k++) {
        CHECK(sm[k].owner >= 0 && !strcmp(opprof_capture_name(c, ev[sm[k].owner].name), "op"));
        if (sm[k].owner >= 0) CHECK_INT(sm[k].ts_ns - ev[sm[k].owner].start_ns, 500);
    }
    opprof_capture_free(c);
    char *json_report = NULL, *pf_report = NULL, *listing = NULL;
    CHECK_INT(run_commandf(NULL, "'%s/opprof' merge '%s' '%s' -o '%s' 2>/dev/null", bin_dir(), a, b, pf), 0);
    CHECK_INT(run_commandf(&json_report, "'%s/opprof' stacks --samples '%s' && '%s/opprof' report '%s'", bin_dir(), out,
                           bin_dir(), out),
              0);
    CHECK_INT(run_commandf(&pf_report, "'%s/opprof' stacks --samples '%s' && '%s/opprof' report '%s'", bin_dir(), pf,
                           bin_dir(), pf),
              0);
    CHECK_CONTAINS(json_report, "step;op;kernel 2\n");
    CHECK_STR(pf_report, json_report);
    CHECK_INT(run_commandf(&listing, "ls '%s'", dir), 0);
    CHECK_STR(listing, "a.json\nb.json\nmerged.json\nmerged.pftrace\n");
    free(json_report);
    free(pf_report);
    free(listing);
    char *said = NULL;
    CHECK_INT(run_commandf(&said, "'%s/opprof' merge '%s' -o '%s/m.txt' 2>&1", bin_dir(), a, dir), 64);
    CHECK_CONTAINS(said, "OUT's name must end in .json, .pftrace");
    free(said);
    /* OUT where no directory is: the error names OUT, and nothing is left */
    said = NULL;
    CHECK(run_commandf(&said, "'%s/opprof' merge '%s' -o '%s/none/m.pftrace' 2>&1", bin_dir(), a, dir) != 0);
    char want[600];
    snprintf(want, sizeof want, "merge into %s/none/m.pftrace: ", dir);
    CHECK_CONTAINS(said, want);
    free(said);
    listing = NULL;
    CHECK_INT(run_commandf(&listing, "ls '%s'", dir), 0);
    CHECK_STR(listing, "a.json\nb.json\nmerged.json\nmerged.pftrace\n");
    free(listing);
    remove_tree(dir);
}

/* Every shape of event, whichever path copies it (the fast one: whole in
 * the window, plain keys; the slow one: the rest): blanks and newlines
 * inside, a key written with an escape, a "pid" inside args (not the
 * event's: kept), and 6,000 events of some 300 bytes, so that events cross
 * the 1 MiB read window. Every event moves by its rank's shift and gets its
 * rank's pid; nothing else changes. */
TEST_CASE(event_shapes) {
    char dir[256];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char a[4200], out[4200];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(out, sizeof out, "%s/merged.json", dir);
    FILE *f = fopen(a, "w");
    fprintf(
        f,
        "{\"opprof_version\": \"x\", \"baseTimeNanoseconds\": 1000000,\n"
        " \"distributedInfo\": {\"backend\": \"mpi\", \"rank\": 1, \"world_size\": 2, \"clock_offset_ns\": 0},\n"
        " \"traceEvents\": [\n"
        "  {\n    \"ph\" : \"X\",\n    \"name\": \"spaced\", \"pid\" : 42, \"tid\": 1,\n    \"ts\":\t10.000, \"dur\": 1\n  },\n"
        "  {\"ph\": \"X\", \"name\": \"escaped\", \"p\\u0069d\": 42, \"tid\": 1, \"ts\": 20.000, \"dur\": 1},\n"
        "  {\"ph\": \"X\", \"name\": \"nested\", \"pid\": 42, \"tid\": 1, \"ts\": 30.000, \"dur\": 1,"
        " \"args\": {\"pid\": 7, \"ts\": \"kept\"}}");
    for (int i = 0; i < 6000; i++)
        fprintf(
            f,
            ",\n  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"bulk\", \"pid\": 42, \"tid\": 1, \"ts\": %d.500, "
            "\"dur\": 0.25, \"args\": {\"note\": \"%0200d\"}}",
            100 + i, i);
    fprintf(f, "\n ]}\n");
    fclose(f);
    const char *paths[] = {a};
    opprof_merge_result res;
    opprof_read_error err;
    CHECK_INT(opprof_merge_traces(paths, 1, out, &res, &err), 0);
    CHECK_INT(res.events, 6003);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read(out, NULL, &c, &err), 0);
    if (!c) return;
    size_t n, n_threads;
    const opprof_event *ev = opprof_capture_events(c, &n);
    const opprof_thread_info *th = opprof_capture_threads(c, &n_threads);
    CHECK_INT(n, 6003);
    int bulk = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = opprof_capture_name(c, ev[i].name);
        CHECK_INT(th[ev[i].thread].pid, 200000); /* rank 1's first process */
        if (!strcmp(name, "bulk")) CHECK_INT(ev[i].start_ns, (100 + bulk++) * 1000 + 500 - 10000);
        if (!strcmp(name, "escaped")) CHECK_INT(ev[i].start_ns, 10000);
    }
    CHECK_INT(bulk, 6000);
    opprof_capture_free(c);
    char *text = read_text(out);
    CHECK(text && strstr(text, "\"args\": {\"pid\": 7, \"ts\": \"kept\"}")); /* args: as they were */
    free(text);
    remove_tree(dir);
}

TEST_CASE(kineto) {
    char dir[256];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char gloo[4200], nccl[4200], out[4200];
    fixture(gloo, sizeof gloo, GLOO);
    fixture(nccl, sizeof nccl, NCCL);
    snprintf(out, sizeof out, "%s/kineto.json", dir);
    const char *paths[] = {gloo, nccl};
    opprof_merge_result res;
    opprof_read_error err;
    CHECK_INT(opprof_merge_traces(paths, 2, out, &res, &err), 0);
    opprof_capture *m, *g, *n;
    CHECK_INT(opprof_capture_read(out, NULL, &m, &err), 0);
    CHECK_INT(opprof_capture_read(gloo, NULL, &g, &err), 0);
    CHECK_INT(opprof_capture_read(nccl, NULL, &n, &err), 0);
    if (m && g && n) {
        CHECK_INT(count_events(m), count_events(g) + count_events(n)); /* nothing lost, nothing doubled */
        /* ranks 34 and 0 are distinct: each keeps its number */
        CHECK(find(m, "gloo:all_reduce", 3500000, 0) != NULL);
        CHECK(find(m, "gloo:all_reduce", 100000, 0) == NULL);
    }
    opprof_capture_free(m);
    opprof_capture_free(g);
    opprof_capture_free(n);
    remove_tree(dir);
}

TEST_CASE(errors) {
    char dir[256];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char bad[4200], good[4200], out[4200], missing[4200];
    snprintf(bad, sizeof bad, "%s/bad.json", dir);
    snprintf(good, sizeof good, "%s/a.json", dir);
    snprintf(out, sizeof out, "%s/never.json", dir);
    snprintf(missing, sizeof missing, "%s/missing.json", dir);
    write_rank_trace(good, 0, 1000000000, 0); /* this case's own: cases share nothing */
    FILE *f = fopen(bad, "w");
    fputs("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1,", f); /* cut short */
    fclose(f);
    opprof_read_error err;
    const char *with_bad[] = {good, bad};
    CHECK_INT(opprof_merge_traces(with_bad, 2, out, NULL, &err), OPPROF_EFORMAT);
    CHECK(strstr(err.message, "bad.json") && strstr(err.message, "byte "));
    CHECK(access(out, F_OK) != 0); /* no output at all */
    const char *with_missing[] = {good, missing};
    CHECK_INT(opprof_merge_traces(with_missing, 2, out, NULL, &err), -ENOENT);
    CHECK(strstr(err.message, "missing.json") != NULL);
    CHECK(access(out, F_OK) != 0);
    const char *one[] = {good};
    char nodir[4300];
    snprintf(nodir, sizeof nodir, "%s/no/such/dir/out.json", dir);
    CHECK(opprof_merge_traces(one, 1, nodir, NULL, &err) < 0);
    CHECK_INT(opprof_merge_traces(one, 0, out, NULL, &err), OPPROF_EINVAL);
    /* bytes that are not UTF-8 in a string: refused with the place, no output
     * (a merged trace must read back); UTF-8 of every length passes */
    char bad8[4200], good8[4200];
    snprintf(bad8, sizeof bad8, "%s/bad8.json", dir);
    snprintf(good8, sizeof good8, "%s/good8.json", dir);
    f = fopen(bad8, "w");
    fputs("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\xff\xfe\", \"ts\": 1, \"dur\": 2}]}", f);
    fclose(f);
    f = fopen(good8, "w");
    fputs("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\", \"ts\": 1, "
          "\"dur\": 2}]}",
          f);
    fclose(f);
    const char *with_bad8[] = {bad8};
    CHECK_INT(opprof_merge_traces(with_bad8, 1, out, NULL, &err), OPPROF_EFORMAT);
    CHECK(strstr(err.message, "bad8.json") && strstr(err.message, "not UTF-8"));
    CHECK(access(out, F_OK) != 0);
    const char *with_good8[] = {good8};
    CHECK_INT(opprof_merge_traces(with_good8, 1, out, NULL, &err), 0);
    opprof_capture *m8 = NULL;
    CHECK_INT(opprof_capture_read(out, NULL, &m8, &err), 0); /* and it reads back */
    opprof_capture_free(m8);
    unlink(out);
    /* malformed events are refused, whichever path reads them (the fast one
     * hands them to the slow one, which says so): no output */
    static const char *const malformed[] = {
        "{\"traceEvents\": [{\"ph\": \"X\" \"name\": \"a\", \"ts\": 1}]}", /* no ',' between keys */
        "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1 2}]}",               /* two values */
        "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": }]}",                  /* no value */
        "{\"traceEvents\": [{\"ph\": \"X\", \"ts\": 1,}]}",                /* a key missing after ',' */
        "{\"traceEvents\": [{\"ph\": \"X\", \"ts\" 1}]}",                  /* no ':' */
        "{\"traceEvents\": [{, \"ph\": \"X\"}]}",                          /* a stray ',' */
    };
    char badshape[4200];
    snprintf(badshape, sizeof badshape, "%s/shape.json", dir);
    for (size_t k = 0; k < sizeof malformed / sizeof *malformed; k++) {
        f = fopen(badshape, "w");
        fputs(malformed[k], f);
        fclose(f);
        const char *one_bad[] = {badshape};
        CHECK_INT(opprof_merge_traces(one_bad, 1, out, NULL, &err), OPPROF_EFORMAT);
        CHECK(access(out, F_OK) != 0);
    }
    /* the command: usage and unreadable input */
    char cmd[17000], *text = NULL;
    snprintf(cmd, sizeof cmd, "'%s/opprof' merge '%s'", bin_dir(), good);
    CHECK_INT(run_command(cmd, &text), 64);
    CHECK(text && strstr(text, "-o OUT"));
    free(text);
    snprintf(cmd, sizeof cmd, "'%s/opprof' merge '%s' '%s' -o '%s'", bin_dir(), good, bad, out);
    CHECK_INT(run_command(cmd, &text), 2);
    CHECK(text && strstr(text, "bad.json: byte"));
    free(text);
    snprintf(cmd, sizeof cmd, "'%s/opprof' report --ranks '%s'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &text), 2);
    CHECK(text && strstr(text, "no rank-0/"));
    free(text);
    remove_tree(dir);
}

/* The array form (PyTorch's legacy exporter, Chrome's JSON Array Format)
 * merges like the object form; a merge of writers other than Kineto keeps
 * no Kineto key, so it reads back by the trace-event format's rules. */
/* The merged JSON that `opprof merge -o OUT.pftrace` writes beside OUT: a
 * merge that SIGTERM stops removes it and ends as the signal does (143); one
 * that SIGKILL left is removed by the next merge beside OUT once its process
 * is gone, a live one's kept. */
TEST_CASE(a_stopped_merge_leaves_no_merged_json) {
    char dir[256], big[300], out[300];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(big, sizeof big, "%s/big.json", dir);
    snprintf(out, sizeof out, "%s/out.pftrace", dir);
    FILE *f = fopen(big, "w");
    fputs("{\"traceEvents\": [\n", f);
    for (int i = 0; i < 300000; i++)
        fprintf(f, "{\"ph\":\"X\",\"name\":\"op%d\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1}%s\n", i % 50, i * 2,
                i == 299999 ? "" : ",");
    fputs("]}\n", f);
    fclose(f);
    char prefix[400], merge[1400];
    snprintf(prefix, sizeof prefix, "%s.merging-", out);
    snprintf(merge, sizeof merge, "'%s/opprof' merge '%s' '%s' -o '%s'", bin_dir(), big, big, out);
    char *said = stopped_once_made(merge, prefix, ".json", dir, "merging"); /* whole long before OUT is written */
    CHECK_STR(said, "exit 143\n0\n");
    free(said);
    char small[300];
    snprintf(small, sizeof small, "%s/small.json", dir);
    write_rank_trace(small, 0, 1000, 0);
    snprintf(merge, sizeof merge, "'%s/opprof' merge '%s' -o '%s'", bin_dir(), small, out);
    said = leftovers_after(prefix, ".json", merge);
    CHECK_STR(said, "live kept\n");
    free(said);
    remove_tree(dir);
}

TEST_CASE(array_form) {
    char dir[256], a[4200], b[4200], out[4200];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    snprintf(out, sizeof out, "%s/out.json", dir);
    FILE *f = fopen(a, "w");
    fputs("[{\"ph\": \"X\", \"name\": \"f\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 9},\n"
          " {\"ph\": \"X\", \"name\": \"f\", \"pid\": 1, \"tid\": 1, \"ts\": 2, \"dur\": 3}]\n",
          f);
    fclose(f);
    f = fopen(b, "w");
    fputs("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"g\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}]}", f);
    fclose(f);
    const char *both[] = {a, b};
    opprof_read_error err;
    CHECK_INT(opprof_merge_traces(both, 2, out, NULL, &err), 0);
    opprof_capture *m = NULL;
    CHECK_INT(opprof_capture_read(out, NULL, &m, &err), 0);
    if (m) {
        CHECK_INT(count_events(m), 3);
        CHECK_INT(opprof_capture_get_info(m).producer, OPPROF_PRODUCER_OTHER);
        opprof_averages *avg = NULL;
        CHECK_INT(opprof_capture_averages(m, &avg), 0);
        size_t n = 0;
        const opprof_average_row *rows = avg ? opprof_averages_rows(avg, &n) : NULL;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(rows[i].key, "f")) CHECK_INT(rows[i].calls, 2); /* f's recursion kept */
        opprof_averages_free(avg);
    }
    opprof_capture_free(m);
    remove_tree(dir);
}

/* Hostile base times and ranks: a base time whose distance to another
 * input's leaves int64's range is refused with a reason (it wrapped), a rank
 * past int32's range counts as no rank (it was truncated). */
TEST_CASE(numbers_out_of_range) {
    char dir[256];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char low[4200], high[4200], huge_rank[4200], out[4200];
    snprintf(low, sizeof low, "%s/low.json", dir);
    snprintf(high, sizeof high, "%s/high.json", dir);
    snprintf(huge_rank, sizeof huge_rank, "%s/huge_rank.json", dir);
    snprintf(out, sizeof out, "%s/out.json", dir);
    write_rank_trace(low, 0, -9223372036854775807LL, 0);
    write_rank_trace(high, 1, 9223372036854775807LL, 0);
    opprof_read_error err;
    const char *far_apart[] = {low, high};
    CHECK_INT(opprof_merge_traces(far_apart, 2, out, NULL, &err), OPPROF_EFORMAT);
    CHECK(strstr(err.message, "high.json") && strstr(err.message, "out of range"));
    CHECK(access(out, F_OK) != 0);
    write_rank_trace(low, 0, 1000, -9223372036854775807LL); /* base less offset: past INT64_MAX */
    const char *offset[] = {low};
    CHECK_INT(opprof_merge_traces(offset, 1, out, NULL, &err), OPPROF_EFORMAT);
    CHECK(strstr(err.message, "clock_offset_ns is out of range"));
    FILE *f = fopen(huge_rank, "w");
    fputs("{\"distributedInfo\": {\"rank\": 4294967297, \"world_size\": 1e30}, \"traceEvents\": "
          "[{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}]}",
          f);
    fclose(f);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read(huge_rank, NULL, &c, &err), 0);
    if (c) {
        CHECK_INT(opprof_capture_get_info(c).rank.rank, -1);
        CHECK_INT(opprof_capture_get_info(c).rank.world_size, 0);
    }
    opprof_capture_free(c);
    const char *ranked[] = {huge_rank};
    CHECK_INT(opprof_merge_traces(ranked, 1, out, NULL, &err), 0);
    remove_tree(dir);
}

/* Two "ranks" recorded here, one after the other, with rank facts: the
 * analysis finds the collective of each and how far apart they started. */
TEST_CASE(ranks_analysis) {
    opprof_capture *caps[2] = {0};
    for (int r = 0; r < 2; r++) {
        opprof_config cfg = opprof_config_default();
        cfg.record_steps = false;
        snprintf(cfg.rank.backend, sizeof cfg.rank.backend, "mpi");
        cfg.rank.rank = r;
        cfg.rank.world_size = 2;
        opprof_session *s;
        CHECK_INT(opprof_session_start(&s, &cfg), 0);
        { OPPROF_SCOPE("compute"); }
        { OPPROF_OP_SCOPE("mpi::allreduce"); }
        CHECK_INT(opprof_session_stop(s), 0);
        CHECK_INT(opprof_session_take_capture(s, &caps[r]), 0);
        opprof_session_free(s);
    }
    opprof_ranks *ranks;
    CHECK_INT(opprof_ranks_analyze(caps, 2, &ranks), 0);
    char *text = NULL, *json = NULL;
    CHECK_INT(opprof_ranks_table_to_string(ranks, &text), 0);
    CHECK_INT(opprof_ranks_json_to_string(ranks, &json), 0);
    CHECK(text && strstr(text, "mpi::allreduce") && strstr(text, "Collectives compared by position: 1"));
    CHECK(json && strstr(json, "\"collectives_compared\": 1"));
    /* rank 1 ran after rank 0: it was last, and rank 0 waited for it */
    CHECK(json && strstr(json, "\"rank\": 1,") && strstr(json, "\"last_to_arrive\": 1"));
    opprof_free(text);
    opprof_free(json);
    opprof_ranks_free(ranks);
    CHECK_INT(opprof_ranks_analyze(caps, 0, &ranks), OPPROF_EINVAL);
    opprof_config bad = opprof_config_default();
    bad.rank.world_size = 2;
    bad.rank.rank = 2; /* outside [0, 2) */
    snprintf(bad.rank.backend, sizeof bad.rank.backend, "mpi");
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &bad), OPPROF_EINVAL);
    opprof_capture_free(caps[0]);
    opprof_capture_free(caps[1]);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_merge"); }
