/* test_fuzz_corpus.c - every input of the reader's fuzzing corpus
 * (tests/fixtures/fuzz, kept by `make fuzz` runs that went clean) read again:
 * an error or a capture, never a crash (under the sanitizers in .ci/run).
 * Each is also read from a file on one thread and on two (the event array's
 * second half by a second thread, opprof_read_options.threads = 2): the same
 * code, error and place, the same problems in order, the same capture
 * written back. */
#include "check.h"
#include "fuzz/read_one.h"
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>

typedef struct said {
    char *text;
    size_t len;
} said;

static void say(void *ctx, const opprof_trace_problem *p) {
    said *s = ctx;
    char line[700];
    int n = snprintf(line, sizeof line, "%lld %lld:%lld %s\n", (long long)p->offset, (long long)p->line,
                     (long long)p->column, p->message);
    char *t = realloc(s->text, s->len + (size_t)n + 1);
    if (!t) return;
    memcpy(t + s->len, line, (size_t)n + 1);
    s->text = t;
    s->len += (size_t)n;
}

/* The input read from `path` on `threads` threads: what it gives, as text. */
static char *read_as_text(const char *path, const char *back, int threads, int *read_by) {
    said s = {calloc(1, 1), 0};
    opprof_read_options opt = {.on_problem = say, .ctx = &s, .events_only = true, .max_string = 4096,
                               .max_depth = 32, .threads = threads};
    opprof_capture *c = NULL;
    opprof_read_error err;
    int rc = opprof_capture_read(path, &opt, &c, &err);
    char head[700];
    snprintf(head, sizeof head, "rc %d, %s at %lld %lld:%lld\n", rc, rc ? err.message : "", rc ? (long long)err.offset : 0,
             rc ? (long long)err.line : 0, rc ? (long long)err.column : 0);
    *read_by = rc ? 0 : opprof_capture_get_info(c).read_threads;
    char *written = NULL;
    if (!rc) {
        CHECK_INT(opprof_capture_chrome_write(c, back), 0);
        written = read_text(back);
        opprof_capture_free(c);
    }
    size_t n = strlen(head) + s.len + (written ? strlen(written) : 0) + 1;
    char *all = malloc(n);
    snprintf(all, n, "%s%s%s", head, s.text, written ? written : "");
    free(s.text);
    free(written);
    return all;
}

int main(void) {
    char dirpath[1024];
    snprintf(dirpath, sizeof dirpath, "%s/tests/fixtures/fuzz", source_dir());
    DIR *d = opendir(dirpath);
    CHECK(d != NULL);
    int files = 0, read_ok = 0, refused = 0, split = 0;
    char tmp[256], copy[300], back[300];
    CHECK(make_temp_dir(tmp, sizeof tmp) != NULL);
    snprintf(copy, sizeof copy, "%s/input", tmp);
    snprintf(back, sizeof back, "%s/back.json", tmp);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dirpath, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        static unsigned char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        files++;
        opprof_read_error err;
        if (read_one(buf, n, &err) == 0) {
            read_ok++;
        } else {
            refused++;
            CHECK(err.message[0] != '\0');
        }
        FILE *out = fopen(copy, "wb");
        CHECK(out && fwrite(buf, 1, n, out) == n);
        if (out) fclose(out);
        int one_by, two_by;
        char *one = read_as_text(copy, back, 1, &one_by), *two = read_as_text(copy, back, 2, &two_by);
        if (strcmp(one, two) != 0) fprintf(stderr, "%s: one thread and two differ\n", e->d_name);
        CHECK_STR(two, one);
        split += two_by == 2;
        free(one);
        free(two);
    }
    if (d) closedir(d);
    remove_tree(tmp);
    CHECK(files >= 4);
    CHECK(split >= 10); /* the second thread's half joined, not always dropped */
    printf("%d inputs: %d read, %d refused with an error; read on two threads: %d joined\n", files, read_ok,
           refused, split);
    return check_report("test_fuzz_corpus");
}
