/* record_ggml.c - libopprof_ggml_record.so, what `opprof record --ggml`
 * preloads (after libopprof_record.so) into a program that was not changed:
 * it attaches the ggml adapter to the program's own ggml as the program
 * starts, so that OPPROF_TRACE's session records each op on the threads that
 * compute it. A ggml without opprof's CPU hook, or none, is said at start;
 * the program runs as without it. (A ggml-cpu that the program loads later,
 * with GGML_BACKEND_DL, is not there yet: said the same way.) */
#include <opprof/ggml.h>

#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void record_ggml(void) {
    int rc = opprof_ggml_attach();
    if (rc == OPPROF_ENOENT)
        fputs("opprof record: --ggml: the program has no ggml with opprof's CPU hook loaded at start "
              "(ggml_cpu_set_hook: build its ggml with src/ggml/ggml-cpu-hook.patch, as scripts/ggml.sh does; "
              "a ggml-cpu that ggml_backend_load_all() loads later, GGML_BACKEND_DL, is not there at start: "
              "build ggml with GGML_BACKEND_DL=OFF); no ggml op is recorded\n",
              stderr);
    else if (rc == OPPROF_EVERSION)
        fputs("opprof record: --ggml: the program's ggml numbers its ops otherwise than the ggml 0.22 this "
              "adapter was built for (its op names are not at their places): not attached, rather than give "
              "every op another's name; rebuild opprof against that ggml (scripts/ggml.sh)\n",
              stderr);
}
