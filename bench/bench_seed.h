/* bench_seed.h - the seed's model, Linear(256, 512) > ReLU > Linear(512, 64)
 * on a batch of 128 (the guide's profile_cpu.py), for the benches that run
 * it in process; and their one way to give up, saying which bench and why. */
#ifndef OPPROF_BENCH_SEED_H
#define OPPROF_BENCH_SEED_H

#include <errno.h> /* program_invocation_short_name */
#include <stdio.h>
#include <stdlib.h>

#include <nn/nn.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>

enum { IN = 256, HIDDEN = 512, OUT = 64, BATCH = 128 };

static void die(const char *what, int rc) {
    fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what,
            rc < -4095 ? opprof_strerror(rc) : nn_strerror(rc));
    exit(1);
}

typedef struct model {
    nn_module *net;
    nn_tensor *x;
} model;

static model seed_model(void) {
    nn_manual_seed(7);
    nn_module *layers[3];
    model m;
    int rc = nn_linear_new(&layers[0], IN, HIDDEN);
    if (!rc) rc = nn_relu_new(&layers[1]);
    if (!rc) rc = nn_linear_new(&layers[2], HIDDEN, OUT);
    if (!rc) rc = nn_sequential_new(&m.net, layers, 3);
    if (!rc) rc = nn_tensor_randn(&m.x, 2, (int64_t[]){BATCH, IN});
    if (rc) die("model", rc);
    return m;
}

static void forward(const model *m) {
    nn_tensor *y;
    int rc = nn_module_forward(m->net, m->x, &y);
    if (rc) die("forward", rc);
    nn_tensor_free(y);
}

/* One step recorded as a capture of its own: a session of one forward. */
static inline opprof_capture *one_step(const model *m) {
    opprof_config cfg = opprof_config_default();
    opprof_session *s;
    opprof_capture *c = NULL;
    int rc = opprof_session_start(&s, &cfg);
    if (rc) die("session", rc);
    forward(m);
    rc = opprof_session_stop(s);
    if (!rc) rc = opprof_session_take_capture(s, &c);
    if (rc) die("capture", rc);
    opprof_session_free(s);
    return c;
}

#endif
