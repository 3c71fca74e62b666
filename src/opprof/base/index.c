/* index.c - the one hash table of opprof: open addressing (linear probing)
 * over slots that hold an item's index + 1 (0: empty); the items stay in the
 * caller's own array, so a table costs 4 bytes a slot and never copies them.
 * It is kept at most half full. Used by the capture's names, call sites and
 * input shapes, the reader's threads, string ids and process labels, key
 * averages' groups and the stack tree's nodes; tables of strings through
 * opprof__index_text_hash and _equal. */
#include "base/base.h"

int opprof__index_reserve(opprof__index *ix, size_t count, opprof__index_hash_fn hash_of, const void *ctx) {
    if ((count + 1) * 2 <= ix->size) return 0;
    size_t size = ix->size ? ix->size * 2 : 64;
    while ((count + 1) * 2 > size) size *= 2;
    uint32_t *slots = opprof__calloc(size, sizeof *slots);
    if (!slots) return OPPROF_ENOMEM;
    for (size_t i = 0; i < count; i++) {
        size_t k = hash_of(ctx, (uint32_t)i) & (size - 1);
        while (slots[k]) k = (k + 1) & (size - 1);
        slots[k] = (uint32_t)i + 1;
    }
    opprof__index_free(ix);
    ix->slots = slots;
    ix->size = size;
    OPPROF__ASSERT((count + 1) * 2 <= ix->size); /* at most half full: every probe ends at an empty slot */
    return 0;
}

void opprof__index_free(opprof__index *ix) {
    opprof__free(ix->slots);
    ix->slots = NULL;
    ix->size = 0;
}

uint64_t opprof__index_text_hash(const void *strings, uint32_t item) {
    const char *s = ((char *const *)strings)[item];
    return opprof__hash_bytes(s, strlen(s));
}

bool opprof__index_text_equal(const void *strings, uint32_t item, const void *key) {
    const opprof__index_text *k = key;
    const char *have = ((char *const *)strings)[item];
    return strncmp(have, k->s, k->len) == 0 && have[k->len] == '\0';
}
