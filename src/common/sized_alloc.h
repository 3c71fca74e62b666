/* sized_alloc.h - blocks that keep their size, over an opprof_allocator hook.
 * Shared by opprof (src/opprof/alloc.c) and nn (src/nn/alloc.c), each with
 * its own hook: every block carries its size in a header of 16 bytes
 * (malloc's alignment kept) before the pointer handed out, so it is freed or
 * grown by its pointer alone and the hook is always told the size it gave. */
#ifndef OPPROF_SIZED_ALLOC_H
#define OPPROF_SIZED_ALLOC_H

#include <opprof/opprof.h>

#include <stdint.h>
#include <string.h>

enum { OPPROF__SIZED_HEADER = 16 };

/* A library's default hook, over the C allocator's realloc and free. */
#define OPPROF__DEFINE_DEFAULT_REALLOC(name, realloc_fn, free_fn)               \
    static void *name(void *ctx, void *ptr, size_t old_size, size_t new_size) { \
        (void)ctx;                                                              \
        (void)old_size;                                                         \
        if (new_size == 0) {                                                    \
            free_fn(ptr);                                                       \
            return NULL;                                                        \
        }                                                                       \
        return realloc_fn(ptr, new_size);                                       \
    }

static inline size_t opprof__sized_size(const void *ptr) {
    size_t size;
    memcpy(&size, (const char *)ptr - OPPROF__SIZED_HEADER, sizeof size);
    return size;
}

/* ptr NULL: a new block; size 0: one byte. NULL when the hook fails. */
static inline void *opprof__sized_realloc(const opprof_allocator *a, void *ptr, size_t size) {
    if (size == 0) size = 1;
    if (size > SIZE_MAX - OPPROF__SIZED_HEADER) return NULL;
    char *old = ptr ? (char *)ptr - OPPROF__SIZED_HEADER : NULL;
    size_t old_total = ptr ? opprof__sized_size(ptr) + OPPROF__SIZED_HEADER : 0;
    char *block = a->realloc(a->ctx, old, old_total, size + OPPROF__SIZED_HEADER);
    if (!block) return NULL;
    memcpy(block, &size, sizeof size);
    return block + OPPROF__SIZED_HEADER;
}

static inline void *opprof__sized_calloc(const opprof_allocator *a, size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    void *p = opprof__sized_realloc(a, NULL, count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

static inline void opprof__sized_free(const opprof_allocator *a, void *ptr) {
    if (ptr) a->realloc(a->ctx, (char *)ptr - OPPROF__SIZED_HEADER, opprof__sized_size(ptr) + OPPROF__SIZED_HEADER, 0);
}

#endif
