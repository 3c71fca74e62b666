/* test_fuzz_corpus.c - every input of the reader's fuzzing corpus
 * (tests/fixtures/fuzz, kept by `make fuzz` runs that went clean) read again:
 * an error or a capture, never a crash (under the sanitizers in .ci/run). */
#include "check.h"
#include "testutil.h"

#include <dirent.h>
#include <opprof/capture.h>
#include <stdlib.h>

static void ignore(void *ctx, const opprof_trace_problem *p) {
    (void)ctx;
    (void)p;
}

int main(void) {
    char dirpath[1024];
    snprintf(dirpath, sizeof dirpath, "%s/tests/fixtures/fuzz", source_dir());
    DIR *d = opendir(dirpath);
    CHECK(d != NULL);
    int files = 0, read_ok = 0, refused = 0;
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
        opprof_read_options opt = {.on_problem = ignore, .max_string = 4096, .max_depth = 32};
        opprof_capture *c = NULL;
        opprof_read_error err;
        int rc = opprof_capture_read_buffer(buf, n, &opt, &c, &err);
        if (rc == 0) {
            read_ok++;
            CHECK(c != NULL);
            opprof_averages *avg;
            char *text = NULL;
            if (opprof_capture_averages(c, &avg) == 0) {
                opprof_averages_table(avg, OPPROF_SORT_SELF_CPU_TIME, 20, &text);
                opprof_free(text);
                opprof_averages_free(avg);
            }
            opprof_capture_free(c);
        } else {
            refused++;
            CHECK(c == NULL);
            CHECK(err.message[0] != '\0');
        }
    }
    if (d) closedir(d);
    CHECK(files >= 4);
    printf("%d inputs: %d read, %d refused with an error\n", files, read_ok, refused);
    return check_report("test_fuzz_corpus");
}
