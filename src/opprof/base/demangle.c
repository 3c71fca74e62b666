/* demangle.c - C++ names as people read them: "_ZN6engine4stepIfEET_RKSt6vectorIS1_SaIS1_EEm"
 * becomes "float engine::step<float>(std::vector<float, std::allocator<float> > const&, unsigned long)".
 * The demangler is the C++ runtime's own (__cxa_demangle, libstdc++'s, as
 * c++filt's rules), found where a C++ program has it loaded, else loaded
 * once from libstdc++.so.6; without it names stay as they are. */
#define _GNU_SOURCE
#include "base/base.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef char *(*demangle_fn)(const char *mangled, char *out, size_t *length, int *status);

static demangle_fn g_demangle;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void find_demangler(void) {
    void *fn = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!fn) {
        void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL); /* kept: the process's from now on */
        fn = lib ? dlsym(lib, "__cxa_demangle") : NULL;
    }
    g_demangle = (demangle_fn)fn;
}

bool opprof__is_mangled(const char *name) { return name && name[0] == '_' && name[1] == 'Z'; }

char *opprof__demangle(const char *name) {
    if (!opprof__is_mangled(name)) return NULL;
    pthread_once(&g_once, find_demangler);
    if (!g_demangle) return NULL;
    /* what follows the symbol stays: " [inlined]", "+0x1f" */
    size_t len = strcspn(name, " +");
    char *symbol = opprof__alloc(len + 1);
    if (!symbol) return NULL;
    memcpy(symbol, name, len);
    symbol[len] = '\0';
    int status = -1;
    char *text = g_demangle(symbol, NULL, NULL, &status); /* malloc'd by the runtime */
    opprof__free(symbol);
    char *out = NULL;
    if (status == 0 && text) {
        size_t n = strlen(text), rest = strlen(name + len);
        if ((out = opprof__alloc(n + rest + 1))) {
            memcpy(out, text, n);
            memcpy(out + n, name + len, rest + 1);
        }
    }
    free(text);
    return out;
}

char *opprof_demangle(const char *name) { return opprof__demangle(name); }
