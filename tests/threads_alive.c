/* threads_alive.c - a program that exits while its threads still record:
 * two threads begin and end ranges without end; main records a few steps into
 * OUTDIR (the trace-directory handler), frees its session and returns. Run by
 * .ci/run under valgrind with its default leak kinds: opprof's per-thread state
 * must not show as lost. */
#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <pthread.h>
#include <stdio.h>

static void *worker(void *arg) {
    (void)arg;
    for (;;) {
        OPPROF_SCOPE("worker_%d", 1);
        OPPROF_SCOPE("inner");
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: threads_alive OUTDIR\n");
        return 64;
    }
    opprof_trace_dir dir = {.dir = argv[1]};
    opprof_config cfg = opprof_config_default();
    cfg.schedule = (opprof_schedule){.wait = 1, .active = 2, .repeat = 1};
    cfg.on_trace_ready = opprof_trace_dir_handler;
    cfg.user_data = &dir;
    opprof_session *s;
    if (opprof_session_start(&s, &cfg)) return 1;
    pthread_t t;
    for (int i = 0; i < 2; i++) {
        if (pthread_create(&t, NULL, worker, NULL)) return 1;
        pthread_detach(t);
    }
    for (int step = 0; step < 4; step++) {
        OPPROF_SCOPE("step_%d", step);
        for (volatile int k = 0; k < 100000; k++) {}
        opprof_session_step(s);
    }
    opprof_session_free(s);
    puts("done");
    return 0; /* the workers still record */
}
