/* test_producer_entry.c - a producer added to OPPROF_PRODUCERS and nowhere
 * else (tests/extra_producer.h, in the build of -DOPPROF_TEST_PRODUCER=ON) is
 * named by `opprof report` and `opprof check`, and `opprof diff` pairs its
 * rows with another family's by layer. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>

/* A model's three layers, as `producer` wrote them, into dir/name. */
static void write_trace(const char *dir, const char *name, opprof_producer producer, char *path, size_t size) {
    opprof_capture *c = NULL;
    uint32_t t;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "main", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "aten::linear", OPPROF_KIND_CPU_OP, 0, 30), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "aten::relu", OPPROF_KIND_CPU_OP, 40, 5), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "aten::linear", OPPROF_KIND_CPU_OP, 50, 10), 0);
    opprof_capture_info info = opprof_capture_get_info(c);
    info.producer = producer;
    opprof_capture_set_info(c, &info);
    CHECK_INT(opprof_capture_finish(c), 0);
    snprintf(path, size, "%s/%s", dir, name);
    CHECK_INT(opprof_capture_chrome_write(c, path), 0);
    opprof_capture_free(c);
}

TEST_CASE(named_by_report_check_and_diff) {
    CHECK_STR(opprof_producer_name(OPPROF_PRODUCER_TEST_RUNTIME), "a test runtime");
    char dir[256], ours[512], theirs[512], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    write_trace(dir, "ours.json", OPPROF_PRODUCER_OPPROF, ours, sizeof ours);
    write_trace(dir, "theirs.json", OPPROF_PRODUCER_TEST_RUNTIME, theirs, sizeof theirs);
    CHECK_INT(run_commandf(&out, "'%s/opprof' report '%s'", bin_dir(), theirs), 0);
    CHECK_CONTAINS(out, "theirs.json: written by a test runtime, read by its rules");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' check --json '%s'", bin_dir(), theirs), 0);
    CHECK_CONTAINS(out, "\"producer\": \"a test runtime\"");
    free(out);
    CHECK_INT(run_commandf(&out, "'%s/opprof' diff '%s' '%s'", bin_dir(), ours, theirs), 0);
    CHECK_CONTAINS(out, "rows are the model's layers, paired in order as classes of work");
    free(out);
    remove_tree(dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_producer_entry"); }
