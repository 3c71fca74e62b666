/* test_alloc.c - the library's default allocator (base/alloc.c), seen from
 * its public functions: a capture large enough that its arrays and its
 * outputs pass 2 MiB, where a block is a mapping of its own that grows by
 * moving its pages (a table of 60,000 rows, its text some megabytes), gives
 * every row as the same capture a tenth its size gives its own: every name
 * once with its own time and count; and the text freed and made again. */
#include "check.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>

#include <stdio.h>
#include <string.h>

enum { OPERATORS = 60000 };

/* Operator k: called 1 + k % 3 times, each call k + 1 ns. */
static opprof_capture *capture_of(int operators) {
    opprof_capture *cap = NULL;
    uint32_t thread = 0;
    if (opprof_capture_new(&cap) || opprof_capture_add_thread(cap, 1, "main", &thread)) return cap;
    int64_t t = 0;
    for (int k = 0; k < operators; k++) {
        char name[32];
        snprintf(name, sizeof name, "operator_%06d", k);
        for (int call = 0; call <= k % 3; call++) {
            if (opprof_capture_add_event(cap, thread, name, OPPROF_KIND_CPU_OP, t, k + 1)) return cap;
            t += k + 2;
        }
    }
    opprof_capture_finish(cap);
    return cap;
}

static char *table_of(const opprof_capture *cap) {
    opprof_averages *avg = NULL;
    char *text = NULL;
    opprof_table_options o = {.sort = OPPROF_SORT_NONE, .row_limit = -1};
    if (opprof_capture_averages(cap, &avg) == 0) opprof_averages_table_to_string(avg, &o, &text);
    opprof_averages_free(avg);
    return text;
}

/* The row of operator k in a table's text: its name, its time a call
 * (k + 1 ns, in us), its count last. */
static bool row_says(const char *text, int k) {
    char name[32], avg[32];
    snprintf(name, sizeof name, "operator_%06d ", k);
    snprintf(avg, sizeof avg, " %.3fus ", (k + 1) / 1000.0);
    const char *row = strstr(text, name), *end = row ? strchr(row, '\n') : NULL;
    if (!end) return false;
    const char *last = end, *time = strstr(row, avg);
    while (last > row && last[-1] == ' ') last--;
    return time && time < end && last > row && last[-1] == (char)('1' + k % 3) && last[-2] == ' ';
}

TEST_CASE(large_blocks_keep_every_row) {
    opprof_capture *small = capture_of(OPERATORS / 10), *large = capture_of(OPERATORS);
    char *few = small ? table_of(small) : NULL, *many = large ? table_of(large) : NULL;
    CHECK(few != NULL && many != NULL);
    if (!few || !many) goto done;
    CHECK(strlen(many) > (size_t)4 << 20); /* past 2 MiB: the large blocks' way */
    size_t rows = 0;
    for (const char *p = many; (p = strstr(p, "operator_")); p++) rows++;
    CHECK_INT((long long)rows, OPERATORS);
    for (int k = 0; k < OPERATORS; k += 997) CHECK(row_says(many, k));
    CHECK(row_says(many, OPERATORS - 1));
    /* each row of the small capture's in the large one's (the shares of the total aside) */
    for (int k = 0; k < OPERATORS / 10; k += 251) CHECK(row_says(few, k) && row_says(many, k));
    /* freed, and made again: the same text */
    char *again = table_of(large);
    CHECK(again && !strcmp(again, many));
    opprof_free(again);
done:
    opprof_free(few);
    opprof_free(many);
    opprof_capture_free(small);
    opprof_capture_free(large);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_alloc"); }
