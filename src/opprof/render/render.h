/* render/render.h - the rendering layer: every output that a person or a
 * tool reads. One formatter per unit (render/units.c); the key-averages view
 * (render/averages_view.c): the rows (opprof_average_row, the one row model)
 * in one order, the columns as descriptors. The text table and the JSON rows
 * (render/table.c) are views of the same opprof__view, so they show the same
 * columns and agree cell for cell (test_render). A new column is one entry of
 * COLUMNS in render/averages_view.c. Text tables, HTML pages, the summary,
 * the timer's printout, the views of diff and ranks. The top layer but for
 * autostart/. */
#ifndef OPPROF_RENDER_LAYER_H
#define OPPROF_RENDER_LAYER_H

#include "analysis/analysis.h"

typedef enum opprof__unit {
    OPPROF__UNIT_NAME,     /* the row's key, cut to the column */
    OPPROF__UNIT_PERCENT,  /* a share: "12.34%", "NaN" when the whole is 0 */
    OPPROF__UNIT_TIME,     /* microseconds: "1.234ms" */
    OPPROF__UNIT_BYTES,    /* "1.50 MB" */
    OPPROF__UNIT_COUNT,    /* "12" */
    OPPROF__UNIT_FLOPS,    /* in the table's FLOPs unit: "  12.345", "--" */
    OPPROF__UNIT_RATE1,    /* per nanosecond, one decimal (GFLOP/s): "12.3", "--" */
    OPPROF__UNIT_RATE2,    /* ... two decimals (GB/s) */
    OPPROF__UNIT_TEXT,     /* a string cut to the column ("Input Shapes") */
    OPPROF__UNIT_LINES,    /* lines, one per table line, left-aligned ("Source Location") */
    OPPROF__UNIT_CHANGE,   /* a signed change of microseconds: "+1.234ms", "-5.000us" */
    OPPROF__UNIT_RATIO,    /* after / before: "1.25x", "inf" */
    OPPROF__UNIT_RELATIVE, /* a signed change as a fraction: "+5.30%", "--" */
    OPPROF__UNIT_PVALUE    /* a probability: "0.031", "2.1e-05" */
} opprof__unit;

typedef struct opprof__view opprof__view;

typedef struct opprof__column {
    const char *title; /* "%s" stands for the device's name (FLOPs: the unit's prefix); with
                          "%s", a "%" of the title is written "%%" */
    const char *key;   /* in JSON */
    opprof__unit unit;
    unsigned needs; /* OPPROF__SHOW_... that must all hold for it to be shown */
    double (*number)(const opprof_average_row *r, const opprof__view *v);    /* NAN: no value ("--", null) */
    const char *(*text)(const opprof_average_row *r, const opprof__view *v); /* text units */
} opprof__column;

enum {
    OPPROF__SHOW_DEVICE = 1u << 0,     /* the capture has device activities */
    OPPROF__SHOW_MEMORY = 1u << 1,     /* memory was recorded: the capture has memory events */
    OPPROF__SHOW_DEVICE_MEM = 1u << 2, /* device memory was recorded */
    OPPROF__SHOW_PEAK = 1u << 3,       /* options.peak_memory (and memory) */
    OPPROF__SHOW_SHAPES = 1u << 4,     /* grouped by input shape */
    OPPROF__SHOW_STACK = 1u << 5,      /* grouped by call stack */
    OPPROF__SHOW_FLOPS = 1u << 6,      /* options.flops, or FLOPs were recorded */
    OPPROF__SHOW_BYTES = 1u << 7,      /* FLOPs shown and some row moved bytes */
    OPPROF__SHOW_COST = 1u << 8,       /* options.profiler_cost, and the capture measured its cost */
    OPPROF__SHOW_STATS = 1u << 9,      /* options.stats (averages built with distributions) */
    OPPROF__SHOW_SAMPLES = 1u << 10,   /* options.samples, and the capture has samples */
    OPPROF__SHOW_CPU_TIME = 1u << 11,  /* options.cpu_time, and the capture has off-CPU times */
    OPPROF__SHOW_PARALLEL = 1u << 12,  /* some operator ran as parts on several threads */
    OPPROF__SHOW_ROOFLINE = 1u << 13,  /* options.machine: each row against its roof */
    OPPROF__SHOW_LAYER = 1u << 14      /* grouped by layer */
};

enum { OPPROF__MAX_COLUMNS = 32, OPPROF__MAX_NAME_WIDTH = 55 /* a name cell, "..." included */ };

struct opprof__view {
    const opprof_averages *avg;
    const opprof_average_row *rows;
    size_t n_rows;
    size_t *order; /* row indexes in display order */
    size_t shown;  /* order[0..shown) are displayed */
    const opprof__column *columns[OPPROF__MAX_COLUMNS];
    size_t n_columns;
    size_t width[OPPROF__MAX_COLUMNS]; /* text table: characters */
    unsigned flags;                    /* OPPROF__SHOW_... */
    int64_t self_total, device_total;
    const char *device;            /* "CUDA", "MTIA", or "" */
    double flops_scale;            /* the FLOPs column's unit: 1, 1e-3 (KFLOPs), ... */
    const char *flops_prefix;      /* "", "K", "M", "G", "T", "P" */
    const opprof_machine *machine; /* options.machine, or NULL */
    size_t *name_at;               /* per row: its name cell's window (opprof__name_windows) */
};

/* The rows and columns that `options` shows of `avg`: rows sorted (ties in
 * first-seen order) and cut to the row limit. Free with opprof__view_free
 * (on an error, nothing is left to free). */
OPPROF__HIDDEN int opprof__view_build(opprof__view *v, const opprof_averages *avg, const opprof_table_options *options);
/* The same with the roofline's columns, against `machine` (NULL: none). */
OPPROF__HIDDEN int opprof__view_build_roofline(opprof__view *v, const opprof_averages *avg,
                                               const opprof_table_options *options, const opprof_machine *machine);
OPPROF__HIDDEN void opprof__view_free(opprof__view *v);
/* A column's title, its "%s" filled in. */
OPPROF__HIDDEN void opprof__column_title(const opprof__view *v, const opprof__column *c, char *buf, size_t size);
/* The cell of a row in a column, as the text table shows it (the first line
 * of LINES cells). */
OPPROF__HIDDEN void opprof__cell(const opprof__view *v, const opprof__column *c, const opprof_average_row *r, char *buf,
                                 size_t size);

/* The one formatter of each numeric unit (not NAME, TEXT, LINES; FLOPS in
 * its own unit, as the view scales it): the text every output shows for x. */
OPPROF__HIDDEN void opprof__unit_text(opprof__unit unit, double x, char *buf, size_t size);
/* A name as tables show it: one of 52 bytes or more is its first 20, "..." and
 * its last 32 (PyTorch's width; PyTorch keeps the first 52). */
OPPROF__HIDDEN void opprof__name_cell(const char *name, char *buf, size_t size);
/* The same with a window at byte `at` (0: none): its first 16, "...", 33 from
 * `at` (or to its end) and "...". */
OPPROF__HIDDEN void opprof__name_cell_at(const char *name, size_t at, char *buf, size_t size);
/* For names whose cells would read the same, where their window opens
 * (at[i]; 0 for every other name): a few bytes before the name parts from the
 * most alike of them. OPPROF_ENOMEM. */
OPPROF__HIDDEN int opprof__name_windows(const char *const *names, size_t n, size_t *at);

/* A row's self-time distribution as the stats columns show it: per step
 * when the averages have 2 steps or more, else per call; NULL without
 * distributions. */
OPPROF__HIDDEN const opprof_distribution *opprof__view_self_distribution(const opprof__view *v,
                                                                         const opprof_average_row *r);

/* The shown column of that JSON key, or NULL. */
OPPROF__HIDDEN const opprof__column *opprof__view_column(const opprof__view *v, const char *key);
/* A cell as JSON: a string for text units, else the raw number (null: no value). */
OPPROF__HIDDEN void opprof__json_cell(opprof__strbuf *sb, const opprof__view *v, const opprof__column *c,
                                      const opprof_average_row *r);

/* "KEY": {"n": N, "min_us": ..., "q1_us", "median_us", "q3_us", "p90_us",
 * "p99_us", "max_us", "iqr_us", "mean_us", "cv"} (times given in ns). */
OPPROF__HIDDEN void opprof__json_distribution(opprof__strbuf *sb, const char *key, const opprof_distribution *d);

/* A raw value as JSON writes it: the shortest text that reads back as the
 * same double, "null" for NaN (a "--" cell). */
OPPROF__HIDDEN void opprof__number_text(double x, char *buf, size_t size);

/* render/text_table.c: n_rows x n_cols cells (row-major) under their titles, as
 * PyTorch lays its tables out; 0, or the buffer's error. */
OPPROF__HIDDEN int opprof__text_table(opprof__strbuf *sb, const char *const *titles, size_t n_cols,
                                      const char *const *cells, size_t n_rows);

/* ---- HTML pages (render/html_page.c, render/html_report.c) ---- */
/* render/html_timeline.c: the explorable timeline's section and data; the viewer
 * script (report.js), once per page, after the sections. */
OPPROF__HIDDEN int opprof__html_timeline(opprof__strbuf *sb, const opprof_capture *c);
/* The CPU's memory events (device_type 0) in time order, into *out (the caller
 * frees it with opprof__free; NULL when there are none), *n of them; sorted
 * only when the capture's order (by thread, then time) is not already it. */
OPPROF__HIDDEN int opprof__cpu_memory_by_time(const opprof_capture *c, const opprof_memory_event ***out, size_t *n);
/* The roofline chart of the averages against a machine (html_roofline.c). */
OPPROF__HIDDEN int opprof__html_roofline(opprof__strbuf *sb, const opprof_averages *avg, const opprof_machine *m);
OPPROF__HIDDEN void opprof__html_report_script(opprof__strbuf *sb);
/* The head of an opprof page (style included) up to <body><h1>title</h1>;
 * the tail with the sorting script. Tables of class "sortable" sort by a
 * click on a header; cells sort by their data-v, as text under a <th
 * data-text="1">, else as numbers. */
OPPROF__HIDDEN void opprof__html_begin(opprof__strbuf *sb, const char *title);
OPPROF__HIDDEN void opprof__html_end(opprof__strbuf *sb);
/* A table's name cell: the whole name to sort by and on hover, shown cut to
 * 80 characters (a kernel's 300-character name leaves the numbers on screen). */
OPPROF__HIDDEN void opprof__html_name_cell(opprof__strbuf *sb, const char *name);

/* ---- native functions by samples (render/samples_view.c): the cells of
 * opprof_capture_functions_to_string's table, row by row, for the HTML report ---- */
OPPROF__HIDDEN const char *const *opprof__functions_titles(size_t *n_columns);
OPPROF__HIDDEN int opprof__functions_cells(const opprof_capture *c, int row_limit, char ***cells, size_t *n_rows);
OPPROF__HIDDEN void opprof__functions_cells_free(char **cells, size_t n_rows);

#endif /* OPPROF_RENDER_LAYER_H */
