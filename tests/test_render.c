/* test_render.c - the text table and the JSON rows of key averages agree cell
 * for cell, for every combination of table options (each sort key, Peak Mem
 * or not, FLOPs or not, a row limit or not), on captures that show every
 * column: the seed's run with shapes, stacks and FLOPs (grouped by name, by
 * input shape, by call stack), the engine example (GB/s), and PyTorch traces
 * with device activities and device memory. The JSON's raw values are
 * formatted here, by rules written for this test, and compared with the
 * table's cells, which it cuts along its dashed rule. */
#include "check.h"
#include "testutil.h"

#include <math.h>
#include <opprof/capture.h>
#include <yajl/yajl_tree.h>

static int g_compared;

/* The spans of the table's columns, from its first (dashed) line. */
static int spans(const char *rule, int *start, int *width, int max) {
    int n = 0;
    for (const char *p = rule; *p && *p != '\n' && n < max;) {
        if (*p != '-') {
            p++;
            continue;
        }
        start[n] = (int)(p - rule);
        while (*p == '-') p++;
        width[n] = (int)(p - rule) - start[n];
        n++;
    }
    return n;
}

static void cell_of(const char *line, int start, int width, char *out, size_t size) {
    int len = (int)strcspn(line, "\n");
    int from = start < len ? start : len, to = start + width < len ? start + width : len;
    while (from < to && line[from] == ' ') from++;
    while (to > from && line[to - 1] == ' ') to--;
    snprintf(out, size, "%.*s", to - from, line + from);
}

static void trim(char *s) {
    size_t n = strlen(s), a = 0;
    while (a < n && s[a] == ' ') a++;
    while (n > a && s[n - 1] == ' ') n--;
    memmove(s, s + a, n - a);
    s[n - a] = '\0';
}

/* A long name's cell with a window where it parts from a name that would
 * read the same: its first 16 bytes, "...", a piece of it, and "..." unless
 * the piece is its end. */
static bool windowed(const char *name, const char *cell) {
    size_t n = strlen(name), c = strlen(cell);
    if (n < 52 || c > 55 || strncmp(cell, name, 16) != 0 || strncmp(cell + 16, "...", 3) != 0) return false;
    char piece[64];
    size_t len = c - 19;
    bool cut = len >= 3 && !strcmp(cell + c - 3, "...");
    if (cut) len -= 3;
    snprintf(piece, sizeof piece, "%.*s", (int)len, cell + 19);
    const char *at = strstr(name + 16, piece);
    return at && (cut || at + len == name + n);
}

/* The cell this test expects from a JSON value, by the column's key. */
static void expected(const char *key, const char *title, yajl_val v, int width, int line, char *out, size_t size) {
    const char *s = YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
    double x = YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : NAN;
    size_t klen = strlen(key);
    if (!strcmp(key, "name")) {
        /* past PyTorch's 52 bytes: the first 20 and the last 32 around "...", whole characters
         * (these traces' long names are ASCII) */
        size_t n = strlen(s);
        if (n >= 52)
            snprintf(out, size, "%.20s...%s", s, s + n - 32);
        else
            snprintf(out, size, "%s", s);
    } else if (!strcmp(key, "input_shapes")) {
        snprintf(out, size, "%.*s", width, s);
    } else if (!strcmp(key, "stack")) { /* line `line` of the frames */
        for (int k = 0; k < line && s; k++) s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL;
        int len = s ? (int)strcspn(s, "\n") : 0;
        snprintf(out, size, "%.*s", len < width ? len : width, s ? s : "");
    } else if (klen > 8 && !strcmp(key + klen - 8, "_percent")) {
        if (isnan(x))
            snprintf(out, size, "NaN");
        else
            snprintf(out, size, "%.2f%%", 100.0 * x);
    } else if (klen > 3 && !strcmp(key + klen - 3, "_us")) {
        opprof_format_time_us(x, out, size);
    } else if (klen > 6 && !strcmp(key + klen - 6, "_bytes")) {
        opprof_format_memory((int64_t)x, out, size);
    } else if (!strcmp(key, "calls")) {
        snprintf(out, size, "%lld", (long long)x);
    } else if (!strcmp(key, "flops")) { /* "Total MFLOPs": the unit from the title */
        static const char *const prefixes = "KMGTP";
        char p = title[6];
        double scale = 1;
        for (const char *q = prefixes; *q && p != 'F'; q++) {
            scale /= 1e3;
            if (*q == p) break;
        }
        if (isnan(x))
            snprintf(out, size, "--");
        else
            snprintf(out, size, "%8.3f", x * scale);
        trim(out);
    } else if (!strcmp(key, "gflops") || !strcmp(key, "gbps")) {
        if (isnan(x))
            snprintf(out, size, "--");
        else
            snprintf(out, size, key[1] == 'f' ? "%.1f" : "%.2f", x);
    } else {
        snprintf(out, size, "(no rule for %s)", key);
    }
}

static yajl_val field(yajl_val obj, const char *key) {
    const char *path[] = {key, NULL};
    return yajl_tree_get(obj, path, yajl_t_any);
}

/* One table against its JSON rows. */
static void compare(const char *what, const char *text, const char *json) {
    char err[256];
    yajl_val doc = yajl_tree_parse(json, err, sizeof err);
    CHECK(doc != NULL);
    if (!doc) return;
    yajl_val cols = field(doc, "columns"), rows = field(doc, "rows");
    int start[64], width[64], n = spans(text, start, width, 64);
    CHECK_INT(n, (int)YAJL_GET_ARRAY(cols)->len);
    const char *line = strchr(text, '\n') + 1; /* the titles: as PyTorch, a title wider than its column spills over */
    char header[4096] = "";
    for (int k = 0; k < n && k < (int)YAJL_GET_ARRAY(cols)->len; k++) {
        yajl_val col = YAJL_GET_ARRAY(cols)->values[k];
        const char *title = YAJL_GET_STRING(field(col, "title"));
        const char *key = YAJL_GET_STRING(field(col, "key"));
        bool left = key && !strcmp(key, "stack");
        size_t used = strlen(header);
        snprintf(header + used, sizeof header - used, left ? "%-*s  " : "%*s  ", width[k], title);
    }
    CHECK(strncmp(line, header, strlen(header)) == 0 && line[strlen(header)] == '\n');
    line = strchr(strchr(line, '\n') + 1, '\n') + 1; /* past the second rule */
    size_t row = 0;
    int frame = 0;
    static char cells[1024][64];
    static const char *full[1024];
    for (; *line && *line != '-'; line = strchr(line, '\n') + 1) {
        if (*line == '\n') continue;
        char first[512];
        cell_of(line, start[0], width[0], first, sizeof first);
        bool more = first[0] == '\0'; /* a further frame of the row before */
        if (!more) {
            row++;
            frame = 0;
        } else {
            frame++;
        }
        if (row > YAJL_GET_ARRAY(rows)->len) break;
        yajl_val r = YAJL_GET_ARRAY(rows)->values[row - 1];
        for (int k = 0; k < n; k++) {
            yajl_val col = YAJL_GET_ARRAY(cols)->values[k];
            const char *key = YAJL_GET_STRING(field(col, "key"));
            if (more && strcmp(key, "stack")) continue;
            char got[512], want[512];
            cell_of(line, start[k], width[k], got, sizeof got);
            expected(key, YAJL_GET_STRING(field(col, "title")), field(r, key), width[k], frame, want, sizeof want);
            trim(want);
            const char *name = YAJL_GET_STRING(field(r, "name"));
            if (!strcmp(key, "name") && strcmp(got, want) && name && windowed(name, got))
                snprintf(want, sizeof want, "%s", got); /* a window where it parts from a like name */
            if (!strcmp(key, "name") && row <= 1024) {  /* no two names read the same */
                for (size_t j = 0; j + 1 < row && name; j++)
                    if (!strcmp(cells[j], got) && strcmp(full[j], name)) {
                        fprintf(stderr, "%s: rows %zu and %zu read '%s'\n", what, j + 1, row, got);
                        CHECK(!"two names read the same");
                    }
                snprintf(cells[row - 1], sizeof cells[row - 1], "%s", got);
                full[row - 1] = name ? name : "";
            }
            if (strcmp(got, want)) fprintf(stderr, "%s: row %zu, %s\n", what, row, key);
            CHECK_STR(got, want);
            g_compared++;
        }
    }
    CHECK_INT(row, YAJL_GET_ARRAY(rows)->len);
    yajl_tree_free(doc);
}

static void every_option(const char *what, const opprof_averages *avg) {
    for (int sort = OPPROF_SORT_NONE; sort <= OPPROF_SORT_DEVICE_MEMORY; sort++)
        for (int peak = 0; peak < 2; peak++)
            for (int flops = 0; flops < 2; flops++)
                for (int limit = 0; limit <= 3; limit += 3) {
                    opprof_table_options o = {
                        .sort = (opprof_sort_key)sort, .row_limit = limit, .peak_memory = peak, .flops = flops};
                    char *text = NULL, *json = NULL, label[1024];
                    CHECK_INT(opprof_averages_table_to_string(avg, &o, &text), 0);
                    CHECK_INT(opprof_averages_json_to_string(avg, &o, &json), 0);
                    snprintf(label, sizeof label, "%s, sort %s, peak %d, flops %d, limit %d", what,
                             opprof_sort_key_name(o.sort), peak, flops, limit);
                    if (text && json) compare(label, text, json);
                    opprof_free(text);
                    opprof_free(json);
                }
}

static void every_grouping(const char *path) {
    opprof_capture *c = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read(path, NULL, &c, &err), 0);
    if (!c) return;
    opprof_averages_options groupings[] = {{0}, {.group_by_input_shape = true}, {.group_by_stack_n = 2}};
    for (int g = 0; g < 3; g++) {
        opprof_averages *avg;
        CHECK_INT(opprof_capture_averages_ex(c, &groupings[g], &avg), 0);
        char what[600];
        snprintf(what, sizeof what, "%s (grouping %d)", path, g);
        every_option(what, avg);
        opprof_averages_free(avg);
    }
    opprof_capture_free(c);
}

/* the cells each trace has at the least (30,168, 12,544, 1,065,432 and 152,040 when written) */
enum { LEAST_SEED = 10000, LEAST_ENGINE = 5000, LEAST_RESNET = 500000, LEAST_ROCM = 50000 };

/* Every grouping of a trace's rows gives the same cells as the JSON; and at
 * least `least` of them were compared. */
static void every_grouping_of(const char *path, int least) {
    int before = g_compared;
    every_grouping(path);
    printf("%s: %d cells compared\n", path, g_compared - before);
    CHECK(g_compared - before >= least);
}

/* profile_cpu's capture, with FLOPs and call sites */
TEST_CASE(the_guides_capture) {
    char dir[256], cmd[2048], path[600], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet --with-flops --with-stack '%s/seed'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/seed/cpu-step-4.json", dir);
    every_grouping_of(path, LEAST_SEED);
    remove_tree(dir);
}

/* the instrumented engine's trace: marks, arguments, flows */
TEST_CASE(an_engines_trace) {
    char dir[256], cmd[2048], path[600], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(cmd, sizeof cmd, "'%s/engine' '%s/engine'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    snprintf(path, sizeof path, "%s/engine/engine.json", dir);
    every_grouping_of(path, LEAST_ENGINE);
    remove_tree(dir);
}

/* Kineto's traces with device time: CUDA (ResNet-50) and ROCm */
TEST_CASE(kineto_traces_with_device_time) {
    const char *device_traces[] = {"kineto__resnet50_num_workers_0__worker0.1623143089861.pt.trace.json.gz",
                                   "hta__amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz"};
    const int least[] = {LEAST_RESNET, LEAST_ROCM};
    for (int i = 0; i < 2; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s/tests/fixtures/real-traces/%s", source_dir(), device_traces[i]);
        every_grouping_of(path, least[i]);
    }
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_render"); }
