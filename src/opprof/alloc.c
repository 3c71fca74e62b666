/* alloc.c - the one allocator hook through which opprof allocates. */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifdef __GLIBC__
/* glibc's own entry points: a malloc that `opprof record` interposes (to
 * record the program's allocations) must not see opprof's, which happen
 * inside a record. */
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);
#define OPPROF__REALLOC __libc_realloc
#define OPPROF__FREE __libc_free
#else
#define OPPROF__REALLOC realloc
#define OPPROF__FREE free
#endif

static void *default_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    (void)ctx;
    (void)old_size;
    if (new_size == 0) {
        OPPROF__FREE(ptr);
        return NULL;
    }
    return OPPROF__REALLOC(ptr, new_size);
}

static opprof_allocator g_allocator = {default_realloc, NULL};

/* Large buffers (recording chunks): straight from mmap with the default
 * allocator, so that freeing them gives the memory back to the system
 * (malloc keeps freed blocks once its mmap threshold has risen, and a
 * capture's peak would then include every buffer it freed). */
enum { CHUNK_ALIGN = 64 };

void *opprof__alloc_chunk(size_t size, bool populate) {
    if (g_allocator.realloc == default_realloc) {
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0),
                       -1, 0);
        return p == MAP_FAILED ? NULL : p;
    }
    /* the hook promises malloc's alignment only: over-allocate, align, keep
     * the block's own address just before the aligned one */
    char *raw = opprof__alloc(size + CHUNK_ALIGN + sizeof(void *));
    if (!raw) return NULL;
    uintptr_t aligned = ((uintptr_t)raw + sizeof(void *) + CHUNK_ALIGN - 1) & ~(uintptr_t)(CHUNK_ALIGN - 1);
    memcpy((char *)aligned - sizeof(void *), &raw, sizeof raw);
    return (void *)aligned;
}

void opprof__free_chunk(void *ptr, size_t size) {
    if (!ptr) return;
    if (g_allocator.realloc == default_realloc) {
        munmap(ptr, size);
        return;
    }
    char *raw;
    memcpy(&raw, (char *)ptr - sizeof(void *), sizeof raw);
    opprof__dealloc(raw, size + CHUNK_ALIGN + sizeof(void *));
}

int opprof__grow_pages(void **array, size_t *capacity, size_t need, size_t elem) {
    if (need <= *capacity) return 0;
    size_t cap = *capacity ? *capacity : (65536 + elem - 1) / elem;
    while (cap < need) {
        if (cap > SIZE_MAX / 2 / elem) return OPPROF_ENOMEM;
        cap *= 2;
    }
    void *p;
    if (g_allocator.realloc != default_realloc) {
        p = opprof__realloc(*array, *capacity * elem, cap * elem);
        if (!p) return OPPROF_ENOMEM;
    } else if (*array) {
        /* the kernel moves the pages: no copy, no second copy in memory */
        p = mremap(*array, *capacity * elem, cap * elem, MREMAP_MAYMOVE);
        if (p == MAP_FAILED) return OPPROF_ENOMEM;
    } else {
        p = mmap(NULL, cap * elem, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return OPPROF_ENOMEM;
    }
    *array = p;
    *capacity = cap;
    return 0;
}

void opprof__free_pages(void *ptr, size_t size) {
    if (!ptr) return;
    if (g_allocator.realloc != default_realloc)
        opprof__dealloc(ptr, size);
    else
        munmap(ptr, size);
}

int opprof_set_allocator(const opprof_allocator *allocator) {
    if (opprof_is_active()) return OPPROF_EACTIVE;
    if (allocator && !allocator->realloc) return OPPROF_EINVAL;
    if (allocator)
        g_allocator = *allocator;
    else
        g_allocator = (opprof_allocator){default_realloc, NULL};
    return 0;
}

void *opprof__alloc(size_t size) {
    if (size == 0) size = 1;
    return g_allocator.realloc(g_allocator.ctx, NULL, 0, size);
}

void *opprof__calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    void *p = opprof__alloc(count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

void *opprof__realloc(void *ptr, size_t old_size, size_t new_size) {
    if (new_size == 0) new_size = 1;
    return g_allocator.realloc(g_allocator.ctx, ptr, old_size, new_size);
}

void opprof__dealloc(void *ptr, size_t size) {
    if (ptr) g_allocator.realloc(g_allocator.ctx, ptr, size, 0);
}

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
    void *p = opprof__realloc(*array, *capacity * elem, cap * elem);
    if (!p) return OPPROF_ENOMEM;
    *array = p;
    *capacity = cap;
    return 0;
}

/* Public strings: a size_t header before the text, so opprof_free knows the
 * size to hand to the allocator hook. */
char *opprof__public_string(const char *data, size_t len) {
    size_t total = sizeof(size_t) + len + 1;
    char *block = opprof__alloc(total);
    if (!block) return NULL;
    memcpy(block, &total, sizeof total);
    memcpy(block + sizeof(size_t), data, len);
    block[sizeof(size_t) + len] = '\0';
    return block + sizeof(size_t);
}

void opprof_free(void *ptr) {
    if (!ptr) return;
    char *block = (char *)ptr - sizeof(size_t);
    size_t total;
    memcpy(&total, block, sizeof total);
    opprof__dealloc(block, total);
}
