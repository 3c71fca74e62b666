/* test_schedule.c - the schedule's actions and the session's transitions. */
#include "check.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>

static const char *actions(opprof_schedule s, int n, char *buf, size_t size) {
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *name = opprof_action_name(opprof_schedule_action(&s, i));
        strncat(buf, i ? " " : "", size - strlen(buf) - 1);
        strncat(buf, name, size - strlen(buf) - 1);
    }
    return buf;
}

typedef struct seen {
    int calls;
    long long steps[8];
    int names_ok;
    int fail_with;
} seen;

static int on_ready(const opprof_capture *cap, void *user) {
    seen *s = user;
    opprof_capture_info info = opprof_capture_get_info(cap);
    if (s->calls < 8) s->steps[s->calls] = info.step_num;
    s->calls++;
    return s->fail_with;
}

TEST_CASE(profile_cpu_schedule) {
    char buf[512];
    /* The seed's schedule over six steps. */
    CHECK_STR(actions((opprof_schedule){.wait = 1, .warmup = 1, .active = 2, .repeat = 1}, 6, buf, sizeof buf),
              "NONE WARMUP RECORD RECORD_AND_SAVE NONE NONE");
    /* skip_first shifts everything. */
    CHECK_STR(actions((opprof_schedule){.skip_first = 2, .wait = 1, .warmup = 1, .active = 2, .repeat = 1}, 8, buf,
                      sizeof buf),
              "NONE NONE NONE WARMUP RECORD RECORD_AND_SAVE NONE NONE");
    /* repeat = 0 repeats forever. */
    CHECK_STR(actions((opprof_schedule){.wait = 1, .warmup = 0, .active = 1, .repeat = 0}, 6, buf, sizeof buf),
              "NONE RECORD_AND_SAVE NONE RECORD_AND_SAVE NONE RECORD_AND_SAVE");
    /* repeat = 2 stops after two cycles. */
    CHECK_STR(actions((opprof_schedule){.wait = 0, .warmup = 1, .active = 1, .repeat = 2}, 6, buf, sizeof buf),
              "WARMUP RECORD_AND_SAVE WARMUP RECORD_AND_SAVE NONE NONE");
    /* active = 3: RECORD RECORD RECORD_AND_SAVE. */
    CHECK_STR(actions((opprof_schedule){.active = 3, .repeat = 1}, 4, buf, sizeof buf),
              "RECORD RECORD RECORD_AND_SAVE NONE");
    /* The all-zero schedule records every step. */
    CHECK_STR(actions((opprof_schedule){0}, 3, buf, sizeof buf), "RECORD RECORD RECORD");
}

TEST_CASE(validation) {
    /* Validation. */
    CHECK_INT(opprof_schedule_check(&(opprof_schedule){.wait = 1, .warmup = 1, .active = 0}), OPPROF_ESCHEDULE);
    CHECK_INT(opprof_schedule_check(&(opprof_schedule){.active = -1}), OPPROF_EINVAL);
    CHECK_INT(opprof_schedule_check(&(opprof_schedule){.wait = 1, .active = 1}), 0);
    CHECK_INT(opprof_schedule_check(&(opprof_schedule){0}), 0);
    CHECK_STR(opprof_strerror(OPPROF_ESCHEDULE), "invalid schedule: active must be at least 1");
    CHECK_STR(opprof_err_name(OPPROF_ESCHEDULE), "OPPROF_ESCHEDULE");
}

TEST_CASE(session_refuses_bad_schedule) {
    /* A session refuses active = 0 with a clear error and starts nothing. */
    opprof_config cfg = opprof_config_default();
    cfg.schedule = (opprof_schedule){.wait = 1, .warmup = 1, .active = 0, .repeat = 1};
    opprof_session *s = (opprof_session *)1;
    CHECK_INT(opprof_session_start(&s, &cfg), OPPROF_ESCHEDULE);
    CHECK(s == NULL);
    CHECK(!opprof_is_active());

    /* The seed's transitions: one callback, inside the 4th step, step_num 4. */
    seen got = {0};
    cfg.schedule = (opprof_schedule){.wait = 1, .warmup = 1, .active = 2, .repeat = 1};
    cfg.on_trace_ready = on_ready;
    cfg.user_data = &got;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    int calls_after[6];
    for (int i = 0; i < 6; i++) {
        CHECK_INT(opprof_session_step(s), 0);
        calls_after[i] = got.calls;
    }
    CHECK_INT(calls_after[2], 0);
    CHECK_INT(calls_after[3], 1);
    CHECK_INT(calls_after[5], 1);
    CHECK_INT(got.steps[0], 4);
    /* A second session while one is active is refused. */
    opprof_session *other = NULL;
    CHECK_INT(opprof_session_start(&other, &cfg), OPPROF_EACTIVE);
    CHECK_INT(opprof_session_stop(s), 0);
    CHECK_INT(got.calls, 1);
    CHECK_INT(opprof_session_stop(s), OPPROF_ESTOPPED);
    CHECK_INT(opprof_session_step(s), OPPROF_ESTOPPED);
    opprof_session_free(s);

    /* repeat = 0 with active = 1: a capture every cycle; stop while recording saves too. */
    got = (seen){0};
    cfg.schedule = (opprof_schedule){.wait = 1, .active = 1, .repeat = 0};
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    for (int i = 0; i < 6; i++) opprof_session_step(s);
    CHECK_INT(got.calls, 3);
    CHECK_INT(got.steps[0], 2);
    CHECK_INT(got.steps[1], 4);
    CHECK_INT(got.steps[2], 6);
    opprof_session_free(s); /* step 6 is NONE: no capture at stop */
    CHECK_INT(got.calls, 3);

    /* Leaving while RECORD saves a capture at stop. */
    got = (seen){0};
    cfg.schedule = (opprof_schedule){.active = 3, .repeat = 1};
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    opprof_session_step(s); /* step 1: RECORD */
    CHECK_INT(got.calls, 0);
    CHECK_INT(opprof_session_stop(s), 0);
    CHECK_INT(got.calls, 1);
    CHECK_INT(got.steps[0], 1);
    opprof_session_free(s);

    /* No schedule: one capture at stop. */
    got = (seen){0};
    cfg.schedule = (opprof_schedule){0};
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    for (int i = 0; i < 5; i++) opprof_session_step(s);
    CHECK_INT(got.calls, 0);
    opprof_session_free(s);
    CHECK_INT(got.calls, 1);

    /* A failing callback: step returns OPPROF_ECALLBACK, the session goes on. */
    got = (seen){.fail_with = -1};
    cfg.schedule = (opprof_schedule){.active = 1, .repeat = 2};
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    CHECK_INT(opprof_session_step(s), OPPROF_ECALLBACK);
    CHECK_INT(opprof_session_step(s), OPPROF_ECALLBACK);
    CHECK_INT(got.calls, 2);
    opprof_session_free(s);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_schedule"); }
