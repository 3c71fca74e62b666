/* exit_codes.h - the one list of the tools' exit statuses (opprof, profile_cpu,
 * compare_forward), as opprof(1) documents them; each tool's help says them
 * from this list (tool_exit_codes_text).
 *
 * X(NAME, VALUE, MEANING) */
#ifndef OPPROF_TOOLS_EXIT_CODES_H
#define OPPROF_TOOLS_EXIT_CODES_H

#define TOOL_EXIT_CODES(X)                                                                        \
    X(OK, 0, "success")                                                                           \
    X(FAILED, 1,                                                                                  \
      "check found problems; profile_cpu: the run failed; compare_forward: outputs differ; "      \
      "dump: no such process, no flight recorder, or no save in time; sql: a statement failed")   \
    X(UNREADABLE, 2, "a file cannot be read or is not a trace, or an output cannot be written")   \
    X(REGRESSED, 3, "diff --stat --fail-if: a gate's change is significant and beyond its bound") \
    X(USAGE, 64, "bad usage (sysexits' EX_USAGE)")                                                \
    X(CANNOT_RUN, 127, "record: CMD cannot be run")

enum {
#define TOOL_EXIT_ENUM(name, value, meaning) TOOL_EXIT_##name = value,
    TOOL_EXIT_CODES(TOOL_EXIT_ENUM)
#undef TOOL_EXIT_ENUM
};

/* "Exit status:" and a line per status, for a tool's help. */
#include <stdio.h>
static inline void tool_exit_codes_text(FILE *out) {
    fputs("Exit status:\n", out);
#define TOOL_EXIT_TEXT(name, value, meaning) fprintf(out, "  %-4d %s\n", value, meaning);
    TOOL_EXIT_CODES(TOOL_EXIT_TEXT)
#undef TOOL_EXIT_TEXT
}

#endif
