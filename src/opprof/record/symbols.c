/* symbols.c - the name of the function at a code address: the ELF symbol
 * table (.symtab, else .dynsym) of the object that holds it, read once per
 * object with libelf, so that static functions and executables linked
 * without -rdynamic are named too; dladdr finds the object. Shared by the
 * sampler's frames, native call stacks and `opprof record --functions`. */
#define _GNU_SOURCE
#include "record/elfutils.h"
#include "record/record.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct symbol {
    uintptr_t start, size; /* in its object's addresses */
    const char *name;
} symbol;

typedef struct object {
    uintptr_t base; /* load address (dli_fbase) */
    bool relative;  /* ET_DYN: symbol values are offsets from base */
    symbol *symbols;
    size_t n;
    char *names; /* the symbols' names, one block */
    struct object *next;
} object;

static object *g_objects; /* under g_lock */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int by_start(const void *a, const void *b) {
    const symbol *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The function symbols of one symbol table section, names copied into one block. */
static void read_symbols(object *o, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh) {
    const opprof__elfutils_api *elfutils = opprof__elfutils();
    Elf_Data *data = elfutils->elf_getdata(scn, NULL);
    size_t count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0, bytes = 0;
    for (int pass = 0; data && pass < 2; pass++) { /* sizes, then copies */
        size_t used = 0;
        for (size_t i = 0; i < count; i++) {
            GElf_Sym s;
            if (!elfutils->gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_value)
                continue;
            const char *name = elfutils->elf_strptr(elf, sh->sh_link, s.st_name);
            if (!name || !*name) continue;
            size_t len = strlen(name) + 1;
            if (pass == 1) {
                memcpy(o->names + used, name, len);
                o->symbols[o->n++] = (symbol){(uintptr_t)s.st_value, (uintptr_t)s.st_size, o->names + used};
            }
            used += len;
        }
        if (pass == 0) {
            bytes = used;
            o->symbols = opprof__calloc(count ? count : 1, sizeof *o->symbols);
            o->names = opprof__alloc(bytes ? bytes : 1);
            if (!o->symbols || !o->names) return;
        }
    }
}

static object *load_object(const char *path, uintptr_t base) {
    const opprof__elfutils_api *elfutils = opprof__elfutils();
    object *o = opprof__calloc(1, sizeof *o);
    if (!o) return NULL;
    o->base = base;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (elfutils) elfutils->elf_version(EV_CURRENT);
    Elf *elf = fd >= 0 && elfutils ? elfutils->elf_begin(fd, ELF_C_READ, NULL) : NULL; /* none: dladdr's names */
    GElf_Ehdr eh;
    if (elf && elfutils->gelf_getehdr(elf, &eh)) o->relative = eh.e_type == ET_DYN;
    for (int pass = 0; elf && pass < 2 && o->n == 0; pass++) {
        for (Elf_Scn *scn = NULL; (scn = elfutils->elf_nextscn(elf, scn));) {
            GElf_Shdr sh;
            if (!elfutils->gelf_getshdr(scn, &sh) || sh.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM)) continue;
            read_symbols(o, elf, scn, &sh);
            break;
        }
    }
    if (elf) elfutils->elf_end(elf);
    if (fd >= 0) close(fd);
    if (o->n) qsort(o->symbols, o->n, sizeof *o->symbols, by_start); /* none: an object not on disk (the vDSO) */
    return o;
}

static const char *basename_of(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The symbol of object o that covers at, or NULL. */
static const char *covering(const object *o, uintptr_t at) {
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->symbols[mid].start <= at)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo && at < o->symbols[lo - 1].start + (o->symbols[lo - 1].size ? o->symbols[lo - 1].size : 1))
        return o->symbols[lo - 1].name;
    return NULL;
}

int opprof_symbolize(const void *addr, char *name, size_t name_size, char *module, size_t module_size) {
    if (!name || !name_size) return OPPROF_EINVAL;
    snprintf(name, name_size, "%p", addr);
    if (module && module_size) module[0] = '\0';
    Dl_info info;
    if (!dladdr(addr, &info) || !info.dli_fname) return OPPROF_EINVAL; /* in no object: not code */
    const char *path = info.dli_fname[0] ? info.dli_fname : "/proc/self/exe";
    if (module && module_size)
        snprintf(module, module_size, "%s", info.dli_fname[0] ? basename_of(info.dli_fname) : "(executable)");
    pthread_mutex_lock(&g_lock);
    object *o = g_objects;
    while (o && o->base != (uintptr_t)info.dli_fbase) o = o->next;
    if (!o && (o = load_object(path, (uintptr_t)info.dli_fbase))) {
        o->next = g_objects;
        g_objects = o;
    }
    const char *found = o ? covering(o, (uintptr_t)addr - (o->relative ? o->base : 0)) : NULL;
    if (found)
        snprintf(name, name_size, "%s", found);
    else if (info.dli_sname)
        snprintf(name, name_size, "%s", info.dli_sname);
    else
        snprintf(name, name_size, "%s+0x%lx", module && module[0] ? module : basename_of(path),
                 (unsigned long)((uintptr_t)addr - (uintptr_t)info.dli_fbase));
    pthread_mutex_unlock(&g_lock);
    return found || info.dli_sname ? 0 : OPPROF_ENOENT;
}
