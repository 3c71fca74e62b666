/* test_alloc_sweep.c - the allocation-failure sweep: a full profile_cpu run
 * (with its folded stacks and HTML report too) with the Nth allocation
 * through opprof's and nn's allocator hooks failing,
 * for every N the run performs. Each time: exit status 1, a clear message,
 * no crash, nothing left behind (and, in the sanitizer build of .ci/run, no
 * leak: LeakSanitizer turns a leak into another exit status).
 *
 * The count is not the same in every run: the texts written (tables, JSON,
 * HTML) hold measured times, whose digits can make a buffer grow once more.
 * So a run whose Nth allocation never came (it says how many it made, fewer
 * than N) is a run that had nothing to fail, and the sweep goes on to the
 * largest count seen. */
#include "check.h"
#include "testutil.h"

#include <stdbool.h>
#include <stdlib.h>

/* The count a run printed ("N allocations through the hooks"), or -1. */
static long allocations_of(const char *out) {
    const char *line = out ? strstr(out, " allocations through the hooks") : NULL;
    if (!line) return -1;
    const char *p = line;
    while (p > out && p[-1] >= '0' && p[-1] <= '9') p--;
    return atol(p);
}

TEST_CASE(every_allocation_fails_cleanly) {
    char dir[256], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet --stacks --html --fail-alloc 0 '%s/count'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    long total = allocations_of(out);
    free(out);
    CHECK(total > 50);
    int bad = 0;
    for (long n = 1; n <= total; n++) {
        snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet --stacks --html --fail-alloc %ld '%s/run%ld'", bin_dir(), n,
                 dir, n);
        int rc = run_command(cmd, &out);
        long made = allocations_of(out);
        bool failed_cleanly = rc == 1 && out && strstr(out, "profile_cpu: ") && strstr(out, "out of memory");
        bool never_reached = rc == 0 && made >= 0 && made < n; /* nothing to fail in this run */
        bool ok = failed_cleanly || never_reached;
        if (never_reached) {
            snprintf(cmd, sizeof cmd, "rm -rf '%s/run%ld'", dir, n); /* a complete run: not a leftover */
            run_command(cmd, NULL);
        } else if (made > total) {
            total = made; /* a run that made more: sweep those too */
        }
        if (!ok && bad++ < 10) fprintf(stderr, "N=%ld: exit %d: %s\n", n, rc, out ? out : "");
        free(out);
    }
    CHECK_INT(bad, 0);
    /* nothing left behind: only the counting run's directory */
    snprintf(cmd, sizeof cmd, "ls -A '%s'", dir);
    run_command(cmd, &out);
    CHECK_STR(out, "count\n");
    free(out);
    printf("swept %ld allocations\n", total);
    remove_tree(dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_alloc_sweep"); }
