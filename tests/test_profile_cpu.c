/* test_profile_cpu.c - the seed's capture end to end, read as a user would:
 * run build/bin/profile_cpu, parse the trace and summary as JSON (yajl, an
 * independent parser), read the tables, and check what the seed says. */
#include "check.h"
#include "testutil.h"

#include <math.h>
#include <opprof/capture.h>
#include <yajl/yajl_tree.h>

typedef struct xevent {
    const char *name;
    const char *cat;
    long long tid;
    double ts, dur;
} xevent;

typedef struct mevent {
    long long tid;
    double ts;
    long long bytes, total;
} mevent;

static xevent xs[4096];
static int nx;
static mevent ms[4096];
static int nm;
static struct {
    double ts;
    long long value;
} cs[4096]; /* the "Allocated bytes" counter track */
static int nc;

static yajl_val field(yajl_val obj, const char *key) {
    const char *path[] = {key, NULL};
    return yajl_tree_get(obj, path, yajl_t_any);
}

static double number(yajl_val v) { return v && YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : NAN; }

static int count_named(const char *name) {
    int n = 0;
    for (int i = 0; i < nx; i++) n += strcmp(xs[i].name, name) == 0;
    return n;
}

/* Times in whole nanoseconds, as the trace writes them (sums of doubles
 * differ by an ulp where two events end together, on a coarse clock). */
static long long ns_of(double us) { return llround(us * 1e3); }

/* The innermost complete event on the same thread that contains e. */
static const xevent *parent_of(const xevent *e) {
    const xevent *best = NULL;
    long long es = ns_of(e->ts), ee = es + ns_of(e->dur);
    for (int i = 0; i < nx; i++) {
        const xevent *p = &xs[i];
        if (p == e || p->tid != e->tid) continue;
        long long ps = ns_of(p->ts), pe = ps + ns_of(p->dur);
        if (ps <= es && ee <= pe && (p->dur > e->dur || p < e))
            if (!best || p->dur < best->dur || (p->dur == best->dur && p > best)) best = p;
    }
    return best;
}

/* The innermost event containing a memory event's time on its thread, by
 * opprof's rule: the innermost event with start <= ts < end (ts == start
 * for an event of no duration). */
static bool contains(const xevent *p, const mevent *m) {
    long long ps = ns_of(p->ts), pe = ps + ns_of(p->dur), t = ns_of(m->ts);
    return p->tid == m->tid && ps <= t && (t < pe || (ps == pe && t == ps));
}

static const xevent *owner_of(const mevent *m) {
    const xevent *best = NULL;
    for (int i = 0; i < nx; i++) {
        const xevent *p = &xs[i];
        if (!contains(p, m)) continue;
        if (!best || p->dur < best->dur) best = p;
    }
    return best;
}

static bool inside_named(const mevent *m, const char *name) {
    for (int i = 0; i < nx; i++)
        if (strcmp(xs[i].name, name) == 0 && contains(&xs[i], m)) return true;
    return false;
}

static void check_trace(const char *path) {
    char *text = read_text(path);
    CHECK(text != NULL);
    if (!text) return;
    char err[256];
    yajl_val root = yajl_tree_parse(text, err, sizeof err);
    CHECK(root != NULL);
    if (!root) {
        fprintf(stderr, "trace is not JSON: %s\n", err);
        free(text);
        return;
    }
    CHECK(YAJL_IS_OBJECT(root));
    CHECK_INT(number(field(root, "schemaVersion")), 1);
    CHECK_INT(number(field(root, "profile_memory")), 1);
    CHECK(YAJL_IS_STRING(field(root, "traceName")));
    CHECK(YAJL_IS_INTEGER(field(root, "baseTimeNanoseconds")));
    yajl_val events = field(root, "traceEvents");
    CHECK(events && YAJL_IS_ARRAY(events));
    int threads_named = 0;
    for (size_t i = 0; events && i < YAJL_GET_ARRAY(events)->len; i++) {
        yajl_val e = YAJL_GET_ARRAY(events)->values[i];
        const char *ph = YAJL_GET_STRING(field(e, "ph"));
        const char *name = YAJL_GET_STRING(field(e, "name"));
        CHECK(ph && name);
        if (!ph || !name) continue;
        if (strcmp(ph, "X") == 0 && nx < 4096) {
            xs[nx++] = (xevent){name, YAJL_GET_STRING(field(e, "cat")), (long long)number(field(e, "tid")),
                                number(field(e, "ts")), number(field(e, "dur"))};
        } else if (strcmp(ph, "i") == 0 && strcmp(name, "[memory]") == 0 && nm < 4096) {
            yajl_val args = field(e, "args");
            ms[nm++] =
                (mevent){(long long)number(field(e, "tid")), number(field(e, "ts")),
                         (long long)number(field(args, "Bytes")), (long long)number(field(args, "Total Allocated"))};
        } else if (strcmp(ph, "C") == 0 && nc < 4096) {
            cs[nc].ts = number(field(e, "ts"));
            cs[nc++].value = (long long)number(field(field(e, "args"), "Total Allocated"));
        } else if (strcmp(ph, "M") == 0) {
            threads_named += strcmp(name, "thread_name") == 0;
        } else {
            CHECK(!"unexpected phase");
        }
    }
    CHECK(threads_named >= 1);

    /* Exactly the seed's window. */
    CHECK_INT(count_named("batch_0"), 0);
    CHECK_INT(count_named("batch_1"), 0);
    CHECK_INT(count_named("batch_2"), 1);
    CHECK_INT(count_named("batch_3"), 1);
    CHECK_INT(count_named("batch_4"), 0);
    CHECK_INT(count_named("forward"), 2);
    CHECK_INT(count_named("ProfilerStep#2"), 1);
    CHECK_INT(count_named("ProfilerStep#3"), 1);
    CHECK_INT(count_named("ProfilerStep#1"), 0);
    CHECK_INT(count_named("ProfilerStep#4"), 0);
    CHECK_INT(count_named("aten::linear"), 4);
    CHECK_INT(count_named("aten::addmm"), 4);
    CHECK_INT(count_named("aten::relu"), 2);
    CHECK_INT(count_named("aten::clamp_min"), 2);
    CHECK_INT(count_named("aten::t"), 4);

    /* Categories. */
    for (int i = 0; i < nx; i++) {
        bool op = strncmp(xs[i].name, "aten::", 6) == 0;
        CHECK_STR(xs[i].cat, op ? "cpu_op" : "user_annotation");
        CHECK(xs[i].dur >= 0);
    }

    /* Every addmm inside a linear inside a forward inside a batch_N. */
    for (int i = 0; i < nx; i++) {
        if (strcmp(xs[i].name, "aten::addmm") != 0) continue;
        const xevent *lin = parent_of(&xs[i]);
        CHECK(lin && strcmp(lin->name, "aten::linear") == 0);
        const xevent *fwd = lin ? parent_of(lin) : NULL;
        CHECK(fwd && strcmp(fwd->name, "forward") == 0);
        const xevent *batch = fwd ? parent_of(fwd) : NULL;
        CHECK(batch && strncmp(batch->name, "batch_", 6) == 0);
        const xevent *step = batch ? parent_of(batch) : NULL;
        CHECK(step && strncmp(step->name, "ProfilerStep#", 13) == 0);
    }
    for (int i = 0; i < nx; i++)
        if (strcmp(xs[i].name, "aten::clamp_min") == 0) {
            const xevent *p = parent_of(&xs[i]);
            CHECK(p && strcmp(p->name, "aten::relu") == 0);
        }

    /* Complete events nest properly on each thread: any two either are
     * disjoint or one contains the other. */
    int overlaps = 0;
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < nx; j++) {
            const xevent *a = &xs[i], *b = &xs[j];
            if (i == j || a->tid != b->tid) continue;
            /* in whole nanoseconds, as written: sums of doubles would differ by
             * an ulp where a child ends with its parent (a coarse clock) */
            long long as = llround(a->ts * 1e3), ae = as + llround(a->dur * 1e3);
            long long bs = llround(b->ts * 1e3), be = bs + llround(b->dur * 1e3);
            if (as < bs && bs < ae && ae < be) overlaps++;
        }
    CHECK_INT(overlaps, 0);

    /* Memory: addmm 2 x 128 x (512 + 64) x 4, clamp_min 2 x 128 x 512 x 4,
     * each batch nets 0; the [memory] events carry it. */
    long long addmm = 0, clamp = 0, batch2 = 0, batch3 = 0;
    for (int k = 0; k < nm; k++) {
        const xevent *o = owner_of(&ms[k]);
        if (o && strcmp(o->name, "aten::addmm") == 0) addmm += ms[k].bytes;
        if (o && strcmp(o->name, "aten::clamp_min") == 0) clamp += ms[k].bytes;
        if (inside_named(&ms[k], "batch_2")) batch2 += ms[k].bytes;
        if (inside_named(&ms[k], "batch_3")) batch3 += ms[k].bytes;
    }
    CHECK_INT(addmm, 589824);
    CHECK_INT(clamp, 524288);
    CHECK_INT(batch2, 0);
    CHECK_INT(batch3, 0);
    CHECK_INT(nm, 2 * 3 * 2); /* per pass: 3 tensors allocated, 3 freed */
    /* The counter track: one sample per memory event, back to its level
     * before each batch at the batch's end. */
    CHECK_INT(nc, nm);
    for (int i = 0; i < nx; i++) {
        if (strncmp(xs[i].name, "batch_", 6) != 0) continue;
        long long before = -1, at_end = -1;
        int inside = 0;
        for (int k = 0; k < nc; k++) {
            if (cs[k].ts < xs[i].ts) before = cs[k].value;
            if (cs[k].ts >= xs[i].ts && cs[k].ts <= xs[i].ts + xs[i].dur) {
                at_end = cs[k].value;
                inside++;
            }
        }
        CHECK_INT(inside, 6);
        if (before < 0 && inside) before = cs[0].value - ms[0].bytes; /* the level before the first sample */
        CHECK_INT(at_end, before);
    }
    yajl_tree_free(root);
    free(text);
}

/* The table's lines, split; returns the count. */
static int split_lines(char *text, char **lines, int max) {
    int n = 0;
    for (char *p = text; p && *p && n < max;) {
        lines[n++] = p;
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = '\0';
        p = nl + 1;
    }
    return n;
}

/* Drop the Name cell (first column) from a table line. */
static const char *after_name(const char *line) {
    const char *p = line;
    while (*p == ' ' || *p == '-') p++;
    while (*p && *p != ' ') p++; /* the name itself, when the line has one */
    return p;
}

typedef struct row {
    char name[64];
    char cells[8][16];
} row;

static int parse_rows(char **lines, int n, row *rows) {
    int count = 0;
    for (int i = 3; i < n && lines[i][0] != '-'; i++) {
        row *r = &rows[count++];
        char tmp[8][16];
        if (sscanf(lines[i], "%63s %15s %15s %15s %15s %15s", r->name, tmp[0], tmp[1], tmp[2], tmp[3], tmp[4]) != 6)
            return -1;
        for (int k = 0; k < 5; k++) strcpy(r->cells[k], tmp[k]);
        /* memory cells have a space inside ("576.00 KB"): read the tail as pairs */
        const char *p = lines[i] + strlen(lines[i]);
        char calls[16];
        while (p > lines[i] && p[-1] == ' ') p--;
        const char *q = p;
        while (q > lines[i] && q[-1] != ' ') q--;
        snprintf(calls, sizeof calls, "%.*s", (int)(p - q), q);
        strcpy(r->cells[7], calls);
    }
    return count;
}

/* "12.345us", "1.234ms", "2.000s" as microseconds; -1 if not a time. */
static double cell_us(const char *cell) {
    char *end;
    double v = strtod(cell, &end);
    if (end == cell) return -1;
    if (strcmp(end, "us") == 0) return v;
    if (strcmp(end, "ms") == 0) return v * 1e3;
    if (strcmp(end, "s") == 0) return v * 1e6;
    return -1;
}

static void check_tables(const char *dir) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fixtures/pytorch-1.13/cpu-step-4.time.txt", source_dir());
    char *ref = read_text(path);
    CHECK(ref != NULL);
    snprintf(path, sizeof path, "%s/cpu-step-4.time.txt", dir);
    char *mine = read_text(path);
    snprintf(path, sizeof path, "%s/cpu-step-4.memory.txt", dir);
    char *mem = read_text(path);
    CHECK(mine && mem);
    if (!ref || !mine || !mem) return;
    CHECK(mine[strlen(mine) - 1] == '\n');
    char *rl[64], *ml[64], *ql[64];
    int nr = split_lines(ref, rl, 64), nmine = split_lines(mine, ml, 64), nq = split_lines(mem, ql, 64);
    /* opprof's notes under PyTorch's layout (the profiler's own cost, when it
     * is most of a row's self time: the machine's business) */
    while (nmine > 0 && strncmp(ml[nmine - 1], "Note: ", 6) == 0) nmine--;
    while (nq > 0 && strncmp(ql[nq - 1], "Note: ", 6) == 0) nq--;
    CHECK(nr >= 5 && nmine >= 5 && nq >= 5);
    /* Header: identical after the Name cell; separators of the same form. */
    CHECK_STR(after_name(ml[1]), after_name(rl[1]));
    CHECK_STR(after_name(ml[0]), after_name(rl[0]));
    CHECK_STR(ml[0], ml[2]);
    CHECK_STR(ml[0], ml[nmine - 2]);
    CHECK_STR(after_name(ql[1]), after_name(rl[1]));
    CHECK(strncmp(ml[nmine - 1], "Self CPU time total: ", 21) == 0);
    CHECK_STR(ml[nmine - 1], ql[nq - 1]);
    /* Twelve rows at most; the seed's capture has 11 keys. */
    CHECK_INT(nmine - 5, 11);

    /* Sorted by self CPU time, descending (which operator is slowest is the
     * machine's business, not the test's). */
    row rows[16];
    int n = parse_rows(ml, nmine, rows);
    CHECK_INT(n, 11);
    for (int i = 1; i < n; i++) {
        double prev = cell_us(rows[i - 1].cells[1]), cur = cell_us(rows[i].cells[1]);
        CHECK(cur >= 0 && prev >= cur);
    }

    /* summary.json agrees with the table. */
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *sum = read_text(path);
    char err[256];
    yajl_val root = sum ? yajl_tree_parse(sum, err, sizeof err) : NULL;
    CHECK(root != NULL);
    if (root) {
        CHECK_STR(YAJL_GET_STRING(field(root, "device")), "cpu");
        CHECK_INT(number(field(root, "threads")), 1);
        CHECK_STR(YAJL_GET_STRING(field(root, "opprof")), opprof_version());
        /* the kernel of each layer: one of nn's own under auto */
        const char *gemm = YAJL_GET_STRING(field(root, "gemm"));
        CHECK(gemm && strstr(gemm, " 128x256x512") && strstr(gemm, "; ") && strstr(gemm, " 128x512x64"));
        CHECK(gemm && (!strncmp(gemm, "avx512 ", 7) || !strncmp(gemm, "avx2 ", 5) || !strncmp(gemm, "scalar ", 7)));
        yajl_val caps = field(root, "captures");
        CHECK(caps && YAJL_IS_ARRAY(caps) && YAJL_GET_ARRAY(caps)->len == 1);
        yajl_val cap = YAJL_GET_ARRAY(caps)->values[0];
        CHECK_INT(number(field(cap, "step")), 4);
        yajl_val ops = field(cap, "operators");
        int matched = 0;
        for (size_t i = 0; ops && i < YAJL_GET_ARRAY(ops)->len; i++) {
            yajl_val op = YAJL_GET_ARRAY(ops)->values[i];
            const char *name = YAJL_GET_STRING(field(op, "name"));
            for (int k = 0; k < n; k++) {
                if (strcmp(rows[k].name, name) != 0) continue;
                matched++;
                char buf[32];
                opprof_format_time_us(number(field(op, "self_cpu_us")), buf, sizeof buf);
                CHECK_STR(buf, rows[k].cells[1]);
                opprof_format_time_us(number(field(op, "total_cpu_us")), buf, sizeof buf);
                CHECK_STR(buf, rows[k].cells[3]);
                snprintf(buf, sizeof buf, "%lld", (long long)number(field(op, "calls")));
                CHECK_STR(buf, rows[k].cells[7]);
                if (strcmp(name, "aten::addmm") == 0) CHECK_INT(number(field(op, "self_cpu_bytes")), 589824);
                if (strcmp(name, "aten::clamp_min") == 0) CHECK_INT(number(field(op, "self_cpu_bytes")), 524288);
                if (strncmp(name, "batch_", 6) == 0) CHECK_INT(number(field(op, "cpu_bytes")), 0);
            }
        }
        CHECK_INT(matched, n);
        yajl_tree_free(root);
    }
    free(sum);
    free(ref);
    free(mine);
    free(mem);
}

/* A listing of a directory with sizes and mtimes, to see that nothing changed. */
static char *listing(const char *dir) {
    char cmd[600], *out = NULL;
    snprintf(cmd, sizeof cmd, "cd '%s' && ls -la --time-style=full-iso . && md5sum *", dir);
    run_command(cmd, &out);
    return out;
}

/* The guide's capture: its trace and tables as PyTorch writes them, exactly
 * the four files; a second run on the same OUTDIR leaves it as it was. */
TEST_CASE(the_guides_capture) {
    char tmp[256], outdir[512], cmd[2048];
    CHECK(make_temp_dir(tmp, sizeof tmp) != NULL);
    snprintf(outdir, sizeof outdir, "%s/run1", tmp);

    char *out = NULL;
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' '%s'", bin_dir(), outdir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "Self CPU time total:");
    CHECK_CONTAINS(out, "capture written to");
    free(out);

    char path[600];
    snprintf(path, sizeof path, "%s/cpu-step-4.json", outdir);
    check_trace(path);
    check_tables(outdir);

    /* Exactly the four files, no temporary left beside them. */
    snprintf(cmd, sizeof cmd, "ls -A '%s' && ls -A '%s'", outdir, tmp);
    run_command(cmd, &out);
    CHECK_STR(out, "cpu-step-4.json\ncpu-step-4.memory.txt\ncpu-step-4.time.txt\nsummary.json\nrun1\n");
    free(out);

    /* A second run on the same OUTDIR fails and leaves it as it was. */
    char *before = listing(outdir);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' '%s'", bin_dir(), outdir);
    CHECK_INT(run_command(cmd, &out), 1);
    CHECK_CONTAINS(out, outdir);
    CHECK_CONTAINS(out, "already exists");
    free(out);
    char *after = listing(outdir);
    CHECK_STR(after, before);
    free(before);
    free(after);
    remove_tree(tmp);
}

/* A parent that cannot hold a directory: the error names the path and the reason. */
TEST_CASE(a_parent_that_cannot_hold_the_directory) {
    char tmp[256], cmd[2048], path[600], *out = NULL;
    CHECK(make_temp_dir(tmp, sizeof tmp) != NULL);
    snprintf(path, sizeof path, "%s/plainfile", tmp);
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' '%s/sub'", bin_dir(), path);
    CHECK_INT(run_command(cmd, &out), 1);
    CHECK_CONTAINS(out, "plainfile/sub");
    CHECK_CONTAINS(out, "Not a directory");
    free(out);
    if (geteuid() != 0) { /* root ignores permissions */
        snprintf(path, sizeof path, "%s/locked", tmp);
        mkdir(path, 0555);
        snprintf(cmd, sizeof cmd, "'%s/profile_cpu' '%s/sub'", bin_dir(), path);
        CHECK_INT(run_command(cmd, &out), 1);
        CHECK_CONTAINS(out, "locked/sub");
        CHECK_CONTAINS(out, "Permission denied");
        free(out);
    }
    remove_tree(tmp);
}

/* Bad usage: exit 64 (as opprof) with a message and where the help is. */
TEST_CASE(bad_usage) {
    char tmp[256], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(tmp, sizeof tmp) != NULL);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu'", bin_dir());
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK_CONTAINS(out, "missing OUTDIR");
    CHECK_CONTAINS(out, "Run 'profile_cpu --help' for the options.");
    CHECK(strstr(out, "usage:") == NULL); /* the error is not buried under the help */
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --active 0 '%s/x'", bin_dir(), tmp);
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK_CONTAINS(out, "active must be at least 1");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --threads zero '%s/x'", bin_dir(), tmp);
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK_CONTAINS(out, "--threads takes an integer");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --bogus '%s/x'", bin_dir(), tmp);
    CHECK_INT(run_command(cmd, &out), 64);
    CHECK_CONTAINS(out, "unrecognized option '--bogus'");
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --version", bin_dir());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "profile_cpu (opprof) " OPPROF_VERSION_STRING);
    free(out);
    snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --help", bin_dir());
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "usage: profile_cpu");
    free(out);
    remove_tree(tmp);
}

/* Options: a schedule of repeat 2 gives two captures, named by their step. */
TEST_CASE(a_schedule_of_two_captures) {
    char tmp[256], outdir[512], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(tmp, sizeof tmp) != NULL);
    snprintf(outdir, sizeof outdir, "%s/run2", tmp);
    snprintf(cmd, sizeof cmd,
             "'%s/profile_cpu' --quiet --batch 4 --in 8 --hidden 16 --out 2 --steps 8 --wait 0 --warmup 1 "
             "--active 1 --repeat 2 --stem cap '%s' && ls '%s'",
             bin_dir(), outdir, outdir);
    CHECK_INT(run_command(cmd, &out), 0);
    CHECK_CONTAINS(out, "cap-2.json\ncap-2.memory.txt\ncap-2.time.txt\ncap-4.json");
    free(out);

    remove_tree(tmp);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_profile_cpu"); }
