/* sampler.c - native call-stack samples and off-CPU times from the kernel's
 * perf events, for the session (opprof_config.sample_hz, .off_cpu).
 *
 * One software event per thread of the process and per CPU, opened at the
 * session's start with `inherit`, so that every thread made later is
 * followed too (the kernel refuses an mmap'd ring to an inherited event of a
 * thread on every CPU, hence one per CPU): a task-clock event that samples
 * every 1/hz of the thread's CPU time with the user call chain (the kernel's
 * frame-pointer walk) and, with off_cpu, the switch records
 * (PERF_RECORD_SWITCH: out and in, preempted or not). A thread of the
 * sampler's drains the rings every 10 ms into one store: each sample's time,
 * thread and stack (the stacks interned: a sample costs 16 bytes and its
 * stack once), each off-CPU interval. A window's capture takes what falls in
 * it; symbols are looked up then, once per distinct address. Nothing of this
 * runs on the recording path. */
#define _GNU_SOURCE
#include "record/record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <asm/perf_regs.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { RING_PAGES = 16, MAX_RINGS = 1024, MAX_FRAMES = 127, DRAIN_MS = 10 };
/* DWARF mode: the user stack copied with each sample, and rings and drains
 * sized for it (8 KiB a sample: a 1 kHz thread fills 256 KiB in 30 ms). */
enum { STACK_COPY = 8192, DWARF_RING_PAGES = 64, DWARF_DRAIN_MS = 2, RECORD_MAX = STACK_COPY + 8 * (MAX_FRAMES + 40) };
static const uint64_t KERNEL_SPACE = 0xffff800000000000ull; /* x86-64: addresses above are the kernel's */
static const uint64_t KERNEL_FRAME = 1;                     /* "[kernel]": time in a system call or a fault */

typedef struct ring {
    int fd;
    uint64_t id; /* the kernel's id of the event: fd is still ours while it answers with it */
    struct perf_event_mmap_page *meta;
    unsigned char *data;
    size_t size; /* data bytes, a power of two */
} ring;

typedef struct raw_sample {
    int64_t ts;
    int32_t tid;
    uint32_t stack; /* index into the store's stacks */
} raw_sample;

typedef struct raw_off {
    int64_t start, end;
    int32_t tid;
    bool preempted;
} raw_off;

typedef struct switched_out {
    int32_t tid;
    bool preempted;
    int64_t at;
} switched_out;

struct opprof__sampler {
    ring rings[MAX_RINGS];
    int n_rings;
    int hz;
    bool dwarf, off_cpu;
    size_t ring_pages;
    unsigned char *record; /* one record copied out of its ring: RECORD_MAX bytes */
    pthread_t drainer;
    int stop;             /* atomic */
    pthread_mutex_t lock; /* the store, below */
    raw_sample *samples;
    size_t n_samples, cap_samples;
    raw_off *offs;
    size_t n_offs, cap_offs;
    switched_out *outs; /* threads switched out, not yet back */
    size_t n_outs, cap_outs;
    uint64_t *ips; /* every stack's addresses, innermost first, one after another */
    size_t n_ips, cap_ips;
    uint32_t *stack_first; /* stack k: ips[stack_first[k] .. stack_first[k + 1]) */
    size_t n_stacks, cap_stack_first;
    opprof__index stack_index;
    uint64_t lost;
    int64_t cpu_open_ns, cpu_closed_ns; /* the process's CPU time at the window's open and close, */
    int64_t own_open_ns, own_closed_ns; /* ...and its helpers' (the drainer's, the spares') */
    bool user_only;                     /* the kernel's time not sampled (perf_event_paranoid >= 2) */
    int64_t drainer_cpu_ns[2];          /* atomic: the drainers' CPU time after the last drain ([1]: user mode) */
};

/* The CPU time (ns) that the process's threads ran so far, those that
 * ended in (`user`: in user mode only, when the kernel's is not sampled);
 * and that of opprof's helper threads, which are no program's. (The
 * task-clock events' counts would do, their inherited threads' in, but the
 * helpers' are inherited too.) */
static int64_t process_cpu_ns(bool user) {
    int64_t cpu[2];
    opprof__cpu_ns(false, cpu);
    return cpu[user];
}

static int64_t helpers_cpu_ns(const opprof__sampler *s) {
    return __atomic_load_n(&s->drainer_cpu_ns[s->user_only], __ATOMIC_ACQUIRE) +
           opprof__spare_helper_cpu_ns(s->user_only);
}

static long perf_open(struct perf_event_attr *a, pid_t tid, int cpu, int group) {
    long fd = syscall(SYS_perf_event_open, a, tid, cpu, group, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? fd : opprof__fd_aside((int)fd);
}

/* ---- the store: stacks interned ---- */

typedef struct ips_key {
    const uint64_t *ips;
    size_t n;
} ips_key;

static OPPROF__HASH uint64_t hash_ips(const uint64_t *ips, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull ^ n;
    for (size_t i = 0; i < n; i++) h = (h ^ ips[i]) * 0x100000001B3ull;
    return h ^ (h >> 31);
}

static uint64_t stack_hash_of(const void *ctx, uint32_t item) {
    const opprof__sampler *s = ctx;
    return hash_ips(s->ips + s->stack_first[item], s->stack_first[item + 1] - s->stack_first[item]);
}

static bool stack_equal(const void *ctx, uint32_t item, const void *key) {
    const opprof__sampler *s = ctx;
    const ips_key *k = key;
    size_t n = s->stack_first[item + 1] - s->stack_first[item];
    return n == k->n && (!n || !memcmp(s->ips + s->stack_first[item], k->ips, n * sizeof *k->ips));
}

static int intern_stack(opprof__sampler *s, const uint64_t *ips, size_t n, uint32_t *out) {
    if (!s->cap_stack_first) { /* stack 0 starts at frame 0 */
        if (opprof__grow((void **)&s->stack_first, &s->cap_stack_first, 1, sizeof *s->stack_first))
            return OPPROF_ENOMEM;
        s->stack_first[0] = 0;
    }
    ips_key key = {ips, n};
    size_t slot;
    int64_t found = opprof__index_lookup(&s->stack_index, s->n_stacks, stack_hash_of, stack_equal, s, hash_ips(ips, n),
                                         &key, &slot);
    if (found < 0) return OPPROF_ENOMEM;
    if (found) return *out = (uint32_t)found - 1, 0;
    if (opprof__grow((void **)&s->ips, &s->cap_ips, s->n_ips + n, sizeof *s->ips) ||
        opprof__grow((void **)&s->stack_first, &s->cap_stack_first, s->n_stacks + 2, sizeof *s->stack_first))
        return OPPROF_ENOMEM;
    if (n) memcpy(s->ips + s->n_ips, ips, n * sizeof *ips); /* a stack may be empty: no array yet */
    s->n_ips += n;
    s->stack_first[s->n_stacks + 1] = (uint32_t)s->n_ips;
    s->stack_index.slots[slot] = (uint32_t)++s->n_stacks;
    *out = (uint32_t)s->n_stacks - 1;
    return 0;
}

/* ---- reading the rings ---- */

/* DWARF mode: after the chain, the registers (abi, then one word each) and
 * the stack copy (size, bytes, dyn_size); the frames it unwinds to, or 0. */
static size_t dwarf_frames(const opprof__sampler *s, const unsigned char *p, size_t len, size_t at, uint64_t *ips,
                           size_t max) {
    opprof__stack_copy sc = {.mask = opprof__unwind_regs_mask()};
    size_t n_regs = (size_t)__builtin_popcountll(sc.mask);
    uint64_t abi, size, dyn;
    if (!s->dwarf || at + 8 > len) return 0;
    memcpy(&abi, p + at, 8);
    at += 8;
    if (!abi || at + 8 * n_regs + 8 > len) return 0;
    sc.regs = p + at;
    at += 8 * n_regs;
    memcpy(&size, p + at, 8);
    at += 8;
    if (!size || at + size + 8 > len) return 0;
    sc.stack = p + at;
    memcpy(&dyn, p + at + size, 8);
    sc.size = dyn < size ? dyn : size;
    uint64_t sp = 0;
    int k = __builtin_popcountll(sc.mask & ((1ull << PERF_REG_X86_SP) - 1));
    memcpy(&sp, sc.regs + 8 * k, 8);
    sc.sp = sp;
    return opprof__unwind(&sc, ips, max);
}

/* A sample: ip; pid, tid; time; nr; ips[nr] (sample_type IP | TID | TIME |
 * CALLCHAIN), then in DWARF mode the registers and the stack. The chain holds
 * the user frames only; a sample taken in the kernel (its ip a kernel
 * address) gets the frame KERNEL_FRAME first. The DWARF unwind, when it
 * finds the frames, replaces the frame-pointer chain. */
static void on_sample(opprof__sampler *s, const unsigned char *p, size_t len) {
    if (len < 32) return;
    uint32_t tid;
    uint64_t ip0, time, nr;
    memcpy(&ip0, p, 8);
    memcpy(&tid, p + 12, 4);
    memcpy(&time, p + 16, 8);
    memcpy(&nr, p + 24, 8);
    if (nr > (len - 32) / 8 || opprof__is_own_thread((int32_t)tid)) return; /* the drainer's, the watcher's... */
    uint64_t ips[MAX_FRAMES + 1];
    size_t n = 0;
    if (ip0 >= KERNEL_SPACE) ips[n++] = KERNEL_FRAME;
    size_t unwound = dwarf_frames(s, p, len, 32 + 8 * nr, ips + n, MAX_FRAMES - n);
    for (size_t k = 1; k < unwound; k++) ips[n + k]--; /* return addresses: their calls are the byte before */
    n += unwound;
    for (uint64_t i = 0, user = 0; !unwound && i < nr && n < MAX_FRAMES; i++) {
        uint64_t ip;
        memcpy(&ip, p + 32 + 8 * i, 8);
        if (ip >= (uint64_t)PERF_CONTEXT_MAX) continue; /* a context marker (user, kernel) */
        ips[n++] = user++ ? ip - 1 : ip;                /* a return address: its call is the byte before */
    }
    uint32_t stack;
    if (intern_stack(s, ips, n, &stack) ||
        opprof__grow((void **)&s->samples, &s->cap_samples, s->n_samples + 1, sizeof *s->samples)) {
        s->lost++;
        return;
    }
    s->samples[s->n_samples++] = (raw_sample){(int64_t)time, (int32_t)tid, stack};
}

/* A switch: its sample_id (pid, tid, time) at the record's end. */
static void on_switch(opprof__sampler *s, uint16_t misc, const unsigned char *p, size_t len) {
    if (len < 16) return;
    uint32_t tid;
    uint64_t time;
    memcpy(&tid, p + len - 12, 4);
    memcpy(&time, p + len - 8, 8);
    if (opprof__is_own_thread((int32_t)tid)) return; /* the watcher asleep for the whole run is no program's */
    size_t k = 0;
    while (k < s->n_outs && s->outs[k].tid != (int32_t)tid) k++;
    if (misc & PERF_RECORD_MISC_SWITCH_OUT) {
        if (k == s->n_outs && opprof__grow((void **)&s->outs, &s->cap_outs, s->n_outs + 1, sizeof *s->outs)) return;
        if (k == s->n_outs) s->n_outs++;
        s->outs[k] = (switched_out){(int32_t)tid, (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0, (int64_t)time};
        return;
    }
    if (k == s->n_outs) return; /* in without an out: it was out before the session */
    switched_out o = s->outs[k];
    s->outs[k] = s->outs[--s->n_outs];
    if (opprof__grow((void **)&s->offs, &s->cap_offs, s->n_offs + 1, sizeof *s->offs)) return;
    s->offs[s->n_offs++] = (raw_off){o.at, (int64_t)time, o.tid, o.preempted};
}

static void drain_ring(opprof__sampler *s, ring *r) {
    uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE), tail = r->meta->data_tail;
    unsigned char *rec = s->record;
    const size_t rec_size = RECORD_MAX;
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        for (size_t i = 0; i < sizeof h; i++) ((unsigned char *)&h)[i] = r->data[(tail + i) & (r->size - 1)];
        if (h.size < sizeof h || tail + h.size > head) break;
        size_t len = h.size - sizeof h;
        if (len <= rec_size) {
            for (size_t i = 0; i < len; i++) rec[i] = r->data[(tail + sizeof h + i) & (r->size - 1)];
            if (h.type == PERF_RECORD_SAMPLE) on_sample(s, rec, len);
            if (h.type == PERF_RECORD_SWITCH) on_switch(s, h.misc, rec, len);
            if (h.type == PERF_RECORD_LOST && len >= 16) {
                uint64_t lost;
                memcpy(&lost, rec + 8, 8);
                s->lost += lost;
            }
        }
        tail += h.size;
    }
    __atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(opprof__sampler *s) {
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->n_rings; i++) drain_ring(s, &s->rings[i]);
    pthread_mutex_unlock(&s->lock);
}

static void *drainer(void *arg) {
    opprof__sampler *s = arg;
    struct timespec pause = {0, (s->dwarf ? DWARF_DRAIN_MS : DRAIN_MS) * 1000000L}, look = opprof__helper_deadline();
    int64_t before[2]; /* the drainers' before this one (paused by opprof_threads_pause) */
    for (int k = 0; k < 2; k++) before[k] = __atomic_load_n(&s->drainer_cpu_ns[k], __ATOMIC_ACQUIRE);
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        drain_all(s);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > look.tv_sec || (now.tv_sec == look.tv_sec && now.tv_nsec >= look.tv_nsec)) {
            opprof__end_if_only_helpers_left();
            look = opprof__helper_deadline();
        }
        int64_t cpu[2];
        opprof__cpu_ns(true, cpu);
        for (int k = 0; k < 2; k++) __atomic_store_n(&s->drainer_cpu_ns[k], before[k] + cpu[k], __ATOMIC_RELEASE);
        nanosleep(&pause, NULL);
        opprof__helper_pause_point(NULL); /* opprof_threads_pause: started again from the top */
    }
    return NULL;
}

/* ---- start, stop ---- */

static int read_sysctl(const char *path, long *out) {
    FILE *f = fopen(path, "re");
    int ok = f && fscanf(f, "%ld", out) == 1;
    if (f) fclose(f);
    return ok ? 0 : -1;
}

static void attr_of(struct perf_event_attr *a, int hz, bool dwarf, bool off_cpu, bool with_kernel) {
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_SOFTWARE;
    a->config = hz ? PERF_COUNT_SW_TASK_CLOCK : PERF_COUNT_SW_DUMMY;
    a->sample_period = hz ? (uint64_t)(1000000000 / hz) : 0;
    a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    if (dwarf && hz) {
        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a->sample_regs_user = opprof__unwind_regs_mask();
        a->sample_stack_user = STACK_COPY;
    }
    a->sample_id_all = 1;
    a->context_switch = off_cpu;
    a->inherit = 1;
    a->exclude_kernel = !with_kernel;
    a->exclude_hv = 1;
    a->exclude_callchain_kernel = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
}

static int open_ring(opprof__sampler *s, struct perf_event_attr *a, pid_t tid, int cpu) {
    if (s->n_rings == MAX_RINGS) return -ENOSPC;
    long fd = perf_open(a, tid, cpu, -1);
    if (fd < 0) return -errno;
    size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = (1 + s->ring_pages) * page;
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    if (m == MAP_FAILED) {
        int err = -errno;
        close((int)fd);
        return err;
    }
    uint64_t id = 0;
    if (ioctl((int)fd, PERF_EVENT_IOC_ID, &id) != 0) id = 0;
    s->rings[s->n_rings++] = (ring){(int)fd, id, m, (unsigned char *)m + page, s->ring_pages * page};
    return 0;
}

/* Why opening failed, for the capture's warning. */
static void say_why(char *why, size_t size, int err, long paranoid) {
    if (err == -EACCES || err == -EPERM)
        snprintf(why, size,
                 "perf_event_open was refused (%s; perf_event_paranoid is %ld, and a container's seccomp "
                 "policy may forbid it)",
                 strerror(-err), paranoid);
    else if (err == -ENOSYS || err == -ENOENT || err == -EOPNOTSUPP)
        snprintf(why, size, "this kernel has no software perf events (%s)", strerror(-err));
    else
        snprintf(why, size, "opening the perf events failed (%s)", strerror(-err));
}

/* Every thread of the process on every CPU; new threads follow by inherit. */
static int open_all(opprof__sampler *s, struct perf_event_attr *a) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    DIR *d = opendir("/proc/self/task");
    if (!d) return -errno;
    int err = 0, opened = 0;
    for (struct dirent *e; (e = readdir(d));) {
        pid_t tid = (pid_t)atoi(e->d_name);
        for (int cpu = 0; tid > 0 && cpu < cpus; cpu++) {
            int rc = open_ring(s, a, tid, cpu);
            if (!rc)
                opened++;
            else if (!err && rc != -ENODEV && rc != -ESRCH)
                err = rc; /* an offline CPU, a thread gone */
        }
    }
    closedir(d);
    return opened ? 0 : err ? err : -ENODEV;
}

/* A descriptor is closed only while it is still the event opened: a program
 * that closed it (closing 3..1023 is a daemon's habit) may have opened a file
 * under its number since, which must stay open until the program closes it. */
static bool still_ours(const ring *r) {
    uint64_t id = 0;
    return ioctl(r->fd, PERF_EVENT_IOC_ID, &id) == 0 && id == r->id;
}

static void close_all(opprof__sampler *s) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < s->n_rings; i++) {
        munmap(s->rings[i].meta, (1 + s->ring_pages) * page);
        if (still_ours(&s->rings[i])) close(s->rings[i].fd);
    }
    s->n_rings = 0;
}

int opprof__sampler_start(opprof__sampler **out, int hz, bool dwarf, bool off_cpu, char *note, size_t note_size) {
    *out = NULL;
    note[0] = '\0';
    long max_rate = 0, paranoid = 2;
    read_sysctl("/proc/sys/kernel/perf_event_paranoid", &paranoid);
    if (hz && read_sysctl("/proc/sys/kernel/perf_event_max_sample_rate", &max_rate) == 0 && max_rate > 0 &&
        hz > max_rate) {
        snprintf(note, note_size,
                 "sampling at %ld Hz, the kernel's limit (perf_event_max_sample_rate), not the %d Hz "
                 "asked",
                 max_rate, hz);
        hz = (int)max_rate;
    }
    opprof__sampler *s = opprof__calloc(1, sizeof *s);
    if (!s) return OPPROF_ENOMEM;
    s->hz = hz;
    s->dwarf = dwarf && hz;
    s->off_cpu = off_cpu;
    s->ring_pages = s->dwarf ? DWARF_RING_PAGES : RING_PAGES;
    s->record = opprof__alloc(RECORD_MAX);
    if (!s->record) {
        opprof__free(s);
        return OPPROF_ENOMEM;
    }
    pthread_mutex_init(&s->lock, NULL);
    struct perf_event_attr a;
    attr_of(&a, hz, s->dwarf, off_cpu, paranoid < 2);
    s->user_only = paranoid >= 2;
    int err = open_all(s, &a);
    if (err == -EACCES || err == -EPERM) { /* without kernel samples, as an unprivileged user may */
        close_all(s);
        attr_of(&a, hz, s->dwarf, off_cpu, false);
        err = open_all(s, &a);
    }
    if (!err && opprof__helper_start(&s->drainer, drainer, s)) err = -EAGAIN;
    if (err) {
        say_why(note, note_size, err, paranoid);
        close_all(s);
        pthread_mutex_destroy(&s->lock);
        opprof__free(s->record);
        opprof__free(s);
        return err;
    }
    *out = s;
    return 0;
}

void opprof__sampler_stop(opprof__sampler *s) {
    if (!s) return;
    __atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
    opprof__helper_join(&s->drainer);
    close_all(s);
    pthread_mutex_destroy(&s->lock);
    opprof__free(s->samples);
    opprof__free(s->offs);
    opprof__free(s->outs);
    opprof__free(s->ips);
    opprof__free(s->stack_first);
    opprof__index_free(&s->stack_index);
    opprof__free(s->record);
    opprof__free(s);
}

int64_t opprof__sampler_period_ns(const opprof__sampler *s) { return s && s->hz ? 1000000000 / s->hz : 0; }

/* ---- a window's share, into its capture ---- */

/* The frames of each address seen so far: keys[k] is an address (a
 * caller's minus one), its frames (name ids and source ids, innermost
 * first) are names/sources[first[k] .. first[k + 1]). */
typedef struct code_frames {
    uint64_t *keys;
    uint32_t *first; /* n + 1 entries */
    size_t n, cap, cap_first;
    uint32_t *names, *sources;
    size_t n_frames, cap_names, cap_sources;
    bool any_source;
    opprof__index index;
} code_frames;

enum { MAX_INLINED = 8 }; /* frames one address may stand for: the inlined ones, then its function */

static OPPROF__HASH uint64_t ip_hash(uint64_t ip) { return (ip * 0x9E3779B97F4A7C15ull) >> 7; }
static uint64_t ip_hash_of(const void *ctx, uint32_t item) { return ip_hash(((const code_frames *)ctx)->keys[item]); }
static bool ip_equal(const void *ctx, uint32_t item, const void *key) {
    return ((const code_frames *)ctx)->keys[item] == *(const uint64_t *)key;
}

/* An address in no loaded object: a frame-pointer walk through code built
 * without frame pointers reads such values, and the stack is cut there. */
static const uint32_t NOT_CODE = UINT32_MAX;

static int intern_or_none(opprof_capture *c, const char *text, uint32_t *id) {
    *id = UINT32_MAX;
    return text[0] ? opprof__capture_intern(c, text, strlen(text), id) : 0;
}

/* The name and source ids of the frames at at (looked up once per address):
 * what debug information says (record/sources.c), the holding function
 * named by its symbol; a single NOT_CODE name for an address in no object. */
static int look_up(opprof_capture *c, code_frames *cf, uint64_t at, bool kernel, size_t *k) {
    opprof__code_frame fr[MAX_INLINED];
    size_t n = 1;
    bool code = true;
    fr[0] = (opprof__code_frame){.inlined = false};
    if (kernel)
        snprintf(fr[0].name, sizeof fr[0].name, "[kernel]");
    else if ((code = opprof_symbolize((const void *)(uintptr_t)at, fr[0].name, sizeof fr[0].name, NULL, 0) !=
                     OPPROF_EINVAL)) {
        char symbol[sizeof fr[0].name];
        memcpy(symbol, fr[0].name, sizeof symbol);
        n = opprof__code_frames(at, fr, MAX_INLINED);
        memcpy(fr[n - 1].name, symbol, sizeof symbol);
    }
    if (opprof__grow((void **)&cf->keys, &cf->cap, cf->n + 1, sizeof *cf->keys) ||
        opprof__grow((void **)&cf->first, &cf->cap_first, cf->n + 2, sizeof *cf->first) ||
        opprof__grow((void **)&cf->names, &cf->cap_names, cf->n_frames + n, sizeof *cf->names) ||
        opprof__grow((void **)&cf->sources, &cf->cap_sources, cf->n_frames + n, sizeof *cf->sources))
        return OPPROF_ENOMEM;
    if (!cf->n) cf->first[0] = 0;
    for (size_t f = 0; f < n; f++) {
        uint32_t *name = &cf->names[cf->n_frames + f], *source = &cf->sources[cf->n_frames + f];
        if (!code) {
            *name = NOT_CODE;
            *source = UINT32_MAX;
            continue;
        }
        if (fr[f].inlined) strncat(fr[f].name, " [inlined]", sizeof fr[f].name - strlen(fr[f].name) - 1);
        if (intern_or_none(c, fr[f].name, name) || intern_or_none(c, fr[f].source, source)) return OPPROF_ENOMEM;
        cf->any_source |= *source != UINT32_MAX;
    }
    cf->n_frames += n;
    cf->keys[cf->n] = at;
    cf->first[cf->n + 1] = (uint32_t)cf->n_frames;
    *k = cf->n++;
    return 0;
}

/* The frames of the address of frame `depth` of a stack (0: the sampled
 * instruction; deeper: return addresses, looked up at the call before them). */
static int frames_of_ip(opprof_capture *c, code_frames *cf, uint64_t ip, size_t depth, size_t *k) {
    bool kernel = ip == KERNEL_FRAME;
    uint64_t at = kernel || !depth || !ip ? ip : ip - 1;
    size_t slot;
    int64_t found = opprof__index_lookup(&cf->index, cf->n, ip_hash_of, ip_equal, cf, ip_hash(at), &at, &slot);
    if (found < 0) return OPPROF_ENOMEM;
    if (found) return *k = (size_t)found - 1, 0;
    int rc = look_up(c, cf, at, kernel, k);
    if (!rc) cf->index.slots[slot] = (uint32_t)*k + 1;
    return rc;
}

/* The capture's thread of tid, added (named from /proc) when it recorded nothing. */
static int thread_of_tid(opprof_capture *c, int32_t tid, uint32_t *out) {
    for (size_t i = 0; i < c->n_threads; i++)
        if (c->threads[i].tid == tid) return *out = (uint32_t)i, 0;
    char path[64], name[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    FILE *f = fopen(path, "re");
    if (f && fgets(name, sizeof name, f)) name[strcspn(name, "\n")] = '\0';
    if (f) fclose(f);
    int rc = opprof_capture_add_thread(c, tid, name, out);
    if (!rc) c->threads[*out].pid = (int64_t)getpid();
    return rc;
}

static int take_samples(opprof__sampler *s, opprof_capture *c, int64_t t0, int64_t t1) {
    code_frames cf = {0};
    enum { MAX_OUT = 4096 };
    uint32_t *ids = opprof__alloc(2 * MAX_OUT * sizeof *ids), *sources = ids ? ids + MAX_OUT : NULL;
    size_t kept = 0;
    int rc = ids ? 0 : OPPROF_ENOMEM;
    for (size_t i = 0; i < s->n_samples; i++) {
        raw_sample r = s->samples[i];
        if (r.ts >= t1) { /* the next window's */
            s->samples[kept++] = r;
            continue;
        }
        if (r.ts < t0 || rc) continue;
        uint32_t thread;
        size_t first = s->stack_first[r.stack], n = s->stack_first[r.stack + 1] - first;
        rc = thread_of_tid(c, r.tid, &thread);
        size_t out = 0;
        for (size_t d = 0; !rc && d < n; d++) {
            size_t k;
            rc = frames_of_ip(c, &cf, s->ips[first + d], d, &k);
            if (rc || cf.names[cf.first[k]] == NOT_CODE) break; /* the walk went astray: its callers are unknown */
            for (uint32_t f = cf.first[k]; f < cf.first[k + 1] && out < MAX_OUT; f++, out++) {
                ids[out] = cf.names[f];
                sources[out] = cf.sources[f];
            }
        }
        if (!rc) rc = opprof__capture_add_sample_ids(c, thread, r.ts - t0, ids, cf.any_source ? sources : NULL, out);
    }
    s->n_samples = kept;
    opprof__free(ids);
    opprof__free(cf.keys);
    opprof__free(cf.first);
    opprof__free(cf.names);
    opprof__free(cf.sources);
    opprof__index_free(&cf.index);
    return rc;
}

static int add_off(opprof_capture *c, int32_t tid, int64_t a, int64_t b, int64_t t0, int64_t t1, bool preempted) {
    if (a < t0) a = t0;
    if (b > t1) b = t1;
    if (b <= a) return 0;
    uint32_t thread;
    int rc = thread_of_tid(c, tid, &thread);
    return rc ? rc : opprof_capture_add_off_cpu(c, thread, a - t0, b - a, preempted);
}

static int take_offs(opprof__sampler *s, opprof_capture *c, int64_t t0, int64_t t1) {
    size_t kept = 0;
    int rc = 0;
    for (size_t i = 0; i < s->n_offs; i++) {
        raw_off o = s->offs[i];
        if (!rc) rc = add_off(c, o.tid, o.start, o.end, t0, t1, o.preempted);
        if (o.end > t1) s->offs[kept++] = o; /* its rest is the next window's */
    }
    s->n_offs = kept;
    for (size_t k = 0; !rc && k < s->n_outs; k++) /* out still: off until the window's end */
        rc = add_off(c, s->outs[k].tid, s->outs[k].at, t1, t0, t1, s->outs[k].preempted);
    return rc;
}

void opprof__sampler_window_mark(opprof__sampler *s, bool open) {
    if (!s) return;
    int64_t cpu = process_cpu_ns(s->user_only), own = helpers_cpu_ns(s);
    if (open)
        s->cpu_open_ns = s->cpu_closed_ns = cpu, s->own_open_ns = s->own_closed_ns = own;
    else
        s->cpu_closed_ns = cpu, s->own_closed_ns = own;
}

/* Said when the samples cover less than half of the CPU time the threads
 * ran in the window, opprof's own aside (and that time is 20 periods or
 * more; the user-mode time only when the kernel's is not sampled): each thread's
 * clock starts anew, so a thread that runs less than a period is never
 * sampled (a pool that makes a thread per task: 4,000 threads of 0.15 ms,
 * no sample at all, and perf record the same). */
static int say_coverage(opprof__sampler *s, opprof_capture *c, size_t samples) {
    int64_t spent = (s->cpu_closed_ns - s->cpu_open_ns) - (s->own_closed_ns - s->own_open_ns);
    uint64_t ran = spent > 0 ? (uint64_t)spent : 0;
    uint64_t period = (uint64_t)opprof__sampler_period_ns(s), covered = samples * period;
    if (!period || ran < 20 * period || 2 * covered >= ran) return 0;
    return opprof__capture_warnf(c,
                                 "the samples cover %.1f ms of the %.1f ms of CPU time that the threads ran (%.0f%%): "
                                 "each thread's clock starts anew, so a thread that runs less than the period "
                                 "between samples (%.3f ms) is not sampled; a higher rate (--sample HZ) sees "
                                 "shorter threads",
                                 (double)covered / 1e6, (double)ran / 1e6, 100.0 * (double)covered / (double)ran,
                                 (double)period / 1e6);
}

int opprof__sampler_collect(opprof__sampler *s, opprof_capture *c, int64_t t0, int64_t t1) {
    if (!s) return 0;
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->n_rings; i++) drain_ring(s, &s->rings[i]);
    size_t before = c->n_samples;
    int rc = take_samples(s, c, t0, t1);
    if (!rc && s->hz) rc = say_coverage(s, c, c->n_samples - before);
    if (!rc && s->off_cpu) rc = take_offs(s, c, t0, t1);
    c->info.samples_lost = s->lost;
    s->lost = 0;
    pthread_mutex_unlock(&s->lock);
    c->info.sample_period_ns = opprof__sampler_period_ns(s);
    c->info.off_cpu = s->off_cpu;
    return rc;
}
