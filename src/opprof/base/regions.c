/* base/regions.c - blocks of pages that fault in as they are used (a
 * thread's state, a stream's first chunk), carved from large reserved
 * regions rather than mapped one by one.
 *
 * One mapping per block cost the process a mapping per thread and per
 * stream: the kernel did not merge them, and past vm.max_map_count (65,530
 * by default) every mmap failed, the capture's own arrays included, so a
 * program with 70,000 threads lost its whole capture. A region is one
 * mapping of REGION_BYTES reserved without commitment (MAP_NORESERVE): its
 * pages cost nothing until written. A block given back has its pages
 * returned to the system (MADV_DONTNEED) and waits on a free list of its
 * length for the next taker; a region is never unmapped.
 *
 * Reserved address space still counts against the program's RLIMIT_AS
 * (`ulimit -v`): a first region of 1 GiB made a program under a limit of
 * 400 MB lose its capture, and one under 1.2 GB fail a malloc of 300 MB
 * that succeeded without opprof. The first region is FIRST_REGION_BYTES,
 * each next one twice the last, up to REGION_BYTES: what opprof reserves
 * stays within twice what it uses, and 70,000 threads' blocks still take a
 * few dozen mappings. */
#define _GNU_SOURCE
#include "base/base.h"

#include <pthread.h>
#include <sys/mman.h>

enum { FIRST_REGION_BYTES = 16 << 20, REGION_BYTES = 1 << 30, LENGTHS = 8 };

typedef struct free_block {
    struct free_block *next;
} free_block;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char *g_next, *g_end;                       /* the unused part of the current region */
static size_t g_region_bytes = FIRST_REGION_BYTES; /* the next region's */
static struct {
    size_t length;
    free_block *head;
} g_free[LENGTHS];

static free_block **free_list_of(size_t length) {
    for (size_t i = 0; i < LENGTHS; i++) {
        if (g_free[i].length == length) return &g_free[i].head;
        if (g_free[i].length == 0) {
            g_free[i].length = length;
            return &g_free[i].head;
        }
    }
    return NULL;
}

static char *carve_locked(size_t length) {
    if ((size_t)(g_end - g_next) < length) {
        size_t bytes = length > g_region_bytes ? length : g_region_bytes;
        char *r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (r == MAP_FAILED) return NULL;
        if (g_region_bytes < REGION_BYTES) g_region_bytes *= 2;
        madvise(r, bytes, MADV_NOHUGEPAGE);
        g_next = r;
        g_end = r + bytes;
    }
    char *p = g_next;
    g_next += length;
    return p;
}

void *opprof__region_take(size_t length) {
    pthread_mutex_lock(&g_lock);
    free_block **list = free_list_of(length);
    char *p;
    if (list && *list) {
        p = (char *)*list;
        *list = (*list)->next;
        ((free_block *)p)->next = NULL; /* as zero as a fresh page */
    } else {
        p = carve_locked(length);
    }
    pthread_mutex_unlock(&g_lock);
    return p;
}

void opprof__region_give(void *block, size_t length) {
    madvise(block, length, MADV_DONTNEED); /* its pages read as zero from now on */
    pthread_mutex_lock(&g_lock);
    free_block **list = free_list_of(length);
    if (list) {
        ((free_block *)block)->next = *list;
        *list = block;
    } else {
        /* a ninth length: never seen (the recorder's blocks have five) */
        munmap(block, length);
    }
    pthread_mutex_unlock(&g_lock);
}
