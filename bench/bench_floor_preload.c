/* bench_floor_preload - the least a recorder that bench_record compares can
 * do, built as one: preloaded into bench_record_toy as opprof's and the
 * peers' are, it takes the timestamp of each function entry and exit
 * (-finstrument-functions' hooks) and of each malloc and free, and stores
 * the fewest bytes that keep them: 24 a function (the entry's time and
 * address, the exit's time), 40 a malloc+free pair (time, address and size;
 * time and address), into memory the process never touched (one mapping,
 * huge pages advised, as recorders' buffers are). No names, no nesting, no
 * threads, no output: the records are dropped at exit. bench_record runs it
 * in the same rounds as the tools, so that its cost meets the same host. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#define EXPORT __attribute__((visibility("default"), no_instrument_function))

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

enum { FLOOR_BYTES = 1 << 30 }; /* bench_record's 6 M functions take 144 MB, 1 M pairs 40 */

static uint64_t *g_at, *g_end;

__attribute__((constructor, no_instrument_function)) static void floor_start(void) {
    void *p = mmap(NULL, FLOOR_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return;
    madvise(p, FLOOR_BYTES, MADV_HUGEPAGE);
    g_end = (uint64_t *)p + FLOOR_BYTES / 8;
    g_at = p;
}

/* Words stored as one record: dropped once the mapping is full. */
#define FLOOR_STORE(n, ...)                                   \
    do {                                                      \
        if (g_at && g_at + (n) <= g_end) {                    \
            uint64_t words[] = {__VA_ARGS__};                 \
            for (int w = 0; w < (n); w++) g_at[w] = words[w]; \
            g_at += (n);                                      \
        }                                                     \
    } while (0)

EXPORT void __cyg_profile_func_enter(void *fn, void *site) {
    (void)site;
    FLOOR_STORE(2, __builtin_ia32_rdtsc(), (uint64_t)(uintptr_t)fn);
}

EXPORT void __cyg_profile_func_exit(void *fn, void *site) {
    (void)fn, (void)site;
    FLOOR_STORE(1, __builtin_ia32_rdtsc());
}

EXPORT void *malloc(size_t n) {
    void *p = __libc_malloc(n);
    FLOOR_STORE(3, __builtin_ia32_rdtsc(), (uint64_t)(uintptr_t)p, (uint64_t)n);
    return p;
}

EXPORT void free(void *p) {
    FLOOR_STORE(2, __builtin_ia32_rdtsc(), (uint64_t)(uintptr_t)p);
    __libc_free(p);
}
