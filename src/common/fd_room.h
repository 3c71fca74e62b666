/* fd_room.h - room for opprof's own descriptors when the program ends. A
 * program may end holding every descriptor that its RLIMIT_NOFILE allows
 * (leaked ones, or a limit lowered to what it uses): then no file of the
 * capture, nor the line that tells `opprof record` the exit handlers ran,
 * could be opened, and the capture was lost with a wrong reason. At the end
 * alone, opprof__fd_room_make() tries FD_ROOM descriptors; only when one is
 * refused (EMFILE) does it lift the soft limit by FD_ROOM (never past the
 * hard one), and opprof__fd_room_give_back() puts the program's limit back:
 * a program that had room sees no change, one whose hard limit is full
 * gets none and opprof says why. Shared by libopprof (autostart's save) and
 * libopprof_record.so (src/preload). A file that calls it defines
 * _GNU_SOURCE first. */
#ifndef OPPROF_FD_ROOM_H
#define OPPROF_FD_ROOM_H

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

enum { OPPROF_FD_ROOM = 6 }; /* a save holds at most its directory, a file and what zlib or stdio adds */

typedef struct opprof__fd_room {
    bool lifted;
    rlim_t program_limit; /* the soft limit to put back when lifted */
} opprof__fd_room;

static inline opprof__fd_room opprof__fd_room_make(void) {
    int probe[OPPROF_FD_ROOM], n = 0, refused = 0;
    for (; n < OPPROF_FD_ROOM; n++)
        if ((probe[n] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
            refused = errno;
            break;
        }
    while (n > 0) close(probe[--n]);
    opprof__fd_room room = {0};
    struct rlimit l;
    if (refused != EMFILE || getrlimit(RLIMIT_NOFILE, &l) != 0 || l.rlim_cur >= l.rlim_max) return room;
    room.program_limit = l.rlim_cur;
    l.rlim_cur = l.rlim_max - l.rlim_cur < OPPROF_FD_ROOM ? l.rlim_max : l.rlim_cur + OPPROF_FD_ROOM;
    room.lifted = setrlimit(RLIMIT_NOFILE, &l) == 0;
    return room;
}

static inline void opprof__fd_room_give_back(opprof__fd_room room) {
    struct rlimit l;
    if (!room.lifted || getrlimit(RLIMIT_NOFILE, &l) != 0) return;
    l.rlim_cur = room.program_limit;
    if (setrlimit(RLIMIT_NOFILE, &l) != 0) { /* lowering the soft limit does not fail */
    }
}

#endif
