/* schema.c - the tables and views of `opprof sql`: Perfetto's (names,
 * columns, ids and units as trace_processor's documentation gives them:
 * times in ns, ids from 0) and opprof's own. The one list of their columns:
 * the loaders insert by these names. */
#include "sql.h"

static const char SCHEMA[] =
    /* What opprof adds: one row a trace of the database. */
    "CREATE TABLE trace(id INTEGER PRIMARY KEY, file TEXT, producer TEXT, rank INTEGER, world_size INTEGER,"
    " backend TEXT, host TEXT, pid INTEGER, first_step INTEGER, last_step INTEGER, start_ts INTEGER,"
    " end_ts INTEGER, mtime_ns INTEGER, size_bytes INTEGER, format TEXT);\n"
    /* Perfetto's. */
    "CREATE TABLE process(upid INTEGER PRIMARY KEY, id INTEGER GENERATED ALWAYS AS (upid) VIRTUAL, pid INTEGER,"
    " name TEXT, start_ts INTEGER, end_ts INTEGER, parent_upid INTEGER, uid INTEGER, cmdline TEXT,"
    " arg_set_id INTEGER, trace_id INTEGER);\n"
    "CREATE TABLE thread(utid INTEGER PRIMARY KEY, id INTEGER GENERATED ALWAYS AS (utid) VIRTUAL, tid INTEGER,"
    " name TEXT, start_ts INTEGER, end_ts INTEGER, upid INTEGER, is_main_thread INTEGER, trace_id INTEGER);\n"
    "CREATE TABLE track(id INTEGER PRIMARY KEY, name TEXT, type TEXT, classification TEXT,"
    " dimension_arg_set_id INTEGER, parent_id INTEGER, utid INTEGER, upid INTEGER, is_counter INTEGER);\n"
    "CREATE VIEW thread_track AS SELECT id, name, type, classification, dimension_arg_set_id, parent_id, utid"
    " FROM track WHERE utid IS NOT NULL AND is_counter = 0;\n"
    "CREATE VIEW process_track AS SELECT id, name, type, classification, dimension_arg_set_id, parent_id, upid"
    " FROM track WHERE utid IS NULL AND upid IS NOT NULL AND is_counter = 0;\n"
    "CREATE VIEW counter_track AS SELECT id, name, type, classification, dimension_arg_set_id, parent_id"
    " FROM track WHERE is_counter = 1;\n"
    "CREATE VIEW process_counter_track AS SELECT id, name, type, classification, dimension_arg_set_id,"
    " parent_id, upid FROM track WHERE is_counter = 1 AND utid IS NULL AND upid IS NOT NULL;\n"
    "CREATE VIEW thread_counter_track AS SELECT id, name, type, classification, dimension_arg_set_id,"
    " parent_id, utid FROM track WHERE is_counter = 1 AND utid IS NOT NULL;\n"
    /* a slice's row holds Perfetto's columns and opprof's (one insert a slice, not two);
     * the slice and opprof_slice views give each its own, as trace_processor's slice is
     * a view of its __intrinsic_slice */
    "CREATE TABLE __intrinsic_slice(id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, track_id INTEGER,"
    " category TEXT, name TEXT, depth INTEGER, parent_id INTEGER, arg_set_id INTEGER, thread_ts INTEGER,"
    " thread_dur INTEGER, kind TEXT, file TEXT, function TEXT, line INTEGER, input_dims TEXT, flops INTEGER,"
    " bytes INTEGER, off_cpu_ns INTEGER, peak_memory_bytes INTEGER, samples INTEGER, layer INTEGER);\n"
    "CREATE VIEW slice AS SELECT id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts,"
    " thread_dur, category AS cat, id AS slice_id FROM __intrinsic_slice;\n"
    /* args: a set's arguments one after another are one arg_chunk row (args.c), a JSON
     * object whose names are k x 4096 + n (SQL_ARGS_A_CHUNK): the n-th of the chunk, its
     * id the chunk's plus n, under key k of arg_key. */
    "CREATE TABLE arg_key(id INTEGER PRIMARY KEY, key TEXT, flat_key TEXT);\n"
    "CREATE TABLE arg_chunk(id INTEGER PRIMARY KEY, arg_set_id INTEGER, args TEXT);\n"
    /* a set's chunks in id order; made before the rows, unlike the other indexes: the
     * sets come in order, but for a few, so it is appended to as they are, where made
     * after them it read the whole table back (a 194 MB Kineto trace: 51,812 reads of
     * a page, 18,825 with it first) */
    "CREATE INDEX arg_chunk_by_set ON arg_chunk(arg_set_id);\n"
    "CREATE VIEW args AS SELECT c.id + j.key % " SQL_ARGS_A_CHUNK_SQL " AS id, c.arg_set_id, k.flat_key, k.key,"
    " CASE j.type WHEN 'integer' THEN j.atom END AS int_value, CASE j.type WHEN 'text' THEN j.atom END AS"
    " string_value, CASE j.type WHEN 'real' THEN j.atom END AS real_value, CASE j.type WHEN 'integer' THEN 'int'"
    " WHEN 'text' THEN 'string' ELSE 'real' END AS value_type, CAST(j.atom AS TEXT) AS display_value"
    " FROM arg_chunk c, json_each(c.args) j JOIN arg_key k ON k.id = j.key / " SQL_ARGS_A_CHUNK_SQL ";\n"
    "CREATE TABLE counter(id INTEGER PRIMARY KEY, ts INTEGER, track_id INTEGER, value REAL, arg_set_id INTEGER);\n"
    "CREATE TABLE flow(id INTEGER PRIMARY KEY, slice_out INTEGER, slice_in INTEGER, trace_id INTEGER,"
    " arg_set_id INTEGER);\n"
    "CREATE TABLE stats(name TEXT, idx INTEGER, severity TEXT, source TEXT, value INTEGER, description TEXT,"
    " trace_id INTEGER);\n"
    "CREATE TABLE perf_sample(id INTEGER PRIMARY KEY, ts INTEGER, utid INTEGER, cpu INTEGER, cpu_mode TEXT,"
    " callsite_id INTEGER, unwind_error TEXT, perf_session_id INTEGER, slice_id INTEGER);\n"
    "CREATE TABLE stack_profile_callsite(id INTEGER PRIMARY KEY, depth INTEGER, parent_id INTEGER,"
    " frame_id INTEGER, UNIQUE(parent_id, frame_id));\n"
    "CREATE TABLE stack_profile_frame(id INTEGER PRIMARY KEY, name TEXT, mapping INTEGER, rel_pc INTEGER,"
    " symbol_set_id INTEGER, deobfuscated_name TEXT, source TEXT, UNIQUE(name, source));\n"
    "CREATE TABLE stack_profile_mapping(id INTEGER PRIMARY KEY, build_id TEXT, exact_offset INTEGER,"
    " start_offset INTEGER, start INTEGER, end INTEGER, load_bias INTEGER, name TEXT);\n"
    /* opprof's own, joined to Perfetto's by slice_id, utid and trace_id. */
    "CREATE VIEW opprof_slice AS SELECT id AS slice_id, kind, file, function, line, input_dims, flops, bytes,"
    " off_cpu_ns, peak_memory_bytes, samples, layer FROM __intrinsic_slice WHERE kind IS NOT NULL;\n"
    "CREATE TABLE step(id INTEGER PRIMARY KEY, trace_id INTEGER, number INTEGER, name TEXT, ts INTEGER,"
    " dur INTEGER, slice_id INTEGER, utid INTEGER);\n"
    "CREATE TABLE thread_state(id INTEGER PRIMARY KEY, ts INTEGER, dur INTEGER, cpu INTEGER, utid INTEGER,"
    " state TEXT, io_wait INTEGER, blocked_function TEXT, waker_utid INTEGER, waker_id INTEGER,"
    " irq_context INTEGER, ucpu INTEGER);\n"
    "CREATE TABLE memory(id INTEGER PRIMARY KEY, trace_id INTEGER, ts INTEGER, utid INTEGER, addr INTEGER,"
    " bytes INTEGER, total_allocated INTEGER, slice_id INTEGER, device_type INTEGER, device_id INTEGER);\n"
    "CREATE TABLE key_averages(id INTEGER PRIMARY KEY, trace_id INTEGER, name TEXT, device INTEGER,"
    " calls INTEGER, self_ns INTEGER, total_ns INTEGER, self_device_ns INTEGER, total_device_ns INTEGER,"
    " cpu_memory_bytes INTEGER, self_cpu_memory_bytes INTEGER, peak_memory_bytes INTEGER, device_memory_bytes"
    " INTEGER, self_device_memory_bytes INTEGER, flops INTEGER, bytes INTEGER, samples INTEGER,"
    " total_samples INTEGER, top_frame TEXT, off_cpu_ns INTEGER, self_off_cpu_ns INTEGER, wall_ns INTEGER,"
    " wait_ns INTEGER, threads INTEGER, imbalance REAL, mangled_name TEXT);\n"
    /* Perfetto's: the first and last instant of any event (slice, counter, sample,
       memory event) of any trace, in one row; filled once the rows are in. */
    "CREATE TABLE trace_bounds(start_ts INTEGER, end_ts INTEGER);\n"
    /* Perfetto's metadata, the keys trace_processor sets for a trace file of
       its own (trace_size_bytes: the file's, gzip or not; trace_type), a trace's
       pair after the one before: a view of trace's columns, kept once. */
    "CREATE VIEW metadata AS SELECT t.id * 2 + k.n AS id, k.name, 'single' AS key_type,"
    " CASE k.n WHEN 0 THEN t.size_bytes END AS int_value, CASE k.n WHEN 1 THEN t.format END AS str_value,"
    " t.id AS trace_id FROM trace t, (SELECT 0 AS n, 'trace_size_bytes' AS name UNION ALL"
    " SELECT 1, 'trace_type') k ORDER BY 1;\n"
    /* Perfetto's placeholders: utid 0 and upid 0, the idle thread and its process. */
    "INSERT INTO process(upid, pid) VALUES (0, 0);\n"
    "INSERT INTO thread(utid, tid, upid) VALUES (0, 0, 0);\n";

/* Made once the rows are in: a bulk load into indexed tables costs more
 * (the slices come in time order, not by parent nor by track). */
static const char INDEXES[] = "CREATE INDEX slice_by_parent ON __intrinsic_slice(parent_id);\n"
                              "CREATE INDEX slice_by_track ON __intrinsic_slice(track_id, ts);\n"
                              "CREATE INDEX flow_by_out ON flow(slice_out);\n"
                              "CREATE INDEX flow_by_in ON flow(slice_in);\n";

int sql_create_schema(sqlite3 *db) {
    char version[64];
    snprintf(version, sizeof version, "PRAGMA user_version = %d;", SQL_SCHEMA_VERSION);
    int rc = sqlite3_exec(db, SCHEMA, NULL, NULL, NULL);
    return rc == SQLITE_OK ? sqlite3_exec(db, version, NULL, NULL, NULL) : rc;
}

int sql_create_indexes(sqlite3 *db) { return sqlite3_exec(db, INDEXES, NULL, NULL, NULL); }

sql_ids sql_ids_start(void) { return (sql_ids){.upid = 1, .utid = 1, .first_ts = INT64_MAX, .last_end = INT64_MIN}; }

int sql_bounds_insert(sqlite3 *db, const sql_ids *ids) {
    bool none = ids->first_ts > ids->last_end;
    int64_t start = none ? 0 : ids->first_ts, end = none ? 0 : ids->last_end + (ids->last_end == ids->first_ts);
    char insert[128];
    snprintf(insert, sizeof insert, "INSERT INTO trace_bounds VALUES (%lld, %lld)", (long long)start, (long long)end);
    return sqlite3_exec(db, insert, NULL, NULL, NULL);
}
