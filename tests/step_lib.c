/* step_lib.c - libstep_lib.so: the function that step_target calls once an
 * iteration, from another object (through its PLT), as llama-cli calls
 * llama_decode. Knows nothing of opprof. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

__attribute__((visibility("default"))) double step_work(int iteration, double x, int slow_ms) {
    double acc = x;
    for (int i = 0; i < 20000; i++) acc = acc * 1.0000001 + (double)(iteration % 7) * 1e-9;
    if (slow_ms > 0) {
        struct timespec ts = {0, (long)slow_ms * 1000000L};
        nanosleep(&ts, 0);
    }
    return acc;
}
