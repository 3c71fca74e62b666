/* test_html.c - the HTML report: well formed (every element closed, in
 * order), names escaped, the table's numbers those of the averages, flame
 * boxes as wide as their total time, the timeline's cap said, the memory
 * peak right; written atomically; `opprof html` and `profile_cpu --html`. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

/* Every element opened is closed, in order; void and self-closed elements
 * aside. Text between tags must not hold a raw '<'. Returns the number of
 * elements, or -1 with the reason on stderr. */
/* The number of items of the JavaScript array that follows `key` ("1,2,3]"). */
static int array_length(const char *html, const char *key) {
    const char *p = html ? strstr(html, key) : NULL;
    if (!p) return -1;
    p += strlen(key);
    if (*p == ']') return 0;
    int n = 1;
    for (; *p && *p != ']'; p++) n += *p == ',';
    return n;
}

static int elements(const char *html) {
    static const char *const VOID[] = {"meta", "br", "input", "!DOCTYPE"};
    char stack[64][24];
    int depth = 0, count = 0;
    for (const char *p = html; (p = strchr(p, '<'));) {
        const char *end = strchr(p, '>');
        if (!end) return fprintf(stderr, "unclosed tag at %.20s\n", p), -1;
        bool closing = p[1] == '/', self = end[-1] == '/';
        const char *name = p + 1 + closing;
        size_t len = strcspn(name, " >/");
        if (len == 0 || len >= sizeof stack[0]) return fprintf(stderr, "raw '<' in text at %.30s\n", p), -1;
        bool is_void = false;
        for (size_t i = 0; i < sizeof VOID / sizeof *VOID; i++)
            if (strlen(VOID[i]) == len && !strncmp(VOID[i], name, len)) is_void = true;
        if (closing) {
            if (!depth || strlen(stack[depth - 1]) != len || strncmp(stack[depth - 1], name, len))
                return fprintf(stderr, "</%.*s> closes <%s>\n", (int)len, name, depth ? stack[depth - 1] : ""), -1;
            depth--;
        } else if (!self && !is_void) {
            if (depth == 64) return fprintf(stderr, "too deep\n"), -1;
            memcpy(stack[depth], name, len);
            stack[depth++][len] = '\0';
            count++;
            if (len == 6 && !strncmp(name, "script", 6)) { /* its text is code: skip to </script> */
                const char *close = strstr(end, "</script>");
                if (!close) return fprintf(stderr, "script not closed\n"), -1;
                end = close - 1;
            }
        } else {
            count++;
        }
        p = end + 1;
    }
    if (depth) return fprintf(stderr, "<%s> never closed\n", stack[depth - 1]), -1;
    return count;
}

static int occurrences(const char *text, const char *what) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* The value of attribute `attr` in the first element after `after`. */
static double attribute_after(const char *html, const char *after, const char *attr) {
    const char *p = strstr(html, after);
    if (!p) return -1;
    char key[64];
    snprintf(key, sizeof key, " %s=\"", attr);
    p = strstr(p, key);
    return p ? strtod(p + strlen(key), NULL) : -1;
}

TEST_CASE(checker_catches) {
    /* The checker itself catches what it is for. */
    fprintf(stderr, "(three complaints of the checker's self-test follow)\n");
    CHECK(elements("<p><b>x</p></b>") < 0);
    CHECK(elements("<p>a < b</p>") < 0);
    CHECK(elements("<div><p>x</p>") < 0);
    CHECK_INT(elements("<!DOCTYPE html><html><meta charset=\"u\"><svg><rect/></svg></html>"), 5);
}

TEST_CASE(reports) {
    /* A capture by hand: two threads, nesting, a hostile name, memory. */
    opprof_capture *c;
    uint32_t t0, t1;
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 10, "main <thread>", &t0), 0);
    CHECK_INT(opprof_capture_add_thread(c, 11, "worker", &t1), 0);
    const char *evil = "<script>alert(\"x&y\")</script>";
    CHECK_INT(opprof_capture_add_event(c, t0, "forward", OPPROF_KIND_USER_ANNOTATION, 0, 1000000), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "aten::addmm", OPPROF_KIND_CPU_OP, 100000, 600000), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, evil, OPPROF_KIND_CPU_OP, 750000, 200000), 0);
    CHECK_INT(opprof_capture_add_event(c, t1, "forward", OPPROF_KIND_USER_ANNOTATION, 0, 500000), 0);
    CHECK_INT(opprof_capture_add_event(c, t1, "aten::addmm", OPPROF_KIND_CPU_OP, 0, 300000), 0);
    /* totals unknown (-1): the capture's running sum, across threads */
    CHECK_INT(opprof_capture_add_memory(c, t0, 150000, 1, 4096, -1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t0, 700000, 1, -4096, -1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t1, 200000, 2, 8192, -1), 0);
    CHECK_INT(opprof_capture_add_warning(c, "a warning with <b>markup</b> & more"), 0);
    CHECK_INT(opprof_capture_finish(c), 0);

    char *html = NULL;
    CHECK_INT(opprof_capture_html_to_string(c, &html), 0);
    CHECK(html != NULL);
    if (html) {
        CHECK(strncmp(html, "<!DOCTYPE html>\n<html", 21) == 0);
        CHECK(strstr(html, "</html>\n") != NULL);
        CHECK(elements(html) > 20);
        /* escaped, never raw */
        CHECK(strstr(html, evil) == NULL);
        CHECK_CONTAINS(html, "&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt;");
        CHECK_CONTAINS(html, "a warning with &lt;b&gt;markup&lt;/b&gt; &amp; more");
        /* the memory total on the timeline in time order across threads (the capture holds
           them by thread: 150, 700, then the worker's 200 us) */
        CHECK_CONTAINS(html, "{name:\"allocated bytes\",t:[150.000,200.000,700.000],v:[4096,12288,8192]}");
        CHECK_CONTAINS(html, "main \\u003cthread\\u003e (tid 10)"); /* in the timeline's data: escaped for a script */
        CHECK_CONTAINS(html, "\\u003cscript\\u003ealert(\\\"x\\u0026y\\\")\\u003c/script\\u003e");
        CHECK(strstr(html, "http://") == NULL ||
              occurrences(html, "http://") == occurrences(html, "http://www.w3.org/2000/svg"));
        /* the table: one row per name, numbers from the averages */
        CHECK_CONTAINS(html, "<td data-v=\"aten::addmm\" title=\"aten::addmm\">aten::addmm</td>");
        opprof_averages *avg;
        CHECK_INT(opprof_capture_averages(c, &avg), 0);
        size_t n;
        const opprof_average_row *rows = opprof_averages_rows(avg, &n);
        CHECK_INT(n, 3);
        for (size_t i = 0; i < n; i++) {
            char cell[128];
            snprintf(cell, sizeof cell, "<td data-v=\"%.15g\">",
                     (double)rows[i].self_ns / 1e3); /* self_cpu_us, as JSON */
            CHECK_CONTAINS(html, cell);
            if (!strcmp(rows[i].key, "aten::addmm")) {
                CHECK_INT(rows[i].total_ns, 900000);
                CHECK_CONTAINS(html, "<td data-v=\"2\">2</td><td data-v=\""); /* calls, then the distribution */
                CHECK_CONTAINS(html, "<title>2 calls: median ");              /* no ProfilerStep: per call */
            }
        }
        opprof_averages_free(avg);
        CHECK_INT(occurrences(html, "<tr><td data-v="), 3);
        /* the flame graph: paths forward, forward;aten::addmm, forward;<evil>: 3 boxes;
         * roots' widths sum to the width; a box's width is its share of the total */
        CHECK_INT(occurrences(html, "<rect class=\"f\""), 3);
        double forward_w = attribute_after(html, "<rect class=\"f\" data-total-ns=\"1500000\"", "width");
        CHECK(forward_w > 1199.9 && forward_w < 1200.1);
        double addmm_w = attribute_after(html, "<rect class=\"f\" data-total-ns=\"900000\"", "width");
        CHECK(addmm_w > 719.9 && addmm_w < 720.1); /* 900 us of 1500 us */
        /* the timeline: every event in its data, a track per thread, the viewer */
        CHECK_INT(array_length(html, ",s:["), 5);
        CHECK_INT(array_length(html, ",p:["), 5);
        CHECK_CONTAINS(html, "\"worker (tid 11)\"]");
        CHECK_CONTAINS(html, "<canvas id=\"tl-canvas\"");
        CHECK_CONTAINS(html, "function selftest(");
        /* memory: the peak is 4096 + 8192 bytes, at 200 us, on top of the chart */
        CHECK_CONTAINS(html, "peak 12.00 KB at 200.000us");
        CHECK_INT(occurrences(html, "<polyline class=\"m\""), 1);
        CHECK_CONTAINS(html, "cy=\"5.0\" r=\"4\""); /* the peak marker at the top */
        CHECK_CONTAINS(html, "<h2>Warnings (1)</h2>");
        CHECK_CONTAINS(html, "<td>Started</td><td>unknown</td>"); /* no wall clock in a hand-built capture */
        CHECK_CONTAINS(html, "5 range(s) and operator(s), 3 memory event(s), 2 thread(s)");
    }
    opprof_free(html);

    /* Atomic file, and a clear error where it cannot be written. */
    char dir[256];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char path[400];
    snprintf(path, sizeof path, "%s/report.html", dir);
    CHECK_INT(opprof_capture_html_write(c, path), 0);
    char *text = read_text(path);
    CHECK(text && strstr(text, "</html>"));
    free(text);
    snprintf(path, sizeof path, "%s/missing/report.html", dir);
    CHECK_INT(opprof_capture_html_write(c, path), -ENOENT);
    struct stat st;
    CHECK(stat(path, &st) != 0);
    CHECK_INT(opprof_capture_html_write(NULL, path), OPPROF_EINVAL);
    CHECK_INT(opprof_capture_html_to_string(c, NULL), OPPROF_EINVAL);
    opprof_capture_free(c);

    /* Every event goes to the timeline's data, however many; an empty
     * capture is a page too. */
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "", &t0), 0);
    for (int i = 0; i < 25000; i++) opprof_capture_add_event(c, t0, i % 2 ? "b" : "a", OPPROF_KIND_CPU_OP, i * 10, 5);
    CHECK_INT(opprof_capture_finish(c), 0);
    html = NULL;
    CHECK_INT(opprof_capture_html_to_string(c, &html), 0);
    if (html) {
        CHECK_INT(array_length(html, ",s:["), 25000);
        CHECK_CONTAINS(html, "25000 events;");
        CHECK(elements(html) > 20);
        CHECK(strstr(html, "<h2>Memory") == NULL);
    }
    opprof_free(html);
    opprof_capture_free(c);
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    html = NULL;
    CHECK_INT(opprof_capture_html_to_string(c, &html), 0);
    CHECK(html && elements(html) > 0);
    opprof_free(html);
    opprof_capture_free(c);

    /* Times near the reader's limit (2^61 ns) on five threads: their sums
     * exceed int64; the page and the folded stacks are still made (and
     * UBSan, in .ci/run, sees no overflow). */
    CHECK_INT(opprof_capture_new(&c), 0);
    for (int i = 0; i < 5; i++) {
        CHECK_INT(opprof_capture_add_thread(c, i, "", &t0), 0);
        CHECK_INT(opprof_capture_add_event(c, t0, "huge", OPPROF_KIND_CPU_OP, 0, (int64_t)1 << 61), 0);
        CHECK_INT(opprof_capture_add_memory(c, t0, 1, 1, INT64_MAX / 2, INT64_MAX / 2), 0);
    }
    CHECK_INT(opprof_capture_add_memory(c, t0, 2, 1, INT64_MIN / 2, INT64_MIN), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    html = NULL;
    CHECK_INT(opprof_capture_html_to_string(c, &html), 0);
    CHECK(html && elements(html) > 0);
    opprof_free(html);
    text = NULL;
    CHECK_INT(opprof_capture_stacks_to_string(c, OPPROF_STACKS_SELF_TIME, &text), 0);
    opprof_free(text);
    opprof_capture_free(c);

    /* Past OPPROF_REPORT_EVENTS, the timeline holds the longest events (their
     * callers with them, indexes and parents renumbered) and says so; the
     * tables keep every event. root 1000 > a 490 > b = c 10 > d 5 ns: of
     * at most 3, the ties at 10 ns do not fit, so root and a are shown, as
     * the page's events 0 and 1 (d, the capture's first, left out). */
    setenv("OPPROF_REPORT_EVENTS", "3", 1);
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "", &t0), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "d", OPPROF_KIND_CPU_OP, 0, 5), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "root", OPPROF_KIND_USER_ANNOTATION, 100, 1000), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "a", OPPROF_KIND_CPU_OP, 110, 490), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "c", OPPROF_KIND_CPU_OP, 120, 10), 0);
    CHECK_INT(opprof_capture_add_event(c, t0, "b", OPPROF_KIND_CPU_OP, 700, 10), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    html = NULL;
    CHECK_INT(opprof_capture_html_to_string(c, &html), 0);
    CHECK_CONTAINS(html, "(1.100us across, 2 events;");
    CHECK_CONTAINS(html, "The timeline shows the 2 longest of the capture's 5 events, those of 0.011us and longer");
    CHECK_CONTAINS(html, ",s:[0.100,0.110]\n,d:[1.000,0.490]\n");
    CHECK_CONTAINS(html, ",p:[-1,0]\n");
    CHECK(html && strstr(html, ">d</td>")); /* the table keeps d */
    opprof_free(html);
    setenv("OPPROF_REPORT_EVENTS", "5", 1); /* all fit: no note */
    html = NULL;
    CHECK_INT(opprof_capture_html_to_string(c, &html), 0);
    CHECK(html && !strstr(html, "tl-left-out"));
    CHECK_CONTAINS(html, ",p:[-1,-1,1,2,1]\n");
    opprof_free(html);
    unsetenv("OPPROF_REPORT_EVENTS");
    opprof_capture_free(c);

    /* The comparison as a page: rows by the largest change, the ratio's
     * words, bars on one scale, notes, names escaped. */
    opprof_capture *before, *after;
    CHECK_INT(opprof_capture_new(&before), 0);
    CHECK_INT(opprof_capture_add_thread(before, 1, "", &t0), 0);
    CHECK_INT(opprof_capture_add_event(before, t0, "aten::addmm", OPPROF_KIND_CPU_OP, 0, 100000), 0);
    CHECK_INT(opprof_capture_add_event(before, t0, "aten::relu", OPPROF_KIND_CPU_OP, 200000, 10000), 0);
    CHECK_INT(opprof_capture_add_event(before, t0, "a<b", OPPROF_KIND_CPU_OP, 300000, 20000), 0);
    CHECK_INT(opprof_capture_finish(before), 0);
    CHECK_INT(opprof_capture_new(&after), 0);
    CHECK_INT(opprof_capture_add_thread(after, 1, "", &t0), 0);
    CHECK_INT(opprof_capture_add_thread(after, 2, "", &t1), 0);
    CHECK_INT(opprof_capture_add_event(after, t0, "aten::addmm", OPPROF_KIND_CPU_OP, 0, 150000), 0);
    CHECK_INT(opprof_capture_add_event(after, t1, "aten::gelu", OPPROF_KIND_CPU_OP, 200000, 5000), 0);
    CHECK_INT(opprof_capture_add_event(after, t0, "a<b", OPPROF_KIND_CPU_OP, 300000, 20000), 0);
    CHECK_INT(opprof_capture_finish(after), 0);
    html = NULL;
    CHECK_INT(opprof_capture_diff_to_string(before, after, 0, OPPROF_DIFF_HTML, &html), 0);
    if (html) {
        CHECK(elements(html) > 20);
        CHECK_CONTAINS(html, "<h1>opprof diff</h1>");
        const char *addmm = strstr(html, "<tr><td data-v=\"aten::addmm\" title=\"aten::addmm\">");
        const char *relu = strstr(html, "<tr><td data-v=\"aten::relu\" title=\"aten::relu\">");
        const char *gelu = strstr(html, "<tr><td data-v=\"aten::gelu\" title=\"aten::gelu\">");
        const char *same = strstr(html, "<tr><td data-v=\"a&lt;b\" title=\"a&lt;b\">a&lt;b</td>");
        CHECK(addmm && relu && gelu && same && addmm < relu && relu < gelu && gelu < same); /* |change| order */
        CHECK(strstr(html, "a<b") == NULL);
        CHECK_CONTAINS(html, "<td data-v=\"1.5\">1.50x</td>");
        CHECK_CONTAINS(html, "<td data-v=\"0\">gone</td>");
        CHECK_CONTAINS(html, "<td data-v=\"1e+300\">new</td>");
        CHECK_CONTAINS(html, "<td data-v=\"50\">+50.000us</td>");
        /* bars on one scale: the largest self time (150 us) is 240 px */
        CHECK_CONTAINS(html, "<div class=\"bar b\" style=\"width:160.0px\"></div><div class=\"bar a worse\" "
                             "style=\"width:240.0px\"></div>");
        CHECK_CONTAINS(html, "<div class=\"bar a better\" style=\"width:0.0px\">"); /* relu gone */
        CHECK_CONTAINS(html, "<div class=\"bar a\" style=\"width:32.0px\">");       /* a<b: unchanged */
        CHECK_CONTAINS(html, "Self CPU time total: 130.000us before, 175.000us after (+34.62%)");
        CHECK_CONTAINS(html, "<li>thread tracks differ: 1 before, 2 after</li>");
    }
    opprof_free(html);
    html = NULL;
    CHECK_INT(opprof_capture_diff_to_string(before, after, 0, (opprof_diff_format)7, &html), OPPROF_EINVAL);
    CHECK(html == NULL);
    opprof_capture_free(before);
    opprof_capture_free(after);

    /* The tools: `opprof html TRACE OUT` and `profile_cpu --html`. */
    char cmd[2000], *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet --html '%s/run'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/run/cpu-step-4.html", dir);
    text = read_text(path);
    CHECK(text != NULL);
    if (text) {
        CHECK(elements(text) > 20);
        CHECK_CONTAINS(text, "<td data-v=\"aten::addmm\" title=\"aten::addmm\">aten::addmm</td>");
        CHECK_CONTAINS(text, "ProfilerStep#2");
        CHECK_CONTAINS(text, " UTC</td>"); /* a live capture knows when it started */
        CHECK_CONTAINS(text, "<polyline class=\"m\"");
    }
    free(text);
    snprintf(cmd, sizeof cmd, "'%s/opprof' html '%s/run/cpu-step-4.json' '%s/again.html'", bin_dir(), dir, dir);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/again.html", dir);
    text = read_text(path);
    CHECK(text && elements(text) > 20 && strstr(text, "aten::addmm"));
    free(text);
    snprintf(cmd, sizeof cmd, "'%s/opprof' html '%s/run/cpu-step-4.json' '%s/no/such/dir.html'", bin_dir(), dir, dir);
    CHECK_INT(run_command(cmd, &out), 2);
    CHECK_CONTAINS(out, "cannot write");
    CHECK_CONTAINS(out, "no/such/dir.html");
    CHECK(strstr(out, "takes no new file") == NULL); /* that directory does not exist */
    free(out);
    /* A directory that exists but takes no new file: the reason says where. */
    snprintf(cmd, sizeof cmd, "'%s/opprof' html '%s/run/cpu-step-4.json' /proc/version", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 2);
    CHECK_CONTAINS(out, "cannot write '/proc/version': no such file or directory (the directory '/proc' exists but "
                        "takes no new file)");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' html '%s/run/cpu-step-4.json'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 64);
    free(out);
    /* `opprof diff A B --html OUT` */
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' diff '%s/run/cpu-step-4.json' '%s/run/cpu-step-4.json' --html '%s/diff.html'", bin_dir(), dir,
             dir, dir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_STR(out, ""); /* the page goes to the file, nothing to stdout */
    free(out);
    snprintf(path, sizeof path, "%s/diff.html", dir);
    text = read_text(path);
    CHECK(text && elements(text) > 20);
    CHECK(text && strstr(text, "<td data-v=\"1\">1.00x</td>")); /* a trace against itself */
    free(text);
    snprintf(cmd, sizeof cmd,
             "'%s/opprof' diff '%s/run/cpu-step-4.json' '%s/run/cpu-step-4.json' --html '%s/no/d.html'", bin_dir(), dir,
             dir, dir);
    CHECK_INT(run_command(cmd, &out), 2);
    CHECK_CONTAINS(out, "cannot write");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/opprof' diff A B --json --html x.html", bin_dir());
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK_CONTAINS(out, "--json or --html, not both");
    free(out);
    remove_tree(dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_html"); }
