/* alloc.c - the one allocator hook through which opprof allocates. */
#define _GNU_SOURCE
#include "base/base.h"

#include "../../common/sized_alloc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__GLIBC__) && !defined(__SANITIZE_THREAD__)
/* glibc's own entry points: a malloc that `opprof record` interposes (to
 * record the program's allocations) must not see opprof's, which happen
 * inside a record. (Under ThreadSanitizer, malloc itself: its interceptor
 * is what tells it that a block freed on one thread and reused on another
 * is not shared.) */
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);
#define OPPROF__REALLOC __libc_realloc
#define OPPROF__FREE __libc_free
#else
#define OPPROF__REALLOC realloc
#define OPPROF__FREE free
#endif

enum { CHUNK_ALIGN = 64, PAGE_HEADER = 64, SMALL_PAGE = 4096 };
static const size_t HUGE_PAGE = (size_t)2 << 20;

/* Blocks of 2 MiB and more are mappings of their own on transparent huge
 * pages: each 2 MiB is then one fault and one clear instead of 512 (faults
 * are dear in a VM: opprof report of a 194 MB Kineto trace took 11 % of its
 * time in them), mremap grows them without a copy, and a free gives them
 * back to the system. Not the C library's blocks advised in place: in a
 * recorded program they share the heap's pages with the program's own, which
 * advice would change. The hook is given each block's size (sized_alloc.h),
 * which tells the two apart. Under AddressSanitizer and ThreadSanitizer, the
 * C library's (as the sanitizer's): its checks of the blocks stay. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define OPPROF__SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OPPROF__SANITIZED 1
#endif
#if defined(OPPROF__SANITIZED)
static const size_t BIG_BLOCK = SIZE_MAX;
#else
static const size_t BIG_BLOCK = (size_t)2 << 20;
#endif

static size_t whole_pages(size_t size) { return (size + SMALL_PAGE - 1) & ~(size_t)(SMALL_PAGE - 1); }

static char *map_at_huge_boundary(size_t length);

/* A big block's mapping, on a 2 MiB boundary (else its first huge page
 * starts where the kernel happened to put it, and a block of little more
 * than 2 MiB holds none). */
static void *map_big(size_t size) {
    char *p = map_at_huge_boundary(whole_pages(size));
    if (p) madvise(p, whole_pages(size), MADV_HUGEPAGE); /* advice: refused (THP "never"), 4 KiB pages */
    return p;
}

/* A big block grown: its pages moved (no copy) onto a new mapping on a 2 MiB
 * boundary, where its huge pages stay whole. */
static void *grow_big(void *ptr, size_t old_size, size_t new_size) {
    char *to = map_big(new_size);
    if (!to) return NULL;
    void *moved = mremap(ptr, whole_pages(old_size), whole_pages(new_size), MREMAP_MAYMOVE | MREMAP_FIXED, to);
    if (moved != MAP_FAILED) return moved;
    munmap(to, whole_pages(new_size));
    return NULL;
}

static void free_block(void *ptr, size_t size) {
    if (ptr && size >= BIG_BLOCK)
        munmap(ptr, whole_pages(size));
    else
        OPPROF__FREE(ptr);
}

/* The C library's realloc, blocks of BIG_BLOCK and more mapped (above). */
static void *default_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    (void)ctx;
    bool was_big = ptr && old_size >= BIG_BLOCK, big = new_size >= BIG_BLOCK;
    if (new_size == 0) {
        free_block(ptr, old_size);
        return NULL;
    }
    if (!was_big && !big) return OPPROF__REALLOC(ptr, new_size);
    if (new_size > SIZE_MAX / 2) return NULL; /* no such mapping; its pages' count would wrap */
    if (was_big && big) return grow_big(ptr, old_size, new_size);
    void *block = big ? map_big(new_size) : OPPROF__REALLOC(NULL, new_size);
    if (block && ptr) {
        memcpy(block, ptr, old_size < new_size ? old_size : new_size);
        free_block(ptr, old_size);
    }
    return block;
}

static opprof_allocator g_allocator = {default_realloc, NULL};

/* ---- the contract: the library keeps each block's size (sized_alloc.h) ---- */

void *opprof__alloc(size_t size) { return opprof__sized_realloc(&g_allocator, NULL, size); }
void *opprof__calloc(size_t count, size_t size) { return opprof__sized_calloc(&g_allocator, count, size); }
void *opprof__realloc(void *ptr, size_t new_size) { return opprof__sized_realloc(&g_allocator, ptr, new_size); }
void opprof__free(void *ptr) { opprof__sized_free(&g_allocator, ptr); }

char *opprof__strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = opprof__alloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

int opprof__grow(void **array, size_t *capacity, size_t need, size_t elem) {
    if (need <= *capacity) return 0;
    size_t cap = *capacity ? *capacity : 16;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / elem) return OPPROF_ENOMEM;
        cap *= 2;
    }
    void *p = opprof__realloc(*array, cap * elem);
    if (!p) return OPPROF_ENOMEM;
    *array = p;
    *capacity = cap;
    return 0;
}

char *opprof__public_string(const char *data, size_t len) {
    char *p = opprof__alloc(len + 1);
    if (!p) return NULL;
    memcpy(p, data, len);
    p[len] = '\0';
    return p;
}

void opprof_free(void *ptr) { opprof__free(ptr); }

/* ---- large buffers ----
 *
 * Recording chunks and page arrays come straight from mmap with the default
 * allocator, so that freeing them gives the memory back to the system
 * (malloc keeps freed blocks once its mmap threshold has risen, and a
 * capture's peak would then include every buffer it freed). Their mapping's
 * length is kept in a header of PAGE_HEADER bytes, which keeps them 64-byte
 * aligned. Through a hook, they are ordinary blocks (a chunk over-allocated
 * and aligned: a hook promises malloc's alignment only).
 *
 * A chunk mapped whole at once (a stream's second on: its thread is filling
 * chunks) starts on a 2 MiB boundary and asks for transparent huge pages
 * before it is populated: one fault and one clear of 2 MiB instead of 512 of
 * 4 KiB, which halves what a recorded event costs on fresh buffers
 * (bench_record: 32.6 -> 17 ns a malloc+free pair). Other chunks fault in
 * 4 KiB at a time and ask for no huge page, so that a thread with a few
 * events holds a few pages; they are carved from regions (base/regions.c),
 * so that thousands of threads do not cost a mapping each. Both are requests: a kernel that refuses them
 * (THP "never", an old kernel) maps 4 KiB pages as it faults them. */
static bool default_hook(void) { return g_allocator.realloc == default_realloc; }

static char *map_at_huge_boundary(size_t length) { /* NULL when no mapping is had */
    if (length > SIZE_MAX - HUGE_PAGE) return NULL;
    char *raw = mmap(NULL, length + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return NULL;
    char *base = (char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (base > raw) munmap(raw, (size_t)(base - raw));
    size_t tail = (size_t)(raw + length + HUGE_PAGE - (base + length));
    if (tail) munmap(base + length, tail);
    return base;
}

char *opprof__map_populated(size_t length) {
    char *base = map_at_huge_boundary(length);
    if (!base) return NULL;
    madvise(base, length, MADV_HUGEPAGE);
    if (madvise(base, length, MADV_POPULATE_WRITE) != 0) memset(base, 0, length); /* kernels before 5.14 */
    return base;
}

void opprof__unmap_populated(char *base, size_t length) { munmap(base, length); }

/* The header: the block's length, and where it came from. */
typedef struct page_header {
    size_t length;
    size_t from_region;
} page_header;
_Static_assert(sizeof(page_header) <= PAGE_HEADER, "the header fits");

/* How a block's pages are had: a mapping of its own (an array that
 * mremap() grows), populated on huge pages, or carved from a region. */
typedef enum pages_kind { PAGES_MAPPED, PAGES_POPULATED, PAGES_CARVED } pages_kind;

static void *map_pages(size_t size, pages_kind kind) {
    if (size > SIZE_MAX - PAGE_HEADER - SMALL_PAGE) return NULL;
    size_t length = (size + PAGE_HEADER + SMALL_PAGE - 1) & ~(size_t)(SMALL_PAGE - 1);
    char *base;
    if (kind == PAGES_POPULATED) {
        if (!(base = opprof__spare_take(length)) && !(base = opprof__map_populated(length))) return NULL;
    } else if (kind == PAGES_CARVED) {
        if (!(base = opprof__region_take(length))) return NULL;
    } else if (length >= HUGE_PAGE) { /* as a big block: its huge pages whole from the start */
        if (!(base = map_big(length))) return NULL;
    } else {
        base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) return NULL;
    }
    memcpy(base, &(page_header){length, kind == PAGES_CARVED}, sizeof(page_header));
    return base + PAGE_HEADER;
}

static void unmap_pages(void *ptr) {
    char *base = (char *)ptr - PAGE_HEADER;
    page_header h;
    memcpy(&h, base, sizeof h);
    if (h.from_region)
        opprof__region_give(base, h.length);
    else
        munmap(base, h.length);
}

void *opprof__alloc_chunk(size_t size, bool populate) {
    if (default_hook()) return map_pages(size, populate ? PAGES_POPULATED : PAGES_CARVED);
    if (size > SIZE_MAX - CHUNK_ALIGN - sizeof(void *)) return NULL;
    char *raw = opprof__alloc(size + CHUNK_ALIGN + sizeof(void *));
    if (!raw) return NULL;
    uintptr_t aligned = ((uintptr_t)raw + sizeof(void *) + CHUNK_ALIGN - 1) & ~(uintptr_t)(CHUNK_ALIGN - 1);
    memcpy((char *)aligned - sizeof(void *), &raw, sizeof raw);
    return (void *)aligned;
}

void opprof__free_chunk(void *ptr) {
    if (!ptr) return;
    if (default_hook()) {
        unmap_pages(ptr);
        return;
    }
    char *raw;
    memcpy(&raw, (char *)ptr - sizeof(void *), sizeof raw);
    opprof__free(raw);
}

void opprof__release_pages(void *ptr, size_t size) {
    if (!default_hook()) return;
    uintptr_t first = ((uintptr_t)ptr + SMALL_PAGE - 1) & ~(uintptr_t)(SMALL_PAGE - 1);
    uintptr_t last = ((uintptr_t)ptr + size) & ~(uintptr_t)(SMALL_PAGE - 1);
    if (last > first) madvise((void *)first, last - first, MADV_DONTNEED);
}

/* Arrays below this many bytes live on the heap. */
static const size_t HEAP_ARRAY_MAX = (size_t)256 << 10;

static bool array_on_heap(size_t bytes) { return !default_hook() || bytes < HEAP_ARRAY_MAX; }

/* A mapped array grown in place or moved by the kernel: no copy. Under
 * ThreadSanitizer, which does not see mremap, a copy into a new mapping and
 * munmap, which it sees: pages that mremap moves away would keep the shadow
 * of their old range, and a mapping of another thread placed there later
 * would look like memory the two threads share (a race it would report). */
static void *remap_pages(void *array, size_t bytes) {
    char *base = (char *)array - PAGE_HEADER;
    size_t length;
    memcpy(&length, base, sizeof length);
    size_t grown = (bytes + PAGE_HEADER + SMALL_PAGE - 1) & ~(size_t)(SMALL_PAGE - 1);
#if defined(__SANITIZE_THREAD__)
    char *moved = mmap(NULL, grown, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (moved == MAP_FAILED) return NULL;
    memcpy(moved, base, length);
    munmap(base, length);
#else
    char *moved = mremap(base, length, grown, MREMAP_MAYMOVE);
    if (moved == MAP_FAILED) return NULL;
    if (grown >= HUGE_PAGE) madvise(moved, grown, MADV_HUGEPAGE); /* as a big block's (default_realloc) */
#endif
    memcpy(moved, &grown, sizeof grown);
    return moved + PAGE_HEADER;
}

int opprof__grow_pages(void **array, size_t *capacity, size_t need, size_t elem) {
    if (need <= *capacity) return 0;
    size_t cap = *capacity ? *capacity : (4096 + elem - 1) / elem;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / elem) return OPPROF_ENOMEM;
        cap *= 2;
    }
    size_t old_bytes = *capacity * elem, bytes = cap * elem;
    void *p;
    if (array_on_heap(bytes)) {
        p = opprof__realloc(*array, bytes);
    } else if (*array && !array_on_heap(old_bytes)) {
        p = remap_pages(*array, bytes);
    } else { /* first mapping: what the heap held moves once */
        p = map_pages(bytes, PAGES_MAPPED);
        if (p && *array) {
            memcpy(p, *array, old_bytes);
            opprof__free(*array);
        }
    }
    if (!p) return OPPROF_ENOMEM;
    *array = p;
    *capacity = cap;
    return 0;
}

void opprof__free_pages(void *ptr, size_t bytes) {
    if (!ptr) return;
    if (array_on_heap(bytes))
        opprof__free(ptr);
    else
        unmap_pages(ptr);
}

int opprof__allocator_set(const opprof_allocator *allocator) {
    if (allocator && !allocator->realloc) return OPPROF_EINVAL;
    if (allocator)
        g_allocator = *allocator;
    else
        g_allocator = (opprof_allocator){default_realloc, NULL};
    return 0;
}
