/* kept.c - a kept database (--db FILE) answers as its traces do. Each run
 * queries it as made from the traces, as trace_processor's every session
 * starts from its trace; a statement that writes to it (DELETE FROM slice,
 * a DROP, a CREATE TABLE of the user's) changed what the next run reused,
 * which then answered otherwise ("0" for a count of 74) or failed ("table
 * already exists"), with the same command. An authorizer sees each
 * statement's writes as it is prepared; before the first that writes to
 * main runs, the file's PRAGMA user_version becomes SQL_CHANGED_VERSION
 * (in the statement's own transaction when the user opened one, so that a
 * ROLLBACK takes both back), and the next run makes it again from the
 * traces. TEMP objects (CREATE PERFETTO TABLE, INCLUDE's views), an
 * attached database's, and reads change nothing. One kept database a
 * process, as one load: the state is this file's. */
#include "sql.h"

#include <string.h>

static struct { bool writes; /* a statement prepared since the last sql_kept_mark writes to main */ } K;

static int user_version(sqlite3 *db, int *version) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA main.user_version", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) *version = sqlite3_column_int(st, 0), rc = SQLITE_OK;
    sqlite3_finalize(st);
    return rc;
}

static int authorize(void *unused, int action, const char *a, const char *b, const char *db, const char *trigger) {
    (void)unused, (void)b, (void)trigger;
    switch (action) {
    case SQLITE_ALTER_TABLE: /* its database is the first argument */ K.writes |= a && !strcmp(a, "main"); break;
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE: /* of a table: the schema's own rows are asked for as a table-valued function connects */
        K.writes |= db && !strcmp(db, "main") && a && strcmp(a, "sqlite_master") && strcmp(a, "sqlite_schema");
        break;
    case SQLITE_CREATE_TABLE:
    case SQLITE_CREATE_INDEX:
    case SQLITE_CREATE_VIEW:
    case SQLITE_CREATE_TRIGGER:
    case SQLITE_CREATE_VTABLE:
    case SQLITE_DROP_TABLE:
    case SQLITE_DROP_INDEX:
    case SQLITE_DROP_VIEW:
    case SQLITE_DROP_TRIGGER:
    case SQLITE_DROP_VTABLE: K.writes |= db && !strcmp(db, "main"); break;
    default: break;
    }
    return SQLITE_OK;
}

void sql_kept_guard(sqlite3 *db) {
    K.writes = false;
    sqlite3_set_authorizer(db, authorize, NULL);
}

/* Read each time, not remembered: a ROLLBACK may have taken the mark back. */
int sql_kept_mark(sqlite3 *db) {
    if (!K.writes) return SQLITE_OK;
    K.writes = false;
    int version = 0, rc = user_version(db, &version);
    if (rc != SQLITE_OK || version == SQL_CHANGED_VERSION) return rc;
    char pragma[64];
    snprintf(pragma, sizeof pragma, "PRAGMA main.user_version = %d", SQL_CHANGED_VERSION);
    return sqlite3_exec(db, pragma, NULL, NULL, NULL);
}

bool sql_kept_changed(sqlite3 *db) {
    int version = 0;
    return user_version(db, &version) == SQLITE_OK && version == SQL_CHANGED_VERSION;
}
