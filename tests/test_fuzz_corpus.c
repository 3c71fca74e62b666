/* test_fuzz_corpus.c - every input of the reader's fuzzing corpus
 * (tests/fixtures/fuzz, kept by `make fuzz` runs that went clean) read again:
 * an error or a capture, never a crash (under the sanitizers in .ci/run).
 * Each is also read from a file on one thread and on two (the event array's
 * second half by a second thread, opprof_read_options.threads = 2): the same
 * code, error and place, the same problems in order, the same capture
 * written back. And each that reads is written as .pftrace and as JSON and
 * read back: the same tables and stacks. */
#include "check.h"
#include "fuzz/read_one.h"
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>

TEST_CASE(every_input_reads_or_is_refused_the_same_ways) {
    char dirpath[1024];
    snprintf(dirpath, sizeof dirpath, "%s/tests/fixtures/fuzz", source_dir());
    DIR *d = opendir(dirpath);
    CHECK(d != NULL);
    int files = 0, read_ok = 0, refused = 0, split = 0, round_trips = 0;
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
        int joined, differ = read_both_ways(buf, n, &joined);
        if (differ) fprintf(stderr, "%s: one thread and two differ\n", e->d_name);
        CHECK(!differ);
        int trip = round_trip_differs(buf, n);
        if (trip) fprintf(stderr, "%s: written and read back, it differs\n", e->d_name);
        CHECK(!trip);
        round_trips += trip;
        split += joined;
    }
    if (d) closedir(d);
    CHECK(files >= 4);
    CHECK(split >= 10); /* the second thread's half joined, not always dropped */
    printf(
        "%d inputs: %d read, %d refused with an error; read on two threads: %d joined; %d differ written and read back\n",
        files, read_ok, refused, split, round_trips);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_fuzz_corpus"); }
