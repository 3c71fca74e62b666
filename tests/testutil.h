/* testutil.h - helpers for tests that run programs and read their files. */
#ifndef OPPROF_TESTS_TESTUTIL_H
#define OPPROF_TESTS_TESTUTIL_H

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A whole file as a NUL-terminated string (caller frees), or NULL. */
static inline char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
            }
            buf = bigger;
        }
    }
    fclose(f);
    if (buf) buf[len] = '\0';
    return buf;
}

/* Run a shell command; stdout and stderr go to *out (caller frees). Returns
 * the exit status, or -1. */
static inline int run_command(const char *cmd, char **out) {
    char tmpl[] = "/tmp/opprof-test-out-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0) return -1;
    close(fd);
    char *full = malloc(strlen(cmd) + strlen(tmpl) + 16);
    sprintf(full, "(%s) >%s 2>&1", cmd, tmpl);
    int st = system(full);
    free(full);
    if (out) *out = read_text(tmpl);
    unlink(tmpl);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* run_command of a command built from a format (printf's). */
static inline int run_commandf(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int run_commandf(char **out, const char *fmt, ...) {
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    return run_command(cmd, out);
}

/* A new empty directory under /tmp; path written into buf. */
/* `command` run after two leftovers named PREFIX + PID + SUFFIX are planted:
 * one of a process that is gone, one of this shell's (alive). What of them
 * is left after it ("dead kept\n", "live kept\n"); the live one is then
 * removed. The caller frees it. */
static inline char *leftovers_after(const char *prefix, const char *suffix, const char *command) {
    char *out = NULL;
    run_commandf(&out,
                 "sh -c 'exit 0' & gone=$!; wait $gone; : > '%s'$gone'%s'; : > '%s'$$'%s'; %s >/dev/null 2>&1;"
                 " [ -e '%s'$gone'%s' ] && echo dead kept; [ -e '%s'$$'%s' ] && echo live kept; rm -f '%s'$$'%s'",
                 prefix, suffix, prefix, suffix, command, prefix, suffix, prefix, suffix, prefix, suffix);
    return out ? out : strdup("");
}

/* `command` started in the background and sent SIGTERM as soon as the file
 * PREFIX + its PID + SUFFIX exists (polled every 5 ms, 20 s at most), then
 * waited for: "exit STATUS\nN\n", N the entries of dir whose names hold
 * `left`. The caller frees it. */
static inline char *stopped_once_made(const char *command, const char *prefix, const char *suffix, const char *dir,
                                      const char *left) {
    char *out = NULL;
    run_commandf(&out,
                 "%s >/dev/null 2>&1 & p=$!; for i in $(seq 4000); do [ -e '%s'$p'%s' ] && break; sleep 0.005;"
                 " done; kill -TERM $p; wait $p 2>/dev/null; echo \"exit $?\"; ls '%s' | grep -c '%s'",
                 command, prefix, suffix, dir, left);
    return out ? out : strdup("");
}

static inline const char *make_temp_dir(char *buf, size_t size) {
    snprintf(buf, size, "/tmp/opprof-test-XXXXXX");
    return mkdtemp(buf);
}

static inline void remove_tree(const char *dir) {
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* The directory of the built programs (set by CTest). */
static inline const char *bin_dir(void) {
    const char *d = getenv("OPPROF_TEST_BIN");
    return d ? d : "build/bin";
}

static inline const char *source_dir(void) {
    const char *d = getenv("OPPROF_SOURCE_DIR");
    return d ? d : ".";
}

#endif
