/* machine_cache.c - a machine's profile kept between runs
 * (opprof_machine_cached): measured once per CPU, ISA, thread count and
 * opprof version, then read from the user's cache; measured again at the end
 * of a long capture, the file keeping the best of each figure
 * (opprof_machine_remeasure). A file there is trusted only when it reads as
 * a profile of this CPU and ISA with the threads asked; anything else is
 * measured again and replaced, and said. */
#define _GNU_SOURCE
#include "analysis/analysis.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* What makes two machines the same here: the CPU's model and flags lines of
 * /proc/cpuinfo (a VM's flags differ from its host's), the ISA, the thread
 * count, opprof's version and its kernels' revision (a newer measurement is
 * not an older one). */
static uint64_t machine_key(int threads) {
    opprof_machine id;
    opprof_machine_identify(&id);
    uint64_t h =
        opprof__hash_pair(opprof__hash_bytes(id.cpu, strlen(id.cpu)), opprof__hash_bytes(id.isa, strlen(id.isa)));
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            h = opprof__hash_pair(h, opprof__hash_bytes(line, strlen(line)));
            break;
        }
    if (f) fclose(f);
    h = opprof__hash_pair(h, opprof__hash_bytes(OPPROF_VERSION_STRING, strlen(OPPROF_VERSION_STRING)));
    h = opprof__hash_pair(h, OPPROF__MACHINE_KERNELS);
    return opprof__hash_pair(h, (uint64_t)threads);
}

/* The cache's directory: $OPPROF_MACHINE_CACHE, $XDG_CACHE_HOME/opprof, ~/.cache/opprof. */
static int cache_dir(char *out, size_t size) {
    const char *own = secure_getenv("OPPROF_MACHINE_CACHE"), *xdg = secure_getenv("XDG_CACHE_HOME"),
               *home = secure_getenv("HOME");
    int n = own && own[0]     ? snprintf(out, size, "%s", own)
            : xdg && xdg[0]   ? snprintf(out, size, "%s/opprof", xdg)
            : home && home[0] ? snprintf(out, size, "%s/.cache/opprof", home)
                              : -1;
    return n < 0 ? OPPROF_ENOENT : (size_t)n >= size ? OPPROF_EINVAL : 0;
}

int opprof_machine_cache_path(int threads, char *path, size_t size) {
    if (!path || !size || threads < 1 || threads > OPPROF_MACHINE_MAX_THREADS) return OPPROF_EINVAL;
    int rc = cache_dir(path, size);
    size_t len = rc ? 0 : strlen(path);
    if (!rc && snprintf(path + len, size - len, "/machine-%016llx.json", (unsigned long long)machine_key(threads)) >=
                   (int)(size - len))
        rc = OPPROF_EINVAL;
    return rc;
}

/* The directory of path and its parents, made as needed (0700: the user's). */
static int make_dirs(const char *path) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(dir, 0700) != 0 && errno != EEXIST) return -errno;
            *p = '/';
        }
    return mkdir(dir, 0700) != 0 && errno != EEXIST ? -errno : 0;
}

static int store(const char *path, const opprof_machine *m) {
    char *json = NULL;
    int rc = make_dirs(path);
    if (!rc) rc = opprof_machine_json_to_string(m, &json);
    opprof__file f;
    if (!rc) rc = opprof__file_open(&f, path);
    if (!rc) {
        if (fputs(json, f.fp) < 0) {
            opprof__file_abort(&f);
            rc = OPPROF_EIO;
        } else {
            rc = opprof__file_commit(&f);
        }
    }
    opprof_free(json);
    return rc;
}

/* Whether the cache file holds this machine's profile for `threads`: 0 and
 * *out, else why not in why. */
static int cached(const char *path, int threads, opprof_machine *out, char *why, size_t why_size) {
    opprof_read_error err;
    opprof_machine id;
    opprof_machine_identify(&id);
    int rc = opprof_machine_read(path, out, &err);
    if (rc == -ENOENT) return rc;
    if (rc)
        snprintf(why, why_size, "%.160s", err.message[0] ? err.message : opprof_strerror(rc));
    else if (strcmp(out->cpu, id.cpu) || strcmp(out->isa, id.isa))
        snprintf(why, why_size, "it is the profile of another machine (%.60s, %.16s)", out->cpu, out->isa);
    else if (out->threads < threads)
        snprintf(why, why_size, "it has %d thread(s), not %d", out->threads, threads);
    else
        return 0;
    return OPPROF_EFORMAT;
}

int opprof_machine_cached(int threads, opprof_machine *out, char *said, size_t said_size) {
    if (!out || threads < 1 || threads > OPPROF_MACHINE_MAX_THREADS) return OPPROF_EINVAL;
    char path[4096], why[200] = "", tmp[8];
    if (!said) said = tmp, said_size = sizeof tmp;
    int where = opprof_machine_cache_path(threads, path, sizeof path);
    int rc = where ? where : cached(path, threads, out, why, sizeof why);
    if (!rc) {
        out->threads = threads;
        snprintf(said, said_size, "the machine's ceilings from %s (measured on this CPU before)", path);
        return 0;
    }
    if ((rc = opprof_machine_measure_quick(threads, out))) return rc;
    int kept = where ? where : store(path, out);
    if (where)
        snprintf(said, said_size, "the machine's ceilings measured now (no cache directory: $HOME unset)");
    else if (kept)
        snprintf(said, said_size, "the machine's ceilings measured now; not kept in %s: %s", path,
                 opprof_strerror(kept));
    else if (why[0])
        snprintf(said, said_size,
                 "the machine's ceilings measured now and kept in %s (the file there was not "
                 "trusted: %s)",
                 path, why);
    else
        snprintf(said, said_size, "the machine's ceilings measured now and kept in %s", path);
    return 0;
}

int opprof_machine_remeasure(opprof_machine *m) {
    if (!m || m->threads < 1 || m->threads > OPPROF_MACHINE_MAX_THREADS) return OPPROF_EINVAL;
    opprof_machine now, id;
    opprof_machine_identify(&id);
    if (strcmp(m->cpu, id.cpu) || strcmp(m->isa, id.isa)) return OPPROF_EFORMAT;
    int rc = opprof__machine_measure_in_program(m->threads, &now); /* DRAM's stays the start's */
    if (!rc) rc = opprof_machine_keep_best(m, &now);
    char path[4096];
    if (!rc && !opprof_machine_cache_path(m->threads, path, sizeof path)) {
        opprof_machine kept; /* a file of another's (or none) is replaced; one of this machine's is improved */
        char why[8];
        if (!cached(path, m->threads, &kept, why, sizeof why)) opprof_machine_keep_best(m, &kept);
        store(path, m); /* best effort: the capture has its figures either way */
    }
    return rc;
}
