/* file.c - atomic file output: a temporary in the same directory, renamed into
 * place once flushed, so that a failed or interrupted write leaves no partial
 * file under the destination's name. A symbolic link is followed (the link
 * stays); a device, FIFO or socket (/dev/null, /dev/stdout, a pipe's name) is
 * written in place: renaming a file over it would replace it. */
#define _GNU_SOURCE
#include "base/base.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* path[0..len) + ".tmp.PID.XXXXXX", a new file of the mode that fopen gives
 * (0666 less the umask, applied by the kernel: the process's umask is never
 * changed, not even for an instant that another thread could see). The
 * descriptor, or -errno. */
static int create_temporary(char *path, size_t len) {
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    int head = snprintf(path + len, 32, ".tmp.%ld.", (long)getpid());
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned char r[6];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) return errno ? -errno : OPPROF_EIO;
        for (int k = 0; k < 6; k++) path[len + (size_t)head + k] = digits[r[k] % 36];
        path[len + (size_t)head + 6] = '\0';
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd >= 0 ? fd : -errno;
    }
    return OPPROF_EEXIST;
}

/* A path that is no regular file, directory nor link to one (a device, a
 * FIFO, a socket, a link to nothing yet): written in place. */
static bool written_in_place(const char *path) {
    struct stat st;
    if (stat(path, &st) == 0) return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode); /* dangling: the link makes its target */
}

/* Where path's file goes into out (PATH_MAX bytes): path itself, or the file
 * its links lead to; false when they lead nowhere it can name. No malloc: a
 * program's allocator may be recorded, or be opprof's own hook. */
static bool destination(const char *path, bool in_place, char *out) {
    struct stat st;
    if (!in_place && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) return realpath(path, out) != NULL;
    if (snprintf(out, PATH_MAX, "%s", path) < PATH_MAX) return true;
    errno = ENAMETOOLONG;
    return false;
}

/* f->path opened as it is, truncated: no temporary, nothing to rename. */
static int open_in_place(opprof__file *f) {
    int fd = open(f->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    return fd >= 0 ? fd : -errno;
}

/* A partial file of a writer that died: never published, nobody's now. */
static void remove_leftover(const char *entry, long pid, void *user) {
    (void)pid, (void)user;
    unlink(entry);
}

int opprof__file_open(opprof__file *f, const char *path) {
    *f = (opprof__file){0};
    if (!path || !*path) return OPPROF_EINVAL;
    f->in_place = written_in_place(path);
    char to[PATH_MAX];
    if (!destination(path, f->in_place, to)) return errno ? -errno : OPPROF_EINVAL;
    f->path_len = strlen(to);
    f->path = opprof__alloc(f->path_len + 1);
    f->tmp_path = f->in_place ? NULL : opprof__alloc(f->path_len + 32);
    if (!f->path || (!f->in_place && !f->tmp_path)) {
        opprof__file_abort(f);
        return OPPROF_ENOMEM;
    }
    memcpy(f->path, to, f->path_len + 1);
    if (f->tmp_path) memcpy(f->tmp_path, to, f->path_len);
    opprof__quiet_begin(&f->quiet);
    int fd = f->in_place ? open_in_place(f) : create_temporary(f->tmp_path, f->path_len);
    if (fd < 0) {
        opprof__file_abort(f);
        return fd;
    }
    f->created = !f->in_place;
    if (f->created) opprof__leftovers(f->path, ".tmp.", remove_leftover, NULL);
    f->fp = fdopen(fd, "w");
    if (!f->fp) {
        int err = errno ? -errno : OPPROF_ENOMEM;
        close(fd);
        opprof__file_abort(f);
        return err;
    }
    /* stdio's own buffer, a block of the file system's (glibc takes setvbuf's
     * size only with a buffer given): the writers pass larger blocks, which
     * bypass it (a 42 MB trace written in 86 writes) */
    return 0;
}

void opprof__file_abort(opprof__file *f) {
    if (f->fp) fclose(f->fp);
    if (f->tmp_path) {
        if (f->created) unlink(f->tmp_path);
        opprof__free(f->tmp_path);
    }
    opprof__free(f->path);
    opprof__quiet_end(&f->quiet);
    *f = (opprof__file){0};
}

int opprof__file_commit(opprof__file *f) {
    int err = 0;
    if (fflush(f->fp) != 0 || ferror(f->fp)) err = errno ? -errno : OPPROF_EIO;
    if (!err && fsync(fileno(f->fp)) != 0 && errno != EINVAL) err = -errno;
    int rc = fclose(f->fp);
    f->fp = NULL;
    if (!err && rc != 0) err = errno ? -errno : OPPROF_EIO;
    if (!err && !f->in_place && rename(f->tmp_path, f->path) != 0) err = -errno;
    if (err) {
        opprof__file_abort(f);
        return err;
    }
    opprof__free(f->tmp_path);
    opprof__free(f->path);
    opprof__quiet_end(&f->quiet);
    *f = (opprof__file){0};
    return 0;
}

int opprof_write_text_file(const char *path, const char *text) {
    if (!text) return OPPROF_EINVAL;
    opprof__file f;
    int rc = opprof__file_open(&f, path);
    if (rc) return rc;
    size_t n = strlen(text);
    if (fwrite(text, 1, n, f.fp) != n) {
        int err = errno ? -errno : OPPROF_EIO;
        opprof__file_abort(&f);
        return err;
    }
    return opprof__file_commit(&f);
}
