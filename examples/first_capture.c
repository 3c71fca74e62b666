/* first_capture.c - the README's first program against opprof: a session with
 * PyTorch's schedule, named ranges and operators, and the capture written as a
 * table, a Chrome trace and the HTML report when the schedule's window ends.
 *
 *   cc first_capture.c $(pkg-config --cflags --libs opprof) -o first_capture
 *   ./first_capture        (writes trace.json and report.html here) */
#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <stdio.h>

static float work[1 << 16];

static void run_model(void) {
    OPPROF_OP_SCOPE("my::scale");
    opprof_range_flops(sizeof work / sizeof work[0]);
    for (size_t i = 0; i < sizeof work / sizeof work[0]; i++)
        work[i] = work[i] * 0.5f + 1.0f;
}

static int save(const opprof_capture *cap, void *user) {
    (void)user;
    opprof_averages *avg;
    char *table;
    opprof_capture_averages(cap, &avg);
    opprof_table_options options = {.sort = OPPROF_SORT_SELF_CPU_TIME, .row_limit = 12};
    opprof_averages_table_to_string(avg, &options, &table);
    puts(table);
    opprof_capture_chrome_write(cap, "trace.json");
    opprof_capture_html_write(cap, "report.html");
    opprof_free(table);
    opprof_averages_free(avg);
    return 0;
}

int main(void) {
    opprof_config cfg = opprof_config_default();
    cfg.schedule = (opprof_schedule){.wait = 1, .warmup = 1, .active = 2, .repeat = 1};
    cfg.profile_memory = true;
    cfg.on_trace_ready = save;
    opprof_session *s;
    if (opprof_session_start(&s, &cfg) != 0)
        return 1;
    for (int step = 0; step < 6; step++) {
        {
            OPPROF_SCOPE("batch_%d", step); /* a range from here to the end of the block, */
            OPPROF_SCOPE("forward");        /* however it is left (break, continue, return) */
            run_model();
        }
        opprof_session_step(s);
    }
    opprof_session_free(s); /* stops, and saves a capture still being recorded */
    return 0;
}
