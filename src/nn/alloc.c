/* alloc.c - tensor storage: 64-byte aligned buffers, reference-counted,
 * reported to the profiler as allocations and frees. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static int64_t g_allocated; /* atomic */
static int64_t g_peak;      /* atomic */

int64_t nn_memory_allocated(void) { return __atomic_load_n(&g_allocated, __ATOMIC_RELAXED); }
int64_t nn_memory_peak(void) { return __atomic_load_n(&g_peak, __ATOMIC_RELAXED); }

nn_storage *nn__storage_new(size_t bytes) {
    nn_storage *s = malloc(sizeof *s);
    if (!s) return NULL;
    size_t rounded = (bytes + 63) & ~(size_t)63;
    s->data = aligned_alloc(64, rounded ? rounded : 64);
    if (!s->data) {
        free(s);
        return NULL;
    }
    s->bytes = bytes;
    s->refcount = 1;
    int64_t now = __atomic_add_fetch(&g_allocated, (int64_t)bytes, __ATOMIC_RELAXED);
    int64_t peak = __atomic_load_n(&g_peak, __ATOMIC_RELAXED);
    while (now > peak &&
           !__atomic_compare_exchange_n(&g_peak, &peak, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    opprof_record_memory(s->data, (int64_t)bytes, now);
    return s;
}

void nn__storage_retain(nn_storage *s) { __atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED); }

void nn__storage_release(nn_storage *s) {
    if (!s || __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    int64_t now = __atomic_sub_fetch(&g_allocated, (int64_t)s->bytes, __ATOMIC_RELAXED);
    opprof_record_memory(s->data, -(int64_t)s->bytes, now);
    free(s->data);
    free(s);
}

const char *nn_strerror(int code) {
    switch (code) {
#define NN__ERR_TEXT(name, value, text) \
    case (value):                        \
        return text;
        NN_ERRNO_MAP(NN__ERR_TEXT)
#undef NN__ERR_TEXT
    case 0:
        return "success";
    default:
        break;
    }
    if (code < 0 && code > -4096) return strerror(-code);
    return "unknown error";
}
