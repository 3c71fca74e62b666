/* steps.c - `opprof record --step FUNCTION` (OPPROF_STEP_FUNCTION=FUNCTION):
 * each call of FUNCTION begins a step of OPPROF_TRACE's session
 * (opprof_step), in a program that was not changed, so that the flight
 * recorder and `diff --stat` see its iterations (each llama_decode a step).
 *
 * A call from one object to a function of another goes through the caller's
 * PLT and a GOT slot that the dynamic linker fills (R_X86_64_JUMP_SLOT). At
 * start, every slot of every loaded object that names FUNCTION is pointed at
 * step_trampoline.S, which calls opprof__step_enter and jumps on to FUNCTION
 * with the caller's registers and stack as they were. Slots in an object's
 * RELRO segment are made writable for the write and read-only again. Address
 * slots (R_X86_64_GLOB_DAT) are left alone: a pointer to FUNCTION stays the
 * pointer the program compares. Not seen: calls inside FUNCTION's own object
 * (unless it was built with -finstrument-functions and --functions is on:
 * preload.c then steps at each entry of the function of that name, static
 * ones too), -fno-plt callers, and objects loaded later with dlopen (a Python
 * extension, a plugin): wrapping dlopen would make its library search the
 * wrapper's (RUNPATH) instead of the caller's, a change to what the program
 * loads. Said at exit when no call was seen. */
#define _GNU_SOURCE
#include "common/quiet_write.h"
#include "preload/steps.h"

#include <opprof/opprof.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void opprof__step_trampoline(void);
void *opprof__step_target; /* FUNCTION, where the trampoline jumps */

static const char *g_name;
/* atomic: calls seen; calls made while this thread was making a step (no step);
 * slots pointed at the trampoline */
static uint64_t g_calls, g_reentered, g_slots;
/* The trampoline made a step for the call being entered: an instrumented
 * FUNCTION's entry, next on this thread, makes none. */
static __thread int t_trampolined __attribute__((tls_model("initial-exec")));
/* This thread is making a step. A call of FUNCTION meanwhile, from a signal
 * handler that interrupted it or from opprof itself (--step
 * pthread_mutex_lock), runs FUNCTION without a step: the hook guards itself,
 * since it can be re-entered (a step there would wait for the session's lock
 * that the interrupted step holds, or recurse without end). */
static __thread volatile sig_atomic_t t_in_step __attribute__((tls_model("initial-exec")));

static void step(void) {
    if (t_in_step) {
        __atomic_add_fetch(&g_reentered, 1, __ATOMIC_RELAXED);
        return;
    }
    t_in_step = 1;
    int saved = errno; /* FUNCTION's caller sees errno as it left it */
    __atomic_add_fetch(&g_calls, 1, __ATOMIC_RELAXED);
    opprof_step();
    errno = saved;
    t_in_step = 0;
}

void opprof__step_enter(void) {
    t_trampolined = 1;
    step();
}

bool opprof__steps_is(const char *name) { return g_name && name && strcmp(name, g_name) == 0; }

void opprof__steps_function_entered(void) {
    if (t_trampolined)
        t_trampolined = 0;
    else
        step();
}

/* The object's dynamic section's pointers are addresses once the loader has
 * relocated them, and offsets where it could not (a read-only section). */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) p) {
    return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

static void point_slot(const struct dl_phdr_info *info, void **slot) {
    uintptr_t at = (uintptr_t)slot, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    bool relro = false;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_GNU_RELRO && at >= lo && at < lo + ph->p_memsz) relro = true;
    }
    void *base = (void *)(at & ~(page - 1));
    if (relro && mprotect(base, page, PROT_READ | PROT_WRITE) != 0) return;
    __atomic_store_n(slot, (void *)opprof__step_trampoline, __ATOMIC_RELEASE);
    if (relro) mprotect(base, page, PROT_READ);
    g_slots++;
}

static int patch_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size, (void)data;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn) return 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *plt = NULL;
    size_t plt_bytes = 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB) symtab = (const ElfW(Sym) *)dyn_ptr(info, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_STRTAB) strtab = (const char *)dyn_ptr(info, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_JMPREL) plt = (const ElfW(Rela) *)dyn_ptr(info, dyn->d_un.d_ptr);
        if (dyn->d_tag == DT_PLTRELSZ) plt_bytes = dyn->d_un.d_val;
    }
    if (!symtab || !strtab || !plt) return 0;
    for (size_t i = 0; i < plt_bytes / sizeof *plt; i++) {
        if (ELF64_R_TYPE(plt[i].r_info) != R_X86_64_JUMP_SLOT) continue;
        const ElfW(Sym) *sym = &symtab[ELF64_R_SYM(plt[i].r_info)];
        if (strcmp(strtab + sym->st_name, g_name) == 0) point_slot(info, (void **)(info->dlpi_addr + plt[i].r_offset));
    }
    return 0;
}

/* FUNCTION's code. In a program built without -fpie that takes FUNCTION's
 * address, dlsym finds the program's canonical PLT entry (a symbol that the
 * program's own table gives as undefined, with an address): that entry jumps
 * through the very slot that is redirected, so the trampoline would jump to
 * itself for ever. FUNCTION is then the next definition after the program's. */
static void *function_code(const char *name) {
    void *at = dlsym(RTLD_DEFAULT, name);
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (at && dladdr1(at, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_shndx == SHN_UNDEF)
        at = dlsym(RTLD_NEXT, name);
    return at;
}

void opprof__steps_setup(const char *name) {
    if (!name || !*name) return;
    g_name = name;
    opprof__step_target = function_code(name);
#if defined(__x86_64__)
    if (opprof__step_target) dl_iterate_phdr(patch_object, NULL);
#endif
}

void opprof__steps_said(void) {
    uint64_t reentered = __atomic_load_n(&g_reentered, __ATOMIC_RELAXED);
    if (g_name && reentered)
        opprof__say("opprof record: --step %s: %llu call(s) made while their thread was making a step (from a "
                    "signal handler, or by opprof itself) ran without a step of their own\n",
                    g_name, (unsigned long long)reentered);
    if (!g_name || __atomic_load_n(&g_calls, __ATOMIC_RELAXED)) return;
    if (!opprof__step_target)
        opprof__say("opprof record: --step %s: no function of that name is exported by the program or its "
                    "libraries, so no step was made (a static function is seen only in a program built with "
                    "-finstrument-functions, with --functions)\n",
                    g_name);
    else
        opprof__say("opprof record: --step %s: no call of it was seen (%llu call slot(s) redirected): only calls "
                    "from another object (a shared library's function) are seen, or every call in a program "
                    "built with -finstrument-functions, with --functions\n",
                    g_name, (unsigned long long)g_slots);
}
