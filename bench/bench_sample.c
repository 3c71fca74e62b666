/*
 * bench_sample - opprof's sampler against perf, in the same run, on
 * sample_target (three -O2 leaf functions of CPU time 4 : 2 : 1):
 *
 *   shares:  each function's share of the samples, `opprof record --sample`
 *            (1 kHz) against `perf record -e cpu-clock -F 1000 --call-graph
 *            dwarf` + `perf report`, with and without frame pointers
 *            (sample_target_fp, sample_target): the largest difference in
 *            percentage points, per pair of runs;
 *   cost:    the CPU time (user + system, the children's) of the target
 *            alone, under opprof record --sample (the trace only) and under
 *            perf record, interleaved: the CPU each adds, as a share;
 *   memory:  the bytes a sample costs in a capture (its record and its
 *            share of the interned stacks) and in the sampler's store;
 *   range:   a range's cost (OPPROF_SCOPE) with sampling at 1 kHz and
 *            without, interleaved rounds: their ratio.
 *
 *   build/bin/bench_sample [--json] [--scale N] [--rounds N]
 * (perf from Debian's linux-perf; without it the peer's figures are null)
 */
#include "bench_util.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const FUNCTIONS[] = {"weight_four", "weight_two", "weight_one"};
enum { N_FUNCTIONS = 3, MAX_ROUNDS = 15 };

static double children_cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* The CPU seconds a shell command took (its children's). */
static double run_cpu(const char *cmd) {
    double before = children_cpu_s();
    int rc = system(cmd);
    if (rc != 0) fprintf(stderr, "bench_sample: '%s' exited %d\n", cmd, rc);
    return children_cpu_s() - before;
}

/* Shares (%) of the three functions in a text where each line is
 * "... NAME ... PERCENT%" (perf report) or a functions table (opprof). */
static void shares_in(const char *path, bool perf, double *out) {
    for (int k = 0; k < N_FUNCTIONS; k++) out[k] = NAN;
    FILE *f = fopen(path, "r");
    char line[1024];
    bool table = perf; /* opprof's: the native functions' table, under the key averages */
    while (f && fgets(line, sizeof line, f)) {
        if (strstr(line, "Function  Self samples")) table = true;
        if (!table) continue;
        line[strcspn(line, "\n")] = '\0';
        for (char *end = line + strlen(line); end > line && end[-1] == ' ';) *--end = '\0'; /* perf pads */
        for (int k = 0; k < N_FUNCTIONS; k++) {
            char *at = strstr(line, FUNCTIONS[k]);
            char after = at ? at[strlen(FUNCTIONS[k])] : 0;
            if (!at || (after != ' ' && !(perf && after == '\0')) || !isnan(out[k])) continue;
            if (perf && !(line[strspn(line, " ")] >= '0' && line[strspn(line, " ")] <= '9')) continue;
            if (perf) {
                out[k] = strtod(line, NULL);
            } else { /* name, self samples, self % */
                char *p = at + strlen(FUNCTIONS[k]);
                strtol(p, &p, 10);
                out[k] = strtod(p, NULL);
            }
        }
    }
    if (f) fclose(f);
}

static double max_diff(const double *a, const double *b) {
    double worst = 0;
    for (int k = 0; k < N_FUNCTIONS; k++)
        if (fabs(a[k] - b[k]) > worst || isnan(a[k] - b[k])) worst = isnan(a[k] - b[k]) ? NAN : fabs(a[k] - b[k]);
    return worst;
}

typedef struct pair {
    double diff_fp, diff_nofp, diff_dwarf, opprof_cpu, perf_cpu, plain_cpu, dwarf_cpu, perf_nofp_cpu, plain_nofp_cpu;
    double main_fp, main_dwarf, main_perf; /* the share of samples with main on their stack, without frame pointers */
    double opprof_share[N_FUNCTIONS], perf_share[N_FUNCTIONS];
    long samples;
} pair;

/* opprof's functions table: main's Total % (the 6th column). */
static double main_total(const char *path) {
    FILE *f = fopen(path, "r");
    char line[1024];
    double pct = 0;
    bool table = false;
    while (f && fgets(line, sizeof line, f)) {
        if (strstr(line, "Function  Self samples")) table = true;
        char name[256], self_pct[32], est[32], total_pct[32];
        long self, total;
        if (table && sscanf(line, "%255s %ld %31s %31s %ld %31s", name, &self, self_pct, est, &total, total_pct) == 6 &&
            !strcmp(name, "main"))
            pct = strtod(total_pct, NULL);
    }
    if (f) fclose(f);
    return pct;
}

/* perf report --children: main's Children %. */
static double perf_main_total(const char *path) {
    FILE *f = fopen(path, "r");
    char line[1024];
    double pct = 0;
    while (f && fgets(line, sizeof line, f)) {
        char *at = strstr(line, "] main");
        if (at && (at[6] == ' ' || at[6] == '\n') && pct == 0) pct = strtod(line, NULL);
    }
    if (f) fclose(f);
    return pct;
}

static bool have_perf(void) { return system("perf --version > /dev/null 2>&1") == 0; }

static void one_pair(const char *bin, const char *tmp, int scale, bool perf, pair *p) {
    char cmd[16384], out[4200];
    const char *targets[2] = {"sample_target_fp", "sample_target"};
    for (int t = 0; t < 2; t++) {
        snprintf(cmd, sizeof cmd, "%s/../tests/%s %d", bin, targets[t], scale);
        double plain = run_cpu(cmd);
        snprintf(
            cmd, sizeof cmd,
            "rm -rf %s/o && %s/opprof record --sample=1000 --outputs trace,tables -o %s/o -- %s/../tests/%s %d " /* tables: stderr */
            "2> %s/o.txt > /dev/null",
            tmp, bin, tmp, bin, targets[t], scale, tmp);
        double o = run_cpu(cmd);
        snprintf(out, sizeof out, "%s/o.txt", tmp);
        double os[N_FUNCTIONS], ps[N_FUNCTIONS] = {NAN, NAN, NAN};
        shares_in(out, false, os);
        if (isnan(os[0]) && isnan(os[1]) && isnan(os[2])) { /* a figure from nothing is no figure */
            fprintf(stderr,
                    "bench_sample: %s names none of the target's functions (opprof record's tables, "
                    "which it writes on stderr)\n",
                    out);
            exit(1);
        }
        double pc = NAN;
        if (perf) {
            snprintf(cmd, sizeof cmd,
                     "perf record -q -e cpu-clock -F 1000 --call-graph dwarf -o %s/p.data -- %s/../tests/%s %d "
                     ">/dev/null 2>&1",
                     tmp, bin, targets[t], scale);
            pc = run_cpu(cmd);
            snprintf(cmd, sizeof cmd,
                     "perf report -i %s/p.data --no-children --sort symbol --stdio -q -g none 2>/dev/null | "
                     "sed 's/\\[\\.\\] //' > %s/p.txt",
                     tmp, tmp);
            if (system(cmd) != 0) fprintf(stderr, "bench_sample: perf report failed\n");
            snprintf(out, sizeof out, "%s/p.txt", tmp);
            shares_in(out, true, ps);
        }
        double d = max_diff(os, ps);
        if (t == 1) { /* without frame pointers: the DWARF mode's callers, and perf's */
            snprintf(out, sizeof out, "%s/o.txt", tmp);
            p->main_fp = main_total(out);
            snprintf(cmd, sizeof cmd,
                     "rm -rf %s/d && %s/opprof record --sample=1000,dwarf --outputs trace,tables -o %s/d -- "
                     "%s/../tests/%s %d 2> %s/d.txt > /dev/null",
                     tmp, bin, tmp, bin, targets[t], scale, tmp);
            p->dwarf_cpu = run_cpu(cmd);
            snprintf(out, sizeof out, "%s/d.txt", tmp);
            double ds[N_FUNCTIONS];
            shares_in(out, false, ds);
            p->diff_dwarf = max_diff(ds, ps);
            p->main_dwarf = main_total(out);
            p->perf_nofp_cpu = pc;
            p->plain_nofp_cpu = plain;
            if (perf) {
                snprintf(cmd, sizeof cmd,
                         "perf report -i %s/p.data --children --sort symbol --stdio -q -g none 2>/dev/null "
                         "> %s/pc.txt",
                         tmp, tmp);
                if (system(cmd) != 0) fprintf(stderr, "bench_sample: perf report --children failed\n");
                snprintf(out, sizeof out, "%s/pc.txt", tmp);
                p->main_perf = perf_main_total(out);
            }
        }
        if (t == 0) {
            p->diff_fp = d;
            p->opprof_cpu = o;
            p->perf_cpu = pc;
            p->plain_cpu = plain;
            memcpy(p->opprof_share, os, sizeof os);
            memcpy(p->perf_share, ps, sizeof ps);
        } else {
            p->diff_nofp = d;
        }
    }
}

/* ---- in-process: memory a sample, a range's cost ---- */

static double range_ns(int hz, long *samples, double *bytes_per_sample) {
    opprof_config cfg = opprof_config_default();
    cfg.sample_hz = hz;
    opprof_session *s;
    if (opprof_session_start(&s, &cfg)) return NAN;
    enum { STEPS = 100, RANGES = 100000 }; /* windows that fit the chunks a thread keeps */
    int64_t spent = 0;
    for (int step = 0; step < STEPS; step++) {
        int64_t t0 = bench_now_ns();
        for (int i = 0; i < RANGES; i++) {
            OPPROF_SCOPE("r");
        }
        spent += bench_now_ns() - t0;
        opprof_session_step(s);
    }
    double ns = (double)spent / ((double)STEPS * RANGES);
    opprof_session_stop(s);
    long n_total = 0;
    double bytes = 0;
    for (opprof_capture *c; opprof_session_take_capture(s, &c) == 0 && c;) {
        size_t n;
        opprof_capture_samples(c, &n);
        size_t frames = 0;
        for (size_t k = 0; k < opprof_capture_stack_count(c); k++) {
            size_t f;
            opprof_capture_stack(c, (uint32_t)k, &f);
            frames += f;
        }
        n_total += (long)n;
        bytes += (double)(n * sizeof(opprof_sample) + frames * 4 + opprof_capture_stack_count(c) * 8);
        opprof_capture_free(c);
    }
    opprof_session_free(s);
    if (samples) *samples = n_total;
    if (bytes_per_sample) *bytes_per_sample = n_total ? bytes / (double)n_total : NAN;
    return ns;
}

static double median_of(double *v, int n) { return bench_stats_of(v, n).median; }

int main(int argc, char **argv) {
    bool json = false;
    int scale = 20, rounds = 3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--scale") && i + 1 < argc)
            scale = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_sample [--json] [--scale N] [--rounds N]\n");
            return 64;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || scale < 1) return 64;
    char tmp[] = "/tmp/opprof-bench-sample-XXXXXX";
    if (!mkdtemp(tmp)) return 1;
    bool perf = have_perf();
    pair pairs[MAX_ROUNDS];
    double dfp[MAX_ROUNDS], dno[MAX_ROUNDS], ddw[MAX_ROUNDS], add_o[MAX_ROUNDS], add_p[MAX_ROUNDS], add_d[MAX_ROUNDS],
        add_pn[MAX_ROUNDS], mfp[MAX_ROUNDS], mdw[MAX_ROUNDS], mpf[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        one_pair(bench_self_dir(), tmp, scale, perf, &pairs[r]);
        dfp[r] = pairs[r].diff_fp;
        dno[r] = pairs[r].diff_nofp;
        add_o[r] = 100 * (pairs[r].opprof_cpu / pairs[r].plain_cpu - 1);
        add_p[r] = 100 * (pairs[r].perf_cpu / pairs[r].plain_cpu - 1);
        ddw[r] = pairs[r].diff_dwarf;
        add_d[r] = 100 * (pairs[r].dwarf_cpu / pairs[r].plain_nofp_cpu - 1);
        add_pn[r] = 100 * (pairs[r].perf_nofp_cpu / pairs[r].plain_nofp_cpu - 1);
        mfp[r] = pairs[r].main_fp;
        mdw[r] = pairs[r].main_dwarf;
        mpf[r] = pairs[r].main_perf;
    }
    double off[MAX_ROUNDS], on[MAX_ROUNDS], bytes = NAN;
    long samples = 0;
    for (int r = 0; r < 7; r++) {
        off[r] = range_ns(0, NULL, NULL);
        on[r] = range_ns(1000, &samples, &bytes);
    }
    bench_ratio ratio = bench_ratio_of(on, off, 7);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    if (system(cmd) != 0) fprintf(stderr, "bench_sample: cannot remove %s\n", tmp);
    char host[256], rtext[96];
    const char *isa;
    bench_host(host, sizeof host, &isa);
    bench_ratio_text(ratio, rtext, sizeof rtext);
    pair *last = &pairs[rounds - 1];
    if (json) {
        printf("{\n  \"host\": \"%s\",\n  \"isa\": \"%s\",\n", host, isa);
        bench_json_number(stdout, "rounds", rounds, false);
        bench_json_number(stdout, "share_max_diff_pp_frame_pointers_median", median_of(dfp, rounds), false);
        bench_json_number(stdout, "share_max_diff_pp_no_frame_pointers_median", median_of(dno, rounds), false);
        for (int k = 0; k < N_FUNCTIONS; k++) {
            char key[96];
            snprintf(key, sizeof key, "share_pct_opprof_%s", FUNCTIONS[k]);
            bench_json_number(stdout, key, last->opprof_share[k], false);
            snprintf(key, sizeof key, "share_pct_perf_%s", FUNCTIONS[k]);
            bench_json_number(stdout, key, last->perf_share[k], false);
        }
        bench_json_number(stdout, "plain_cpu_s_median", median_of((double[]){last->plain_cpu}, 1), false);
        bench_json_number(stdout, "added_cpu_pct_opprof_median", median_of(add_o, rounds), false);
        bench_json_number(stdout, "added_cpu_pct_perf_median", median_of(add_p, rounds), false);
        bench_json_number(stdout, "share_max_diff_pp_dwarf_mode_no_frame_pointers_median", median_of(ddw, rounds),
                          false);
        bench_json_number(stdout, "main_on_stack_pct_fp_mode_no_frame_pointers", median_of(mfp, rounds), false);
        bench_json_number(stdout, "main_on_stack_pct_dwarf_mode_no_frame_pointers", median_of(mdw, rounds), false);
        bench_json_number(stdout, "main_on_stack_pct_perf_dwarf", median_of(mpf, rounds), false);
        bench_json_number(stdout, "added_cpu_pct_opprof_dwarf_median", median_of(add_d, rounds), false);
        bench_json_number(stdout, "added_cpu_pct_perf_dwarf_no_frame_pointers_median", median_of(add_pn, rounds),
                          false);
        bench_json_number(stdout, "capture_bytes_per_sample", bytes, false);
        bench_json_number(stdout, "samples_in_range_runs", (double)samples, false);
        bench_json_number(stdout, "range_ns_sampling_off", median_of(off, 7), false);
        bench_json_number(stdout, "range_ns_sampling_1khz", median_of(on, 7), false);
        bench_json_ratio(stdout, "range_on_over_off", ratio, true);
        puts("}");
    } else {
        printf("host: %s (%s); perf %s\n", host, isa, perf ? "found" : "not found (apt-get install linux-perf)");
        for (int r = 0; r < rounds; r++)
            printf("round %d: shares opprof %.1f/%.1f/%.1f %%, perf %.1f/%.1f/%.1f %%: max diff %.2f pp with frame "
                   "pointers, %.2f pp without; CPU %.2f s plain, +%.1f %% opprof, +%.1f %% perf\n",
                   r, pairs[r].opprof_share[0], pairs[r].opprof_share[1], pairs[r].opprof_share[2],
                   pairs[r].perf_share[0], pairs[r].perf_share[1], pairs[r].perf_share[2], dfp[r], dno[r],
                   pairs[r].plain_cpu, add_o[r], add_p[r]);
        for (int r = 0; r < rounds; r++)
            printf("round %d, no frame pointers: main on the stack of %.1f %% of the samples (frame pointers), %.1f %% "
                   "(DWARF), %.1f %% (perf); shares %.2f pp from perf's; CPU +%.1f %% opprof DWARF, +%.1f %% perf\n",
                   r, mfp[r], mdw[r], mpf[r], ddw[r], add_d[r], add_pn[r]);
        printf("a sample in a capture: %.1f bytes (%ld samples)\n", bytes, samples);
        printf("range: %.2f ns sampling at 1 kHz, %.2f ns without: %s\n", median_of(on, 7), median_of(off, 7), rtext);
    }
    return 0;
}
