/* shell.c - `opprof sql`'s prompt, with SQLite's own shell's conventions:
 * a statement runs once it is complete (ends with ';') or the input ends,
 * and a line that starts with '.' is a command: .tables, .schema [NAME],
 * .mode MODE, .help, .quit (.exit). The prompt is shown only on a
 * terminal; read from anything else, a statement or command that failed
 * makes the exit status 1, as sqlite3's is. On a terminal, Ctrl-C stops the
 * statement that runs (sqlite3_interrupt) or drops the one being typed, and
 * the prompt comes back, the trace still loaded; a third in a row, with no
 * statement run between, ends the shell as SIGINT does (sqlite3's rule). */
#define _GNU_SOURCE
#include "sql.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char SHELL_HELP[] = ".tables          the tables and views\n"
                                 ".schema [NAME]   the CREATE statements (of NAME)\n"
                                 ".mode MODE       how results print: csv, list, tabs, column, line, json\n"
                                 ".quit            end (also .exit, or the end of input)\n";

typedef enum { DOT_DONE, DOT_FAILED, DOT_QUIT } dot_result;

/* The first column of query's rows, a line each; a step that failed (out of
 * memory) is the command's error, not a list cut short: DOT_FAILED. */
static dot_result list_names(sqlite3 *db, const char *cmd, const char *query, const char *name, FILE *out) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, query, -1, &st, NULL);
    if (rc == SQLITE_OK && name) rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *text = sqlite3_column_text(st, 0);
        rc = text || sqlite3_column_type(st, 0) == SQLITE_NULL ? SQLITE_OK : SQLITE_NOMEM;
        if (text) fprintf(out, "%s\n", (const char *)text);
    }
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) return DOT_DONE;
    fprintf(stderr, "opprof: sql: .%s: %s\n", cmd, rc == SQLITE_NOMEM ? sqlite3_errstr(rc) : sqlite3_errmsg(db));
    return DOT_FAILED;
}

#define SCHEMA_ROWS                                                                                               \
    "SELECT name, sql FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' UNION ALL " \
    "SELECT name, sql FROM sqlite_temp_schema WHERE type IN ('table', 'view') AND name != '_perfetto_macros'"

/* A dot command. */
static dot_result dot_command(sqlite3 *db, char *line, sql_mode *mode, FILE *out) {
    char *cmd = strtok(line + 1, " \t\r\n"), *arg = strtok(NULL, " \t\r\n");
    if (!cmd) return DOT_DONE;
    if (!strcmp(cmd, "quit") || !strcmp(cmd, "exit")) return DOT_QUIT;
    if (!strcmp(cmd, "tables"))
        return list_names(db, cmd, "SELECT name FROM (" SCHEMA_ROWS ") ORDER BY name", NULL, out);
    if (!strcmp(cmd, "schema"))
        return list_names(db, cmd,
                          arg ? "SELECT sql || ';' FROM (" SCHEMA_ROWS ") WHERE name = ?1"
                              : "SELECT sql || ';' FROM (" SCHEMA_ROWS ") ORDER BY name",
                          arg, out);
    if (!strcmp(cmd, "mode")) {
        if (sql_mode_by_name(arg, mode)) {
            fprintf(stderr, "opprof: sql: .mode is %s, not '%s'\n", SQL_MODE_NAMES, arg ? arg : "");
            return DOT_FAILED;
        }
    } else if (!strcmp(cmd, "help")) {
        fputs(SHELL_HELP, out);
    } else {
        fprintf(stderr, "opprof: sql: .%s: not a command here (.help lists them)\n", cmd);
        return DOT_FAILED;
    }
    return DOT_DONE;
}

/* The statements of stmt; false if one failed. */
static bool run_statements(sqlite3 *db, const char *stmt, sql_mode mode, FILE *out) {
    char why[1024];
    int rc = sql_run(db, stmt, mode, out, why, sizeof why);
    if (rc) fprintf(stderr, "opprof: sql: %s\n", why);
    fflush(out);
    return rc == SQLITE_OK;
}

/* ---- Ctrl-C on a terminal ---- */

static sqlite3 *g_db;
static volatile sig_atomic_t g_interrupts; /* in a row, with no statement run between */
static volatile sig_atomic_t g_dropped;    /* one came since the last line was read: the one typed goes */

static void on_interrupt(int sig) {
    if (++g_interrupts >= 3) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    g_dropped = 1;
    sqlite3_interrupt(g_db); /* a flag that the running statement's next step reads */
}

static void catch_interrupts(sqlite3 *db, struct sigaction *old) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    g_db = db, g_interrupts = g_dropped = 0;
    sigaction(SIGINT, &sa, old);
}

/* A line typed at the terminal into *line: its length, -1 at the end of the
 * input, -2 when Ctrl-C came since the last line (it drops the statement
 * being typed). SIGINT is blocked but while ppoll waits, so that one that
 * comes before the wait ends it as well as one during it: with a plain
 * read, one between the prompt and the read was lost, and the line kept. */
static ssize_t typed_line(int fd, char **line, size_t *cap) {
    sigset_t interrupt, old, waiting;
    sigemptyset(&interrupt);
    sigaddset(&interrupt, SIGINT);
    sigprocmask(SIG_BLOCK, &interrupt, &old);
    waiting = old;
    sigdelset(&waiting, SIGINT);
    size_t n = 0;
    ssize_t result = -1;
    for (;;) {
        if (g_dropped) {
            result = -2;
            break;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int ready = ppoll(&p, 1, NULL, &waiting);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0 || !sql_grow((void **)line, cap, n + 4097, 1)) break;
        ssize_t got = read(fd, *line + n, 4096); /* a terminal gives a line at a time */
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) { /* the end: what came before it, if anything */
            result = n ? (ssize_t)n : -1;
            break;
        }
        n += (size_t)got;
        if ((*line)[n - 1] == '\n') {
            result = (ssize_t)n;
            break;
        }
    }
    if (result >= 0) (*line)[result] = '\0';
    g_dropped = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    return result;
}

int sql_shell(sqlite3 *db, sql_mode mode, FILE *in, FILE *out) {
    bool tty = isatty(fileno(in)), failed = false;
    char *line = NULL, *stmt = NULL;
    size_t line_cap = 0, len = 0;
    struct sigaction old_int;
    if (tty) catch_interrupts(db, &old_int);
    for (;;) {
        if (tty) fputs(len ? "   ...> " : "opprof> ", out), fflush(out);
        ssize_t got = tty ? typed_line(fileno(in), &line, &line_cap) : getline(&line, &line_cap, in);
        if (got == -2) { /* Ctrl-C while typing: the statement dropped */
            fputc('\n', out);
            len = 0;
            continue;
        }
        if (got < 0) break;
        if (len == 0 && line[0] == '.') {
            dot_result r = dot_command(db, line, &mode, out);
            if (r == DOT_QUIT) break;
            failed |= r == DOT_FAILED;
            continue;
        }
        char *grown = realloc(stmt, len + (size_t)got + 1);
        if (!grown) {
            fprintf(stderr, "opprof: sql: out of memory for a statement\n");
            failed = true;
            break;
        }
        stmt = grown;
        memcpy(stmt + len, line, (size_t)got + 1);
        len += (size_t)got;
        if (!sql_is_complete(stmt)) continue;
        failed |= !run_statements(db, stmt, mode, out);
        if (tty) clearerr(out), g_interrupts = g_dropped = 0; /* an interrupted row's write may have failed */
        len = 0;
    }
    if (tty) sigaction(SIGINT, &old_int, NULL);
    if (len && stmt[strspn(stmt, " \t\r\n")]) failed |= !run_statements(db, stmt, mode, out); /* no ';' at the end */
    free(line);
    free(stmt);
    return failed && !tty ? SQLITE_ERROR : SQLITE_OK;
}
