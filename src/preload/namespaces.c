/* namespaces.c - unshare and setns as the program would have them without
 * opprof. The kernel gives a new user namespace (unshare(CLONE_NEWUSER):
 * `unshare -r`, bubblewrap, rootless containers) and setns into one only to
 * a process of one thread; opprof's watcher made every recorded process
 * two, and `opprof record -- unshare -r prog` failed with EINVAL. Around
 * those calls alone, opprof's threads end and start again
 * (opprof_threads_pause); every other call goes straight to the C library.
 * What the program gets back, and errno, are the C library's. */
#define _GNU_SOURCE
#include <opprof/opprof.h>

#include <dlfcn.h>
#include <errno.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/ioctl.h>

/* Flags that the kernel refuses to a process of several threads. */
static bool wants_one_thread(int flags) { return flags & (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM); }

typedef int (*unshare_fn)(int);
typedef int (*setns_fn)(int, int);

/* call(a, b) with opprof's threads paused when alone; errno as the call left it. */
static int alone_for(bool alone, int (*call)(void *, int, int), void *fn, int a, int b) {
    bool paused = alone && opprof_threads_pause() == 0;
    int rc = call(fn, a, b), e = errno;
    if (paused) opprof_threads_resume();
    errno = e;
    return rc;
}

static int call_unshare(void *fn, int flags, int unused) {
    (void)unused;
    return ((unshare_fn)fn)(flags);
}

static int call_setns(void *fn, int fd, int nstype) { return ((setns_fn)fn)(fd, nstype); }

__attribute__((visibility("default"))) int unshare(int flags) {
    void *real = dlsym(RTLD_NEXT, "unshare");
    if (!real) return errno = ENOSYS, -1;
    return alone_for(wants_one_thread(flags), call_unshare, real, flags, 0);
}

/* nstype 0 takes the namespace fd names: a user namespace's asks for one thread. */
__attribute__((visibility("default"))) int setns(int fd, int nstype) {
    void *real = dlsym(RTLD_NEXT, "setns");
    if (!real) return errno = ENOSYS, -1;
    int e = errno;
    bool user = nstype == CLONE_NEWUSER || (nstype == 0 && ioctl(fd, NS_GET_NSTYPE) == CLONE_NEWUSER);
    errno = e;
    return alone_for(user, call_setns, real, fd, nstype);
}
