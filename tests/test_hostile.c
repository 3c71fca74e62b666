/* test_hostile.c - untrusted input is processed within stated bounds (issue
 * 50): names that a trace gives are demangled in time and memory linear in
 * the bounds, never in what a crafted name expands to. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>

static char dir[256];

/* A name of `levels` function-pointer types, each taking the one before it
 * twice by back-reference: its demangled text doubles at each level (c++filt
 * prints 44,926 bytes for 10 levels, 46 MB for 20). */
static void doubling_name(char *out, size_t size, int levels) {
    static const char digits[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    size_t n = (size_t)snprintf(out, size, "_Z1fPFvvE");
    for (int k = 0, idx = 1; k < levels && n + 32 < size; k++, idx += 2) {
        char ref[16], seq[8];
        int i = idx - 1, len = 0;
        do seq[len++] = digits[i % 36], i /= 36;
        while (i);
        for (int a = 0; a < len / 2; a++) {
            char t = seq[a];
            seq[a] = seq[len - 1 - a];
            seq[len - 1 - a] = t;
        }
        snprintf(ref, sizeof ref, "S%.*s_", len, seq);
        n += (size_t)snprintf(out + n, size - n, "PFv%s%sE", ref, ref);
    }
}

TEST_CASE(demangling_is_bounded) {
    char name[4096];
    doubling_name(name, sizeof name, 10);
    char *text = opprof_demangle(name);
    CHECK(text != NULL);
    CHECK_INT(text ? strlen(text) : 0, 44925); /* c++filt's text, whole */
    if (text) CHECK(strncmp(text, "f(void (*)(), void (*)(void (*)(), void (*)()), ", 48) == 0);
    opprof_free(text);
    doubling_name(name, sizeof name, 60); /* 2^60 times a few bytes: stays as it is */
    CHECK(opprof_demangle(name) == NULL);
    text = opprof_demangle("_ZN11AccumulatorIdE3addEd+0x1f");
    CHECK_STR(text, "Accumulator<double>::add(double)+0x1f");
    opprof_free(text);
    /* over the input bound: kept as it is */
    char *big = malloc(5000);
    memcpy(big, "_Z1f", 4);
    memset(big + 4, 'i', 4995);
    big[4999] = '\0';
    CHECK(opprof_demangle(big) == NULL);
    free(big);
}

/* A trace whose one operator has that name: read and reported with the name as the trace gave it. */
TEST_CASE(trace_with_an_exploding_name) {
    char name[4096], path[600];
    doubling_name(name, sizeof name, 60);
    snprintf(path, sizeof path, "%s/bomb.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f,
            "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"%s\", \"cat\": \"cpu_op\", \"pid\": 1, \"tid\": 1, "
            "\"ts\": 1, \"dur\": 5}]}\n",
            name);
    fclose(f);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_capture_read(path, NULL, &c, NULL), 0);
    size_t n = 0;
    const opprof_event *ev = opprof_capture_events(c, &n);
    CHECK_INT(n, 1);
    if (n == 1) CHECK_STR(opprof_capture_name(c, ev[0].name), name);
    opprof_capture_free(c);
}

/* Whether text holds a control character other than the line ends a table
 * is made of: C0 (but '\n'), DEL, or C1 as UTF-8. */
static bool has_control(const char *text) {
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        if ((*c < 0x20 && *c != '\n') || *c == 0x7f || (c[0] == 0xc2 && c[1] >= 0x80 && c[1] < 0xa0)) return true;
    return false;
}

/* A trace's names printed to a terminal: its escape sequences (here one that
 * retitles the window and one that clears the screen), newlines and tabs
 * shown as escapes in every table, warning and problem, never sent; the
 * JSON keeps the name the trace gave. */
TEST_CASE(names_that_would_command_the_terminal) {
    static const char NAME[] = "op\\u001b]0;HACKED\\u0007\\u001b[2J\\n\\tx\\u007f\\u009by";
    static const char SHOWN[] = "op\\x1b]0;HACKED\\x07\\x1b[2J\\n\\tx\\x7f\\u009by";
    char path[600], other[600];
    snprintf(path, sizeof path, "%s/terminal.json", dir);
    snprintf(other, sizeof other, "%s/plain.json", dir);
    FILE *f = fopen(path, "w"), *g = fopen(other, "w");
    CHECK(f != NULL && g != NULL);
    if (!f || !g) return;
    fprintf(f, /* a complete event, one never ended (a warning), an end without a begin (a problem) */
            "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"%s\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 5},\n"
            "{\"ph\": \"B\", \"name\": \"%s\", \"pid\": 1, \"tid\": 2, \"ts\": 2},\n"
            "{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 2, \"ts\": 3, \"dur\": 1},\n"
            "{\"ph\": \"E\", \"name\": \"%s\", \"pid\": 1, \"tid\": 3, \"ts\": 9}]}\n",
            NAME, NAME, NAME);
    fputs("{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}]}\n", g);
    fclose(f);
    fclose(g);
    for (int k = 0; k < 3; k++) {
        char *out = NULL;
        if (k < 2)
            run_commandf(&out, "'%s/opprof' %s '%s' 2>&1", bin_dir(), k ? "check" : "report", path);
        else
            run_commandf(&out, "'%s/opprof' diff '%s' '%s' 2>&1", bin_dir(), other, path);
        CHECK(out != NULL && !has_control(out));
        CHECK_CONTAINS(out, SHOWN);
        if (k == 0) { /* the table's columns still line up: the name's row (the widest name) as long as the rule */
            char row_start[64];
            snprintf(row_start, sizeof row_start, "\n%s  ", SHOWN);
            const char *row = strstr(out ? out : "", row_start), *rule = strstr(out ? out : "", "\n---");
            CHECK(row != NULL && rule != NULL);
            if (row && rule) CHECK_INT(strcspn(row + 1, "\n"), strcspn(rule + 1, "\n"));
        }
        free(out);
    }
    char *json = NULL;
    run_commandf(&json, "'%s/opprof' report --json '%s' 2>/dev/null", bin_dir(), path);
    CHECK_CONTAINS(json, "op\\u001b]0;HACKED\\u0007\\u001b[2J\\n\\tx"); /* JSON's own escapes of the raw name */
    free(json);
}

int main(int argc, char **argv) {
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    int rc = check_main(argc, argv, "test_hostile");
    remove_tree(dir);
    return rc;
}
