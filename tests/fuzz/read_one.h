/* read_one.h - one input through the trace reader with the checks on, and
 * the analysis, folded stacks, HTML report and HTML diff (against itself) of
 * what it read: shared by the fuzzer and the corpus test. */
#ifndef OPPROF_TESTS_READ_ONE_H
#define OPPROF_TESTS_READ_ONE_H

#include <opprof/capture.h>

#include <stddef.h>
#include <stdint.h>

static void read_one_ignore(void *ctx, const opprof_trace_problem *p) {
    (void)ctx;
    (void)p;
}

/* 0 when the input read as a trace, else the reader's error code. */
static int read_one(const uint8_t *data, size_t size, opprof_read_error *err) {
    opprof_read_options opt = {.on_problem = read_one_ignore, .max_string = 4096, .max_depth = 32};
    opprof_capture *c = NULL;
    int rc = opprof_capture_read_buffer(data, size, &opt, &c, err);
    if (rc == 0) {
        opprof_averages *avg;
        char *text = NULL;
        if (opprof_capture_averages(c, &avg) == 0) {
            opprof_averages_table_to_string(avg,
                    &(opprof_table_options){.sort = OPPROF_SORT_SELF_CPU_TIME, .row_limit = 20}, &text);
            opprof_free(text);
            opprof_averages_free(avg);
        }
        text = NULL;
        opprof_capture_stacks_to_string(c, OPPROF_STACKS_SELF_TIME, &text); /* hostile names and nesting */
        opprof_free(text);
        text = NULL;
        opprof_capture_html_to_string(c, &text);
        opprof_free(text);
        text = NULL;
        opprof_capture_diff_to_string(c, c, 20, OPPROF_DIFF_HTML, &text);
        opprof_free(text);
        opprof_capture_free(c);
    }
    return rc;
}

#endif
