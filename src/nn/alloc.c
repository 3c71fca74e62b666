/* alloc.c - tensor storage: 64-byte aligned buffers, reference-counted,
 * reported to the profiler as allocations and frees. */
#include "internal.h"

#include "../common/error_text.h"
#include "../common/sized_alloc.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- the allocator hook (the same shape as opprof's) ---- */

OPPROF__DEFINE_DEFAULT_REALLOC(default_realloc, realloc, free)

static opprof_allocator g_allocator = {default_realloc, NULL};

int nn_set_allocator(const opprof_allocator *allocator) {
    if (allocator && !allocator->realloc) return NN_EINVAL;
    g_allocator = allocator ? *allocator : (opprof_allocator){default_realloc, NULL};
    return 0;
}

/* Blocks keep their size (sized_alloc.h): freed by their pointer alone. */
void *nn__alloc(size_t size) { return opprof__sized_realloc(&g_allocator, NULL, size); }
void *nn__calloc(size_t count, size_t size) { return opprof__sized_calloc(&g_allocator, count, size); }
void nn__free(void *ptr) { opprof__sized_free(&g_allocator, ptr); }

/* 64-byte aligned blocks through the hook: over-allocate, keep the raw
 * pointer just before the aligned address. */
static void *alloc_aligned(size_t size) {
    size_t total = size + 64 + sizeof(void *);
    char *raw = nn__alloc(total);
    if (!raw) return NULL;
    uintptr_t aligned = ((uintptr_t)raw + sizeof(void *) + 63) & ~(uintptr_t)63;
    memcpy((char *)aligned - sizeof(void *), &raw, sizeof raw);
    return (void *)aligned;
}

static void free_aligned(void *ptr) {
    if (!ptr) return;
    char *raw;
    memcpy(&raw, (char *)ptr - sizeof(void *), sizeof raw);
    nn__free(raw);
}

static int64_t g_allocated; /* atomic */
static int64_t g_peak;      /* atomic */

int64_t nn_memory_allocated(void) { return __atomic_load_n(&g_allocated, __ATOMIC_RELAXED); }
int64_t nn_memory_peak(void) { return __atomic_load_n(&g_peak, __ATOMIC_RELAXED); }

/* A cache of freed buffers by size: an inference loop allocates the same
 * sizes every pass, and fresh large blocks cost page faults (measured: the
 * seed's ReLU took 124 us a call on fresh mmap'd memory, 11 us from the
 * cache). The profiler still sees every allocation and free. */
enum { CACHE_SLOTS = 64 };
static const size_t CACHE_MAX_BYTES = (size_t)256 << 20;
static struct {
    pthread_mutex_t lock;
    size_t bytes;
    size_t count;
    struct cached {
        size_t size;
        float *data;
    } slots[CACHE_SLOTS];
} g_cache = {PTHREAD_MUTEX_INITIALIZER, 0, 0, {{0, NULL}}};

void nn_release_cached_memory(void) {
    pthread_mutex_lock(&g_cache.lock);
    while (g_cache.count) {
        struct cached c = g_cache.slots[--g_cache.count];
        free_aligned(c.data);
    }
    g_cache.bytes = 0;
    pthread_mutex_unlock(&g_cache.lock);
}

static float *buffer_get(size_t size) {
    pthread_mutex_lock(&g_cache.lock);
    for (size_t after = g_cache.count; after > 0; after--) { /* last first */
        size_t i = after - 1;
        if (g_cache.slots[i].size == size) {
            float *data = g_cache.slots[i].data;
            g_cache.slots[i] = g_cache.slots[--g_cache.count];
            g_cache.bytes -= size;
            pthread_mutex_unlock(&g_cache.lock);
            return data;
        }
    }
    pthread_mutex_unlock(&g_cache.lock);
    return alloc_aligned(size);
}

static void buffer_put(float *data, size_t size) {
    pthread_mutex_lock(&g_cache.lock);
    if (g_cache.count < CACHE_SLOTS && g_cache.bytes + size <= CACHE_MAX_BYTES) {
        g_cache.slots[g_cache.count++] = (struct cached){size, data};
        g_cache.bytes += size;
        data = NULL;
    }
    pthread_mutex_unlock(&g_cache.lock);
    if (data) free_aligned(data);
}

nn_storage *nn__storage_new(size_t bytes) {
    nn_storage *s = nn__alloc(sizeof *s);
    if (!s) return NULL;
    size_t rounded = (bytes + 63) & ~(size_t)63;
    s->capacity = rounded ? rounded : 64;
    s->data = buffer_get(s->capacity);
    if (!s->data) {
        nn__free(s);
        return NULL;
    }
    s->bytes = bytes;
    s->refcount = 1;
    int64_t now = __atomic_add_fetch(&g_allocated, (int64_t)bytes, __ATOMIC_RELAXED);
    int64_t peak = __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
    while (now > peak && !__atomic_compare_exchange_n(&g_peak, &peak, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    OPPROF_MEMORY(s->data, (int64_t)bytes, now);
    return s;
}

void nn__storage_retain(nn_storage *s) { __atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED); }

void nn__storage_release(nn_storage *s) {
    if (!s || __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    int64_t now = __atomic_sub_fetch(&g_allocated, (int64_t)s->bytes, __ATOMIC_RELAXED);
    OPPROF_MEMORY(s->data, -(int64_t)s->bytes, now);
    buffer_put(s->data, s->capacity);
    nn__free(s);
}

COMMON_DEFINE_STRERROR(nn_strerror, NN_ERRNO_MAP)
