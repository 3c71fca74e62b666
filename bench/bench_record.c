/* bench_record - what profiling an unchanged program costs: `opprof record`
 * against uftrace (functions) and heaptrack (allocations), measured in the
 * same run on bench_record_toy (built with -finstrument-functions).
 *
 *   build/bin/bench_record [--json] [--calls N] [--mallocs N]
 *
 * Each figure is the median of 5 whole runs; the cost per function entry+exit
 * (or per malloc+free pair) is (time under the tool - time plain) / count.
 * Peers run when installed (scripts/deps.sh --bench): uftrace record, heaptrack.
 * The floor is what any recorder that takes two timestamps per function (or
 * per malloc+free pair) must add: the loop cannot run faster than two
 * timestamps back to back, so it adds at least 2 x timestamp - the plain
 * time; "*_over_floor" is the best ratio to a peer such a recorder can reach.
 * opprof record writes its tables, Chrome trace and HTML report at exit; the
 * peers write raw data and leave the analysis to a second command, so the
 * "same deliverable" figures add it: uftrace dump --chrome + uftrace report,
 * heaptrack_print. */
#include "bench_util.h"

#include <sys/wait.h>

static const char *g_dir;

typedef struct timing {
    double whole_s, loop_s; /* medians: the whole run (the tool's exit work included), the loop */
} timing;

/* 5 runs of a shell command; the toy prints its loop's time. NAN if it fails. */
static timing median_run(const char *cmd) {
    double whole[5], loop[5];
    timing bad = {NAN, NAN};
    for (int i = 0; i < 5; i++) {
        char full[9600];
        snprintf(full, sizeof full, "rm -rf '%s/out' '%s/uftrace.data'; cd '%s' && %s 2>/dev/null", g_dir, g_dir, g_dir,
                 cmd);
        int64_t t0 = bench_now_ns();
        FILE *p = popen(full, "r");
        char line[256];
        loop[i] = NAN;
        while (p && fgets(line, sizeof line, p))
            if (!strncmp(line, "loop_s: ", 8)) loop[i] = atof(line + 8);
        int st = p ? pclose(p) : -1;
        whole[i] = (double)(bench_now_ns() - t0) / 1e9;
        if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || isnan(loop[i])) return bad;
    }
    return (timing){bench_stats_of(whole, 5).median, bench_stats_of(loop, 5).median};
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
    timing plain_calls = median_run(cmd);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions -o out -- '%s' calls %ld", bin, toy, calls);
    timing opprof_calls = median_run(cmd);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --functions --no-html -o out -- '%s' calls %ld", bin, toy, calls);
    timing opprof_calls_no_html = median_run(cmd);
    timing uftrace_calls = {NAN, NAN}, uftrace_chrome = {NAN, NAN};
    if (have("uftrace")) {
        snprintf(cmd, sizeof cmd, "uftrace record '%s' calls %ld", toy, calls);
        uftrace_calls = median_run(cmd);
        snprintf(cmd, sizeof cmd,
                 "uftrace record '%s' calls %ld && uftrace dump --chrome > chrome.json && uftrace report > report.txt",
                 toy, calls);
        uftrace_chrome = median_run(cmd);
    }
    snprintf(cmd, sizeof cmd, "'%s' mallocs %ld", toy, mallocs);
    timing plain_mallocs = median_run(cmd);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --memory -o out -- '%s' mallocs %ld", bin, toy, mallocs);
    timing opprof_mallocs = median_run(cmd);
    snprintf(cmd, sizeof cmd, "'%s/opprof' record --memory --no-html -o out -- '%s' mallocs %ld", bin, toy, mallocs);
    timing opprof_mallocs_no_html = median_run(cmd);
    timing heaptrack_mallocs = {NAN, NAN}, heaptrack_print = {NAN, NAN};
    if (have("heaptrack")) {
        snprintf(cmd, sizeof cmd, "mkdir -p out && heaptrack -o out/heaptrack '%s' mallocs %ld", toy, mallocs);
        heaptrack_mallocs = median_run(cmd);
        snprintf(cmd, sizeof cmd,
                 "mkdir -p out && heaptrack -o out/heaptrack '%s' mallocs %ld && heaptrack_print out/heaptrack.zst > "
                 "out/print.txt 2>&1",
                 toy, mallocs);
        if (have("heaptrack_print")) heaptrack_print = median_run(cmd);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_record: cannot remove %s\n", dir);

    double stamp = bench_timestamp_ns();
    double fn_floor = fmax(0.0, 2 * stamp - plain_calls.loop_s / functions * 1e9);
    double pair_floor = fmax(0.0, 2 * stamp - plain_mallocs.loop_s / (double)mallocs * 1e9);
    /* recording: the loop's time added, per call or pair; exit: what is left of the whole run */
    double n_m = (double)mallocs;
    double opprof_fn = (opprof_calls.loop_s - plain_calls.loop_s) / functions * 1e9;
    double uftrace_fn = (uftrace_calls.loop_s - plain_calls.loop_s) / functions * 1e9;
    double opprof_pair = (opprof_mallocs.loop_s - plain_mallocs.loop_s) / n_m * 1e9;
    double heaptrack_pair = (heaptrack_mallocs.loop_s - plain_mallocs.loop_s) / n_m * 1e9;
    double opprof_fn_whole = (opprof_calls.whole_s - plain_calls.whole_s) / functions * 1e9;
    double uftrace_fn_whole = (uftrace_calls.whole_s - plain_calls.whole_s) / functions * 1e9;
    double opprof_fn_no_html = (opprof_calls_no_html.whole_s - plain_calls.whole_s) / functions * 1e9;
    double opprof_pair_no_html = (opprof_mallocs_no_html.whole_s - plain_mallocs.whole_s) / (double)mallocs * 1e9;
    double opprof_pair_whole = (opprof_mallocs.whole_s - plain_mallocs.whole_s) / n_m * 1e9;
    double heaptrack_pair_whole = (heaptrack_mallocs.whole_s - plain_mallocs.whole_s) / n_m * 1e9;
    double uftrace_fn_deliverable = (uftrace_chrome.whole_s - plain_calls.whole_s) / functions * 1e9;
    double heaptrack_pair_deliverable = (heaptrack_print.whole_s - plain_mallocs.whole_s) / n_m * 1e9;
    if (json) {
        printf("{\n");
        bench_json_number(stdout, "functions", functions, false);
        bench_json_number(stdout, "plain_function_ns", plain_calls.loop_s / functions * 1e9, false);
        bench_json_number(stdout, "opprof_function_ns", opprof_fn, false);
        bench_json_number(stdout, "uftrace_function_ns", uftrace_fn, false);
        bench_json_number(stdout, "uftrace_over_opprof", uftrace_fn / opprof_fn, false);
        bench_json_number(stdout, "timestamp_ns", stamp, false);
        bench_json_number(stdout, "function_floor_ns", fn_floor, false);
        bench_json_number(stdout, "uftrace_over_floor", uftrace_fn / fn_floor, false);
        bench_json_number(stdout, "opprof_function_whole_run_ns", opprof_fn_whole, false);
        bench_json_number(stdout, "opprof_function_whole_run_no_html_ns", opprof_fn_no_html, false);
        bench_json_number(stdout, "uftrace_function_whole_run_ns", uftrace_fn_whole, false);
        bench_json_number(stdout, "uftrace_function_with_chrome_and_report_ns", uftrace_fn_deliverable, false);
        bench_json_number(stdout, "mallocs", n_m, false);
        bench_json_number(stdout, "plain_malloc_free_ns", plain_mallocs.loop_s / n_m * 1e9, false);
        bench_json_number(stdout, "opprof_malloc_free_ns", opprof_pair, false);
        bench_json_number(stdout, "heaptrack_malloc_free_ns", heaptrack_pair, false);
        bench_json_number(stdout, "heaptrack_over_opprof", heaptrack_pair / opprof_pair, false);
        bench_json_number(stdout, "malloc_free_floor_ns", pair_floor, false);
        bench_json_number(stdout, "heaptrack_over_floor", heaptrack_pair / pair_floor, false);
        bench_json_number(stdout, "opprof_malloc_free_whole_run_ns", opprof_pair_whole, false);
        bench_json_number(stdout, "opprof_malloc_free_whole_run_no_html_ns", opprof_pair_no_html, false);
        bench_json_number(stdout, "heaptrack_malloc_free_whole_run_ns", heaptrack_pair_whole, false);
        bench_json_number(stdout, "heaptrack_malloc_free_with_print_ns", heaptrack_pair_deliverable, true);
        printf("}\n");
    } else {
        printf("while recording, added per function entry+exit: opprof record %.1f ns, uftrace %.1f ns (%.1fx)\n",
               opprof_fn, uftrace_fn, uftrace_fn / opprof_fn);
        printf("  floor of two timestamps (%.1f ns each): %.1f ns, at best %.1fx uftrace\n", stamp, fn_floor,
               uftrace_fn / fn_floor);
        printf("  the whole run, exit work included: opprof %.1f ns (%.1f ns with --no-html), uftrace %.1f ns (%.1f ns "
               "with dump --chrome and report)\n",
               opprof_fn_whole, opprof_fn_no_html, uftrace_fn_whole, uftrace_fn_deliverable);
        printf("while recording, added per malloc+free pair: opprof record %.1f ns, heaptrack %.1f ns (%.1fx)\n",
               opprof_pair, heaptrack_pair, heaptrack_pair / opprof_pair);
        printf("  floor of two timestamps: %.1f ns, at best %.1fx heaptrack\n", pair_floor, heaptrack_pair / pair_floor);
        printf("  the whole run, exit work included: opprof %.1f ns (%.1f ns with --no-html), heaptrack %.1f ns (%.1f ns "
               "with heaptrack_print)\n",
               opprof_pair_whole, opprof_pair_no_html, heaptrack_pair_whole, heaptrack_pair_deliverable);
    }
    return 0;
}
