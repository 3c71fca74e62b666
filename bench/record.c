/* bench_record - what profiling an unchanged program costs: `opprof record`
 * against uftrace (functions) and heaptrack (allocations), measured in the
 * same run on bench_record_toy (built with -finstrument-functions).
 *
 *   build/bin/bench_record [--json] [--calls N] [--mallocs N]
 *
 * Each figure is the median of 5 whole runs; the cost per function entry+exit
 * (or per malloc+free pair) is (time under the tool - time plain) / count.
 * Peers run when installed (scripts/deps.sh --bench): uftrace record, heaptrack. */
#include "bench_util.h"

#include <sys/wait.h>

static const char *g_dir;

/* Median seconds of 5 runs of a shell command (output discarded); NAN if it fails. */
static double median_run(const char *cmd) {
    double t[5];
    for (int i = 0; i < 5; i++) {
        char full[9600];
        snprintf(full, sizeof full, "rm -rf '%s/out' '%s/uftrace.data'; cd '%s' && %s > /dev/null 2>&1", g_dir, g_dir,
                 g_dir, cmd);
        int64_t t0 = bench_now_ns();
        int st = system(full);
        t[i] = (double)(bench_now_ns() - t0) / 1e9;
        if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return NAN;
    }
    return bench_stats_of(t, 5).median;
}

static bool have(const char *tool) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s > /dev/null 2>&1", tool);
    return system(cmd) == 0;
}

int main(int argc, char **argv) {
    bool json = false;
    long calls = 2000000, mallocs = 1000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = true;
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc) calls = atol(argv[++i]);
        else if (!strcmp(argv[i], "--mallocs") && i + 1 < argc) mallocs = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_record [--json] [--calls N] [--mallocs N]\n");
            return 64;
        }
    }
    char dir[] = "/tmp/opprof-bench-record-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    g_dir = dir;
    const char *bin = bench_self_dir();
    char toy[4200], cmd[9000];
    snprintf(toy, sizeof toy, "%s/bench_record_toy", bin);
    double functions = 3.0 * (double)calls;

    snprintf(cmd, sizeof cmd, "'%s' calls %ld", toy, calls);
    double plain_calls = median_run(cmd);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o out -- '%s' calls %ld", bin, toy, calls);
    double opprof_calls = median_run(cmd);
    double uftrace_calls = NAN;
    if (have("uftrace")) {
        snprintf(cmd, sizeof cmd, "uftrace record '%s' calls %ld", toy, calls);
        uftrace_calls = median_run(cmd);
    }
    snprintf(cmd, sizeof cmd, "'%s' mallocs %ld", toy, mallocs);
    double plain_mallocs = median_run(cmd);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --memory -o out -- '%s' mallocs %ld", bin, toy, mallocs);
    double opprof_mallocs = median_run(cmd);
    double heaptrack_mallocs = NAN;
    if (have("heaptrack")) {
        snprintf(cmd, sizeof cmd, "heaptrack -o out/heaptrack '%s' mallocs %ld", toy, mallocs);
        char full[9100];
        snprintf(full, sizeof full, "mkdir -p out && %s", cmd);
        heaptrack_mallocs = median_run(full);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_record: cannot remove %s\n", dir);

    double opprof_fn = (opprof_calls - plain_calls) / functions * 1e9;
    double uftrace_fn = (uftrace_calls - plain_calls) / functions * 1e9;
    double opprof_pair = (opprof_mallocs - plain_mallocs) / (double)mallocs * 1e9;
    double heaptrack_pair = (heaptrack_mallocs - plain_mallocs) / (double)mallocs * 1e9;
    if (json) {
        printf("{\n");
        bench_json_number(stdout, "functions", functions, false);
        bench_json_number(stdout, "plain_calls_s", plain_calls, false);
        bench_json_number(stdout, "opprof_function_ns", opprof_fn, false);
        bench_json_number(stdout, "uftrace_function_ns", uftrace_fn, false);
        bench_json_number(stdout, "uftrace_over_opprof", uftrace_fn / opprof_fn, false);
        bench_json_number(stdout, "mallocs", (double)mallocs, false);
        bench_json_number(stdout, "plain_malloc_free_ns", plain_mallocs / (double)mallocs * 1e9, false);
        bench_json_number(stdout, "opprof_malloc_free_ns", opprof_pair, false);
        bench_json_number(stdout, "heaptrack_malloc_free_ns", heaptrack_pair, false);
        bench_json_number(stdout, "heaptrack_over_opprof", heaptrack_pair / opprof_pair, true);
        printf("}\n");
    } else {
        printf("function entry+exit added: opprof record %.1f ns, uftrace %.1f ns (%.1fx)\n", opprof_fn, uftrace_fn,
               uftrace_fn / opprof_fn);
        printf("malloc+free pair added:    opprof record %.1f ns, heaptrack %.1f ns (%.1fx)\n", opprof_pair,
               heaptrack_pair, heaptrack_pair / opprof_pair);
    }
    return 0;
}
