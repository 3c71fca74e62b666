/* writer.c - rows into SQLite. sql_row binds a statement's values and runs
 * it later, on a thread of the writer's own (between sql_writer_start and
 * _stop), so that the load's own work (reading the arguments back, making
 * their chunks, walking the capture) goes on while SQLite inserts the rows
 * before. A row is copied into a batch (its
 * statement, then each value: a tag and its bytes); full batches wait in
 * a ring for the writer thread, which alone calls SQLite until the ring is
 * empty again. sql_prepare, sql_finalize and sql_writer_drain wait for that,
 * so that any other call the loader makes (a query, an exec) is its own.
 * One load at a time in a process: the writer is this file's. */
#define _GNU_SOURCE
#include "sql.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum {
    BATCH_BYTES = 256 << 10, /* handed over when this full */
    BATCHES = 4,             /* the ring: at most BATCHES - 1 waiting while one fills */
};

typedef struct batch {
    unsigned char *data;
    size_t len, cap;
} batch;

static struct writer {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    batch ring[BATCHES];
    size_t filling; /* the batch the loader fills: ring[filling] */
    size_t waiting; /* full batches before it, the writer's: ring[filling - waiting ...] */
    bool running, stopping;
    int error; /* the first row's error: later rows are dropped, sql_row returns it */
} W = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

/* ---- a row in a batch ----------------------------------------------------- */

enum { VALUE_NULL, VALUE_INT, VALUE_DOUBLE, VALUE_TEXT };

static bool room(batch *b, size_t n) {
    return b->len + n <= b->cap || sql_grow((void **)&b->data, &b->cap, b->len + n, 1);
}

/* A value's tag and its 8 bytes (none for VALUE_NULL), in the room that
 * put_row or the last put_text made (9 bytes for each value of the row). */
static void put_value(batch *b, uint8_t tag, const void *eight) {
    b->data[b->len++] = tag;
    if (tag == VALUE_NULL) return;
    memcpy(b->data + b->len, eight, 8);
    b->len += 8;
}

static bool put_text(batch *b, const char *s) {
    uint32_t len = (uint32_t)strlen(s);
    if (!room(b, 1 + sizeof len + len + 9 * 255)) return false; /* and the row's other values */
    b->data[b->len++] = VALUE_TEXT;
    memcpy(b->data + b->len, &len, sizeof len);
    memcpy(b->data + b->len + sizeof len, s, len);
    b->len += sizeof len + len;
    return true;
}

/* The values of sql_row's `types` (sql.h) into b, after the statement. */
static bool put_row(batch *b, sqlite3_stmt *st, const char *types, va_list ap) {
    uint8_t n = (uint8_t)strlen(types);
    if (!room(b, sizeof st + 1 + 9 * (size_t)n)) return false; /* all but the texts */
    memcpy(b->data + b->len, &st, sizeof st);
    b->data[b->len + sizeof st] = n;
    b->len += sizeof st + 1;
    bool ok = true;
    for (int i = 0; types[i] && ok; i++) {
        switch (types[i]) {
        case 'i':
        case 'I': {
            int64_t v = va_arg(ap, int64_t);
            put_value(b, types[i] == 'I' && v < 0 ? VALUE_NULL : VALUE_INT, &v);
            break;
        }
        case 'd': {
            double v = va_arg(ap, double);
            put_value(b, VALUE_DOUBLE, &v);
            break;
        }
        case 's':
        case 'S': { /* 's': "" is NULL as well */
            const char *s = va_arg(ap, const char *);
            if (s && (*s || types[i] == 'S'))
                ok = put_text(b, s);
            else
                put_value(b, VALUE_NULL, NULL);
            break;
        }
        default: put_value(b, VALUE_NULL, NULL); break;
        }
    }
    return ok;
}

/* One row of a batch bound and run; `at` moved past it. */
static int run_row(const unsigned char **at) {
    sqlite3_stmt *st;
    uint8_t n;
    memcpy(&st, *at, sizeof st);
    n = (*at)[sizeof st];
    const unsigned char *p = *at + sizeof st + 1;
    for (int col = 1; col <= n; col++) {
        uint8_t tag = *p++;
        if (tag == VALUE_INT || tag == VALUE_DOUBLE) {
            int64_t i;
            double d;
            memcpy(&i, p, 8);
            memcpy(&d, p, 8);
            p += 8;
            if (tag == VALUE_INT)
                sqlite3_bind_int64(st, col, i);
            else
                sqlite3_bind_double(st, col, d);
        } else if (tag == VALUE_TEXT) {
            uint32_t len;
            memcpy(&len, p, sizeof len);
            sqlite3_bind_text(st, col, (const char *)p + sizeof len, (int)len, SQLITE_STATIC);
            p += sizeof len + len;
        } else
            sqlite3_bind_null(st, col);
    }
    *at = p;
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* ---- the writer thread ---------------------------------------------------- */

static void *writer_main(void *unused) {
    (void)unused;
    pthread_mutex_lock(&W.lock);
    for (;;) {
        while (W.waiting == 0 && !W.stopping) pthread_cond_wait(&W.changed, &W.lock);
        if (W.waiting == 0) break;
        batch *b = &W.ring[(W.filling + BATCHES - W.waiting) % BATCHES];
        int error = __atomic_load_n(&W.error, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&W.lock);
        for (const unsigned char *at = b->data; error == SQLITE_OK && at < b->data + b->len;) error = run_row(&at);
        b->len = 0;
        pthread_mutex_lock(&W.lock);
        if (__atomic_load_n(&W.error, __ATOMIC_RELAXED) == SQLITE_OK)
            __atomic_store_n(&W.error, error, __ATOMIC_RELAXED);
        W.waiting--;
        pthread_cond_broadcast(&W.changed);
    }
    pthread_mutex_unlock(&W.lock);
    return NULL;
}

/* The batch being filled handed to the writer (held: W.lock), once the ring has room. */
static void hand_over(void) {
    while (W.waiting == BATCHES - 1) pthread_cond_wait(&W.changed, &W.lock);
    W.waiting++;
    W.filling = (W.filling + 1) % BATCHES;
    pthread_cond_broadcast(&W.changed);
}

int sql_writer_start(void) {
    W.filling = W.waiting = 0;
    __atomic_store_n(&W.error, SQLITE_OK, __ATOMIC_RELAXED);
    W.stopping = false;
    if (pthread_create(&W.thread, NULL, writer_main, NULL)) return SQLITE_NOMEM;
    W.running = true;
    return SQLITE_OK;
}

int sql_writer_drain(void) {
    if (!W.running) return SQLITE_OK;
    pthread_mutex_lock(&W.lock);
    if (W.ring[W.filling].len) hand_over();
    while (W.waiting) pthread_cond_wait(&W.changed, &W.lock);
    int rc = __atomic_load_n(&W.error, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&W.lock);
    return rc;
}

int sql_writer_stop(void) {
    int rc = sql_writer_drain();
    if (W.running) {
        pthread_mutex_lock(&W.lock);
        W.stopping = true;
        pthread_cond_broadcast(&W.changed);
        pthread_mutex_unlock(&W.lock);
        pthread_join(W.thread, NULL);
        W.running = false;
    }
    for (int k = 0; k < BATCHES; k++) {
        free(W.ring[k].data);
        W.ring[k] = (batch){0};
    }
    return rc;
}

/* ---- rows and statements -------------------------------------------------- */

int sql_row(sqlite3_stmt *st, const char *types, ...) {
    va_list ap;
    va_start(ap, types);
    int rc;
    if (!W.running) {
        rc = SQLITE_MISUSE; /* rows are written between sql_writer_start and _stop */
    } else if ((rc = __atomic_load_n(&W.error, __ATOMIC_RELAXED)) == SQLITE_OK) {
        batch *b = &W.ring[W.filling]; /* the loader's alone until handed over */
        size_t row_start = b->len;
        rc = put_row(b, st, types, ap) ? SQLITE_OK : SQLITE_NOMEM;
        if (rc) b->len = row_start; /* no half row for the writer */
        if (b->len >= BATCH_BYTES) {
            pthread_mutex_lock(&W.lock);
            hand_over();
            pthread_mutex_unlock(&W.lock);
        }
    }
    va_end(ap);
    return rc;
}

int sql_prepare(sqlite3 *db, const char *text, sqlite3_stmt **st) {
    *st = NULL; /* on an error too: its caller finalizes it (a row's error before: no statement) */
    int rc = sql_writer_drain();
    return rc ? rc : sqlite3_prepare_v3(db, text, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
}

void sql_finalize(sqlite3_stmt *st) {
    sql_writer_drain();
    sqlite3_finalize(st);
}
