/* fd_aside.c - a descriptor that opprof keeps open while the program runs
 * (the sampler's perf events) moved out of the numbers the program is
 * given. The kernel gives the lowest free number: perf events opened at
 * the start took 3 and 4 (or 4 and 5), and the program's first file then
 * got 5 where it got 3 without opprof. Moved up to FD_ASIDE_FROM below the
 * soft RLIMIT_NOFILE (at most 1024: a limit of a million would make the
 * kernel grow the descriptor table to it), the program's files keep their
 * numbers; a program that uses every number up to its limit still loses as
 * many as before. */
#define _GNU_SOURCE
#include "base/base.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

enum { FD_ASIDE_FROM = 64, FD_ASIDE_TOP = 1024 };

int opprof__fd_aside(int fd) {
    struct rlimit l;
    if (fd < 0 || getrlimit(RLIMIT_NOFILE, &l) != 0) return fd;
    rlim_t top = l.rlim_cur < FD_ASIDE_TOP ? l.rlim_cur : FD_ASIDE_TOP;
    if (top <= FD_ASIDE_FROM * 2) return fd; /* a limit this low: no room above the program's */
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, (int)(top - FD_ASIDE_FROM));
    if (moved < 0) return fd; /* every number up there taken: it stays where it is */
    close(fd);
    return moved;
}
