/* elfutils.c - libdw loaded when first needed (record/elfutils.h). */
#define _GNU_SOURCE
#include "record/elfutils.h"
#include "record/record.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static opprof__elfutils_api g_api;
static const opprof__elfutils_api *g_loaded; /* set once, under g_once */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* dlsym on libdw's handle finds libelf's functions too (its dependency). */
static void load(void) {
    const char *file = getenv("OPPROF_LIBDW");
    if (!file || !*file) file = "libdw.so.1";
    void *dw = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    const char *missing = NULL;
#define OPPROF__ELFUTILS_LOAD(name) \
    if (dw && !missing && !(g_api.name = (__typeof__(name) *)dlsym(dw, #name))) missing = #name;
    OPPROF__ELFUTILS(OPPROF__ELFUTILS_LOAD)
#undef OPPROF__ELFUTILS_LOAD
    if (dw && !missing) {
        g_loaded = &g_api;
        return;
    }
    static const char LEFT_OUT[] = "samples' sources and inlined functions, the DWARF mode's callers and function "
                                   "names from ELF symbols are left out";
    if (!dw)
        opprof__say("opprof: elfutils: cannot load %s (%s): %s\n", file, dlerror(), LEFT_OUT);
    else
        opprof__say("opprof: elfutils: %s has no %s: %s\n", file, missing, LEFT_OUT);
    if (dw) dlclose(dw);
}

const opprof__elfutils_api *opprof__elfutils(void) {
    pthread_once(&g_once, load);
    return g_loaded;
}
