/* test_control_flow.c - the recording macros leave C's control flow alone.
 *
 * Each function below runs a loop with break, continue, return, goto and an
 * if/else around profiled code, and logs what ran. The same loop without any
 * macro is the reference. Built twice (CMake): with OPPROF_ENABLE=1, where it
 * runs with no session, inside a recording window and outside one, and with
 * OPPROF_ENABLE=0; both with -Wall -Wextra -Werror, so a compiled-out macro
 * that left an argument unused, or evaluated one, fails the build or a check.
 */
#include "check.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>

typedef struct trail {
    char log[256];
    int evaluated; /* arguments of compiled-out macros must never be evaluated */
} trail;

static void mark(trail *t, char c) {
    size_t n = strlen(t->log);
    if (n + 1 < sizeof t->log) t->log[n] = c, t->log[n + 1] = '\0';
}

static int count(trail *t) { return ++t->evaluated; }

/* ---- the reference: plain C ---- */
static int plain(trail *t, int flag) {
    for (int i = 0; i < 6; i++) {
        {
            if (i == 1) continue;
            if (i == 4) break;
            mark(t, (char)('0' + i));
        }
        mark(t, '.');
    }
    if (flag)
        mark(t, 'y');
    else
        mark(t, 'n');
    for (int i = 0; i < 3; i++) {
        if (i == 2) goto out;
        mark(t, 'g');
    }
out:
    for (int i = 0; i < 5; i++) {
        if (i == 3) return 7;
        mark(t, 'r');
    }
    return 0;
}

/* ---- the same, profiled with every macro form ---- */
static int profiled(trail *t, int flag, int layer) {
    for (int i = 0; i < 6; i++) {
        {
            OPPROF_SCOPE("iter_%d", count(t) + layer);
            if (i == 1) continue;
            OPPROF_OP_SCOPE("op");
            if (i == 4) break;
            mark(t, (char)('0' + i));
        }
        mark(t, '.');
    }
    opprof_range explicit_range = OPPROF_BEGIN("explicit_%d", count(t));
    if (flag)
        mark(t, 'y');
    else
        mark(t, 'n');
    OPPROF_END(explicit_range);
    for (int i = 0; i < 3; i++) {
        OPPROF_SCOPE("goto");
        if (i == 2) goto out;
        mark(t, 'g');
    }
out:
    for (int i = 0; i < 5; i++) {
        OPPROF_SCOPE("return");
        OPPROF_MEMORY(t, 16, count(t));
        if (i == 3) return 7;
        mark(t, 'r');
    }
    return 0;
}

static size_t captured_events = (size_t)-1;
static int keep_count(const opprof_capture *cap, void *user) {
    (void)user;
    opprof_capture_events(cap, &captured_events);
    return 0;
}

/* Runs both forms for flag 0 and 1; the logs and results must match. */
static void compare(const char *when) {
    for (int flag = 0; flag <= 1; flag++) {
        trail a = {{0}, 0}, b = {{0}, 0};
        int ra = plain(&a, flag), rb = profiled(&b, flag, 3);
        if (strcmp(a.log, b.log) != 0 || ra != rb)
            fprintf(stderr, "%s, flag %d: plain \"%s\" -> %d, profiled \"%s\" -> %d\n", when, flag, a.log, ra, b.log,
                    rb);
        CHECK_STR(b.log, a.log);
        CHECK_INT(rb, ra);
        CHECK_STR(a.log, flag ? "0.2.3.yggrrr" : "0.2.3.nggrrr");
#if !OPPROF_ENABLE
        CHECK_INT(b.evaluated, 0);
#endif
    }
}

TEST_CASE(control_flow_around_the_macros) {
    compare("no session");

    opprof_config cfg = opprof_config_default();
    cfg.record_steps = false;
    cfg.profile_memory = true;
    cfg.on_trace_ready = keep_count;
    cfg.schedule = (opprof_schedule){.wait = 1, .active = 1, .repeat = 1};
    opprof_session *s;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    compare("outside the window");
    CHECK_INT(opprof_session_step(s), 0);
    compare("recording");
    CHECK_INT(opprof_session_step(s), 0);
    opprof_session_free(s);
#if OPPROF_ENABLE
    /* Per flag: 5 iter + 4 op + 1 explicit + 3 goto + 4 return ranges. */
    CHECK_INT(captured_events, 2 * 17);
#else
    CHECK_INT(captured_events, 0);
#endif
}

int main(int argc, char **argv) {
    return check_main(argc, argv, OPPROF_ENABLE ? "test_control_flow" : "test_control_flow_disabled");
}
