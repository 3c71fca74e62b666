/* flight_view.c - a flight recorder's save explained: why it was made, the
 * steps it holds, and its triggering step against the median of the other
 * steps it holds: first its duration (what the program waited for), then
 * operator by operator (self time per step, on or off the CPU, from the
 * averages' per-step distributions), the largest changes first. */
#include "render/render.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct flight_row {
    const char *key;
    double step_ns, median_ns;
} flight_row;

static int by_change(const void *a, const void *b) {
    const flight_row *x = a, *y = b;
    double dx = x->step_ns - x->median_ns, dy = y->step_ns - y->median_ns;
    return (dx < dy) - (dx > dy);
}

/* The median of v[0..n) without v[skip]. */
static double median_without(double *v, size_t n, size_t skip, double *scratch) {
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i != skip) scratch[m++] = v[i];
    if (!m) return NAN;
    for (size_t i = 1; i < m; i++) /* few steps: insertion sort */
        for (size_t j = i; j > 0 && scratch[j - 1] > scratch[j]; j--) {
            double t = scratch[j];
            scratch[j] = scratch[j - 1];
            scratch[j - 1] = t;
        }
    return m % 2 ? scratch[m / 2] : (scratch[m / 2 - 1] + scratch[m / 2]) / 2;
}

static void head(opprof__strbuf *sb, const opprof_flight_info *f) {
    opprof__sb_printf(sb, "Flight recorder: %s\n", f->reason);
    opprof__sb_printf(sb, "Holds steps %lld to %lld", (long long)f->first_step, (long long)f->last_step);
    if (f->steps_dropped)
        opprof__sb_printf(sb, "; the ring had dropped %llu older step(s)", (unsigned long long)f->steps_dropped);
    if (f->triggers_suppressed)
        opprof__sb_printf(sb, "; %llu trigger(s) since the last save were suppressed (cool-down)",
                          (unsigned long long)f->triggers_suppressed);
    opprof__sb_puts(sb, "\n");
}

/* The rows' cells: name, step, median, change, ratio. */
static int comparison(opprof__strbuf *sb, const opprof_averages *avg, size_t step, int row_limit) {
    size_t n_rows, n_steps = opprof_averages_steps(avg);
    const opprof_average_row *rows = opprof_averages_rows(avg, &n_rows);
    flight_row *fr = opprof__calloc(n_rows + 2, sizeof *fr);
    double *v = opprof__calloc(n_steps, sizeof *v), *scratch = opprof__calloc(n_steps, sizeof *scratch);
    char **cells = opprof__calloc((n_rows + 2) * 5, sizeof *cells);
    int rc = fr && v && scratch && cells ? 0 : OPPROF_ENOMEM;
    if (!rc && !(rc = opprof_averages_step_durations(avg, v))) /* the step's wall time: what the program waited for */
        fr[0] = (flight_row){"(step duration)", v[step], median_without(v, n_steps, step, scratch)};
    size_t n = 1;
    for (size_t r = 0; !rc && r < n_rows; r++) {
        if (opprof_averages_row_step_self(avg, r, v)) continue;
        fr[n] = (flight_row){rows[r].key, v[step], median_without(v, n_steps, step, scratch)};
        n += fr[n].step_ns != 0 || fr[n].median_ns != 0; /* a row that ran in neither says nothing */
    }
    if (!rc) qsort(fr + 1, n - 1, sizeof *fr, by_change);
    if (row_limit >= 0 && (size_t)row_limit + 1 < n) n = (size_t)row_limit + 1;
    if (!rc && !(rc = opprof_averages_step_self_totals(avg, v)))
        fr[n++] = (flight_row){"(all rows, self time total)", v[step], median_without(v, n_steps, step, scratch)};
    for (size_t r = 0; !rc && r < n; r++) {
        char buf[5][96];
        opprof__name_cell(fr[r].key, buf[0], sizeof buf[0]);
        opprof__unit_text(OPPROF__UNIT_TIME, fr[r].step_ns / 1e3, buf[1], sizeof buf[1]);
        opprof__unit_text(OPPROF__UNIT_TIME, fr[r].median_ns / 1e3, buf[2], sizeof buf[2]);
        opprof__unit_text(OPPROF__UNIT_CHANGE, (fr[r].step_ns - fr[r].median_ns) / 1e3, buf[3], sizeof buf[3]);
        opprof__unit_text(OPPROF__UNIT_RATIO,
                          fr[r].median_ns > 0 ? fr[r].step_ns / fr[r].median_ns
                          : fr[r].step_ns > 0 ? INFINITY
                                              : NAN,
                          buf[4], sizeof buf[4]);
        for (int k = 0; k < 5 && !rc; k++)
            if (!(cells[r * 5 + k] = opprof__strdup(buf[k]))) rc = OPPROF_ENOMEM;
    }
    static const char *const titles[] = {"Name", "Its step", "Median step", "Change", "Ratio"};
    if (!rc) rc = opprof__text_table(sb, titles, 5, (const char *const *)cells, n);
    opprof__sb_puts(sb, "\n");
    for (size_t i = 0; cells && i < n * 5; i++) opprof__free(cells[i]);
    opprof__free(cells);
    opprof__free(fr);
    opprof__free(v);
    opprof__free(scratch);
    return rc;
}

static int capture_flight_to_string_here(const opprof_capture *c, int row_limit, char **out) {
    if (!c || !out) return OPPROF_EINVAL;
    *out = NULL;
    const opprof_flight_info *f = &c->info.flight;
    if (!f->reason[0]) return OPPROF_EINVAL;
    opprof__strbuf sb = {0};
    head(&sb, f);
    opprof_averages *avg = NULL;
    opprof_averages_options opt = {.distributions = true};
    int rc = opprof_capture_averages_ex(c, &opt, &avg);
    size_t n_steps = rc ? 0 : opprof_averages_steps(avg);
    int64_t step = f->trigger_step - f->first_step;
    if (!rc && f->trigger_step >= 0 && step >= 0 && (size_t)step < n_steps && n_steps >= 2) {
        opprof__sb_printf(&sb,
                          "Step %lld against the median of the other %zu step(s) it holds: its duration, then "
                          "each row's self time in the step (on or off the CPU), largest changes first:\n",
                          (long long)f->trigger_step, n_steps - 1);
        rc = comparison(&sb, avg, (size_t)step, row_limit);
    } else if (!rc) {
        opprof__sb_puts(&sb, f->trigger_step < 0 ? "A dump: no step triggered it.\n"
                                                 : "No other step to compare its step with.\n");
    }
    opprof_averages_free(avg);
    return opprof__sb_finish(&sb, rc, out);
}

/* The numbers as C writes them, whatever locale the program set (base/c_numbers.c). */
int opprof_capture_flight_to_string(const opprof_capture *c, int row_limit, char **out) {
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = capture_flight_to_string_here(c, row_limit, out);
    opprof__c_numbers_end(numbers);
    return rc;
}
