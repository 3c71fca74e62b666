/* grow.c - sql_grow: an array doubled as it fills, for every file of sql/. */
#include "sql.h"

#include <stdint.h>
#include <stdlib.h>

bool sql_grow(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return true;
    size_t c = *cap ? *cap : 16;
    while (c < need && c <= SIZE_MAX / 2) c *= 2;
    if (c < need || c > SIZE_MAX / size) return false;
    void *q = realloc(*p, c * size);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}
