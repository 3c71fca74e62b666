/* options.h - a tool's options as one list, which gives its parser, its help
 * lines and its synopsis (opprof's commands, profile_cpu).
 *
 * A command's list is an X-macro of X(ID, NAME, ARG, HELP):
 *   ID    the option's id, OPT_ID (what tool_next_option returns)
 *   NAME  its long name without "--" ("row-limit"), "-o" for a one-letter one,
 *         "o|output" for both; NULL for a line of text between the options (HELP
 *         is the text)
 *   ARG   the name of its argument ("N"), NULL for a flag, or "[=HZ]" for an
 *         optional one (given as --sample=HZ)
 *   HELP  what it does; a '\n' continues it on a line of its own, under the first
 *
 *   #define STACKS_OPTIONS(X) X(MEMORY, "memory", NULL, "...") X(SAMPLES, "samples", NULL, "...")
 *   TOOL_OPTIONS(STACKS_OPTIONS);
 *   while ((c = tool_next_option(argc, argv, OPTIONS)) != TOOL_OPTIONS_END) switch (c) { case OPT_MEMORY: ... }
 */
#ifndef OPPROF_TOOLS_OPTIONS_H
#define OPPROF_TOOLS_OPTIONS_H

#include <getopt.h> /* optarg, optind */
#include <stdio.h>

typedef struct tool_option {
    const char *name, *arg, *help;
} tool_option;

#define TOOL_OPTION_ID(id, name, arg, help) OPT_##id,
#define TOOL_OPTION_ENTRY(id, name, arg, help) {name, arg, help},
/* The file's options: the ids OPT_..., and OPTIONS, ended by an entry of NULLs. */
#define TOOL_OPTIONS(list)                   \
    enum { list(TOOL_OPTION_ID) OPT_COUNT }; \
    static const tool_option OPTIONS[] = {list(TOOL_OPTION_ENTRY){NULL, NULL, NULL}}

enum {
    TOOL_OPTIONS_END = -1, /* no more options: optind is the first operand */
    TOOL_OPTIONS_BAD = -2  /* an unknown option or a missing argument (getopt said which) */
};

/** getopt_long over `options`: the id of the next option (optarg is its
 *  argument), TOOL_OPTIONS_END, or TOOL_OPTIONS_BAD. At most 64 options. */
int tool_next_option(int argc, char **argv, const tool_option *options);
/** The same, the first operand ending the options (a command line after them). */
int tool_next_option_in_order(int argc, char **argv, const tool_option *options);

/** The options' help, a line each ("  --row-limit N    rows to print..."). */
void tool_options_help(FILE *out, const tool_option *options);

/** The synopsis `usage` with its "[OPTIONS]" (or, without it, its end) made of
 *  every option ("[--row-limit N] [--json]"), lines wrapped at 100 columns
 *  under `indent` spaces; written to out after `prefix`. */
void tool_options_synopsis(FILE *out, const char *prefix, const char *usage, const tool_option *options, int indent);

#endif
