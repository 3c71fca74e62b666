/* test_perfetto_write.c - opprof_capture_perfetto_write's contract: bad
 * arguments refused, a file that cannot be made leaves nothing, and the
 * bytes of a capture built by hand are protobuf's as worked out here (the
 * decoding of whole traces by Perfetto's schema is tests/perfetto_check.py). */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* An empty capture is one packet: Trace.packet (field 1, bytes) holding
 * trusted_packet_sequence_id = 1 (field 10: 0x50 0x01) and sequence_flags =
 * SEQ_INCREMENTAL_STATE_CLEARED (field 13: 0x68 0x01). */
TEST_CASE(empty_capture_bytes) {
    opprof_capture *c;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    char dir[256], path[300];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/empty.pftrace", dir);
    CHECK_INT(opprof_capture_perfetto_write(c, path), 0);
    FILE *f = fopen(path, "rb");
    unsigned char buf[16];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    static const unsigned char want[] = {0x0a, 0x04, 0x50, 0x01, 0x68, 0x01};
    CHECK_INT(n, sizeof want);
    CHECK(n == sizeof want && !memcmp(buf, want, n));
    opprof_capture_free(c);
    remove_tree(dir);
}

/* One thread, one slice of 1 us at 5 us: the begin packet carries its
 * timestamp (field 8) as base + 5000 and its name interned as iid 1. */
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
    /* timestamp 1005000 = varint 0xc8 0xab 0x3d after tag 0x40; the end at 1006000: 0xb0 0xb3 0x3d */
    static const unsigned char begin_ts[] = {0x40, 0xc8, 0xab, 0x3d}, end_ts[] = {0x40, 0xb0, 0xb3, 0x3d};
    CHECK(memmem(text, size, begin_ts, sizeof begin_ts) != NULL);
    CHECK(memmem(text, size, end_ts, sizeof end_ts) != NULL);
    /* EventName {iid: 1 (0x08 0x01), name: "work" (0x12 0x04 w o r k)} */
    static const unsigned char name[] = {0x08, 0x01, 0x12, 0x04, 'w', 'o', 'r', 'k'};
    CHECK(memmem(text, size, name, sizeof name) != NULL);
    free(text);
    opprof_capture_free(c);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_perfetto_write"); }
