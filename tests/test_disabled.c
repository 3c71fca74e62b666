/* test_disabled.c - OPPROF_ENABLE=0 compiles every macro out: bodies run,
 * nothing is recorded even while a session is active. */
#define OPPROF_ENABLE 0
#include "check.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>

static int events = -1, memory_events = -1;

static int on_ready(const opprof_capture *cap, void *user) {
    (void)user;
    size_t n;
    opprof_capture_events(cap, &n);
    events = (int)n;
    opprof_capture_memory_events(cap, &n);
    memory_events = (int)n;
    return 0;
}

TEST_CASE(macros_compile_to_nothing) {
    opprof_config cfg = opprof_config_default();
    cfg.on_trace_ready = on_ready;
    cfg.record_steps = false;
    cfg.profile_memory = true;
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    int ran = 0;
    {
        OPPROF_SCOPE("a");
        ran++;
    }
    {
        OPPROF_SCOPE("b_%d", 3);
        ran++;
    }
    {
        OPPROF_OP_SCOPE("op");
        ran++;
    }
    {
        OPPROF_SCOPE("scope");
        ran++;
    }
    opprof_range r = OPPROF_BEGIN("x");
    OPPROF_END(r);
    CHECK(r == 0);
    OPPROF_MEMORY(&ran, 64, -1);
    opprof_session_free(s);
    CHECK_INT(ran, 4);
    CHECK_INT(events, 0);
    CHECK_INT(memory_events, 0);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_disabled"); }
