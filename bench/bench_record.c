/* bench_record - what profiling an unchanged program costs: `opprof record`
 * against uftrace (functions) and heaptrack (allocations), measured in the
 * same run on bench_record_toy (built with -finstrument-functions).
 *
 *   build/bin/bench_record [--json] [--calls N] [--mallocs N]
 *
 * Each figure is the median of 7 whole runs, the plain program, opprof and
 * the peers in turn (interleaved rounds); the cost per function entry+exit
 * (or per malloc+free pair) is (time under the tool - time plain) / count, and
 * a peer's ratio the median of the rounds' ratios with its 95 % interval.
 * Peers run when installed (scripts/deps.sh --bench): uftrace record, heaptrack.
 * The floor is what any recorder that takes two timestamps per function (or
 * per malloc+free pair) must add: the loop cannot run faster than two
 * timestamps back to back, so it adds at least 2 x timestamp - the plain
 * time; "*_over_floor" is the best ratio to a peer such a recorder can reach.
 * A recorder that keeps its events also stores them, into memory that its
 * process has not touched before: "*_store_ns" is that store alone, measured
 * in the same run (the fewest bytes such a record can take: 24 per function,
 * the entry's time and address and the exit's time; 40 per malloc+free pair,
 * time, address and size, then time and address), written into a fresh
 * mapping with huge pages advised, once a round after the round's runs (the
 * median of 7, as the tools' figures); "*_floor_with_store_ns" adds it to the
 * floor. On a VM whose host backs a guest's pages at their first touch, that
 * store costs more than the timestamps, and what it costs differs from one
 * process to the next by as much as opprof's figure does (the floor with a
 * malloc+free pair's store: 18.8-25.8 ns in 3 runs at 11376c0). So the floor
 * is also run as a program: bench_floor_preload.c, the least such a recorder
 * does, preloaded into the toy in the same rounds; "*_minimal_recorder_ns"
 * is what it adds, and "opprof_*_above_minimal_recorder_ns" the median (and
 * quartiles) of opprof's run less that recorder's, round by round. Each run,
 * and each store, begins after a touch of 1 GiB (warm_guest_memory), so that
 * none meets a guest page its host has not backed yet.
 * opprof record writes its tables, Chrome trace and HTML report at exit; the
 * peers write raw data and leave the analysis to a second command, so the
 * "same deliverable" figures add it: uftrace dump --chrome + uftrace report,
 * heaptrack_print. */
#include "bench_util.h"

#include <sys/mman.h>
#include <sys/wait.h>

static const char *g_dir;

typedef struct timing {
    double whole_s, loop_s;             /* medians: the whole run (the tool's exit work included), the loop */
    double thread_cpu_s, process_cpu_s; /* medians: the CPU time of the loop's thread, of its process */
    double start_cpu_s;                 /* median: the process's CPU time when main began */
} timing;

enum { ROUNDS = 7 };

/* A command's runs, one per round: the whole run and the loop the toy times. */
typedef struct series {
    double whole[ROUNDS], loop[ROUNDS], thread_cpu[ROUNDS], process_cpu[ROUNDS], start_cpu[ROUNDS];
    bool failed, absent;
} series;

/* One run of a shell command (round r of s); the toy prints its loop's time
 * and CPU times. False if it fails. */
static bool run_once(const char *cmd, series *s, int r) {
    double *whole = &s->whole[r], *loop = &s->loop[r];
    char full[9600];
    snprintf(full, sizeof full, "rm -rf '%s/out' '%s/uftrace.data'; cd '%s' && %s 2>/dev/null", g_dir, g_dir, g_dir,
             cmd);
    int64_t t0 = bench_now_ns();
    FILE *p = popen(full, "r");
    char line[256];
    *loop = NAN;
    s->thread_cpu[r] = s->process_cpu[r] = s->start_cpu[r] = NAN;
    while (p && fgets(line, sizeof line, p)) {
        if (!strncmp(line, "loop_s: ", 8)) *loop = atof(line + 8);
        if (!strncmp(line, "loop_cpu_s: ", 12)) s->thread_cpu[r] = atof(line + 12);
        if (!strncmp(line, "loop_process_cpu_s: ", 20)) s->process_cpu[r] = atof(line + 20);
        if (!strncmp(line, "start_cpu_s: ", 13)) s->start_cpu[r] = atof(line + 13);
    }
    int st = p ? pclose(p) : -1;
    *whole = (double)(bench_now_ns() - t0) / 1e9;
    return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && !isnan(*loop);
}

/* Touch WARM_BYTES of fresh memory, a write a page, and give it back. On a
 * VM whose host backs a guest's page at its first touch, a run that meets
 * guest pages the host never backed pays for the host's work, a cost no
 * machine without that host has: `opprof record --functions` of 9 M calls
 * took 75 ns a call after one run and 21-29 ns after such a touch; the
 * floor's store (then the median of 3 mappings in turn) met backed pages
 * from its second mapping on. Before each run, so that every command meets the
 * guest as the floor does; the guest still clears each page it gives. In
 * huge pages, given back whole: 4 KiB pages left the next huge mappings to
 * compaction (the floor's store took 26-50 ns a call instead of 5). */
enum { WARM_BYTES = 1 << 30 };
static void warm_guest_memory(void) {
    char *p = mmap(NULL, WARM_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    madvise(p, WARM_BYTES, MADV_HUGEPAGE);
    for (size_t at = 0; at < WARM_BYTES; at += 4096) ((volatile char *)p)[at] = 1;
    munmap(p, WARM_BYTES);
}

/* ns per item of storing `bytes` per item into memory this process never
 * touched (a fresh mapping, huge pages advised, as recorders' buffers are),
 * after warm_guest_memory. */
static double fresh_store_once(size_t bytes, double items) {
    size_t words = bytes / 8, length = (size_t)items * bytes;
    warm_guest_memory();
    uint64_t *p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NAN;
    madvise(p, length, MADV_HUGEPAGE);
    int64_t t0 = bench_now_ns();
    for (size_t i = 0; i < (size_t)items; i++)
        for (size_t w = 0; w < words; w++) p[i * words + w] = i + w;
    double ns = (double)(bench_now_ns() - t0) / items;
    munmap(p, length);
    return ns;
}

/* ROUNDS rounds of every command in turn (NULL: a peer not installed), so
 * that each round's runs share the machine's mood; each run after
 * warm_guest_memory. Each round ends with the floor's store of store_bytes
 * an item (store_ns[r]): measured as often as the tools, and beside them,
 * since on this VM it swings from run to run as much as they do. */
static void interleaved(const char *const *cmds, int n, series *out, size_t store_bytes, double items,
                        double store_ns[ROUNDS]) {
    for (int c = 0; c < n; c++) out[c] = (series){.absent = cmds[c] == NULL};
    for (int r = 0; r < ROUNDS; r++) {
        for (int c = 0; c < n; c++) {
            if (out[c].absent || out[c].failed) continue;
            warm_guest_memory();
            if (!run_once(cmds[c], &out[c], r)) out[c].failed = true;
        }
        store_ns[r] = fresh_store_once(store_bytes, items);
    }
}

/* The medians of a command's runs; NAN if it is absent or failed. */
static timing median_of(const series *s) {
    if (s->absent || s->failed) return (timing){NAN, NAN, NAN, NAN, NAN};
    double whole[ROUNDS], loop[ROUNDS], thread[ROUNDS], process[ROUNDS], start[ROUNDS];
    memcpy(whole, s->whole, sizeof whole);
    memcpy(loop, s->loop, sizeof loop);
    memcpy(thread, s->thread_cpu, sizeof thread);
    memcpy(process, s->process_cpu, sizeof process);
    memcpy(start, s->start_cpu, sizeof start);
    return (timing){bench_stats_of(whole, ROUNDS).median, bench_stats_of(loop, ROUNDS).median,
                    bench_stats_of(thread, ROUNDS).median, bench_stats_of(process, ROUNDS).median,
                    bench_stats_of(start, ROUNDS).median};
}

/* The peer's added loop time over opprof's, round by round. */
static bench_ratio added_ratio(const series *peer, const series *ours, const series *plain) {
    double num[ROUNDS], den[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        bool ok = !peer->absent && !peer->failed && !ours->failed && !plain->failed;
        num[r] = ok ? peer->loop[r] - plain->loop[r] : NAN;
        den[r] = ok ? ours->loop[r] - plain->loop[r] : NAN;
    }
    return bench_ratio_of(num, den, ROUNDS);
}

/* What `ours` adds over `base` per item, round by round (each round's two
 * runs side by side): median and quartiles. */
static bench_stats added_per_item(const series *ours, const series *base, double items) {
    double added[ROUNDS];
    int n = 0;
    for (int r = 0; r < ROUNDS && !ours->failed && !base->failed && !ours->absent; r++)
        added[n++] = (ours->loop[r] - base->loop[r]) / items * 1e9;
    return bench_stats_of(added, n);
}

/* The median of a round's figures (sorted in place). */
static double median_ns(double v[ROUNDS]) { return bench_stats_of(v, ROUNDS).median; }

static bool have(const char *tool) {
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s > /dev/null 2>&1", tool);
    return system(cmd) == 0;
}

int main(int argc, char **argv) {
    bool json = false;
    long calls = 2000000, mallocs = 1000000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = atol(argv[++i]);
        else if (!strcmp(argv[i], "--mallocs") && i + 1 < argc)
            mallocs = atol(argv[++i]);
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

    char c[6][9000];
    bool uft = have("uftrace"), ht = have("heaptrack"), htp = ht && have("heaptrack_print");
    snprintf(c[0], sizeof c[0], "'%s' calls %ld", toy, calls);
    /* every call a range, as uftrace records them: --functions' default budget lifted */
    const char *all = "OPPROF_FUNCTION_CALLS=1000000000000 OPPROF_MAX_EVENTS=0 OPPROF_TRACE_EVENTS=0";
    snprintf(c[1], sizeof c[1], "%s '%s/opprof' record --functions -o out -- '%s' calls %ld", all, bin, toy, calls);
    snprintf(c[2], sizeof c[2], "%s '%s/opprof' record --functions --no-html -o out -- '%s' calls %ld", all, bin, toy,
             calls);
    snprintf(c[3], sizeof c[3], "uftrace record '%s' calls %ld", toy, calls);
    snprintf(c[4], sizeof c[4],
             "uftrace record '%s' calls %ld && uftrace dump --chrome > chrome.json && uftrace report > report.txt", toy,
             calls);
    snprintf(c[5], sizeof c[5], "LD_PRELOAD='%s/libbench_floor_preload.so' '%s' calls %ld", bin, toy, calls);
    const char *call_cmds[6] = {c[0], c[1], c[2], uft ? c[3] : NULL, uft ? c[4] : NULL, c[5]};
    series call_runs[6];
    double fn_stores[ROUNDS], pair_stores[ROUNDS];
    interleaved(call_cmds, 6, call_runs, 24, functions, fn_stores);
    timing plain_calls = median_of(&call_runs[0]), opprof_calls = median_of(&call_runs[1]),
           opprof_calls_no_html = median_of(&call_runs[2]), uftrace_calls = median_of(&call_runs[3]),
           uftrace_chrome = median_of(&call_runs[4]);
    bench_ratio uftrace_over = added_ratio(&call_runs[3], &call_runs[1], &call_runs[0]);
    char m[6][9000];
    snprintf(m[0], sizeof m[0], "'%s' mallocs %ld", toy, mallocs);
    snprintf(m[1], sizeof m[1], "'%s/opprof' record --memory -o out -- '%s' mallocs %ld", bin, toy, mallocs);
    snprintf(m[2], sizeof m[2], "'%s/opprof' record --memory --no-html -o out -- '%s' mallocs %ld", bin, toy, mallocs);
    snprintf(m[3], sizeof m[3], "mkdir -p out && heaptrack -o out/heaptrack '%s' mallocs %ld", toy, mallocs);
    snprintf(m[4], sizeof m[4],
             "mkdir -p out && heaptrack -o out/heaptrack '%s' mallocs %ld && heaptrack_print out/heaptrack.zst > "
             "out/print.txt 2>&1",
             toy, mallocs);
    snprintf(m[5], sizeof m[5], "LD_PRELOAD='%s/libbench_floor_preload.so' '%s' mallocs %ld", bin, toy, mallocs);
    const char *malloc_cmds[6] = {m[0], m[1], m[2], ht ? m[3] : NULL, htp ? m[4] : NULL, m[5]};
    series malloc_runs[6];
    interleaved(malloc_cmds, 6, malloc_runs, 40, (double)mallocs, pair_stores);
    timing plain_mallocs = median_of(&malloc_runs[0]), opprof_mallocs = median_of(&malloc_runs[1]),
           opprof_mallocs_no_html = median_of(&malloc_runs[2]), heaptrack_mallocs = median_of(&malloc_runs[3]),
           heaptrack_print = median_of(&malloc_runs[4]);
    bench_ratio heaptrack_over = added_ratio(&malloc_runs[3], &malloc_runs[1], &malloc_runs[0]);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_record: cannot remove %s\n", dir);

    double stamp = bench_timestamp_ns();
    double fn_floor = fmax(0.0, 2 * stamp - plain_calls.loop_s / functions * 1e9);
    double pair_floor = fmax(0.0, 2 * stamp - plain_mallocs.loop_s / (double)mallocs * 1e9);
    bench_stats fn_minimal = added_per_item(&call_runs[5], &call_runs[0], functions);
    bench_stats fn_over = added_per_item(&call_runs[1], &call_runs[5], functions);
    bench_stats pair_minimal = added_per_item(&malloc_runs[5], &malloc_runs[0], (double)mallocs);
    bench_stats pair_over = added_per_item(&malloc_runs[1], &malloc_runs[5], (double)mallocs);
    double fn_store = median_ns(fn_stores), pair_store = median_ns(pair_stores);
    /* recording: the loop's time added, per call or pair; exit: what is left of the whole run */
    double n_m = (double)mallocs;
    double opprof_fn = (opprof_calls.loop_s - plain_calls.loop_s) / functions * 1e9;
    /* where the time went: the program's thread's CPU, and its process's (opprof's helper too) */
    double opprof_fn_thread = (opprof_calls.thread_cpu_s - plain_calls.thread_cpu_s) / functions * 1e9;
    double opprof_fn_process = (opprof_calls.process_cpu_s - plain_calls.process_cpu_s) / functions * 1e9;
    double opprof_pair_thread = (opprof_mallocs.thread_cpu_s - plain_mallocs.thread_cpu_s) / (double)mallocs * 1e9;
    double opprof_pair_process = (opprof_mallocs.process_cpu_s - plain_mallocs.process_cpu_s) / (double)mallocs * 1e9;
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
        bench_json_number(stdout, "opprof_function_thread_cpu_ns", opprof_fn_thread, false);
        bench_json_number(stdout, "opprof_function_process_cpu_ns", opprof_fn_process, false);
        bench_json_number(stdout, "uftrace_function_ns", uftrace_fn, false);
        bench_json_ratio(stdout, "uftrace_over_opprof", uftrace_over, false);
        bench_json_number(stdout, "timestamp_ns", stamp, false);
        /* the profiled process's start: what a tool adds before main (CPU time); --functions names
         * main as it enters it (libdw loaded then), --memory loads nothing more */
        bench_json_number(stdout, "plain_start_cpu_ms", plain_calls.start_cpu_s * 1e3, false);
        bench_json_number(stdout, "opprof_start_cpu_ms", (opprof_calls.start_cpu_s - plain_calls.start_cpu_s) * 1e3,
                          false);
        bench_json_number(stdout, "uftrace_start_cpu_ms", (uftrace_calls.start_cpu_s - plain_calls.start_cpu_s) * 1e3,
                          false);
        bench_json_number(stdout, "opprof_memory_start_cpu_ms",
                          (opprof_mallocs.start_cpu_s - plain_mallocs.start_cpu_s) * 1e3, false);
        bench_json_number(stdout, "heaptrack_start_cpu_ms",
                          (heaptrack_mallocs.start_cpu_s - plain_mallocs.start_cpu_s) * 1e3, false);
        bench_json_number(stdout, "function_floor_ns", fn_floor, false);
        bench_json_number(stdout, "uftrace_over_floor", uftrace_fn / fn_floor, false);
        bench_json_number(stdout, "function_store_ns", fn_store, false);
        bench_json_number(stdout, "function_floor_with_store_ns", fn_floor + fn_store, false);
        bench_json_number(stdout, "function_minimal_recorder_ns", fn_minimal.median, false);
        bench_json_number(stdout, "opprof_function_above_minimal_recorder_ns", fn_over.median, false);
        bench_json_number(stdout, "opprof_function_above_minimal_recorder_ns_q1", fn_over.q1, false);
        bench_json_number(stdout, "opprof_function_above_minimal_recorder_ns_q3", fn_over.q3, false);
        bench_json_number(stdout, "opprof_function_whole_run_ns", opprof_fn_whole, false);
        bench_json_number(stdout, "opprof_function_whole_run_no_html_ns", opprof_fn_no_html, false);
        bench_json_number(stdout, "uftrace_function_whole_run_ns", uftrace_fn_whole, false);
        bench_json_number(stdout, "uftrace_function_with_chrome_and_report_ns", uftrace_fn_deliverable, false);
        bench_json_number(stdout, "mallocs", n_m, false);
        bench_json_number(stdout, "plain_malloc_free_ns", plain_mallocs.loop_s / n_m * 1e9, false);
        bench_json_number(stdout, "opprof_malloc_free_ns", opprof_pair, false);
        bench_json_number(stdout, "opprof_malloc_free_thread_cpu_ns", opprof_pair_thread, false);
        bench_json_number(stdout, "opprof_malloc_free_process_cpu_ns", opprof_pair_process, false);
        bench_json_number(stdout, "heaptrack_malloc_free_ns", heaptrack_pair, false);
        bench_json_ratio(stdout, "heaptrack_over_opprof", heaptrack_over, false);
        bench_json_number(stdout, "malloc_free_floor_ns", pair_floor, false);
        bench_json_number(stdout, "heaptrack_over_floor", heaptrack_pair / pair_floor, false);
        bench_json_number(stdout, "malloc_free_store_ns", pair_store, false);
        bench_json_number(stdout, "malloc_free_floor_with_store_ns", pair_floor + pair_store, false);
        bench_json_number(stdout, "malloc_free_minimal_recorder_ns", pair_minimal.median, false);
        bench_json_number(stdout, "opprof_malloc_free_above_minimal_recorder_ns", pair_over.median, false);
        bench_json_number(stdout, "opprof_malloc_free_above_minimal_recorder_ns_q1", pair_over.q1, false);
        bench_json_number(stdout, "opprof_malloc_free_above_minimal_recorder_ns_q3", pair_over.q3, false);
        bench_json_number(stdout, "opprof_malloc_free_whole_run_ns", opprof_pair_whole, false);
        bench_json_number(stdout, "opprof_malloc_free_whole_run_no_html_ns", opprof_pair_no_html, false);
        bench_json_number(stdout, "heaptrack_malloc_free_whole_run_ns", heaptrack_pair_whole, false);
        bench_json_number(stdout, "heaptrack_malloc_free_with_print_ns", heaptrack_pair_deliverable, true);
        printf("}\n");
    } else {
        char r1[96];
        bench_ratio_text(uftrace_over, r1, sizeof r1);
        printf("at start, before main: opprof --functions %.2f ms of CPU, uftrace %.2f ms; opprof --memory %.2f ms, "
               "heaptrack %.2f ms (the program alone: %.2f ms)\n",
               (opprof_calls.start_cpu_s - plain_calls.start_cpu_s) * 1e3,
               (uftrace_calls.start_cpu_s - plain_calls.start_cpu_s) * 1e3,
               (opprof_mallocs.start_cpu_s - plain_mallocs.start_cpu_s) * 1e3,
               (heaptrack_mallocs.start_cpu_s - plain_mallocs.start_cpu_s) * 1e3, plain_calls.start_cpu_s * 1e3);
        printf("while recording, added per function entry+exit: opprof record %.1f ns, uftrace %.1f ns (%s)\n",
               opprof_fn, uftrace_fn, r1);
        printf(
            "  opprof's CPU time in the loop, per function: %.1f ns on the program's thread, %.1f ns in its process\n",
            opprof_fn_thread, opprof_fn_process);
        printf("  floor of two timestamps (%.1f ns each): %.1f ns, at best %.1fx uftrace; %.1f ns with the store of "
               "24 bytes to fresh memory\n",
               stamp, fn_floor, uftrace_fn / fn_floor, fn_floor + fn_store);
        printf("  the least recorder, preloaded (bench_floor_preload.c): %.1f ns; opprof %+.1f ns over it (rounds' "
               "median; quartiles %+.1f, %+.1f)\n",
               fn_minimal.median, fn_over.median, fn_over.q1, fn_over.q3);
        printf("  the whole run, exit work included: opprof %.1f ns (%.1f ns with --no-html), uftrace %.1f ns (%.1f ns "
               "with dump --chrome and report)\n",
               opprof_fn_whole, opprof_fn_no_html, uftrace_fn_whole, uftrace_fn_deliverable);
        bench_ratio_text(heaptrack_over, r1, sizeof r1);
        printf("while recording, added per malloc+free pair: opprof record %.1f ns, heaptrack %.1f ns (%s)\n",
               opprof_pair, heaptrack_pair, r1);
        printf("  opprof's CPU time in the loop, per pair: %.1f ns on the program's thread, %.1f ns in its process\n",
               opprof_pair_thread, opprof_pair_process);
        printf("  floor of two timestamps: %.1f ns, at best %.1fx heaptrack; %.1f ns with the store of 40 bytes to "
               "fresh memory\n",
               pair_floor, heaptrack_pair / pair_floor, pair_floor + pair_store);
        printf("  the least recorder, preloaded (bench_floor_preload.c): %.1f ns; opprof %+.1f ns over it (rounds' "
               "median; quartiles %+.1f, %+.1f)\n",
               pair_minimal.median, pair_over.median, pair_over.q1, pair_over.q3);
        printf(
            "  the whole run, exit work included: opprof %.1f ns (%.1f ns with --no-html), heaptrack %.1f ns (%.1f ns "
            "with heaptrack_print)\n",
            opprof_pair_whole, opprof_pair_no_html, heaptrack_pair_whole, heaptrack_pair_deliverable);
    }
    return 0;
}
