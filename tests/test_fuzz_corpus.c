/* test_fuzz_corpus.c - every input of the reader's fuzzing corpus
 * (tests/fixtures/fuzz, kept by `make fuzz` runs that went clean) read again:
 * an error or a capture, never a crash (under the sanitizers in .ci/run). */
#include "check.h"
#include "fuzz/read_one.h"
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>

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
        opprof_read_error err;
        if (read_one(buf, n, &err) == 0) {
            read_ok++;
        } else {
            refused++;
            CHECK(err.message[0] != '\0');
        }
    }
    if (d) closedir(d);
    CHECK(files >= 4);
    printf("%d inputs: %d read, %d refused with an error\n", files, read_ok, refused);
    return check_report("test_fuzz_corpus");
}
