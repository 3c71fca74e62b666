/* test_roofline.c - each row against the machine's roofs, computed by hand
 * on a small trace and a machine profile written in the test: bytes from
 * input shapes, the level a call's working set fits, the bound, % of roof
 * and time above roof, "no model" rows, the sort by time above roof, the
 * table's and JSON's columns and the line under the table; a machine
 * profile read back exactly and every malformed one refused with its
 * reason; `opprof machine` and `report --roofline`'s errors. */
#include "check.h"
#include "testutil.h"

#include <math.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <stdlib.h>
#include <yajl/yajl_tree.h>

/* fma 100 GFLOP/s; L1 32 KiB 200/100 GB/s, L2 1 MiB 100/80, LLC 32 MiB 50/40, DRAM 20/10. */
static const char MACHINE[] = "{\"cpu\": \"Test CPU\", \"isa\": \"AVX2\", \"threads\": 1, \"by_threads\": [\n"
                              " {\"threads\": 1, \"fma_peak_gflops\": 100, \"levels\": [\n"
                              "  {\"name\": \"L1\", \"bytes\": 32768, \"load_gbs\": 200, \"copy_gbs\": 100},\n"
                              "  {\"name\": \"L2\", \"bytes\": 1048576, \"load_gbs\": 100, \"copy_gbs\": 80},\n"
                              "  {\"name\": \"LLC\", \"bytes\": 33554432, \"load_gbs\": 50, \"copy_gbs\": 40},\n"
                              "  {\"name\": \"DRAM\", \"bytes\": 0, \"load_gbs\": 20, \"copy_gbs\": 10}]}]}\n";

/* forward (no model) holds addmm [64] + [32,128] x [128,64] for 10 us and
 * clamp_min on [1024,256] floats for 100 us. */
static const char TRACE[] =
    "{\"traceEvents\": [\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"forward\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":200},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::addmm\",\"pid\":1,\"tid\":1,\"ts\":10,\"dur\":10,"
    "\"args\":{\"Input Dims\":[[64],[32,128],[128,64],[],[]],\"Input type\":[\"float\",\"float\",\"float\",\"Scalar\",\"Scalar\"]}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::clamp_min\",\"pid\":1,\"tid\":1,\"ts\":50,\"dur\":100,"
    "\"args\":{\"Input Dims\":[[1024,256],[]],\"Input type\":[\"float\",\"Scalar\"]}}\n"
    "]}\n";

static char g_dir[256];

static const char *file(const char *name, const char *text) {
    static char path[4][512];
    static int next;
    if (!g_dir[0] && !make_temp_dir(g_dir, sizeof g_dir)) abort();
    char *p = path[next++ % 4];
    snprintf(p, 512, "%s/%s", g_dir, name);
    FILE *f = fopen(p, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
    return p;
}

static opprof_averages *averages_of(const char *text) {
    opprof_capture *c = NULL;
    opprof_averages *avg = NULL;
    opprof_read_error err;
    if (opprof_capture_read_buffer(text, strlen(text), NULL, &c, &err)) {
        fprintf(stderr, "read: %s\n", err.message);
        return NULL;
    }
    if (opprof_capture_averages(c, &avg)) avg = NULL;
    opprof_capture_free(c);
    return avg;
}

static size_t row_named(const opprof_averages *avg, const char *name) {
    size_t n = 0;
    const opprof_average_row *r = opprof_averages_rows(avg, &n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].key, name)) return i;
    return (size_t)-1;
}

/* TRACE read, and MACHINE into *m. */
static opprof_capture *trace_and_machine(opprof_machine *m) {
    opprof_capture *c = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_machine_read(file("m.json", MACHINE), m, NULL), 0);
    CHECK_INT(opprof_capture_read_buffer(TRACE, strlen(TRACE), NULL, &c, &err), 0);
    return c;
}

#define CHECK_NEAR(a, b) CHECK(fabs((double)(a) - (double)(b)) < 1e-6 * (fabs((double)(b)) + 1))

TEST_CASE(machine_profile_read_exactly) {
    opprof_machine m;
    opprof_read_error err;
    CHECK_INT(opprof_machine_read(file("m.json", MACHINE), &m, &err), 0);
    CHECK_STR(m.cpu, "Test CPU");
    CHECK_STR(m.isa, "AVX2");
    CHECK_INT(m.threads, 1);
    CHECK_NEAR(m.by_threads[0].fma_peak_gflops, 100);
    CHECK_STR(m.by_threads[0].levels[2].name, "LLC");
    CHECK_INT(m.by_threads[0].levels[1].bytes, 1048576);
    CHECK_NEAR(m.by_threads[0].levels[3].copy_gbs, 10);
    CHECK(opprof_machine_for_threads(&m, 8) == &m.by_threads[0]); /* never a roof above what was measured */
    char *json = NULL;
    CHECK_INT(opprof_machine_json_to_string(&m, &json), 0); /* written, then read back the same */
    opprof_machine again;
    CHECK_INT(opprof_machine_read(file("again.json", json ? json : ""), &again, &err), 0);
    CHECK_NEAR(again.by_threads[0].levels[1].load_gbs, 100);
    CHECK_CONTAINS(json, "\"fma_peak_gflops\": 100.000");
    CHECK_CONTAINS(json, "\"levels\": [");
    opprof_free(json);
}

TEST_CASE(malformed_profiles_refused) {
    const struct {
        const char *text, *why;
    } bad[] = {
        {"[1, 2]", "not a machine profile"},
        {"{\"cpu\": \"x\", \"isa\": \"AVX2\"}", "no \"by_threads\""},
        {"{\"cpu\": \"x\", \"isa\": \"AVX2\", \"by_threads\": []}", "\"by_threads\" is empty"},
        {"{\"cpu\": \"x\", \"isa\": \"AVX2\", \"by_threads\": [{\"threads\": 2, \"fma_peak_gflops\": 1, \"levels\": []}]}",
         "is not the ceilings of 1 thread"},
        {"{\"cpu\": \"x\", \"isa\": \"AVX2\", \"by_threads\": [{\"threads\": 1, \"fma_peak_gflops\": -5}]}",
         "negative"},
        {"{\"cpu\": \"x\", \"isa\": \"AVX2\", \"by_threads\": [{\"threads\": 1, \"fma_peak_gflops\": 9, \"levels\": "
         "[{\"name\": \"L1\", \"bytes\": 1, \"load_gbs\": 0, \"copy_gbs\": 1}]}]}",
         "lacks its name or a bandwidth"},
        {"{\"cpu\": \"x\", \"isa\": \"AVX2\", \"by_threads\": [{\"threads\": \"one\"}]}", "is not a number"},
        {"{\"cpu\": \"x\", \"isa\": ", "\"isa\" is not a string"}, /* cut short */
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        opprof_machine m;
        opprof_read_error err;
        memset(&m, 0x5a, sizeof m);
        int rc = opprof_machine_read(file("bad.json", bad[k].text), &m, &err);
        CHECK(rc != 0);
        CHECK(m.threads == 0); /* nothing half-read is left */
        if (!strstr(err.message, bad[k].why))
            fprintf(stderr, "case %zu: '%s' lacks '%s'\n", k, err.message, bad[k].why);
        CHECK(strstr(err.message, bad[k].why) != NULL);
    }
    opprof_machine m;
    opprof_read_error err;
    CHECK_INT(opprof_machine_read("/nonexistent/m.json", &m, &err), -ENOENT);
}

TEST_CASE(rows_against_their_roofs) {
    opprof_machine m;
    CHECK_INT(opprof_machine_read(file("m.json", MACHINE), &m, NULL), 0);
    opprof_averages *avg = averages_of(TRACE);
    CHECK(avg != NULL);
    if (!avg) return;
    /* addmm: 2*32*128*64 FLOPs; (64 + 32*128 + 128*64) * 4 read + 32*64*4 written = 57600 B: past L1,
     * in L2 (100 GB/s: 576 ns) but compute 5242.88 ns: compute bound, 52.4288 % of its 10 us */
    opprof_roofline f = opprof_averages_roofline(avg, row_named(avg, "aten::addmm"), &m);
    CHECK(f.modelled);
    CHECK(f.compute_bound);
    CHECK_INT(f.level, 1);
    CHECK_NEAR(f.intensity, 524288.0 / 57600.0);
    CHECK_NEAR(f.roof_ns, 5242.88);
    CHECK_NEAR(f.roof_percent, 52.4288);
    CHECK_NEAR(f.above_roof_ns, 10000 - 5242.88);
    CHECK_NEAR(f.gflops, 52.4288);
    /* clamp_min: 1 MiB read + 1 MiB written = 2 MiB a call: the LLC's (50 GB/s): 41943.04 ns of its 100 us */
    f = opprof_averages_roofline(avg, row_named(avg, "aten::clamp_min"), &m);
    CHECK(f.modelled);
    CHECK(!f.compute_bound);
    CHECK_INT(f.level, 2);
    CHECK_NEAR(f.roof_ns, 41943.04);
    CHECK_NEAR(f.roof_percent, 41.94304);
    CHECK_NEAR(f.above_roof_ns, 100000 - 41943.04);
    CHECK_NEAR(f.gbs, 20.97152);
    f = opprof_averages_roofline(avg, row_named(avg, "forward"), &m);
    CHECK(!f.modelled); /* no FLOPs, no bytes: no model, no number */
    CHECK(isnan(f.roof_percent));
    /* the table: its columns, the bound of each row, the line under it; sorted by time above roof */
    opprof_table_options o = {.sort = OPPROF_SORT_TIME_ABOVE_ROOF};
    char *text = NULL;
    CHECK_INT(opprof_averages_roofline_to_string(avg, &o, &m, false, &text), 0);
    CHECK_CONTAINS(text, "Bound");
    CHECK_CONTAINS(text, "Above roof");
    CHECK_CONTAINS(text, "   compute");
    CHECK_CONTAINS(text, "       LLC");
    CHECK_CONTAINS(text, "  no model");
    CHECK_CONTAINS(text, "52.43%");
    CHECK_CONTAINS(text, "Roofline: 62.814us above roof in 2 modelled row(s)"); /* 4.75712 + 58.05696 */
    CHECK_CONTAINS(text, "90.000us of self time in rows without a model");
    const char *clamp = text ? strstr(text, "aten::clamp_min") : NULL,
               *addmm = text ? strstr(text, "aten::addmm") : NULL;
    CHECK(clamp && addmm && clamp < addmm); /* 58 us above roof before 4.8 */
    opprof_free(text);
    CHECK_INT(opprof_averages_roofline_to_string(avg, &o, &m, true, &text), 0);
    CHECK_CONTAINS(text, "\"bound\": \"LLC\"");
    CHECK_CONTAINS(text, "\"bound\": \"no model\"");
    CHECK_CONTAINS(text, "\"time_above_roof_us\": 58.05696");
    CHECK_CONTAINS(text, "\"bytes\": 2097152");
    opprof_free(text);
    opprof_machine none = {0};
    CHECK_INT(opprof_averages_roofline_to_string(avg, &o, &none, false, &text), OPPROF_EINVAL);
    /* a roof below what ran (a profile measured on a busy machine): said under the table */
    opprof_machine low = m;
    low.by_threads[0].fma_peak_gflops = 10; /* addmm's 524288 FLOPs in 10 us: 52.4 GFLOP/s */
    CHECK_INT(opprof_averages_roofline_to_string(avg, &o, &low, false, &text), 0);
    CHECK_CONTAINS(text, "Note: 1 row(s) ran above 105 % of their roof");
    opprof_free(text);
    CHECK_INT(opprof_averages_roofline_to_string(avg, &o, &m, false, &text), 0);
    CHECK(text && !strstr(text, "above 105 %"));
    opprof_free(text);
    opprof_averages_free(avg);
}

TEST_CASE(bytes_from_shapes) {
    opprof_shapes s = {.n_inputs = 2, .ndim = {2, 0}, .dims = {{3, 5}}, .dtype = {"double", ""}};
    CHECK_INT(opprof_bytes("aten::add", &s), 2 * 15 * 8); /* the tensor in, the same out; the scalar not */
    CHECK_INT(opprof_bytes("aten::relu", &s), 0);         /* clamp_min inside: counted there */
    CHECK_INT(opprof_bytes("aten::linear", &s), 0);
    CHECK_INT(opprof_bytes("aten::add", NULL), 0);
    opprof_shapes mm = {.n_inputs = 2, .ndim = {2, 2}, .dims = {{4, 8}, {8, 2}}, .dtype = {"c10::Half", "c10::Half"}};
    CHECK_INT(opprof_bytes("aten::mm", &mm), (32 + 16 + 8) * 2);
    /* ONNX Runtime's FusedGemm as its profile records it: A [128, 256] and the bias [512], the
     * weight [256, 512] an initializer left out: 2*M*K*N FLOPs, and the weight's bytes counted */
    opprof_shapes ort = {.n_inputs = 2, .ndim = {2, 1}, .dims = {{128, 256}, {512}}, .dtype = {"float", "float"}};
    CHECK_INT(opprof_flops("FusedGemm", &ort), 2LL * 128 * 256 * 512);
    CHECK_INT(opprof_bytes("FusedGemm", &ort), (128 * 256 + 512) * 4 + 256 * 512 * 4 + 128 * 512 * 4);
    opprof_shapes relu = {.n_inputs = 1, .ndim = {2}, .dims = {{128, 512}}, .dtype = {"float"}};
    CHECK_INT(opprof_bytes("Relu", &relu), 2 * 128 * 512 * 4);
}

TEST_CASE(commands) {
    char *out = NULL;
    const char *m = file("m.json", MACHINE), *t = file("t.json", TRACE), *bad = file("bad.json", "{\"cpu\": 1}");
    int st = run_commandf(&out, "'%s/opprof' report --roofline --machine '%s' '%s' 2>&1", bin_dir(), m, t);
    CHECK_INT(st, 0);
    CHECK_CONTAINS(out, "above roof in 2 modelled row(s)");
    free(out);
    st = run_commandf(&out, "'%s/opprof' report --roofline --machine '%s' '%s'", bin_dir(), bad, t);
    CHECK_INT(st, 2);
    CHECK_CONTAINS(out, "bad.json:1:");
    CHECK_CONTAINS(out, "\"cpu\" is not a string");
    free(out);
    st = run_commandf(&out, "'%s/opprof' report --sort time_above_roof '%s'", bin_dir(), t);
    CHECK_INT(st, 64);
    CHECK_CONTAINS(out, "needs --roofline");
    free(out);
    st = run_commandf(&out, "'%s/opprof' machine --threads 99", bin_dir());
    CHECK_INT(st, 64);
    free(out);
    st = run_commandf(&out, "'%s/opprof' machine --threads 1 --json -o /nonexistent/dir/m.json", bin_dir());
    CHECK_INT(st, 2);
    CHECK_CONTAINS(out, "/nonexistent/dir/m.json");
    free(out);
    st = run_commandf(&out, "'%s/opprof' html --machine '%s' '%s' '%s/never.html'", bin_dir(), bad, t, g_dir);
    CHECK_INT(st, 2);
    CHECK_CONTAINS(out, "bad.json:1:");
    free(out);
    char never[600];
    snprintf(never, sizeof never, "%s/never.html", g_dir);
    CHECK(access(never, F_OK) != 0); /* nothing written */
    st = run_commandf(&out, "'%s/opprof' report --machine '%s' '%s'", bin_dir(), m, t);
    CHECK_INT(st, 64);
    CHECK_CONTAINS(out, "--machine is for --roofline and --what-if NAME=roof");
    free(out);
    /* measured: the profile's shape (the figures are this machine's, never asserted) */
    st = run_commandf(&out, "'%s/opprof' machine --threads 1 --json 2>/dev/null", bin_dir());
    CHECK_INT(st, 0);
    char err[128];
    yajl_val doc = out ? yajl_tree_parse(out, err, sizeof err) : NULL;
    const char *cpu[] = {"cpu", NULL}, *isa[] = {"isa", NULL}, *peak[] = {"fma_peak_gflops", NULL},
               *levels[] = {"levels", NULL};
    CHECK(doc && yajl_tree_get(doc, cpu, yajl_t_string) && yajl_tree_get(doc, isa, yajl_t_string));
    yajl_val p = doc ? yajl_tree_get(doc, peak, yajl_t_number) : NULL,
             l = doc ? yajl_tree_get(doc, levels, yajl_t_array) : NULL;
    CHECK(p && YAJL_GET_DOUBLE(p) > 0);
    CHECK(l && l->u.array.len == 4);
    yajl_tree_free(doc);
    free(out);
}

/* ---- what if ---- */

/* Step 1 (1000 us) on thread 1: matmul (300 us) holding inner (100 us); then
 * gemm over a pool: a part on thread 1 (200 us) and one on thread 2 (300 us),
 * both from 500 us: the run ends at 800. Step 2 (500 us): matmul, 200 us. */
static const char POOL[] =
    "{\"traceEvents\": [\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#1\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":1000},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"matmul\",\"pid\":1,\"tid\":1,\"ts\":100,\"dur\":300},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":150,\"dur\":100},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"gemm\",\"pid\":1,\"tid\":1,\"ts\":500,\"dur\":200,\"args\":{\"part_of\":7}},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"gemm\",\"pid\":1,\"tid\":2,\"ts\":500,\"dur\":300,\"args\":{\"part_of\":7}},\n"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"pid\":1,\"tid\":1,\"ts\":2000,\"dur\":500},\n"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"matmul\",\"pid\":1,\"tid\":1,\"ts\":2100,\"dur\":200}\n"
    "]}\n";

/* `what` (as --what-if writes it) replayed on c into *w. */
static int what_if_of(const opprof_capture *c, const opprof_machine *m, const char *what, opprof_what_if_result *w) {
    opprof_what_if_change ch[8];
    size_t n = 0;
    char why[128];
    int rc = opprof_what_if_parse(what, ch, 8, &n, why, sizeof why);
    return rc ? rc : opprof_capture_what_if(c, m, ch, n, w);
}

/* The median predicted step (us) for `what`, and the replay's error. */
static double predicted_us(const opprof_capture *c, const opprof_machine *m, const char *what, double *error) {
    opprof_what_if_result w;
    if (what_if_of(c, m, what, &w)) return NAN;
    if (error) *error = w.replay_error_percent;
    return w.predicted_step_ns / 1e3;
}

TEST_CASE(what_if_nesting_and_pools) {
    opprof_capture *c = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read_buffer(POOL, strlen(POOL), NULL, &c, &err), 0);
    if (!c) return;
    double error = -1;
    /* medians of the two steps, each worked out by hand */
    CHECK_NEAR(predicted_us(c, NULL, "nothing=0.5x", &error), (1000 + 500) / 2.0);
    CHECK_NEAR(error, 0);
    CHECK_NEAR(predicted_us(c, NULL, "inner=0.5x", NULL), (950 + 500) / 2.0);              /* inside matmul: 50 us */
    CHECK_NEAR(predicted_us(c, NULL, "matmul=+100us", NULL), (1100 + 600) / 2.0);          /* inner's time is in it */
    CHECK_NEAR(predicted_us(c, NULL, "matmul=+100us,inner=0x", NULL), (1100 + 600) / 2.0); /* the outer change stands */
    /* the pool: parts of 100 and 150 us end at 150; thread 1 waits for thread 2's */
    CHECK_NEAR(predicted_us(c, NULL, "gemm=0.5x", NULL), (850 + 500) / 2.0);
    CHECK_NEAR(predicted_us(c, NULL, "gemm=-100us", NULL), (900 + 500) / 2.0);
    CHECK_NEAR(predicted_us(c, NULL, "gemm=-250us", NULL), (750 + 500) / 2.0); /* parts of 0 and 50 us: the run 50 */
    CHECK_NEAR(predicted_us(c, NULL, "gemm=0x,matmul=0x", NULL), (400 + 300) / 2.0);
    opprof_what_if_change ch[2];
    size_t n = 0;
    char why[128];
    CHECK_INT(opprof_what_if_parse("matmul=roof", ch, 2, &n, why, sizeof why), 0);
    opprof_what_if_result w;
    CHECK_INT(opprof_capture_what_if(c, NULL, ch, n, &w), OPPROF_EINVAL); /* a roof needs a machine */
    opprof_capture_free(c);
}

TEST_CASE(what_if_roof) {
    opprof_machine m;
    opprof_capture *c = trace_and_machine(&m);
    if (!c) return;
    /* no steps: the capture is one; addmm to its roof (5.24288 us of its 10), clamp_min to 41.94304 of 100 */
    double whole = (double)opprof_capture_get_info(c).duration_ns / 1e3;
    CHECK_NEAR(predicted_us(c, &m, "aten::addmm=roof", NULL), whole - (10 - 5.24288));
    CHECK_NEAR(predicted_us(c, &m, "aten::addmm=roof,aten::clamp_min=roof", NULL),
               whole - (10 - 5.24288) - (100 - 41.94304));
    opprof_what_if_result w;
    CHECK_INT(what_if_of(c, &m, "forward=roof", &w), 0);
    CHECK_INT(w.unmodelled_calls, 1); /* no FLOPs, no bytes: kept, and counted */
    CHECK_NEAR(w.predicted_step_ns, w.measured_step_ns);
    opprof_capture_free(c);
}

/* STEPS steps (ProfilerStep#N, or none: the capture is one) of CALLS
 * clamp_min calls of 2 MiB each (1 MiB read, 1 MiB written), 200 us apiece. */
static char *streaming_trace(int steps, int calls) {
    static char text[16384];
    size_t len = (size_t)snprintf(text, sizeof text, "{\"traceEvents\": [\n");
    for (int s = 0; s < (steps ? steps : 1); s++) {
        long t0 = (long)s * calls * 300;
        if (steps)
            len += (size_t)snprintf(text + len, sizeof text - len,
                                    "{\"ph\":\"X\",\"cat\":\"user_annotation\","
                                    "\"name\":\"ProfilerStep#%d\",\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":%d},\n",
                                    s, t0, calls * 300 - 10);
        for (int k = 0; k < calls; k++)
            len +=
                (size_t)snprintf(text + len, sizeof text - len,
                                 "{\"ph\":\"X\",\"cat\":\"cpu_op\","
                                 "\"name\":\"aten::clamp_min\",\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":200,"
                                 "\"args\":{\"Input Dims\":[[1024,256],[]],\"Input type\":[\"float\",\"Scalar\"]}},\n",
                                 t0 + 1 + 300L * k);
    }
    snprintf(text + len - 2, sizeof text - (len - 2), "\n]}\n");
    return text;
}

/* A call whose bytes only the LLC holds streams from DRAM when its step
 * touches more than the LLC holds (a decode step's weights): 20 calls of
 * 2 MiB in one step are 40 MiB, past MACHINE's 32 MiB; 10 a step are 20 MiB. */
TEST_CASE(streamed_past_the_llc_from_dram) {
    opprof_machine m;
    CHECK_INT(opprof_machine_read(file("m.json", MACHINE), &m, NULL), 0);
    struct {
        int steps, calls, level;
        double roof_ns;
    } cases[] = {
        {0, 20, 3, 2097152 / 20.0}, /* DRAM: max(load 20, copy 10) GB/s */
        {2, 10, 2, 2097152 / 50.0}, /* LLC: 50 GB/s */
        {0, 10, 2, 2097152 / 50.0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const char *text = streaming_trace(cases[k].steps, cases[k].calls);
        opprof_averages *avg = averages_of(text);
        CHECK(avg != NULL);
        if (!avg) continue;
        opprof_roofline f = opprof_averages_roofline(avg, row_named(avg, "aten::clamp_min"), &m);
        CHECK_INT(f.level, cases[k].level);
        CHECK_NEAR(f.roof_ns, cases[k].roof_ns * 10 * (cases[k].steps ? cases[k].steps : cases[k].calls / 10));
        opprof_averages_free(avg);
        /* what-if's roof is the same: each call to it */
        opprof_capture *c = NULL;
        CHECK_INT(opprof_capture_read_buffer(text, strlen(text), NULL, &c, NULL), 0);
        if (!c) continue;
        opprof_what_if_result w;
        CHECK_INT(what_if_of(c, &m, "aten::clamp_min=roof", &w), 0);
        CHECK_NEAR(w.changed_after_ns, cases[k].roof_ns * (double)w.changed_calls);
        CHECK_INT(w.changed_calls, cases[k].calls * (cases[k].steps ? cases[k].steps : 1));
        opprof_capture_free(c);
    }
}

TEST_CASE(what_if_parse_errors) {
    const char *bad[] = {"aten::addmm", "=0.5x", "aten::addmm=2", "aten::addmm=-0.5x", "aten::addmm=+3s", "a=0.5x,"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        opprof_what_if_change ch[4];
        size_t n = 0;
        char why[128] = "";
        int rc = opprof_what_if_parse(bad[k], ch, 4, &n, why, sizeof why);
        if (!rc) fprintf(stderr, "'%s' was taken\n", bad[k]);
        CHECK_INT(rc, OPPROF_EINVAL);
        CHECK(why[0] != '\0');
    }
    char *out = NULL;
    const char *t = file("t.json", TRACE);
    int st = run_commandf(&out, "'%s/opprof' report --what-if 'aten::addmm=fast' '%s'", bin_dir(), t);
    CHECK_INT(st, 64);
    CHECK_CONTAINS(out, "--what-if: 'fast' for aten::addmm is none of roof");
    free(out);
    st = run_commandf(&out, "'%s/opprof' report --what-if 'aten::addmm=0.5x' --json '%s' 2>/dev/null", bin_dir(), t);
    CHECK_INT(st, 0);
    CHECK_CONTAINS(out, "\"what_if\": {\"changes\": \"aten::addmm=0.5x\", \"steps\": 1");
    CHECK_CONTAINS(out, "\"replay_error_percent\": 0.000");
    free(out);
}

/* Eight steps of 1000 + k us, each holding matmul (300 us) and inner in it
 * (100 us before, `inner` us after). */
static const char *steps_trace(const char *name, int inner) {
    static char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text, "{\"traceEvents\": [\n");
    for (int k = 0; k < 8; k++) {
        long t0 = 10000L * k, len = 1000 + k - (100 - inner);
        n += (size_t)snprintf(
            text + n, sizeof text - n,
            "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\",\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":%ld},\n"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"matmul\",\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":%d},\n"
            "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"inner\",\"pid\":1,\"tid\":1,\"ts\":%ld,\"dur\":%d}%s\n",
            k + 1, t0, len, t0 + 100, 200 + inner, t0 + 150, inner, k < 7 ? "," : "");
    }
    snprintf(text + n, sizeof text - n, "]}\n");
    return file(name, text);
}

TEST_CASE(prediction_confirmed_or_refuted_by_diff) {
    char before[600], after[600];
    snprintf(before, sizeof before, "%s", steps_trace("before.json", 100));
    snprintf(after, sizeof after, "%s", steps_trace("after.json", 50));
    char *out = NULL;
    int st =
        run_commandf(&out, "'%s/opprof' diff --stat '%s' '%s' --what-if inner=0.5x 2>&1", bin_dir(), before, after);
    CHECK_INT(st, 0);
    CHECK_CONTAINS(
        out, "Prediction (inner changed, BEFORE replayed): step 1003.500us -> 953.500us predicted, 953.500us measured");
    CHECK_CONTAINS(out, ": confirmed, the predicted shift +0.0% of the step off the measured one");
    free(out);
    st = run_commandf(&out, "'%s/opprof' diff --stat '%s' '%s' --what-if inner=0x 2>&1", bin_dir(), before, after);
    CHECK_INT(st, 0);
    CHECK_CONTAINS(out, "the shift -100.000us predicted, -50.000us measured");
    CHECK_CONTAINS(out, ": refuted, the predicted shift -5.0% of the step off the measured one"); /* -50 of 1003.5 */
    free(out);
    st = run_commandf(&out, "'%s/opprof' diff --stat --json '%s' '%s' --what-if inner=0.5x 2>/dev/null", bin_dir(),
                      before, after);
    CHECK_INT(st, 0);
    CHECK_CONTAINS(out, "\"prediction\": {\"changed\": \"inner\", \"before_step_us\": 1003.500");
    CHECK_CONTAINS(out, "\"confirmed\": true");
    char err[128];
    yajl_val doc = out ? yajl_tree_parse(out, err, sizeof err) : NULL;
    CHECK(doc != NULL); /* still one JSON object */
    yajl_tree_free(doc);
    free(out);
    st = run_commandf(&out, "'%s/opprof' diff '%s' '%s' --what-if inner=0.5x 2>&1", bin_dir(), before, after);
    CHECK_INT(st, 64);
    CHECK_CONTAINS(out, "go with --stat");
    free(out);
}

TEST_CASE(html_chart) {
    opprof_machine m;
    opprof_capture *c = trace_and_machine(&m);
    if (!c) return;
    char *page = NULL;
    CHECK_INT(opprof_capture_html_roofline_to_string(c, &m, &page), 0);
    CHECK_CONTAINS(page, "<svg class=\"roofline\"");
    CHECK_CONTAINS(page,
                   "<title>aten::addmm: 1 calls, 10.000us; 9.10 FLOPs/B, 52.4 GFLOP/s; compute bound, 52.4 % of roof");
    CHECK_CONTAINS(page, "1 operator(s) on the chart; 1 modelled without FLOPs");
    size_t dots = 0;
    for (const char *p = page; p && (p = strstr(p, "<circle class=\"op\"")); p++) dots++;
    CHECK_INT(dots, 1); /* clamp_min has bytes, no FLOPs: no place on it */
    for (const char *lv = "L1\0L2\0LLC\0DRAM\0"; *lv; lv += strlen(lv) + 1) {
        char want[64];
        snprintf(want, sizeof want, "<title>%s: ", lv);
        CHECK_CONTAINS(page, want); /* each level's ceiling */
    }
    opprof_free(page);
    CHECK_INT(opprof_capture_html_to_string(c, &page), 0); /* without a machine: no chart */
    CHECK(page && !strstr(page, "class=\"roofline\""));
    opprof_free(page);
    opprof_capture_free(c);
}

TEST_CASE(machine_kept_in_the_trace) {
    opprof_machine m;
    CHECK_INT(opprof_machine_read(file("m.json", MACHINE), &m, NULL), 0);
    /* a session gives its captures the machine */
    opprof_config cfg = opprof_config_default();
    opprof_session *s = NULL;
    CHECK_INT(opprof_session_start(&s, &cfg), 0);
    CHECK_INT(opprof_session_set_machine(s, &m), 0);
    opprof_range r = opprof_range_begin(OPPROF_SRCLOC("work", OPPROF_KIND_USER_ANNOTATION));
    opprof_range_end(r);
    CHECK_INT(opprof_session_stop(s), 0);
    opprof_capture *c = NULL;
    CHECK_INT(opprof_session_take_capture(s, &c), 0);
    opprof_session_free(s);
    CHECK(opprof_capture_machine(c) && !strcmp(opprof_capture_machine(c)->cpu, "Test CPU"));
    /* written and read back */
    char path[600];
    snprintf(path, sizeof path, "%s/with_machine.json", g_dir);
    CHECK_INT(opprof_capture_chrome_write(c, path), 0);
    opprof_capture_free(c);
    opprof_read_error err;
    CHECK_INT(opprof_capture_read(path, NULL, &c, &err), 0);
    const opprof_machine *back = c ? opprof_capture_machine(c) : NULL;
    CHECK(back && back->threads == 1 && fabs(back->by_threads[0].levels[2].load_gbs - 50) < 1e-9);
    opprof_capture_free(c);
    char *out = NULL;
    int st = run_commandf(&out, "'%s/opprof' report --roofline '%s' 2>&1", bin_dir(), path);
    CHECK_INT(st, 0);
    CHECK_CONTAINS(out, "the roofs are those of the machine the trace was recorded on (Test CPU, AVX2)");
    free(out);
    /* a trace whose machine is not one: refused, with the reason */
    const char *bad =
        file("bad_machine.json", "{\"opprof_machine\": {\"cpu\": \"x\", \"isa\": \"AVX2\", \"by_threads\": []},"
                                 " \"traceEvents\": []}");
    c = NULL;
    CHECK(opprof_capture_read(bad, NULL, &c, &err) != 0);
    CHECK(c == NULL);
    CHECK_CONTAINS(err.message, "\"by_threads\" is empty");
    /* a trace without: none, and the API says so */
    CHECK_INT(opprof_capture_read_buffer(TRACE, strlen(TRACE), NULL, &c, &err), 0);
    CHECK(opprof_capture_machine(c) == NULL);
    CHECK_INT(opprof_capture_set_machine(c, &(opprof_machine){0}), OPPROF_EINVAL);
    opprof_capture_free(c);
}

/* The machine a session gave its capture, kept whole through every format opprof writes
 * (JSON, gzip, .pftrace, .pftrace.gz) and in summary.json: each figure read back. */
TEST_CASE(machine_kept_in_every_format) {
    opprof_machine m;
    CHECK_INT(opprof_machine_read(file("m.json", MACHINE), &m, NULL), 0);
    opprof_capture *c = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read_buffer(TRACE, strlen(TRACE), NULL, &c, &err), 0);
    CHECK_INT(opprof_capture_set_machine(c, &m), 0);
    static const char *const names[] = {"k.json", "k.json.gz", "k.pftrace", "k.pftrace.gz"};
    for (int f = 0; f < 4; f++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s", g_dir, names[f]);
        opprof_chrome_options gz = {.gzip = true};
        opprof_perfetto_options pgz = {.gzip = true};
        CHECK_INT(f == 0   ? opprof_capture_chrome_write(c, path)
                  : f == 1 ? opprof_capture_chrome_write_ex(c, path, &gz)
                  : f == 2 ? opprof_capture_perfetto_write(c, path)
                           : opprof_capture_perfetto_write_ex(c, path, &pgz),
                  0);
        opprof_capture *back = NULL;
        CHECK_INT(opprof_capture_read(path, NULL, &back, &err), 0);
        const opprof_machine *b = back ? opprof_capture_machine(back) : NULL;
        CHECK(b != NULL);
        if (b) {
            CHECK_STR(b->cpu, "Test CPU");
            CHECK_STR(b->isa, "AVX2");
            CHECK_INT(b->threads, 1);
            CHECK_NEAR(b->by_threads[0].fma_peak_gflops, 100);
            static const double load[] = {200, 100, 50, 20}, copy[] = {100, 80, 40, 10};
            for (int l = 0; l < OPPROF_MACHINE_LEVELS; l++) {
                CHECK_NEAR(b->by_threads[0].levels[l].load_gbs, load[l]);
                CHECK_NEAR(b->by_threads[0].levels[l].copy_gbs, copy[l]);
                CHECK_INT(b->by_threads[0].levels[l].bytes, m.by_threads[0].levels[l].bytes);
            }
        }
        opprof_capture_free(back);
    }
    /* summary.json: the capture's entry carries it, as the profile's JSON */
    opprof_summary *sum = NULL;
    opprof_averages *avg = NULL;
    char *json = NULL;
    CHECK_INT(opprof_summary_new(&sum), 0);
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    CHECK_INT(opprof_summary_add_capture(sum, c, avg), 0);
    CHECK_INT(opprof_summary_json_to_string(sum, &json), 0);
    yajl_val root = json ? yajl_tree_parse(json, NULL, 0) : NULL;
    CHECK(root != NULL);
    yajl_val caps = root ? yajl_tree_get(root, (const char *[]){"captures", NULL}, yajl_t_array) : NULL;
    yajl_val first = caps && YAJL_GET_ARRAY(caps)->len ? YAJL_GET_ARRAY(caps)->values[0] : NULL;
    yajl_val fma =
        first ? yajl_tree_get(first, (const char *[]){"machine", "fma_peak_gflops", NULL}, yajl_t_number) : NULL;
    yajl_val cpu = first ? yajl_tree_get(first, (const char *[]){"machine", "cpu", NULL}, yajl_t_string) : NULL;
    CHECK(fma && fabs(YAJL_GET_DOUBLE(fma) - 100) < 1e-9);
    const char *cpu_name = cpu ? YAJL_GET_STRING(cpu) : NULL;
    CHECK(cpu_name && !strcmp(cpu_name, "Test CPU"));
    yajl_tree_free(root);
    opprof_free(json);
    opprof_averages_free(avg);
    opprof_summary_free(sum);
    opprof_capture_free(c);
}

/* Write text to path. */
static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fputs(text, f), fclose(f);
}

/* The profile cached for this machine is used as it is; a cache file that
 * is another machine's, corrupt, or cannot be written is never trusted:
 * measured again, replaced when it can be, and said. */
TEST_CASE(machine_cache_trusted_only_when_it_is_this_machines) {
    char dir[256], path[4096], said[4400];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache/opprof", dir); /* made as needed */
    setenv("OPPROF_MACHINE_CACHE", cache, 1);
    CHECK_INT(opprof_machine_cache_path(1, path, sizeof path), 0);
    CHECK(strncmp(path, cache, strlen(cache)) == 0 && strstr(path, "/machine-") && strstr(path, ".json"));
    CHECK_INT(opprof_machine_cache_path(0, path, sizeof path), OPPROF_EINVAL);
    CHECK_INT(opprof_machine_cache_path(1, path, sizeof path), 0);
    opprof_machine id, m, got;
    CHECK_INT(opprof_machine_identify(&id), 0);
    CHECK_INT(opprof_machine_read(file("m.json", MACHINE), &m, NULL), 0);
    /* this machine's, as if measured before: used, nothing measured */
    snprintf(m.cpu, sizeof m.cpu, "%s", id.cpu);
    snprintf(m.isa, sizeof m.isa, "%s", id.isa);
    char *json = NULL;
    CHECK_INT(opprof_machine_json_to_string(&m, &json), 0);
    CHECK(system(NULL) != 0);
    char mk[4200];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", cache);
    CHECK_INT(system(mk), 0);
    write_text(path, json ? json : "");
    opprof_free(json);
    CHECK_INT(opprof_machine_cached(1, &got, said, sizeof said), 0);
    CHECK_NEAR(got.by_threads[0].fma_peak_gflops, 100);
    CHECK_CONTAINS(said, "measured on this CPU before");
    /* another machine's, then a corrupt file: measured, replaced, said */
    static const char *const untrusted[] = {"another", "{\"cpu\": "};
    for (int k = 0; k < 2; k++) {
        if (k == 0) {
            snprintf(m.cpu, sizeof m.cpu, "Another CPU");
            CHECK_INT(opprof_machine_json_to_string(&m, &json), 0);
            write_text(path, json ? json : "");
            opprof_free(json);
        } else {
            write_text(path, untrusted[k]);
        }
        CHECK_INT(opprof_machine_cached(1, &got, said, sizeof said), 0);
        CHECK_STR(got.cpu, id.cpu);
        CHECK(got.by_threads[0].fma_peak_gflops > 0 && fabs(got.by_threads[0].fma_peak_gflops - 100) > 1e-9);
        CHECK_CONTAINS(said, "was not trusted");
        CHECK_CONTAINS(said, k == 0 ? "the profile of another machine (Another CPU" : "\"cpu\" is not a string");
        CHECK_INT(opprof_machine_read(path, &m, NULL), 0); /* replaced by what was measured */
        CHECK_STR(m.cpu, id.cpu);
    }
    /* a cache that cannot be written: measured, not kept, said */
    setenv("OPPROF_MACHINE_CACHE", "/proc/opprof-no-cache", 1);
    CHECK_INT(opprof_machine_cached(1, &got, said, sizeof said), 0);
    CHECK(got.by_threads[0].fma_peak_gflops > 0);
    CHECK_CONTAINS(said, "not kept in /proc/opprof-no-cache/machine-");
    CHECK_INT(opprof_machine_cached(0, &got, said, sizeof said), OPPROF_EINVAL);
    unsetenv("OPPROF_MACHINE_CACHE");
    remove_tree(dir);
}

/* Best of two measurements: each figure the larger, for the thread counts both have; two
 * machines' figures never mix (opprof_machine_keep_best, opprof_machine_remeasure). */
TEST_CASE(best_of_two_measurements) {
    opprof_machine a, b, before;
    CHECK_INT(opprof_machine_read(file("m.json", MACHINE), &a, NULL), 0);
    b = a;
    b.by_threads[0].fma_peak_gflops = 120;     /* higher: taken */
    b.by_threads[0].levels[0].load_gbs = 150;  /* lower: not */
    b.by_threads[0].levels[3].copy_gbs = 12.5; /* higher: taken */
    CHECK_INT(opprof_machine_keep_best(&a, &b), 0);
    CHECK_NEAR(a.by_threads[0].fma_peak_gflops, 120);
    CHECK_NEAR(a.by_threads[0].levels[0].load_gbs, 200);
    CHECK_NEAR(a.by_threads[0].levels[3].copy_gbs, 12.5);
    CHECK_NEAR(a.by_threads[0].levels[3].load_gbs, 20);
    CHECK_INT(a.by_threads[0].levels[1].bytes, 1048576);
    before = a;
    snprintf(b.isa, sizeof b.isa, "AVX-512"); /* another ISA's: refused, unchanged */
    b.by_threads[0].fma_peak_gflops = 1000;
    CHECK_INT(opprof_machine_keep_best(&a, &b), OPPROF_EFORMAT);
    CHECK(memcmp(&a, &before, sizeof a) == 0);
    CHECK_INT(opprof_machine_keep_best(NULL, &b), OPPROF_EINVAL);
    /* "Test CPU" is not this machine: not measured again, unchanged */
    CHECK_INT(opprof_machine_remeasure(&a), OPPROF_EFORMAT);
    CHECK(memcmp(&a, &before, sizeof a) == 0);
    /* a quick measurement is a whole profile of this machine */
    opprof_machine q, id;
    CHECK_INT(opprof_machine_identify(&id), 0);
    CHECK_INT(opprof_machine_measure_quick(1, &q), 0);
    CHECK_STR(q.cpu, id.cpu);
    CHECK_INT(q.threads, 1);
    CHECK(q.by_threads[0].fma_peak_gflops > 0);
    for (int l = 0; l < OPPROF_MACHINE_LEVELS; l++)
        CHECK(q.by_threads[0].levels[l].load_gbs > 0 && q.by_threads[0].levels[l].copy_gbs > 0);
    CHECK_INT(opprof_machine_measure_quick(0, &q), OPPROF_EINVAL);
}

int main(int argc, char **argv) {
    int rc = check_main(argc, argv, "test_roofline");
    if (g_dir[0]) remove_tree(g_dir);
    return rc;
}
