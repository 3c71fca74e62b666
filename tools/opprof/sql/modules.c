/* modules.c - the modules of Perfetto's standard library that INCLUDE
 * PERFETTO MODULE names, written anew from their documentation (its
 * modules call trace_processor's C++ internals and cannot run on SQLite):
 *   slices.with_context   thread_slice, process_slice, thread_or_process_slice
 *   slices.self_dur       slice_self_dur (id, self_dur)
 *   slices.hierarchy      _slice_ancestor_and_self(id), _slice_descendant_and_self(id)
 *   slices.flat_slices    _slice_flattened: each thread's slices without their
 *                         nesting, at each instant the deepest slice open
 *   intervals.overlap     intervals_overlap_count!(table, ts, dur): (ts, value),
 *                         how many intervals are open from each ts on
 *   counters.intervals    counter_leading_intervals!(table): each counter value's
 *                         interval on its track, and the values next to it
 *   linux.perf.samples    linux_perf_samples_summary_tree: the sampled stacks
 *                         as a tree, each node's samples as leaf and in all
 *   time.conversion       its functions are functions.c's, always there
 * A module is a script of statements, SQLite's and PerfettoSQL's (run.c),
 * that makes the session's own views, tables, functions and macros (TEMP,
 * as perfetto_sql.c makes them): including it again changes nothing. */
#include "sql.h"

#include <string.h>

typedef struct module {
    const char *name, *script;
} module;

/* The types of the slice's columns that _slice_ancestor_and_self and its kin return (SQL_SLICE_COLUMNS). */
#define HIERARCHY_TYPES                                                                                    \
    "id LONG, ts LONG, dur LONG, track_id LONG, category STRING, name STRING, depth LONG, parent_id LONG," \
    " arg_set_id LONG, thread_ts LONG, thread_dur LONG"

static const module MODULES[] = {
    {"slices.with_context",
     "CREATE TEMP VIEW IF NOT EXISTS thread_slice AS SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id,"
     " tr.name AS track_name, t.name AS thread_name, t.utid, t.tid, t.is_main_thread, p.name AS process_name,"
     " p.upid, p.pid, s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur"
     " FROM slice s JOIN track tr ON tr.id = s.track_id JOIN thread t ON t.utid = tr.utid"
     " LEFT JOIN process p ON p.upid = t.upid WHERE tr.is_counter = 0;\n"
     "CREATE TEMP VIEW IF NOT EXISTS process_slice AS SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id,"
     " tr.name AS track_name, p.name AS process_name, p.upid, p.pid, s.depth, s.parent_id, s.arg_set_id,"
     " s.thread_ts, s.thread_dur FROM slice s JOIN track tr ON tr.id = s.track_id"
     " JOIN process p ON p.upid = tr.upid WHERE tr.utid IS NULL AND tr.is_counter = 0;\n"
     "CREATE TEMP VIEW IF NOT EXISTS thread_or_process_slice AS SELECT s.id, s.ts, s.dur, s.category, s.name,"
     " s.track_id, tr.name AS track_name, t.name AS thread_name, t.utid, t.tid, p.name AS process_name, p.upid,"
     " p.pid, s.depth, s.parent_id, s.arg_set_id, s.thread_ts, s.thread_dur FROM slice s"
     " JOIN track tr ON tr.id = s.track_id LEFT JOIN thread t ON t.utid = tr.utid"
     " LEFT JOIN process p ON p.upid = COALESCE(tr.upid, t.upid) WHERE tr.is_counter = 0;\n"},
    {"slices.self_dur",
     "CREATE TEMP VIEW IF NOT EXISTS slice_self_dur AS SELECT s.id, s.dur - COALESCE((SELECT SUM(c.dur)"
     " FROM slice c WHERE c.parent_id = s.id), 0) AS self_dur FROM slice s;\n"},
    /* The slice itself, then what ancestor_slice or descendant_slice gives. */
    {"slices.hierarchy",
     "CREATE OR REPLACE PERFETTO FUNCTION _slice_ancestor_and_self(slice_id LONG) RETURNS TABLE(" HIERARCHY_TYPES
     ") AS SELECT " SQL_SLICE_COLUMNS " FROM slice WHERE id = $slice_id UNION ALL SELECT " SQL_SLICE_COLUMNS
     " FROM ancestor_slice($slice_id);\n"
     "CREATE OR REPLACE PERFETTO FUNCTION _slice_descendant_and_self(slice_id LONG) RETURNS TABLE(" HIERARCHY_TYPES
     ") AS SELECT " SQL_SLICE_COLUMNS " FROM slice WHERE id = $slice_id UNION ALL SELECT " SQL_SLICE_COLUMNS
     " FROM descendant_slice($slice_id);\n"},
    /* A slice's own pieces of time: from its start (or the end of the child
     * before) to each child's start, and from its last child's end (or its
     * start) to its end; pieces of no time left out. A thread's slices
     * nest, so the pieces of all its slices tile the time some slice is
     * open, each piece the deepest slice's. */
    {"slices.flat_slices",
     "INCLUDE PERFETTO MODULE slices.with_context;\n"
     "CREATE TEMP TABLE IF NOT EXISTS _slice_flattened AS WITH"
     " child AS (SELECT parent_id AS owner, ts AS piece_end,"
     " LAG(ts + dur) OVER (PARTITION BY parent_id ORDER BY ts, id) AS end_before FROM slice"
     " WHERE parent_id IS NOT NULL AND dur >= 0),"
     " piece AS (SELECT c.owner AS id, COALESCE(c.end_before, p.ts) AS ts, c.piece_end FROM child c"
     " JOIN slice p ON p.id = c.owner UNION ALL SELECT p.id, COALESCE((SELECT MAX(c.ts + c.dur) FROM slice c"
     " WHERE c.parent_id = p.id AND c.dur >= 0), p.ts), p.ts + p.dur FROM slice p WHERE p.dur >= 0)"
     " SELECT piece.id AS slice_id, piece.ts, piece.piece_end - piece.ts AS dur, s.depth, s.name, s.track_id,"
     " s.utid, s.tid, s.thread_name, s.upid, s.pid, s.process_name FROM piece JOIN thread_slice s ON s.id = piece.id"
     " WHERE piece.piece_end > piece.ts ORDER BY piece.ts, s.track_id, s.depth;\n"
     "CREATE INDEX IF NOT EXISTS temp._slice_flattened_id_idx ON _slice_flattened(slice_id);\n"
     "CREATE INDEX IF NOT EXISTS temp._slice_flattened_ts_idx ON _slice_flattened(ts);\n"},
    /* Each start counts one more open interval and each end one fewer (an
     * interval of dur -1, unfinished, never ends); the count after all the
     * changes at a ts is that ts's value. */
    {"intervals.overlap",
     "CREATE OR REPLACE PERFETTO MACRO intervals_overlap_count(segments TableOrSubquery, ts_column ColumnName,"
     " dur_column ColumnName) RETURNS TableOrSubquery AS (SELECT ts, SUM(change) OVER (ORDER BY ts) AS value"
     " FROM (SELECT ts, SUM(change) AS change FROM (SELECT $ts_column AS ts, 1 AS change FROM $segments"
     " UNION ALL SELECT $ts_column + $dur_column, -1 FROM $segments WHERE $dur_column != -1) GROUP BY ts)"
     " ORDER BY ts);\n"},
    /* On each track, a counter's value from its ts to the next value that
     * differs (the last one's to the trace's end), a value equal to the one
     * before it on its track left out; next_value the interval's after, and
     * delta_value its value less the one before (NULL at either end). */
    {"counters.intervals",
     "CREATE OR REPLACE PERFETTO MACRO counter_leading_intervals(counter_table TableOrSubquery) RETURNS"
     " TableOrSubquery AS (SELECT id, ts, COALESCE(LEAD(ts) OVER track, TRACE_END()) - ts AS dur, track_id, value,"
     " LEAD(value) OVER track AS next_value, value - LAG(value) OVER track AS delta_value FROM (SELECT id, ts,"
     " track_id, value, LAG(value) OVER (PARTITION BY track_id ORDER BY ts, id) AS value_before FROM $counter_table)"
     " WHERE value_before IS NULL OR value_before != value WINDOW track AS (PARTITION BY track_id ORDER BY ts, id));\n"},
    /* A node a callsite (a distinct path from the outermost frame) that a
     * sample has or holds: its frame's name, mapping and source ("file:line",
     * taken apart), the samples that end at it and those that pass through
     * it (each sample's callsite walked up to the root). */
    {"linux.perf.samples",
     "CREATE TEMP TABLE IF NOT EXISTS linux_perf_samples_summary_tree AS WITH RECURSIVE"
     " leaf AS (SELECT callsite_id AS id, COUNT(*) AS n FROM perf_sample WHERE callsite_id IS NOT NULL"
     " GROUP BY callsite_id),"
     " up(id, n) AS (SELECT id, n FROM leaf UNION ALL SELECT c.parent_id, up.n FROM up"
     " JOIN stack_profile_callsite c ON c.id = up.id WHERE c.parent_id IS NOT NULL),"
     " total AS (SELECT id, SUM(n) AS n FROM up GROUP BY id)"
     " SELECT c.id, c.parent_id, f.name, m.name AS mapping_name,"
     " CASE WHEN rtrim(f.source, '0123456789') GLOB '?*:' AND rtrim(f.source, '0123456789') != f.source"
     " THEN substr(f.source, 1, length(rtrim(f.source, '0123456789')) - 1) ELSE f.source END AS source_file,"
     " CASE WHEN rtrim(f.source, '0123456789') GLOB '?*:' AND rtrim(f.source, '0123456789') != f.source"
     " THEN CAST(substr(f.source, length(rtrim(f.source, '0123456789')) + 1) AS INT) END AS line_number,"
     " COALESCE(leaf.n, 0) AS self_count, total.n AS cumulative_count FROM total"
     " JOIN stack_profile_callsite c ON c.id = total.id JOIN stack_profile_frame f ON f.id = c.frame_id"
     " LEFT JOIN stack_profile_mapping m ON m.id = f.mapping LEFT JOIN leaf ON leaf.id = c.id ORDER BY c.id;\n"},
    {"time.conversion", ""},
};

int sql_include_module(sqlite3 *db, const char *name, char *why, size_t why_size) {
    for (size_t k = 0; k < sizeof MODULES / sizeof *MODULES; k++) {
        if (strcmp(MODULES[k].name, name)) continue;
        char said[512] = "";
        /* all of it or nothing: a module that fails half-way (a name of the
         * session's taken) leaves none of its tables and views behind */
        int rc = sqlite3_exec(db, "SAVEPOINT opprof_include", NULL, NULL, NULL);
        bool saved = rc == SQLITE_OK;
        if (saved) rc = sql_run(db, MODULES[k].script, SQL_MODE_CSV, NULL, said, sizeof said);
        /* what failed, said before the rollback's own message replaces it */
        if (rc) snprintf(why, why_size, "INCLUDE PERFETTO MODULE %s: %s", name, said[0] ? said : sqlite3_errmsg(db));
        if (rc && saved) sqlite3_exec(db, "ROLLBACK TO opprof_include", NULL, NULL, NULL);
        if (saved) sqlite3_exec(db, "RELEASE opprof_include", NULL, NULL, NULL);
        return rc;
    }
    size_t n = (size_t)snprintf(why, why_size, "INCLUDE PERFETTO MODULE %s: no such module here (opprof has", name);
    for (size_t k = 0; k < sizeof MODULES / sizeof *MODULES && n < why_size; k++)
        n += (size_t)snprintf(why + n, why_size - n, "%s %s", k ? "," : "", MODULES[k].name);
    if (n < why_size) snprintf(why + n, why_size - n, ")");
    return SQLITE_ERROR;
}
