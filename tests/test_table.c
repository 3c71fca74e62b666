/* test_table.c - PyTorch's table layout and number formats, on hand-built
 * captures. */
#include "check.h"

#include <opprof/capture.h>

static const char *fmt_time(double us) {
    static char buf[64];
    opprof_format_time_us(us, buf, sizeof buf);
    return buf;
}

static const char *fmt_mem(int64_t b) {
    static char buf[64];
    opprof_format_memory(b, buf, sizeof buf);
    return buf;
}

TEST_CASE(time_units) {
    /* Time: us below 1e3, ms below 1e6, else s; three decimals. */
    CHECK_STR(fmt_time(0.0), "0.000us");
    CHECK_STR(fmt_time(0.583), "0.583us");
    CHECK_STR(fmt_time(999.9994), "999.999us");
    CHECK_STR(fmt_time(1000.0), "1.000ms");
    CHECK_STR(fmt_time(1030.0), "1.030ms");
    CHECK_STR(fmt_time(999999.0), "999.999ms");
    CHECK_STR(fmt_time(1e6), "1.000s");
    CHECK_STR(fmt_time(2.5e6), "2.500s");
}

TEST_CASE(memory_units) {
    /* Memory: 1024-based, B/KB/MB/GB as PyTorch 2.x prints, sign kept. */
    CHECK_STR(fmt_mem(0), "0 B");
    CHECK_STR(fmt_mem(592), "592 B");
    CHECK_STR(fmt_mem(-312), "-312 B");
    CHECK_STR(fmt_mem(1023), "1023 B");
    CHECK_STR(fmt_mem(1024), "1.00 KB");
    CHECK_STR(fmt_mem(589824), "576.00 KB");
    CHECK_STR(fmt_mem(-32776), "-32.01 KB");
    CHECK_STR(fmt_mem(-1048576), "-1.00 MB");
    CHECK_STR(fmt_mem(-1048580), "-1.00 MB");
    CHECK_STR(fmt_mem(1536LL * 1024 * 1024), "1.50 GB");
    CHECK_STR(fmt_mem(-3LL * 1024 * 1024 * 1024), "-3.00 GB");
}

TEST_CASE(null_accessors) {
    /* NULL: every accessor answers as for an empty capture or averages. */
    size_t none = 99;
    CHECK(opprof_capture_events(NULL, &none) == NULL && none == 0);
    none = 99;
    CHECK(opprof_capture_marks(NULL, &none) == NULL && none == 0);
    none = 99;
    CHECK(opprof_capture_memory_events(NULL, &none) == NULL && none == 0);
    none = 99;
    CHECK(opprof_capture_threads(NULL, &none) == NULL && none == 0);
    none = 99;
    CHECK(opprof_capture_warnings(NULL, &none) == NULL && none == 0);
    CHECK(opprof_capture_name(NULL, 0) == NULL);
    CHECK_INT(opprof_capture_name_count(NULL), 0);
    CHECK(opprof_capture_site(NULL, 1) == NULL);
    CHECK(opprof_capture_shapes(NULL, 1) == NULL);
    CHECK(opprof_capture_category(NULL, NULL) == NULL);
    CHECK_INT(opprof_capture_get_info(NULL).duration_ns + opprof_capture_get_info(NULL).pid, 0);
    none = 99;
    CHECK(opprof_averages_rows(NULL, &none) == NULL && none == 0);
    CHECK_INT(opprof_averages_self_total_ns(NULL), 0);
    CHECK_INT(opprof_averages_self_device_total_ns(NULL), 0);
    CHECK_STR(opprof_averages_device_name(NULL), "");
    opprof_capture_free(NULL);
    opprof_averages_free(NULL);
}

TEST_CASE(sort_keys) {
    /* Sort keys by PyTorch's names. */
    opprof_sort_key key;
    CHECK_INT(opprof_sort_key_parse("self_cpu_time_total", &key), 0);
    CHECK_INT(key, OPPROF_SORT_SELF_CPU_TIME);
    CHECK_INT(opprof_sort_key_parse("self_cpu_memory_usage", &key), 0);
    CHECK_INT(key, OPPROF_SORT_SELF_CPU_MEMORY);
    CHECK_INT(opprof_sort_key_parse("cuda_time_total", &key), 0); /* PyTorch's older name */
    CHECK_INT(key, OPPROF_SORT_DEVICE_TIME_TOTAL);
    CHECK_INT(opprof_sort_key_parse("self_device_time_total", &key), 0);
    CHECK_INT(key, OPPROF_SORT_SELF_DEVICE_TIME);
    CHECK_INT(opprof_sort_key_parse("gpu_time", &key), OPPROF_EINVAL);
    CHECK_STR(opprof_sort_key_name(OPPROF_SORT_COUNT), "count");
}

TEST_CASE(table_of_a_capture) {
    /* A capture: outer(10us) > inner(4us) x2, one long name, memory. */
    opprof_capture *c;
    CHECK_INT(opprof_capture_new(&c), 0);
    opprof_capture_info info = {.step_num = 4, .profile_memory = true};
    opprof_capture_set_info(c, &info);
    uint32_t t;
    CHECK_INT(opprof_capture_add_thread(c, 100, "main", &t), 0);
    const char *long_name = "a_very_long_operator_name_that_goes_past_the_limit_of_columns";
    CHECK_INT(opprof_capture_add_event(c, t, "outer", OPPROF_KIND_USER_ANNOTATION, 0, 10000), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "inner", OPPROF_KIND_CPU_OP, 1000, 2000), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "inner", OPPROF_KIND_CPU_OP, 4000, 2000), 0);
    CHECK_INT(opprof_capture_add_event(c, t, long_name, OPPROF_KIND_CPU_OP, 20000, 1500000), 0);
    CHECK_INT(opprof_capture_add_memory(c, t, 1500, 0x10, 2048, -1), 0);
    CHECK_INT(opprof_capture_add_memory(c, t, 8000, 0x10, -2048, -1), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    opprof_averages *avg;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    char *table = NULL;
    CHECK_INT(opprof_averages_table_to_string(
                  avg, &(opprof_table_options){.sort = OPPROF_SORT_SELF_CPU_TIME, .row_limit = -1}, &table),
              0);
    /* name width = min(longest + 4, 55) = 55; the long name keeps its first 20 and last 32 bytes around "..."
     * (PyTorch keeps the first 52). */
    const char *expected =
        "-------------------------------------------------------  ------------  ------------  ------------  "
        "------------  ------------  ------------  ------------  ------------  \n"
        "                                                   Name    Self CPU %      Self CPU   CPU total %     "
        "CPU total  CPU time avg       CPU Mem  Self CPU Mem    # of Calls  \n"
        "-------------------------------------------------------  ------------  ------------  ------------  "
        "------------  ------------  ------------  ------------  ------------  \n"
        "a_very_long_operator...t_goes_past_the_limit_of_columns        99.34%       1.500ms        99.34%     "
        "  1.500ms       1.500ms           0 B           0 B             1  \n"
        "                                                  outer         0.40%       6.000us         0.66%     "
        " 10.000us      10.000us           0 B      -2.00 KB             1  \n"
        "                                                  inner         0.26%       4.000us         0.26%     "
        "  4.000us       2.000us       2.00 KB       2.00 KB             2  \n"
        "-------------------------------------------------------  ------------  ------------  ------------  "
        "------------  ------------  ------------  ------------  ------------  \n"
        "Self CPU time total: 1.510ms\n";
    CHECK_STR(table, expected);
    opprof_free(table);

    /* Row limit and another sort key; ties keep first-seen order. */
    CHECK_INT(opprof_averages_table_to_string(avg, &(opprof_table_options){.sort = OPPROF_SORT_COUNT, .row_limit = 1},
                                              &table),
              0);
    CHECK_CONTAINS(table, "inner");
    CHECK(strstr(table, "outer") == NULL);
    opprof_free(table);
    CHECK_INT(opprof_averages_table_to_string(
                  avg, &(opprof_table_options){.sort = OPPROF_SORT_CPU_MEMORY, .row_limit = 0}, &table),
              0);
    /* cpu mem: inner 2048, outer 0, long 0: outer before long (first seen). */
    const char *inner = strstr(table, "inner"), *outer = strstr(table, "outer"), *lng = strstr(table, "a_very");
    CHECK(inner && outer && lng && inner < outer && outer < lng);
    opprof_free(table);
    opprof_averages_free(avg);
    opprof_capture_free(c);

    /* Without memory: no memory columns; short names give a narrow column. */
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_add_thread(c, 1, "", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "ab", OPPROF_KIND_CPU_OP, 0, 500), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "ProfilerStep#7", OPPROF_KIND_STEP, 1000, 500), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "ProfilerStep#8", OPPROF_KIND_STEP, 2000, 500), 0);
    CHECK_INT(opprof_capture_add_warning(c, "something odd"), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    size_t n;
    const opprof_average_row *rows = opprof_averages_rows(avg, &n);
    CHECK_INT(n, 2);
    CHECK_STR(rows[1].key, "ProfilerStep*");
    CHECK_INT(rows[1].calls, 2);
    CHECK_INT(opprof_averages_table_to_string(avg, &(opprof_table_options){.sort = OPPROF_SORT_NONE, .row_limit = 100},
                                              &table),
              0);
    CHECK(
        strncmp(
            table,
            "-----------------  ------------  ------------  ------------  ------------  ------------  ------------  \n"
            "             Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  \n",
            2 * 104) == 0);
    CHECK_CONTAINS(
        table,
        "               ab        33.33%       0.500us        33.33%       0.500us       0.500us             1  \n");
    CHECK_CONTAINS(
        table,
        "    ProfilerStep*        66.67%       1.000us        66.67%       1.000us       0.500us             2  \n");
    CHECK_CONTAINS(table, "Self CPU time total: 1.500us\nWarnings: 1 ");
    opprof_free(table);
    opprof_averages_free(avg);
    opprof_capture_free(c);

    /* An empty capture: percentages would divide by zero; no rows. */
    CHECK_INT(opprof_capture_new(&c), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    CHECK_INT(opprof_averages_table_to_string(
                  avg, &(opprof_table_options){.sort = OPPROF_SORT_SELF_CPU_TIME, .row_limit = 12}, &table),
              0);
    CHECK_CONTAINS(table, "Self CPU time total: 0.000us\n");
    opprof_free(table);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

/* Columns follow what was recorded: a session with profile_memory that saw
 * no allocation shows no memory column; FLOPs stated by an operator show the
 * FLOPs columns without asking. */
TEST_CASE(columns_follow_the_recording) {
    opprof_capture *c;
    CHECK_INT(opprof_capture_new(&c), 0);
    opprof_capture_info info = {.step_num = 1, .profile_memory = true};
    opprof_capture_set_info(c, &info);
    uint32_t t;
    CHECK_INT(opprof_capture_add_thread(c, 7, "main", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "my::gemm", OPPROF_KIND_CPU_OP, 0, 4000), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "my::copy", OPPROF_KIND_CPU_OP, 5000, 1000), 0);
    opprof_mark m = {.thread = t, .event = 0, .kind = OPPROF_MARK_FLOPS, .value.i = 8000000};
    CHECK_INT(opprof_capture_add_mark(c, &m, "flops", NULL), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    opprof_averages *avg = NULL;
    char *table = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    opprof_table_options plain = {.sort = OPPROF_SORT_NONE, .row_limit = -1}; /* flops not asked for */
    CHECK_INT(opprof_averages_table_to_string(avg, &plain, &table), 0);
    CHECK(table && !strstr(table, "CPU Mem")); /* no memory event: no memory column */
    CHECK_CONTAINS(table, "Total MFLOPs");     /* stated FLOPs: shown */
    CHECK_CONTAINS(table, "GFLOP/s");
    CHECK_CONTAINS(table, "2000.0"); /* 8 MFLOP in 4 us */
    opprof_free(table);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

/* Long names keep their head and their tail: two instantiations of one
 * template kernel that differ at the end stay two readable rows (PyTorch's
 * cut kept the first 52 bytes: the same text twice); a multi-byte character
 * is never split; a short name is whole. */
TEST_CASE(long_names_keep_their_tail) {
    static const char *const names[] = {
        "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, at::detail::Array<char*, 3> >",
        "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, at::detail::Array<char*, 3> >",
        "kernel_\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9_middle_part_of_it_that_goes_on_\xe2\x82\xac_the_end",
        "aten::addmm",
    };
    opprof_capture *c;
    CHECK_INT(opprof_capture_new(&c), 0);
    uint32_t t;
    CHECK_INT(opprof_capture_add_thread(c, 7, "main", &t), 0);
    for (int k = 0; k < 4; k++) CHECK_INT(opprof_capture_add_event(c, t, names[k], OPPROF_KIND_CPU_OP, k * 100, 50), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    opprof_averages *avg = NULL;
    char *table = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    opprof_table_options o = {.sort = OPPROF_SORT_NONE, .row_limit = -1};
    CHECK_INT(opprof_averages_table_to_string(avg, &o, &table), 0);
    /* head and tail would read the same ("void at::native::vec...>, at::detail::Array<char*, 3> >"):
     * each shows where it parts from the other */
    CHECK(table && !strstr(table, "void at::native::vec...>, at::detail::Array<char*, 3> >"));
    CHECK_CONTAINS(table, "void at::native:...native::AddFunctor<float>, at::de...");
    CHECK_CONTAINS(table, "void at::native:...native::MulFunctor<float>, at::de...");
    CHECK_CONTAINS(
        table,
        "kernel_\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9..."); /* 20 bytes would split the 7th \xc3\xa9 */
    CHECK_CONTAINS(table, "   aten::addmm  ");
    opprof_free(table);
    /* the diff's table names its rows the same way */
    CHECK_INT(opprof_capture_diff_to_string(c, c, 0, OPPROF_DIFF_TEXT, &table), 0);
    CHECK_CONTAINS(table, "void at::native:...native::AddFunctor<float>, at::de...");
    CHECK_CONTAINS(table, "void at::native:...native::MulFunctor<float>, at::de...");
    opprof_free(table);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

/* The profiler's own cost: a parent whose 40 children each cost 20 ns to
 * record (the range cost the capture measured) has 800 ns of its 1000 ns of
 * self time from the profiler; the table says so, and the column shows it. */
TEST_CASE(profiler_cost) {
    opprof_capture *c;
    CHECK_INT(opprof_capture_new(&c), 0);
    opprof_capture_info info = {.step_num = 1, .overhead_range_ns = 20.0};
    opprof_capture_set_info(c, &info);
    uint32_t t;
    CHECK_INT(opprof_capture_add_thread(c, 7, "main", &t), 0);
    CHECK_INT(opprof_capture_add_event(c, t, "dispatch", OPPROF_KIND_USER_ANNOTATION, 0, 1800), 0);
    for (int k = 0; k < 40; k++)
        CHECK_INT(opprof_capture_add_event(c, t, "tiny", OPPROF_KIND_CPU_OP, 10 + 40 * k, 20), 0);
    CHECK_INT(opprof_capture_finish(c), 0);
    opprof_averages *avg = NULL;
    char *text = NULL;
    CHECK_INT(opprof_capture_averages(c, &avg), 0);
    opprof_table_options plain = {.sort = OPPROF_SORT_NONE, .row_limit = -1};
    CHECK_INT(opprof_averages_table_to_string(avg, &plain, &text), 0);
    CHECK(text && !strstr(text, "Profiler (est.)")); /* the column only when asked for */
    CHECK_CONTAINS(text, "Note: the profiler's own cost is most of the self time of 1 row(s), such as 'dispatch' "
                         "(about 0.800us of its 1.000us");
    opprof_free(text);
    opprof_table_options with = {.sort = OPPROF_SORT_NONE, .row_limit = -1, .profiler_cost = true};
    CHECK_INT(opprof_averages_table_to_string(avg, &with, &text), 0);
    CHECK_CONTAINS(text, "Profiler (est.)");
    CHECK_CONTAINS(text, "0.800us");
    opprof_free(text);
    CHECK_INT(opprof_averages_json_to_string(avg, &with, &text), 0);
    CHECK_CONTAINS(text, "\"profiler_cost_us\": 0.8");
    opprof_free(text);
    opprof_averages_free(avg);
    opprof_capture_free(c);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_table"); }
