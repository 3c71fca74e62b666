/* sql.h - `opprof sql`: traces as SQLite tables laid out as Perfetto's
 * trace_processor lays out its own (slice, thread, process, track, counter,
 * args, flow, stats...), beside opprof's (key_averages, step, memory,
 * samples), the functions Perfetto's users call, and trace_processor's CSV.
 *
 *   schema.c     the tables and views: the one list of their columns
 *   load.c       a capture's timeline into Perfetto's tables
 *   load_own.c   what opprof knows besides (averages, steps, memory, samples,
 *                each slice's facts)
 *   args.c       the args table's rows, a set's arguments in one row
 *   read_args.c  another writer's arguments into args as its trace is read
 *   writer.c     rows inserted, on a thread of their own during a load
 *   grow.c       sql_grow, the arrays' growth
 *   functions.c  EXTRACT_ARG, ancestor_slice & co., INCLUDE PERFETTO MODULE
 *   span_join.c  SPAN_JOIN, SPAN_LEFT_JOIN, SPAN_OUTER_JOIN
 *   run.c        statements run one after another
 *   print.c      a result printed in a mode (csv, list, tabs, column, line, json)
 *   shell.c      the prompt: statements and SQLite's dot commands
 *
 * Every function returns 0 or an SQLite error code, with the reason in the
 * database's error message (sqlite3_errmsg) or in `why`. */
#ifndef OPPROF_TOOLS_SQL_H
#define OPPROF_TOOLS_SQL_H

#include <opprof/capture.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/** Bind `types` to st's parameters and run it once: 'i' an int64_t, 'I' an
 *  int64_t or NULL when negative (an id), 'd' a double, 's' a string or NULL
 *  for NULL and "", 'S' a string ("" kept) or NULL for NULL, '-' NULL (no
 *  argument). The values are copied: the caller's strings may change once it
 *  returns. The row is run later, on the writer's thread (sql_writer_start:
 *  SQLITE_MISUSE without one), and its error comes back from a later
 *  sql_row or the drain. */
int sql_row(sqlite3_stmt *st, const char *types, ...);
/** The writer (writer.c): a thread that runs sql_row's rows while the
 *  caller goes on, one at a time in a process. While it runs, the caller
 *  makes no SQLite call but sql_row, sql_prepare and sql_finalize (which
 *  wait for it) until sql_writer_drain has returned. Each returns SQLITE_OK
 *  (or SQLITE_NOMEM: no thread) or the first row's error since the start. */
int sql_writer_start(void);
int sql_writer_drain(void);
int sql_writer_stop(void);
/** *p holds at least `need` items of `size` bytes (its capacity *cap doubled
 *  as needed); false, *p unchanged, when out of memory. */
bool sql_grow(void **p, size_t *cap, size_t need, size_t size);
/** sqlite3_prepare_v3 for a statement run many times (after the writer's rows);
 *  *st is NULL on an error (a row's before it included). */
int sql_prepare(sqlite3 *db, const char *text, sqlite3_stmt **st);
/** sqlite3_finalize, after the writer's rows (NULL accepted). */
void sql_finalize(sqlite3_stmt *st);

/** Create every table and view (a new, empty database). */
int sql_create_schema(sqlite3 *db);
/* The version of the tables, in a database's PRAGMA user_version: one more
 * each time a table or column changes, so that --db's file of another version
 * is made again. 2: trace.host, slice.thread_ts and thread_dur; 3: opprof_slice.layer;
 * 4: args.flat_key without array indices, arrays and objects flattened;
 * 5: args a view of arg_chunk and arg_key; 6: arg_chunk's names key x 4096 + place;
 * 7: trace_bounds; 8: trace.format and the metadata view; 9: thread_state;
 * 10: slice and opprof_slice views of one __intrinsic_slice. */
enum { SQL_SCHEMA_VERSION = 10 };
/* The user_version of a kept database whose tables a statement changed
 * (kept.c): opprof's, made again at the next run, never reused as it is. */
enum { SQL_CHANGED_VERSION = 0x4f505046 };
/** --db's kept database: note each statement that writes to main as it is
 *  prepared (sql_kept_guard, on the connection the statements run on), and
 *  mark the file changed before the first of them runs (sql_kept_mark, after
 *  each prepare and after each statement: SQLite's code); whether it is
 *  marked now (sql_kept_changed). */
void sql_kept_guard(sqlite3 *db);
int sql_kept_mark(sqlite3 *db);
bool sql_kept_changed(sqlite3 *db);
/* The slice view's own columns (schema.c's), as the functions that return
 * slices give them (ancestor_slice and its kin; the cat and slice_id
 * aliases added where Perfetto adds them). */
#define SQL_SLICE_COLUMNS "id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts, thread_dur"
/** Index what the functions and joins look up (slices by parent and track,
 *  flows by end): once every trace is loaded (argument chunks by set: with
 *  the tables, as their rows come in that order). */
int sql_create_indexes(sqlite3 *db);

/** Where the next rows of each table start: ids go on across the traces of
 *  one database, so that each keeps its own processes, threads and slices. */
typedef struct sql_ids {
    int64_t trace, upid, utid, track, slice, arg_set, arg, arg_key, counter, flow, sample, memory, thread_state;
    /* trace_bounds so far: the first instant and the last end of the slices,
       counters, samples and memory events inserted; first > last: none */
    int64_t first_ts, last_end;
} sql_ids;
/** The first ids of a new database (Perfetto's utid 0 and upid 0 are the
 *  placeholder "swapper" thread and process, as its tables have them). */
sql_ids sql_ids_start(void);
/** An event from `start` to `end` (ns) widens ids' trace bounds. */
static inline void sql_bounds_take(sql_ids *ids, int64_t start, int64_t end) {
    if (start < ids->first_ts) ids->first_ts = start;
    if (end > ids->last_end) ids->last_end = end;
}
/** trace_bounds' row, as trace_processor bounds a trace: (0, 0) when empty,
 *  an instant alone ending 1 ns after it. */
int sql_bounds_insert(sqlite3 *db, const sql_ids *ids);

/** What the reader said of a trace that is not in the capture: the stats
 *  table's rows (name, value, description). */
typedef struct sql_stat {
    char name[64];
    int64_t value;
    char description[256];
} sql_stat;

/** A trace loaded: its file, when it was written, and the reader's stats. */
typedef struct sql_trace {
    const char *path;
    int64_t mtime_ns, size_bytes;
    const sql_stat *stats;
    size_t n_stats;
} sql_trace;

/** The args table's writer (args.c): the arguments given one after another
 *  for one set become one arg_chunk row, their keys arg_key's rows, each
 *  key written once a database. */
typedef struct sql_args sql_args;
/* The arguments of one chunk at most: its names are key x this + place;
 * SQL_ARGS_A_CHUNK_SQL is the same number in the SQL that takes them apart. */
enum { SQL_ARGS_A_CHUNK = 4096 };
#define SQL_ARGS_A_CHUNK_SQL "4096"
int sql_args_open(sqlite3 *db, sql_ids *ids, sql_args **out);
/** One argument of set `set`, key `key` (without "args."): type 'i' the
 *  integer i, 'r' the double d, 's' the string s (NULL: ""). */
int sql_args_add(sql_args *a, int64_t set, const char *key, char type, int64_t i, const char *s, double d);
/** The chunk begun written (at the end of each trace). */
int sql_args_flush(sql_args *a);
/** Set `from`'s arguments made set `into`'s (into < 0: dropped), once the
 *  tables are indexed (sql_args_settle): a set written before the load knew
 *  its event (read_args.c) that is an event's second, or of no event. */
int sql_args_move_set(sql_args *a, int64_t from, int64_t into);
/** The moves done: after sql_create_indexes, the writer stopped. */
int sql_args_settle(sql_args *a);
/** The key is one of "Input Dims" (a shape's, which load.c adds otherwise). */
bool sql_args_key_gives_dims(const char *key);
/** a freed, what it did not write dropped (NULL accepted). */
void sql_args_close(sql_args *a);

/** Another writer's arguments written to args as its trace is read
 *  (opprof_read_options.spill_args; read_args.c): each event's are a set
 *  of their own at once, which the writer's thread inserts while the read
 *  goes on, and the event keeps the set's id as its OPPROF_SPILLED_ARGS_ARG. */
typedef struct sql_read_args {
    sql_args *args;
    sql_ids *ids;
    int64_t first_set; /* the trace's first set */
    size_t n_sets;     /* written for the trace, ids from first_set */
    uint8_t *dims;     /* by set: its arguments give "Input Dims" */
    size_t cap;
    int rc; /* the first error, which failed the read: SQLite's code */
} sql_read_args;
/** r made ready for a trace's read (what it held of the last one freed). */
void sql_read_args_begin(sql_read_args *r, sql_args *args, sql_ids *ids);
/** opprof_read_options.spill_args (ctx: a sql_read_args): one event's
 *  arguments as a new set; its id, or an opprof error code (r->rc SQLite's). */
int64_t sql_read_args_add(void *ctx, int part, const opprof_spilled_arg *args, size_t n);
void sql_read_args_free(sql_read_args *r);

/** Load one capture: Perfetto's tables (load.c), then opprof's (load_own.c);
 *  inside the caller's transaction. `read`: the sets written as the trace
 *  was read (their events are the ones that keep an OPPROF_SPILLED_ARGS_ARG),
 *  or NULL when the capture holds its arguments. */
int sql_load_capture(sqlite3 *db, const opprof_capture *cap, const sql_trace *trace, const sql_read_args *read,
                     sql_args *args, sql_ids *ids);
/** What opprof knows of each event that Perfetto's columns do not hold, for
 *  its slice row (load_own.c; the opprof_slice view's columns). Arrays by
 *  event, made only where the capture has such facts: NULL gives 0 (-1 for
 *  layer; flops: PyTorch's formula from the event's name and shapes). */
typedef struct sql_slice_facts {
    const opprof_capture *cap;
    int64_t *flops, *bytes;            /* the events' marks' (opprof's own traces) */
    int64_t *samples, *off_cpu, *peak; /* samples owned, ns off the CPU, peak bytes above the start */
    int32_t *layer;                    /* the layer of the tensor its "name" argument names */
} sql_slice_facts;
/** One event's facts, as its slice row takes them. */
typedef struct sql_slice_fact {
    const char *kind, *file, *function; /* file and function NULL when unknown */
    int64_t line;                       /* -1: unknown */
    char input_dims[1024];              /* "" without shapes */
    int64_t flops, bytes, off_cpu_ns, peak_memory_bytes, samples, layer;
} sql_slice_fact;
/** *f made for cap's events: SQLITE_OK or SQLITE_NOMEM (nothing kept). */
int sql_slice_facts_make(const opprof_capture *cap, sql_slice_facts *f);
void sql_slice_fact_of(const sql_slice_facts *f, size_t event, sql_slice_fact *out);
/** f's arrays freed (f made again empty). */
void sql_slice_facts_free(sql_slice_facts *f);

/* slice_ids: each event's slice id (load.c: in time order) */
int sql_load_own(sqlite3 *db, const opprof_capture *cap, int64_t trace_id, const int64_t *utids,
                 const int64_t *slice_ids, sql_ids *ids);

/** Register EXTRACT_ARG and the table-valued functions (ancestor_slice,
 *  descendant_slice, directly_connected_flow, following_flow, preceding_flow). */
int sql_register_functions(sqlite3 *db);

/** Perfetto's SPAN_JOIN, SPAN_LEFT_JOIN and SPAN_OUTER_JOIN operator tables
 *  (CREATE VIRTUAL TABLE x USING SPAN_JOIN(t1 [PARTITIONED col], t2 ...)):
 *  span_join.c. */
int sql_register_span_join(sqlite3 *db);

/** A table-valued function NAME(arguments...) of `columns`, each row one of
 *  `query`, which names its arguments "$name" ("a, b": $a and $b). The
 *  strings are copied. SQLite's error code. */
int sql_create_table_function(sqlite3 *db, const char *name, const char *arguments, const char *columns,
                              const char *query);

/** The next name of a list "a, b, c" from *p: its start and length, *p
 *  past it and its ','; false at the list's end. */
bool sql_next_name(const char **p, const char **name, int *len);

/** argv[k] bound to st's parameter "$NAME" of the k-th name of `arguments`
 *  ("a, b"), as PerfettoSQL's functions take their arguments (a parameter
 *  that st does not have is left). */
void sql_bind_arguments(sqlite3_stmt *st, const char *arguments, sqlite3_value **argv, int argc);

/** A function of the user's (CREATE PERFETTO FUNCTION) may run its select
 *  once more on this thread: true while the thread's stack keeps room for
 *  SQLite's frames; else false with *why (sqlite3_malloc'd, NULL when out of
 *  memory) naming `function`. A recursion without end is an error, not a
 *  crash. Each run of a select goes within sql_call_enter and _leave. */
bool sql_call_fits(const char *function, char **why);
void sql_call_enter(void);
void sql_call_leave(void);

/** "INCLUDE PERFETTO MODULE name": the module's views, created once. An
 *  unknown module is an error that names the ones there are. */
int sql_include_module(sqlite3 *db, const char *module, char *why, size_t why_size);

/** A statement of PerfettoSQL's own at p (INCLUDE PERFETTO MODULE, CREATE
 *  [OR REPLACE] PERFETTO TABLE, VIEW, INDEX or FUNCTION: perfetto_sql.c) run,
 *  *next past it and its ';': SQLITE_OK, or SQLite's error with why said;
 *  -1 when p is no such statement (SQLite's own, then). */
int sql_perfetto_statement(sqlite3 *db, const char *p, const char **next, char *why, size_t why_size);

/** Finalize what CREATE PERFETTO FUNCTION's functions keep between calls
 *  (each its prepared select): before sqlite3_close, which refuses a
 *  connection with statements left. */
void sql_release_functions(void);

/** The statement at p with its macro calls (NAME!(args), CREATE PERFETTO
 *  MACRO's) expanded into *expanded (sqlite3_malloc'd; NULL when it has
 *  none: p as it is, *after untouched), *after past its ';' in p. A
 *  macro's own definition is not expanded. SQLite's error, with why said. */
int sql_expand_macros(sqlite3 *db, const char *p, char **expanded, const char **after, char *why, size_t why_size);

/** p past blanks and comments (-- and C's). */
const char *sql_skip_blank(const char *p);

/** How a result prints: trace_processor's CSV, or one of SQLite's shell's
 *  modes (`.mode list`: values joined by '|', no quotes, a header; tabs: by
 *  tabs; column: aligned under a header and dashes; line: `name = value` a
 *  line, rows a blank line apart; json: an array of objects). */
typedef enum sql_mode {
    SQL_MODE_CSV,
    SQL_MODE_LIST,
    SQL_MODE_TABS,
    SQL_MODE_COLUMN,
    SQL_MODE_LINE,
    SQL_MODE_JSON
} sql_mode;

/** The modes' names, as a message lists them: "csv, list, ... or json". */
extern const char SQL_MODE_NAMES[];

/** The mode named `name` into *mode: 0, or -1 when none is. */
int sql_mode_by_name(const char *name, sql_mode *mode);

/** A prepared statement run, its result printed in `mode` (print.c's rules);
 *  nothing printed when its first step fails. */
int sql_print_result(sqlite3_stmt *st, sql_mode mode, FILE *out);

/** Run every statement of `text` and print each result to out, as
 *  trace_processor's shell does: a statement without result columns prints
 *  an empty line, each result its header and rows, results one blank line
 *  apart. On an error: its message (with the statement's first line) in why,
 *  and what was printed stays printed. out NULL: nothing is printed (a
 *  module's statements), a result's rows are stepped through. */
int sql_run(sqlite3 *db, const char *text, sql_mode mode, FILE *out, char *why, size_t why_size);

/** The prompt: statements from `in` (each when complete, the last at the
 *  end of `in` even without its ';'), SQLite's shell's .tables, .schema
 *  [NAME], .mode MODE (SQL_MODE_NAMES), .help and .quit; errors said on stderr, the
 *  session goes on. Returns SQLITE_OK, or SQLITE_ERROR when `in` is no
 *  terminal and a statement or command failed (sqlite3's exit status). */
int sql_shell(sqlite3 *db, sql_mode mode, FILE *in, FILE *out);

/** The first `n` bytes of text are one or more whole statements (SQLite's
 *  sqlite3_complete, with INCLUDE PERFETTO MODULE lines). */
int sql_is_complete(const char *text);

#endif
