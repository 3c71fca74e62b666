/* spawn_target.c - a wrapper that runs its program by posix_spawnp, as GNU
 * make, ninja and Rust's Command do, for test_record_cli.
 *   spawn_target N PROG ARGS...   PROG run N times, one after the other; the
 *                                 exit status the last one's */
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>

extern char **environ;

int main(int argc, char **argv) {
    if (argc < 3) return 64;
    int status = 0;
    for (int k = 0; k < atoi(argv[1]); k++) {
        pid_t pid;
        if (posix_spawnp(&pid, argv[2], NULL, NULL, argv + 2, environ) != 0) return 127;
        if (waitpid(pid, &status, 0) != pid) return 126;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
