/* autostart.c - OPPROF_TRACE=DIR: any program linked with opprof records
 * from its start to its exit, without a line of session code, and leaves its
 * captures in DIR, whole or not at all, also when SIGINT or SIGTERM ends it.
 *
 * A constructor starts a session (steps by OPPROF_SCHEDULE and opprof_step(),
 * or one capture from start to exit); each capture is written into DIR's
 * temporary twin; at exit (atexit) or on the signal, the session stops and
 * the twin is renamed to DIR. A signal handler may not write files, so it
 * only wakes a watcher thread (a semaphore: no descriptor of the process's
 * that the program could close); the watcher saves, then ends the process
 * with the same signal, the program's own disposition restored. A child
 * forked without exec records nothing of its own: its exit publishes nothing
 * (the parent's capture is the directory's), and a signal to it does what it
 * would without opprof.
 *
 * Under `opprof record`, a child that ran a program with a profile of its
 * own (src/preload/exec.c: a wrapper that forks, `time prog`) leaves its
 * capture beside DIR; the process profiled makes it DIR at its exit when it
 * was that wrapper (take_child_capture).
 *
 * OPPROF_FLIGHT=N[,Ts][,MMiB] runs the session as a flight recorder
 * (opprof_flight): DIR is made at start and each save appears in it as it is
 * written (flight-K-step-N.json...), from the recorder's saver thread; the
 * dump signal (OPPROF_FLIGHT_SIGNAL, SIGUSR2 by default) wakes the watcher,
 * which asks for a dump. */
#define _GNU_SOURCE
#include "record/record.h" /* opprof__tls: the thread is inside a record */
#include "render/render.h"

#include "../../common/record_files.h" /* a child's capture, beside DIR */
#include "../../common/fd_room.h"      /* a program that ends with no descriptor left */

#include <dirent.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static struct {
    opprof_session *session;
    char dir[4096], work[4200];  /* DIR made absolute at the start: a program may change its directory */
    char named[4096];            /* DIR as OPPROF_TRACE names it, for the line that says where the capture is */
    int captures, failed;        /* written (their trace whole), and not */
    int incomplete;              /* of those written, without some of their other files (a full disk) */
    size_t ranges;               /* the ranges those captures hold, steps aside */
    size_t content;              /* ...and their samples, memory events and marks */
    double cpu_started;          /* the process's CPU time when its session had started (s): its loading aside */
    double children_cpu_started; /* its children's then: those of the images before this one aside */
    double cpu_before_save;      /* ...and when its save began: the writing of its capture aside */
    bool dropping;               /* a child whose sibling's capture, kept, took more CPU time: none written */
    sem_t wake;                  /* posted by the signal handler (sem_post is async-signal-safe): no
                             descriptor that the program could close or reuse */
    int fatal;                   /* atomic: the first SIGINT or SIGTERM received, 0: none */
    int finished;                /* atomic: 0 running, 1 finishing or done */
    int done;                    /* atomic: the directory is in place (or given up) */
    pid_t saver;                 /* atomic: the thread that saves */
    pid_t owner;                 /* the process profiled: a child forked from it records nothing of its own */
    struct sigaction old_int, old_term;
    bool flight;          /* OPPROF_FLIGHT: DIR itself is written, save by save */
    int flight_signal;    /* the dump signal, 0: none */
    int dumps;            /* atomic: dump signals received */
    int saves;            /* flight saves named so far (the saver thread's) */
    pthread_mutex_t lock; /* the session pointer, between the watcher's dumps and the save at exit */
    dev_t made_dev;       /* the directory opprof made (DIR, or its twin): saves go there only */
    ino_t made_ino;
    struct {
        dev_t dev;
        ino_t ino;                   /* 0: none */
    } below_at_start[RECORD_LEVELS]; /* DIR.opprof-child... there when the session began: not its children's */
    opprof_machine machine;          /* OPPROF_MACHINE_FILE's, when read: measured again at the end of a long run */
    bool has_machine;
    double machine_at; /* when it was read (CLOCK_MONOTONIC, seconds) */
} g_auto = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- each capture's files ---- */

/* What each capture becomes: OPPROF_OUTPUTS=trace,tables,html,perfetto (any
 * of them; default the first three), OPPROF_GZIP=1 (trace-step-N.json.gz), OPPROF_TRACE_EVENTS=N
 * (the trace holds the N longest ranges; the tables and report keep every one). */
enum { OUT_TRACE = 1, OUT_TABLES = 2, OUT_HTML = 4, OUT_PERFETTO = 8, OUT_ALL = 7 };
static struct {
    unsigned outputs;
    opprof_chrome_options chrome;
} g_out = {OUT_ALL, {0}};

/* "trace,tables,html,perfetto" -> OUT_*; 0 when a word is none of them. */
static unsigned parse_outputs(const char *list) {
    static const char *const words[] = {"trace", "tables", "html", "perfetto"};
    unsigned out = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        unsigned bit = 0;
        for (unsigned k = 0; k < 4; k++)
            if (n == strlen(words[k]) && !strncmp(p, words[k], n)) bit = 1u << k;
        if (!bit) return 0;
        out |= bit;
        p += n + (p[n] == ',');
    }
    return out;
}

static void outputs_setup(void) {
    const char *list = secure_getenv("OPPROF_OUTPUTS");
    if (list && *list && !(g_out.outputs = parse_outputs(list))) {
        opprof__say("opprof: OPPROF_OUTPUTS='%s' ignored: not a list of trace, tables, html, perfetto; "
                    "writing trace, tables, html\n",
                    list);
        g_out.outputs = OUT_ALL;
    }
    g_out.chrome.gzip = opprof__env_int("OPPROF_GZIP", 0, 1, 0) == 1;
    g_out.chrome.max_events = (size_t)opprof__env_int("OPPROF_TRACE_EVENTS", 0, INT64_MAX, 0);
}

/* A table written to path; a sampled capture's time table goes on with its
 * native functions by samples. */
static int write_table(const opprof_capture *c, const char *text, bool functions, const char *path) {
    char *more = NULL, *both = NULL;
    int rc = functions ? opprof_capture_functions_to_string(c, 50, &more) : 0;
    if (!rc && more) {
        size_t n = strlen(text) + strlen(more) + 3;
        if (!(both = opprof__alloc(n))) rc = OPPROF_ENOMEM;
        if (both) snprintf(both, n, "%s\n\n%s", text, more);
    }
    if (!rc) rc = opprof_write_text_file(path, both ? both : text);
    opprof__free(both);
    opprof_free(more);
    return rc;
}

static int write_tables(const opprof_capture *c, const char *stem, char *path, size_t size) {
    opprof_averages *avg = NULL;
    char *table = NULL;
    int rc = opprof_capture_averages(c, &avg);
    for (int memory = 0; !rc && memory < 2; memory++) {
        rc = opprof_averages_table_to_string(
            avg,
            &(opprof_table_options){.sort = memory ? OPPROF_SORT_SELF_CPU_MEMORY : OPPROF_SORT_SELF_CPU_TIME,
                                    .row_limit = -1,
                                    .samples = true},
            &table);
        snprintf(path, size, "%s.%s.txt", stem, memory ? "memory" : "time");
        if (!rc) rc = write_table(c, table, !memory && opprof_averages_sample_count(avg) > 0, path);
        opprof_free(table);
        table = NULL;
    }
    opprof_averages_free(avg);
    if (!rc && opprof_capture_get_info(c).flight.reason[0]) { /* a flight recorder's save: why, and its step */
        snprintf(path, size, "%s.flight.txt", stem);
        rc = opprof_capture_flight_to_string(c, 20, &table);
        if (!rc) rc = opprof_write_text_file(path, table);
        opprof_free(table);
    }
    return rc;
}

/* The directory opprof made, opened for one save: never what replaced it
 * (a symlink, another directory) while the program ran. Its files are
 * written through /proc/self/fd/N/..., the directory itself; -1 (said)
 * when it is gone or replaced. No descriptor is held between saves: the
 * program's own (a daemon closes them all) are never ours. */
static int open_made(const char *made, char *base, size_t size) {
    int fd = open(made, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_dev != g_auto.made_dev || st.st_ino != g_auto.made_ino) {
        int e = errno;
        struct stat l;
        const char *now = fd >= 0                                      ? "another directory is there now"
                          : e == EMFILE || e == ENFILE || e == ENOMEM  ? NULL /* it is there: no room to open it */
                          : lstat(made, &l) == 0 && S_ISLNK(l.st_mode) ? "a symlink now"
                          : lstat(made, &l) == 0                       ? "not a directory now"
                                                                       : strerror(e);
        if (now)
            opprof__say("opprof: OPPROF_TRACE: '%s' is no longer the directory opprof made (%s): the capture is "
                        "not written\n",
                        made, now);
        else
            opprof__say("opprof: OPPROF_TRACE: cannot open '%s': %s%s: the capture is not written\n", made, strerror(e),
                        e == EMFILE ? " (the program holds every descriptor that its hard RLIMIT_NOFILE allows)" : "");
        if (fd >= 0) close(fd);
        return -1;
    }
    snprintf(base, size, "/proc/self/fd/%d", fd);
    if (access(base, W_OK) != 0) snprintf(base, size, "%s", made); /* no /proc: the path, checked just now */
    return fd;
}

/* What a capture holds, added to g_auto.ranges and g_auto.content. */
static void count_content(const opprof_capture *c) {
    size_t events = 0;
    const opprof_event *e = opprof_capture_events(c, &events);
    size_t ranges = 0, samples = 0, memory = 0, marks = 0;
    for (size_t i = 0; i < events; i++) ranges += e[i].kind != OPPROF_KIND_STEP;
    opprof_capture_samples(c, &samples);
    opprof_capture_memory_events(c, &memory);
    opprof_capture_marks(c, &marks);
    g_auto.ranges += ranges;
    g_auto.content += ranges + samples + memory + marks;
}

/* STEP.json (the trace), its two tables, its HTML report and STEP.pftrace
 * (Perfetto's format), those of them that OPPROF_OUTPUTS asks for, in the
 * twin: write_files, below. */
static int write_files(const opprof_capture *c);

/* on_trace_ready: the files, their numbers as C writes them whatever locale
 * the program set (a decimal comma made the trace no JSON). */
static int write_capture(const opprof_capture *c, void *user) {
    (void)user;
    opprof__numbers numbers = opprof__c_numbers_begin();
    int rc = write_files(c);
    opprof__c_numbers_end(numbers);
    return rc;
}

static int write_files(const opprof_capture *c) {
    count_content(c);
    if (g_auto.dropping) return 0; /* a sibling's capture is kept (save) */
    long long step = (long long)opprof_capture_get_info(c).step_num;
    char base[4300], stem[4400], path[4500];
    int made = open_made(g_auto.flight ? g_auto.dir : g_auto.work, base, sizeof base);
    if (made < 0) {
        g_auto.failed++;
        return OPPROF_EIO;
    }
    if (g_auto.flight)
        snprintf(stem, sizeof stem, "%s/flight-%03d-step-%lld", base, ++g_auto.saves, step);
    else
        snprintf(stem, sizeof stem, "%s/trace-step-%lld", base, step);
    int rc = 0;
    bool trace_whole = false; /* the capture itself is kept, whatever comes after it */
    if (g_out.outputs & OUT_TRACE) {
        snprintf(path, sizeof path, "%s.json%s", stem, g_out.chrome.gzip ? ".gz" : "");
        rc = opprof_capture_chrome_write_ex(c, path, &g_out.chrome);
        trace_whole = !rc;
    }
    if (!rc && (g_out.outputs & OUT_TABLES)) rc = write_tables(c, stem, path, sizeof path);
    if (!rc && (g_out.outputs & OUT_HTML)) {
        snprintf(path, sizeof path, "%s.html", stem);
        rc = opprof_capture_html_write(c, path);
    }
    if (!rc && (g_out.outputs & OUT_PERFETTO)) {
        snprintf(path, sizeof path, "%s.pftrace", stem);
        rc = opprof_capture_perfetto_write(c, path);
    }
    if (rc) { /* the path as the user named it */
        size_t n = strlen(base);
        opprof__say("opprof: OPPROF_TRACE: cannot write '%s%s': %s%s\n", g_auto.dir,
                    strncmp(path, base, n) ? path : path + n, opprof_strerror(rc),
                    trace_whole ? " (its trace is whole and kept; this file and the ones after it are missing)" : "");
        if (trace_whole)
            g_auto.incomplete++;
        else
            g_auto.failed++;
    }
    if (!rc || trace_whole) g_auto.captures++;
    close(made);
    return rc;
}

/* ---- the save at exit ---- */

/* A capture's directory and its files. */
static void remove_capture_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4500];
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

/* The twin and the files this process wrote in it. */
static void remove_work(void) { remove_capture_dir(g_auto.work); }

/* Stop, save, and put the twin in place: once, from atexit or the watcher;
 * the other one waits for it (a signal just before exit must not let the
 * process end halfway through the writing). */
static void save(void);

/* After the save, a SIGINT or SIGTERM that arrived ends the process as it
 * would have without opprof: the program's own disposition back, then the
 * signal, to the process (any thread that does not block it takes it). */
static void end_by_signal(void) {
    int sig = __atomic_load_n(&g_auto.fatal, __ATOMIC_ACQUIRE);
    if (!sig) return;
    sigaction(SIGINT, &g_auto.old_int, NULL);
    sigaction(SIGTERM, &g_auto.old_term, NULL);
    kill(getpid(), sig);
}

static void wait_done(void) {
    struct timespec pause = {0, 1000000};
    while (!__atomic_load_n(&g_auto.done, __ATOMIC_ACQUIRE)) nanosleep(&pause, NULL);
}

static void finish(void) {
    if (getpid() != g_auto.owner) return; /* a forked child: the directory is its parent's */
    if (__atomic_exchange_n(&g_auto.finished, 1, __ATOMIC_ACQ_REL)) {
        wait_done();
        return;
    }
    __atomic_store_n(&g_auto.saver, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    opprof__fd_room room = opprof__fd_room_make();
    save();
    opprof__fd_room_give_back(room);
    end_by_signal(); /* before `done`: a thread waiting for it must not run on */
    __atomic_store_n(&g_auto.done, 1, __ATOMIC_RELEASE);
}

/* The twin renamed to DIR, never over anything: when DIR appeared meanwhile,
 * to DIR.1, DIR.2... instead (`where` says which). 0, or -1 with errno. */
static int publish(char *where, size_t size) {
    for (int k = 0; k < 100; k++) {
        if (k)
            snprintf(where, size, "%s.%d", g_auto.dir, k);
        else
            snprintf(where, size, "%s", g_auto.dir);
        if (renameat2(AT_FDCWD, g_auto.work, AT_FDCWD, where, RENAME_NOREPLACE) == 0) return 0;
        if (errno != EEXIST && errno != ENOTEMPTY) return -1;
    }
    return -1;
}

/* What the count of written captures leaves out, for the last line. */
static const char *lost_said(void) {
    static char said[160];
    said[0] = '\0';
    if (g_auto.failed) snprintf(said, sizeof said, " (%d more could not be written: said above)", g_auto.failed);
    if (g_auto.incomplete)
        snprintf(said + strlen(said), sizeof said - strlen(said), " (%d of them without all their files: said above)",
                 g_auto.incomplete);
    return said;
}

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The end of a run longer than OPPROF_MACHINE_REMEASURE_AFTER seconds (default
 * 10; -1: never): this machine measured again, DRAM aside (opprof_machine_remeasure:
 * a fraction of a second, a few % of such a run at most; no buffer past the LLC's
 * in the program) and each ceiling the best of the start's and the end's,
 * for the captures written now and the user's cache, as bench_forward takes
 * its bound. Another machine's profile (a file the user gave) stays as it is. */
static void remeasure_machine(opprof_session *session) {
    long long after = opprof__env_int("OPPROF_MACHINE_REMEASURE_AFTER", -1, 1LL << 30, 10);
    if (!g_auto.has_machine || after < 0 || seconds_now() - g_auto.machine_at < (double)after) return;
    if (opprof_machine_remeasure(&g_auto.machine) == 0) opprof_session_set_machine(session, &g_auto.machine);
}

static double cpu_seconds(int who) {
    struct rusage u;
    if (getrusage(who, &u) != 0) return 0;
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

/* The claim file of the child at `level` (record_files.h), `more` after it
 * ("": the claim itself; RECORD_KEPT_SUFFIX...), into path. */
static bool claim_path(int level, const char *more, char *path, size_t size) {
    const char *files = secure_getenv("OPPROF_RECORD_EXITED"), *took = record_took_suffix(level);
    if (!files) files = secure_getenv("OPPROF_RECORD_FILES"); /* the program's: its parent's path */
    return files && took && snprintf(path, size, "%s%s%s", files, took, more) < (int)size;
}

/* `line` appended to the file at `level` that `more` names; false when it is not there. */
static bool append_to_claim(int level, const char *more, const char *line) {
    char path[4200];
    if (!claim_path(level, more, path, sizeof path)) return false;
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    if (write(fd, line, strlen(line)) < 0) { /* record then says less: no worse */
    }
    close(fd);
    return true;
}

/* `opprof record`, which names the program of each level's child, learns
 * what became of the capture of the one at `level`: `line`
 * (RECORD_MOVED_LINE: it was moved up, in the place of this process's;
 * RECORD_NOTHING_LINE: from that program, there is none), in its claim, or
 * in the claim kept at its exit. */
static void tell_record(const char *line, int level) {
    if (!append_to_claim(level, "", line)) append_to_claim(level, RECORD_KEPT_SUFFIX, line);
}

/* The first KiB of the file at `level` that `more` names, a C string (empty when none). */
static void read_claim(int level, const char *more, char *text, size_t size) {
    char path[4200];
    ssize_t n = -1;
    int fd = claim_path(level, more, path, sizeof path) ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    if (fd >= 0) {
        n = read(fd, text, size - 1);
        close(fd);
    }
    text[n > 0 ? n : 0] = '\0';
}

/* The CPU time (ns) of the capture kept at `level` by a program run before
 * this one (RECORD_CPU_LINE), -1 when none is kept. No stdio: the program's
 * allocator may be the one recorded. */
static long long kept_cpu_ns(int level) {
    char text[1024];
    read_claim(level, RECORD_KEPT_SUFFIX, text, sizeof text);
    const char *at = strstr(text, "\n" RECORD_CPU_LINE);
    if (!at) return -1;
    long long v = 0;
    for (at += 1 + strlen(RECORD_CPU_LINE); *at >= '0' && *at <= '9'; at++) v = v * 10 + (*at - '0');
    return v;
}

/* The program that the file at `level` named by `more` names (its first
 * line) added to the level's dropped programs, the file removed. */
static void move_to_dropped(int level, const char *more) {
    char text[1024], path[4200];
    read_claim(level, more, text, sizeof text);
    size_t n = strcspn(text, "\n");
    if (n) {
        text[n] = '\n', text[n + 1] = '\0';
        if (claim_path(level, RECORD_DROPPED_SUFFIX, path, sizeof path)) {
            int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
            if (fd >= 0 && write(fd, text, n + 1) < 0) { /* record then names one fewer: no worse */
            }
            if (fd >= 0) close(fd);
        }
    }
    if (claim_path(level, more, path, sizeof path)) unlink(path);
}

/* This child's capture is its level's DIR: its claim kept, with its CPU
 * time, and given back, so that a program run after it at its level
 * takes the profile in turn (record_files.h). */
static void keep_claim(int level, long long cpu_ns) {
    char line[64], path[4200], kept[4300];
    snprintf(line, sizeof line, RECORD_CPU_LINE "%lld\n", cpu_ns);
    if (!append_to_claim(level, "", line) || !claim_path(level, "", path, sizeof path) ||
        !claim_path(level, RECORD_KEPT_SUFFIX, kept, sizeof kept))
        return;
    if (rename(path, kept)) { /* the claim stays held: the programs after it run without, as before */
    }
}

/* The capture kept at this child's level (a program run before it, which
 * took less CPU time) replaced by this process's: the two exchanged, the
 * old one removed and its program named as dropped. 0, or -1 with errno. */
static int replace_kept(int level) {
    if (renameat2(AT_FDCWD, g_auto.work, AT_FDCWD, g_auto.dir, RENAME_EXCHANGE) != 0) return -1;
    remove_work();
    move_to_dropped(level, RECORD_KEPT_SUFFIX);
    return 0;
}

/* A child that took the profile at `level` and recorded nothing but its steps
 * (a wrapper's helper: the `date` of `sh -c 'date; prog'`) gives the claim
 * back, RECORD_NOTHING_LINE in it, so that the next program that its parent
 * runs at that level takes the profile (record_files.h). */
static void give_back_claim(int level) {
    tell_record(RECORD_NOTHING_LINE, level);
    char path[4200], back[4300];
    if (!claim_path(level, "", path, sizeof path) || !claim_path(level, RECORD_GIVEN_BACK_SUFFIX, back, sizeof back))
        return;
    if (rename(path, back)) { /* record then names it as the one that took the profile: no worse */
    }
}

/* A child that took a profile (DIR.opprof-child) and recorded nothing says nothing:
 * its parent, the one profiled, speaks for the directory. */
static bool is_child_session(void) {
    size_t n = strlen(g_auto.dir), k = strlen(RECORD_CHILD_SUFFIX);
    return n > k && strcmp(g_auto.dir + n - k, RECORD_CHILD_SUFFIX) == 0;
}

/* The path `below` levels below DIR (DIR + RECORD_CHILD_SUFFIX that many
 * times) into path; false when it does not fit. */
static bool path_below(int below, char *path, size_t size) {
    size_t n = strlen(g_auto.dir), k = strlen(RECORD_CHILD_SUFFIX);
    if (below < 1 || below > RECORD_LEVELS || n + (size_t)below * k >= size) return false;
    memcpy(path, g_auto.dir, n);
    for (int b = 0; b < below; b++) memcpy(path + n + (size_t)b * k, RECORD_CHILD_SUFFIX, k);
    path[n + (size_t)below * k] = '\0';
    return true;
}

/* The captures below DIR there when this session began, noted: they are
 * not this process's children's but those of a program run before it at its
 * level, left beside DIR (`sh -c 'a_that_runs_b; c'`: b's, when c saves). */
static void note_captures_below(void) {
    char below[4300];
    struct stat st;
    for (int k = 1; k <= RECORD_LEVELS; k++) {
        bool there = path_below(k, below, sizeof below) && lstat(below, &st) == 0 && S_ISDIR(st.st_mode);
        g_auto.below_at_start[k - 1].dev = there ? st.st_dev : 0;
        g_auto.below_at_start[k - 1].ino = there ? st.st_ino : 0;
    }
}

/* The capture `below` levels below DIR into path: true when it is there and
 * a child of this process's made it (it was not there, as it is, when the
 * session began). */
static bool own_capture_below(int below, char *path, size_t size) {
    struct stat st;
    return path_below(below, path, size) && lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
           !(st.st_ino == g_auto.below_at_start[below - 1].ino && st.st_dev == g_auto.below_at_start[below - 1].dev);
}

/* The shallowest capture below DIR that a child of this process made (one
 * level down, or more where a child was a wrapper too and ended by _exit),
 * into child; how many levels down, 0: none. */
static int find_child_capture(char *child, size_t size) {
    int level = record_child_level(g_auto.dir);
    for (int below = 1; level + below <= RECORD_LEVELS; below++)
        if (own_capture_below(below, child, size)) return below;
    return 0;
}

/* A program that took the profile at a level below after the one kept
 * there and ended by _exit (dash does: make's recipe line `prog > out`,
 * after `mkdir -p out`) holds that level's claim for good and adopted
 * nothing; its children's capture, a level further down, is its. Of that
 * one and the kept one, the one of more CPU time takes the level's place,
 * the other dropped, as the shell would have done at its exit. From the
 * deepest level up, before this process adopts the shallowest. */
static void settle_levels_left_by_exit(void) {
    char upper[4300], lower[4300], held[4200], exited[4200];
    int level = record_child_level(g_auto.dir);
    for (int below = RECORD_LEVELS - level - 1; below >= 1; below--) {
        int at = level + below;
        long long kept = kept_cpu_ns(at), deeper = kept >= 0 ? kept_cpu_ns(at + 1) : -1;
        bool is_held = claim_path(at, "", held, sizeof held) && access(held, F_OK) == 0,
             set_aside = claim_path(at, RECORD_EXITED_SUFFIX, exited, sizeof exited) && access(exited, F_OK) == 0;
        if (deeper <= kept || !(is_held || set_aside) || !own_capture_below(below, upper, sizeof upper) ||
            !own_capture_below(below + 1, lower, sizeof lower))
            continue;
        if (renameat2(AT_FDCWD, lower, AT_FDCWD, upper, RENAME_EXCHANGE) != 0) continue;
        remove_capture_dir(lower); /* the kept one's, now */
        move_to_dropped(at, RECORD_KEPT_SUFFIX);
        tell_record(RECORD_MOVED_LINE, at + 1);
        if (!is_held && claim_path(at, RECORD_KEPT_SUFFIX, held, sizeof held) && rename(exited, held) == 0) {
            char line[64]; /* the one set aside keeps the level now, with its children's time */
            snprintf(line, sizeof line, RECORD_CPU_LINE "%lld\n", deeper);
            append_to_claim(at, RECORD_KEPT_SUFFIX, line);
        }
    }
}

/* A child of this process took a profile of its own (src/common/record_files.h:
 * `opprof record -- time prog`), and its capture is below DIR
 * (find_child_capture): it becomes DIR when this process was the wrapper,
 * that is, when it wrote no capture, or one without a range while its
 * children took more CPU time than it did between its start and its save
 * (its own loading and writing aside, which are opprof's and the loader's;
 * theirs in; the children of the images that this process was before its
 * last exec aside). Where a program run before it at its level keeps DIR
 * (kept_ns >= 0), the one of more CPU time (cpu_ns: this process's, its
 * children's in) keeps it, as in save. Otherwise it stays beside DIR, said.
 * True when this process's part is done. */
static bool take_child_capture(long long cpu_ns, long long kept_ns) {
    char child[4300];
    settle_levels_left_by_exit();
    int level = record_child_level(g_auto.dir), below = find_child_capture(child, sizeof child);
    if (!below) return false;
    if (g_auto.captures && (g_auto.ranges > 0 || cpu_seconds(RUSAGE_CHILDREN) - g_auto.children_cpu_started <=
                                                     g_auto.cpu_before_save - g_auto.cpu_started)) {
        opprof__say("opprof: OPPROF_TRACE: the program that this process ran in a child process has its own capture "
                    "in '%s'; this process's is '%s' (it %s)\n",
                    child, g_auto.dir,
                    g_auto.ranges ? "recorded ranges of its own" : "took more CPU time than its children");
        return false;
    }
    if (g_auto.dropping) { /* the one kept took more: this wrapper's program's capture goes with it */
        remove_capture_dir(child);
        move_to_dropped(level + below, RECORD_KEPT_SUFFIX);
        remove_work();
        move_to_dropped(level, "");
        return true;
    }
    int moved = kept_ns >= 0 ? renameat2(AT_FDCWD, child, AT_FDCWD, g_auto.dir, RENAME_EXCHANGE)
                             : renameat2(AT_FDCWD, child, AT_FDCWD, g_auto.dir, RENAME_NOREPLACE);
    if (moved != 0) {
        opprof__say("opprof: OPPROF_TRACE: cannot move '%s' to '%s': %s\n", child, g_auto.dir, strerror(errno));
        return false;
    }
    if (kept_ns >= 0) { /* the one kept before, now at child's name */
        remove_capture_dir(child);
        move_to_dropped(level, RECORD_KEPT_SUFFIX);
    }
    remove_work();
    if (!is_child_session()) /* a wrapper within a wrapper: the profiled process speaks */
        opprof__say("opprof: OPPROF_TRACE: this process ran the program in a child process (it recorded no range of "
                    "its own, its children took the CPU time): that program's capture is %s/\n",
                    g_auto.dir);
    tell_record(RECORD_MOVED_LINE, level + below);
    if (is_child_session()) keep_claim(level, cpu_ns);
    return true;
}

/* The capture kept at this child's level is DIR, as its claim says. Where
 * its parent, a wrapper, moved it up a level since (a program run before
 * this one's parent at that level: `bash -c 'a; b'` whose a and b each run
 * a program in a child), the claim is the level's no more: taken for it,
 * this process's capture was set against a capture that is not there,
 * its wrapper's EXCHANGE failed ("cannot move ... No such file or
 * directory"), and the capture of the program that did the work was left
 * beside DIR while DIR held a shell's. */
static bool kept_is_here(void) {
    struct stat st;
    return lstat(g_auto.dir, &st) == 0 && S_ISDIR(st.st_mode);
}

static void save(void) {
    pthread_mutex_lock(&g_auto.lock);
    opprof_session *session = g_auto.session;
    g_auto.session = NULL;
    pthread_mutex_unlock(&g_auto.lock);
    if (!session) return;
    g_auto.cpu_before_save = cpu_seconds(RUSAGE_SELF); /* the process's own work, not the writing of its capture */
    int level = record_child_level(g_auto.dir);
    /* its CPU time and its children's since its start, against that of a capture kept at its level */
    long long cpu_ns = (long long)((g_auto.cpu_before_save - g_auto.cpu_started + cpu_seconds(RUSAGE_CHILDREN) -
                                    g_auto.children_cpu_started) *
                                   1e9),
              kept_ns = is_child_session() && !g_auto.flight && kept_is_here() ? kept_cpu_ns(level) : -1;
    g_auto.dropping = kept_ns >= cpu_ns;
    remeasure_machine(session);
    opprof_session_free(session); /* a capture being recorded is written now */
    if (g_auto.flight) {
        if (g_auto.captures == 0 && rmdir(g_auto.dir) == 0)
            opprof__say("opprof: flight recorder: no step was saved (no trigger); '%s' removed\n", g_auto.dir);
        else
            opprof__say("opprof: flight recorder: %d capture(s) written to %s/%s\n", g_auto.captures, g_auto.named,
                        lost_said());
        return;
    }
    if (take_child_capture(cpu_ns, kept_ns)) return;
    if (g_auto.dropping && g_auto.content) { /* a program run before it at its level took more CPU time */
        remove_work();
        move_to_dropped(level, "");
        return;
    }
    /* a child that took a profile and recorded nothing but its steps leaves nothing (a wrapper's helper) */
    if (g_auto.captures == 0 || (is_child_session() && !g_auto.content && !g_auto.failed)) {
        remove_work();
        if (is_child_session() && !g_auto.failed) give_back_claim(level);
        if (!is_child_session() || g_auto.failed)
            opprof__say("opprof: OPPROF_TRACE: no capture written to '%s'%s\n", g_auto.dir,
                        g_auto.failed ? " (a file could not be written)" : " (nothing was recorded)");
        return;
    }
    char where[4200];
    snprintf(where, sizeof where, "%s", g_auto.dir);
    /* of more CPU time than the capture kept at its level: in its place; else DIR, or DIR.N */
    if (!(kept_ns >= 0 && replace_kept(level) == 0) && publish(where, sizeof where) != 0) {
        opprof__say("opprof: OPPROF_TRACE: cannot move '%s' to '%s': %s\n", g_auto.work, g_auto.dir, strerror(errno));
        remove_work();
        return;
    }
    if (strcmp(where, g_auto.dir) != 0)
        opprof__say("opprof: OPPROF_TRACE: '%s' appeared while the program ran (another process made it?) "
                    "and is left as it is: the capture is in '%s'\n",
                    g_auto.dir, where);
    else if (is_child_session())
        keep_claim(level, cpu_ns);
    if (is_child_session() && !g_auto.failed && !g_auto.incomplete && !strcmp(where, g_auto.dir))
        return; /* record says where it went (its parent moves it up, or it stays beside, said) */
    opprof__say("opprof: %d capture(s) written to %s%s/%s\n", g_auto.captures, g_auto.named, where + strlen(g_auto.dir),
                lost_said()); /* DIR as named, and its .N */
}

/* ---- signals and the watcher ---- */

/* SIGINT, SIGTERM: the watcher saves; the interrupted thread waits until
 * the process ends by the signal (it must not run on, nor exit with a status
 * of its own), unless it is the one saving already (atexit). Only
 * async-signal-safe calls: atomics, sem_post, nanosleep. */
static void on_signal(int sig) {
    if (getpid() != g_auto.owner) { /* a forked child: the signal does what it would without opprof */
        sigaction(sig, sig == SIGINT ? &g_auto.old_int : &g_auto.old_term, NULL);
        raise(sig);
        return;
    }
    int none = 0;
    __atomic_compare_exchange_n(&g_auto.fatal, &none, sig, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    sem_post(&g_auto.wake);
    if (__atomic_load_n(&g_auto.saver, __ATOMIC_ACQUIRE) == (pid_t)syscall(SYS_gettid)) return;
    /* interrupted inside a record: it must end it, or the save (which waits
     * for every record in progress) never could; the signal then ends it */
    opprof__fast *t = opprof__tls;
    if (t && __atomic_load_n(&t->busy, __ATOMIC_ACQUIRE)) return;
    /* interrupted inside a session call (a step being closed): it holds the lock
     * that the save needs; it goes on, and the signal ends the process once saved */
    if (__atomic_load_n(&opprof__in_session, __ATOMIC_RELAXED)) return;
    /* interrupted while opprof's threads are paused (unshare): the watcher is
     * not there to save; it is started again, and the signal then ends it */
    if (opprof__helpers_paused()) return;
    wait_done();
}

/* The dump signal: the watcher asks the flight recorder for a dump. */
static void on_dump_signal(int sig) {
    (void)sig;
    __atomic_add_fetch(&g_auto.dumps, 1, __ATOMIC_RELEASE);
    sem_post(&g_auto.wake);
}

static void dump(void) {
    char reason[64];
    snprintf(reason, sizeof reason, "signal SIG%s (dump)", sigabbrev_np(g_auto.flight_signal));
    pthread_mutex_lock(&g_auto.lock);
    if (g_auto.session && !__atomic_load_n(&g_auto.finished, __ATOMIC_ACQUIRE))
        opprof_session_dump(g_auto.session, reason);
    pthread_mutex_unlock(&g_auto.lock);
}

/* The wake semaphore, or OPPROF__HELPER_WATCH_MS: true when woken. A program whose main
 * thread ends by pthread_exit ends when its last thread does, by exit(0): the
 * watcher, one thread more, kept it running for ever once its own had ended
 * (`opprof record` waited with it). Each OPPROF__HELPER_WATCH_MS it looks, and when only
 * opprof's helpers are left, it calls exit(0) as that last thread would
 * have (the save runs, then the process ends with 0). */
static bool woken(void) {
    opprof__helper_pause_point(NULL); /* opprof_threads_pause: started again from the top */
    struct timespec at = opprof__helper_deadline();
    if (sem_clockwait(&g_auto.wake, CLOCK_MONOTONIC, &at) == 0) return true;
    if (errno == ETIMEDOUT) opprof__end_if_only_helpers_left();
    return false;
}

static void *watcher(void *arg) {
    (void)arg;
    opprof__helper_wakes_by(&g_auto.wake);
    for (;;) {
        while (!woken()) {}
        if (__atomic_load_n(&g_auto.fatal, __ATOMIC_ACQUIRE)) break;
        if (__atomic_load_n(&g_auto.dumps, __ATOMIC_ACQUIRE)) {
            __atomic_sub_fetch(&g_auto.dumps, 1, __ATOMIC_ACQ_REL);
            dump();
        }
    }
    finish(); /* saves and ends the process by the signal; or waits while atexit does */
    end_by_signal();
    return NULL;
}

/* The watcher never runs a handler, ours (it would wait for itself) or the
 * program's: like every thread opprof starts, it blocks every signal. */
static int start_watcher(void) {
    if (sem_init(&g_auto.wake, 0, 0) != 0) return -1;
    return opprof__helper_start(NULL, watcher, NULL) != 0 ? -1 : 0; /* detached */
}

/* Our handler for sig, unless the program was started with sig ignored
 * (nohup): then it stays ignored, as without opprof. */
static void handle(int sig, struct sigaction *old) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, NULL, old);
    if (old->sa_handler != SIG_IGN) sigaction(sig, &sa, NULL);
}

/* ---- the environment's settings ---- */

/* OPPROF_SCHEDULE=wait,warmup,active,repeat (skip_first may come fifth). */
static int parse_schedule(const char *text, opprof_schedule *s) {
    int v[5] = {0, 0, 0, 0, 0}, n = 0;
    const char *p = text;
    while (n < 5) {
        char *end;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p || errno || x < 0 || x > 1000000) return -1;
        v[n++] = (int)x;
        if (*end == '\0') break;
        if (*end != ',') return -1;
        p = end + 1;
    }
    if (n < 4) return -1;
    *s = (opprof_schedule){.wait = v[0], .warmup = v[1], .active = v[2], .repeat = v[3], .skip_first = v[4]};
    return opprof_schedule_check(s) ? -1 : 0;
}

/* One OPPROF_FLIGHT_* count: 0 and said when absent or valid, -1 when not. */
static int flight_count(const char *name, int lo, int hi, int *out) {
    const char *text = secure_getenv(name);
    if (!text) return 0;
    char *end;
    long v = strtol(text, &end, 10);
    if (*text && !*end && v >= lo && v <= hi) return *out = (int)v, 0;
    opprof__say("opprof: %s='%s': not a whole number from %d to %d; nothing is recorded\n", name, text, lo, hi);
    return -1;
}

/* OPPROF_FLIGHT and its companions into cfg->flight: 0 (also when there is
 * no OPPROF_FLIGHT), or -1 when one is wrong (said: then nothing is recorded,
 * rather than everything). */
static int flight_setup(opprof_config *cfg) {
    const char *keep = secure_getenv("OPPROF_FLIGHT");
    if (!keep) return 0;
    char why[512];
    opprof_flight *f = &cfg->flight;
    *f = opprof_flight_default();
    const char *trig = secure_getenv("OPPROF_FLIGHT_TRIGGER"), *cool = secure_getenv("OPPROF_FLIGHT_COOLDOWN");
    const char *sig = secure_getenv("OPPROF_FLIGHT_SIGNAL");
    int64_t ns;
    const char *bad = NULL;
    if (opprof_flight_parse_keep(f, keep, why, sizeof why))
        bad = "OPPROF_FLIGHT";
    else if (trig && opprof_flight_parse_triggers(f, trig, why, sizeof why))
        bad = "OPPROF_FLIGHT_TRIGGER";
    else if (cool && opprof_parse_duration_ns(cool, &ns)) {
        bad = "OPPROF_FLIGHT_COOLDOWN";
        snprintf(why, sizeof why, "'%s': not a duration (\"1s\", \"250ms\", \"0\")", cool);
    } else if (sig && opprof_parse_dump_signal(sig, &g_auto.flight_signal)) {
        bad = "OPPROF_FLIGHT_SIGNAL";
        snprintf(why, sizeof why, "'%s': not USR1, USR2, a real-time signal's number (%d to %d) or none", sig, SIGRTMIN,
                 SIGRTMAX);
    }
    if (bad) {
        opprof__say("opprof: %s=%s; nothing is recorded\n", bad, why);
        return -1;
    }
    if (cool) f->cooldown_ms = ns / 1000000;
    if (!sig) g_auto.flight_signal = SIGUSR2;
    if (flight_count("OPPROF_FLIGHT_BEFORE", 0, 1000000, &f->before) ||
        flight_count("OPPROF_FLIGHT_AFTER", 0, 1000000, &f->after) ||
        flight_count("OPPROF_FLIGHT_MEDIAN_OF", 1, 100000, &f->median_of))
        return -1;
    if (!secure_getenv("OPPROF_FLIGHT_BEFORE") && f->before + 1 + f->after > f->keep_steps)
        f->before = f->keep_steps - 1 - f->after > 0 ? f->keep_steps - 1 - f->after : 0; /* the default fits */
    if (opprof_flight_check(f, why, sizeof why)) {
        opprof__say("opprof: OPPROF_FLIGHT: %s; nothing is recorded\n", why);
        return -1;
    }
    if (cfg->schedule.active) {
        opprof__say("opprof: OPPROF_SCHEDULE ignored: the flight recorder (OPPROF_FLIGHT) records every step\n");
        cfg->schedule = (opprof_schedule){0};
    }
    g_auto.flight = true;
    return 0;
}

/* The dump signal's handler, installed once the session runs. */
static void handle_dump_signal(void) {
    if (!g_auto.flight_signal) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_dump_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(g_auto.flight_signal, &sa, NULL);
}

/* The program starts a session of its own: OPPROF_TRACE's stops and is saved first. */
static void yield_to_program(void) {
    if (g_auto.session) finish();
}

/* An earlier run's DIR.opprof-PID, whose process ended without saving it. */
static void name_leftover(const char *entry, long pid, void *user) {
    size_t files = 0;
    DIR *d = opendir(entry);
    for (struct dirent *e; d && (e = readdir(d));)
        files += !strncmp(e->d_name, "trace-step-", 11) && !strstr(e->d_name, ".tmp.");
    if (d) closedir(d);
    if (!files && *(const bool *)user) return; /* a child's level: a shell's, ended by _exit; record removes it */
    opprof__say("opprof: '%s' was left by process %ld, which ended without saving it (killed by SIGKILL, "
                "or ended by _exit or abort): ",
                entry, pid);
    if (files)
        opprof__say("%zu file(s) of saved steps in it; rename it to keep them, or remove it\n", files);
    else
        opprof__say("no saved step in it; remove it\n");
}

/* OPPROF_MACHINE_FILE=PATH (opprof record --roofline): a machine profile that
 * every capture carries, read once (refused whole, and said, when it is not one). */
static void machine_setup(void) {
    const char *path = secure_getenv("OPPROF_MACHINE_FILE");
    if (!path || !*path) return;
    opprof_machine *m = &g_auto.machine;
    opprof_read_error err;
    int rc = opprof_machine_read(path, m, &err);
    if (!rc) rc = opprof_session_set_machine(g_auto.session, m);
    g_auto.has_machine = rc == 0;
    g_auto.machine_at = seconds_now();
    if (rc)
        opprof__say("opprof: OPPROF_MACHINE_FILE='%s' ignored: %s; the captures carry no machine\n", path,
                    err.message[0] && rc == OPPROF_EFORMAT ? err.message : opprof_strerror(rc));
    unsetenv("OPPROF_MACHINE_FILE");
}

/* ---- the start ---- */

__attribute__((constructor)) static void autostart(void) {
    const char *dir = secure_getenv("OPPROF_TRACE");
    if (!dir || !*dir) return;
    struct stat st;
    if (strlen(dir) >= sizeof g_auto.dir) {
        opprof__say("opprof: OPPROF_TRACE='%s' ignored: the path is too long\n", dir);
        return;
    }
    /* a child's DIR may hold the capture that a program run before it at its level kept (record_files.h) */
    bool sibling_kept = record_child_level(dir) > 0 && kept_cpu_ns(record_child_level(dir)) >= 0;
    if (!sibling_kept && lstat(dir, &st) == 0) {
        opprof__say("opprof: OPPROF_TRACE='%s' ignored: it exists; name a new directory\n", dir);
        return;
    }
    bool child_level = record_child_level(dir) > 0;
    opprof__leftovers(dir, ".opprof-", name_leftover, &child_level);
    outputs_setup();
    opprof_config cfg = opprof_config_default();
    cfg.profile_memory = true;
    cfg.on_trace_ready = write_capture;
    const char *sample = secure_getenv("OPPROF_SAMPLE"); /* HZ[,fp|dwarf]: samples, and off-CPU times */
    if (sample && opprof_parse_sample(sample, &cfg.sample_hz, &cfg.sample_dwarf))
        opprof__say("opprof: OPPROF_SAMPLE='%s' ignored: not HZ[,fp|dwarf] (HZ from 1 to 1000000); no samples\n",
                    sample);
    cfg.off_cpu = cfg.sample_hz > 0 || opprof__env_int("OPPROF_OFF_CPU", 0, 1, 0) == 1;
    /* OPPROF_RECORD_SHAPES=1: operators' input shapes (opprof_set_inputs), and FLOPs from them */
    cfg.record_shapes = cfg.with_flops = opprof__env_int("OPPROF_RECORD_SHAPES", 0, 1, 0) == 1;
    /* OPPROF_MAX_EVENTS=N: a capture's event budget in memory (past it events are dropped and counted) */
    cfg.max_events = (uint64_t)opprof__env_int("OPPROF_MAX_EVENTS", 0, INT64_MAX, 0);
    const char *sched = secure_getenv("OPPROF_SCHEDULE");
    if (sched && parse_schedule(sched, &cfg.schedule)) {
        opprof__say("opprof: OPPROF_SCHEDULE='%s' ignored: not wait,warmup,active,repeat[,skip_first] "
                    "(whole numbers, active >= 1); recording from start to exit\n",
                    sched);
        cfg.schedule = (opprof_schedule){0};
    }
    int flight_rc = flight_setup(&cfg);
    snprintf(g_auto.named, sizeof g_auto.named, "%s", dir);
    record_absolute_dir(dir, g_auto.dir, sizeof g_auto.dir); /* a program may change its directory */
    snprintf(g_auto.work, sizeof g_auto.work, "%s.opprof-%ld", g_auto.dir, (long)getpid());
    /* this process is the one profiled: the programs it starts do not inherit it
     * (each would try to write the same DIR) */
    unsetenv("OPPROF_TRACE");
    unsetenv("OPPROF_SCHEDULE");
    unsetenv("OPPROF_FLIGHT");
    unsetenv("OPPROF_SAMPLE");
    if (flight_rc) return;
    const char *made = g_auto.flight ? g_auto.dir : g_auto.work; /* a flight recorder's saves appear as they come */
    struct stat made_st;
    if (mkdir(made, 0777) != 0 || lstat(made, &made_st) != 0) {
        opprof__say("opprof: OPPROF_TRACE='%s' ignored: cannot create '%s': %s\n", g_auto.dir, made, strerror(errno));
        return;
    }
    g_auto.made_dev = made_st.st_dev; /* saves go to this directory, whatever takes its name later */
    g_auto.made_ino = made_st.st_ino;
    note_captures_below();
    int rc = opprof_session_start(&g_auto.session, &cfg);
    opprof_free((void *)cfg.flight.range_name); /* the session has its copy */
    if (rc) {
        opprof__say("opprof: OPPROF_TRACE: cannot start profiling: %s\n", opprof_strerror(rc));
        rmdir(made);
        return;
    }
    machine_setup();
    g_auto.cpu_started = cpu_seconds(RUSAGE_SELF);
    g_auto.children_cpu_started = cpu_seconds(RUSAGE_CHILDREN);
    g_auto.owner = getpid();
    if (is_child_session()) { /* its claim says which process holds it (record_claim_holder_ended) */
        char line[48];
        snprintf(line, sizeof line, RECORD_PID_LINE "%ld\n", (long)getpid());
        append_to_claim(record_child_level(g_auto.dir), "", line);
    }
    atexit(finish);
    at_quick_exit(finish); /* quick_exit runs these, not atexit's: its capture was lost as by _exit */
    opprof__before_session_start = yield_to_program; /* a session of the program's own takes over */
    if (start_watcher() == 0) {
        handle(SIGINT, &g_auto.old_int);
        handle(SIGTERM, &g_auto.old_term);
        if (g_auto.flight) handle_dump_signal();
    }
}

int opprof_step(void) {
    if (!g_auto.session || __atomic_load_n(&g_auto.finished, __ATOMIC_ACQUIRE)) return OPPROF_ESTOPPED;
    return opprof_session_step(g_auto.session);
}
