/* test_json.c - JSON escaping in traces and summaries, read back by yajl. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <yajl/yajl_tree.h>

static yajl_val field(yajl_val obj, const char *key) {
    const char *path[] = {key, NULL};
    return yajl_tree_get(obj, path, yajl_t_any);
}

/* Names with quotes, escapes, controls and UTF-8 written and read back as
 * they were; invalid UTF-8 replaced; the summary escapes keys and values;
 * a write into a missing directory leaves nothing. */
TEST_CASE(names_escaped_and_invalid_utf8_replaced) {
    const char *names[] = {
        "quote\"inside",
        "back\\slash",
        "new\nline\ttab\rcr",
        "bell\x07"
        "esc\x1b",
        "utf8 caf\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x94\xA5",
        "slash/and <html>",
    };
    const size_t count = sizeof names / sizeof *names;
    opprof_capture *c;
    uint32_t t;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 42, "thread \"one\"", &t), 0);
    for (size_t i = 0; i < count; i++)
        CHECK_INT(opprof_capture_add_event(c, t, names[i], OPPROF_KIND_CPU_OP, (int64_t)i * 10, 5), 0);
    /* Invalid UTF-8: a lone continuation byte, an overlong form, a cut sequence. */
    CHECK_INT(opprof_capture_add_event(c, t,
                                       "bad\x80here\xC0\xAF"
                                       "end\xE2\x82",
                                       OPPROF_KIND_CPU_OP, 100, 5),
              0);
    CHECK_INT(opprof_capture_add_warning(c, "a \"quoted\" warning"), 0);
    CHECK_INT(opprof_capture_finish(c), 0);

    char dir[256], path[512];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/t.json", dir);
    CHECK_INT(opprof_capture_chrome_write(c, path), 0);
    char *text = read_text(path);
    char err[256] = "";
    yajl_val root = text ? yajl_tree_parse(text, err, sizeof err) : NULL;
    if (!root) fprintf(stderr, "parse error: %s\n", err);
    CHECK(root != NULL);
    if (root) {
        yajl_val ev = field(root, "traceEvents");
        size_t found = 0;
        const char *bad = NULL;
        for (size_t i = 0; ev && i < YAJL_GET_ARRAY(ev)->len; i++) {
            yajl_val e = YAJL_GET_ARRAY(ev)->values[i];
            const char *ph = YAJL_GET_STRING(field(e, "ph"));
            if (strcmp(ph, "X") != 0) continue;
            const char *name = YAJL_GET_STRING(field(e, "name"));
            for (size_t k = 0; k < count; k++) found += strcmp(name, names[k]) == 0;
            if (strncmp(name, "bad", 3) == 0) bad = name;
        }
        CHECK_INT(found, count);
        CHECK_STR(bad, "bad\xEF\xBF\xBDhere\xEF\xBF\xBD\xEF\xBF\xBD"
                       "end\xEF\xBF\xBD\xEF\xBF\xBD");
        yajl_val w = field(root, "warnings");
        CHECK(w && YAJL_IS_ARRAY(w) && YAJL_GET_ARRAY(w)->len == 1);
        if (w && YAJL_GET_ARRAY(w)->len)
            CHECK_STR(YAJL_GET_STRING(YAJL_GET_ARRAY(w)->values[0]), "a \"quoted\" warning");
        yajl_tree_free(root);
    }
    /* The escapes themselves, as written. */
    CHECK_CONTAINS(text, "\"quote\\\"inside\"");
    CHECK_CONTAINS(text, "\"back\\\\slash\"");
    CHECK_CONTAINS(text, "\"new\\nline\\ttab\\rcr\"");
    CHECK_CONTAINS(text, "\"bell\\u0007esc\\u001b\"");
    free(text);

    /* The summary escapes keys and values too. */
    opprof_summary *s;
    CHECK_INT(opprof_summary_new(&s), 0);
    CHECK_INT(opprof_summary_set_string(s, "device", "cpu \"0\"\n"), 0);
    CHECK_INT(opprof_summary_set_int(s, "threads", 2), 0);
    CHECK_INT(opprof_summary_set_int(s, "threads", 3), 0);                   /* replaces */
    CHECK_INT(opprof_summary_set_string(s, "captures", "x"), OPPROF_EINVAL); /* reserved */
    opprof_averages *avg;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    CHECK_INT(opprof_summary_add_capture(s, c, avg), 0);
    char *json = NULL;
    CHECK_INT(opprof_summary_json_to_string(s, &json), 0);
    root = json ? yajl_tree_parse(json, err, sizeof err) : NULL;
    CHECK(root != NULL);
    if (root) {
        CHECK_STR(YAJL_GET_STRING(field(root, "device")), "cpu \"0\"\n");
        CHECK_INT(YAJL_GET_INTEGER(field(root, "threads")), 3);
        yajl_val caps = field(root, "captures");
        CHECK(caps && YAJL_GET_ARRAY(caps)->len == 1);
        yajl_val ops = field(YAJL_GET_ARRAY(caps)->values[0], "operators");
        CHECK(ops && YAJL_GET_ARRAY(ops)->len == count + 1);
        yajl_tree_free(root);
    }
    opprof_free(json);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    CHECK_INT(opprof_summary_json_write(s, path), 0);
    /* Writing into a missing directory: -ENOENT, and no file appears. */
    snprintf(path, sizeof path, "%s/missing/summary.json", dir);
    CHECK_INT(opprof_summary_json_write(s, path), OPPROF_ENOENT);
    snprintf(path, sizeof path, "%s/missing/t.json", dir);
    CHECK_INT(opprof_capture_chrome_write(c, path), OPPROF_ENOENT);
    opprof_summary_free(s);
    opprof_averages_free(avg);
    opprof_capture_free(c);
    char *out = NULL;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -A '%s'", dir);
    run_command(cmd, &out);
    CHECK_STR(out, "summary.json\nt.json\n"); /* no temporary left behind */
    free(out);
    remove_tree(dir);
}

/* Times: a capture holds +-2^61 ns from its start and refuses more, so
 * the longest capture it takes reads back whole; a trace that spans more
 * is refused with its span named. */
TEST_CASE(times_within_two_to_the_61_ns) {
    char dir[256], path[512];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    opprof_capture *c;
    uint32_t t;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "main", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "first", OPPROF_KIND_USER_ANNOTATION, 0, 1000), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "last", OPPROF_KIND_USER_ANNOTATION, OPPROF_MAX_TIME_NS - 1000, 1000), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "past", OPPROF_KIND_USER_ANNOTATION, OPPROF_MAX_TIME_NS, 1),
              OPPROF_EINVAL);
    CHECK_INT(opprof_capture_add_event(c, t, "early", OPPROF_KIND_USER_ANNOTATION, -OPPROF_MAX_TIME_NS - 1, 0),
              OPPROF_EINVAL);
    CHECK_INT(opprof_capture_add_event(c, t, "long", OPPROF_KIND_USER_ANNOTATION, 0, INT64_MAX), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_add_memory(c, t, INT64_MAX, 1, 8, -1), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_finish(c), 0);
    snprintf(path, sizeof path, "%s/span.json", dir);
    CHECK_INT(opprof_capture_chrome_write(c, path), 0);
    opprof_capture *back = NULL;
    opprof_read_error read_err;
    CHECK_INT(opprof_capture_read(path, NULL, &back, &read_err), 0);
    size_t n_back = 0;
    const opprof_event *ev_back = back ? opprof_capture_events(back, &n_back) : NULL;
    CHECK_INT(n_back, 2);
    if (n_back == 2) CHECK(ev_back[1].start_ns - ev_back[0].start_ns == OPPROF_MAX_TIME_NS - 1000);
    opprof_capture_free(back);
    opprof_capture_free(c);
    unlink(path);
    const char *too_long =
        "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": -2e15, "
        "\"dur\": 1}, {\"ph\": \"X\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 2e15, \"dur\": 1}]}";
    CHECK_INT(opprof_capture_read_buffer(too_long, strlen(too_long), NULL, &back, &read_err), OPPROF_EFORMAT);
    CHECK(strstr(read_err.message, "the trace spans 127 years, more than the 2^61 ns (73 years) a capture holds"));
    remove_tree(dir);
}

/* The longest ranges (max_events): those at least as long as one more than
 * the (max + 1)-th longest; ties at the bound go together or not at all. */
TEST_CASE(longest_ranges_kept) {
    char dir[256];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    opprof_read_error read_err;
    {
        static const int64_t durations[] = {9, 8, 7, 7, 7, 5, 4, 3, 2, 1};
        static const struct { size_t max, kept; } cases[] = {{5, 5}, {4, 2}, {1, 1}, {0, 10}, {10, 10}, {9, 9}};
        opprof_capture *lc = NULL;
        uint32_t lt;
        CHECK_INT(opprof_capture_new(&lc), 0);
        CHECK_INT(opprof_capture_add_thread(lc, 1, "t", &lt), 0);
        for (int i = 0; i < 10; i++) /* apart: none nests in another */
            CHECK_INT(opprof_capture_add_event(lc, lt, "r", OPPROF_KIND_CPU_OP, i * 100, durations[i]), 0);
        CHECK_INT(opprof_capture_finish(lc), 0);
        char lpath[600];
        snprintf(lpath, sizeof lpath, "%s/longest.json", dir);
        for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
            opprof_chrome_options o = {.max_events = cases[k].max};
            CHECK_INT(opprof_capture_chrome_write_ex(lc, lpath, &o), 0);
            opprof_capture *lb = NULL;
            CHECK_INT(opprof_capture_read(lpath, NULL, &lb, &read_err), 0);
            size_t kept = 0;
            if (lb) opprof_capture_events(lb, &kept);
            CHECK_INT(kept, cases[k].kept);
            opprof_capture_free(lb);
        }
        unlink(lpath);
        opprof_capture_free(lc);
    }
    remove_tree(dir);
}

/* The escaping that tools get for JSON of their own (opprof check --json). */
TEST_CASE(json_strings_for_the_tools) {
    char *quoted = NULL;
    CHECK_INT(opprof_json_string_to_string("a\"b\\c\nd\x01"
                                           "e caf\xC3\xA9 bad\x80",
                                           &quoted),
              0);
    CHECK_STR(quoted, "\"a\\\"b\\\\c\\nd\\u0001e caf\xC3\xA9 bad\xEF\xBF\xBD\"");
    opprof_free(quoted);
    quoted = (char *)1;
    CHECK_INT(opprof_json_string_to_string(NULL, &quoted), OPPROF_EINVAL);
    CHECK_INT(opprof_json_string_to_string("x", NULL), OPPROF_EINVAL);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_json"); }
