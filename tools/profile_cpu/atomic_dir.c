/* atomic_dir.c - see atomic_dir.h. */
#define _GNU_SOURCE
#include "atomic_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int outdir_begin(const char *outdir, char *workdir, size_t size) {
    struct stat st;
    if (lstat(outdir, &st) == 0) {
        fprintf(stderr, "profile_cpu: '%s' already exists; choose a new directory (nothing was changed)\n", outdir);
        return 1;
    }
    size_t n = strlen(outdir);
    while (n > 1 && outdir[n - 1] == '/') n--;
    if (n + 16 > size) {
        fprintf(stderr, "profile_cpu: '%s': %s\n", outdir, strerror(ENAMETOOLONG));
        return 1;
    }
    /* mkdir with a name of our own, not mkdtemp: the directory gets a plain
     * directory's mode from the kernel (0777 less the umask), and the umask
     * is never changed under the program's other threads */
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
    for (int attempt = 0; attempt < 100; attempt++) {
        unsigned char r[6];
        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) break;
        snprintf(workdir, size, "%.*s.tmp.%c%c%c%c%c%c", (int)n, outdir, digits[r[0] % 36], digits[r[1] % 36],
                 digits[r[2] % 36], digits[r[3] % 36], digits[r[4] % 36], digits[r[5] % 36]);
        if (mkdir(workdir, 0777) == 0) return 0;
        if (errno != EEXIST) break;
    }
    fprintf(stderr, "profile_cpu: cannot create '%s': %s\n", outdir, strerror(errno));
    return 1;
}

int outdir_publish(const char *workdir, const char *outdir) {
    if (renameat2(AT_FDCWD, workdir, AT_FDCWD, outdir, RENAME_NOREPLACE) != 0) {
        fprintf(stderr, "profile_cpu: cannot create '%s': %s\n", outdir, strerror(errno));
        outdir_remove(workdir);
        return 1;
    }
    return 0;
}

void outdir_remove(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char path[8192];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                outdir_remove(path);
            else
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}
