/* tool.h - what the commands of `opprof` share: a command's entry in the one
 * command table (commands.h), the exit statuses, loading a trace with a
 * progress bar and its problems said, the reasons a file cannot be written.
 * The tools' own names start with tool_ (the library's with opprof_). */
#ifndef OPPROF_TOOLS_TOOL_H
#define OPPROF_TOOLS_TOOL_H

#include <opprof/capture.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../exit_codes.h"
#include "../options.h"

/** A command: `opprof NAME ...`. Its help (`opprof help NAME`, `opprof NAME
 *  --help`) is made of its fields by main.c, so it is written once. */
typedef struct tool_command {
    const char *name;
    const char *synopsis;         /* "report TRACE [OPTIONS]": the usage after "opprof " (lines), its
                                     [OPTIONS] made of the options' list */
    const char *summary;          /* one line, for `opprof help` */
    const char *help;             /* what it does, before its options */
    const tool_option *options;   /* its options (options.h), their help lines after `help` */
    const char *examples;         /* command lines, one a line, each with what it does after "#" */
    void (*more_help)(FILE *out); /* NULL, or lists that come from elsewhere (the sort keys) */
    /** argv[0] is the program, argv[1...] the command's options and operands
     *  (never --help: main.c answers it). Returns an exit status. */
    int (*run)(int argc, char **argv);
} tool_command;

/** Define a command of the file: its static HELP, OPTIONS (TOOL_OPTIONS),
 *  EXAMPLES and run() with these. */
#define TOOL_COMMAND(cmd, synopsis_text, summary_text, more) \
    const tool_command tool_cmd_##cmd = {#cmd, synopsis_text, summary_text, HELP, OPTIONS, EXAMPLES, more, run}

/** The end of a command that makes text: on rc 0 the text goes to `out_path`
 *  (a file, whole or not at all) or, when NULL, to stdout; otherwise why
 *  `what` failed goes to stderr. Frees text; returns the exit status. */
int tool_emit(const char *what, int rc, char *text, const char *out_path);
/** Close an open_memstream's f, whose text is *text: 0, or OPPROF_ENOMEM with
 *  *text freed and NULL (glibc's fclose gives 0 and a NULL text when its last
 *  growth fails). */
int tool_memstream_close(FILE *f, char **text);

/** "opprof: " + the message + where help is; TOOL_EXIT_USAGE. */
int tool_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** A whole number in [-1, 1e9] for `flag`; -1 (and a message) if not. */
int tool_parse_count(const char *text, const char *flag, int *out);

/** A progress bar on stderr, for files over 100 MB read on a terminal. */
typedef struct tool_progress {
    const char *path;
    bool enabled;
    double started;
} tool_progress;
void tool_progress_init(tool_progress *pr, const char *path);
/** The reader's on_progress, with a tool_progress as ctx. */
void tool_on_progress(void *ctx, int64_t done, int64_t total);

/** Read a trace; on failure print why (file, position, reason) and return
 *  TOOL_EXIT_UNREADABLE. Events the reader could not use are never dropped
 *  silently: their count and the first reason go to stderr, and a trace with
 *  problems and no event at all is an error. A directory (record's DIR) is
 *  read as its one trace; one of several or none is an error that says so. */
int tool_load(const char *path, opprof_capture **out);
/* The traces of a directory and its subdirectories (trace_list.c), by path,
 * into *out (free with tool_free_list); none is an error, said. */
int tool_list_traces(const char *dir, char ***out, size_t *n);
void tool_free_list(char **names, size_t n);
/* paths with each directory among them made its traces (tool_list_traces),
 * into *out (free with tool_free_list): for the commands that take several. */
int tool_expand_traces(const char *const *paths, size_t n, char ***out, size_t *n_out);
/* The trace that path names into *trace: path itself, or the one trace of a
 * directory (record's DIR), a string of its own in *owned (free it); one of
 * several or none is said, and TOOL_EXIT_UNREADABLE. */
int tool_trace_of(const char *path, char **owned, const char **trace);
/* A profile that is a table without a timeline (TensorRT's per-layer profile)
 * gives `command` nothing to write: said (naming what does read it), and
 * TOOL_EXIT_UNREADABLE; 0 for a capture with events. */
int tool_need_timeline(const char *path, const opprof_capture *cap, const char *command);
/* The same, an ONNX Runtime profile's rows by node (by_node: --group-by node). */
int tool_load_by(const char *path, bool by_node, opprof_capture **out);
/* tool_load, every writer's counters, instants, flows and async ranges kept
 * (opprof_read_options.keep_event_marks): for a trace written again. */
int tool_load_to_write(const char *path, opprof_capture **out);
/* What tool_load_counted says besides: the problems and the kinds of valid
 * events that are in no table (the reader's on_unused). */
#define TOOL_LOAD_UNUSED_KINDS 32
typedef struct tool_load_unused {
    char kind[96];
    uint64_t count;
} tool_load_unused;
typedef struct tool_load_counts {
    long problems;
    char first_problem[600];
    tool_load_unused unused[TOOL_LOAD_UNUSED_KINDS];
    int n_unused;
} tool_load_counts;
/* Where another writer's arguments go as they are read, instead of into the
 * capture (opprof_read_options.spill_args and spill_ctx). */
typedef struct tool_spill {
    int64_t (*args)(void *ctx, int part, const opprof_spilled_arg *args, size_t n);
    void *ctx;
} tool_spill;
/* tool_load, every writer's marks kept (opprof_read_options.keep_marks),
 * those counts into *counts, and the arguments into `spill` (NULL: kept). */
int tool_load_counted(const char *path, tool_load_counts *counts, const tool_spill *spill, opprof_capture **out);
/* On stderr: who wrote the trace at path (when not opprof), and its
 * warnings, the first WARNINGS_SHOWN with their count, or all. */
void tool_say_warnings(const char *path, const opprof_capture *cap, bool all);

/** A machine's ceilings: `path`'s profile (opprof machine --json; an error
 *  said, TOOL_EXIT_UNREADABLE, when it is not one), or with NULL this
 *  machine's, measured now (said on stderr). */
int tool_load_machine(const char *path, opprof_machine *m);
/** The same, with the capture's own machine (its trace's) before measuring. */
int tool_machine_for(const char *path, const opprof_capture *cap, opprof_machine *m);

/** The trace format a file name asks for (load.c: the one list of the names). */
typedef enum tool_trace_format {
    TOOL_FORMAT_UNKNOWN,
    TOOL_FORMAT_JSON,       /* *.json */
    TOOL_FORMAT_JSON_GZ,    /* *.json.gz */
    TOOL_FORMAT_PERFETTO,   /* *.pftrace, *.perfetto-trace */
    TOOL_FORMAT_PERFETTO_GZ /* *.pftrace.gz */
} tool_trace_format;
tool_trace_format tool_format_of(const char *path);
/** Write cap to path in the format its name asks for (whole or not at all);
 *  on failure say why and return TOOL_EXIT_UNREADABLE; 0 when written. */
int tool_write_trace(const opprof_capture *cap, const char *path);

/** Say why `path` could not be written (and where, when not obvious). */
void tool_write_error(const char *path, int rc);
/* path's directory into dir ("." for a bare name, "/" for one at the root);
 * its last part returned (within path). */
const char *tool_dir_of(const char *path, char *dir, size_t size);

/* A command's temporary (temporary.c): path removed if SIGINT, SIGTERM or
 * SIGHUP stops the command until unguard (which then ends as the signal
 * does; a signal the caller ignores stays ignored). */
void tool_temporary_guard(const char *path);
void tool_temporary_unguard(void);
/* PATH + infix + PID (then nothing or ".more") beside path, left by a
 * process that is gone (SIGKILL), removed. */
void tool_temporary_sweep(const char *path, const char *infix);

/** What `opprof diff --stat` was asked (stat_diff.c). */
typedef struct tool_stat_request {
    double alpha, detect; /* 0: the library's defaults */
    int row_limit;
    opprof_diff_format format;
    const char *html;              /* the HTML page's path, or NULL */
    const opprof_stat_gate *gates; /* --fail-if */
    size_t n_gates;
    const opprof_what_if_change *what_if; /* --what-if: BEFORE replayed, set against AFTER */
    size_t n_what_if;
    const char *machine_path; /* --machine (for NAME=roof), or NULL */
    bool by_layer;            /* --group-by layer: rows per (name, layer) */
} tool_stat_request;
/** Compare BEFORE and AFTER (each a trace or a directory of traces); the
 *  exit status (TOOL_EXIT_REGRESSED when a gate trips). */
int tool_stat_diff(const char *before, const char *after, const tool_stat_request *req);

/** `opprof report --ranks DIR [--json]` (ranks_report.c). */
int tool_ranks_report(const char *dir, bool json);

#endif
