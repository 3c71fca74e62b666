/* fuzz_reader.c - libFuzzer target: any bytes into the trace reader, with
 * the checks on. It must return an error or a capture; never crash, hang,
 * leak or read out of bounds (built with ASan and UBSan by `make fuzz`). */
#include <opprof/capture.h>

#include <stddef.h>
#include <stdint.h>

static void ignore(void *ctx, const opprof_trace_problem *p) {
    (void)ctx;
    (void)p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    opprof_read_options opt = {.on_problem = ignore, .max_string = 4096, .max_depth = 32};
    opprof_capture *c = NULL;
    opprof_read_error err;
    if (opprof_capture_read_buffer(data, size, &opt, &c, &err) == 0) {
        opprof_averages *avg;
        char *text = NULL;
        if (opprof_capture_averages(c, &avg) == 0) {
            opprof_averages_table(avg, OPPROF_SORT_SELF_CPU_TIME, 20, &text);
            opprof_free(text);
            opprof_averages_free(avg);
        }
        opprof_capture_free(c);
    }
    return 0;
}
