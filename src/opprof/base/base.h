/* base/base.h - the base layer: what every other layer is built on. The
 * allocator, growing strings and the number formatters, atomic files, the
 * environment, the clock and the one hash table; invariants checked in debug
 * builds. Includes nothing of opprof's but the public headers and
 * src/common/quiet_write.h (its messages and files raise no signal in the
 * program: opprof__say, opprof__quiet_begin). */
#ifndef OPPROF_BASE_H
#define OPPROF_BASE_H

#include <opprof/capture.h>
#include <opprof/opprof.h>

#include "../../common/quiet_write.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define OPPROF__HIDDEN __attribute__((visibility("hidden")))

/* An invariant: checked where OPPROF_CHECKS is defined (CMake defines it in
 * Debug builds and in sanitizer builds, -DOPPROF_CHECKS=ON forces it),
 * compiled out otherwise, where its condition is not evaluated. A failure
 * names the place and the condition on stderr, then aborts. */
#ifdef OPPROF_CHECKS
#define OPPROF__ASSERT(cond) ((cond) ? (void)0 : opprof__assert_failed(#cond, __FILE__, __LINE__, __func__))
#else
#define OPPROF__ASSERT(cond) ((void)0)
#endif
OPPROF__HIDDEN _Noreturn void opprof__assert_failed(const char *cond, const char *file, int line, const char *func);

/* ---- allocator (base/alloc.c) ----
 * Every block opprof allocates goes through the hook of opprof_set_allocator
 * and carries its size: it is freed or grown by its pointer alone (the hook
 * is told the size it gave, always). */
OPPROF__HIDDEN void *opprof__alloc(size_t size);
OPPROF__HIDDEN void *opprof__calloc(size_t count, size_t size);
OPPROF__HIDDEN void *opprof__realloc(void *ptr, size_t new_size); /* ptr NULL: allocates */
OPPROF__HIDDEN void opprof__free(void *ptr);                      /* NULL: nothing */
OPPROF__HIDDEN char *opprof__strdup(const char *s);
/* The bytes of text[0, len) that fit in dst (size > 0: a field of a fixed
 * size), ended by a NUL. */
static inline void opprof__copy_text(char *dst, size_t size, const char *text, size_t len) {
    size_t n = len < size - 1 ? len : size - 1;
    memcpy(dst, text, n);
    dst[n] = '\0';
}
/* base/demangle.c: a C++ name ("_Z...", with any " [inlined]" or "+0x1f" after
 * it kept) demangled, owned by the caller (opprof__free); NULL when the name
 * is not mangled, is not a valid C++ name, or is beyond the bounds: a symbol
 * of more than OPPROF__DEMANGLE_IN_MAX bytes (the demangler's tables, on the
 * stack, take about 64 bytes per byte of it), or a text of more than
 * OPPROF__DEMANGLE_OUT_MAX (a few hundred crafted bytes can expand
 * exponentially). Time and memory are linear in those bounds. */
enum { OPPROF__DEMANGLE_IN_MAX = 4096, OPPROF__DEMANGLE_OUT_MAX = 65536 };
OPPROF__HIDDEN bool opprof__is_mangled(const char *name);
OPPROF__HIDDEN char *opprof__demangle(const char *name);
/* opprof_set_allocator's work, once the session layer has refused it while
 * a session is active: NULL restores the default; EINVAL without realloc. */
OPPROF__HIDDEN int opprof__allocator_set(const opprof_allocator *allocator);
/* The recorder's chunks, 64-byte aligned: mmap'd with the default allocator,
 * through the hook otherwise. The allocator must not change while chunks live
 * (it cannot: it is refused while a session is active). populate: map every
 * page now, in one call, rather than one fault at a time. */
OPPROF__HIDDEN void *opprof__alloc_chunk(size_t size, bool populate);
/* A mapping of `length` bytes on a 2 MiB boundary, on huge pages where the
 * kernel gives them, every page populated (zero); NULL when mmap fails. */
OPPROF__HIDDEN char *opprof__map_populated(size_t length);
OPPROF__HIDDEN void opprof__unmap_populated(char *base, size_t length);
/* A populated mapping of `length` bytes made ahead (base/spare_chunks.c), or
 * NULL when none is ready; either way the next one of that length is asked
 * for, on a helper thread where a second CPU can run it. */
OPPROF__HIDDEN char *opprof__spare_take(size_t length);
/* Nonzero while this thread runs opprof's own code that may call the C
 * library's allocator (the helper's start inside a record): an allocation
 * hook that records then is opprof's, not the program's, and what it records
 * is dropped uncounted (recorder.c), not taken for a signal handler's. */
extern OPPROF__HIDDEN __thread int opprof__own_allocations;
/* The session stopped: the helper ends (joined) and the spares are given
 * back; the next take starts it again. */
OPPROF__HIDDEN void opprof__spare_stop(void);
/* The CPU time (ns) that the spares' helpers took in this process so far
 * (`user`: in user mode only): opprof's, not the program's (the sampler
 * leaves it out). */
OPPROF__HIDDEN int64_t opprof__spare_helper_cpu_ns(bool user);
OPPROF__HIDDEN void opprof__free_chunk(void *ptr);
/* Page-aligned blocks of `length` bytes (a multiple of 4 KiB) whose pages
 * are zero and fault in as written, carved from large regions so that they
 * cost no mapping each (base/regions.c); given back, their pages are
 * returned to the system and the block is kept for the next taker. */
OPPROF__HIDDEN void *opprof__region_take(size_t length);
OPPROF__HIDDEN void opprof__region_give(void *block, size_t length);
/* Give the whole pages within [ptr, ptr + size) of a chunk back to the
 * system (they read as zero after); a no-op under a custom allocator. */
OPPROF__HIDDEN void opprof__release_pages(void *ptr, size_t size);
/* opprof__grow for arrays that may be large: on the heap while they are
 * small (under 256 KiB: a capture of a step costs no mapping), then pages
 * that mremap moves without copying; freed with opprof__free_pages, given
 * the capacity in bytes (capacity * elem) that grow left. */
OPPROF__HIDDEN int opprof__grow_pages(void **array, size_t *capacity, size_t need, size_t elem);
OPPROF__HIDDEN void opprof__free_pages(void *ptr, size_t bytes);
/* A string returned through the public API (freed with opprof_free). */
OPPROF__HIDDEN char *opprof__public_string(const char *data, size_t len);

/* Sums of values read from files stop at INT64_MAX and INT64_MIN instead of
 * overflowing (undefined in C) or wrapping (a hostile trace's huge numbers
 * would read as small ones): a saturated sum is a bound, never a wrong count. */
static inline int64_t opprof__sat_add(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}
static inline int64_t opprof__sat_sub(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}
#define OPPROF__SAT_ADD(acc, v) ((acc) = opprof__sat_add((acc), (v)))
#define OPPROF__SAT_SUB(acc, v) ((acc) = opprof__sat_sub((acc), (v)))
/* On a hash function: its arithmetic wraps by design (clang's
 * -fsanitize=integer reports unsigned wrapping, which C defines). */
#if defined(__clang__)
#define OPPROF__HASH __attribute__((no_sanitize("unsigned-integer-overflow", "unsigned-shift-base")))
#else
#define OPPROF__HASH
#endif

/* Grow an array of `elem` bytes to hold at least `need` elements. */
OPPROF__HIDDEN int opprof__grow(void **array, size_t *capacity, size_t need, size_t elem);

/* ---- growing string (base/strbuf.c) ---- */
typedef struct opprof__strbuf {
    char *data;
    size_t len, cap;
    int error; /* sticky: first failure */
} opprof__strbuf;
OPPROF__HIDDEN void opprof__sb_put(opprof__strbuf *sb, const char *s, size_t n);
OPPROF__HIDDEN void opprof__sb_puts(opprof__strbuf *sb, const char *s);
OPPROF__HIDDEN void opprof__sb_printf(opprof__strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
OPPROF__HIDDEN void opprof__sb_repeat(opprof__strbuf *sb, char c, size_t n);
/* Numbers as JSON and the traces write them, without printf: the text is
 * written backwards to end just before `end` (room: OPPROF__NUMBER_TEXT), and
 * its first character is returned. int: "-123"; us: nanoseconds as
 * microseconds with three decimals, 12345 -> "12.345". */
enum { OPPROF__NUMBER_TEXT = 32 };
/* (inline: the Chrome writer formats a few numbers per event) */
static inline char *opprof__int_text(int64_t v, char *end) {
    char *p = end;
    uint64_t u = v < 0 ? (uint64_t) - (v + 1) + 1 : (uint64_t)v; /* INT64_MIN too */
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) *--p = '-';
    return p;
}

static inline char *opprof__us_text(int64_t ns, char *end) {
    char *p = end;
    uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    uint64_t frac = u % 1000, whole = u / 1000;
    *--p = (char)('0' + frac % 10);
    *--p = (char)('0' + frac / 10 % 10);
    *--p = (char)('0' + frac / 100);
    *--p = '.';
    do {
        *--p = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole);
    if (ns < 0) *--p = '-';
    return p;
}

OPPROF__HIDDEN void opprof__sb_int(opprof__strbuf *sb, int64_t v);
OPPROF__HIDDEN void opprof__sb_us(opprof__strbuf *sb, int64_t ns);
/* A JSON string literal with quotes, escaping ", \ and control characters;
 * valid UTF-8 passes through, invalid bytes become U+FFFD. */
OPPROF__HIDDEN void opprof__sb_json_string(opprof__strbuf *sb, const char *s);
/* buf's control characters (C0, DEL, and C1 as UTF-8: U+0080 to U+009F) as
 * escapes that show them (\n, \t, \x1b, \u009b), cut to size: a name a
 * trace gives, in a table or a message, neither breaks its lines nor sends
 * the terminal a command (an escape sequence that retitles or clears it). */
OPPROF__HIDDEN void opprof__show_controls(char *buf, size_t size);
/* Text for HTML (element text or a quoted attribute): & < > " ' escaped. */
OPPROF__HIDDEN void opprof__sb_html(opprof__strbuf *sb, const char *s);
/* The first `max` bytes of s for HTML, "..." when cut (never inside a UTF-8
 * sequence; at most 255 bytes kept). */
OPPROF__HIDDEN void opprof__sb_html_cut(opprof__strbuf *sb, const char *s, size_t max);
OPPROF__HIDDEN void opprof__sb_free(opprof__strbuf *sb);
/* The one ending of a function that returns text: when rc is 0 (and the
 * buffer had no error), *out becomes a public string (opprof_free); the
 * buffer is freed either way. Returns the first error. */
OPPROF__HIDDEN int opprof__sb_finish(opprof__strbuf *sb, int rc, char **out);

/* ---- environment (base/env.c) ---- */
/* The index of the variable's value among choices; fallback when unset or
 * not among them (said on stderr). */
OPPROF__HIDDEN int opprof__env_choice(const char *name, const char *const *choices, int count, int fallback);
/* A whole number in [lo, hi]; fallback when unset or invalid (said on stderr). */
OPPROF__HIDDEN long long opprof__env_int(const char *name, long long lo, long long hi, long long fallback);

/* ---- a helper thread (base/helper_thread.c) ---- */
/* `run(arg)` on a thread that none of the program's signals is delivered
 * to: 0, or a negative errno (none started). The rule: every thread opprof
 * starts is started here and blocks every signal (the watcher, the sampler's
 * drainer, the flight saver, the reader's second half), so that a program's
 * handler runs on the program's threads and sigwait finds its signals
 * pending. thread NULL: detached. The CPUs the process may use. */
OPPROF__HIDDEN int opprof__helper_start(pthread_t *thread, void *(*run)(void *), void *arg);
/* tid is a thread of opprof's own that opprof__helper_start made and that runs now. */
OPPROF__HIDDEN bool opprof__is_own_thread(int32_t tid);
/* The calling thread's numbers as C writes and reads them ('.' the decimal
 * point) until opprof__c_numbers_end, whatever locale the program set
 * (base/c_numbers.c): around each writer and reader the program may call. */
typedef struct opprof__numbers {
    bool switched;
    void *previous; /* the thread's locale_t before */
} opprof__numbers;
OPPROF__HIDDEN opprof__numbers opprof__c_numbers_begin(void);
OPPROF__HIDDEN void opprof__c_numbers_end(opprof__numbers numbers);
/* strtod as C reads numbers ('.' the point), whatever the thread's locale: the
 * one strtod of the library's parsers. */
OPPROF__HIDDEN double opprof__c_strtod(const char *text, char **end);
/* The program's main thread has ended (pthread_exit) and every thread left is
 * one of opprof's helpers: without them the process would have ended, as by
 * exit(0). Reads /proc/self/status (no allocation); false when it cannot. */
OPPROF__HIDDEN bool opprof__only_helpers_left(void);
/* A helper that waits for work wakes each OPPROF__HELPER_WATCH_MS and calls
 * this: when only opprof's helpers are left (the program's main thread ended
 * by pthread_exit, and its last thread after), the process ends by exit(0)
 * as that last thread would have; an idle helper kept it alive for ever,
 * every signal blocked (SIGTERM pending too). Called without any lock held:
 * exit's handlers run on the calling thread. One helper calls exit. */
enum { OPPROF__HELPER_WATCH_MS = 250 };
OPPROF__HIDDEN void opprof__end_if_only_helpers_left(void);
/* Now + OPPROF__HELPER_WATCH_MS on CLOCK_MONOTONIC. */
OPPROF__HIDDEN struct timespec opprof__helper_deadline(void);
/* pthread_cond_wait (lock held) of a helper: at most OPPROF__HELPER_WATCH_MS,
 * then opprof__end_if_only_helpers_left with the lock let go. The caller
 * looks again at what it waits for (spurious returns). */
OPPROF__HIDDEN void opprof__helper_wait(pthread_cond_t *cond, pthread_mutex_t *lock);
/* Where a helper may end its thread while opprof_threads_pause holds the
 * helpers (it is started again on its function and argument, from the top,
 * by opprof_threads_resume): held, a lock that it holds, let go first.
 * opprof__helper_wait is one; a helper that sleeps otherwise calls it
 * between its rounds, with nothing of its own half done. */
OPPROF__HIDDEN void opprof__helper_pause_point(pthread_mutex_t *held);
/* The calling helper waits on sem (sem_wait): the pause posts it. */
OPPROF__HIDDEN void opprof__helper_wakes_by(sem_t *sem);
/* pthread_join of a helper that opprof__helper_start started into *thread
 * (its handle follows a pause); nothing when it was not started again. */
OPPROF__HIDDEN void opprof__helper_join(pthread_t *thread);
/* Between opprof_threads_pause and opprof_threads_resume (a signal handler
 * must not wait for the watcher then). */
OPPROF__HIDDEN bool opprof__helpers_paused(void);
/* fd moved above the numbers the program is given (base/fd_aside.c), close
 * to the top of its soft RLIMIT_NOFILE, close-on-exec: the new descriptor,
 * or fd itself when it cannot move. For a descriptor kept while the program
 * runs, so that the program's own files get the numbers they get without
 * opprof. */
OPPROF__HIDDEN int opprof__fd_aside(int fd);
OPPROF__HIDDEN int opprof__usable_cpus(void);

/* ---- microseconds as text (base/micros.c) ---- */
/* text[0..len): -?DIGITS(.DIGITS)? microseconds, as nanoseconds (digits past
 * the nanosecond dropped); OPPROF_EFORMAT for anything else or out of range. */
OPPROF__HIDDEN int opprof__micros_to_ns(const char *text, size_t len, int64_t *ns);

/* ---- what a killed process left (base/leftovers.c) ---- */
/* For each entry of path's directory named path's last part + infix + PID
 * (then nothing or "." and more) whose PID is no live process: found(entry's
 * path, PID, user). The number found. Allocates nothing (a path past
 * PATH_MAX is not swept). */
typedef void (*opprof__leftover_fn)(const char *entry, long pid, void *user);
OPPROF__HIDDEN int opprof__leftovers(const char *path, const char *infix, opprof__leftover_fn found, void *user);

/* ---- files (base/file.c) ---- */
/* Atomic file: open a temporary in the directory of path (of the file its
 * symbolic links lead to: the links stay) as PATH.tmp.PID.XXXXXX (those of
 * writers that died are removed); commit renames it. A path that is a
 * device, FIFO or socket (/dev/null, /dev/stdout) is written in place, as
 * renaming over it would replace it. From open to commit or abort the thread
 * blocks SIGXFSZ and SIGPIPE: a write past the program's file size limit
 * (ulimit -f) fails with EFBIG, said like a full disk, and one into a pipe
 * that nobody reads with EPIPE, instead of killing the program that opprof
 * writes in (a signal they raised is taken back before the thread's mask is
 * restored). */
typedef struct opprof__file {
    FILE *fp;
    char *path;     /* path_len + 1 bytes: where the file goes, links followed */
    char *tmp_path; /* path_len + 32 bytes; NULL in_place */
    size_t path_len;
    bool in_place;       /* path written as it is: no temporary */
    bool created;        /* tmp_path exists on disk */
    opprof__quiet quiet; /* SIGXFSZ and SIGPIPE blocked from open to commit or abort */
} opprof__file;
OPPROF__HIDDEN int opprof__file_open(opprof__file *f, const char *path);
/* Flush, fsync, close and rename; on any failure removes the temporary. */
OPPROF__HIDDEN int opprof__file_commit(opprof__file *f);
OPPROF__HIDDEN void opprof__file_abort(opprof__file *f);

/* ---- clock (base/clock.c) ---- */
OPPROF__HIDDEN void opprof__clock_init(void);
/* Ticks: the TSC where it is invariant, else CLOCK_MONOTONIC nanoseconds.
 * Inline: it is half the cost of a range. */
extern OPPROF__HIDDEN int opprof__use_tsc;
OPPROF__HIDDEN uint64_t opprof__ticks_fallback(void);
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t opprof__ticks(void) {
    if (__builtin_expect(opprof__use_tsc, 1)) return __rdtsc();
    return opprof__ticks_fallback();
}
/* The same, read only once the loads before it have completed (rdtsc is
 * not ordered with them otherwise; lfence waits for them). */
static inline uint64_t opprof__ticks_fenced(void) {
    _mm_lfence();
    return opprof__ticks();
}
#else
static inline uint64_t opprof__ticks(void) { return opprof__ticks_fallback(); }
static inline uint64_t opprof__ticks_fenced(void) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return opprof__ticks();
}
#endif
OPPROF__HIDDEN double opprof__ns_per_tick(void);
OPPROF__HIDDEN int64_t opprof__monotonic_ns(void);
OPPROF__HIDDEN int64_t opprof__realtime_ns(void);
/* The CPU time (ns) of this thread (`thread`) or of the process (its threads
 * that ended in) into cpu: [0] all of it, [1] its user-mode part (0 when
 * it cannot be read). */
OPPROF__HIDDEN void opprof__cpu_ns(bool thread, int64_t cpu[2]);

/* ---- sorting by a key (base/sort.c) ----
 * An item to sort: its key, and an index (its place before the sort, or what
 * it stands for) that breaks ties, so that equal keys keep their order. */
typedef struct opprof__keyed {
    int64_t key;
    size_t index;
} opprof__keyed;
/* Ascending by key, then by index. */
OPPROF__HIDDEN void opprof__sort_keyed(opprof__keyed *items, size_t n);
/* Keys that order as the values do: a double's (NaN first), an unsigned's;
 * ~key orders the other way. */
static inline int64_t opprof__double_key(double d) {
    if (d != d) return INT64_MIN;
    if (d == 0) d = 0; /* -0 is 0 */
    int64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits < 0 ? bits ^ INT64_MAX : bits;
}
static inline int64_t opprof__unsigned_key(uint64_t u) { return (int64_t)(u ^ 0x8000000000000000ull); }

/* ---- the one hash table (base/index.c) ----
 * Slots hold an item's index + 1 (0: empty); the items are the caller's. To
 * find or add: reserve room for one more item, probe for the key, then use
 * the item in slots[k] or append the key and set slots[k] = its index + 1. */
typedef struct opprof__index {
    uint32_t *slots;
    size_t size; /* a power of two, or 0 before the first reserve */
} opprof__index;
typedef uint64_t (*opprof__index_hash_fn)(const void *ctx, uint32_t item);
typedef bool (*opprof__index_equal_fn)(const void *ctx, uint32_t item, const void *key);
/* Room for count + 1 items (count are in the table): rehashes with hash_of. */
OPPROF__HIDDEN int opprof__index_reserve(opprof__index *ix, size_t count, opprof__index_hash_fn hash_of,
                                         const void *ctx);
/* The slot of key (hash: the same function of it as hash_of of an equal item). */
static inline size_t opprof__index_probe(const opprof__index *ix, uint64_t hash, const void *key,
                                         opprof__index_equal_fn equal, const void *ctx) {
    OPPROF__ASSERT(ix->size && (ix->size & (ix->size - 1)) == 0); /* a power of two: the mask wraps */
    size_t mask = ix->size - 1, k = (size_t)hash & mask;
    while (ix->slots[k] && !equal(ctx, ix->slots[k] - 1, key)) k = (k + 1) & mask;
    return k;
}
/* Reserve and probe in one: the index + 1 of the item equal to key, or 0
 * when there is none (*slot is where the index + 1 of the item appended for
 * it goes), or OPPROF_ENOMEM. */
static inline int64_t opprof__index_lookup(opprof__index *ix, size_t count, opprof__index_hash_fn hash_of,
                                           opprof__index_equal_fn equal, const void *ctx, uint64_t hash,
                                           const void *key, size_t *slot) {
    if (opprof__index_reserve(ix, count, hash_of, ctx)) return OPPROF_ENOMEM;
    *slot = opprof__index_probe(ix, hash, key, equal, ctx);
    OPPROF__ASSERT(ix->slots[*slot] <= count); /* a slot names one of the items, or none */
    return ix->slots[*slot];
}
OPPROF__HIDDEN void opprof__index_free(opprof__index *ix);
/* A table of strings: the index of an array of C strings (ctx: the array,
 * char *const *, as it is at the call), looked up by an opprof__index_text
 * key (the text need not end in '\0'). */
typedef struct opprof__index_text {
    const char *s;
    size_t len;
} opprof__index_text;
OPPROF__HIDDEN uint64_t opprof__index_text_hash(const void *strings, uint32_t item);
OPPROF__HIDDEN bool opprof__index_text_equal(const void *strings, uint32_t item, const void *key);
/* UTF-8 checked as it streams by (RFC 3629: no overlongs, no surrogates,
 * nothing past U+10FFFF): continuation bytes still needed, and the range of
 * the next one. {0} at the start of a text. */
typedef struct opprof__utf8 {
    int need;
    unsigned char lo, hi;
} opprof__utf8;
/* Whether bytes [b, e) continue valid UTF-8 from state u. */
static inline bool opprof__utf8_ok(opprof__utf8 *u, const unsigned char *b, const unsigned char *e) {
    for (; b < e; b++) {
        while (!u->need && e - b >= 8) { /* ASCII, 8 bytes at a time: names mostly are */
            uint64_t w;
            memcpy(&w, b, 8);
            if (w & 0x8080808080808080ull) break;
            b += 8;
        }
        if (b == e) break;
        unsigned c = *b;
        if (u->need) {
            if (c < u->lo || c > u->hi) return false;
            u->need--;
            u->lo = 0x80, u->hi = 0xBF;
            continue;
        }
        if (c < 0x80) continue;
        u->lo = 0x80, u->hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            u->need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            u->need = 2;
            if (c == 0xE0) u->lo = 0xA0; /* no overlong */
            if (c == 0xED) u->hi = 0x9F; /* no surrogate */
        } else if (c >= 0xF0 && c <= 0xF4) {
            u->need = 3;
            if (c == 0xF0) u->lo = 0x90; /* no overlong */
            if (c == 0xF4) u->hi = 0x8F; /* nothing past U+10FFFF */
        } else {
            return false;
        }
    }
    return true;
}

/* A hash of n bytes (names, string ids): names are hashed for every event
 * read, eight bytes a step (a multiply and a shift each), the tail
 * zero-padded, then mixed so that the low bits a table uses depend on every
 * byte. */
static inline OPPROF__HASH uint64_t opprof__hash_bytes(const char *s, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
    }
    if (i < n) {
        uint64_t w = 0;
        memcpy(&w, s + i, n - i);
        h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    }
    h ^= h >> 31;
    h *= 0x94D049BB133111EBull;
    return h ^ (h >> 32);
}

/* A hash of two numbers (a pair key), mixed so that nearby pairs spread. */
static inline OPPROF__HASH uint64_t opprof__hash_pair(uint64_t a, uint64_t b) {
    uint64_t h = (a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full);
    return h ^ (h >> 29);
}

#endif /* OPPROF_BASE_H */
