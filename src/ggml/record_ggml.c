/* record_ggml.c - libopprof_ggml_record.so, what `opprof record --ggml`
 * preloads (after libopprof_record.so) into a program that was not changed:
 * it attaches the ggml adapter to the program's own ggml as the program
 * starts, so that OPPROF_TRACE's session records each op on the threads that
 * compute it. A ggml that numbers its ops otherwise is said at start; a
 * ggml without opprof's CPU hook, or none, is said when the program exits,
 * not at start: the program that record started may be a wrapper (`env`,
 * `taskset`, `sh -c`) that execs the one with ggml, and exec runs no exit
 * handler. The program runs as without it either way. (A ggml-cpu that the
 * program loads later, with GGML_BACKEND_DL, is not there at start: said the
 * same way.) */
#define _POSIX_C_SOURCE 200809L
#include <opprof/ggml.h>

#include "../common/record_files.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pid_t g_unattached; /* the process whose start found no hooked ggml */

/* Its child ran another program (a wrapper that forks: `time prog`), which
 * took the profile or which opprof record names: the files where the child
 * said so (src/common/record_files.h). */
static bool child_ran(void) {
    const char *exited = getenv("OPPROF_RECORD_EXITED");
    char ran[4096];
    return exited &&
           ((snprintf(ran, sizeof ran, "%s" RECORD_RAN_SUFFIX, exited) < (int)sizeof ran && access(ran, F_OK) == 0) ||
            record_child_took_profile(exited));
}

static void say_unattached(void) {
    if (getpid() == g_unattached && !child_ran()) /* not a child it forked, nor a wrapper that forks */
        fputs("opprof record: --ggml: the program has no ggml with opprof's CPU hook loaded at start "
              "(ggml_cpu_set_hook: build its ggml with src/ggml/ggml-cpu-hook.patch, as scripts/ggml.sh does; "
              "a ggml-cpu that ggml_backend_load_all() loads later, GGML_BACKEND_DL, is not there at start: "
              "build ggml with GGML_BACKEND_DL=OFF); no ggml op is recorded\n",
              stderr);
}

__attribute__((constructor)) static void record_ggml(void) {
    int rc = opprof_ggml_attach();
    if (rc == OPPROF_ENOENT) {
        g_unattached = getpid();
        atexit(say_unattached);
    } else if (rc == OPPROF_EVERSION)
        fputs("opprof record: --ggml: the program's ggml numbers its ops otherwise than the ggml 0.22 this "
              "adapter was built for (its op names are not at their places): not attached, rather than give "
              "every op another's name; rebuild opprof against that ggml (scripts/ggml.sh)\n",
              stderr);
}
