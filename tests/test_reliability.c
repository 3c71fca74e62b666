/* test_reliability.c - failures outside the program: a full file system
 * during export (a small tmpfs the test mounts when it may, else a file-size
 * limit), and SIGINT/SIGTERM during a capture. The error names the file, no
 * partial file and no temporary remains, other artifacts stay as they were.
 * An output named by a link, a FIFO or a pipe nobody reads: written where it
 * leads, nothing replaced, no signal. opprof's messages on a stderr that
 * nobody reads any more raise no SIGPIPE in the program: its exit status
 * stays its own. */
#include "check.h"
#include "testutil.h"

#include <opprof/capture.h>
#include <opprof/opprof.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static opprof_capture *big_capture(void) {
    opprof_capture *c;
    uint32_t t;
    opprof_capture_new(&c);
    opprof_capture_add_thread(c, 1, "main", &t);
    for (int i = 0; i < 20000; i++) opprof_capture_add_event(c, t, "aten::something", OPPROF_KIND_CPU_OP, i * 10, 5);
    opprof_capture_finish(c);
    return c;
}

static char *listing(const char *dir) {
    char cmd[600], *out = NULL;
    snprintf(cmd, sizeof cmd, "ls -A '%s'", dir);
    run_command(cmd, &out);
    return out;
}

/* A full file system and a file size limit, while writing a trace and while
 * profile_cpu writes its capture: an error naming the file, nothing partial
 * left, and what was there before kept. */
TEST_CASE(full_disk_and_size_limit_leave_nothing_partial) {
    char dir[256], small[400], path[600], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(small, sizeof small, "%s/small", dir);
    mkdir(small, 0755);
    bool mounted = geteuid() == 0 && mount("tmpfs", small, "tmpfs", 0, "size=256k") == 0;
    opprof_capture *c = big_capture(); /* ~1.4 MB of JSON */

    /* A small artifact first: it must survive the failures that follow. */
    snprintf(path, sizeof path, "%s/keep.txt", small);
    CHECK_INT(opprof_write_text_file(path, "keep me\n"), 0);

    if (mounted) {
        /* The file system fills up during export. */
        snprintf(path, sizeof path, "%s/trace.json", small);
        CHECK_INT(opprof_capture_chrome_write(c, path), OPPROF_ENOSPC);
        CHECK_STR(opprof_strerror(OPPROF_ENOSPC), "no space left on device");
        out = listing(small);
        CHECK_STR(out, "keep.txt\n"); /* no partial trace, no temporary */
        free(out);
        /* profile_cpu into the full file system: an error naming the file. */
        char filler[700];
        snprintf(filler, sizeof filler, "%s/filler", small);
        FILE *f = fopen(filler, "w");
        static char block[4096];
        memset(block, 'x', sizeof block);
        while (f && fwrite(block, 1, sizeof block, f) == sizeof block && fflush(f) == 0) {}
        if (f) fclose(f);
        unlink(filler);
        f = fopen(filler, "w"); /* leave ~12 KB: the directory and the tables fit, the trace does not */
        for (int i = 0; f && i < 256 * 1024 / 4096 - 4; i++) fwrite(block, 1, sizeof block, f);
        if (f) fclose(f);
        snprintf(cmd, sizeof cmd, "'%s/profile_cpu' --quiet --record-shapes --with-stack '%s/run'", bin_dir(), small);
        CHECK_INT(run_command(cmd, &out), 1);
        CHECK_CONTAINS(out, "cannot write '");
        CHECK_CONTAINS(out, "/run/cpu-step-4.");
        CHECK_CONTAINS(out, "o space left on device");
        free(out);
        out = listing(small);
        CHECK_STR(out, "filler\nkeep.txt\n");
        free(out);
    } else {
        fprintf(stderr, "test_reliability: cannot mount a tmpfs (not root): the file-size limit stands in\n");
    }

    /* A write that fails midway for any reason (here RLIMIT_FSIZE, open to
     * anyone): the same guarantees. */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 64 * 1024;
    CHECK_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
    snprintf(path, sizeof path, "%s/limited.json", dir);
    int rc = opprof_capture_chrome_write(c, path);
    CHECK_INT(rc, -EFBIG);
    setrlimit(RLIMIT_FSIZE, &old);
    out = listing(dir);
    CHECK_STR(out, "small\n");
    free(out);
    snprintf(path, sizeof path, "%s/keep.txt", small);
    char *kept = read_text(path);
    CHECK_STR(kept, "keep me\n");
    free(kept);
    if (mounted) umount(small);
    opprof_capture_free(c);
    remove_tree(dir);
}

/* SIGINT and SIGTERM during captures written back to back: exit 128 +
 * signal, the output directory never appears, no temporary remains. */
TEST_CASE(signals_leave_no_directory) {
    char dir[256], cmd[2048], *out = NULL;
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    const int sigs[2] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd,
                 "'%s/profile_cpu' --quiet --steps 100000000 --wait 0 --warmup 0 --active 1 --repeat 0 '%s/sig%d' & "
                 "pid=$!; sleep 0.5; kill -%d $pid; wait $pid",
                 bin_dir(), dir, i, sigs[i]);
        CHECK_INT(run_command(cmd, &out), 128 + sigs[i]);
        CHECK_CONTAINS(out, "interrupted by");
        CHECK_CONTAINS(out, "was not created");
        free(out);
    }
    out = listing(dir);
    CHECK_STR(out, "");
    free(out);
    remove_tree(dir);
}

/* The FIFO's reader: reads all of it into got, or (keep_none) closes at once. */
typedef struct fifo_reader {
    const char *path;
    bool keep_none;
    char got[64];
    size_t n;
} fifo_reader;

static void *read_fifo(void *arg) {
    fifo_reader *r = arg;
    int fd = open(r->path, O_RDONLY);
    for (ssize_t k; fd >= 0 && !r->keep_none && (k = read(fd, r->got + r->n, sizeof r->got - 1 - r->n)) > 0;)
        r->n += (size_t)k;
    if (fd >= 0) close(fd);
    return NULL;
}

static bool is_kind(const char *path, mode_t kind) {
    struct stat st;
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

/* -o LINK writes the link's target and keeps the link (a dangling one makes
 * it); -o FIFO writes into the FIFO and keeps it (renaming a file over it, as
 * over /dev/null, replaced it); a FIFO whose reader went away fails with
 * EPIPE, and no SIGPIPE kills the program. */
TEST_CASE(outputs_through_links_and_fifos) {
    char dir[256], target[300], link[300], fifo[300];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(target, sizeof target, "%s/target.txt", dir);
    snprintf(link, sizeof link, "%s/link.txt", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK_INT(symlink("target.txt", link), 0);
    CHECK_INT(opprof_write_text_file(link, "made through a dangling link\n"), 0);
    CHECK(is_kind(link, S_IFLNK));
    char *text = read_text(target);
    CHECK_STR(text, "made through a dangling link\n");
    free(text);
    CHECK_INT(opprof_write_text_file(link, "replaced through it\n"), 0);
    CHECK(is_kind(link, S_IFLNK));
    text = read_text(target);
    CHECK_STR(text, "replaced through it\n");
    free(text);

    CHECK_INT(mkfifo(fifo, 0600), 0);
    fifo_reader r = {.path = fifo};
    pthread_t reader;
    CHECK_INT(pthread_create(&reader, NULL, read_fifo, &r), 0);
    CHECK_INT(opprof_write_text_file(fifo, "through the pipe\n"), 0);
    pthread_join(reader, NULL);
    CHECK_STR(r.got, "through the pipe\n");
    CHECK(is_kind(fifo, S_IFIFO));

    size_t big = 1 << 20; /* more than a pipe holds */
    char *lots = malloc(big + 1);
    memset(lots, 'x', big);
    lots[big] = '\0';
    fifo_reader gone = {.path = fifo, .keep_none = true};
    CHECK_INT(pthread_create(&reader, NULL, read_fifo, &gone), 0);
    CHECK_INT(opprof_write_text_file(fifo, lots), -EPIPE);
    pthread_join(reader, NULL);
    free(lots);
    sigset_t pending;
    CHECK_INT(sigpending(&pending), 0);
    CHECK(!sigismember(&pending, SIGPIPE)); /* taken back: none left for the program */
    CHECK(is_kind(fifo, S_IFIFO));
    text = listing(dir);
    CHECK_STR(text, "fifo\nlink.txt\ntarget.txt\n");
    free(text);
    remove_tree(dir);
}

/* argv run with OPPROF_TRACE=trace (when not NULL), stdout to /dev/null and
 * stderr into a pipe whose reader is gone, SIGPIPE as a program finds it by
 * default: its wait status. */
static int run_with_stderr_unread(char *const argv[], const char *trace) {
    int p[2];
    if (pipe(p)) return -1;
    close(p[0]); /* nobody will read */
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGPIPE, SIG_DFL);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        dup2(p[1], 2);
        if (trace) setenv("OPPROF_TRACE", trace, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    int status = -1;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return status;
}

/* What opprof says at a program's end (autostart's "captures written",
 * record's table, the preloaded library's --step warning) goes to a stderr
 * that nobody reads: the program ends as it would without opprof, and the
 * capture is kept. */
TEST_CASE(messages_nobody_reads_take_no_exit_status) {
    char dir[256], trace[300], first[600], opprof[600], toy[600];
    CHECK(make_temp_dir(dir, sizeof dir) != NULL);
    snprintf(first, sizeof first, "%s/first_capture", bin_dir());
    snprintf(opprof, sizeof opprof, "%s/opprof", bin_dir());
    snprintf(toy, sizeof toy, "%s/../tests/record_toy", bin_dir());
    char *plain[] = {first, NULL};
    int st = run_with_stderr_unread(plain, NULL);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0); /* without opprof: the reference */
    snprintf(trace, sizeof trace, "%s/auto", dir);
    st = run_with_stderr_unread(plain, trace);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0); /* OPPROF_TRACE: the program's own */
    snprintf(trace, sizeof trace, "%s/auto/trace-step-0.json", dir);
    CHECK(access(trace, R_OK) == 0);
#if OPPROF_TEST_PRELOAD /* not in sanitizer builds: their runtime must come first in a process */
    snprintf(trace, sizeof trace, "%s/rec", dir);
    char *record[] = {opprof, "record", "-o", trace, "--step", "no_such_function", "--", toy, NULL};
    st = run_with_stderr_unread(record, NULL);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0); /* opprof record: the program's */
    CHECK(access(trace, R_OK) == 0);
#else
    (void)opprof, (void)toy;
#endif
    remove_tree(dir);
}

int main(int argc, char **argv) { return check_main(argc, argv, "test_reliability"); }
