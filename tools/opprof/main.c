/* main.c - `opprof`: read any capture back (report, check, diff, stacks,
 * html, merge) and profile a program (record). The commands are the one list
 * of commands.h; their help, `opprof help [CMD]` and `opprof CMD --help`, is
 * made here from their entries, and the exit statuses from exit_codes.h. */
#define _GNU_SOURCE
#include "commands.h"

#include <opprof/opprof.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tool_command *const COMMANDS[] = {
#define TOOL_COMMAND_ENTRY(name) &tool_cmd_##name,
    TOOL_COMMANDS(TOOL_COMMAND_ENTRY)
#undef TOOL_COMMAND_ENTRY
};
enum { N_COMMANDS = sizeof COMMANDS / sizeof *COMMANDS };

static const tool_command *find_command(const char *name) {
    for (size_t k = 0; k < N_COMMANDS; k++)
        if (!strcmp(COMMANDS[k]->name, name)) return COMMANDS[k];
    return NULL;
}

static void usage(FILE *out) {
    fputs("usage: opprof COMMAND [options] FILE...\n\ncommands:\n", out);
    for (size_t k = 0; k < N_COMMANDS; k++) fprintf(out, "  %-8s %s\n", COMMANDS[k]->name, COMMANDS[k]->summary);
    fputs("\nTRACE: a Chrome trace JSON file (opprof's, PyTorch's export_chrome_trace, PyTorch's legacy\n"
          "array form, ONNX Runtime's or TensorFlow's profile, or any trace-event writer's), TensorRT's\n"
          "per-layer profile (a table), plain or gzip-compressed, or a Perfetto trace (.pftrace)\n"
          "that opprof wrote; each read by its producer's rules. - reads standard input.\n"
          "Run 'opprof help COMMAND' (or 'opprof COMMAND --help') for a command's options.\n",
          out);
    tool_exit_codes_text(out);
}

/* A command's help: the task it does, its usage lines, what it does in full,
 * the exit statuses, then examples. */
static void command_help(const tool_command *cmd, FILE *out) {
    fprintf(out, "opprof %s: %s\n\n", cmd->name, cmd->summary);
    const char *line = cmd->synopsis;
    for (int first = 1; *line; first = 0) {
        const char *nl = strchr(line, '\n');
        int n = nl ? (int)(nl - line) : (int)strlen(line);
        char usage[512];
        snprintf(usage, sizeof usage, "%.*s", n, line);
        if (strstr(usage, "[OPTIONS]"))
            tool_options_synopsis(out, first ? "usage: opprof " : "       opprof ", usage, cmd->options,
                                  (int)(strlen("usage: opprof ") + strlen(cmd->name) + 1));
        else
            fprintf(out, "%s opprof %s\n", first ? "usage:" : "      ", usage);
        line += n + (nl != NULL);
    }
    fprintf(out, "\n%s", cmd->help);
    tool_options_help(out, cmd->options);
    if (cmd->more_help) cmd->more_help(out);
    tool_exit_codes_text(out);
    fprintf(out, "\nExamples:\n%s", cmd->examples);
}

int tool_usage_error(const char *command, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("opprof: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (command)
        fprintf(stderr, "\n(run 'opprof help %s')\n", command);
    else
        fputs("\n(run 'opprof --help')\n", stderr);
    return TOOL_EXIT_USAGE;
}

int tool_parse_count(const char *text, const char *flag, int *out) {
    char *end;
    long v = strtol(text, &end, 10);
    if (!*text || *end || v < -1 || v > 1000000000) {
        fprintf(stderr, "opprof: %s takes an integer, not '%s'\n", flag, text);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* --help or -h among the command's own arguments (before a "--"). */
static int asks_help(int argc, char **argv) {
    for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
    return 0;
}

static int help(int argc, char **argv) {
    if (argc < 3) {
        usage(stdout);
        return 0;
    }
    const tool_command *cmd = find_command(argv[2]);
    if (!cmd) return tool_usage_error(NULL, "no command '%s'", argv[2]);
    command_help(cmd, stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return TOOL_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) return help(argc, argv);
    if (!strcmp(name, "--version")) {
        printf("opprof %s\n", opprof_version());
        return 0;
    }
    const tool_command *cmd = find_command(name);
    if (!cmd) return tool_usage_error(NULL, "unknown command '%s'", name);
    if (asks_help(argc, argv)) {
        command_help(cmd, stdout);
        return 0;
    }
    argv[1] = argv[0]; /* getopt sees the command's options only */
    return cmd->run(argc - 1, argv + 1);
}
