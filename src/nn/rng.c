/* rng.c - the process generator: xoshiro256** seeded through splitmix64;
 * normals by the Box-Muller transform. Deterministic for a given seed. */
#include "internal.h"

#include <math.h>
#include <pthread.h>

static uint64_t g_state[4];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_seeded;

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void seed_locked(uint64_t seed) {
    for (int i = 0; i < 4; i++) g_state[i] = splitmix64(&seed);
    g_seeded = 1;
}

void nn_manual_seed(uint64_t seed) {
    pthread_mutex_lock(&g_lock);
    seed_locked(seed);
    pthread_mutex_unlock(&g_lock);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t nn__rng_next(void) {
    pthread_mutex_lock(&g_lock);
    if (!g_seeded) seed_locked(0);
    uint64_t *s = g_state;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    pthread_mutex_unlock(&g_lock);
    return result;
}

double nn__rng_uniform(void) { return (double)(nn__rng_next() >> 11) * 0x1.0p-53; }
