/* trace_handler.c - the ready-made on_trace_ready handler: each capture becomes a
 * Chrome trace with a name of its own in one directory (PyTorch's
 * tensorboard_trace_handler), plain or gzip-compressed. */
#define _GNU_SOURCE
#include "trace/trace.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* A FILE that compresses into a gzFile (fopencookie), so that the one Chrome
 * writer serves both forms. */
static ssize_t gz_cookie_write(void *cookie, const char *buf, size_t size) {
    if (size == 0) return 0;
    int n = gzwrite((gzFile)cookie, buf, (unsigned)size);
    return n > 0 ? n : -1;
}

static int gz_cookie_close(void *cookie) { return gzclose((gzFile)cookie) == Z_OK ? 0 : -1; }

static int write_gzip(const opprof_capture *capture, opprof__file *f, const char *trace_name) {
    int fd = dup(fileno(f->fp));
    if (fd < 0) return -errno;
    gzFile gz = gzdopen(fd, "wb6");
    if (!gz) {
        close(fd);
        return OPPROF_ENOMEM;
    }
    FILE *fp = fopencookie(gz, "w", (cookie_io_functions_t){.write = gz_cookie_write, .close = gz_cookie_close});
    if (!fp) {
        gzclose(gz);
        return OPPROF_ENOMEM;
    }
    setvbuf(fp, NULL, _IOFBF, 1 << 16);
    int rc = opprof_capture_chrome_write_stream(capture, fp, trace_name);
    errno = 0;
    if (fclose(fp) != 0 && !rc) rc = errno ? -errno : OPPROF_EIO;
    return rc;
}

/* DIR/WORKER.step-N.pt.trace.json[.gz], with ".K" before ".pt" if taken. */
static int pick_path(const opprof_trace_dir *d, const opprof_capture *capture, char *path, size_t size) {
    char worker[256];
    if (d->worker_name && *d->worker_name) {
        snprintf(worker, sizeof worker, "%s", d->worker_name);
    } else {
        char host[128] = "host";
        gethostname(host, sizeof host - 1);
        host[sizeof host - 1] = '\0';
        snprintf(worker, sizeof worker, "%s_%lld", host, (long long)getpid());
    }
    for (char *p = worker; *p; p++)
        if (*p == '/') *p = '_';
    long long step = (long long)opprof_capture_get_info(capture).step_num;
    const char *ext = d->use_gzip ? ".pt.trace.json.gz" : ".pt.trace.json";
    for (int k = 0; k < 1000; k++) {
        char extra[16] = "";
        if (k) snprintf(extra, sizeof extra, ".%d", k);
        int n = snprintf(path, size, "%s/%s.step-%lld%s%s", d->dir, worker, step, extra, ext);
        if (n < 0 || (size_t)n >= size) return OPPROF_ENAMETOOLONG;
        if (access(path, F_OK) != 0 && errno == ENOENT) return 0;
    }
    return OPPROF_EEXIST;
}

int opprof_trace_dir_handler(const opprof_capture *capture, void *trace_dir) {
    opprof_trace_dir *d = trace_dir;
    if (!capture || !d || !d->dir || !*d->dir) return OPPROF_EINVAL;
    if (mkdir(d->dir, 0777) != 0 && errno != EEXIST) return -errno;
    char path[sizeof d->last_path];
    int rc = pick_path(d, capture, path, sizeof path);
    if (rc) return rc;
    opprof__file f;
    rc = opprof__file_open(&f, path);
    if (rc) return rc;
    rc = d->use_gzip ? write_gzip(capture, &f, path) : opprof_capture_chrome_write_stream(capture, f.fp, path);
    if (rc) {
        opprof__file_abort(&f);
        return rc;
    }
    rc = opprof__file_commit(&f);
    if (!rc) {
        memcpy(d->last_path, path, sizeof path);
        d->written++;
    }
    return rc;
}
