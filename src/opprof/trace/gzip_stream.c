/* gzip_stream.c - a FILE that compresses into another file's descriptor
 * (fopencookie over a gzFile), so that each writer serves both its plain and
 * its gzip form: the Chrome writer's .json.gz, the Perfetto writer's
 * .pftrace.gz. */
#define _GNU_SOURCE /* fopencookie */
#include "trace/trace.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <zlib.h>

int opprof__zlib_code(int zlib_error) {
    return zlib_error == Z_ERRNO ? -errno : zlib_error == Z_MEM_ERROR ? OPPROF_ENOMEM : OPPROF_EFORMAT;
}

static ssize_t gz_cookie_write(void *cookie, const char *buf, size_t size) {
    if (size == 0) return 0;
    int n = gzwrite((gzFile)cookie, buf, (unsigned)size);
    return n > 0 ? n : -1;
}

static int gz_cookie_close(void *cookie) { return gzclose((gzFile)cookie) == Z_OK ? 0 : -1; }

int opprof__gzip_open(FILE *file, FILE **out) {
    int fd = dup(fileno(file));
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
    /* stdio's own buffer: the writers' blocks are larger and go to gzwrite whole */
    *out = fp;
    return 0;
}

int opprof__gzip_close(FILE *fp, int rc) {
    errno = 0;
    if (fclose(fp) != 0 && !rc) rc = errno ? -errno : OPPROF_EIO;
    return rc;
}
