/* test_pftrace.c - Perfetto's format in and out: the writer's contract (bad
 * arguments refused, a file that cannot be made leaves nothing, the bytes of
 * a capture built by hand as worked out here), a capture read back as it was
 * written, and what the reader says of bytes that are no .pftrace of opprof's.
 * (Whole traces decoded by Perfetto's schema: tests/perfetto_check.py.) */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>

#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

TEST_CASE(bad_arguments_and_paths) {
    opprof_capture *c;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    CHECK_INT(opprof_capture_perfetto_write(NULL, "/tmp/x.pftrace"), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_perfetto_write(c, NULL), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_perfetto_write_stream(c, NULL), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_perfetto_write(c, "/tmp/opprof-no-such-dir/x.pftrace"), -ENOENT);
    struct stat st;
    CHECK(stat("/tmp/opprof-no-such-dir/x.pftrace", &st) != 0);
    opprof_capture_free(c);
}

/* An empty capture begins with two packets (Trace.packet: field 1, bytes). The first
 * holds trace_packet_defaults (field 59: 0xda 0x03) {timestamp_clock_id
 * (field 58: 0xd0 0x03) = 64}, trusted_packet_sequence_id = 1 (field 10:
 * 0x50 0x01) and sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED (field 13:
 * 0x68 0x01); the second a clock_snapshot (field 6: 0x32) of clock 64 at 0,
 * incremental, and BOOTTIME (6) at 0, on sequence 1. */
TEST_CASE(empty_capture_bytes) {
    opprof_capture *c;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    char dir[256], path[300];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/empty.pftrace", dir);
    CHECK_INT(opprof_capture_perfetto_write(c, path), 0);
    FILE *f = fopen(path, "rb");
    unsigned char buf[64];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    static const unsigned char want[] = {0x0a, 0x0a, 0xda, 0x03, 0x03, 0xd0, 0x03, 0x40, 0x50, 0x01, 0x68,
                                         0x01, 0x0a, 0x12, 0x32, 0x0e, 0x0a, 0x06, 0x08, 0x40, 0x10, 0x00,
                                         0x18, 0x01, 0x0a, 0x04, 0x08, 0x06, 0x10, 0x00, 0x50, 0x01};
    CHECK(n > sizeof want && !memcmp(buf, want, sizeof want));
    /* then its process and its facts: it reads back, as an empty capture (it was refused: no facts) */
    opprof_capture *back = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read(path, NULL, &back, &err), 0);
    size_t events = 1, threads = 1;
    if (back) opprof_capture_events(back, &events), opprof_capture_threads(back, &threads);
    CHECK_INT(events, 0);
    CHECK_INT(threads, 0);
    opprof_capture_free(back);
    opprof_capture_free(c);
    remove_tree(dir);
}

/* One thread, one slice of 1 us at 5 us: the clock snapshot puts the delta
 * clock at the base time, the begin packet carries its timestamp (field 8)
 * as the delta 5000 from it, the end as 1000 more, and its name is
 * interned as iid 1. */
TEST_CASE(one_slice_bytes) {
    opprof_capture *c;
    uint32_t t;
    CHECK_INT(opprof_capture_new(&c), 0);
    opprof_capture_info info = opprof_capture_get_info(c);
    info.base_time_ns = 1000000;
    opprof_capture_set_info(c, &info);
    CHECK_INT(opprof_capture_add_thread(c, 7, "main", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "work", OPPROF_KIND_CPU_OP, 5000, 1000), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    CHECK_INT(opprof_capture_perfetto_write_stream(c, mem), 0);
    fclose(mem);
    /* BOOTTIME (clock_id 0x08 0x06) at 1000000 (timestamp 0x10, varint 0xc0 0x84 0x3d) */
    static const unsigned char boot[] = {0x08, 0x06, 0x10, 0xc0, 0x84, 0x3d};
    CHECK(memmem(text, size, boot, sizeof boot) != NULL);
    /* deltas after tag 0x40: 5000 = varint 0x88 0x27, then 1000 = 0xe8 0x07 */
    static const unsigned char begin_ts[] = {0x40, 0x88, 0x27}, end_ts[] = {0x40, 0xe8, 0x07};
    CHECK(memmem(text, size, begin_ts, sizeof begin_ts) != NULL);
    CHECK(memmem(text, size, end_ts, sizeof end_ts) != NULL);
    /* EventName {iid: 1 (0x08 0x01), name: "work" (0x12 0x04 w o r k)} */
    static const unsigned char name[] = {0x08, 0x01, 0x12, 0x04, 'w', 'o', 'r', 'k'};
    CHECK(memmem(text, size, name, sizeof name) != NULL);
    free(text);
    opprof_capture_free(c);
}

/* A capture with a thread, nested slices, memory and an argument, written
 * and read back: the same events, names, times, memory and facts. */
static opprof_capture *small_capture(void) {
    opprof_capture *c;
    uint32_t t;
    CHECK_INT(opprof_capture_new(&c), 0);
    opprof_capture_info info = opprof_capture_get_info(c);
    info.base_time_ns = 5000000;
    info.step_num = 7;
    info.profile_memory = true;
    opprof_capture_set_info(c, &info);
    CHECK_INT(opprof_capture_add_thread(c, 42, "worker", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "forward", OPPROF_KIND_USER_ANNOTATION, 100, 900), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "aten::addmm", OPPROF_KIND_CPU_OP, 200, 500), 0);
    CHECK_INT(opprof_capture_add_memory(c, t, 300, 0x1000, 4096, -1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t, 650, 0x1000, -4096, -1), 0);
    CHECK_INT(opprof_capture_add_warning(c, "a warning, kept"), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    return c;
}

static char *to_pftrace(const opprof_capture *c, size_t *size) {
    char *bytes = NULL;
    FILE *mem = open_memstream(&bytes, size);
    CHECK_INT(opprof_capture_perfetto_write_stream(c, mem), 0);
    fclose(mem);
    return bytes;
}

TEST_CASE(read_back) {
    opprof_capture *c = small_capture(), *back = NULL;
    size_t size;
    char *bytes = to_pftrace(c, &size);
    opprof_read_error err;
    CHECK_INT(opprof_capture_read_buffer(bytes, size, NULL, &back, &err), 0);
    size_t n, nb, m;
    const opprof_event *ev = opprof_capture_events(back, &n);
    CHECK_INT(n, 2);
    CHECK(n == 2 && !strcmp(opprof_capture_name(back, ev[0].name), "forward") && ev[0].start_ns == 0 &&
          ev[0].duration_ns == 900 && ev[1].start_ns == 100 && ev[1].duration_ns == 500 && ev[1].parent == 0);
    CHECK(n == 2 && ev[1].kind == OPPROF_KIND_CPU_OP);
    const opprof_memory_event *mem = opprof_capture_memory_events(back, &m);
    CHECK_INT(m, 2);
    CHECK(m == 2 && mem[0].bytes == 4096 && mem[0].addr == 0x1000 && mem[0].ts_ns == 200 && mem[1].bytes == -4096);
    opprof_capture_info info = opprof_capture_get_info(back);
    CHECK_INT(info.step_num, 7);
    CHECK_INT(info.base_time_ns, 5000100); /* the first event's start, as the JSON path gives it */
    CHECK(info.producer == OPPROF_PRODUCER_OPPROF);
    const opprof_thread_info *th = opprof_capture_threads(back, &nb);
    CHECK(nb == 1 && th[0].tid == 42 && !strcmp(th[0].name, "worker"));
    size_t nw;
    const char *const *w = opprof_capture_warnings(back, &nw);
    CHECK(nw >= 1 && !strcmp(w[0], "a warning, kept"));
    /* from a file: decoded on a thread of its own, streamed to the JSON reader */
    char dir[256], path[300];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/small.pftrace", dir);
    CHECK_INT(opprof_capture_perfetto_write(c, path), 0);
    opprof_capture *from_file = NULL;
    CHECK_INT(opprof_capture_read(path, NULL, &from_file, &err), 0);
    size_t nf;
    opprof_capture_events(from_file, &nf);
    CHECK_INT(nf, 2);
    opprof_capture_memory_events(from_file, &nf);
    CHECK_INT(nf, 2);
    opprof_capture_free(from_file);
    /* gzip-compressed: gzip's magic first, the same capture back */
    snprintf(path, sizeof path, "%s/small.pftrace.gz", dir);
    opprof_perfetto_options gz = {.gzip = true};
    CHECK_INT(opprof_capture_perfetto_write_ex(c, path, &gz), 0);
    FILE *f = fopen(path, "rb");
    unsigned char magic[2] = {0, 0};
    if (f) {
        CHECK_INT(fread(magic, 1, 2, f), 2);
        fclose(f);
    }
    CHECK(magic[0] == 0x1f && magic[1] == 0x8b);
    CHECK_INT(opprof_capture_read(path, NULL, &from_file, &err), 0);
    opprof_capture_events(from_file, &nf);
    CHECK_INT(nf, 2);
    opprof_capture_free(from_file);
    remove_tree(dir);
    free(bytes);
    opprof_capture_free(back);
    opprof_capture_free(c);
}

/* A child exactly as long as its parent (two scopes opened and closed back
 * to back: the same clock ticks) stays its child: the slices are read in the
 * order they began, as the JSON has them. */
TEST_CASE(child_as_long_as_its_parent) {
    opprof_capture *c, *back = NULL;
    uint32_t t;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "main", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "aten::linear", OPPROF_KIND_CPU_OP, 10, 50), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "aten::addmm", OPPROF_KIND_CPU_OP, 10, 50), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    size_t size, n;
    char *bytes = to_pftrace(c, &size);
    CHECK_INT(opprof_capture_read_buffer(bytes, size, NULL, &back, NULL), 0);
    const opprof_event *ev = opprof_capture_events(back, &n);
    CHECK(n == 2 && !strcmp(opprof_capture_name(back, ev[0].name), "aten::linear") && ev[1].parent == 0 &&
          !strcmp(opprof_capture_name(back, ev[1].name), "aten::addmm"));
    free(bytes);
    opprof_capture_free(back);
    opprof_capture_free(c);
}

/* Thousands of threads, each with a slice and a memory event: every track
 * is found again by its uuid (a hash table, grown many times over), every
 * event back on its own thread. */
TEST_CASE(many_threads_read_back) {
    enum { THREADS = 3000 };
    opprof_capture *c, *back = NULL;
    CHECK_INT(opprof_capture_new(&c), 0);
    opprof_capture_info info = opprof_capture_get_info(c);
    info.profile_memory = true;
    opprof_capture_set_info(c, &info);
    for (int i = 0; i < THREADS; i++) {
        uint32_t t;
        char name[32];
        snprintf(name, sizeof name, "worker %d", i);
        CHECK_INT(opprof_capture_add_thread(c, 1000 + i, name, &t), 0);
        CHECK_INT(opprof_capture_add_event(c, t, "aten::addmm", OPPROF_KIND_CPU_OP, 10 * i, 5), 0);
        CHECK_INT(opprof_capture_add_memory(c, t, 10 * i + 1, 0x1000 + (uint64_t)i, 64, -1), 0);
    }
    CHECK_INT(opprof_capture_finish(c), 0);
    size_t size, n, nt, nm;
    char *bytes = to_pftrace(c, &size);
    CHECK_INT(opprof_capture_read_buffer(bytes, size, NULL, &back, NULL), 0);
    const opprof_event *ev = opprof_capture_events(back, &n);
    const opprof_thread_info *th = opprof_capture_threads(back, &nt);
    const opprof_memory_event *mem = opprof_capture_memory_events(back, &nm);
    CHECK_INT(n, THREADS);
    CHECK_INT(nt, THREADS);
    CHECK_INT(nm, THREADS);
    int right = 0;
    for (size_t i = 0; back && i < n && i < nm; i++) {
        const opprof_thread_info *et = &th[ev[i].thread], *mt = &th[mem[i].thread];
        char want[32];
        snprintf(want, sizeof want, "worker %lld", (long long)(et->tid - 1000));
        right += !strcmp(et->name, want) && mt->tid == 1000 + (int64_t)(mem[i].addr - 0x1000) && mem[i].bytes == 64;
    }
    CHECK_INT(right, THREADS);
    free(bytes);
    opprof_capture_free(back);
    opprof_capture_free(c);
}

/* Many processes, their threads interleaved (pids 0 to 999, three times
 * over): each thread read back under its own process. The writer found each
 * thread's process by a search of those before (6.3 s for 200,000
 * processes, 0.22 s now); this checks the index that replaced it. */
TEST_CASE(many_processes_read_back) {
    enum { PROCESSES = 1000, THREADS = 3 * PROCESSES };
    size_t cap = 64 + (size_t)THREADS * 96, len = 0, size, nt;
    char *json = malloc(cap);
    CHECK(json != NULL);
    if (!json) return;
    len += (size_t)snprintf(json + len, cap - len, "{\"traceEvents\": [");
    for (int i = 0; i < THREADS; i++)
        len += (size_t)snprintf(json + len, cap - len,
                                "%s{\"ph\":\"X\",\"name\":\"e\",\"pid\":%d,\"tid\":%d,\"ts\":%d,\"dur\":1}",
                                i ? "," : "", i % PROCESSES, 100000 + i, 10 * i);
    len += (size_t)snprintf(json + len, cap - len, "]}");
    opprof_capture *c = NULL, *back = NULL;
    CHECK_INT(opprof_capture_read_buffer(json, len, NULL, &c, NULL), 0);
    char *bytes = c ? to_pftrace(c, &size) : NULL;
    CHECK_INT(bytes ? opprof_capture_read_buffer(bytes, size, NULL, &back, NULL) : -1, 0);
    const opprof_thread_info *th = back ? opprof_capture_threads(back, &nt) : NULL;
    int right = 0;
    for (size_t i = 0; th && i < nt; i++) right += th[i].pid == (th[i].tid - 100000) % PROCESSES;
    CHECK_INT(th ? (int)nt : 0, THREADS);
    CHECK_INT(right, THREADS);
    free(bytes);
    free(json);
    opprof_capture_free(back);
    opprof_capture_free(c);
}

/* A Kineto-style trace's start in a buffer of cap bytes (the caller's to
 * free): its event array and one range; *len its length. */
static char *kineto_trace_head(size_t cap, size_t *len) {
    char *json = malloc(cap);
    CHECK(json != NULL);
    if (json)
        *len = (size_t)snprintf(json, cap,
                                "{\"traceEvents\": [{\"ph\":\"X\",\"name\":\"forward\",\"pid\":1,"
                                "\"tid\":1,\"ts\":0,\"dur\":1000}");
    return json;
}

/* Memory of a hundred devices: each allocator's counter track described
 * once (past 64 allocators, each sample used to describe its track again). */
TEST_CASE(many_allocators_one_track_each) {
    /* Kineto's [memory] events name their device: read from JSON, written as .pftrace */
    size_t cap = 1 << 16, len = 0;
    char *json = kineto_trace_head(cap, &len);
    if (!json) return;
    for (int i = 0; i < 300; i++)
        len +=
            (size_t)snprintf(json + len, cap - len,
                             ",{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":%d,\"args\":"
                             "{\"Device Type\":1,\"Device Id\":%d,\"Addr\":4096,\"Bytes\":64}}",
                             1 + i, i % 100);
    len += (size_t)snprintf(json + len, cap - len, "]}");
    CHECK(len < cap);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read_buffer(json, len, NULL, &c, NULL), 0);
    free(json);
    if (!c) return;
    size_t size;
    char *bytes = to_pftrace(c, &size);
    int once = 0;
    for (int d = 0; d < 100; d++) {
        char name[32];
        snprintf(name, sizeof name, "device 1:%d memory", d);
        int count = 0;
        for (const char *q = bytes; (q = memmem(q, size - (size_t)(q - bytes), name, strlen(name))); q++) count++;
        once += count == 1;
    }
    CHECK_INT(once, 100);
    free(bytes);
    opprof_capture_free(c);
}

/* Memory samples say their bytes and thread only where the sample before
 * does not tell them: read back, every memory event is as it was, whether
 * its bytes are its track's change or not (two threads allocating in turn,
 * written thread by thread; a free; two allocators; totals unknown). */
TEST_CASE(memory_samples_read_back_whole) {
    size_t cap = 1 << 16, len = 0;
    char *json = kineto_trace_head(cap, &len);
    if (!json) return;
    long long total[2] = {0, 0};
    for (int i = 0; i < 200; i++) {
        int device = i % 7 == 0, bytes = i % 3 == 2 ? -64 : 64 + i;
        total[device] += bytes;
        char totals[64] = ""; /* every fifth without its total: read as unknown */
        if (i % 5) snprintf(totals, sizeof totals, ",\"Total Allocated\":%lld", total[device]);
        len +=
            (size_t)snprintf(json + len, cap - len,
                             ",{\"ph\":\"i\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"args\":"
                             "{\"Device Type\":%d,\"Device Id\":%d,\"Addr\":%d,\"Bytes\":%d%s}}",
                             1 + i % 2, 1 + i, device, device ? 0 : -1, 4096 + 64 * i, bytes, totals);
    }
    len += (size_t)snprintf(json + len, cap - len, "]}");
    CHECK(len < cap);
    opprof_capture *c = NULL, *back = NULL;
    CHECK_INT(opprof_capture_read_buffer(json, len, NULL, &c, NULL), 0);
    free(json);
    if (!c) return;
    size_t size;
    char *bytes = to_pftrace(c, &size);
    CHECK_INT(opprof_capture_read_buffer(bytes, size, NULL, &back, NULL), 0);
    size_t n = 0, nb = 0;
    const opprof_memory_event *m = opprof_capture_memory_events(c, &n),
                              *mb = back ? opprof_capture_memory_events(back, &nb) : NULL;
    const opprof_thread_info *th = opprof_capture_threads(c, NULL),
                             *thb = back ? opprof_capture_threads(back, NULL) : NULL;
    CHECK_INT(n, 200);
    CHECK_INT(nb, n);
    int same = 0;
    for (size_t j = 0; mb && j < n && j < nb; j++)
        same += m[j].ts_ns == mb[j].ts_ns && m[j].addr == mb[j].addr && m[j].bytes == mb[j].bytes &&
                m[j].total_allocated == mb[j].total_allocated && m[j].device_type == mb[j].device_type &&
                m[j].device_id == mb[j].device_id && th[m[j].thread].tid == thb[mb[j].thread].tid;
    CHECK_INT(same, 200);
    free(bytes);
    opprof_capture_free(c);
    opprof_capture_free(back);
}

/* Bytes that are no .pftrace of opprof's: an error that says which packet,
 * which byte and why; nothing else. */
TEST_CASE(read_errors_name_packet_and_reason) {
    opprof_capture *c = small_capture(), *back = NULL;
    size_t size;
    char *bytes = to_pftrace(c, &size);
    opprof_read_error err;
    /* cut inside a packet */
    CHECK_INT(opprof_capture_read_buffer(bytes, size - 3, NULL, &back, &err), OPPROF_EFORMAT);
    CHECK_CONTAINS(err.message, "Perfetto trace: packet ");
    CHECK_CONTAINS(err.message, "(byte ");
    CHECK(back == NULL);
    /* only the first packet: no facts */
    size_t first = 2 + (size_t)(unsigned char)bytes[1]; /* its tag, its length (one byte) and it */
    CHECK_INT(opprof_capture_read_buffer(bytes, first, NULL, &back, &err), OPPROF_EFORMAT);
    CHECK_CONTAINS(err.message, "no 'opprof capture' facts: not a trace that opprof wrote");
    /* an event on a track never described: a Trace of one packet {track_event {track_uuid: 9}} */
    static const unsigned char stray[] = {0x0a, 0x04, 0x5a, 0x02, 0x58, 0x09};
    CHECK_INT(opprof_capture_read_buffer(stray, sizeof stray, NULL, &back, &err), OPPROF_EFORMAT);
    CHECK_CONTAINS(err.message, "an event on a track that no descriptor named before it");
    /* a wire type protobuf does not have (7) */
    static const unsigned char bad_wire[] = {0x0a, 0x02, 0x0f, 0x00};
    CHECK_INT(opprof_capture_read_buffer(bad_wire, sizeof bad_wire, NULL, &back, &err), OPPROF_EFORMAT);
    CHECK_CONTAINS(err.message, "a packet that is no protobuf");
    /* a memory sample without its address: its extra counter value (field 12,
     * 0x1000: 60 80 20) turned into a field the reader does not know (13) */
    char *no_address = malloc(size);
    memcpy(no_address, bytes, size);
    size_t at = 0;
    while (at + 3 <= size && memcmp(no_address + at, "\x60\x80\x20", 3) != 0) at++;
    CHECK(at + 3 <= size);
    if (at + 3 <= size) no_address[at] = 0x68;
    CHECK_INT(opprof_capture_read_buffer(no_address, size, NULL, &back, &err), OPPROF_EFORMAT);
    CHECK_CONTAINS(err.message, "a memory sample without its address");
    CHECK(back == NULL);
    free(no_address);
    /* a file: the path's error, gzip or not, reads the same */
    char dir[256], path[300];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/cut.pftrace", dir);
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, size / 2, f);
    fclose(f);
    CHECK_INT(opprof_capture_read(path, NULL, &back, &err), OPPROF_EFORMAT);
    CHECK_CONTAINS(err.message, "Perfetto trace: packet ");
    remove_tree(dir);
    free(bytes);
    opprof_capture_free(c);
}

/* Slices that begin with the slice around them, under a range open the whole
 * time (a program's main): read back, each keeps its parent, as in the
 * capture (the reader sends a slice out when it ends, and one that began
 * with its parent after that parent). Two threads in turn. */
TEST_CASE(same_start_slices_keep_their_parents) {
    opprof_capture *c;
    uint32_t t[2];
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "a", &t[0]), 0);
    CHECK_INT(opprof_capture_add_thread(c, 2, "b", &t[1]), 0);
    for (int k = 0; k < 2; k++) {
        CHECK_INT(opprof_capture_add_event(c, t[k], "main", OPPROF_KIND_USER_ANNOTATION, 0, 100000), 0);
        for (int i = 0; i < 50; i++) {
            int64_t at = 10 + i * 1000;
            CHECK_INT(opprof_capture_add_event(c, t[k], "outer", OPPROF_KIND_CPU_OP, at, 500), 0);
            CHECK_INT(opprof_capture_add_event(c, t[k], "same", OPPROF_KIND_CPU_OP, at, 500), 0); /* its whole span */
            CHECK_INT(opprof_capture_add_event(c, t[k], "first", OPPROF_KIND_CPU_OP, at, 200), 0);
            CHECK_INT(opprof_capture_add_event(c, t[k], "zero", OPPROF_KIND_CPU_OP, at, 0), 0);
            CHECK_INT(opprof_capture_add_event(c, t[k], "later", OPPROF_KIND_CPU_OP, at + 300, 100), 0);
        }
    }
    CHECK_INT(opprof_capture_finish(c), 0);
    size_t size, n, nb;
    char *bytes = to_pftrace(c, &size);
    opprof_capture *back = NULL;
    CHECK_INT(opprof_capture_read_buffer(bytes, size, NULL, &back, NULL), 0);
    const opprof_event *ev = opprof_capture_events(c, &n), *eb = back ? opprof_capture_events(back, &nb) : NULL;
    CHECK_INT(nb, n);
    size_t same = 0;
    for (size_t i = 0; eb && i < n && nb == n; i++) {
        const char *parent = ev[i].parent < 0 ? "-" : opprof_capture_name(c, ev[ev[i].parent].name);
        const char *parent_back = eb[i].parent < 0 ? "-" : opprof_capture_name(back, eb[eb[i].parent].name);
        same += !strcmp(opprof_capture_name(c, ev[i].name), opprof_capture_name(back, eb[i].name)) &&
                !strcmp(parent, parent_back) && ev[i].start_ns == eb[i].start_ns &&
                ev[i].duration_ns == eb[i].duration_ns;
    }
    CHECK_INT(same, n);
    free(bytes);
    opprof_capture_free(c);
    opprof_capture_free(back);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_pftrace"); }

/* ---- the round trip: a trace written as JSON and as .pftrace gives the
 * tables, stacks and diff that it gave ---- */

static int by_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* What a user sees of a capture: its table (device columns, warnings and
 * notes under it), its folded stacks by self time, by bytes and by samples,
 * and its diff against `against`. */
static char *seen(const opprof_capture *c, const opprof_capture *against) {
    char *table = NULL, *self = NULL, *bytes = NULL, *samples = NULL, *diff = NULL, *all = NULL;
    opprof_averages *avg = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    if (avg)
        CHECK_INT(
            opprof_averages_table_to_string(avg, &(opprof_table_options){.sort = OPPROF_SORT_SELF_CPU_TIME}, &table),
            0);
    opprof_averages_free(avg);
    CHECK_INT(opprof_capture_stacks_to_string(c, OPPROF_STACKS_SELF_TIME, &self), 0);
    CHECK_INT(opprof_capture_stacks_to_string(c, OPPROF_STACKS_ALLOCATED_BYTES, &bytes), 0);
    CHECK_INT(opprof_capture_stacks_to_string(c, OPPROF_STACKS_SAMPLES, &samples), 0);
    CHECK_INT(opprof_capture_diff_to_string(against, c, 0, OPPROF_DIFF_TEXT, &diff), 0);
    opprof_capture_info info = opprof_capture_get_info(c);
    size_t n_samples, n_threads;
    opprof_capture_samples(c, &n_samples);
    const opprof_thread_info *th = opprof_capture_threads(c, &n_threads);
    char **lines = calloc(n_threads + 1, sizeof *lines), threads[8192] = "";
    for (size_t k = 0; k < n_threads; k++) /* each thread: its name and process, in (pid, tid) order */
        CHECK(asprintf(&lines[k], "%020lld:%020lld '%s' '%s'%s\n", (long long)th[k].pid + (1ll << 62),
                       (long long)th[k].tid + (1ll << 62), th[k].name, th[k].process,
                       th[k].device ? " device" : "") > 0);
    qsort(lines, n_threads, sizeof *lines, by_text);
    for (size_t k = 0, at = 0; k < n_threads; k++) {
        if (at + strlen(lines[k]) + 1 < sizeof threads)
            at += (size_t)snprintf(threads + at, sizeof threads - at, "%s", lines[k]);
        free(lines[k]);
    }
    free(lines);
    CHECK(asprintf(&all,
                   "device %s, unended %lld, %zu samples, machine %d, producer %s\n%s%s\n--self\n%s\n--bytes\n%s"
                   "\n--samples\n%s\n--diff\n%s",
                   info.device_name, (long long)info.unended_ns, n_samples, opprof_capture_machine(c) != NULL,
                   opprof_producer_name(info.producer), threads, table ? table : "", self ? self : "",
                   bytes ? bytes : "", samples ? samples : "", diff ? diff : "") > 0);
    opprof_free(table);
    opprof_free(self);
    opprof_free(bytes);
    opprof_free(samples);
    opprof_free(diff);
    return all;
}

/* `c` written to path (JSON or .pftrace by its name), read back, seen. */
static char *seen_after(const opprof_capture *c, const char *path) {
    int rc = strstr(path, ".pftrace") ? opprof_capture_perfetto_write(c, path) : opprof_capture_chrome_write(c, path);
    CHECK_INT(rc, 0);
    opprof_capture *back = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read(path, NULL, &back, &err), 0);
    if (!back) {
        fprintf(stderr, "  %s: %s\n", path, err.message);
        return strdup("");
    }
    char *text = seen(back, c);
    opprof_capture_free(back);
    return text;
}

/* A capture with what no fixture holds: a device activity and its launcher,
 * a machine, a C++ name demangled, and more warnings than an event has
 * room for in one packet's fixed arrays. */
static opprof_capture *device_capture(void) {
    opprof_capture *c;
    uint32_t cpu, gpu;
    CHECK_INT(opprof_capture_new(&c), 0);
    opprof_capture_info info = opprof_capture_get_info(c);
    info.pid = 900;
    snprintf(info.device_name, sizeof info.device_name, "MTIA");
    opprof_capture_set_info(c, &info);
    CHECK_INT(opprof_capture_add_thread(c, 901, "main", &cpu), 0);
    CHECK_INT(opprof_capture_add_thread(c, 7, "stream 7", &gpu), 0);
    CHECK_INT(opprof_capture_add_event(c, cpu, "aten::mm", OPPROF_KIND_CPU_OP, 0, 1000), 0);
    CHECK_INT(opprof_capture_add_event(c, cpu, "aten::relu", OPPROF_KIND_CPU_OP, 1000, 500), 0);
    CHECK_INT(opprof_capture_add_event(c, gpu, "gemm_kernel", OPPROF_KIND_DEVICE, 300, 4000), 0);
    for (int k = 0; k < 40; k++) {
        char w[64];
        snprintf(w, sizeof w, "warning %d of 40", k);
        CHECK_INT(opprof_capture_add_warning(c, w), 0);
    }
    CHECK_INT(opprof_capture_finish(c), 0);
    size_t n, n_threads;
    opprof_thread_info *th = (opprof_thread_info *)opprof_capture_threads(c, &n_threads);
    for (size_t k = 0; k < n_threads; k++) th[k].pid = 900; /* as a recorded capture's */
    opprof_event *ev = (opprof_event *)opprof_capture_events(c, &n);
    for (size_t i = 0; i < n; i++) /* the kernel's launcher: aten::mm (a hand-built capture sets it so) */
        if (ev[i].kind == OPPROF_KIND_DEVICE)
            for (size_t j = 0; j < n; j++)
                if (!strcmp(opprof_capture_name(c, ev[j].name), "aten::mm")) ev[i].parent = (int32_t)j;
    opprof_machine m = {.threads = 1};
    snprintf(m.cpu, sizeof m.cpu, "Test CPU");
    snprintf(m.isa, sizeof m.isa, "AVX2");
    m.by_threads[0].threads = 1;
    m.by_threads[0].fma_peak_gflops = 100;
    static const char *const names[] = {"L1", "L2", "LLC", "DRAM"};
    for (int l = 0; l < 4 && l < OPPROF_MACHINE_LEVELS; l++) {
        opprof_machine_level *lv = &m.by_threads[0].levels[l];
        snprintf(lv->name, sizeof lv->name, "%s", names[l]);
        lv->bytes = l < 3 ? (int64_t)32768 << (4 * l) : 0;
        lv->load_gbs = 400.0 / (l + 1);
        lv->copy_gbs = 300.0 / (l + 1);
    }
    CHECK_INT(opprof_capture_set_machine(c, &m), 0);
    return c;
}

TEST_CASE(round_trip_gives_the_same_tables) {
    static const char *const fixtures[] = {
        "real-traces/catapult__flow.json.gz",
        "real-traces/catapult__multiple_input_latency.json.gz",
        "real-traces/hta__amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
        "real-traces/hta__cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
        "real-traces/hta__mtia_inference_trace__mtia_inference_rank_0.json.gz",
        "real-traces/hta__nccl_parser_config__nccl_data.json.gz",
        "real-traces/hta__triton_example__triton_example.json.gz",
        "real-traces/kineto__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
        "real-traces/kineto__test__gpu_metrics_input.json.gz",
        "onnxruntime-1.30/mlp.json",
        "pytorch-1.13/cpu-step-4.legacy.json",
        "fuzz/samples-tree.json",
        "fuzz/profile-chunk.json",
        "fuzz/hostile-memory.json",
        "fuzz/hostile-flops.json",
        "fuzz/begin-end-pairs.json",
        "fuzz/legacy.json",
        "fuzz/pftrace-samples",
        "run/cpu-step-4.json" /* profile_cpu's, below */,
        NULL /* the capture built here */};
    char dir[256], json[300], pftrace[300];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(json, sizeof json, "%s/trip.json", dir);
    snprintf(pftrace, sizeof pftrace, "%s/trip.pftrace", dir);
    /* opprof's own: memory, shapes, call sites, FLOPs, samples when perf events are allowed, off-CPU times */
    CHECK_INT(run_commandf(NULL,
                           "'%s/profile_cpu' --quiet --steps 4 --record-shapes --with-stack --with-flops "
                           "--sample 4000 --cpu-time '%s/run' >/dev/null 2>&1",
                           bin_dir(), dir),
              0);
    for (size_t k = 0; k < sizeof fixtures / sizeof *fixtures; k++) {
        opprof_capture *c = NULL;
        if (fixtures[k]) {
            char path[512];
            opprof_read_error err;
            if (!strncmp(fixtures[k], "run/", 4))
                snprintf(path, sizeof path, "%s/%s", dir, fixtures[k]);
            else
                snprintf(path, sizeof path, "%s/tests/fixtures/%s", source_dir(), fixtures[k]);
            CHECK_INT(opprof_capture_read(path, NULL, &c, &err), 0);
        } else {
            c = device_capture();
        }
        if (!c) continue;
        char *before = seen(c, c), *as_json = seen_after(c, json), *as_pftrace = seen_after(c, pftrace);
        const char *name = fixtures[k] ? fixtures[k] : "device_capture";
        if (strcmp(before, as_json))
            fprintf(stderr, "  %s: JSON differs\n--- read\n%s\n--- back\n%s\n", name, before, as_json);
        if (strcmp(before, as_pftrace))
            fprintf(stderr, "  %s: .pftrace differs\n--- read\n%s\n--- back\n%s\n", name, before, as_pftrace);
        CHECK_STR(as_json, before);
        CHECK_STR(as_pftrace, before);
        if (!fixtures[k]) { /* what it holds was there to see */
            CHECK_CONTAINS(before, "device MTIA");
            CHECK_CONTAINS(before, "machine 1");
            CHECK_CONTAINS(before, "Self MTIA");
            CHECK_CONTAINS(before, "Warnings: 40");
        }
        free(before);
        free(as_json);
        free(as_pftrace);
        opprof_capture_free(c);
    }
    remove_tree(dir);
}

/* Bytes of `len` at the first `from` in buf replaced by `to` (as long). */
static bool replace_bytes(char *buf, size_t size, const char *from, const char *to) {
    size_t n = strlen(from);
    char *at = memmem(buf, size, from, n);
    if (!at || strlen(to) != n) return false;
    memcpy(at, to, n);
    return true;
}

/* A .pftrace's strings never become JSON of their own: a facts number whose
 * name closes its key and opens another (the name was written unescaped:
 * it set step_num), and Input Dims that close their array and add an
 * argument (they were written as they were: FLOPs 9 appeared) are read as
 * text. */
TEST_CASE(crafted_strings_stay_strings) {
    static const char trace[] =
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":0,"
        "\"dur\":10,\"args\":{\"Input Dims\":[[2, 3], [3, 4]],\"Input type\":[\"float\", \"float\"]}}]}";
    opprof_capture *c = NULL, *back = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read_buffer(trace, strlen(trace), NULL, &c, &err), 0);
    if (!c) return;
    opprof_capture_info info = opprof_capture_get_info(c);
    info.step_num = 7;
    opprof_capture_set_info(c, &info);
    size_t size;
    char *bytes = to_pftrace(c, &size);
    CHECK(replace_bytes(bytes, size, "overhead_range_ns", "qq\": 0, \"step_num"));
    CHECK(replace_bytes(bytes, size, "[[2, 3], [3, 4]]", "[[2]], \"FLOPs\":9"));
    CHECK_INT(opprof_capture_read_buffer(bytes, size, NULL, &back, &err), 0);
    if (back) {
        CHECK_INT(opprof_capture_get_info(back).step_num, 7);
        char *json = NULL;
        size_t json_size = 0;
        FILE *mem = open_memstream(&json, &json_size);
        CHECK_INT(opprof_capture_chrome_write_stream(back, mem, NULL), 0);
        fclose(mem);
        CHECK(json && !strstr(json, "\"FLOPs\""));
        CHECK(json && !strstr(json, "\"qq\""));
        free(json);
    }
    opprof_capture_free(back);
    free(bytes);
    opprof_capture_free(c);
}

/* ---- .pftrace bytes written here, field by field (Perfetto's schema) ---- */

typedef struct pb {
    unsigned char *b;
    size_t n, cap;
} pb;

static void pb_raw(pb *m, const void *p, size_t n) {
    if (m->n + n > m->cap) {
        m->cap = (m->n + n) * 2;
        m->b = realloc(m->b, m->cap);
    }
    memcpy(m->b + m->n, p, n);
    m->n += n;
}
static void pb_varint(pb *m, uint64_t v) {
    unsigned char c[10];
    size_t k = 0;
    do c[k++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0)), v >>= 7;
    while (v);
    pb_raw(m, c, k);
}
static void pb_uint(pb *m, unsigned field, uint64_t v) { pb_varint(m, (uint64_t)field << 3), pb_varint(m, v); }
static void pb_bytes(pb *m, unsigned field, const void *p, size_t n) {
    pb_varint(m, (uint64_t)field << 3 | 2), pb_varint(m, n), pb_raw(m, p, n);
}
static void pb_str(pb *m, unsigned field, const char *s) { pb_bytes(m, field, s, strlen(s)); }
static void pb_msg(pb *m, unsigned field, pb *inner) { /* inner is emptied */
    pb_bytes(m, field, inner->b, inner->n);
    inner->n = 0;
}

/* A trace of one thread, its slice named by an interned iid, and a sample
 * whose frame, function name and callstack have iids too, each `iid`; and a
 * sample of a callstack with no frame (code with no symbols: JIT). */
static pb trace_of_iids(uint64_t iid) {
    pb t = {0}, p = {0}, a = {0}, b = {0};
    pb_uint(&a, 1, 1), pb_uint(&b, 1, 5), pb_msg(&a, 3, &b); /* track 1: process 5 */
    pb_msg(&p, 60, &a), pb_msg(&t, 1, &p);
    pb_uint(&p, 8, 0); /* the facts, at 0 */
    pb_uint(&a, 9, 3), pb_uint(&a, 11, 1), pb_str(&a, 23, "opprof capture");
    pb_str(&b, 10, "time_origin"), pb_uint(&b, 4, 0), pb_msg(&a, 4, &b);
    pb_msg(&p, 11, &a), pb_msg(&t, 1, &p);
    pb_uint(&a, 1, 2), pb_uint(&b, 1, 5), pb_uint(&b, 2, 6), pb_str(&b, 5, "main"),
        pb_msg(&a, 4, &b); /* track 2: thread 6 */
    pb_msg(&p, 60, &a), pb_msg(&t, 1, &p);
    pb_uint(&p, 8, 1000); /* a slice named by iid, 1 us to 2 us */
    pb_uint(&b, 1, iid), pb_str(&b, 2, "work"), pb_msg(&a, 2, &b), pb_msg(&p, 12, &a);
    pb_uint(&a, 9, 1), pb_uint(&a, 11, 2), pb_uint(&a, 10, iid), pb_msg(&p, 11, &a), pb_msg(&t, 1, &p);
    pb_uint(&p, 8, 2000), pb_uint(&a, 9, 2), pb_uint(&a, 11, 2), pb_msg(&p, 11, &a), pb_msg(&t, 1, &p);
    pb_uint(&p, 8, 1500); /* a sample: function name, frame and callstack by iid */
    pb_uint(&b, 1, iid), pb_str(&b, 2, "sampled_function"), pb_msg(&a, 5, &b);
    pb_uint(&b, 1, iid), pb_uint(&b, 2, iid), pb_msg(&a, 6, &b);
    pb_uint(&b, 1, iid), pb_uint(&b, 2, iid), pb_msg(&a, 7, &b);
    pb_uint(&b, 1, 7), pb_msg(&a, 7, &b); /* callstack 7: no frame */
    pb_msg(&p, 12, &a);
    pb_uint(&a, 2, 5), pb_uint(&a, 3, 6), pb_uint(&a, 4, iid), pb_msg(&p, 66, &a), pb_msg(&t, 1, &p);
    pb_uint(&p, 8, 1600), pb_uint(&a, 2, 5), pb_uint(&a, 3, 6), pb_uint(&a, 4, 7), pb_msg(&p, 66, &a),
        pb_msg(&t, 1, &p);
    free(p.b), free(a.b), free(b.b);
    return t;
}

/* The peak RSS (KiB) of reading bytes as a trace, in a child of its own;
 * *rc its code, *events and *samples what it held. */
static long rss_of_reading(const char *path, int *rc, size_t *events, size_t *samples) {
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        opprof_capture *c = NULL;
        opprof_read_error err;
        long out[4] = {opprof_capture_read(path, NULL, &c, &err), 0, 0, 0};
        if (c) opprof_capture_events(c, (size_t *)&out[1]), opprof_capture_samples(c, (size_t *)&out[2]);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        out[3] = ru.ru_maxrss;
        if (write(fds[1], out, sizeof out) != sizeof out) _exit(1);
        _exit(0);
    }
    close(fds[1]);
    long in[4] = {-1, 0, 0, 0};
    CHECK(read(fds[0], in, sizeof in) == (ssize_t)sizeof in);
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    *rc = (int)in[0], *events = (size_t)in[1], *samples = (size_t)in[2];
    return in[3];
}

/* The reader's memory follows what the trace holds, not the values of its
 * iids nor the size of what it inflates to (issue 50, item 8): iids of
 * 2^24 - 1 (its arrays by iid took 1.97 GB) and 2^62 read in a few MB, and
 * a frameless sample reads back (it was "never interned"). A .pftrace.gz
 * whose packet says 1 GiB of zeros is refused at that packet's head
 * without inflating it (the file was inflated whole first). */
TEST_CASE(memory_follows_what_the_trace_holds) {
    char dir[256], path[300];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/iids.pftrace", dir);
    const uint64_t iids[] = {(1u << 24) - 1, (uint64_t)1 << 62};
    long base = 0;
    for (size_t k = 0; k < 2; k++) {
        pb t = trace_of_iids(iids[k]);
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite(t.b, 1, t.n, f) == t.n);
        if (f) fclose(f);
        free(t.b);
        int rc;
        size_t events, samples;
        long rss = rss_of_reading(path, &rc, &events, &samples);
        CHECK_INT(rc, 0);
        CHECK_INT(events, 1);
        CHECK_INT(samples, 2);
        if (k == 0) {
            int brc;
            size_t be, bs;
            base = rss_of_reading(dir, &brc, &be, &bs); /* the same child reading nothing: its floor */
        }
        CHECK(rss < base + 100 * 1024); /* 100 MiB above the floor: the arrays by iid were 1.97 GB */
    }
    snprintf(path, sizeof path, "%s/bomb.pftrace.gz", dir);
    gzFile gz = gzopen(path, "wb9");
    static const unsigned char head[] = {0x0a, 0x80, 0x80, 0x80, 0x80, 0x04}; /* packet: 1 GiB */
    gzwrite(gz, head, sizeof head);
    static char zeros[1 << 16];
    for (int k = 0; k < (256 << 20) / (int)sizeof zeros; k++) gzwrite(gz, zeros, sizeof zeros);
    gzclose(gz);
    int rc;
    size_t events, samples;
    long rss = rss_of_reading(path, &rc, &events, &samples);
    CHECK_INT(rc, OPPROF_EFORMAT);
    CHECK(rss < base + 100 * 1024); /* 256 MiB inflated would pass it */
    opprof_capture *c = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read(path, NULL, &c, &err), OPPROF_EFORMAT);
    CHECK_CONTAINS(err.message, "a packet of 1073741824 bytes, more than the 256 MiB opprof reads in one");
    remove_tree(dir);
}

/* 20,000 zero-length slices that begin with their parent, and a second
 * parent's: each stays its parent's child (an end walked every slice
 * waiting below it: 500,000 took 83 s). */
TEST_CASE(many_children_at_their_parents_start) {
    opprof_capture *c, *back = NULL;
    uint32_t t;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "main", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "parent", OPPROF_KIND_USER_ANNOTATION, 0, 1000), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "second", OPPROF_KIND_USER_ANNOTATION, 2000, 1000), 0);
    for (int i = 0; i < 20000; i++) {
        CHECK_INT(opprof_capture_add_event(c, t, "child", OPPROF_KIND_CPU_OP, 0, 0), 0);
        CHECK_INT(opprof_capture_add_event(c, t, "late", OPPROF_KIND_CPU_OP, 2000, 0), 0);
    }
    CHECK_INT(opprof_capture_finish(c), 0);
    size_t size;
    char *bytes = to_pftrace(c, &size);
    opprof_read_error err;
    CHECK_INT(opprof_capture_read_buffer(bytes, size, NULL, &back, &err), 0);
    size_t n = 0, children = 0, late = 0;
    const opprof_event *ev = back ? opprof_capture_events(back, &n) : NULL;
    CHECK_INT(n, 40002);
    for (size_t i = 0; i < n; i++) {
        const char *name = opprof_capture_name(back, ev[i].name);
        const char *parent = ev[i].parent >= 0 ? opprof_capture_name(back, ev[ev[i].parent].name) : "";
        children += !strcmp(name, "child") && !strcmp(parent, "parent");
        late += !strcmp(name, "late") && !strcmp(parent, "second");
    }
    CHECK_INT(children, 20000);
    CHECK_INT(late, 20000);
    free(bytes);
    opprof_capture_free(back);
    opprof_capture_free(c);
}

typedef struct said_problems {
    int n, placed;
    char first[512];
} said_problems;

static void note_problem(void *ctx, const opprof_trace_problem *p) {
    said_problems *s = ctx;
    if (!s->n++) snprintf(s->first, sizeof s->first, "%s", p->message);
    s->placed += p->line != 0 || p->offset >= 0;
}

/* What opprof check says of a .pftrace names no place of the JSON it is
 * translated into (it said lines and bytes of that text): no line, no
 * byte, and the other event by its start. */
TEST_CASE(problems_name_no_place_of_the_translation) {
    opprof_capture *c;
    uint32_t t;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "main", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "outer", OPPROF_KIND_USER_ANNOTATION, 0, 100000), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "across", OPPROF_KIND_CPU_OP, 50000, 100000),
              0); /* overlaps, no nesting */
    CHECK_INT(opprof_capture_finish(c), 0);
    size_t size;
    char *bytes = to_pftrace(c, &size);
    char dir[256], path[300];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/overlap.pftrace", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(bytes, 1, size, f) == size);
    if (f) fclose(f);
    for (int from_file = 0; from_file < 2; from_file++) {
        said_problems s = {0};
        opprof_read_options opt = {.on_problem = note_problem, .ctx = &s};
        opprof_capture *back = NULL;
        opprof_read_error err;
        int rc = from_file ? opprof_capture_read(path, &opt, &back, &err)
                           : opprof_capture_read_buffer(bytes, size, &opt, &back, &err);
        CHECK_INT(rc, 0);
        CHECK(s.n >= 1);
        CHECK_INT(s.placed, 0);
        CHECK_CONTAINS(s.first, "overlaps 'outer' (starting at 0.000 us)");
        opprof_capture_free(back);
    }
    remove_tree(dir);
    free(bytes);
    opprof_capture_free(c);
}
