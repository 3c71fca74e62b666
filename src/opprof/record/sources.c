/* sources.c - what debug information says of a code address: its source
 * line, and the functions inlined there (libdw, from elfutils). The
 * process's modules are reported to one Dwfl, once (again when an address
 * is in none: a library loaded since); its DWARF is found in each object
 * or in its separate debug file (/usr/lib/debug). Under one lock: a Dwfl is
 * not thread-safe; the DWARF mode's unwinder (record/unwind.c) takes the
 * same Dwfl under the same lock. Symbol names stay symbols.c's (the ELF
 * symbol tables): this adds the inlined frames above them and every
 * frame's file:line. */
#define _GNU_SOURCE
#include "record/elfutils.h"
#include "record/record.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static Dwfl *g_dwfl; /* under g_lock; kept for the process's life */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static char *g_debuginfo_path;
static Dwfl_Callbacks g_callbacks = {.debuginfo_path = &g_debuginfo_path}; /* libdw's, filled with it */

/* The modules of this process, (re)reported. */
static bool report(void) {
    const opprof__elfutils_api *elfutils = opprof__elfutils();
    if (!elfutils) return false;
    g_callbacks.find_elf = elfutils->dwfl_linux_proc_find_elf;
    g_callbacks.find_debuginfo = elfutils->dwfl_standard_find_debuginfo;
    if (!g_dwfl && !(g_dwfl = elfutils->dwfl_begin(&g_callbacks))) return false;
    elfutils->dwfl_report_begin(g_dwfl);
    int rc = elfutils->dwfl_linux_proc_report(g_dwfl, getpid());
    return elfutils->dwfl_report_end(g_dwfl, NULL, NULL) == 0 && rc == 0;
}

static const char *basename_of(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void put_source(char *out, size_t size, const char *file, int line) {
    if (file && line > 0)
        snprintf(out, size, "%s:%d", basename_of(file), line);
    else
        out[0] = '\0';
}

/* An inlined subroutine's name: its own, or its abstract origin's. */
static const char *inlined_name(Dwarf_Die *scope) {
    const opprof__elfutils_api *elfutils = opprof__elfutils();
    Dwarf_Attribute attr;
    const char *name = elfutils->dwarf_formstring(elfutils->dwarf_attr_integrate(scope, DW_AT_name, &attr));
    if (!name) name = elfutils->dwarf_formstring(elfutils->dwarf_attr_integrate(scope, DW_AT_linkage_name, &attr));
    return name ? name : "?";
}

/* Where an inlined subroutine was called: its DW_AT_call_file and _line. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *scope, char *out, size_t size) {
    const opprof__elfutils_api *elfutils = opprof__elfutils();
    Dwarf_Attribute attr;
    Dwarf_Word file = 0, line = 0;
    Dwarf_Files *files;
    size_t n_files;
    out[0] = '\0';
    if (elfutils->dwarf_formudata(elfutils->dwarf_attr(scope, DW_AT_call_file, &attr), &file) ||
        elfutils->dwarf_formudata(elfutils->dwarf_attr(scope, DW_AT_call_line, &attr), &line) ||
        elfutils->dwarf_getsrcfiles(cu, &files, &n_files) || file >= n_files)
        return;
    put_source(out, size, elfutils->dwarf_filesrc(files, file, NULL, NULL), (int)line);
}

/* An address in no module is reported again at most this often: code
 * outside every object (a JIT's) must not re-read the maps at each sample. */
enum { REPORT_AGAIN_NS = 100 * 1000 * 1000 };
static int64_t g_reported_ns; /* under g_lock */

Dwfl *opprof__dwfl_lock(uint64_t ip) {
    const opprof__elfutils_api *elfutils = opprof__elfutils();
    pthread_mutex_lock(&g_lock);
    int64_t now = opprof__monotonic_ns();
    if (!g_dwfl && (g_reported_ns = now, !report())) return NULL;
    if (ip && !elfutils->dwfl_addrmodule(g_dwfl, (Dwarf_Addr)ip) && now - g_reported_ns >= REPORT_AGAIN_NS) {
        g_reported_ns = now;
        report();
    }
    return g_dwfl;
}

void opprof__dwfl_unlock(void) { pthread_mutex_unlock(&g_lock); }

size_t opprof__code_frames(uint64_t ip, opprof__code_frame *frames, size_t max) {
    const opprof__elfutils_api *elfutils = opprof__elfutils();
    if (!max) return 0;
    frames[0].inlined = false;
    frames[0].source[0] = '\0';
    Dwfl *dwfl = opprof__dwfl_lock(ip);
    Dwfl_Module *mod = dwfl ? elfutils->dwfl_addrmodule(dwfl, (Dwarf_Addr)ip) : NULL;
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = mod ? elfutils->dwfl_module_addrdie(mod, (Dwarf_Addr)ip, &bias) : NULL;
    size_t n = 0;
    if (cu) {
        Dwfl_Line *line = elfutils->dwfl_module_getsrc(mod, (Dwarf_Addr)ip);
        int lineno = 0;
        const char *file = line ? elfutils->dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
        char where[sizeof frames[0].source];
        put_source(where, sizeof where, file, lineno);
        Dwarf_Die *scopes = NULL;
        int n_scopes = elfutils->dwarf_getscopes(cu, (Dwarf_Addr)ip - bias, &scopes);
        /* innermost first: each inlined subroutine at its place, then its caller at the call */
        for (int k = 0; k < n_scopes && n + 1 < max; k++) {
            if (elfutils->dwarf_tag(&scopes[k]) != DW_TAG_inlined_subroutine) continue;
            frames[n].inlined = true;
            snprintf(frames[n].name, sizeof frames[n].name, "%s", inlined_name(&scopes[k]));
            snprintf(frames[n].source, sizeof frames[n].source, "%s", where);
            call_site(cu, &scopes[k], where, sizeof where);
            n++;
        }
        free(scopes);
        frames[n].inlined = false;
        snprintf(frames[n].source, sizeof frames[n].source, "%s", where);
    }
    opprof__dwfl_unlock();
    frames[n].name[0] = '\0'; /* the holding function: the caller names it (opprof_symbolize) */
    return n + 1;
}
