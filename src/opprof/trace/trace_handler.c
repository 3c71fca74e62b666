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
    rc = opprof_capture_chrome_write_ex(capture, path, &(opprof_chrome_options){.gzip = d->use_gzip});
    if (!rc) {
        memcpy(d->last_path, path, sizeof path);
        d->written++;
    }
    return rc;
}
