/* sort.c - the one stable sort by a key: items of (key, index) in key
 * order, ties in index order (qsort is not stable; the index makes it so). */
#include "base/base.h"

#include <stdlib.h>

static int by_key_then_index(const void *a, const void *b) {
    const opprof__keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void opprof__sort_keyed(opprof__keyed *items, size_t n) {
    if (n > 1) qsort(items, n, sizeof *items, by_key_then_index);
}
