/* test_sizes.c - the allocator contract, checked: opprof and nn tell their
 * allocator hook the size of every block they free or grow (they keep it in
 * a header beside the block); here a hook that remembers each block's size
 * counts every call whose size is wrong, and every block still live at the end. The workload goes
 * through every output and input: a profiled forward pass, key averages
 * (grouped three ways), tables, JSON rows, the HTML report, the Chrome trace
 * written and read back, folded stacks, a diff, the summary, a merge and the
 * ranks compared. (Blocks still live at the end are said, not failed: the
 * recorder keeps its thread buffers for the next session.) TRAP=1 stops at
 * the first wrong size, for a debugger's backtrace. */
#include "check.h"
#include "testutil.h"

#include <nn/nn.h>
#include <opprof/capture.h>
#include <opprof/opprof.h>

static long g_wrong, g_live, g_calls;

/* Each block carries its size in a 16-byte header (malloc's alignment). */
static void *checking_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size) {
    (void)ctx;
    g_calls++;
    if (ptr) {
        size_t *head = (size_t *)((char *)ptr - 16);
        if (*head != old_size) {
            if (g_wrong++ < 5) fprintf(stderr, "block of %zu bytes freed or grown as %zu bytes\n", *head, old_size);
            if (getenv("TRAP")) __builtin_trap();
        }
        if (new_size == 0) {
            g_live--;
            free(head);
            return NULL;
        }
        head = realloc(head, new_size + 16);
        if (!head) return NULL;
        *head = new_size;
        return (char *)head + 16;
    }
    if (new_size == 0) return NULL;
    size_t *head = malloc(new_size + 16);
    if (!head) return NULL;
    *head = new_size;
    g_live++;
    return (char *)head + 16;
}

static void outputs(const opprof_capture *cap, const char *dir) {
    opprof_averages_options groupings[] = {{0}, {.group_by_input_shape = true}, {.group_by_stack_n = 3}};
    for (int g = 0; g < 3; g++) {
        opprof_averages *avg;
        CHECK_INT(opprof_capture_averages_ex(cap, &groupings[g], &avg), 0);
        opprof_table_options o = {.sort = OPPROF_SORT_SELF_CPU_TIME, .peak_memory = true, .flops = true};
        char *text = NULL, *json = NULL;
        CHECK_INT(opprof_averages_table_to_string(avg, &o, &text), 0);
        CHECK_INT(opprof_averages_json_to_string(avg, &o, &json), 0);
        opprof_free(text);
        opprof_free(json);
        opprof_averages_free(avg);
    }
    char *html = NULL, *stacks = NULL, *diff = NULL;
    CHECK_INT(opprof_capture_html_to_string(cap, &html), 0);
    CHECK_INT(opprof_capture_stacks_to_string(cap, OPPROF_STACKS_SELF_TIME, &stacks), 0);
    opprof_free(html);
    opprof_free(stacks);
    for (int f = OPPROF_DIFF_TEXT; f <= OPPROF_DIFF_HTML; f++) {
        CHECK_INT(opprof_capture_diff_to_string(cap, cap, 10, (opprof_diff_format)f, &diff), 0);
        opprof_free(diff);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    CHECK_INT(opprof_capture_chrome_write(cap, path), 0);
    opprof_capture *back = NULL;
    opprof_read_error err;
    CHECK_INT(opprof_capture_read(path, NULL, &back, &err), 0);
    opprof_summary *sum;
    CHECK_INT(opprof_summary_new(&sum), 0);
    opprof_averages *avg;
    CHECK_INT(opprof_capture_averages(back, &avg), 0);
    CHECK_INT(opprof_summary_add_capture(sum, back, avg), 0);
    char *summary = NULL;
    CHECK_INT(opprof_summary_json_to_string(sum, &summary), 0);
    opprof_free(summary);
    opprof_averages_free(avg);
    opprof_summary_free(sum);
    char merged[600];
    snprintf(merged, sizeof merged, "%s/merged.json", dir);
    const char *paths[] = {path, path};
    CHECK_INT(opprof_merge_traces(paths, 2, merged, NULL, &err), 0);
    opprof_capture *two[] = {back, back};
    opprof_ranks *ranks;
    CHECK_INT(opprof_ranks_analyze(two, 2, &ranks), 0);
    char *table = NULL;
    CHECK_INT(opprof_ranks_table_to_string(ranks, &table), 0);
    opprof_free(table);
    opprof_ranks_free(ranks);
    opprof_capture_free(back);
}

TEST_CASE(every_free_and_realloc_gets_the_size_it_allocated) {
    static const opprof_allocator checking = {checking_realloc, NULL};
    CHECK_INT(opprof_set_allocator(&checking), 0);
    CHECK_INT(nn_set_allocator(&checking), 0);
    char dir[256];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    {
        nn_manual_seed(5);
        nn_module *l[3], *m;
        CHECK_INT(nn_linear_new(&l[0], 64, 128), 0);
        CHECK_INT(nn_relu_new(&l[1]), 0);
        CHECK_INT(nn_linear_new(&l[2], 128, 16), 0);
        CHECK_INT(nn_sequential_new(&m, l, 3), 0);
        nn_tensor *x;
        CHECK_INT(nn_tensor_randn(&x, 2, (int64_t[]){32, 64}), 0);
        opprof_config cfg = opprof_config_default();
        cfg.profile_memory = cfg.record_shapes = cfg.with_stack = cfg.with_flops = true;
        opprof_session *s;
        CHECK_INT(opprof_session_start(&s, &cfg), 0);
        for (int step = 0; step < 3; step++) {
            OPPROF_SCOPE("batch_%d", step);
            nn_tensor *y = NULL;
            CHECK_INT(nn_module_forward(m, x, &y), 0);
            nn_tensor_free(y);
        }
        CHECK_INT(opprof_session_stop(s), 0);
        opprof_capture *cap = NULL;
        CHECK_INT(opprof_session_take_capture(s, &cap), 0);
        if (cap) outputs(cap, dir);
        opprof_capture_free(cap);
        opprof_session_free(s);
        nn_tensor_free(x);
        nn_module_free(m);
        nn_release_cached_memory();
    }
    remove_tree(dir);
    printf("test_sizes: %ld allocator calls, %ld with a wrong size, %ld blocks live at the end\n", g_calls, g_wrong,
           g_live);
    CHECK(g_calls > 100);
    CHECK_INT(g_wrong, 0);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_sizes"); }
