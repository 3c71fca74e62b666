/* instrumented_engine.c - an engine built with -finstrument-functions that
 * uses opprof's macros too, for test_instrumented: per token a "token"
 * range, forward() (a function), 3 "nn::layer" operators (ranges with an
 * argument and FLOPs) each calling matmul() twice; a counter and an instant
 * per token. Its functions and its ranges must make one tree: opprof's own
 * inline helpers are never instrumented. */
#include <opprof/opprof.h>

#include <stdio.h>

enum { TOKENS = 8, LAYERS = 3 };

static volatile double sink;

static __attribute__((noinline)) void matmul(int n) {
    for (int i = 0; i < n; i++) sink += i * 0.5;
}

static __attribute__((noinline)) void layer(int l) {
    OPPROF_OP_SCOPE("nn::layer");
    opprof_range_arg_int("layer", l);
    opprof_range_flops(2 * 64 * 64);
    matmul(64);
    matmul(64);
}

static __attribute__((noinline)) void forward(void) {
    for (int l = 0; l < LAYERS; l++) layer(l);
}

int main(void) {
    for (int t = 0; t < TOKENS; t++) {
        OPPROF_SCOPE("token");
        forward();
        OPPROF_COUNTER("tokens", t + 1);
        OPPROF_INSTANT("token done");
    }
    printf("done %d\n", TOKENS);
    return 0;
}
