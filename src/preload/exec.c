/* exec.c - `opprof record` across exec: the program that record started may
 * be a wrapper that replaces itself with the program to profile (`env X=1
 * prog`, `taskset -c 0 prog`, `numactl`, `nice`, `sh -c 'prog'`, a script's
 * `exec`), or one that runs it in a child process (`time prog`, `timeout`,
 * `sh -c 'prog; x'`).
 *
 * OPPROF_TRACE's session lives in the process image; exec ends the image
 * without its exit handlers, and autostart took OPPROF_TRACE and its kin out
 * of the environment (the programs a profiled process starts must not write
 * its DIR). So the exec functions are wrapped here:
 * - the process that record started (its pid is OPPROF_RECORD_PID) hands the
 *   profile on: the new image's environment gets back the OPPROF_ variables
 *   that autostart took (from /proc/self/environ, the environment this image
 *   began with), record's libraries in LD_PRELOAD and its OPPROF_RECORD_
 *   variables where the program took them out (`env -i`, `env
 *   LD_PRELOAD=other.so`), and the directory that this image's session made and left
 *   empty is removed so that the next one can make it (made again when the
 *   exec fails);
 * - the first child of that process to exec a program takes a profile of its
 *   own (src/common/record_files.h): OPPROF_TRACE=DIR.opprof-child, itself
 *   the process record follows across its execs. The profiled process puts
 *   that capture in DIR's place at its exit when it was a wrapper (autostart);
 * - any other process execs without opprof: libopprof_record.so leaves
 *   LD_PRELOAD and the OPPROF_RECORD_ variables go, so that its children
 *   print none of record's notes; its program is named in EXITED.ran.
 * posix_spawn and posix_spawnp (GNU make's recipes, ninja, Rust's Command)
 * exec in the C library's own child, which no wrapper here reaches: they
 * are wrapped too, and the child's environment made by its parent as a
 * fork's child would make it. Its pid is not known then: its
 * OPPROF_RECORD_PID is SPAWNED_PID, which this library's constructor
 * overwrites, in place, with the pid of the process it starts in.
 * Only async-signal-safe calls (a vfork child may exec): no allocation, the
 * new environment on the stack. */
#define _GNU_SOURCE
#include "preload/exec.h"

#include "common/record_files.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h> /* rename: no stream is used */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

enum { ENV_MAX = 2048, TEXT_MAX = 16384, ARGS_MAX = 4096 };

/* What autostart takes out of the environment (autostart/autostart.c). */
static const char *const TAKEN[] = {"OPPROF_TRACE=", "OPPROF_SCHEDULE=", "OPPROF_FLIGHT=", "OPPROF_SAMPLE="};
/* What a child of the program execs without. */
static const char *const RECORD_ONLY[] = {"OPPROF_RECORD_", "OPPROF_STEP_FUNCTION=", "OPPROF_FUNCTION_CALLS="};

typedef struct new_env {
    char *v[ENV_MAX + 16];
    int n;
    char text[TEXT_MAX]; /* the strings made here */
    size_t used;
} new_env;

static bool starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static long number(const char *s) {
    long v = 0;
    while (s && *s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    return v;
}

/* A spawned child's OPPROF_RECORD_PID until its constructor makes it its
 * pid: room for any pid's digits, and no number (number() reads 0). */
#define SPAWNED_PID "-spawned-----------"

/* OPPROF_RECORD_PID and record's files' path as this image began, for a
 * program that clears its environment before it execs (`env -i prog`). */
static long g_record_pid;
static char g_record_files[PATH_MAX];

static long record_pid(void) {
    const char *pid = getenv("OPPROF_RECORD_PID");
    return pid ? number(pid) : g_record_pid;
}

static bool is_record_process(void) { return record_pid() == (long)getpid(); }

/* Where record's files are (src/common/record_files.h): OPPROF_RECORD_EXITED
 * in the process record started, OPPROF_RECORD_FILES (the same path) in a
 * child that took a profile of its own, whose exit record does not wait
 * for; NULL in the others. */
static const char *record_files(void) {
    const char *exited = getenv("OPPROF_RECORD_EXITED"), *files = exited ? exited : getenv("OPPROF_RECORD_FILES");
    return files ? files : g_record_files[0] ? g_record_files : NULL;
}

/* Record's files' path + suffix into `path`; false without it or when
 * `size` is short. */
static bool record_file(char *path, size_t size, const char *suffix) {
    const char *exited = record_files();
    size_t n = exited ? strlen(exited) : 0, k = strlen(suffix);
    if (!n || n + k + 1 > size) return false;
    memcpy(path, exited, n);
    memcpy(path + n, suffix, k + 1);
    return true;
}

bool opprof__child_took_profile(void) { return record_child_took_profile(record_files()); }

static bool is_child_of_record_process(void) { return record_pid() == (long)getppid(); }

/* FILE, a line appended to the record file of `suffix`; `exclusive`: only
 * when this call makes the file (one claim per record). True when written. */
static bool write_record_file(const char *suffix, const char *file, bool exclusive) {
    char path[PATH_MAX];
    if (!record_file(path, sizeof path, suffix)) return false;
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (exclusive ? O_EXCL : O_APPEND);
    int fd = open(path, flags, 0600);
    if (fd < 0) return false;
    size_t n = strlen(file);
    if (write(fd, file, n) == (ssize_t)n && write(fd, "\n", 1) == 1) { /* best effort: record then says less */
    }
    close(fd);
    return true;
}

/* Whether LD_PRELOAD's entry p (n bytes) is one of opprof record's libraries. */
static bool is_our_library(const char *p, size_t n) {
    const char *slash = memrchr(p, '/', n);
    const char *base = slash ? slash + 1 : p;
    size_t bn = n - (size_t)(base - p);
    return (bn == 19 && !memcmp(base, "libopprof_record.so", 19)) ||
           (bn == 24 && !memcmp(base, "libopprof_ggml_record.so", 24));
}

enum { ENTRIES_OTHERS, ENTRIES_OURS, ENTRIES_ALL };

/* The entries of LD_PRELOAD's `value` that `which` names appended at *at,
 * ':' between them, within out's `room`; *any: one was. */
static void put_entries(char *out, char **at, size_t room, const char *value, int which, bool *any) {
    for (const char *p = value; p && *p;) {
        size_t n = strcspn(p, ": ");
        bool take = which == ENTRIES_ALL || is_our_library(p, n) == (which == ENTRIES_OURS);
        if (n && take && (size_t)(*at - out) + n + 2 < room) {
            if (*any) *(*at)++ = ':';
            memcpy(*at, p, n), *at += n;
            *any = true;
        }
        p += n + (p[n] != '\0');
    }
}

/* "LD_PRELOAD=" with the entries of `value` that `which` names, then all
 * of `more` (NULL: none), into e->text; NULL when none is left. */
static char *preload_entries(new_env *e, const char *value, int which, const char *more) {
    char *out = e->text + e->used, *at = out;
    size_t room = TEXT_MAX - e->used;
    if (room < 12) return NULL;
    memcpy(at, "LD_PRELOAD=", 11), at += 11;
    bool any = false;
    put_entries(out, &at, room, value, which, &any);
    put_entries(out, &at, room, more, ENTRIES_ALL, &any);
    *at++ = '\0';
    if (!any) return NULL;
    e->used += (size_t)(at - out);
    return out;
}

/* LD_PRELOAD without opprof record's libraries, into e->text; NULL when nothing is left. */
static char *preload_without_ours(new_env *e, const char *value) {
    return preload_entries(e, value, ENTRIES_OTHERS, NULL);
}

/* How a program is exec'd: without opprof (a child of the profiled process),
 * as the profiled process (record's, across its execs), or as the child that
 * takes a profile of its own. */
typedef enum { EXEC_WITHOUT, EXEC_RECORD, EXEC_CHILD } exec_mode;

/* "NAME=" + value + suffix, made in e->text; NULL when it does not fit. */
static char *make_var(new_env *e, const char *name, const char *value, const char *suffix) {
    size_t a = strlen(name), b = strlen(value), c = strlen(suffix);
    if (e->used + a + b + c + 1 > TEXT_MAX) return NULL;
    char *out = e->text + e->used;
    memcpy(out, name, a), memcpy(out + a, value, b), memcpy(out + a + b, suffix, c + 1);
    e->used += a + b + c + 1;
    return out;
}

/* The environment this image began with (/proc/self/environ), into e->text:
 * NUL-separated, its length in *len; NULL when it cannot be read. */
static const char *read_initial(new_env *e, size_t *len) {
    int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    char *buf = e->text + e->used;
    size_t room = TEXT_MAX - e->used - 1, n = 0;
    for (ssize_t got; n < room && (got = read(fd, buf + n, room - n)) > 0;) n += (size_t)got;
    close(fd);
    buf[n] = '\0';
    e->used += n + 1;
    *len = n;
    return buf;
}

/* The index in TAKEN of the variable `v` sets, or -1. */
static int taken_index(const char *v) {
    for (size_t k = 0; k < sizeof TAKEN / sizeof *TAKEN; k++)
        if (starts(v, TAKEN[k])) return (int)k;
    return -1;
}

/* `v` is one of the image's first variables, as they were. */
static bool is_initial(const char *initial, size_t len, const char *v) {
    for (size_t i = 0; initial && i < len; i += strlen(initial + i) + 1)
        if (!strcmp(initial + i, v)) return true;
    return false;
}

/* TAKEN's values that autostart removed, back from the initial environment;
 * for EXEC_CHILD, OPPROF_TRACE's DIR as DIR.opprof-child. False when such a
 * child cannot take a profile: no OPPROF_TRACE to take, or a flight
 * recorder's (its DIR is made at start and written save by save). */
static bool add_taken(new_env *e, char *const envp[], exec_mode mode, const char *initial, size_t len) {
    bool trace = false, flight = false;
    for (size_t i = 0; initial && i < len; i += strlen(initial + i) + 1) {
        int k = taken_index(initial + i);
        if (k < 0 || e->n >= ENV_MAX) continue;
        bool present = false;
        for (int j = 0; mode != EXEC_CHILD && envp && envp[j] && !present; j++) present = starts(envp[j], TAKEN[k]);
        if (present) continue;
        char *v = (char *)initial + i;
        if (mode == EXEC_CHILD && k == 0) /* OPPROF_TRACE */
            trace = (v = make_var(e, "", v, RECORD_CHILD_SUFFIX)) != NULL;
        flight |= k == 2 && v[strlen(TAKEN[k])] != '\0';
        if (v) e->v[e->n++] = v;
    }
    return mode != EXEC_CHILD || (trace && !flight);
}

/* A variable that a child taking a profile of its own gets anew (make_env):
 * the process record follows, and where record's files are. */
static bool is_childs_own(const char *v) {
    return starts(v, "OPPROF_RECORD_PID=") || starts(v, "OPPROF_RECORD_EXITED=") || starts(v, "OPPROF_RECORD_FILES=");
}

/* Whether envp's variable `v` stays in the new image's environment. A
 * program that read its environment before autostart took record's
 * OPPROF_TRACE and its kin (bash, from main's envp) passes them on as they
 * were: they go (record's are added back below where they belong); one that
 * the program set itself stays. */
static bool kept(const char *v, exec_mode mode, const char *initial, size_t len) {
    if (mode != EXEC_RECORD && taken_index(v) >= 0 && is_initial(initial, len, v)) return false;
    for (size_t k = 0; mode == EXEC_WITHOUT && k < sizeof RECORD_ONLY / sizeof *RECORD_ONLY; k++)
        if (starts(v, RECORD_ONLY[k])) return false;
    /* the child is the process record follows now; its exit is not the one record waits for */
    return !(mode == EXEC_CHILD && is_childs_own(v));
}

/* The first variable of this image's first environment that starts with `name`, or NULL. */
static const char *initial_var(const char *initial, size_t len, const char *name) {
    for (size_t i = 0; initial && i < len; i += strlen(initial + i) + 1)
        if (starts(initial + i, name)) return initial + i;
    return NULL;
}

/* Whether e holds a variable of v's name (v: "NAME=value"). */
static bool has_name(const new_env *e, const char *v) {
    size_t n = strcspn(v, "=") + 1;
    for (int i = 0; i < e->n; i++)
        if (!strncmp(e->v[i], v, n)) return true;
    return false;
}

static bool has_our_library(const char *value) {
    for (const char *p = value; p && *p;) {
        size_t n = strcspn(p, ": ");
        if (n && is_our_library(p, n)) return true;
        p += n + (p[n] != '\0');
    }
    return false;
}

/* What the new image needs to be profiled, back where the program took it
 * out, from the environment this image began with: record's libraries in
 * LD_PRELOAD, before the program's own (`env LD_PRELOAD=libjemalloc.so prog`
 * replaced them: prog ran without, its capture lost), and record's
 * variables (`env -i prog`). */
static void restore_record_vars(new_env *e, const char *initial, size_t len, exec_mode mode) {
    int at = -1;
    for (int i = 0; i < e->n; i++)
        if (starts(e->v[i], "LD_PRELOAD=")) at = i;
    const char *theirs = at >= 0 ? e->v[at] + 11 : NULL, *first = initial_var(initial, len, "LD_PRELOAD=");
    if (first && !has_our_library(theirs)) {
        char *v = preload_entries(e, first + 11, ENTRIES_OURS, theirs);
        if (v && at >= 0)
            e->v[at] = v;
        else if (v && e->n < ENV_MAX)
            e->v[e->n++] = v;
    }
    for (size_t i = 0; initial && i < len; i += strlen(initial + i) + 1) {
        const char *v = initial + i;
        bool record_only = false;
        for (size_t k = 0; k < sizeof RECORD_ONLY / sizeof *RECORD_ONLY; k++) record_only |= starts(v, RECORD_ONLY[k]);
        if (record_only && !(mode == EXEC_CHILD && is_childs_own(v)) && !has_name(e, v) && e->n < ENV_MAX)
            e->v[e->n++] = (char *)v;
    }
}

/* The environment of the new image; false when EXEC_CHILD cannot be had
 * (also when the program gives the child an OPPROF_TRACE of its own).
 * `spawned`: the image is a child's that posix_spawn makes (SPAWNED_PID). */
static bool make_env(new_env *e, char *const envp[], exec_mode mode, bool spawned) {
    e->n = 0;
    e->used = 0;
    size_t len = 0;
    const char *initial = read_initial(e, &len);
    bool own_trace = false;
    for (int i = 0; envp && envp[i] && e->n < ENV_MAX; i++) {
        const char *v = envp[i];
        if (mode == EXEC_WITHOUT && starts(v, "LD_PRELOAD=")) {
            char *preload = preload_without_ours(e, v + 11);
            if (preload) e->v[e->n++] = preload;
            continue;
        }
        if (!kept(v, mode, initial, len)) continue;
        own_trace |= taken_index(v) == 0;
        e->v[e->n++] = (char *)v;
    }
    if (mode != EXEC_WITHOUT) restore_record_vars(e, initial, len, mode);
    bool ok = mode == EXEC_WITHOUT || (!(mode == EXEC_CHILD && own_trace) && add_taken(e, envp, mode, initial, len));
    if (ok && mode == EXEC_CHILD) {
        char digits[24];
        int d = (int)sizeof digits - 1;
        digits[d] = '\0';
        for (long pid = (long)getpid(); pid; pid /= 10) digits[--d] = (char)('0' + pid % 10);
        char *v = make_var(e, "OPPROF_RECORD_PID=", spawned ? SPAWNED_PID : digits + d, "");
        ok = v && e->n < ENV_MAX + 14;
        if (ok) e->v[e->n++] = v;
        /* its own children's programs are named too (a wrapper within a wrapper: timeout sh -c 'a; prog') */
        const char *files = record_files();
        if (ok && files && (v = make_var(e, "OPPROF_RECORD_FILES=", files, ""))) e->v[e->n++] = v;
    }
    e->v[e->n] = NULL;
    return ok;
}

/* The directory this image's session made: removed while empty (it is its
 * own, by its pid); true when one was. */
static bool remove_own_dir(char *made, size_t size) {
    int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[8192];
    ssize_t len = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (len <= 0) return false;
    buf[len] = '\0';
    for (ssize_t i = 0; i < len; i += (ssize_t)strlen(buf + i) + 1) {
        if (!starts(buf + i, "OPPROF_TRACE=")) continue;
        const char *dir = buf + i + 13;
        char twin[PATH_MAX];
        size_t n = strlen(dir);
        if (n + 32 >= sizeof twin || n + 32 >= size) return false;
        memcpy(twin, dir, n);
        memcpy(twin + n, ".opprof-", 8);
        char digits[24];
        int d = 0;
        for (long pid = (long)getpid(); pid; pid /= 10) digits[d++] = (char)('0' + pid % 10);
        size_t at = n + 8;
        while (d) twin[at++] = digits[--d];
        twin[at] = '\0';
        if (rmdir(twin) == 0) return memcpy(made, twin, at + 1), true;
        if (rmdir(dir) == 0) return memcpy(made, dir, n + 1), true; /* a flight recorder's DIR */
        return false;
    }
    return false;
}

typedef int (*exec_fn)(const char *, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                        char *const[], char *const[]);
static exec_fn g_execve, g_execvpe; /* the C library's, found at load (dlsym is no call for a vfork child) */
static spawn_fn g_spawn, g_spawnp;

/* A spawned child's OPPROF_RECORD_PID made its own pid, in the environment's
 * own string (no allocation: the program's allocator may be recorded). */
static void take_spawned_pid(void) {
    char *pid = getenv("OPPROF_RECORD_PID");
    if (!pid || strcmp(pid, SPAWNED_PID) != 0) return;
    char digits[24];
    int d = (int)sizeof digits;
    for (long v = (long)getpid(); v; v /= 10) digits[--d] = (char)('0' + v % 10);
    memcpy(pid, digits + d, sizeof digits - (size_t)d);
    pid[sizeof digits - (size_t)d] = '\0';
}

__attribute__((constructor)) static void exec_setup(void) {
    g_execve = (exec_fn)dlsym(RTLD_NEXT, "execve");
    g_execvpe = (exec_fn)dlsym(RTLD_NEXT, "execvpe");
    g_spawn = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawn");
    g_spawnp = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawnp");
    take_spawned_pid();
    const char *files = record_files();
    if (files && strlen(files) < sizeof g_record_files) memcpy(g_record_files, files, strlen(files) + 1);
    g_record_pid = number(getenv("OPPROF_RECORD_PID"));
}

/* A program that exec may run: a path that is an executable file, or a name
 * for the PATH search (a shell tries each directory of PATH by execve: the
 * ones that fail are no program run). */
static bool may_run(bool search, const char *file) {
    return file && ((search && !strchr(file, '/')) || access(file, X_OK) == 0);
}

/* The claim file's suffix of the child whose environment e is: its level's
 * (its OPPROF_TRACE's), NULL when none is left. */
static const char *took_suffix(const new_env *e) {
    for (int i = 0; i < e->n; i++)
        if (starts(e->v[i], "OPPROF_TRACE=")) return record_took_suffix(record_child_level(e->v[i] + 13));
    return NULL;
}

/* A child that execs (or is spawned) at its level takes a profile of its
 * own (make_env's e, EXEC_CHILD) when no other holds the level's claim (one
 * at a time: a claim is given back at its holder's exit, record_files.h);
 * the others are named in the .ran file. Its claim's suffix into *took. */
/* The claim of `suffix` held by a process that has ended without its exit
 * handlers (record_claim_holder_ended: a dash shell, make's recipe line
 * `echo x > log`) set aside as RECORD_EXITED_SUFFIX, for the level above to
 * settle, so that the next program at its level takes the profile: it held
 * the level for good, and make's later lines ran without. */
static bool set_aside_ended_claim(const char *suffix) {
    char path[PATH_MAX], exited[PATH_MAX + sizeof RECORD_EXITED_SUFFIX];
    if (!record_file(path, sizeof path, suffix) || !record_claim_holder_ended(path)) return false;
    size_t n = strlen(path);
    memcpy(exited, path, n);
    memcpy(exited + n, RECORD_EXITED_SUFFIX, sizeof RECORD_EXITED_SUFFIX);
    return rename(path, exited) == 0;
}

static exec_mode claim(new_env *e, char *const envp[], bool spawned, const char *file, const char **took) {
    *took = make_env(e, envp, EXEC_CHILD, spawned) ? took_suffix(e) : NULL;
    if (*took && (write_record_file(*took, file, true) ||
                  (set_aside_ended_claim(*took) && write_record_file(*took, file, true))))
        return EXEC_CHILD;
    write_record_file(RECORD_RAN_SUFFIX, file, false);
    return EXEC_WITHOUT;
}

/* A child that holds its level's claim (`suffix`, NULL: none) and execs
 * another program (`env X=1 prog`, a pyenv shim's python): FILE named in the
 * claim by a RECORD_EXEC_LINE, so that record names the program the capture
 * is of. The claim's length before it, to take the line back if the exec
 * fails (into *path); -1 when nothing was written. */
static off_t name_exec(const char *suffix, const char *file, char *path, size_t size) {
    char line[PATH_MAX + 16];
    size_t k = strlen(RECORD_EXEC_LINE), f = strlen(file);
    if (!suffix || k + f + 1 > sizeof line || !record_file(path, size, suffix)) return -1;
    memcpy(line, RECORD_EXEC_LINE, k);
    memcpy(line + k, file, f);
    line[k + f] = '\n';
    ssize_t n = (ssize_t)(k + f + 1);
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW); /* never made here: held, it is there */
    struct stat st;
    off_t before = fd >= 0 && fstat(fd, &st) == 0 ? st.st_size : -1;
    if (before >= 0 && write(fd, line, (size_t)n) != n) before = -1;
    if (fd >= 0) close(fd);
    return before;
}

static int exec_with(bool search, const char *file, char *const argv[], char *const envp[]) {
    new_env e; /* on the stack: exec is rare, and a vfork child shares the heap */
    exec_mode mode = is_record_process() ? EXEC_RECORD : EXEC_WITHOUT;
    const char *took_as = NULL;
    if (mode == EXEC_WITHOUT && is_child_of_record_process() && may_run(search, file))
        mode = claim(&e, envp, false, file, &took_as); /* a wrapper that forks: its child runs the program */
    if (mode != EXEC_CHILD) make_env(&e, envp, mode, false);
    char made[PATH_MAX], claim_path[PATH_MAX];
    bool removed = mode == EXEC_RECORD && remove_own_dir(made, sizeof made);
    off_t named = mode == EXEC_RECORD && may_run(search, file)
                      ? name_exec(took_suffix(&e), file, claim_path, sizeof claim_path)
                      : -1;
    exec_fn real = search ? g_execvpe : g_execve;
    int rc = real ? real(file, argv, e.v) : (errno = ENOSYS, -1);
    int saved = errno;
    if (removed) mkdir(made, 0777);                       /* the exec failed: this image goes on, and saves there */
    if (named >= 0 && truncate(claim_path, named) != 0) { /* ...as the program it was: record then names one more */
    }
    char took[PATH_MAX]; /* ...nor did it take the profile */
    if (mode == EXEC_CHILD && record_file(took, sizeof took, took_as)) unlink(took);
    errno = saved;
    return rc;
}

/* posix_spawn's child as a fork's child that execs (exec_with): the first
 * that the process record follows spawns takes a profile of its own; the
 * others, and every child that another process spawns, run without. */
static int spawn_with(bool search, pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                      const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
    new_env e;
    exec_mode mode = EXEC_WITHOUT;
    const char *took_as = NULL;
    if (is_record_process() && may_run(search, file)) mode = claim(&e, envp, true, file, &took_as);
    if (mode != EXEC_CHILD) make_env(&e, envp, EXEC_WITHOUT, false);
    spawn_fn real = search ? g_spawnp : g_spawn;
    int rc = real ? real(pid, file, actions, attr, argv, e.v) : ENOSYS;
    char took[PATH_MAX]; /* it ran nothing: nor did it take the profile */
    if (rc && mode == EXEC_CHILD && record_file(took, sizeof took, took_as)) unlink(took);
    return rc;
}

__attribute__((visibility("default"))) int posix_spawn(pid_t *pid, const char *path,
                                                       const posix_spawn_file_actions_t *actions,
                                                       const posix_spawnattr_t *attr, char *const argv[],
                                                       char *const envp[]) {
    return spawn_with(false, pid, path, actions, attr, argv, envp);
}

__attribute__((visibility("default"))) int posix_spawnp(pid_t *pid, const char *file,
                                                        const posix_spawn_file_actions_t *actions,
                                                        const posix_spawnattr_t *attr, char *const argv[],
                                                        char *const envp[]) {
    return spawn_with(true, pid, file, actions, attr, argv, envp);
}

__attribute__((visibility("default"))) int execve(const char *path, char *const argv[], char *const envp[]) {
    return exec_with(false, path, argv, envp);
}

__attribute__((visibility("default"))) int execv(const char *path, char *const argv[]) {
    return exec_with(false, path, argv, environ);
}

__attribute__((visibility("default"))) int execvpe(const char *file, char *const argv[], char *const envp[]) {
    return exec_with(true, file, argv, envp);
}

__attribute__((visibility("default"))) int execvp(const char *file, char *const argv[]) {
    return exec_with(true, file, argv, environ);
}

/* The list forms: their arguments as an array (at most ARGS_MAX). */
static int exec_list(bool search, const char *file, const char *arg, va_list ap, bool with_env) {
    char *argv[ARGS_MAX + 1];
    int n = 0;
    for (const char *a = arg; a; a = va_arg(ap, const char *)) {
        if (n == ARGS_MAX) return errno = E2BIG, -1;
        argv[n++] = (char *)a;
    }
    argv[n] = NULL;
    char *const *envp = with_env ? va_arg(ap, char *const *) : environ;
    return exec_with(search, file, argv, envp);
}

__attribute__((visibility("default"))) int execl(const char *path, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(false, path, arg, ap, false);
    va_end(ap);
    return rc;
}

__attribute__((visibility("default"))) int execlp(const char *file, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(true, file, arg, ap, false);
    va_end(ap);
    return rc;
}

__attribute__((visibility("default"))) int execle(const char *path, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    int rc = exec_list(false, path, arg, ap, true);
    va_end(ap);
    return rc;
}
