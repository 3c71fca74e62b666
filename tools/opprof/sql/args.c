/* args.c - the args table's rows, written a set at a time: the arguments
 * that come one after another for one set are one arg_chunk row, a JSON
 * object whose names are numbers, k x SQL_ARGS_A_CHUNK + n (the n-th
 * argument of the chunk, under key k of arg_key), and whose values are the
 * arguments' own. schema.c's args view unfolds them with SQLite's
 * json_each, so that a Kineto trace's 11 arguments a slice cost one row,
 * not 11 (and their index's 11 entries). A name that is one number is
 * taken apart by SQL's / and %: "n:k" taken apart by substr and instr made
 * a scan of every argument half as long again. */
#define _GNU_SOURCE
#include "sql.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CHUNK_TEXT = 1 << 18 }; /* a chunk's text is written once it is this long */

typedef struct arg_key {
    char *key;
    int64_t id;
} arg_key;

/* The keys met last, by a hash of the key as the trace names it (without
 * "args."): a trace repeats a few keys millions of times, and the full
 * lookup (the "args." name made, then bsearch) was a twentieth of a load. */
enum { RECENT_KEYS = 256 };

struct sql_args {
    sqlite3 *db;
    sql_ids *ids;
    sqlite3_stmt *chunk_row, *key_row;
    arg_key *keys; /* by key, for bsearch */
    size_t n_keys, cap_keys;
    arg_key recent[RECENT_KEYS]; /* the trace's own key (no "args.") and its id */
    int64_t first_id, set;       /* the chunk's first argument and its set; set < 0: no chunk */
    size_t n;                    /* arguments in the chunk */
    char *text;
    size_t len, cap;
    struct set_move {
        int64_t from, into; /* into < 0: dropped */
    } * moves;              /* sql_args_move_set's, for sql_args_settle */
    size_t n_moves, cap_moves;
};

int sql_args_open(sqlite3 *db, sql_ids *ids, sql_args **out) {
    sql_args *a = calloc(1, sizeof *a);
    if (!a) return SQLITE_NOMEM;
    *a = (sql_args){.db = db, .ids = ids, .set = -1};
    int rc = sql_prepare(db, "INSERT INTO arg_chunk(id, arg_set_id, args) VALUES (?, ?, ?)", &a->chunk_row);
    if (rc == SQLITE_OK) rc = sql_prepare(db, "INSERT INTO arg_key(id, key, flat_key) VALUES (?, ?, ?)", &a->key_row);
    if (rc != SQLITE_OK) sql_args_close(a);
    *out = rc == SQLITE_OK ? a : NULL;
    return rc;
}

static int by_key(const void *x, const void *y) { return strcmp(((const arg_key *)x)->key, ((const arg_key *)y)->key); }

/* The key under "args." without the array indices ("args.grid[0]":
 * "args.grid"), as Perfetto names its flat_key. */
static void flat_key(const char *full, char *flat) {
    size_t f = 0;
    for (const char *c = full; *c; c++) {
        if (*c == '[') {
            const char *d = c + 1;
            while (*d >= '0' && *d <= '9') d++;
            if (d > c + 1 && *d == ']') {
                c = d;
                continue;
            }
        }
        flat[f++] = *c;
    }
    flat[f] = '\0';
}

static size_t recent_slot(const char *key) {
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)key; *c; c++) h = (h ^ *c) * 16777619u;
    return h % RECENT_KEYS;
}

/* The id of "args." key in arg_key, the row written the first time. */
static int key_id_full(sql_args *a, const char *key, int64_t *id) {
    char full[1024], flat[1024];
    snprintf(full, sizeof full, "args.%s", key);
    arg_key probe = {full, 0}, *found = a->n_keys ? bsearch(&probe, a->keys, a->n_keys, sizeof *a->keys, by_key) : NULL;
    if (found) {
        *id = found->id;
        return SQLITE_OK;
    }
    if (!sql_grow((void **)&a->keys, &a->cap_keys, a->n_keys + 1, sizeof *a->keys)) return SQLITE_NOMEM;
    size_t at = 0, hi = a->n_keys;
    while (at < hi) { /* the first key after full */
        size_t mid = at + (hi - at) / 2;
        if (strcmp(a->keys[mid].key, full) < 0)
            at = mid + 1;
        else
            hi = mid;
    }
    char *copy = strdup(full);
    if (!copy) return SQLITE_NOMEM;
    memmove(a->keys + at + 1, a->keys + at, (a->n_keys - at) * sizeof *a->keys);
    a->keys[at] = (arg_key){copy, a->ids->arg_key++};
    a->n_keys++;
    *id = a->keys[at].id;
    flat_key(full, flat);
    return sql_row(a->key_row, "iss", *id, full, flat);
}

static int key_id(sql_args *a, const char *key, int64_t *id) {
    arg_key *r = &a->recent[recent_slot(key)];
    if (r->key && !strcmp(r->key, key)) {
        *id = r->id;
        return SQLITE_OK;
    }
    int rc = key_id_full(a, key, id);
    char *copy = rc == SQLITE_OK ? strdup(key) : NULL;
    if (copy) {
        free(r->key);
        *r = (arg_key){copy, *id};
    }
    return rc;
}

static int put(sql_args *a, const char *s, size_t n) {
    if (!sql_grow((void **)&a->text, &a->cap, a->len + n + 1, 1)) return SQLITE_NOMEM;
    memcpy(a->text + a->len, s, n);
    a->len += n;
    a->text[a->len] = '\0';
    return SQLITE_OK;
}

int sql_args_flush(sql_args *a) {
    if (a->set < 0) return SQLITE_OK;
    int rc = put(a, "}", 1);
    if (rc == SQLITE_OK) rc = sql_row(a->chunk_row, "iis", a->first_id, a->set, a->text);
    a->set = -1, a->n = a->len = 0;
    return rc;
}

/* v's digits written backwards before `end`: their start. A chunk's names
 * and integers by hand, as snprintf was a tenth of a Kineto trace's load. */
static char *decimal(char *end, int64_t v) {
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do *--end = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0) *--end = '-';
    return end;
}

/* A double as JSON that json_each reads back as the same REAL: 17 digits,
 * a point when printf gives none; infinities as overflowing exponents, NaN
 * as null (a REAL column's NaN is NULL too). */
static void real_text(double d, char *buf, size_t size) {
    if (isnan(d))
        snprintf(buf, size, "null");
    else if (isinf(d))
        snprintf(buf, size, "%s9e999", d < 0 ? "-" : "");
    else {
        snprintf(buf, size, "%.17g", d);
        if (!strpbrk(buf, ".e")) strncat(buf, ".0", size - strlen(buf) - 1);
    }
}

/* d as real_text writes it; an integral double (most of a trace's) as its
 * integer and ".0", which printf's %.17g took a tenth of the arguments' time
 * to write. */
static int put_real(sql_args *a, double d) {
    char value[64];
    if (d >= -0x1p53 && d <= 0x1p53 && d == (double)(int64_t)d && !(d == 0 && signbit(d))) {
        char *end = value + sizeof value, *at = end - 2;
        memcpy(at, ".0", 2);
        at = decimal(at, (int64_t)d);
        return put(a, at, (size_t)(end - at));
    }
    real_text(d, value, sizeof value);
    return put(a, value, strlen(value));
}

/* s as a JSON string: a string of plain ASCII (most of a trace's) copied
 * between its quotes at once, any other escaped by the library's writer. */
static int put_string(sql_args *a, const char *s) {
    size_t n = 0;
    while ((unsigned char)s[n] >= 0x20 && (unsigned char)s[n] < 0x80 && s[n] != '"' && s[n] != '\\') n++;
    if (s[n]) {
        char *quoted = NULL;
        if (opprof_json_string_to_string(s, &quoted)) return SQLITE_NOMEM;
        int rc = put(a, quoted, strlen(quoted));
        opprof_free(quoted);
        return rc;
    }
    if (!sql_grow((void **)&a->text, &a->cap, a->len + n + 3, 1)) return SQLITE_NOMEM;
    a->text[a->len] = '"';
    memcpy(a->text + a->len + 1, s, n);
    a->len += n + 2;
    a->text[a->len - 1] = '"';
    a->text[a->len] = '\0';
    return SQLITE_OK;
}

int sql_args_add(sql_args *a, int64_t set, const char *key, char type, int64_t i, const char *s, double d) {
    int64_t k = 0;
    int rc = key_id(a, key, &k);
    if (rc == SQLITE_OK && (set != a->set || a->len > CHUNK_TEXT || a->n == SQL_ARGS_A_CHUNK)) rc = sql_args_flush(a);
    if (rc != SQLITE_OK) return rc;
    if (a->set < 0) a->set = set, a->first_id = a->ids->arg, rc = put(a, "{", 1);
    char head[64], *end = head + sizeof head, *at = end; /* ,"name": written backwards */
    *--at = ':';
    *--at = '"';
    at = decimal(at, k * SQL_ARGS_A_CHUNK + (int64_t)a->n);
    *--at = '"';
    if (a->n) *--at = ',';
    a->n++, a->ids->arg++;
    if (rc == SQLITE_OK) rc = put(a, at, (size_t)(end - at));
    char value[64];
    if (rc == SQLITE_OK && type == 'i') {
        const char *v = decimal(value + sizeof value, i);
        rc = put(a, v, (size_t)(value + sizeof value - v));
    }
    if (rc == SQLITE_OK && type == 'r') rc = put_real(a, d);
    return rc == SQLITE_OK && type == 's' ? put_string(a, s ? s : "") : rc;
}

bool sql_args_key_gives_dims(const char *key) { return !strncmp(key, "Input Dims", 10); }

int sql_args_move_set(sql_args *a, int64_t from, int64_t into) {
    if (!sql_grow((void **)&a->moves, &a->cap_moves, a->n_moves + 1, sizeof *a->moves)) return SQLITE_NOMEM;
    a->moves[a->n_moves++] = (struct set_move){from, into};
    return SQLITE_OK;
}

/* One statement run once with up to two integers (SQLite's calls: the writer has stopped). */
static int run_once(sqlite3_stmt *st, int64_t x, int64_t y) {
    sqlite3_bind_int64(st, 1, x);
    if (sqlite3_bind_parameter_count(st) > 1) sqlite3_bind_int64(st, 2, y);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int sql_args_settle(sql_args *a) {
    sqlite3_stmt *move = NULL, *drop = NULL;
    int rc = a->n_moves ? sqlite3_prepare_v2(a->db, "UPDATE arg_chunk SET arg_set_id = ?2 WHERE arg_set_id = ?1", -1,
                                             &move, NULL)
                        : SQLITE_OK;
    if (rc == SQLITE_OK && a->n_moves)
        rc = sqlite3_prepare_v2(a->db, "DELETE FROM arg_chunk WHERE arg_set_id = ?", -1, &drop, NULL);
    for (size_t k = 0; k < a->n_moves && rc == SQLITE_OK; k++)
        rc = a->moves[k].into < 0 ? run_once(drop, a->moves[k].from, 0)
                                  : run_once(move, a->moves[k].from, a->moves[k].into);
    sqlite3_finalize(move);
    sqlite3_finalize(drop);
    a->n_moves = 0;
    return rc;
}

void sql_args_close(sql_args *a) {
    if (!a) return;
    sql_finalize(a->chunk_row);
    sql_finalize(a->key_row);
    for (size_t k = 0; k < a->n_keys; k++) free(a->keys[k].key);
    for (size_t k = 0; k < RECENT_KEYS; k++) free(a->recent[k].key);
    free(a->keys);
    free(a->text);
    free(a->moves);
    free(a);
}
