/* test_decimal_comma.c - the library's text is C's whatever locale the
 * program set. A program that calls setlocale(LC_ALL, "") under a de_DE or
 * fr_FR user makes printf's decimal point a comma in the whole process: the
 * diff, stat-diff, roofline, HTML, machine, timer and ranks texts said "12,50",
 * and the parsers of a what-if change, a gate, a flight trigger and a
 * machine profile read "1.5" as 1. Each text written under de_DE (compiled
 * here by localedef) is byte for byte the one written under C, and each
 * parser reads the fraction; the program's own printf keeps its comma. */
#include "check.h"
#include "testutil.h"

#include <locale.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <opprof/timer.h>

static char dir[256];

/* Two steps of "op" under a pool-less thread, times with fractions of a microsecond. */
static const char TRACE_BEFORE[] =
    "{\"traceEvents\": ["
    "{\"ph\":\"X\",\"name\":\"ProfilerStep#0\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":100.5},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":20.25,"
    "\"args\":{\"Input Dims\":[[64],[32,128],[128,64],[],[]],\"Input type\":[\"float\",\"float\",\"float\","
    "\"Scalar\",\"Scalar\"]}},"
    "{\"ph\":\"X\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":110.5},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":210,\"dur\":22.75,"
    "\"args\":{\"Input Dims\":[[64],[32,128],[128,64],[],[]],\"Input type\":[\"float\",\"float\",\"float\","
    "\"Scalar\",\"Scalar\"]}}]}";
static const char TRACE_AFTER[] =
    "{\"traceEvents\": ["
    "{\"ph\":\"X\",\"name\":\"ProfilerStep#0\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":90.5},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":12.5},"
    "{\"ph\":\"X\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":200,\"dur\":95.5},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":210,\"dur\":13.75}]}";

static const char MACHINE[] = "{\"cpu\": \"Test CPU\", \"isa\": \"AVX2\", \"threads\": 1, \"by_threads\": [\n"
                              " {\"threads\": 1, \"fma_peak_gflops\": 100.5, \"levels\": [\n"
                              "  {\"name\": \"L1\", \"bytes\": 32768, \"load_gbs\": 200.25, \"copy_gbs\": 100.5},\n"
                              "  {\"name\": \"L2\", \"bytes\": 1048576, \"load_gbs\": 100.5, \"copy_gbs\": 80.5},\n"
                              "  {\"name\": \"LLC\", \"bytes\": 33554432, \"load_gbs\": 50.5, \"copy_gbs\": 40.5},\n"
                              "  {\"name\": \"DRAM\", \"bytes\": 0, \"load_gbs\": 20.5, \"copy_gbs\": 10.5}]}]}\n";

enum { TEXTS = 12 };

typedef struct inputs {
    opprof_capture *before, *after;
    opprof_machine machine;
    opprof_measurement *timings[2];
} inputs;

/* Every text of the library that these inputs give, in the locale set now. */
static void texts_of(const inputs *in, char *out[TEXTS]) {
    memset(out, 0, TEXTS * sizeof *out);
    CHECK_INT(opprof_capture_diff_to_string(in->before, in->after, 0, OPPROF_DIFF_TEXT, &out[0]), 0);
    opprof_diff_options json = {0, OPPROF_DIFF_JSON, OPPROF_DIFF_MATCH_AUTO};
    CHECK_INT(opprof_capture_diff_to_string_ex(in->before, in->after, &json, &out[1]), 0);
    opprof_stat_diff *d = NULL;
    const opprof_capture *b[1] = {in->before}, *a[1] = {in->after};
    CHECK_INT(opprof_stat_diff_new(b, 1, a, 1, NULL, &d), 0);
    if (d) CHECK_INT(opprof_stat_diff_to_string(d, 0, OPPROF_DIFF_TEXT, &out[2]), 0);
    if (d) CHECK_INT(opprof_stat_diff_to_string(d, 0, OPPROF_DIFF_JSON, &out[3]), 0);
    opprof_stat_diff_free(d);
    opprof_averages *avg = NULL;
    opprof_table_options options = {0};
    CHECK_INT(opprof_capture_averages(in->before, &avg), 0);
    if (avg) CHECK_INT(opprof_averages_roofline_to_string(avg, &options, &in->machine, false, &out[4]), 0);
    if (avg) CHECK_INT(opprof_averages_roofline_to_string(avg, &options, &in->machine, true, &out[5]), 0);
    opprof_averages_free(avg);
    CHECK_INT(opprof_machine_json_to_string(&in->machine, &out[6]), 0);
    CHECK_INT(opprof_capture_html_roofline_to_string(in->before, &in->machine, &out[7]), 0);
    CHECK_INT(opprof_measurement_text_to_string(in->timings[0], &out[8]), 0);
    opprof_compare_options compare = {0, false};
    const opprof_measurement *const ms[2] = {in->timings[0], in->timings[1]};
    CHECK_INT(opprof_compare_table_to_string(ms, 2, &compare, &out[9]), 0);
    opprof_ranks *ranks = NULL;
    opprof_capture *const two_ranks[2] = {in->before, in->after};
    CHECK_INT(opprof_ranks_analyze(two_ranks, 2, &ranks), 0);
    if (ranks) CHECK_INT(opprof_ranks_table_to_string(ranks, &out[10]), 0);
    if (ranks) CHECK_INT(opprof_ranks_json_to_string(ranks, &out[11]), 0);
    opprof_ranks_free(ranks);
}

static void read_inputs(inputs *in) {
    *in = (inputs){0};
    CHECK_INT(opprof_capture_read_buffer(TRACE_BEFORE, strlen(TRACE_BEFORE), NULL, &in->before, NULL), 0);
    CHECK_INT(opprof_capture_read_buffer(TRACE_AFTER, strlen(TRACE_AFTER), NULL, &in->after, NULL), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/machine.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(MACHINE, f) >= 0 && fclose(f) == 0);
    CHECK_INT(opprof_machine_read(path, &in->machine, NULL), 0);
    const double blocks[2][4] = {{1.25e-3, 1.5e-3, 1.75e-3, 1.5e-3}, {2.25e-3, 2.5e-3, 2.75e-3, 2.5e-3}};
    for (int k = 0; k < 2; k++)
        CHECK_INT(
            opprof_measurement_new(blocks[k], 4, 10, 1, "forward", k ? "after" : "before", "1.5", &in->timings[k]), 0);
}

static void free_inputs(inputs *in) {
    opprof_capture_free(in->before);
    opprof_capture_free(in->after);
    for (int k = 0; k < 2; k++) opprof_measurement_free(in->timings[k]);
}

/* de_DE compiled into dir/loc and set; false when it could not be. */
static bool decimal_comma(void) {
    char cmd[1200], *out = NULL;
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/loc' && localedef -i de_DE -f UTF-8 '%s/loc/de_DE.UTF-8' 2>&1", dir, dir);
    CHECK_INT(run_command(cmd, &out), 0);
    free(out);
    char loc[512];
    snprintf(loc, sizeof loc, "%s/loc", dir);
    setenv("LOCPATH", loc, 1);
    if (!setlocale(LC_ALL, "de_DE.UTF-8")) return false;
    char printed[16];
    snprintf(printed, sizeof printed, "%.1f", 1.5);
    return !strcmp(printed, "1,5");
}

TEST_CASE(every_text_as_C_writes_it) {
    inputs in;
    read_inputs(&in);
    char *plain[TEXTS], *comma[TEXTS];
    texts_of(&in, plain);
    CHECK_CONTAINS(plain[0], "."); /* the texts have fractions to write */
    CHECK(decimal_comma());
    texts_of(&in, comma);
    char printed[16];
    snprintf(printed, sizeof printed, "%.1f", 1.5);
    CHECK_STR(printed, "1,5"); /* the program's own numbers stay its locale's */
    setlocale(LC_ALL, "C");
    for (int k = 0; k < TEXTS; k++) {
        if (!plain[k] || !comma[k] || strcmp(plain[k], comma[k])) fprintf(stderr, "text %d differs\n", k);
        CHECK_STR(comma[k], plain[k]);
        opprof_free(plain[k]);
        opprof_free(comma[k]);
    }
    free_inputs(&in);
}

TEST_CASE(every_parser_reads_a_point) {
    CHECK(decimal_comma());
    opprof_what_if_change change[2];
    size_t n = 0;
    char why[256] = "";
    CHECK_INT(opprof_what_if_parse("aten::addmm=1.5x", change, 2, &n, why, sizeof why), 0);
    CHECK(n == 1 && change[0].value == 1.5);
    opprof_stat_gate gate;
    CHECK_INT(opprof_stat_gate_parse("total > +2.5%", &gate, why, sizeof why), 0);
    CHECK(gate.bound == 0.025);
    int64_t ns = 0;
    CHECK_INT(opprof_parse_duration_ns("1.5ms", &ns), 0);
    CHECK_INT(ns, 1500000);
    opprof_flight flight = opprof_flight_default();
    CHECK_INT(opprof_flight_parse_triggers(&flight, "2.5x", why, sizeof why), 0);
    CHECK(flight.slower_than_median == 2.5);
    CHECK_INT(opprof_flight_parse_keep(&flight, "200,1.5s", why, sizeof why), 0);
    CHECK(flight.keep_seconds == 1.5);
    char path[512];
    snprintf(path, sizeof path, "%s/machine.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(MACHINE, f) >= 0 && fclose(f) == 0);
    opprof_machine m;
    CHECK_INT(opprof_machine_read(path, &m, NULL), 0);
    const opprof_machine_ceilings *one = opprof_machine_for_threads(&m, 1);
    CHECK(one && one->fma_peak_gflops == 100.5);
    setlocale(LC_ALL, "C");
}

static int run_all(int argc, char **argv) {
    if (!make_temp_dir(dir, sizeof dir)) return 1;
    int rc = check_main(argc, argv, "test_decimal_comma");
    remove_tree(dir);
    return rc;
}

int main(int argc, char **argv) { return run_all(argc, argv); }
