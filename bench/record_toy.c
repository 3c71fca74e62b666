/* record_toy - the program bench_record profiles without changing it: built
 * with -finstrument-functions, it makes a known number of function calls or
 * allocations.
 *   bench_record_toy calls N    N x mid(), each calling leaf() twice: 3N functions
 *   bench_record_toy mallocs N  N x malloc(64) + free */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;

__attribute__((noinline)) static long leaf(long x) { return sink += x; }
__attribute__((noinline)) static long mid(long x) { return leaf(x) + leaf(x + 1); }

int main(int argc, char **argv) {
    if (argc != 3) return 64;
    long n = atol(argv[2]);
    if (strcmp(argv[1], "calls") == 0) {
        for (long i = 0; i < n; i++) mid(i);
    } else {
        for (long i = 0; i < n; i++) {
            void *volatile p = malloc(64);
            free(p);
        }
    }
    return (int)(sink & 0);
}
