/* record/elfutils.h - elfutils (libdw, and the libelf it loads), reached
 * through a table of its functions that record/elfutils.c fills when one is
 * first needed: a program profiled without samples' sources, DWARF
 * unwinding or function names from ELF symbols never loads them (nor
 * liblzma and libbz2, which libdw needs) at its start.
 * Seen by record/sources.c, record/unwind.c and record/symbols.c only. */
#ifndef OPPROF_RECORD_ELFUTILS_H
#define OPPROF_RECORD_ELFUTILS_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

/* The one list of the functions used, each with the type its header gives it. */
/* clang-format off */
#define OPPROF__ELFUTILS(X) \
    X(dwarf_attr) \
    X(dwarf_attr_integrate) \
    X(dwarf_filesrc) \
    X(dwarf_formstring) \
    X(dwarf_formudata) \
    X(dwarf_getscopes) \
    X(dwarf_getsrcfiles) \
    X(dwarf_tag) \
    X(dwfl_addrmodule) \
    X(dwfl_attach_state) \
    X(dwfl_begin) \
    X(dwfl_frame_pc) \
    X(dwfl_getthread_frames) \
    X(dwfl_lineinfo) \
    X(dwfl_linux_proc_find_elf) \
    X(dwfl_linux_proc_report) \
    X(dwfl_module_addrdie) \
    X(dwfl_module_getsrc) \
    X(dwfl_report_begin) \
    X(dwfl_report_end) \
    X(dwfl_standard_find_debuginfo) \
    X(dwfl_thread_state_register_pc) \
    X(dwfl_thread_state_registers) \
    X(elf_begin) \
    X(elf_end) \
    X(elf_getdata) \
    X(elf_nextscn) \
    X(elf_strptr) \
    X(elf_version) \
    X(gelf_getehdr) \
    X(gelf_getshdr) \
    X(gelf_getsym)
/* clang-format on */

typedef struct opprof__elfutils_api {
#define OPPROF__ELFUTILS_POINTER(name) __typeof__(name) *name;
    OPPROF__ELFUTILS(OPPROF__ELFUTILS_POINTER)
#undef OPPROF__ELFUTILS_POINTER
} opprof__elfutils_api;

/* The table, libdw loaded on the first call (OPPROF_LIBDW names another
 * file than libdw.so.1); NULL when it cannot be, said once on stderr:
 * then samples have no sources nor inlined frames, the DWARF mode no
 * callers, and functions no names from ELF symbols (dladdr's only). */
const opprof__elfutils_api *opprof__elfutils(void);

#endif
