/* test_alloc.c - the library's default allocator (base/alloc.c), through its
 * own functions (linked from opprof_static): a block of 2 MiB and more is a
 * mapping of its own on a 2 MiB boundary (its huge pages whole), and every
 * way between the two kinds keeps the block's bytes: grown while big (its
 * pages moved), shrunk below (into the C library's), grown above again (out
 * of it), freed. Under AddressSanitizer or ThreadSanitizer every block is the
 * C library's (the sanitizer's checks kept): the bytes are checked the same. */
#include "check.h"

#include "base/base.h"
#include "../common/sized_alloc.h"

#include <stdint.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#endif

static const size_t MIB = (size_t)1 << 20;

/* Bytes across the block, a page apart and a little more, and its last. */
static size_t at(size_t k, size_t n) { return k < n / 4093 ? k * 4093 : n - 1; }

static void fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t k = 0; k <= n / 4093; k++) p[at(k, n)] = (unsigned char)(k * 31 + seed);
}

/* The first n bytes of a block that fill(p, n, seed) or a larger fill wrote. */
static bool same(const unsigned char *p, size_t n, unsigned seed) {
    for (size_t k = 0; k < n / 4093; k++)
        if (p[at(k, n)] != (unsigned char)(k * 31 + seed)) return false;
    return true;
}

/* The block's mapping on a 2 MiB boundary: the library's header (its size)
 * sits at the mapping's start. */
static bool on_huge_boundary(const void *block) { return ((uintptr_t)block - OPPROF__SIZED_HEADER) % (2 * MIB) == 0; }

TEST_CASE(big_blocks_keep_their_bytes_each_way) {
    unsigned char *p = opprof__alloc(3 * MIB);
    CHECK(p != NULL);
    if (!p) return;
#if !defined(SANITIZED)
    CHECK(on_huge_boundary(p));
#endif
    fill(p, 3 * MIB, 1);
    p = opprof__realloc(p, 9 * MIB); /* big to big: moved onto a new boundary, no copy */
    CHECK(p && same(p, 3 * MIB, 1));
#if !defined(SANITIZED)
    CHECK(p && on_huge_boundary(p));
#endif
    fill(p, 9 * MIB, 2);
    p = opprof__realloc(p, MIB / 2); /* big to the C library's */
    CHECK(p && same(p, MIB / 2, 2));
    fill(p, MIB / 2, 3);
    p = opprof__realloc(p, 5 * MIB); /* the C library's to big */
    CHECK(p && same(p, MIB / 2, 3));
    fill(p, 5 * MIB, 4);
    CHECK(same(p, 5 * MIB, 4));
    opprof__free(p);
    unsigned char *z = opprof__calloc(4, MIB); /* zero, as calloc's */
    CHECK(z && z[0] == 0 && z[4 * MIB - 1] == 0 && z[2 * MIB + 7] == 0);
    opprof__free(z);
}

/* Many big blocks at once, freed in another order: each its own. */
TEST_CASE(big_blocks_apart) {
    enum { N = 12 };
    unsigned char *b[N];
    for (int i = 0; i < N; i++) {
        size_t n = 2 * MIB + (size_t)i * 300000;
        b[i] = opprof__alloc(n);
        CHECK(b[i] != NULL);
        if (b[i]) fill(b[i], n, (unsigned)i);
    }
    for (int i = N - 1; i >= 0; i -= 2) opprof__free(b[i]), b[i] = NULL;
    for (int i = 0; i < N; i++)
        if (b[i]) CHECK(same(b[i], 2 * MIB + (size_t)i * 300000, (unsigned)i));
    for (int i = 0; i < N; i++) opprof__free(b[i]);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_alloc"); }
