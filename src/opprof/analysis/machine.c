/* machine.c - the machine's ceilings, measured (opprof_machine_measure):
 * the float32 FMA peak of the widest ISA the CPU has, and the load and copy
 * bandwidth of each memory level (L1, L2, the last-level cache, DRAM; sizes
 * from sysfs), for 1..N threads each on a buffer of its own; a profile's JSON
 * and its reading back; each row of key averages against its roof
 * (opprof_roofline_of). The loops are analysis/machine_kernels.c. */
#define _GNU_SOURCE
#include "analysis/analysis.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static const char *const LEVEL_NAMES[OPPROF_MACHINE_LEVELS] = {"L1", "L2", "LLC", "DRAM"};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A cache's size in bytes from sysfs (level 1: the data cache), 0 if unknown. */
static int64_t cache_bytes(int level) {
    int64_t best = 0;
    for (int index = 0; index < 8; index++) {
        char path[128], text[64] = "", type[32] = "";
        int lv = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
        FILE *f = fopen(path, "r");
        if (!f) break;
        if (fscanf(f, "%d", &lv) != 1) lv = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%31s", type) != 1) type[0] = '\0';
            fclose(f);
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
        if ((f = fopen(path, "r"))) {
            if (!fgets(text, sizeof text, f)) text[0] = '\0';
            fclose(f);
        }
        int64_t n = strtoll(text, NULL, 10) * (strchr(text, 'M') ? 1024 * 1024 : strchr(text, 'K') ? 1024 : 1);
        if (!strcmp(type, "Instruction")) continue;
        if (level > 0 ? lv == level : lv >= 3) best = n > best ? n : best;
    }
    return best;
}

/* ---- one measurement on `threads` threads at once ---- */

typedef struct job {
    opprof__machine_isa isa;
    int kind;     /* 0: FMAs, 1: load, 2: copy */
    float *a, *b; /* the thread's buffers */
    size_t n;     /* floats each */
    int64_t reps; /* iterations (FMAs) or passes over the buffer */
    double seconds, sink;
    _Atomic int *go; /* the threads start together */
} job;

static void *run_job(void *arg) {
    job *j = arg;
    while (!*j->go) {}
    double t0 = now_s();
    for (int64_t r = 0; r < (j->kind == 2 ? j->reps : 1); r++) {
        if (j->kind == 0)
            j->sink += opprof__machine_fma(j->isa, j->reps);
        else if (j->kind == 1)
            j->sink += opprof__machine_load(j->isa, j->a, j->n, j->reps);
        else
            opprof__machine_copy(j->isa, j->b, j->a, j->n), j->sink += j->b[(size_t)r % j->n];
    }
    j->seconds = now_s() - t0;
    return NULL;
}

/* The slowest thread's time for the jobs run at once; NAN when a thread
 * could not be started. */
static double run_threads(job *jobs, int threads) {
    pthread_t tid[OPPROF_MACHINE_MAX_THREADS];
    _Atomic int go = 0;
    int started = 1;
    for (int t = 0; t < threads; t++) jobs[t].go = &go;
    /* helper threads (every signal blocked): a capture's start and end measure inside the program */
    while (started < threads && opprof__helper_start(&tid[started], run_job, &jobs[started]) == 0) started++;
    go = 1;
    run_job(&jobs[0]);
    double worst = jobs[0].seconds;
    for (int t = 1; t < started; t++) {
        pthread_join(tid[t], NULL);
        if (jobs[t].seconds > worst) worst = jobs[t].seconds;
    }
    return started == threads ? worst : NAN;
}

/* How long a measurement takes: runs of run_s seconds, the best of `kept`,
 * of the first `levels` levels. The full one (opprof machine): nine of 15 ms;
 * the quick one (a capture's start): three of 3 ms; the end of a long run,
 * inside the program, the same without DRAM (its buffer is not the program's
 * to take: the start's figure stays). */
typedef struct plan {
    double run_s;
    int kept, levels;
} plan;
static const plan FULL = {0.015, 9, OPPROF_MACHINE_LEVELS}, QUICK = {0.003, 3, OPPROF_MACHINE_LEVELS},
                  IN_PROGRAM = {0.003, 3, OPPROF_MACHINE_LEVELS - 1};

/* Units of work per second for the kind: reps grown until a run takes
 * p->run_s, then the best of p->kept: the ceilings are the best seen (a busy
 * host lowers some runs, never raises one). */
static double rate(const plan *p, opprof__machine_isa isa, int kind, float **bufs, size_t n, int threads) {
    job jobs[OPPROF_MACHINE_MAX_THREADS];
    int64_t reps = kind == 0 ? 4096 : 1;
    double best = 0;
    for (int tries = 0, kept = 0; tries < 60 && kept < p->kept; tries++) {
        for (int t = 0; t < threads; t++)
            jobs[t] = (job){.isa = isa,
                            .kind = kind,
                            .a = bufs ? bufs[2 * t] : NULL,
                            .b = bufs ? bufs[2 * t + 1] : NULL,
                            .n = n,
                            .reps = reps};
        double s = run_threads(jobs, threads);
        if (isnan(s)) return NAN;
        if (s < p->run_s) {
            reps *= s > 0 ? (int64_t)(p->run_s * 1.2 / s) + 1 : 16;
            continue;
        }
        kept++;
        double r = (double)reps * threads / s;
        if (r > best) best = r;
    }
    return best;
}

/* A buffer of n floats, written (a page never written reads as the one zero
 * page, from L1). Past 2 MiB on huge pages where the kernel gives them: the
 * DRAM buffer's 4 KiB page faults were most of a quick measurement (0.2 s of
 * 64 MiB on a VM); on 4 KiB pages the DRAM figures were the same, within the
 * host's noise. */
static float *buffer(size_t n) {
    size_t bytes = n * sizeof(float), huge = (size_t)2 << 20;
    void *b = NULL;
    if (posix_memalign(&b, bytes >= huge ? huge : 64, bytes)) return NULL;
    if (bytes >= huge) madvise(b, bytes, MADV_HUGEPAGE); /* advice: without it, 4 KiB pages */
    memset(b, 0x3f, bytes);
    return b;
}

/* The DRAM level's working set, all threads: 16 LLCs, at most 1 GiB (likwid-bench's
 * size) and at least 4 LLCs. At 4 LLCs (128 MiB) a VM's stream ran at 1.4-2.2x
 * likwid-bench's 1 GB one, at 16 at its speed: caches beyond the LLC that sysfs names
 * (the host's) held part of it. Made and written once a measurement, each thread
 * count's threads taking equal shares. */
static size_t dram_floats(int64_t llc) {
    int64_t set = 16 * llc, gib = (int64_t)1 << 30;
    if (set > gib) set = 4 * llc > gib ? 4 * llc : gib;
    return (size_t)set / sizeof(float);
}

/* The buffers of one level for `threads` threads (two each, for a copy) into bufs,
 * of n floats each: the DRAM level's from `dram`, the others made (own = true). */
static size_t level_buffers(int l, int threads, const int64_t *sizes, float *dram, size_t dram_n, float **bufs,
                            bool *own) {
    /* the working set of each thread: half of L1 or L2, a quarter of the LLC shared out
     * (a VM's LLC is other tenants' too: at half of it a copy spilled to DRAM) */
    int64_t set = l == 0 ? sizes[0] / 2 : l == 1 ? sizes[1] / 2 : sizes[2] / 4 / threads;
    size_t n = l == 3 ? dram_n / (size_t)(2 * threads) : (size_t)(set / 2 / (int64_t)sizeof(float));
    n &= ~(size_t)127;
    if (n < 128) n = 128;
    *own = l < 3;
    for (int t = 0; t < 2 * threads; t++) bufs[t] = *own ? buffer(n) : dram + (size_t)t * n;
    for (int t = 0; t < 2 * threads; t++)
        if (!bufs[t]) return 0;
    return n;
}

static int measure_threads(const plan *p, opprof__machine_isa isa, int threads, const int64_t *sizes, float *dram,
                           size_t dram_n, opprof_machine_ceilings *c) {
    c->threads = threads;
    c->fma_peak_gflops = rate(p, isa, 0, NULL, 0, threads) * opprof__machine_fma_flops_per_iter(isa) / 1e9;
    for (int l = 0; l < OPPROF_MACHINE_LEVELS; l++) {
        opprof_machine_level *lv = &c->levels[l];
        snprintf(lv->name, sizeof lv->name, "%s", LEVEL_NAMES[l]);
        lv->bytes = l < 3 ? sizes[l] : 0;
        if (l >= p->levels) continue; /* not measured: 0 GB/s */
        float *bufs[2 * OPPROF_MACHINE_MAX_THREADS] = {0};
        bool own;
        size_t n = level_buffers(l, threads, sizes, dram, dram_n, bufs, &own);
        if (n) {
            lv->load_gbs = rate(p, isa, 1, bufs, n, threads) * (double)n * sizeof(float) / 1e9;
            lv->copy_gbs = rate(p, isa, 2, bufs, n, threads) * 2.0 * (double)n * sizeof(float) / 1e9;
        }
        for (int t = 0; own && t < 2 * threads; t++) free(bufs[t]);
        if (!n) return OPPROF_ENOMEM;
    }
    return 0;
}

static void cpu_model(char *buf, size_t size) {
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
            snprintf(buf, size, "%s", strchr(line, ':') + 2);
            buf[strcspn(buf, "\n")] = '\0';
            break;
        }
    if (f) fclose(f);
}

int opprof_machine_identify(opprof_machine *out) {
    if (!out) return OPPROF_EINVAL;
    memset(out, 0, sizeof *out);
    opprof__machine_isa isa = opprof__machine_best_isa();
    cpu_model(out->cpu, sizeof out->cpu);
    snprintf(out->isa, sizeof out->isa, "%s",
             isa == OPPROF__ISA_AVX512 ? "AVX-512"
             : isa == OPPROF__ISA_AVX2 ? "AVX2"
                                       : "scalar");
    return 0;
}

static int measure(const plan *p, int threads, opprof_machine *out) {
    if (!out || threads < 1 || threads > OPPROF_MACHINE_MAX_THREADS) return OPPROF_EINVAL;
    opprof_machine_identify(out);
    opprof__machine_isa isa = opprof__machine_best_isa();
    int64_t sizes[3] = {cache_bytes(1), cache_bytes(2), cache_bytes(0)};
    if (!sizes[0]) sizes[0] = 32 * 1024; /* no sysfs: the common sizes, said in the profile */
    if (!sizes[1]) sizes[1] = 1024 * 1024;
    if (!sizes[2]) sizes[2] = 32 * 1024 * 1024;
    size_t dram_n = p->levels == OPPROF_MACHINE_LEVELS ? dram_floats(sizes[2]) : 0;
    float *dram = dram_n ? buffer(dram_n) : NULL;
    int rc = dram_n && !dram ? OPPROF_ENOMEM : 0;
    for (int t = 1; !rc && t <= threads; t++) {
        rc = measure_threads(p, isa, t, sizes, dram, dram_n, &out->by_threads[t - 1]);
        if (!rc) out->threads = t;
    }
    free(dram);
    return rc;
}

int opprof_machine_measure(int threads, opprof_machine *out) { return measure(&FULL, threads, out); }

int opprof_machine_measure_quick(int threads, opprof_machine *out) { return measure(&QUICK, threads, out); }

int opprof__machine_measure_in_program(int threads, opprof_machine *out) { return measure(&IN_PROGRAM, threads, out); }

static double larger(double a, double b) { return b > a ? b : a; }

int opprof_machine_keep_best(opprof_machine *into, const opprof_machine *other) {
    if (!into || !other) return OPPROF_EINVAL;
    if (strcmp(into->cpu, other->cpu) || strcmp(into->isa, other->isa)) return OPPROF_EFORMAT;
    int common = into->threads < other->threads ? into->threads : other->threads;
    for (int t = 0; t < common; t++) {
        opprof_machine_ceilings *c = &into->by_threads[t];
        const opprof_machine_ceilings *o = &other->by_threads[t];
        c->fma_peak_gflops = larger(c->fma_peak_gflops, o->fma_peak_gflops);
        for (int l = 0; l < OPPROF_MACHINE_LEVELS; l++) {
            c->levels[l].load_gbs = larger(c->levels[l].load_gbs, o->levels[l].load_gbs);
            c->levels[l].copy_gbs = larger(c->levels[l].copy_gbs, o->levels[l].copy_gbs);
        }
    }
    return 0;
}

const opprof_machine_ceilings *opprof_machine_for_threads(const opprof_machine *m, int threads) {
    if (!m || m->threads < 1) return NULL;
    int t = threads < 1 ? 1 : threads > m->threads ? m->threads : threads;
    return &m->by_threads[t - 1];
}
