/* test_alloc_sweep.c - the allocation-failure sweep: a full profile_cpu run
 * (with its folded stacks and HTML report too) with the Nth allocation
 * through opprof's and nn's allocator hooks failing,
 * for every N the run performs. Each time: exit status 1, a clear message,
 * no crash, nothing left behind (and, in the sanitizer build of .ci/run, no
 * leak: LeakSanitizer turns a leak into another exit status). */
#include "check.h"
#include "testutil.h"

#include <stdbool.h>
#include <stdlib.h>

int main(void) {
    char dir[256], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet --stacks --html --fail-alloc 0 '%s/count'", bin_dir(), dir);
    CHECK_INT(run_command(cmd, &out), 0);
    long total = 0;
    if (out) {
        const char *line = strstr(out, " allocations through the hooks");
        if (line) {
            const char *p = line;
            while (p > out && p[-1] >= '0' && p[-1] <= '9') p--;
            total = atol(p);
        }
    }
    free(out);
    CHECK(total > 50);
    int bad = 0;
    for (long n = 1; n <= total; n++) {
        snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet --stacks --html --fail-alloc %ld '%s/run%ld'", bin_dir(), n, dir, n);
        int rc = run_command(cmd, &out);
        bool ok = rc == 1 && out && strstr(out, "profile_cpu: ") && strstr(out, "out of memory");
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
    return check_report("test_alloc_sweep");
}
